//! `cairn pe` against a running server over HBase's native RPC (`-D hbase.client.bootstrap.servers`
//! or `-D hbase.zookeeper.quorum`): rows written are all read back (no misses), scans count
//! exactly the rows in their range, across the regions of a presplit table, and HBase 2.6.1's
//! own PerformanceEvaluation agrees with it both ways — rows its sequentialWrite wrote are all
//! found by `cairn pe`, rows `cairn pe` wrote are counted and read by HBase's client.
//!
//! The HBase half needs `mvn -f interop/hbase/pom.xml package`; without the jars those tests
//! skip, unless `CAIRN_REQUIRE_HBASE_INTEROP=1` makes that a failure.

#[allow(dead_code)]
#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

#[path = "support/serve.rs"]
mod serve;

#[path = "support/zookeeper.rs"]
mod zookeeper;

use std::process::{Command, Output};

use serde_json::Value;
use serve::{tail, Server};
use zookeeper::ZooKeeper;

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// How `cairn pe` finds the server: its `-D` arguments.
fn bootstrap(server: &Server) -> Vec<String> {
    vec![
        "-D".into(),
        format!("hbase.client.bootstrap.servers={}", server.addr),
    ]
}

/// Runs `cairn pe --json CLUSTER ARGS` and parses its report.
fn pe(server: &Server, cluster: &[String], args: &[&str]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("pe")
        .arg("--json")
        .args(cluster)
        .args(args)
        .output()
        .expect("run cairn pe");
    assert!(
        o.status.success(),
        "cairn pe {args:?} failed: {}\nserver stderr (tail):\n{}",
        text(&o),
        server.stderr_tail(30)
    );
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("{k} missing or not a count in {v}"))
}

/// Checks that a read run found every row it asked for.
fn all_found(v: &Value, rows: u64) {
    assert_eq!(u(v, "ops"), rows, "{v}");
    assert_eq!(u(v, "misses"), 0, "rows not found: {v}");
    assert_eq!(u(v, "rows_returned"), rows, "{v}");
}

#[test]
fn rows_written_over_rpc_are_all_read_back() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let c = bootstrap(&server);
    let common = ["--table=PE_RPC", "--rows=300", "--valueSize=100"];
    let with = |extra: &[&'static str]| -> Vec<&str> {
        common
            .iter()
            .copied()
            .chain(extra.iter().copied())
            .collect()
    };
    let w = pe(&server, &c, &with(&["sequentialWrite", "2"]));
    assert_eq!(u(&w, "ops"), 600, "{w}");
    assert_eq!(u(&w, "regions"), 1, "{w}");
    assert!(
        w["notes"].to_string().contains("created table PE_RPC"),
        "{w}"
    );

    all_found(&pe(&server, &c, &with(&["sequentialRead", "2"])), 600);
    all_found(&pe(&server, &c, &with(&["randomRead", "2"])), 600);
    // The same client configuration from an hbase-site.xml (`--conf`), as HBase's PE takes it.
    let conf = tempfile::tempdir().unwrap();
    std::fs::write(
        conf.path().join("hbase-site.xml"),
        format!(
            "<configuration><property><name>hbase.client.registry.impl</name>\
             <value>org.apache.hadoop.hbase.client.RpcConnectionRegistry</value></property>\
             <property><name>hbase.client.bootstrap.servers</name><value>{}</value>\
             </property></configuration>",
            server.addr
        ),
    )
    .unwrap();
    let site = ["--conf".to_string(), conf.path().display().to_string()];
    let from_site = pe(&server, &site, &with(&["randomRead", "2"]));
    all_found(&from_site, 600);
    let target = from_site["data_dir"].as_str().unwrap_or_default();
    assert!(
        target.contains(&server.addr),
        "not run against the server: {from_site}"
    );
    // Batches of 7 gets as one Multi, the last partial batch sent at the end.
    let m = pe(&server, &c, &with(&["--multiGet=7", "randomRead", "2"]));
    all_found(&m, 600);
    // One connection shared by three clients, calls multiplexed on it.
    let one = pe(
        &server,
        &c,
        &[
            "--table=PE_RPC",
            "--rows=200",
            "--oneCon=true",
            "randomRead",
            "3",
        ],
    );
    all_found(&one, 600);
    // FilterAllFilter: the server reads each row and returns nothing.
    let f = pe(&server, &c, &with(&["--filterAll", "randomRead", "2"]));
    assert_eq!((u(&f, "rows_returned"), u(&f, "misses")), (0, 600), "{f}");

    // scan: each client's scanner from its first row, one row per step (caching 30 per call).
    let s = pe(&server, &c, &with(&["scan", "2"]));
    assert_eq!((u(&s, "ops"), u(&s, "rows_returned")), (600, 600), "{s}");
    // With one row of key space (--rows=1, one client) every range starts at row 0.
    let r = pe(
        &server,
        &c,
        &["--table=PE_RPC", "--rows=1", "scanRange100", "1"],
    );
    assert_eq!(u(&r, "rows_returned"), 100, "{r}");
    let r = pe(
        &server,
        &c,
        &["--table=PE_RPC", "--rows=1", "scanRange10000", "1"],
    );
    assert_eq!(u(&r, "rows_returned"), 600, "{r}");
    let r = pe(
        &server,
        &c,
        &[
            "--table=PE_RPC",
            "--rows=1",
            "--filterAll",
            "scanRange10000",
            "1",
        ],
    );
    assert_eq!(u(&r, "rows_returned"), 0, "{r}");
    // The report carries the client's CPU per operation.
    assert!(m["cpu_us_per_op"].as_f64().is_some(), "{m}");
}

