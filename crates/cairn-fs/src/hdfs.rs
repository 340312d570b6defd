//! HDFS through the native Rust client `hdfs-native` (its blocking API).
//!
//! Reads go through the client with HDFS's own checksums verified: a replica whose block
//! fails them is dropped by the client for that read and the next replica is tried, so a
//! damaged replica costs a retry, not wrong bytes. Those failovers happen inside the client;
//! [`HdfsStats`] counts the ones the client reports through the `log` facade once
//! [`HdfsFileSystem::install_log_bridge`] is in place.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use hdfs_native::sync::{Client, ClientBuilder, FileReader, FileWriter};
use hdfs_native::{HdfsError, WriteOptions};

use crate::{FileStatus, FileSystem, FsOutput, RawSource};

/// A connection to one HDFS namespace.
#[derive(Clone)]
pub struct HdfsFileSystem {
    uri: String,
    client: Client,
}

impl std::fmt::Debug for HdfsFileSystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HdfsFileSystem")
            .field("uri", &self.uri)
            .finish()
    }
}

/// Counters of what the HDFS client reported: failures of HDFS's checksums on a replica
/// (HBase's `fsChecksumFailureCount` counts HBase-level ones; these are the DataNode-level
/// ones underneath) and other read errors that made the client move to another replica.
#[derive(Debug, Default)]
pub struct HdfsStats {
    pub checksum_failures: AtomicU64,
    pub replica_read_errors: AtomicU64,
}

static STATS: OnceLock<HdfsStats> = OnceLock::new();

/// The process-wide HDFS client counters.
pub fn stats() -> &'static HdfsStats {
    STATS.get_or_init(HdfsStats::default)
}

/// Forwards `hdfs_native`'s warnings to stderr and counts replica failures in [`stats`].
struct LogBridge;

impl log::Log for LogBridge {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let message = record.args().to_string();
        if record.target().starts_with("hdfs_native") && message.contains("reading from DataNode") {
            if message.contains("ChecksumError") {
                stats().checksum_failures.fetch_add(1, Ordering::Relaxed);
            } else {
                stats().replica_read_errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        eprintln!("{} {}: {}", record.level(), record.target(), message);
    }

    fn flush(&self) {}
}

fn to_io(e: HdfsError) -> io::Error {
    match e {
        HdfsError::IOError(e) => e,
        HdfsError::FileNotFound(p) => io::Error::new(io::ErrorKind::NotFound, p),
        HdfsError::AlreadyExists(p) => io::Error::new(io::ErrorKind::AlreadyExists, p),
        HdfsError::ChecksumError => io::Error::new(
            io::ErrorKind::InvalidData,
            "HDFS checksums failed on every replica",
        ),
        other => io::Error::other(other),
    }
}

fn hdfs_path(path: &Path) -> io::Result<&str> {
    let s = path.to_str().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: HDFS paths must be UTF-8", path.display()),
        )
    })?;
    if !s.starts_with('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{s}: HDFS paths must be absolute"),
        ));
    }
    Ok(s)
}

impl HdfsFileSystem {
    /// Connects to the NameNode at `uri` (`hdfs://host:port`).
    pub fn connect(uri: &str) -> io::Result<HdfsFileSystem> {
        let client = ClientBuilder::new()
            .with_url(uri)
            // A pipeline shorter than the replication factor (small clusters, tests) must not
            // fail appends and syncs.
            .with_config([(
                "dfs.client.block.write.replace-datanode-on-failure.best-effort",
                "true",
            )])
            .build()
            .map_err(to_io)?;
        Ok(HdfsFileSystem {
            uri: uri.trim_end_matches('/').to_string(),
            client,
        })
    }

    /// Installs the `log` bridge that counts the client's replica failures (once per
    /// process; a no-op when another logger is already installed).
    pub fn install_log_bridge() {
        static BRIDGE: LogBridge = LogBridge;
        if log::set_logger(&BRIDGE).is_ok() {
            log::set_max_level(log::LevelFilter::Warn);
        }
    }
}

/// One HDFS file open for positional reads.
struct HdfsFile {
    reader: FileReader,
    path: String,
}

