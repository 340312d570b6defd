//! The WAL itself: appends into the mapped active segment, group commit for `FSYNC_WAL`, the
//! background thread (prepares the next segment, prefaults the active one), rolling,
//! per-segment sequence id accounting, and opening with replay.
//!
//! Concurrency: an appender encodes its record outside any lock (into a thread-local buffer),
//! then, under the one `active` lock, takes the current offset, copies the record into the
//! mapping and advances the offset: appends are totally ordered and an acknowledged append
//! has every byte before it written (no holes). `SYNC_WAL` and `ASYNC_WAL` return right there,
//! with no system call. `FSYNC_WAL` then waits for a flush covering its log position (`lsn`,
//! bytes appended since open): the first waiter to find no flush running leads one (notes the
//! current end under `active`, fdatasyncs without any lock held) and everyone who had copied
//! before it is covered; the others wait on `synced` or lead the next one.
//!
//! A roll (when a record does not fit) happens inside the `active` lock: the next segment is
//! normally already created, preallocated, mapped and prefaulted by the background thread, so
//! the roll only truncates and fdatasyncs the old segment and renames the new one into place.
//!
//! Lock order: `active`, then `closed`, `sync` or `bg` (never two of the latter together).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::mapped::{self, io_err, Segment};
use crate::segment::{self, HEADER_LEN};
use crate::{Durability, ReplayReport, WalEdit, WalError, WalOptions};

/// Thread-local encode buffers above this size are not kept.
const KEEP_BUFFER: usize = 8 << 20;
/// The background thread keeps this much of the active segment ahead of the writer
/// prefaulted...
const PREFAULT_AHEAD: u64 = mapped::PREFAULT_FIRST;
/// ...and is asked to move that window each time the writer has advanced this far.
const PREFAULT_STEP: u64 = 1 << 20;
/// One append in this many is timed, for [`WalStats::write_time`].
const TIME_SAMPLE: u64 = 64;
/// Largest segment mapping: a larger `roll_size` rolls at this size.
const MAX_SEGMENT: u64 = 1 << 30;
const HEADER: u64 = HEADER_LEN as u64;
/// How long [`Wal::open`] waits for another WAL to release the directory.
const LOCK_WAIT: Duration = Duration::from_secs(3);

/// The write-ahead log on local disk: preallocated, memory-mapped segments in one locked
/// directory. Reached through [`crate::Wal`].
pub(crate) struct MappedWal {
    shared: Arc<Shared>,
    background: Option<JoinHandle<()>>,
    closed: bool,
}

/// One segment of the WAL, as [`Wal::segments`](crate::Wal::segments) lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    /// The segment's id (its file name is `wal.<id as 20 digits>`).
    pub id: u64,
    /// The file.
    pub path: PathBuf,
    /// Bytes written, header included (the active segment's file is longer: preallocated).
    pub size: u64,
    /// Highest sequence id per region among the edits in the segment.
    pub max_sequence_id: BTreeMap<Vec<u8>, u64>,
    /// True for the segment being appended to (never deleted).
    pub active: bool,
}

/// Counters for HBase-style WAL metrics (`appendCount`, `appendSize`, `syncTime`,
/// `rollRequest`, ...), all since [`Wal::open`](crate::Wal::open).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalStats {
    /// Edits appended (every durability but `SKIP_WAL`).
    pub appends: u64,
    /// `SKIP_WAL` appends, which wrote nothing.
    pub skipped_appends: u64,
    /// Record bytes appended, frames included.
    pub appended_bytes: u64,
    /// Group commits: flushes led for `FSYNC_WAL` appenders (or [`Wal::sync`](crate::Wal::sync)`(true)`), each
    /// covering every append copied before it. `SYNC_WAL` and `ASYNC_WAL` appends are single
    /// copies into the mapped segment and need no batch.
    pub batches: u64,
    /// Most appends made durable by one group commit.
    pub max_batch_edits: u64,
    /// fdatasync calls, rolls and close included.
    pub fsyncs: u64,
    /// Time spent copying records into the segment (lock wait included; estimated from one
    /// append in 64).
    pub write_time: Duration,
    /// Time spent in fdatasync.
    pub fsync_time: Duration,
    /// Segments rolled.
    pub rolls: u64,
    /// Segments deleted by [`Wal::mark_flushed`](crate::Wal::mark_flushed) (recycled ones not counted).
    pub segments_deleted: u64,
    /// Segments whose file was kept by [`Wal::mark_flushed`](crate::Wal::mark_flushed) for reuse
    /// ([`WalOptions::recycled_segments`]).
    pub segments_recycled: u64,
    /// New segments made from a kept file.
    pub segments_reused: u64,
}

