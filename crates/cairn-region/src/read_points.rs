//! The read points of a region's open reads: compactions keep every version the oldest of them
//! can still see (HBase's `RegionScannerImpl` read points, `getSmallestReadPoint`).
//!
//! Every get, multi-get and scan registers here, from every thread, and the registration is
//! dropped when the read ends; only compactions and flushes ask for the smallest. Registering
//! therefore takes no lock: a registration claims a free slot of a fixed array with one
//! compare-and-swap (each slot on its own cache line, each thread starting at its own slot) and
//! frees it with one store. A lock there, even sharded, let a thread preempted while holding it
//! stall every other reader of its shard for a scheduler time slice once threads outnumber cores.
//! Only when every slot is taken (more concurrent reads than [`SLOTS`], e.g. many open scanners)
//! does a registration go to a locked overflow list.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

/// Slots of the lock-free part: enough for a registration per client thread of a busy server
/// (75 PE clients at most hold 75 at once) before the overflow list is used.
const SLOTS: usize = 128;

/// A slot's value when no read holds it. A read point is an MVCC write number, which starts at 0
/// and never reaches `u64::MAX`.
const FREE: u64 = u64::MAX;

/// The read points of one region's open reads.
#[derive(Debug)]
pub struct ReadPoints {
    slots: Box<[CachePadded<AtomicU64>]>,
    /// (read point, registrations at it) that found every slot taken.
    overflow: Mutex<Vec<(u64, usize)>>,
}

impl Default for ReadPoints {
    fn default() -> Self {
        ReadPoints::with_slots(SLOTS)
    }
}

/// Where a registration lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Slot(usize),
    Overflow,
}

/// The slot a thread tries first: threads spread over the array so that two of them rarely
/// claim, or write to, the same cache line.
fn home_slot(slots: usize) -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static HOME: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    HOME.with(|h| *h % slots)
}

impl ReadPoints {
    /// A registry of `slots` lock-free slots (at least one) before the overflow list.
    fn with_slots(slots: usize) -> ReadPoints {
        ReadPoints {
            slots: (0..slots.max(1))
                .map(|_| CachePadded::new(AtomicU64::new(FREE)))
                .collect(),
            overflow: Mutex::new(Vec::new()),
        }
    }

    /// Registers `rp` for a scanner that may outlive the caller (it keeps the registry alive).
    pub fn register(self: &Arc<Self>, rp: u64) -> ReadPointGuard {
        let place = self.add(rp);
        ReadPointGuard {
            points: self.clone(),
            rp,
            place,
        }
    }

    /// Registers `rp` for as long as the caller holds the result (a get, a multi-get).
    pub fn hold(&self, rp: u64) -> ReadPointHold<'_> {
        let place = self.add(rp);
        ReadPointHold {
            points: self,
            rp,
            place,
        }
    }

    fn add(&self, rp: u64) -> Place {
        debug_assert_ne!(rp, FREE, "u64::MAX marks a free slot");
        let n = self.slots.len();
        let home = home_slot(n);
        for i in 0..n {
            let slot = &self.slots[(home + i) % n];
            // SeqCst, as `smallest`'s loads: a registration that returned before `smallest`
            // began is seen by it, as it was under a lock.
            if slot.load(Ordering::Relaxed) == FREE
                && slot
                    .compare_exchange(FREE, rp, Ordering::SeqCst, Ordering::Relaxed)
                    .is_ok()
            {
                return Place::Slot((home + i) % n);
            }
        }
        let mut m = self.overflow.lock();
        match m.iter_mut().find(|(p, _)| *p == rp) {
            Some((_, c)) => *c += 1,
            None => m.push((rp, 1)),
        }
        Place::Overflow
    }

    fn remove(&self, rp: u64, place: Place) {
        match place {
            Place::Slot(i) => self.slots[i].store(FREE, Ordering::SeqCst),
            Place::Overflow => {
                let mut m = self.overflow.lock();
                if let Some(i) = m.iter().position(|(p, _)| *p == rp) {
                    m[i].1 -= 1;
                    if m[i].1 == 0 {
                        m.swap_remove(i);
                    }
                }
            }
        }
    }

    /// The smallest registered read point, or `default` when none is (or when every registered
    /// one is larger).
    pub fn smallest(&self, default: u64) -> u64 {
        let in_slots = self
            .slots
            .iter()
            .map(|s| s.load(Ordering::SeqCst))
            .fold(default, u64::min);
        self.overflow
            .lock()
            .iter()
            .map(|(p, _)| *p)
            .fold(in_slots, u64::min)
    }

    /// True when nothing is registered (tests).
    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.slots.iter().all(|s| s.load(Ordering::SeqCst) == FREE)
            && self.overflow.lock().is_empty()
    }
}

/// A registration that keeps the registry alive (held by a scanner).
pub struct ReadPointGuard {
    points: Arc<ReadPoints>,
    rp: u64,
    place: Place,
}

impl Drop for ReadPointGuard {
    fn drop(&mut self) {
        self.points.remove(self.rp, self.place);
    }
}

/// A registration that borrows the registry (held on a caller's stack).
pub struct ReadPointHold<'a> {
    points: &'a ReadPoints,
    rp: u64,
    place: Place,
}

