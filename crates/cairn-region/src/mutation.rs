//! Client operations: Put, Delete, Get, Scan, Increment, Append, RowMutations and
//! CheckAndMutate (HBase's client classes).

mod append;
mod check_and_mutate;
mod row_mutations;

pub use append::Append;
pub use check_and_mutate::{Action, CheckAndMutate, CheckAndMutateResult, Condition};
pub use row_mutations::{RowMutation, RowMutations};

use std::collections::BTreeMap;
use std::ops::Bound;

use cairn_cell::{CellType, LATEST_TIMESTAMP};
use cairn_filter::Filter;
use cairn_wal::Durability;

use crate::matcher::TimeRange;
use crate::read_options::ReadOptions;

/// One column of a put: family, qualifier, timestamp (`LATEST_TIMESTAMP` = the server's
/// clock), value.
pub type PutColumn = (Vec<u8>, Vec<u8>, i64, Vec<u8>);

/// Writes to one row; all its cells become visible together.
#[derive(Clone, Debug, PartialEq)]
pub struct Put {
    /// The row written; it must fall in the region the put is sent to.
    pub row: Vec<u8>,
    /// The columns written, in the order added; the same column twice at one timestamp keeps
    /// the later value (both get the put's one sequence id).
    pub cells: Vec<PutColumn>,
    /// `None` = the table's durability (`USE_DEFAULT`).
    pub durability: Option<Durability>,
    ts: i64,
}

impl Put {
    /// A put to `row` whose columns are stamped with the server's clock when applied (HBase's
    /// `new Put(row)`).
    pub fn new(row: impl AsRef<[u8]>) -> Put {
        Put {
            row: row.as_ref().to_vec(),
            cells: Vec::new(),
            durability: None,
            ts: LATEST_TIMESTAMP,
        }
    }

    /// Cells added afterwards without a timestamp get `ts`.
    pub fn with_timestamp(row: impl AsRef<[u8]>, ts: i64) -> Put {
        Put {
            ts,
            ..Put::new(row)
        }
    }

    /// Adds a column at the put's timestamp (HBase's `addColumn(family, qualifier, value)`).
    pub fn add(
        mut self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Put {
        let ts = self.ts;
        self.cells.push((
            family.as_ref().to_vec(),
            qualifier.as_ref().to_vec(),
            ts,
            value.as_ref().to_vec(),
        ));
        self
    }

    /// Adds a column at timestamp `ts` (HBase's `addColumn(family, qualifier, ts, value)`);
    /// negative timestamps are refused when the put is applied.
    pub fn add_at(
        mut self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        ts: i64,
        value: impl AsRef<[u8]>,
    ) -> Put {
        self.cells.push((
            family.as_ref().to_vec(),
            qualifier.as_ref().to_vec(),
            ts,
            value.as_ref().to_vec(),
        ));
        self
    }

    /// Overrides the table's durability for this put (HBase's `setDurability`); a `SKIP_WAL`
    /// put is lost if the server crashes before it is flushed.
    pub fn durability(mut self, d: Durability) -> Put {
        self.durability = Some(d);
        self
    }
}

/// One marker of a Delete.
#[derive(Clone, Debug, PartialEq)]
pub struct DeleteMarker {
    /// The family the marker is written to.
    pub family: Vec<u8>,
    /// The column; empty for the family-wide markers (DeleteFamily, DeleteFamilyVersion).
    pub qualifier: Vec<u8>,
    /// Which versions it covers: at or below `ts` (DeleteFamily, DeleteColumn) or exactly `ts`
    /// (Delete, DeleteFamilyVersion). `LATEST_TIMESTAMP` is resolved when the delete is applied.
    pub ts: i64,
    /// One of HBase's four marker types: `Delete`, `DeleteColumn`, `DeleteFamily`,
    /// `DeleteFamilyVersion`.
    pub kind: CellType,
}

/// Deletes in one row, with HBase's four kinds of marker.
#[derive(Clone, Debug, PartialEq)]
pub struct Delete {
    /// The row the markers are written to.
    pub row: Vec<u8>,
    /// Empty = the whole row (a DeleteFamily for every family at `ts`).
    pub markers: Vec<DeleteMarker>,
    /// The timestamp of markers added without one (and of the whole-row delete).
    /// `LATEST_TIMESTAMP` means the server's clock at apply time, except for a
    /// [`column`](Self::column) marker, which then deletes the newest version.
    pub ts: i64,
    /// `None` = the table's durability (`USE_DEFAULT`).
    pub durability: Option<Durability>,
}

impl Delete {
    /// Deletes the whole row (every version ≤ now, or ≤ `with_timestamp`'s).
    pub fn new(row: impl AsRef<[u8]>) -> Delete {
        Delete {
            row: row.as_ref().to_vec(),
            markers: Vec::new(),
            ts: LATEST_TIMESTAMP,
            durability: None,
        }
    }

