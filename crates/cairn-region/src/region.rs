//! A region: one key range of a table, one store per family, one MVCC, the write and read
//! paths (HBase's `HRegion`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use cairn_blockcache::CombinedBlockCache;
use cairn_fs::{FileSystem, LocalFileSystem};
use cairn_hfile::cell::{CellType, LATEST_TIMESTAMP};
use cairn_hfile::{BlockReadOptions, KeyValue};
use cairn_wal::{Durability, Wal, WalEdit};
use parking_lot::{Mutex, RwLock};

use crate::compaction::{self, Candidate, CompactionConfig};
use crate::descriptor::TableDescriptor;
use crate::error::{RegionError, Result};
use crate::heap::{CellScanner, KeyValueHeap};
use crate::layout::{self, RegionInfo, TMP_DIR};
use crate::matcher::{MatchMode, Matcher};
use crate::metrics::RegionMetrics;
use crate::mutation::{Delete, Get, Increment, Put, Scan};
use crate::mvcc::Mvcc;
use crate::scanner::{ReadPointGuard, ReadPoints, RegionScanner, ScannerParts};
use crate::store::{now_ms, CompactionOutcome, Store, StoreRead, Throttle};

const ROW_LOCK_STRIPES: usize = 256;

/// How a region behaves beyond its table's schema.
#[derive(Clone, Debug)]
pub struct RegionConfig {
    /// `hbase.hregion.memstore.block.multiplier` (4): writes fail with RegionTooBusy above
    /// flush size × this.
    pub block_multiplier: u64,
    pub compaction: CompactionConfig,
    pub throttle: Throttle,
    /// Where the region's files live (local disk unless the server's root says otherwise).
    pub fs: Arc<dyn FileSystem>,
    /// `cairn.direct_io_for_flush_and_compaction` (true): flushes and compactions write
    /// their files around the OS page cache where the filesystem allows (RocksDB's option of
    /// that name). Reads go through the block cache either way; what a buffered write would
    /// have left in the page cache is mostly a second copy of what the block cache holds, and
    /// copying into fresh page-cache pages costs the flusher more CPU than the rest of a flush.
    pub direct_io: bool,
}

impl Default for RegionConfig {
    fn default() -> Self {
        RegionConfig {
            block_multiplier: 4,
            compaction: CompactionConfig::default(),
            throttle: Throttle::default(),
            fs: Arc::new(LocalFileSystem),
            direct_io: true,
        }
    }
}

/// What a flush wrote.
#[derive(Clone, Debug, Default)]
pub struct FlushOutcome {
    pub sequence_id: u64,
    pub cells: u64,
    pub bytes: u64,
    pub files: usize,
}

pub struct Region {
    pub info: RegionInfo,
    pub descriptor: Arc<TableDescriptor>,
    dir: PathBuf,
    stores: BTreeMap<Vec<u8>, Arc<Store>>,
    mvcc: Mvcc,
    wal: OnceLock<Arc<Wal>>,
    /// Set while a flush request is queued, so writers do not queue more.
    pub(crate) flush_queued: AtomicBool,
    memstore_bytes: AtomicU64,
    /// Writers hold it shared from sequence id to memstore insert; a flush takes it
    /// exclusively for the instant of the snapshot, so no flushed sequence id has an edit
    /// still on its way into the memstore.
    updates: RwLock<()>,
    row_locks: Vec<RwLock<()>>,
    flush_lock: Mutex<()>,
    read_points: Arc<ReadPoints>,
    pub metrics: Arc<RegionMetrics>,
    config: RegionConfig,
    closed: AtomicBool,
}

impl std::fmt::Debug for Region {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Region")
            .field("name", &self.info.region_name())
            .finish()
    }
}

impl Region {
    /// Creates the region directory (`.regioninfo`) under `table_dir` and opens it.
    pub fn create(
        table_dir: &Path,
        info: RegionInfo,
        descriptor: Arc<TableDescriptor>,
        wal: Option<Arc<Wal>>,
        cache: Option<Arc<CombinedBlockCache>>,
        config: RegionConfig,
    ) -> Result<Region> {
        let dir = table_dir.join(&info.encoded_name);
        layout::write_region_info(&*config.fs, &dir, &info)?;
        Region::open(&dir, descriptor, wal, cache, config)
    }

