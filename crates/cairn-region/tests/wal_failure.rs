//! A WAL whose sync fails is set aside and the server recovers by itself: writes are refused
//! (reads go on) until the background thread has started a new WAL segment and flushed every
//! memstore, then taken again, with no restart; a disk still full keeps writes refused until
//! it is freed; after a machine crash every acknowledged put is back. Runs over the
//! fault-injection filesystem, through which the WAL writes its stream segments (`hflush` for
//! SYNC_WAL, as on HDFS, where the region server's machine dying leaves the DataNodes' copies:
//! the crash here keeps hflushed WAL bytes).

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_fs::fault::{Fault, FaultFileSystem, FaultOp, FaultRule};
use cairn_fs::{FileSystem, LocalFileSystem};
use cairn_region::{
    ColumnFamilyDescriptor, Get, Put, RegionError, RegionServer, ServerConfig, TableDescriptor,
    TableName,
};

fn open(dir: &Path, fs: &Arc<FaultFileSystem>) -> Arc<RegionServer> {
    let mut c = ServerConfig::new(dir);
    let fs: Arc<dyn FileSystem> = fs.clone();
    c.region.fs = fs.clone();
    c.wal_fs = Some(fs);
    c.wal_dir = Some(dir.to_path_buf());
    RegionServer::open(c).unwrap()
}

fn table(s: &RegionServer) -> TableName {
    let t = TableName::parse("w").unwrap();
    if s.table(&t).is_err() {
        s.create_table(
            TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f")),
            &[],
        )
        .unwrap();
    }
    t
}

fn put(s: &RegionServer, t: &TableName, n: u32) -> Result<(), RegionError> {
    let row = format!("row{n:06}");
    s.put(t, &Put::new(&row).add("f", "q", row.as_bytes()))
}

fn check(s: &RegionServer, t: &TableName, acked: &[u32]) {
    for &n in acked {
        let row = format!("row{n:06}");
        let got = s.get(t, Get::new(row.as_bytes())).unwrap();
        assert_eq!(got.len(), 1, "{row} lost");
        assert_eq!(got[0].as_cell().value, row.as_bytes());
    }
}

/// Puts row `n` until it is taken (the server recovering by itself), or fails the test.
fn put_when_recovered(s: &RegionServer, t: &TableName, n: u32) {
    let started = Instant::now();
    while let Err(e) = put(s, t, n) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "writes never resumed: {e}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_failed_wal_sync_refuses_writes_until_the_server_recovers_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFileSystem::new(Arc::new(LocalFileSystem), 7);
    fs.set_hflush_survives(Some("WALs"));
    let s = open(dir.path(), &fs);
    let t = table(&s);
    let mut acked = Vec::new();
    for n in 0..100 {
        put(&s, &t, n).unwrap();
        acked.push(n);
    }

    // One failed hflush of the WAL (SYNC_WAL's sync): that put is refused, and so is every put after it until
    // the WAL is recovered.
    fs.add_rule(
        FaultRule::new(FaultOp::Hflush, Fault::Io)
            .on_paths_containing("WALs")
            .times(1),
    );
    let e = put(&s, &t, 100).unwrap_err().to_string();
    assert!(e.contains("hflush") && e.contains("WALs"), "{e}");
    let failure = s.write_failure().expect("the WAL failed");
    assert_eq!(
        failure.matches("Input/output error").count(),
        1,
        "{failure}"
    );
    // Reads go on meanwhile.
    check(&s, &t, &acked);
    put_when_recovered(&s, &t, 101);
    acked.push(101);
    assert_eq!(s.write_failure(), None);
    // Recovery flushed every memstore: what the set-aside segment held is in store files.
    let region = s.table(&t).unwrap().regions[0].clone();
    assert!(region.store(b"f").unwrap().file_count() >= 1);

    // A failure while the disk is full: recovery cannot flush, so writes stay refused until
    // space is freed.
    fs.set_full(true);
    fs.add_rule(
        FaultRule::new(FaultOp::Hflush, Fault::Io)
            .on_paths_containing("WALs")
            .times(1),
    );
    assert!(put(&s, &t, 102).is_err());
    std::thread::sleep(Duration::from_secs(2));
    let refused = put(&s, &t, 103).unwrap_err().to_string();
    assert!(
        refused.contains("refused until the WAL recovers"),
        "{refused}"
    );
    check(&s, &t, &acked);
    fs.set_full(false);
    put_when_recovered(&s, &t, 104);
    acked.push(104);
    for n in 105..200 {
        put(&s, &t, n).unwrap();
        acked.push(n);
    }
    check(&s, &t, &acked);

    // A machine crash: only what was synced survives, and that is every acknowledged put.
    fs.deactivate(io::Error::other("machine crashed"));
    drop(s);
    fs.crash().unwrap();
    let s = open(dir.path(), &fs);
    check(&s, &t, &acked);
    // Refused puts were never applied; whether their WAL records survived is open, but
    // nothing else appears.
    for n in 200..210 {
        let row = format!("row{n:06}");
        assert!(s.get(&t, Get::new(row.as_bytes())).unwrap().is_empty());
    }
    s.close().unwrap();
}
