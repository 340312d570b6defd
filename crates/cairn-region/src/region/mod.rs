//! A region: one key range of a table, one store per family, one MVCC, the write and read
//! paths (HBase's `HRegion`).

mod bulk_load;
mod check_and_mutate;
mod delta;
mod maintenance;
pub(crate) mod read;
mod row_mutations;
mod write;

pub use bulk_load::{hfile_row_range, BulkLoadFileMisfit, BULK_LOAD_JOURNAL};
pub use check_and_mutate::column_condition_holds;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use cairn_blockcache::CombinedBlockCache;
use cairn_cell::{CellType, KeyValue, LATEST_TIMESTAMP};
use cairn_fs::{FileSystem, LocalFileSystem};
use cairn_hfile::BlockReadOptions;
use cairn_wal::{Durability, Wal, WalEdit};
use parking_lot::{Mutex, RwLock};

use crate::accounting::{RegionMemStoreSize, RegionServerAccounting};
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
    /// `hbase.hregion.memstore.flush.size` (128 MiB): the flush size of tables that do not
    /// set `MEMSTORE_FLUSHSIZE`.
    pub flush_size: u64,
    /// `hbase.hstore.compaction.*`: which files a compaction selects and when a major is due.
    pub compaction: CompactionConfig,
    /// `hbase.hstore.compaction.throughput.higher.bound`: how fast compactions may write.
    pub throttle: Throttle,
    /// Where the region's files live (local disk unless the server's root says otherwise).
    pub fs: Arc<dyn FileSystem>,
    /// `cairn.direct_io_for_flush_and_compaction` (true): flushes and compactions write
    /// their files around the OS page cache where the filesystem allows (RocksDB's option of
    /// that name). Reads go through the block cache either way; what a buffered write would
    /// have left in the page cache is mostly a second copy of what the block cache holds, and
    /// copying into fresh page-cache pages costs the flusher more CPU than the rest of a flush.
    pub direct_io: bool,
    /// The server-wide memstore count every region of a server shares (HBase's
    /// `RegionServerAccounting`); a region outside a server gets its own, unbounded.
    pub accounting: Arc<RegionServerAccounting>,
}

impl Default for RegionConfig {
    fn default() -> Self {
        RegionConfig {
            block_multiplier: 4,
            flush_size: crate::descriptor::DEFAULT_MEMSTORE_FLUSH_SIZE,
            compaction: CompactionConfig::default(),
            throttle: Throttle::default(),
            fs: Arc::new(LocalFileSystem),
            direct_io: true,
            accounting: RegionServerAccounting::unbounded(),
        }
    }
}

/// What a flush wrote.
#[derive(Clone, Debug, Default)]
pub struct FlushOutcome {
    /// The flush's sequence id: every edit at or below it is in store files now, so the WAL may
    /// drop it (the region's write point when the snapshot was taken).
    pub sequence_id: u64,
    /// Cells taken from the memstore snapshots (before excess versions were dropped).
    pub cells: u64,
    /// Bytes of store files written.
    pub bytes: u64,
    /// Store files written: one per store that had anything to flush.
    pub files: usize,
}

