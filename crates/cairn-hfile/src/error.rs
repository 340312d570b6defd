//! Errors of the HFile crate. Every error about bytes on disk names the file and the offset of
//! the block (or structure) it concerns.

use std::io;
use std::sync::Arc;

use cairn_checksum::ChecksumMismatch;

use crate::block_type::BlockType;
use crate::cell::CellError;
use crate::compression::CompressionError;

/// The crate's result: errors are [`HFileError`]s naming the file and offset.
pub type Result<T, E = HFileError> = std::result::Result<T, E>;

/// Everything that can go wrong reading or writing an HFile.
#[derive(Debug, thiserror::Error)]
pub enum HFileError {
    /// The operating system failed a read or write.
    #[error("{path}: I/O error at offset {offset}: {source}")]
    Io {
        /// Path of the HFile.
        path: Arc<str>,
        /// Offset of the operation.
        offset: u64,
        /// The operating system's error.
        source: io::Error,
    },
    /// A block whose stored checksum does not match its bytes.
    #[error("{path}: block at offset {block_offset}: {mismatch}")]
    Checksum {
        /// Path of the HFile.
        path: Arc<str>,
        /// Offset of the block in the file.
        block_offset: u64,
        /// Chunk, absolute byte range in the file, and both values.
        mismatch: ChecksumMismatch,
    },
    /// A block that failed its checksum from the primary source and again from the
    /// secondary one: it is corrupt everywhere and none of it is returned.
    #[error("{path}: block at offset {block_offset} is corrupt in every copy: primary: {primary}; secondary: {secondary}")]
    CorruptEverywhere {
        /// Path of the HFile.
        path: Arc<str>,
        /// Offset of the block.
        block_offset: u64,
        /// The primary copy's failure.
        primary: Box<HFileError>,
        /// The secondary copy's failure.
        secondary: Box<HFileError>,
    },
    /// Bytes that are not what an HFile holds there.
    #[error("{path}: {what} at offset {offset}: {reason}")]
    Corrupt {
        /// Path of the HFile.
        path: Arc<str>,
        /// What was being read (a block type, "trailer", "file info", ...).
        what: String,
        /// Offset of the structure.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A valid HFile that uses something cairn does not implement.
    #[error("{path}: {what}")]
    Unsupported {
        /// Path of the HFile.
        path: Arc<str>,
        /// What is not supported.
        what: String,
    },
    /// A caller error: cells out of order, bad options.
    #[error("{0}")]
    InvalidArgument(String),
}

impl HFileError {
    pub(crate) fn corrupt(
        path: &Arc<str>,
        what: impl Into<String>,
        offset: u64,
        reason: impl Into<String>,
    ) -> HFileError {
        HFileError::Corrupt {
            path: path.clone(),
            what: what.into(),
            offset,
            reason: reason.into(),
        }
    }

    pub(crate) fn block(
        path: &Arc<str>,
        block_type: Option<BlockType>,
        offset: u64,
        reason: impl Into<String>,
    ) -> HFileError {
        HFileError::corrupt(
            path,
            match block_type {
                Some(t) => format!("{t} block"),
                None => "block".to_string(),
            },
            offset,
            reason,
        )
    }

    pub(crate) fn io(path: &Arc<str>, offset: u64, source: io::Error) -> HFileError {
        HFileError::Io {
            path: path.clone(),
            offset,
            source,
        }
    }

    /// True when the error means stored bytes are damaged (not an I/O failure or a usage
    /// error), so another copy may be worth reading.
    pub fn is_corruption(&self) -> bool {
        matches!(
            self,
            HFileError::Checksum { .. }
                | HFileError::CorruptEverywhere { .. }
                | HFileError::Corrupt { .. }
        )
    }
}

impl From<CellError> for HFileError {
    fn from(e: CellError) -> Self {
        HFileError::InvalidArgument(e.to_string())
    }
}

impl From<CompressionError> for HFileError {
    fn from(e: CompressionError) -> Self {
        HFileError::InvalidArgument(e.to_string())
    }
}
