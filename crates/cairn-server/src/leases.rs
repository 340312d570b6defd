//! Open scanners of every protocol, by id, with their leases: the one registry the native RPC
//! and Thrift share.
//!
//! A scanner unused for the lease (`hbase.client.scanner.timeout.period`, 60 s) is closed by
//! [`Leases::expire`], which a reaper thread runs. HBase keeps any number of scanners until
//! their leases expire; cairn caps them (`cairn.ipc.server.max.open.scanners`,
//! `cairn.thrift.max.open.scanners`): opening one past the cap closes the least recently used
//! scanner not in a call right now, and its next call finds it gone, as after an expired
//! lease (HBase's client then reopens the scan after the last row it got).

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// One open scanner and when it was last used.
pub struct Leased<T> {
    value: T,
    last_used: Instant,
}

impl<T> Deref for Leased<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Leased<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

/// A scanner in the registry: locked by the call using it.
pub type Entry<T> = Arc<Mutex<Leased<T>>>;

/// Open scanners of one protocol, by id.
pub struct Leases<T> {
    open: Mutex<HashMap<u64, Entry<T>>>,
    next_id: AtomicU64,
    first_id: u64,
    last_id: u64,
    lease: Duration,
    max: usize,
    expired: AtomicU64,
    evicted: AtomicU64,
}

impl<T> Leases<T> {
    /// No scanners yet. Ids run from `first_id` to `last_id` and wrap around to `first_id`;
    /// at most `max` scanners are open at once (at least one).
    pub fn new(lease: Duration, max: usize, first_id: u64, last_id: u64) -> Leases<T> {
        let last_id = last_id.max(first_id);
        // Never more open than there are ids.
        let ids = (last_id - first_id).saturating_add(1);
        Leases {
            open: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(first_id),
            first_id,
            last_id,
            lease,
            max: max.clamp(1, usize::try_from(ids).unwrap_or(usize::MAX)),
            expired: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
        }
    }

    /// The lease: a scanner unused this long is closed.
    pub fn lease(&self) -> Duration {
        self.lease
    }

    fn take_id(&self) -> u64 {
        let (first, last) = (self.first_id, self.last_id);
        self.next_id
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |id| {
                Some(if id >= last { first } else { id + 1 })
            })
            .unwrap_or(first)
    }

    /// Registers a scanner; returns its id and the scanner. At the cap, the least recently
    /// used scanner not in a call is closed first.
    pub fn add(&self, value: T) -> (u64, Entry<T>) {
        let entry = Arc::new(Mutex::new(Leased {
            value,
            last_used: Instant::now(),
        }));
        let mut open = self.open.lock();
        while open.len() >= self.max {
            let victim = open
                .iter()
                .filter_map(|(id, s)| Some((*id, s.try_lock()?.last_used)))
                .min_by_key(|(_, used)| *used)
                .map(|(id, _)| id);
            let Some(victim) = victim else {
                // Every one is in a call: over the cap for the moment rather than waiting.
                break;
            };
            open.remove(&victim);
            self.evicted.fetch_add(1, Ordering::Relaxed);
        }
        // An id still open after the ids wrapped around is skipped: of `open.len() + 1`
        // consecutive ids one is free, as there are more ids than scanners.
        let mut id = self.take_id();
        for _ in 0..open.len() {
            if !open.contains_key(&id) {
                break;
            }
            id = self.take_id();
        }
        open.insert(id, entry.clone());
        (id, entry)
    }

    /// An open scanner, locked for the caller, its lease renewed.
    pub fn get(&self, id: u64) -> Option<Entry<T>> {
        let s = self.open.lock().get(&id).cloned()?;
        s.lock().last_used = Instant::now();
        Some(s)
    }

    /// An open scanner without renewing its lease (work done for the client between its
    /// calls, not a call of its own).
    pub fn peek(&self, id: u64) -> Option<Entry<T>> {
        self.open.lock().get(&id).cloned()
    }

    /// Closes a scanner; whether it was open.
    pub fn remove(&self, id: u64) -> bool {
        self.open.lock().remove(&id).is_some()
    }

    /// How many are open.
    pub fn len(&self) -> usize {
        self.open.lock().len()
    }

    /// Whether none is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Scanners closed so far because their lease ran out (`expiredScannerCount`).
    pub fn expired(&self) -> u64 {
        self.expired.load(Ordering::Relaxed)
    }

    /// Scanners closed so far to make room for new ones at the cap (`evictedScannerCount`).
    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }

    /// Closes every scanner whose lease has expired; returns how many. A scanner busy in a
    /// call is not expired under it (its lock is held).
    pub fn expire(&self) -> usize {
        let now = Instant::now();
        let mut open = self.open.lock();
        let before = open.len();
        open.retain(|_, s| match s.try_lock() {
            Some(g) => now.duration_since(g.last_used) < self.lease,
            None => true,
        });
        let n = before - open.len();
        self.expired.fetch_add(n as u64, Ordering::Relaxed);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_cap_the_least_recently_used_scanner_makes_room() {
        let s: Leases<()> = Leases::new(Duration::from_secs(60), 3, 7, u64::MAX);
        let (a, _) = s.add(());
        std::thread::sleep(Duration::from_millis(2));
        let (b, _) = s.add(());
        std::thread::sleep(Duration::from_millis(2));
        let (c, _) = s.add(());
        std::thread::sleep(Duration::from_millis(2));
        // a is used again: b is now the least recently used.
        assert!(s.get(a).is_some());
        let (d, _) = s.add(());
        assert_eq!(s.len(), 3);
        assert!(s.get(b).is_none(), "b made room");
        assert_eq!(s.evicted(), 1);
        // A scanner in a call is never taken from under it.
        let busy_c = s.get(c).unwrap();
        let busy_d = s.get(d).unwrap();
        let busy_a = s.get(a).unwrap();
        let (_ga, _gc, _gd) = (busy_a.lock(), busy_c.lock(), busy_d.lock());
        let (e, _) = s.add(());
        assert_eq!(s.len(), 4, "over the cap while all are busy");
        assert!(s.open.lock().contains_key(&e));
    }

    #[test]
    fn leases_expire_unused_scanners() {
        let s: Leases<()> = Leases::new(Duration::from_millis(30), 10, 1, u64::MAX);
        let (a, _) = s.add(());
        assert!(s.get(a).is_some());
        assert_eq!(s.expire(), 0);
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(s.expire(), 1);
        assert_eq!(s.expired(), 1);
        assert!(s.get(a).is_none());
    }

    #[test]
    fn ids_wrap_around_within_their_range_and_skip_open_ones() {
        let s: Leases<()> = Leases::new(Duration::from_secs(60), 10, 1, 3);
        let ids: Vec<u64> = (0..3).map(|_| s.add(()).0).collect();
        assert_eq!(ids, [1, 2, 3]);
        assert!(s.remove(2));
        assert_eq!(s.add(()).0, 2, "1 and 3 are still open");
        assert!(s.remove(1));
        assert_eq!(s.add(()).0, 1);
    }
}
