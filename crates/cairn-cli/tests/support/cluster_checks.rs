//! The phases of the cluster tests (`cluster_hbase`, `cluster_cairn`): functions of a
//! [`Cluster`] and the indices of its region servers, whatever each runs, checked through
//! HBase's own client (`dev.cairn.interop.ClusterCheck`) and the master's log.

#![allow(dead_code)] // each test uses its own subset

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::cluster::{self, Cluster};

pub const TABLE: &str = "moves";
/// Split points of TABLE (rows are `row-%08d`): four regions.
pub const SPLITS: &str = "500,1000,1500";
/// Rows loaded before the moves.
pub const FIRST_ROWS: u64 = 2000;

/// Prints how long each phase took (the test's wall time matters to CI).
pub struct Phases {
    start: Instant,
    last: Instant,
}

impl Phases {
    pub fn new() -> Phases {
        let now = Instant::now();
        Phases {
            start: now,
            last: now,
        }
    }

    pub fn done(&mut self, what: &str) {
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
pub fn assert_all_on(cluster: &mut Cluster, table: Option<&str>, server: &str) {
    let regions = cluster.regions(table);
    assert!(!regions.is_empty(), "no regions listed for {table:?}");
    let elsewhere: Vec<_> = regions.iter().filter(|r| r.2 != server).collect();
    assert!(
        elsewhere.is_empty(),
        "regions not on {server}: {elsewhere:?}"
    );
}

pub fn verify(cluster: &mut Cluster, from: u64, to: u64) {
    let lines = cluster.check(&format!("verify {TABLE} {from} {to}"));
    assert_eq!(
        lines.last().map(String::as_str),
        Some(format!("VERIFIED {}", to - from).as_str()),
        "{lines:?}"
    );
}

/// The master initializes with every region server, meta on one of them.
pub fn wait_ready(cluster: &mut Cluster) {
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
pub fn create_and_load(cluster: &mut Cluster) {
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

/// The test table and `system` tables move to region server `to`; reads stay exact.
pub fn move_tables(cluster: &mut Cluster, to: usize, system: &[&str]) {
    let target = cluster.region_servers[to].name().to_string();
    for table in std::iter::once(TABLE).chain(system.iter().copied()) {
        cluster.check(&format!("move {table} {target}"));
        verify(cluster, 0, FIRST_ROWS);
        assert_all_on(cluster, Some(table), &target);
    }
}

/// No region of `table` (of any table, when `None`) is on `server`.
pub fn assert_none_on(cluster: &mut Cluster, table: Option<&str>, server: &str) {
    let regions = cluster.regions(table);
    assert!(!regions.is_empty(), "no regions listed for {table:?}");
    let there: Vec<_> = regions.iter().filter(|r| r.2 == server).collect();
    assert!(there.is_empty(), "regions still on {server}: {there:?}");
}

/// WAL files of `server` (`host,port,startcode`) under the root's WALs dir (its dir, or the
/// dir the master renamed it to for splitting).
pub fn wal_files(root: &Path, server: &str) -> Vec<PathBuf> {
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
pub fn crash_procedure(cluster: &Cluster, server: &str) -> Option<String> {
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

/// SIGKILL of region server `victim` (holding the table, and meta when `holds_meta`)
/// mid-load of rows `from..from + 4000`: the master's crash procedure splits its WAL on the
/// other servers and reopens its regions there; every row the load saw acknowledged is
/// exact. Returns the rows written so far (`0..n`).
pub fn kill_mid_load(cluster: &mut Cluster, victim: usize, holds_meta: bool, from: u64) -> u64 {
    let dead = cluster.region_servers[victim].name().to_string();
    let to = from + 4000;
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
        scp.as_deref().is_some_and(
            |l| l.contains("state=SUCCESS") && l.contains(&format!("meta={holds_meta}"))
        ),
        "the master's crash procedure for {dead} (meta there: {holds_meta}): {scp:?}"
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
    assert_none_on(cluster, None, &dead);
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
/// the others; every row is exact.
pub fn stop_gracefully(cluster: &mut Cluster, victim: usize, rows: u64) {
    let stopped = cluster.region_servers[victim].name().to_string();
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
    assert_none_on(cluster, Some(TABLE), &stopped);
    verify(cluster, 0, rows);
}
