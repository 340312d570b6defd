//! The WAL on a distributed filesystem (HDFS): the same files as the local WAL, HBase's
//! format and layout, written as a stream through [`cairn_fs::FsOutput`] instead of a memory
//! mapping (HBase's `FSHLog` over `hflush` / `hsync`). There is no end marker: the file ends
//! where the writer stopped, as HBase's do, and a roll or close appends the trailer.
//!
//! Appends encode their record into the active segment's buffer under one lock and get a log
//! position (bytes appended since open). `SYNC_WAL` and `FSYNC_WAL` then wait for a group
//! commit covering that position: the first waiter to find none running takes the buffer,
//! writes it and syncs the stream (as HBase's FSHLog: `hflush` for `SYNC_WAL`, every DataNode
//! of the pipeline holding the bytes; `hsync` for `FSYNC_WAL`, on disk at each), and everyone
//! whose entry was in the buffer returns with it. `ASYNC_WAL` returns at once; a background thread commits every [`WalOptions::async_sync_interval`], as
//! HBase's `optionallogflushinterval`, and rolls a file older than
//! [`WalOptions::roll_period`]. A roll commits everything, writes the trailer, closes the file
//! and starts the next. At open, every file's lease is recovered (its last writer may have
//! died holding it) before it is read, so replay sees every synced byte.
//!
//! Lock order: `out` (the stream and the commit position), then `active` (the buffer), then
//! `closed`. Directories are not locked: HDFS has no `flock`, so every other server's WAL
//! directory under the root is taken as a dead one (as HBase's master does for a server that
//! is not registered), and two servers writing one WAL directory is a deployment error this
//! version does not detect.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cairn_fs::{FileSystem, FsOutput};
use parking_lot::{Condvar, Mutex};

use crate::archive;
use crate::file::{self, CairnFileInfo, TRAILER};
use crate::ledger::{next_number, now_ms, ActiveTally, Ledger};
use crate::replay;
use crate::stats::Counters;
use crate::{
    Durability, ReplayReport, SegmentInfo, WalEdit, WalError, WalLocation, WalOptions, WalStats,
};

/// How long opening waits for HDFS to recover the lease of a segment a dead writer held.
const LEASE_WAIT: Duration = Duration::from_secs(120);

pub(crate) struct StreamWal {
    shared: Arc<Shared>,
    background: Option<JoinHandle<()>>,
    closed: bool,
}

struct Shared {
    fs: Arc<dyn FileSystem>,
    /// `<root>/WALs/<server>`.
    dir: PathBuf,
    /// `<root>/oldWALs`.
    archive: PathBuf,
    /// The server's URL-encoded name: every file name starts with it.
    prefix: String,
    options: WalOptions,
    out: Mutex<Out>,
    active: Mutex<Active>,
    closed: Mutex<Ledger>,
    broken: Mutex<Option<String>>,
    stop: Mutex<bool>,
    wake: Condvar,
    stats: Counters,
}

struct Out {
    stream: Option<Box<dyn FsOutput>>,
    /// Log position everything before which is synced: hflushed (every DataNode of the
    /// pipeline has it) or hsynced.
    synced: u64,
    /// Log position everything before which is hsynced (on disk at every DataNode).
    fsynced: u64,
    /// Appends covered by `synced`.
    synced_appends: u64,
    /// [`Active::epoch`] as of the latest recovery: a waiter whose position was taken in an
    /// earlier epoch is refused (recovery made those edits durable by flushing, which does not
    /// cover an edit whose appender is still waiting).
    epoch: u64,
}

struct Active {
    id: u64,
    /// When the file was started: it is rolled once older than the roll period.
    since: Instant,
    /// Records not yet handed to the stream.
    buf: Vec<u8>,
    /// Bytes of the segment (header included, buffered records too), the log position after
    /// the last record appended, appends, and the regions in the segment.
    tally: ActiveTally,
    /// The segment was started by a recovery that has not completed: a retry reuses it.
    fresh: bool,
    /// Recoveries so far.
    epoch: u64,
}

