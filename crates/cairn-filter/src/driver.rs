//! A reference driver: runs a filter over a sorted list of cells in the region scanner's call
//! order, the way HBase 2.6's `RegionScannerImpl.nextInternal`, `FilterWrapper`,
//! `StoreScanner.next` and `UserScanQueryMatcher.mergeFilterResponse` do for a scan with the
//! wildcard column tracker. Tests use it to check filters; cairn-region has the real scanner.
//!
//! Simplifications: the cells given are exactly the ones that reach the filter (no TTL, delete
//! or time-range handling), and seeks stay within the current row and family, which is where
//! every hint this crate produces points.

use cairn_cell::{CellRef, KeyValue};

use crate::keys::compare_cell_to_key;
use crate::{Filter, ReturnCode};

/// What [`apply_filter`] saw.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The rows returned, each non-empty, in order.
    pub rows: Vec<Vec<KeyValue>>,
    /// Every `filter_cell` call: the cell and the filter's answer.
    pub calls: Vec<(KeyValue, ReturnCode)>,
    /// True if the filter ended the scan (`filter_all_remaining`) before the cells ran out.
    pub stopped_early: bool,
}

impl Outcome {
    /// All returned cells, row after row.
    pub fn cells(&self) -> impl Iterator<Item = &KeyValue> {
        self.rows.iter().flatten()
    }
}

/// Runs `filter` over `cells` (sorted in HBase's order, as a store would return them).
/// `max_versions` is the scan's version limit applied after the filter
/// (`versionsAfterFilter`); pass `usize::MAX` for "all versions".
pub fn apply_filter(filter: &mut dyn Filter, cells: &[KeyValue], max_versions: usize) -> Outcome {
    let mut out = Outcome::default();
    let mut start = 0;
    while start < cells.len() {
        let row = cells[start].as_cell().row();
        let end = start
            + cells[start..]
                .iter()
                .position(|c| c.as_cell().row() != row)
                .unwrap_or(cells.len() - start);
        filter.reset();
        // FilterWrapper.filterRowKey: a finished filter drops the row without being asked.
        if filter.filter_all_remaining() || filter.filter_row_key(row) {
            if filter.filter_all_remaining() {
                out.stopped_early = true;
                break;
            }
            start = end;
            continue;
        }
        let (mut results, done_scan) =
            filter_row_cells(filter, &cells[start..end], max_versions, &mut out.calls);
        let is_empty_row = results.is_empty();
        let excluded = if filter.has_filter_row() {
            // FilterWrapper.filterRowCellsWithRet: filterRowCells even for an empty row,
            // filterRow only if cells remain.
            filter.filter_row_cells(&mut results);
            !results.is_empty() && filter.filter_row()
        } else {
            !is_empty_row && filter.filter_row()
        };
        if !is_empty_row && !excluded && !results.is_empty() {
            out.rows.push(results);
        }
        start = end;
        // RegionScannerImpl.nextRaw resets the filter after every row and only then asks
        // whether it is done, so a filter whose reset clears its "done" state
        // (ColumnCountGetFilter) goes on to the next row.
        if done_scan {
            out.stopped_early = true;
            break;
        }
        filter.reset();
        if filter.filter_all_remaining() {
            out.stopped_early = start < cells.len();
            break;
        }
    }
    out
}

fn same_column(a: &CellRef<'_>, b: &CellRef<'_>) -> bool {
    a.family() == b.family() && a.qualifier() == b.qualifier()
}

/// The cells of one row that the filter lets through (transformed), and whether the filter
/// ended the scan on the way.
fn filter_row_cells(
    filter: &mut dyn Filter,
    row: &[KeyValue],
    max_versions: usize,
    calls: &mut Vec<(KeyValue, ReturnCode)>,
) -> (Vec<KeyValue>, bool) {
    let mut results = Vec::new();
    // Versions included of the current column (mergeFilterResponse's count).
    let mut column_count = 0usize;
    let mut column: Option<KeyValue> = None;
    let mut i = 0;
    while i < row.len() {
        let cell = row[i].as_cell();
        // NormalUserScanQueryMatcher.match checks this first, for every cell.
        if filter.filter_all_remaining() {
            return (results, true);
        }
        let rc = filter.filter_cell(&cell);
        calls.push((row[i].clone(), rc));
        let skip_column = |from: usize| {
            from + row[from..]
                .iter()
                .take_while(|c| same_column(&c.as_cell(), &cell))
                .count()
        };
        let skip_family = |from: usize| {
            from + row[from..]
                .iter()
                .take_while(|c| c.as_cell().family() == cell.family())
                .count()
        };
        i = match rc {
            ReturnCode::Skip => i + 1,
            ReturnCode::NextCol => skip_column(i),
            ReturnCode::NextRow => skip_family(i),
            ReturnCode::SeekNextUsingHint => match filter.next_cell_hint(&cell) {
                Some(hint) if compare_cell_to_key(&cell, &hint).is_lt() => {
                    let family_end = skip_family(i);
                    i + 1
                        + row[i + 1..family_end]
                            .iter()
                            .take_while(|c| compare_cell_to_key(&c.as_cell(), &hint).is_lt())
                            .count()
                }
                _ => i + 1,
            },
            include => {
                if !column
                    .as_ref()
                    .is_some_and(|c| same_column(&c.as_cell(), &cell))
                {
                    column = Some(row[i].clone());
                    column_count = 0;
                }
                column_count += 1;
                if column_count > max_versions {
                    // Past the version limit: not included, and on to the next column (or row).
                    if include == ReturnCode::IncludeAndSeekNextRow {
                        skip_family(i)
                    } else {
                        skip_column(i)
                    }
                } else {
                    results.push(filter.transform_cell(row[i].clone()));
                    match include {
                        ReturnCode::IncludeAndNextCol => skip_column(i),
                        ReturnCode::IncludeAndSeekNextRow => skip_family(i),
                        _ => i + 1,
                    }
                }
            }
        };
    }
    (results, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;
    use crate::{Comparator, CompareOp, ValueFilter};

    #[test]
    fn version_limit_applies_after_the_filter() {
        let t = cells(&[
            ("r", "f", "q", 4, "x"),
            ("r", "f", "q", 3, "y"),
            ("r", "f", "q", 2, "x"),
            ("r", "f", "q", 1, "x"),
        ]);
        let mut f = ValueFilter::new(CompareOp::Equal, Comparator::binary("x"));
        let out = apply_filter(&mut f, &t, 2);
        let ts: Vec<i64> = out.cells().map(|c| c.as_cell().timestamp()).collect();
        assert_eq!(ts, [4, 2]);
    }
}
