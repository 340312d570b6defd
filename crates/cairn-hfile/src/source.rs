//! Where the reader's bytes and blocks come from.
//!
//! [`RawSource`] (from cairn-fs): positional reads of a file, local or on HDFS. [`BlockSource`]:
//! verified, decompressed blocks by offset; [`FileBlockSource`] reads them from a raw source and
//! falls back to a secondary copy when a block is corrupt, and a block cache can wrap any
//! block source without the reader knowing.

use std::sync::Arc;

use bytes::Bytes;

use crate::block::{decode_block, on_disk_size_from_header, Block, DecodeContext, HEADER_SIZE};
use crate::encoding::{decode_cells, DataBlockEncoding, DecodeError};
use crate::error::{HFileError, Result};

pub use cairn_fs::{LocalFile, RawSource};

/// Why a block is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockPurpose {
    /// An index, Bloom or meta block.
    Index,
    /// A data block for a point lookup or a seek: worth an in-memory index of its cells.
    Seek,
    /// The next data block of a sequential scan.
    Scan,
}

/// What one read asks of the blocks it reads, carried by value from the request down to the
/// block source (as RocksDB's `ReadOptions` reach its block reader): a scanner holds one and
/// passes it with every block it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockReadOptions {
    /// Whether a data block read from the file is added to a block cache under the source
    /// (HBase's `Scan.setCacheBlocks` / `Get.setCacheBlocks`, RocksDB's `fill_cache`). A block
    /// already cached is served from the cache either way; index and Bloom blocks are cached
    /// regardless, as in HBase.
    pub fill_cache: bool,
}

impl Default for BlockReadOptions {
    fn default() -> Self {
        BlockReadOptions { fill_cache: true }
    }
}

impl BlockReadOptions {
    /// Options for a read that leaves the cache as it found it (a large scan, a compaction).
    pub const NO_FILL: BlockReadOptions = BlockReadOptions { fill_cache: false };
}

/// Verified, decompressed blocks by offset.
pub trait BlockSource: Send + Sync {
    /// The block at `offset`; `on_disk_size` (header, body and checksums) when the caller
    /// knows it from an index, else it is read from the block's header.
    fn read_block(&self, offset: u64, on_disk_size: Option<u64>) -> Result<Block>;

    /// The block at `offset` if it can be had without I/O (a cache hit); `None` otherwise.
    fn read_cached(&self, offset: u64) -> Option<Block> {
        let _ = offset;
        None
    }

    /// [`read_block`](Self::read_block) for a known purpose and with a read's options: a
    /// cache looks in the likelier level first and fills itself only when `options` say so,
    /// and a file source builds a data block's cell index only for seeks.
    fn read_block_for(
        &self,
        offset: u64,
        on_disk_size: Option<u64>,
        purpose: BlockPurpose,
        options: BlockReadOptions,
    ) -> Result<Block> {
        let _ = (purpose, options);
        self.read_block(offset, on_disk_size)
    }
}

/// Reads blocks from a file, verifying each; on corruption, reads the block once more from
/// the secondary source if there is one (another replica, HDFS with its own checksums), and
/// never returns a block that failed everywhere.
///
/// A primary source that skips the filesystem's checksums (HDFS read as HBase reads store
/// files) is used only while blocks carry checksums of their own that are verified: a file
/// whose blocks have none (checksum type NULL), or a reader told not to verify them, reads
/// through the filesystem's checksummed view instead, so no byte goes unchecked.
pub struct FileBlockSource {
    /// Set once the reader knows the file's cell layout: data blocks then get a cell index.
    layout: std::sync::OnceLock<(crate::cell::CellLayout, DataBlockEncoding, bool)>,
    primary: Arc<dyn RawSource>,
    /// The primary's bytes with the filesystem's checksums verified, when it skips them.
    checked: Option<Arc<dyn RawSource>>,
    /// Read `checked` instead of `primary`: blocks cannot be verified on their own.
    use_checked: std::sync::atomic::AtomicBool,
    secondary: Option<Arc<dyn RawSource>>,
    ctx: DecodeContext,
    /// Where the load-on-open section and trailer begin: blocks never extend past it.
    limit: u64,
}

impl FileBlockSource {
    /// A source for the blocks of one file. `secondary` is another copy read when a block is
    /// corrupt; without one, the primary's checksummed view
    /// ([`RawSource::fs_checksummed`]) is.
    pub fn new(
        primary: Arc<dyn RawSource>,
        secondary: Option<Arc<dyn RawSource>>,
        ctx: DecodeContext,
        limit: u64,
    ) -> FileBlockSource {
        let checked = primary.clone().fs_checksummed();
        FileBlockSource {
            layout: std::sync::OnceLock::new(),
            use_checked: (checked.is_some() && !ctx.verify_checksums).into(),
            secondary: secondary.or_else(|| checked.clone()),
            checked,
            primary,
            ctx,
            limit,
        }
    }

    /// Tells the source how the file's cells are laid out, so data blocks come with an index
    /// of their cells, and how its data blocks are encoded, so encoded ones are decoded.
    pub fn set_cell_layout(
        &self,
        layout: crate::cell::CellLayout,
        encoding: DataBlockEncoding,
        tags_compressed: bool,
    ) {
        let _ = self.layout.set((layout, encoding, tags_compressed));
    }

    /// The decode settings.
    pub fn context(&self) -> &DecodeContext {
        &self.ctx
    }