fn io_err(op: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> WalError {
    let path = path.to_path_buf();
    move |source| WalError::Io {
        op,
        path,
        offset: 0,
        source,
    }
}

impl StreamWal {
    pub(crate) fn open(
        fs: Arc<dyn FileSystem>,
        loc: &WalLocation,
        options: WalOptions,
        mut visit: impl FnMut(WalEdit) -> Result<(), WalError>,
    ) -> Result<(StreamWal, ReplayReport), WalError> {
        let dir = loc.dir();
        fs.mkdirs_durable(&dir)
            .map_err(io_err("create directory", &dir))?;
        let mut report = ReplayReport::default();
        let replayed = replay::replay(
            &*fs,
            loc,
            options.adopt_dead_servers,
            |_| Ok(Some(())),
            |path| recover_lease(&*fs, path),
            &mut report,
            &mut visit,
        )?;
        let mut closed = Ledger::default();
        let mut last: Option<(u64, PathBuf)> = None;
        for a in replayed.own {
            if last.as_ref().is_none_or(|(n, _)| a.key.0 > *n) {
                last = Some(a.key.clone());
            }
            closed.insert(a.key, a.segment);
        }
        for a in replayed.foreign {
            closed.insert(a.key, a.segment);
        }
        let prefix = loc.server.file_prefix();
        let last_path = last.as_ref().map(|(_, p)| p.clone()).unwrap_or_default();
        let id = next_number(last.map(|(n, _)| n), &last_path)?;
        let (stream, header) = create_segment(&*fs, &dir, &prefix, id)?;
        let shared = Arc::new(Shared {
            fs,
            dir,
            archive: loc.archive_dir(),
            prefix,
            options,
            out: Mutex::new(Out {
                stream: Some(stream),
                synced: 0,
                fsynced: 0,
                synced_appends: 0,
                epoch: 0,
            }),
            active: Mutex::new(Active {
                id,
                since: Instant::now(),
                buf: Vec::new(),
                tally: ActiveTally::new(header),
                fresh: false,
                epoch: 0,
            }),
            closed: Mutex::new(closed),
            broken: Mutex::new(None),
            stop: Mutex::new(false),
            wake: Condvar::new(),
            stats: Counters::default(),
        });
        let bg = shared.clone();
        let background = std::thread::Builder::new()
            .name("cairn-wal-sync".into())
            .spawn(move || bg.run_background())
            .map_err(io_err("start the WAL's sync thread for", &shared.dir))?;
        Ok((
            StreamWal {
                shared,
                background: Some(background),
                closed: false,
            },
            report,
        ))
    }

    pub(crate) fn append(&self, edit: &WalEdit, durability: Durability) -> Result<(), WalError> {
        let s = &self.shared;
        if durability == Durability::SkipWal {
            s.stats.skipped_appends.fetch_add(1, Relaxed);
            return Ok(());
        }
        s.check()?;
        let mut record = Vec::new();
        crate::entry::encode_entry(edit, &mut record)?;
        let (lsn, epoch, roll) = {
            let mut a = s.active.lock();
            a.buf.extend_from_slice(&record);
            let lsn = a.tally.record(record.len() as u64, edit);
            (lsn, a.epoch, a.tally.size >= s.options.roll_size)
        };
        // HBase's FSHLog: SYNC_WAL is an hflush, FSYNC_WAL an hsync.
        if durability != Durability::AsyncWal {
            s.sync_to(lsn, epoch, durability == Durability::FsyncWal)?;
        }
        if roll {
            s.roll(false)?;
        }
        Ok(())
    }

    pub(crate) fn sync(&self, fsync: bool) -> Result<(), WalError> {
        let s = &self.shared;
        let (lsn, epoch) = s.position();
        s.check()?;
        s.sync_to(lsn, epoch, fsync)
    }

    pub(crate) fn roll(&self) -> Result<(), WalError> {
        self.shared.roll(true)
    }

    pub(crate) fn failure(&self) -> Option<String> {
        self.shared.broken.lock().clone()
    }

    /// See [`crate::Wal::recover`]: the failed segment's stream is abandoned (its synced
    /// bytes stay for replay), records not yet written are dropped (their appenders were
    /// refused, or were `ASYNC_WAL` and are in the memstore `make_durable` flushes), and a
    /// new segment is started.
    pub(crate) fn recover(
        &self,
        make_durable: &mut dyn FnMut() -> Result<(), String>,
    ) -> Result<bool, WalError> {
        let s = &self.shared;
        let Some(failure) = self.failure() else {
            return Ok(false);
        };
        {
            let mut out = s.out.lock();
            let mut a = s.active.lock();
            if !a.fresh {
                let old = a.id;
                let next = next_number(Some(old), &s.file(old))?;
                let (stream, header) = create_segment(&*s.fs, &s.dir, &s.prefix, next)?;
                if let Some(failed) = out.stream.replace(stream) {
                    let _ = failed.close();
                }
                a.buf.clear();
                let closed = a.tally.finish_segment(header);
                a.id = next;
                a.since = Instant::now();
                a.fresh = true;
                a.epoch += 1;
                s.closed.lock().insert((old, s.file(old)), closed);
                out.synced = a.tally.lsn;
                out.fsynced = a.tally.lsn;
                out.synced_appends = a.tally.appends;
                out.epoch = a.epoch;
                s.stats.rolls.fetch_add(1, Relaxed);
            }
        }
        make_durable().map_err(|reason| WalError::Recovering {
            failure: failure.clone(),
            reason,
        })?;
        let _out = s.out.lock();
        s.active.lock().fresh = false;
        *s.broken.lock() = None;
        Ok(true)
    }

    pub(crate) fn mark_flushed(&self, region: &[u8], sequence_id: u64) -> Result<usize, WalError> {
        let s = &self.shared;
        let mut c = s.closed.lock();
        let retirable = c.mark_flushed(region, sequence_id);
        let mut archived_own = false;
        for key in &retirable {
            archive::archive_file(&*s.fs, &key.1, &s.archive, &s.dir)?;
            archived_own |= c.is_own(key);
            c.remove(key);
        }
        drop(c);
        s.stats
            .segments_deleted
            .fetch_add(retirable.len() as u64, Relaxed);
        if archived_own {
            archive::clean_archive(
                &*s.fs,
                &s.archive,
                &s.prefix,
                s.options.archive_ttl,
                now_ms(),
            )?;
        }
        Ok(retirable.len())
    }

    pub(crate) fn segments(&self) -> Vec<SegmentInfo> {
        let s = &self.shared;
        let a = s.active.lock();
        let c = s.closed.lock();
        c.list(a.id, &s.file(a.id), &a.tally)
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.shared.dir
    }

    pub(crate) fn options(&self) -> &WalOptions {
        &self.shared.options
    }

    pub(crate) fn stats(&self) -> WalStats {
        let s = &self.shared;
        let a = s.active.lock();
        s.stats.snapshot(&a.tally, Duration::ZERO)
    }

    pub(crate) fn close(mut self) -> Result<(), WalError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), WalError> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        let s = &self.shared;
        *s.stop.lock() = true;
        s.wake.notify_all();
        if let Some(bg) = self.background.take() {
            let _ = bg.join();
        }
        s.check()?;
        let (lsn, epoch) = s.position();
        s.sync_to(lsn, epoch, true)?;
        let mut out = s.out.lock();
        if let Some(mut stream) = out.stream.take() {
            let id = s.active.lock().id;
            let path = s.file(id);
            stream
                .write_all(&TRAILER)
                .and_then(|()| stream.hsync())
                .and_then(|()| stream.close())
                .map_err(io_err("close (trailer, hsync)", &path))?;
        }
        Ok(())
    }
}

