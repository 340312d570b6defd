//! Rolling: sealing the active segment away and switching to the next one, which the
//! background thread has normally prepared already (created, preallocated, mapped and
//! prefaulted under a temporary name) so that a roll only renames it into place.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;

use super::{Active, SealJob, Shared, HEADER, PREFAULT_STEP};
use crate::ledger::next_segment_id;
use crate::mapped::{self, io_err, Segment};
use crate::WalError;

/// Largest segment mapping: a larger `roll_size` rolls at this size.
const MAX_SEGMENT: u64 = 1 << 30;

/// Segment `id` prepared in the kept file `free` if given (a file that cannot be reused is
/// deleted and a new one made instead); also says whether the file was reused.
pub(super) fn prepare_segment(
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

/// Capacity of a new segment: the roll size rounded up to whole pages, within limits.
pub(super) fn segment_capacity(roll_size: u64) -> u64 {
    const PAGE: u64 = 4096;
    roll_size
        .clamp(PAGE, MAX_SEGMENT)
        .div_ceil(PAGE)
        .saturating_mul(PAGE)
}

/// The capacity a segment prepared now gets in `dir`: `capacity`, but no more than an eighth
/// of the space left there (at least [`crate::MIN_SEGMENT`]), so that a disk with little room
/// still takes a WAL, which then rolls more often, and the active and the prepared segment
/// together never take more than a quarter of the space flushes need.
pub(super) fn fitted_capacity(dir: &Path, capacity: u64) -> u64 {
    match cairn_fs::free_space(dir) {
        Ok(free) => capacity.min(segment_capacity((free / 8).max(crate::MIN_SEGMENT))),
        Err(_) => capacity,
    }
}

impl Shared {
    /// A record of `len` bytes does not fit under the active segment's limit. An empty
    /// segment takes any record (growing if it must, for a record larger than a segment);
    /// otherwise roll.
    #[cold]
    pub(super) fn make_room(&self, a: &mut Active, len: u64) -> Result<(), WalError> {
        if a.tally.size > HEADER {
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
    pub(super) fn prepare(&self, id: u64) -> Result<Segment, WalError> {
        let free = self.closed.lock().free.pop();
        let capacity = fitted_capacity(&self.dir, self.capacity);
        let (seg, reused) = prepare_segment(&self.dir, id, capacity, free)?;
        if reused {
            self.stats.segments_reused.fetch_add(1, Relaxed);
        }
        Ok(seg)
    }

    /// Seals the active segment and switches to the next, sized for at least a `len`-byte
    /// record. The old one is truncated and fdatasync'ed before the next one is used, so
    /// after a machine crash only the newest segment can have a torn tail.
    #[cold]
    pub(super) fn roll_locked(&self, a: &mut Active, len: u64) -> Result<(), WalError> {
        let old_id = a.seg.id();
        let id = next_segment_id(&self.dir, Some(old_id))?;
        let mut next = self.take_prepared(id)?;
        if next.capacity() < HEADER + len {
            next = next
                .grow(HEADER + len)
                .map_err(|e| io_err("grow", &mapped::tmp_path(&self.dir, id), 0)(e))?;
        }
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
        let closed = a.tally.finish_segment();
        self.seal_queue.lock().push_back(SealJob {
            seg: old,
            size: closed.size,
            end_lsn: a.tally.lsn,
            appends: a.tally.appends,
        });
        a.prefault_at = PREFAULT_STEP;
        self.closed.lock().ledger.insert(old_id, closed);
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
    pub(super) fn take_prepared(&self, id: u64) -> Result<Segment, WalError> {
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
}
