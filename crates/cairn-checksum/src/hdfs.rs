//! HDFS compatibility: the header of a DataNode's block metadata (`.meta`) file and the
//! whole-file checksums `hdfs dfs -checksum` prints, so a local file can be compared with its
//! copy on HDFS without moving it.
//!
//! Facts from Hadoop (`BlockMetadataHeader`, `DataChecksum.writeHeader`,
//! `MD5MD5CRC32FileChecksum`, `CompositeCrcFileChecksum`, `FileChecksumHelper`,
//! `BlockChecksumHelper`):
//! - `.meta` = version (u16 BE, 1), checksum type code (u8), bytes per checksum (u32 BE), then
//!   one big-endian CRC per chunk of the block; the last chunk may be short.
//! - `MD5MD5CRC` (the default `dfs.checksum.combine.mode`): each DataNode digests the CRC bytes
//!   of its block with MD5; the client digests the concatenated block MD5s. The client's
//!   buffer is a `DataOutputBuffer` digested whole (`getData()`), so the MD5s are followed by
//!   zeros up to the buffer's capacity: 32 bytes, doubled as needed. `crcPerBlock` is the first
//!   block's CRC count when the file has more than one block, else 0. The bytes printed are
//!   `bytesPerCRC` (u32 BE), `crcPerBlock` (u64 BE), MD5 (16), as lower-case hex; the name is
//!   `MD5-of-<crcPerBlock>MD5-of-<bytesPerCRC><CRC32|CRC32C>`.
//! - `COMPOSITE_CRC` (HDFS-13056): block CRCs composed into the CRC of the whole file,
//!   printed as 4 big-endian bytes; the name is `COMPOSITE-<CRC32|CRC32C>`.
//! - An empty file has no blocks and always gives `MD5-of-0MD5-of-0CRC32` over the MD5 of 32
//!   zero bytes, whatever the mode.

use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

use md5::{Digest, Md5};

use crate::{ChecksumError, ChecksumType, ChecksumWriter, DataChecksum, RunningChecksum};

/// The version every current DataNode writes.
pub const META_VERSION: u16 = 1;
/// Bytes of the `.meta` header.
pub const META_HEADER_LEN: usize = 7;

/// The header of an HDFS block metadata file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockMetadataHeader {
    /// Format version (1).
    pub version: u16,
    /// Checksum algorithm.
    pub checksum_type: ChecksumType,
    /// Chunk size.
    pub bytes_per_checksum: u32,
}

impl BlockMetadataHeader {
    /// A version-1 header.
    pub fn new(checksum_type: ChecksumType, bytes_per_checksum: u32) -> Self {
        BlockMetadataHeader {
            version: META_VERSION,
            checksum_type,
            bytes_per_checksum,
        }
    }

    /// The 7 header bytes.
    pub fn encode(&self) -> [u8; META_HEADER_LEN] {
        let mut b = [0u8; META_HEADER_LEN];
        b[0..2].copy_from_slice(&self.version.to_be_bytes());
        b[2] = self.checksum_type.code();
        b[3..7].copy_from_slice(&self.bytes_per_checksum.to_be_bytes());
        b
    }

    /// Parses the first 7 bytes of a `.meta` file.
    pub fn decode(bytes: &[u8]) -> Result<Self, ChecksumError> {
        let b: &[u8; META_HEADER_LEN] = bytes
            .get(..META_HEADER_LEN)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| {
                ChecksumError::BadMetaHeader(format!(
                    "{} bytes, the header needs {META_HEADER_LEN}",
                    bytes.len()
                ))
            })?;
        let version = u16::from_be_bytes([b[0], b[1]]);
        if version != META_VERSION {
            return Err(ChecksumError::BadMetaHeader(format!(
                "version {version} at offset 0, only version {META_VERSION} is known"
            )));
        }
        let checksum_type = ChecksumType::from_code(b[2])
            .map_err(|e| ChecksumError::BadMetaHeader(format!("checksum type at offset 2: {e}")))?;
        let bytes_per_checksum = u32::from_be_bytes([b[3], b[4], b[5], b[6]]);
        if bytes_per_checksum == 0 {
            return Err(ChecksumError::BadMetaHeader(
                "bytes per checksum at offset 3 is 0".to_string(),
            ));
        }
        Ok(BlockMetadataHeader {
            version,
            checksum_type,
            bytes_per_checksum,
        })
    }

    /// The chunked checksum this header describes.
    pub fn data_checksum(&self) -> Result<DataChecksum, ChecksumError> {
        DataChecksum::new(self.checksum_type, self.bytes_per_checksum)
    }
}

