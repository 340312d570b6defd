//! HFile blocks: the 33-byte header, the body (compressed as the file says), and the inline
//! checksums over header and body that follow it.
//!
//! ```text
//! magic[8] | onDiskSizeWithoutHeader i32 | uncompressedSizeWithoutHeader i32 |
//! prevBlockOffset i64 | checksumType u8 | bytesPerChecksum i32 | onDiskDataSizeWithHeader i32 |
//! body (compressed) | one u32 checksum per bytesPerChecksum chunk of header+body
//! ```
//! `onDiskSizeWithoutHeader` counts body and checksums; `onDiskDataSizeWithHeader` counts
//! header and body. With checksum type NULL the checksum space is still reserved (zeros), as
//! HBase does.

use std::sync::Arc;

use bytes::Bytes;
use cairn_checksum::{ChecksumError, ChecksumType, DataChecksum};

use crate::block_type::{BlockType, MAGIC_LEN};
use crate::compression::{self, Compression, ZstdFraming};
use crate::error::{HFileError, Result};

/// Bytes of a v3 block header.
pub const HEADER_SIZE: usize = 33;

/// The header of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockHeader {
    /// Block type, from the magic.
    pub block_type: BlockType,
    /// Compressed body plus checksums.
    pub on_disk_size_without_header: u32,
    /// Body before compression.
    pub uncompressed_size_without_header: u32,
    /// Offset of the previous block of the same kind, or -1.
    pub prev_block_offset: i64,
    /// Checksum algorithm of this block.
    pub checksum_type: ChecksumType,
    /// Chunk size of the checksums.
    pub bytes_per_checksum: u32,
    /// Header plus compressed body.
    pub on_disk_data_size_with_header: u32,
}

impl BlockHeader {
    /// The whole block on disk: header, body, checksums.
    #[inline]
    pub fn on_disk_size_with_header(&self) -> u64 {
        HEADER_SIZE as u64 + self.on_disk_size_without_header as u64
    }

    /// Parses header bytes already known to be good (a block cache's own copy): only the magic
    /// and the checksum type are checked.
    #[inline]
    pub fn decode(h: &[u8]) -> Option<BlockHeader> {
        let h = h.get(..HEADER_SIZE)?;
        Some(BlockHeader {
            block_type: BlockType::from_magic(&h[..MAGIC_LEN])?,
            on_disk_size_without_header: be_u32(h, 8),
            uncompressed_size_without_header: be_u32(h, 12),
            prev_block_offset: i64::from_be_bytes(h[16..24].try_into().expect("8 bytes")),
            checksum_type: ChecksumType::from_code(h[24]).ok()?,
            bytes_per_checksum: be_u32(h, 25),
            on_disk_data_size_with_header: be_u32(h, 29),
        })
    }

    /// The 33 header bytes.
    pub fn encode(&self) -> [u8; HEADER_SIZE] {
        let mut h = [0u8; HEADER_SIZE];
        h[..MAGIC_LEN].copy_from_slice(self.block_type.magic());
        h[8..12].copy_from_slice(&self.on_disk_size_without_header.to_be_bytes());
        h[12..16].copy_from_slice(&self.uncompressed_size_without_header.to_be_bytes());
        h[16..24].copy_from_slice(&self.prev_block_offset.to_be_bytes());
        h[24] = self.checksum_type.code();
        h[25..29].copy_from_slice(&self.bytes_per_checksum.to_be_bytes());
        h[29..33].copy_from_slice(&self.on_disk_data_size_with_header.to_be_bytes());
        h
    }
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// Bytes of checksums HBase reserves for `data_len` bytes of header+body: 4 per chunk, for
/// every checksum type (`ChecksumUtil.numBytes`).
pub fn checksum_bytes(data_len: usize, bytes_per_checksum: u32) -> usize {
    data_len.div_ceil(bytes_per_checksum as usize) * 4
}

/// The on-disk size of the block whose header starts `header` (only its size field, not
/// trusted until the block's checksum is verified).
pub fn on_disk_size_from_header(header: &[u8]) -> Option<u64> {
    (header.len() >= 12).then(|| HEADER_SIZE as u64 + be_u32(header, 8) as u64)
}

/// A verified block with its body decompressed.
///
/// A handle: clones share one allocation, so the block cache hands a block out with one
/// reference-count increment next to the fields a reader needs next (a copy of the parts
/// took one increment on the body's count and one on the cell index's, each on a line of
/// its own, and ~100 bytes copied per cached lookup).
#[derive(Clone, Debug)]
pub struct Block(Arc<BlockParts>);

#[derive(Clone, Debug)]
struct BlockParts {
    offset: u64,
    header: BlockHeader,
    data: Bytes,
    next_block_on_disk_size: Option<u64>,
    /// Start of each cell (little-endian u32s), for data blocks read by a reader: in memory
    /// only, never on disk; caches keep it with the block.
    cell_index: Option<Bytes>,
}

impl Block {
    /// Offset in the file.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.0.offset
    }

