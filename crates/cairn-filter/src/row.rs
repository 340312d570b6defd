//! Filters that decide on the row key: `PrefixFilter`, `RowFilter`, `InclusiveStopFilter`.

use std::cmp::Ordering;

use cairn_cell::compare_bytes;
use cairn_cell::CellRef;

use crate::{quote, Comparator, CompareOp, Filter, FilterError, ReturnCode};

/// `PrefixFilter`: keeps rows that start with `prefix`, and ends the scan once rows sort past
/// it.
#[derive(Debug, Clone)]
pub struct PrefixFilter {
    prefix: Vec<u8>,
    passed_prefix: bool,
    filter_row: bool,
    reversed: bool,
}

impl PrefixFilter {
    /// A filter for rows starting with `prefix`.
    pub fn new(prefix: impl Into<Vec<u8>>) -> PrefixFilter {
        PrefixFilter {
            prefix: prefix.into(),
            passed_prefix: false,
            filter_row: true,
            reversed: false,
        }
    }

    /// The row prefix the filter keeps.
    pub fn prefix(&self) -> &[u8] {
        &self.prefix
    }
}

impl Filter for PrefixFilter {
    fn reset(&mut self) {
        self.filter_row = true;
    }
    fn filter_all_remaining(&mut self) -> bool {
        self.passed_prefix
    }
    fn filter_row_key(&mut self, row: &[u8]) -> bool {
        if self.passed_prefix {
            return true;
        }
        if row.len() < self.prefix.len() {
            // HBase returns before updating its row flag here, so a short row is dropped by
            // this answer alone.
            return true;
        }
        let cmp = compare_bytes(&row[..self.prefix.len()], &self.prefix);
        if (!self.reversed && cmp == Ordering::Greater) || (self.reversed && cmp == Ordering::Less)
        {
            self.passed_prefix = true;
        }
        self.filter_row = cmp != Ordering::Equal;
        self.filter_row
    }
    fn filter_cell(&mut self, _cell: &CellRef<'_>) -> ReturnCode {
        if self.filter_row {
            ReturnCode::NextRow
        } else {
            ReturnCode::Include
        }
    }
    fn filter_row(&mut self) -> bool {
        self.filter_row
    }
    fn set_reversed(&mut self, reversed: bool) {
        self.reversed = reversed;
    }
    fn filter_string(&self) -> Option<String> {
        Some(format!("PrefixFilter({})", quote(&self.prefix)))
    }
}

/// `RowFilter`: keeps rows whose key passes `op` against the comparator.
#[derive(Debug, Clone)]
pub struct RowFilter {
    op: CompareOp,
    comparator: Comparator,
    filter_out_row: bool,
}

impl RowFilter {
    /// A filter keeping rows `row op comparator` (e.g. `Less` keeps rows less than the value).
    pub fn new(op: CompareOp, comparator: Comparator) -> RowFilter {
        RowFilter {
            op,
            comparator,
            filter_out_row: false,
        }
    }
}

impl Filter for RowFilter {
    fn reset(&mut self) {
        self.filter_out_row = false;
    }
    fn filter_row_key(&mut self, row: &[u8]) -> bool {
        if self.op.compare_filters_out(&self.comparator, row) {
            self.filter_out_row = true;
        }
        self.filter_out_row
    }
    fn filter_cell(&mut self, _cell: &CellRef<'_>) -> ReturnCode {
        if self.filter_out_row {
            ReturnCode::NextRow
        } else {
            ReturnCode::Include
        }
    }
    fn filter_row(&mut self) -> bool {
        self.filter_out_row
    }
    fn filter_string(&self) -> Option<String> {
        compare_filter_string("RowFilter", self.op, &self.comparator)
    }
}

/// `Name(op, 'comparator')` for the compare filters.
pub(crate) fn compare_filter_string(
    name: &str,
    op: CompareOp,
    comparator: &Comparator,
) -> Option<String> {
    Some(format!(
        "{name}({}, {})",
        op.token()?,
        quote(&comparator.spelling()?)
    ))
}

/// `InclusiveStopFilter`: keeps rows up to and including `stop_row`, then ends the scan.
#[derive(Debug, Clone)]
pub struct InclusiveStopFilter {
    stop_row: Vec<u8>,
    done: bool,
    reversed: bool,
}

impl InclusiveStopFilter {
    /// A filter that stops after `stop_row`.
    pub fn new(stop_row: impl Into<Vec<u8>>) -> InclusiveStopFilter {
        InclusiveStopFilter {
            stop_row: stop_row.into(),
            done: false,
            reversed: false,
        }
    }
}

