//! `SkipFilter` and `WhileMatchFilter` (the language's `SKIP` and `WHILE`).

use cairn_cell::{CellRef, KeyValue};

use crate::{operand, Filter, ReturnCode};

/// `SkipFilter`: drops a whole row as soon as the wrapped filter does not `INCLUDE` one of its
/// cells. Like HBase's, it does not pass on the wrapped filter's row-key decision, end of scan,
/// row-cell editing or seek hints.
#[derive(Debug)]
pub struct SkipFilter {
    filter: Box<dyn Filter>,
    filter_row: bool,
}

impl SkipFilter {
    /// Wraps `filter`.
    pub fn new(filter: Box<dyn Filter>) -> SkipFilter {
        SkipFilter {
            filter,
            filter_row: false,
        }
    }
}

impl Filter for SkipFilter {
    fn reset(&mut self) {
        self.filter.reset();
        self.filter_row = false;
    }
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        let rc = self.filter.filter_cell(cell);
        self.filter_row |= rc != ReturnCode::Include;
        rc
    }
    fn transform_cell(&self, cell: KeyValue) -> KeyValue {
        self.filter.transform_cell(cell)
    }
    fn has_filter_row(&self) -> bool {
        true
    }
    fn filter_row(&mut self) -> bool {
        self.filter_row
    }
    fn is_family_essential(&self, family: &[u8]) -> bool {
        self.filter.is_family_essential(family)
    }
    fn set_reversed(&mut self, reversed: bool) {
        self.filter.set_reversed(reversed)
    }
    fn filter_string(&self) -> Option<String> {
        Some(format!("SKIP {}", operand(self.filter.filter_string()?)))
    }
}

/// `WhileMatchFilter`: ends the whole scan at the first cell, row key or row the wrapped filter
/// rejects.
#[derive(Debug)]
pub struct WhileMatchFilter {
    filter: Box<dyn Filter>,
    filter_all_remaining: bool,
}

impl WhileMatchFilter {
    /// Wraps `filter`.
    pub fn new(filter: Box<dyn Filter>) -> WhileMatchFilter {
        WhileMatchFilter {
            filter,
            filter_all_remaining: false,
        }
    }
}

impl Filter for WhileMatchFilter {
    fn reset(&mut self) {
        self.filter.reset();
    }
    fn filter_all_remaining(&mut self) -> bool {
        self.filter_all_remaining || self.filter.filter_all_remaining()
    }
    fn filter_row_key(&mut self, row: &[u8]) -> bool {
        if self.filter_all_remaining() {
            return true;
        }
        let value = self.filter.filter_row_key(row);
        self.filter_all_remaining |= value;
        value
    }
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        let rc = self.filter.filter_cell(cell);
        self.filter_all_remaining |= rc != ReturnCode::Include;
        rc
    }
    fn transform_cell(&self, cell: KeyValue) -> KeyValue {
        self.filter.transform_cell(cell)
    }
    fn has_filter_row(&self) -> bool {
        true
    }
    fn filter_row(&mut self) -> bool {
        let value = self.filter.filter_row();
        self.filter_all_remaining |= value;
        value
    }
    fn is_family_essential(&self, family: &[u8]) -> bool {
        self.filter.is_family_essential(family)
    }
    fn set_reversed(&mut self, reversed: bool) {
        self.filter.set_reversed(reversed)
    }
    fn filter_string(&self) -> Option<String> {
        Some(format!("WHILE {}", operand(self.filter.filter_string()?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;
    use crate::{Comparator, CompareOp, ValueFilter};

    fn table() -> Vec<KeyValue> {
        cells(&[
            ("r1", "f", "a", 1, "ok"),
            ("r1", "f", "b", 1, "ok"),
            ("r2", "f", "a", 1, "ok"),
            ("r2", "f", "b", 1, "bad"),
            ("r3", "f", "a", 1, "ok"),
        ])
    }

    fn not_bad() -> Box<dyn Filter> {
        Box::new(ValueFilter::new(
            CompareOp::NotEqual,
            Comparator::binary("bad"),
        ))
    }

    #[test]
    fn skip_filter_drops_rows_with_a_rejected_cell() {
        let out = run(&mut SkipFilter::new(not_bad()), &table());
        assert_eq!(rows_of(&out.rows), ["r1", "r1", "r3"]);
        assert!(!out.stopped_early);
    }

    #[test]
    fn while_match_ends_the_scan_at_the_first_rejection() {
        let out = run(&mut WhileMatchFilter::new(not_bad()), &table());
        // r2/a was included before r2/b was rejected; the row itself is still returned.
        assert_eq!(values_of(&out.rows), ["ok", "ok", "ok"]);
        assert_eq!(rows_of(&out.rows), ["r1", "r1", "r2"]);
        assert!(out.stopped_early);
        let mut w = WhileMatchFilter::new(Box::new(crate::PrefixFilter::new("r1")));
        assert!(!w.filter_row_key(b"r1"));
        assert!(w.filter_row_key(b"r2"));
        assert!(w.filter_all_remaining());
    }
}
