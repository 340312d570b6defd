//! The region store on a real HDFS (MiniDFSCluster from interop/hdfs): tables, flushes,
//! compactions, WAL replay and restarts with the root and the WAL on `hdfs://`; reads past a
//! damaged replica of a store file; SIGKILL during SYNC_WAL puts, recovered through lease
//! recovery.
#![cfg(feature = "hdfs")]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::Duration;

use cairn_fs::minidfs::MiniDfs;
use cairn_fs::{hdfs_stats, FileSystem, HdfsFileSystem};
use cairn_region::{
    ColumnFamilyDescriptor, Delete, Get, Put, RegionServer, Scan, ServerConfig, TableDescriptor,
    TableName,
};

fn config(url: &str, background: bool) -> ServerConfig {
    let mut c = ServerConfig::from_uri(&format!("{url}/hbase")).unwrap();
    c.background = background;
    c.region.compaction.min_files = 3;
    c.region.compaction.min_size = 1;
    c
}

fn value(cells: &[cairn_cell::KeyValue]) -> Vec<Vec<u8>> {
    cells.iter().map(|c| c.as_cell().value.to_vec()).collect()
}

fn store_files(fs: &HdfsFileSystem, table: &str) -> Vec<String> {
    let mut out = Vec::new();
    let tdir = Path::new("/hbase/data/default").join(table);
    for r in fs.list(&tdir).unwrap() {
        if !r.is_dir
            || r.path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with('.')
        {
            continue;
        }
        for f in fs.list(&r.path).unwrap() {
            if f.is_dir && f.path.file_name().unwrap() == "f" {
                for h in fs.list(&f.path).unwrap() {
                    out.push(h.path.display().to_string());
                }
            }
        }
    }
    out
}

#[test]
fn region_store_on_hdfs() {
    let Some(cluster) = MiniDfs::start(1).unwrap() else {
        return;
    };
    let t = TableName::parse("t").unwrap();
    let s = RegionServer::open(config(cluster.url(), false)).unwrap();
    let mut family = ColumnFamilyDescriptor::new("f");
    family.max_versions = 3;
    s.create_table(
        TableDescriptor::new(t.clone()).with_family(family),
        &[b"m".to_vec()],
    )
    .unwrap();
    for i in 0..300u32 {
        let row = format!("{}{i:04}", if i % 2 == 0 { "a" } else { "z" });
        for v in 0..2i64 {
            s.put(
                &t,
                &Put::with_timestamp(&row, 100 + v).add("f", "q", format!("{row}-{v}")),
            )
            .unwrap();
        }
    }
    s.delete(&t, &Delete::new("a0000")).unwrap();
    s.flush_table(&t).unwrap();
    let fs = HdfsFileSystem::connect(cluster.url()).unwrap();
    let files = store_files(&fs, "t");
    assert_eq!(files.len(), 2, "{files:?}");
    // A second flush and a major compaction, through HDFS renames and deletes.
    for i in 0..50u32 {
        let row = format!("a{i:04}");
        s.put(&t, &Put::with_timestamp(&row, 200).add("f", "q", "late"))
            .unwrap();
    }
    s.flush_table(&t).unwrap();
    // Only the first region had new rows.
    assert_eq!(store_files(&fs, "t").len(), 3);
    s.compact_table(&t, true).unwrap();
    assert_eq!(store_files(&fs, "t").len(), 2);

    let check = |s: &RegionServer, extra: usize| {
        assert!(s.get(&t, Get::new("a0000")).unwrap().is_empty());
        assert_eq!(
            value(&s.get(&t, Get::new("a0002").versions(5)).unwrap()),
            vec![b"late".to_vec(), b"a0002-1".to_vec(), b"a0002-0".to_vec()]
        );
        assert_eq!(
            value(&s.get(&t, Get::new("z0299")).unwrap()),
            vec![b"z0299-1".to_vec()]
        );
        let rows: Vec<_> = s
            .scanner(&t, Scan::new())
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        // 300 rows, one deleted, 25 new ones (a0001, a0003, ...) from the late puts.
        assert_eq!(rows.len(), 324 + extra);
    };
    check(&s, 0);

    // Unflushed edits live only in the WAL on HDFS: a server dropped without closing
    // (nothing flushed) replays them at the next open.
    s.put(&t, &Put::new("unflushed").add("f", "q", "from-the-wal"))
        .unwrap();
    drop(s);
    let s = RegionServer::open(config(cluster.url(), false)).unwrap();
    assert_eq!(
        value(&s.get(&t, Get::new("unflushed")).unwrap()),
        vec![b"from-the-wal".to_vec()]
    );
    check(&s, 1);
    assert!(
        fs.list(Path::new("/hbase/WALs")).is_ok(),
        "the WAL is not under the HDFS root"
    );
    s.disable_table(&t).unwrap();
    s.delete_table(&t).unwrap();
    assert!(!fs.exists(Path::new("/hbase/data/default/t")).unwrap());
    s.close().unwrap();
}

