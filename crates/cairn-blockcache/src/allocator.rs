//! The bucket allocator (HBase's `BucketAllocator`): the cache region is cut into equal buckets
//! of four of the largest items; each bucket serves one size class and is carved into equal
//! slots. A bucket whose slots are all free may be given to another size class, so the mix of
//! classes follows the mix of block sizes.

/// HBase's default size classes: 4, 8, 16, 32, 40, 48, 56, 64, 96, 128, 192, 256, 384 and 512 KiB,
/// each plus 1 KiB so that a block of exactly that size and its bookkeeping fit.
pub const DEFAULT_SIZE_CLASSES: [u32; 14] = {
    const KIB: u32 = 1024;
    let sizes = [4, 8, 16, 32, 40, 48, 56, 64, 96, 128, 192, 256, 384, 512];
    let mut out = [0u32; 14];
    let mut i = 0;
    while i < 14 {
        out[i] = (sizes[i] + 1) * KIB;
        i += 1;
    }
    out
};

/// Items of the largest class per bucket (`FEWEST_ITEMS_IN_BUCKET`).
const ITEMS_OF_LARGEST_CLASS: u64 = 4;

/// Why an allocation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocError {
    /// Larger than the largest size class.
    TooLarge,
    /// No free slot of the class and no completely free bucket.
    Full,
}

#[derive(Debug, Clone)]
struct Bucket {
    class: Option<usize>,
    free: Vec<u32>,
    used: u32,
}

/// Hands out slots of the cache region.
#[derive(Debug)]
pub struct BucketAllocator {
    classes: Vec<u32>,
    bucket_capacity: u64,
    base: u64,
    buckets: Vec<Bucket>,
    /// Per class: buckets with at least one free slot.
    with_free: Vec<Vec<usize>>,
    /// Buckets with every slot free (or never assigned).
    completely_free: Vec<usize>,
    used_bytes: u64,
}

impl BucketAllocator {
    /// An allocator for `capacity` bytes starting at offset `base` of the region.
    pub fn new(base: u64, capacity: u64, classes: &[u32]) -> BucketAllocator {
        assert!(
            !classes.is_empty() && classes.windows(2).all(|w| w[0] < w[1]),
            "size classes ascend"
        );
        let bucket_capacity = ITEMS_OF_LARGEST_CLASS * *classes.last().expect("non-empty") as u64;
        let n = (capacity / bucket_capacity) as usize;
        BucketAllocator {
            classes: classes.to_vec(),
            bucket_capacity,
            base,
            buckets: vec![
                Bucket {
                    class: None,
                    free: Vec::new(),
                    used: 0
                };
                n
            ],
            with_free: vec![Vec::new(); classes.len()],
            completely_free: (0..n).rev().collect(),
            used_bytes: 0,
        }
    }

    /// Bytes the buckets cover.
    pub fn capacity(&self) -> u64 {
        self.buckets.len() as u64 * self.bucket_capacity
    }

    /// Bytes in allocated slots (by slot size).
    pub fn used_bytes(&self) -> u64 {
        self.used_bytes
    }

    /// The slot size that holds `len` bytes.
    pub fn class_size(&self, len: usize) -> Option<u32> {
        self.classes.iter().copied().find(|&c| c as usize >= len)
    }

    /// Largest size an item may have.
    pub fn largest(&self) -> u32 {
        *self.classes.last().expect("non-empty")
    }

    /// Allocates a slot for `len` bytes; returns its offset.
    pub fn allocate(&mut self, len: usize) -> Result<u64, AllocError> {
        let class = self
            .classes
            .iter()
            .position(|&c| c as usize >= len)
            .ok_or(AllocError::TooLarge)?;
        let size = self.classes[class];
        let b = match self.with_free[class].last() {
            Some(&b) => b,
            None => {
                // A completely free bucket may change class.
                let b = self.completely_free.pop().ok_or(AllocError::Full)?;
                self.assign(b, class);
                b
            }
        };
        let bucket = &mut self.buckets[b];
        let slot = bucket.free.pop().expect("listed as having a free slot");
        bucket.used += 1;
        if bucket.free.is_empty() {
            self.with_free[class].retain(|&x| x != b);
        }
        if bucket.used == 1 {
            self.completely_free.retain(|&x| x != b);
        }
        self.used_bytes += size as u64;
        Ok(self.base + b as u64 * self.bucket_capacity + slot as u64 * size as u64)
    }

