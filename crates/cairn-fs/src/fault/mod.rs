//! A filesystem for tests that fails on purpose and forgets what a crash would forget, in the
//! spirit of RocksDB's `FaultInjectionTestFS`.
//!
//! [`FaultFileSystem`] wraps any [`FileSystem`] and:
//! - **tracks durability**: for every file written through it, how many bytes were made
//!   durable by `hsync` and how many were only written. Written bytes are held in the wrapper
//!   until `hflush` / `hsync` / `close` hands them to the inner filesystem, so a dropped writer
//!   never leaks them later.
//! - **crashes**: [`crash`](FaultFileSystem::crash) truncates each tracked file to its last
//!   synced length (and zeroes the bytes a failed `hsync` lost), as a machine reset would;
//!   with [`set_strict_dirs`](FaultFileSystem::set_strict_dirs) it also undoes creates and
//!   renames whose directory was not synced since ([`FileSystem::sync_dir`]), as a local
//!   filesystem may: of files, and of directories (made by `mkdirs`, or as the parents a
//!   `create` makes), which a crash removes with everything in them. Deletes are taken as
//!   durable at once (the trait gives no way to bring a deleted file back honestly).
//! - **injects faults** by rule ([`FaultRule`]: an operation kind, a fault, one in N, an
//!   optional path filter and count) with a seeded random source, so a failing run replays:
//!   ENOSPC, EDQUOT, EIO, short writes (fewer bytes accepted), partial writes (a prefix kept,
//!   then ENOSPC). A failed `hsync` behaves as Linux's `fsync` does: the bytes it should have
//!   made durable are treated as lost in the next crash even if a later `hsync` succeeds.
//! - **freezes** ([`deactivate`](FaultFileSystem::deactivate): every operation fails, a disk
//!   gone) and **fills** ([`set_full`](FaultFileSystem::set_full): creates and writes fail with
//!   ENOSPC until cleared, a full disk that is then freed).
//!
//! Its [`uri`](FileSystem::uri) is `fault+<inner uri>`, never `file://`, so the WAL writes
//! through the trait (its stream backend) rather than memory-mapping local files.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, Weak};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::{FileStatus, FileSystem, FsOutput, RawSource};

mod streams;

use streams::{FaultOutput, FaultSource};

/// `ENOSPC`.
const ENOSPC: i32 = libc::ENOSPC;
/// `EDQUOT`.
const EDQUOT: i32 = libc::EDQUOT;
/// `EIO`.
const EIO: i32 = libc::EIO;

/// The kinds of operation a [`FaultRule`] can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultOp {
    /// `create` / `create_direct`.
    Create,
    /// A `write` on an open output.
    Write,
    /// `hflush`, and `close` (which flushes).
    Hflush,
    /// `hsync` (a failure loses the unsynced bytes, see the module docs).
    Hsync,
    /// `rename`.
    Rename,
    /// `delete`.
    Delete,
    /// `mkdirs`.
    Mkdirs,
    /// `sync_dir`.
    SyncDir,
    /// `open` and positional reads.
    Read,
}

/// What an injected fault does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// `ENOSPC` (raw os error 28, `io::ErrorKind::StorageFull`).
    NoSpace,
    /// `EDQUOT`: the user's quota is used up.
    QuotaExceeded,
    /// `EIO`.
    Io,
    /// On a write: accepts fewer bytes than offered (at least one), no error; a caller using
    /// `write_all` carries on. On other operations: `EIO`.
    ShortWrite,
    /// On a write: keeps a prefix of the bytes, then fails with `ENOSPC` (a disk filling in
    /// the middle of a write). On other operations: `ENOSPC`.
    PartialWrite,
    /// No error: the operation waits this many milliseconds, then runs (a slow disk; widens
    /// the window a kill can land in, e.g. between a compaction's commit and its cleanup).
    Stall(u64),
}

impl Fault {
    fn errno(self) -> i32 {
        match self {
            Fault::NoSpace | Fault::PartialWrite => ENOSPC,
            Fault::QuotaExceeded => EDQUOT,
            Fault::Io | Fault::ShortWrite | Fault::Stall(_) => EIO,
        }
    }
}