#[derive(Default)]
struct Counters {
    skipped_appends: AtomicU64,
    batches: AtomicU64,
    max_batch_edits: AtomicU64,
    fsyncs: AtomicU64,
    fsync_nanos: AtomicU64,
    rolls: AtomicU64,
    segments_deleted: AtomicU64,
    segments_recycled: AtomicU64,
    segments_reused: AtomicU64,
}

struct Shared {
    dir: PathBuf,
    options: WalOptions,
    /// Bytes a new segment is preallocated and mapped with.
    capacity: u64,
    active: Mutex<Active>,
    closed: Mutex<Closed>,
    sync: Mutex<SyncState>,
    /// Signalled when a group commit ends.
    synced: Condvar,
    bg: Mutex<Background>,
    /// Rolled-away segments waiting to be truncated and fdatasync'ed, oldest first.
    seal_queue: Mutex<std::collections::VecDeque<SealJob>>,
    /// Held by whoever seals queued segments, so they are sealed in order.
    sealer: Mutex<()>,
    /// Wakes the background thread.
    bg_wake: Condvar,
    /// Signalled when the background thread has finished preparing a segment.
    bg_prepared: Condvar,
    /// Set once a write, sync or roll failed; the reason is in `broken_reason`.
    broken: AtomicBool,
    broken_reason: Mutex<Option<String>>,
    /// Highest segment id whose directory entry is known to be on stable storage.
    durable_name: AtomicU64,
    stats: Counters,
    /// An open handle on the directory holding an exclusive `flock` for the WAL's lifetime:
    /// no second WAL (in this process or another) opens, replays or truncates these segments.
    _dir_lock: File,
}

/// Per-segment "highest sequence id per region": a hash map keyed by the region name, with
/// a fast non-cryptographic hash (region names are chosen by the server, not by clients).
type RegionMax = HashMap<Box<[u8]>, u64, BuildHasherDefault<FxHasher>>;

/// The Fx hash (as in rustc): one multiply per 8 bytes.
#[derive(Default)]
struct FxHasher(u64);

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

struct Active {
    seg: Segment,
    /// Bytes written into `seg`, header included.
    offset: u64,
    /// Roll when a record would end past this (min of capacity and roll size).
    limit: u64,
    /// Record bytes appended since open, across segments: the log position.
    lsn: u64,
    appends: u64,
    appended_bytes: u64,
    write_nanos: u64,
    regions: RegionMax,
    /// Ask the background thread to prefault further once `offset` passes this.
    prefault_at: u64,
}

struct SegmentMeta {
    size: u64,
    regions: BTreeMap<Vec<u8>, u64>,
}

struct Closed {
    segments: BTreeMap<u64, SegmentMeta>,
    /// Per region, the sequence id up to which it has flushed (HBase's
    /// `SequenceIdAccounting`, reduced to what deciding deletions needs).
    flushed: HashMap<Vec<u8>, u64>,
    /// Files of flushed segments waiting to be reused ([`mapped::free_path`]).
    free: Vec<PathBuf>,
}

struct SyncState {
    /// Every log position up to this is on stable storage.
    synced_lsn: u64,
    /// `Active::appends` when `synced_lsn` was last moved by a flush or roll.
    synced_appends: u64,
    /// A group commit is running.
    flushing: bool,
}

/// A segment the writer has rolled away from, to be sealed off the append path.
struct SealJob {
    seg: Segment,
    /// Bytes written, header included: the segment is truncated to this.
    size: u64,
    /// Log position and append count at its end: durable once it is sealed.
    end_lsn: u64,
    appends: u64,
}

#[derive(Default)]
struct Background {
    /// The segment to prepare next (the active one's id + 1).
    next_id: u64,
    /// `next_id` is to be prepared.
    prepare: bool,
    /// Preparing it right now.
    preparing: bool,
    /// A prepared segment, still under its temporary name.
    prepared: Option<Segment>,
    /// The writer has moved on: prefault further ahead.
    prefault: bool,
    /// A rolled-away segment is waiting to be sealed.
    seal: bool,
    shutdown: bool,
}

fn sync_dir(dir: &Path) -> Result<(), WalError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err("fsync directory", dir, 0))
}

