//! L1: an in-memory cache of blocks with HBase's three priority groups (`LruBlockCache`):
//! blocks read once (single, 25%), read again (multi, 50%) and from in-memory column families
//! (memory, 25%). Each group is a `quick_cache` (sharded, concurrent, S3-FIFO), weighed in bytes;
//! a second hit moves a block from single to multi.

use std::sync::Arc;

use cairn_hfile::Block;
use quick_cache::sync::Cache;
use quick_cache::{Lifecycle, OptionsBuilder, Weighter};

use crate::key::{BlockCacheKey, BlockPriority};
use crate::stats::{CacheCounters, CacheStats};

/// HBase's default shares (`hbase.lru.blockcache.{single,multi,memory}.percentage`).
pub const SINGLE_SHARE: f64 = 0.25;
/// Share of blocks read more than once.
pub const MULTI_SHARE: f64 = 0.50;
/// Share of in-memory column families.
pub const MEMORY_SHARE: f64 = 0.25;

/// Bytes a cached block costs: its data, header and bookkeeping.
pub(crate) fn block_weight(b: &Block) -> u64 {
    b.data().len() as u64 + 33 + 96
}

#[derive(Clone)]
struct BlockWeighter;

impl Weighter<BlockCacheKey, Block> for BlockWeighter {
    fn weight(&self, _key: &BlockCacheKey, block: &Block) -> u64 {
        block_weight(block)
    }
}

#[derive(Clone)]
struct CountEvictions(Arc<CacheCounters>);

impl Lifecycle<BlockCacheKey, Block> for CountEvictions {
    type RequestState = ();

    fn begin_request(&self) -> Self::RequestState {}

    fn on_evict(&self, _state: &mut (), _key: BlockCacheKey, _block: Block) {
        self.0.evictions.inc();
    }
}

type Group =
    Cache<BlockCacheKey, Block, BlockWeighter, foldhash::fast::RandomState, CountEvictions>;

/// The L1 cache.
pub struct LruBlockCache {
    single: Group,
    multi: Group,
    memory: Group,
    counters: Arc<CacheCounters>,
    capacity: u64,
}

fn group(bytes: u64, counters: &Arc<CacheCounters>) -> Group {
    let bytes = bytes.max(1);
    Cache::with_options(
        OptionsBuilder::new()
            .estimated_items_capacity((bytes / 16_384).max(16) as usize)
            .weight_capacity(bytes)
            .build()
            .expect("valid options"),
        BlockWeighter,
        foldhash::fast::RandomState::default(),
        CountEvictions(counters.clone()),
    )
}

impl LruBlockCache {
    /// A cache of `capacity` bytes.
    pub fn new(capacity: u64) -> LruBlockCache {
        let counters = Arc::new(CacheCounters::default());
        LruBlockCache {
            single: group((capacity as f64 * SINGLE_SHARE) as u64, &counters),
            multi: group((capacity as f64 * MULTI_SHARE) as u64, &counters),
            memory: group((capacity as f64 * MEMORY_SHARE) as u64, &counters),
            counters,
            capacity,
        }
    }

    /// The block, if cached; a hit in the single group promotes it to multi.
    pub fn get(&self, key: &BlockCacheKey) -> Option<Block> {
        self.get_counted(key, true)
    }

    /// [`get`](Self::get), counting a miss only if `count_miss`.
    pub fn get_counted(&self, key: &BlockCacheKey, count_miss: bool) -> Option<Block> {
        let found = self
            .multi
            .get(key)
            .or_else(|| self.memory.get(key))
            .or_else(|| {
                let b = self.single.get(key)?;
                // Second access: the block has earned a place among the frequently read ones.
                if self.single.remove(key).is_some() {
                    self.multi.insert(*key, b.clone());
                }
                Some(b)
            });
        match &found {
            Some(_) => self.counters.hits.inc(),
            None if count_miss => self.counters.misses.inc(),
            None => {}
        }
        found
    }

    /// True if the block is cached (no statistics, no promotion).
    pub fn contains(&self, key: &BlockCacheKey) -> bool {
        self.multi.contains_key(key)
            || self.memory.contains_key(key)
            || self.single.contains_key(key)
    }

    /// Caches a block in the group for `priority` (Multi is treated as Single: a block earns
    /// Multi by being read again).
    pub fn cache_block(&self, key: BlockCacheKey, block: Block, priority: BlockPriority) {
        if self.contains(&key) {
            return;
        }
        self.counters.inserts.inc();
        match priority {
            BlockPriority::Memory => self.memory.insert(key, block),
            _ => self.single.insert(key, block),
        }
    }

    /// Drops every block of `file`; returns how many.
    pub fn evict_file(&self, file: u64) -> usize {
        let mut n = 0;
        for g in [&self.single, &self.multi, &self.memory] {
            let before = g.len();
            g.retain(|k, _| k.file != file);
            n += before - g.len();
        }
        n
    }

    /// Drops one block.
    pub fn evict(&self, key: &BlockCacheKey) -> bool {
        [&self.single, &self.multi, &self.memory]
            .iter()
            .any(|g| g.remove(key).is_some())
    }

    /// Statistics.
    pub fn stats(&self) -> CacheStats {
        let groups = [&self.single, &self.multi, &self.memory];
        CacheStats::from_counters(
            &self.counters,
            groups.iter().map(|g| g.weight()).sum(),
            groups.iter().map(|g| g.len() as u64).sum(),
            self.capacity,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use cairn_checksum::ChecksumType;
    use cairn_hfile::{BlockHeader, BlockType};

    pub(crate) fn block(len: usize, fill: u8) -> Block {
        let header = BlockHeader {
            block_type: BlockType::LeafIndex,
            on_disk_size_without_header: len as u32,
            uncompressed_size_without_header: len as u32,
            prev_block_offset: -1,
            checksum_type: ChecksumType::Crc32C,
            bytes_per_checksum: 16384,
            on_disk_data_size_with_header: len as u32 + 33,
        };
        Block::from_parts(0, header, Bytes::from(vec![fill; len]))
    }

    #[test]
    fn hits_misses_promotion_and_eviction_by_file() {
        let c = LruBlockCache::new(10 << 20);
        let k = |f: &str, o| BlockCacheKey::new(f, o);
        assert!(c.get(&k("a", 0)).is_none());
        c.cache_block(k("a", 0), block(1000, 1), BlockPriority::Single);
        c.cache_block(k("a", 100), block(1000, 2), BlockPriority::Memory);
        c.cache_block(k("b", 0), block(1000, 3), BlockPriority::Single);
        assert_eq!(c.get(&k("a", 0)).unwrap().data()[0], 1);
        assert!(
            c.multi.contains_key(&k("a", 0)),
            "second access promotes to multi"
        );
        assert_eq!(c.evict_file(crate::key::file_id("a")), 2);
        assert!(c.get(&k("a", 100)).is_none());
        assert_eq!(c.get(&k("b", 0)).unwrap().data()[0], 3);
        let s = c.stats();
        assert_eq!((s.hit_count, s.miss_count, s.block_count), (2, 2, 1));
    }

    #[test]
    fn stays_within_capacity() {
        let c = LruBlockCache::new(1 << 20);
        for i in 0..1000u64 {
            c.cache_block(
                BlockCacheKey::new("f", i * 100),
                block(8000, 0),
                BlockPriority::Single,
            );
        }
        let s = c.stats();
        assert!(s.size <= 1 << 20, "{s:?}");
        assert!(s.eviction_count > 0);
    }
}
