//! The region's read path: gets, batches of gets and scans, all one-row or range reads
//! through one region scanner built from the read's options.

use super::*;
use std::ops::Bound;

use crate::bounds::RowOrder;
use crate::descriptor::ColumnFamilyDescriptor;
use crate::metrics::RegionMetrics;

impl Region {
    /// One row's cells: a one-row read through the scanner every read uses.
    pub fn get(&self, get: Get) -> Result<Vec<KeyValue>> {
        self.check_row(&get.row)?;
        self.check_readable()?;
        // The get is over before this returns: its registration and the scanner borrow
        // from the region instead of sharing it (reference counts other cores also touch).
        let rp = get.options.read_point_within(self.mvcc.read_point());
        let _hold = self.read_points.hold(rp);
        let mut s = self.scanner_at(get.into_scan(), rp, None, false)?;
        let row = s.next_row()?.unwrap_or_default();
        let filtered = s.take_filtered_rows();
        if filtered > 0 {
            self.metrics.filtered_read_request_count.add(filtered);
        }
        Ok(row)
    }

    /// A batch of one-row reads in one pass: the rows are read in key order over one set of
    /// scanners, so neighbouring rows share block reads. Results come back in the order of
    /// `gets`. Each get keeps its own columns, versions, time range and filter; the batch
    /// reads at one read point (the oldest any get asks for) and fills the block cache
    /// unless every get asked it not to.
    pub fn get_many(&self, gets: Vec<Get>) -> Result<Vec<Vec<KeyValue>>> {
        self.check_readable()?;
        let mut order: Vec<usize> = (0..gets.len()).collect();
        order.sort_by(|&a, &b| gets[a].row.cmp(&gets[b].row));
        for g in &gets {
            self.check_row(&g.row)?;
            for f in g.columns.keys() {
                self.check_family(f)?;
            }
        }
        let current = self.mvcc.read_point();
        let rp = gets
            .iter()
            .map(|g| g.options.read_point_within(current))
            .min()
            .unwrap_or(current);
        let block_options = BlockReadOptions {
            fill_cache: gets.iter().any(|g| g.options.cache_blocks),
        };
        let _hold = self.read_points.hold(rp);
        let mut scanners: Vec<Box<dyn CellScanner>> = Vec::new();
        for s in self.stores.values() {
            s.add_scanners(
                &StoreRead {
                    read_point: rp,
                    block_options,
                    ..StoreRead::default()
                },
                &mut scanners,
            )?;
        }
        let mut heap = KeyValueHeap::new(scanners);
        let mut results: Vec<Vec<KeyValue>> = vec![Vec::new(); gets.len()];
        if let Some(&first) = order.first() {
            heap.seek(&cairn_cell::first_on_row(&gets[first].row)?)?;
        }
        let mut gets: Vec<Option<Get>> = gets.into_iter().map(Some).collect();
        let mut last_key: Option<Vec<u8>> = None;
        let now = self.ttl_clock();
        let mut cursor = BatchCursor::Heap(heap);
        for i in order {
            let g = gets[i].take().expect("each get once");
            // Positioned by a forward reseek: rows come in order, so each file's scanner
            // stays in its current block when the next row is there.
            let key = cairn_cell::first_on_row(&g.row)?;
            if last_key.as_deref() == Some(key.as_slice()) {
                // The same row asked twice: the heap is already past it.
                cursor.heap().seek(&key)?;
            } else {
                cursor.heap().reseek_far(&key)?;
            }
            last_key = Some(key);
            cursor = match cursor {
                BatchCursor::Kept(mut kept) if kept.shape.fits(&g) => {
                    kept.scanner.restart_single_row(g.row);
                    results[i] = kept.scanner.next_row()?.unwrap_or_default();
                    BatchCursor::Kept(kept)
                }
                other => {
                    let shape = GetShape::of(&g);
                    // The batch's registration above covers every get in it.
                    let mut scanner =
                        self.row_scanner(other.into_heap(), g.into_scan(), rp, now, None, true)?;
                    scanner.mark_started();
                    results[i] = scanner.next_row()?.unwrap_or_default();
                    match shape {
                        Some(shape) => BatchCursor::Kept(Box::new(Kept { shape, scanner })),
                        None => BatchCursor::Heap(scanner.into_heap()),
                    }
                }
            };
        }
        self.metrics.read_request_count.add(results.len() as u64);
        Ok(results)
    }