    /// Like [`new`](Self::new) with `ts` as the delete's timestamp (HBase's
    /// `new Delete(row, ts)`): markers added without a timestamp take it, and the whole-row
    /// delete covers versions ≤ `ts`.
    pub fn with_timestamp(row: impl AsRef<[u8]>, ts: i64) -> Delete {
        Delete {
            ts,
            ..Delete::new(row)
        }
    }

    fn push(mut self, family: &[u8], qualifier: &[u8], ts: i64, kind: CellType) -> Delete {
        self.markers.push(DeleteMarker {
            family: family.to_vec(),
            qualifier: qualifier.to_vec(),
            ts,
            kind,
        });
        self
    }

    /// `addFamily`: every column of the family, versions ≤ the delete's timestamp.
    pub fn family(self, family: impl AsRef<[u8]>) -> Delete {
        let ts = self.ts;
        self.push(family.as_ref(), b"", ts, CellType::DeleteFamily)
    }

    /// `addFamilyVersion`: every column of the family at exactly `ts`.
    pub fn family_version(self, family: impl AsRef<[u8]>, ts: i64) -> Delete {
        self.push(family.as_ref(), b"", ts, CellType::DeleteFamilyVersion)
    }

    /// `addColumns`: every version of a column ≤ the delete's timestamp.
    pub fn columns(self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>) -> Delete {
        let ts = self.ts;
        self.push(
            family.as_ref(),
            qualifier.as_ref(),
            ts,
            CellType::DeleteColumn,
        )
    }

    /// `addColumns` with a timestamp.
    pub fn columns_at(
        self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        ts: i64,
    ) -> Delete {
        self.push(
            family.as_ref(),
            qualifier.as_ref(),
            ts,
            CellType::DeleteColumn,
        )
    }

    /// `addColumn`: the newest version of a column (found at write time).
    pub fn column(self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>) -> Delete {
        let ts = self.ts;
        self.push(family.as_ref(), qualifier.as_ref(), ts, CellType::Delete)
    }

    /// `addColumn` with a timestamp: exactly that version.
    pub fn column_at(
        self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        ts: i64,
    ) -> Delete {
        self.push(family.as_ref(), qualifier.as_ref(), ts, CellType::Delete)
    }

