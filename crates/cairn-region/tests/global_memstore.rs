//! The server-wide memstore bound (`hbase.regionserver.global.memstore.size`): SKIP_WAL writes
//! over many regions, none of which reaches its own flush size, stay within the bound; past
//! the lower mark the largest memstore is flushed first; at the upper mark writes wait for
//! flushes and go on once they land, or are refused with a retryable `RegionTooBusy` while
//! flushes keep failing; nothing written is lost either way.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_fs::{Fault, FaultFileSystem, FaultOp, FaultRule, FileSystem, LocalFileSystem};
use cairn_region::{
    ColumnFamilyDescriptor, Durability, Get, Put, RegionError, RegionServer, ServerConfig,
    TableDescriptor, TableName,
};

const MIB: u64 = 1 << 20;
const REGIONS: usize = 20;

/// A server with background flushes, the global bound at `upper` bytes and the lower mark at
/// `lower` of it.
fn config(dir: &std::path::Path, upper: u64, lower: f64, wait: Duration) -> ServerConfig {
    let mut c = ServerConfig::new(dir);
    c.global_memstore.size = Some(upper as f64);
    c.global_memstore.lower_limit = Some(lower);
    c.global_memstore.blocking_wait = wait;
    c
}

/// A table of `regions` regions (`r00`, `r01`, ... start them) whose own flush size is far
/// above anything the test writes: only the global bound flushes.
fn create(s: &RegionServer, regions: usize) -> TableName {
    let t = TableName::parse("t").unwrap();
    let mut d = TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f"));
    d.memstore_flush_size = Some(1 << 30);
    let splits: Vec<Vec<u8>> = (1..regions)
        .map(|i| format!("r{i:02}").into_bytes())
        .collect();
    s.create_table(d, &splits).unwrap();
    t
}

fn row(region: usize, i: usize) -> String {
    format!("r{region:02}-{i:06}")
}

fn value(region: usize, i: usize, len: usize) -> Vec<u8> {
    let mut v = format!("{region}:{i}:").into_bytes();
    v.resize(len, b'v');
    v
}

/// Every row written is there with its value.
fn check_all(s: &RegionServer, t: &TableName, written: &[(usize, usize)], len: usize) {
    for chunk in written.chunks(500) {
        let gets = chunk.iter().map(|&(r, i)| Get::new(row(r, i))).collect();
        let got = s.get_many(t, gets).unwrap();
        for (&(r, i), cells) in chunk.iter().zip(got) {
            assert_eq!(cells.len(), 1, "row {} lost", row(r, i));
            assert_eq!(cells[0].as_cell().value, value(r, i, len), "{}", row(r, i));
        }
    }
}

#[test]
fn skip_wal_writes_over_twenty_regions_stay_within_the_bound_and_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let upper = 4 * MIB;
    let s = RegionServer::open(config(dir.path(), upper, 0.5, Duration::from_secs(20))).unwrap();
    let t = create(&s, REGIONS);
    let accounting = s.memstore_accounting().clone();
    assert_eq!(accounting.limits().upper, upper);
    // A sampler watches the count the whole time.
    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (done, peak, accounting) = (done.clone(), peak.clone(), accounting.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(accounting.size(), Ordering::Relaxed);
                std::thread::yield_now();
            }
        })
    };
    // Four writers, each a batch of 20 puts (one per region) at a time, 10x the bound in all.
    const LEN: usize = 2000;
    const BATCHES: usize = 300;
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (s, t) = (s.clone(), t.clone());
            std::thread::spawn(move || {
                let mut written = Vec::new();
                for b in 0..BATCHES {
                    let i = w * BATCHES + b;
                    let puts: Vec<Put> = (0..REGIONS)
                        .map(|r| {
                            Put::new(row(r, i))
                                .add("f", "q", value(r, i, LEN))
                                .durability(Durability::SkipWal)
                        })
                        .collect();
                    s.put_many(&t, &puts).unwrap();
                    written.extend((0..REGIONS).map(|r| (r, i)));
                }
                written
            })
        })
        .collect();
    let written: Vec<(usize, usize)> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let total = (written.len() * LEN) as u64;
    assert!(total > 10 * upper, "{total}");
    // One put per region per batch: a write reserves at most one put's cells, and admission
    // and reservation are one step, so the count passes the mark by less than that.
    let one_write = 4 * LEN as u64;
    let peak = peak.load(Ordering::Relaxed);
    assert!(
        peak < upper + one_write,
        "peak {peak} over the bound {upper} + one write {one_write}"
    );
    let metrics: std::collections::BTreeMap<_, _> =
        accounting.metric_values().into_iter().collect();
    assert!(metrics["updatesBlockedCount"] > 0, "{metrics:?}");
    assert_eq!(metrics["updatesRefusedCount"], 0, "{metrics:?}");
    let flushes: u64 = s
        .region_metrics()
        .iter()
        .flat_map(|(_, m)| m.iter())
        .filter(|(n, _)| *n == "flushesCount")
        .map(|(_, v)| v)
        .sum();
    assert!(
        flushes >= 5,
        "only the global bound flushes here: {flushes}"
    );
    // The region counts add up to the server's.
    let regions: u64 = s
        .table(&t)
        .unwrap()
        .regions
        .iter()
        .map(|r| r.memstore_size())
        .sum();
    assert_eq!(regions, accounting.size());
    check_all(&s, &t, &written, LEN);
    s.close().unwrap();
    drop(s);
    let s = RegionServer::open(config(dir.path(), upper, 0.5, Duration::from_secs(20))).unwrap();
    check_all(&s, &t, &written, LEN);
}