impl Filter for InclusiveStopFilter {
    fn filter_all_remaining(&mut self) -> bool {
        self.done
    }
    fn filter_row_key(&mut self, row: &[u8]) -> bool {
        if self.done {
            return true;
        }
        let cmp = compare_bytes(row, &self.stop_row);
        self.done = if self.reversed {
            cmp == Ordering::Less
        } else {
            cmp == Ordering::Greater
        };
        self.done
    }
    fn filter_cell(&mut self, _cell: &CellRef<'_>) -> ReturnCode {
        if self.done {
            ReturnCode::NextRow
        } else {
            ReturnCode::Include
        }
    }
    fn set_reversed(&mut self, reversed: bool) {
        self.reversed = reversed;
    }
    fn filter_string(&self) -> Option<String> {
        Some(format!("InclusiveStopFilter({})", quote(&self.stop_row)))
    }
}

/// Checks a compare filter's operator against its comparator the way `extractArguments` does.
pub(crate) fn check_matching_op(
    filter: &'static str,
    op: CompareOp,
    comparator: &Comparator,
) -> Result<(), FilterError> {
    if comparator.is_matching_only() && !matches!(op, CompareOp::Equal | CompareOp::NotEqual) {
        return Err(FilterError::invalid(
            filter,
            "a regexstring or substring comparator can only be used with = and !=",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;

    fn table() -> Vec<cairn_cell::KeyValue> {
        cells(&[
            ("a", "f", "q", 1, "v"),
            ("ab", "f", "q", 1, "v"),
            ("abc", "f", "q", 1, "v"),
            ("abc", "f", "r", 1, "v"),
            ("abd", "f", "q", 1, "v"),
            ("ba", "f", "q", 1, "v"),
        ])
    }

    #[test]
    fn prefix_filter_keeps_prefixed_rows_and_stops_after() {
        let out = run(&mut PrefixFilter::new("ab"), &table());
        assert_eq!(rows_of(&out.rows), ["ab", "abc", "abc", "abd"]);
        // "ba" sorts past the prefix: the scan ends there. (A row shorter than the prefix is
        // only dropped: HBase returns before comparing.)
        assert!(out.stopped_early);
        let mut f = PrefixFilter::new("abc");
        assert!(f.filter_row_key(b"ab"), "shorter than the prefix");
        assert!(!f.filter_all_remaining());
        assert!(!f.filter_row_key(b"abcd"));
        assert!(f.filter_row_key(b"abd"));
        assert!(f.filter_all_remaining());
    }

    #[test]
    fn prefix_filter_reversed_stops_below() {
        let mut f = PrefixFilter::new("b");
        f.set_reversed(true);
        assert!(f.filter_row_key(b"c"));
        assert!(!f.filter_all_remaining());
        assert!(f.filter_row_key(b"a"));
        assert!(f.filter_all_remaining());
    }

    #[test]
    fn row_filter_uses_inverted_compare() {
        let out = run(
            &mut RowFilter::new(CompareOp::Less, Comparator::binary("abc")),
            &table(),
        );
        assert_eq!(rows_of(&out.rows), ["a", "ab"]);
        let out = run(
            &mut RowFilter::new(CompareOp::GreaterOrEqual, Comparator::binary("abc")),
            &table(),
        );
        assert_eq!(rows_of(&out.rows), ["abc", "abc", "abd", "ba"]);
        let out = run(
            &mut RowFilter::new(
                CompareOp::Equal,
                Comparator::regex_string("^a.c$", false).unwrap(),
            ),
            &table(),
        );
        assert_eq!(rows_of(&out.rows), ["abc", "abc"]);
        let out = run(
            &mut RowFilter::new(CompareOp::NoOp, Comparator::binary("abc")),
            &table(),
        );
        assert!(out.rows.is_empty(), "NO_OP filters every row out");
    }

    #[test]
    fn inclusive_stop_includes_the_stop_row() {
        let out = run(&mut InclusiveStopFilter::new("abc"), &table());
        assert_eq!(rows_of(&out.rows), ["a", "ab", "abc", "abc"]);
        assert!(out.stopped_early);
        let mut f = InclusiveStopFilter::new("m");
        f.set_reversed(true);
        assert!(!f.filter_row_key(b"z"));
        assert!(f.filter_row_key(b"a"));
    }
}