    /// The header.
    #[inline]
    pub fn header(&self) -> &BlockHeader {
        &self.0.header
    }

    /// The block type.
    #[inline]
    pub fn block_type(&self) -> BlockType {
        self.0.header.block_type
    }

    /// The uncompressed body (without header and checksums).
    #[inline]
    pub fn data(&self) -> &Bytes {
        &self.0.data
    }

    /// Header, body and checksums on disk.
    #[inline]
    pub fn on_disk_size(&self) -> u64 {
        self.0.header.on_disk_size_with_header()
    }

    /// The size of the following block, read from its header along with this block (a hint:
    /// it is verified only when that block is read).
    #[inline]
    pub fn next_block_on_disk_size(&self) -> Option<u64> {
        self.0.next_block_on_disk_size
    }

    /// Offset of the block that follows this one.
    #[inline]
    pub fn next_offset(&self) -> u64 {
        self.0.offset + self.on_disk_size()
    }

    /// The cell index, if the block has one.
    #[inline]
    pub fn cell_index(&self) -> Option<&Bytes> {
        self.0.cell_index.as_ref()
    }

    /// Cells in the index (0 without one).
    #[inline]
    pub fn indexed_cells(&self) -> usize {
        self.index_layout().map_or(0, |(_, n)| n)
    }

    /// Start of cell `i` per the index.
    #[inline]
    pub fn indexed_cell(&self, i: usize) -> Option<usize> {
        self.indexed_entry(i).map(|(o, _)| o)
    }

    /// Where the index entries start and how many there are.
    #[inline]
    pub(crate) fn index_layout(&self) -> Option<(usize, usize)> {
        let idx = self.0.cell_index.as_ref()?;
        let p = u16::from_le_bytes(idx.get(..2)?.try_into().ok()?) as usize;
        let n = u32::from_le_bytes(idx.get(2 + p..6 + p)?.try_into().ok()?) as usize;
        (idx.len() == 6 + p + n * 12).then_some((6 + p, n))
    }

    /// The row prefix every indexed cell shares.
    #[inline]
    pub fn indexed_prefix(&self) -> Option<&[u8]> {
        let idx = self.0.cell_index.as_ref()?;
        let p = u16::from_le_bytes(idx.get(..2)?.try_into().ok()?) as usize;
        idx.get(2..2 + p)
    }

    /// Index entry `i`: the cell's offset and row fingerprint.
    #[inline]
    pub fn indexed_entry(&self, i: usize) -> Option<(usize, u64)> {
        let (start, n) = self.index_layout()?;
        if i >= n {
            return None;
        }
        let e = &self.0.cell_index.as_ref()?[start + i * 12..start + i * 12 + 12];
        Some((
            u32::from_le_bytes(e[..4].try_into().expect("4 bytes")) as usize,
            u64::from_le_bytes(e[4..].try_into().expect("8 bytes")),
        ))
    }

    /// The same block with a cell index.
    #[inline]
    pub fn with_cell_index(mut self, index: Option<Bytes>) -> Block {
        self.parts_mut().cell_index = index;
        self
    }

    /// An encoded data block's decoded cells, as a plain data block (the on-disk sizes stay
    /// those of the encoded block).
    pub(crate) fn into_decoded(mut self, cells: Bytes) -> Block {
        let parts = self.parts_mut();
        parts.header.block_type = BlockType::Data;
        parts.header.uncompressed_size_without_header = cells.len() as u32;
        parts.data = cells;
        self
    }

    /// The same block with a size hint for the one after it (caches keep the hint).
    #[inline]
    pub fn with_next_block_on_disk_size(mut self, next: Option<u64>) -> Block {
        self.parts_mut().next_block_on_disk_size = next;
        self
    }

    /// The parts, to finish a block being built; a block already shared is copied first
    /// (its other holders keep what they saw).
    fn parts_mut(&mut self) -> &mut BlockParts {
        Arc::make_mut(&mut self.0)
    }