/// One region of a table (HBase's `HRegion`): the rows `[start_key, end_key)`, a store per family,
/// the MVCC that orders its writes, and its row locks. Shared between threads behind an `Arc`;
/// every operation takes `&self`.
pub struct Region {
    /// The region's table, key range, id and encoded (directory) name.
    pub info: RegionInfo,
    /// The table's schema, shared by its regions.
    pub descriptor: Arc<TableDescriptor>,
    dir: PathBuf,
    stores: BTreeMap<Vec<u8>, Arc<Store>>,
    mvcc: Mvcc,
    wal: OnceLock<Arc<Wal>>,
    /// Set while a flush request is queued, so writers do not queue more.
    pub(crate) flush_queued: AtomicBool,
    /// Paces background retries of a failing flush, and of a failing compaction.
    pub(crate) flush_retry: Mutex<crate::server::Retry>,
    pub(crate) compaction_retry: Mutex<crate::server::Retry>,
    /// Bytes in the memstores, flush snapshots included (kept as one counter: every write
    /// reads it), in step with the server's count.
    memstore_bytes: RegionMemStoreSize,
    /// Writers hold it shared from sequence id to memstore insert; a flush takes it
    /// exclusively for the instant of the snapshot, so no flushed sequence id has an edit
    /// still on its way into the memstore.
    updates: RwLock<()>,
    row_locks: Vec<RwLock<()>>,
    flush_lock: Mutex<()>,
    read_points: Arc<ReadPoints>,
    /// Counters the read and write paths bump; [`metric_values`](Self::metric_values) adds gauges.
    pub metrics: Arc<RegionMetrics>,
    config: RegionConfig,
    closed: AtomicBool,
    /// Closed for a split or merge (see [`is_transitioning`](Self::is_transitioning)).
    transitioning: AtomicBool,
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
        bulk_load::recover(&*fs, dir)?;
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
            flush_retry: Mutex::default(),
            compaction_retry: Mutex::default(),
            memstore_bytes: RegionMemStoreSize::new(config.accounting.clone()),
            updates: RwLock::new(()),
            row_locks: (0..ROW_LOCK_STRIPES).map(|_| RwLock::new(())).collect(),
            flush_lock: Mutex::new(()),
            read_points: Arc::default(),
            metrics: Arc::default(),
            config,
            closed: AtomicBool::new(false),
            transitioning: AtomicBool::new(false),
        })
    }

    /// Gives a region opened for recovery its WAL once replay is done.
    pub fn attach_wal(&self, wal: Arc<Wal>) {
        let _ = self.wal.set(wal);
    }

    /// The region directory, `<table dir>/<encoded name>`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The stores, in family-name order.
    pub fn stores(&self) -> impl Iterator<Item = &Arc<Store>> {
        self.stores.values()
    }

    /// The store of `family`; `None` if the table has no such family.
    pub fn store(&self, family: &[u8]) -> Option<&Arc<Store>> {
        self.stores.get(family)
    }

    /// The MVCC read point: the sequence id a read opened now would see up to.
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

    /// Whether a flush of this region is running now.
    pub fn is_flushing(&self) -> bool {
        self.flush_lock.is_locked()
    }

    /// Whether a store has `hbase.hstore.blockingStoreFiles` files or more: a flush under
    /// memory pressure prefers other regions (HBase's `isTooManyStoreFiles`).
    pub fn has_too_many_store_files(&self) -> bool {
        self.stores
            .values()
            .any(|s| s.file_count() >= self.config.compaction.blocking_files)
    }

    /// The flush size: the table's `MEMSTORE_FLUSHSIZE`, else the server's.
    pub fn flush_size(&self) -> u64 {
        self.descriptor.flush_size(self.config.flush_size)
    }

    /// Whether the memstores have passed the flush size.
    pub fn needs_flush(&self) -> bool {
        self.memstore_size() > self.flush_size()
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

    /// Reads go on while the region is closed for a split or merge: its files hold every
    /// write it acknowledged, and a read routed to it before its children took over is
    /// concurrent with any write they take.
    fn check_readable(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) && !self.transitioning.load(Ordering::Acquire) {
            Err(RegionError::Closed)
        } else {
            Ok(())
        }
    }

    fn check_row(&self, row: &[u8]) -> Result<()> {
        crate::names::check_row(row)?;
        if !self.info.contains_row(row) {
            return Err(RegionError::WrongRegion {
                region: self.info.region_name(),
                row: row.to_vec(),
            });
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

    /// Flushes (if asked) and refuses further operations.
    pub fn close(&self, flush: bool) -> Result<()> {
        if flush {
            self.flush()?;
        }
        self.closed.store(true, Ordering::Release);
        Ok(())
    }

    /// Stops the region for a split or merge: flushes while it still takes writes, then
    /// refuses new operations, waits out the writes already past that check, and flushes
    /// what they wrote, so that the store files hold every acknowledged edit. On error the
    /// region is open again. [`reopen`](Self::reopen) undoes it.
    pub(crate) fn close_for_transition(&self) -> Result<()> {
        self.flush()?;
        self.transitioning.store(true, Ordering::Release);
        self.closed.store(true, Ordering::Release);
        // Writers check `closed` again under this lock: none is left inside after it.
        drop(self.updates.write());
        if let Err(e) = self.flush() {
            self.reopen();
            return Err(e);
        }
        Ok(())
    }

    /// Takes operations again after a split or merge that did not happen.
    pub(crate) fn reopen(&self) {
        self.closed.store(false, Ordering::Release);
        self.transitioning.store(false, Ordering::Release);
    }

    /// Ends a transition whose children could not open: the region stays closed, and
    /// requests routed to it fail at once rather than wait for children.
    pub(crate) fn stay_closed(&self) {
        self.transitioning.store(false, Ordering::Release);
    }

    /// Whether the region closed for a split or merge (its children take over, or it opens
    /// again): requests routed to it may look again in a moment.
    pub fn is_transitioning(&self) -> bool {
        self.transitioning.load(Ordering::Acquire)
    }

    /// Whether [`close`](Self::close) ran: operations then fail with [`RegionError::Closed`].
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::descriptor::{ColumnFamilyDescriptor, TableName};

    /// A region of table `t` (families `f`, 3 versions, and `g`) over `[start, end)` in `dir`,
    /// without a WAL, flushing at `flush_size` bytes.
    pub(in crate::region) fn region(
        dir: &Path,
        start: &[u8],
        end: &[u8],
        flush_size: u64,
    ) -> Region {
        let mut d = TableDescriptor::new(TableName::parse("t").unwrap())
            .with_family(ColumnFamilyDescriptor::new("f").max_versions(3))
            .with_family(ColumnFamilyDescriptor::new("g"));
        d.memstore_flush_size = Some(flush_size);
        let info = RegionInfo::new(d.name.clone(), start, end, 1);
        Region::create(dir, info, Arc::new(d), None, None, RegionConfig::default()).unwrap()
    }

    /// The values of a read's cells, as strings.
    pub(in crate::region) fn values(cells: &[KeyValue]) -> Vec<String> {
        cells
            .iter()
            .map(|c| String::from_utf8_lossy(c.as_cell().value).into_owned())
            .collect()
    }

    #[test]
    fn rows_outside_the_region_and_unknown_families_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"b", b"m", 1 << 20);
        assert_eq!(r.dir(), dir.path().join(&r.info.encoded_name));
        r.put(&Put::new("b").add("f", "q", "v")).unwrap();
        for row in ["a", "m", "z"] {
            let e = r.put(&Put::new(row).add("f", "q", "v")).unwrap_err();
            assert!(
                matches!(&e, RegionError::WrongRegion { region, row: got }
                    if *region == r.info.region_name() && got == row.as_bytes()),
                "{row}: {e}"
            );
            assert!(
                matches!(r.get(Get::new(row)), Err(RegionError::WrongRegion { .. })),
                "{row}"
            );
        }
        let e = r.put(&Put::new("c").add("x", "q", "v")).unwrap_err();
        assert!(
            matches!(e, RegionError::NoSuchFamily { ref family, .. } if family == "x"),
            "{e}"
        );
        assert_eq!(r.write_point(), 1, "refused writes take no sequence id");
    }

    #[test]
    fn writes_are_refused_over_the_blocking_limit_until_a_flush() {
        let dir = tempfile::tempdir().unwrap();
        // Blocking limit: flush size × hbase.hregion.memstore.block.multiplier (4).
        let r = region(dir.path(), b"", b"", 1000);
        let value = [b'x'; 100];
        let mut refused = None;
        for i in 0..100 {
            match r.put(&Put::new(format!("r{i:03}")).add("f", "q", value)) {
                Ok(()) => {}
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        match refused {
            Some(RegionError::RegionTooBusy { size, limit, .. }) => {
                assert_eq!(limit, 4000);
                assert!(size > limit && size == r.memstore_size(), "{size}");
            }
            other => panic!("expected RegionTooBusy, got {other:?}"),
        }
        assert!(r.needs_flush());
        r.flush().unwrap();
        assert_eq!(r.memstore_size(), 0);
        assert!(!r.needs_flush());
        r.put(&Put::new("z").add("f", "q", value)).unwrap();
    }

    #[test]
    fn closing_refuses_further_operations() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        r.put(&Put::new("a").add("f", "q", "v")).unwrap();
        r.close(true).unwrap();
        assert!(r.is_closed());
        assert!(matches!(
            r.put(&Put::new("a").add("f", "q", "w")),
            Err(RegionError::Closed)
        ));
        assert!(matches!(r.get(Get::new("a")), Err(RegionError::Closed)));
        // The close flushed: the store file holds the write.
        let gauges: BTreeMap<_, _> = r.metric_values().into_iter().collect();
        assert_eq!(gauges["storeFileCount"], 1);
        assert_eq!(gauges["storeCount"], 2);
        assert_eq!(gauges["maxSequenceId"], 1);
        assert_eq!(r.flushed_sequence_ids()[&b"f"[..]], 1);
    }
}
