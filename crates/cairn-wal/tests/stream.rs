//! The streamed WAL (the one used on HDFS), run over the local disk through a FileSystem that
//! does not call itself local: round trips across rolls, group commit, ASYNC_WAL's background
//! sync, archiving flushed files, a torn tail, a writer that died without closing.

mod common;

use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cairn_fs::{FileStatus, FileSystem, FsOutput, LocalFileSystem, RawSource};
use cairn_wal::{Durability, Wal, WalEdit, WalOptions};
use common::edit;

/// The local filesystem under another name, so the WAL streams instead of mapping; it
/// counts the syncs of the files it writes.
#[derive(Debug)]
struct Streamed(LocalFileSystem, Arc<Syncs>);

/// `hflush` and `hsync` calls on a [`Streamed`] filesystem's files.
#[derive(Debug, Default)]
struct Syncs {
    hflush: AtomicU64,
    hsync: AtomicU64,
}

impl Syncs {
    fn get(&self) -> (u64, u64) {
        (
            self.hflush.load(Ordering::SeqCst),
            self.hsync.load(Ordering::SeqCst),
        )
    }
}

/// A file of a [`Streamed`] filesystem.
struct Counted(Box<dyn FsOutput>, Arc<Syncs>);

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl FsOutput for Counted {
    fn hflush(&mut self) -> io::Result<()> {
        self.1.hflush.fetch_add(1, Ordering::SeqCst);
        self.0.hflush()
    }
    fn hsync(&mut self) -> io::Result<()> {
        self.1.hsync.fetch_add(1, Ordering::SeqCst);
        self.0.hsync()
    }
    fn close(self: Box<Self>) -> io::Result<()> {
        self.0.close()
    }
}

impl FileSystem for Streamed {
    fn uri(&self) -> String {
        "streamed-local://".into()
    }
    fn open(&self, path: &Path) -> io::Result<Arc<dyn RawSource>> {
        self.0.open(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn FsOutput>> {
        Ok(Box::new(Counted(self.0.create(path)?, self.1.clone())))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.0.rename(from, to)
    }
    fn delete(&self, path: &Path) -> io::Result<bool> {
        self.0.delete(path)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<FileStatus>> {
        self.0.list(dir)
    }
    fn mkdirs(&self, dir: &Path) -> io::Result<()> {
        self.0.mkdirs(dir)
    }
    fn status(&self, path: &Path) -> io::Result<FileStatus> {
        self.0.status(path)
    }
}

fn fs() -> Arc<dyn FileSystem> {
    Arc::new(Streamed(LocalFileSystem, Arc::default()))
}

fn open(dir: &Path, options: WalOptions) -> (Wal, Vec<WalEdit>, cairn_wal::ReplayReport) {
    let mut edits = Vec::new();
    let (wal, report) = Wal::open_on(fs(), &common::loc(dir), options, |e| {
        edits.push(e);
        Ok(())
    })
    .unwrap();
    (wal, edits, report)
}

fn rolls(roll_size: u64) -> WalOptions {
    WalOptions {
        roll_size,
        ..WalOptions::default()
    }
}

#[test]
fn round_trip_across_rolls_and_segment_deletion() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, replayed, _) = open(dir.path(), rolls(4096));
    assert!(replayed.is_empty());
    let mut appended = Vec::new();
    for i in 0..600u64 {
        let region = ["a", "b"][(i % 2) as usize];
        let e = edit(region, 100 + i, 1 + (i % 3) as usize);
        let d = [
            Durability::SyncWal,
            Durability::FsyncWal,
            Durability::AsyncWal,
        ][(i % 3) as usize];
        wal.append(&e, d).unwrap();
        appended.push(e);
    }
    let segments = wal.segments();
    assert!(segments.len() > 3, "{} segments", segments.len());
    assert!(wal.stats().rolls >= 3);
    wal.close().unwrap();

    let (wal, replayed, report) = open(dir.path(), rolls(4096));
    assert_eq!(replayed, appended);
    assert!(report.dropped.is_empty(), "{:?}", report.dropped);
    assert_eq!(report.max_sequence_id[&b"a".to_vec()], 698);
    assert_eq!(report.max_sequence_id[&b"b".to_vec()], 699);
    assert!(report.files.iter().all(|f| f.closed), "{:?}", report.files);
    // Flushing both regions past everything releases every closed file, to the archive.
    assert_eq!(wal.mark_flushed(b"a", 698).unwrap(), 0);
    let retired = wal.mark_flushed(b"b", 699).unwrap();
    assert!(retired > 3, "{retired}");
    assert_eq!(wal.segments().len(), 1);
    let archive = common::loc(dir.path()).archive_dir();
    assert_eq!(common::files_in(&archive).len(), retired);
    wal.close().unwrap();
    let (_, replayed, _) = open(dir.path(), rolls(4096));
    assert!(replayed.is_empty());
}

/// As HBase's FSHLog: SYNC_WAL waits for an `hflush` (every DataNode holds the bytes), only
/// FSYNC_WAL and an explicit `sync(true)` for an `hsync` (on disk at each); a sync that an
/// earlier one covers costs nothing.
#[test]
fn sync_wal_hflushes_and_fsync_wal_hsyncs() {
    let dir = tempfile::tempdir().unwrap();
    let syncs = Arc::new(Syncs::default());
    let fs: Arc<dyn FileSystem> = Arc::new(Streamed(LocalFileSystem, syncs.clone()));
    let (wal, _) = Wal::open_on(fs, &common::loc(dir.path()), WalOptions::default(), |_| {
        Ok(())
    })
    .unwrap();
    let start = syncs.get();
    let since = |(f, s): (u64, u64)| (f - start.0, s - start.1);
    wal.append(&edit("a", 1, 1), Durability::SyncWal).unwrap();
    assert_eq!(since(syncs.get()), (1, 0), "SYNC_WAL: one hflush");
    wal.sync(false).unwrap();
    assert_eq!(since(syncs.get()), (1, 0), "already flushed");
    wal.sync(true).unwrap();
    assert_eq!(since(syncs.get()), (1, 1), "hflushed is not hsynced");
    wal.append(&edit("a", 2, 1), Durability::FsyncWal).unwrap();
    assert_eq!(since(syncs.get()), (1, 2), "FSYNC_WAL: one hsync");
    wal.sync(false).unwrap();
    assert_eq!(since(syncs.get()), (1, 2), "hsynced covers hflushed");
    wal.append(&edit("a", 3, 1), Durability::SyncWal).unwrap();
    assert_eq!(since(syncs.get()), (2, 2));
}

#[test]
fn sync_wal_appends_are_in_the_file_when_they_return() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _, _) = open(dir.path(), WalOptions::default());
    let e = edit("r", 7, 2);
    wal.append(&e, Durability::SyncWal).unwrap();
    // Read the segment behind the open WAL's back: the record is there.
    let seg = &wal.segments()[0];
    let mut found = Vec::new();
    let scan = cairn_wal::file::scan_file(&seg.path, |_, e| {
        found.push(e);
        Ok(())
    })
    .unwrap();
    assert!(scan.dropped.is_none());
    assert_eq!(found, vec![e]);
    // Concurrent SYNC_WAL appenders share commits.
    let wal = Arc::new(wal);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let wal = wal.clone();
            s.spawn(move || {
                for i in 0..200 {
                    wal.append(&edit("r", 1000 + t * 1000 + i, 1), Durability::SyncWal)
                        .unwrap();
                }
            });
        }
    });
    let stats = wal.stats();
    assert_eq!(stats.appends, 801);
    assert!(stats.batches <= 801 && stats.batches >= 1);
}