    /// A block made from parts (tests, caches).
    #[inline]
    pub fn from_parts(offset: u64, header: BlockHeader, data: Bytes) -> Block {
        Block(Arc::new(BlockParts {
            offset,
            header,
            data,
            next_block_on_disk_size: None,
            cell_index: None,
        }))
    }
}

/// Turns block bodies into on-disk blocks.
pub struct BlockEncoder {
    checksum: DataChecksum,
    compression: Compression,
    zstd_framing: ZstdFraming,
}

impl BlockEncoder {
    /// An encoder for one file's settings.
    pub fn new(
        checksum: DataChecksum,
        compression: Compression,
        zstd_framing: ZstdFraming,
    ) -> Result<BlockEncoder> {
        if (checksum.bytes_per_checksum() as usize) < HEADER_SIZE {
            // HBase's writer refuses this too: a chunk must hold at least the header.
            return Err(HFileError::InvalidArgument(format!(
                "bytes per checksum must be at least {HEADER_SIZE}, got {}",
                checksum.bytes_per_checksum()
            )));
        }
        if !compression.is_supported() {
            return Err(HFileError::InvalidArgument(format!(
                "compression {compression} is not supported by this build of cairn"
            )));
        }
        Ok(BlockEncoder {
            checksum,
            compression,
            zstd_framing,
        })
    }

    /// The file's compression.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Turns `buf` — `HEADER_SIZE` placeholder bytes followed by the body — into the on-disk
    /// block in place when the file is uncompressed (no copy of the body); compressed files
    /// get their body compressed into `scratch` and swapped in.
    pub fn encode_in_place(
        &self,
        block_type: BlockType,
        buf: &mut Vec<u8>,
        prev_block_offset: i64,
        scratch: &mut Vec<u8>,
    ) -> Result<BlockHeader> {
        if self.compression == Compression::None {
            let body_len = buf.len() - HEADER_SIZE;
            return self.finish(block_type, buf, 0, body_len, prev_block_offset);
        }
        scratch.clear();
        self.encode(block_type, &buf[HEADER_SIZE..], prev_block_offset, scratch)
            .inspect(|_| std::mem::swap(buf, scratch))
    }

    /// Appends the on-disk form of a block with this body to `out`; returns its header.
    pub fn encode(
        &self,
        block_type: BlockType,
        body: &[u8],
        prev_block_offset: i64,
        out: &mut Vec<u8>,
    ) -> Result<BlockHeader> {
        let start = out.len();
        out.extend_from_slice(&[0u8; HEADER_SIZE]);
        compression::compress(self.compression, self.zstd_framing, body, out)?;
        self.finish(block_type, out, start, body.len(), prev_block_offset)
    }

    /// Fills in the header of the block at `out[start..]` (header placeholder and stored body)
    /// and appends its checksums.
    fn finish(
        &self,
        block_type: BlockType,
        out: &mut Vec<u8>,
        start: usize,
        body_len: usize,
        prev_block_offset: i64,
    ) -> Result<BlockHeader> {
        let data_len = out.len() - start;
        let sums_len = checksum_bytes(data_len, self.checksum.bytes_per_checksum());
        let header = BlockHeader {
            block_type,
            on_disk_size_without_header: to_u32(data_len - HEADER_SIZE + sums_len)?,
            uncompressed_size_without_header: to_u32(body_len)?,
            prev_block_offset,
            checksum_type: self.checksum.checksum_type(),
            bytes_per_checksum: self.checksum.bytes_per_checksum(),
            on_disk_data_size_with_header: to_u32(data_len)?,
        };
        out[start..start + HEADER_SIZE].copy_from_slice(&header.encode());
        out.resize(start + data_len + sums_len, 0);
        if self.checksum.checksum_type() != ChecksumType::Null {
            let (data, sums) = out[start..].split_at_mut(data_len);
            self.checksum
                .compute_chunked(data, sums)
                .expect("sums sized for the data");
        }
        Ok(header)
    }
}

fn to_u32(n: usize) -> Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&v| v <= i32::MAX as u32)
        .ok_or_else(|| {
            HFileError::InvalidArgument(format!(
                "block of {n} bytes is larger than HFile's 2 GiB limit"
            ))
        })
}

/// How blocks of one file are decoded.
#[derive(Clone, Debug)]
pub struct DecodeContext {
    /// The file, for error messages.
    pub path: Arc<str>,
    /// The file's compression (from the trailer).
    pub compression: Compression,
    /// Verify inline checksums (HBase's `hbase.regionserver.checksum.verify`).
    pub verify_checksums: bool,
}

