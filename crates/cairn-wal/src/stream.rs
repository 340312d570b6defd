//! The WAL on a distributed filesystem (HDFS): the same segment format and the same record
//! frames as the local WAL, written as a stream through [`cairn_fs::FsOutput`] instead of a
//! memory mapping (HBase's `FSHLog` over `hflush` / `hsync`).
//!
//! Appends encode their record into the active segment's buffer under one lock and get a log
//! position (bytes appended since open). `SYNC_WAL` and `FSYNC_WAL` then wait for a group
//! commit covering that position: the first waiter to find none running takes the buffer,
//! writes it and syncs the stream (`hsync`: hdfs-native has no `hflush`, so `SYNC_WAL` gets the
//! stronger call), and everyone whose record was in the buffer returns with it. `ASYNC_WAL`
//! returns at once; a background thread commits every [`WalOptions::async_sync_interval`], as
//! HBase's `optionallogflushinterval`. A roll commits everything, closes the segment and
//! starts the next. At open, every segment's lease is recovered (its last writer may have
//! died holding it) before it is read, so replay sees every synced byte.
//!
//! Lock order: `out` (the stream and the commit position), then `active` (the buffer), then
//! `closed`. The directory is not locked: HDFS has no `flock`, and two servers writing one WAL
//! directory is a deployment error this version does not detect.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cairn_fs::{FileSystem, FsOutput};
use parking_lot::{Condvar, Mutex};

use crate::segment::{self, HEADER_LEN};
use crate::wal::{SegmentInfo, WalStats};
use crate::{Durability, ReplayReport, WalEdit, WalError, WalOptions};

/// How long opening waits for HDFS to recover the lease of a segment a dead writer held.
const LEASE_WAIT: Duration = Duration::from_secs(120);

pub(crate) struct StreamWal {
    shared: Arc<Shared>,
    background: Option<JoinHandle<()>>,
    closed: bool,
}

struct Shared {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    options: WalOptions,
    out: Mutex<Out>,
    active: Mutex<Active>,
    closed: Mutex<Closed>,
    broken: Mutex<Option<String>>,
    stop: Mutex<bool>,
    wake: Condvar,
    stats: Counters,
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
}

struct Out {
    stream: Option<Box<dyn FsOutput>>,
    /// Log position everything before which is synced.
    synced: u64,
    /// Appends covered by `synced`.
    synced_appends: u64,
}

struct Active {
    id: u64,
    /// Records not yet handed to the stream.
    buf: Vec<u8>,
    /// Log position after the last record appended (bytes since open).
    lsn: u64,
    /// Bytes of the segment, header included, buffered ones too.
    size: u64,
    regions: BTreeMap<Vec<u8>, u64>,
    appends: u64,
    appended_bytes: u64,
}

#[derive(Default)]
struct Closed {
    segments: BTreeMap<u64, ClosedSegment>,
    flushed: BTreeMap<Vec<u8>, u64>,
}

