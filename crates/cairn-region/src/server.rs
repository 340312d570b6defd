//! The embedded region server: tables and their regions under one root directory, one WAL,
//! one block cache, and background flushes and compactions (HBase's `HRegionServer` plus
//! the parts of the master that create and drop tables).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use arc_swap::ArcSwap;
use cairn_blockcache::{BlockCacheConfig, CombinedBlockCache};
use cairn_fs::FileSystem;
use cairn_hfile::KeyValue;
use cairn_wal::{Wal, WalOptions};
use crossbeam_channel::{Receiver, Sender};

use crate::descriptor::{TableDescriptor, TableName};
use crate::error::{RegionError, Result};
use crate::layout::{self, RegionInfo, DISABLED_MARKER, REGION_INFO_FILE};
use crate::mutation::{Delete, Get, Increment, Put, Scan};
use crate::region::{Region, RegionConfig};
use crate::scanner::RegionScanner;
use crate::store::now_ms;

/// `hbase.regionserver.minibatch.size`: the most puts one WAL record and sync carries.
pub const MINI_BATCH_SIZE: usize = 20_000;

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The root directory on the filesystem `region.fs` (local unless the root was an
    /// `hdfs://` URI, see [`ServerConfig::from_uri`]).
    pub root: PathBuf,
    /// `hbase.wal.dir`: where the WAL goes, on `wal_fs`; `None` puts it in `<root>/WALs`
    /// on the root's filesystem (HBase's default).
    pub wal_dir: Option<PathBuf>,
    /// The filesystem of `wal_dir` (local if unset).
    pub wal_fs: Option<Arc<dyn FileSystem>>,
    pub wal: WalOptions,
    /// `None`: no block cache (reads go to the files every time).
    pub block_cache: Option<BlockCacheConfig>,
    pub region: RegionConfig,
    /// Run flushes and compactions on background threads (off: only when asked).
    pub background: bool,
    /// `hbase.regionserver.maxlogs` (32): past this many closed WAL segments, the regions
    /// holding the oldest one are flushed so it can be dropped.
    pub max_wal_segments: usize,
}

impl ServerConfig {
    /// Applies an HBase property by its HBase name; names cairn does not use are ignored (as
    /// HBase ignores unknown keys), malformed values are errors naming the key.
    pub fn set_property(&mut self, key: &str, value: &str) -> Result<()> {
        let bad = || RegionError::InvalidArgument(format!("{key} = {value:?} is not valid"));
        let v = value.trim();
        match key {
            "hbase.regionserver.maxlogs" => self.max_wal_segments = v.parse().map_err(|_| bad())?,
            "hbase.rootdir" => {
                let (fs, root) = cairn_fs::resolve(v)
                    .map_err(|e| RegionError::InvalidArgument(e.to_string()))?;
                self.region.fs = fs;
                self.root = root;
            }
            "hbase.wal.dir" => {
                let (fs, dir) = cairn_fs::resolve(v)
                    .map_err(|e| RegionError::InvalidArgument(e.to_string()))?;
                self.wal_fs = Some(fs);
                self.wal_dir = Some(dir);
            }
            "cairn.direct_io_for_flush_and_compaction" => {
                self.region.direct_io = v.parse().map_err(|_| bad())?
            }
            "cairn.wal.recycled_segments" => {
                self.wal.recycled_segments = v.parse().map_err(|_| bad())?
            }
            "hbase.hregion.memstore.block.multiplier" => {
                self.region.block_multiplier = v.parse().map_err(|_| bad())?
            }
            "hbase.hstore.compaction.throughput.higher.bound" => {
                let n: u64 = v.parse().map_err(|_| bad())?;
                self.region.throttle.bytes_per_second = (n > 0).then_some(n);
            }
            "hbase.regionserver.thread.compaction.throttle" | "hbase.hstore.blockingWaitTime" => {}
            k if k.starts_with("hbase.hstore.compaction.")
                || k == "hbase.hstore.compactionThreshold"
                || k == "hbase.hstore.blockingStoreFiles"
                || k.starts_with("hbase.hregion.majorcompaction") =>
            {
                self.region
                    .compaction
                    .set(k, v)
                    .map_err(RegionError::InvalidArgument)?
            }
            _ => {}
        }
        Ok(())
    }

