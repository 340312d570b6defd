//! The server-wide memstore bound (HBase's `RegionServerAccounting` and the blocking half of
//! `MemStoreFlusher.reclaimMemStoreMemory`): one count of the bytes every region of a server
//! holds in memstores, flush snapshots included until their flush lands, checked against
//! `hbase.regionserver.global.memstore.size` (the upper mark) and
//! `hbase.regionserver.global.memstore.size.lower.limit` (the lower mark).
//!
//! Past the lower mark a write asks the server's flusher to flush the largest memstores.
//! At the upper mark writes wait for flushes to free room, and a write still waiting after
//! [`GlobalMemStoreLimits::blocking_wait`] fails with [`RegionError::RegionTooBusy`]
//! (retryable), so a handler thread is never held for good.
//!
//! Every region of a server holds a handle ([`RegionMemStoreSize`] keeps the region's own
//! count and this one in step). A write reserves its cells' size before it takes a sequence
//! id; admission and the add are one compare-and-swap, so the count passes the upper mark by
//! at most one write's cells however many writers race.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{RegionError, Result};

/// Longest a blocked writer sleeps before it looks again (and asks the flusher again) even
/// without a wake-up: HBase bounds its wait the same way against a lost notify.
const RECHECK: Duration = Duration::from_millis(100);

/// The marks and the longest wait, in bytes and time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlobalMemStoreLimits {
    /// Writes wait while the memstores hold this much or more (`u64::MAX`: never).
    pub upper: u64,
    /// The flusher flushes the largest memstores while they hold this much or more.
    pub lower: u64,
    /// How long a write waits at the upper mark before it is refused with
    /// [`RegionError::RegionTooBusy`] (`cairn.regionserver.global.memstore.block.wait`).
    pub blocking_wait: Duration,
}

impl GlobalMemStoreLimits {
    /// No bound: nothing waits, nothing is flushed for memory (regions created outside a
    /// server, offline tools).
    pub const UNBOUNDED: GlobalMemStoreLimits = GlobalMemStoreLimits {
        upper: u64::MAX,
        lower: u64::MAX,
        blocking_wait: Duration::ZERO,
    };
}

/// The memstore bytes of every region of one server, and the writers waiting for room (see
/// the module docs).
pub struct RegionServerAccounting {
    size: AtomicU64,
    limits: GlobalMemStoreLimits,
    /// Writers inside [`wait_for_room`](Self::wait_for_room); a release that sees none skips
    /// the lock.
    waiting: AtomicUsize,
    lock: Mutex<()>,
    room: Condvar,
    /// Wakes the server's flusher (HBase's `wakeupFlushThread`); unset without one.
    flush_requester: OnceLock<Box<dyn Fn() + Send + Sync>>,
    /// A wake-up is queued and not yet taken by the flusher: writers past the lower mark do
    /// not queue more.
    wakeup_pending: AtomicBool,
    /// Writers are blocked now: the first to block says so in the log, the first through
    /// after that says they are free again.
    blocking: AtomicBool,
    blocked_writes: AtomicU64,
    blocked_nanos: AtomicU64,
    refused_writes: AtomicU64,
}

impl std::fmt::Debug for RegionServerAccounting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegionServerAccounting")
            .field("size", &self.size())
            .field("limits", &self.limits)
            .finish()
    }
}

impl RegionServerAccounting {
    /// An accounting with these marks (lower is capped at upper).
    pub fn new(mut limits: GlobalMemStoreLimits) -> Arc<RegionServerAccounting> {
        limits.lower = limits.lower.min(limits.upper);
        Arc::new(RegionServerAccounting {
            size: AtomicU64::new(0),
            limits,
            waiting: AtomicUsize::new(0),
            lock: Mutex::new(()),
            room: Condvar::new(),
            flush_requester: OnceLock::new(),
            wakeup_pending: AtomicBool::new(false),
            blocking: AtomicBool::new(false),
            blocked_writes: AtomicU64::new(0),
            blocked_nanos: AtomicU64::new(0),
            refused_writes: AtomicU64::new(0),
        })
    }

