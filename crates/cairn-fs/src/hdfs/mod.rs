//! HDFS: metadata and writes through the native Rust client `hdfs-native` (its blocking API);
//! positional reads through cairn's own small client of the NameNode and the DataNodes
//! ([`crate::hdfs_protocol`]).
//!
//! Reads are cairn's own because HBase's read path needs two things `hdfs-native` does not
//! offer: reading without HDFS's checksums (a store file's blocks carry their own, so HDFS's
//! would be computed twice), and, when a block then fails cairn's checksum, reading it again
//! with HDFS's checksums from each replica in turn, naming the replica that was bad
//! (HBase's fallback to the filesystem's checksums; DFSClient's `reportChecksumFailure`). A
//! bad replica is counted ([`HdfsStats`]), kept in [`HdfsStats::bad_replicas`], logged, and
//! reported to the NameNode (`reportBadBlocks`) so HDFS re-replicates a good copy.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use bytes::Bytes;
use hdfs_native::sync::{Client, ClientBuilder, FileWriter};
use hdfs_native::{HdfsError, WriteOptions};

use crate::hdfs_protocol::datanode::{xfer_addr, BlockRead, DataNodePool, ReplicaError};
use crate::hdfs_protocol::namenode::{self, NameNodeConnection};
use crate::hdfs_protocol::proto::{DatanodeInfoProto, LocatedBlockProto};
use crate::{FileStatus, FileSystem, FsOutput, RawSource};

/// A connection to one HDFS namespace.
#[derive(Clone)]
pub struct HdfsFileSystem {
    uri: String,
    client: Client,
    reads: Arc<ReadClient>,
}

impl std::fmt::Debug for HdfsFileSystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HdfsFileSystem")
            .field("uri", &self.uri)
            .finish()
    }
}

/// A replica that failed HDFS's checksums.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadReplica {
    /// The file (`hdfs://host:port/path`).
    pub file: String,
    /// `blk_<id>_<generation stamp>` in its block pool.
    pub block: String,
    /// The DataNode's data transfer address (`ip:port`).
    pub datanode: String,
    /// The DataNode's UUID.
    pub datanode_uuid: String,
    /// What failed (the chunk, its offset in the block, stored and computed CRC).
    pub detail: String,
}

impl fmt::Display for BadReplica {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: replica of {} on DataNode {} (uuid {}) is corrupt: {}",
            self.file, self.block, self.datanode, self.datanode_uuid, self.detail
        )
    }
}

/// Counters of cairn's HDFS reads: replicas that failed HDFS's checksums (HBase's
/// `fsChecksumFailureCount` counts failures of the store files' own checksums; these are the
/// replica-level ones found when such a block is read again) and other read errors that made
/// a read move to another replica.
#[derive(Debug, Default)]
pub struct HdfsStats {
    /// Replica reads that failed HDFS's chunk checksums; each is reported to the NameNode, and
    /// the last 64 are kept for [`bad_replicas`](Self::bad_replicas).
    pub checksum_failures: AtomicU64,
    /// Replica reads that failed otherwise (connection refused or reset, DataNode error status)
    /// and moved on to the next replica.
    pub replica_read_errors: AtomicU64,
    bad_replicas: Mutex<VecDeque<BadReplica>>,
}

/// How many bad replicas [`HdfsStats::bad_replicas`] remembers.
const BAD_REPLICAS_KEPT: usize = 64;

impl HdfsStats {
    /// The last replicas found bad (at most 64), oldest first.
    pub fn bad_replicas(&self) -> Vec<BadReplica> {
        let kept = self.bad_replicas.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().cloned().collect()
    }

    fn record_bad_replica(&self, bad: BadReplica) {
        self.checksum_failures.fetch_add(1, Ordering::Relaxed);
        let mut kept = self.bad_replicas.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() == BAD_REPLICAS_KEPT {
            kept.pop_front();
        }
        kept.push_back(bad);
    }
}

