//! Filters on families and qualifiers.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::Bound;

use cairn_cell::compare_bytes;
use cairn_cell::CellRef;

use crate::keys::first_on_row_col;
use crate::row::compare_filter_string;
use crate::{quote, Comparator, CompareOp, Filter, FilterError, ReturnCode};

/// `FamilyFilter`: drops the rest of a family (`NEXT_ROW`) whose name fails `op`.
#[derive(Debug, Clone)]
pub struct FamilyFilter {
    op: CompareOp,
    comparator: Comparator,
}

impl FamilyFilter {
    /// A filter keeping families `family op comparator`.
    pub fn new(op: CompareOp, comparator: Comparator) -> FamilyFilter {
        FamilyFilter { op, comparator }
    }
}

impl Filter for FamilyFilter {
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        let family = cell.family();
        if !family.is_empty() && self.op.compare_filters_out(&self.comparator, family) {
            return ReturnCode::NextRow;
        }
        ReturnCode::Include
    }
    fn filter_string(&self) -> Option<String> {
        compare_filter_string("FamilyFilter", self.op, &self.comparator)
    }
}

/// `QualifierFilter`: skips cells whose qualifier fails `op`.
#[derive(Debug, Clone)]
pub struct QualifierFilter {
    op: CompareOp,
    comparator: Comparator,
}

impl QualifierFilter {
    /// A filter keeping qualifiers `qualifier op comparator`.
    pub fn new(op: CompareOp, comparator: Comparator) -> QualifierFilter {
        QualifierFilter { op, comparator }
    }
}

impl Filter for QualifierFilter {
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        if self
            .op
            .compare_filters_out(&self.comparator, cell.qualifier())
        {
            ReturnCode::Skip
        } else {
            ReturnCode::Include
        }
    }
    fn filter_string(&self) -> Option<String> {
        compare_filter_string("QualifierFilter", self.op, &self.comparator)
    }
}

/// `ColumnPrefixFilter`: keeps qualifiers starting with `prefix`, seeking to it from below and
/// leaving the row (family) once past it.
#[derive(Debug, Clone)]
pub struct ColumnPrefixFilter {
    prefix: Vec<u8>,
}

impl ColumnPrefixFilter {
    /// A filter for qualifiers starting with `prefix`.
    pub fn new(prefix: impl Into<Vec<u8>>) -> ColumnPrefixFilter {
        ColumnPrefixFilter {
            prefix: prefix.into(),
        }
    }
}

impl Filter for ColumnPrefixFilter {
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        let qualifier = cell.qualifier();
        let n = qualifier.len().min(self.prefix.len());
        let cmp = compare_bytes(&qualifier[..n], &self.prefix[..n]);
        match cmp {
            Ordering::Less => ReturnCode::SeekNextUsingHint,
            // A qualifier that is a proper prefix of the prefix sorts before it.
            Ordering::Equal if qualifier.len() < self.prefix.len() => ReturnCode::SeekNextUsingHint,
            Ordering::Equal => ReturnCode::Include,
            Ordering::Greater => ReturnCode::NextRow,
        }
    }
    fn next_cell_hint(&self, cell: &CellRef<'_>) -> Option<Vec<u8>> {
        first_on_row_col(cell, &self.prefix)
    }
    fn is_hinting(&self) -> bool {
        true
    }
    fn filter_string(&self) -> Option<String> {
        Some(format!("ColumnPrefixFilter({})", quote(&self.prefix)))
    }
}

/// `MultipleColumnPrefixFilter`: keeps qualifiers starting with any of the prefixes, seeking
/// between them.
#[derive(Debug, Clone)]
pub struct MultipleColumnPrefixFilter {
    prefixes: BTreeSet<Vec<u8>>,
    hint: Vec<u8>,
}

impl MultipleColumnPrefixFilter {
    /// A filter for the given prefixes; HBase rejects repeated prefixes.
    pub fn new<I, P>(prefixes: I) -> Result<MultipleColumnPrefixFilter, FilterError>
    where
        I: IntoIterator<Item = P>,
        P: Into<Vec<u8>>,
    {
        let mut set = BTreeSet::new();
        for p in prefixes {
            let p = p.into();
            if !set.insert(p) {
                return Err(FilterError::invalid(
                    "MultipleColumnPrefixFilter",
                    "prefixes must be distinct",
                ));
            }
        }
        Ok(MultipleColumnPrefixFilter {
            prefixes: set,
            hint: Vec::new(),
        })
    }
}

