//! Retiring files once regions flush: every closed file whose edits are all in store files is
//! kept for reuse as a future file (this server's, while there is room) or archived to
//! `oldWALs/`; cairn's own archived files are deleted once older than the archive TTL.

use std::fs;
use std::io;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use cairn_fs::LocalFileSystem;

use super::MappedWal;
use crate::archive;
use crate::ledger::now_ms;
use crate::mapped::io_err;
use crate::WalError;

/// How often, at most, the archive is looked through for expired files.
const CLEAN_EVERY: Duration = Duration::from_secs(60);

impl MappedWal {
    /// Records that `region` has flushed everything up to `sequence_id` to store files, and
    /// retires every closed file in which each region has flushed past its highest
    /// sequence id. Returns how many files were retired. The active file is never retired
    /// ([`Wal::roll`] first to release it).
    pub fn mark_flushed(&self, region: &[u8], sequence_id: u64) -> Result<usize, WalError> {
        let shared = &self.shared;
        let paths = &shared.paths;
        let mut c = shared.closed.lock();
        let retirable = c.ledger.mark_flushed(region, sequence_id);
        // Neither archiving nor keeping needs a directory fsync: a file that reappears after a
        // machine crash only replays edits the stores already hold, which replay skips by
        // sequence id. A kept file is renamed again, durably, before it is rewritten.
        let mut retired = 0;
        let mut recycled = 0;
        let mut archived_own = false;
        for key in retirable {
            let (id, path) = &key;
            let own = c.ledger.is_own(&key);
            // Only a sealed file may be reused: the sealer truncates the file of a queued
            // one.
            let keep = own
                && c.free.len() < shared.options.recycled_segments
                && !shared.seal_queue.lock().iter().any(|j| j.seg.id() == *id);
            if keep {
                let free = paths.free(*id);
                match fs::rename(path, &free) {
                    Ok(()) => {
                        c.free.push(free);
                        recycled += 1;
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(io_err("keep for reuse (rename) WAL file", path, 0)(e));
                    }
                }
            } else {
                archive::archive_file(&LocalFileSystem, path, &paths.archive, &paths.dir)?;
                archived_own |= own;
            }
            c.ledger.remove(&key);
            retired += 1;
        }
        drop(c);
        shared
            .stats
            .segments_deleted
            .fetch_add((retired - recycled) as u64, Relaxed);
        shared
            .stats
            .segments_recycled
            .fetch_add(recycled as u64, Relaxed);
        if archived_own {
            let mut cleaned = shared.archive_cleaned.lock();
            if cleaned.is_none_or(|t| t.elapsed() >= CLEAN_EVERY) {
                *cleaned = Some(Instant::now());
                drop(cleaned);
                archive::clean_archive(
                    &LocalFileSystem,
                    &paths.archive,
                    &paths.prefix,
                    shared.options.archive_ttl,
                    now_ms(),
                )?;
            }
        }
        Ok(retired)
    }
}
