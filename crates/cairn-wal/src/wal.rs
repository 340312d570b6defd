//! The WAL itself: the append queue with group commit, the background syncer, rolling,
//! per-segment sequence id accounting, and opening with replay.
//!
//! Concurrency: appenders encode their record outside any lock, then append it to a shared
//! queue under `queue` and take a ticket (a transaction id, HBase's txid). Whoever needs its
//! ticket written and finds no leader becomes the leader: it takes the whole queue, releases
//! the lock, writes it with one write(2) (and one fdatasync if anyone queued asked for one),
//! then publishes how far the file is written and synced and wakes everyone. Appenders that
//! queued meanwhile wait and are either covered by that batch or lead the next one, so N
//! concurrent appenders cost about one syscall per batch (HBase's ring buffer and
//! `SyncRunner`s, without dedicated threads). Lock order: `queue`, then `writer`, then
//! `segments`; the leader never holds `queue` while doing I/O.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::segment::{self, HEADER_LEN};
use crate::{Durability, ReplayReport, WalEdit, WalError, WalOptions};

/// An `ASYNC_WAL` appender that finds this much queued writes it itself, so the queue stays
/// bounded however long the syncer interval is.
const ASYNC_WRITE_THRESHOLD: usize = 4 << 20;
/// Rounds a `SYNC_WAL` waiter spins before sleeping.
const SPINS: u32 = 64;
/// Queue buffers above this size are not kept for reuse after a batch.
const KEEP_BUFFER: usize = 8 << 20;

/// A write-ahead log over one directory. `Send + Sync`: share it with `Arc`.
pub struct Wal {
    shared: Arc<Shared>,
    syncer: Option<JoinHandle<()>>,
    closed: bool,
}

/// One segment of the WAL, as [`Wal::segments`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    /// The segment's id (its file name is `wal.<id as 20 digits>`).
    pub id: u64,
    /// The file.
    pub path: PathBuf,
    /// Bytes written (for the active segment: handed to the OS so far).
    pub size: u64,
    /// Highest sequence id per region among the edits in the segment.
    pub max_sequence_id: BTreeMap<Vec<u8>, u64>,
    /// True for the segment being appended to (never deleted).
    pub active: bool,
}

/// Counters for HBase-style WAL metrics (`appendCount`, `appendSize`, `syncTime`,
/// `rollRequest`, ...), all since [`Wal::open`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalStats {
    /// Edits appended (every durability but `SKIP_WAL`).
    pub appends: u64,
    /// `SKIP_WAL` appends, which wrote nothing.
    pub skipped_appends: u64,
    /// Record bytes appended, frames included.
    pub appended_bytes: u64,
    /// Batches written: one write(2) each, carrying `appends / batches` edits on average.
    pub batches: u64,
    /// Most edits written in one batch.
    pub max_batch_edits: u64,
    /// fdatasync calls, rolls included.
    pub fsyncs: u64,
    /// Time spent in write(2).
    pub write_time: Duration,
    /// Time spent in fdatasync.
    pub fsync_time: Duration,
    /// Segments rolled.
    pub rolls: u64,
    /// Segments deleted by [`Wal::mark_flushed`].
    pub segments_deleted: u64,
}

#[derive(Default)]
struct Counters {
    appends: AtomicU64,
    skipped_appends: AtomicU64,
    appended_bytes: AtomicU64,
    batches: AtomicU64,
    max_batch_edits: AtomicU64,
    fsyncs: AtomicU64,
    write_nanos: AtomicU64,
    fsync_nanos: AtomicU64,
    rolls: AtomicU64,
    segments_deleted: AtomicU64,
}

struct Shared {
    dir: PathBuf,
    options: WalOptions,
    queue: Mutex<Queue>,
    /// Signalled whenever a leader finishes (written/synced marks moved, or the WAL broke).
    done: Condvar,
    /// Wakes the syncer early (shutdown).
    wake_syncer: Condvar,
    writer: Mutex<Writer>,
    segments: Mutex<Segments>,
    stats: Counters,
    /// `Queue::written_txid`, readable without the lock by spinning waiters.
    written: AtomicU64,
}

struct Queue {
    /// Framed records not yet handed to a leader.
    buf: Vec<u8>,
    /// A cleared buffer kept from the previous batch, so steady state allocates nothing.
    spare: Vec<u8>,
    /// Highest sequence id per region among the records in `buf`.
    regions: HashMap<Vec<u8>, u64>,
    spare_regions: HashMap<Vec<u8>, u64>,
    buf_edits: u64,
    /// Ticket of the last record queued.
    next_txid: u64,
    /// Every ticket up to this is written to the OS.
    written_txid: u64,
    /// Every ticket up to this is fdatasync'ed.
    synced_txid: u64,
    /// Highest ticket whose owner waits for an fdatasync.
    fsync_wanted: u64,
    leader: bool,
    error: Option<String>,
    shutdown: bool,
}

