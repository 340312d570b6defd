//! The WAL on local disk: appends into the memory-mapped active file. Its other jobs each
//! have a file: opening with replay ([`open`]), group commit and sealing ([`group_commit`]),
//! rolling to the next file ([`roll`]), the background thread that prepares and prefaults
//! files and rolls by age ([`background`]), and archiving or recycling flushed files
//! ([`retire`]). What each file holds is counted in [`crate::ledger`], shared with the stream
//! backend.
//!
//! Concurrency: an appender encodes its entry outside any lock (into a thread-local buffer),
//! then, under the one `active` lock, takes the current offset, copies the entry into the
//! mapping and advances the offset: appends are totally ordered and an acknowledged append
//! has every byte before it written (no holes). `SYNC_WAL` and `ASYNC_WAL` return right there,
//! with no system call. `FSYNC_WAL` then waits for a flush covering its log position (`lsn`,
//! bytes appended since open): the first waiter to find no flush running leads one (notes the
//! current end under `active`, fdatasyncs without any lock held) and everyone who had copied
//! before it is covered; the others wait on `synced` or lead the next one.
//!
//! A roll (when an entry does not fit) happens inside the `active` lock: the next file is
//! normally already created, preallocated, mapped and prefaulted by the background thread, so
//! the roll only renames it into place; the old file is sealed (trailer, truncate, fdatasync)
//! off the append path.
//!
//! Lock order: `active`, then `closed`, `sync` or `bg` (never two of the latter together).

mod background;
mod group_commit;
mod open;
mod recover;
mod retire;
mod roll;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::ledger::{ActiveTally, Ledger};
use crate::mapped::{self, io_err, Paths, Segment, TAIL};
use crate::stats::Counters;
use crate::{Durability, SegmentInfo, WalEdit, WalError, WalOptions, WalStats};

use background::Background;

/// Thread-local encode buffers above this size are not kept.
const KEEP_BUFFER: usize = 8 << 20;
/// The background thread keeps this much of the active segment ahead of the writer
/// prefaulted...
const PREFAULT_AHEAD: u64 = mapped::PREFAULT_FIRST;
/// ...and is asked to move that window each time the writer has advanced this far.
const PREFAULT_STEP: u64 = 1 << 20;
/// One append in this many is timed, for [`WalStats::write_time`].
const TIME_SAMPLE: u64 = 64;

/// The write-ahead log on local disk: preallocated, memory-mapped segments in one locked
/// directory. Reached through [`crate::Wal`].
pub(crate) struct MappedWal {
    shared: Arc<Shared>,
    background: Option<JoinHandle<()>>,
    closed: bool,
}

struct Shared {
    paths: Paths,
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
    seal_queue: Mutex<VecDeque<SealJob>>,
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
    /// no second WAL (in this process or another) opens, replays or truncates these files.
    _dir_lock: File,
    /// Locks on the dead servers' directories whose files replay adopted: no other process
    /// replays or archives them meanwhile.
    _dead_dir_locks: Vec<File>,
    /// When cairn's own files in the archive were last checked for age.
    archive_cleaned: Mutex<Option<Instant>>,
}

struct Active {
    seg: Segment,
    /// Bytes written into `seg` (`size`, header included: the write offset), the log position,
    /// appends, and the regions in `seg`.
    tally: ActiveTally,
    /// Roll when a record would end past this (min of capacity and roll size).
    limit: u64,
    write_nanos: u64,
    /// Ask the background thread to prefault further once the write offset passes this.
    prefault_at: u64,
    /// `seg` was started by a recovery that has not completed: a retry reuses it.
    fresh: bool,
    /// Recoveries so far: log positions taken before the latest one are in set-aside
    /// segments, and waiting for them to be synced fails.
    epoch: u64,
    /// When `seg` became the active file: it is rolled once older than the roll period.
    since: Instant,
}

struct Closed {
    /// The closed segments and the regions' flush marks.
    ledger: Ledger,
    /// Files of flushed segments waiting to be reused ([`Paths::free`]).
    free: Vec<PathBuf>,
}

struct SyncState {
    /// Every log position up to this is on stable storage.
    synced_lsn: u64,
    /// `ActiveTally::appends` when `synced_lsn` was last moved by a flush or roll.
    synced_appends: u64,
    /// A group commit is running.
    flushing: bool,
    /// [`Active::epoch`] as of the latest recovery: a waiter whose position was taken in an
    /// earlier epoch is refused, since recovery made those edits durable by flushing the
    /// memstores, which do not hold an edit whose appender is still waiting.
    epoch: u64,
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

fn sync_dir(dir: &Path) -> Result<(), WalError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err("fsync directory", dir, 0))
}

