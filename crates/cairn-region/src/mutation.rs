//! Client operations: Put, Delete, Get, Scan, Increment (HBase's client classes).

use std::collections::BTreeMap;

use cairn_filter::Filter;
use cairn_hfile::cell::{CellType, LATEST_TIMESTAMP};
use cairn_wal::Durability;

use crate::matcher::TimeRange;

/// One column of a put: family, qualifier, timestamp (`LATEST_TIMESTAMP` = the server's
/// clock), value.
pub type PutColumn = (Vec<u8>, Vec<u8>, i64, Vec<u8>);

/// Writes to one row; all its cells become visible together.
#[derive(Clone, Debug, PartialEq)]
pub struct Put {
    pub row: Vec<u8>,
    pub cells: Vec<PutColumn>,
    /// `None` = the table's durability (`USE_DEFAULT`).
    pub durability: Option<Durability>,
    ts: i64,
}

impl Put {
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

    pub fn durability(mut self, d: Durability) -> Put {
        self.durability = Some(d);
        self
    }
}

/// One marker of a Delete.
#[derive(Clone, Debug, PartialEq)]
pub struct DeleteMarker {
    pub family: Vec<u8>,
    pub qualifier: Vec<u8>,
    pub ts: i64,
    pub kind: CellType,
}

/// Deletes in one row, with HBase's four kinds of marker.
#[derive(Clone, Debug, PartialEq)]
pub struct Delete {
    pub row: Vec<u8>,
    /// Empty = the whole row (a DeleteFamily for every family at `ts`).
    pub markers: Vec<DeleteMarker>,
    pub ts: i64,
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

fn add_column(columns: &mut Columns, family: &[u8], qualifier: &[u8]) {
    let e = columns
        .entry(family.to_vec())
        .or_insert_with(|| Some(Vec::new()));
    if let Some(q) = e {
        q.push(qualifier.to_vec());
    }
}

/// A read of one row.
#[derive(Debug)]
pub struct Get {
    pub row: Vec<u8>,
    pub columns: Columns,
    pub max_versions: u32,
    pub time_range: TimeRange,
    pub filter: Option<Box<dyn Filter>>,
    pub cache_blocks: bool,
}

impl Get {
    pub fn new(row: impl AsRef<[u8]>) -> Get {
        Get {
            row: row.as_ref().to_vec(),
            columns: Columns::new(),
            max_versions: 1,
            time_range: TimeRange::default(),
            filter: None,
            cache_blocks: true,
        }
    }
    pub fn family(mut self, f: impl AsRef<[u8]>) -> Get {
        add_family(&mut self.columns, f.as_ref());
        self
    }
    pub fn column(mut self, f: impl AsRef<[u8]>, q: impl AsRef<[u8]>) -> Get {
        add_column(&mut self.columns, f.as_ref(), q.as_ref());
        self
    }
    pub fn versions(mut self, n: u32) -> Get {
        self.max_versions = n;
        self
    }
    pub fn time_range(mut self, tr: TimeRange) -> Get {
        self.time_range = tr;
        self
    }
    pub fn filter(mut self, f: Box<dyn Filter>) -> Get {
        self.filter = Some(f);
        self
    }