/// `cairn compact`'s offline compaction (HBase's CompactionTool) on a table directory given
/// as an `hdfs://` URI: it finds the table's family directories there, compacts each to one
/// file through HDFS, and a server reopened on the root reads every row.
#[test]
fn offline_compaction_of_an_hdfs_table() {
    let Some(cluster) = MiniDfs::start(1).unwrap() else {
        return;
    };
    let t = TableName::parse("offline").unwrap();
    let s = RegionServer::open(config(cluster.url(), false)).unwrap();
    s.create_table(
        TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f")),
        &[b"m".to_vec()],
    )
    .unwrap();
    for round in 0..3u32 {
        for i in 0..100u32 {
            let row = format!("{}{i:03}", if i % 2 == 0 { "a" } else { "z" });
            s.put(&t, &Put::new(&row).add("f", "q", format!("{row}-{round}")))
                .unwrap();
        }
        s.flush_table(&t).unwrap();
    }
    s.close().unwrap();
    let fs = HdfsFileSystem::connect(cluster.url()).unwrap();
    assert_eq!(
        store_files(&fs, "offline").len(),
        6,
        "3 flushes x 2 regions"
    );

    let url = format!("{}/hbase/data/default/offline", cluster.url());
    let stores = cairn_region::offline::family_dirs(&url).unwrap();
    assert_eq!(stores.len(), 2, "one family directory per region");
    for store in &stores {
        assert!(store.uri().starts_with("hdfs://"), "{}", store.uri());
        let report = cairn_region::offline::compact_family(
            store,
            true,
            false,
            &cairn_region::compaction::CompactionConfig::default(),
            |_| {},
        )
        .unwrap();
        assert_eq!((report.files_before, report.files_after), (3, 1));
    }
    assert_eq!(store_files(&fs, "offline").len(), 2);

    let s = RegionServer::open(config(cluster.url(), false)).unwrap();
    let rows: Vec<_> = s
        .scanner(&t, Scan::new())
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(rows.len(), 100);
    assert_eq!(
        value(&s.get(&t, Get::new("z099")).unwrap()),
        vec![b"z099-2".to_vec()]
    );
    s.close().unwrap();
}

#[test]
fn a_damaged_replica_of_a_store_file_is_read_around() {
    let Some(mut cluster) = MiniDfs::start(3).unwrap() else {
        return;
    };
    let t = TableName::parse("d").unwrap();
    let s = RegionServer::open(config(cluster.url(), false)).unwrap();
    s.create_table(
        TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f")),
        &[],
    )
    .unwrap();
    for i in 0..2000u32 {
        let row = format!("r{i:05}");
        s.put(&t, &Put::new(&row).add("f", "q", row.repeat(20)))
            .unwrap();
    }
    s.flush_table(&t).unwrap();
    s.close().unwrap();
    drop(s);
    let fs = HdfsFileSystem::connect(cluster.url()).unwrap();
    let files = store_files(&fs, "d");
    assert_eq!(files.len(), 1);
    let damaged = cluster.corrupt_one_replica(&files[0]).unwrap();
    assert!(damaged.starts_with("1 "), "{damaged}");
    let bad_dn = damaged.rsplit('/').next().unwrap().to_string();
    let before = hdfs_stats().checksum_failures.load(Ordering::Relaxed);
    let hfile_before = cairn_hfile::checksum_failures();
    // Fresh servers (no block cache carried over) read every row from the file, starting at
    // its first block, where the damage is; each must see the right bytes. Store files are
    // read without HDFS's checksums: the damaged block fails cairn's own checksum first
    // (fsChecksumFailureCount), and is then read again with HDFS's, which names the replica.
    let mut met = false;
    for _ in 0..20 {
        let s = RegionServer::open(config(cluster.url(), false)).unwrap();
        for i in (0..2000u32).step_by(97) {
            let row = format!("r{i:05}");
            assert_eq!(
                value(&s.get(&t, Get::new(&row)).unwrap()),
                vec![row.repeat(20).into_bytes()]
            );
        }
        s.close().unwrap();
        if hdfs_stats().checksum_failures.load(Ordering::Relaxed) > before {
            met = true;
            break;
        }
    }
    assert!(met, "20 opens never read the damaged replica ({damaged})");
    assert!(cairn_hfile::checksum_failures() > hfile_before);
    let bad = hdfs_stats().bad_replicas();
    let last = bad.last().expect("the bad replica is named");
    assert_eq!(last.datanode, bad_dn, "{last}");
    assert!(last.file.ends_with(&files[0]), "{last}");
}

