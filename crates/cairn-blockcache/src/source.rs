//! The cache as the HFile reader's block source: a hit returns the cached block (no read, no
//! copy); a miss reads through the file's own source and caches the block.

use std::sync::Arc;

use cairn_hfile::{Block, BlockPurpose, BlockReadOptions, BlockSource, Result};

use crate::combined::CombinedBlockCache;
use crate::key::{file_id, BlockCacheKey};

/// Reads blocks of one file through the cache.
pub struct CachedBlockSource {
    cache: Arc<CombinedBlockCache>,
    file: u64,
    inner: Arc<dyn BlockSource>,
    cache_on_read: bool,
    in_memory: bool,
}

impl CachedBlockSource {
    /// Caches the blocks of the file named `file_name` read through `inner`.
    pub fn new(
        cache: Arc<CombinedBlockCache>,
        file_name: &str,
        inner: Arc<dyn BlockSource>,
    ) -> CachedBlockSource {
        CachedBlockSource {
            cache,
            file: file_id(file_name),
            inner,
            cache_on_read: true,
            in_memory: false,
        }
    }

    /// Whether blocks read from the file are added to the cache (HBase's `BLOCKCACHE => true`).
    pub fn cache_on_read(mut self, on: bool) -> CachedBlockSource {
        self.cache_on_read = on;
        self
    }

    /// Cache this file's blocks with in-memory priority (`IN_MEMORY => true`).
    pub fn in_memory(mut self, on: bool) -> CachedBlockSource {
        self.in_memory = on;
        self
    }
}

impl BlockSource for CachedBlockSource {
    fn read_block(&self, offset: u64, on_disk_size: Option<u64>) -> Result<Block> {
        self.read_block_for(
            offset,
            on_disk_size,
            BlockPurpose::Seek,
            BlockReadOptions::default(),
        )
    }

    fn read_cached(&self, offset: u64) -> Option<Block> {
        self.cache.get_if_cached(&BlockCacheKey {
            file: self.file,
            offset,
        })
    }

    fn read_block_for(
        &self,
        offset: u64,
        on_disk_size: Option<u64>,
        purpose: BlockPurpose,
        options: BlockReadOptions,
    ) -> Result<Block> {
        let key = BlockCacheKey {
            file: self.file,
            offset,
        };
        if let Some(b) = self
            .cache
            .get_expecting(&key, purpose != BlockPurpose::Index)
        {
            return Ok(b);
        }
        // HBase's `cacheBlocks = false` leaves data blocks out; index and Bloom blocks are
        // cached whatever the read asked.
        let cache = self.cache_on_read && (options.fill_cache || purpose == BlockPurpose::Index);
        // A data block that stays cached gets its cell index whoever reads it first: a scan
        // does not need one, but the gets that come to the block later would walk its cells
        // for as long as it stays in the cache.
        let read_for = if cache && purpose == BlockPurpose::Scan {
            BlockPurpose::Seek
        } else {
            purpose
        };
        let b = self
            .inner
            .read_block_for(offset, on_disk_size, read_for, options)?;
        if cache {
            self.cache.cache_block(key, b.clone(), self.in_memory);
        }
        Ok(b)
    }
}