    /// Overrides the table's durability for this delete (HBase's `setDurability`).
    pub fn durability(mut self, d: Durability) -> Delete {
        self.durability = Some(d);
        self
    }
}

/// Which columns a read wants: per family, `None` for all its qualifiers. Empty = every
/// family.
pub type Columns = BTreeMap<Vec<u8>, Option<Vec<Vec<u8>>>>;

fn add_family(columns: &mut Columns, family: &[u8]) {
    columns.insert(family.to_vec(), None);
}

/// As HBase's `addColumn`: a column added after its whole family (`addFamily`) narrows the
/// read to the columns named (HBase's `computeIfAbsent` treats the family's null set as
/// absent and starts a new one).
fn add_column(columns: &mut Columns, family: &[u8], qualifier: &[u8]) {
    columns
        .entry(family.to_vec())
        .or_insert(None)
        .get_or_insert_with(Vec::new)
        .push(qualifier.to_vec());
}

/// A read of one row: a one-row [`Scan`] with the same [`ReadOptions`] (HBase runs gets as
/// one-row scans, and so does cairn).
#[derive(Debug)]
pub struct Get {
    /// The row.
    pub row: Vec<u8>,
    /// Which families and columns (empty = all).
    pub columns: Columns,
    /// Versions, time range, filter, read point, whether to fill the block cache.
    pub options: ReadOptions,
}

impl Get {
    /// Every column of `row`, newest version.
    pub fn new(row: impl AsRef<[u8]>) -> Get {
        Get {
            row: row.as_ref().to_vec(),
            columns: Columns::new(),
            options: ReadOptions::default(),
        }
    }
    /// Adds a whole family (HBase's `addFamily`).
    pub fn family(mut self, f: impl AsRef<[u8]>) -> Get {
        add_family(&mut self.columns, f.as_ref());
        self
    }
    /// Adds one column (HBase's `addColumn`).
    pub fn column(mut self, f: impl AsRef<[u8]>, q: impl AsRef<[u8]>) -> Get {
        add_column(&mut self.columns, f.as_ref(), q.as_ref());
        self
    }
    /// Up to `n` versions per column (HBase's `readVersions`).
    pub fn versions(mut self, n: u32) -> Get {
        self.options.max_versions = n;
        self
    }
    /// Only cells whose timestamps fall in `tr`.
    pub fn time_range(mut self, tr: TimeRange) -> Get {
        self.options.time_range = tr;
        self
    }
    /// Applies HBase's filter `f`.
    pub fn filter(mut self, f: Box<dyn Filter>) -> Get {
        self.options.filter = Some(f);
        self
    }
    /// Whether data blocks read fill the block cache (HBase's `setCacheBlocks`).
    pub fn cache_blocks(mut self, on: bool) -> Get {
        self.options.cache_blocks = on;
        self
    }
    /// At most `n` cells per family (HBase's `setMaxResultsPerColumnFamily`).
    pub fn store_limit(mut self, n: u32) -> Get {
        self.options.store_limit = Some(n);
        self
    }
    /// Leaves out the first `n` cells of each family (HBase's `setRowOffsetPerColumnFamily`).
    pub fn store_offset(mut self, n: u32) -> Get {
        self.options.store_offset = n;
        self
    }