struct Writer {
    file: File,
    id: u64,
    path: PathBuf,
    size: u64,
}

struct SegmentMeta {
    path: PathBuf,
    size: u64,
    regions: BTreeMap<Vec<u8>, u64>,
}

struct Segments {
    active_id: u64,
    active: SegmentMeta,
    closed: BTreeMap<u64, SegmentMeta>,
    /// Per region, the sequence id up to which it has flushed (HBase's
    /// `SequenceIdAccounting`, reduced to what deciding deletions needs).
    flushed: HashMap<Vec<u8>, u64>,
}

fn io_err(op: &'static str, path: &Path, offset: u64) -> impl FnOnce(io::Error) -> WalError {
    let path = path.to_path_buf();
    move |source| WalError::Io {
        op,
        path,
        offset,
        source,
    }
}

fn sync_dir(dir: &Path) -> Result<(), WalError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err("fsync directory", dir, 0))
}

/// Creates segment `id` atomically: the header goes to a temporary name, is synced and then
/// renamed, so a crash during a roll never leaves a segment with a torn header (which replay
/// would have to treat as damage).
fn create_segment(dir: &Path, id: u64) -> Result<Writer, WalError> {
    let path = segment::segment_path(dir, id);
    let tmp = dir.join(format!("{}.tmp", segment::segment_file_name(id)));
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)
        .map_err(io_err("create", &tmp, 0))?;
    file.write_all(&segment::encode_header(id))
        .map_err(io_err("write header of", &tmp, 0))?;
    file.sync_all().map_err(io_err("fsync", &tmp, 0))?;
    fs::rename(&tmp, &path).map_err(io_err("rename to segment", &tmp, 0))?;
    sync_dir(dir)?;
    Ok(Writer {
        file,
        id,
        path,
        size: HEADER_LEN as u64,
    })
}