    /// A server rooted at a local directory.
    pub fn new(root: impl Into<PathBuf>) -> ServerConfig {
        ServerConfig {
            root: root.into(),
            wal_dir: None,
            wal_fs: None,
            wal: WalOptions::default(),
            block_cache: None,
            region: RegionConfig::default(),
            background: true,
            max_wal_segments: 32,
        }
    }
}

impl ServerConfig {
    /// A server rooted at `root`: a local path, `file:///dir` or `hdfs://host:port/dir`.
    pub fn from_uri(root: &str) -> Result<ServerConfig> {
        let mut c = ServerConfig::new(PathBuf::new());
        c.set_property("hbase.rootdir", root)?;
        Ok(c)
    }

    /// The filesystem the root is on.
    pub fn fs(&self) -> &Arc<dyn FileSystem> {
        &self.region.fs
    }

    /// Where the WAL goes: `hbase.wal.dir`, else `<root>/WALs` on the root's filesystem.
    pub fn wal_location(&self) -> (Arc<dyn FileSystem>, PathBuf) {
        match &self.wal_dir {
            Some(d) => (
                self.wal_fs
                    .clone()
                    .unwrap_or_else(|| Arc::new(cairn_fs::LocalFileSystem)),
                d.clone(),
            ),
            None => (self.region.fs.clone(), layout::wal_dir(&self.root)),
        }
    }
}

/// What opening found in the WAL.
#[derive(Clone, Debug, Default)]
pub struct RecoveryReport {
    pub tables: usize,
    pub regions: usize,
    pub wal: Option<cairn_wal::ReplayReport>,
    pub edits_replayed: u64,
    pub cells_replayed: u64,
    /// Edits for regions that no longer exist (dropped tables).
    pub edits_skipped: u64,
}

pub struct Table {
    pub descriptor: Arc<TableDescriptor>,
    /// Sorted by start key; together they cover every row.
    pub regions: Vec<Arc<Region>>,
    enabled: AtomicBool,
    dir: PathBuf,
}

impl Table {
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
                cairn_hfile::cell::compare_bytes(&r.info.start_key, row)
                    != std::cmp::Ordering::Greater
            })
            .saturating_sub(1)
    }
}

enum Work {
    Flush(Arc<Region>),
    Compact(Arc<Region>, bool),
    Stop,
}

pub struct RegionServer {
    config: ServerConfig,
    wal: Arc<Wal>,
    cache: Option<Arc<CombinedBlockCache>>,
    /// Swapped whole by create and delete (under `admin`), so a read finds its table without
    /// a lock or a shared count to write, and never waits for an admin operation's I/O.
    tables: ArcSwap<BTreeMap<TableName, Arc<Table>>>,
    admin: parking_lot::Mutex<()>,
    flush_tx: Option<Sender<Work>>,
    compact_tx: Option<Sender<Work>>,
    workers: parking_lot::Mutex<Vec<JoinHandle<()>>>,
    pub recovery: RecoveryReport,
}

impl std::fmt::Debug for RegionServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegionServer")
            .field("root", &self.config.root)
            .finish()
    }
}