/// How per-block checksums become a file checksum (`dfs.checksum.combine.mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CombineMode {
    /// MD5 of the blocks' MD5s of their chunk CRCs (HDFS's default): depends on block size and
    /// bytes per CRC.
    #[default]
    Md5Md5Crc,
    /// The CRC of the whole file, composed from block CRCs: independent of block layout.
    CompositeCrc,
}

impl CombineMode {
    /// The configuration value: `MD5MD5CRC` or `COMPOSITE_CRC`.
    pub fn name(self) -> &'static str {
        match self {
            CombineMode::Md5Md5Crc => "MD5MD5CRC",
            CombineMode::CompositeCrc => "COMPOSITE_CRC",
        }
    }
}

impl FromStr for CombineMode {
    type Err = ChecksumError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        [CombineMode::Md5Md5Crc, CombineMode::CompositeCrc]
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| {
                ChecksumError::BadFileChecksumOptions(format!(
                    "unknown combine mode {s:?} (expected MD5MD5CRC or COMPOSITE_CRC)"
                ))
            })
    }
}

/// The layout HDFS would give the file: `dfs.blocksize`, `dfs.bytes-per-checksum`,
/// `dfs.checksum.type`, `dfs.checksum.combine.mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileChecksumOptions {
    /// Block size (default 128 MiB).
    pub block_size: u64,
    /// Bytes per CRC (default 512).
    pub bytes_per_crc: u32,
    /// CRC32 or CRC32C (default CRC32C).
    pub crc_type: ChecksumType,
    /// How block checksums are combined.
    pub combine_mode: CombineMode,
}

impl Default for FileChecksumOptions {
    fn default() -> Self {
        FileChecksumOptions {
            block_size: 128 * 1024 * 1024,
            bytes_per_crc: 512,
            crc_type: ChecksumType::Crc32C,
            combine_mode: CombineMode::Md5Md5Crc,
        }
    }
}

impl FileChecksumOptions {
    fn validate(&self) -> Result<(), ChecksumError> {
        let bad = |m: String| Err(ChecksumError::BadFileChecksumOptions(m));
        if self.crc_type == ChecksumType::Null {
            return bad("a file checksum needs CRC32 or CRC32C, not NULL".into());
        }
        if self.bytes_per_crc == 0 {
            return bad("bytes per CRC must be at least 1".into());
        }
        if self.block_size == 0 || !self.block_size.is_multiple_of(self.bytes_per_crc as u64) {
            // The NameNode refuses such a block size, so HDFS has no checksum to compare with.
            return bad(format!(
                "block size {} is not a positive multiple of bytes per CRC {}",
                self.block_size, self.bytes_per_crc
            ));
        }
        Ok(())
    }
}

/// A whole-file checksum as HDFS reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileChecksum {
    /// `MD5MD5CRC32FileChecksum` (Gzip = CRC32, Castagnoli = CRC32C).
    Md5Md5Crc32 {
        /// Bytes per CRC.
        bytes_per_crc: u32,
        /// CRCs in the first block, or 0 for a file of one block.
        crc_per_block: u64,
        /// The file-level MD5.
        md5: [u8; 16],
        /// CRC32 or CRC32C.
        crc_type: ChecksumType,
    },
    /// `CompositeCrcFileChecksum`.
    CompositeCrc {
        /// CRC of the whole file.
        crc: u32,
        /// CRC32 or CRC32C.
        crc_type: ChecksumType,
    },
}

