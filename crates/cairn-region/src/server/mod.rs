//! The embedded region server: tables and their regions under one root directory, one WAL,
//! one block cache, and background flushes and compactions (HBase's `HRegionServer` plus
//! the parts of the master that create and drop tables).

mod assigned;
mod background;
mod bulk_load;
mod cluster;
mod config;
mod global_flush;
mod health;
mod open;
mod recovered_edits;
mod retired;
mod split;
mod split_policy;
mod table;
mod transition;

pub use assigned::Opened;
use background::{spawn_worker, Work};
pub use bulk_load::{fs_path, STAGING_DIR};
pub use cluster::CLUSTER_ID_FILE;
pub use config::{
    GlobalMemStoreConfig, Hosting, ServerConfig, DEFAULT_GLOBAL_MEMSTORE_BLOCK_WAIT,
    DEFAULT_GLOBAL_MEMSTORE_LOWER_LIMIT, DEFAULT_GLOBAL_MEMSTORE_SIZE, DEFAULT_SERVER_NAME,
    SERVER_PROPERTIES,
};
pub use health::{Retry, MIN_FREE_SPACE};
pub use open::RecoveryReport;
pub use retired::{MissingRegion, RETIRED_REGIONS_FILE};
pub use split::TransitionStep;
pub use split_policy::{split_point, SplitConfig, SplitPolicyKind, DEFAULT_MAX_FILE_SIZE};
pub use table::{encoded_part, Table, TableScanner};
pub use transition::TRANSITIONS_DIR;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use arc_swap::ArcSwap;
use cairn_blockcache::{BlockCacheConfig, CombinedBlockCache};
use cairn_cell::KeyValue;
use cairn_fs::FileSystem;
use cairn_wal::{ServerName, Wal, WalLocation, WalOptions};
use crossbeam_channel::{Receiver, Sender};

use crate::descriptor::{TableDescriptor, TableName};
use crate::error::{RegionError, Result};
use crate::layout::{self, RegionInfo, DISABLED_MARKER, REGION_INFO_FILE};
use crate::mutation::{
    Append, CheckAndMutate, CheckAndMutateResult, Delete, Get, Increment, Put, RowMutations, Scan,
};
use crate::names;
use crate::region::{FlushOutcome, Region, RegionConfig};
use crate::scanner::RegionScanner;
use crate::store::now_ms;
use crate::store::CompactionOutcome;

/// `hbase.regionserver.minibatch.size`: the most puts one WAL record and sync carries.
pub const MINI_BATCH_SIZE: usize = 20_000;

/// Hands `request` (which cannot be cloned) to `op` on region `r`, unless `r` is closed:
/// then it stays for the retry on the region that replaces `r`. A request already handed
/// over to a region that closed under it is not tried again.
fn once<R, T>(
    r: &Arc<Region>,
    request: &mut Option<R>,
    op: impl FnOnce(&Arc<Region>, R) -> Result<T>,
) -> Result<T> {
    if r.is_closed() {
        return Err(RegionError::Closed);
    }
    match request.take() {
        Some(req) => op(r, req),
        None => Err(RegionError::NotServingRegion(r.info.region_name())),
    }
}

/// The routing table: every table by name, swapped whole when tables or their regions
/// change.
pub(crate) type Tables = ArcSwap<BTreeMap<TableName, Arc<Table>>>;

