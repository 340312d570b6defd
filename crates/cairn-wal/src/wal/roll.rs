//! Rolling: sealing the active file away and switching to the next one, which the
//! background thread has normally prepared already (created, preallocated, mapped and
//! prefaulted under a temporary name) so that a roll only renames it into place.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use super::{Active, SealJob, Shared, PREFAULT_STEP};
use crate::ledger::{next_number, now_ms};
use crate::mapped::{self, io_err, Paths, Segment, TAIL};
use crate::WalError;

/// Largest segment mapping: a larger `roll_size` rolls at this size.
const MAX_SEGMENT: u64 = 1 << 30;

/// File `id` prepared in the kept file `free` if given (a file that cannot be reused is
/// deleted and a new one made instead); also says whether the file was reused.
pub(super) fn prepare_segment(
    paths: &Paths,
    id: u64,
    capacity: u64,
    free: Option<PathBuf>,
) -> Result<(Segment, bool), WalError> {
    if let Some(free) = free {
        match Segment::prepare_recycled(paths, id, capacity, &free) {
            Ok(seg) => return Ok((seg, true)),
            Err(_) => {
                let _ = fs::remove_file(&free);
                let _ = fs::remove_file(paths.tmp(id));
            }
        }
    }
    Ok((Segment::prepare(paths, id, capacity)?, false))
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
    /// An entry of `len` bytes does not fit under the active file's limit. An empty file
    /// takes any entry (growing if it must, for an entry larger than a file); otherwise
    /// roll.
    #[cold]
    pub(super) fn make_room(&self, a: &mut Active, len: u64) -> Result<(), WalError> {
        let header = a.seg.header_len();
        if a.tally.size > header {
            return self.roll_locked(a, len);
        }
        let need = header + len + TAIL;
        if need > a.seg.capacity() {
            let grown = a
                .seg
                .grow(need)
                .map_err(|e| self.seg_err("grow", a.seg.id(), 0, e))?;
            a.seg = grown;
        }
        a.limit = a.limit.max(need);
        Ok(())
    }

    /// A new file under its temporary name, in a kept file if there is one, numbered `id`
    /// or the time now if that is later (HBase numbers a file by its creation time).
    pub(super) fn prepare(&self, id: u64) -> Result<Segment, WalError> {
        let id = id.max(now_ms());
        let free = self.closed.lock().free.pop();
        let capacity = fitted_capacity(&self.paths.dir, self.capacity);
        let (seg, reused) = prepare_segment(&self.paths, id, capacity, free)?;
        if reused {
            self.stats.segments_reused.fetch_add(1, Relaxed);
        }
        Ok(seg)
    }

    /// Seals the active file and switches to the next, sized for at least a `len`-byte
    /// entry. The old one is sealed (trailer, truncate, fdatasync) before the next one is
    /// used, so after a machine crash only the newest file can have a torn tail.
    #[cold]
    pub(super) fn roll_locked(&self, a: &mut Active, len: u64) -> Result<(), WalError> {
        let old_id = a.seg.id();
        let min_id = next_number(Some(old_id), &self.paths.file(old_id))?;
        let mut next = self.take_prepared(min_id)?;
        let id = next.id();
        let need = next.header_len() + len + TAIL;
        if next.capacity() < need {
            next = next
                .grow(need)
                .map_err(|e| io_err("grow", &self.paths.tmp(id), 0)(e))?;
        }
        mapped::publish(&self.paths, id)?;
        a.limit = self.options.roll_size.min(next.capacity()).max(need);
        let header = next.header_len();
        let old = std::mem::replace(&mut a.seg, next);
        a.since = Instant::now();
        // Sealing (trailer, truncate + fdatasync of up to a whole file) happens off the
        // append lock: the background thread does it, or an FSYNC_WAL group commit that
        // needs it. Until then the old file ends in the end marker, which replay and HBase's
        // reader take as a clean end.
        let closed = a.tally.finish_segment(header);
        self.seal_queue.lock().push_back(SealJob {
            seg: old,
            size: closed.size,
            end_lsn: a.tally.lsn,
            appends: a.tally.appends,
        });
        a.prefault_at = PREFAULT_STEP;
        self.closed
            .lock()
            .ledger
            .insert((old_id, self.paths.file(old_id)), closed);
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

    /// The file the background thread prepared (waiting if it is being prepared) if it is
    /// numbered `id` or later, or a new one prepared here.
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
            Some(seg) if seg.id() >= id => Ok(seg),
            other => {
                if let Some(stale) = other {
                    let tmp = self.paths.tmp(stale.id());
                    drop(stale);
                    let _ = fs::remove_file(tmp);
                }
                self.prepare(id)
            }
        }
    }
}