impl FileChecksum {
    /// The algorithm name HDFS prints, e.g. `MD5-of-262144MD5-of-512CRC32C`.
    pub fn algorithm_name(&self) -> String {
        match self {
            FileChecksum::Md5Md5Crc32 {
                bytes_per_crc,
                crc_per_block,
                crc_type,
                ..
            } => format!("MD5-of-{crc_per_block}MD5-of-{bytes_per_crc}{crc_type}"),
            FileChecksum::CompositeCrc { crc_type, .. } => format!("COMPOSITE-{crc_type}"),
        }
    }

    /// The checksum bytes (`getBytes()` up to `getLength()`).
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            FileChecksum::Md5Md5Crc32 {
                bytes_per_crc,
                crc_per_block,
                md5,
                ..
            } => {
                let mut b = Vec::with_capacity(28);
                b.extend_from_slice(&bytes_per_crc.to_be_bytes());
                b.extend_from_slice(&crc_per_block.to_be_bytes());
                b.extend_from_slice(md5);
                b
            }
            FileChecksum::CompositeCrc { crc, .. } => crc.to_be_bytes().to_vec(),
        }
    }

    /// The bytes as lower-case hex, as `hdfs dfs -checksum` prints them.
    pub fn hex(&self) -> String {
        self.bytes().iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl fmt::Display for FileChecksum {
    /// `<algorithm>\t<hex>`: the part of an `hdfs dfs -checksum` line after the path.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\t{}", self.algorithm_name(), self.hex())
    }
}

/// Computes an HDFS file checksum over data fed in pieces of any size.
pub struct FileChecksummer {
    options: FileChecksumOptions,
    /// Chunk CRCs of the current block, digested as they are produced (the DataNode's job).
    block: ChecksumWriter<io::Sink, Md5>,
    block_crc: RunningChecksum,
    block_len: u64,
    blocks: u64,
    block_md5s: Vec<u8>,
    file_crc: Option<u32>,
    checksum: DataChecksum,
}

impl FileChecksummer {
    /// A checksummer for the given layout.
    pub fn new(options: FileChecksumOptions) -> Result<Self, ChecksumError> {
        options.validate()?;
        let checksum = DataChecksum::new(options.crc_type, options.bytes_per_crc)?;
        Ok(FileChecksummer {
            options,
            block: ChecksumWriter::new(io::sink(), Md5::new(), checksum),
            block_crc: checksum.running(),
            block_len: 0,
            blocks: 0,
            block_md5s: Vec::new(),
            file_crc: None,
            checksum,
        })
    }

    /// Adds the next bytes of the file.
    pub fn update(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let room = self.options.block_size - self.block_len;
            let take = (data.len() as u64).min(room) as usize;
            let (piece, rest) = data.split_at(take);
            self.block
                .write_all(piece)
                .expect("writing to a sink and an MD5 cannot fail");
            if self.options.combine_mode == CombineMode::CompositeCrc {
                self.block_crc.update(piece);
            }
            self.block_len += take as u64;
            if self.block_len == self.options.block_size {
                self.end_block();
            }
            data = rest;
        }
    }

    fn end_block(&mut self) {
        let fresh = ChecksumWriter::new(io::sink(), Md5::new(), self.checksum);
        let (_, md5) = std::mem::replace(&mut self.block, fresh)
            .finish()
            .expect("writing to a sink and an MD5 cannot fail");
        self.block_md5s.extend_from_slice(&md5.finalize());
        if self.options.combine_mode == CombineMode::CompositeCrc {
            let block_crc = self.block_crc.value();
            self.file_crc = Some(match self.file_crc {
                None => block_crc,
                Some(prev) => compose(self.options.crc_type, prev, block_crc, self.block_len),
            });
            self.block_crc.reset();
        }
        self.block_len = 0;
        self.blocks += 1;
    }

    /// The checksum of everything added.
    pub fn finish(mut self) -> FileChecksum {
        if self.block_len > 0 {
            self.end_block();
        }
        if self.blocks == 0 {
            return FileChecksum::Md5Md5Crc32 {
                bytes_per_crc: 0,
                crc_per_block: 0,
                md5: Md5::digest([0u8; 32]).into(),
                crc_type: ChecksumType::Crc32,
            };
        }
        match self.options.combine_mode {
            CombineMode::CompositeCrc => FileChecksum::CompositeCrc {
                crc: self.file_crc.expect("at least one block"),
                crc_type: self.options.crc_type,
            },
            CombineMode::Md5Md5Crc => {
                // The client digests its DataOutputBuffer's whole backing array: 32 bytes at
                // first, doubled whenever the block MD5s outgrow it, zero beyond them.
                let capacity = self.block_md5s.len().next_power_of_two().max(32);
                self.block_md5s.resize(capacity, 0);
                let crc_per_block = if self.blocks > 1 {
                    self.checksum.chunk_count(self.options.block_size as usize) as u64
                } else {
                    0
                };
                FileChecksum::Md5Md5Crc32 {
                    bytes_per_crc: self.options.bytes_per_crc,
                    crc_per_block,
                    md5: Md5::digest(&self.block_md5s).into(),
                    crc_type: self.options.crc_type,
                }
            }
        }
    }
}