thread_local! {
    /// Each appender encodes its record here, outside the lock.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl MappedWal {
    /// Appends one edit at the given durability (see the crate docs for what each level
    /// waits for). `SYNC_WAL` and `ASYNC_WAL` copy the record into the mapped segment and
    /// return; concurrent `FSYNC_WAL` appenders share one fdatasync.
    pub fn append(&self, edit: &WalEdit, durability: Durability) -> Result<(), WalError> {
        if durability == Durability::SkipWal {
            self.shared.stats.skipped_appends.fetch_add(1, Relaxed);
            return Ok(());
        }
        let (lsn, epoch) = SCRATCH.with(|scratch| {
            let mut record = scratch.borrow_mut();
            record.clear();
            let result = crate::entry::encode_entry(edit, &mut record)
                .and_then(|enc| self.shared.copy(&mut record, enc.crc_at, edit));
            if record.capacity() > KEEP_BUFFER {
                *record = Vec::new();
            }
            result
        })?;
        if durability == Durability::FsyncWal {
            self.shared.sync_to(lsn, epoch)?;
        }
        Ok(())
    }

    /// Makes everything appended so far survive a process crash (it already does: appends are
    /// in the page cache once they return) and, with `fsync`, a machine crash (fdatasync;
    /// HBase's `sync(forceSync)`: hflush or hsync). Fails if the WAL is broken.
    pub fn sync(&self, fsync: bool) -> Result<(), WalError> {
        let (lsn, epoch) = {
            let a = self.shared.active.lock();
            (a.tally.lsn, a.epoch)
        };
        self.shared.check()?;
        if fsync {
            self.shared.sync_to(lsn, epoch)?;
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
        // A roll that fails changes nothing (the active segment stays), so the WAL goes on.
        self.shared.roll_locked(&mut a, 0)?;
        drop(a);
        // An explicit roll returns with the old segment sealed.
        self.shared.seal_pending()
    }

    /// Why the WAL refuses edits, if it does.
    pub fn failure(&self) -> Option<String> {
        if !self.shared.broken.load(Acquire) {
            return None;
        }
        self.shared.broken_reason.lock().clone()
    }

    /// See [`crate::Wal::recover`].
    pub fn recover(
        &self,
        make_durable: &mut dyn FnMut() -> Result<(), String>,
    ) -> Result<bool, WalError> {
        let shared = &self.shared;
        let Some(failure) = self.failure() else {
            return Ok(false);
        };
        shared.replace_untrusted()?;
        make_durable().map_err(|reason| WalError::Recovering {
            failure: failure.clone(),
            reason,
        })?;
        let mut a = shared.active.lock();
        a.fresh = false;
        *shared.broken_reason.lock() = None;
        shared.broken.store(false, Release);
        Ok(true)
    }

    /// Every file the WAL keeps, oldest first, the active one last.
    pub fn segments(&self) -> Vec<SegmentInfo> {
        let a = self.shared.active.lock();
        let c = self.shared.closed.lock();
        let id = a.seg.id();
        c.ledger.list(id, &self.shared.paths.file(id), &a.tally)
    }

    /// The directory this WAL writes to.
    pub fn dir(&self) -> &Path {
        &self.shared.paths.dir
    }

    /// The options the WAL was opened with.
    pub fn options(&self) -> &WalOptions {
        &self.shared.options
    }

    /// Counters since open.
    pub fn stats(&self) -> WalStats {
        let a = self.shared.active.lock();
        let write_time = Duration::from_nanos(a.write_nanos);
        self.shared.stats.snapshot(&a.tally, write_time)
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
            let tmp = shared.paths.tmp(id);
            drop(prepared);
            // It never held an edit: kept for reuse like a flushed file while there is room
            // (so a restart does not start with one kept file fewer), else removed. Left
            // behind either way, the next open would remove it.
            let room = shared.closed.lock().free.len() < shared.options.recycled_segments;
            let kept = room && fs::rename(&tmp, shared.paths.free(id)).is_ok();
            if !kept {
                let _ = fs::remove_file(tmp);
            }
        }
        shared.seal_pending()?;
        let mut a = shared.active.lock();
        shared.check()?;
        let (id, size) = (a.seg.id(), a.tally.size);
        shared.seal(&mut a.seg, size)?;
        if shared.durable_name.load(Acquire) < id {
            sync_dir(&shared.paths.dir)?;
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

    /// Copies one encoded entry (its checksum at `crc_at`) into the active file; returns the
    /// log position just past it and the recovery epoch it was taken in.
    fn copy(
        &self,
        record: &mut [u8],
        crc_at: usize,
        edit: &WalEdit,
    ) -> Result<(u64, u64), WalError> {
        let len = record.len() as u64;
        let mut a = self.active.lock();
        self.check()?;
        if a.tally.size + len + TAIL > a.limit {
            // Failing to make room (no space for the next segment) writes nothing and leaves
            // the active segment as it was: this append fails, the next one tries again.
            self.make_room(&mut a, len)?;
        }
        let offset = a.tally.size;
        if a.tally.appends.is_multiple_of(TIME_SAMPLE) {
            let t = Instant::now();
            a.seg.write_entry(offset, record, crc_at);
            a.write_nanos += t.elapsed().as_nanos() as u64 * TIME_SAMPLE;
        } else {
            a.seg.write_entry(offset, record, crc_at);
        }
        let lsn = a.tally.record(len, edit);
        let epoch = a.epoch;
        let prefault = a.tally.size >= a.prefault_at;
        if prefault {
            a.prefault_at = a.tally.size + PREFAULT_STEP;
        }
        drop(a);
        if prefault {
            self.bg.lock().prefault = true;
            self.bg_wake.notify_one();
        }
        Ok((lsn, epoch))
    }

    #[cold]
    fn seg_err(&self, op: &'static str, id: u64, offset: u64, e: io::Error) -> WalError {
        io_err(op, &self.paths.file(id), offset)(e)
    }
}
