//! One column family of one region: a memstore and its store files (HBase's `HStore`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_blockcache::CombinedBlockCache;
use cairn_cell::KeyValue;
use cairn_fs::{FileSystem, FsOutput};
use cairn_hfile::file_info::keys;
use cairn_hfile::{BlockReadOptions, BloomType, HFileWriter};
use parking_lot::{Mutex, RwLock};
use prost::Message;

use crate::descriptor::ColumnFamilyDescriptor;
use crate::error::{RegionError, Result};
use crate::half_scanner::HalfScanner;
use crate::heap::{CellScanner, KeyValueHeap, StoreFileScanner};
use crate::layout::TMP_DIR;
use crate::matcher::{MatchMode, TimeRange};
use crate::memstore::{Segment, SegmentCursor, SegmentScanner};
use crate::storefile::StoreFile;

mod bulk_load;
mod compaction;

pub use compaction::{CompactionOutcome, Throttle};

/// File info key listing the files a compaction replaced (HBase's `COMPACTION_EVENT_KEY`,
/// `PBUF` + `CompactionEventTracker { repeated bytes compacted_store_file = 1 }`): a store
/// that opens after a crash between the swap and the deletion drops them.
pub const COMPACTION_EVENT_KEY: &[u8] = b"COMPACTION_EVENT_KEY";

#[derive(Clone, PartialEq, prost::Message)]
struct CompactionEventTracker {
    #[prost(bytes = "vec", repeated, tag = "1")]
    compacted_store_file: Vec<Vec<u8>>,
}

/// A store's contents at one instant, swapped as a whole by flushes and compactions: a reader
/// that cloned it keeps its files and segments even after they are replaced.
#[derive(Clone, Debug)]
pub struct StoreState {
    /// The memstore segment taking writes.
    pub active: Arc<Segment>,
    /// The segment a flush is writing out (still read until its file is in `files`); `None`
    /// between flushes.
    pub snapshot: Option<Arc<Segment>>,
    /// The region's write point when `snapshot` was taken: what its file is tagged with, and
    /// how far the region may tell the WAL it flushed, even when a later flush retries it.
    pub snapshot_seq: u64,
    /// Oldest first (by max sequence id).
    pub files: Arc<Vec<Arc<StoreFile>>>,
}

/// What one read asks of a store: the part of a read's options the store and its files act
/// on.
#[derive(Clone, Copy, Debug)]
pub struct StoreRead<'a> {
    /// Cells newer than this stay hidden.
    pub read_point: u64,
    /// Files whose cells all fall outside it are skipped.
    pub time_range: TimeRange,
    /// A single-row read: files whose Bloom filter rules the row out are skipped.
    pub row: Option<&'a [u8]>,
    /// The qualifiers asked for (`None` = all): with one, a ROWCOL Bloom filter is asked.
    pub columns: Option<&'a [Vec<u8>]>,
    /// Files whose newest cell is older than this have expired (TTL) and are skipped.
    pub oldest_unexpired: i64,
    /// How the files' blocks are read (whether they fill the block cache).
    pub block_options: BlockReadOptions,
}

impl Default for StoreRead<'_> {
    fn default() -> Self {
        StoreRead {
            read_point: u64::MAX,
            time_range: TimeRange::default(),
            row: None,
            columns: None,
            oldest_unexpired: i64::MIN,
            block_options: BlockReadOptions::default(),
        }
    }
}

/// One column family of one region (HBase's `HStore`): a memstore (active segment and flush
/// snapshot) and the family's store files, oldest first.
pub struct Store {
    /// The family's schema, fixed when the store opened.
    pub family: ColumnFamilyDescriptor,
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    tmp_dir: PathBuf,
    state: RwLock<StoreState>,
    cache: Option<Arc<CombinedBlockCache>>,
    compaction_lock: Mutex<()>,
    /// Compacted inputs whose removal failed: every later compaction's output names them as
    /// replaced too (so the next open removes them even after that output is itself
    /// compacted away) and tries again to remove them.
    unretired: Mutex<Vec<String>>,
    /// Write flushed and compacted files with direct I/O ([`FileSystem::create_direct`]).
    direct_io: bool,
    /// Where compacted input files go instead of being deleted (HBase's archive directory);
    /// `None` deletes them.
    archive_dir: Option<PathBuf>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("dir", &self.dir).finish()
    }
}