const CHILD_ENV: &str = "CAIRN_HDFS_CRASH_URL";

/// A child process killed when the test gives up on it.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The child of the crash test: SYNC_WAL puts on HDFS until killed, printing each ack.
#[test]
fn hdfs_crash_child() {
    let Ok(url) = std::env::var(CHILD_ENV) else {
        return;
    };
    let trial: u32 = std::env::var("CAIRN_CRASH_TRIAL").unwrap().parse().unwrap();
    let s = RegionServer::open(config(&url, true)).unwrap();
    let t = TableName::parse("crash").unwrap();
    if s.table(&t).is_err() {
        let mut d = TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f"));
        d.memstore_flush_size = Some(256 * 1024);
        s.create_table(d, &[b"k05".to_vec()]).unwrap();
    }
    println!("ready");
    let threads: Vec<_> = (0..2)
        .map(|th| {
            let s = s.clone();
            let t = t.clone();
            std::thread::spawn(move || {
                for n in 0u32.. {
                    let row = format!("k{:02}-{trial:03}-{th}-{n:07}", n % 10);
                    let put = Put::new(&row).add("f", "q", row.as_bytes());
                    // Flushes to HDFS are slower than these puts: back off as HBase's
                    // client does on RegionTooBusyException.
                    loop {
                        match s.put(&t, &put) {
                            Ok(()) => break,
                            Err(cairn_region::RegionError::RegionTooBusy { .. }) => {
                                std::thread::sleep(Duration::from_millis(20))
                            }
                            Err(e) => panic!("{e}"),
                        }
                    }
                    println!("ack {row}");
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
}

#[test]
fn every_acknowledged_put_survives_sigkill_on_hdfs() {
    let Some(cluster) = MiniDfs::start(1).unwrap() else {
        return;
    };
    let exe = std::env::current_exe().unwrap();
    let t = TableName::parse("crash").unwrap();
    let mut acked: Vec<String> = Vec::new();
    let trials = 5;
    for trial in 0..trials {
        let mut child = KillOnDrop(
            Command::new(&exe)
                .args([
                    "--exact",
                    "hdfs_crash_child",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(CHILD_ENV, cluster.url())
                .env("CAIRN_CRASH_TRIAL", trial.to_string())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let stdout = child.0.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut rows = Vec::new();
            for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
                // libtest prints the test's name on the same line first.
                if line.ends_with("ready") {
                    let _ = tx.send(());
                } else if let Some(row) = line.strip_prefix("ack ") {
                    rows.push(row.to_string());
                }
            }
            rows
        });
        // Kill once it is writing (recovery of the previous trial included), at a moment
        // that varies by trial.
        rx.recv_timeout(Duration::from_secs(120))
            .expect("the child never became ready");
        std::thread::sleep(Duration::from_millis(300 + 250 * trial as u64));
        child.0.kill().unwrap();
        child.0.wait().unwrap();
        let new = reader.join().unwrap();
        assert!(
            !new.is_empty(),
            "trial {trial}: the child acknowledged nothing"
        );
        let s = RegionServer::open(config(cluster.url(), false)).unwrap();
        let report = s.recovery.clone();
        for chunk in new.chunks(500) {
            let gets = chunk.iter().map(|r| Get::new(r.as_bytes())).collect();
            for (row, cells) in chunk.iter().zip(s.get_many(&t, gets).unwrap()) {
                assert_eq!(
                    value(&cells),
                    vec![row.clone().into_bytes()],
                    "trial {trial}: acknowledged put {row} lost after SIGKILL on HDFS \
                     (recovery: {report:?})"
                );
            }
        }
        s.close().unwrap();
        acked.extend(new);
    }
    let s = RegionServer::open(config(cluster.url(), false)).unwrap();
    for chunk in acked.chunks(500) {
        let gets = chunk.iter().map(|r| Get::new(r.as_bytes())).collect();
        for (row, cells) in chunk.iter().zip(s.get_many(&t, gets).unwrap()) {
            assert_eq!(value(&cells), vec![row.clone().into_bytes()], "{row}");
        }
    }
    eprintln!(
        "{trials} SIGKILL trials on HDFS, {} acknowledged puts all recovered",
        acked.len()
    );
    s.close().unwrap();
}
