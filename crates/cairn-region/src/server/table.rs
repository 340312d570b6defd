//! A table's regions in key order, the one router from row to region, and scans across
//! the regions.

use super::*;
use std::ops::Bound;

use crate::bounds::{self, RowOrder};

/// A loaded table: its schema and its regions, which together cover every row.
pub struct Table {
    /// The table's schema, shared with its regions.
    pub descriptor: Arc<TableDescriptor>,
    /// Sorted by start key; together they cover every row.
    pub regions: Vec<Arc<Region>>,
    pub(super) enabled: AtomicBool,
    pub(super) dir: PathBuf,
    /// The table directory may hold split or merge parents waiting to be archived.
    pub(super) has_parents: AtomicBool,
}

impl Table {
    /// Whether the table takes reads and writes (HBase's ENABLED state).
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    /// The region holding `row`.
    #[inline]
    pub fn region_for(&self, row: &[u8]) -> &Arc<Region> {
        &self.regions[self.region_index(row)]
    }

    /// Where the region holding `row` is in [`regions`](Self::regions): the last one whose
    /// start key is ≤ `row` (a region's start key is inclusive, its end key exclusive). The
    /// one router from row to region: gets, batches, scans and mutations all ask it.
    #[inline]
    pub fn region_index(&self, row: &[u8]) -> usize {
        if self.regions.len() == 1 {
            return 0;
        }
        self.regions
            .partition_point(|r| {
                cairn_cell::compare_bytes(&r.info.start_key, row) != std::cmp::Ordering::Greater
            })
            .saturating_sub(1)
    }
}

/// The encoded-name part of a region name: the 32 hex digits between the last two dots of a
/// full name (`...,<id>.<encoded>.`); a name of any other shape is taken as an encoded name
/// itself. Only the tail is looked at: the start key before it may hold any byte.
pub fn encoded_part(name: &[u8]) -> &[u8] {
    const ENCODED_LEN: usize = 32;
    let n = name.len();
    if n > ENCODED_LEN + 1 && name[n - 1] == b'.' && name[n - ENCODED_LEN - 2] == b'.' {
        &name[n - ENCODED_LEN - 1..n - 1]
    } else {
        name
    }
}

impl RegionServer {
    /// The open region a request names, with its table: `name` is HBase's full region name
    /// (`<table>,<startkey>,<id>.<encoded>.`, compared byte for byte, as a `RegionSpecifier`
    /// of type `REGION_NAME` carries it) or the bare encoded name (`ENCODED_REGION_NAME`).
    /// [`RegionError::NotServingRegion`] when no region has that name, its table is disabled,
    /// or the region is closed: HBase's answer, on which clients look the region up again.
    pub fn region_by_name(&self, name: &[u8]) -> Result<(Arc<Table>, Arc<Region>)> {
        let encoded = encoded_part(name);
        let tables = self.tables.load();
        for t in tables.values() {
            for r in &t.regions {
                if r.info.encoded_name.as_bytes() != encoded
                    || (name.len() != encoded.len() && r.info.region_name_bytes() != name)
                {
                    continue;
                }
                if !t.is_enabled() || r.is_closed() {
                    break;
                }
                return Ok((t.clone(), r.clone()));
            }
        }
        Err(RegionError::NotServingRegion(
            cairn_cell::Escaped(name).to_string(),
        ))
    }
}

/// How long a read or write waits for a region that is closed for a split or merge to be
/// replaced by its children before giving up with the region's error.
pub(crate) const TRANSITION_WAIT: Duration = Duration::from_secs(30);

/// Rows of a table across its regions. Follows splits and merges that happen while it runs:
/// each next region is looked up in the server's current routing table, by the row where
/// the previous one ended, and opened with the scan's bounds moved past what was read.
pub struct TableScanner {
    tables: Arc<Tables>,
    name: TableName,
    template: Scan,
    /// The range of the region being scanned.
    start: Vec<u8>,
    end: Vec<u8>,
    current: Option<RegionScanner>,
    rows: usize,
    done: bool,
}

/// The region holding the greatest row below `row`: the one holding `row`, unless it begins
/// there.
fn region_before(t: &Table, row: &[u8]) -> Option<usize> {
    let i = t.region_index(row);
    if t.regions[i].info.start_key.as_slice() == row {
        i.checked_sub(1)
    } else {
        Some(i)
    }
}