impl Filter for MultipleColumnPrefixFilter {
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        let Some(first) = self.prefixes.first() else {
            return ReturnCode::Include;
        };
        let qualifier = cell.qualifier();
        let largest_not_above = self
            .prefixes
            .range::<[u8], _>((Bound::Unbounded, Bound::Included(qualifier)))
            .next_back();
        match largest_not_above {
            None => {
                self.hint = first.clone();
                ReturnCode::SeekNextUsingHint
            }
            Some(p) if qualifier.starts_with(p) => ReturnCode::Include,
            Some(p) => {
                match self
                    .prefixes
                    .range::<[u8], _>((Bound::Excluded(p.as_slice()), Bound::Unbounded))
                    .next()
                {
                    None => ReturnCode::NextRow,
                    Some(higher) => {
                        self.hint = higher.clone();
                        ReturnCode::SeekNextUsingHint
                    }
                }
            }
        }
    }
    fn next_cell_hint(&self, cell: &CellRef<'_>) -> Option<Vec<u8>> {
        first_on_row_col(cell, &self.hint)
    }
    fn is_hinting(&self) -> bool {
        true
    }
    fn filter_string(&self) -> Option<String> {
        let args: Vec<String> = self.prefixes.iter().map(|p| quote(p)).collect();
        Some(format!("MultipleColumnPrefixFilter({})", args.join(", ")))
    }
}

/// `ColumnRangeFilter`: keeps qualifiers between `min` and `max` (`None` = unbounded).
#[derive(Debug, Clone)]
pub struct ColumnRangeFilter {
    min: Option<Vec<u8>>,
    min_inclusive: bool,
    max: Option<Vec<u8>>,
    max_inclusive: bool,
}

impl ColumnRangeFilter {
    /// A filter for qualifiers in the range.
    pub fn new(
        min: Option<Vec<u8>>,
        min_inclusive: bool,
        max: Option<Vec<u8>>,
        max_inclusive: bool,
    ) -> ColumnRangeFilter {
        ColumnRangeFilter {
            min,
            min_inclusive,
            max,
            max_inclusive,
        }
    }
}

impl Filter for ColumnRangeFilter {
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        let qualifier = cell.qualifier();
        let cmp_min = match &self.min {
            Some(min) => compare_bytes(qualifier, min),
            None => Ordering::Greater,
        };
        if cmp_min == Ordering::Less {
            return ReturnCode::SeekNextUsingHint;
        }
        if !self.min_inclusive && cmp_min == Ordering::Equal {
            return ReturnCode::NextCol;
        }
        let Some(max) = &self.max else {
            return ReturnCode::Include;
        };
        let cmp_max = compare_bytes(qualifier, max);
        if cmp_max == Ordering::Less || (self.max_inclusive && cmp_max == Ordering::Equal) {
            ReturnCode::Include
        } else {
            ReturnCode::NextRow
        }
    }
    fn next_cell_hint(&self, cell: &CellRef<'_>) -> Option<Vec<u8>> {
        first_on_row_col(cell, self.min.as_deref().unwrap_or_default())
    }
    fn is_hinting(&self) -> bool {
        true
    }
    fn filter_string(&self) -> Option<String> {
        Some(format!(
            "ColumnRangeFilter({}, {}, {}, {})",
            quote(self.min.as_deref().unwrap_or_default()),
            self.min_inclusive,
            quote(self.max.as_deref().unwrap_or_default()),
            self.max_inclusive
        ))
    }
}

/// `ColumnCountGetFilter`: keeps the first `limit` columns of each row (one version each), then
/// ends the scan. Meant for Gets: on a scan, HBase ends the whole scan after the first row
/// with more than `limit` columns.
#[derive(Debug, Clone)]
pub struct ColumnCountGetFilter {
    limit: i32,
    count: i32,
}

impl ColumnCountGetFilter {
    /// A filter keeping `limit` columns; HBase rejects a negative limit.
    pub fn new(limit: i32) -> Result<ColumnCountGetFilter, FilterError> {
        if limit < 0 {
            return Err(FilterError::invalid(
                "ColumnCountGetFilter",
                format!("limit must not be negative, got {limit}"),
            ));
        }
        Ok(ColumnCountGetFilter { limit, count: 0 })
    }
}

