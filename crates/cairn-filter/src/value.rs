//! Filters on values: `ValueFilter`, `SingleColumnValueFilter` (+ `Exclude`),
//! `DependentColumnFilter`, `ColumnValueFilter`.

use std::collections::HashSet;

use cairn_cell::{CellRef, KeyValue};

use crate::row::compare_filter_string;
use crate::{quote, Comparator, CompareOp, Filter, FilterError, ReturnCode};

/// `ValueFilter`: skips cells whose value fails `op`.
#[derive(Debug, Clone)]
pub struct ValueFilter {
    op: CompareOp,
    comparator: Comparator,
}

impl ValueFilter {
    /// A filter keeping values `value op comparator`.
    pub fn new(op: CompareOp, comparator: Comparator) -> ValueFilter {
        ValueFilter { op, comparator }
    }
}

impl Filter for ValueFilter {
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        if self.op.compare_filters_out(&self.comparator, cell.value) {
            ReturnCode::Skip
        } else {
            ReturnCode::Include
        }
    }
    fn filter_string(&self) -> Option<String> {
        compare_filter_string("ValueFilter", self.op, &self.comparator)
    }
}

fn matching_column(cell: &CellRef<'_>, family: &[u8], qualifier: &[u8]) -> bool {
    cell.family() == family && cell.qualifier() == qualifier
}

/// `SingleColumnValueFilter`: keeps whole rows whose column `family:qualifier` passes `op`.
/// Rows without the column pass unless `filter_if_missing`; with `latest_version_only`
/// (the default) only the newest version the filter sees is tested.
#[derive(Debug, Clone)]
pub struct SingleColumnValueFilter {
    family: Vec<u8>,
    qualifier: Vec<u8>,
    op: CompareOp,
    comparator: Comparator,
    filter_if_missing: bool,
    latest_version_only: bool,
    found_column: bool,
    matched_column: bool,
}

impl SingleColumnValueFilter {
    /// The filter with HBase's defaults (`filter_if_missing = false`,
    /// `latest_version_only = true`). `NoOp` is rejected: HBase would throw on the first cell
    /// of the column.
    pub fn new(
        family: impl Into<Vec<u8>>,
        qualifier: impl Into<Vec<u8>>,
        op: CompareOp,
        comparator: Comparator,
    ) -> Result<SingleColumnValueFilter, FilterError> {
        if op == CompareOp::NoOp {
            return Err(FilterError::invalid(
                "SingleColumnValueFilter",
                "NO_OP is not a comparison HBase can evaluate here",
            ));
        }
        Ok(SingleColumnValueFilter {
            family: family.into(),
            qualifier: qualifier.into(),
            op,
            comparator,
            filter_if_missing: false,
            latest_version_only: true,
            found_column: false,
            matched_column: false,
        })
    }

    /// Drops rows that lack the column.
    pub fn with_filter_if_missing(mut self, filter_if_missing: bool) -> Self {
        self.filter_if_missing = filter_if_missing;
        self
    }

    /// Tests only the newest version (true) or any version (false).
    pub fn with_latest_version_only(mut self, latest_version_only: bool) -> Self {
        self.latest_version_only = latest_version_only;
        self
    }

    fn arguments(&self) -> Option<String> {
        let mut s = format!(
            "{}, {}, {}, {}",
            quote(&self.family),
            quote(&self.qualifier),
            self.op.token()?,
            quote(&self.comparator.spelling()?)
        );
        if self.filter_if_missing || !self.latest_version_only {
            s.push_str(&format!(
                ", {}, {}",
                self.filter_if_missing, self.latest_version_only
            ));
        }
        Some(s)
    }
}

impl Filter for SingleColumnValueFilter {
    fn reset(&mut self) {
        self.found_column = false;
        self.matched_column = false;
    }
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        if self.matched_column {
            return ReturnCode::Include;
        }
        if self.latest_version_only && self.found_column {
            return ReturnCode::NextRow;
        }
        if !matching_column(cell, &self.family, &self.qualifier) {
            return ReturnCode::Include;
        }
        self.found_column = true;
        // NoOp is refused at construction, so the comparison always has an answer.
        let filtered_out = self
            .op
            .filters_out(self.comparator.compare_to(cell.value))
            .unwrap_or(true);
        if filtered_out {
            return if self.latest_version_only {
                ReturnCode::NextRow
            } else {
                ReturnCode::Include
            };
        }
        self.matched_column = true;
        ReturnCode::Include
    }
    fn has_filter_row(&self) -> bool {
        true
    }
    fn filter_row(&mut self) -> bool {
        if self.found_column {
            !self.matched_column
        } else {
            self.filter_if_missing
        }
    }
    fn is_family_essential(&self, family: &[u8]) -> bool {
        !self.filter_if_missing || family == self.family.as_slice()
    }
    fn filter_string(&self) -> Option<String> {
        Some(format!("SingleColumnValueFilter({})", self.arguments()?))
    }
}