/// Takes the exclusive lock on the WAL directory, waiting up to [`LOCK_WAIT`] for a previous
/// WAL on it to go away (e.g. one still referenced by threads of a server being dropped).
fn lock_dir(dir: &Path) -> Result<File, WalError> {
    let handle = File::open(dir).map_err(io_err("open directory", dir, 0))?;
    let started = Instant::now();
    loop {
        match handle.try_lock() {
            Ok(()) => return Ok(handle),
            Err(fs::TryLockError::WouldBlock) if started.elapsed() < LOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(WalError::Io {
                    op: "lock (another WAL has it open)",
                    path: dir.to_path_buf(),
                    offset: 0,
                    source: io::ErrorKind::WouldBlock.into(),
                })
            }
            Err(fs::TryLockError::Error(e)) => return Err(io_err("lock", dir, 0)(e)),
        }
    }
}

/// Truncates a replayed segment to the `end` of its records: it had a zero-filled tail (a
/// preallocated segment whose writer died without sealing it).
fn trim_zero_tail(path: &Path, end: u64) -> Result<(), WalError> {
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io_err("open", path, 0))?;
    file.set_len(end)
        .and_then(|()| file.sync_data())
        .map_err(io_err("truncate the zero-filled tail of", path, end))
}

/// Segment `id` prepared in the kept file `free` if given (a file that cannot be reused is
/// deleted and a new one made instead); also says whether the file was reused.
fn prepare_segment(
    dir: &Path,
    id: u64,
    capacity: u64,
    free: Option<PathBuf>,
) -> Result<(Segment, bool), WalError> {
    if let Some(free) = free {
        match Segment::prepare_recycled(dir, id, capacity, &free) {
            Ok(seg) => return Ok((seg, true)),
            Err(_) => {
                let _ = fs::remove_file(&free);
                let _ = fs::remove_file(mapped::tmp_path(dir, id));
            }
        }
    }
    Ok((Segment::prepare(dir, id, capacity)?, false))
}

