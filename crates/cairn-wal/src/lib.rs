//! # cairn-wal
//!
//! The region server's write-ahead log (HBase's `FSHLog`/`AbstractFSWAL`): every mutation is
//! appended here, checksummed, before it is applied to the memstore, so a crash loses nothing
//! that was acknowledged. One [`Wal`] is shared (via `Arc`) by all regions of a server.
//!
//! **Owns:** the segment files of one WAL directory and their format ([`segment`]); appends at
//! HBase's four [`Durability`] levels: a copy into the active segment, which is preallocated
//! and memory-mapped (`MAP_SHARED`), with group commit for `FSYNC_WAL` (one fdatasync covers
//! every appender that copied before it); the background thread that prepares the next segment
//! and prefaults the active one; rolling to a new segment (by size or on request); replay of
//! every segment at [`Wal::open`], with a precise report of what could not be read
//! ([`ReplayReport`]); tracking the highest sequence id per region in each segment and deleting
//! the segments no region needs any more once regions flush ([`Wal::mark_flushed`], HBase's
//! archiving via `SequenceIdAccounting`); metrics ([`WalStats`]).
//!
//! On a filesystem other than local disk (HDFS, through cairn-fs), [`Wal::open_on`] writes the
//! same segments as streams instead: records are buffered and committed in groups with
//! `hsync` for `SYNC_WAL` and `FSYNC_WAL`, every `async_sync_interval` for `ASYNC_WAL`; a
//! segment's lease is recovered before it is replayed (see `stream.rs`).
//!
//! **Does not own:** assigning sequence ids (the region's MVCC does, as in HBase), deciding
//! which replayed edits to apply (the region store skips edits at or below a store's flushed
//! sequence id, as `HRegion.replayRecoveredEditsIfAny` does), WAL splitting across servers,
//! replication, or HBase's on-disk WAL format.
//!
//! ## Format
//! cairn uses its **own segment format, not HBase's** `ProtobufLogWriter` format (`PWAL` magic,
//! protobuf `WALKey`s, `WALCellCodec` cells, `LAWP` trailer): cairn's WALs are read only by
//! cairn, and a fixed `length | crc32c | payload` frame per record lets replay stop exactly at a
//! torn tail with no trailer. See [`segment`] for the layout. The checksum is CRC32C from
//! `cairn-checksum` (hardware kernels where the CPU has them).
//!
//! A segment is created at its full size: header, then `posix_fallocate`d space up to
//! [`WalOptions::roll_size`] (rounded up to a page, at most 1 GiB), which reads as zeros.
//! Records are written one after the other into a shared mapping of the file, so the file of
//! the active segment (or of one whose writer crashed) ends in zeros: replay treats nothing but
//! zeros from a record boundary to the end of the file as the normal end of the segment, not
//! as dropped data, and truncates those zeros away. A segment is sealed when it is rolled away
//! from or the WAL is closed: truncated to the bytes written, then fdatasync'ed. Records and
//! header are unchanged from the first version of the format (header version 1): segments
//! written by earlier builds (no zero tail) replay as before.
//!
//! Up to [`WalOptions::recycled_segments`] files of fully flushed segments are kept (renamed
//! `wal.<id>.free`) and reused for new segments instead of created (RocksDB's
//! `recycle_log_file_num`): writing a new file makes the kernel allocate and zero every page
//! as it is first touched, while a kept file's pages are usually still in the page cache. A
//! reused file keeps its old bytes past the new records, so a recycled segment (header
//! version 2) masks its record checksums with its id and ends at a zero frame the writer puts
//! after each record; see [`segment`].
//!
//! ## Durability
//! - `SKIP_WAL`: nothing is written; the edit is lost in a crash unless flushed.
//! - `SYNC_WAL` (the default, as in HBase) and `ASYNC_WAL`: the record is copied into the
//!   shared mapping of the active segment before `append` returns, without a system call. A
//!   store into a `MAP_SHARED` file mapping is in the page cache (the file's own pages) as soon
//!   as it is made, so it survives a crash of the process, not of the machine: the local
//!   equivalent of HBase's `hflush`. Appends are copied in order under one lock, so when one
//!   returns, every byte before it is written too: a crash leaves whole records, then at most
//!   one torn record, then zeros. `ASYNC_WAL` gets the same guarantee, since the copy is as
//!   cheap as queueing would be; the kernel writes the pages back on its own schedule.
//! - `FSYNC_WAL`: returns after an fdatasync of the active segment covering the record
//!   (HBase's `hsync`), with group commit: whoever finds no flush running leads one, and every
//!   append copied before it starts is covered by it.
//!
//! The mapping is safe to write because nothing shrinks a segment while it is mapped: the WAL
//! holds an exclusive `flock` on its directory while open (a second [`Wal::open`] of the same
//! directory fails), and the WAL itself truncates a segment only when sealing it, after which
//! it no longer writes to it. (A process outside cairn truncating a live segment would crash
//! the writer with `SIGBUS`, as it would any database that maps its files.)
//!
//! ## Segments and sequence ids
//! Segments are named `wal.<id as 20 digits>` and are rolled when the next record would take
//! them past [`WalOptions::roll_size`] (HBase rolls at `hbase.regionserver.logroll.multiplier`
//! × block size) or on [`Wal::roll`]. The next segment is prepared ahead of time by the
//! background thread under a temporary name (`wal.<id>.tmp`: created, header written,
//! preallocated, synced, mapped, prefaulted), so a roll only seals the old segment and renames
//! the new one into place; a temporary segment left by a crash is deleted at open. The old
//! segment is sealed before the next one is used, so only the newest segment can have a torn
//! tail after a machine crash. Each segment remembers the highest sequence id of every region
//! in it. When a region reports a flush with [`Wal::mark_flushed`], closed segments in which
//! every region has flushed past its highest sequence id are deleted (HBase moves them to
//! `oldWALs`; cairn has no replication to feed, so it deletes). A region that never flushes
//! keeps its segments; a region that is closed for good can call
//! `mark_flushed(region, u64::MAX)`.
//!
//! Replay returns edits in append order, which for concurrent appenders of one region need
//! not be sequence id order: the region store orders cells by sequence id, as HBase's memstore
//! does.