impl Drop for ReadPointHold<'_> {
    fn drop(&mut self) {
        self.points.remove(self.rp, self.place);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::atomic::AtomicBool;

    use proptest::prelude::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    use super::*;

    #[test]
    fn the_smallest_read_point_is_the_oldest_still_registered_on_any_thread() {
        let points = Arc::new(ReadPoints::default());
        assert_eq!(points.smallest(100), 100);
        // Registrations from many threads land in different slots; guards may be dropped
        // on another thread than the one that registered.
        let guards: Vec<ReadPointGuard> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..40u64)
                .map(|i| {
                    let points = points.clone();
                    s.spawn(move || points.register(50 + i % 20))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(points.smallest(100), 50);
        assert_eq!(points.smallest(10), 10);
        let (low, rest): (Vec<_>, Vec<_>) = guards.into_iter().partition(|g| g.rp < 60);
        {
            let _hold = points.hold(55);
            drop(low);
            assert_eq!(points.smallest(100), 55);
        }
        assert_eq!(points.smallest(100), 60);
        drop(rest);
        assert_eq!(points.smallest(100), 100);
        assert!(points.is_empty());
    }

    #[test]
    fn registrations_past_the_slots_go_to_the_overflow_and_still_count() {
        let points = Arc::new(ReadPoints::with_slots(4));
        let mut guards: Vec<ReadPointGuard> = (0..10u64).map(|i| points.register(20 - i)).collect();
        assert_eq!(
            guards.iter().filter(|g| g.place == Place::Overflow).count(),
            6
        );
        assert_eq!(points.smallest(100), 11);
        // The oldest ones (the last registered) are in the overflow: dropping them uncovers the
        // slots' smallest.
        guards.truncate(4);
        assert_eq!(points.smallest(100), 17);
        drop(guards);
        assert!(points.is_empty());
    }

    /// One step of a sequence of registrations and drops on one thread.
    #[derive(Debug, Clone)]
    enum Op {
        Register(u64),
        /// Drops the held registration at this index (modulo how many are held).
        Drop(usize),
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        prop::collection::vec(
            prop_oneof![
                (0u64..50).prop_map(Op::Register),
                any::<usize>().prop_map(Op::Drop),
            ],
            0..200,
        )
    }

    proptest! {
        /// After every step, `smallest` is the minimum of a multiset model of what is held,
        /// whether registrations sit in slots or (with 3 slots, often) in the overflow.
        #[test]
        fn smallest_matches_a_model(ops in ops(), slots in 1usize..6) {
            let points = Arc::new(ReadPoints::with_slots(slots));
            let mut held: Vec<ReadPointGuard> = Vec::new();
            let mut model: BTreeMap<u64, usize> = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Register(rp) => {
                        held.push(points.register(rp));
                        *model.entry(rp).or_default() += 1;
                    }
                    Op::Drop(i) if !held.is_empty() => {
                        let g = held.swap_remove(i % held.len());
                        let n = model.get_mut(&g.rp).unwrap();
                        *n -= 1;
                        if *n == 0 {
                            model.remove(&g.rp);
                        }
                    }
                    Op::Drop(_) => {}
                }
                let expected = model.keys().next().copied().unwrap_or(1000);
                prop_assert_eq!(points.smallest(1000), expected);
            }
            drop(held);
            prop_assert!(points.is_empty());
        }
    }

    /// Many threads register and drop at random while another asks for the smallest: every
    /// registration that was in place for the whole of a `smallest` call is covered by its
    /// answer, and the answer is never below every read point ever registered.
    #[test]
    fn concurrent_registrations_are_never_missed() {
        const THREADS: usize = 12;
        const NONE: u64 = u64::MAX;
        // Few slots, so that threads collide on slots and some use the overflow.
        let points = Arc::new(ReadPoints::with_slots(8));
        // What each worker holds, published after registering and withdrawn before dropping,
        // with a generation so the checker can tell one registration from the next.
        let pinned: Vec<CachePadded<AtomicU64>> = (0..THREADS)
            .map(|_| CachePadded::new(AtomicU64::new(NONE)))
            .collect();
        let stop = AtomicBool::new(false);
        let pack = |generation: u64, rp: u64| (generation << 20) | rp;
        let failure = std::thread::scope(|s| {
            for (t, pin) in pinned.iter().enumerate() {
                let (points, stop) = (&points, &stop);
                s.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(t as u64);
                    let mut generation = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        generation += 1;
                        // A spare registration now and then keeps two slots per thread busy.
                        let spare = rng.random_bool(0.3).then(|| points.hold(1000 + t as u64));
                        let rp = rng.random_range(100..1000u64);
                        let g = points.register(rp);
                        pin.store(pack(generation, rp), Ordering::SeqCst);
                        // Hold it a while, sometimes across a reschedule, so that the
                        // checker often runs while it is held.
                        for _ in 0..rng.random_range(0..500) {
                            std::hint::spin_loop();
                        }
                        if rng.random_bool(0.5) {
                            std::thread::yield_now();
                        }
                        pin.store(NONE, Ordering::SeqCst);
                        drop(g);
                        drop(spare);
                    }
                });
            }
            // Failures are collected, not asserted here: a panic inside the scope would leave
            // the workers running and the scope waiting for them.
            let mut failure = None;
            let mut checks = 0;
            let started = std::time::Instant::now();
            while failure.is_none()
                && (checks < 20_000 || started.elapsed().as_millis() < 500)
                && started.elapsed().as_secs() < 20
            {
                let before: Vec<u64> = pinned.iter().map(|p| p.load(Ordering::SeqCst)).collect();
                let smallest = points.smallest(NONE);
                let after: Vec<u64> = pinned.iter().map(|p| p.load(Ordering::SeqCst)).collect();
                for (b, a) in before.iter().zip(&after) {
                    let rp = b & ((1 << 20) - 1);
                    if *b != NONE && b == a && smallest > rp {
                        failure = Some(format!("smallest {smallest} missed a held {rp}"));
                    }
                }
                if smallest < 100 {
                    failure = Some(format!("smallest {smallest} was never registered"));
                }
                checks += 1;
            }
            stop.store(true, Ordering::Relaxed);
            failure
        });
        if let Some(f) = failure {
            panic!("{f}");
        }
        assert!(points.is_empty());
    }
}
