//! Multi-version concurrency control: HBase's `MultiVersionConcurrencyControl`.
//!
//! Every write takes the next write number (its sequence id) and becomes visible only when
//! it and every write before it have completed, so a reader that fixes the read point at
//! open sees one consistent snapshot with no gaps.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{Condvar, Mutex};

/// A region's write numbers and read point (HBase's `MultiVersionConcurrencyControl`). One per
/// region: a write number is the edit's sequence id, in the WAL and in the cells.
#[derive(Debug)]
pub struct Mvcc {
    read_point: AtomicU64,
    /// Write numbers begun and not yet visible, in order, with their completion flags.
    queue: Mutex<(u64, VecDeque<(u64, bool)>)>,
    advanced: Condvar,
}

impl Mvcc {
    /// Starts with everything up to `start` visible (after replay, the highest recovered id).
    pub fn new(start: u64) -> Mvcc {
        Mvcc {
            read_point: AtomicU64::new(start),
            queue: Mutex::new((start, VecDeque::new())),
            advanced: Condvar::new(),
        }
    }

    /// The highest sequence id visible to new readers: every write at or below it has completed,
    /// so a reader that fixes it sees no half-applied row.
    pub fn read_point(&self) -> u64 {
        self.read_point.load(Ordering::Acquire)
    }

    /// The highest write number handed out.
    pub fn write_point(&self) -> u64 {
        self.queue.lock().0
    }

    /// Takes the next write number.
    pub fn begin(&self) -> u64 {
        let mut q = self.queue.lock();
        q.0 += 1;
        let n = q.0;
        q.1.push_back((n, false));
        n
    }

    /// Marks `n` complete and advances the read point over every completed prefix.
    pub fn complete(&self, n: u64) {
        let mut q = self.queue.lock();
        if let Some(e) = q.1.iter_mut().find(|e| e.0 == n) {
            e.1 = true;
        }
        let mut advanced = None;
        while let Some(&(m, true)) = q.1.front() {
            q.1.pop_front();
            advanced = Some(m);
        }
        if let Some(m) = advanced {
            self.read_point.store(m, Ordering::Release);
            self.advanced.notify_all();
        }
    }

    /// Completes `n` and waits until it is visible (HBase's `completeAndWait`): a writer's
    /// own read after its put must see it.
    pub fn complete_and_wait(&self, n: u64) {
        self.complete(n);
        let mut q = self.queue.lock();
        while self.read_point.load(Ordering::Acquire) < n {
            self.advanced.wait(&mut q);
        }
    }

    /// Raises both points to at least `n` (after replaying recovered edits).
    pub fn advance_to(&self, n: u64) {
        let mut q = self.queue.lock();
        if q.0 < n && q.1.is_empty() {
            q.0 = n;
            self.read_point.store(n, Ordering::Release);
        }
    }

    /// Makes the next write number greater than `n` without waiting for writes in flight:
    /// numbers up to `n` are never handed out (a bulk-loaded file already claims them).
    pub fn skip_past(&self, n: u64) {
        let mut q = self.queue.lock();
        if q.0 < n {
            q.0 = n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_point_waits_for_gaps() {
        let m = Mvcc::new(10);
        let a = m.begin();
        let b = m.begin();
        assert_eq!((a, b), (11, 12));
        m.complete(b);
        assert_eq!(
            m.read_point(),
            10,
            "12 must stay invisible while 11 is open"
        );
        m.complete(a);
        assert_eq!(m.read_point(), 12);
    }

    proptest::proptest! {
        /// Whatever order writes complete in, the read point is always just below the oldest
        /// write still open: it never passes an uncompleted write and never lags a completed
        /// prefix.
        #[test]
        fn read_point_is_the_completed_prefix(
            order in proptest::strategy::Strategy::prop_shuffle(
                proptest::strategy::Just((0u64..40).collect::<Vec<u64>>())
            ),
        ) {
            let m = Mvcc::new(100);
            let ids: Vec<u64> = (0..40).map(|_| m.begin()).collect();
            proptest::prop_assert_eq!(m.write_point(), 140);
            let mut done = [false; 40];
            for i in order {
                m.complete(ids[i as usize]);
                done[i as usize] = true;
                let open = done.iter().position(|d| !d).unwrap_or(40) as u64;
                proptest::prop_assert_eq!(m.read_point(), 100 + open);
            }
        }
    }

    #[test]
    fn advance_to_moves_both_points_only_when_idle() {
        let m = Mvcc::new(5);
        m.advance_to(9);
        assert_eq!((m.read_point(), m.write_point()), (9, 9));
        m.advance_to(3);
        assert_eq!(m.read_point(), 9, "never backwards");
        assert_eq!(m.begin(), 10, "numbers continue past replayed edits");
    }

    #[test]
    fn complete_and_wait_returns_when_visible() {
        let m = std::sync::Arc::new(Mvcc::new(0));
        let a = m.begin();
        let b = m.begin();
        let m2 = m.clone();
        let t = std::thread::spawn(move || m2.complete_and_wait(b));
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!t.is_finished());
        m.complete(a);
        t.join().unwrap();
        assert_eq!(m.read_point(), 2);
    }
}