    /// Gives completely free bucket `b` to size class `class`.
    fn assign(&mut self, b: usize, class: usize) {
        if let Some(old) = self.buckets[b].class {
            self.with_free[old].retain(|&x| x != b);
        }
        let slots = (self.bucket_capacity / self.classes[class] as u64) as u32;
        self.buckets[b] = Bucket {
            class: Some(class),
            free: (0..slots).rev().collect(),
            used: 0,
        };
        self.with_free[class].push(b);
    }

    /// Returns the slot at `offset`. Panics on an offset it never handed out: that would be a
    /// bookkeeping bug that could let two blocks share memory.
    pub fn free(&mut self, offset: u64) {
        let rel = offset
            .checked_sub(self.base)
            .expect("offset inside the region");
        let b = (rel / self.bucket_capacity) as usize;
        let bucket = &mut self.buckets[b];
        let class = bucket
            .class
            .expect("freeing a slot of an unassigned bucket");
        let size = self.classes[class] as u64;
        let within = rel % self.bucket_capacity;
        assert!(
            within.is_multiple_of(size),
            "offset {offset} is not a slot start"
        );
        let slot = (within / size) as u32;
        debug_assert!(
            !bucket.free.contains(&slot),
            "double free of slot at {offset}"
        );
        if bucket.free.is_empty() {
            self.with_free[class].push(b);
        }
        bucket.free.push(slot);
        bucket.used -= 1;
        self.used_bytes -= size;
        if bucket.used == 0 {
            self.completely_free.push(b);
        }
    }

    /// Marks a slot as allocated (restoring a persisted cache). False if the offset is not a
    /// slot of a size class that holds `len`, or is already taken.
    pub fn claim(&mut self, offset: u64, len: usize) -> bool {
        let Some(rel) = offset.checked_sub(self.base) else {
            return false;
        };
        let b = (rel / self.bucket_capacity) as usize;
        if b >= self.buckets.len() {
            return false;
        }
        let Some(class) = self.classes.iter().position(|&c| c as usize >= len) else {
            return false;
        };
        let size = self.classes[class] as u64;
        let within = rel % self.bucket_capacity;
        if !within.is_multiple_of(size) {
            return false;
        }
        let slot = (within / size) as u32;
        match self.buckets[b].class {
            Some(c) if c == class => {}
            Some(_) if self.buckets[b].used > 0 => return false,
            _ => self.assign(b, class),
        }
        let bucket = &mut self.buckets[b];
        let Some(pos) = bucket.free.iter().position(|&s| s == slot) else {
            return false;
        };
        bucket.free.swap_remove(pos);
        bucket.used += 1;
        if bucket.free.is_empty() {
            self.with_free[class].retain(|&x| x != b);
        }
        if bucket.used == 1 {
            self.completely_free.retain(|&x| x != b);
        }
        self.used_bytes += size;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_hbase_defaults() {
        assert_eq!(DEFAULT_SIZE_CLASSES[0], 5 * 1024);
        assert_eq!(DEFAULT_SIZE_CLASSES[13], 513 * 1024);
    }

    #[test]
    fn allocates_frees_and_reassigns_buckets() {
        let mut a = BucketAllocator::new(4096, 64 << 20, &DEFAULT_SIZE_CLASSES);
        let buckets = a.buckets.len();
        assert_eq!(buckets, (64 << 20) / (4 * 513 * 1024));
        let mut small = Vec::new();
        while let Ok(o) = a.allocate(3000) {
            small.push(o);
        }
        // Every bucket went to the smallest class.
        assert_eq!(small.len(), buckets * (4 * 513 / 5));
        assert_eq!(a.allocate(100_000), Err(AllocError::Full));
        let mut sorted = small.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), small.len(), "no slot handed out twice");
        for o in small.drain(..) {
            a.free(o);
        }
        assert_eq!(a.used_bytes(), 0);
        // Completely free buckets change class.
        let big: Vec<u64> = (0..buckets * 4)
            .map(|_| a.allocate(500 * 1024).unwrap())
            .collect();
        assert_eq!(a.allocate(500 * 1024), Err(AllocError::Full));
        assert_eq!(a.allocate(600 * 1024), Err(AllocError::TooLarge));
        for o in big {
            a.free(o);
        }
        assert!(a.claim(4096 + 5 * 1024, 4000));
        assert!(!a.claim(4096 + 5 * 1024, 4000), "already claimed");
        assert!(!a.claim(4097, 10));
    }
}
