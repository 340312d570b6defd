//! # cairn-fs
//!
//! Where cairn's files live. One [`FileSystem`] trait, in the spirit of Hadoop's
//! `FileSystem`, with two implementations: [`LocalFileSystem`] (the default) and, with the
//! `hdfs` feature, `HdfsFileSystem` (writes and metadata through the native Rust client
//! `hdfs-native`, positional reads through cairn's own NameNode and DataNode client). Store files,
//! region metadata and table directories go through it, so a region server runs the same on
//! `file:///…` and `hdfs://host:port/…` roots ([`resolve`]).
//!
//! **Owns:** path URIs, positional reads ([`RawSource`]), streaming writes with `hflush` /
//! `hsync` ([`FsOutput`]), direct-I/O writes of store files on local disk, rename, delete,
//! list, mkdirs, lease recovery.
//!
//! **Does not own:** any file format or checksum of cairn's own (cairn-hfile, cairn-wal
//! verify what they read), caching (cairn-blockcache), or which files exist (cairn-region).

#![warn(missing_docs)]

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

mod direct;
pub mod fault;
#[cfg(feature = "hdfs")]
mod hdfs;
#[cfg(feature = "hdfs-wire")]
pub mod hdfs_protocol;
mod local;
#[cfg(feature = "hdfs")]
pub mod minidfs;

pub use fault::{CrashReport, Fault, FaultFileSystem, FaultOp, FaultRule};
#[cfg(feature = "hdfs")]
pub use hdfs::{stats as hdfs_stats, BadReplica, HdfsFileSystem, HdfsStats};
pub use local::{free_space, LocalFile, LocalFileSystem};

/// Positional reads of one file's bytes.
pub trait RawSource: Send + Sync {
    /// File length.
    fn len(&self) -> u64;

    /// True for an empty file.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads exactly `len` bytes at `offset`.
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes>;

    /// The same file read with the filesystem's own checksums verified, trying each copy it
    /// has until one passes: what a reader whose own checksum failed reads again (HBase's
    /// fallback to HDFS checksums). `None` when this source already verifies them, or the
    /// filesystem has none (local disk).
    fn fs_checksummed(self: Arc<Self>) -> Option<Arc<dyn RawSource>> {
        None
    }
}

/// Bytes in memory as a file (tests, fuzzing, files already read).
impl RawSource for Bytes {
    fn len(&self) -> u64 {
        Bytes::len(self) as u64
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        let end = start.checked_add(len).filter(|&e| e <= Bytes::len(self));
        end.map(|end| self.slice(start..end))
            .ok_or_else(|| io::ErrorKind::UnexpectedEof.into())
    }
}

/// A file being written. Bytes are visible to new readers after [`hflush`](Self::hflush) and
/// durable after [`hsync`](Self::hsync); [`close`](Self::close) completes the file.
pub trait FsOutput: Write + Send {
    /// Makes everything written so far visible to new readers and safe from a crash of this
    /// process (HDFS: in every DataNode of the pipeline; local: in the page cache).
    fn hflush(&mut self) -> io::Result<()>;

    /// Makes everything written so far durable (HDFS: on the DataNodes' disks; local:
    /// `fdatasync`).
    fn hsync(&mut self) -> io::Result<()>;

    /// Completes the file. Bytes not yet synced are flushed, not necessarily synced.
    fn close(self: Box<Self>) -> io::Result<()>;
}

/// One entry of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStatus {
    /// The entry's path on its filesystem, without the scheme.
    pub path: PathBuf,
    /// A file's length in bytes (HDFS: as the NameNode knows it, which for a file still open
    /// for writing may lag what was hflushed). Not meaningful for a directory.
    pub len: u64,
    /// True for a directory (HBase's region and family directories), false for a file.
    pub is_dir: bool,
    /// Last modification, milliseconds since the Unix epoch (0 if unknown).
    pub modified_ms: i64,
}

/// A filesystem: local disk or HDFS. Paths are absolute, `/`-separated, without the scheme.
pub trait FileSystem: Send + Sync + fmt::Debug {
    /// The URI prefix of this filesystem (`file://`, `hdfs://host:port`).
    fn uri(&self) -> String;

    /// Opens `path` for positional reads, with the filesystem's own checksums verified.
    fn open(&self, path: &Path) -> io::Result<Arc<dyn RawSource>>;