/// When to inject a fault.
#[derive(Clone, Debug)]
pub struct FaultRule {
    /// The operation it fails.
    pub op: FaultOp,
    /// What it does.
    pub fault: Fault,
    /// Fails one in this many matching operations, at random from the file system's seed
    /// (1: every one).
    pub one_in: u32,
    /// Only operations on paths containing this text.
    pub path_contains: Option<String>,
    /// Fails at most this many times, then stops matching.
    pub times: Option<u64>,
}

impl FaultRule {
    /// A rule failing every `op` with `fault`.
    pub fn new(op: FaultOp, fault: Fault) -> FaultRule {
        FaultRule {
            op,
            fault,
            one_in: 1,
            path_contains: None,
            times: None,
        }
    }

    /// Fails one in `n` matching operations (at random).
    pub fn one_in(mut self, n: u32) -> FaultRule {
        self.one_in = n.max(1);
        self
    }

    /// Only on paths containing `s`.
    pub fn on_paths_containing(mut self, s: impl Into<String>) -> FaultRule {
        self.path_contains = Some(s.into());
        self
    }

    /// At most `n` times.
    pub fn times(mut self, n: u64) -> FaultRule {
        self.times = Some(n);
        self
    }
}

/// What the file system knows of one file written through it.
#[derive(Clone, Debug, Default)]
struct Tracked {
    /// Bytes handed to the inner file system (visible to readers).
    written: u64,
    /// Bytes made durable by the last successful `hsync`.
    synced: u64,
    /// Ranges a failed `hsync` should have made durable: lost in a crash.
    lost: Vec<Range<u64>>,
    /// Whether the file's name is durable (its directory synced since it was created or
    /// renamed here). Only consulted with strict directories.
    name_durable: bool,
    /// The name it had before an unsynced rename, if that name was durable.
    renamed_from: Option<PathBuf>,
}

/// What the file system knows of one directory made or renamed through it.
#[derive(Clone, Debug, Default)]
struct TrackedDir {
    /// Whether its name is durable (its parent synced since it was made or renamed here).
    name_durable: bool,
    /// The name it had before an unsynced rename, if that name was durable.
    renamed_from: Option<PathBuf>,
}

/// What a [`crash`](FaultFileSystem::crash) did, for a test to report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrashReport {
    /// Files cut back to their synced length.
    pub truncated: usize,
    /// Bytes written but never synced, now gone.
    pub bytes_dropped: u64,
    /// Files removed because their creation was not durable (strict directories).
    pub files_removed: usize,
    /// Renames undone because they were not durable (strict directories).
    pub renames_undone: usize,
    /// Directories removed, with everything in them, because their creation was not durable
    /// (strict directories).
    pub dirs_removed: usize,
}

struct State {
    files: BTreeMap<PathBuf, Tracked>,
    dirs: BTreeMap<PathBuf, TrackedDir>,
    rules: Vec<FaultRule>,
    rng: StdRng,
    /// Set: every operation fails with this error (`deactivate`).
    dead: Option<(io::ErrorKind, String)>,
    /// Operations left before the disk deactivates itself (`deactivate_after`).
    countdown: Option<(u64, io::ErrorKind, String)>,
    full: bool,
    strict_dirs: bool,
    /// Paths whose `hflush`ed bytes survive a crash (see `set_hflush_survives`).
    hflush_survives: Option<String>,
    injected: u64,
}

/// A [`FileSystem`] that injects faults and simulates crashes (see the module docs).
pub struct FaultFileSystem {
    /// This file system, for the outputs it hands out.
    me: Weak<FaultFileSystem>,
    inner: Arc<dyn FileSystem>,
    /// Bumped by every crash: an output opened before it fails.
    epoch: AtomicU64,
    state: Mutex<State>,
    /// Operations hold it shared while they run against the inner file system; a crash holds
    /// it exclusively, so nothing writes while files are cut back.
    gate: RwLock<()>,
}

impl fmt::Debug for FaultFileSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultFileSystem")
            .field("inner", &self.inner)
            .finish()
    }
}

fn os_error(errno: i32, what: &str, path: &Path) -> io::Error {
    let e = io::Error::from_raw_os_error(errno);
    // The kind stays the raw error's (StorageFull for ENOSPC); the text says it was injected.
    io::Error::new(
        e.kind(),
        format!("{e} (injected on {what} {})", path.display()),
    )
}