impl RegionServer {
    /// Opens (creating) the root directory: loads every table and region, replays the WAL
    /// into them, and flushes what was replayed so the old WAL segments can go.
    pub fn open(config: ServerConfig) -> Result<Arc<RegionServer>> {
        let root = config.root.clone();
        let fs = config.region.fs.clone();
        let (wal_fs, wal_dir) = config.wal_location();
        let data = layout::data_dir(&root);
        fs.mkdirs(&data).map_err(|e| RegionError::io(&data, e))?;
        let cache = match &config.block_cache {
            Some(c) => Some(Arc::new(
                CombinedBlockCache::new(c.clone()).map_err(|e| RegionError::io(&root, e))?,
            )),
            None => None,
        };
        // Regions open without a WAL first: the WAL replays into them before taking writes.
        let mut tables = BTreeMap::new();
        let mut pending = Vec::new();
        for ns in read_dirs(&*fs, &data)? {
            for tdir in read_dirs(&*fs, &ns)? {
                let Some(desc) = layout::read_table_descriptor(&*fs, &tdir)? else {
                    continue;
                };
                let desc = Arc::new(desc);
                let mut regions = Vec::new();
                for rdir in read_dirs(&*fs, &tdir)? {
                    let info = rdir.join(REGION_INFO_FILE);
                    if fs.exists(&info).map_err(|e| RegionError::io(&info, e))? {
                        regions.push(rdir);
                    }
                }
                pending.push((desc, tdir, regions));
            }
        }
        // Open regions with a placeholder-free path: create the WAL after loading regions
        // so replay can route edits; regions get the WAL handle through `attach`.
        // Encoded region name -> the region and its per-family flushed sequence ids.
        type Recovering = (Arc<Region>, BTreeMap<Vec<u8>, u64>);
        let mut by_name: HashMap<Vec<u8>, Recovering> = HashMap::new();
        let mut staged = Vec::new();
        for (desc, tdir, rdirs) in pending {
            let mut regions = Vec::new();
            for rdir in rdirs {
                let r = Arc::new(Region::open(
                    &rdir,
                    desc.clone(),
                    None,
                    cache.clone(),
                    config.region.clone(),
                )?);
                by_name.insert(
                    r.info.encoded_name.as_bytes().to_vec(),
                    (r.clone(), r.flushed_sequence_ids()),
                );
                regions.push(r);
            }
            staged.push((desc, tdir, regions));
        }
        let mut report = RecoveryReport::default();
        let mut seen: HashMap<Vec<u8>, u64> = HashMap::new();
        let (wal, wal_report) = Wal::open_on(wal_fs, &wal_dir, config.wal.clone(), |edit| {
            match by_name.get(&edit.region) {
                Some((r, flushed)) => {
                    report.cells_replayed += r.replay(&edit, flushed);
                    report.edits_replayed += 1;
                }
                None => report.edits_skipped += 1,
            }
            let e = seen.entry(edit.region.clone()).or_default();
            *e = (*e).max(edit.sequence_id);
            Ok(())
        })?;
        drop(by_name);
        report.wal = Some(wal_report);
        let wal = Arc::new(wal);
        for (desc, tdir, mut regions) in staged {
            for r in &regions {
                // Replayed edits go to store files before the region takes writes, so the
                // old segments can be dropped.
                if seen.contains_key(r.info.encoded_name.as_bytes()) {
                    r.flush()?;
                }
                r.attach_wal(wal.clone());
            }
            regions.sort_by(|a, b| a.info.start_key.cmp(&b.info.start_key));
            report.regions += regions.len();
            report.tables += 1;
            let marker = tdir.join(DISABLED_MARKER);
            let enabled = !fs
                .exists(&marker)
                .map_err(|e| RegionError::io(&marker, e))?;
            tables.insert(
                desc.name.clone(),
                Arc::new(Table {
                    descriptor: desc,
                    regions,
                    enabled: AtomicBool::new(enabled),
                    dir: tdir,
                }),
            );
        }
        // Everything replayed is in store files now. Only up to what was replayed: later
        // edits of these regions will get higher sequence ids and must stay.
        for (name, seq) in &seen {
            wal.mark_flushed(name, *seq)?;
        }
        let mut server = RegionServer {
            config,
            wal,
            cache,
            tables: ArcSwap::from_pointee(tables),
            admin: parking_lot::Mutex::new(()),
            flush_tx: None,
            compact_tx: None,
            workers: parking_lot::Mutex::new(Vec::new()),
            recovery: report,
        };
        if server.config.background {
            let (ftx, frx) = crossbeam_channel::unbounded();
            let (ctx, crx) = crossbeam_channel::unbounded();
            server.flush_tx = Some(ftx);
            server.compact_tx = Some(ctx);
            let server = Arc::new(server);
            let w1 = spawn_worker("cairn-flusher", frx, Arc::downgrade(&server));
            let w2 = spawn_worker("cairn-compactor", crx, Arc::downgrade(&server));
            server.workers.lock().extend([w1, w2]);
            return Ok(server);
        }
        Ok(Arc::new(server))
    }

    pub fn root(&self) -> &Path {
        &self.config.root
    }