thread_local! {
    /// Each appender encodes its record here, outside the queue lock.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl Wal {
    /// Opens (creating) the WAL directory: replays every existing segment in id order, calling
    /// `visit` for each edit whose checksum holds, then starts a new segment. Old segments stay
    /// on disk, tracked with the highest sequence id per region they hold, until
    /// [`Wal::mark_flushed`] allows deleting them.
    ///
    /// A segment that ends in a torn, zero-filled or damaged record is replayed up to it and
    /// the rest is reported in [`ReplayReport::dropped`]; replay goes on with the next segment.
    /// A segment with a damaged header is an error naming the file. An error from `visit`
    /// stops the open and is returned.
    pub fn open(
        dir: &Path,
        options: WalOptions,
        mut visit: impl FnMut(WalEdit) -> Result<(), WalError>,
    ) -> Result<(Wal, ReplayReport), WalError> {
        fs::create_dir_all(dir).map_err(io_err("create directory", dir, 0))?;
        let mut ids = Vec::new();
        for entry in fs::read_dir(dir).map_err(io_err("list", dir, 0))? {
            let entry = entry.map_err(io_err("list", dir, 0))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(id) = segment::parse_segment_file_name(name) {
                ids.push(id);
            } else if name
                .strip_suffix(".tmp")
                .and_then(segment::parse_segment_file_name)
                .is_some()
            {
                // A roll that crashed before its rename: it never held an edit.
                let p = entry.path();
                fs::remove_file(&p).map_err(io_err("remove", &p, 0))?;
            }
        }
        ids.sort_unstable();

        let mut report = ReplayReport::default();
        let mut closed = BTreeMap::new();
        for &id in &ids {
            let path = segment::segment_path(dir, id);
            let mut regions: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
            let scan = segment::scan_segment(&path, Some(id), |_, edit| {
                bump(&mut regions, &edit.region, edit.sequence_id);
                bump(&mut report.max_sequence_id, &edit.region, edit.sequence_id);
                report.edits += 1;
                report.cells += edit.cells.len() as u64;
                visit(edit)
            })?;
            report.segments += 1;
            report.dropped.extend(scan.dropped);
            closed.insert(
                id,
                SegmentMeta {
                    path,
                    size: scan.len,
                    regions,
                },
            );
        }

        let new_id = match ids.last() {
            None => 1,
            Some(&last) => last
                .checked_add(1)
                .ok_or_else(|| WalError::SegmentIdsExhausted {
                    path: segment::segment_path(dir, last),
                })?,
        };
        let writer = create_segment(dir, new_id)?;
        let segments = Segments {
            active_id: new_id,
            active: SegmentMeta {
                path: writer.path.clone(),
                size: writer.size,
                regions: BTreeMap::new(),
            },
            closed,
            flushed: HashMap::new(),
        };
        let shared = Arc::new(Shared {
            dir: dir.to_path_buf(),
            options,
            queue: Mutex::new(Queue {
                buf: Vec::new(),
                spare: Vec::new(),
                regions: HashMap::new(),
                spare_regions: HashMap::new(),
                buf_edits: 0,
                next_txid: 0,
                written_txid: 0,
                synced_txid: 0,
                fsync_wanted: 0,
                leader: false,
                error: None,
                shutdown: false,
            }),
            done: Condvar::new(),
            wake_syncer: Condvar::new(),
            writer: Mutex::new(writer),
            segments: Mutex::new(segments),
            stats: Counters::default(),
            written: AtomicU64::new(0),
        });
        let syncer = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("cairn-wal-syncer".into())
                .spawn(move || shared.run_syncer())
                .map_err(io_err("start the syncer thread for", dir, 0))?
        };
        Ok((
            Wal {
                shared,
                syncer: Some(syncer),
                closed: false,
            },
            report,
        ))
    }

    /// Appends one edit at the given durability (see the crate docs for what each level
    /// waits for). Concurrent appenders are written as one batch.
    pub fn append(&self, edit: &WalEdit, durability: Durability) -> Result<(), WalError> {
        if durability == Durability::SkipWal {
            self.shared.stats.skipped_appends.fetch_add(1, Relaxed);
            return Ok(());
        }
        SCRATCH.with(|scratch| {
            let mut record = scratch.borrow_mut();
            record.clear();
            segment::encode_record(edit, &mut record)?;
            let result = self.shared.enqueue(&record, edit, durability);
            if record.capacity() > KEEP_BUFFER {
                *record = Vec::new();
            }
            result
        })
    }

    /// Writes everything appended so far to the OS and, with `fsync`, to stable storage
    /// (HBase's `sync(forceSync)`: hflush or hsync).
    pub fn sync(&self, fsync: bool) -> Result<(), WalError> {
        let mut q = self.shared.queue.lock();
        let txid = q.next_txid;
        if fsync {
            q.fsync_wanted = q.fsync_wanted.max(txid);
        }
        self.shared.wait(q, txid, fsync)
    }

    /// Writes what is queued, fdatasyncs the active segment and starts a new one (HBase's log
    /// roll). Also done automatically when a segment passes [`WalOptions::roll_size`].
    pub fn roll(&self) -> Result<(), WalError> {
        let mut q = self.shared.queue.lock();
        while q.leader {
            self.shared.done.wait(&mut q);
        }
        if let Some(reason) = &q.error {
            return Err(WalError::Broken {
                reason: reason.clone(),
            });
        }
        self.shared.lead(&mut q, true)
    }

    /// Records that `region` has flushed everything up to `sequence_id` to store files, and
    /// deletes every closed segment in which each region has flushed past its highest
    /// sequence id. Returns how many segments were deleted. The active segment is never
    /// deleted ([`Wal::roll`] first to release it).
    pub fn mark_flushed(&self, region: &[u8], sequence_id: u64) -> Result<usize, WalError> {
        let mut s = self.shared.segments.lock();
        match s.flushed.get_mut(region) {
            Some(f) => *f = (*f).max(sequence_id),
            None => {
                s.flushed.insert(region.to_vec(), sequence_id);
            }
        }
        let flushed = &s.flushed;
        let deletable: Vec<u64> = s
            .closed
            .iter()
            .filter(|(_, seg)| {
                seg.regions
                    .iter()
                    .all(|(r, max)| flushed.get(r).is_some_and(|f| f >= max))
            })
            .map(|(&id, _)| id)
            .collect();
        // Deleting needs no directory fsync: a deleted segment that reappears after a machine
        // crash only replays edits the stores already hold, which replay skips by sequence id.
        let mut removed = 0;
        for id in deletable {
            let path = &s.closed[&id].path;
            match fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err("delete segment", path, 0)(e)),
            }
            s.closed.remove(&id);
            removed += 1;
        }
        self.shared
            .stats
            .segments_deleted
            .fetch_add(removed as u64, Relaxed);
        Ok(removed)
    }

    /// Every segment on disk, oldest first, the active one last.
    pub fn segments(&self) -> Vec<SegmentInfo> {
        let s = self.shared.segments.lock();
        let info = |id: u64, m: &SegmentMeta, active| SegmentInfo {
            id,
            path: m.path.clone(),
            size: m.size,
            max_sequence_id: m.regions.clone(),
            active,
        };
        let mut v: Vec<SegmentInfo> = s.closed.iter().map(|(&id, m)| info(id, m, false)).collect();
        v.push(info(s.active_id, &s.active, true));
        v
    }

    /// The directory this WAL writes to.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// The options the WAL was opened with.
    pub fn options(&self) -> &WalOptions {
        &self.shared.options
    }

    /// Counters since open.
    pub fn stats(&self) -> WalStats {
        let c = &self.shared.stats;
        WalStats {
            appends: c.appends.load(Relaxed),
            skipped_appends: c.skipped_appends.load(Relaxed),
            appended_bytes: c.appended_bytes.load(Relaxed),
            batches: c.batches.load(Relaxed),
            max_batch_edits: c.max_batch_edits.load(Relaxed),
            fsyncs: c.fsyncs.load(Relaxed),
            write_time: Duration::from_nanos(c.write_nanos.load(Relaxed)),
            fsync_time: Duration::from_nanos(c.fsync_nanos.load(Relaxed)),
            rolls: c.rolls.load(Relaxed),
            segments_deleted: c.segments_deleted.load(Relaxed),
        }
    }

    /// Stops the syncer, writes any queued `ASYNC_WAL` edits and fdatasyncs the active
    /// segment. Dropping a `Wal` does the same but cannot report a failure.
    pub fn close(mut self) -> Result<(), WalError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), WalError> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        self.shared.queue.lock().shutdown = true;
        self.shared.wake_syncer.notify_all();
        if let Some(syncer) = self.syncer.take() {
            // The syncer only returns or, on a bug, panics; its panic has been reported on
            // stderr and the final sync below still runs.
            let _ = syncer.join();
        }
        self.sync(true)
    }
}

