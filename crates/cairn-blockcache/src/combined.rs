//! The block cache readers use: index and Bloom blocks in L1, data blocks in L2 when there is
//! one (HBase's `CombinedBlockCache`), configured with cairn's names or HBase's.

use std::path::PathBuf;

use cairn_hfile::{Block, BlockType};

use crate::bucket::{BucketCache, BucketCacheConfig, IoEngineKind};
use crate::key::{BlockCacheKey, BlockPriority};
use crate::lru::LruBlockCache;
use crate::stats::{CacheCounters, CacheStats};

/// Sizes and engines of both levels.
#[derive(Clone, Debug)]
pub struct BlockCacheConfig {
    /// L1 bytes (`hfile.block.cache.size`).
    pub l1_size: u64,
    /// L2, if any (`hbase.bucketcache.ioengine` and `hbase.bucketcache.size`).
    pub l2: Option<BucketCacheConfig>,
}

impl Default for BlockCacheConfig {
    fn default() -> Self {
        BlockCacheConfig {
            l1_size: 64 << 20,
            l2: None,
        }
    }
}

/// An error in a cache setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("block cache setting {key} = {value:?}: {reason}")]
pub struct ConfigError {
    /// The property.
    pub key: String,
    /// Its value.
    pub value: String,
    /// What is wrong.
    pub reason: String,
}

/// The machine's memory in bytes (`MemTotal`; 8 GiB where it cannot be read): what cache and
/// memstore sizes given as fractions are fractions of (HBase's are of the JVM heap).
pub fn physical_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map(|kib| kib * 1024)
        .unwrap_or(8 << 30)
}

impl BlockCacheConfig {
    /// Reads HBase's properties (and cairn's `cairn.blockcache.*` spellings):
    /// - `hfile.block.cache.size`: L1 as a fraction of physical memory if ≤ 1 (HBase: of the
    ///   heap), else bytes (`cairn.blockcache.l1.bytes`);
    /// - `hbase.bucketcache.ioengine`: `offheap` or `file:/path` (also `heap`, treated as
    ///   `offheap`: cairn has no garbage-collected heap to keep blocks off);
    /// - `hbase.bucketcache.size`: MiB if ≥ 1, else a fraction of physical memory;
    /// - `hbase.bucketcache.persistent.path`, `hbase.bucketcache.writer.threads`,
    ///   `hbase.bucketcache.writer.queuelength`, `hbase.bucketcache.bucket.sizes` (bytes,
    ///   comma-separated), `cairn.blockcache.verify.memory.hits`.
    pub fn from_properties<'a>(
        props: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<BlockCacheConfig, ConfigError> {
        let mut config = BlockCacheConfig::default();
        let mut l2 = BucketCacheConfig::default();
        let mut engine_set = false;
        let mut size_set = false;
        let ram = physical_memory();
        for (key, value) in props {
            let bad = |reason: &str| ConfigError {
                key: key.to_string(),
                value: value.to_string(),
                reason: reason.to_string(),
            };
            let num = || value.trim().parse::<f64>().map_err(|_| bad("not a number"));
            let int = || {
                value
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| bad("not a whole number"))
            };
            match key {
                "hfile.block.cache.size" => {
                    let v = num()?;
                    if v < 0.0 {
                        return Err(bad("negative"));
                    }
                    config.l1_size = if v <= 1.0 {
                        (v * ram as f64) as u64
                    } else {
                        v as u64
                    };
                }
                "cairn.blockcache.l1.bytes" => config.l1_size = int()?,
                "hbase.bucketcache.ioengine" => {
                    let v = value.trim();
                    l2.engine =
                        if v.eq_ignore_ascii_case("offheap") || v.eq_ignore_ascii_case("heap") {
                            IoEngineKind::OffHeap { huge_pages: false }
                        } else if let Some(path) = v.strip_prefix("file:") {
                            IoEngineKind::File {
                                path: PathBuf::from(path),
                            }
                        } else {
                            return Err(bad("expected offheap or file:/path"));
                        };
                    engine_set = true;
                }
                "hbase.bucketcache.size" => {
                    let v = num()?;
                    if v <= 0.0 {
                        return Err(bad("must be positive"));
                    }
                    l2.capacity = if v < 1.0 {
                        (v * ram as f64) as u64
                    } else {
                        (v * 1048576.0) as u64
                    };
                    size_set = true;
                }
                "hbase.bucketcache.persistent.path" => {
                    l2.persistence_path = Some(PathBuf::from(value.trim()))
                }
                "hbase.bucketcache.writer.threads" => l2.writer_threads = int()?.max(1) as usize,
                "hbase.bucketcache.writer.queuelength" => {
                    l2.writer_queue_len = int()?.max(1) as usize
                }
                "hbase.bucketcache.bucket.sizes" => {
                    let mut sizes = Vec::new();
                    for s in value.split(',') {
                        sizes.push(
                            s.trim()
                                .parse::<u32>()
                                .map_err(|_| bad("expected comma-separated byte sizes"))?,
                        );
                    }
                    if sizes.is_empty() || sizes.windows(2).any(|w| w[0] >= w[1]) {
                        return Err(bad("sizes must be ascending"));
                    }
                    l2.size_classes = sizes;
                }
                "cairn.blockcache.verify.memory.hits" => {
                    l2.verify_memory_hits = value.trim() == "true"
                }
                _ => {}
            }
        }
        if engine_set || size_set {
            if !engine_set {
                return Err(ConfigError {
                    key: "hbase.bucketcache.ioengine".into(),
                    value: String::new(),
                    reason: "hbase.bucketcache.size is set but no engine".into(),
                });
            }
            config.l2 = Some(l2);
        }
        Ok(config)
    }
}