    pub fn wal(&self) -> &Arc<Wal> {
        &self.wal
    }

    pub fn block_cache(&self) -> Option<&Arc<CombinedBlockCache>> {
        self.cache.as_ref()
    }

    pub fn table_names(&self) -> Vec<TableName> {
        self.tables.load().keys().cloned().collect()
    }

    pub fn table(&self, name: &TableName) -> Result<Arc<Table>> {
        self.tables
            .load()
            .get(name)
            .cloned()
            .ok_or_else(|| RegionError::TableNotFound(name.to_string()))
    }

    fn enabled_table(&self, name: &TableName) -> Result<Arc<Table>> {
        let t = self.table(name)?;
        if !t.is_enabled() {
            return Err(RegionError::TableDisabled(name.to_string()));
        }
        Ok(t)
    }

    /// Creates a table, pre-split at `split_keys` (sorted, distinct, non-empty).
    pub fn create_table(&self, descriptor: TableDescriptor, split_keys: &[Vec<u8>]) -> Result<()> {
        descriptor.validate()?;
        let mut keys = split_keys.to_vec();
        keys.sort();
        keys.dedup();
        if keys.iter().any(|k| k.is_empty()) {
            return Err(RegionError::InvalidArgument(
                "split keys must not be empty".into(),
            ));
        }
        let _admin = self.admin.lock();
        let mut tables = BTreeMap::clone(&self.tables.load());
        if tables.contains_key(&descriptor.name) {
            return Err(RegionError::TableExists(descriptor.name.to_string()));
        }
        let fs = self.config.fs();
        let tdir = layout::table_dir(&self.config.root, &descriptor.name);
        if fs.exists(&tdir).map_err(|e| RegionError::io(&tdir, e))? {
            return Err(RegionError::TableExists(format!(
                "{} (directory {} exists)",
                descriptor.name,
                tdir.display()
            )));
        }
        layout::write_table_descriptor(&**fs, &tdir, &descriptor)?;
        let desc = Arc::new(descriptor);
        let id = now_ms() as u64;
        let mut bounds = vec![Vec::new()];
        bounds.extend(keys);
        let mut regions = Vec::new();
        for (i, start) in bounds.iter().enumerate() {
            let end = bounds.get(i + 1).cloned().unwrap_or_default();
            let info = RegionInfo::new(desc.name.clone(), start, &end, id);
            regions.push(Arc::new(Region::create(
                &tdir,
                info,
                desc.clone(),
                Some(self.wal.clone()),
                self.cache.clone(),
                self.config.region.clone(),
            )?));
        }
        tables.insert(
            desc.name.clone(),
            Arc::new(Table {
                descriptor: desc,
                regions,
                enabled: AtomicBool::new(true),
                dir: tdir,
            }),
        );
        self.tables.store(Arc::new(tables));
        Ok(())
    }

    /// Disables a table: memstores are flushed, reads and writes refused until enabled.
    pub fn disable_table(&self, name: &TableName) -> Result<()> {
        let t = self.table(name)?;
        if !t.is_enabled() {
            return Err(RegionError::TableDisabled(name.to_string()));
        }
        for r in &t.regions {
            r.flush()?;
        }
        layout::write_atomically(&**self.config.fs(), &t.dir.join(DISABLED_MARKER), b"")?;
        t.enabled.store(false, Ordering::Release);
        Ok(())
    }

    pub fn enable_table(&self, name: &TableName) -> Result<()> {
        let t = self.table(name)?;
        let marker = t.dir.join(DISABLED_MARKER);
        self.config
            .fs()
            .delete(&marker)
            .map_err(|e| RegionError::io(&marker, e))?;
        t.enabled.store(true, Ordering::Release);
        Ok(())
    }

    pub fn is_table_enabled(&self, name: &TableName) -> Result<bool> {
        Ok(self.table(name)?.is_enabled())
    }