impl Store {
    /// Opens the family directory `<region>/<family>`, dropping files an interrupted
    /// compaction already replaced.
    pub fn open(
        fs: Arc<dyn FileSystem>,
        region_dir: &Path,
        family: ColumnFamilyDescriptor,
        cache: Option<Arc<CombinedBlockCache>>,
        direct_io: bool,
    ) -> Result<Store> {
        let name = String::from_utf8_lossy(&family.name).into_owned();
        let dir = region_dir.join(&name);
        let tmp_dir = region_dir.join(TMP_DIR).join(&name);
        // The family directory's name is durable before a flush puts files in it: losing it
        // in a crash would lose them with it.
        fs.mkdirs_durable(&dir)
            .map_err(|e| RegionError::io(&dir, e))?;
        let mut files = Vec::new();
        let entries: Vec<_> = fs
            .list(&dir)
            .map_err(|e| RegionError::io(&dir, e))?
            .into_iter()
            .filter(|e| !e.is_dir)
            .filter(|e| {
                !e.path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        // References are opened last, once the replaced names are known: one a compaction
        // replaced may outlive its delete in a crash after its parent was archived, and must
        // then go without opening (its parent file is gone).
        let (references, plain): (Vec<_>, Vec<_>) = entries.into_iter().partition(|e| {
            e.path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| crate::reference::parse_reference_name(n).is_some())
        });
        for e in plain {
            files.push(Arc::new(StoreFile::open(
                &*fs,
                &e,
                &family,
                cache.as_ref(),
            )?));
        }
        let names: Vec<(String, Vec<String>)> = files
            .iter()
            .map(|f| {
                let replaced = f
                    .reader
                    .file_info()
                    .get(COMPACTION_EVENT_KEY)
                    .and_then(|v| v.strip_prefix(b"PBUF"))
                    .and_then(|b| CompactionEventTracker::decode(b).ok())
                    .map(|t| t.compacted_store_file)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|n| String::from_utf8_lossy(&n).into_owned())
                    .collect();
                (f.name(), replaced)
            })
            .collect();
        let replaced = replaced_files(&names);
        let mut removed = Vec::new();
        files.retain(|f| {
            if replaced.contains(&f.name()) {
                let _ = fs.delete(&f.path);
                removed.push(f.name());
                false
            } else {
                true
            }
        });
        for e in references {
            let name = e
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if replaced.contains(&name) {
                let _ = fs.delete(&e.path);
                removed.push(name);
            } else {
                files.push(Arc::new(StoreFile::open(
                    &*fs,
                    &e,
                    &family,
                    cache.as_ref(),
                )?));
            }
        }
        // Until their deletes are durable, later outputs name them again.
        if !removed.is_empty() && fs.sync_dir(&dir).is_ok() {
            removed.retain(|n| fs.status(&dir.join(n)).is_ok());
        }
        sort_files(&mut files);
        Ok(Store {
            family,
            fs,
            dir,
            tmp_dir,
            state: RwLock::new(StoreState {
                active: Arc::new(Segment::new()),
                snapshot: None,
                snapshot_seq: 0,
                files: Arc::new(files),
            }),
            cache,
            compaction_lock: Mutex::new(()),
            unretired: Mutex::new(removed),
            direct_io,
            archive_dir: None,
        })
    }

    /// The family directory, `<region>/<family>`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The current segments and files (cheap: shared pointers cloned).
    pub fn state(&self) -> StoreState {
        self.state.read().clone()
    }

    /// Adds a cell to the active segment; returns how much the memstore grew (negative when
    /// it replaced a larger equal cell).
    pub fn add(&self, kv: Arc<KeyValue>) -> i64 {
        self.state.read().active.add(kv)
    }

    /// Bytes in the active segment and the flush snapshot.
    pub fn memstore_size(&self) -> u64 {
        let s = self.state.read();
        s.active.heap_size() + s.snapshot.as_ref().map_or(0, |x| x.heap_size())
    }

    /// The highest sequence id in the store files (0 with none): WAL edits at or below it are
    /// already on disk and are not replayed into this store.
    pub fn max_sequence_id(&self) -> u64 {
        self.state
            .read()
            .files
            .iter()
            .map(|f| f.max_sequence_id)
            .max()
            .unwrap_or(0)
    }

