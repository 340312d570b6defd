//! # cairn-wal
//!
//! The region server's write-ahead log (HBase's `FSHLog`/`AbstractFSWAL`), in HBase 2.6's
//! file format and layout: every mutation is appended here before it is applied to the
//! memstore, so a crash loses nothing that was acknowledged. One [`Wal`] is shared (via `Arc`)
//! by all regions of a server.
//!
//! **Owns:** the WAL files of one server and their format ([`file`], [`entry`]); where they
//! live ([`names`]: `<wal root>/WALs/<server name>/`, archived to `<wal root>/oldWALs/`);
//! appends at HBase's four [`Durability`] levels: a copy into the active file, which is
//! preallocated and memory-mapped (`MAP_SHARED`), with group commit for `FSYNC_WAL` (one
//! fdatasync covers every appender that copied before it); the background thread that
//! prepares the next file, prefaults the active one and rolls it every
//! [`WalOptions::roll_period`]; rolling (by size, period or request); replay at [`Wal::open`]
//! of this server's earlier files and of every dead server's WAL directory under the same
//! root (HBase's own included), with a precise report of what could not be read
//! ([`ReplayReport`]); tracking the highest sequence id per region in each file and retiring
//! the files no region needs any more once regions flush ([`Wal::mark_flushed`], HBase's
//! archiving via `SequenceIdAccounting`); metrics ([`WalStats`]).
//!
//! On a filesystem other than local disk (HDFS, through cairn-fs), [`Wal::open_on`] writes the
//! same files as streams instead: entries are buffered and committed in groups, with `hflush`
//! for `SYNC_WAL` and `hsync` for `FSYNC_WAL` (as HBase's FSHLog), every
//! `async_sync_interval` for `ASYNC_WAL`; a file's lease
//! is recovered before it is replayed (see `stream.rs`).
//!
//! **Does not own:** assigning sequence ids (the region's MVCC does, as in HBase), deciding
//! which replayed edits to apply (the region store skips edits at or below a store's flushed
//! sequence id, as `HRegion.replayRecoveredEditsIfAny` does), replication, WAL compression
//! and encryption (files written with them are refused, naming the file).
//!
//! ## Format
//! HBase's, as `ProtobufLogWriter` writes it with `WALCellCodec` and no compression: `PWAL`,
//! a delimited `WALHeader`, per entry a delimited `WALKey` and its cells in KeyValue form, and
//! `WALTrailer` + size + `LAWP` when a file is closed. HBase's `WALPrettyPrinter`,
//! `WALFactory` readers and `WALSplitter` read cairn's files, and cairn reads HBase's. cairn
//! adds what HBase's format lacks and its reader ignores: a CRC32C per entry in field 1000 of
//! the `WALKey` (HDFS checksums blocks; a local file has nothing), and its file number in
//! field 1000 of the `WALHeader`. See [`file`] and [`entry`] for the layout.
//!
//! A file is created at its full size: header, then `posix_fallocate`d space up to
//! [`WalOptions::roll_size`] (rounded up to a page, at most 1 GiB), which reads as zeros, in
//! cairn's own directory `<wal root>/.cairn-wal/<server name>/`, and renamed into the WAL
//! directory when it becomes the active file. Entries are written one after the other into
//! a shared mapping of the file, each followed by an end marker that HBase's reader and
//! cairn's both take as the end of the entries (see [`file`]), so the file of the active WAL
//! (or of one whose writer crashed) is readable as it is. A file is sealed when it is rolled
//! away from or the WAL is closed: the trailer is written over the marker, the file cut after
//! it and fdatasync'ed.
//!
//! Up to [`WalOptions::recycled_segments`] files of fully flushed WALs are kept (in cairn's
//! directory, as `<name>.free`) and reused for new files instead of created (RocksDB's
//! `recycle_log_file_num`): writing a new file makes the kernel allocate and zero every page
//! as it is first touched, while a kept file's pages are usually still in the page cache. A
//! reused file keeps its old bytes past the new entries, so its header says so and its
//! entries' checksums are masked with its number; the end marker ends the entries whatever
//! follows. Flushed files not kept are archived to `oldWALs/`, as HBase does; cairn deletes
//! its own archived files once they are older than [`WalOptions::archive_ttl`] (HBase's
//! `hbase.master.logcleaner.ttl`) and leaves the rest of `oldWALs/` alone.
//!
//! ## Durability
//! - `SKIP_WAL`: nothing is written; the edit is lost in a crash unless flushed.
//! - `SYNC_WAL` (the default, as in HBase) and `ASYNC_WAL`: the entry is copied into the
//!   shared mapping of the active file before `append` returns, without a system call. A
//!   store into a `MAP_SHARED` file mapping is in the page cache (the file's own pages) as soon
//!   as it is made, so it survives a crash of the process, not of the machine: the local
//!   equivalent of HBase's `hflush`. Appends are copied in order under one lock, and each
//!   entry's first eight bytes (which replace the previous end marker) are stored last, in
//!   one instruction: a killed process leaves whole entries and the marker after the last.
//!   `ASYNC_WAL` gets the same guarantee, since the copy is as cheap as queueing would be;
//!   the kernel writes the pages back on its own schedule.
//! - `FSYNC_WAL`: returns after an fdatasync of the active file covering the entry
//!   (HBase's `hsync`), with group commit: whoever finds no flush running leads one, and every
//!   append copied before it starts is covered by it.
//!
//! The mapping is safe to write because nothing shrinks a file while it is mapped: the WAL
//! holds an exclusive `flock` on its directory while open (a second [`Wal::open`] of the same
//! server fails, and replay leaves a directory another process has locked alone), and the
//! WAL itself truncates a file only when sealing it, after which it no longer writes to it.
//! (A process outside cairn truncating a live file would crash the writer with `SIGBUS`, as
//! it would any database that maps its files.)
//!
//! ## Files and sequence ids
//! Files are named `<URL-encoded server name>.<number>`, the number being the time the file
//! was created in milliseconds (one more than the previous file's if the clock has not moved
//! on), and are rolled when the next entry would take them past [`WalOptions::roll_size`]
//! (HBase rolls at `hbase.regionserver.logroll.multiplier` × block size), every
//! [`WalOptions::roll_period`] if they hold anything (`hbase.regionserver.logroll.period`),
//! or on [`Wal::roll`]. The next file is prepared ahead of time by the background thread, so
//! a roll only seals the old file and renames the new one into place; a prepared file left by
//! a crash is deleted at open. The old file is sealed before the next one is used, so only the
//! newest file can have a torn tail after a machine crash. Each file's ledger entry remembers
//! the highest sequence id of every region in it. When a region reports a flush with
//! [`Wal::mark_flushed`], closed files in which every region has flushed past its highest
//! sequence id are retired. A region that never flushes keeps its files; a region that is
//! closed for good can call `mark_flushed(region, u64::MAX)`.
//!
//! ## Replay
//! [`Wal::open`] replays this server's earlier files, then the files of every other server
//! directory under `<wal root>/WALs/` that no live process holds (a local directory is live
//! while a cairn WAL holds its `flock`; HBase's directories and cairn's on HDFS are taken as
//! dead): a dead cairn, or an HBase whose root cairn now serves. Their files join the ledger
//! and are archived like this server's once every region in them has flushed; a file with
//! edits of a region that is not opened (a system table's, a lost region's) stays where it is.
//! Replay returns edits in file order, which for concurrent appenders of one region need
//! not be sequence id order: the region store orders cells by sequence id, as HBase's memstore
//! does.
//!
//! ## Failures and recovery
//! A failure that leaves the WAL's state known does not stop it: when the next file cannot
//! be created or preallocated (a full disk), the append that needed it fails and nothing is
//! written; the next append tries again. A failure after which the WAL cannot tell what is on
//! stable storage (an fdatasync, a seal, a directory sync, or on the stream backend any write)
//! marks the WAL failed: every append is refused with [`WalError::Broken`] until
//! [`Wal::recover`] starts a new file, has the caller make everything in the untrusted
//! files durable elsewhere (the region server flushes its memstores), and only then takes
//! edits again. Nothing in an untrusted file is relied on: its FSYNC_WAL appenders were
//! told of the failure, and what else it holds is flushed before recovery completes.
//!
//! Files are preallocated to no more than an eighth of the free space in the WAL directory
//! (never below [`MIN_SEGMENT`]), so a WAL opens on a nearly full disk and rolls more often.