impl Drop for Wal {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

fn bump(map: &mut BTreeMap<Vec<u8>, u64>, region: &[u8], sequence_id: u64) {
    match map.get_mut(region) {
        Some(m) => *m = (*m).max(sequence_id),
        None => {
            map.insert(region.to_vec(), sequence_id);
        }
    }
}

impl Shared {
    fn enqueue(
        &self,
        record: &[u8],
        edit: &WalEdit,
        durability: Durability,
    ) -> Result<(), WalError> {
        let mut q = self.queue.lock();
        if let Some(reason) = &q.error {
            return Err(WalError::Broken {
                reason: reason.clone(),
            });
        }
        q.buf.extend_from_slice(record);
        q.buf_edits += 1;
        match q.regions.get_mut(edit.region.as_slice()) {
            Some(m) => *m = (*m).max(edit.sequence_id),
            None => {
                q.regions.insert(edit.region.clone(), edit.sequence_id);
            }
        }
        q.next_txid += 1;
        let txid = q.next_txid;
        self.stats.appends.fetch_add(1, Relaxed);
        self.stats
            .appended_bytes
            .fetch_add(record.len() as u64, Relaxed);
        match durability {
            Durability::SkipWal => Ok(()),
            Durability::AsyncWal => {
                if q.buf.len() >= ASYNC_WRITE_THRESHOLD && !q.leader {
                    self.lead(&mut q, false)?;
                }
                Ok(())
            }
            Durability::SyncWal => self.wait(q, txid, false),
            Durability::FsyncWal => {
                q.fsync_wanted = q.fsync_wanted.max(txid);
                self.wait(q, txid, true)
            }
        }
    }

    /// Returns once ticket `txid` is written (or synced, with `fsync`), leading batches
    /// whenever nobody else is.
    fn wait(&self, mut q: MutexGuard<'_, Queue>, txid: u64, fsync: bool) -> Result<(), WalError> {
        loop {
            let reached = if fsync { q.synced_txid } else { q.written_txid };
            if reached >= txid {
                return Ok(());
            }
            if let Some(reason) = &q.error {
                return Err(WalError::Broken {
                    reason: reason.clone(),
                });
            }
            if q.leader {
                if !fsync && MutexGuard::unlocked(&mut q, || self.spin_until_written(txid)) {
                    return Ok(());
                }
                if q.leader {
                    self.done.wait(&mut q);
                }
            } else {
                self.lead(&mut q, false)?;
            }
        }
    }