thread_local! {
    /// Each appender encodes its record here, outside the lock.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl MappedWal {
    /// Opens (creating) the WAL directory: replays every existing segment in id order, calling
    /// `visit` for each edit whose checksum holds, then starts a new segment. Old segments stay
    /// on disk, tracked with the highest sequence id per region they hold, until
    /// [`Wal::mark_flushed`] allows deleting them. The directory is locked (`flock`) while the
    /// WAL is open: a second open of it waits up to 3 s for the first WAL to be closed or
    /// dropped, then fails.
    ///
    /// A segment that ends in a torn or damaged record is replayed up to it and the rest is
    /// reported in [`ReplayReport::dropped`]; replay goes on with the next segment. A segment
    /// that ends in zeros (the preallocated tail a crashed writer leaves) is not a drop: the
    /// zeros are truncated away. A segment with a damaged header is an error naming the file.
    /// An error from `visit` stops the open and is returned.
    pub fn open(
        dir: &Path,
        options: WalOptions,
        mut visit: impl FnMut(WalEdit) -> Result<(), WalError>,
    ) -> Result<(MappedWal, ReplayReport), WalError> {
        fs::create_dir_all(dir).map_err(io_err("create directory", dir, 0))?;
        let dir_lock = lock_dir(dir)?;
        let mut ids = Vec::new();
        let mut free = Vec::new();
        for entry in fs::read_dir(dir).map_err(io_err("list", dir, 0))? {
            let entry = entry.map_err(io_err("list", dir, 0))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(id) = segment::parse_segment_file_name(name) {
                ids.push(id);
            } else if name
                .strip_suffix(".free")
                .and_then(segment::parse_segment_file_name)
                .is_some()
            {
                // A flushed segment's file kept for reuse: it holds nothing to replay.
                if free.len() < options.recycled_segments {
                    free.push(entry.path());
                } else {
                    let p = entry.path();
                    fs::remove_file(&p).map_err(io_err("remove", &p, 0))?;
                }
            } else if name
                .strip_suffix(".tmp")
                .and_then(segment::parse_segment_file_name)
                .is_some()
            {
                // A segment prepared but never used (or a roll that crashed before its
                // rename): it never held an edit.
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
            let size = match scan.dropped {
                Some(d) => {
                    report.dropped.push(d);
                    scan.len
                }
                None if scan.end < scan.len => {
                    trim_zero_tail(&path, scan.end)?;
                    scan.end
                }
                None => scan.len,
            };
            closed.insert(id, SegmentMeta { size, regions });
        }

        let new_id = match ids.last() {
            None => 1,
            Some(&last) => last
                .checked_add(1)
                .ok_or_else(|| WalError::SegmentIdsExhausted {
                    path: segment::segment_path(dir, last),
                })?,
        };
        let capacity = segment_capacity(options.roll_size);
        let seg = prepare_segment(dir, new_id, capacity, free.pop())?.0;
        mapped::publish(dir, new_id)?;
        sync_dir(dir)?;
        let limit = options.roll_size.min(seg.capacity());
        let shared = Arc::new(Shared {
            dir: dir.to_path_buf(),
            capacity,
            active: Mutex::new(Active {
                seg,
                offset: HEADER,
                limit,
                lsn: 0,
                appends: 0,
                appended_bytes: 0,
                write_nanos: 0,
                regions: RegionMax::default(),
                prefault_at: PREFAULT_STEP,
            }),
            closed: Mutex::new(Closed {
                segments: closed,
                flushed: HashMap::new(),
                free,
            }),
            sync: Mutex::new(SyncState {
                synced_lsn: 0,
                synced_appends: 0,
                flushing: false,
            }),
            synced: Condvar::new(),
            bg: Mutex::new(Background {
                next_id: new_id.saturating_add(1),
                prepare: new_id < u64::MAX,
                ..Background::default()
            }),
            seal_queue: Mutex::new(std::collections::VecDeque::new()),
            sealer: Mutex::new(()),
            bg_wake: Condvar::new(),
            bg_prepared: Condvar::new(),
            broken: AtomicBool::new(false),
            broken_reason: Mutex::new(None),
            durable_name: AtomicU64::new(new_id),
            stats: Counters::default(),
            options,
            _dir_lock: dir_lock,
        });
        let background = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("cairn-wal-syncer".into())
                .spawn(move || shared.run_background())
                .map_err(io_err("start the background thread for", dir, 0))?
        };
        Ok((
            MappedWal {
                shared,
                background: Some(background),
                closed: false,
            },
            report,
        ))
    }

    /// Appends one edit at the given durability (see the crate docs for what each level
    /// waits for). `SYNC_WAL` and `ASYNC_WAL` copy the record into the mapped segment and
    /// return; concurrent `FSYNC_WAL` appenders share one fdatasync.
    pub fn append(&self, edit: &WalEdit, durability: Durability) -> Result<(), WalError> {
        if durability == Durability::SkipWal {
            self.shared.stats.skipped_appends.fetch_add(1, Relaxed);
            return Ok(());
        }
        let lsn = SCRATCH.with(|scratch| {
            let mut record = scratch.borrow_mut();
            record.clear();
            let result = segment::encode_record(edit, &mut record)
                .and_then(|_| self.shared.copy(&mut record, edit));
            if record.capacity() > KEEP_BUFFER {
                *record = Vec::new();
            }
            result
        })?;
        if durability == Durability::FsyncWal {
            self.shared.sync_to(lsn)?;
        }
        Ok(())
    }

    /// Makes everything appended so far survive a process crash (it already does: appends are
    /// in the page cache once they return) and, with `fsync`, a machine crash (fdatasync;
    /// HBase's `sync(forceSync)`: hflush or hsync). Fails if the WAL is broken.
    pub fn sync(&self, fsync: bool) -> Result<(), WalError> {
        let lsn = self.shared.active.lock().lsn;
        self.shared.check()?;
        if fsync {
            self.shared.sync_to(lsn)?;
        }
        Ok(())
    }

    /// Seals the active segment (truncated to what was written, fdatasync'ed) and starts a new
    /// one (HBase's log roll). Also done automatically when a record would take the active
    /// segment past [`WalOptions::roll_size`]; then the background thread seals the old
    /// segment, so writers do not wait for its fdatasync.
    pub fn roll(&self) -> Result<(), WalError> {
        let mut a = self.shared.active.lock();
        self.shared.check()?;
        let result = self.shared.roll_locked(&mut a, 0);
        drop(a);
        if let Err(e) = &result {
            self.shared.fail(e);
        }
        result?;
        // An explicit roll returns with the old segment sealed.
        self.shared.seal_pending()
    }

    /// Records that `region` has flushed everything up to `sequence_id` to store files, and
    /// deletes every closed segment in which each region has flushed past its highest
    /// sequence id. Returns how many segments were deleted. The active segment is never
    /// deleted ([`Wal::roll`] first to release it).
    pub fn mark_flushed(&self, region: &[u8], sequence_id: u64) -> Result<usize, WalError> {
        let mut c = self.shared.closed.lock();
        match c.flushed.get_mut(region) {
            Some(f) => *f = (*f).max(sequence_id),
            None => {
                c.flushed.insert(region.to_vec(), sequence_id);
            }
        }
        let flushed = &c.flushed;
        let deletable = segment::flushed_segments(
            c.segments.iter().map(|(&id, seg)| (id, &seg.regions)),
            |r| flushed.get(r).copied(),
        );
        // Deleting (or renaming for reuse) needs no directory fsync: a segment that reappears
        // after a machine crash only replays edits the stores already hold, which replay skips
        // by sequence id. A recycled file is renamed again, durably, before it is rewritten.
        let mut removed = 0;
        let mut recycled = 0;
        for id in deletable {
            let path = segment::segment_path(&self.shared.dir, id);
            // Only a sealed segment's file may be reused: the sealer truncates the file of a
            // queued one.
            let keep = c.free.len() < self.shared.options.recycled_segments
                && !self
                    .shared
                    .seal_queue
                    .lock()
                    .iter()
                    .any(|j| j.seg.id() == id);
            let free = mapped::free_path(&self.shared.dir, id);
            let done = if keep {
                fs::rename(&path, &free)
            } else {
                fs::remove_file(&path)
            };
            match done {
                Ok(()) if keep => {
                    c.free.push(free);
                    recycled += 1;
                }
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => {
                    let op = if keep {
                        "keep for reuse (rename) segment"
                    } else {
                        "delete segment"
                    };
                    return Err(io_err(op, &path, 0)(e));
                }
            }
            c.segments.remove(&id);
            removed += 1;
        }
        self.shared
            .stats
            .segments_deleted
            .fetch_add((removed - recycled) as u64, Relaxed);
        self.shared
            .stats
            .segments_recycled
            .fetch_add(recycled as u64, Relaxed);
        Ok(removed)
    }

    /// Every segment on disk, oldest first, the active one last.
    pub fn segments(&self) -> Vec<SegmentInfo> {
        let a = self.shared.active.lock();
        let c = self.shared.closed.lock();
        let dir = &self.shared.dir;
        let mut v: Vec<SegmentInfo> = c
            .segments
            .iter()
            .map(|(&id, m)| SegmentInfo {
                id,
                path: segment::segment_path(dir, id),
                size: m.size,
                max_sequence_id: m.regions.clone(),
                active: false,
            })
            .collect();
        v.push(SegmentInfo {
            id: a.seg.id(),
            path: segment::segment_path(dir, a.seg.id()),
            size: a.offset,
            max_sequence_id: sorted_regions(&a.regions),
            active: true,
        });
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
        let (appends, appended_bytes, write_nanos) = {
            let a = self.shared.active.lock();
            (a.appends, a.appended_bytes, a.write_nanos)
        };
        let c = &self.shared.stats;
        WalStats {
            appends,
            skipped_appends: c.skipped_appends.load(Relaxed),
            appended_bytes,
            batches: c.batches.load(Relaxed),
            max_batch_edits: c.max_batch_edits.load(Relaxed),
            fsyncs: c.fsyncs.load(Relaxed),
            write_time: Duration::from_nanos(write_nanos),
            fsync_time: Duration::from_nanos(c.fsync_nanos.load(Relaxed)),
            rolls: c.rolls.load(Relaxed),
            segments_deleted: c.segments_deleted.load(Relaxed),
            segments_recycled: c.segments_recycled.load(Relaxed),
            segments_reused: c.segments_reused.load(Relaxed),
        }
    }

    /// Stops the background thread, discards the prepared next segment, and seals the active
    /// segment: truncated to the bytes written and fdatasync'ed. Dropping a `Wal` does the same
    /// but cannot report a failure.
    pub fn close(mut self) -> Result<(), WalError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), WalError> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        let shared = &self.shared;
        shared.bg.lock().shutdown = true;
        shared.bg_wake.notify_all();
        if let Some(background) = self.background.take() {
            // The thread only returns or, on a bug, panics; its panic has been reported on
            // stderr and sealing below still runs.
            let _ = background.join();
        }
        if let Some(prepared) = shared.bg.lock().prepared.take() {
            let id = prepared.id();
            let tmp = mapped::tmp_path(&shared.dir, id);
            drop(prepared);
            // It never held an edit: kept for reuse like a flushed segment's file while there
            // is room (so a restart does not start with one kept file fewer), else removed.
            // Left behind either way, the next open would remove it.
            let room = shared.closed.lock().free.len() < shared.options.recycled_segments;
            let kept = room && fs::rename(&tmp, mapped::free_path(&shared.dir, id)).is_ok();
            if !kept {
                let _ = fs::remove_file(tmp);
            }
        }
        shared.seal_pending()?;
        let mut a = shared.active.lock();
        shared.check()?;
        let (id, size) = (a.seg.id(), a.offset);
        shared.seal(&mut a.seg, size)?;
        if shared.durable_name.load(Acquire) < id {
            sync_dir(&shared.dir)?;
            shared.durable_name.fetch_max(id, Release);
        }
        Ok(())
    }
}

