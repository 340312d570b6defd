//! HBase's own benchmark tools against `cairn serve`, through HBase 2.6.1's Java client:
//! PerformanceEvaluation (`hbase pe --nomapred`, from hbase-mapreduce's test jar) and YCSB 0.17.0
//! with `dev.cairn.interop.ycsb.HBaseBinding` (interop/hbase), and the data-integrity test
//! IntegrationTestBigLinkedList (hbase-it's test jar), which checks what it wrote itself. PE
//! and YCSB do not, so the tests do: PE's "Finished ... for N rows" lines must add up to rows x clients,
//! a client full scan (`dev.cairn.interop.CountRows`) must see the rows written, and YCSB must
//! report every operation as `Return=OK`.
//!
//! The tools find the server the way a deployment would: a real ZooKeeper (from the interop
//! jars) that `cairn serve --zookeeper` registers in, and HBase's default ZooKeeper registry
//! configured by the hbase-site.xml on their classpath (written per test into a temp conf dir,
//! with a log4j.properties that lets PE's INFO lines through).
//!
//! Needs `mvn -f interop/hbase/pom.xml package` first (the test script does it). Without the
//! jars the tests are skipped, unless `CAIRN_REQUIRE_HBASE_INTEROP=1` makes that a failure.

// Only JAVA_FLAGS and classpath() are used here.
#[allow(dead_code)]
#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

#[path = "support/serve.rs"]
mod serve;

#[path = "support/zookeeper.rs"]
mod zookeeper;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serve::{tail, Server};
use zookeeper::ZooKeeper;

/// Whether the clients find cairn through ZooKeeper (HBase's default registry, `cairn serve
/// --zookeeper`) rather than the RPC bootstrap registry (`java_client.rs` covers that one; set
/// this to false to run these tools through it).
const THROUGH_ZOOKEEPER: bool = true;

/// How the Java clients find the server.
enum Registry {
    /// `hbase.client.bootstrap.servers`: the RPC connection registry at this `HOST:PORT`.
    Bootstrap(String),
    /// `hbase.zookeeper.quorum` on 127.0.0.1 at this client port.
    ZooKeeper(u16),
}

impl Registry {
    /// The hbase-site.xml properties selecting this registry.
    fn site_xml(&self) -> String {
        let props = match self {
            Registry::Bootstrap(addr) => vec![
                (
                    "hbase.client.registry.impl",
                    "org.apache.hadoop.hbase.client.RpcConnectionRegistry".to_string(),
                ),
                ("hbase.client.bootstrap.servers", addr.clone()),
            ],
            Registry::ZooKeeper(port) => vec![
                ("hbase.zookeeper.quorum", "127.0.0.1".to_string()),
                ("hbase.zookeeper.property.clientPort", port.to_string()),
            ],
        };
        let body: String = props
            .iter()
            .map(|(k, v)| format!("  <property><name>{k}</name><value>{v}</value></property>\n"))
            .collect();
        format!("<configuration>\n{body}</configuration>\n")
    }

    /// The same choice as arguments of CountRows and CreateTable.
    fn args(&self) -> Vec<String> {
        match self {
            Registry::Bootstrap(addr) => vec!["--bootstrap".into(), addr.clone()],
            Registry::ZooKeeper(port) => vec!["--zk".into(), format!("127.0.0.1:{port}")],
        }
    }
}

/// PE's logger at INFO (its results are log lines), the rest at WARN, all on stderr.
const LOG4J: &str = "log4j.rootLogger=WARN,console
log4j.logger.org.apache.hadoop.hbase.PerformanceEvaluation=INFO
log4j.logger.org.apache.hadoop.hbase.test=INFO
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n
";

/// A cairn server (and ZooKeeper, when used) plus a client conf dir pointing at it.
struct Cluster {
    server: Server,
    _zookeeper: Option<ZooKeeper>,
    registry: Registry,
    /// The interop jars with the conf dir in front.
    classpath: String,
    _conf: tempfile::TempDir,
    _data: tempfile::TempDir,
}

