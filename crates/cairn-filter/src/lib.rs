//! # cairn-filter
//!
//! HBase 2.6's server-side filters (`org.apache.hadoop.hbase.filter`) with HBase's exact
//! semantics, and a parser for HBase's filter language (`ParseFilter`, the text a Thrift
//! `TScan.filterString` carries).
//!
//! What this crate owns:
//! - the [`Filter`] trait and [`ReturnCode`], mirroring HBase's `Filter` / `Filter.ReturnCode`;
//! - the filters themselves (row, column, value, paging, key-only, timestamp filters, the
//!   [`SkipFilter`] / [`WhileMatchFilter`] wrappers and [`FilterList`] with HBase 2.6's merge
//!   rules), built either from Rust or from filter-language text;
//! - comparators ([`Comparator`]) and compare operators ([`CompareOp`]) with `CompareFilter`'s
//!   inverted sense (the comparator's value is on the left);
//! - [`parse_filter`], which accepts exactly the strings HBase's `ParseFilter` accepts and
//!   builds the same filter tree, and reports everything else as a [`FilterError`] with the
//!   byte offset it refers to;
//! - [`driver::apply_filter`], a small reference driver that calls a filter over a sorted list
//!   of cells in the region scanner's call order. Tests use it; it is not a scanner.
//!
//! What it does not own: scanning. The region scanner (cairn-region) drives filters in HBase's
//! order (see [`Filter`]), merges their codes with its own column/version tracking, performs
//! seeks, and wraps the filter the way HBase's `FilterWrapper` does.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::fmt;

use cairn_cell::{CellRef, KeyValue};

mod column;
mod comparator;
pub mod driver;
mod error;
mod keys;
mod list;
mod misc;
mod parse;
mod row;
mod value;
mod wrapper;

pub use column::{
    ColumnCountGetFilter, ColumnPaginationFilter, ColumnPrefixFilter, ColumnRangeFilter,
    FamilyFilter, MultipleColumnPrefixFilter, QualifierFilter,
};
pub use comparator::{BitwiseOp, Comparator, CompareOp};
pub use error::FilterError;
pub use list::{FilterList, Operator};
pub use misc::{FilterAllFilter, FirstKeyOnlyFilter, KeyOnlyFilter, PageFilter, TimestampsFilter};
pub use parse::{parse_filter, MAX_FILTER_DEPTH, SUPPORTED_FILTERS};
pub use row::{InclusiveStopFilter, PrefixFilter, RowFilter};
pub use value::{
    ColumnValueFilter, DependentColumnFilter, SingleColumnValueExcludeFilter,
    SingleColumnValueFilter, ValueFilter,
};
pub use wrapper::{SkipFilter, WhileMatchFilter};

/// What a filter tells the scanner to do with a cell (`Filter.ReturnCode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReturnCode {
    /// Include the cell.
    Include,
    /// Include the cell and seek to the next column, skipping its older versions.
    IncludeAndNextCol,
    /// Skip this cell.
    Skip,
    /// Skip this column: go on with the next column.
    NextCol,
    /// Skip the rest of this row *in the current family*; other families of the row are still
    /// passed in (HBASE-18368), and `filter_row` is still called.
    NextRow,
    /// Seek to [`Filter::next_cell_hint`]; without a hint, go on with the next cell.
    SeekNextUsingHint,
    /// Include the cell, then go on with the next row (in this family).
    IncludeAndSeekNextRow,
}

impl ReturnCode {
    /// True for the three codes that keep the cell.
    pub fn is_include(self) -> bool {
        matches!(
            self,
            ReturnCode::Include | ReturnCode::IncludeAndNextCol | ReturnCode::IncludeAndSeekNextRow
        )
    }
}

