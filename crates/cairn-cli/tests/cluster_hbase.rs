//! A distributed HBase 2.6.1 cluster on one machine (ZooKeeper, an HMaster, two region
//! servers, `support/cluster.rs`) driven by HBase's own client through ZooKeeper
//! (`dev.cairn.interop.ClusterCheck`): the master initializes; a table split in four is
//! loaded; every region (hbase:meta and hbase:namespace too) moves from one region server to
//! the other and back with `Admin.move`, reads exact after each move; a region server killed
//! with SIGKILL mid-load has its WAL split by the master's crash procedure on the other, and
//! every acknowledged row is there; a region server stopped with SIGTERM closes its regions
//! (its WAL is archived, nothing is left to split) and the master reopens them on the other.
//!
//! The phases are functions of two region servers of any kind, so the same scenario runs
//! with a cairn region server as one of them. One test (a cluster start costs ~20-40 s).
//! Needs `mvn -f interop/hbase/pom.xml package`; skipped without the jars unless
//! `CAIRN_REQUIRE_HBASE_INTEROP=1`.

// Its `java` one-shot runner is not used here.
#[allow(dead_code)]
#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

#[path = "support/zookeeper.rs"]
mod zookeeper;

#[path = "support/cluster.rs"]
mod cluster;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cluster::{Cluster, RegionServerKind};

const TABLE: &str = "moves";
/// Split points of TABLE (rows are `row-%08d`): four regions.
const SPLITS: &str = "500,1000,1500";
/// Rows loaded before the moves.
const FIRST_ROWS: u64 = 2000;

/// Prints how long each phase took (the test's wall time matters to CI).
struct Phases {
    start: Instant,
    last: Instant,
}

impl Phases {
    fn new() -> Phases {
        let now = Instant::now();
        Phases {
            start: now,
            last: now,
        }
    }

    fn done(&mut self, what: &str) {
        let now = Instant::now();
        eprintln!(
            "phase {what}: {:.1} s (total {:.1} s)",
            (now - self.last).as_secs_f64(),
            (now - self.start).as_secs_f64()
        );
        self.last = now;
    }
}

/// Every region of `table` (all tables, meta and namespace included, when `None`) is on
/// `server`.
fn assert_all_on(cluster: &mut Cluster, table: Option<&str>, server: &str) {
    let regions = cluster.regions(table);
    assert!(!regions.is_empty(), "no regions listed for {table:?}");
    let elsewhere: Vec<_> = regions.iter().filter(|r| r.2 != server).collect();
    assert!(
        elsewhere.is_empty(),
        "regions not on {server}: {elsewhere:?}"
    );
}

fn verify(cluster: &mut Cluster, from: u64, to: u64) {
    let lines = cluster.check(&format!("verify {TABLE} {from} {to}"));
    assert_eq!(
        lines.last().map(String::as_str),
        Some(format!("VERIFIED {}", to - from).as_str()),
        "{lines:?}"
    );
}

/// The master initializes with every region server, meta on one of them.
fn wait_ready(cluster: &mut Cluster) {
    let ready = cluster.wait_ready();
    let meta = ready
        .iter()
        .find_map(|l| l.strip_prefix("META "))
        .expect("META line");
    assert!(
        cluster.region_servers.iter().any(|rs| rs.name() == meta),
        "meta on {meta}, not on a region server of the test: {ready:?}"
    );
}

/// The table is created (four regions) and loaded, the balancer switched off.
fn create_and_load(cluster: &mut Cluster) {
    let lines = cluster.check("balancer off");
    assert!(
        lines.iter().any(|l| l.starts_with("BALANCER ")),
        "{lines:?}"
    );
    let lines = cluster.check(&format!("create {TABLE} {SPLITS}"));
    assert_eq!(lines, [format!("CREATED {TABLE} 4")]);
    let lines = cluster.check(&format!("load {TABLE} 0 {FIRST_ROWS}"));
    assert_eq!(lines.last().unwrap(), &format!("LOADED {FIRST_ROWS}"));
    verify(cluster, 0, FIRST_ROWS);
}

/// Every region, hbase:meta and hbase:namespace included, moves to region server `to`; reads
/// stay exact.
fn move_everything(cluster: &mut Cluster, to: usize) {
    let target = cluster.region_servers[to].name().to_string();
    for table in [TABLE, "hbase:namespace", "hbase:meta"] {
        cluster.check(&format!("move {table} {target}"));
        verify(cluster, 0, FIRST_ROWS);
    }
    assert_all_on(cluster, None, &target);
}

/// WAL files of `server` (`host,port,startcode`) under the root's WALs dir (its dir, or the
/// dir the master renamed it to for splitting).
fn wal_files(root: &Path, server: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in [server.to_string(), format!("{server}-splitting")] {
        if let Ok(rd) = fs::read_dir(root.join("WALs").join(dir)) {
            out.extend(rd.map(|e| e.unwrap().path()).filter(|p| p.is_file()));
        }
    }
    out
}