#[test]
fn presplit_tables_spread_rows_over_their_regions() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let c = bootstrap(&server);
    // Buffered writes (the default) and --autoFlush (a Mutate each), into 4 regions.
    let w = pe(
        &server,
        &c,
        &[
            "--rows=250",
            "--valueSize=50",
            "--presplit=4",
            "sequentialWrite",
            "2",
        ],
    );
    assert_eq!((u(&w, "ops"), u(&w, "regions")), (500, 4), "{w}");
    let w = pe(
        &server,
        &c,
        &[
            "--rows=250",
            "--valueSize=50",
            "--autoFlush=true",
            "randomWrite",
            "2",
        ],
    );
    assert_eq!(
        u(&w, "regions"),
        4,
        "an existing table is kept without --presplit: {w}"
    );
    // A Multi of gets spanning every region.
    all_found(
        &pe(
            &server,
            &c,
            &["--rows=250", "--multiGet=50", "randomRead", "2"],
        ),
        500,
    );
    all_found(
        &pe(&server, &c, &["--rows=250", "sequentialRead", "2"]),
        500,
    );
    // One scan over every region: all 500 rows, none twice.
    let r = pe(&server, &c, &["--rows=1", "scanRange10000", "1"]);
    assert_eq!(u(&r, "rows_returned"), 500, "{r}");
    // --presplit on a write command recreates the table, as PE does.
    let w = pe(
        &server,
        &c,
        &[
            "--rows=100",
            "--presplit=2",
            "--multiPut=10",
            "--autoFlush=true",
            "sequentialWrite",
            "1",
        ],
    );
    assert_eq!(u(&w, "regions"), 2, "{w}");
    let r = pe(&server, &c, &["--rows=1", "scanRange10000", "1"]);
    assert_eq!(
        u(&r, "rows_returned"),
        100,
        "the old rows went with the old table: {r}"
    );
}