/// An embedded region server: every table under one root, sharing one WAL and one block cache.
/// Opened with [`RegionServer::open`], which replays the WAL; routes each operation to the
/// region holding its row.
pub struct RegionServer {
    config: ServerConfig,
    wal: Arc<Wal>,
    cache: Option<Arc<CombinedBlockCache>>,
    /// Swapped whole by create and delete (under `admin`), so a read finds its table without
    /// a lock or a shared count to write, and never waits for an admin operation's I/O.
    tables: Arc<Tables>,
    admin: parking_lot::Mutex<()>,
    flush_tx: Option<Sender<Work>>,
    compact_tx: Option<Sender<Work>>,
    workers: parking_lot::Mutex<Vec<JoinHandle<()>>>,
    /// Paces the background tick's tries to bring a failed WAL back.
    wal_retry: parking_lot::Mutex<Retry>,
    /// What [`open`](Self::open) found and replayed from the WAL.
    pub recovery: RecoveryReport,
    /// In a cluster ([`Hosting::Assigned`]), who asks the master to split a region that has
    /// grown past its policy's size: given the region and the row to split at.
    split_requester: std::sync::OnceLock<SplitRequester>,
}

/// See [`RegionServer::set_split_requester`].
pub type SplitRequester = Box<dyn Fn(&Arc<Region>, Vec<u8>) + Send + Sync>;

impl std::fmt::Debug for RegionServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegionServer")
            .field("root", &self.config.root)
            .finish()
    }
}

impl RegionServer {
    /// The root directory (`hbase.rootdir`) on the root's filesystem.
    pub fn root(&self) -> &Path {
        &self.config.root
    }

    /// Who asks the master for splits when this server holds only what a master assigns;
    /// set once (later calls are ignored).
    pub fn set_split_requester(&self, ask: SplitRequester) {
        let _ = self.split_requester.set(ask);
    }

    /// The filesystem of the root.
    pub fn fs(&self) -> &Arc<dyn FileSystem> {
        self.config.fs()
    }

    /// The WAL root (`hbase.wal.dir`, else the root) and its filesystem.
    pub fn wal_root(&self) -> (Arc<dyn FileSystem>, PathBuf) {
        let (fs, loc) = self.config.wal_location();
        (fs, loc.root)
    }

    /// The split settings (policy, max file size): what the native RPC layer reports as a
    /// region's `splittable` to HBase's master-side checks.
    pub fn split_config(&self) -> &SplitConfig {
        &self.config.split
    }

    /// The count of every region's memstore bytes and the server-wide bound on it
    /// (`hbase.regionserver.global.memstore.size`), with its metrics.
    pub fn memstore_accounting(&self) -> &Arc<crate::accounting::RegionServerAccounting> {
        &self.config.region.accounting
    }

    /// The WAL every region of the server writes to.
    pub fn wal(&self) -> &Arc<Wal> {
        &self.wal
    }

    /// The block cache the store files read through; `None` when the server runs without one.
    pub fn block_cache(&self) -> Option<&Arc<CombinedBlockCache>> {
        self.cache.as_ref()
    }

    /// The tables, enabled or not, in name order.
    pub fn table_names(&self) -> Vec<TableName> {
        self.tables.load().keys().cloned().collect()
    }