#[test]
fn async_wal_is_synced_by_the_background_thread() {
    let dir = tempfile::tempdir().unwrap();
    let options = WalOptions {
        async_sync_interval: Duration::from_millis(20),
        ..WalOptions::default()
    };
    let (wal, _, _) = open(dir.path(), options);
    let e = edit("r", 9, 1);
    wal.append(&e, Durability::AsyncWal).unwrap();
    let path = wal.segments()[0].path.clone();
    let mut seen = false;
    for _ in 0..200 {
        let mut found = Vec::new();
        cairn_wal::file::scan_file(&path, |_, e| {
            found.push(e);
            Ok(())
        })
        .unwrap();
        if found == vec![e.clone()] {
            seen = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(seen, "the ASYNC_WAL edit never reached the file");
    // Never closed: a writer that died. The next open replays what was synced.
    std::mem::forget(wal);
    let (wal, replayed, report) = open(dir.path(), WalOptions::default());
    assert_eq!(replayed, vec![e]);
    assert!(report.dropped.is_empty());
    wal.close().unwrap();
}

#[test]
fn a_torn_tail_is_replayed_up_to_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _, _) = open(dir.path(), WalOptions::default());
    let edits: Vec<_> = (0..5).map(|i| edit("r", 10 + i, 2)).collect();
    for e in &edits {
        wal.append(e, Durability::SyncWal).unwrap();
    }
    let path = wal.segments()[0].path.clone();
    wal.close().unwrap();
    // Into the last entry (a cut into the trailer alone would be a clean end).
    let len = std::fs::metadata(&path).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len - 8 - 3)
        .unwrap();
    let (wal, replayed, report) = open(dir.path(), WalOptions::default());
    assert_eq!(replayed, edits[..4].to_vec());
    assert_eq!(report.dropped.len(), 1);
    assert_eq!(report.dropped[0].segment, path);
    // New edits go to a new file and replay after the old ones.
    let more = edit("r", 99, 1);
    wal.append(&more, Durability::SyncWal).unwrap();
    wal.close().unwrap();
    let (_, replayed, _) = open(dir.path(), WalOptions::default());
    assert_eq!(replayed.last(), Some(&more));
    assert_eq!(replayed.len(), 5);
}