static STATS: OnceLock<HdfsStats> = OnceLock::new();

/// The process-wide HDFS read counters.
pub fn stats() -> &'static HdfsStats {
    STATS.get_or_init(HdfsStats::default)
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
        let uri = uri.trim_end_matches('/').to_string();
        let authority = uri.strip_prefix("hdfs://").unwrap_or(&uri);
        let authority = authority.split('/').next().unwrap_or(authority);
        // HDFS's default NameNode RPC port when the URI names none. (A nameservice of an HA
        // pair would need hdfs-site.xml's NameNode list: cairn's reads do not resolve one.)
        let namenode = if authority.contains(':') {
            authority.to_string()
        } else {
            format!("{authority}:8020")
        };
        Ok(HdfsFileSystem {
            reads: Arc::new(ReadClient::new(namenode)),
            uri,
            client,
        })
    }

    fn open_file(&self, path: &Path, verify: bool) -> io::Result<Arc<dyn RawSource>> {
        let p = hdfs_path(path)?;
        let file = Arc::new(OpenFile::open(self.reads.clone(), p, &self.uri)?);
        Ok(Arc::new(HdfsFile::new(file, verify)))
    }
}

/// What positional reads share: one NameNode connection (calls are rare: one per file opened,
/// one per bad replica) and the DataNode connections.
struct ReadClient {
    namenode: String,
    user: String,
    connection: Mutex<Option<NameNodeConnection>>,
    datanodes: DataNodePool,
}

impl ReadClient {
    fn new(namenode: String) -> ReadClient {
        let client_name = format!("cairn_{}_{:x}", std::process::id(), {
            static N: AtomicU64 = AtomicU64::new(0);
            N.fetch_add(1, Ordering::Relaxed)
        });
        ReadClient {
            namenode,
            user: namenode::effective_user(),
            connection: Mutex::new(None),
            datanodes: DataNodePool::new(client_name),
        }
    }

    /// Runs `f` on the NameNode connection, connecting first if needed; a broken connection
    /// is replaced and the call made once more.
    fn with_namenode<T>(
        &self,
        f: impl Fn(&mut NameNodeConnection) -> io::Result<T>,
    ) -> io::Result<T> {
        let mut guard = self.connection.lock().unwrap_or_else(|e| e.into_inner());
        for attempt in 0..2 {
            if guard.is_none() {
                *guard = Some(NameNodeConnection::connect(&self.namenode, &self.user)?);
            }
            match f(guard.as_mut().expect("connected above")) {
                Ok(v) => return Ok(v),
                // The NameNode answered: the connection is fine, the call is not.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied
                    ) =>
                {
                    return Err(e)
                }
                Err(e) => {
                    *guard = None;
                    if attempt == 1 {
                        return Err(e);
                    }
                }
            }
        }
        unreachable!("the second attempt returns")
    }
}

/// One open HDFS file: its length and where its blocks are, shared by its unverified and
/// verified views.
struct OpenFile {
    reads: Arc<ReadClient>,
    path: String,
    /// `hdfs://host:port/path`, for messages.
    display: String,
    len: u64,
    blocks: RwLock<Arc<Vec<LocatedBlockProto>>>,
    /// Replicas (block id, DataNode UUID) found bad by reads of this file.
    bad: Mutex<Vec<(u64, String)>>,
    any_bad: AtomicBool,
    /// Bumped when a replica is found bad: read-ahead filled before may hold its bytes.
    bad_generation: AtomicU64,
}

impl OpenFile {
    fn open(reads: Arc<ReadClient>, path: &str, uri: &str) -> io::Result<OpenFile> {
        let located = reads.with_namenode(|nn| nn.get_block_locations(path, 0, i64::MAX as u64))?;
        Ok(OpenFile {
            reads,
            path: path.to_string(),
            display: format!("{uri}{path}"),
            len: located.file_length,
            blocks: RwLock::new(Arc::new(located.blocks)),
            bad: Mutex::new(Vec::new()),
            any_bad: AtomicBool::new(false),
            bad_generation: AtomicU64::new(0),
        })
    }