    /// Deletes a disabled table and its files (HBase requires disabling first).
    pub fn delete_table(&self, name: &TableName) -> Result<()> {
        let _admin = self.admin.lock();
        let mut tables = BTreeMap::clone(&self.tables.load());
        let t = tables
            .get(name)
            .cloned()
            .ok_or_else(|| RegionError::TableNotFound(name.to_string()))?;
        if t.is_enabled() {
            return Err(RegionError::InvalidArgument(format!(
                "table {name} must be disabled before it is deleted"
            )));
        }
        for r in &t.regions {
            r.close(false)?;
            for s in r.stores() {
                for f in s.state().files.iter() {
                    f.evict_cached_blocks();
                }
            }
            self.wal
                .mark_flushed(r.info.encoded_name.as_bytes(), u64::MAX)?;
        }
        tables.remove(name);
        self.tables.store(Arc::new(tables));
        self.config
            .fs()
            .delete(&t.dir)
            .map_err(|e| RegionError::io(&t.dir, e))?;
        Ok(())
    }

    fn after_write(&self, r: &Arc<Region>) {
        if r.needs_flush() && !r.flush_queued.swap(true, Ordering::AcqRel) {
            if let Some(tx) = &self.flush_tx {
                let _ = tx.send(Work::Flush(r.clone()));
            }
        }
    }

    pub fn put(&self, table: &TableName, put: &Put) -> Result<()> {
        let t = self.enabled_table(table)?;
        let r = t.region_for(&put.row);
        r.put(put)?;
        self.after_write(r);
        Ok(())
    }

    /// Applies puts as HBase's `batch` does: grouped by region, each region's share as
    /// mini-batches of at most [`MINI_BATCH_SIZE`] puts with one WAL record and sync each
    /// ([`Region::put_batch`]). Atomic per mini-batch, not across regions. A put that fails its
    /// checks fails its mini-batch, and the error names it; earlier mini-batches stay applied.
    pub fn put_many(&self, table: &TableName, puts: &[Put]) -> Result<()> {
        let t = self.enabled_table(table)?;
        if let [one] = puts {
            return self.put(table, one);
        }
        let mut by_region: Vec<(&Arc<Region>, Vec<&Put>)> = Vec::new();
        for p in puts {
            let r = t.region_for(&p.row);
            match by_region.iter_mut().find(|(x, _)| Arc::ptr_eq(x, r)) {
                Some((_, v)) => v.push(p),
                None => by_region.push((r, vec![p])),
            }
        }
        for (r, puts) in by_region {
            for chunk in puts.chunks(MINI_BATCH_SIZE) {
                r.put_batch(chunk)?;
                self.after_write(r);
            }
        }
        Ok(())
    }

    pub fn delete(&self, table: &TableName, delete: &Delete) -> Result<()> {
        let t = self.enabled_table(table)?;
        let r = t.region_for(&delete.row);
        r.delete(delete)?;
        self.after_write(r);
        Ok(())
    }

    pub fn increment(&self, table: &TableName, inc: &Increment) -> Result<Vec<KeyValue>> {
        let t = self.enabled_table(table)?;
        let r = t.region_for(&inc.row);
        let out = r.increment(inc)?;
        self.after_write(r);
        Ok(out)
    }

    pub fn check_and_put(
        &self,
        table: &TableName,
        family: &[u8],
        qualifier: &[u8],
        expected: Option<&[u8]>,
        put: &Put,
    ) -> Result<bool> {
        let t = self.enabled_table(table)?;
        let r = t.region_for(&put.row);
        let ok = r.check_and_put(family, qualifier, expected, put)?;
        self.after_write(r);
        Ok(ok)
    }

    pub fn check_and_delete(
        &self,
        table: &TableName,
        family: &[u8],
        qualifier: &[u8],
        expected: Option<&[u8]>,
        delete: &Delete,
    ) -> Result<bool> {
        let t = self.enabled_table(table)?;
        let r = t.region_for(&delete.row);
        r.check_and_delete(family, qualifier, expected, delete)
    }

    pub fn get(&self, table: &TableName, get: Get) -> Result<Vec<KeyValue>> {
        // Borrowed from the loaded map rather than cloned: one shared count fewer to write
        // per get.
        let tables = self.tables.load();
        let t = tables
            .get(table)
            .ok_or_else(|| RegionError::TableNotFound(table.to_string()))?;
        if !t.is_enabled() {
            return Err(RegionError::TableDisabled(table.to_string()));
        }
        t.region_for(&get.row).get(get)
    }

