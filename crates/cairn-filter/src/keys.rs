//! Seek keys filters hand to the scanner (`PrivateCellUtil.createFirstOnRowCol` and friends).

use std::cmp::Ordering;

use cairn_cell::CellRef;
use cairn_cell::{compare_keys, make_key, CellType, KeyRef, LATEST_TIMESTAMP};

/// `HConstants.OLDEST_TIMESTAMP`.
const OLDEST_TIMESTAMP: i64 = i64::MIN;

/// Sorts before every version of `cell`'s row and family with this qualifier.
pub(crate) fn first_on_row_col(cell: &CellRef<'_>, qualifier: &[u8]) -> Option<Vec<u8>> {
    make_key(
        cell.row(),
        cell.family(),
        qualifier,
        LATEST_TIMESTAMP,
        CellType::Maximum.code(),
    )
    .ok()
}

/// Sorts before the version `timestamp` of `cell`'s column.
pub(crate) fn first_on_row_col_ts(cell: &CellRef<'_>, timestamp: i64) -> Option<Vec<u8>> {
    make_key(
        cell.row(),
        cell.family(),
        cell.qualifier(),
        timestamp,
        CellType::Maximum.code(),
    )
    .ok()
}

/// Sorts after every version of `cell`'s column.
pub(crate) fn last_on_row_col(cell: &CellRef<'_>) -> Option<Vec<u8>> {
    make_key(
        cell.row(),
        cell.family(),
        cell.qualifier(),
        OLDEST_TIMESTAMP,
        CellType::Minimum.code(),
    )
    .ok()
}

/// `CellComparator.compare(cell, hint)`: key order, then sequence id descending (a hint's is 0).
/// An unparsable hint sorts after everything.
pub(crate) fn compare_cell_to_key(cell: &CellRef<'_>, key: &[u8]) -> Ordering {
    match KeyRef::parse(key) {
        Ok(k) => compare_keys(&cell.key, &k).then_with(|| 0u64.cmp(&cell.sequence_id)),
        Err(_) => Ordering::Less,
    }
}

/// Key order of two hint keys; unparsable keys sort last.
pub(crate) fn compare_hint_keys(a: &[u8], b: &[u8]) -> Ordering {
    match (KeyRef::parse(a), KeyRef::parse(b)) {
        (Ok(a), Ok(b)) => compare_keys(&a, &b),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => Ordering::Equal,
    }
}
