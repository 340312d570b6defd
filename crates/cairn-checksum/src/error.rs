//! Errors of the checksum crate.

use crate::{ChecksumType, Implementation};

/// Everything that can go wrong in this crate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChecksumError {
    /// A configuration string that names no checksum type.
    #[error("unknown checksum type name {0:?} (expected NULL, CRC32 or CRC32C)")]
    UnknownName(String),
    /// An on-disk code that names no checksum type.
    #[error("unknown checksum type code {0} (expected 0 = NULL, 1 = CRC32, 2 = CRC32C)")]
    UnknownCode(u8),
    /// `bytes_per_checksum` of zero.
    #[error("bytes per checksum must be at least 1, got {0}")]
    InvalidBytesPerChecksum(u32),
    /// A checksum buffer whose length does not fit the data.
    #[error(
        "checksum buffer holds {actual} bytes but {data_len} bytes of data in chunks of \
         {bytes_per_checksum} need {expected}"
    )]
    SumsLength {
        /// Length of the data.
        data_len: usize,
        /// Chunk size.
        bytes_per_checksum: u32,
        /// Bytes the sums need.
        expected: usize,
        /// Bytes the caller gave.
        actual: usize,
    },
    /// A checksum stream that ends while data remains.
    #[error("the checksums end before the data: no checksum for the chunk at byte {offset}")]
    MissingSums {
        /// Absolute offset of the first chunk without a checksum.
        offset: u64,
    },
    /// A checksum stream that goes on after the data ended: the data was truncated.
    #[error("the checksums go on after the data ends at byte {data_len}: the data is truncated")]
    ExtraSums {
        /// Bytes of data seen.
        data_len: u64,
    },
    /// An HDFS block metadata header that cannot be used.
    #[error("bad HDFS block metadata header: {0}")]
    BadMetaHeader(String),
    /// Options that HDFS itself would refuse for a file checksum.
    #[error("invalid HDFS file checksum options: {0}")]
    BadFileChecksumOptions(String),
    /// Stored and computed checksums differ.
    #[error(transparent)]
    Mismatch(#[from] ChecksumMismatch),
    /// `CAIRN_CHECKSUM_IMPL` or an API call named no implementation.
    #[error("unknown checksum implementation {0:?} (expected portable, crates or avx512)")]
    UnknownImplementation(String),
    /// The implementation cannot run on this CPU.
    #[error("the {0} checksum implementation is not supported by this CPU")]
    ImplementationUnavailable(Implementation),
}

/// A chunk whose stored checksum does not match its data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{checksum_type} checksum mismatch in chunk {chunk_index} (bytes {offset}..{end}): stored \
     {expected:#010x}, computed {computed:#010x}",
    end = offset + *chunk_len as u64
)]
pub struct ChecksumMismatch {
    /// The algorithm.
    pub checksum_type: ChecksumType,
    /// Index of the chunk within the verified buffer.
    pub chunk_index: usize,
    /// Absolute byte offset of the chunk's first byte (the caller's base offset plus the chunk's
    /// position in the buffer).
    pub offset: u64,
    /// Length of the chunk (the last one may be short).
    pub chunk_len: usize,
    /// The stored checksum.
    pub expected: u32,
    /// The checksum of the data as read.
    pub computed: u32,
}