    /// A write(2) takes about a microsecond: waiting for it by spinning (yielding, so that the
    /// leader gets a core) avoids a futex sleep and wake-up per append. Returns whether `txid`
    /// was written meanwhile.
    fn spin_until_written(&self, txid: u64) -> bool {
        for i in 0..SPINS {
            if self.written.load(Acquire) >= txid {
                return true;
            }
            if i % 8 == 7 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        false
    }

    /// Writes everything queued as one batch. Called with the queue locked and no leader;
    /// returns with it locked again, the marks moved and every waiter woken.
    fn lead(&self, q: &mut MutexGuard<'_, Queue>, force_roll: bool) -> Result<(), WalError> {
        debug_assert!(!q.leader);
        q.leader = true;
        let spare = std::mem::take(&mut q.spare);
        let mut batch = std::mem::replace(&mut q.buf, spare);
        let spare_regions = std::mem::take(&mut q.spare_regions);
        let mut regions = std::mem::replace(&mut q.regions, spare_regions);
        let edits = std::mem::take(&mut q.buf_edits);
        let end = q.next_txid;
        let fsync = q.fsync_wanted > q.synced_txid;
        let result = MutexGuard::unlocked(q, || {
            self.write_batch(&batch, &regions, edits, fsync, force_roll)
        });
        if batch.capacity() <= KEEP_BUFFER {
            batch.clear();
            q.spare = batch;
        }
        regions.clear();
        q.spare_regions = regions;
        q.leader = false;
        let result = match result {
            Ok(durable) => {
                q.written_txid = end;
                self.written.store(end, Release);
                if durable {
                    q.synced_txid = end;
                }
                Ok(())
            }
            Err(e) => {
                q.error = Some(e.to_string());
                Err(e)
            }
        };
        self.done.notify_all();
        result
    }

    /// The leader's I/O. Returns whether everything written so far is also fdatasync'ed.
    fn write_batch(
        &self,
        batch: &[u8],
        regions: &HashMap<Vec<u8>, u64>,
        edits: u64,
        fsync: bool,
        force_roll: bool,
    ) -> Result<bool, WalError> {
        let mut w = self.writer.lock();
        if !batch.is_empty() {
            let t = Instant::now();
            let offset = w.size;
            w.file
                .write_all(batch)
                .map_err(io_err("append to", &w.path, offset))?;
            self.stats
                .write_nanos
                .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
            self.stats.batches.fetch_add(1, Relaxed);
            self.stats.max_batch_edits.fetch_max(edits, Relaxed);
            w.size += batch.len() as u64;
            let mut s = self.segments.lock();
            s.active.size = w.size;
            for (region, &seq) in regions {
                bump(&mut s.active.regions, region, seq);
            }
        }
        let mut durable = false;
        if fsync {
            self.fsync(&w)?;
            durable = true;
        }
        if force_roll || w.size >= self.options.roll_size {
            self.roll_locked(&mut w)?;
            durable = true;
        }
        Ok(durable)
    }

    fn fsync(&self, w: &Writer) -> Result<(), WalError> {
        let t = Instant::now();
        w.file
            .sync_data()
            .map_err(io_err("fdatasync", &w.path, w.size))?;
        self.stats
            .fsync_nanos
            .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
        self.stats.fsyncs.fetch_add(1, Relaxed);
        Ok(())
    }

    /// Seals the active segment and starts the next. The old one is fdatasync'ed first so that
    /// after a machine crash only the newest segment can have a torn tail.
    fn roll_locked(&self, w: &mut Writer) -> Result<(), WalError> {
        self.fsync(w)?;
        let id = w.id.checked_add(1).ok_or(WalError::SegmentIdsExhausted {
            path: w.path.clone(),
        })?;
        let next = create_segment(&self.dir, id)?;
        *w = next;
        let mut s = self.segments.lock();
        let active = SegmentMeta {
            path: w.path.clone(),
            size: w.size,
            regions: BTreeMap::new(),
        };
        let old = std::mem::replace(&mut s.active, active);
        let old_id = std::mem::replace(&mut s.active_id, id);
        s.closed.insert(old_id, old);
        self.stats.rolls.fetch_add(1, Relaxed);
        Ok(())
    }

    /// The `ASYNC_WAL` syncer: every interval, writes whatever is queued (without fdatasync:
    /// the same guarantee as `SYNC_WAL`, just later).
    fn run_syncer(&self) {
        let mut q = self.queue.lock();
        loop {
            if q.shutdown {
                return;
            }
            self.wake_syncer
                .wait_for(&mut q, self.options.async_sync_interval);
            while q.leader && !q.shutdown {
                self.done.wait(&mut q);
            }
            if q.shutdown {
                return;
            }
            if q.error.is_none() && q.next_txid > q.written_txid {
                // A failure is recorded in the queue and reported to every later appender.
                let _ = self.lead(&mut q, false);
            }
        }
    }
}