impl Filter for ColumnCountGetFilter {
    fn reset(&mut self) {
        self.count = 0;
    }
    fn filter_all_remaining(&mut self) -> bool {
        self.count > self.limit
    }
    fn filter_row_key(&mut self, _row: &[u8]) -> bool {
        self.filter_all_remaining()
    }
    fn filter_cell(&mut self, _cell: &CellRef<'_>) -> ReturnCode {
        self.count = self.count.saturating_add(1);
        if self.filter_all_remaining() {
            ReturnCode::NextCol
        } else {
            ReturnCode::IncludeAndNextCol
        }
    }
    fn filter_string(&self) -> Option<String> {
        Some(format!("ColumnCountGetFilter({})", self.limit))
    }
}

/// `ColumnPaginationFilter`: per row, skips `offset` columns (or the columns before
/// `column_offset`) and keeps the next `limit`, one version each.
#[derive(Debug, Clone)]
pub struct ColumnPaginationFilter {
    limit: i32,
    offset: i32,
    column_offset: Option<Vec<u8>>,
    count: i32,
}

impl ColumnPaginationFilter {
    /// Pages by column count; HBase rejects negative values.
    pub fn new(limit: i32, offset: i32) -> Result<ColumnPaginationFilter, FilterError> {
        if limit < 0 || offset < 0 {
            return Err(FilterError::invalid(
                "ColumnPaginationFilter",
                format!("limit and offset must not be negative, got {limit} and {offset}"),
            ));
        }
        Ok(ColumnPaginationFilter {
            limit,
            offset,
            column_offset: None,
            count: 0,
        })
    }

    /// Pages from the first qualifier at or after `column_offset`.
    pub fn with_column_offset(
        limit: i32,
        column_offset: impl Into<Vec<u8>>,
    ) -> Result<ColumnPaginationFilter, FilterError> {
        if limit < 0 {
            return Err(FilterError::invalid(
                "ColumnPaginationFilter",
                format!("limit must not be negative, got {limit}"),
            ));
        }
        Ok(ColumnPaginationFilter {
            limit,
            offset: -1,
            column_offset: Some(column_offset.into()),
            count: 0,
        })
    }
}

