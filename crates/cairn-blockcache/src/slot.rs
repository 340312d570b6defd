//! Slots of the bucket cache and the table that publishes them: the protocol that hands out
//! cache memory without copying and reuses it only after the last reader lets go.
//!
//! A slot is an `Arc<Slot>`. Its life:
//! 1. Allocated: a writer thread owns the memory and fills it; nobody else can reach it.
//! 2. Published: inserted in the table; readers `pin` it (clone the `Arc` under the shard's
//!    read lock) and read its bytes for as long as they hold the clone.
//! 3. Evicted: removed from the table under the write lock; no new reader can pin it, existing
//!    readers keep their clones.
//! 4. Freed: when the last clone drops, `Slot::drop` hands the memory back to the allocator,
//!    which may give it to the next writer.
//!
//! So memory is rewritten only after it was unreachable (removed) and unreferenced (dropped);
//! the `loom` model at the bottom checks this over every interleaving.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use crate::key::{BlockCacheKey, BlockPriority};
use crate::sync::{Arc, RwLock};

/// Takes back a slot's memory once nobody references it.
pub(crate) trait SlotSink: Send + Sync {
    fn release(&self, offset: u64);
}

/// A published (or about to be) slot.
pub(crate) struct Slot {
    pub(crate) offset: u64,
    /// Bytes used: slot header and block.
    pub(crate) len: u32,
    /// Bytes reserved: the size class.
    pub(crate) class_size: u32,
    priority: AtomicU8,
    last_access: AtomicU64,
    sink: std::sync::Arc<dyn SlotSink>,
}

impl Slot {
    pub(crate) fn new(
        offset: u64,
        len: u32,
        class_size: u32,
        priority: BlockPriority,
        now: u64,
        sink: std::sync::Arc<dyn SlotSink>,
    ) -> Slot {
        Slot {
            offset,
            len,
            class_size,
            priority: AtomicU8::new(priority as u8),
            last_access: AtomicU64::new(now),
            sink,
        }
    }

    pub(crate) fn priority(&self) -> BlockPriority {
        BlockPriority::from_u8(self.priority.load(Ordering::Relaxed))
    }

    pub(crate) fn last_access(&self) -> u64 {
        self.last_access.load(Ordering::Relaxed)
    }

    /// Records a read: the access time, and a second read of a single-access block makes it
    /// a multi-access one.
    pub(crate) fn touch(&self, now: u64) {
        // Write only on change, so hot blocks read by several cores stay shared in their caches.
        if self.last_access.load(Ordering::Relaxed) != now {
            self.last_access.store(now, Ordering::Relaxed);
        }
        if self.priority.load(Ordering::Relaxed) == BlockPriority::Single as u8 {
            self.priority
                .store(BlockPriority::Multi as u8, Ordering::Relaxed);
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.sink.release(self.offset);
    }
}

const SHARDS: usize = 64;

/// A published slot, with where its bytes are kept beside the reference so a reader can start
/// fetching them before it touches the slot itself.
struct Published {
    slot: Arc<Slot>,
    offset: u64,
    len: u32,
}

type Shard = HashMap<BlockCacheKey, Published, foldhash::fast::RandomState>;

/// Published slots by key, in shards so readers rarely meet on a lock.
pub(crate) struct SlotTable {
    shards: Vec<RwLock<Shard>>,
}

impl SlotTable {
    pub(crate) fn new() -> SlotTable {
        SlotTable {
            shards: (0..SHARDS).map(|_| RwLock::new(Shard::default())).collect(),
        }
    }