/// `SingleColumnValueExcludeFilter`: a [`SingleColumnValueFilter`] that also removes the tested
/// column from the rows it keeps.
#[derive(Debug, Clone)]
pub struct SingleColumnValueExcludeFilter {
    inner: SingleColumnValueFilter,
}

impl SingleColumnValueExcludeFilter {
    /// Wraps the row test.
    pub fn new(inner: SingleColumnValueFilter) -> SingleColumnValueExcludeFilter {
        SingleColumnValueExcludeFilter { inner }
    }
}

impl Filter for SingleColumnValueExcludeFilter {
    fn reset(&mut self) {
        self.inner.reset()
    }
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        self.inner.filter_cell(cell)
    }
    fn has_filter_row(&self) -> bool {
        true
    }
    fn filter_row_cells(&mut self, cells: &mut Vec<KeyValue>) {
        let (family, qualifier) = (&self.inner.family, &self.inner.qualifier);
        cells.retain(|c| !matching_column(&c.as_cell(), family, qualifier));
    }
    fn filter_row(&mut self) -> bool {
        self.inner.filter_row()
    }
    fn is_family_essential(&self, family: &[u8]) -> bool {
        self.inner.is_family_essential(family)
    }
    fn filter_string(&self) -> Option<String> {
        Some(format!(
            "SingleColumnValueExcludeFilter({})",
            self.inner.arguments()?
        ))
    }
}

/// `DependentColumnFilter`: keeps only the cells whose timestamp equals that of a version of
/// the reference column `family:qualifier` in the same row (that passes the optional value
/// test); `drop_dependent_column` removes the reference column itself.
#[derive(Debug, Clone)]
pub struct DependentColumnFilter {
    family: Vec<u8>,
    qualifier: Vec<u8>,
    drop_dependent_column: bool,
    comparison: Option<(CompareOp, Comparator)>,
    stamps: HashSet<i64>,
}

impl DependentColumnFilter {
    /// Without a value test.
    pub fn new(
        family: impl Into<Vec<u8>>,
        qualifier: impl Into<Vec<u8>>,
        drop_dependent_column: bool,
    ) -> DependentColumnFilter {
        DependentColumnFilter {
            family: family.into(),
            qualifier: qualifier.into(),
            drop_dependent_column,
            comparison: None,
            stamps: HashSet::new(),
        }
    }

    /// With a value test on the reference column (`NoOp` rejects every version).
    pub fn with_comparison(mut self, op: CompareOp, comparator: Comparator) -> Self {
        self.comparison = Some((op, comparator));
        self
    }
}

impl Filter for DependentColumnFilter {
    fn reset(&mut self) {
        self.stamps.clear();
    }
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        if !matching_column(cell, &self.family, &self.qualifier) {
            return ReturnCode::Include;
        }
        if let Some((op, comparator)) = &self.comparison {
            if op.compare_filters_out(comparator, cell.value) {
                return ReturnCode::Skip;
            }
        }
        self.stamps.insert(cell.timestamp());
        if self.drop_dependent_column {
            ReturnCode::Skip
        } else {
            ReturnCode::Include
        }
    }
    fn has_filter_row(&self) -> bool {
        true
    }
    fn filter_row_cells(&mut self, cells: &mut Vec<KeyValue>) {
        cells.retain(|c| self.stamps.contains(&c.as_cell().timestamp()));
    }
    fn filter_string(&self) -> Option<String> {
        let head = format!(
            "DependentColumnFilter({}, {}, {}",
            quote(&self.family),
            quote(&self.qualifier),
            self.drop_dependent_column
        );
        Some(match &self.comparison {
            None => format!("{head})"),
            Some((op, comparator)) => format!(
                "{head}, {}, {})",
                op.token()?,
                quote(&comparator.spelling()?)
            ),
        })
    }
}

/// `ColumnValueFilter`: returns only the column `family:qualifier`, and only its versions whose
/// value passes `op` (unlike [`SingleColumnValueFilter`], which returns whole rows).
#[derive(Debug, Clone)]
pub struct ColumnValueFilter {
    family: Vec<u8>,
    qualifier: Vec<u8>,
    op: CompareOp,
    comparator: Comparator,
    column_found: bool,
}

impl ColumnValueFilter {
    /// Returns the versions of `family:qualifier` whose value passes `op` against `comparator`.
    pub fn new(
        family: impl Into<Vec<u8>>,
        qualifier: impl Into<Vec<u8>>,
        op: CompareOp,
        comparator: Comparator,
    ) -> ColumnValueFilter {
        ColumnValueFilter {
            family: family.into(),
            qualifier: qualifier.into(),
            op,
            comparator,
            column_found: false,
        }
    }
}

