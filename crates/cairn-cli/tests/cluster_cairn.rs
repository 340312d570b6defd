//! `cairn regionserver` in a real HBase 2.6.1 cluster on one machine (ZooKeeper, HBase's
//! HMaster, two HBase `HRegionServer`s and a cairn region server, `support/cluster.rs`),
//! driven by HBase's own client through ZooKeeper:
//! - the table moves from HBase's region servers to cairn and back
//!   with `Admin.move`, reads exact after each move, rows written through cairn read back on
//!   HBase's servers;
//! - kill -9 of cairn mid-load: the master's crash procedure has HBase's region servers
//!   split cairn's WAL, and every acknowledged row is there;
//! - kill -9 of an HBase region server mid-load: the master has cairn split some of its WAL
//!   files (`SplitWALRemoteProcedure`, one split at a time per server, small WAL files so
//!   there are many), and every acknowledged row is there;
//! - SIGTERM of cairn holding the table: it closes its regions and leaves no WAL to split;
//! - a split of a region on cairn, asked by HBase's `Admin.split` and run by the master's
//!   procedure (close, reference files, daughters opened on cairn);
//! - cairn's info port (`hbase.regionserver.info.port`) shows the regions it holds and its
//!   Prometheus metrics;
//! - the master's cluster shutdown (`Admin.shutdown`) stops cairn.
//!
//! `hbase:meta` stays on HBase's region servers (cairn refuses to open it). One test; needs
//! `mvn -f interop/hbase/pom.xml package`; skipped without the jars unless
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

/// The body of `GET path` on 127.0.0.1:`port` (a bare HTTP/1.0 request).
fn http_get(port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(s, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(
        out.starts_with("HTTP/1.") && out.contains(" 200 "),
        "GET {path}: {out}"
    );
    out
}

/// The master's log lines of `SplitWALRemoteProcedure`s that `worker` finished.
fn splits_by(cluster: &Cluster, worker: &str) -> Vec<String> {
    cluster
        .master_log()
        .lines()
        .filter(|l| {
            l.contains("Finished pid=")
                && l.contains("SplitWALRemoteProcedure")
                && l.contains(&format!("worker={worker}"))
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn cairn_region_server_in_an_hbase_cluster() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let started = Instant::now();
    let mut phases = Phases::new();
    // Small WAL files (rolled at 32 KiB) and one split at a time per server: a dead
    // server leaves many files, which the master spreads over every live server.
    let mut cluster = Cluster::start_with(
        &cp,
        &[RegionServerKind::HBase, RegionServerKind::HBase],
        &[
            ("hbase.regionserver.hlog.blocksize", "65536"),
            ("hbase.regionserver.wal.max.splitters", "1"),
        ],
    );
    // cairn joins once meta is on one of HBase's servers.
    wait_ready(&mut cluster);
    let c = cluster.add_region_server(RegionServerKind::Cairn);
    let ready = cluster.wait_ready();
    let meta = ready
        .iter()
        .find_map(|l| l.strip_prefix("META "))
        .expect("META line")
        .to_string();
    // The HBase region server without meta: the one killed later.
    let o = if cluster.region_servers[0].name() == meta {
        1
    } else {
        0
    };
    let cairn = cluster.region_servers[c].name().to_string();
    phases.done("master initialized, cairn joined");
    create_and_load(&mut cluster);
    phases.done("create, load");

    // Moves: HBase -> cairn -> HBase -> cairn.
    move_tables(&mut cluster, c, &[]);
    move_tables(&mut cluster, o, &[]);
    move_tables(&mut cluster, c, &[]);
    phases.done("table moved to cairn, back and again");

    // cairn's info port shows the regions it holds and its metrics.
    let info_port = cluster.region_servers[c].info_port;
    let page = http_get(info_port, "/rs-status");
    for (_, encoded, server) in cluster.regions(Some(TABLE)) {
        assert_eq!(server, cairn);
        assert!(page.contains(&encoded), "{encoded} not on the status page");
    }
    assert!(
        page.contains(&cairn),
        "the server name is not on the status page"
    );
    let metrics = http_get(info_port, "/prometheus");
    assert!(metrics.contains("cairn_build_info{"), "{metrics}");
    let conf = http_get(info_port, "/conf");
    assert!(
        conf.contains("hbase.zookeeper.property.clientPort"),
        "{conf}"
    );
    assert!(http_get(info_port, "/stacks").contains("cairn-assign"));

    // kill -9 of cairn mid-load: HBase's servers split its WAL.
    let rows = kill_mid_load(&mut cluster, c, false, FIRST_ROWS);
    assert_none_on(&mut cluster, None, &cairn);
    phases.done("kill -9 of cairn mid-load");

    // cairn again; the table moves to HBase's other server, which is killed mid-load.
    cluster.restart(c);
    cluster.wait_ready();
    let cairn = cluster.region_servers[c].name().to_string();
    move_tables(&mut cluster, o, &[]);
    let before = splits_by(&cluster, &cairn).len();
    let rows = kill_mid_load(&mut cluster, o, false, rows);
    let by_cairn = splits_by(&cluster, &cairn);
    assert!(
        by_cairn.len() > before && by_cairn.iter().all(|l| l.contains("state=SUCCESS")),
        "cairn split none of the dead server's WAL files: {by_cairn:?}"
    );
    phases.done("kill -9 of HBase's region server, cairn among the splitters");

    // Admin.split of a region on cairn: the master's procedure, daughters opened on cairn.
    move_tables(&mut cluster, c, &[]);
    let before = cluster.regions(Some(TABLE)).len();
    let lines = cluster.check(&format!("split {TABLE} row-00000250"));
    assert!(lines.iter().any(|l| l.starts_with("SPLIT ")), "{lines:?}");
    let after = cluster.regions(Some(TABLE));
    assert_eq!(after.len(), before + 1, "{after:?}");
    assert_all_on(&mut cluster, Some(TABLE), &cairn);
    verify(&mut cluster, 0, rows);
    phases.done("split on cairn");

    // A client that finds the cluster through cairn (HBase's RPC connection registry):
    // cairn answers from ZooKeeper where the master and meta are.
    let lines = cluster.check_through(&cairn, &format!("verify {TABLE} 0 {rows}"));
    assert_eq!(
        lines.last().map(String::as_str),
        Some(format!("VERIFIED {rows}").as_str()),
        "{lines:?}"
    );
    phases.done("reads through cairn's registry");

    // SIGTERM of cairn holding the table: nothing left to split, regions reopened elsewhere.
    stop_gracefully(&mut cluster, c, rows);
    phases.done("SIGTERM of cairn");

    // The master's cluster shutdown (Admin.shutdown): cairn stops on its own.
    cluster.restart(c);
    cluster.wait_ready();
    let lines = cluster.check("shutdown");
    assert!(lines.contains(&"SHUTDOWN".to_string()), "{lines:?}");
    let deadline = Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = cluster.region_servers[c].exited() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "cairn still runs 60 s after the cluster shutdown:\n{}",
            cluster.region_servers[c].log_tail(20)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(
        status.success(),
        "cairn exited {status} at the cluster shutdown"
    );
    assert!(
        cluster.region_servers[c]
            .log_tail(20)
            .contains("the cluster is shutting down"),
        "{}",
        cluster.region_servers[c].log_tail(20)
    );
    phases.done("cluster shutdown");
    drop(cluster);
    eprintln!("wall time {:.1} s", started.elapsed().as_secs_f64());
}
