//! # cairn-blockcache
//!
//! The block cache between HFile readers and their files, as HBase's region server has it
//! since HBASE-11425, without the JVM: a cached block is handed out as a reference into cache
//! memory, never copied, and that memory is reused only after the last reader lets go.
//!
//! **Owns:** cache keys and priorities ([`BlockCacheKey`], [`BlockPriority`]); L1
//! ([`LruBlockCache`]: index and Bloom blocks, HBase's single/multi/in-memory shares); L2
//! ([`BucketCache`]: a preallocated region of size-classed slots in anonymous memory or a file,
//! writer threads, priority eviction, verified read-back, persistence of the file engine); the
//! two combined ([`CombinedBlockCache`], configured with HBase's property names); the cache as
//! the HFile reader's block source ([`CachedBlockSource`]); statistics with HBase's metric names.
//!
//! **Does not own:** how blocks are read or verified from HFiles (`cairn-hfile`), or when to
//! evict a file's blocks (the region store does, when compaction retires a file).

#![warn(missing_docs)]

// Under `cfg(loom)` only the slot protocol is built, with loom's primitives, for the model
// checker (`RUSTFLAGS="--cfg loom" cargo test -p cairn-blockcache --lib --release loom`).
mod key;
mod slot;
mod sync;

#[cfg(not(loom))]
mod allocator;
#[cfg(not(loom))]
mod bucket;
#[cfg(not(loom))]
mod combined;
#[cfg(not(loom))]
mod engine;
#[cfg(not(loom))]
mod lru;
#[cfg(not(loom))]
mod persistence;
#[cfg(not(loom))]
mod source;
#[cfg(not(loom))]
mod stats;

#[cfg(not(loom))]
pub use allocator::{AllocError, BucketAllocator, DEFAULT_SIZE_CLASSES};
#[cfg(not(loom))]
pub use bucket::{BucketCache, BucketCacheConfig, IoEngineKind};
#[cfg(not(loom))]
pub use combined::{physical_memory, BlockCacheConfig, CombinedBlockCache, ConfigError};
pub use key::{file_id, BlockCacheKey, BlockPriority};
#[cfg(not(loom))]
pub use lru::LruBlockCache;
#[cfg(not(loom))]
pub use persistence::RestoreReport;
#[cfg(not(loom))]
pub use source::CachedBlockSource;
#[cfg(not(loom))]
pub use stats::{CacheStats, StripedCounter};