/// The master's log line saying its ServerCrashProcedure for `server` finished (the master
/// lists finished procedures only until its cleaner runs, so the log is what stays), waiting
/// a little for it: the line comes just after the procedure's end.
fn crash_procedure(cluster: &Cluster, server: &str) -> Option<String> {
    let tag = format!("ServerCrashProcedure {server},");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found = cluster
            .master_log()
            .lines()
            .find(|l| l.contains("Finished pid=") && l.contains(&tag))
            .map(str::to_string);
        if found.is_some() || Instant::now() >= deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// SIGKILL of region server `victim` (holding the table, and meta) mid-load: the master's
/// crash procedure splits its WAL on `survivor` and reopens every region there; every row
/// the load saw acknowledged is exact. Returns the rows written so far (`0..n`).
fn kill_mid_load(cluster: &mut Cluster, victim: usize, survivor: usize) -> u64 {
    let dead = cluster.region_servers[victim].name().to_string();
    let alive = cluster.region_servers[survivor].name().to_string();
    let (from, to) = (FIRST_ROWS, FIRST_ROWS + 4000);
    let mut load = cluster.spawn_load(TABLE, from, to);
    load.wait_acked(from + 300, Duration::from_secs(120));
    cluster.region_servers[victim].kill9();
    let at_kill = load.acked().expect("acked rows");
    assert!(
        !wal_files(&cluster.root, &dead).is_empty(),
        "the killed server left no WAL to split"
    );
    let lines = cluster.check(&format!("wait-dead {dead} 120"));
    assert!(lines.contains(&format!("DEAD {dead}")), "{lines:?}");
    let scp = crash_procedure(cluster, &dead);
    let master = cluster.master_log();
    assert!(
        scp.as_deref()
            .is_some_and(|l| l.contains("state=SUCCESS") && l.contains("meta=true")),
        "the master's crash procedure for {dead} (which held meta): {scp:?}"
    );
    // HBase's procedure-based WAL splitting logs the count of WALs it found for the server
    // (meta's and the others, a line each).
    let counts: Vec<String> = master
        .lines()
        .filter_map(|l| l.split_once(&format!("{dead} WAL count=")))
        .map(|(_, rest)| rest.split(',').next().unwrap_or("").to_string())
        .collect();
    assert!(
        counts.iter().any(|c| c != "0"),
        "the master split no WAL of {dead} (counts {counts:?})"
    );
    assert_all_on(cluster, None, &alive);
    // The load rides over the crash (the client retries onto the survivor) and ends.
    let outcome = load
        .wait(Duration::from_secs(180))
        .expect("the load still runs 180 s after the crash");
    let last = outcome.last_acked.expect("acked rows");
    eprintln!(
        "kill -9 at row {at_kill}; the load ended {} at row {last}: {:?}",
        outcome.status, outcome.other
    );
    // Every acknowledged row, before and after the crash.
    verify(cluster, 0, last + 1);
    assert!(
        outcome.status.success(),
        "the load failed after the crash: {:?}\n{}",
        outcome.other,
        cluster::file_tail(&load.stderr, 30)
    );
    assert_eq!(last, to - 1);
    to
}

/// SIGTERM of region server `victim` holding the table: it closes its regions and archives
/// its WAL before exiting, so the master's crash procedure (HBase 2.6 runs one for every
/// region server that goes away) finds nothing to split and only reopens the regions on
/// `survivor`; every row is exact.
fn stop_gracefully(cluster: &mut Cluster, victim: usize, survivor: usize, rows: u64) {
    let stopped = cluster.region_servers[victim].name().to_string();
    let alive = cluster.region_servers[survivor].name().to_string();
    let status = cluster.region_servers[victim]
        .sigterm(Duration::from_secs(60))
        .unwrap_or_else(|| panic!("{stopped} still runs 60 s after SIGTERM"));
    eprintln!("{stopped} exited {status} after SIGTERM");
    // Checked right at exit, before the master (a session timeout later) may touch the dir.
    let left = wal_files(&cluster.root, &stopped);
    assert!(left.is_empty(), "{stopped} left WALs to split: {left:?}");
    let lines = cluster.check(&format!("wait-dead {stopped} 120"));
    assert!(
        lines.iter().any(|l| l == &format!("DEAD {stopped}")),
        "{lines:?}"
    );
    // HBase 2.6 runs a crash procedure for every region server that goes away, stopped or not.
    let scp = crash_procedure(cluster, &stopped);
    assert!(
        scp.as_deref().is_some_and(|l| l.contains("state=SUCCESS")),
        "no finished crash procedure for {stopped}: {scp:?}"
    );
    let master = cluster.master_log();
    // The crash procedure's split step logs `SERVER WAL count=N` when it looks, and again
    // (0) once it split them: every count for the stopped server must be 0.
    let counts: Vec<&str> = master
        .lines()
        .filter(|l| l.contains(&format!("{stopped} WAL count=")))
        .collect();
    assert!(
        !counts.is_empty() && counts.iter().all(|l| l.contains("WAL count=0,")),
        "the master's WAL split for {stopped} (every count should be 0):\n{}",
        counts.join("\n")
    );
    assert_all_on(cluster, Some(TABLE), &alive);
    verify(cluster, 0, rows);
}

/// The whole scenario over region servers `a` and `b` of `cluster`, whatever they run.
fn scenario(cluster: &mut Cluster, a: usize, b: usize) {
    let mut phases = Phases::new();
    wait_ready(cluster);
    phases.done("master initialized with both region servers");
    create_and_load(cluster);
    phases.done("create, load");
    move_everything(cluster, b);
    move_everything(cluster, a);
    phases.done("every region moved there and back");
    let rows = kill_mid_load(cluster, a, b);
    phases.done("kill -9 mid-load, crash procedure");
    cluster.restart(a);
    cluster.wait_ready();
    let target = cluster.region_servers[a].name().to_string();
    cluster.check(&format!("move {TABLE} {target}"));
    verify(cluster, 0, rows);
    phases.done("restart, table moved back");
    stop_gracefully(cluster, a, b, rows);
    phases.done("SIGTERM");
}

#[test]
fn hbase_cluster_moves_crashes_and_stops() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let started = Instant::now();
    let mut cluster = Cluster::start(&cp, &[RegionServerKind::HBase, RegionServerKind::HBase]);
    scenario(&mut cluster, 0, 1);
    drop(cluster);
    eprintln!("wall time {:.1} s", started.elapsed().as_secs_f64());
}
