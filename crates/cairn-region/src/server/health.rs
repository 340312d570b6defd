//! Staying up through faults: the free-space floor checked at start-up, bringing a failed WAL
//! back once its cause clears (RocksDB's automatic resume from a background error, where
//! HBase aborts the region server), and the backoff that paces retries of failed flushes and
//! compactions and says each failure once.

use std::time::{Duration, Instant};

use super::*;

/// Free space a server needs in its root and WAL directories to start: its first WAL segment
/// ([`cairn_wal::MIN_SEGMENT`] at the least, more when there is room) and room to flush what
/// the WAL replays. Below this, [`RegionServer::open`] fails with
/// [`RegionError::NoSpaceToStart`] saying how much is free and how much is needed.
pub const MIN_FREE_SPACE: u64 = 8 << 20;

/// First pause before a failed operation is tried again; doubled after each failure.
const FIRST_RETRY: Duration = Duration::from_millis(500);
/// Longest pause between tries (RocksDB checks free space every 5 s while writes are stopped).
const LAST_RETRY: Duration = Duration::from_secs(5);

/// Fails when `dir` (on `fs`) has less than [`MIN_FREE_SPACE`] free. Filesystems that cannot
/// say (HDFS) pass.
pub(super) fn check_free_space(fs: &dyn FileSystem, dir: &Path) -> Result<()> {
    match fs.free_space(dir) {
        Ok(Some(free)) if free < MIN_FREE_SPACE => Err(RegionError::NoSpaceToStart {
            path: dir.display().to_string(),
            free,
            needed: MIN_FREE_SPACE,
        }),
        _ => Ok(()),
    }
}

/// Retries of one failing operation: when the next try is due, and what the last failure
/// said, so that a failure repeated on every try is logged once rather than each time.
#[derive(Debug, Default)]
pub struct Retry {
    failures: u32,
    due: Option<Instant>,
    last: Option<String>,
}

impl Retry {
    /// Whether a try may run now.
    pub fn due(&self, now: Instant) -> bool {
        self.due.is_none_or(|d| now >= d)
    }

    /// Records a failed try of `what`: the next waits twice as long as the last (from
    /// [`FIRST_RETRY`] up to [`LAST_RETRY`]); a message unlike the previous one is logged.
    pub fn failed(&mut self, what: &str, error: &str, now: Instant) {
        self.failures = self.failures.saturating_add(1);
        let pause = FIRST_RETRY
            .saturating_mul(1 << (self.failures - 1).min(16))
            .min(LAST_RETRY);
        self.due = Some(now + pause);
        if self.last.as_deref() != Some(error) {
            tracing::error!(
                "{what} failed (retrying by itself every {LAST_RETRY:?} at most): {error}"
            );
            self.last = Some(error.to_string());
        }
    }

    /// Records a successful try, logging the recovery if earlier tries failed.
    pub fn succeeded(&mut self, what: &str) {
        if self.failures > 0 {
            tracing::info!("{what} succeeded after {} failed tries", self.failures);
        }
        *self = Retry::default();
    }

    /// Failed tries since the last success.
    pub fn failures(&self) -> u32 {
        self.failures
    }
}

impl RegionServer {
    /// Why writes are refused server-wide, if they are: the WAL failed and has not recovered
    /// yet. Reads go on meanwhile.
    pub fn write_failure(&self) -> Option<String> {
        self.wal.failure()
    }

    /// Brings a failed WAL back now (the background thread also tries, with backoff): starts a
    /// new WAL segment, flushes every region's memstore so that what the failed segments held
    /// is in store files, then lets writes in again. `Ok(false)` when nothing had failed; an
    /// error (a flush failing on a disk still full) leaves writes refused.
    pub fn recover(&self) -> Result<bool> {
        let tables: Vec<_> = self.tables.load().values().cloned().collect();
        let recovered = self.wal.recover(&mut || {
            for t in &tables {
                for r in &t.regions {
                    if !r.is_closed() && r.memstore_size() > 0 {
                        r.flush().map_err(|e| e.to_string())?;
                    }
                }
            }
            Ok(())
        })?;
        Ok(recovered)
    }

    /// The background tick's part: retries [`recover`](Self::recover) when it is due.
    pub(super) fn recover_when_due(&self) {
        if self.wal.failure().is_none() {
            return;
        }
        let now = Instant::now();
        if !self.wal_retry.lock().due(now) {
            return;
        }
        match self.recover() {
            Ok(true) => self.wal_retry.lock().succeeded("WAL recovery"),
            Ok(false) => {}
            Err(e) => self
                .wal_retry
                .lock()
                .failed("WAL recovery", &e.to_string(), now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_to_the_cap_and_reset_on_success() {
        let mut r = Retry::default();
        let t = Instant::now();
        assert!(r.due(t));
        let mut pauses = Vec::new();
        for _ in 0..6 {
            r.failed("flush", "disk full", t);
            let due = r.due.unwrap();
            assert!(!r.due(t) && r.due(due));
            pauses.push(due - t);
        }
        assert_eq!(
            pauses,
            [500, 1000, 2000, 4000, 5000, 5000].map(Duration::from_millis)
        );
        assert_eq!(r.failures(), 6);
        r.succeeded("flush");
        assert!(r.due(t) && r.failures() == 0);
    }

    #[test]
    fn the_floor_is_checked_against_what_the_filesystem_says() {
        let dir = tempfile::tempdir().unwrap();
        let fs = cairn_fs::LocalFileSystem;
        // This machine's disk has more than 8 MiB free; HDFS-like filesystems say nothing.
        check_free_space(&fs, dir.path()).unwrap();
        let e = RegionError::NoSpaceToStart {
            path: "/d".into(),
            free: 3 << 19,
            needed: MIN_FREE_SPACE,
        }
        .to_string();
        assert!(
            e.starts_with("/d has 1.5 MiB free; cairn needs at least 8.0 MiB"),
            "{e}"
        );
    }
}