    /// An accounting that only counts ([`GlobalMemStoreLimits::UNBOUNDED`]).
    pub fn unbounded() -> Arc<RegionServerAccounting> {
        RegionServerAccounting::new(GlobalMemStoreLimits::UNBOUNDED)
    }

    /// The marks.
    pub fn limits(&self) -> GlobalMemStoreLimits {
        self.limits
    }

    /// Bytes in every memstore of the server, flush snapshots and reserved writes included.
    pub fn size(&self) -> u64 {
        self.size.load(Ordering::Relaxed)
    }

    /// Whether the memstores hold the lower mark or more: the flusher has work.
    pub fn is_above_low_water_mark(&self) -> bool {
        self.size() >= self.limits.lower
    }

    /// Whether the memstores hold the upper mark or more: writes wait.
    pub fn is_above_high_water_mark(&self) -> bool {
        self.size() >= self.limits.upper
    }

    /// Sets what wakes the server's flusher; the first call wins.
    pub fn set_flush_requester(&self, wake: impl Fn() + Send + Sync + 'static) {
        let _ = self.flush_requester.set(Box::new(wake));
    }

    /// Called by the flusher as it takes a wake-up, before it looks at the size: a write past
    /// the lower mark after this queues another.
    pub fn wakeup_taken(&self) {
        self.wakeup_pending.store(false, Ordering::Release);
    }

    fn request_flush(&self) {
        if let Some(wake) = self.flush_requester.get() {
            // Looked at before it is written: every write past the lower mark comes here.
            if !self.wakeup_pending.load(Ordering::Acquire)
                && !self.wakeup_pending.swap(true, Ordering::AcqRel)
            {
                wake();
            }
        }
    }

    /// Reserves room for `bytes` of cells a write of `region` is about to add, waiting at the
    /// upper mark (up to the blocking wait) for flushes to free room. The caller holds no
    /// sequence id yet: a waiting write must not hold back other writers' visibility.
    pub fn reserve(&self, bytes: u64, region: impl Fn() -> String) -> Result<Reservation<'_>> {
        if !self.try_add(bytes) {
            self.wait_for_room(bytes, region)?;
        }
        if self.size() >= self.limits.lower {
            self.request_flush();
        }
        Ok(Reservation {
            accounting: self,
            bytes,
        })
    }

    /// Adds `bytes` if the size is below the upper mark, in one step.
    fn try_add(&self, bytes: u64) -> bool {
        let mut current = self.size.load(Ordering::SeqCst);
        loop {
            if current >= self.limits.upper {
                return false;
            }
            match self.size.compare_exchange_weak(
                current,
                current.saturating_add(bytes),
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return true,
                Err(now) => current = now,
            }
        }
    }

    #[cold]
    fn wait_for_room(&self, bytes: u64, region: impl Fn() -> String) -> Result<()> {
        let started = Instant::now();
        let deadline = started + self.limits.blocking_wait;
        self.blocked_writes.fetch_add(1, Ordering::Relaxed);
        if !self.blocking.swap(true, Ordering::AcqRel) {
            tracing::info!(
                "Blocking updates: global memstore size {} is >= blocking {} \
                 (hbase.regionserver.global.memstore.size); flushing the largest memstores",
                self.size(),
                self.limits.upper
            );
        }
        let mut guard = self.lock.lock();
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let admitted = loop {
            self.request_flush();
            if self.try_add(bytes) {
                break true;
            }
            let now = Instant::now();
            if now >= deadline {
                break false;
            }
            self.room
                .wait_for(&mut guard, (deadline - now).min(RECHECK));
        };
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        drop(guard);
        self.blocked_nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        if admitted {
            if self.blocking.swap(false, Ordering::AcqRel) {
                tracing::info!(
                    "Unblocking updates: global memstore size {} is below {}",
                    self.size(),
                    self.limits.upper
                );
            }
            return Ok(());
        }
        self.refused_writes.fetch_add(1, Ordering::Relaxed);
        Err(RegionError::RegionTooBusy {
            region: region(),
            size: self.size(),
            limit: self.limits.upper,
            global: true,
        })
    }

    /// Adds bytes that need no room checked (WAL replay at open, before writes come in).
    pub(crate) fn grow(&self, bytes: u64) {
        self.size.fetch_add(bytes, Ordering::SeqCst);
    }

    /// Takes `bytes` off (a flush landed, a write shrank a cell, a region went away) and wakes
    /// the writers waiting for room.
    pub(crate) fn release(&self, bytes: u64) {
        if bytes == 0 {
            return;
        }
        self.size.fetch_sub(bytes, Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) > 0 {
            let _guard = self.lock.lock();
            self.room.notify_all();
        }
    }

    /// Gauges and counters, for the server's metrics: `globalMemStoreSize`,
    /// `globalMemStoreLimit`, `globalMemStoreLimitLowMark` (bytes; 0 for no bound),
    /// `updatesBlockedCount` (writes that waited at the upper mark), `updatesBlockedTime`
    /// (HBase's name: milliseconds they waited), `updatesRefusedCount` (writes refused after
    /// the blocking wait).
    pub fn metric_values(&self) -> Vec<(&'static str, u64)> {
        let bound = |b: u64| if b == u64::MAX { 0 } else { b };
        vec![
            ("globalMemStoreSize", self.size()),
            ("globalMemStoreLimit", bound(self.limits.upper)),
            ("globalMemStoreLimitLowMark", bound(self.limits.lower)),
            (
                "updatesBlockedCount",
                self.blocked_writes.load(Ordering::Relaxed),
            ),
            (
                "updatesBlockedTime",
                self.blocked_nanos.load(Ordering::Relaxed) / 1_000_000,
            ),
            (
                "updatesRefusedCount",
                self.refused_writes.load(Ordering::Relaxed),
            ),
        ]
    }
}