impl Drop for StreamWal {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// Creates file `id` in `dir` and writes its header; returns the stream and the header's
/// length.
fn create_segment(
    fs: &dyn FileSystem,
    dir: &Path,
    prefix: &str,
    id: u64,
) -> Result<(Box<dyn FsOutput>, u64), WalError> {
    let path = dir.join(format!("{prefix}.{id}"));
    let mut stream = fs.create(&path).map_err(io_err("create", &path))?;
    let header = file::encode_header(CairnFileInfo {
        number: id,
        recycled: false,
    });
    let written = stream
        .write_all(&header)
        .map_err(io_err("write header of", &path))
        .and_then(|()| stream.hsync().map_err(io_err("hsync", &path)))
        // The file's name is durable before an edit in it is acknowledged: on a filesystem
        // whose directory entries need a sync of their own (HDFS's do not: a no-op there), a
        // crash could otherwise lose a whole file of synced edits.
        .and_then(|()| {
            fs.sync_dir(dir)
                .map_err(io_err("sync the directory of", &path))
        });
    if let Err(e) = written {
        // It never held an edit: gone, it leaves no half-written header to read (the next
        // try makes a file of another number). If the filesystem refuses even that, replay
        // takes a header lost to a crash as an empty file.
        let _ = stream.close();
        let _ = fs.delete(&path);
        return Err(e);
    }
    Ok((stream, header.len() as u64))
}

fn recover_lease(fs: &dyn FileSystem, path: &Path) -> Result<(), WalError> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(50);
    loop {
        if fs
            .recover_lease(path)
            .map_err(io_err("recover the lease of", path))?
        {
            return Ok(());
        }
        if started.elapsed() > LEASE_WAIT {
            return Err(WalError::Io {
                op: "recover the lease of",
                path: path.to_path_buf(),
                offset: 0,
                source: std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("still open after {LEASE_WAIT:?}"),
                ),
            });
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_secs(1));
    }
}

