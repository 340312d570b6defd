//! Cache keys: a file and a block offset (HBase's `BlockCacheKey`).

use std::fmt;

/// Identifies a block: the file it comes from and its offset in that file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockCacheKey {
    /// [`file_id`] of the file's name.
    pub file: u64,
    /// Offset of the block in the file.
    pub offset: u64,
}

impl BlockCacheKey {
    /// The key of the block at `offset` of the file named `file_name`.
    pub fn new(file_name: &str, offset: u64) -> BlockCacheKey {
        BlockCacheKey {
            file: file_id(file_name),
            offset,
        }
    }
}

impl fmt::Debug for BlockCacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}@{}", self.file, self.offset)
    }
}

/// A stable 64-bit identity for a file name (xxh3). Stable across processes and releases, so
/// a persisted cache map still names the same files after a restart. Store files have unique
/// names (HBase names them by UUID), so the name, not the directory, identifies the file.
pub fn file_id(file_name: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(file_name.as_bytes())
}

/// Which eviction group a block belongs to (HBase's `BlockPriority`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum BlockPriority {
    /// Read once so far.
    Single = 0,
    /// Read more than once.
    Multi = 1,
    /// From an in-memory column family.
    Memory = 2,
}

impl BlockPriority {
    /// From the stored byte.
    pub(crate) fn from_u8(v: u8) -> BlockPriority {
        match v {
            1 => BlockPriority::Multi,
            2 => BlockPriority::Memory,
            _ => BlockPriority::Single,
        }
    }
}