    /// The time TTLs are measured from, read once per read: a clock read costs ~3% of a
    /// cached get here, so it is skipped when no family of the region has a TTL (the value is
    /// then never looked at).
    pub(super) fn ttl_clock(&self) -> i64 {
        if self.stores.values().any(|s| s.family.ttl_ms().is_some()) {
            now_ms()
        } else {
            0
        }
    }

    /// The matcher of `scan`, which hands its columns over to it (moved, not copied).
    pub(super) fn matcher_for(
        &self,
        scan: &mut Scan,
        read_point: u64,
        now: i64,
    ) -> Result<Matcher> {
        matcher_for(
            self.stores.values().map(|s| &s.family),
            |f| self.check_family(f).map(|s| &s.family),
            scan,
            read_point,
            now,
        )
    }

    /// A scanner over a consistent snapshot: the read point is fixed now (or is the one the
    /// scan's options name).
    pub fn scanner(&self, scan: Scan) -> Result<RegionScanner> {
        self.check_readable()?;
        let rp = scan.options.read_point_within(self.mvcc.read_point());
        let guard = self.read_points.register(rp);
        self.scanner_at(scan, rp, Some(guard), true)
    }

    /// A scanner at read point `rp`, which the caller has registered (`guard`, or a hold
    /// that outlives the scanner). `metrics`: the scanner adds its filtered rows to the
    /// region's counter itself.
    pub(super) fn scanner_at(
        &self,
        scan: Scan,
        rp: u64,
        guard: Option<ReadPointGuard>,
        metrics: bool,
    ) -> Result<RegionScanner> {
        let now = self.ttl_clock();
        let single = match (&scan.start, scan.single_row) {
            (Bound::Included(row), true) => Some(row.as_slice()),
            _ => None,
        };
        // A store has a memstore segment or two and a few files.
        let mut scanners: Vec<Box<dyn CellScanner>> = Vec::with_capacity(4 * self.stores.len());
        for (name, s) in &self.stores {
            let cols = if scan.columns.is_empty() {
                None
            } else {
                match scan.columns.get(name) {
                    None => continue,
                    Some(c) => Some(c.as_deref()),
                }
            };
            let oldest_unexpired = match s.family.ttl_ms() {
                Some(ttl) if s.family.min_versions == 0 && !scan.options.raw => now - ttl,
                _ => i64::MIN,
            };
            s.add_scanners(
                &StoreRead {
                    read_point: rp,
                    time_range: scan.options.time_range,
                    row: single,
                    columns: cols.flatten(),
                    oldest_unexpired,
                    block_options: scan.options.block_options(),
                },
                &mut scanners,
            )?;
        }
        self.metrics.read_request_count.add(1);
        self.row_scanner(KeyValueHeap::new(scanners), scan, rp, now, guard, metrics)
    }

    /// The region scanner of `scan` over `heap`: the scan clipped to the region, its matcher
    /// and filter. Gets, batches of gets and scans all read through it.
    pub(super) fn row_scanner(
        &self,
        heap: KeyValueHeap<'static>,
        mut scan: Scan,
        rp: u64,
        now: i64,
        guard: Option<ReadPointGuard>,
        metrics: bool,
    ) -> Result<RegionScanner> {
        let matcher = self.matcher_for(&mut scan, rp, now)?;
        // A get's row is in the region (checked before), and it stops by itself.
        if !scan.single_row {
            crate::bounds::clip_to_region(&mut scan, &self.info);
        }
        Ok(row_scanner(
            heap,
            matcher,
            scan,
            RowOrder::Bytes,
            rp,
            guard,
            metrics.then(|| self.metrics.clone()),
        ))
    }
}

