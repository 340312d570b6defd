//! Group commit and sealing: `FSYNC_WAL` appenders share one fdatasync (whoever finds none
//! running leads one, covering every append copied before it), and rolled-away segments are
//! truncated and fdatasync'ed in order, off the append path.

use std::sync::atomic::Ordering::{Acquire, Release};
use std::sync::Arc;
use std::time::Instant;

use super::{sync_dir, Shared};
use crate::mapped::Segment;
use crate::WalError;

impl Shared {
    /// Truncates a segment to `size` and fdatasyncs it.
    pub(super) fn seal(&self, seg: &mut Segment, size: u64) -> Result<(), WalError> {
        let t = Instant::now();
        seg.seal(size)
            .map_err(|e| self.seg_err("seal (truncate and fdatasync)", seg.id(), size, e))?;
        self.stats.count_fsync(t);
        Ok(())
    }

    /// Seals every rolled-away segment still waiting, oldest first, and records that the log
    /// is durable up to the end of each.
    pub(super) fn seal_pending(&self) -> Result<(), WalError> {
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

    /// Returns once log position `lsn` (taken in recovery epoch `epoch`) is on stable storage, leading a group commit (one
    /// fdatasync covering every append copied before it) whenever none is running.
    pub(super) fn sync_to(&self, lsn: u64, epoch: u64) -> Result<(), WalError> {
        let mut s = self.sync.lock();
        loop {
            if epoch != s.epoch {
                return Err(self.untrusted_error());
            }
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
                        self.stats
                            .count_batch(appends.saturating_sub(s.synced_appends));
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
                a.tally.size,
                a.tally.lsn,
                a.tally.appends,
            )
        };
        if self.durable_name.load(Acquire) < id {
            sync_dir(&self.paths.dir)?;
            self.durable_name.fetch_max(id, Release);
        }
        // If the segment was rolled meanwhile, this is the sealed file: still correct.
        let t = Instant::now();
        file.sync_data()
            .map_err(|e| self.seg_err("fdatasync", id, offset, e))?;
        self.stats.count_fsync(t);
        Ok((lsn, appends))
    }
}