//!
//! ## Failures and recovery
//! A failure that leaves the WAL's state known does not stop it: when the next segment cannot
//! be created or preallocated (a full disk), the append that needed it fails and nothing is
//! written; the next append tries again. A failure after which the WAL cannot tell what is on
//! stable storage (an fdatasync, a seal, a directory sync, or on the stream backend any write)
//! marks the WAL failed: every append is refused with [`WalError::Broken`] until
//! [`Wal::recover`] starts a new segment, has the caller make everything in the untrusted
//! segments durable elsewhere (the region server flushes its memstores), and only then takes
//! edits again. Nothing in an untrusted segment is relied on: its FSYNC_WAL appenders were
//! told of the failure, and what else it holds is flushed before recovery completes.
//!
//! Segments are preallocated to no more than an eighth of the free space in the WAL directory
//! (never below [`MIN_SEGMENT`]), so a WAL opens on a nearly full disk and rolls more often.

#![warn(missing_docs)]

/// The smallest preallocated segment: on a disk with less than eight times this free, segments
/// are still this large (or creating one fails with the filesystem's ENOSPC).
pub const MIN_SEGMENT: u64 = 1 << 20;

mod backend;
mod error;
mod ledger;
mod mapped;
pub mod segment;
mod stats;
mod stream;
mod wal;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

pub use backend::Wal;
pub use cairn_cell::KeyValue;
pub use error::WalError;
pub use ledger::SegmentInfo;
pub use stats::WalStats;

/// How durable an append must be before it returns (HBase's `Durability`, without
/// `USE_DEFAULT`, which the region store resolves to the table's durability first).
/// Ordered weakest first, so a batch syncs as its strongest member asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Durability {
    /// `SKIP_WAL`: not written to the WAL at all.
    SkipWal,
    /// `ASYNC_WAL`: in cairn, as strong as `SYNC_WAL` (the copy into the mapped segment is as
    /// cheap as queueing).
    AsyncWal,
    /// `SYNC_WAL`: in the page cache, through the shared mapping of the segment (survives a
    /// process crash) before returning.
    #[default]
    SyncWal,
    /// `FSYNC_WAL`: on stable storage (fdatasync) before returning.
    FsyncWal,
}

impl Durability {
    /// Every level, weakest first.
    pub const ALL: [Durability; 4] = [
        Durability::SkipWal,
        Durability::AsyncWal,
        Durability::SyncWal,
        Durability::FsyncWal,
    ];

    /// HBase's name: `SKIP_WAL`, `ASYNC_WAL`, `SYNC_WAL`, `FSYNC_WAL`.
    pub fn name(self) -> &'static str {
        match self {
            Durability::SkipWal => "SKIP_WAL",
            Durability::AsyncWal => "ASYNC_WAL",
            Durability::SyncWal => "SYNC_WAL",
            Durability::FsyncWal => "FSYNC_WAL",
        }
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of HBase's durability levels.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown durability {0:?}: expected SKIP_WAL, ASYNC_WAL, SYNC_WAL or FSYNC_WAL (USE_DEFAULT must be resolved to the table's durability first)")]
pub struct UnknownDurability(pub String);

impl FromStr for Durability {
    type Err = UnknownDurability;

    /// Parses HBase's names, ignoring case and surrounding whitespace.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        Durability::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| UnknownDurability(s.to_string()))
    }
}

