//! WAL metrics: the counters both backends keep and the [`WalStats`] they report.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use crate::ledger::ActiveTally;

/// Counters for HBase-style WAL metrics (`appendCount`, `appendSize`, `syncTime`,
/// `rollRequest`, ...), all since [`Wal::open`](crate::Wal::open).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalStats {
    /// Edits appended (every durability but `SKIP_WAL`).
    pub appends: u64,
    /// `SKIP_WAL` appends, which wrote nothing.
    pub skipped_appends: u64,
    /// Record bytes appended, frames included.
    pub appended_bytes: u64,
    /// Group commits: flushes led for `FSYNC_WAL` appenders (or [`Wal::sync`](crate::Wal::sync)`(true)`), each
    /// covering every append copied before it. `SYNC_WAL` and `ASYNC_WAL` appends are single
    /// copies into the mapped segment and need no batch.
    pub batches: u64,
    /// Most appends made durable by one group commit.
    pub max_batch_edits: u64,
    /// fdatasync calls, rolls and close included.
    pub fsyncs: u64,
    /// Time spent copying records into the segment (lock wait included; estimated from one
    /// append in 64).
    pub write_time: Duration,
    /// Time spent in fdatasync.
    pub fsync_time: Duration,
    /// fdatasync calls by how long each took: entry `i` counts those that took at most
    /// [`FSYNC_BUCKET_BOUNDS`]`[i]` and longer than the bound before it (the last counts the
    /// rest), so a scraper can draw the latency distribution, not only its mean.
    pub fsync_buckets: [u64; FSYNC_BUCKETS],
    /// Segments rolled.
    pub rolls: u64,
    /// Files archived to `oldWALs/` by [`Wal::mark_flushed`](crate::Wal::mark_flushed) (kept ones not
    /// counted).
    pub segments_deleted: u64,
    /// Segments whose file was kept by [`Wal::mark_flushed`](crate::Wal::mark_flushed) for reuse
    /// ([`WalOptions::recycled_segments`](crate::WalOptions::recycled_segments)).
    pub segments_recycled: u64,
    /// New segments made from a kept file.
    pub segments_reused: u64,
}

/// How many [`WalStats::fsync_buckets`] there are: one per bound and one past the last.
pub const FSYNC_BUCKETS: usize = FSYNC_BUCKET_BOUNDS.len() + 1;

/// Upper bounds of [`WalStats::fsync_buckets`], in seconds: 50 µs (a page-cache-only sync) to
/// 10 s (a stalled disk).
pub const FSYNC_BUCKET_BOUNDS: [f64; 15] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 2.5,
    10.0,
];

/// The bucket a sync of `took` falls in.
fn fsync_bucket(took: Duration) -> usize {
    let s = took.as_secs_f64();
    FSYNC_BUCKET_BOUNDS.partition_point(|&b| b < s)
}

/// The counters not kept under the active segment's lock (those are in [`ActiveTally`]).
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) skipped_appends: AtomicU64,
    pub(crate) batches: AtomicU64,
    pub(crate) max_batch_edits: AtomicU64,
    pub(crate) fsyncs: AtomicU64,
    pub(crate) fsync_nanos: AtomicU64,
    pub(crate) fsync_buckets: [AtomicU64; FSYNC_BUCKETS],
    pub(crate) rolls: AtomicU64,
    pub(crate) segments_deleted: AtomicU64,
    pub(crate) segments_recycled: AtomicU64,
    pub(crate) segments_reused: AtomicU64,
}

impl Counters {
    /// One fdatasync (or hsync) that started at `started` and has just ended.
    pub(crate) fn count_fsync(&self, started: Instant) {
        let took = started.elapsed();
        self.fsync_nanos.fetch_add(took.as_nanos() as u64, Relaxed);
        self.fsync_buckets[fsync_bucket(took)].fetch_add(1, Relaxed);
        self.fsyncs.fetch_add(1, Relaxed);
    }

    /// One group commit that made `edits` appends durable.
    pub(crate) fn count_batch(&self, edits: u64) {
        self.batches.fetch_add(1, Relaxed);
        self.max_batch_edits.fetch_max(edits, Relaxed);
    }

    /// The stats, with the active segment's tally and the time spent writing records.
    pub(crate) fn snapshot(&self, tally: &ActiveTally, write_time: Duration) -> WalStats {
        WalStats {
            appends: tally.appends,
            skipped_appends: self.skipped_appends.load(Relaxed),
            appended_bytes: tally.lsn,
            batches: self.batches.load(Relaxed),
            max_batch_edits: self.max_batch_edits.load(Relaxed),
            fsyncs: self.fsyncs.load(Relaxed),
            write_time,
            fsync_time: Duration::from_nanos(self.fsync_nanos.load(Relaxed)),
            fsync_buckets: std::array::from_fn(|i| self.fsync_buckets[i].load(Relaxed)),
            rolls: self.rolls.load(Relaxed),
            segments_deleted: self.segments_deleted.load(Relaxed),
            segments_recycled: self.segments_recycled.load(Relaxed),
            segments_reused: self.segments_reused.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sync_lands_in_the_bucket_of_its_bound() {
        assert_eq!(fsync_bucket(Duration::from_micros(10)), 0);
        assert_eq!(fsync_bucket(Duration::from_micros(50)), 0);
        assert_eq!(fsync_bucket(Duration::from_micros(51)), 1);
        assert_eq!(fsync_bucket(Duration::from_millis(3)), 6);
        assert_eq!(fsync_bucket(Duration::from_secs(60)), FSYNC_BUCKETS - 1);
        let c = Counters::default();
        c.count_fsync(Instant::now());
        let s = c.snapshot(&ActiveTally::new(0), Duration::ZERO);
        assert_eq!(s.fsync_buckets.iter().sum::<u64>(), 1);
        assert_eq!(s.fsyncs, 1);
    }
}
