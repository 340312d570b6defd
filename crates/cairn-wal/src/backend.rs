//! [`Wal`]: one handle over the two ways a WAL is written — memory-mapped files on local disk
//! ([`crate::wal`]) or streamed files on a distributed filesystem ([`crate::stream`]).

use std::path::Path;
use std::sync::Arc;

use cairn_fs::FileSystem;

use crate::stream::StreamWal;
use crate::wal::MappedWal;
use crate::{
    Durability, ReplayReport, SegmentInfo, WalEdit, WalError, WalLocation, WalOptions, WalStats,
};

/// A write-ahead log over one directory. `Send + Sync`: share it with `Arc`.
pub struct Wal(Backend);

enum Backend {
    Mapped(MappedWal),
    Stream(StreamWal),
}

macro_rules! dispatch {
    ($self:expr, $w:ident => $e:expr) => {
        match &$self.0 {
            Backend::Mapped($w) => $e,
            Backend::Stream($w) => $e,
        }
    };
}

impl Wal {
    /// Opens (creating) the WAL of `loc.server` under the local root `loc.root` and replays,
    /// before returning, this server's earlier files and every dead server's WAL directory
    /// under the root into `visit` (see the crate docs): preallocated, memory-mapped files.
    /// The server's directory is locked (`flock`) while the WAL is open: a second open of it
    /// waits up to 3 s for the first WAL to be closed or dropped, then fails.
    ///
    /// A file that ends in a torn or damaged entry is replayed up to it and the rest is
    /// reported in [`ReplayReport::dropped`]; replay goes on with the next file. This
    /// server's files a crash left open are sealed. A file that is not a WAL
    /// ([`WalError::BadHeader`]) or one cairn cannot read ([`WalError::Unsupported`]) is an
    /// error naming it. An error from `visit` stops the open and is returned.
    pub fn open(
        loc: &WalLocation,
        options: WalOptions,
        visit: impl FnMut(WalEdit) -> Result<(), WalError>,
    ) -> Result<(Wal, ReplayReport), WalError> {
        let (w, report) = MappedWal::open(loc, options, visit)?;
        Ok((Wal(Backend::Mapped(w)), report))
    }

    /// [`Wal::open`] on any filesystem: local disk gets the memory-mapped WAL; anything else
    /// (HDFS) gets files written as streams and synced with `hflush` or `hsync`, each file's lease
    /// recovered before it is replayed.
    pub fn open_on(
        fs: Arc<dyn FileSystem>,
        loc: &WalLocation,
        options: WalOptions,
        visit: impl FnMut(WalEdit) -> Result<(), WalError>,
    ) -> Result<(Wal, ReplayReport), WalError> {
        if fs.uri() == "file://" {
            return Wal::open(loc, options, visit);
        }
        let (w, report) = StreamWal::open(fs, loc, options, visit)?;
        Ok((Wal(Backend::Stream(w)), report))
    }

    /// Appends one edit at the given durability (see the crate docs for what each level
    /// waits for).
    pub fn append(&self, edit: &WalEdit, durability: Durability) -> Result<(), WalError> {
        dispatch!(self, w => w.append(edit, durability))
    }

    /// Makes everything appended so far survive a process crash and, with `fsync`, a machine
    /// crash (HBase's `sync(forceSync)`: hflush or hsync). Fails if the WAL is broken.
    pub fn sync(&self, fsync: bool) -> Result<(), WalError> {
        dispatch!(self, w => w.sync(fsync))
    }

    /// Closes the active file for good and starts a new one (HBase's log roll); also done
    /// automatically once a file passes [`WalOptions::roll_size`] or
    /// [`WalOptions::roll_period`].
    pub fn roll(&self) -> Result<(), WalError> {
        dispatch!(self, w => w.roll())
    }

    /// Records that `region` has flushed everything up to `sequence_id` to store files, and
    /// retires every closed file in which each region has flushed past its highest sequence
    /// id: kept for reuse, or archived to `oldWALs/`. Returns how many files were retired. The
    /// active file is never retired ([`Wal::roll`] first to release it).
    pub fn mark_flushed(&self, region: &[u8], sequence_id: u64) -> Result<usize, WalError> {
        dispatch!(self, w => w.mark_flushed(region, sequence_id))
    }

    /// Why the WAL refuses edits, if it does: a failure after which it could not tell what
    /// is on stable storage (see the crate docs), until [`Wal::recover`] succeeds.
    pub fn failure(&self) -> Option<String> {
        dispatch!(self, w => w.failure())
    }

    /// Brings a failed WAL back: starts a new segment, calls `make_durable` (which must put
    /// every edit the WAL took so far on stable storage some other way: the region server
    /// flushes every memstore), then takes edits again. `Ok(false)` if the WAL had not
    /// failed. On an error (the new segment could not be made, or `make_durable` failed) the
    /// WAL stays failed and recovery can be tried again.
    pub fn recover(
        &self,
        make_durable: &mut dyn FnMut() -> Result<(), String>,
    ) -> Result<bool, WalError> {
        dispatch!(self, w => w.recover(make_durable))
    }

    /// Every file the WAL keeps (this server's and the dead servers' replay adopted), oldest
    /// first, the active one last.
    pub fn segments(&self) -> Vec<SegmentInfo> {
        dispatch!(self, w => w.segments())
    }

    /// The directory this WAL writes to (`<root>/WALs/<server>`).
    pub fn dir(&self) -> &Path {
        dispatch!(self, w => w.dir())
    }

    /// The options the WAL was opened with.
    pub fn options(&self) -> &WalOptions {
        dispatch!(self, w => w.options())
    }

    /// Counters since open.
    pub fn stats(&self) -> WalStats {
        dispatch!(self, w => w.stats())
    }

    /// Commits and closes the active file (its trailer written; local: cut after it and
    /// fdatasync'ed). Dropping a `Wal` does the same but cannot report a failure.
    pub fn close(self) -> Result<(), WalError> {
        match self.0 {
            Backend::Mapped(w) => w.close(),
            Backend::Stream(w) => w.close(),
        }
    }
}
