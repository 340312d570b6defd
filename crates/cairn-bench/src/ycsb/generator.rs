//! YCSB's number generators, with its constants and formulas: zipfian (Gray et al., SIGMOD
//! 1994, constant 0.99), scrambled zipfian (a zipfian over 10^16 items, FNV-hashed into the
//! key space), skewed latest, uniform, and the acknowledged insert counter that makes newly
//! inserted keys visible to readers only once every key before them has been written.
//!
//! Generators that keep state (the zipfian's zeta grows with the item count) are cloned per
//! client thread; the shared counters are atomics.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;

use rand::Rng;

/// YCSB's `ZipfianGenerator.ZIPFIAN_CONSTANT`.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// `ScrambledZipfianGenerator.ITEM_COUNT`: the scrambled generator draws from this many items.
pub const SCRAMBLED_ITEM_COUNT: u64 = 10_000_000_000_000_000;
/// `ScrambledZipfianGenerator.ZETAN`: zeta(ITEM_COUNT, 0.99), precomputed by YCSB.
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

const FNV_OFFSET_BASIS_64: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME_64: u64 = 1_099_511_628_211;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the eight low-to-high bytes of `val` (Java's signed
/// arithmetic shift), then the absolute value as a signed 64-bit number.
pub fn fnvhash64(val: i64) -> i64 {
    let mut v = val;
    let mut h = FNV_OFFSET_BASIS_64;
    for _ in 0..8 {
        let octet = (v & 0xff) as u64;
        v >>= 8;
        h ^= octet;
        h = h.wrapping_mul(FNV_PRIME_64);
    }
    (h as i64).wrapping_abs()
}

/// `zeta(n) = sum_{i=1..n} 1 / i^theta`, continued from `st` items whose sum is `initial`.
pub fn zeta(st: u64, n: u64, theta: f64, initial: f64) -> f64 {
    let mut sum = initial;
    for i in st..n {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// YCSB's `ZipfianGenerator`: items `base..base + items`, `base` the most popular.
#[derive(Clone, Debug)]
pub struct Zipfian {
    items: u64,
    base: u64,
    theta: f64,
    zeta2theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    count_for_zeta: u64,
}

impl Zipfian {
    /// Items `min..=max` with YCSB's constant.
    pub fn new(min: u64, max: u64) -> Zipfian {
        let items = max - min + 1;
        Zipfian::with_zetan(
            min,
            max,
            ZIPFIAN_CONSTANT,
            zeta(0, items, ZIPFIAN_CONSTANT, 0.0),
        )
    }

    /// Items `min..=max` with a precomputed zeta.
    pub fn with_zetan(min: u64, max: u64, theta: f64, zetan: f64) -> Zipfian {
        let items = max - min + 1;
        let zeta2theta = zeta(0, 2, theta, 0.0);
        Zipfian {
            items,
            base: min,
            theta,
            zeta2theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan),
            count_for_zeta: items,
        }
    }

    /// The next item.
    pub fn next<R: Rng + ?Sized>(&mut self, rng: &mut R) -> u64 {
        self.next_of(self.items, rng)
    }

    /// The next item out of `item_count` (YCSB's `nextLong(itemcount)`): a larger count
    /// extends zeta incrementally; a smaller one keeps the old zeta, as YCSB does by default.
    pub fn next_of<R: Rng + ?Sized>(&mut self, item_count: u64, rng: &mut R) -> u64 {
        if item_count > self.count_for_zeta {
            self.zetan = zeta(self.count_for_zeta, item_count, self.theta, self.zetan);
            self.count_for_zeta = item_count;
            // YCSB keeps `items` (the count at construction) in eta.
            self.eta = (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta))
                / (1.0 - self.zeta2theta / self.zetan);
        }
        let u: f64 = rng.random();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        self.base + (item_count as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
    }
}

/// YCSB's `ScrambledZipfianGenerator`: zipfian popularity, the popular items scattered over
/// `min..=max` by FNV hashing.
#[derive(Clone, Debug)]
pub struct ScrambledZipfian {
    gen: Zipfian,
    min: u64,
    item_count: u64,
}

impl ScrambledZipfian {
    pub fn new(min: u64, max: u64) -> ScrambledZipfian {
        ScrambledZipfian {
            gen: Zipfian::with_zetan(0, SCRAMBLED_ITEM_COUNT, ZIPFIAN_CONSTANT, SCRAMBLED_ZETAN),
            min,
            item_count: max - min + 1,
        }
    }

    pub fn next<R: Rng + ?Sized>(&mut self, rng: &mut R) -> u64 {
        let v = self.gen.next(rng);
        self.min + fnvhash64(v as i64) as u64 % self.item_count
    }
}

/// YCSB's `SkewedLatestGenerator`: zipfian over the distance back from the newest
/// acknowledged insert, so recent records are the popular ones.
#[derive(Clone, Debug)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// `last` is the counter's current last value (YCSB sizes the zipfian by it).
    pub fn new(last: u64) -> SkewedLatest {
        SkewedLatest {
            zipfian: Zipfian::new(0, last.max(1) - 1),
        }
    }

    /// The next item, given the counter's last acknowledged value.
    pub fn next<R: Rng + ?Sized>(&mut self, last: u64, rng: &mut R) -> u64 {
        last.saturating_sub(self.zipfian.next_of(last, rng))
    }
}

/// YCSB's `CounterGenerator` (a shared atomic) with `AcknowledgedCounterGenerator`'s window:
/// `last()` is the highest value below which every value handed out has been acknowledged.
pub struct AckCounter {
    next: AtomicU64,
    limit: AtomicI64,
    window: Vec<AtomicBool>,
    lock: Mutex<()>,
}

/// `AcknowledgedCounterGenerator.WINDOW_SIZE`: 2^20 values may be outstanding.
const WINDOW: u64 = 1 << 20;

impl AckCounter {
    pub fn new(start: u64) -> AckCounter {
        AckCounter {
            next: AtomicU64::new(start),
            limit: AtomicI64::new(start as i64 - 1),
            window: (0..WINDOW).map(|_| AtomicBool::new(false)).collect(),
            lock: Mutex::new(()),
        }
    }

    /// Hands out the next value.
    pub fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The highest acknowledged value (start - 1 before any).
    pub fn last(&self) -> i64 {
        self.limit.load(Ordering::Acquire)
    }

    /// Marks `value` written; moves `last()` over every contiguous acknowledged value.
    pub fn acknowledge(&self, value: u64) {
        let slot = (value & (WINDOW - 1)) as usize;
        if self.window[slot].swap(true, Ordering::AcqRel) {
            // YCSB throws "Too many unacknowledged insertion keys."; a window of 2^20 values
            // outstanding at once cannot happen with one insert per thread in flight.
            panic!("too many unacknowledged insertion keys");
        }
        if let Ok(_guard) = self.lock.try_lock() {
            let limit = self.limit.load(Ordering::Acquire);
            let before_first = (limit as u64) & (WINDOW - 1);
            let mut index = (limit + 1) as u64;
            while index != before_first {
                let s = (index & (WINDOW - 1)) as usize;
                if !self.window[s].load(Ordering::Acquire) {
                    break;
                }
                self.window[s].store(false, Ordering::Release);
                index += 1;
            }
            self.limit.store(index as i64 - 1, Ordering::Release);
        }
    }
}

/// A plain shared counter (YCSB's `CounterGenerator`: the load phase's key sequence).
pub struct Counter(AtomicU64);

impl Counter {
    pub fn new(start: u64) -> Counter {
        Counter(AtomicU64::new(start))
    }
    pub fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn fnv_matches_ycsb() {
        // YCSB's first hashed keys: user6284781860667377211, user8517097267634966620.
        assert_eq!(fnvhash64(0), 6_284_781_860_667_377_211);
        assert_eq!(fnvhash64(1), 8_517_097_267_634_966_620);
        assert!((0..10_000).all(|k| fnvhash64(k) >= 0));
    }

    #[test]
    fn zipfian_is_skewed_and_in_range() {
        let mut rng = SmallRng::seed_from_u64(3);
        let mut z = Zipfian::new(0, 999);
        let mut hits = vec![0u32; 1000];
        for _ in 0..100_000 {
            let v = z.next(&mut rng);
            assert!(v < 1000);
            hits[v as usize] += 1;
        }
        // Item 0 is the most popular, far above the mean of 100.
        assert!(hits[0] > 5_000, "{}", hits[0]);
        assert!(hits[0] >= *hits.iter().max().unwrap());
    }

    #[test]
    fn ack_counter_moves_over_contiguous_values() {
        let c = AckCounter::new(10);
        assert_eq!(c.last(), 9);
        let (a, b, d) = (c.next(), c.next(), c.next());
        c.acknowledge(b);
        assert_eq!(c.last(), 9);
        c.acknowledge(a);
        assert_eq!(c.last(), 11);
        c.acknowledge(d);
        assert_eq!(c.last(), 12);
    }

    #[test]
    fn zipfian_generators_stay_in_range_and_skew() {
        let mut rng = SmallRng::seed_from_u64(42);
        for (min, max) in [(0u64, 9u64), (0, 999), (100, 50_099)] {
            let n = (max - min + 1) as usize;
            let mut z = Zipfian::new(min, max);
            let mut hits = vec![0u32; n];
            let draws = 200_000;
            for _ in 0..draws {
                let v = z.next(&mut rng);
                assert!((min..=max).contains(&v), "{v} outside {min}..={max}");
                hits[(v - min) as usize] += 1;
            }
            let mean = draws as f64 / n as f64;
            let top = *hits.iter().max().unwrap();
            // The most popular item is `min` and is hit far more often than the average item.
            assert_eq!(hits[0], top, "{min}..={max}");
            if n >= 1000 {
                assert!(
                    top as f64 > 20.0 * mean,
                    "{min}..={max}: top {top}, mean {mean}"
                );
            }
        }
        // Scrambled: same skew, the popular items scattered.
        let mut s = ScrambledZipfian::new(0, 9_999);
        let mut hits = vec![0u32; 10_000];
        for _ in 0..200_000 {
            let v = s.next(&mut rng);
            assert!(v < 10_000);
            hits[v as usize] += 1;
        }
        let top = hits.iter().enumerate().max_by_key(|(_, h)| **h).unwrap();
        assert!(*top.1 > 20 * 20, "top {} hits", top.1);
        // Skewed latest: never past the newest record, and the newest is the most popular.
        let mut l = SkewedLatest::new(999);
        let mut hits = vec![0u32; 1000];
        for _ in 0..100_000 {
            let v = l.next(999, &mut rng);
            assert!(v <= 999);
            hits[v as usize] += 1;
        }
        assert_eq!(*hits.iter().max().unwrap(), hits[999]);
    }
}