    /// Gets a batch: grouped by region, each group walked in key order; results in the
    /// order asked.
    pub fn get_many(&self, table: &TableName, gets: Vec<Get>) -> Result<Vec<Vec<KeyValue>>> {
        let t = self.enabled_table(table)?;
        let n = gets.len();
        let mut groups: BTreeMap<usize, (Vec<usize>, Vec<Get>)> = BTreeMap::new();
        for (i, g) in gets.into_iter().enumerate() {
            let e = groups.entry(t.region_index(&g.row)).or_default();
            e.0.push(i);
            e.1.push(g);
        }
        let mut out = vec![Vec::new(); n];
        for (r, (idx, gets)) in groups {
            for (i, res) in idx.into_iter().zip(t.regions[r].get_many(gets)?) {
                out[i] = res;
            }
        }
        Ok(out)
    }

    /// A scanner over the table's regions in order (reverse order when reversed).
    pub fn scanner(&self, table: &TableName, scan: Scan) -> Result<TableScanner> {
        let t = self.enabled_table(table)?;
        TableScanner::new(t, scan)
    }

    /// Flushes every region of a table.
    pub fn flush_table(&self, table: &TableName) -> Result<()> {
        for r in &self.table(table)?.regions {
            r.flush()?;
        }
        Ok(())
    }

    /// Compacts every region of a table now, on the calling thread.
    pub fn compact_table(&self, table: &TableName, major: bool) -> Result<()> {
        for r in &self.table(table)?.regions {
            r.compact(major)?;
        }
        Ok(())
    }

    /// Queues a compaction of every region of a table on the background pool (HBase's
    /// `compact` / `majorCompact` admin calls return at once too).
    pub fn request_compaction(&self, table: &TableName, major: bool) -> Result<()> {
        let t = self.table(table)?;
        for r in &t.regions {
            match &self.compact_tx {
                Some(tx) => {
                    let _ = tx.send(Work::Compact(r.clone(), major));
                }
                None => {
                    r.compact(major)?;
                }
            }
        }
        Ok(())
    }

    /// Per-region metrics, with the region name.
    pub fn region_metrics(&self) -> Vec<(String, Vec<(&'static str, u64)>)> {
        let mut out = Vec::new();
        for t in self.tables.load().values() {
            for r in &t.regions {
                out.push((r.info.region_name(), r.metric_values()));
            }
        }
        out
    }

    /// Flushes every memstore and stops the background threads; the WAL is synced.
    pub fn close(&self) -> Result<()> {
        for tx in self.flush_tx.iter().chain(self.compact_tx.iter()) {
            let _ = tx.send(Work::Stop);
        }
        for w in self.workers.lock().drain(..) {
            let _ = w.join();
        }
        let tables: Vec<_> = self.tables.load().values().cloned().collect();
        for t in &tables {
            for r in &t.regions {
                if !r.is_closed() {
                    r.close(true)?;
                }
            }
        }
        // Everything is in store files now: roll, so the last segment is closed too and can
        // go, and the next open has nothing to replay.
        self.wal.roll()?;
        for t in &tables {
            for r in &t.regions {
                self.wal
                    .mark_flushed(r.info.encoded_name.as_bytes(), r.write_point())?;
            }
        }
        self.wal.sync(true)?;
        if let Some(c) = &self.cache {
            c.shutdown();
        }
        Ok(())
    }

    fn background_tick(&self) {
        let tables: Vec<_> = self.tables.load().values().cloned().collect();
        // `hbase.regionserver.maxlogs`: too many WAL segments means some region holds old
        // edits in its memstore; flush the regions the oldest segment still needs.
        let segments = self.wal.segments();
        let closed: Vec<_> = segments.iter().filter(|s| !s.active).collect();
        if closed.len() > self.config.max_wal_segments {
            if let Some(oldest) = closed.iter().min_by_key(|s| s.id) {
                for t in &tables {
                    for r in &t.regions {
                        if oldest
                            .max_sequence_id
                            .contains_key(r.info.encoded_name.as_bytes())
                            && !r.flush_queued.swap(true, Ordering::AcqRel)
                        {
                            if let Some(tx) = &self.flush_tx {
                                let _ = tx.send(Work::Flush(r.clone()));
                            }
                        }
                    }
                }
            }
        }
        for t in tables {
            for r in &t.regions {
                if r.is_closed() {
                    continue;
                }
                if r.needs_flush() && !r.flush_queued.swap(true, Ordering::AcqRel) {
                    if let Some(tx) = &self.flush_tx {
                        let _ = tx.send(Work::Flush(r.clone()));
                    }
                }
                if r.needs_compaction() {
                    if let Some(tx) = &self.compact_tx {
                        let _ = tx.send(Work::Compact(r.clone(), false));
                    }
                }
            }
        }
    }
}

fn spawn_worker(
    name: &str,
    rx: Receiver<Work>,
    server: std::sync::Weak<RegionServer>,
) -> JoinHandle<()> {
    let flusher = name == "cairn-flusher";
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || loop {
            let work = match rx.recv_timeout(Duration::from_millis(500)) {
                Ok(w) => w,
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    match server.upgrade() {
                        // The flusher also looks for work nobody asked for.
                        Some(s) if flusher => s.background_tick(),
                        Some(_) => {}
                        None => return,
                    }
                    continue;
                }
                Err(_) => return,
            };
            match work {
                Work::Stop => return,
                Work::Flush(r) => {
                    if r.memstore_size() > 0 && !r.is_closed() {
                        if let Err(e) = r.flush() {
                            eprintln!("cairn: flush of {} failed: {e}", r.info.region_name());
                        }
                    }
                }
                Work::Compact(r, major) => {
                    if !r.is_closed() {
                        if let Err(e) = r.compact(major) {
                            eprintln!("cairn: compaction of {} failed: {e}", r.info.region_name());
                        }
                    }
                }
            }
        })
        .expect("spawn background thread")
}