#![warn(missing_docs)]

/// The smallest preallocated segment: on a disk with less than eight times this free, segments
/// are still this large (or creating one fails with the filesystem's ENOSPC).
pub const MIN_SEGMENT: u64 = 1 << 20;

mod archive;
mod backend;
pub mod entry;
mod error;
pub mod file;
mod ledger;
mod mapped;
pub mod names;
mod replay;
pub mod split;
mod stats;
mod stream;
mod wal;
mod wire;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

pub use backend::Wal;
pub use cairn_cell::KeyValue;
pub use error::WalError;
pub use ledger::SegmentInfo;
pub use names::{BadServerName, ServerName};
pub use stats::{WalStats, FSYNC_BUCKETS, FSYNC_BUCKET_BOUNDS};

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

/// One WAL entry: HBase's `WALKey` (encoded region name, table, sequence id, write time,
/// cluster ids, nonces) with its `WALEdit` (the cells of one mutation or batch, applied
/// atomically).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WalEdit {
    /// The encoded region name.
    pub region: Vec<u8>,
    /// The table name as HBase writes it (`TableName.getName()`: `ns:qualifier`, or the
    /// qualifier alone in the default namespace).
    pub table: Vec<u8>,
    /// The region's sequence id (MVCC write number) for every cell of the edit.
    pub sequence_id: u64,
    /// When the edit was written, milliseconds since the epoch.
    pub write_time_ms: i64,
    /// The clusters that have consumed the edit (replication); empty for a client's edit.
    pub cluster_ids: Vec<ClusterId>,
    /// The client's nonce group (0: none), as HBase writes it for increments and appends.
    pub nonce_group: u64,
    /// The client's nonce (0: none).
    pub nonce: u64,
    /// The sequence id the edit had in the WAL it was replayed from (0: none).
    pub orig_sequence_id: u64,
    /// The cells; each reads back with the edit's sequence id.
    pub cells: Vec<KeyValue>,
}

