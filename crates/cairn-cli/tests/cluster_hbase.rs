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

#[path = "support/cluster_checks.rs"]
mod cluster_checks;

use std::time::Instant;

use cluster::{Cluster, RegionServerKind};
use cluster_checks::*;

/// The whole scenario over region servers `a` and `b` of `cluster`, whatever they run.
fn scenario(cluster: &mut Cluster, a: usize, b: usize) {
    let mut phases = Phases::new();
    wait_ready(cluster);
    phases.done("master initialized with both region servers");
    create_and_load(cluster);
    phases.done("create, load");
    // Every region, hbase:meta and hbase:namespace included, there and back.
    move_tables(cluster, b, &["hbase:namespace", "hbase:meta"]);
    move_tables(cluster, a, &["hbase:namespace", "hbase:meta"]);
    phases.done("every region moved there and back");
    let rows = kill_mid_load(cluster, a, true, FIRST_ROWS);
    assert_all_on(
        cluster,
        None,
        cluster.region_servers[b].name().to_string().as_str(),
    );
    phases.done("kill -9 mid-load, crash procedure");
    cluster.restart(a);
    cluster.wait_ready();
    let target = cluster.region_servers[a].name().to_string();
    cluster.check(&format!("move {TABLE} {target}"));
    verify(cluster, 0, rows);
    phases.done("restart, table moved back");
    stop_gracefully(cluster, a, rows);
    let survivor = cluster.region_servers[b].name().to_string();
    assert_all_on(cluster, Some(TABLE), &survivor);
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