impl TableScanner {
    pub(super) fn new(tables: Arc<Tables>, name: TableName, scan: Scan) -> Result<TableScanner> {
        let template = scan.clone_without_filter();
        let mut first = template.clone_without_filter();
        first.options.filter = scan.options.filter;
        let mut s = TableScanner {
            tables,
            name,
            template,
            start: Vec::new(),
            end: Vec::new(),
            current: None,
            rows: 0,
            done: false,
        };
        let (start, reversed) = (s.template.start.clone(), s.template.reversed);
        s.open(first, |t| match (&start, reversed) {
            (Bound::Unbounded, false) => Some(0),
            (Bound::Unbounded, true) => t.regions.len().checked_sub(1),
            (Bound::Excluded(row), true) => region_before(t, row),
            (Bound::Included(row) | Bound::Excluded(row), _) => Some(t.region_index(row)),
        })?;
        Ok(s)
    }

    /// Opens `scan` on the region `pick` chooses in the current routing table.
    fn open(&mut self, scan: Scan, pick: impl Fn(&Table) -> Option<usize>) -> Result<()> {
        let tables = self.tables.load();
        let t = tables
            .get(&self.name)
            .ok_or_else(|| RegionError::TableNotFound(self.name.to_string()))?;
        if !t.is_enabled() {
            return Err(RegionError::TableDisabled(self.name.to_string()));
        }
        let Some(i) = pick(t) else {
            self.done = true;
            return Ok(());
        };
        // A region closed for a split or merge still serves reads.
        let r = &t.regions[i];
        self.start = r.info.start_key.clone();
        self.end = r.info.end_key.clone();
        self.current = Some(r.scanner(scan)?);
        Ok(())
    }

    /// The next row (or batch of one), `None` at the end.
    pub fn next_row(&mut self) -> Result<Option<Vec<KeyValue>>> {
        loop {
            if self.done {
                return Ok(None);
            }
            let Some(cur) = self.current.as_mut() else {
                self.done = true;
                continue;
            };
            if let Some(row) = cur.next_row()? {
                self.rows += 1;
                return Ok(Some(row));
            }
            let filter = cur.take_filter();
            self.current = None;
            let mut s = self.template.clone_without_filter();
            s.options.filter = filter;
            if self.template.options.limit > 0 {
                if self.rows >= self.template.options.limit {
                    self.done = true;
                    continue;
                }
                s.options.limit = self.template.options.limit - self.rows;
            }
            let order = RowOrder::Bytes;
            if !self.template.reversed {
                // Stop when the next region starts past the stop bound.
                let from = self.end.clone();
                if from.is_empty() || !bounds::below(order, &self.template.stop, &from) {
                    self.done = true;
                    continue;
                }
                s.start = Bound::Included(from.clone());
                self.open(s, |t| Some(t.region_index(&from)))?;
            } else {
                // Rows below the region just read, down to the stop bound.
                let below = self.start.clone();
                let stop_row = match &self.template.stop {
                    Bound::Included(r) | Bound::Excluded(r) => Some(r.as_slice()),
                    Bound::Unbounded => None,
                };
                if below.is_empty()
                    || stop_row
                        .is_some_and(|r| order.compare(&below, r) != std::cmp::Ordering::Greater)
                {
                    self.done = true;
                    continue;
                }
                // A merged region may hold rows on both sides: it is read again from below
                // the rows already returned.
                s.start = Bound::Excluded(below.clone());
                self.open(s, |t| region_before(t, &below))?;
            }
        }
    }

    /// Up to `n` rows (fewer only at the end of the scan): one round trip's worth for a server's
    /// scanner `next` call.
    pub fn next_rows(&mut self, n: usize) -> Result<Vec<Vec<KeyValue>>> {
        let mut out = Vec::new();
        while out.len() < n {
            match self.next_row()? {
                Some(r) => out.push(r),
                None => break,
            }
        }
        Ok(out)
    }
}

impl Iterator for TableScanner {
    type Item = Result<Vec<KeyValue>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_row().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{server, table};
    use super::*;