/// A cluster's UUID, as HBase's `UUID` message holds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClusterId {
    /// The UUID's most significant 64 bits.
    pub most_sig_bits: u64,
    /// The UUID's least significant 64 bits.
    pub least_sig_bits: u64,
}

/// Where a server's WAL lives: `<root>/WALs/<server>/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalLocation {
    /// The WAL root: HBase's `hbase.wal.dir`, or `hbase.rootdir` when that is not set.
    pub root: PathBuf,
    /// The server writing the WAL.
    pub server: ServerName,
}

impl WalLocation {
    /// The WAL of `server` under `root`.
    pub fn new(root: impl Into<PathBuf>, server: ServerName) -> WalLocation {
        WalLocation {
            root: root.into(),
            server,
        }
    }

    /// `<root>/WALs/<server>`: where the server's WAL files are.
    pub fn dir(&self) -> PathBuf {
        names::wal_dir(&self.root, &self.server)
    }

    /// `<root>/oldWALs`: where flushed WAL files are archived.
    pub fn archive_dir(&self) -> PathBuf {
        names::archive_dir(&self.root)
    }

    /// `<root>/.cairn-wal/<server>`: the file being prepared and the files kept for reuse.
    pub fn spare_dir(&self) -> PathBuf {
        names::spare_dir(&self.root, &self.server)
    }
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
    /// `hbase.regionserver.logroll.period` (default 1 h): a file that holds anything is
    /// rolled once it is this old, so flushed edits leave the WAL even without new writes.
    pub roll_period: Duration,
    /// `hbase.master.logcleaner.ttl` (default 10 min): cairn's own archived files in
    /// `oldWALs/` are deleted once older than this.
    pub archive_ttl: Duration,
    /// Whether opening replays (and then owns) the WAL directories of dead servers under the
    /// same root (default true: a standalone server is the only one that would). A region
    /// server of an HBase cluster leaves them to the master, which has them split
    /// (`SplitWALProcedure`) into the regions' `recovered.edits`.
    pub adopt_dead_servers: bool,
}

