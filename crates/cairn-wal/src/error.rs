//! What can go wrong in the WAL.

use std::io;
use std::path::PathBuf;

/// A WAL failure. I/O errors name the segment file (or directory) and the offset.
#[derive(Debug, thiserror::Error)]
pub enum WalError {
    /// An I/O operation failed.
    #[error("{op} {} at offset {offset}: {source}", .path.display())]
    Io {
        /// What was being done ("append to", "fdatasync", "create", ...).
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// Offset in the file (0 where there is none).
        offset: u64,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A file in a WAL directory whose header is not a WAL's or is damaged: the WAL cannot
    /// tell what the file holds, so opening stops rather than guess.
    #[error("WAL file {} has a damaged header: {reason}", .path.display())]
    BadHeader {
        /// The segment file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A WAL file cairn cannot read (compressed, encrypted, another cell codec): the server
    /// does not start over edits it cannot replay.
    #[error("cannot replay WAL file {}: {reason}", .path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// What it uses that cairn does not read.
        reason: String,
    },
    /// An edit too large for one record.
    #[error(
        "edit for region {region:?} is {size} bytes encoded, over the {max}-byte record limit"
    )]
    RecordTooLarge {
        /// The region, lossily as text.
        region: String,
        /// Encoded payload bytes.
        size: usize,
        /// [`crate::entry::MAX_ENTRY_LEN`].
        max: u32,
    },
    /// An earlier write or sync failed, so the WAL no longer knows what is on disk and refuses
    /// edits until [`crate::Wal::recover`] succeeds (the region server retries it by itself);
    /// a write refused with this was not applied, and may be retried.
    #[error("writes are refused until the WAL recovers from an earlier failure: {reason}")]
    Broken {
        /// The failure that broke it.
        reason: String,
    },
    /// [`crate::Wal::recover`] started a new segment, but the edits of the failed ones could
    /// not be made durable: the WAL still refuses edits.
    #[error("the WAL is still recovering from \"{failure}\": {reason}")]
    Recovering {
        /// The failure being recovered from.
        failure: String,
        /// Why making the earlier edits durable failed.
        reason: String,
    },
    /// File numbers are exhausted (the newest file's is `u64::MAX`).
    #[error("no file number after the one of {}", .path.display())]
    SegmentIdsExhausted {
        /// The newest segment.
        path: PathBuf,
    },
    /// The replay visitor asked to stop.
    #[error("replay stopped by the visitor: {0}")]
    Visitor(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl WalError {
    /// Wraps an error from a replay visitor.
    pub fn visitor(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> WalError {
        WalError::Visitor(e.into())
    }
}