    fn shard(&self, key: &BlockCacheKey) -> &RwLock<Shard> {
        let h = (key.file ^ key.offset.rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        &self.shards[(h >> 58) as usize % SHARDS]
    }

    /// Publishes `slot` under `key`; false (and the slot is dropped, so freed) if the key
    /// already has one.
    pub(crate) fn publish(&self, key: BlockCacheKey, slot: Arc<Slot>) -> bool {
        let mut shard = self.shard(&key).write().expect("no panics under the lock");
        if shard.contains_key(&key) {
            drop(shard);
            drop(slot);
            return false;
        }
        let (offset, len) = (slot.offset, slot.len);
        shard.insert(key, Published { slot, offset, len });
        true
    }

    /// A reference to the slot of `key`, which keeps its memory from being reused.
    #[cfg(any(test, loom))]
    pub(crate) fn pin(&self, key: &BlockCacheKey) -> Option<Arc<Slot>> {
        self.pin_with(key, |_, _| {})
    }

    /// [`pin`](Self::pin), first telling `fetch` where the slot's bytes are, so it can start
    /// loading them while the reference is taken.
    pub(crate) fn pin_with(
        &self,
        key: &BlockCacheKey,
        fetch: impl FnOnce(u64, u32),
    ) -> Option<Arc<Slot>> {
        let shard = self.shard(key).read().expect("no panics under the lock");
        let p = shard.get(key)?;
        fetch(p.offset, p.len);
        Some(p.slot.clone())
    }

    pub(crate) fn contains(&self, key: &BlockCacheKey) -> bool {
        self.shard(key)
            .read()
            .expect("no panics under the lock")
            .contains_key(key)
    }

    /// Unpublishes `key`; its memory is freed when the last reader drops its reference.
    pub(crate) fn remove(&self, key: &BlockCacheKey) -> Option<Arc<Slot>> {
        let removed = self
            .shard(key)
            .write()
            .expect("no panics under the lock")
            .remove(key);
        removed.map(|p| p.slot)
    }

    /// Unpublishes `key` only if it still maps to `slot`.
    pub(crate) fn remove_exact(&self, key: &BlockCacheKey, slot: &Arc<Slot>) -> bool {
        let mut shard = self.shard(key).write().expect("no panics under the lock");
        if shard.get(key).is_some_and(|p| Arc::ptr_eq(&p.slot, slot)) {
            let removed = shard.remove(key);
            drop(shard);
            drop(removed);
            return true;
        }
        false
    }

    /// Unpublishes every key for which `evict` is true; returns how many.
    pub(crate) fn remove_where(&self, evict: impl Fn(&BlockCacheKey) -> bool) -> usize {
        let mut n = 0;
        for shard in &self.shards {
            let removed: Vec<Published> = {
                let mut s = shard.write().expect("no panics under the lock");
                let keys: Vec<BlockCacheKey> = s.keys().filter(|k| evict(k)).copied().collect();
                keys.iter().filter_map(|k| s.remove(k)).collect()
            };
            n += removed.len();
        }
        n
    }

    /// Every published slot, pinned.
    pub(crate) fn entries(&self) -> Vec<(BlockCacheKey, Arc<Slot>)> {
        let mut out = Vec::new();
        for shard in &self.shards {
            let s = shard.read().expect("no panics under the lock");
            out.extend(s.iter().map(|(k, p)| (*k, p.slot.clone())));
        }
        out
    }

    pub(crate) fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.read().expect("no panics under the lock").len())
            .sum()
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::atomic::AtomicUsize;
    use loom::thread;

    /// One slot's memory and the allocator's view of it: releasing reuses the memory
    /// (overwrites it), as the next writer would.
    struct Memory {
        cell: UnsafeCell<u64>,
        releases: AtomicUsize,
    }

    // SAFETY: only for the model: loom's UnsafeCell tracks every access and fails the test on
    // any unsynchronized one, which is exactly what this model looks for.
    unsafe impl Sync for Memory {}

    impl SlotSink for Memory {
        fn release(&self, _offset: u64) {
            self.releases
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            // The next writer reuses the memory. If a reader could still be reading, loom
            // reports this write as racing with that read.
            self.cell.with_mut(|p| unsafe { *p = 0xDEAD });
        }
    }