    /// Store files in the store, the count compaction policy and `storeFileCount` look at.
    pub fn file_count(&self) -> usize {
        self.state.read().files.len()
    }

    /// Total length of the store files in bytes (`storeFileSize`).
    pub fn files_size(&self) -> u64 {
        self.state.read().files.iter().map(|f| f.size).sum()
    }

    /// Moves the active segment to the snapshot (the caller holds the region's update lock
    /// so no write is half-applied). A snapshot left by a failed flush is kept and returned.
    pub fn snapshot(&self) -> Option<Arc<Segment>> {
        self.snapshot_at(u64::MAX).map(|(snap, _)| snap)
    }

    /// [`snapshot`](Self::snapshot) for a flush at the region's write point `seq`; also
    /// returns the write point the snapshot was taken at, which for a snapshot left by a
    /// failed flush is that flush's, not `seq`: writes since then are in the active segment,
    /// so neither the file nor the WAL may count them as flushed.
    pub fn snapshot_at(&self, seq: u64) -> Option<(Arc<Segment>, u64)> {
        let mut s = self.state.write();
        if let Some(snap) = &s.snapshot {
            // A previous flush failed; new writes stay in the active segment until it lands.
            return Some((snap.clone(), s.snapshot_seq));
        }
        if s.active.is_empty() {
            return None;
        }
        let snap = std::mem::replace(&mut s.active, Arc::new(Segment::new()));
        s.snapshot = Some(snap.clone());
        s.snapshot_seq = seq;
        Some((snap, seq))
    }

    /// Writes the snapshot to a new store file tagged with the region's flush sequence id.
    /// Like HBase's flush, the cells pass the minor-compaction matcher on the way: versions
    /// beyond VERSIONS, expired cells and puts masked by a marker in the snapshot are
    /// dropped (markers stay), except what a reader at `smallest_read_point` may still see.
    pub fn flush_snapshot(
        &self,
        snap: &Arc<Segment>,
        flush_seq: u64,
        smallest_read_point: u64,
    ) -> Result<Option<u64>> {
        let include_tags = snap.iter().any(|c| !c.0.as_cell().tags.is_empty());
        let heap = KeyValueHeap::new(vec![Box::new(SegmentCursor::new(snap))]);
        let mut outcome = CompactionOutcome::default();
        // A retried flush names the earlier attempt's file if it may still be on disk.
        let replaced = self.unretired.lock().clone();
        let (path, written) = self.write_through_matcher(
            heap,
            MatchMode::MinorCompaction,
            smallest_read_point,
            include_tags,
            flush_seq.max(snap.max_sequence_id()),
            &replaced,
            Throttle::default(),
            &mut outcome,
        )?;
        let file = Arc::new(self.open_committed(&path)?);
        let keep = file.reader.entry_count() > 0;
        {
            let mut s = self.state.write();
            let mut files = (*s.files).clone();
            if keep {
                files.push(file);
            }
            sort_files(&mut files);
            s.files = Arc::new(files);
            s.snapshot = None;
        }
        if !replaced.is_empty() {
            self.retry_unretired(Vec::new());
        }
        // An empty file that names files left behind stays until they go.
        if !keep && self.unretired.lock().is_empty() {
            let _ = self.fs.delete(&path);
        }
        Ok(Some(written))
    }

    /// Opens a file just renamed into the family directory. If that fails, the file is
    /// taken back out: the flush or compaction fails and is retried, and a copy left behind
    /// would hold the same cells as the retry's file (and load at the next open). The
    /// delete may fail, or be lost in a crash before the directory is synced, so the name
    /// also joins the unretired ones that the retry's output (and every later output) names
    /// as replaced.
    fn open_committed(&self, path: &Path) -> Result<StoreFile> {
        self.open_file(path).inspect_err(|_| {
            let _ = self.fs.delete(path);
            let _ = self.fs.sync_dir(&self.dir);
            if let Some(name) = path.file_name() {
                self.unretired
                    .lock()
                    .push(name.to_string_lossy().into_owned());
            }
        })
    }

