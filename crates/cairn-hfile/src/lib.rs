//! # cairn-hfile
//!
//! HBase's HFile v3 format, read and written bit-compatibly with HBase 2.6.
//!
//! **Owns:** how data blocks lay out cells (the cell model itself, its key layout and order,
//! is `cairn-cell`'s, re-exported as [`cell`]), blocks with their header, compression and
//! inline checksums ([`block`], [`compression`]), data block encodings ([`encoding`]: PREFIX,
//! DIFF, FAST_DIFF and ROW_INDEX_V1 decoded on read, FAST_DIFF written), the multi-level block
//! index, compound Bloom filters, file info and the fixed trailer, and the [`HFileWriter`] /
//! [`HFileReader`] / [`HFileScanner`] built on them. Blocks reach the reader through a
//! [`BlockSource`], so a cache can sit between the reader and the file.
//!
//! **Does not own:** caching blocks (the block cache crate), what a cell means for reads
//! (versions, deletes, TTL: the region store), or where files live beyond positional reads.

#![warn(missing_docs)]

pub mod block;
mod block_cell;
pub mod block_index;
pub mod block_type;
pub mod bloom;
pub mod compression;
pub mod encoding;
mod error;
pub mod file_info;
pub mod hash;
mod prefetch;
mod reader;
mod scanner;
pub mod source;
pub mod trailer;
pub mod vint;
mod writer;

/// The cell model (`cairn-cell`: views, types, key layout, HBase's order) and what HFile adds
/// to it: how a data block lays out plain cells ([`cell::CellLayout`],
/// [`cell::parse_block_cell`]) and the reader's in-memory index over a block's cells.
pub mod cell {
    pub use crate::block_cell::{build_cell_index, parse_block_cell, row_fingerprint, CellLayout};
    pub use cairn_cell::*;
}

use std::sync::atomic::{AtomicU64, Ordering};

pub use block::{Block, BlockHeader};
pub use block_type::BlockType;
pub use bloom::BloomType;
pub use cell::{CellRef, CellType, KeyRef, KeyValue};
pub use compression::{Compression, ZstdFraming};
pub use error::{HFileError, Result};
pub use reader::{HFileReader, LoadOnOpenBlock, ReaderOptions};
pub use scanner::{HFileScanner, ScannerOver, SharedHFileScanner};
pub use source::{
    BlockPurpose, BlockReadOptions, BlockSource, FileBlockSource, LocalFile, RawSource,
};
pub use writer::{midpoint_key, FileSummary, HFileWriter, WriterOptions};

static CHECKSUM_FAILURES: AtomicU64 = AtomicU64::new(0);

/// Blocks that failed their inline checksum since the process started (HBase's
/// `HFile.CHECKSUM_FAILURES`, exported as `fsChecksumFailureCount`).
pub fn checksum_failures() -> u64 {
    CHECKSUM_FAILURES.load(Ordering::Relaxed)
}

pub(crate) fn count_checksum_failure() {
    CHECKSUM_FAILURES.fetch_add(1, Ordering::Relaxed);
}
