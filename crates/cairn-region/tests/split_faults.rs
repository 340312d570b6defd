//! A split past its commit whose children fail to open: a passing fault is tried again and
//! the split completes; a lasting one leaves the parent closed, so that requests for its rows
//! fail at once (not each after the 30 s a transition is waited for), and the next open
//! finishes the split with every row there. Runs over the fault-injection filesystem.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_fs::fault::{Fault, FaultFileSystem, FaultOp, FaultRule};
use cairn_fs::{FileSystem, LocalFileSystem};
use cairn_region::{
    ColumnFamilyDescriptor, Get, Put, RegionError, RegionServer, ServerConfig, TableDescriptor,
    TableName,
};

const ROWS: u32 = 100;

fn open(dir: &Path, fs: &Arc<FaultFileSystem>) -> Arc<RegionServer> {
    let mut c = ServerConfig::new(dir);
    let fs: Arc<dyn FileSystem> = fs.clone();
    c.region.fs = fs.clone();
    c.wal_fs = Some(fs);
    c.wal_dir = Some(dir.to_path_buf());
    c.background = false;
    RegionServer::open(c).unwrap()
}

fn row(n: u32) -> String {
    format!("row{n:06}")
}

fn put(s: &RegionServer, t: &TableName, n: u32) -> Result<(), RegionError> {
    s.put(t, &Put::new(row(n)).add("f", "q", row(n).as_bytes()))
}

/// A table of [`ROWS`] rows in one region, flushed.
fn loaded(dir: &Path, fs: &Arc<FaultFileSystem>) -> (Arc<RegionServer>, TableName) {
    let s = open(dir, fs);
    let t = TableName::parse("sf").unwrap();
    s.create_table(
        TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f")),
        &[],
    )
    .unwrap();
    for n in 0..ROWS {
        put(&s, &t, n).unwrap();
    }
    s.flush_table(&t).unwrap();
    (s, t)
}

fn check(s: &RegionServer, t: &TableName) {
    for n in 0..ROWS {
        let got = s.get(t, Get::new(row(n).as_bytes())).unwrap();
        assert_eq!(got.len(), 1, "{} lost", row(n));
    }
}

/// Fails reads of `.regioninfo` (read only when a region opens) `times` times.
fn fail_opens(fs: &FaultFileSystem, times: u64) {
    fs.add_rule(
        FaultRule::new(FaultOp::Read, Fault::Io)
            .on_paths_containing(".regioninfo")
            .times(times),
    );
}

fn split(s: &RegionServer, t: &TableName) -> Result<(), RegionError> {
    let parent = s.table(t).unwrap().regions[0].info.clone();
    s.split_region(&parent.region_name_bytes(), Some(row(ROWS / 2).as_bytes()))
        .map(drop)
}

#[test]
fn a_child_failing_to_open_for_a_moment_is_opened_again() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFileSystem::new(Arc::new(LocalFileSystem), 1);
    let (s, t) = loaded(dir.path(), &fs);
    fail_opens(&fs, 2);
    split(&s, &t).unwrap();
    assert_eq!(fs.injected(), 2);
    assert_eq!(s.table(&t).unwrap().regions.len(), 2);
    check(&s, &t);
    put(&s, &t, ROWS + 1).unwrap();
}

#[test]
fn a_child_that_does_not_open_leaves_its_rows_refused_at_once_until_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFileSystem::new(Arc::new(LocalFileSystem), 2);
    let (s, t) = loaded(dir.path(), &fs);
    fail_opens(&fs, 1_000);
    assert!(split(&s, &t).is_err());
    let started = Instant::now();
    let refused = put(&s, &t, 7);
    assert!(matches!(refused, Err(RegionError::Closed)), "{refused:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the put waited {:?} for children that will not open",
        started.elapsed()
    );
    fs.clear_rules();
    drop(s);
    let s = open(dir.path(), &fs);
    assert_eq!(
        s.table(&t).unwrap().regions.len(),
        2,
        "the restart finishes the split"
    );
    check(&s, &t);
    put(&s, &t, 7).unwrap();
}