impl Drop for MappedWal {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// Capacity of a new segment: the roll size rounded up to whole pages, within limits.
fn segment_capacity(roll_size: u64) -> u64 {
    const PAGE: u64 = 4096;
    roll_size
        .clamp(PAGE, MAX_SEGMENT)
        .div_ceil(PAGE)
        .saturating_mul(PAGE)
}

fn bump(map: &mut BTreeMap<Vec<u8>, u64>, region: &[u8], sequence_id: u64) {
    match map.get_mut(region) {
        Some(m) => *m = (*m).max(sequence_id),
        None => {
            map.insert(region.to_vec(), sequence_id);
        }
    }
}

fn sorted_regions(regions: &RegionMax) -> BTreeMap<Vec<u8>, u64> {
    regions.iter().map(|(r, &s)| (r.to_vec(), s)).collect()
}

impl Shared {
    /// Fails with [`WalError::Broken`] once anything failed.
    fn check(&self) -> Result<(), WalError> {
        if !self.broken.load(Acquire) {
            return Ok(());
        }
        Err(self.broken_error())
    }

    #[cold]
    fn broken_error(&self) -> WalError {
        WalError::Broken {
            reason: self
                .broken_reason
                .lock()
                .clone()
                .unwrap_or_else(|| "unknown failure".into()),
        }
    }