/// A server-side filter, called in HBase's order (`RegionScannerImpl`, `StoreScanner`,
/// `UserScanQueryMatcher`, `FilterWrapper`):
///
/// 1. [`reset`](Filter::reset) before every row (HBase resets after each row; same effect).
/// 2. [`filter_all_remaining`](Filter::filter_all_remaining): true ends the scan.
/// 3. [`filter_row_key`](Filter::filter_row_key) with the row: true drops the row (then, if
///    `filter_all_remaining` is true, the scan ends). HBase's `FilterWrapper` returns true
///    without calling the filter when `filter_all_remaining` is already true.
/// 4. For every cell that survives the scanner's TTL, delete, time-range, column and version
///    checks: `filter_all_remaining` (true ends the scan after this row), then
///    [`filter_cell`](Filter::filter_cell); included cells go through
///    [`transform_cell`](Filter::transform_cell).
/// 5. If [`has_filter_row`](Filter::has_filter_row): [`filter_row_cells`](Filter::filter_row_cells)
///    (even for an empty row), then, if cells remain, [`filter_row`](Filter::filter_row); true
///    drops the row. Otherwise `filter_row` is called only for a non-empty row.
pub trait Filter: Send + fmt::Debug {
    /// Called at the start of every row: forget per-row state.
    fn reset(&mut self) {}
    /// True when the scan is over for this filter.
    fn filter_all_remaining(&mut self) -> bool {
        false
    }
    /// True to skip the row whose key is `row`.
    fn filter_row_key(&mut self, _row: &[u8]) -> bool {
        false
    }
    /// What to do with `cell`.
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode;
    /// Rewrites an included cell.
    fn transform_cell(&self, cell: KeyValue) -> KeyValue {
        cell
    }
    /// True if the filter needs the whole row ([`Filter::filter_row_cells`] /
    /// [`Filter::filter_row`]); such filters cannot work with partial rows.
    fn has_filter_row(&self) -> bool {
        false
    }
    /// Edits the assembled row.
    fn filter_row_cells(&mut self, _cells: &mut Vec<KeyValue>) {}
    /// True to drop the row just assembled.
    fn filter_row(&mut self) -> bool {
        false
    }
    /// After [`ReturnCode::SeekNextUsingHint`] for `cell`: the KeyValue key to seek to. `None`
    /// (or a key not after `cell`) means "go on with the next cell".
    fn next_cell_hint(&self, _cell: &CellRef<'_>) -> Option<Vec<u8>> {
        None
    }
    /// False if the family is not needed to decide about a row (joined-scanner optimisation).
    fn is_family_essential(&self, _family: &[u8]) -> bool {
        true
    }
    /// True for HBase's `HintingFilter`s, whose hints a `MUST_PASS_ALL` list must honour even
    /// after another sub-filter has given up on the cell or row.
    fn is_hinting(&self) -> bool {
        false
    }
    /// Tells the filter the scan is reversed (rows in descending order).
    fn set_reversed(&mut self, _reversed: bool) {}
    /// The filter in filter-language syntax, when it has one: parsing it gives the same filter.
    fn filter_string(&self) -> Option<String> {
        None
    }
}

impl Filter for Box<dyn Filter> {
    fn reset(&mut self) {
        (**self).reset()
    }
    fn filter_all_remaining(&mut self) -> bool {
        (**self).filter_all_remaining()
    }
    fn filter_row_key(&mut self, row: &[u8]) -> bool {
        (**self).filter_row_key(row)
    }
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        (**self).filter_cell(cell)
    }
    fn transform_cell(&self, cell: KeyValue) -> KeyValue {
        (**self).transform_cell(cell)
    }
    fn has_filter_row(&self) -> bool {
        (**self).has_filter_row()
    }
    fn filter_row_cells(&mut self, cells: &mut Vec<KeyValue>) {
        (**self).filter_row_cells(cells)
    }
    fn filter_row(&mut self) -> bool {
        (**self).filter_row()
    }
    fn next_cell_hint(&self, cell: &CellRef<'_>) -> Option<Vec<u8>> {
        (**self).next_cell_hint(cell)
    }
    fn is_family_essential(&self, family: &[u8]) -> bool {
        (**self).is_family_essential(family)
    }
    fn is_hinting(&self) -> bool {
        (**self).is_hinting()
    }
    fn set_reversed(&mut self, reversed: bool) {
        (**self).set_reversed(reversed)
    }
    fn filter_string(&self) -> Option<String> {
        (**self).filter_string()
    }
}

/// Writes bytes as a filter-language quoted string: `'` doubled, bytes that are not UTF-8
/// replaced (the language is text, so such bytes have no spelling).
pub(crate) fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for ch in text.chars() {
        if ch == '\'' {
            out.push('\'');
        }
        out.push(ch);
    }
    out.push('\'');
    out
}

/// Filter-language text of an operand of a list or of `SKIP`/`WHILE`. HBase's parser loses
/// an operator when a tighter one follows it inside the same parentheses (`(A AND SKIP B)` and
/// `(SKIP SKIP A)` are rejected), so wrapped filters get parentheses of their own; lists spell
/// themselves in parentheses already.
pub(crate) fn operand(spelling: String) -> String {
    if spelling.starts_with("SKIP ") || spelling.starts_with("WHILE ") {
        format!("({spelling})")
    } else {
        spelling
    }
}

#[cfg(test)]
pub(crate) mod test_util;