    fn blocks(&self) -> Arc<Vec<LocatedBlockProto>> {
        self.blocks
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Asks the NameNode again where the blocks are (DataNodes come and go; tokens expire).
    fn refresh(&self) -> io::Result<()> {
        let located = self
            .reads
            .with_namenode(|nn| nn.get_block_locations(&self.path, 0, i64::MAX as u64))?;
        *self.blocks.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(located.blocks);
        Ok(())
    }

    fn read_range(&self, offset: u64, len: usize, verify: bool) -> io::Result<Bytes> {
        let end = offset
            .checked_add(len as u64)
            .filter(|&e| e <= self.len)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "{}: read of {len} bytes at {offset} is past the end ({})",
                        self.display, self.len
                    ),
                )
            })?;
        if len == 0 {
            return Ok(Bytes::new());
        }
        let mut out: Option<Vec<u8>> = None;
        let mut pos = offset;
        while pos < end {
            let blocks = self.blocks();
            let i = blocks.partition_point(|b| b.offset <= pos);
            let block = i
                .checked_sub(1)
                .map(|i| &blocks[i])
                .filter(|b| pos < b.offset + b.b.num_bytes.unwrap_or(0))
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "{}: the NameNode lists no block holding byte {pos} of {}",
                            self.display, self.len
                        ),
                    )
                })?;
            let block_end = block.offset + block.b.num_bytes.unwrap_or(0);
            let piece_end = end.min(block_end);
            let piece = self.read_block_range(
                block,
                pos - block.offset,
                (piece_end - pos) as usize,
                verify,
            )?;
            if pos == offset && piece_end == end {
                return Ok(Bytes::from(piece));
            }
            out.get_or_insert_with(|| Vec::with_capacity(len))
                .extend_from_slice(&piece);
            pos = piece_end;
        }
        Ok(Bytes::from(out.unwrap_or_default()))
    }

    /// Reads from the block's replicas in the NameNode's order (replicas of it found bad
    /// last) until one answers (with `verify`, until one passes HDFS's checksums); when none
    /// could be reached, asks for the block's locations again, once.
    fn read_block_range(
        &self,
        located: &LocatedBlockProto,
        offset: u64,
        len: usize,
        verify: bool,
    ) -> io::Result<Vec<u8>> {
        let mut failures: Vec<String> = Vec::new();
        let mut corrupt = false;
        if let Some(bytes) =
            self.try_replicas(located, offset, len, verify, &mut failures, &mut corrupt)
        {
            return Ok(bytes);
        }
        let refreshed;
        let mut located = located;
        if !corrupt {
            self.refresh()?;
            let blocks = self.blocks();
            if let Some(b) = blocks.iter().find(|b| b.b.block_id == located.b.block_id) {
                refreshed = b.clone();
                located = &refreshed;
                if let Some(bytes) =
                    self.try_replicas(located, offset, len, verify, &mut failures, &mut corrupt)
                {
                    return Ok(bytes);
                }
            }
        }
        let block = format!("blk_{}_{}", located.b.block_id, located.b.generation_stamp);
        let what = format!(
            "{}: {len} bytes at {offset} of block {block} (file offset {})",
            self.display,
            located.offset + offset
        );
        if located.locs.is_empty() {
            return Err(io::Error::other(format!(
                "{what}: no DataNode holds the block"
            )));
        }
        let (kind, summary) = if corrupt {
            (
                io::ErrorKind::InvalidData,
                "no replica passed HDFS checksums",
            )
        } else {
            (io::ErrorKind::Other, "no replica could be read")
        };
        Err(io::Error::new(
            kind,
            format!("{what}: {summary}: {}", failures.join("; ")),
        ))
    }

    /// One pass over the block's replicas, those known bad last; `None` when none gave the
    /// bytes (each failure is added to `failures`).
    fn try_replicas(
        &self,
        located: &LocatedBlockProto,
        offset: u64,
        len: usize,
        verify: bool,
        failures: &mut Vec<String>,
        corrupt: &mut bool,
    ) -> Option<Vec<u8>> {
        let req = BlockRead {
            block: &located.b,
            token: &located.block_token,
            offset,
            len,
            verify,
        };
        let known_bad = |dn: &DatanodeInfoProto| self.is_known_bad(located.b.block_id, dn);
        let good_first = located
            .locs
            .iter()
            .filter(|dn| !known_bad(dn))
            .chain(located.locs.iter().filter(|dn| known_bad(dn)));
        for dn in good_first {
            match self.reads.datanodes.read(&dn.id, &req) {
                Ok(bytes) => return Some(bytes),
                Err(ReplicaError::Checksum(detail)) => {
                    *corrupt = true;
                    self.bad_replica(located, dn, &detail);
                    failures.push(format!(
                        "{}: HDFS checksum failure: {detail}",
                        xfer_addr(&dn.id)
                    ));
                }
                Err(ReplicaError::Io(e)) => {
                    stats().replica_read_errors.fetch_add(1, Ordering::Relaxed);
                    failures.push(format!("{}: {e}", xfer_addr(&dn.id)));
                }
            }
        }
        None
    }

    /// Whether this file's reads found `dn`'s replica of the block bad (as DFSInputStream
    /// keeps its dead nodes: later reads go to the other replicas first).
    fn is_known_bad(&self, block_id: u64, dn: &DatanodeInfoProto) -> bool {
        if !self.any_bad.load(Ordering::Relaxed) {
            return false;
        }
        let bad = self.bad.lock().unwrap_or_else(|e| e.into_inner());
        bad.iter()
            .any(|(b, uuid)| *b == block_id && *uuid == dn.id.datanode_uuid)
    }

    /// Records, logs and reports to the NameNode a replica that failed HDFS's checksums.
    fn bad_replica(&self, located: &LocatedBlockProto, dn: &DatanodeInfoProto, detail: &str) {
        let bad = BadReplica {
            file: self.display.clone(),
            block: format!(
                "{}:blk_{}_{}",
                located.b.pool_id, located.b.block_id, located.b.generation_stamp
            ),
            datanode: xfer_addr(&dn.id),
            datanode_uuid: dn.id.datanode_uuid.clone(),
            detail: detail.to_string(),
        };
        tracing::warn!("{bad}; reporting it to the NameNode");
        {
            let mut known = self.bad.lock().unwrap_or_else(|e| e.into_inner());
            let key = (located.b.block_id, dn.id.datanode_uuid.clone());
            if !known.contains(&key) {
                known.push(key);
            }
            self.any_bad.store(true, Ordering::Relaxed);
            self.bad_generation.fetch_add(1, Ordering::Relaxed);
        }
        stats().record_bad_replica(bad);
        let i = located.locs.iter().position(|l| l == dn);
        let mut report = located.clone();
        report.locs = vec![dn.clone()];
        report.storage_ids = i
            .and_then(|i| located.storage_ids.get(i).cloned())
            .into_iter()
            .collect();
        report.storage_types = i
            .and_then(|i| located.storage_types.get(i).copied())
            .into_iter()
            .collect();
        if let Err(e) = self
            .reads
            .with_namenode(|nn| nn.report_bad_blocks(vec![report.clone()]))
        {
            tracing::warn!("reporting the bad replica failed: {e}");
        }
    }
}