#[test]
fn a_read_of_a_missing_table_is_refused_as_pe_refuses_it() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let o = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("pe")
        .args(bootstrap(&server))
        .args(["--table=Nope", "--rows=10", "randomRead", "1"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        text(&o).contains("run a write command first"),
        "{}",
        text(&o)
    );
    // Commands not run over RPC are named.
    let o = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("pe")
        .args(bootstrap(&server))
        .args(["--rows=10", "increment", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("increment: not run against a cluster"),
        "{}",
        text(&o)
    );
}

/// Splits `table`'s only region at `row` through the master, as `Admin.split` does.
fn split(server: &Server, table: &str, row: &[u8]) {
    use cairn_rpc::pb;
    let name = pb::TableName {
        namespace: b"default".to_vec(),
        qualifier: table.as_bytes().to_vec(),
    };
    let infos = cairn_rpc::client::meta_region_infos(&server.addr, &name).unwrap();
    assert_eq!(infos.len(), 1, "one region before the split");
    let info: pb::RegionInfo = cairn_rpc::znode::decode(&infos[0], "RegionInfo").unwrap();
    let mut master = cairn_rpc::client::RpcClient::connect(&server.addr, "MasterService").unwrap();
    let req = pb::SplitTableRegionRequest {
        region_info: info,
        split_row: Some(row.to_vec()),
        nonce_group: None,
        nonce: None,
    };
    master
        .call::<pb::SplitTableRegionResponse>("SplitRegion", &req)
        .unwrap_or_else(|e| panic!("SplitRegion: {e}"));
}

#[test]
fn a_region_split_during_a_run_is_followed_through_meta() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let c = bootstrap(&server);
    let w = pe(
        &server,
        &c,
        &[
            "--table=PE_SPLIT",
            "--rows=2000",
            "--valueSize=50",
            "sequentialWrite",
            "1",
        ],
    );
    assert_eq!(u(&w, "regions"), 1, "{w}");
    // Reads for a few seconds; the region splits under them.
    let reader = {
        let c = c.clone();
        let exe = env!("CARGO_BIN_EXE_cairn");
        std::thread::spawn(move || {
            Command::new(exe)
                .arg("pe")
                .arg("--json")
                .args(&c)
                .args([
                    "--table=PE_SPLIT",
                    "--rows=2000",
                    "--cycles=200",
                    "randomRead",
                    "1",
                ])
                .output()
                .expect("run cairn pe")
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(700));
    split(&server, "PE_SPLIT", format!("{:026}", 1000).as_bytes());
    let o = reader.join().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(u(&v, "misses"), 0, "{v}");
    assert_eq!(u(&v, "rows_returned"), 400_000, "{v}");
    assert!(
        u(&v, "relocations") >= 1,
        "the run ended before the split or never looked the regions up again: {v}"
    );
    let after = pe(
        &server,
        &c,
        &["--table=PE_SPLIT", "--rows=2000", "sequentialRead", "1"],
    );
    assert_eq!(u(&after, "regions"), 2, "{after}");
    all_found(&after, 2000);
}

// ---- HBase 2.6.1's PerformanceEvaluation, through ZooKeeper ----

/// PE's logger at INFO (its results are log lines), the rest at WARN.
const LOG4J: &str = "log4j.rootLogger=WARN,console
log4j.logger.org.apache.hadoop.hbase.PerformanceEvaluation=INFO
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n
";

struct Java {
    classpath: String,
    zk_port: u16,
    _conf: tempfile::TempDir,
}

impl Java {
    fn new(jars: &str, zk: &ZooKeeper) -> Java {
        let conf = tempfile::tempdir().unwrap();
        let site = format!(
            "<configuration>\n\
             <property><name>hbase.zookeeper.quorum</name><value>127.0.0.1</value></property>\n\
             <property><name>hbase.zookeeper.property.clientPort</name><value>{}</value></property>\n\
             </configuration>\n",
            zk.port
        );
        std::fs::write(conf.path().join("hbase-site.xml"), site).unwrap();
        std::fs::write(conf.path().join("log4j.properties"), LOG4J).unwrap();
        Java {
            classpath: format!("{}:{jars}", conf.path().display()),
            zk_port: zk.port,
            _conf: conf,
        }
    }

    fn run(&self, server: &Server, main: &str, args: &[&str]) -> String {
        let o = Command::new("java")
            .args(hbase::JAVA_FLAGS)
            .arg("-cp")
            .arg(&self.classpath)
            .arg(main)
            .args(args)
            .output()
            .expect("run java");
        let all = text(&o);
        assert!(
            o.status.success(),
            "{main} {args:?} failed:\n{}\nserver stderr (tail):\n{}",
            tail(&all, 40),
            server.stderr_tail(30)
        );
        all
    }

    /// HBase's `PerformanceEvaluation --nomapred ARGS`; the row counts of its "Finished"
    /// lines, one per client.
    fn pe(&self, server: &Server, args: &[&str]) -> Vec<u64> {
        let mut all = vec!["--nomapred"];
        all.extend_from_slice(args);
        let log = self.run(
            server,
            "org.apache.hadoop.hbase.PerformanceEvaluation",
            &all,
        );
        log.lines()
            .filter(|l| l.contains("Finished class "))
            .filter_map(|l| {
                let rest = &l[l.rfind(" for ")? + " for ".len()..];
                rest.split_whitespace().next()?.parse().ok()
            })
            .collect()
    }

    /// `PeRowsCheck`: rows `0..n` of `table` got by PE's own keys: (found, missing, value
    /// bytes).
    fn rows_check(&self, server: &Server, table: &str, n: u64) -> (u64, u64, u64) {
        let zk = format!("127.0.0.1:{}", self.zk_port);
        let n = n.to_string();
        let out = self.run(
            server,
            "dev.cairn.interop.PeRowsCheck",
            &["--zk", &zk, table, &n],
        );
        let line = out
            .lines()
            .rfind(|l| {
                l.split_whitespace().count() == 3
                    && l.split_whitespace().all(|w| w.parse::<u64>().is_ok())
            })
            .unwrap_or_else(|| panic!("PeRowsCheck printed no counts: {out}"));
        let v: Vec<u64> = line
            .split_whitespace()
            .map(|w| w.parse().unwrap())
            .collect();
        (v[0], v[1], v[2])
    }

    /// Rows of `table`, counted by HBase's client (a full scan).
    fn count_rows(&self, server: &Server, table: &str) -> u64 {
        let zk = format!("127.0.0.1:{}", self.zk_port);
        let out = self.run(server, "dev.cairn.interop.CountRows", &["--zk", &zk, table]);
        out.lines()
            .filter_map(|l| l.trim().parse().ok())
            .next_back()
            .unwrap_or_else(|| panic!("CountRows printed no count: {out}"))
    }
}

#[test]
fn hbase_pe_and_cairn_pe_agree_on_the_rows() {
    let Some(jars) = hbase::classpath_or_skip() else {
        return;
    };
    let zk = ZooKeeper::start(&jars);
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &["--zookeeper", &zk.connect_string()]);
    let java = Java::new(&jars, &zk);
    // cairn pe finds the server as HBase's client does: meta and the master in ZooKeeper.
    let c = vec![
        "-D".to_string(),
        "hbase.zookeeper.quorum=127.0.0.1".to_string(),
        "-D".to_string(),
        format!("hbase.zookeeper.property.clientPort={}", zk.port),
    ];

    // HBase's PE writes, cairn pe reads every row back and scans them all.
    let finished = java.pe(
        &server,
        &[
            "--table=PE_FROM_HBASE",
            "--rows=300",
            "--valueSize=100",
            "--presplit=3",
            "sequentialWrite",
            "2",
        ],
    );
    assert_eq!(finished, vec![300, 300], "HBase PE's sequentialWrite");
    let t = "--table=PE_FROM_HBASE";
    let v = pe(&server, &c, &[t, "--rows=300", "sequentialRead", "2"]);
    assert_eq!(u(&v, "regions"), 3, "{v}");
    all_found(&v, 600);
    all_found(&pe(&server, &c, &[t, "--rows=300", "randomRead", "2"]), 600);
    all_found(
        &pe(
            &server,
            &c,
            &[t, "--rows=300", "--multiGet=20", "randomRead", "2"],
        ),
        600,
    );
    let r = pe(&server, &c, &[t, "--rows=1", "scanRange10000", "1"]);
    assert_eq!(u(&r, "rows_returned"), 600, "{r}");

    // cairn pe writes, HBase's client counts the rows and HBase's PE reads them.
    let t = "--table=PE_FROM_CAIRN";
    let w = pe(
        &server,
        &c,
        &[
            t,
            "--rows=250",
            "--valueSize=100",
            "--presplit=2",
            "sequentialWrite",
            "2",
        ],
    );
    assert_eq!(u(&w, "ops"), 500, "{w}");
    assert_eq!(java.count_rows(&server, "PE_FROM_CAIRN"), 500);
    // Every row under PE's own key (PerformanceEvaluation.format), in info0:0, 100 bytes.
    assert_eq!(
        java.rows_check(&server, "PE_FROM_CAIRN", 500),
        (500, 0, 500 * 100),
        "HBase's client looking up rows 0..500 by PE's keys"
    );
    let finished = java.pe(&server, &[t, "--rows=250", "sequentialRead", "2"]);
    assert_eq!(finished, vec![250, 250], "HBase PE's sequentialRead");
    // HBase's PE scans the rows cairn pe wrote, one client from row 0 to the end.
    let finished = java.pe(&server, &[t, "--rows=500", "scan", "1"]);
    assert_eq!(finished, vec![500], "HBase PE's scan");
}