struct ClosedSegment {
    size: u64,
    regions: BTreeMap<Vec<u8>, u64>,
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

fn bump(map: &mut BTreeMap<Vec<u8>, u64>, region: &[u8], sequence_id: u64) {
    match map.get_mut(region) {
        Some(m) => *m = (*m).max(sequence_id),
        None => {
            map.insert(region.to_vec(), sequence_id);
        }
    }
}

impl StreamWal {
    pub(crate) fn open(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        options: WalOptions,
        mut visit: impl FnMut(WalEdit) -> Result<(), WalError>,
    ) -> Result<(StreamWal, ReplayReport), WalError> {
        fs.mkdirs(dir).map_err(io_err("create directory", dir))?;
        let mut ids = Vec::new();
        for entry in fs.list(dir).map_err(io_err("list", dir))? {
            let Some(name) = entry.path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if let Some(id) = segment::parse_segment_file_name(name) {
                ids.push(id);
            }
        }
        ids.sort_unstable();
        let mut report = ReplayReport::default();
        let mut closed = Closed::default();
        for &id in &ids {
            let path = segment::segment_path(dir, id);
            recover_lease(&*fs, &path)?;
            let bytes = fs.read(&path).map_err(io_err("read", &path))?;
            let mut regions = BTreeMap::new();
            let scan = segment::scan_segment_from(
                &path,
                bytes.len() as u64,
                &bytes[..],
                Some(id),
                |_, edit| {
                    bump(&mut regions, &edit.region, edit.sequence_id);
                    let e = report
                        .max_sequence_id
                        .entry(edit.region.clone())
                        .or_default();
                    *e = (*e).max(edit.sequence_id);
                    report.edits += 1;
                    report.cells += edit.cells.len() as u64;
                    visit(edit)
                },
            )?;
            report.segments += 1;
            if let Some(d) = scan.dropped {
                report.dropped.push(d);
            }
            closed.segments.insert(
                id,
                ClosedSegment {
                    size: scan.len,
                    regions,
                },
            );
        }
        let id = match ids.last() {
            Some(&last) => last
                .checked_add(1)
                .ok_or_else(|| WalError::SegmentIdsExhausted {
                    path: segment::segment_path(dir, last),
                })?,
            None => 1,
        };
        let stream = create_segment(&*fs, dir, id)?;
        let shared = Arc::new(Shared {
            fs,
            dir: dir.to_path_buf(),
            options,
            out: Mutex::new(Out {
                stream: Some(stream),
                synced: 0,
                synced_appends: 0,
            }),
            active: Mutex::new(Active {
                id,
                buf: Vec::new(),
                lsn: 0,
                size: HEADER_LEN as u64,
                regions: BTreeMap::new(),
                appends: 0,
                appended_bytes: 0,
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
            .map_err(io_err("start the WAL's sync thread for", dir))?;
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
        segment::encode_record(edit, &mut record)?;
        let (lsn, roll) = {
            let mut a = s.active.lock();
            a.buf.extend_from_slice(&record);
            a.lsn += record.len() as u64;
            a.size += record.len() as u64;
            a.appends += 1;
            a.appended_bytes += record.len() as u64;
            bump(&mut a.regions, &edit.region, edit.sequence_id);
            (a.lsn, a.size >= s.options.roll_size)
        };
        if durability != Durability::AsyncWal {
            s.sync_to(lsn)?;
        }
        if roll {
            s.roll(false)?;
        }
        Ok(())
    }

    pub(crate) fn sync(&self, _fsync: bool) -> Result<(), WalError> {
        let s = &self.shared;
        let lsn = s.active.lock().lsn;
        s.check()?;
        s.sync_to(lsn)
    }

    pub(crate) fn roll(&self) -> Result<(), WalError> {
        self.shared.roll(true)
    }

    pub(crate) fn mark_flushed(&self, region: &[u8], sequence_id: u64) -> Result<usize, WalError> {
        let s = &self.shared;
        let mut c = s.closed.lock();
        bump(&mut c.flushed, region, sequence_id);
        let flushed = &c.flushed;
        let deletable = segment::flushed_segments(
            c.segments.iter().map(|(&id, seg)| (id, &seg.regions)),
            |r| flushed.get(r).copied(),
        );
        for &id in &deletable {
            let path = segment::segment_path(&s.dir, id);
            s.fs.delete(&path)
                .map_err(io_err("delete segment", &path))?;
            c.segments.remove(&id);
        }
        s.stats
            .segments_deleted
            .fetch_add(deletable.len() as u64, Relaxed);
        Ok(deletable.len())
    }

    pub(crate) fn segments(&self) -> Vec<SegmentInfo> {
        let s = &self.shared;
        let a = s.active.lock();
        let c = s.closed.lock();
        let mut v: Vec<SegmentInfo> = c
            .segments
            .iter()
            .map(|(&id, m)| SegmentInfo {
                id,
                path: segment::segment_path(&s.dir, id),
                size: m.size,
                max_sequence_id: m.regions.clone(),
                active: false,
            })
            .collect();
        v.push(SegmentInfo {
            id: a.id,
            path: segment::segment_path(&s.dir, a.id),
            size: a.size,
            max_sequence_id: a.regions.clone(),
            active: true,
        });
        v
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.shared.dir
    }

    pub(crate) fn options(&self) -> &WalOptions {
        &self.shared.options
    }

    pub(crate) fn stats(&self) -> WalStats {
        let s = &self.shared;
        let (appends, appended_bytes) = {
            let a = s.active.lock();
            (a.appends, a.appended_bytes)
        };
        let c = &s.stats;
        WalStats {
            appends,
            skipped_appends: c.skipped_appends.load(Relaxed),
            appended_bytes,
            batches: c.batches.load(Relaxed),
            max_batch_edits: c.max_batch_edits.load(Relaxed),
            fsyncs: c.fsyncs.load(Relaxed),
            write_time: Duration::ZERO,
            fsync_time: Duration::from_nanos(c.fsync_nanos.load(Relaxed)),
            rolls: c.rolls.load(Relaxed),
            segments_deleted: c.segments_deleted.load(Relaxed),
            segments_recycled: 0,
            segments_reused: 0,
        }
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
        let lsn = s.active.lock().lsn;
        s.sync_to(lsn)?;
        let mut out = s.out.lock();
        if let Some(stream) = out.stream.take() {
            let id = s.active.lock().id;
            let path = segment::segment_path(&s.dir, id);
            stream.close().map_err(io_err("close", &path))?;
        }
        Ok(())
    }
}

impl Drop for StreamWal {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

fn create_segment(fs: &dyn FileSystem, dir: &Path, id: u64) -> Result<Box<dyn FsOutput>, WalError> {
    let path = segment::segment_path(dir, id);
    let mut stream = fs.create(&path).map_err(io_err("create", &path))?;
    stream
        .write_all(&segment::encode_header(id))
        .map_err(io_err("write header of", &path))?;
    stream.hsync().map_err(io_err("hsync", &path))?;
    Ok(stream)
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

    /// Returns once everything up to `lsn` is synced, leading a group commit if needed.
    fn sync_to(&self, lsn: u64) -> Result<(), WalError> {
        let mut out = self.out.lock();
        if out.synced >= lsn {
            return Ok(());
        }
        self.check()?;
        let (buf, end, appends, id) = {
            let mut a = self.active.lock();
            (std::mem::take(&mut a.buf), a.lsn, a.appends, a.id)
        };
        let path = segment::segment_path(&self.dir, id);
        let started = Instant::now();
        let result = (|| {
            let stream = out.stream.as_mut().ok_or_else(|| WalError::Broken {
                reason: "the WAL is closed".into(),
            })?;
            stream.write_all(&buf).map_err(io_err("append to", &path))?;
            stream.hsync().map_err(io_err("hsync", &path))
        })();
        if let Err(e) = &result {
            self.fail(e);
            return result;
        }
        self.stats.fsyncs.fetch_add(1, Relaxed);
        self.stats
            .fsync_nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Relaxed);
        self.stats.batches.fetch_add(1, Relaxed);
        self.stats
            .max_batch_edits
            .fetch_max(appends - out.synced_appends, Relaxed);
        out.synced = end;
        out.synced_appends = appends;
        Ok(())
    }

    /// Commits the active segment, closes it and starts the next. `force`: even if it is not
    /// full (an explicit roll).
    fn roll(&self, force: bool) -> Result<(), WalError> {
        let mut out = self.out.lock();
        self.check()?;
        let mut a = self.active.lock();
        if !force && a.size < self.options.roll_size {
            return Ok(()); // another appender rolled first
        }
        let old = a.id;
        let path = segment::segment_path(&self.dir, old);
        let result = (|| {
            let next = old
                .checked_add(1)
                .ok_or_else(|| WalError::SegmentIdsExhausted { path: path.clone() })?;
            let mut stream = out.stream.take().ok_or_else(|| WalError::Broken {
                reason: "the WAL is closed".into(),
            })?;
            stream
                .write_all(&std::mem::take(&mut a.buf))
                .map_err(io_err("append to", &path))?;
            stream.hsync().map_err(io_err("hsync", &path))?;
            stream.close().map_err(io_err("close", &path))?;
            out.synced = a.lsn;
            out.synced_appends = a.appends;
            out.stream = Some(create_segment(&*self.fs, &self.dir, next)?);
            Ok(next)
        })();
        let next = match result {
            Ok(next) => next,
            Err(e) => {
                self.fail(&e);
                return Err(e);
            }
        };
        let regions = std::mem::take(&mut a.regions);
        let size = std::mem::replace(&mut a.size, HEADER_LEN as u64);
        a.id = next;
        drop(a);
        self.closed
            .lock()
            .segments
            .insert(old, ClosedSegment { size, regions });
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
            let lsn = self.active.lock().lsn;
            // A failure marks the WAL broken; the next append reports it.
            let _ = self.sync_to(lsn);
        }
    }
}
