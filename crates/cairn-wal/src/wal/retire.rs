//! Retiring segments once regions flush: deleting every closed segment whose edits are all in
//! store files, or keeping its file for reuse as a future segment.

use std::fs;
use std::io;
use std::sync::atomic::Ordering::Relaxed;

use super::MappedWal;
use crate::mapped::{self, io_err};
use crate::segment;
use crate::WalError;

impl MappedWal {
    /// Records that `region` has flushed everything up to `sequence_id` to store files, and
    /// deletes every closed segment in which each region has flushed past its highest
    /// sequence id. Returns how many segments were deleted. The active segment is never
    /// deleted ([`Wal::roll`] first to release it).
    pub fn mark_flushed(&self, region: &[u8], sequence_id: u64) -> Result<usize, WalError> {
        let mut c = self.shared.closed.lock();
        let deletable = c.ledger.mark_flushed(region, sequence_id);
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
            c.ledger.remove(id);
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
}