    /// Opens `path` for a reader that verifies checksums of its own (store files' blocks):
    /// the filesystem skips its own where it can (HDFS: DataNodes send no CRCs, as HBase reads
    /// with `hbase.regionserver.checksum.verify`), and the source's
    /// [`fs_checksummed`](RawSource::fs_checksummed) view reads a block again with them when
    /// the reader's check fails.
    fn open_no_checksum(&self, path: &Path) -> io::Result<Arc<dyn RawSource>> {
        self.open(path)
    }

    /// Creates `path` (and its parent directories), replacing a file already there.
    fn create(&self, path: &Path) -> io::Result<Box<dyn FsOutput>>;

    /// Creates `path` like [`create`](Self::create), for a large file written once, front to
    /// back, and read back through cairn's block cache rather than the operating system's
    /// page cache: the store files flushes and compactions write (RocksDB's
    /// `use_direct_io_for_flush_and_compaction`). Local disk writes it with direct I/O where
    /// the filesystem allows; other filesystems create it as usual.
    fn create_direct(&self, path: &Path) -> io::Result<Box<dyn FsOutput>> {
        self.create(path)
    }

    /// Renames `from` to `to`, replacing a file at `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;

    /// Creates `path` like [`create`](Self::create), but fails with `AlreadyExists` if
    /// anything is there: for files whose name another party may have chosen first (bulk load
    /// staging), where replacing would destroy someone's data.
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FsOutput>> {
        if self.exists(path)? {
            return Err(already_exists(path));
        }
        self.create(path)
    }

    /// Renames `from` to `to`, failing with `AlreadyExists` rather than replacing anything at
    /// `to`.
    fn rename_no_replace(&self, from: &Path, to: &Path) -> io::Result<()> {
        if self.exists(to)? {
            return Err(already_exists(to));
        }
        self.rename(from, to)
    }

    /// Makes the bytes of a closed file at `path` durable (local: `fsync`), for a file written
    /// by someone else and renamed in (a bulk-loaded HFile). HDFS: nothing to do, a closed
    /// file is complete on its DataNodes (as HBase relies on for bulk loads).
    fn sync_file(&self, path: &Path) -> io::Result<()> {
        let _ = path;
        Ok(())
    }

    /// `path` with every symbolic link resolved (local: `realpath`), so a check that a path
    /// lies under a directory cannot be walked around through a link. Filesystems without
    /// links give `path` back; `NotFound` if nothing is there.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.status(path)?;
        Ok(path.to_path_buf())
    }

    /// Deletes a file, or a directory with everything under it. `Ok(false)` when nothing was
    /// there.
    fn delete(&self, path: &Path) -> io::Result<bool>;

    /// The entries of directory `dir`, sorted by path; `NotFound` if it does not exist.
    fn list(&self, dir: &Path) -> io::Result<Vec<FileStatus>>;

    /// Creates `dir` and its parents.
    fn mkdirs(&self, dir: &Path) -> io::Result<()>;

    /// The status of `path`; `NotFound` if nothing is there.
    fn status(&self, path: &Path) -> io::Result<FileStatus>;

    /// Whether anything is at `path`.
    fn exists(&self, path: &Path) -> io::Result<bool> {
        match self.status(path) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Makes a rename or create in `dir` durable (local: fsync of the directory; HDFS: the
    /// NameNode's edit log already is).
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let _ = dir;
        Ok(())
    }

    /// Creates `dir` and its parents, as [`mkdirs`](Self::mkdirs), and makes their names
    /// durable: the parent of each directory it made is synced, and `dir`'s own parent in
    /// any case (a directory an earlier call made may have missed its sync). A local
    /// filesystem may forget, in a crash, a directory whose parent was never synced, and
    /// everything in it with it.
    fn mkdirs_durable(&self, dir: &Path) -> io::Result<()> {
        let mut made = Vec::new();
        let mut at = Some(dir);
        while let Some(d) = at {
            if d.as_os_str().is_empty() {
                break;
            }
            match self.status(d) {
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::NotFound => made.push(d),
                Err(e) => return Err(e),
            }
            at = d.parent();
        }
        if !made.is_empty() {
            self.mkdirs(dir)?;
        }
        // Outermost first: a name is synced only once its parent's is.
        for d in made.iter().rev() {
            if let Some(parent) = d.parent() {
                self.sync_dir(parent)?;
            }
        }
        if made.is_empty() {
            if let Some(parent) = dir.parent() {
                self.sync_dir(parent)?;
            }
        }
        Ok(())
    }

    /// Bytes an unprivileged writer may still add under `path` (local: `statvfs`'s available
    /// blocks), or `None` where the filesystem cannot say (HDFS quotas are not read). Used to
    /// size preallocations to the room there is and to say at start-up how much is missing.
    fn free_space(&self, path: &Path) -> io::Result<Option<u64>> {
        let _ = path;
        Ok(None)
    }

    /// Takes over a file another writer may still hold open, so its length is final before it
    /// is read (HDFS lease recovery; nothing to do locally). `Ok(true)` once the file is closed.
    fn recover_lease(&self, path: &Path) -> io::Result<bool> {
        let _ = path;
        Ok(true)
    }

    /// Reads a whole (small) file.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let source = self.open(path)?;
        let len = usize::try_from(source.len()).map_err(|_| io::ErrorKind::FileTooLarge)?;
        Ok(source.read_at(0, len)?.to_vec())
    }

    /// Writes a whole (small) file durably, through a temporary name and a rename, so readers
    /// see the old contents or the new, never part of them.
    fn write_atomic(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut out = self.create(&tmp)?;
        out.write_all(bytes)?;
        out.hsync()?;
        out.close()?;
        self.rename(&tmp, path)?;
        if let Some(parent) = path.parent() {
            self.sync_dir(parent)?;
        }
        Ok(())
    }
}