    /// Adds `also` (files just retired) to the unretired files and tries again to remove
    /// them all. A name is forgotten only once the file is gone and a directory sync made
    /// that durable.
    fn retry_unretired(&self, also: Vec<String>) {
        let mut pending = self.unretired.lock();
        pending.extend(also);
        let gone: Vec<String> = pending
            .iter()
            .filter(|name| self.fs.delete(&self.dir.join(name)).is_ok())
            .cloned()
            .collect();
        if self.fs.sync_dir(&self.dir).is_ok() {
            pending.retain(|name| !gone.contains(name));
        }
    }

    fn open_file(&self, path: &Path) -> Result<StoreFile> {
        let status = self.fs.status(path).map_err(|e| RegionError::io(path, e))?;
        StoreFile::open(&*self.fs, &status, &self.family, self.cache.as_ref())
    }

    fn finish_file(
        &self,
        mut w: HFileWriter<Box<dyn FsOutput>>,
        tmp: &Path,
        name: &str,
        max_seq: u64,
        major: bool,
        replaced: &[String],
    ) -> Result<(PathBuf, u64)> {
        w.append_file_info(keys::MAX_SEQ_ID_KEY, &(max_seq as i64).to_be_bytes())?;
        // Bytes.toBytes(boolean), as HBase writes it: 0xff for true.
        w.append_file_info(keys::MAJOR_COMPACTION_KEY, &[if major { 0xff } else { 0 }])?;
        // StoreFileWriter.close: every live (non-historical) store file says so.
        w.append_file_info(b"HISTORICAL", &[0])?;
        if !replaced.is_empty() {
            let t = CompactionEventTracker {
                compacted_store_file: replaced.iter().map(|n| n.as_bytes().to_vec()).collect(),
            };
            let mut v = b"PBUF".to_vec();
            t.encode(&mut v).expect("vec grows");
            w.append_file_info(COMPACTION_EVENT_KEY, &v)?;
        }
        let (mut out, summary) = w.finish()?;
        out.hsync().map_err(|e| RegionError::io(tmp, e))?;
        out.close().map_err(|e| RegionError::io(tmp, e))?;
        let path = self.dir.join(name);
        self.fs
            .rename(tmp, &path)
            .map_err(|e| RegionError::io(&path, e))?;
        // The file's name must be durable before anyone relies on it: a flush lets the WAL
        // drop the edits it holds, a compaction deletes its inputs. Without the directory
        // sync a crash could take the name back and leave neither. The flush or compaction
        // fails and is retried; the file is taken out again, and named by later outputs in
        // case the delete is what the crash loses.
        if let Err(e) = self.fs.sync_dir(&self.dir) {
            let _ = self.fs.delete(&path);
            let _ = self.fs.sync_dir(&self.dir);
            self.unretired.lock().push(name.to_string());
            return Err(RegionError::io(&self.dir, e));
        }
        Ok((path, summary.file_len))
    }

    /// Scanners over what `read` may see, skipping files whose time range or Bloom filter
    /// rules them out.
    pub fn scanners(&self, read: &StoreRead<'_>) -> Result<Vec<Box<dyn CellScanner>>> {
        let mut out = Vec::new();
        self.add_scanners(read, &mut out)?;
        Ok(out)
    }