impl Cluster {
    fn start(jars: &str) -> Cluster {
        let data = tempfile::tempdir().expect("temp dir");
        let (zookeeper, server, registry) = if THROUGH_ZOOKEEPER {
            let zk = ZooKeeper::start(jars);
            let server = Server::start(data.path(), &["--zookeeper", &zk.connect_string()]);
            let port = zk.port;
            (Some(zk), server, Registry::ZooKeeper(port))
        } else {
            let server = Server::start(data.path(), &[]);
            let addr = server.addr.clone();
            (None, server, Registry::Bootstrap(addr))
        };
        let conf = tempfile::tempdir().expect("temp dir");
        std::fs::write(conf.path().join("hbase-site.xml"), registry.site_xml())
            .expect("write hbase-site.xml");
        std::fs::write(conf.path().join("log4j.properties"), LOG4J)
            .expect("write log4j.properties");
        Cluster {
            server,
            _zookeeper: zookeeper,
            registry,
            classpath: format!("{}:{jars}", conf.path().display()),
            _conf: conf,
            _data: data,
        }
    }

    /// Runs the Java class `main` with `args`, HBase's Java 17 flags and the conf dir, in the
    /// working directory `dir` (MapReduce's local runner writes there) or the test's.
    fn java(&self, dir: Option<&Path>, main: &str, args: &[String]) -> Output {
        let mut c = Command::new("java");
        if let Some(dir) = dir {
            c.current_dir(dir);
        }
        c.args(hbase::JAVA_FLAGS)
            .arg("-cp")
            .arg(&self.classpath)
            .arg(main)
            .args(args)
            .output()
            .expect("run java")
    }

    /// Runs `main` and fails the test, with both sides' logs, unless it exits 0; returns its
    /// stdout and stderr.
    fn run_ok(&self, what: &str, main: &str, args: &[String]) -> (String, String) {
        self.run_ok_in(None, what, main, args)
    }

    /// [`Cluster::run_ok`] in the working directory `dir`.
    fn run_ok_in(
        &self,
        dir: Option<&Path>,
        what: &str,
        main: &str,
        args: &[String],
    ) -> (String, String) {
        let out = self.java(dir, main, args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "{what} against cairn at {} failed ({}):\nstdout (tail):\n{}\nstderr (tail):\n{}\n\
             server stderr (tail):\n{}",
            self.server.addr,
            out.status,
            tail(&stdout, 30),
            tail(&stderr, 40),
            self.server.stderr_tail(40)
        );
        (stdout, stderr)
    }

    /// `hbase pe --nomapred OPTIONS COMMAND CLIENTS`; returns PE's log.
    fn pe(&self, command: &str, clients: u32, options: &[&str]) -> String {
        let mut args = vec!["--nomapred".to_string()];
        args.extend(options.iter().map(|o| o.to_string()));
        args.push(command.to_string());
        args.push(clients.to_string());
        let (stdout, stderr) = self.run_ok(
            &format!("PerformanceEvaluation {args:?}"),
            "org.apache.hadoop.hbase.PerformanceEvaluation",
            &args,
        );
        format!("{stdout}{stderr}")
    }

    /// Rows of `table`, counted by a client full scan.
    fn count_rows(&self, table: &str) -> u64 {
        let mut args = self.registry.args();
        args.push(table.to_string());
        let (stdout, _) = self.run_ok("CountRows", "dev.cairn.interop.CountRows", &args);
        stdout
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("CountRows printed {stdout:?}, not a count: {e}"))
    }
}

/// The interop jars, or `None` (test skipped) when they are not built and not required.
fn jars() -> Option<String> {
    hbase::classpath_or_skip()
}

/// The row counts of PE's "Finished class ... for N rows" lines, one per client thread.
fn pe_finished(log: &str) -> Vec<u64> {
    log.lines()
        .filter(|l| l.contains("Finished class "))
        .filter_map(|l| {
            let rest = &l[l.rfind(" for ")? + " for ".len()..];
            rest.split_whitespace().next()?.parse().ok()
        })
        .collect()
}