    /// Marks the WAL broken by `e` (the first failure is the one reported).
    #[cold]
    fn fail(&self, e: &WalError) {
        let mut reason = self.broken_reason.lock();
        if reason.is_none() {
            *reason = Some(e.to_string());
        }
        self.broken.store(true, Release);
    }

    /// Copies one framed record into the active segment; returns the log position just past it.
    fn copy(&self, record: &mut [u8], edit: &WalEdit) -> Result<u64, WalError> {
        let len = record.len() as u64;
        let mut a = self.active.lock();
        self.check()?;
        if a.offset + len > a.limit {
            if let Err(e) = self.make_room(&mut a, len) {
                self.fail(&e);
                return Err(e);
            }
        }
        let offset = a.offset;
        if a.appends.is_multiple_of(TIME_SAMPLE) {
            let t = Instant::now();
            a.seg.write_record(offset, record);
            a.write_nanos += t.elapsed().as_nanos() as u64 * TIME_SAMPLE;
        } else {
            a.seg.write_record(offset, record);
        }
        a.offset += len;
        a.lsn += len;
        a.appends += 1;
        a.appended_bytes += len;
        match a.regions.get_mut(edit.region.as_slice()) {
            Some(max) => {
                if *max < edit.sequence_id {
                    *max = edit.sequence_id;
                }
            }
            None => {
                a.regions
                    .insert(edit.region.as_slice().into(), edit.sequence_id);
            }
        }
        let lsn = a.lsn;
        let prefault = a.offset >= a.prefault_at;
        if prefault {
            a.prefault_at = a.offset + PREFAULT_STEP;
        }
        drop(a);
        if prefault {
            self.bg.lock().prefault = true;
            self.bg_wake.notify_one();
        }
        Ok(lsn)
    }

    /// A record of `len` bytes does not fit under the active segment's limit. An empty
    /// segment takes any record (growing if it must, for a record larger than a segment);
    /// otherwise roll.
    #[cold]
    fn make_room(&self, a: &mut Active, len: u64) -> Result<(), WalError> {
        if a.offset > HEADER {
            return self.roll_locked(a, len);
        }
        if HEADER + len > a.seg.capacity() {
            let grown = a
                .seg
                .grow(HEADER + len)
                .map_err(|e| self.seg_err("grow", a.seg.id(), 0, e))?;
            a.seg = grown;
        }
        a.limit = a.limit.max(HEADER + len);
        Ok(())
    }

    /// A new segment `id` under its temporary name, in a kept file if there is one.
    fn prepare(&self, id: u64) -> Result<Segment, WalError> {
        let free = self.closed.lock().free.pop();
        let (seg, reused) = prepare_segment(&self.dir, id, self.capacity, free)?;
        if reused {
            self.stats.segments_reused.fetch_add(1, Relaxed);
        }
        Ok(seg)
    }

    #[cold]
    fn seg_err(&self, op: &'static str, id: u64, offset: u64, e: io::Error) -> WalError {
        io_err(op, &segment::segment_path(&self.dir, id), offset)(e)
    }

