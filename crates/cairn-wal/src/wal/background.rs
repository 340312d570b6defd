//! The background thread: prepares the next file (so that a roll only renames it), seals
//! rolled-away files, makes a rolled-to file's name durable, keeps the active file (and,
//! once it is half full, the next one) prefaulted ahead of the writer, and rolls the active
//! file once it is older than the roll period.

use std::sync::atomic::Ordering::{Acquire, Release};
use std::sync::Arc;
use std::time::Duration;

use super::{sync_dir, Shared, PREFAULT_AHEAD};
use crate::mapped::{self, Segment};

/// How often the background thread looks at the active file's age.
const AGE_CHECK: Duration = Duration::from_secs(1);

/// What the background thread is asked to do, under `Shared::bg`.
#[derive(Default)]
pub(super) struct Background {
    /// The segment to prepare next (the active one's id + 1).
    pub(super) next_id: u64,
    /// `next_id` is to be prepared.
    pub(super) prepare: bool,
    /// Preparing it right now.
    pub(super) preparing: bool,
    /// A prepared segment, still under its temporary name.
    pub(super) prepared: Option<Segment>,
    /// The writer has moved on: prefault further ahead.
    pub(super) prefault: bool,
    /// A rolled-away segment is waiting to be sealed.
    pub(super) seal: bool,
    pub(super) shutdown: bool,
}

impl Shared {
    /// `hbase.regionserver.logroll.period`: rolls the active file if it holds anything and is
    /// older than the roll period (HBase's `LogRoller` does not roll an empty WAL either).
    fn roll_if_old(&self) {
        let mut a = self.active.lock();
        if a.since.elapsed() < self.options.roll_period
            || a.tally.size <= a.seg.header_len()
            || self.check().is_err()
        {
            return;
        }
        // A failed roll changes nothing; the next check tries again (and appends report it).
        if self.roll_locked(&mut a, 0).is_ok() {
            drop(a);
            let _ = self.seal_pending();
        }
    }

    /// The background thread: prepares the next segment (so that a roll only has to rename
    /// it), makes a rolled-to segment's name durable, and keeps the active segment prefaulted
    /// ahead of the writer.
    pub(super) fn run_background(&self) {
        // (segment id, offset) the active segment is prefaulted to, and the same for the
        // prepared segment once it has been prefaulted ahead of its turn.
        let mut prefaulted = (0u64, 0u64);
        let mut prefaulted_next = (0u64, 0u64);
        loop {
            self.roll_if_old();
            let (prepare, prefault) = {
                let mut b = self.bg.lock();
                while !b.shutdown && !b.prepare && !b.prefault && !b.seal {
                    if self.bg_wake.wait_for(&mut b, AGE_CHECK).timed_out() {
                        break;
                    }
                }
                if b.shutdown {
                    return;
                }
                if std::mem::take(&mut b.seal) {
                    drop(b);
                    // A failure marks the WAL broken; appenders then report it.
                    let _ = self.seal_pending();
                    continue;
                }
                let prepare = std::mem::take(&mut b.prepare).then_some(b.next_id);
                b.preparing = prepare.is_some();
                (prepare, std::mem::take(&mut b.prefault))
            };
            if let Some(id) = prepare {
                // The active segment (id - 1) was just renamed into place: make its name
                // durable now, so that FSYNC_WAL appenders rarely have to. Failures are left
                // to them to report.
                let active = id - 1;
                if self.durable_name.load(Acquire) < active && sync_dir(&self.paths.dir).is_ok() {
                    self.durable_name.fetch_max(active, Release);
                }
                // A failure here is retried (and reported) by the roll that needs the segment.
                let seg = self.prepare(id).ok();
                let mut b = self.bg.lock();
                b.preparing = false;
                b.prepared = seg;
                self.bg_prepared.notify_all();
            }
            if prefault {
                let (map, id, offset, capacity) = {
                    let a = self.active.lock();
                    let s = &a.seg;
                    (Arc::clone(s.map()), s.id(), a.tally.size, s.capacity())
                };
                let from = if prefaulted.0 == id {
                    prefaulted.1.max(offset)
                } else if prefaulted_next.0 == id {
                    prefaulted_next.1.max(offset)
                } else {
                    offset
                };
                let to = offset.saturating_add(PREFAULT_AHEAD).min(capacity);
                if to > from {
                    mapped::populate(&map, capacity, from, to - from);
                    prefaulted = (id, to);
                }
                // Once the active segment is half full, the whole next one, so the writer
                // finds it ready: a segment's first touch of each page (allocating and
                // zeroing it) is most of what writing it costs, and done here it stays off
                // the writer's path even when this thread falls behind the writer. Not
                // earlier, so a WAL that is opened and closed with little written (tests,
                // tools) does not pay for a whole segment.
                if offset >= capacity / 2 && prefaulted_next.0 <= id {
                    let next = self
                        .bg
                        .lock()
                        .prepared
                        .as_ref()
                        .map(|s| (s.id(), Arc::clone(s.map()), s.capacity()));
                    if let Some((next_id, map, capacity)) = next {
                        mapped::populate(&map, capacity, 0, capacity);
                        prefaulted_next = (next_id, capacity);
                    }
                }
            }
        }
    }
}