/// Decodes the on-disk bytes of the block at `offset`: `raw` holds the whole block, possibly
/// followed by the next block's header.
///
/// The checksum fields are bounds-checked and the checksums verified before any other header
/// field is used; then the header is checked against itself and against `raw`, and the body is
/// decompressed. A compressed body is copied out; an uncompressed one is shared with `raw`.
pub fn decode_block(
    raw: Bytes,
    offset: u64,
    block_len: usize,
    ctx: &DecodeContext,
) -> Result<Block> {
    let err = |reason: String| HFileError::block(&ctx.path, None, offset, reason);
    if block_len < HEADER_SIZE || raw.len() < block_len {
        return Err(err(format!(
            "{} bytes available, a block needs its {HEADER_SIZE}-byte header",
            raw.len().min(block_len)
        )));
    }
    let b = &raw[..block_len];
    let checksum_code = b[24];
    let bytes_per_checksum = be_u32(b, 25);
    let data_len = be_u32(b, 29) as usize;
    let checksum_type =
        ChecksumType::from_code(checksum_code).map_err(|e| err(format!("header byte 24: {e}")))?;
    if bytes_per_checksum == 0 || data_len < HEADER_SIZE || data_len > block_len {
        return Err(err(format!(
            "header is damaged: bytesPerChecksum {bytes_per_checksum}, onDiskDataSizeWithHeader \
             {data_len}, block of {block_len} bytes"
        )));
    }
    let sums_len = checksum_bytes(data_len, bytes_per_checksum);
    if data_len + sums_len != block_len {
        return Err(err(format!(
            "header is damaged: {data_len} bytes of header and data need {sums_len} bytes of \
             checksums, but the block is {block_len} bytes"
        )));
    }
    if ctx.verify_checksums && checksum_type != ChecksumType::Null {
        let dc =
            DataChecksum::new(checksum_type, bytes_per_checksum).map_err(|e| err(e.to_string()))?;
        match dc.verify_chunked(&b[..data_len], &b[data_len..], offset) {
            Ok(()) => {}
            Err(ChecksumError::Mismatch(mismatch)) => {
                crate::count_checksum_failure();
                return Err(HFileError::Checksum {
                    path: ctx.path.clone(),
                    block_offset: offset,
                    mismatch,
                });
            }
            Err(e) => return Err(err(e.to_string())),
        }
    }
    let block_type = BlockType::from_magic(&b[..MAGIC_LEN]).ok_or_else(|| {
        err(format!(
            "unknown block magic \"{}\"",
            crate::cell::Escaped(&b[..MAGIC_LEN])
        ))
    })?;
    let err = |reason: String| HFileError::block(&ctx.path, Some(block_type), offset, reason);
    let header = BlockHeader {
        block_type,
        on_disk_size_without_header: be_u32(b, 8),
        uncompressed_size_without_header: be_u32(b, 12),
        prev_block_offset: i64::from_be_bytes(b[16..24].try_into().expect("8 bytes")),
        checksum_type,
        bytes_per_checksum,
        on_disk_data_size_with_header: data_len as u32,
    };
    if header.on_disk_size_with_header() != block_len as u64 {
        return Err(err(format!(
            "header says {} bytes on disk, the block is {block_len}",
            header.on_disk_size_with_header()
        )));
    }
    let uncompressed = header.uncompressed_size_without_header as usize;
    if uncompressed > i32::MAX as usize {
        return Err(err(format!(
            "uncompressed size {uncompressed} is negative as a Java int"
        )));
    }
    let data = if ctx.compression == Compression::None {
        if uncompressed != data_len - HEADER_SIZE {
            return Err(err(format!(
                "uncompressed file, but the header says {uncompressed} bytes of data and {} are stored",
                data_len - HEADER_SIZE
            )));
        }
        raw.slice(HEADER_SIZE..data_len)
    } else {
        let mut out = Vec::new();
        compression::decompress(
            ctx.compression,
            &b[HEADER_SIZE..data_len],
            uncompressed,
            &mut out,
        )
        .map_err(|e| err(e.to_string()))?;
        Bytes::from(out)
    };
    let next_block_on_disk_size = raw
        .get(block_len..block_len + HEADER_SIZE)
        .and_then(on_disk_size_from_header);
    Ok(Block::from_parts(offset, header, data)
        .with_next_block_on_disk_size(next_block_on_disk_size))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(compression: Compression) -> DecodeContext {
        DecodeContext {
            path: "test.hfile".into(),
            compression,
            verify_checksums: true,
        }
    }

    #[test]
    fn layout_matches_hbase_example() {
        // 65600 bytes of data, CRC32C per 16 KiB: 65633 bytes of header+data, 5 checksums.
        let enc = BlockEncoder::new(
            DataChecksum::new(ChecksumType::Crc32C, 16384).unwrap(),
            Compression::None,
            ZstdFraming::default(),
        )
        .unwrap();
        let body = vec![7u8; 65600];
        let mut out = Vec::new();
        let h = enc.encode(BlockType::Data, &body, -1, &mut out).unwrap();
        assert_eq!(out.len(), 65653);
        assert_eq!(
            (
                h.on_disk_size_without_header,
                h.uncompressed_size_without_header,
                h.on_disk_data_size_with_header
            ),
            (65620, 65600, 65633)
        );
        assert_eq!(&out[..8], b"DATABLK*");
        assert_eq!(&out[16..24], &(-1i64).to_be_bytes());
        assert_eq!((out[24], be_u32(&out, 25)), (2, 16384));
        let b = decode_block(Bytes::from(out), 0, 65653, &ctx(Compression::None)).unwrap();
        assert_eq!(b.data().as_ref(), &body[..]);
        assert_eq!(b.header(), &h);
        assert_eq!(BlockHeader::decode(&h.encode()), Some(h));
    }

    #[test]
    fn a_shared_block_is_never_changed_through_another_handle() {
        let enc = BlockEncoder::new(
            DataChecksum::new(ChecksumType::Crc32C, 512).unwrap(),
            Compression::None,
            ZstdFraming::default(),
        )
        .unwrap();
        let mut out = Vec::new();
        let h = enc
            .encode(BlockType::Data, &[1u8; 100], -1, &mut out)
            .unwrap();
        let len = out.len();
        let cached = decode_block(Bytes::from(out), 0, len, &ctx(Compression::None)).unwrap();
        // A reader finishing its copy (a size hint, a cell index, decoded cells) leaves the
        // copy the cache and other readers hold as it was.
        let mine = cached
            .clone()
            .with_next_block_on_disk_size(Some(77))
            .with_cell_index(Some(Bytes::from_static(b"index")))
            .into_decoded(Bytes::from_static(b"cells"));
        assert_eq!(
            (mine.next_block_on_disk_size(), mine.data().as_ref()),
            (Some(77), &b"cells"[..])
        );
        assert_eq!(mine.cell_index().map(|b| b.as_ref()), Some(&b"index"[..]));
        assert_eq!(cached.next_block_on_disk_size(), None);
        assert_eq!(cached.cell_index(), None);
        assert_eq!(cached.data().as_ref(), &[1u8; 100][..]);
        assert_eq!(cached.header(), &h);
    }

    #[test]
    fn every_flipped_byte_is_detected_before_use() {
        for compression in [Compression::None, Compression::Gz] {
            let enc = BlockEncoder::new(
                DataChecksum::new(ChecksumType::Crc32C, 512).unwrap(),
                compression,
                ZstdFraming::default(),
            )
            .unwrap();
            let body: Vec<u8> = (0..3000u32).map(|i| (i % 13) as u8).collect();
            let mut good = Vec::new();
            enc.encode(BlockType::Data, &body, 12345, &mut good)
                .unwrap();
            for i in 0..good.len() {
                let mut bad = good.clone();
                bad[i] ^= 0x20;
                let len = bad.len();
                let r = decode_block(Bytes::from(bad), 4096, len, &ctx(compression));
                assert!(r.is_err(), "{compression}: flip at {i} not detected");
                assert!(r.unwrap_err().to_string().starts_with("test.hfile: "));
            }
        }
    }

    #[test]
    fn null_checksums_reserve_zeroed_space() {
        let enc = BlockEncoder::new(
            DataChecksum::new(ChecksumType::Null, 512).unwrap(),
            Compression::None,
            ZstdFraming::default(),
        )
        .unwrap();
        let mut out = Vec::new();
        let h = enc
            .encode(BlockType::Meta, &[1u8; 1000], -1, &mut out)
            .unwrap();
        assert_eq!(out.len(), 33 + 1000 + 12);
        assert!(out[1033..].iter().all(|&b| b == 0));
        assert_eq!(h.on_disk_size_without_header, 1012);
        let len = out.len();
        assert!(decode_block(Bytes::from(out), 0, len, &ctx(Compression::None)).is_ok());
    }
}