    /// Opens an existing region directory: removes half-written files under `.tmp`, opens
    /// every store, and starts MVCC after the highest flushed sequence id.
    pub fn open(
        dir: &Path,
        descriptor: Arc<TableDescriptor>,
        wal: Option<Arc<Wal>>,
        cache: Option<Arc<CombinedBlockCache>>,
        config: RegionConfig,
    ) -> Result<Region> {
        let fs = config.fs.clone();
        let info = layout::read_region_info(&*fs, dir)?;
        let tmp = dir.join(TMP_DIR);
        fs.delete(&tmp).map_err(|e| RegionError::io(&tmp, e))?;
        let mut stores = BTreeMap::new();
        for f in &descriptor.families {
            stores.insert(
                f.name.clone(),
                Arc::new(Store::open(
                    fs.clone(),
                    dir,
                    f.clone(),
                    cache.clone(),
                    config.direct_io,
                )?),
            );
        }
        let max_seq = stores
            .values()
            .map(|s| s.max_sequence_id())
            .max()
            .unwrap_or(0);
        Ok(Region {
            info,
            descriptor,
            dir: dir.to_path_buf(),
            stores,
            mvcc: Mvcc::new(max_seq),
            wal: wal.map(OnceLock::from).unwrap_or_default(),
            flush_queued: AtomicBool::new(false),
            memstore_bytes: AtomicU64::new(0),
            updates: RwLock::new(()),
            row_locks: (0..ROW_LOCK_STRIPES).map(|_| RwLock::new(())).collect(),
            flush_lock: Mutex::new(()),
            read_points: Arc::default(),
            metrics: Arc::default(),
            config,
            closed: AtomicBool::new(false),
        })
    }