    fn read_from(
        &self,
        raw: &dyn RawSource,
        offset: u64,
        on_disk_size: Option<u64>,
        purpose: BlockPurpose,
    ) -> Result<Block> {
        let path = &self.ctx.path;
        let io = |e| HFileError::io(path, offset, e);
        let size = match on_disk_size {
            Some(s) => s,
            None => {
                if offset + HEADER_SIZE as u64 > self.limit {
                    return Err(HFileError::block(
                        path,
                        None,
                        offset,
                        format!("header would end past byte {}", self.limit),
                    ));
                }
                let h = raw.read_at(offset, HEADER_SIZE).map_err(io)?;
                on_disk_size_from_header(&h).expect("a full header")
            }
        };
        let end = offset
            .checked_add(size)
            .filter(|&e| e <= self.limit && size >= HEADER_SIZE as u64);
        let Some(end) = end else {
            return Err(HFileError::block(
                path,
                None,
                offset,
                format!(
                    "a block of {size} bytes does not fit before byte {}",
                    self.limit
                ),
            ));
        };
        // Read the next block's header too: scans learn the next size without another read.
        let want = (end + HEADER_SIZE as u64).min(raw.len()) - offset;
        let bytes = raw.read_at(offset, want as usize).map_err(io)?;
        let mut block = decode_block(bytes, offset, size as usize, &self.ctx)?;
        if block.block_type() == crate::BlockType::EncodedData {
            block = self.decode_cells(block)?;
        }
        // In-memory search aids, kept with the block by caches: cells of data blocks, entry
        // fingerprints of leaf and intermediate index blocks.
        Ok(match (block.block_type(), self.layout.get()) {
            (crate::BlockType::Data, Some(&(layout, _, _))) if purpose != BlockPurpose::Scan => {
                let index =
                    crate::cell::build_cell_index(block.data(), layout).map(bytes::Bytes::from);
                block.with_cell_index(index)
            }
            (crate::BlockType::LeafIndex | crate::BlockType::IntermediateIndex, _) => {
                let fps = crate::block_index::build_entry_fingerprints(block.data())
                    .map(bytes::Bytes::from);
                block.with_cell_index(fps)
            }
            _ => block,
        })
    }
}

impl BlockSource for FileBlockSource {
    fn read_block(&self, offset: u64, on_disk_size: Option<u64>) -> Result<Block> {
        self.read_block_for(
            offset,
            on_disk_size,
            BlockPurpose::Seek,
            BlockReadOptions::default(),
        )
    }

    fn read_block_for(
        &self,
        offset: u64,
        on_disk_size: Option<u64>,
        purpose: BlockPurpose,
        _options: BlockReadOptions,
    ) -> Result<Block> {
        if let Some(checked) = self.checked.as_ref().filter(|_| self.use_checked()) {
            return self.read_from(&**checked, offset, on_disk_size, purpose);
        }
        match self.read_from(&*self.primary, offset, on_disk_size, purpose) {
            Ok(b) if b.header().checksum_type == cairn_checksum::ChecksumType::Null => {
                match &self.checked {
                    // Nothing verified these bytes: from now on the filesystem does.
                    Some(checked) => {
                        self.use_checked
                            .store(true, std::sync::atomic::Ordering::Relaxed);
                        self.read_from(&**checked, offset, on_disk_size, purpose)
                    }
                    None => Ok(b),
                }
            }
            Err(primary) if primary.is_corruption() => {
                // A block whose header is too damaged to find its checksums failed them as
                // surely as one whose checksum did not match (counted where it was computed).
                if !matches!(primary, HFileError::Checksum { .. }) {
                    crate::count_checksum_failure();
                }
                self.read_again(primary, offset, on_disk_size, purpose)
            }
            other => other,
        }
    }
}

impl FileBlockSource {
    /// An encoded data block as a plain one: the file's encoding decoded into the plain cell
    /// layout.
    fn decode_cells(&self, block: Block) -> Result<Block> {
        let err = |reason: String| {
            HFileError::block(
                &self.ctx.path,
                Some(crate::BlockType::EncodedData),
                block.offset(),
                reason,
            )
        };
        let Some(&(layout, encoding, tags_compressed)) = self.layout.get() else {
            return Err(err(
                "an encoded data block among the file's index blocks".into()
            ));
        };
        let data = block.data();
        let id = data
            .get(..2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| err("no encoding id".into()))?;
        if id != encoding.id() {
            let what = match DataBlockEncoding::ALL.into_iter().find(|e| e.id() == id) {
                Some(e) => format!("{} (id {id})", e.name()),
                None => format!("id {id}, not one cairn reads"),
            };
            return Err(err(format!(
                "block encoded with {what}, the file's encoding is {} (id {})",
                encoding.name(),
                encoding.id()
            )));
        }
        let cells =
            decode_cells(encoding, &data[2..], layout, tags_compressed).map_err(|e| match e {
                DecodeError::Corrupt(reason) => err(reason),
                DecodeError::Unsupported(what) => HFileError::Unsupported {
                    path: self.ctx.path.clone(),
                    what: format!("data block at offset {}: {what}", block.offset()),
                },
            })?;
        Ok(block.into_decoded(Bytes::from(cells)))
    }

    fn use_checked(&self) -> bool {
        self.use_checked.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Reads a block that was corrupt in the primary source from the secondary one, if any.
    fn read_again(
        &self,
        primary: HFileError,
        offset: u64,
        on_disk_size: Option<u64>,
        purpose: BlockPurpose,
    ) -> Result<Block> {
        let Some(secondary) = &self.secondary else {
            return Err(primary);
        };
        self.read_from(&**secondary, offset, on_disk_size, purpose)
            .map_err(|e| HFileError::CorruptEverywhere {
                path: self.ctx.path.clone(),
                block_offset: offset,
                primary: Box::new(primary),
                secondary: Box::new(e),
            })
    }
}