/// Room reserved for one write's cells. [`settle`](Self::settle) replaces the estimate with
/// what the memstore really grew by; dropped unsettled (the write failed), it gives the room
/// back.
#[derive(Debug)]
#[must_use = "a reservation not settled is released"]
pub struct Reservation<'a> {
    accounting: &'a RegionServerAccounting,
    bytes: u64,
}

impl Reservation<'_> {
    /// The write added `grown` bytes (less than reserved when it replaced equal cells).
    pub(crate) fn settle(self, grown: i64) {
        let reserved = self.bytes as i64;
        let accounting = self.accounting;
        std::mem::forget(self);
        match grown - reserved {
            0 => {}
            d if d > 0 => accounting.grow(d as u64),
            d => accounting.release(d.unsigned_abs()),
        }
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.accounting.release(self.bytes);
    }
}

/// One region's memstore bytes (flush snapshots included), kept in step with its server's
/// [`RegionServerAccounting`] (HBase's `MemStoreSizing`). Dropped with its region, it takes
/// whatever the region still held off the server's count.
#[derive(Debug)]
pub(crate) struct RegionMemStoreSize {
    bytes: AtomicU64,
    server: Arc<RegionServerAccounting>,
}

impl RegionMemStoreSize {
    pub(crate) fn new(server: Arc<RegionServerAccounting>) -> RegionMemStoreSize {
        RegionMemStoreSize {
            bytes: AtomicU64::new(0),
            server,
        }
    }

    /// The server's accounting.
    pub(crate) fn server(&self) -> &RegionServerAccounting {
        &self.server
    }

    /// The region's bytes.
    pub(crate) fn load(&self, order: Ordering) -> u64 {
        self.bytes.load(order)
    }

    /// A write added `grown` bytes (negative: it replaced larger equal cells) under
    /// `reservation`.
    pub(crate) fn add_reserved(&self, grown: i64, reservation: Reservation<'_>) {
        crate::memstore::add_signed(&self.bytes, grown);
        reservation.settle(grown);
    }

    /// Replayed edits added `grown` bytes (no room is checked at open).
    pub(crate) fn add_unchecked(&self, grown: i64) {
        crate::memstore::add_signed(&self.bytes, grown);
        match grown {
            g if g >= 0 => self.server.grow(g as u64),
            g => self.server.release(g.unsigned_abs()),
        }
    }