    /// Gives a region opened for recovery its WAL once replay is done.
    pub fn attach_wal(&self, wal: Arc<Wal>) {
        let _ = self.wal.set(wal);
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn stores(&self) -> impl Iterator<Item = &Arc<Store>> {
        self.stores.values()
    }

    pub fn store(&self, family: &[u8]) -> Option<&Arc<Store>> {
        self.stores.get(family)
    }

    pub fn read_point(&self) -> u64 {
        self.mvcc.read_point()
    }

    /// The highest sequence id handed out.
    pub fn write_point(&self) -> u64 {
        self.mvcc.write_point()
    }

    /// Bytes in memstores, flush snapshots included (kept as one counter: every write reads
    /// it).
    pub fn memstore_size(&self) -> u64 {
        self.memstore_bytes.load(Ordering::Relaxed)
    }

    /// The store of each cell; the families were checked already.
    fn stores_of(&self, cells: &[KeyValue]) -> Vec<&Arc<Store>> {
        cells
            .iter()
            .map(|c| &self.stores[c.key().family()])
            .collect()
    }

    pub fn needs_flush(&self) -> bool {
        self.memstore_size() > self.descriptor.memstore_flush_size
    }

    /// Highest sequence id in the store files, per family (edits at or below it are
    /// already durable there and are not replayed).
    pub fn flushed_sequence_ids(&self) -> BTreeMap<Vec<u8>, u64> {
        self.stores
            .iter()
            .map(|(k, s)| (k.clone(), s.max_sequence_id()))
            .collect()
    }

    fn row_lock(&self, row: &[u8]) -> &RwLock<()> {
        &self.row_locks[self.row_stripe(row)]
    }

    fn row_stripe(&self, row: &[u8]) -> usize {
        xxhash_rust::xxh3::xxh3_64(row) as usize % ROW_LOCK_STRIPES
    }

    fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            Err(RegionError::Closed)
        } else {
            Ok(())
        }
    }

    fn check_row(&self, row: &[u8]) -> Result<()> {
        if row.len() > i16::MAX as usize {
            return Err(RegionError::InvalidArgument(format!(
                "row of {} bytes is longer than HBase's limit of 32767",
                row.len()
            )));
        }
        if !self.info.contains_row(row) {
            return Err(RegionError::InvalidArgument(format!(
                "row {} is outside region {}",
                cairn_hfile::cell::Escaped(row),
                self.info.region_name()
            )));
        }
        Ok(())
    }

    fn check_family(&self, family: &[u8]) -> Result<&Arc<Store>> {
        self.stores
            .get(family)
            .ok_or_else(|| RegionError::NoSuchFamily {
                table: self.info.table.to_string(),
                family: String::from_utf8_lossy(family).into_owned(),
            })
    }

    /// Applies cells of one row atomically: one sequence id, WAL first, then the memstore,
    /// visible to readers when MVCC completes.
    /// `stores[i]` is the store of `cells[i]` (looked up once by the caller).
    fn apply(
        &self,
        cells: Vec<KeyValue>,
        stores: Vec<&Arc<Store>>,
        now: i64,
        durability: Option<Durability>,
    ) -> Result<u64> {
        let n = cells.len();
        self.apply_logged(cells, stores, n, now, durability)
    }

    /// [`Self::apply`] where only the first `wal_cells` cells go to the WAL (a batch whose
    /// other puts asked for `SKIP_WAL`).
    fn apply_logged(
        &self,
        cells: Vec<KeyValue>,
        stores: Vec<&Arc<Store>>,
        wal_cells: usize,
        now: i64,
        durability: Option<Durability>,
    ) -> Result<u64> {
        self.check_open()?;
        let limit = self
            .descriptor
            .memstore_flush_size
            .saturating_mul(self.config.block_multiplier);
        let size = self.memstore_size();
        if size > limit {
            return Err(RegionError::RegionTooBusy {
                region: self.info.region_name(),
                size,
                limit,
            });
        }
        let durability = durability.unwrap_or(self.descriptor.durability);
        let _updates = self.updates.read();
        let seq = self.mvcc.begin();
        let cells: Vec<KeyValue> = cells.into_iter().map(|c| c.with_sequence_id(seq)).collect();
        let mut edit = WalEdit {
            region: self.info.encoded_name.as_bytes().to_vec(),
            sequence_id: seq,
            write_time_ms: now,
            cells,
        };
        if let (Some(wal), true) = (
            self.wal.get(),
            durability != Durability::SkipWal && wal_cells > 0,
        ) {
            let appended = if wal_cells == edit.cells.len() {
                wal.append(&edit, durability)
            } else {
                let part = WalEdit {
                    region: edit.region.clone(),
                    sequence_id: edit.sequence_id,
                    write_time_ms: edit.write_time_ms,
                    cells: edit.cells[..wal_cells].to_vec(),
                };
                wal.append(&part, durability)
            };
            if let Err(e) = appended {
                self.mvcc.complete(seq);
                return Err(e.into());
            }
        }
        let mut grown = 0;
        for (c, store) in edit.cells.drain(..).zip(stores) {
            grown += store.add(Arc::new(c));
        }
        crate::memstore::add_signed(&self.memstore_bytes, grown);
        self.mvcc.complete_and_wait(seq);
        self.metrics
            .write_request_count
            .fetch_add(1, Ordering::Relaxed);
        Ok(seq)
    }

    pub fn put(&self, put: &Put) -> Result<()> {
        let _row = self.row_lock(&put.row).read();
        self.put_locked(put)
    }

    fn put_locked(&self, put: &Put) -> Result<()> {
        let now = now_ms();
        let mut cells = Vec::with_capacity(put.cells.len());
        let mut stores = Vec::with_capacity(put.cells.len());
        self.put_cells(put, now, &mut cells, &mut stores)?;
        self.apply(cells, stores, now, put.durability)?;
        Ok(())
    }

    /// Checks one put and appends its cells (timestamps resolved against `now`) and their stores.
    fn put_cells<'a>(
        &'a self,
        put: &Put,
        now: i64,
        cells: &mut Vec<KeyValue>,
        stores: &mut Vec<&'a Arc<Store>>,
    ) -> Result<()> {
        self.check_row(&put.row)?;
        if put.cells.is_empty() {
            return Err(RegionError::InvalidArgument(
                "put has no columns".to_string(),
            ));
        }
        for (f, q, ts, v) in &put.cells {
            stores.push(self.check_family(f)?);
            let ts = if *ts == LATEST_TIMESTAMP { now } else { *ts };
            if ts < 0 {
                return Err(RegionError::InvalidArgument(format!(
                    "timestamp {ts} of column {}:{} is negative",
                    String::from_utf8_lossy(f),
                    String::from_utf8_lossy(q)
                )));
            }
            cells.push(KeyValue::put(&put.row, f, q, ts, v)?);
        }
        Ok(())
    }

    /// Applies puts of several rows of this region as one mini-batch (HBase's
    /// `doMiniBatchMutate`): one sequence id, one WAL record and one sync for all of them,
    /// visible together. Every put is checked before anything is applied, so a bad put fails
    /// the batch and writes nothing. Puts asking for `SKIP_WAL` stay out of the WAL record;
    /// the record is synced as the strongest durability in the batch asks.
    pub fn put_batch(&self, puts: &[&Put]) -> Result<()> {
        match puts {
            [] => return Ok(()),
            [one] => return self.put(one),
            _ => {}
        }
        // Stripes are locked in index order, each once, so two batches cannot deadlock and a
        // batch never waits on a stripe it already holds.
        let mut stripes: Vec<usize> = puts.iter().map(|p| self.row_stripe(&p.row)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        let _rows: Vec<_> = stripes.iter().map(|&i| self.row_locks[i].read()).collect();
        let now = now_ms();
        let table_durability = self.descriptor.durability;
        let mut logged = Vec::new();
        let mut logged_stores = Vec::new();
        let mut skipped = Vec::new();
        let mut skipped_stores = Vec::new();
        let mut durability = Durability::SkipWal;
        for (i, put) in puts.iter().enumerate() {
            let d = put.durability.unwrap_or(table_durability);
            let (cells, stores) = if d == Durability::SkipWal {
                (&mut skipped, &mut skipped_stores)
            } else {
                durability = durability.max(d);
                (&mut logged, &mut logged_stores)
            };
            self.put_cells(put, now, cells, stores)
                .map_err(|e| match e {
                    RegionError::InvalidArgument(m) => {
                        RegionError::InvalidArgument(format!("put {i} of the batch: {m}"))
                    }
                    e => e,
                })?;
        }
        let wal_cells = logged.len();
        logged.append(&mut skipped);
        logged_stores.append(&mut skipped_stores);
        self.apply_logged(logged, logged_stores, wal_cells, now, Some(durability))?;
        Ok(())
    }

    pub fn delete(&self, delete: &Delete) -> Result<()> {
        let _row = self.row_lock(&delete.row).write();
        self.delete_locked(delete)
    }

    /// Resolves `LATEST_TIMESTAMP` as HBase's `prepareDeleteTimestamps` does: a
    /// single-version Delete targets the newest existing version; the others mean now.
    fn delete_locked(&self, delete: &Delete) -> Result<()> {
        self.check_row(&delete.row)?;
        let now = now_ms();
        let resolve = |ts: i64| if ts == LATEST_TIMESTAMP { now } else { ts };
        let mut cells = Vec::new();
        if delete.markers.is_empty() {
            for f in self.stores.keys() {
                cells.push(KeyValue::new(
                    &delete.row,
                    f,
                    b"",
                    resolve(delete.ts),
                    CellType::DeleteFamily,
                    b"",
                )?);
            }
        }
        for m in &delete.markers {
            self.check_family(&m.family)?;
            let ts = if m.kind == CellType::Delete && m.ts == LATEST_TIMESTAMP {
                let latest = self.get(Get::new(&delete.row).column(&m.family, &m.qualifier))?;
                match latest.first() {
                    Some(c) => c.key().timestamp(),
                    // Nothing to delete: HBase writes nothing for it either.
                    None => continue,
                }
            } else {
                resolve(m.ts)
            };
            cells.push(KeyValue::new(
                &delete.row,
                &m.family,
                &m.qualifier,
                ts,
                m.kind,
                b"",
            )?);
        }
        if cells.is_empty() {
            return Ok(());
        }
        let stores = self.stores_of(&cells);
        self.apply(cells, stores, now, delete.durability)?;
        Ok(())
    }

    /// Adds to counters (8-byte big-endian longs), atomically for the row; returns the new
    /// cells.
    pub fn increment(&self, inc: &Increment) -> Result<Vec<KeyValue>> {
        let _row = self.row_lock(&inc.row).write();
        self.check_row(&inc.row)?;
        let now = now_ms();
        let mut cells = Vec::new();
        for (f, q, amount) in &inc.columns {
            self.check_family(f)?;
            let current = self.get(Get::new(&inc.row).column(f, q))?;
            let (old, old_ts) = match current.first() {
                None => (0i64, i64::MIN),
                Some(c) => {
                    let v = c.as_cell().value;
                    let bytes: [u8; 8] = v.try_into().map_err(|_| {
                        RegionError::InvalidArgument(format!(
                            "column {}:{} is not a counter: its value is {} bytes wide, not 8",
                            String::from_utf8_lossy(f),
                            String::from_utf8_lossy(q),
                            v.len()
                        ))
                    })?;
                    (i64::from_be_bytes(bytes), c.key().timestamp())
                }
            };
            let ts = now.max(old_ts.saturating_add(1));
            let new = old.wrapping_add(*amount);
            cells.push(KeyValue::put(&inc.row, f, q, ts, &new.to_be_bytes())?);
        }
        if cells.is_empty() {
            return Ok(cells);
        }
        let out = cells.clone();
        let stores = self.stores_of(&cells);
        self.apply(cells, stores, now, inc.durability)?;
        Ok(out)
    }

    /// Applies `put` only if the newest version of the column equals `expected` (`None`:
    /// only if the column has no value). Returns whether it was applied.
    pub fn check_and_put(
        &self,
        family: &[u8],
        qualifier: &[u8],
        expected: Option<&[u8]>,
        put: &Put,
    ) -> Result<bool> {
        let _row = self.row_lock(&put.row).write();
        self.check_family(family)?;
        let matches = self.newest_value_is(&put.row, family, qualifier, expected)?;
        if matches {
            self.put_locked(put)?;
        }
        Ok(matches)
    }

    /// Whether the newest version of a column has value `expected` (`None`: no value).
    fn newest_value_is(
        &self,
        row: &[u8],
        family: &[u8],
        qualifier: &[u8],
        expected: Option<&[u8]>,
    ) -> Result<bool> {
        let current = self.get(Get::new(row).column(family, qualifier))?;
        Ok(match (current.first(), expected) {
            (None, None) => true,
            (Some(c), Some(v)) => c.as_cell().value == v,
            _ => false,
        })
    }

    /// Like [`Region::check_and_put`] for a delete.
    pub fn check_and_delete(
        &self,
        family: &[u8],
        qualifier: &[u8],
        expected: Option<&[u8]>,
        delete: &Delete,
    ) -> Result<bool> {
        let _row = self.row_lock(&delete.row).write();
        self.check_family(family)?;
        let matches = self.newest_value_is(&delete.row, family, qualifier, expected)?;
        if matches {
            self.delete_locked(delete)?;
        }
        Ok(matches)
    }

    /// One row's cells: a one-row read through the scanner every read uses.
    pub fn get(&self, get: Get) -> Result<Vec<KeyValue>> {
        self.check_row(&get.row)?;
        self.check_open()?;
        // The get is over before this returns: its registration and the scanner borrow
        // from the region instead of sharing it (reference counts other cores also touch).
        let rp = get.options.read_point_within(self.mvcc.read_point());
        let _hold = self.read_points.hold(rp);
        let mut s = self.scanner_at(get.into_scan(), rp, None, false)?;
        let row = s.next_row()?.unwrap_or_default();
        let filtered = s.take_filtered_rows();
        if filtered > 0 {
            self.metrics
                .filtered_read_request_count
                .fetch_add(filtered, Ordering::Relaxed);
        }
        Ok(row)
    }

    /// A batch of one-row reads in one pass: the rows are read in key order over one set of
    /// scanners, so neighbouring rows share block reads. Results come back in the order of
    /// `gets`. Each get keeps its own columns, versions, time range and filter; the batch
    /// reads at one read point (the oldest any get asks for) and fills the block cache
    /// unless every get asked it not to.
    pub fn get_many(&self, gets: Vec<Get>) -> Result<Vec<Vec<KeyValue>>> {
        self.check_open()?;
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
            scanners.extend(s.scanners(&StoreRead {
                read_point: rp,
                block_options,
                ..StoreRead::default()
            })?);
        }
        let mut heap = KeyValueHeap::new(scanners);
        let mut results: Vec<Vec<KeyValue>> = vec![Vec::new(); gets.len()];
        if let Some(&first) = order.first() {
            heap.seek(&cairn_hfile::cell::first_on_row(&gets[first].row)?)?;
        }
        let mut gets: Vec<Option<Get>> = gets.into_iter().map(Some).collect();
        let mut last_row: Option<Vec<u8>> = None;
        let now = self.ttl_clock();
        for i in order {
            let g = gets[i].take().expect("each get once");
            let row = g.row.clone();
            // Positioned by a forward reseek: rows come in order, so each file's scanner
            // stays in its current block when the next row is there.
            let key = cairn_hfile::cell::first_on_row(&row)?;
            if last_row.as_deref() == Some(row.as_slice()) {
                // The same row asked twice: the heap is already past it.
                heap.seek(&key)?;
            } else {
                heap.reseek_far(&key)?;
            }
            last_row = Some(row);
            // The batch's registration above covers every get in it.
            let mut one = self.row_scanner(heap, g.into_scan(), rp, now, None, true)?;
            one.mark_started();
            results[i] = one.next_row()?.unwrap_or_default();
            heap = one.into_heap();
        }
        self.metrics
            .read_request_count
            .fetch_add(results.len() as u64, Ordering::Relaxed);
        Ok(results)
    }

    /// The time TTLs are measured from, read once per read: a clock read costs ~3% of a
    /// cached get here, so it is skipped when no family of the region has a TTL (the value is
    /// then never looked at).
    fn ttl_clock(&self) -> i64 {
        if self.stores.values().any(|s| s.family.ttl_ms().is_some()) {
            now_ms()
        } else {
            0
        }
    }

    fn matcher_for(&self, scan: &Scan, read_point: u64, now: i64) -> Result<Matcher> {
        let mut fams = Vec::new();
        if scan.columns.is_empty() {
            for s in self.stores.values() {
                fams.push((&s.family, None));
            }
        } else {
            for (f, cols) in &scan.columns {
                let s = self.check_family(f)?;
                fams.push((&s.family, cols.clone()));
            }
        }
        Ok(Matcher::new(
            if scan.options.raw {
                MatchMode::Raw
            } else {
                MatchMode::User
            },
            &fams,
            scan.options.time_range,
            scan.options.max_versions,
            scan.options.filter.is_some(),
            read_point,
            now,
        ))
    }

    /// A scanner over a consistent snapshot: the read point is fixed now (or is the one the
    /// scan's options name).
    pub fn scanner(&self, scan: Scan) -> Result<RegionScanner> {
        self.check_open()?;
        let rp = scan.options.read_point_within(self.mvcc.read_point());
        let guard = self.read_points.register(rp);
        self.scanner_at(scan, rp, Some(guard), true)
    }

    /// A scanner at read point `rp`, which the caller has registered (`guard`, or a hold
    /// that outlives the scanner). `metrics`: the scanner adds its filtered rows to the
    /// region's counter itself.
    fn scanner_at(
        &self,
        scan: Scan,
        rp: u64,
        guard: Option<ReadPointGuard>,
        metrics: bool,
    ) -> Result<RegionScanner> {
        let now = self.ttl_clock();
        let single = scan.single_row.then_some(scan.start_row.as_slice());
        let mut scanners: Vec<Box<dyn CellScanner>> = Vec::new();
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
            scanners.extend(s.scanners(&StoreRead {
                read_point: rp,
                time_range: scan.options.time_range,
                row: single,
                columns: cols.flatten(),
                oldest_unexpired,
                block_options: scan.options.block_options(),
            })?);
        }
        self.metrics
            .read_request_count
            .fetch_add(1, Ordering::Relaxed);
        self.row_scanner(KeyValueHeap::new(scanners), scan, rp, now, guard, metrics)
    }

    /// The region scanner of `scan` over `heap`: the scan clipped to the region, its matcher
    /// and filter. Gets, batches of gets and scans all read through it.
    fn row_scanner(
        &self,
        heap: KeyValueHeap<'static>,
        mut scan: Scan,
        rp: u64,
        now: i64,
        guard: Option<ReadPointGuard>,
        metrics: bool,
    ) -> Result<RegionScanner> {
        if let Some(f) = scan.options.filter.as_deref_mut() {
            f.set_reversed(scan.reversed);
        }
        let matcher = self.matcher_for(&scan, rp, now)?;
        let (mut start, mut stop) = (scan.start_row, scan.stop_row);
        if !scan.reversed {
            if start.as_slice() < self.info.start_key.as_slice() {
                start = self.info.start_key.clone();
            }
            if !self.info.end_key.is_empty() && (stop.is_empty() || stop > self.info.end_key) {
                stop = self.info.end_key.clone();
            }
        }
        Ok(RegionScanner::new(ScannerParts {
            heap,
            matcher,
            filter: scan.options.filter,
            start_row: start,
            stop_row: stop,
            reversed: scan.reversed,
            batch: scan.options.batch,
            limit: scan.options.limit,
            single_row: scan.single_row,
            guard,
            metrics: metrics.then(|| self.metrics.clone()),
        }))
    }

    /// Replays a recovered WAL edit: cells already in a store file are skipped.
    pub fn replay(&self, edit: &WalEdit, flushed: &BTreeMap<Vec<u8>, u64>) -> u64 {
        let mut applied = 0;
        for c in &edit.cells {
            let fam = c.key().family().to_vec();
            let Some(store) = self.stores.get(&fam) else {
                continue;
            };
            if edit.sequence_id <= flushed.get(&fam).copied().unwrap_or(0) {
                continue;
            }
            let grown = store.add(Arc::new(c.clone().with_sequence_id(edit.sequence_id)));
            crate::memstore::add_signed(&self.memstore_bytes, grown);
            applied += 1;
        }
        self.mvcc.advance_to(edit.sequence_id);
        applied
    }

    /// Raises MVCC past replayed edits.
    pub fn advance_sequence_id(&self, seq: u64) {
        self.mvcc.advance_to(seq);
    }

    /// Writes every store's memstore to a new file, then lets the WAL drop what is flushed.
    pub fn flush(&self) -> Result<FlushOutcome> {
        let _one = self.flush_lock.lock();
        self.flush_queued.store(false, Ordering::Release);
        let (snapshots, seq) = {
            let _block_writes = self.updates.write();
            let seq = self.mvcc.write_point();
            let snaps: Vec<_> = self
                .stores
                .values()
                .filter_map(|s| s.snapshot().map(|seg| (s.clone(), seg)))
                .collect();
            (snaps, seq)
        };
        let mut outcome = FlushOutcome {
            sequence_id: seq,
            ..Default::default()
        };
        for (store, seg) in &snapshots {
            let cells = seg.len() as u64;
            let smallest = self.read_points.smallest(self.mvcc.read_point());
            if let Some(bytes) = store.flush_snapshot(seg, seq, smallest)? {
                outcome.files += 1;
                outcome.bytes += bytes;
            }
            self.memstore_bytes
                .fetch_sub(seg.heap_size(), Ordering::Relaxed);
            outcome.cells += cells;
        }
        if outcome.files > 0 {
            self.metrics.flush_count.fetch_add(1, Ordering::Relaxed);
            self.metrics
                .flushed_cells_count
                .fetch_add(outcome.cells, Ordering::Relaxed);
            self.metrics
                .flushed_cells_size
                .fetch_add(outcome.bytes, Ordering::Relaxed);
        }
        if let Some(wal) = self.wal.get() {
            wal.mark_flushed(self.info.encoded_name.as_bytes(), seq)?;
        }
        Ok(outcome)
    }

    /// Whether any store has enough files for a minor compaction.
    pub fn needs_compaction(&self) -> bool {
        self.stores.values().any(|s| {
            let files = s.state().files;
            files.iter().filter(|f| !f.is_compacting()).count() >= self.config.compaction.min_files
        })
    }

    /// Compacts every store that needs it (`major`: all files of every store).
    pub fn compact(&self, major: bool) -> Result<Vec<CompactionOutcome>> {
        self.check_open()?;
        let mut out = Vec::new();
        for s in self.stores.values() {
            if let Some(o) = self.compact_store(s, major)? {
                out.push(o);
            }
        }
        Ok(out)
    }

    /// One compaction of one store, if the policy selects anything.
    pub fn compact_store(&self, store: &Store, major: bool) -> Result<Option<CompactionOutcome>> {
        let files = store.state().files;
        let candidates: Vec<Candidate> = files
            .iter()
            .map(|f| Candidate {
                size: f.size,
                compacting: f.is_compacting(),
                modified_ms: f.modified_ms,
                major: f.major,
                min_ts: f.time_range.map(|t| t.0),
                name: f.name(),
            })
            .collect();
        let Some(sel) = compaction::select(
            &candidates,
            &self.config.compaction,
            major,
            major,
            store.family.ttl_ms(),
            now_ms(),
        ) else {
            return Ok(None);
        };
        // A single major file with nothing to drop needs no rewrite unless asked.
        if sel.files.len() < 2 && !major && sel.all_files && files.len() == 1 && files[0].major {
            return Ok(None);
        }
        let selection = sel.files.iter().map(|&i| files[i].clone()).collect();
        let smallest = self.read_points.smallest(self.mvcc.read_point());
        let outcome = store.compact(selection, smallest, self.config.throttle)?;
        self.metrics
            .compaction_count
            .fetch_add(1, Ordering::Relaxed);
        self.metrics
            .compacted_cells_count
            .fetch_add(outcome.cells_out, Ordering::Relaxed);
        self.metrics
            .compacted_cells_size
            .fetch_add(outcome.bytes_out, Ordering::Relaxed);
        if outcome.major {
            self.metrics
                .major_compacted_cells_count
                .fetch_add(outcome.cells_out, Ordering::Relaxed);
        }
        Ok(Some(outcome))
    }

    /// Flushes (if asked) and refuses further operations.
    pub fn close(&self, flush: bool) -> Result<()> {
        if flush {
            self.flush()?;
        }
        self.closed.store(true, Ordering::Release);
        Ok(())
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Gauges plus counters, HBase's names.
    pub fn metric_values(&self) -> Vec<(&'static str, u64)> {
        let mut v = self.metrics.counters();
        v.push(("memStoreSize", self.memstore_size()));
        v.push((
            "storeFileCount",
            self.stores.values().map(|s| s.file_count() as u64).sum(),
        ));
        v.push((
            "storeFileSize",
            self.stores.values().map(|s| s.files_size()).sum(),
        ));
        v.push(("storeCount", self.stores.len() as u64));
        v.push(("maxSequenceId", self.mvcc.write_point()));
        v
    }
}