impl Filter for ColumnPaginationFilter {
    fn reset(&mut self) {
        self.count = 0;
    }
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        if let Some(column_offset) = &self.column_offset {
            if self.count >= self.limit {
                return ReturnCode::NextRow;
            }
            if self.count == 0 && compare_bytes(cell.qualifier(), column_offset) == Ordering::Less {
                return ReturnCode::SeekNextUsingHint;
            }
            self.count += 1;
            return ReturnCode::IncludeAndNextCol;
        }
        // HBase adds two ints: a sum past i32::MAX wraps negative and ends every row at once.
        if self.count >= self.offset.wrapping_add(self.limit) {
            return ReturnCode::NextRow;
        }
        let code = if self.count < self.offset {
            ReturnCode::NextCol
        } else {
            ReturnCode::IncludeAndNextCol
        };
        self.count += 1;
        code
    }
    fn next_cell_hint(&self, cell: &CellRef<'_>) -> Option<Vec<u8>> {
        first_on_row_col(cell, self.column_offset.as_deref()?)
    }
    fn filter_string(&self) -> Option<String> {
        if self.column_offset.is_some() {
            return None;
        }
        Some(format!(
            "ColumnPaginationFilter({}, {})",
            self.limit, self.offset
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;

    fn wide() -> Vec<cairn_cell::KeyValue> {
        cells(&[
            ("r1", "a", "ab", 2, "1"),
            ("r1", "a", "ab", 1, "2"),
            ("r1", "a", "abc", 1, "3"),
            ("r1", "a", "b", 1, "4"),
            ("r1", "a", "ba", 1, "5"),
            ("r1", "a", "c", 1, "6"),
            ("r1", "b", "a", 1, "7"),
            ("r1", "b", "ab", 1, "8"),
            ("r2", "a", "a", 1, "9"),
            ("r2", "a", "abz", 1, "10"),
        ])
    }

    #[test]
    fn family_filter_next_row_is_per_family() {
        let out = run(
            &mut FamilyFilter::new(CompareOp::Equal, Comparator::binary("b")),
            &wide(),
        );
        assert_eq!(values_of(&out.rows), ["7", "8"]);
        // NEXT_ROW leaves family a, but family b of the same row is still offered.
        assert_eq!(out.calls.len(), 4);
    }

    #[test]
    fn qualifier_filter_skips() {
        let out = run(
            &mut QualifierFilter::new(CompareOp::GreaterOrEqual, Comparator::binary("b")),
            &wide(),
        );
        assert_eq!(values_of(&out.rows), ["4", "5", "6"]);
        let out = run(
            &mut QualifierFilter::new(CompareOp::Equal, Comparator::binary_prefix("ab")),
            &wide(),
        );
        assert_eq!(values_of(&out.rows), ["1", "2", "3", "8", "10"]);
    }

    #[test]
    fn column_prefix_seeks_and_leaves_the_family() {
        let out = run(&mut ColumnPrefixFilter::new("ab"), &wide());
        assert_eq!(values_of(&out.rows), ["1", "2", "3", "8", "10"]);
        let codes: Vec<ReturnCode> = out.calls.iter().map(|(_, c)| *c).collect();
        use ReturnCode::*;
        // r1/a: ab, ab, abc included; b → NEXT_ROW; r1/b: a → hint to ab; ab included;
        // r2/a: a → hint; abz included.
        assert_eq!(
            codes,
            [
                Include,
                Include,
                Include,
                NextRow,
                SeekNextUsingHint,
                Include,
                SeekNextUsingHint,
                Include
            ]
        );
        let mut f = ColumnPrefixFilter::new("abc");
        let short = kv("r", "f", "ab", 1, "");
        assert_eq!(f.filter_cell(&short.as_cell()), SeekNextUsingHint);
        let short_after = kv("r", "f", "b", 1, "");
        assert_eq!(f.filter_cell(&short_after.as_cell()), NextRow);
        let hint = f.next_cell_hint(&short.as_cell()).unwrap();
        let hint = cairn_cell::KeyRef::parse(&hint).unwrap();
        assert_eq!(
            (hint.row(), hint.family(), hint.qualifier()),
            (&b"r"[..], &b"f"[..], &b"abc"[..])
        );
    }

    #[test]
    fn multiple_column_prefix() {
        let mut f = MultipleColumnPrefixFilter::new(["b", "ab"]).unwrap();
        let out = run(&mut f, &wide());
        assert_eq!(values_of(&out.rows), ["1", "2", "3", "4", "5", "8", "10"]);
        assert!(MultipleColumnPrefixFilter::new(["a", "a"]).is_err());
        let mut f = MultipleColumnPrefixFilter::new(["b", "d"]).unwrap();
        let c = kv("r", "f", "c", 1, "");
        assert_eq!(f.filter_cell(&c.as_cell()), ReturnCode::SeekNextUsingHint);
        let hint = f.next_cell_hint(&c.as_cell()).unwrap();
        assert_eq!(cairn_cell::KeyRef::parse(&hint).unwrap().qualifier(), b"d");
        let e = kv("r", "f", "e", 1, "");
        assert_eq!(f.filter_cell(&e.as_cell()), ReturnCode::NextRow);
        let mut empty = MultipleColumnPrefixFilter::new(Vec::<Vec<u8>>::new()).unwrap();
        assert_eq!(empty.filter_cell(&e.as_cell()), ReturnCode::Include);
    }

    #[test]
    fn column_range() {
        let mut f = ColumnRangeFilter::new(Some(b"ab".to_vec()), false, Some(b"b".to_vec()), true);
        let out = run(&mut f, &wide());
        assert_eq!(values_of(&out.rows), ["3", "4", "10"]);
        let mut open = ColumnRangeFilter::new(None, true, Some(b"abc".to_vec()), false);
        let out = run(&mut open, &wide());
        assert_eq!(values_of(&out.rows), ["1", "2", "7", "8", "9"]);
    }

    #[test]
    fn column_count_get_ends_the_scan_after_an_overflowing_row() {
        let mut f = ColumnCountGetFilter::new(2).unwrap();
        let out = run(&mut f, &wide());
        // r1/a: ab (one version), abc; the third column b overflows: NEXT_COL, and the filter is
        // done for the whole scan.
        assert_eq!(values_of(&out.rows), ["1", "3"]);
        assert!(out.stopped_early);
        assert!(ColumnCountGetFilter::new(-1).is_err());
    }

    #[test]
    fn column_pagination() {
        let mut f = ColumnPaginationFilter::new(2, 1).unwrap();
        let out = run(&mut f, &wide());
        // Per row (across families): skip 1 column, keep 2, one version each.
        assert_eq!(values_of(&out.rows), ["3", "4", "10"]);
        let mut f = ColumnPaginationFilter::with_column_offset(2, "b").unwrap();
        let out = run(&mut f, &wide());
        assert_eq!(values_of(&out.rows), ["4", "5"]);
        let mut wrap = ColumnPaginationFilter::new(i32::MAX, 1).unwrap();
        let c = kv("r", "f", "q", 1, "");
        assert_eq!(wrap.filter_cell(&c.as_cell()), ReturnCode::NextRow);
    }
}