fn already_exists(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{} already exists", path.display()),
    )
}

/// Why a root URI was refused.
#[derive(Debug)]
pub struct UriError(String);

impl fmt::Display for UriError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UriError {}

/// The filesystem and path a root names: `file:///data/cairn`, a plain path (local), or
/// `hdfs://host:port/cairn` (with the `hdfs` feature).
pub fn resolve(root: &str) -> Result<(Arc<dyn FileSystem>, PathBuf), UriError> {
    if let Some(path) = root.strip_prefix("file://") {
        if !path.starts_with('/') {
            return Err(UriError(format!(
                "{root}: a file:// URI needs an absolute path (file:///dir)"
            )));
        }
        return Ok((Arc::new(LocalFileSystem), PathBuf::from(path)));
    }
    if let Some(rest) = root.strip_prefix("hdfs://") {
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() {
            return Err(UriError(format!("{root}: an hdfs:// URI needs host:port")));
        }
        return hdfs_resolve(root, authority, path);
    }
    if root.contains("://") {
        return Err(UriError(format!(
            "{root}: unsupported scheme (use file:///path, a plain path, or hdfs://host:port/path)"
        )));
    }
    let path = Path::new(root);
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| UriError(format!("{root}: cannot resolve a relative path: {e}")))?
            .join(path)
    };
    Ok((Arc::new(LocalFileSystem), path))
}

#[cfg(feature = "hdfs")]
fn hdfs_resolve(
    root: &str,
    authority: &str,
    path: &str,
) -> Result<(Arc<dyn FileSystem>, PathBuf), UriError> {
    let fs = HdfsFileSystem::connect(&format!("hdfs://{authority}"))
        .map_err(|e| UriError(format!("{root}: cannot connect to HDFS: {e}")))?;
    Ok((Arc::new(fs), PathBuf::from(path)))
}

#[cfg(not(feature = "hdfs"))]
fn hdfs_resolve(
    root: &str,
    _authority: &str,
    _path: &str,
) -> Result<(Arc<dyn FileSystem>, PathBuf), UriError> {
    Err(UriError(format!(
        "{root}: this build of cairn has no HDFS support (build with `--features hdfs`)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_local_roots() {
        let (fs, p) = resolve("file:///tmp/x").unwrap();
        assert_eq!(fs.uri(), "file://");
        assert_eq!(p, PathBuf::from("/tmp/x"));
        let (_, p) = resolve("/a/b").unwrap();
        assert_eq!(p, PathBuf::from("/a/b"));
        let (_, p) = resolve("rel").unwrap();
        assert!(p.is_absolute() && p.ends_with("rel"));
        assert!(resolve("file://relative").is_err());
        assert!(resolve("s3://bucket/x").is_err());
        assert!(resolve("hdfs:///x").is_err());
    }

    #[cfg(not(feature = "hdfs"))]
    #[test]
    fn hdfs_without_the_feature_is_a_clear_error() {
        let e = resolve("hdfs://nn:8020/cairn").unwrap_err().to_string();
        assert!(e.contains("--features hdfs"), "{e}");
    }

    #[test]
    fn bytes_read_at_bounds() {
        let b = Bytes::from_static(b"hello");
        assert_eq!(&b.read_at(1, 3).unwrap()[..], b"ell");
        assert!(b.read_at(3, 3).is_err());
        assert!(b.read_at(u64::MAX, 1).is_err());
    }
}
