//! Opening the local WAL: locking its directory, sorting out the files in it (segments to
//! replay, kept files to reuse, temporary segments to delete), replaying every segment, and
//! starting the first new segment and the background thread.

use std::collections::{BTreeMap, VecDeque};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::roll::{fitted_capacity, prepare_segment, segment_capacity};
use super::{sync_dir, Active, Background, Closed, MappedWal, Shared, SyncState, PREFAULT_STEP};
use crate::ledger::{count_replayed, next_segment_id, ActiveTally, ClosedSegment, Ledger};
use crate::mapped::{self, io_err};
use crate::segment;
use crate::stats::Counters;
use crate::{ReplayReport, WalEdit, WalError, WalOptions};

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
        let existed = dir.is_dir();
        fs::create_dir_all(dir).map_err(io_err("create directory", dir, 0))?;
        if !existed {
            // The directory's own name must survive a crash with the segments in it.
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                sync_dir(parent)?;
            }
        }
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
        let mut ledger = Ledger::default();
        for &id in &ids {
            let path = segment::segment_path(dir, id);
            let mut regions: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
            let scan = segment::scan_segment(&path, Some(id), |_, edit| {
                count_replayed(&mut report, &mut regions, &edit);
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
            ledger.insert(id, ClosedSegment { size, regions });
        }

        let new_id = next_segment_id(dir, ids.last().copied())?;
        let capacity = segment_capacity(options.roll_size);
        let seg = prepare_segment(dir, new_id, fitted_capacity(dir, capacity), free.pop())?.0;
        mapped::publish(dir, new_id)?;
        sync_dir(dir)?;
        let limit = options.roll_size.min(seg.capacity());
        let shared = Arc::new(Shared {
            dir: dir.to_path_buf(),
            capacity,
            active: Mutex::new(Active {
                seg,
                tally: ActiveTally::new(),
                limit,
                write_nanos: 0,
                prefault_at: PREFAULT_STEP,
                fresh: false,
                epoch: 0,
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
}