    /// A table, enabled or not; [`RegionError::TableNotFound`] if there is none by that name.
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
        for k in &keys {
            names::check_row(k)?;
        }
        let id = now_ms() as u64;
        let mut bounds = vec![Vec::new()];
        bounds.extend(keys);
        let infos: Vec<RegionInfo> = (0..bounds.len())
            .map(|i| {
                let end = bounds.get(i + 1).cloned().unwrap_or_default();
                RegionInfo::new(descriptor.name.clone(), &bounds[i], &end, id)
            })
            .collect();
        // Checked before anything is written: a region whose hbase:meta row HBase could not
        // store must never exist.
        for info in &infos {
            names::check_meta_row(info)?;
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
        let mut regions = Vec::new();
        for info in infos {
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
                has_parents: AtomicBool::new(false),
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

    /// Enables a table (removes its disabled marker); enabling an enabled table is not an error.
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

    /// Whether a table takes reads and writes; the state survives restarts.
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
        // Durably, before anything goes: a replay that meets these regions' edits in a WAL
        // segment other regions still hold skips them rather than keeping them as lost.
        let names: Vec<String> = t
            .regions
            .iter()
            .map(|r| r.info.encoded_name.clone())
            .collect();
        self.retire_regions(&names)?;
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

    /// Call after any write done directly on a region of this server (a region found with
    /// [`region_by_name`](Self::region_by_name), say): queues the region's flush if its
    /// memstore passed the flush size, as the server's own write methods do. Without it only
    /// the background tick notices a full memstore.
    pub fn wrote(&self, region: &Arc<Region>) {
        self.after_write(region);
    }

    /// Flushes one region's memstore now, on the calling thread (HBase's `flushRegion`).
    pub fn flush_region(&self, region: &Arc<Region>) -> Result<FlushOutcome> {
        region.flush()
    }

    /// Compacts one region's stores now, on the calling thread (HBase's `compactRegion`;
    /// `major` rewrites every file of each store).
    pub fn compact_region(
        &self,
        region: &Arc<Region>,
        major: bool,
    ) -> Result<Vec<CompactionOutcome>> {
        region.compact(major)
    }

    /// Runs `op` on the region holding `row`; when that region is closed for a split or
    /// merge, looks again (its children replace it in a moment), for up to
    /// [`table::TRANSITION_WAIT`].
    fn routed<T>(
        &self,
        table: &TableName,
        row: &[u8],
        mut op: impl FnMut(&Arc<Region>) -> Result<T>,
    ) -> Result<T> {
        let deadline = std::time::Instant::now() + table::TRANSITION_WAIT;
        loop {
            let t = self.enabled_table(table)?;
            let r = t.region_for(row);
            match op(r) {
                Err(RegionError::Closed)
                    if r.is_transitioning() && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(2));
                }
                other => return other,
            }
        }
    }

    /// Applies a put in the region of its row ([`Region::put`]), then queues a flush if that
    /// region's memstore passed the flush size.
    pub fn put(&self, table: &TableName, put: &Put) -> Result<()> {
        self.routed(table, &put.row, |r| {
            r.put(put)?;
            self.after_write(r);
            Ok(())
        })
    }

    /// Applies puts as HBase's `batch` does: grouped by region, each region's share as
    /// mini-batches of at most [`MINI_BATCH_SIZE`] puts with one WAL record and sync each
    /// ([`Region::put_batch`]). Atomic per mini-batch, not across regions. A put that fails its
    /// checks fails its mini-batch, and the error names it; earlier mini-batches stay applied.
    pub fn put_many(&self, table: &TableName, puts: &[Put]) -> Result<()> {
        if let [one] = puts {
            return self.put(table, one);
        }
        let puts: Vec<&Put> = puts.iter().collect();
        self.put_many_until(
            table,
            &puts,
            std::time::Instant::now() + table::TRANSITION_WAIT,
        )
    }