    /// The scan this get is: the same options, over one row (the start; the scanner stops
    /// after it, so no stop bound is built).
    pub fn into_scan(self) -> Scan {
        Scan {
            start: Bound::Included(self.row),
            columns: self.columns,
            options: self.options,
            single_row: true,
            ..Scan::new()
        }
    }
}

/// A bound of a row range: `Unbounded` for an empty row (HBase's `EMPTY_START_ROW` and
/// `EMPTY_END_ROW` mean "no bound", whether inclusive or not), else `Included` or `Excluded`.
pub fn row_bound(row: impl AsRef<[u8]>, inclusive: bool) -> Bound<Vec<u8>> {
    let row = row.as_ref();
    if row.is_empty() {
        Bound::Unbounded
    } else if inclusive {
        Bound::Included(row.to_vec())
    } else {
        Bound::Excluded(row.to_vec())
    }
}

/// A range read.
#[derive(Debug)]
pub struct Scan {
    /// Where the scan begins: the first row it may return (`Included`), or the row it begins
    /// after (`Excluded`); `Unbounded` begins at the first row. Reversed, this is the highest
    /// row of the range, as in HBase.
    pub start: Bound<Vec<u8>>,
    /// Where the scan ends: the last row it may return (`Included`), or the row it ends before
    /// (`Excluded`, HBase's default); `Unbounded` runs to the last row. Reversed, this is the
    /// lowest row of the range.
    pub stop: Bound<Vec<u8>>,
    /// Rows from last to first: `start` is then the upper bound and `stop` the lower one.
    pub reversed: bool,
    /// Which families and columns (empty = all).
    pub columns: Columns,
    /// Rows fetched per round trip (used by servers; the embedded scanner streams).
    pub caching: usize,
    /// Versions, time range, filter, limits, read point, whether to fill the block cache.
    pub options: ReadOptions,
    pub(crate) single_row: bool,
}

impl Default for Scan {
    fn default() -> Self {
        Scan::new()
    }
}

impl Scan {
    /// Every row, every column, newest versions.
    pub fn new() -> Scan {
        Scan {
            start: Bound::Unbounded,
            stop: Bound::Unbounded,
            reversed: false,
            columns: Columns::new(),
            caching: 100,
            options: ReadOptions::default(),
            single_row: false,
        }
    }
    /// Rows in `[start, stop)` (an empty row: no bound), HBase's `withStartRow(start)` and
    /// `withStopRow(stop)`. Reversed, `start` is the highest row and `stop` the lowest.
    pub fn range(mut self, start: impl AsRef<[u8]>, stop: impl AsRef<[u8]>) -> Scan {
        self.start = row_bound(start, true);
        self.stop = row_bound(stop, false);
        self
    }
    /// Where the scan begins (HBase's `withStartRow(row, inclusive)`).
    pub fn with_start(mut self, start: Bound<Vec<u8>>) -> Scan {
        self.start = start;
        self
    }
    /// Where the scan ends (HBase's `withStopRow(row, inclusive)`).
    pub fn with_stop(mut self, stop: Bound<Vec<u8>>) -> Scan {
        self.stop = stop;
        self
    }
    /// Rows starting with `prefix` (HBase's `setRowPrefixFilter`).
    pub fn prefix(mut self, prefix: impl AsRef<[u8]>) -> Scan {
        let p = prefix.as_ref();
        self.start = row_bound(p, true);
        self.stop = row_bound(prefix_stop(p), false);
        self
    }
    /// Rows from last to first (HBase's `setReversed`).
    pub fn reversed(mut self, on: bool) -> Scan {
        self.reversed = on;
        self
    }
    /// Adds a whole family (HBase's `addFamily`).
    pub fn family(mut self, f: impl AsRef<[u8]>) -> Scan {
        add_family(&mut self.columns, f.as_ref());
        self
    }
    /// Adds one column (HBase's `addColumn`).
    pub fn column(mut self, f: impl AsRef<[u8]>, q: impl AsRef<[u8]>) -> Scan {
        add_column(&mut self.columns, f.as_ref(), q.as_ref());
        self
    }
    /// Up to `n` versions per column (HBase's `readVersions`).
    pub fn versions(mut self, n: u32) -> Scan {
        self.options.max_versions = n;
        self
    }
    /// Only cells whose timestamps fall in `tr`.
    pub fn time_range(mut self, tr: TimeRange) -> Scan {
        self.options.time_range = tr;
        self
    }
    /// At most `n` cells per result (HBase's `setBatch`).
    pub fn batch(mut self, n: usize) -> Scan {
        self.options.batch = n;
        self
    }
    /// At most `n` rows (HBase's `setLimit`).
    pub fn limit(mut self, n: usize) -> Scan {
        self.options.limit = n;
        self
    }
    /// Delete markers and masked cells too (HBase's `setRaw`).
    pub fn raw(mut self, on: bool) -> Scan {
        self.options.raw = on;
        self
    }
    /// Applies HBase's filter `f`.
    pub fn filter(mut self, f: Box<dyn Filter>) -> Scan {
        self.options.filter = Some(f);
        self
    }
    /// Whether data blocks read fill the block cache (HBase's `setCacheBlocks`).
    pub fn cache_blocks(mut self, on: bool) -> Scan {
        self.options.cache_blocks = on;
        self
    }
    /// At most `n` cells per family and row (HBase's `setMaxResultsPerColumnFamily`).
    pub fn store_limit(mut self, n: u32) -> Scan {
        self.options.store_limit = Some(n);
        self
    }
    /// Leaves out the first `n` cells of each family in each row (HBase's
    /// `setRowOffsetPerColumnFamily`).
    pub fn store_offset(mut self, n: u32) -> Scan {
        self.options.store_offset = n;
        self
    }