    /// Truncates a segment to `size` and fdatasyncs it.
    fn seal(&self, seg: &mut Segment, size: u64) -> Result<(), WalError> {
        let t = Instant::now();
        seg.seal(size)
            .map_err(|e| self.seg_err("seal (truncate and fdatasync)", seg.id(), size, e))?;
        self.count_fsync(t);
        Ok(())
    }

    fn count_fsync(&self, started: Instant) {
        self.stats
            .fsync_nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Relaxed);
        self.stats.fsyncs.fetch_add(1, Relaxed);
    }

    /// Seals the active segment and switches to the next, sized for at least a `len`-byte
    /// record. The old one is truncated and fdatasync'ed before the next one is used, so
    /// after a machine crash only the newest segment can have a torn tail.
    #[cold]
    fn roll_locked(&self, a: &mut Active, len: u64) -> Result<(), WalError> {
        let old_id = a.seg.id();
        let id = old_id
            .checked_add(1)
            .ok_or_else(|| WalError::SegmentIdsExhausted {
                path: segment::segment_path(&self.dir, old_id),
            })?;
        let mut next = self.take_prepared(id)?;
        if next.capacity() < HEADER + len {
            next = next
                .grow(HEADER + len)
                .map_err(|e| io_err("grow", &mapped::tmp_path(&self.dir, id), 0)(e))?;
        }
        let size = a.offset;
        mapped::publish(&self.dir, id)?;
        a.limit = self
            .options
            .roll_size
            .min(next.capacity())
            .max(HEADER + len);
        let old = std::mem::replace(&mut a.seg, next);
        // Sealing (truncate + fdatasync of up to a whole segment) happens off the append
        // lock: the background thread does it, or an FSYNC_WAL group commit that needs it.
        // Until then the old file may end in zeros, which replay reads as a clean end.
        self.seal_queue.lock().push_back(SealJob {
            seg: old,
            size,
            end_lsn: a.lsn,
            appends: a.appends,
        });
        a.offset = HEADER;
        a.prefault_at = PREFAULT_STEP;
        let regions = sorted_regions(&a.regions);
        a.regions.clear();
        self.closed
            .lock()
            .segments
            .insert(old_id, SegmentMeta { size, regions });
        self.stats.rolls.fetch_add(1, Relaxed);
        {
            let mut b = self.bg.lock();
            b.next_id = id.saturating_add(1);
            b.prepare = id < u64::MAX;
            b.seal = true;
        }
        self.bg_wake.notify_one();
        Ok(())
    }

    /// The segment `id` prepared by the background thread (waiting if it is being prepared),
    /// or a new one prepared here.
    fn take_prepared(&self, id: u64) -> Result<Segment, WalError> {
        let mut b = self.bg.lock();
        while b.preparing {
            self.bg_prepared.wait(&mut b);
        }
        // Nothing prepares `id` from here on: only a roll (under `active`, held by the caller)
        // asks for a segment to be prepared.
        b.prepare = false;
        let prepared = b.prepared.take();
        drop(b);
        match prepared {
            Some(seg) if seg.id() == id => Ok(seg),
            other => {
                drop(other);
                self.prepare(id)
            }
        }
    }

    /// Seals every rolled-away segment still waiting, oldest first, and records that the log
    /// is durable up to the end of each.
    fn seal_pending(&self) -> Result<(), WalError> {
        let _in_order = self.sealer.lock();
        loop {
            let job = self.seal_queue.lock().pop_front();
            let Some(mut job) = job else {
                return Ok(());
            };
            if let Err(e) = self.seal(&mut job.seg, job.size) {
                self.fail(&e);
                self.synced.notify_all();
                return Err(e);
            }
            let mut s = self.sync.lock();
            if job.end_lsn > s.synced_lsn {
                s.synced_lsn = job.end_lsn;
                s.synced_appends = s.synced_appends.max(job.appends);
            }
            drop(s);
            self.synced.notify_all();
        }
    }

    /// Returns once log position `lsn` is on stable storage, leading a group commit (one
    /// fdatasync covering every append copied before it) whenever none is running.
    fn sync_to(&self, lsn: u64) -> Result<(), WalError> {
        let mut s = self.sync.lock();
        loop {
            if s.synced_lsn >= lsn {
                return Ok(());
            }
            self.check()?;
            if s.flushing {
                self.synced.wait(&mut s);
                continue;
            }
            s.flushing = true;
            drop(s);
            let result = self.flush();
            s = self.sync.lock();
            s.flushing = false;
            match result {
                Ok((end, appends)) => {
                    if end > s.synced_lsn {
                        s.synced_lsn = end;
                        self.stats.batches.fetch_add(1, Relaxed);
                        self.stats
                            .max_batch_edits
                            .fetch_max(appends.saturating_sub(s.synced_appends), Relaxed);
                        s.synced_appends = appends;
                    }
                    self.synced.notify_all();
                }
                Err(e) => {
                    self.fail(&e);
                    self.synced.notify_all();
                    return Err(e);
                }
            }
        }
    }