    fn put_many_until(
        &self,
        table: &TableName,
        puts: &[&Put],
        deadline: std::time::Instant,
    ) -> Result<()> {
        let t = self.enabled_table(table)?;
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
                match r.put_batch(chunk) {
                    // A mini-batch is refused whole by a closed region: route it again
                    // once the split or merge has replaced the region.
                    Err(RegionError::Closed)
                        if r.is_transitioning() && std::time::Instant::now() < deadline =>
                    {
                        std::thread::sleep(Duration::from_millis(2));
                        self.put_many_until(table, chunk, deadline)?;
                    }
                    other => other?,
                }
                self.after_write(r);
            }
        }
        Ok(())
    }

    /// Applies a delete in the region of its row ([`Region::delete`]).
    pub fn delete(&self, table: &TableName, delete: &Delete) -> Result<()> {
        self.routed(table, &delete.row, |r| {
            r.delete(delete)?;
            self.after_write(r);
            Ok(())
        })
    }

    /// Adds to counters in one row atomically ([`Region::increment`]); returns the new cells.
    pub fn increment(&self, table: &TableName, inc: &Increment) -> Result<Vec<KeyValue>> {
        self.routed(table, &inc.row, |r| {
            let out = r.increment(inc)?;
            self.after_write(r);
            Ok(out)
        })
    }

    /// HBase's `checkAndPut`: applies `put` only if the newest value of `family:qualifier` in its
    /// row is `expected` (`None` or empty: only if the column is missing or its newest value is
    /// empty, as in HBase). Returns whether it was applied.
    pub fn check_and_put(
        &self,
        table: &TableName,
        family: &[u8],
        qualifier: &[u8],
        expected: Option<&[u8]>,
        put: &Put,
    ) -> Result<bool> {
        self.routed(table, &put.row, |r| {
            let ok = r.check_and_put(family, qualifier, expected, put)?;
            self.after_write(r);
            Ok(ok)
        })
    }

    /// HBase's `checkAndDelete`: like [`check_and_put`](Self::check_and_put) for a delete.
    pub fn check_and_delete(
        &self,
        table: &TableName,
        family: &[u8],
        qualifier: &[u8],
        expected: Option<&[u8]>,
        delete: &Delete,
    ) -> Result<bool> {
        self.routed(table, &delete.row, |r| {
            let ok = r.check_and_delete(family, qualifier, expected, delete)?;
            self.after_write(r);
            Ok(ok)
        })
    }

    /// Appends to columns of one row atomically ([`Region::append`]); returns the new cells.
    pub fn append(&self, table: &TableName, append: &Append) -> Result<Vec<KeyValue>> {
        self.routed(table, &append.row, |r| {
            let out = r.append(append)?;
            self.after_write(r);
            Ok(out)
        })
    }

    /// HBase's `mutateRow`: puts and deletes of one row applied atomically
    /// ([`Region::mutate_row`]).
    pub fn mutate_row(&self, table: &TableName, mutations: &RowMutations) -> Result<()> {
        self.routed(table, &mutations.row, |r| {
            r.mutate_row(mutations)?;
            self.after_write(r);
            Ok(())
        })
    }

    /// HBase's `checkAndMutate`: checks the condition on its row and applies the action if it
    /// holds, under one row lock ([`Region::check_and_mutate`]).
    pub fn check_and_mutate(
        &self,
        table: &TableName,
        cam: CheckAndMutate,
    ) -> Result<CheckAndMutateResult> {
        let row = cam.row.clone();
        let mut cam = Some(cam);
        self.routed(table, &row, |r| {
            let out = once(r, &mut cam, |r, c| r.check_and_mutate(c))?;
            if out.success {
                self.after_write(r);
            }
            Ok(out)
        })
    }

    /// One row's cells from the region holding it; empty when the row has none the get selects.
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
        // A region closed for a split or merge still serves reads (Region::get).
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
        self.enabled_table(table)?;
        TableScanner::new(self.tables.clone(), table.clone(), scan)
    }

    /// Flushes every region of a table.
    pub fn flush_table(&self, table: &TableName) -> Result<()> {
        for r in &self.table(table)?.regions {
            r.flush()?;
        }
        Ok(())
    }

    /// Compacts every region of a table now, on the calling thread; then archives the split
    /// and merge parents no region refers to any more.
    pub fn compact_table(&self, table: &TableName, major: bool) -> Result<()> {
        let t = self.table(table)?;
        for r in &t.regions {
            r.compact(major)?;
        }
        if t.has_parents.load(Ordering::Acquire) {
            self.archive_unreferenced_parents(table)?;
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

    /// Flushes every memstore and stops the background threads; the WAL is synced. A WAL
    /// that failed is recovered first (its edits flushed); if that fails too, so does close.
    pub fn close(&self) -> Result<()> {
        for tx in self.flush_tx.iter().chain(self.compact_tx.iter()) {
            let _ = tx.send(Work::Stop);
        }
        for w in self.workers.lock().drain(..) {
            let _ = w.join();
        }
        self.recover()?;
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
        if self.config.hosting == Hosting::Assigned {
            self.retire_wal_after_close()?;
        }
        if let Some(c) = &self.cache {
            c.shutdown();
        }
        Ok(())
    }

    /// A cluster's region server stops with nothing for the master to split, as HBase's does
    /// (it archives its WAL at an orderly stop): every region was closed (flushed) and marked
    /// flushed as it closed, so every closed file is retired now, and the active file, rolled
    /// by [`close`](Self::close) and holding no edit, goes to `oldWALs/` too.
    fn retire_wal_after_close(&self) -> Result<()> {
        for seg in self.wal.segments().into_iter().filter(|s| !s.active) {
            for (region, max) in &seg.max_sequence_id {
                self.wal.mark_flushed(region, *max)?;
            }
        }
        let (fs, loc) = self.config.wal_location();
        let dir = loc.dir();
        let archive = loc.archive_dir();
        let Ok(files) = fs.list(&dir) else {
            return Ok(());
        };
        for f in files.into_iter().filter(|f| !f.is_dir) {
            let scan = cairn_wal::file::scan_on(&*fs, &f.path, |_, _| Ok(()))?;
            if scan.entries > 0 {
                // Never expected; left for the master's split rather than lost.
                tracing::warn!("{} still holds edits at stop", f.path.display());
                continue;
            }
            let Some(name) = f.path.file_name() else {
                continue;
            };
            fs.mkdirs(&archive)
                .and_then(|()| fs.rename(&f.path, &archive.join(name)))
                .map_err(|e| RegionError::io(&f.path, e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::descriptor::ColumnFamilyDescriptor;

    /// A server in `dir` with no background threads (flushes and compactions when asked).
    pub(in crate::server) fn server(dir: &Path) -> Arc<RegionServer> {
        let mut c = ServerConfig::new(dir);
        c.background = false;
        RegionServer::open(c).unwrap()
    }

    /// Creates table `name` with family `f`, split at `splits`.
    pub(in crate::server) fn table(s: &RegionServer, name: &str, splits: &[&str]) -> TableName {
        let t = TableName::parse(name).unwrap();
        let d = TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f"));
        let splits: Vec<Vec<u8>> = splits.iter().map(|k| k.as_bytes().to_vec()).collect();
        s.create_table(d, &splits).unwrap();
        t
    }

    fn bounds(s: &RegionServer, t: &TableName) -> Vec<(String, String)> {
        let text = |k: &[u8]| String::from_utf8_lossy(k).into_owned();
        s.table(t)
            .unwrap()
            .regions
            .iter()
            .map(|r| (text(&r.info.start_key), text(&r.info.end_key)))
            .collect()
    }

    #[test]
    fn split_keys_become_contiguous_regions() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        // Unsorted and repeated split keys, as a client may pass them.
        let t = table(&s, "t", &["m", "b", "m"]);
        let want = [("", "b"), ("b", "m"), ("m", "")];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(bounds(&s, &t), want);
        // One create: the regions share their id, so their names differ only by start key.
        let ids: Vec<u64> = s
            .table(&t)
            .unwrap()
            .regions
            .iter()
            .map(|r| r.info.region_id)
            .collect();
        assert!(ids.windows(2).all(|w| w[0] == w[1]));
        let d = || {
            TableDescriptor::new(TableName::parse("u").unwrap())
                .with_family(ColumnFamilyDescriptor::new("f"))
        };
        let e = s.create_table(d(), &[b"".to_vec()]).unwrap_err();
        assert!(matches!(e, RegionError::InvalidArgument(_)), "{e}");
        assert!(matches!(
            s.create_table(d().with_family(ColumnFamilyDescriptor::new("f")), &[]),
            Err(RegionError::InvalidArgument(_))
        ));
        let again = TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f"));
        assert!(matches!(
            s.create_table(again, &[]),
            Err(RegionError::TableExists(_))
        ));
        // The regions survive a restart with the same bounds.
        s.close().unwrap();
        drop(s);
        let s = server(dir.path());
        assert_eq!(bounds(&s, &t), want);
    }

    #[test]
    fn a_batch_of_puts_takes_one_sequence_id_per_region() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let t = table(&s, "t", &["m"]);
        let puts: Vec<Put> = ["a", "x", "b", "y", "c"]
            .iter()
            .map(|r| Put::new(r).add("f", "q", r))
            .collect();
        s.put_many(&t, &puts).unwrap();
        let tbl = s.table(&t).unwrap();
        let points: Vec<u64> = tbl.regions.iter().map(|r| r.write_point()).collect();
        assert_eq!(points, vec![1, 1], "one mini-batch per region");
        for r in ["a", "b", "c", "x", "y"] {
            assert_eq!(s.get(&t, Get::new(r)).unwrap().len(), 1, "{r}");
        }
    }

    #[test]
    fn a_write_done_on_a_region_queues_its_flush_once_told() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = server(dir.path());
        // A flush queue the test reads instead of a background flusher.
        let (tx, rx) = crossbeam_channel::unbounded();
        Arc::get_mut(&mut s).expect("no other owner").flush_tx = Some(tx);
        let t = TableName::parse("t").unwrap();
        let mut d = TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f"));
        d.memstore_flush_size = Some(1024);
        s.create_table(d, &[]).unwrap();
        let name = s.table(&t).unwrap().regions[0].info.region_name_bytes();
        let (_, r) = s.region_by_name(&name).unwrap();
        r.put(&Put::new("a").add("f", "q", [b'x'; 2048])).unwrap();
        assert!(r.needs_flush());
        assert!(
            rx.try_recv().is_err(),
            "a write on the region alone queues nothing"
        );
        s.wrote(&r);
        match rx.try_recv() {
            Ok(Work::Flush(q)) => assert!(Arc::ptr_eq(&q, &r)),
            _ => panic!("no flush queued"),
        }
        s.wrote(&r);
        assert!(rx.try_recv().is_err(), "queued once until it runs");
        let out = s.flush_region(&r).unwrap();
        assert_eq!((out.files, r.memstore_size()), (1, 0));
        r.put(&Put::new("b").add("f", "q", "v")).unwrap();
        s.flush_region(&r).unwrap();
        let compacted = s.compact_region(&r, true).unwrap();
        assert_eq!(compacted.len(), 1);
        assert_eq!(r.stores().next().unwrap().file_count(), 1);
    }

    #[test]
    fn a_table_is_disabled_before_it_is_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let t = table(&s, "ns:t", &[]);
        s.put(&t, &Put::new("a").add("f", "q", "v")).unwrap();
        assert!(matches!(
            s.delete_table(&t),
            Err(RegionError::InvalidArgument(_))
        ));
        s.disable_table(&t).unwrap();
        assert!(!s.is_table_enabled(&t).unwrap());
        assert!(matches!(
            s.get(&t, Get::new("a")),
            Err(RegionError::TableDisabled(_))
        ));
        assert!(matches!(
            s.put(&t, &Put::new("a").add("f", "q", "w")),
            Err(RegionError::TableDisabled(_))
        ));
        // Disabling flushed the memstore, so the data survives being re-enabled.
        s.enable_table(&t).unwrap();
        assert_eq!(s.get(&t, Get::new("a")).unwrap().len(), 1);
        s.disable_table(&t).unwrap();
        let tdir = layout::table_dir(s.root(), &t);
        assert!(tdir.exists());
        s.delete_table(&t).unwrap();
        assert!(!tdir.exists());
        assert!(s.table_names().is_empty());
        assert!(matches!(
            s.get(&t, Get::new("a")),
            Err(RegionError::TableNotFound(_))
        ));
    }
}
