//! Row ranges as `std::ops::Bound`s: a scan's start and stop, inclusive or exclusive, forward
//! or reversed, clipped to a region's `[start_key, end_key)`. The one place that decides which
//! rows a range admits; the region scanner and the table scanner both ask it.

use std::cmp::Ordering;
use std::ops::Bound;

use cairn_cell::{compare_bytes, compare_meta_rows};

use crate::layout::RegionInfo;
use crate::mutation::Scan;

/// How rows sort: HBase's plain unsigned byte order, or `hbase:meta`'s
/// (`MetaCellComparator`: table name, then start key, then region id).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RowOrder {
    /// Unsigned bytes (`CellComparatorImpl`): every user table.
    #[default]
    Bytes,
    /// `hbase:meta`'s rows (`MetaCellComparator`).
    Meta,
}

impl RowOrder {
    /// Compares two rows in this order.
    #[inline]
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            RowOrder::Bytes => compare_bytes(a, b),
            RowOrder::Meta => compare_meta_rows(a, b),
        }
    }
}

/// Whether `row` is at or above the lower bound `lo`.
#[inline]
pub fn above(order: RowOrder, lo: &Bound<Vec<u8>>, row: &[u8]) -> bool {
    match lo {
        Bound::Unbounded => true,
        Bound::Included(b) => order.compare(row, b) != Ordering::Less,
        Bound::Excluded(b) => order.compare(row, b) == Ordering::Greater,
    }
}

/// Whether `row` is at or below the upper bound `hi`.
#[inline]
pub fn below(order: RowOrder, hi: &Bound<Vec<u8>>, row: &[u8]) -> bool {
    match hi {
        Bound::Unbounded => true,
        Bound::Included(b) => order.compare(row, b) != Ordering::Greater,
        Bound::Excluded(b) => order.compare(row, b) == Ordering::Less,
    }
}

/// The row of a bound, if it has one.
fn row_of<'a>(b: &Bound<&'a [u8]>) -> Option<&'a [u8]> {
    match b {
        Bound::Included(r) | Bound::Excluded(r) => Some(r),
        Bound::Unbounded => None,
    }
}

/// The tighter of two lower bounds (the one admitting fewer rows).
pub fn max_lower(order: RowOrder, a: Bound<Vec<u8>>, b: Bound<&[u8]>) -> Bound<Vec<u8>> {
    match (row_of(&a.as_ref().map(|v| v.as_slice())), row_of(&b)) {
        (_, None) => a,
        (None, Some(_)) => b.map(<[u8]>::to_vec),
        (Some(x), Some(y)) => match order.compare(x, y) {
            Ordering::Greater => a,
            Ordering::Less => b.map(<[u8]>::to_vec),
            // Equal rows: an exclusive bound admits fewer.
            Ordering::Equal if matches!(b, Bound::Excluded(_)) => b.map(<[u8]>::to_vec),
            Ordering::Equal => a,
        },
    }
}

/// The tighter of two upper bounds.
pub fn min_upper(order: RowOrder, a: Bound<Vec<u8>>, b: Bound<&[u8]>) -> Bound<Vec<u8>> {
    match (row_of(&a.as_ref().map(|v| v.as_slice())), row_of(&b)) {
        (_, None) => a,
        (None, Some(_)) => b.map(<[u8]>::to_vec),
        (Some(x), Some(y)) => match order.compare(x, y) {
            Ordering::Less => a,
            Ordering::Greater => b.map(<[u8]>::to_vec),
            Ordering::Equal if matches!(b, Bound::Excluded(_)) => b.map(<[u8]>::to_vec),
            Ordering::Equal => a,
        },
    }
}

/// Clips `scan`'s range to a region's rows, `[start_key, end_key)` (in byte order).
pub fn clip_to_region(scan: &mut Scan, info: &RegionInfo) {
    let lo = if info.start_key.is_empty() {
        Bound::Unbounded
    } else {
        Bound::Included(info.start_key.as_slice())
    };
    let hi = if info.end_key.is_empty() {
        Bound::Unbounded
    } else {
        Bound::Excluded(info.end_key.as_slice())
    };
    let order = RowOrder::Bytes;
    let start = std::mem::replace(&mut scan.start, Bound::Unbounded);
    let stop = std::mem::replace(&mut scan.stop, Bound::Unbounded);
    if scan.reversed {
        scan.start = min_upper(order, start, hi);
        scan.stop = max_lower(order, stop, lo);
    } else {
        scan.start = max_lower(order, start, lo);
        scan.stop = min_upper(order, stop, hi);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::TableName;
    use Bound::{Excluded, Included, Unbounded};

    fn b(s: &str) -> Bound<Vec<u8>> {
        match s.split_at(1) {
            ("[", r) => Included(r.as_bytes().to_vec()),
            ("(", r) => Excluded(r.as_bytes().to_vec()),
            _ => Unbounded,
        }
    }

    #[test]
    fn the_tighter_bound_wins_and_exclusive_beats_inclusive_at_one_row() {
        let o = RowOrder::Bytes;
        assert_eq!(max_lower(o, b("[b"), Included(b"a")), b("[b"));
        assert_eq!(max_lower(o, b("[a"), Included(b"b")), b("[b"));
        assert_eq!(max_lower(o, b("[b"), Excluded(b"b")), b("(b"));
        assert_eq!(max_lower(o, b("(b"), Included(b"b")), b("(b"));
        assert_eq!(max_lower(o, b("*"), Included(b"b")), b("[b"));
        assert_eq!(max_lower(o, b("[b"), Unbounded), b("[b"));
        assert_eq!(min_upper(o, b("[b"), Excluded(b"c")), b("[b"));
        assert_eq!(min_upper(o, b("[c"), Excluded(b"b")), b("(b"));
        assert_eq!(min_upper(o, b("[c"), Excluded(b"c")), b("(c"));
        assert_eq!(min_upper(o, b("*"), Excluded(b"c")), b("(c"));
        assert_eq!(min_upper(o, b("(c"), Unbounded), b("(c"));
    }

    #[test]
    fn a_scan_is_clipped_to_its_region_in_either_direction() {
        let info = RegionInfo::new(TableName::parse("t").unwrap(), b"c", b"m", 1);
        let clip = |start: &str, stop: &str, reversed: bool| {
            let mut s = Scan::new()
                .with_start(b(start))
                .with_stop(b(stop))
                .reversed(reversed);
            clip_to_region(&mut s, &info);
            (s.start, s.stop)
        };
        assert_eq!(clip("*", "*", false), (b("[c"), b("(m")));
        assert_eq!(clip("(c", "[m", false), (b("(c"), b("(m")));
        assert_eq!(clip("[d", "[e", false), (b("[d"), b("[e")));
        assert_eq!(clip("*", "*", true), (b("(m"), b("[c")));
        assert_eq!(clip("[z", "(a", true), (b("(m"), b("[c")));
        assert_eq!(clip("[e", "(c", true), (b("[e"), b("(c")));
    }

    #[test]
    fn rows_are_above_and_below_bounds_in_the_regions_order() {
        let o = RowOrder::Bytes;
        assert!(above(o, &b("[b"), b"b") && !above(o, &b("(b"), b"b") && above(o, &b("*"), b""));
        assert!(below(o, &b("[b"), b"b") && !below(o, &b("(b"), b"b") && below(o, &b("*"), b"z"));
        // In hbase:meta's order "t,," sorts before "t ,," (bytewise it is after).
        let m = RowOrder::Meta;
        assert!(below(m, &b("(t ,,"), b"t,,1.x."));
        assert!(!below(o, &b("(t ,,"), b"t,,1.x."));
    }
}