impl Write for FileChecksummer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// CRC of `A ‖ B` from `CRC(A)`, `CRC(B)` and `|B|` (Hadoop's `CrcUtil.compose`).
fn compose(crc_type: ChecksumType, crc_a: u32, crc_b: u32, len_b: u64) -> u32 {
    let algorithm = match crc_type {
        ChecksumType::Crc32 => crc_fast::CrcAlgorithm::Crc32IsoHdlc,
        _ => crc_fast::CrcAlgorithm::Crc32Iscsi,
    };
    crc_fast::checksum_combine(algorithm, crc_a as u64, crc_b as u64, len_b) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-at-a-time CRC, independent of every kernel in this crate.
    fn reference_crc(crc_type: ChecksumType, data: &[u8]) -> u32 {
        let poly = match crc_type {
            ChecksumType::Crc32 => 0xEDB8_8320u32,
            _ => 0x82F6_3B78,
        };
        let mut crc = !0u32;
        for &b in data {
            crc ^= b as u32;
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ poly
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    /// The MD5-of-MD5 form computed step by step as the DataNodes and the client do.
    fn reference_md5md5(data: &[u8], block: usize, bpc: usize, t: ChecksumType) -> String {
        let blocks: Vec<&[u8]> = data.chunks(block).collect();
        let mut buf = Vec::new();
        for b in &blocks {
            let mut meta = Vec::new();
            for c in b.chunks(bpc) {
                meta.extend_from_slice(&reference_crc(t, c).to_be_bytes());
            }
            buf.extend_from_slice(&Md5::digest(&meta));
        }
        let mut cap = 32;
        while cap < buf.len() {
            cap *= 2;
        }
        buf.resize(cap, 0);
        let crc_per_block = if blocks.len() > 1 {
            block.div_ceil(bpc)
        } else {
            0
        };
        let mut out = Vec::new();
        out.extend_from_slice(&(bpc as u32).to_be_bytes());
        out.extend_from_slice(&(crc_per_block as u64).to_be_bytes());
        out.extend_from_slice(&Md5::digest(&buf));
        out.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn checksum_of(data: &[u8], options: FileChecksumOptions, piece: usize) -> FileChecksum {
        let mut c = FileChecksummer::new(options).unwrap();
        for p in data.chunks(piece.max(1)) {
            c.update(p);
        }
        c.finish()
    }

    fn sample(len: usize) -> Vec<u8> {
        (0..len as u32)
            .map(|i| (i.wrapping_mul(0x0100_0193) >> 7) as u8)
            .collect()
    }

    #[test]
    fn meta_header_round_trips_and_rejects_garbage() {
        let h = BlockMetadataHeader::new(ChecksumType::Crc32C, 512);
        assert_eq!(h.encode(), [0, 1, 2, 0, 0, 2, 0]);
        assert_eq!(BlockMetadataHeader::decode(&h.encode()).unwrap(), h);
        assert!(BlockMetadataHeader::decode(&[0, 1, 2]).is_err());
        let e = BlockMetadataHeader::decode(&[0, 2, 2, 0, 0, 2, 0]).unwrap_err();
        assert!(e.to_string().contains("version 2"), "{e}");
        let e = BlockMetadataHeader::decode(&[0, 1, 9, 0, 0, 2, 0]).unwrap_err();
        assert!(e.to_string().contains("code 9"), "{e}");
        assert!(BlockMetadataHeader::decode(&[0, 1, 2, 0, 0, 0, 0]).is_err());
    }

    #[test]
    fn md5md5_matches_a_step_by_step_computation() {
        for t in [ChecksumType::Crc32C, ChecksumType::Crc32] {
            for (len, block, bpc) in [
                (1usize, 1024usize, 512usize),
                (1000, 1024, 512),
                (1024, 1024, 512),
                (1025, 1024, 512),
                (3 * 1024 + 7, 1024, 512),
                (5 * 4096, 4096, 512),
                (70_000, 2048, 128),
                (70_000, 2048, 2048),
            ] {
                let data = sample(len);
                let options = FileChecksumOptions {
                    block_size: block as u64,
                    bytes_per_crc: bpc as u32,
                    crc_type: t,
                    combine_mode: CombineMode::Md5Md5Crc,
                };
                let expected = reference_md5md5(&data, block, bpc, t);
                for piece in [1usize, 100, 511, 4096, len] {
                    let got = checksum_of(&data, options, piece);
                    assert_eq!(
                        got.hex(),
                        expected,
                        "{t} len {len} block {block} piece {piece}"
                    );
                }
                let name = checksum_of(&data, options, len).algorithm_name();
                let cpb = if len > block { block / bpc } else { 0 };
                assert_eq!(name, format!("MD5-of-{cpb}MD5-of-{bpc}{t}"));
            }
        }
    }

    #[test]
    fn composite_equals_the_crc_of_the_whole_file() {
        for t in [ChecksumType::Crc32C, ChecksumType::Crc32] {
            for len in [1usize, 511, 512, 4096, 10_000, 100_003] {
                let data = sample(len);
                let options = FileChecksumOptions {
                    block_size: 2048,
                    bytes_per_crc: 512,
                    crc_type: t,
                    combine_mode: CombineMode::CompositeCrc,
                };
                let got = checksum_of(&data, options, 777);
                assert_eq!(
                    got,
                    FileChecksum::CompositeCrc {
                        crc: reference_crc(t, &data),
                        crc_type: t
                    },
                    "{t} len {len}"
                );
                assert_eq!(got.algorithm_name(), format!("COMPOSITE-{t}"));
                assert_eq!(got.hex(), format!("{:08x}", reference_crc(t, &data)));
            }
        }
        assert_eq!(
            checksum_of(
                b"123456789",
                FileChecksumOptions {
                    combine_mode: CombineMode::CompositeCrc,
                    ..Default::default()
                },
                9
            )
            .to_string(),
            "COMPOSITE-CRC32C\te3069283"
        );
    }

    #[test]
    fn empty_file_gives_hdfs_fixed_answer_in_both_modes() {
        for mode in [CombineMode::Md5Md5Crc, CombineMode::CompositeCrc] {
            let c = checksum_of(
                &[],
                FileChecksumOptions {
                    combine_mode: mode,
                    ..Default::default()
                },
                1,
            );
            assert_eq!(
                c.to_string(),
                "MD5-of-0MD5-of-0CRC32\t00000000000000000000000070bc8f4b72a86921468bf8e8441dce51"
            );
        }
    }

    #[test]
    fn options_hdfs_would_refuse_are_errors() {
        let bad = |o: FileChecksumOptions| FileChecksummer::new(o).is_err();
        let d = FileChecksumOptions::default();
        assert!(bad(FileChecksumOptions {
            crc_type: ChecksumType::Null,
            ..d
        }));
        assert!(bad(FileChecksumOptions {
            block_size: 1000,
            ..d
        }));
        assert!(bad(FileChecksumOptions {
            bytes_per_crc: 0,
            ..d
        }));
        assert!("md5md5crc".parse::<CombineMode>().is_ok());
        assert!("xor".parse::<CombineMode>().is_err());
    }
}