/// PE's closing "[ Avg TPS/QPS]" line, for the test's output.
fn pe_throughput(log: &str) -> String {
    log.lines()
        .filter(|l| l.contains("Avg TPS/QPS") || l.contains(" duration ]"))
        .map(|l| l.split("hbase.PerformanceEvaluation: ").last().unwrap_or(l))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Runs one PE command and checks that every client thread finished its rows.
fn pe_step(cluster: &Cluster, command: &str, clients: u32, rows: u64, options: &[&str]) {
    let rows_opt = format!("--rows={rows}");
    let mut all = vec!["--table=PE_TOOLS", rows_opt.as_str()];
    all.extend_from_slice(options);
    let log = cluster.pe(command, clients, &all);
    let finished = pe_finished(&log);
    println!("pe {command} x{clients} {all:?}: {}", pe_throughput(&log));
    assert_eq!(
        finished,
        vec![rows; clients as usize],
        "PE {command}: one \"Finished ... for {rows} rows\" line per client expected; log tail:\n{}",
        tail(&log, 30)
    );
}

#[test]
fn performance_evaluation_writes_reads_and_scans() {
    let Some(jars) = jars() else { return };
    let cluster = Cluster::start(&jars);
    let (clients, rows) = (2u32, 300u64);
    pe_step(
        &cluster,
        "sequentialWrite",
        clients,
        rows,
        &["--presplit=3"],
    );
    assert_eq!(
        cluster.count_rows("PE_TOOLS"),
        rows * u64::from(clients),
        "rows in PE_TOOLS after sequentialWrite"
    );
    pe_step(&cluster, "randomRead", clients, rows, &[]);
    // Each scanRange100 call reads up to 100 rows.
    pe_step(&cluster, "scanRange100", clients, 20, &[]);
    // The reads must not have changed the table.
    assert_eq!(
        cluster.count_rows("PE_TOOLS"),
        rows * u64::from(clients),
        "rows in PE_TOOLS after the reads"
    );
}

/// HBase's data-integrity test, IntegrationTestBigLinkedList (hbase-it's test jar), as an
/// operator runs it against a live cluster (`hbase.test.cluster.distributed=true`), its
/// MapReduce jobs in Hadoop's local runner: one `Loop` iteration generates linked lists of
/// nodes (one mapper, 4,000 nodes; width 1,000 and wrap multiplier 2, whose product the count
/// must be a multiple of) into a table pre-split by the number of live region servers it asks
/// the master for, then `Verify` scans it back and fails unless every node is defined and
/// referenced exactly as written.
#[test]
fn integration_test_big_linked_list_generates_and_verifies() {
    let Some(jars) = jars() else { return };
    let cluster = Cluster::start(&jars);
    let work = tempfile::tempdir().expect("temp dir");
    let nodes = 4_000u64;
    let args: Vec<String> = [
        "-Dhbase.test.cluster.distributed=true",
        "-Dmapreduce.framework.name=local",
        "Loop",
        "1",
        "1",
        &nodes.to_string(),
        &format!("file://{}/out", work.path().display()),
        "1",
        "1000",
        "2",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (stdout, stderr) = cluster.run_ok_in(
        Some(work.path()),
        "IntegrationTestBigLinkedList Loop",
        "org.apache.hadoop.hbase.test.IntegrationTestBigLinkedList",
        &args,
    );
    let log = format!("{stdout}{stderr}");
    for want in [
        "Number of live regionservers: 1,".to_string(),
        format!("Generator finished with success. Total nodes={nodes}"),
        format!("Verify finished with success. Total nodes={nodes}"),
    ] {
        assert!(
            log.contains(&want),
            "ITBLL log lacks {want:?}:\n{}",
            tail(&log, 30)
        );
    }
    assert_eq!(
        cluster.count_rows("IntegrationTestBigLinkedList"),
        nodes,
        "rows in ITBLL's table"
    );
}

/// YCSB's `[SECTION], Metric, value` lines as (section, metric, value).
fn ycsb_metrics(stdout: &str) -> Vec<(String, String, String)> {
    stdout
        .lines()
        .filter(|l| l.starts_with('['))
        .filter_map(|l| {
            let mut parts = l.splitn(3, ", ");
            Some((
                parts.next()?.to_string(),
                parts.next()?.to_string(),
                parts.next()?.trim().to_string(),
            ))
        })
        .collect()
}

/// The value of YCSB's `[section], metric` line, as a whole number (absent: 0).
fn ycsb_count(metrics: &[(String, String, String)], section: &str, metric: &str) -> u64 {
    metrics
        .iter()
        .filter(|(s, m, _)| s == section && m == metric)
        .map(|(_, _, v)| {
            v.parse::<u64>()
                .unwrap_or_else(|e| panic!("{section} {metric} {v:?}: {e}"))
        })
        .sum()
}

fn workload(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../interop/hbase/ycsb")
        .join(name)
}

/// Runs `site.ycsb.Client PHASE` with workload A; returns its metric lines after checking
/// that it reports no failed operation.
fn ycsb(
    cluster: &Cluster,
    phase: &str,
    records: u64,
    operations: u64,
) -> Vec<(String, String, String)> {
    let args: Vec<String> = [
        phase,
        "-db",
        "dev.cairn.interop.ycsb.HBaseBinding",
        "-P",
        &workload("workloada").display().to_string(),
        "-p",
        "columnfamily=family",
        // Values derived from key and field, and every read checked against them (VERIFY).
        "-p",
        "dataintegrity=true",
        "-p",
        &format!("recordcount={records}"),
        "-p",
        &format!("operationcount={operations}"),
        "-threads",
        "2",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (stdout, stderr) = cluster.run_ok(&format!("YCSB {phase}"), "site.ycsb.Client", &args);
    let metrics = ycsb_metrics(&stdout);
    println!(
        "ycsb {phase}: {}",
        metrics
            .iter()
            .filter(|(s, _, _)| s == "[OVERALL]")
            .map(|(_, m, v)| format!("{m} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let bad: Vec<_> = metrics
        .iter()
        .filter(|(_, m, _)| m.starts_with("Return=") && m != "Return=OK")
        .collect();
    assert!(
        bad.is_empty(),
        "YCSB {phase} reported failed operations {bad:?}; binding stderr (tail):\n{}",
        tail(&stderr, 30)
    );
    assert!(
        metrics
            .iter()
            .any(|(s, m, _)| s == "[OVERALL]" && m == "Throughput(ops/sec)"),
        "YCSB {phase} printed no [OVERALL] throughput:\n{stdout}"
    );
    metrics
}

#[test]
fn ycsb_workload_a_through_the_hbase_binding() {
    let Some(jars) = jars() else { return };
    let cluster = Cluster::start(&jars);
    let (records, operations) = (300u64, 600u64);
    // YCSB does not create its table: `create 'usertable', 'family'` first.
    let mut args = cluster.registry.args();
    args.extend(["usertable".to_string(), "family".to_string()]);
    cluster.run_ok("CreateTable", "dev.cairn.interop.CreateTable", &args);

    let load = ycsb(&cluster, "-load", records, operations);
    assert_eq!(
        ycsb_count(&load, "[INSERT]", "Return=OK"),
        records,
        "YCSB -load: inserts reported OK"
    );
    assert_eq!(
        cluster.count_rows("usertable"),
        records,
        "rows after YCSB -load"
    );

    let run = ycsb(&cluster, "-t", records, operations);
    let reads = ycsb_count(&run, "[READ]", "Return=OK");
    let updates = ycsb_count(&run, "[UPDATE]", "Return=OK");
    assert_eq!(
        reads + updates,
        operations,
        "YCSB -t: reads ({reads}) and updates ({updates}) reported OK"
    );
    // Workload A is half reads, half updates: both kinds must have run.
    assert!(reads > 0 && updates > 0, "reads {reads}, updates {updates}");
    assert_eq!(
        ycsb_count(&run, "[VERIFY]", "Return=OK"),
        reads,
        "YCSB -t: reads whose values YCSB verified"
    );
    assert_eq!(
        cluster.count_rows("usertable"),
        records,
        "rows after YCSB -t (updates only)"
    );
}