    /// One group commit: fdatasyncs the active segment as far as it is written now. Returns
    /// the log position and append count it covers.
    fn flush(&self) -> Result<(u64, u64), WalError> {
        // The log is durable up to the active segment's end only if every older segment is.
        self.seal_pending()?;
        let (file, id, offset, lsn, appends) = {
            let a = self.active.lock();
            self.check()?;
            (
                Arc::clone(a.seg.file()),
                a.seg.id(),
                a.offset,
                a.lsn,
                a.appends,
            )
        };
        if self.durable_name.load(Acquire) < id {
            sync_dir(&self.dir)?;
            self.durable_name.fetch_max(id, Release);
        }
        // If the segment was rolled meanwhile, this is the sealed file: still correct.
        let t = Instant::now();
        file.sync_data()
            .map_err(|e| self.seg_err("fdatasync", id, offset, e))?;
        self.count_fsync(t);
        Ok((lsn, appends))
    }

    /// The background thread: prepares the next segment (so that a roll only has to rename
    /// it), makes a rolled-to segment's name durable, and keeps the active segment prefaulted
    /// ahead of the writer.
    fn run_background(&self) {
        // (segment id, offset) the active segment is prefaulted to, and the same for the
        // prepared segment once it has been prefaulted ahead of its turn.
        let mut prefaulted = (0u64, 0u64);
        let mut prefaulted_next = (0u64, 0u64);
        loop {
            let (prepare, prefault) = {
                let mut b = self.bg.lock();
                while !b.shutdown && !b.prepare && !b.prefault && !b.seal {
                    self.bg_wake.wait(&mut b);
                }
                if b.shutdown {
                    return;
                }
                if std::mem::take(&mut b.seal) {
                    drop(b);
                    // A failure marks the WAL broken; appenders then report it.
                    let _ = self.seal_pending();
                    continue;
                }
                let prepare = std::mem::take(&mut b.prepare).then_some(b.next_id);
                b.preparing = prepare.is_some();
                (prepare, std::mem::take(&mut b.prefault))
            };
            if let Some(id) = prepare {
                // The active segment (id - 1) was just renamed into place: make its name
                // durable now, so that FSYNC_WAL appenders rarely have to. Failures are left
                // to them to report.
                let active = id - 1;
                if self.durable_name.load(Acquire) < active && sync_dir(&self.dir).is_ok() {
                    self.durable_name.fetch_max(active, Release);
                }
                // A failure here is retried (and reported) by the roll that needs the segment.
                let seg = self.prepare(id).ok();
                let mut b = self.bg.lock();
                b.preparing = false;
                b.prepared = seg;
                self.bg_prepared.notify_all();
            }
            if prefault {
                let (map, id, offset, capacity) = {
                    let a = self.active.lock();
                    let s = &a.seg;
                    (Arc::clone(s.map()), s.id(), a.offset, s.capacity())
                };
                let from = if prefaulted.0 == id {
                    prefaulted.1.max(offset)
                } else if prefaulted_next.0 == id {
                    prefaulted_next.1.max(offset)
                } else {
                    offset
                };
                let to = offset.saturating_add(PREFAULT_AHEAD).min(capacity);
                if to > from {
                    mapped::populate(&map, capacity, from, to - from);
                    prefaulted = (id, to);
                }
                // Once the active segment is half full, the whole next one, so the writer
                // finds it ready: a segment's first touch of each page (allocating and
                // zeroing it) is most of what writing it costs, and done here it stays off
                // the writer's path even when this thread falls behind the writer. Not
                // earlier, so a WAL that is opened and closed with little written (tests,
                // tools) does not pay for a whole segment.
                if offset >= capacity / 2 && prefaulted_next.0 <= id {
                    let next = self
                        .bg
                        .lock()
                        .prepared
                        .as_ref()
                        .map(|s| (s.id(), Arc::clone(s.map()), s.capacity()));
                    if let Some((next_id, map, capacity)) = next {
                        mapped::populate(&map, capacity, 0, capacity);
                        prefaulted_next = (next_id, capacity);
                    }
                }
            }
        }
    }
}
