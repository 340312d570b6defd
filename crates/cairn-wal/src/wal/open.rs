//! Opening the local WAL: locking its directory, sorting out cairn's spare files (kept files
//! to reuse, prepared files to delete), replaying this server's and dead servers' files
//! (`crate::replay`), sealing this server's files a crash left open, and starting the first
//! new file and the background thread.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_fs::LocalFileSystem;
use parking_lot::{Condvar, Mutex};

use super::roll::{fitted_capacity, prepare_segment, segment_capacity};
use super::{sync_dir, Active, Background, Closed, MappedWal, Shared, SyncState, PREFAULT_STEP};
use crate::ledger::{next_number, ActiveTally, ClosedSegment, Ledger};
use crate::mapped::{self, io_err, Paths};
use crate::replay;
use crate::stats::Counters;
use crate::{ReplayReport, WalEdit, WalError, WalLocation, WalOptions};

/// How long [`Wal::open`] waits for another WAL to release the directory.
const LOCK_WAIT: Duration = Duration::from_secs(3);

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

/// Claims a dead server's directory for replay: its `flock`, or `None` when another process
/// holds it (a live cairn WAL).
fn claim_dir(dir: &Path) -> Result<Option<File>, WalError> {
    let handle = File::open(dir).map_err(io_err("open directory", dir, 0))?;
    match handle.try_lock() {
        Ok(()) => Ok(Some(handle)),
        Err(fs::TryLockError::WouldBlock) => Ok(None),
        Err(fs::TryLockError::Error(e)) => Err(io_err("lock", dir, 0)(e)),
    }
}

/// Creates `dir` if it is missing, its name durable (the files in it must survive a crash).
fn create_durable(dir: &Path) -> Result<(), WalError> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut missing = vec![dir];
    while let Some(parent) = missing.last().and_then(|d| d.parent()) {
        if parent.as_os_str().is_empty() || parent.is_dir() {
            break;
        }
        missing.push(parent);
    }
    fs::create_dir_all(dir).map_err(io_err("create directory", dir, 0))?;
    for d in missing.iter().rev() {
        if let Some(parent) = d.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent)?;
        }
    }
    Ok(())
}

impl MappedWal {
    /// Opens (creating) the WAL of `loc.server` under `loc.root`: replays this server's files
    /// and every dead server's (see the crate docs), calling `visit` for each whole edit, then
    /// starts a new file. Replayed files stay, tracked with the highest sequence id per region
    /// they hold, until [`Wal::mark_flushed`] allows retiring them; this server's files that
    /// a crash left open are sealed first. The directory is locked (`flock`) while the WAL is
    /// open: a second open of it waits up to 3 s for the first WAL to be closed or dropped,
    /// then fails.
    ///
    /// A file that ends in a torn or damaged entry is replayed up to it and the rest is
    /// reported in [`ReplayReport::dropped`]; replay goes on with the next file. A file that
    /// is not a WAL, or one cairn cannot read, is an error naming it. An error from `visit`
    /// stops the open and is returned.
    pub fn open(
        loc: &WalLocation,
        options: WalOptions,
        mut visit: impl FnMut(WalEdit) -> Result<(), WalError>,
    ) -> Result<(MappedWal, ReplayReport), WalError> {
        let paths = Paths::new(loc);
        let dir = paths.dir.clone();
        create_durable(&dir)?;
        create_durable(&paths.spare)?;
        let dir_lock = lock_dir(&dir)?;
        let mut free = Vec::new();
        for entry in fs::read_dir(&paths.spare).map_err(io_err("list", &paths.spare, 0))? {
            let entry = entry.map_err(io_err("list", &paths.spare, 0))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            match paths.spare_kind(name) {
                // A flushed file kept for reuse: it holds nothing to replay.
                Some("free") if free.len() < options.recycled_segments => free.push(entry.path()),
                // A file prepared but never used (or a roll that crashed before its rename):
                // it never held an edit. Or a kept file beyond the number kept now.
                Some(_) => {
                    let p = entry.path();
                    fs::remove_file(&p).map_err(io_err("remove", &p, 0))?;
                }
                None => {}
            }
        }

        let mut report = ReplayReport::default();
        let replayed = replay::replay(
            &LocalFileSystem,
            loc,
            options.adopt_dead_servers,
            claim_dir,
            |_| Ok(()),
            &mut report,
            &mut visit,
        )?;
        let mut ledger = Ledger::default();
        let mut last: Option<(u64, std::path::PathBuf)> = None;
        for a in replayed.own {
            let (number, path) = a.key.clone();
            let scan = &a.scan;
            // A file its writer never sealed (a crash): sealed now, so that it reads as
            // closed and holds no unused tail.
            let size = if scan.header.is_some() && scan.dropped.is_none() && !scan.trailer {
                mapped::seal_file(&path, scan.end)?;
                scan.end
            } else {
                scan.len
            };
            ledger.insert(a.key, ClosedSegment { size, ..a.segment });
            if last.as_ref().is_none_or(|(n, _)| number > *n) {
                last = Some((number, path));
            }
        }
        for a in replayed.foreign {
            ledger.insert(a.key, a.segment);
        }
        let last_path = last.as_ref().map(|(_, p)| p.clone()).unwrap_or_default();
        let new_id = next_number(last.map(|(n, _)| n), &last_path)?;
        let capacity = segment_capacity(options.roll_size);
        let seg = prepare_segment(&paths, new_id, fitted_capacity(&dir, capacity), free.pop())?.0;
        mapped::publish(&paths, new_id)?;
        sync_dir(&dir)?;
        let limit = options.roll_size.min(seg.capacity());
        let header = seg.header_len();
        let shared = Arc::new(Shared {
            paths,
            capacity,
            active: Mutex::new(Active {
                seg,
                tally: ActiveTally::new(header),
                limit,
                write_nanos: 0,
                prefault_at: PREFAULT_STEP,
                fresh: false,
                epoch: 0,
                since: Instant::now(),
            }),
            closed: Mutex::new(Closed { ledger, free }),
            sync: Mutex::new(SyncState {
                synced_lsn: 0,
                synced_appends: 0,
                flushing: false,
                epoch: 0,
            }),
            synced: Condvar::new(),
            bg: Mutex::new(Background {
                next_id: new_id.saturating_add(1),
                prepare: new_id < u64::MAX,
                ..Background::default()
            }),
            seal_queue: Mutex::new(VecDeque::new()),
            sealer: Mutex::new(()),
            bg_wake: Condvar::new(),
            bg_prepared: Condvar::new(),
            broken: AtomicBool::new(false),
            broken_reason: Mutex::new(None),
            durable_name: AtomicU64::new(new_id),
            stats: Counters::default(),
            options,
            _dir_lock: dir_lock,
            _dead_dir_locks: replayed.claims,
            archive_cleaned: Mutex::new(None),
        });
        let background = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("cairn-wal-syncer".into())
                .spawn(move || shared.run_background())
                .map_err(io_err("start the background thread for", &dir, 0))?
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
}