    /// The scan this get is (HBase runs gets as one-row scans).
    pub fn into_scan(self) -> Scan {
        let mut stop = self.row.clone();
        stop.push(0);
        Scan {
            start_row: self.row,
            stop_row: stop,
            columns: self.columns,
            max_versions: self.max_versions,
            time_range: self.time_range,
            filter: self.filter,
            single_row: true,
            ..Scan::new()
        }
    }
}

/// A range read.
#[derive(Debug)]
pub struct Scan {
    /// Inclusive; empty = from the first row.
    pub start_row: Vec<u8>,
    /// Exclusive; empty = to the last row.
    pub stop_row: Vec<u8>,
    pub reversed: bool,
    pub columns: Columns,
    pub max_versions: u32,
    pub time_range: TimeRange,
    /// Rows fetched per round trip (used by servers; the embedded scanner streams).
    pub caching: usize,
    /// At most this many cells per result; a wider row comes back in parts (0 = no limit).
    pub batch: usize,
    pub filter: Option<Box<dyn Filter>>,
    /// Return delete markers and masked cells too.
    pub raw: bool,
    /// At most this many rows (0 = no limit).
    pub limit: usize,
    pub cache_blocks: bool,
    pub(crate) single_row: bool,
}

impl Default for Scan {
    fn default() -> Self {
        Scan::new()
    }
}

impl Scan {
    pub fn new() -> Scan {
        Scan {
            start_row: Vec::new(),
            stop_row: Vec::new(),
            reversed: false,
            columns: Columns::new(),
            max_versions: 1,
            time_range: TimeRange::default(),
            caching: 100,
            batch: 0,
            filter: None,
            raw: false,
            limit: 0,
            cache_blocks: true,
            single_row: false,
        }
    }
    pub fn range(mut self, start: impl AsRef<[u8]>, stop: impl AsRef<[u8]>) -> Scan {
        self.start_row = start.as_ref().to_vec();
        self.stop_row = stop.as_ref().to_vec();
        self
    }
    /// Rows starting with `prefix` (HBase's `setRowPrefixFilter`).
    pub fn prefix(mut self, prefix: impl AsRef<[u8]>) -> Scan {
        let p = prefix.as_ref();
        self.start_row = p.to_vec();
        self.stop_row = prefix_stop(p);
        self
    }
    pub fn reversed(mut self, on: bool) -> Scan {
        self.reversed = on;
        self
    }
    pub fn family(mut self, f: impl AsRef<[u8]>) -> Scan {
        add_family(&mut self.columns, f.as_ref());
        self
    }
    pub fn column(mut self, f: impl AsRef<[u8]>, q: impl AsRef<[u8]>) -> Scan {
        add_column(&mut self.columns, f.as_ref(), q.as_ref());
        self
    }
    pub fn versions(mut self, n: u32) -> Scan {
        self.max_versions = n;
        self
    }
    pub fn time_range(mut self, tr: TimeRange) -> Scan {
        self.time_range = tr;
        self
    }
    pub fn batch(mut self, n: usize) -> Scan {
        self.batch = n;
        self
    }
    pub fn limit(mut self, n: usize) -> Scan {
        self.limit = n;
        self
    }
    pub fn raw(mut self, on: bool) -> Scan {
        self.raw = on;
        self
    }
    pub fn filter(mut self, f: Box<dyn Filter>) -> Scan {
        self.filter = Some(f);
        self
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
    pub row: Vec<u8>,
    pub columns: Vec<(Vec<u8>, Vec<u8>, i64)>,
    pub durability: Option<Durability>,
}

impl Increment {
    pub fn new(row: impl AsRef<[u8]>) -> Increment {
        Increment {
            row: row.as_ref().to_vec(),
            columns: Vec::new(),
            durability: None,
        }
    }
    pub fn add(mut self, f: impl AsRef<[u8]>, q: impl AsRef<[u8]>, amount: i64) -> Increment {
        self.columns
            .push((f.as_ref().to_vec(), q.as_ref().to_vec(), amount));
        self
    }
}

impl Scan {
    /// The same scan with no filter (the filter, which has state, moves separately).
    pub(crate) fn clone_without_filter(&self) -> Scan {
        Scan {
            start_row: self.start_row.clone(),
            stop_row: self.stop_row.clone(),
            reversed: self.reversed,
            columns: self.columns.clone(),
            max_versions: self.max_versions,
            time_range: self.time_range,
            caching: self.caching,
            batch: self.batch,
            filter: None,
            raw: self.raw,
            limit: self.limit,
            cache_blocks: self.cache_blocks,
            single_row: self.single_row,
        }
    }
}
