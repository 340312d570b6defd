//! The call queue between connection readers and handler threads.
//!
//! A bounded FIFO under one mutex, with a condition variable the idle handlers sleep on. It
//! replaces a `crossbeam_channel::bounded`, whose receivers spin and call `sched_yield`
//! before they sleep: with one call in flight (a single client thread doing gets) every call
//! woke a handler that then yielded its way back to sleep, and a profile of `cairn serve` under
//! HBase's PerformanceEvaluation showed a third of the server's CPU in `sched_yield` and three
//! times more system than user time. A handler here goes straight to sleep when the queue is
//! empty; a reader wakes one only when one is asleep.

use std::collections::VecDeque;

use parking_lot::{Condvar, Mutex};

/// A bounded multi-producer, multi-consumer FIFO whose consumers block without spinning.
pub struct CallQueue<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
    capacity: usize,
}

struct State<T> {
    items: VecDeque<T>,
    /// Consumers asleep in [`CallQueue::pop`].
    sleeping: usize,
}

impl<T> CallQueue<T> {
    /// A queue that holds at most `capacity` items (at least one).
    pub fn new(capacity: usize) -> CallQueue<T> {
        CallQueue {
            state: Mutex::new(State {
                items: VecDeque::new(),
                sleeping: 0,
            }),
            ready: Condvar::new(),
            capacity: capacity.max(1),
        }
    }

    /// Adds `item` unless the queue is full, in which case it is handed back.
    pub fn try_push(&self, item: T) -> Result<(), T> {
        let mut s = self.state.lock();
        if s.items.len() >= self.capacity {
            return Err(item);
        }
        self.push_locked(&mut s, item);
        Ok(())
    }

    /// Adds `item` even past the capacity: for the stop signals, which must not be refused.
    pub fn push(&self, item: T) {
        let mut s = self.state.lock();
        self.push_locked(&mut s, item);
    }

    fn push_locked(&self, s: &mut State<T>, item: T) {
        s.items.push_back(item);
        if s.sleeping > 0 {
            self.ready.notify_one();
        }
    }

    /// Takes the oldest item, sleeping while there is none.
    pub fn pop(&self) -> T {
        let mut s = self.state.lock();
        loop {
            if let Some(item) = s.items.pop_front() {
                return item;
            }
            s.sleeping += 1;
            self.ready.wait(&mut s);
            s.sleeping -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::Arc;
    use std::thread;
    use std::time::Duration;

    #[test]
    fn refuses_past_capacity_and_pops_in_order() {
        let q = CallQueue::new(2);
        assert_eq!(q.try_push(1), Ok(()));
        assert_eq!(q.try_push(2), Ok(()));
        assert_eq!(q.try_push(3), Err(3));
        q.push(4);
        assert_eq!((q.pop(), q.pop(), q.pop()), (1, 2, 4));
        assert!(q.state.lock().items.is_empty());
        assert_eq!(
            CallQueue::new(0).try_push(()),
            Ok(()),
            "capacity is at least one"
        );
    }

    #[test]
    fn a_sleeping_consumer_wakes_for_a_push() {
        let q = Arc::new(CallQueue::new(4));
        let q2 = q.clone();
        let consumer = thread::spawn(move || q2.pop());
        // Give the consumer time to fall asleep, so the push has to wake it.
        while q.state.lock().sleeping == 0 {
            thread::sleep(Duration::from_millis(1));
        }
        q.try_push(7).unwrap();
        assert_eq!(consumer.join().unwrap(), 7);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// Every item pushed by several producers is popped exactly once by several consumers.
        #[test]
        fn every_item_once(producers in 1usize..4, consumers in 1usize..4, per in 1usize..200) {
            let q = Arc::new(CallQueue::new(8));
            let mut ps = Vec::new();
            for p in 0..producers {
                let q = q.clone();
                ps.push(thread::spawn(move || {
                    for i in 0..per {
                        // Items are Option<usize>; None tells a consumer to stop.
                        let mut item = Some(p * per + i);
                        while let Err(back) = q.try_push(item) {
                            item = back;
                            thread::yield_now();
                        }
                    }
                }));
            }
            let mut cs = Vec::new();
            for _ in 0..consumers {
                let q = q.clone();
                cs.push(thread::spawn(move || {
                    let mut got = Vec::new();
                    loop {
                        match q.pop() {
                            None => return got,
                            Some(v) => got.push(v),
                        }
                    }
                }));
            }
            for p in ps {
                p.join().unwrap();
            }
            for _ in 0..consumers {
                q.push(None);
            }
            let mut all: Vec<usize> = cs.into_iter().flat_map(|c| c.join().unwrap()).collect();
            all.sort_unstable();
            prop_assert_eq!(all, (0..producers * per).collect::<Vec<_>>());
        }
    }
}