impl Default for WalOptions {
    fn default() -> Self {
        WalOptions {
            roll_size: 128 << 20,
            async_sync_interval: Duration::from_secs(1),
            recycled_segments: 2,
            roll_period: Duration::from_secs(3600),
            archive_ttl: Duration::from_secs(600),
            adopt_dead_servers: true,
        }
    }
}

/// What [`Wal::open`] replayed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayReport {
    /// Files read (this server's and dead servers').
    pub segments: usize,
    /// Edits handed to the visitor.
    pub edits: u64,
    /// Cells in those edits.
    pub cells: u64,
    /// Highest sequence id replayed, per region.
    pub max_sequence_id: std::collections::BTreeMap<Vec<u8>, u64>,
    /// Every file read, in the order read.
    pub files: Vec<ReplayedFile>,
    /// Bytes that could not be replayed, one entry per file that did not end cleanly.
    pub dropped: Vec<Dropped>,
    /// Server directories under `<root>/WALs/` left alone because another process holds
    /// them (a live cairn).
    pub live_servers: Vec<String>,
}

/// One file [`Wal::open`] read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayedFile {
    /// The file.
    pub path: PathBuf,
    /// The server whose WAL directory held it.
    pub server: String,
    /// This server's own earlier file (otherwise a dead server's).
    pub own: bool,
    /// Entries read back whole.
    pub entries: u64,
    /// The file ends in HBase's trailer (its writer closed it).
    pub closed: bool,
}

impl fmt::Display for ReplayedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} of {}): {} entries, {}",
            self.path.display(),
            if self.own {
                "this server's WAL"
            } else {
                "the WAL"
            },
            self.server,
            self.entries,
            if self.closed { "closed" } else { "not closed" }
        )
    }
}

/// Bytes at the end of a file that replay could not use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped {
    /// The file.
    pub segment: PathBuf,
    /// Offset of the first byte not replayed (the start of the bad entry).
    pub offset: u64,
    /// Bytes from there to the end of the file.
    pub bytes: u64,
    /// Why the entry at `offset` could not be read.
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

/// Why replay stopped inside a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The file ends inside its header, or holds nothing but zeros: its writer died creating
    /// it (HBase skips such a file too). Nothing was in it.
    TornHeader,
    /// The file ends inside an entry: a torn write.
    Truncated {
        /// The part cut off ("WALKey length", "WALKey", "cell length", "cell").
        what: &'static str,
        /// Bytes the entry needs from its start to hold that part.
        needed: u64,
        /// Bytes left from the entry's start.
        available: u64,
    },
    /// A length no entry can have: damage.
    BadLength {
        /// Of what ("WALKey", "cell").
        what: &'static str,
        /// The length read.
        length: u64,
    },
    /// The entry's CRC32C does not hold: damage or a torn write.
    ChecksumMismatch {
        /// Checksum in the entry (as stored, masked in a recycled file).
        stored: u32,
        /// Checksum of the bytes read (masked likewise).
        computed: u32,
    },
    /// An entry without cairn's checksum in a file cairn wrote, where every entry has one.
    MissingChecksum,
    /// The bytes do not parse as a `WALKey` and its cells.
    BadEntry {
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DropReason::TornHeader => {
                f.write_str("the file ends inside its header (or is all zeros): never written")
            }
            DropReason::Truncated {
                what,
                needed,
                available,
            } => write!(
                f,
                "torn entry: its {what} needs {needed} bytes, the file has {available} left"
            ),
            DropReason::BadLength { what, length } => {
                write!(f, "invalid {what} length {length}")
            }
            DropReason::ChecksumMismatch { stored, computed } => write!(
                f,
                "CRC32C mismatch: stored {stored:#010x}, computed {computed:#010x}"
            ),
            DropReason::MissingChecksum => {
                f.write_str("entry without cairn's checksum in a file cairn wrote")
            }
            DropReason::BadEntry { reason } => write!(f, "the entry does not parse: {reason}"),
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
