//! # cairn-checksum
//!
//! The chunked block checksums every HFile block, WAL record and cache slot in cairn carries:
//! cairn's equivalent of Hadoop's `DataChecksum` as HBase uses it.
//!
//! **Owns:** the checksum types and their on-disk codes ([`ChecksumType`]); chunked compute and
//! verify ([`DataChecksum`]), incremental checksums ([`RunningChecksum`]); streaming
//! checksumming writers and verifying readers ([`ChecksumWriter`], [`ChecksumReader`]); the
//! hardware kernels and their one-time run-time selection ([`Implementation`]); HDFS's block
//! metadata header and whole-file checksums ([`hdfs`]).
//!
//! **Does not own:** where checksums are stored (HFile block layout, WAL framing, cache slots
//! belong to their crates) or what to do about a mismatch (re-reading a replica, counting
//! failures): callers decide, this crate only reports precisely.

#![warn(missing_docs)]

pub mod accounting;
mod checksum_type;
mod data_checksum;
mod error;
pub mod hdfs;
mod kernel;
mod stream;

pub use checksum_type::ChecksumType;
pub use data_checksum::{DataChecksum, RunningChecksum};
pub use error::{ChecksumError, ChecksumMismatch};
pub use kernel::{Implementation, IMPLEMENTATION_ENV};
pub use stream::{ChecksumReader, ChecksumWriter};