impl Filter for ColumnValueFilter {
    fn reset(&mut self) {
        self.column_found = false;
    }
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        if !matching_column(cell, &self.family, &self.qualifier) {
            return if self.column_found {
                ReturnCode::NextRow
            } else {
                ReturnCode::NextCol
            };
        }
        self.column_found = true;
        if self.op.compare_filters_out(&self.comparator, cell.value) {
            ReturnCode::Skip
        } else {
            ReturnCode::Include
        }
    }
    fn is_family_essential(&self, family: &[u8]) -> bool {
        family == self.family.as_slice()
    }
    fn filter_string(&self) -> Option<String> {
        Some(format!(
            "ColumnValueFilter({}, {}, {}, {})",
            quote(&self.family),
            quote(&self.qualifier),
            self.op.token()?,
            quote(&self.comparator.spelling()?)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;

    fn table() -> Vec<KeyValue> {
        cells(&[
            // r1: the column's newest version matches.
            ("r1", "f", "a", 1, "x1"),
            ("r1", "f", "s", 2, "yes"),
            ("r1", "f", "s", 1, "no"),
            ("r1", "g", "z", 1, "x2"),
            // r2: only an older version matches.
            ("r2", "f", "a", 1, "x3"),
            ("r2", "f", "s", 2, "no"),
            ("r2", "f", "s", 1, "yes"),
            ("r2", "g", "z", 1, "x4"),
            // r3: no such column.
            ("r3", "f", "a", 1, "x5"),
        ])
    }

    fn scvf() -> SingleColumnValueFilter {
        SingleColumnValueFilter::new("f", "s", CompareOp::Equal, Comparator::binary("yes")).unwrap()
    }

    #[test]
    fn value_filter() {
        let out = run(
            &mut ValueFilter::new(CompareOp::Equal, Comparator::substring("X")),
            &table(),
        );
        assert_eq!(values_of(&out.rows), ["x1", "x2", "x3", "x4", "x5"]);
    }

    #[test]
    fn single_column_value_filter_defaults() {
        let out = run(&mut scvf(), &table());
        // r1 passes (all of it, the older version too: once matched everything is included);
        // r2 fails on its newest version; r3 lacks the column and passes.
        assert_eq!(values_of(&out.rows), ["x1", "yes", "no", "x2", "x5"]);
        // After the failing newest version the rest of family f is skipped (NEXT_ROW), family g
        // is still offered and gets NEXT_ROW too.
        let r2: Vec<ReturnCode> = out
            .calls
            .iter()
            .filter(|(c, _)| c.as_cell().row() == b"r2")
            .map(|(_, rc)| *rc)
            .collect();
        assert_eq!(
            r2,
            [
                ReturnCode::Include,
                ReturnCode::NextRow,
                ReturnCode::NextRow
            ]
        );
    }

    #[test]
    fn single_column_value_filter_options() {
        let out = run(&mut scvf().with_filter_if_missing(true), &table());
        assert_eq!(values_of(&out.rows), ["x1", "yes", "no", "x2"]);
        let out = run(&mut scvf().with_latest_version_only(false), &table());
        assert_eq!(
            values_of(&out.rows),
            ["x1", "yes", "no", "x2", "x3", "no", "yes", "x4", "x5"]
        );
        assert!(
            SingleColumnValueFilter::new("f", "s", CompareOp::NoOp, Comparator::binary(""))
                .is_err()
        );
        let f = scvf().with_filter_if_missing(true);
        assert!(f.is_family_essential(b"f"));
        assert!(!f.is_family_essential(b"g"));
        assert!(scvf().is_family_essential(b"g"));
    }

    #[test]
    fn exclude_filter_drops_the_tested_column() {
        let out = run(&mut SingleColumnValueExcludeFilter::new(scvf()), &table());
        assert_eq!(values_of(&out.rows), ["x1", "x2", "x5"]);
    }

    #[test]
    fn dependent_column_filter() {
        let t = cells(&[
            ("r1", "f", "a", 1, "a1"),
            ("r1", "f", "a", 2, "a2"),
            ("r1", "f", "d", 2, "d2"),
            ("r1", "f", "z", 3, "z3"),
            ("r1", "f", "z", 2, "z2"),
        ]);
        let out = run(&mut DependentColumnFilter::new("f", "d", false), &t);
        assert_eq!(values_of(&out.rows), ["a2", "d2", "z2"]);
        let out = run(&mut DependentColumnFilter::new("f", "d", true), &t);
        assert_eq!(values_of(&out.rows), ["a2", "z2"]);
        let out = run(
            &mut DependentColumnFilter::new("f", "d", false)
                .with_comparison(CompareOp::Equal, Comparator::binary("nope")),
            &t,
        );
        assert!(out.rows.is_empty());
    }

    #[test]
    fn column_value_filter_returns_only_the_column() {
        let out = run(
            &mut ColumnValueFilter::new("f", "s", CompareOp::Equal, Comparator::binary("yes")),
            &table(),
        );
        assert_eq!(values_of(&out.rows), ["yes", "yes"]);
    }
}