/// A region scanner over `heap` for `scan` (already clipped to its region), with `matcher`
/// built for it: what every region type reads through.
pub(crate) fn row_scanner(
    heap: KeyValueHeap<'static>,
    matcher: Matcher,
    mut scan: Scan,
    order: RowOrder,
    read_point: u64,
    guard: Option<ReadPointGuard>,
    metrics: Option<Arc<RegionMetrics>>,
) -> RegionScanner {
    if let Some(f) = scan.options.filter.as_deref_mut() {
        f.set_reversed(scan.reversed);
    }
    RegionScanner::new(ScannerParts {
        heap,
        matcher,
        filter: scan.options.filter,
        start: scan.start,
        stop: scan.stop,
        order,
        reversed: scan.reversed,
        batch: scan.options.batch,
        limit: scan.options.limit,
        store_limit: scan.options.store_limit,
        store_offset: scan.options.store_offset,
        single_row: scan.single_row,
        read_point,
        guard,
        metrics,
    })
}

/// The matcher of `scan` over a region's `families` (by name), which takes the scan's columns
/// (moved, not copied); a family the region does not have is refused.
pub(crate) fn matcher_for<'a>(
    families: impl ExactSizeIterator<Item = &'a ColumnFamilyDescriptor>,
    family: impl Fn(&[u8]) -> Result<&'a ColumnFamilyDescriptor>,
    scan: &mut Scan,
    read_point: u64,
    now: i64,
) -> Result<Matcher> {
    let mut fams = Vec::with_capacity(scan.columns.len().max(families.len()));
    if scan.columns.is_empty() {
        for f in families {
            fams.push((f, None));
        }
    } else {
        for (f, cols) in std::mem::take(&mut scan.columns) {
            fams.push((family(&f)?, cols));
        }
    }
    Ok(Matcher::new(
        if scan.options.raw {
            MatchMode::Raw
        } else {
            MatchMode::User
        },
        fams,
        scan.options.time_range,
        scan.options.max_versions,
        scan.options.filter.is_some(),
        read_point,
        now,
    ))
}

/// Where a multi-get's merged scanners are between rows: bare, or inside the last get's
/// scanner, kept while the next get asks for the same columns and options (a batch's gets
/// mostly do, and building a matcher and scanner for each row cost about a tenth of a cached
/// row).
enum BatchCursor {
    Heap(KeyValueHeap<'static>),
    /// Boxed: a region scanner is several hundred bytes, moved here on every row.
    Kept(Box<Kept>),
}

/// The last get's scanner, with the shape of get it can serve.
struct Kept {
    shape: GetShape,
    scanner: RegionScanner,
}

impl BatchCursor {
    fn heap(&mut self) -> &mut KeyValueHeap<'static> {
        match self {
            BatchCursor::Heap(h) => h,
            BatchCursor::Kept(kept) => kept.scanner.heap_mut(),
        }
    }

    fn into_heap(self) -> KeyValueHeap<'static> {
        match self {
            BatchCursor::Heap(h) => h,
            BatchCursor::Kept(kept) => kept.scanner.into_heap(),
        }
    }
}

/// What a get asks for besides its row, when a scanner built for it can serve another get
/// of the same shape: no filter (a filter has state), the same columns and options.
struct GetShape {
    columns: crate::mutation::Columns,
    time_range: crate::matcher::TimeRange,
    max_versions: u32,
    raw: bool,
    batch: usize,
    limit: usize,
    store_limit: Option<u32>,
    store_offset: u32,
}

impl GetShape {
    /// The shape of `g`, unless it has a filter.
    fn of(g: &Get) -> Option<GetShape> {
        g.options.filter.is_none().then(|| GetShape {
            columns: g.columns.clone(),
            time_range: g.options.time_range,
            max_versions: g.options.max_versions,
            raw: g.options.raw,
            batch: g.options.batch,
            limit: g.options.limit,
            store_limit: g.options.store_limit,
            store_offset: g.options.store_offset,
        })
    }