impl RawSource for HdfsFile {
    fn len(&self) -> u64 {
        self.reader.file_length() as u64
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        if start
            .checked_add(len)
            .is_none_or(|end| end > self.reader.file_length())
        {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{}: read of {len} bytes at {offset} is past the end ({})",
                    self.path,
                    self.reader.file_length()
                ),
            ));
        }
        let bytes = self.reader.read_range(start, len).map_err(to_io)?;
        if bytes.len() != len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{}: short read at {offset}: {} of {len} bytes",
                    self.path,
                    bytes.len()
                ),
            ));
        }
        Ok(bytes)
    }
}

/// An HDFS file being written: buffered, so each client call carries a large write.
struct HdfsOutput {
    writer: FileWriter,
    buf: Vec<u8>,
}

const OUTPUT_BUFFER: usize = 1 << 20;

impl HdfsOutput {
    fn drain(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            let bytes = Bytes::from(std::mem::replace(
                &mut self.buf,
                Vec::with_capacity(OUTPUT_BUFFER),
            ));
            self.writer.write_bytes(bytes).map_err(to_io)?;
        }
        Ok(())
    }
}

impl Write for HdfsOutput {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.len() + data.len() > OUTPUT_BUFFER {
            self.drain()?;
        }
        if data.len() >= OUTPUT_BUFFER {
            self.writer
                .write_bytes(Bytes::copy_from_slice(data))
                .map_err(to_io)?;
        } else {
            self.buf.extend_from_slice(data);
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain()
    }
}

impl FsOutput for HdfsOutput {
    fn hflush(&mut self) -> io::Result<()> {
        // hdfs-native 0.14 has no hflush; hsync is the stronger call.
        self.hsync()
    }

    fn hsync(&mut self) -> io::Result<()> {
        self.drain()?;
        self.writer.hsync().map_err(to_io)
    }

    fn close(mut self: Box<Self>) -> io::Result<()> {
        self.drain()?;
        self.writer.close().map_err(to_io)
    }
}

impl FileSystem for HdfsFileSystem {
    fn uri(&self) -> String {
        self.uri.clone()
    }

    fn open(&self, path: &Path) -> io::Result<Arc<dyn RawSource>> {
        let p = hdfs_path(path)?;
        let reader = self.client.read(p).map_err(to_io)?;
        Ok(Arc::new(HdfsFile {
            reader,
            path: format!("{}{p}", self.uri),
        }))
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn FsOutput>> {
        let p = hdfs_path(path)?;
        let options = WriteOptions::default().overwrite(true).create_parent(true);
        let writer = self.client.create(p, options).map_err(to_io)?;
        Ok(Box::new(HdfsOutput {
            writer,
            buf: Vec::with_capacity(OUTPUT_BUFFER),
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.client
            .rename(hdfs_path(from)?, hdfs_path(to)?, true)
            .map_err(to_io)
    }

    fn delete(&self, path: &Path) -> io::Result<bool> {
        match self.client.delete(hdfs_path(path)?, true) {
            Ok(deleted) => Ok(deleted),
            Err(HdfsError::FileNotFound(_)) => Ok(false),
            Err(e) => Err(to_io(e)),
        }
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<FileStatus>> {
        let mut out: Vec<FileStatus> = self
            .client
            .list_status(hdfs_path(dir)?, false)
            .map_err(to_io)?
            .into_iter()
            .map(|s| FileStatus {
                path: PathBuf::from(s.path),
                len: s.length as u64,
                is_dir: s.isdir,
                modified_ms: s.modification_time as i64,
            })
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn mkdirs(&self, dir: &Path) -> io::Result<()> {
        self.client
            .mkdirs(hdfs_path(dir)?, 0o755, true)
            .map_err(to_io)
    }

    fn status(&self, path: &Path) -> io::Result<FileStatus> {
        let s = self.client.get_file_info(hdfs_path(path)?).map_err(to_io)?;
        Ok(FileStatus {
            path: path.to_path_buf(),
            len: s.length as u64,
            is_dir: s.isdir,
            modified_ms: s.modification_time as i64,
        })
    }

    fn recover_lease(&self, path: &Path) -> io::Result<bool> {
        self.client.recover_lease(hdfs_path(path)?).map_err(to_io)
    }
}