    /// [`scanners`](Self::scanners) added to `out`: a read over several stores collects
    /// them all in one list.
    pub fn add_scanners(
        &self,
        read: &StoreRead<'_>,
        out: &mut Vec<Box<dyn CellScanner>>,
    ) -> Result<()> {
        let StoreRead {
            read_point,
            time_range,
            row,
            columns,
            oldest_unexpired,
            block_options,
        } = *read;
        // Only what the scanners keep is cloned: every clone and drop of a shared count is a
        // write to a cache line the other cores' reads also write.
        let files = {
            let s = self.state.read();
            for seg in std::iter::once(&s.active).chain(s.snapshot.iter()) {
                if !seg.is_empty() {
                    out.push(Box::new(SegmentScanner::new(seg.clone(), read_point)));
                }
            }
            s.files.clone()
        };
        for f in files.iter().rev() {
            if let Some((lo, hi)) = f.time_range {
                if !time_range.overlaps(lo, hi) || hi < oldest_unexpired {
                    continue;
                }
            }
            // A ROWCOL filter is asked now, about the one column: the row's own data block
            // cannot say whether that column is in it without a search.
            if let (Some(row), Some([q])) = (row, columns) {
                if f.reader.bloom_type() == BloomType::RowCol
                    && !f.reader.may_contain_column(row, &self.family.name, q)?
                {
                    continue;
                }
            }
            // A bulk load still in progress (see `Store::add_bulk_loaded`).
            if f.visible_from > read_point {
                continue;
            }
            let scanner = StoreFileScanner::new(&f.reader, read_point, block_options)
                .with_cell_sequence_id(f.bulk_sequence_id);
            let scanner = if row.is_some() {
                scanner.for_one_row()
            } else {
                scanner
            };
            match &f.half {
                None => out.push(Box::new(scanner)),
                Some(half) if row.is_none_or(|r| half.contains_row(r)) => {
                    out.push(Box::new(HalfScanner::new(Box::new(scanner), half.clone())?))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Whether any store file is a reference to a parent region's file (a region holding
    /// references cannot split again, and its parent must stay).
    pub fn has_references(&self) -> bool {
        self.state().files.iter().any(|f| f.is_reference())
    }
}

/// The files that a kept file names as replaced, given each file's name and the names in
/// its compaction event tracker. A file is kept unless a kept file names it: a replaced
/// file's own list does not count (a retried flush names the compaction output that failed
/// to open, whose inputs stay).
fn replaced_files(names: &[(String, Vec<String>)]) -> std::collections::HashSet<String> {
    // Newer files name older ones, so this settles within one pass per generation; the
    // bound only guards against a cycle that a damaged directory could hold.
    let mut replaced = std::collections::HashSet::new();
    for _ in 0..=names.len() {
        let next: std::collections::HashSet<String> = names
            .iter()
            .filter(|(name, _)| !replaced.contains(name))
            .flat_map(|(_, r)| r.iter().cloned())
            .collect();
        if next == replaced {
            break;
        }
        replaced = next;
    }
    replaced
}

/// Seeks forward to `key`, or steps when no key could be built.
pub(crate) fn seek_or_next(heap: &mut KeyValueHeap<'_>, key: Option<Vec<u8>>) -> Result<()> {
    match key {
        Some(k) => heap.reseek(&k),
        None => heap.next(),
    }
}

fn sort_files(files: &mut [Arc<StoreFile>]) {
    // HBase's `StoreFileComparators.SEQ_ID`: oldest first, bigger first on ties.
    files.sort_by(|a, b| {
        a.max_sequence_id
            .cmp(&b.max_sequence_id)
            .then(b.size.cmp(&a.size))
            .then(a.path.cmp(&b.path))
    });
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_fs::LocalFileSystem;

    fn open(region_dir: &Path) -> Store {
        let fs: Arc<dyn FileSystem> = Arc::new(LocalFileSystem);
        Store::open(
            fs,
            region_dir,
            ColumnFamilyDescriptor::new("f"),
            None,
            false,
        )
        .unwrap()
    }

    fn kv(row: &str, ts: i64, seq: u64) -> Arc<KeyValue> {
        Arc::new(
            KeyValue::put(row.as_bytes(), b"f", b"q", ts, b"v")
                .unwrap()
                .with_sequence_id(seq),
        )
    }

    /// Flushes `cells` into one new file, as a region flush at sequence id `seq` does.
    fn flush(store: &Store, cells: &[Arc<KeyValue>], seq: u64) {
        for c in cells {
            store.add(c.clone());
        }
        let snap = store.snapshot().unwrap();
        store.flush_snapshot(&snap, seq, u64::MAX).unwrap();
    }

    fn file_names(store: &Store) -> Vec<String> {
        store.state().files.iter().map(|f| f.name()).collect()
    }

    fn replaced(names: &[(&str, &[&str])]) -> Vec<String> {
        let names: Vec<(String, Vec<String>)> = names
            .iter()
            .map(|(n, r)| (n.to_string(), r.iter().map(|x| x.to_string()).collect()))
            .collect();
        let mut out: Vec<String> = replaced_files(&names).into_iter().collect();
        out.sort();
        out
    }

    #[test]
    fn only_kept_files_name_files_replaced() {
        // A compaction chain: c2 replaced c1, and names c1's inputs too while their
        // deletes are not known to be durable.
        assert_eq!(
            replaced(&[
                ("c2", &["c1", "i1", "i2"]),
                ("c1", &["i1", "i2"]),
                ("i1", &[])
            ]),
            ["c1", "i1", "i2"]
        );
        // A retried flush f names the compaction output o that failed to open: o goes, and
        // o's inputs stay, since o never replaced them.
        assert_eq!(
            replaced(&[
                ("f", &["o"]),
                ("o", &["i1", "i2"]),
                ("i1", &[]),
                ("i2", &[])
            ]),
            ["o"]
        );
        // A later compaction c of those inputs names o too: everything but c goes.
        assert_eq!(
            replaced(&[
                ("c", &["i1", "i2", "o"]),
                ("f", &["o"]),
                ("o", &["i1", "i2"])
            ]),
            ["i1", "i2", "o"]
        );
        assert!(replaced(&[("a", &[]), ("b", &[])]).is_empty());
    }

    #[test]
    fn files_a_compaction_replaced_are_dropped_on_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        flush(&store, &[kv("a", 1, 1)], 1);
        flush(&store, &[kv("b", 1, 2)], 2);
        let inputs: Vec<(PathBuf, Vec<u8>)> = store
            .state()
            .files
            .iter()
            .map(|f| (f.path.clone(), std::fs::read(&f.path).unwrap()))
            .collect();
        let files = store.state().files.iter().cloned().collect();
        let out = store.compact(files, u64::MAX, Throttle::default()).unwrap();
        assert_eq!((out.files_in, out.files_out, out.cells_out), (2, 1, 2));
        let compacted = file_names(&store);
        // A crash after the new file was swapped in but before the inputs were deleted: they
        // are back on disk next to their replacement.
        for (path, bytes) in &inputs {
            std::fs::write(path, bytes).unwrap();
        }
        drop(store);
        let store = open(dir.path());
        assert_eq!(
            file_names(&store),
            compacted,
            "inputs listed in COMPACTION_EVENT_KEY"
        );
        for (path, _) in &inputs {
            assert!(!path.exists(), "{} deleted at open", path.display());
        }
        assert_eq!(store.max_sequence_id(), 2);
    }

    #[test]
    fn a_pending_snapshot_is_kept_until_its_flush_lands() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        assert!(store.snapshot().is_none(), "nothing to flush");
        store.add(kv("a", 1, 1));
        let first = store.snapshot().unwrap();
        // Its flush failed: writes go on into a new active segment, and the next flush
        // writes the same snapshot first.
        store.add(kv("b", 1, 2));
        let again = store.snapshot().unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(store.state().active.len(), 1);
        assert_eq!(
            store.memstore_size(),
            first.heap_size() + store.state().active.heap_size()
        );
        store.flush_snapshot(&again, 1, u64::MAX).unwrap();
        assert!(store.state().snapshot.is_none());
        assert_eq!((store.file_count(), store.max_sequence_id()), (1, 1));
        // Now the second write's segment is what a snapshot takes.
        let next = store.snapshot().unwrap();
        assert!(!Arc::ptr_eq(&first, &next) && next.len() == 1);
    }

    #[test]
    fn reads_skip_files_outside_their_time_range_or_ttl() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        flush(&store, &[kv("a", 100, 1), kv("b", 200, 1)], 1);
        flush(&store, &[kv("c", 300, 2), kv("d", 400, 2)], 2);
        let count = |read: StoreRead<'_>| store.scanners(&read).unwrap().len();
        assert_eq!(count(StoreRead::default()), 2);
        let range = |min, max| StoreRead {
            time_range: TimeRange::new(min, max),
            ..StoreRead::default()
        };
        assert_eq!(count(range(250, 500)), 1);
        assert_eq!(count(range(200, 300)), 1, "max is exclusive, min inclusive");
        assert_eq!(count(range(201, 300)), 0);
        let expired_before = |t| StoreRead {
            oldest_unexpired: t,
            ..StoreRead::default()
        };
        assert_eq!(
            count(expired_before(200)),
            2,
            "a file whose newest cell is unexpired stays"
        );
        assert_eq!(count(expired_before(201)), 1);
    }
}