    /// Whether a scanner built for this shape reads `g` exactly as one built for `g` would.
    fn fits(&self, g: &Get) -> bool {
        g.options.filter.is_none()
            && g.options.time_range == self.time_range
            && g.options.max_versions == self.max_versions
            && g.options.raw == self.raw
            && g.options.batch == self.batch
            && g.options.limit == self.limit
            && g.options.store_limit == self.store_limit
            && g.options.store_offset == self.store_offset
            && g.columns == self.columns
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{region, values};
    use super::*;

    #[test]
    fn a_read_at_an_earlier_read_point_sees_the_snapshot_of_then() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        r.put(&Put::new("a").add("f", "q", "old")).unwrap();
        let then = r.read_point();
        r.put(&Put::new("a").add("f", "q", "new").add("g", "q", "new"))
            .unwrap();
        let at = |rp: Option<u64>| {
            let mut g = Get::new("a");
            g.options.read_point = rp;
            values(&r.get(g).unwrap())
        };
        assert_eq!(at(Some(then)), vec!["old"]);
        assert_eq!(at(None), vec!["new", "new"]);
        // A read point past the region's is clamped to it: never past a committed write.
        assert_eq!(at(Some(u64::MAX)), vec!["new", "new"]);
        // A scan opened now keeps its snapshot while later writes land.
        let mut s = r.scanner(Scan::new()).unwrap();
        r.put(&Put::new("b").add("f", "q", "later")).unwrap();
        assert_eq!(values(&s.next_row().unwrap().unwrap()), vec!["new", "new"]);
        assert!(
            s.next_row().unwrap().is_none(),
            "row b came after the scan opened"
        );
    }

    #[test]
    fn per_family_limits_count_every_version_and_stop_at_offset_plus_limit() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        r.put(
            &Put::new("a")
                .add_at("f", "q", 1, "q1")
                .add_at("f", "q", 2, "q2")
                .add_at("f", "q", 3, "q3")
                .add_at("f", "r", 1, "r1")
                .add_at("g", "q", 1, "g1"),
        )
        .unwrap();
        let get = |g: Get| values(&r.get(g).unwrap());
        let all = || Get::new("a").versions(3);
        assert_eq!(get(all()), ["q3", "q2", "q1", "r1", "g1"]);
        assert_eq!(get(all().store_limit(2)), ["q3", "q2", "g1"]);
        assert_eq!(get(all().store_offset(2)), ["q1", "r1"]);
        assert_eq!(get(all().store_offset(1).store_limit(2)), ["q2", "q1"]);
        // HBase 2 stops a family once a returned cell reaches offset + limit: a limit of 0
        // returns one cell of each family.
        assert_eq!(get(all().store_limit(0)), ["q3", "g1"]);
        // The same in a scan, row by row, and in a batch of gets.
        r.put(
            &Put::new("b")
                .add_at("f", "q", 1, "b1")
                .add_at("f", "r", 1, "b2"),
        )
        .unwrap();
        let rows: Vec<Vec<String>> = r
            .scanner(Scan::new().versions(3).store_offset(1))
            .unwrap()
            .map(|row| values(&row.unwrap()))
            .collect();
        assert_eq!(rows, [vec!["q2", "q1", "r1"], vec!["b2"]]);
        let batch: Vec<Vec<String>> = r
            .get_many(vec![
                Get::new("a").store_limit(1),
                Get::new("b").store_limit(1),
            ])
            .unwrap()
            .iter()
            .map(|c| values(c))
            .collect();
        assert_eq!(batch, [vec!["q3", "g1"], vec!["b1"]]);
    }

    #[test]
    fn a_multi_get_answers_in_request_order_with_each_gets_columns() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        for row in ["a", "b", "c"] {
            r.put(
                &Put::new(row)
                    .add("f", "q", format!("{row}f"))
                    .add("g", "q", format!("{row}g")),
            )
            .unwrap();
        }
        r.flush().unwrap();
        r.put(&Put::new("b").add("f", "q", "bf2")).unwrap();
        let gets = vec![
            Get::new("c"),
            Get::new("a").family("g"),
            Get::new("zz"),
            Get::new("b").column("f", "q"),
            Get::new("a"),
        ];
        let got: Vec<Vec<String>> = r
            .get_many(gets)
            .unwrap()
            .iter()
            .map(|c| values(c))
            .collect();
        assert_eq!(
            got,
            vec![
                vec!["cf", "cg"],
                vec!["ag"],
                vec![],
                vec!["bf2"],
                vec!["af", "ag"],
            ]
        );
    }
}
