//! A full disk, on a real small filesystem: a tmpfs the test mounts (it needs root; where it
//! cannot mount, it says so and the fault-injection suite covers the same paths). Writes are
//! refused with a clear error while the disk is full, reads go on, and once space is freed
//! writes resume by themselves, with every acknowledged put still there after a restart.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_region::{
    ColumnFamilyDescriptor, Get, Put, RegionError, RegionServer, ServerConfig, TableDescriptor,
    TableName,
};

/// A tmpfs of a given size, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(mib: u64) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("cannot mount a tmpfs here (not root?): skipping the real-disk test");
            return None;
        }
        Some(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Fills the filesystem of `dir` with one file until it refuses a single byte more.
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("ballast");
    let mut f = std::fs::File::create(&path).unwrap();
    for chunk in [1 << 20, 4096, 1] {
        let buf = vec![7u8; chunk];
        while f.write_all(&buf).is_ok() {}
    }
    let _ = f.sync_all();
    path
}

fn open(root: &Path, block_multiplier: u64) -> Result<Arc<RegionServer>, RegionError> {
    let mut c = ServerConfig::new(root);
    c.region.block_multiplier = block_multiplier;
    RegionServer::open(c)
}

fn table(s: &RegionServer) -> TableName {
    let t = TableName::parse("full").unwrap();
    if s.table(&t).is_err() {
        let mut d = TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f"));
        d.memstore_flush_size = Some(1 << 20);
        s.create_table(d, &[]).unwrap();
    }
    t
}

fn value(row: &str) -> Vec<u8> {
    row.as_bytes().repeat(4096 / row.len())
}