    #[test]
    fn rows_route_to_the_region_whose_range_holds_them() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let t = s.table(&table(&s, "t", &["b", "m"])).unwrap();
        let rows: [&[u8]; 9] = [
            b"",
            b"\x00",
            b"a\xff\xff",
            b"b",
            b"b\x00",
            b"l",
            b"m",
            b"m\x00",
            b"\xff\xff",
        ];
        let want = [0, 0, 0, 1, 1, 1, 2, 2, 2];
        for (row, want) in rows.iter().zip(want) {
            let i = t.region_index(row);
            assert_eq!(i, want, "{}", cairn_cell::Escaped(row));
            // The router and the region's own range agree: a start key is inclusive, an end
            // key exclusive.
            assert!(t.regions[i].info.contains_row(row));
            assert!(std::ptr::eq(t.region_for(row), &t.regions[i]));
        }
    }

    #[test]
    fn regions_are_found_by_full_or_encoded_name_while_served() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let a = table(&s, "ns:a", &["m"]);
        // A split key with the name's separators and a byte that is not UTF-8.
        let b = TableName::parse("b").unwrap();
        let d = TableDescriptor::new(b.clone())
            .with_family(crate::descriptor::ColumnFamilyDescriptor::new("f"));
        s.create_table(d, &[b"k,\xff.".to_vec()]).unwrap();
        for name in [&a, &b] {
            let t = s.table(name).unwrap();
            for r in &t.regions {
                let by_full = s.region_by_name(&r.info.region_name_bytes()).unwrap();
                let by_encoded = s.region_by_name(r.info.encoded_name.as_bytes()).unwrap();
                for (found_t, found_r) in [by_full, by_encoded] {
                    assert!(Arc::ptr_eq(&found_r, r) && Arc::ptr_eq(&found_t, &t));
                }
            }
        }
        let second = s.table(&b).unwrap().regions[1].clone();
        assert_eq!(second.info.start_key, b"k,\xff.");
        // A full name that differs only in its start key is not the region, though its
        // encoded tail is.
        let mut wrong = second.info.region_name_bytes();
        wrong[2] = b'j';
        let missing = |name: &[u8]| {
            matches!(
                s.region_by_name(name),
                Err(RegionError::NotServingRegion(_))
            )
        };
        assert!(missing(&wrong));
        assert!(missing(b"0123456789abcdef0123456789abcdef"));
        assert!(missing(b""));
        let e = match s.region_by_name(b"t,\x00,1.x.") {
            Err(e) => e.to_string(),
            Ok(_) => panic!("found"),
        };
        assert!(e.contains("t,\\x00,1.x."), "{e}");
        // A disabled table's regions are not served.
        s.disable_table(&b).unwrap();
        assert!(missing(&second.info.region_name_bytes()));
        assert!(missing(second.info.encoded_name.as_bytes()));
        s.enable_table(&b).unwrap();
        assert!(s.region_by_name(&second.info.region_name_bytes()).is_ok());
    }

    #[test]
    fn a_table_scan_continues_across_regions_with_its_limit_and_direction() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let name = table(&s, "t", &["c", "e"]);
        for r in ["a", "b", "c", "d", "e", "f"] {
            s.put(&name, &Put::new(r).add("f", "q", r)).unwrap();
        }
        let rows = |scan: Scan| -> Vec<String> {
            s.scanner(&name, scan)
                .unwrap()
                .map(|r| String::from_utf8_lossy(r.unwrap()[0].as_cell().row()).into_owned())
                .collect()
        };
        assert_eq!(rows(Scan::new()), ["a", "b", "c", "d", "e", "f"]);
        // The limit counts rows of every region, not per region.
        assert_eq!(rows(Scan::new().range("b", "").limit(3)), ["b", "c", "d"]);
        // Stops at a stop row that is a region's start key without opening that region.
        assert_eq!(rows(Scan::new().range("a", "e")), ["a", "b", "c", "d"]);
        // Reversed: from the start row down to the (exclusive) stop row, across regions.
        assert_eq!(
            rows(Scan::new().range("e", "a").reversed(true)),
            ["e", "d", "c", "b"]
        );
        assert_eq!(
            rows(Scan::new().reversed(true).limit(4)),
            ["f", "e", "d", "c"]
        );
        let mut sc = s.scanner(&name, Scan::new()).unwrap();
        assert_eq!(sc.next_rows(4).unwrap().len(), 4);
        assert_eq!(sc.next_rows(4).unwrap().len(), 2, "fewer only at the end");
        assert!(sc.next_rows(4).unwrap().is_empty());
    }
}