    /// A flush landed `bytes` of snapshot in a store file: the region and the server hold
    /// that much less. Returns the region's bytes before, as `AtomicU64::fetch_sub` does.
    pub(crate) fn fetch_sub(&self, bytes: u64, order: Ordering) -> u64 {
        let before = self.bytes.fetch_sub(bytes, order);
        self.server.release(bytes);
        before
    }
}

impl Drop for RegionMemStoreSize {
    fn drop(&mut self) {
        self.server.release(*self.bytes.get_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(upper: u64, lower: u64, wait_ms: u64) -> GlobalMemStoreLimits {
        GlobalMemStoreLimits {
            upper,
            lower,
            blocking_wait: Duration::from_millis(wait_ms),
        }
    }

    #[test]
    fn admission_passes_the_upper_mark_by_at_most_one_write() {
        let a = RegionServerAccounting::new(limits(1000, 900, 0));
        let r1 = a.reserve(600, String::new).unwrap();
        let r2 = a.reserve(600, String::new).unwrap();
        assert_eq!(
            a.size(),
            1200,
            "admitted below the mark, may pass it by its own size"
        );
        let e = a.reserve(1, || "r".into()).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("hbase.regionserver.global.memstore.size"),
            "{text}"
        );
        match e {
            RegionError::RegionTooBusy {
                region,
                size,
                limit,
                global: true,
            } => {
                assert_eq!((region.as_str(), size, limit), ("r", 1200, 1000));
            }
            other => panic!("{other:?}"),
        }
        // A write that replaced equal cells settles for less; a failed one gives it all back.
        r1.settle(100);
        assert_eq!(a.size(), 700);
        drop(r2);
        assert_eq!(a.size(), 100);
        let m = a.metric_values();
        assert!(m.contains(&("updatesBlockedCount", 1)), "{m:?}");
        assert!(m.contains(&("updatesRefusedCount", 1)), "{m:?}");
        assert!(m.contains(&("globalMemStoreLimit", 1000)), "{m:?}");
    }

    #[test]
    fn a_blocked_write_goes_in_once_a_release_frees_room() {
        let a = RegionServerAccounting::new(limits(1000, 500, 10_000));
        let wakeups = Arc::new(AtomicU64::new(0));
        let w = wakeups.clone();
        a.set_flush_requester(move || {
            w.fetch_add(1, Ordering::Relaxed);
        });
        let region = RegionMemStoreSize::new(a.clone());
        let r = a.reserve(1000, String::new).unwrap();
        region.add_reserved(1000, r);
        assert_eq!(wakeups.load(Ordering::Relaxed), 1, "past the lower mark");
        let writer = {
            let a = a.clone();
            std::thread::spawn(move || {
                let r = a.reserve(10, String::new).unwrap();
                r.settle(10);
            })
        };
        while a.waiting.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        assert!(!writer.is_finished());
        // The flush lands.
        region.fetch_sub(1000, Ordering::Relaxed);
        writer.join().unwrap();
        assert_eq!(a.size(), 10);
        let m = a.metric_values();
        assert!(m.contains(&("updatesBlockedCount", 1)), "{m:?}");
        assert!(m.contains(&("updatesRefusedCount", 0)), "{m:?}");
    }

    #[test]
    fn a_region_gone_takes_its_bytes_off_the_server() {
        let a = RegionServerAccounting::new(limits(1 << 20, 1 << 19, 0));
        let region = RegionMemStoreSize::new(a.clone());
        region.add_unchecked(300);
        region.add_unchecked(-100);
        assert_eq!((region.load(Ordering::Relaxed), a.size()), (200, 200));
        drop(region);
        assert_eq!(a.size(), 0);
        assert!(!a.is_above_low_water_mark());
        let unbounded = RegionServerAccounting::unbounded();
        assert!(unbounded
            .metric_values()
            .contains(&("globalMemStoreLimit", 0)));
    }
}