impl Shared {
    /// The path of file `id`.
    fn file(&self, id: u64) -> PathBuf {
        self.dir.join(format!("{}.{id}", self.prefix))
    }

    fn check(&self) -> Result<(), WalError> {
        match &*self.broken.lock() {
            Some(reason) => Err(WalError::Broken {
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    fn fail(&self, e: &WalError) {
        let mut b = self.broken.lock();
        if b.is_none() {
            *b = Some(e.to_string());
        }
    }

    /// The log position after the last append, and the recovery epoch it is in.
    fn position(&self) -> (u64, u64) {
        let a = self.active.lock();
        (a.tally.lsn, a.epoch)
    }

    /// Returns once everything up to `lsn` (taken in recovery epoch `epoch`) is synced
    /// (`fsync`: hsynced; else hflushed is enough), leading a group commit if needed.
    fn sync_to(&self, lsn: u64, epoch: u64, fsync: bool) -> Result<(), WalError> {
        let mut out = self.out.lock();
        if epoch != out.epoch {
            return Err(WalError::Broken {
                reason: "an earlier sync failed and its segment was set aside".into(),
            });
        }
        if (if fsync { out.fsynced } else { out.synced }) >= lsn {
            return Ok(());
        }
        self.check()?;
        let (buf, end, appends, id) = {
            let mut a = self.active.lock();
            (
                std::mem::take(&mut a.buf),
                a.tally.lsn,
                a.tally.appends,
                a.id,
            )
        };
        let path = self.file(id);
        let started = Instant::now();
        let result = (|| {
            let stream = out.stream.as_mut().ok_or_else(|| WalError::Broken {
                reason: "the WAL is closed".into(),
            })?;
            stream.write_all(&buf).map_err(io_err("append to", &path))?;
            if fsync {
                stream.hsync().map_err(io_err("hsync", &path))
            } else {
                stream.hflush().map_err(io_err("hflush", &path))
            }
        })();
        if let Err(e) = &result {
            self.fail(e);
            return result;
        }
        self.stats.count_fsync(started);
        self.stats.count_batch(appends - out.synced_appends);
        out.synced = end;
        if fsync {
            out.fsynced = end;
        }
        out.synced_appends = appends;
        Ok(())
    }

    /// Commits the active file, writes its trailer, closes it and starts the next. `force`:
    /// even if it is not full (an explicit roll, or one by age).
    fn roll(&self, force: bool) -> Result<(), WalError> {
        let mut out = self.out.lock();
        self.check()?;
        let mut a = self.active.lock();
        if !force && a.tally.size < self.options.roll_size {
            return Ok(()); // another appender rolled first
        }
        let old = a.id;
        let path = self.file(old);
        let result = (|| {
            let next = next_number(Some(old), &path)?;
            let mut stream = out.stream.take().ok_or_else(|| WalError::Broken {
                reason: "the WAL is closed".into(),
            })?;
            stream
                .write_all(&std::mem::take(&mut a.buf))
                .map_err(io_err("append to", &path))?;
            stream.hsync().map_err(io_err("hsync", &path))?;
            out.synced = a.tally.lsn;
            out.fsynced = a.tally.lsn;
            out.synced_appends = a.tally.appends;
            stream
                .write_all(&TRAILER)
                .and_then(|()| stream.close())
                .map_err(io_err("close (trailer)", &path))?;
            let (stream, header) = create_segment(&*self.fs, &self.dir, &self.prefix, next)?;
            out.stream = Some(stream);
            Ok((next, header))
        })();
        let (next, header) = match result {
            Ok(next) => next,
            Err(e) => {
                self.fail(&e);
                return Err(e);
            }
        };
        let closed = a.tally.finish_segment(header);
        a.id = next;
        a.since = Instant::now();
        drop(a);
        self.closed.lock().insert((old, path), closed);
        self.stats.rolls.fetch_add(1, Relaxed);
        Ok(())
    }

    fn run_background(&self) {
        let interval = self
            .options
            .async_sync_interval
            .max(Duration::from_millis(1));
        loop {
            {
                let mut stop = self.stop.lock();
                if *stop {
                    return;
                }
                self.wake.wait_for(&mut stop, interval);
                if *stop {
                    return;
                }
            }
            let (lsn, epoch) = self.position();
            // A failure marks the WAL broken; the next append reports it.
            let _ = self.sync_to(lsn, epoch, false);
            let old = {
                let a = self.active.lock();
                a.tally.appends > 0
                    && a.tally.size > a.tally.header
                    && a.since.elapsed() >= self.options.roll_period
            };
            if old {
                let _ = self.roll(true);
            }
        }
    }
}