#[test]
fn past_the_lower_mark_the_largest_memstore_is_flushed_first() {
    let dir = tempfile::tempdir().unwrap();
    // Lower mark at 5 MiB.
    let s = RegionServer::open(config(dir.path(), 10 * MIB, 0.5, Duration::from_secs(20))).unwrap();
    let t = create(&s, 3);
    let regions = s.table(&t).unwrap().regions.clone();
    let fill = |region: usize, bytes: u64| {
        let n = (bytes / 10_000) as usize;
        let puts: Vec<Put> = (0..n)
            .map(|i| {
                Put::new(row(region, i))
                    .add("f", "q", value(region, i, 10_000))
                    .durability(Durability::SkipWal)
            })
            .collect();
        s.put_many(&t, &puts).unwrap();
    };
    fill(0, MIB);
    fill(1, 3 * MIB);
    fill(2, MIB / 2);
    std::thread::sleep(Duration::from_millis(700));
    let flushed = |r: usize| regions[r].metrics.flush_count.load(Ordering::Relaxed);
    assert_eq!(
        (0..3).map(flushed).sum::<u64>(),
        0,
        "below the lower mark nothing is flushed"
    );
    // Past the mark: region 1 (3 MiB) alone brings the server back under it.
    fill(2, MIB);
    let deadline = Instant::now() + Duration::from_secs(20);
    while flushed(1) == 0 {
        assert!(Instant::now() < deadline, "no flush for memory");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!((flushed(0), flushed(1), flushed(2)), (0, 1, 0));
    assert_eq!(regions[1].memstore_size(), 0);
    assert!(!s.memstore_accounting().is_above_low_water_mark());
}

#[test]
fn failing_flushes_keep_writes_blocked_lose_nothing_and_recover() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFileSystem::new(Arc::new(LocalFileSystem), 11);
    let upper = 2 * MIB;
    let mut c = config(dir.path(), upper, 0.5, Duration::from_millis(300));
    c.region.fs = fs.clone();
    // The WAL stays on the real disk: these writes skip it anyway.
    c.wal_fs = Some(Arc::new(LocalFileSystem) as Arc<dyn FileSystem>);
    c.wal_dir = Some(dir.path().to_path_buf());
    let s = RegionServer::open(c).unwrap();
    let t = create(&s, 4);
    // Every flush fails: its file cannot be created.
    fs.add_rule(FaultRule::new(FaultOp::Create, Fault::NoSpace).on_paths_containing("/.tmp/"));
    const LEN: usize = 4000;
    let put = |i: usize| {
        let r = i % 4;
        s.put(
            &t,
            &Put::new(row(r, i))
                .add("f", "q", value(r, i, LEN))
                .durability(Durability::SkipWal),
        )
    };
    let mut written = Vec::new();
    let mut i = 0;
    let refused = loop {
        match put(i) {
            Ok(()) => written.push((i % 4, i)),
            Err(e) => break e,
        }
        i += 1;
        assert!(i < 10_000, "writes never blocked");
    };
    assert!(
        matches!(refused, RegionError::RegionTooBusy { global: true, .. }),
        "{refused}"
    );
    let accounting = s.memstore_accounting().clone();
    // What the regions hold, the failed flushes' snapshots included, is what the server
    // counts, and stays within the bound.
    let held = || -> u64 {
        s.table(&t)
            .unwrap()
            .regions
            .iter()
            .map(|r| r.memstore_size())
            .sum()
    };
    assert_eq!(held(), accounting.size());
    assert!(held() < upper + 2 * LEN as u64, "{}", held());
    assert!(fs.injected() > 0, "flushes were tried and failed");
    // Still refused while the faults last, and the count stays where it was.
    for _ in 0..3 {
        assert!(matches!(
            put(i),
            Err(RegionError::RegionTooBusy { global: true, .. })
        ));
    }
    assert_eq!(held(), accounting.size());
    assert!(held() < upper + 2 * LEN as u64, "{}", held());
    check_all(&s, &t, &written, LEN);
    // The disk recovers: the retried flushes land and the same write goes in.
    fs.clear_rules();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match put(i) {
            Ok(()) => break,
            Err(RegionError::RegionTooBusy { global: true, .. }) => {
                assert!(Instant::now() < deadline, "writes never resumed")
            }
            Err(e) => panic!("{e}"),
        }
    }
    written.push((i % 4, i));
    for j in i + 1..i + 400 {
        put(j).unwrap();
        written.push((j % 4, j));
    }
    let m: std::collections::BTreeMap<_, _> = accounting.metric_values().into_iter().collect();
    assert!(m["updatesRefusedCount"] >= 4, "{m:?}");
    check_all(&s, &t, &written, LEN);
    s.close().unwrap();
    drop(s);
    let mut c = config(dir.path(), upper, 0.5, Duration::from_millis(300));
    c.wal_dir = Some(dir.path().to_path_buf());
    let s = RegionServer::open(c).unwrap();
    check_all(&s, &t, &written, LEN);
}