/// Puts `count` rows, waiting out RegionTooBusy (the flusher catching up) as a client would.
fn put_many(s: &RegionServer, t: &TableName, count: u64, next: &mut u64, acked: &mut Vec<String>) {
    for _ in 0..count {
        let started = Instant::now();
        loop {
            match put(s, t, *next) {
                Ok(row) => break acked.push(row),
                Err(RegionError::RegionTooBusy { .. })
                    if started.elapsed() < Duration::from_secs(30) =>
                {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Err(e) => panic!("put {next} failed: {e}"),
            }
        }
        *next += 1;
    }
}

fn put(s: &RegionServer, t: &TableName, n: u64) -> Result<String, RegionError> {
    let row = format!("row{n:08}");
    s.put(t, &Put::new(&row).add("f", "q", value(&row)))
        .map(|()| row)
}

/// Puts until writes have been refused for a while; returns the rows acknowledged and the
/// distinct messages of the refusals.
fn put_until_refused(
    s: &RegionServer,
    t: &TableName,
    next: &mut u64,
    acked: &mut Vec<String>,
) -> Vec<String> {
    let mut messages = Vec::new();
    let mut refused = 0;
    let started = Instant::now();
    while refused < 50 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "writes never stopped"
        );
        match put(s, t, *next) {
            Ok(row) => {
                acked.push(row);
                *next += 1;
            }
            Err(e) => {
                refused += 1;
                let m = e.to_string();
                if !messages.contains(&m) {
                    messages.push(m);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
    messages
}

fn check_all(s: &RegionServer, t: &TableName, rows: &[String], when: &str) {
    for row in rows {
        let got = s.get(t, Get::new(row.as_bytes())).unwrap();
        assert_eq!(got.len(), 1, "{row} lost ({when})");
        assert_eq!(
            got[0].as_cell().value,
            &value(row)[..],
            "{row} has the wrong value"
        );
    }
}

/// Waits until a put goes through again, with no restart.
fn resumes(s: &RegionServer, t: &TableName, next: &mut u64, acked: &mut Vec<String>) {
    let started = Instant::now();
    loop {
        match put(s, t, *next) {
            Ok(row) => {
                acked.push(row);
                *next += 1;
                return;
            }
            Err(e) => assert!(
                started.elapsed() < Duration::from_secs(30),
                "writes did not resume after space was freed: {e}; write failure {:?}; regions {:?}",
                s.write_failure(),
                s.region_metrics()
            ),
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn no_temporary_files_left(root: &Path) {
    let mut stack = vec![root.join("data")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                if e.file_name() == ".tmp" {
                    let left: Vec<_> = walk_files(&e.path());
                    assert!(left.is_empty(), "partial files left behind: {left:?}");
                }
                stack.push(e.path());
            }
        }
    }
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            out.extend(walk_files(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

/// A refusal names one cause once, with the path.
fn check_messages(messages: &[String]) {
    assert!(!messages.is_empty());
    for m in messages {
        let enospc = m.matches("No space left on device").count();
        assert!(enospc <= 1, "the cause said {enospc} times: {m}");
        assert!(
            enospc == 0 || m.contains('/'),
            "a disk error names its file: {m}"
        );
    }
}

/// `close`: whether the server is closed (flushing everything) before it is opened again, or
/// dropped as a crashed process leaves it (the WAL replays what the stores lack).
fn run(block_multiplier: u64, expect: &str, close: bool) {
    let Some(fs) = Tmpfs::mount(64) else {
        return;
    };
    let root = fs.path().join("cairn");
    // With 64 MiB free the server starts: its WAL segment is sized to what is free.
    let s = open(&root, block_multiplier).unwrap();
    let t = table(&s);
    let (mut next, mut acked) = (0u64, Vec::new());
    put_many(&s, &t, 500, &mut next, &mut acked);
    let ballast = fill(fs.path());
    let messages = put_until_refused(&s, &t, &mut next, &mut acked);
    check_messages(&messages);
    assert!(
        messages.iter().any(|m| m.contains(expect)),
        "expected a refusal saying {expect:?}: {messages:#?}"
    );
    // Reads never stop.
    check_all(&s, &t, &acked, "while the disk is full");

    std::fs::remove_file(&ballast).unwrap();
    resumes(&s, &t, &mut next, &mut acked);
    put_many(&s, &t, 500, &mut next, &mut acked);
    check_all(&s, &t, &acked, "after writes resumed");
    if close {
        s.close().unwrap();
    }
    drop(s);
    no_temporary_files_left(&root);

    let s = open(&root, block_multiplier).unwrap();
    check_all(&s, &t, &acked, "after a restart");
    s.close().unwrap();
}

#[test]
fn a_full_disk_blocks_writes_with_memstore_backpressure_until_space_is_freed() {
    // Flushes fail, the memstore fills to 4 x its flush size, and writes are refused as
    // RegionTooBusy until a flush lands.
    run(4, "too busy", false);
}

#[test]
fn a_full_disk_blocks_wal_rolls_until_space_is_freed() {
    // A memstore allowed to grow to 32 MiB: the WAL (an eighth of the free space per
    // segment, about 15 MiB for the active and the prepared one) fills first and cannot
    // create the next segment.
    run(32, "No space left on device", true);
}

#[test]
fn a_server_says_once_how_much_space_it_needs_to_start() {
    let Some(fs) = Tmpfs::mount(16) else {
        return;
    };
    let ballast = fill(fs.path());
    // Leave 2 MiB.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&ballast)
        .unwrap();
    let len = f.metadata().unwrap().len();
    f.set_len(len - (2 << 20)).unwrap();
    drop(f);
    let e = open(&fs.path().join("cairn"), 4).unwrap_err().to_string();
    assert!(e.contains("needs at least 8.0 MiB"), "{e}");
    assert!(e.contains(&fs.path().display().to_string()), "{e}");
    assert_eq!(e.matches("MiB free").count(), 1, "{e}");
}

#[test]
fn a_full_disk_leaves_blocks_out_of_a_file_bucket_cache_and_reads_go_on() {
    use cairn_blockcache::{BlockCacheConfig, BucketCacheConfig, IoEngineKind};
    let Some(fs) = Tmpfs::mount(64) else {
        return;
    };
    let root = fs.path().join("cairn");
    let mut c = ServerConfig::new(&root);
    // A tiny L1 and a file-backed L2 on the same small disk: the cache file is sparse, so
    // each block written into it needs space the full disk no longer has.
    c.block_cache = Some(BlockCacheConfig {
        l1_size: 256 << 10,
        l2: Some(BucketCacheConfig {
            capacity: 16 << 20,
            engine: IoEngineKind::File {
                path: fs.path().join("bucket.cache"),
            },
            ..BucketCacheConfig::default()
        }),
    });
    let s = RegionServer::open(c).unwrap();
    let t = table(&s);
    let (mut next, mut acked) = (0u64, Vec::new());
    put_many(&s, &t, 1500, &mut next, &mut acked);
    s.flush_table(&t).unwrap();
    let ballast = fill(fs.path());
    let rejected = || s.block_cache().unwrap().stats().1.unwrap().rejected_count;
    let before = rejected();
    check_all(&s, &t, &acked, "with the cache file's disk full");
    // The bucket cache writes on its own threads: give them a moment to try.
    let started = Instant::now();
    while rejected() == before && started.elapsed() < Duration::from_secs(10) {
        check_all(&s, &t, &acked, "with the cache file's disk full");
    }
    assert!(
        rejected() > before,
        "no block write into the cache file failed"
    );
    std::fs::remove_file(&ballast).unwrap();
    check_all(&s, &t, &acked, "after space was freed");
    s.close().unwrap();
}