impl FaultFileSystem {
    /// Wraps `inner`; random rules draw from `seed`.
    pub fn new(inner: Arc<dyn FileSystem>, seed: u64) -> Arc<FaultFileSystem> {
        Arc::new_cyclic(|me| FaultFileSystem {
            me: me.clone(),
            inner,
            epoch: AtomicU64::new(0),
            state: Mutex::new(State {
                files: BTreeMap::new(),
                dirs: BTreeMap::new(),
                rules: Vec::new(),
                rng: StdRng::seed_from_u64(seed),
                dead: None,
                countdown: None,
                full: false,
                strict_dirs: false,
                hflush_survives: None,
                injected: 0,
            }),
            gate: RwLock::new(()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking test thread must not hide the state from the others.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a rule; every rule matching an operation rolls its own dice.
    pub fn add_rule(&self, rule: FaultRule) {
        self.lock().rules.push(rule);
    }

    /// Removes every rule (the faults clear; a full or frozen disk stays so).
    pub fn clear_rules(&self) {
        self.lock().rules.clear();
    }

    /// Reseeds the random source of the rules.
    pub fn reseed(&self, seed: u64) {
        self.lock().rng = StdRng::seed_from_u64(seed);
    }

    /// Faults injected so far (rules, a full disk and a frozen one all count).
    pub fn injected(&self) -> u64 {
        self.lock().injected
    }

    /// `true`: creates, writes, flushes, syncs and mkdirs fail with `ENOSPC` until set back to
    /// `false` (deletes and renames still work, as on a real full disk).
    pub fn set_full(&self, full: bool) {
        self.lock().full = full;
    }

    /// Every further operation fails with `err`'s kind and text, as on a disk that is gone;
    /// what was synced stays as it was. [`crash`](Self::crash) or
    /// [`reactivate`](Self::reactivate) ends it.
    pub fn deactivate(&self, err: io::Error) {
        self.lock().dead = Some((err.kind(), err.to_string()));
    }

    /// Lets `ops` more operations (of any kind) through, then deactivates as
    /// [`deactivate`](Self::deactivate) does: a crash at an arbitrary point inside a flush,
    /// a compaction or a WAL roll.
    pub fn deactivate_after(&self, ops: u64, err: io::Error) {
        self.lock().countdown = Some((ops, err.kind(), err.to_string()));
    }

    /// Ends [`deactivate`](Self::deactivate) without dropping anything.
    pub fn reactivate(&self) {
        self.lock().dead = None;
    }

    /// `true`: a create or rename is durable only once its directory is synced, and a
    /// [`crash`](Self::crash) undoes the others (a local filesystem's rules). `false` (the
    /// default): names are durable at once (HDFS, whose NameNode logs them).
    pub fn set_strict_dirs(&self, strict: bool) {
        self.lock().strict_dirs = strict;
    }

    /// `Some(part)`: bytes `hflush`ed to a file whose path contains `part` survive a
    /// [`crash`](Self::crash), as a WAL's on HDFS does when the region server's machine dies
    /// and the DataNodes holding the bytes do not. `None` (the default): only `hsync`ed bytes
    /// survive, as after a power loss of every machine.
    pub fn set_hflush_survives(&self, part: Option<&str>) {
        self.lock().hflush_survives = part.map(str::to_string);
    }

    /// Bytes written to `path` through this file system and not yet made durable by `hsync`
    /// (including bytes a failed `hsync` lost); `None` if the file is not tracked.
    pub fn unsynced_bytes(&self, path: &Path) -> Option<u64> {
        let s = self.lock();
        s.files
            .get(path)
            .map(|t| t.written - t.synced + t.lost.iter().map(|r| r.end - r.start).sum::<u64>())
    }

    /// Simulates a machine crash and restart: waits for running operations, then cuts every
    /// tracked file back to what was synced (the bytes a failed `hsync` lost read as zeros),
    /// with strict directories undoes creates and renames not made durable, forgets every
    /// file (what is left is all durable), clears rules, a full disk and a frozen one.
    /// Outputs still open keep failing: a crash ends their process.
    pub fn crash(&self) -> io::Result<CrashReport> {
        let _exclusive = self.gate.write().unwrap_or_else(|e| e.into_inner());
        let mut s = self.lock();
        let mut report = CrashReport::default();
        let strict = s.strict_dirs;
        if strict {
            self.undo_dirs(&mut s, &mut report)?;
        }
        s.dirs.clear();
        let files = std::mem::take(&mut s.files);
        for (path, t) in &files {
            if strict && !t.name_durable {
                match &t.renamed_from {
                    Some(from) => {
                        self.cut_back(path, t, &mut report)?;
                        self.inner.rename(path, from)?;
                        report.renames_undone += 1;
                    }
                    None => {
                        if self.inner.delete(path)? {
                            report.files_removed += 1;
                        }
                    }
                }
                continue;
            }
            self.cut_back(path, t, &mut report)?;
        }
        s.rules.clear();
        s.full = false;
        s.dead = None;
        s.countdown = None;
        s.injected = 0;
        // Outputs opened before the crash hold an epoch that no longer exists.
        s.files.clear();
        drop(s);
        self.epoch.fetch_add(1, Ordering::SeqCst);
        Ok(report)
    }

    /// Undoes every directory whose name is not durable, the shallowest first (which takes
    /// what is under it along): a renamed one goes back to its durable name, a new one goes
    /// with everything in it. Files and directories tracked under it move or go too.
    fn undo_dirs(&self, s: &mut State, report: &mut CrashReport) -> io::Result<()> {
        while let Some((path, d)) = s
            .dirs
            .iter()
            .filter(|(_, d)| !d.name_durable)
            .min_by_key(|(p, _)| p.components().count())
            .map(|(p, d)| (p.clone(), d.clone()))
        {
            s.dirs.remove(&path);
            match d.renamed_from {
                // Its old parent still there: back it goes.
                Some(from) if from.parent().is_none_or(|p| self.inner.status(p).is_ok()) => {
                    self.inner.rename(&path, &from)?;
                    rekey(&mut s.files, &path, &from);
                    rekey(&mut s.dirs, &path, &from);
                    report.renames_undone += 1;
                }
                // Its old parent was deleted since (deletes are durable at once): the
                // directory has no durable name left.
                _ => {
                    if self.inner.delete(&path)? {
                        report.dirs_removed += 1;
                    }
                    s.files.retain(|p, _| !p.starts_with(&path));
                    s.dirs.retain(|p, _| !p.starts_with(&path));
                }
            }
        }
        Ok(())
    }

    /// The ancestors of `dir` (itself included) that do not exist yet, deepest first.
    fn missing_dirs(&self, dir: &Path) -> Vec<PathBuf> {
        let mut missing = Vec::new();
        let mut at = Some(dir);
        while let Some(d) = at {
            if d.as_os_str().is_empty() || self.inner.status(d).is_ok() {
                break;
            }
            missing.push(d.to_path_buf());
            at = d.parent();
        }
        missing
    }

    /// Tracks directories just made: their names are not durable until their parents are
    /// synced.
    fn track_new_dirs(&self, dirs: Vec<PathBuf>) {
        let mut s = self.lock();
        for d in dirs {
            s.dirs.insert(d, TrackedDir::default());
        }
    }

    /// Truncates `path` to its synced length, zeroing lost ranges, through the inner file
    /// system (the trait has no truncate: the durable prefix is read and written back).
    fn cut_back(&self, path: &Path, t: &Tracked, report: &mut CrashReport) -> io::Result<()> {
        let status = match self.inner.status(path) {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let keep = t.synced.min(status.len);
        let lost: Vec<_> = t.lost.iter().filter(|r| r.start < keep).collect();
        if keep == status.len && lost.is_empty() {
            return Ok(());
        }
        let src = self.inner.open(path)?;
        let mut bytes = src.read_at(0, keep as usize)?.to_vec();
        drop(src);
        for r in lost {
            bytes[r.start as usize..r.end.min(keep) as usize].fill(0);
        }
        let mut out = self.inner.create(path)?;
        out.write_all(&bytes)?;
        out.hsync()?;
        out.close()?;
        report.truncated += 1;
        report.bytes_dropped += status.len - keep;
        Ok(())
    }

    /// Decides whether `op` on `path` fails now.
    fn check(&self, op: FaultOp, path: &Path) -> Result<(), (Fault, io::Error)> {
        let mut s = self.lock();
        if let Some((n, kind, text)) = &mut s.countdown {
            if *n == 0 {
                let dead = Some((*kind, std::mem::take(text)));
                s.dead = dead;
                s.countdown = None;
            } else {
                *n -= 1;
            }
        }
        if let Some((kind, text)) = &s.dead {
            let e = io::Error::new(
                *kind,
                format!("{text} (disk deactivated: {op:?} {})", path.display()),
            );
            s.injected += 1;
            return Err((Fault::Io, e));
        }
        let filling = matches!(
            op,
            FaultOp::Create | FaultOp::Write | FaultOp::Hflush | FaultOp::Hsync | FaultOp::Mkdirs
        );
        if s.full && filling {
            s.injected += 1;
            return Err((
                Fault::NoSpace,
                os_error(ENOSPC, &format!("{op:?} (disk full)"), path),
            ));
        }
        let text = path.to_string_lossy();
        let State { rules, rng, .. } = &mut *s;
        let mut hit = None;
        for rule in rules.iter_mut() {
            if rule.op != op
                || rule.times == Some(0)
                || rule
                    .path_contains
                    .as_ref()
                    .is_some_and(|p| !text.contains(p.as_str()))
            {
                continue;
            }
            if rule.one_in <= 1 || rng.random_range(0..rule.one_in) == 0 {
                if let Some(n) = &mut rule.times {
                    *n -= 1;
                }
                hit = Some(rule.fault);
                break;
            }
        }
        match hit {
            Some(Fault::Stall(ms)) => {
                drop(s);
                std::thread::sleep(std::time::Duration::from_millis(ms));
                Ok(())
            }
            Some(fault) => {
                s.injected += 1;
                Err((fault, os_error(fault.errno(), &format!("{op:?}"), path)))
            }
            None => Ok(()),
        }
    }

    fn gate(&self) -> std::sync::RwLockReadGuard<'_, ()> {
        self.gate.read().unwrap_or_else(|e| e.into_inner())
    }

    fn track_new(&self, path: &Path) {
        let mut s = self.lock();
        s.files.insert(path.to_path_buf(), Tracked::default());
    }

    fn this(&self) -> Arc<FaultFileSystem> {
        // `self` is borrowed, so the Arc it lives in is alive.
        self.me
            .upgrade()
            .expect("a FaultFileSystem lives in an Arc")
    }

    fn wrap(&self, path: &Path, inner: Box<dyn FsOutput>) -> Box<dyn FsOutput> {
        Box::new(FaultOutput {
            fs: self.this(),
            path: path.to_path_buf(),
            inner: Some(inner),
            pending: Vec::new(),
            epoch: self.epoch.load(Ordering::SeqCst),
        })
    }
}

/// Moves the entries of `map` at or under `from` to the same place under `to`.
fn rekey<V>(map: &mut BTreeMap<PathBuf, V>, from: &Path, to: &Path) {
    let moved: Vec<PathBuf> = map
        .keys()
        .filter(|p| p.starts_with(from))
        .cloned()
        .collect();
    for p in moved {
        if let Some(v) = map.remove(&p) {
            let rest = p.strip_prefix(from).expect("under from");
            map.insert(to.join(rest), v);
        }
    }
}

impl FaultFileSystem {
    /// An open of `path` for reading (`open` or `open_no_checksum` of the inner filesystem),
    /// failed by a read rule or wrapped so its reads can be.
    fn open_with(
        &self,
        path: &Path,
        open: impl FnOnce(&dyn FileSystem) -> io::Result<Arc<dyn RawSource>>,
    ) -> io::Result<Arc<dyn RawSource>> {
        let _gate = self.gate();
        self.check(FaultOp::Read, path).map_err(|(_, e)| e)?;
        let inner = open(&*self.inner)?;
        Ok(Arc::new(FaultSource {
            fs: self.this(),
            path: path.to_path_buf(),
            inner,
        }))
    }

    /// A create of `path` (`create` or `create_direct` of the inner filesystem), failed by a
    /// create rule or tracked from here on.
    fn create_with(
        &self,
        path: &Path,
        create: impl FnOnce(&dyn FileSystem) -> io::Result<Box<dyn FsOutput>>,
    ) -> io::Result<Box<dyn FsOutput>> {
        let _gate = self.gate();
        self.check(FaultOp::Create, path).map_err(|(_, e)| e)?;
        let parents = path
            .parent()
            .map(|p| self.missing_dirs(p))
            .unwrap_or_default();
        let out = create(&*self.inner)?;
        self.track_new_dirs(parents);
        self.track_new(path);
        Ok(self.wrap(path, out))
    }
}

impl FileSystem for FaultFileSystem {
    fn uri(&self) -> String {
        format!("fault+{}", self.inner.uri())
    }

    fn open(&self, path: &Path) -> io::Result<Arc<dyn RawSource>> {
        self.open_with(path, |inner| inner.open(path))
    }

    fn open_no_checksum(&self, path: &Path) -> io::Result<Arc<dyn RawSource>> {
        self.open_with(path, |inner| inner.open_no_checksum(path))
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn FsOutput>> {
        self.create_with(path, |inner| inner.create(path))
    }

    fn create_direct(&self, path: &Path) -> io::Result<Box<dyn FsOutput>> {
        self.create_with(path, |inner| inner.create_direct(path))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let _gate = self.gate();
        self.check(FaultOp::Rename, from).map_err(|(_, e)| e)?;
        self.inner.rename(from, to)?;
        if self.inner.status(to).is_ok_and(|st| st.is_dir) {
            // A directory: what is tracked under it moves with it, and its new name is not
            // durable until its new parent is synced.
            let mut s = self.lock();
            rekey(&mut s.files, from, to);
            rekey(&mut s.dirs, from, to);
            let mut d = s.dirs.remove(to).unwrap_or(TrackedDir {
                name_durable: true,
                renamed_from: None,
            });
            d.renamed_from = if d.name_durable {
                Some(from.to_path_buf())
            } else {
                d.renamed_from.take()
            };
            d.name_durable = false;
            s.dirs.insert(to.to_path_buf(), d);
            return Ok(());
        }
        let mut s = self.lock();
        let mut t = s.files.remove(from).unwrap_or(Tracked {
            // Not written here: all of it was durable.
            written: u64::MAX,
            synced: u64::MAX,
            lost: Vec::new(),
            name_durable: true,
            renamed_from: None,
        });
        t.renamed_from = if t.name_durable {
            Some(from.to_path_buf())
        } else {
            t.renamed_from.take()
        };
        t.name_durable = false;
        s.files.insert(to.to_path_buf(), t);
        Ok(())
    }

    fn delete(&self, path: &Path) -> io::Result<bool> {
        let _gate = self.gate();
        self.check(FaultOp::Delete, path).map_err(|(_, e)| e)?;
        let deleted = self.inner.delete(path)?;
        let mut s = self.lock();
        s.files.retain(|p, _| !p.starts_with(path));
        s.dirs.retain(|p, _| !p.starts_with(path));
        Ok(deleted)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<FileStatus>> {
        let _gate = self.gate();
        self.check(FaultOp::Read, dir).map_err(|(_, e)| e)?;
        self.inner.list(dir)
    }

    fn mkdirs(&self, dir: &Path) -> io::Result<()> {
        let _gate = self.gate();
        self.check(FaultOp::Mkdirs, dir).map_err(|(_, e)| e)?;
        let missing = self.missing_dirs(dir);
        self.inner.mkdirs(dir)?;
        self.track_new_dirs(missing);
        Ok(())
    }

    fn status(&self, path: &Path) -> io::Result<FileStatus> {
        let _gate = self.gate();
        self.check(FaultOp::Read, path).map_err(|(_, e)| e)?;
        self.inner.status(path)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let _gate = self.gate();
        self.check(FaultOp::SyncDir, dir).map_err(|(_, e)| e)?;
        self.inner.sync_dir(dir)?;
        let mut s = self.lock();
        for (p, t) in s.files.iter_mut() {
            if p.parent() == Some(dir) {
                t.name_durable = true;
                t.renamed_from = None;
            }
        }
        for (p, d) in s.dirs.iter_mut() {
            if p.parent() == Some(dir) {
                d.name_durable = true;
                d.renamed_from = None;
            }
        }
        Ok(())
    }

    fn recover_lease(&self, path: &Path) -> io::Result<bool> {
        let _gate = self.gate();
        self.check(FaultOp::Read, path).map_err(|(_, e)| e)?;
        self.inner.recover_lease(path)
    }

    /// An `hsync` of a closed file: its bytes are durable from here (a failed one loses
    /// them as a failed `hsync` does).
    fn sync_file(&self, path: &Path) -> io::Result<()> {
        let _gate = self.gate();
        let failed = self.check(FaultOp::Hsync, path).err();
        let mut s = self.lock();
        if let Some(t) = s.files.get_mut(path) {
            if t.written > t.synced {
                if failed.is_some() {
                    let r = t.synced..t.written;
                    t.lost.push(r);
                }
                t.synced = t.written;
            }
        }
        drop(s);
        match failed {
            Some((_, e)) => Err(e),
            None => self.inner.sync_file(path),
        }
    }
}

#[cfg(test)]
mod tests;