/// The subdirectories of `dir` whose names do not start with `.`, sorted; none if `dir` is
/// missing.
fn read_dirs(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = match fs.list(dir) {
        Ok(entries) => entries
            .into_iter()
            .filter(|e| e.is_dir)
            .filter(|e| {
                !e.path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .map(|e| e.path)
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(RegionError::io(dir, e)),
    };
    out.sort();
    Ok(out)
}

/// Rows of a table across its regions.
pub struct TableScanner {
    table: Arc<Table>,
    template: Scan,
    /// Index of the region being scanned.
    region: usize,
    current: Option<RegionScanner>,
    rows: usize,
    done: bool,
}

impl TableScanner {
    fn new(table: Arc<Table>, mut scan: Scan) -> Result<TableScanner> {
        let template = scan.clone_without_filter();
        let region = if scan.reversed && scan.start_row.is_empty() {
            table.regions.len() - 1
        } else {
            table.region_index(&scan.start_row)
        };
        let filter = scan.options.filter.take();
        let mut first = template.clone_without_filter();
        first.options.filter = filter;
        let current = Some(table.regions[region].scanner(first)?);
        Ok(TableScanner {
            table,
            template,
            region,
            current,
            rows: 0,
            done: false,
        })
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
            let next = if self.template.reversed {
                self.region.checked_sub(1)
            } else {
                Some(self.region + 1).filter(|&i| i < self.table.regions.len())
            };
            let Some(next) = next else {
                self.done = true;
                continue;
            };
            let r = &self.table.regions[next];
            // Stop when the next region starts at or past the stop row.
            if !self.template.reversed
                && !self.template.stop_row.is_empty()
                && r.info.start_key >= self.template.stop_row
            {
                self.done = true;
                continue;
            }
            if self.template.reversed
                && !self.template.stop_row.is_empty()
                && !r.info.end_key.is_empty()
                && r.info.end_key <= self.template.stop_row
            {
                self.done = true;
                continue;
            }
            let mut s = self.template.clone_without_filter();
            s.options.filter = filter;
            if self.template.options.limit > 0 {
                if self.rows >= self.template.options.limit {
                    self.done = true;
                    continue;
                }
                s.options.limit = self.template.options.limit - self.rows;
            }
            if s.reversed {
                // Continue from the end of the previous region.
                s.start_row = Vec::new();
            }
            self.region = next;
            self.current = Some(r.scanner(s)?);
        }
    }

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