/// One HDFS file open for positional reads: `verify` says whether HDFS's checksums are asked
/// for and checked.
struct HdfsFile {
    file: Arc<OpenFile>,
    verify: bool,
    ahead: Mutex<ReadAhead>,
}

/// Sequential reads (scans, compactions, replays) fetch [`READ_AHEAD`] bytes per DataNode
/// request instead of one block's worth: each `OP_READ_BLOCK` costs the DataNode far more than
/// the 64 KiB it returns (as HBase switches long scans from pread to streaming reads).
#[derive(Default)]
struct ReadAhead {
    /// Where the last read ended.
    last_end: u64,
    start: u64,
    buf: Bytes,
    /// The file's `bad_generation` when `buf` was filled.
    generation: u64,
}

const READ_AHEAD: usize = 1 << 20;
/// A read counts as sequential when it starts no further back than this from where the last
/// one ended: store-file readers re-read the next block's header with each block.
const SEQUENTIAL_OVERLAP: u64 = 256;

impl HdfsFile {
    fn new(file: Arc<OpenFile>, verify: bool) -> HdfsFile {
        HdfsFile {
            file,
            verify,
            ahead: Mutex::new(ReadAhead::default()),
        }
    }
}

impl RawSource for HdfsFile {
    fn len(&self) -> u64 {
        self.file.len
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        let end = offset.saturating_add(len as u64);
        let sequential = {
            let mut ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner());
            if ahead.generation != self.file.bad_generation.load(Ordering::Relaxed) {
                // A replica was found bad since: its bytes may be in the buffer.
                ahead.buf = Bytes::new();
            }
            let buf_end = ahead.start + ahead.buf.len() as u64;
            if offset >= ahead.start && end <= buf_end && !ahead.buf.is_empty() {
                let from = (offset - ahead.start) as usize;
                // A copy: callers keep blocks (in the cache, say), which must not pin the
                // whole read-ahead buffer.
                let bytes = Bytes::copy_from_slice(&ahead.buf[from..from + len]);
                ahead.last_end = end;
                return Ok(bytes);
            }
            let sequential = ahead.last_end > 0
                && offset <= ahead.last_end
                && offset.saturating_add(SEQUENTIAL_OVERLAP) >= ahead.last_end;
            ahead.last_end = end;
            if !sequential {
                ahead.buf = Bytes::new();
            }
            sequential
        };
        if !sequential || len >= READ_AHEAD || end > self.file.len {
            return self.file.read_range(offset, len, self.verify);
        }
        let fetch = (READ_AHEAD as u64).min(self.file.len - offset) as usize;
        let generation = self.file.bad_generation.load(Ordering::Relaxed);
        let buf = self.file.read_range(offset, fetch, self.verify)?;
        let bytes = Bytes::copy_from_slice(&buf[..len]);
        let mut ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner());
        ahead.start = offset;
        ahead.buf = buf;
        ahead.generation = generation;
        Ok(bytes)
    }

    fn fs_checksummed(self: Arc<Self>) -> Option<Arc<dyn RawSource>> {
        (!self.verify)
            .then(|| Arc::new(HdfsFile::new(self.file.clone(), true)) as Arc<dyn RawSource>)
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
        // Every DataNode of the pipeline has the bytes; none syncs them (HDFS's hflush, added
        // to hdfs-native in vendor/).
        self.drain()?;
        self.writer.hflush().map_err(to_io)
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
        self.open_file(path, true)
    }

    fn open_no_checksum(&self, path: &Path) -> io::Result<Arc<dyn RawSource>> {
        self.open_file(path, false)
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

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FsOutput>> {
        let p = hdfs_path(path)?;
        let options = WriteOptions::default().overwrite(false).create_parent(true);
        let writer = self.client.create(p, options).map_err(to_io)?;
        Ok(Box::new(HdfsOutput {
            writer,
            buf: Vec::with_capacity(OUTPUT_BUFFER),
        }))
    }

    /// The NameNode refuses a rename onto an existing name unless told to overwrite.
    fn rename_no_replace(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.client
            .rename(hdfs_path(from)?, hdfs_path(to)?, false)
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