/// L1 and, optionally, L2.
pub struct CombinedBlockCache {
    l1: LruBlockCache,
    l2: Option<BucketCache>,
    /// Hits and misses of the cache as a whole (a lookup may visit both levels).
    counters: CacheCounters,
}

impl CombinedBlockCache {
    /// Builds both levels.
    pub fn new(config: BlockCacheConfig) -> std::io::Result<CombinedBlockCache> {
        Ok(CombinedBlockCache {
            l1: LruBlockCache::new(config.l1_size),
            l2: config.l2.map(BucketCache::new).transpose()?,
            counters: CacheCounters::default(),
        })
    }

    /// The block, from whichever level has it.
    pub fn get(&self, key: &BlockCacheKey) -> Option<Block> {
        self.get_expecting(key, false)
    }

    /// The block; `data` says it is probably a data block, which lives in L2 when there is
    /// one, so L2 is asked first.
    pub fn get_expecting(&self, key: &BlockCacheKey, data: bool) -> Option<Block> {
        let found = match &self.l2 {
            None => self.l1.get(key),
            Some(l2) if data => l2.get(key).or_else(|| self.l1.get(key)),
            Some(l2) => self.l1.get(key).or_else(|| l2.get(key)),
        };
        match &found {
            Some(_) => self.counters.hits.inc(),
            None => self.counters.misses.inc(),
        }
        found
    }

    /// The block if a level holds it, counting a hit; a miss is not counted (the caller goes
    /// on to a counted lookup or to the file).
    pub fn get_if_cached(&self, key: &BlockCacheKey) -> Option<Block> {
        let found = match &self.l2 {
            Some(l2) => l2
                .get_counted(key, false)
                .or_else(|| self.l1.get_counted(key, false)),
            None => self.l1.get_counted(key, false),
        };
        if found.is_some() {
            self.counters.hits.inc();
        }
        found
    }

    /// Caches a block: data blocks in L2 if there is one, everything else in L1.
    pub fn cache_block(&self, key: BlockCacheKey, block: Block, in_memory: bool) {
        let priority = if in_memory {
            BlockPriority::Memory
        } else {
            BlockPriority::Single
        };
        match (&self.l2, block.block_type()) {
            (Some(l2), BlockType::Data | BlockType::EncodedData) => {
                l2.cache_block(key, block, priority)
            }
            _ => self.l1.cache_block(key, block, priority),
        }
    }

    /// Drops every block of a file from both levels.
    pub fn evict_file(&self, file: u64) -> usize {
        self.l1.evict_file(file) + self.l2.as_ref().map_or(0, |l2| l2.evict_file(file))
    }

    /// L1.
    pub fn l1(&self) -> &LruBlockCache {
        &self.l1
    }

    /// L2.
    pub fn l2(&self) -> Option<&BucketCache> {
        self.l2.as_ref()
    }

    /// Per-level statistics and the whole cache's.
    pub fn stats(&self) -> (CacheStats, Option<CacheStats>, CacheStats) {
        let l1 = self.l1.stats();
        let l2 = self.l2.as_ref().map(BucketCache::stats);
        let mut total = l1.clone();
        if let Some(l2) = &l2 {
            total.eviction_count += l2.eviction_count;
            total.size += l2.size;
            total.block_count += l2.block_count;
            total.insert_count += l2.insert_count;
            total.corrupt_count += l2.corrupt_count;
            total.rejected_count += l2.rejected_count;
            total.capacity += l2.capacity;
        }
        total.hit_count = self.counters.hits.get();
        total.miss_count = self.counters.misses.get();
        (l1, l2, total)
    }

    /// HBase-named metrics of both levels and the total.
    pub fn metrics(&self) -> Vec<(String, u64)> {
        let (l1, l2, total) = self.stats();
        let mut m = total.metrics("");
        m.extend(l1.metrics("l1"));
        if let Some(l2) = l2 {
            m.extend(l2.metrics("l2"));
        }
        m
    }

    /// Stops L2's writers and persists its map.
    pub fn shutdown(&self) {
        if let Some(l2) = &self.l2 {
            l2.shutdown();
        }
    }
}