    /// The same scan with no filter (the filter, which has state, moves separately).
    pub(crate) fn clone_without_filter(&self) -> Scan {
        Scan {
            start: self.start.clone(),
            stop: self.stop.clone(),
            reversed: self.reversed,
            columns: self.columns.clone(),
            caching: self.caching,
            options: self.options.clone_without_filter(),
            single_row: self.single_row,
        }
    }
}

/// The smallest row after every row starting with `prefix` (empty = none).
pub fn prefix_stop(prefix: &[u8]) -> Vec<u8> {
    let mut stop = prefix.to_vec();
    while let Some(last) = stop.pop() {
        if last < 0xff {
            stop.push(last + 1);
            return stop;
        }
    }
    Vec::new()
}

/// Adds to 8-byte big-endian counters (HBase's `Increment`), atomically per row.
#[derive(Clone, Debug, PartialEq)]
pub struct Increment {
    /// The row of the counters.
    pub row: Vec<u8>,
    /// `(family, qualifier, amount)` per counter; amounts wrap on overflow, a missing counter
    /// starts at 0.
    pub columns: Vec<(Vec<u8>, Vec<u8>, i64)>,
    /// `None` = the table's durability (`USE_DEFAULT`).
    pub durability: Option<Durability>,
    /// Only counter versions in this range count as the current value (HBase's
    /// `setTimeRange`); a counter with none in it starts again at 0. All time by default.
    pub time_range: TimeRange,
    /// Whether the new cells come back (HBase's `setReturnResults`, true by default).
    pub return_results: bool,
}

impl Increment {
    /// An increment of counters in `row`, none yet.
    pub fn new(row: impl AsRef<[u8]>) -> Increment {
        Increment {
            row: row.as_ref().to_vec(),
            columns: Vec::new(),
            durability: None,
            time_range: TimeRange::default(),
            return_results: true,
        }
    }
    /// Adds `amount` (may be negative) to the counter `f:q` (HBase's `addColumn`).
    pub fn add(mut self, f: impl AsRef<[u8]>, q: impl AsRef<[u8]>, amount: i64) -> Increment {
        self.columns
            .push((f.as_ref().to_vec(), q.as_ref().to_vec(), amount));
        self
    }
    /// Overrides the table's durability for this increment (HBase's `setDurability`).
    pub fn durability(mut self, d: Durability) -> Increment {
        self.durability = Some(d);
        self
    }
    /// Reads the current values within `tr` only (HBase's `setTimeRange`).
    pub fn time_range(mut self, tr: TimeRange) -> Increment {
        self.time_range = tr;
        self
    }
    /// Whether the new cells come back (HBase's `setReturnResults`).
    pub fn return_results(mut self, on: bool) -> Increment {
        self.return_results = on;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_after_its_family_narrows_the_read_as_in_hbase() {
        let g = Get::new("r").family("f").column("f", "q").family("g");
        assert_eq!(g.columns[b"f".as_slice()], Some(vec![b"q".to_vec()]));
        assert_eq!(g.columns[b"g".as_slice()], None);
        let s = Scan::new().column("f", "a").column("f", "b").family("f");
        assert_eq!(s.columns[b"f".as_slice()], None, "addFamily widens again");
    }

    fn kinds(d: &Delete) -> Vec<(CellType, &[u8], i64)> {
        d.markers
            .iter()
            .map(|m| (m.kind, m.qualifier.as_slice(), m.ts))
            .collect()
    }

    #[test]
    fn delete_builders_write_hbases_marker_types_and_timestamps() {
        // Without a timestamp: every marker is stamped at apply time (LATEST_TIMESTAMP).
        let d = Delete::new("r")
            .family("f")
            .columns("f", "a")
            .column("f", "b");
        assert_eq!(
            kinds(&d),
            vec![
                (CellType::DeleteFamily, &b""[..], LATEST_TIMESTAMP),
                (CellType::DeleteColumn, &b"a"[..], LATEST_TIMESTAMP),
                (CellType::Delete, &b"b"[..], LATEST_TIMESTAMP),
            ]
        );
        // `new Delete(row, ts)`: markers added without a timestamp take the delete's; the
        // explicit-version builders keep their own.
        let d = Delete::with_timestamp("r", 7)
            .family("f")
            .columns("f", "a")
            .column("f", "b")
            .family_version("f", 5)
            .columns_at("f", "c", 3)
            .column_at("f", "d", 2);
        assert_eq!(
            kinds(&d),
            vec![
                (CellType::DeleteFamily, &b""[..], 7),
                (CellType::DeleteColumn, &b"a"[..], 7),
                (CellType::Delete, &b"b"[..], 7),
                (CellType::DeleteFamilyVersion, &b""[..], 5),
                (CellType::DeleteColumn, &b"c"[..], 3),
                (CellType::Delete, &b"d"[..], 2),
            ]
        );
        assert!(d.markers.iter().all(|m| m.family == b"f"));
        // A whole-row delete is a delete with no markers, at the delete's timestamp.
        let row = Delete::with_timestamp("r", 9);
        assert!(row.markers.is_empty());
        assert_eq!(row.ts, 9);
        assert_eq!(row.durability, None);
    }

    #[test]
    fn put_timestamps_come_from_the_put_unless_given() {
        let p = Put::with_timestamp("r", 10)
            .add("f", "a", "1")
            .add_at("f", "b", 3, "2");
        let ts: Vec<i64> = p.cells.iter().map(|c| c.2).collect();
        assert_eq!(ts, vec![10, 3]);
        let p = Put::new("r").add("f", "a", "1");
        assert_eq!(p.cells[0].2, LATEST_TIMESTAMP);
        assert_eq!(p.durability, None);
        assert_eq!(
            p.durability(Durability::SkipWal).durability,
            Some(Durability::SkipWal)
        );
    }

    #[test]
    fn prefix_stop_rows_carry_past_0xff() {
        assert_eq!(prefix_stop(b"ab"), b"ac");
        // A trailing 0xff cannot be incremented: it is dropped and the byte before carries.
        assert_eq!(prefix_stop(b"a\xff"), b"b");
        assert_eq!(prefix_stop(b"a\xfe\xff\xff"), b"a\xff");
        // All 0xff (or empty): no row is past the prefix, so the scan runs to the end.
        assert_eq!(prefix_stop(b"\xff\xff"), b"");
        assert_eq!(prefix_stop(b""), b"");
        let s = Scan::new().prefix(b"k\xff");
        assert_eq!(
            (&s.start, &s.stop),
            (
                &Bound::Included(b"k\xff".to_vec()),
                &Bound::Excluded(b"l".to_vec())
            )
        );
        // Every row with the prefix is in [start, stop), and the first row after it is not.
        use crate::bounds::{above, below, RowOrder};
        let o = RowOrder::Bytes;
        let in_range = |row: &[u8]| above(o, &s.start, row) && below(o, &s.stop, row);
        for row in [&b"k\xff"[..], b"k\xff\x00", b"k\xff\xff\xff"] {
            assert!(in_range(row));
        }
        assert!(!in_range(b"l"));
    }

    #[test]
    fn a_get_is_a_one_row_scan() {
        let g = Get::new("row").column("f", "q").family("g").versions(3);
        let s = g.into_scan();
        assert!(s.single_row);
        assert_eq!(s.start, Bound::Included(b"row".to_vec()));
        assert_eq!(s.stop, Bound::Unbounded);
        assert_eq!(s.options.max_versions, 3);
        assert_eq!(s.columns.get(&b"f"[..]), Some(&Some(vec![b"q".to_vec()])));
        assert_eq!(s.columns.get(&b"g"[..]), Some(&None));
    }
}