/// One WAL entry: HBase's `WALKey` (encoded region name, sequence id, write time) with its
/// `WALEdit` (the cells of one mutation or batch, applied atomically).
#[derive(Clone, Debug, PartialEq)]
pub struct WalEdit {
    /// The encoded region name.
    pub region: Vec<u8>,
    /// The region's sequence id (MVCC write number) for every cell of the edit.
    pub sequence_id: u64,
    /// When the edit was written, milliseconds since the epoch.
    pub write_time_ms: i64,
    /// The cells; each reads back with the sequence id it was appended with.
    pub cells: Vec<KeyValue>,
}

/// How the WAL rolls and syncs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalOptions {
    /// Roll to a new segment once the active one passes this many bytes (default 128 MiB).
    pub roll_size: u64,
    /// HBase's `hbase.regionserver.optionallogflushinterval` (default 1 s). Unused since
    /// `ASYNC_WAL` appends are copied into the mapped segment at once, like `SYNC_WAL` ones;
    /// kept so that configurations stay valid.
    pub async_sync_interval: Duration,
    /// Fully flushed segment files kept for reuse as new segments instead of deleted (default
    /// 2; 0 deletes every one), RocksDB's `recycle_log_file_num`. A new file's pages must be
    /// allocated and zeroed by the kernel as the writer first touches them; a recycled file's
    /// pages are usually still in the page cache. On the 2-CPU benchmark VM that first touch
    /// was the WAL's largest cost. Local (mapped) WALs only.
    pub recycled_segments: usize,
}

impl Default for WalOptions {
    fn default() -> Self {
        WalOptions {
            roll_size: 128 << 20,
            async_sync_interval: Duration::from_secs(1),
            recycled_segments: 2,
        }
    }
}

/// What [`Wal::open`] replayed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayReport {
    /// Segments read.
    pub segments: usize,
    /// Edits handed to the visitor.
    pub edits: u64,
    /// Cells in those edits.
    pub cells: u64,
    /// Highest sequence id replayed, per region.
    pub max_sequence_id: std::collections::BTreeMap<Vec<u8>, u64>,
    /// Bytes that could not be replayed, one entry per segment that did not end cleanly.
    pub dropped: Vec<Dropped>,
}

/// Bytes at the end of a segment that replay could not use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped {
    /// The segment file.
    pub segment: PathBuf,
    /// Offset of the first byte not replayed (the start of the bad record).
    pub offset: u64,
    /// Bytes from there to the end of the file.
    pub bytes: u64,
    /// Why the record at `offset` could not be read.
    pub reason: DropReason,
}

impl fmt::Display for Dropped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: dropped {} bytes from offset {}: {}",
            self.segment.display(),
            self.bytes,
            self.offset,
            self.reason
        )
    }
}

/// Why replay stopped inside a segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// Fewer bytes left than a record frame: a torn write.
    TruncatedFrame {
        /// Bytes left.
        available: u64,
    },
    /// The record's length runs past the end of the file: a torn write (or a damaged length).
    TruncatedRecord {
        /// The length read.
        length: u32,
        /// Bytes left after the frame.
        available: u64,
    },
    /// Nothing but zeros from here to the end. No longer reported: such a tail is the normal
    /// end of a preallocated segment, and replay ends the segment cleanly there.
    ZeroFilled,
    /// A length no record can have: damage.
    BadLength {
        /// The length read.
        length: u32,
    },
    /// The record's checksum does not hold: damage or a torn write.
    ChecksumMismatch {
        /// Checksum in the frame.
        stored: u32,
        /// Checksum of the bytes read.
        computed: u32,
    },
    /// The checksum holds but the payload does not parse (a writer bug, not disk damage).
    BadPayload {
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DropReason::TruncatedFrame { available } => {
                write!(f, "torn record frame ({available} of 8 bytes)")
            }
            DropReason::TruncatedRecord { length, available } => write!(
                f,
                "record of {length} bytes runs past the end of the file ({available} bytes left)"
            ),
            DropReason::ZeroFilled => f.write_str("zero-filled tail"),
            DropReason::BadLength { length } => write!(f, "invalid record length {length}"),
            DropReason::ChecksumMismatch { stored, computed } => write!(
                f,
                "CRC32C mismatch: stored {stored:#010x}, computed {computed:#010x}"
            ),
            DropReason::BadPayload { reason } => {
                write!(f, "checksum holds but the edit does not parse: {reason}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durability_names_match_hbase() {
        for d in Durability::ALL {
            assert_eq!(d.name().parse::<Durability>(), Ok(d));
            assert_eq!(d.to_string().to_lowercase().parse::<Durability>(), Ok(d));
        }
        assert_eq!(" fsync_wal ".parse(), Ok(Durability::FsyncWal));
        assert_eq!(Durability::default(), Durability::SyncWal);
        assert!("USE_DEFAULT".parse::<Durability>().is_err());
        assert!("SYNC".parse::<Durability>().is_err());
    }

    #[test]
    fn wal_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Wal>();
        check::<std::sync::Arc<Wal>>();
    }
}