    #[test]
    fn memory_is_reused_only_after_the_last_reader() {
        loom::model(|| {
            let mem = std::sync::Arc::new(Memory {
                cell: UnsafeCell::new(0),
                releases: AtomicUsize::new(0),
            });
            let key = BlockCacheKey { file: 1, offset: 0 };
            // The writer fills the slot before publishing it.
            mem.cell.with_mut(|p| unsafe { *p = 42 });
            let table = Arc::new(SlotTable::new());
            let sink: std::sync::Arc<dyn SlotSink> = mem.clone();
            assert!(table.publish(
                key,
                Arc::new(Slot::new(0, 8, 8, BlockPriority::Single, 0, sink))
            ));

            let readers: Vec<_> = (0..2)
                .map(|_| {
                    let (table, mem) = (table.clone(), mem.clone());
                    thread::spawn(move || {
                        if let Some(slot) = table.pin(&key) {
                            let v = mem.cell.with(|p| unsafe { *p });
                            assert_eq!(v, 42, "a pinned slot holds its block");
                            drop(slot);
                        }
                    })
                })
                .collect();
            let evictor = {
                let table = table.clone();
                thread::spawn(move || {
                    table.remove(&key);
                })
            };
            for r in readers {
                r.join().unwrap();
            }
            evictor.join().unwrap();
            assert_eq!(
                mem.releases.load(std::sync::atomic::Ordering::SeqCst),
                1,
                "freed exactly once"
            );
        });
    }

    /// The model catches the bug the protocol exists to prevent: reusing memory as soon as
    /// the block is evicted, while a reader may still hold it.
    #[test]
    #[should_panic]
    fn freeing_at_eviction_is_caught() {
        loom::model(|| {
            let mem = std::sync::Arc::new(Memory {
                cell: UnsafeCell::new(0),
                releases: AtomicUsize::new(0),
            });
            let key = BlockCacheKey { file: 1, offset: 0 };
            mem.cell.with_mut(|p| unsafe { *p = 42 });
            let table = Arc::new(SlotTable::new());
            let sink: std::sync::Arc<dyn SlotSink> = std::sync::Arc::new(NoRelease);
            assert!(table.publish(
                key,
                Arc::new(Slot::new(0, 8, 8, BlockPriority::Single, 0, sink))
            ));
            let reader = {
                let (table, mem) = (table.clone(), mem.clone());
                thread::spawn(move || {
                    if let Some(slot) = table.pin(&key) {
                        let _ = mem.cell.with(|p| unsafe { *p });
                        drop(slot);
                    }
                })
            };
            table.remove(&key);
            mem.release(0); // wrong: a reader may still be reading
            reader.join().unwrap();
        });
    }

    struct NoRelease;

    impl SlotSink for NoRelease {
        fn release(&self, _offset: u64) {}
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    struct Count(AtomicUsize);

    impl SlotSink for Count {
        fn release(&self, _offset: u64) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn freed_after_removal_and_last_reader() {
        let count = std::sync::Arc::new(Count(AtomicUsize::new(0)));
        let table = SlotTable::new();
        let key = BlockCacheKey { file: 7, offset: 9 };
        let sink: std::sync::Arc<dyn SlotSink> = count.clone();
        assert!(table.publish(
            key,
            Arc::new(Slot::new(0, 1, 1, BlockPriority::Single, 0, sink.clone()))
        ));
        assert!(!table.publish(
            key,
            Arc::new(Slot::new(64, 1, 1, BlockPriority::Single, 0, sink))
        ));
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            1,
            "the duplicate was freed at once"
        );
        let pinned = table.pin(&key).unwrap();
        table.remove(&key);
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "still referenced");
        assert!(table.pin(&key).is_none(), "no new reader after removal");
        drop(pinned);
        assert_eq!(count.0.load(Ordering::SeqCst), 2);
    }
}
