//! Cache statistics, counted without a shared hot cache line: each thread increments its own
//! stripe, so two threads hitting the cache do not slow each other down on a counter.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const STRIPES: usize = 32;

#[repr(align(64))]
#[derive(Default)]
struct Stripe(AtomicU64);

/// A counter summed over per-thread stripes.
pub struct StripedCounter {
    stripes: [Stripe; STRIPES],
}

impl Default for StripedCounter {
    fn default() -> Self {
        StripedCounter {
            stripes: std::array::from_fn(|_| Stripe::default()),
        }
    }
}

fn stripe_index() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static INDEX: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    INDEX.with(|i| *i)
}

impl std::fmt::Debug for StripedCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StripedCounter").field(&self.get()).finish()
    }
}

impl StripedCounter {
    /// Adds `n`.
    #[inline]
    pub fn add(&self, n: u64) {
        self.stripes[stripe_index()]
            .0
            .fetch_add(n, Ordering::Relaxed);
    }

    /// Adds 1.
    #[inline]
    pub fn inc(&self) {
        self.add(1);
    }

    /// The total.
    pub fn get(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.0.load(Ordering::Relaxed))
            .sum()
    }
}

/// Counters of one cache level.
#[derive(Default)]
pub struct CacheCounters {
    /// Lookups that found the block.
    pub hits: StripedCounter,
    /// Lookups that did not.
    pub misses: StripedCounter,
    /// Blocks removed to make room.
    pub evictions: StripedCounter,
    /// Blocks added.
    pub inserts: StripedCounter,
    /// Blocks that failed verification when read back and were dropped.
    pub corrupt: StripedCounter,
    /// Blocks not cached because the cache could not take them (full queue, no room).
    pub rejected: StripedCounter,
}

/// A point-in-time view of one level, with HBase's metric names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// `blockCacheHitCount`.
    pub hit_count: u64,
    /// `blockCacheMissCount`.
    pub miss_count: u64,
    /// `blockCacheEvictionCount`.
    pub eviction_count: u64,
    /// `blockCacheSize`: bytes held.
    pub size: u64,
    /// `blockCacheCount`: blocks held.
    pub block_count: u64,
    /// Blocks added.
    pub insert_count: u64,
    /// Blocks that failed verification on the way out of the cache (never served).
    pub corrupt_count: u64,
    /// Blocks the cache declined to take.
    pub rejected_count: u64,
    /// Bytes the level may hold.
    pub capacity: u64,
}

impl CacheStats {
    pub(crate) fn from_counters(
        c: &CacheCounters,
        size: u64,
        block_count: u64,
        capacity: u64,
    ) -> CacheStats {
        CacheStats {
            hit_count: c.hits.get(),
            miss_count: c.misses.get(),
            eviction_count: c.evictions.get(),
            size,
            block_count,
            insert_count: c.inserts.get(),
            corrupt_count: c.corrupt.get(),
            rejected_count: c.rejected.get(),
            capacity,
        }
    }

    /// Hits over lookups.
    pub fn hit_ratio(&self) -> f64 {
        let total = self.hit_count + self.miss_count;
        if total == 0 {
            0.0
        } else {
            self.hit_count as f64 / total as f64
        }
    }

    /// HBase-named metrics, prefixed per level (`l1`, `l2`) or none for the combined view.
    pub fn metrics(&self, prefix: &str) -> Vec<(String, u64)> {
        let name = |n: &str| {
            if prefix.is_empty() {
                format!("blockCache{n}")
            } else {
                format!("{prefix}Cache{n}")
            }
        };
        vec![
            (name("HitCount"), self.hit_count),
            (name("MissCount"), self.miss_count),
            (name("EvictionCount"), self.eviction_count),
            (name("Size"), self.size),
            (name("Count"), self.block_count),
            (name("InsertCount"), self.insert_count),
            (name("CorruptCount"), self.corrupt_count),
            (name("RejectedCount"), self.rejected_count),
            (name("Capacity"), self.capacity),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn striped_counter_sums_across_threads() {
        let c = std::sync::Arc::new(StripedCounter::default());
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        c.inc();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(c.get(), 80_000);
        // The adds went to several stripes (else this is one shared counter again).
        let used = c
            .stripes
            .iter()
            .filter(|s| s.0.load(Ordering::Relaxed) > 0)
            .count();
        assert!(used > 1, "all adds in {used} stripe");
    }

    #[test]
    fn striped_counter_sums_more_threads_than_stripes() {
        let c = StripedCounter::default();
        let threads = 2 * STRIPES as u64 + 3;
        std::thread::scope(|s| {
            for t in 0..threads {
                let c = &c;
                s.spawn(move || {
                    for _ in 0..1000 {
                        c.add(t + 1);
                    }
                });
            }
        });
        let expected: u64 = (1..=threads).map(|n| 1000 * n).sum();
        assert_eq!(c.get(), expected);
    }
}
