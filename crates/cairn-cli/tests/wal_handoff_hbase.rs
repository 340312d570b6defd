//! Moving from an HBase that died: HBase 2.6.1 standalone (master, region server and ZooKeeper
//! in one JVM on a local root, as scripts/hbase-client-check.sh starts it, with the raw local
//! filesystem so that its WAL outlives a kill -9) takes SYNC_WAL puts and deletes through its
//! own client (`dev.cairn.interop.WalHandoff load`), nothing flushed, and is killed with
//! SIGKILL. `cairn serve` on the same root replays HBase's WAL and serves every acknowledged
//! row (`WalHandoff verify`, HBase's client again), and lists only the user table: HBase's
//! `hbase:meta` and `hbase:namespace` are not tables of its.
//!
//! One test does all the HBase work (a standalone start costs ~40 s). Needs `mvn -f
//! interop/hbase/pom.xml package`; skipped without the jars unless
//! `CAIRN_REQUIRE_HBASE_INTEROP=1`.

#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

#[path = "support/serve.rs"]
mod serve;

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serve::{tail, Server};

const ROWS: &str = "26000";
const TABLE: &str = "handoff";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// HBase's JVM, killed with SIGKILL when dropped (a failing assertion leaves nothing behind).
struct HBase {
    child: Child,
    log: PathBuf,
}

impl Drop for HBase {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HBase {
    fn log_tail(&self) -> String {
        tail(&fs::read_to_string(&self.log).unwrap_or_default(), 40)
    }
}

fn start_hbase(cp: &str, work: &Path, root: &Path, master: u16) -> HBase {
    let conf = work.join("conf");
    fs::create_dir_all(&conf).unwrap();
    let props = [
        ("hbase.cluster.distributed", "false".to_string()),
        ("hbase.rootdir", format!("file://{}", root.display())),
        ("hbase.tmp.dir", work.join("tmp").display().to_string()),
        (
            "hbase.zookeeper.property.dataDir",
            work.join("zk").display().to_string(),
        ),
        (
            "hbase.zookeeper.property.clientPort",
            free_port().to_string(),
        ),
        ("hbase.master.port", master.to_string()),
        ("hbase.regionserver.port", free_port().to_string()),
        ("hbase.master.info.port", "-1".into()),
        ("hbase.regionserver.info.port", "-1".into()),
        ("hbase.unsafe.stream.capability.enforce", "false".into()),
        ("hbase.wal.provider", "filesystem".into()),
        // Hadoop's checksummed local filesystem buffers in the JVM: a kill -9 would lose the
        // WAL's tail, which no real HBase (on HDFS) loses.
        (
            "fs.file.impl",
            "org.apache.hadoop.fs.RawLocalFileSystem".into(),
        ),
    ];
    let mut xml = String::from("<configuration>\n");
    for (k, v) in props {
        xml.push_str(&format!(
            "  <property><name>{k}</name><value>{v}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    fs::write(conf.join("hbase-site.xml"), xml).unwrap();
    fs::write(
        conf.join("log4j.properties"),
        "log4j.rootLogger=INFO,console\n\
         log4j.appender.console=org.apache.log4j.ConsoleAppender\n\
         log4j.appender.console.layout=org.apache.log4j.PatternLayout\n\
         log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n\n",
    )
    .unwrap();
    let log = work.join("hbase.log");
    let out = fs::File::create(&log).unwrap();
    let child = Command::new("java")
        .args(["-Xms512m", "-Xmx2g"])
        .args(&hbase::JAVA_FLAGS[..hbase::JAVA_FLAGS.len() - 1])
        .arg("-cp")
        .arg(format!("{}:{cp}", conf.display()))
        .args(["org.apache.hadoop.hbase.master.HMaster", "start"])
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .expect("run HBase");
    let mut hbase = HBase { child, log };
    let started = Instant::now();
    loop {
        let text = fs::read_to_string(&hbase.log).unwrap_or_default();
        if text.contains("Master has completed initialization") {
            return hbase;
        }
        if let Ok(Some(status)) = hbase.child.try_wait() {
            panic!(
                "HBase exited ({status}) while starting:\n{}",
                hbase.log_tail()
            );
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "HBase not ready after 300 s:\n{}",
            hbase.log_tail()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Files under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = fs::read_dir(dir) else {
        return out;
    };
    for e in rd {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn cairn_serves_every_row_an_hbase_killed_with_sigkill_acknowledged() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("hbase");
    let master = free_port();
    let mut hbase = start_hbase(&cp, work.path(), &root, master);
    let load = hbase::java(
        &cp,
        "WalHandoff",
        &[
            "load",
            "--bootstrap",
            &format!("127.0.0.1:{master}"),
            TABLE,
            ROWS,
        ],
    );
    let stdout = String::from_utf8_lossy(&load.stdout);
    assert!(
        load.status.success() && stdout.contains("loaded"),
        "loading HBase failed: {}\n{}\nHBase's log:\n{}",
        tail(&stdout, 5),
        tail(&String::from_utf8_lossy(&load.stderr), 30),
        hbase.log_tail()
    );
    // kill -9: nothing flushed, nothing closed.
    hbase.child.kill().unwrap();
    hbase.child.wait().unwrap();
    let table_dir = root.join("data/default").join(TABLE);
    let store_files: Vec<PathBuf> = files_under(&table_dir)
        .into_iter()
        .filter(|p| p.parent().unwrap().file_name().unwrap() == "f")
        .collect();
    assert!(store_files.is_empty(), "HBase flushed: {store_files:?}");
    let wals = files_under(&root.join("WALs"));
    assert!(!wals.is_empty(), "HBase left no WAL");

    let server = Server::start(&root, &[]);
    let verify = hbase::java(
        &cp,
        "WalHandoff",
        &["verify", "--bootstrap", &server.addr, TABLE, ROWS],
    );
    let stdout = String::from_utf8_lossy(&verify.stdout);
    assert!(
        verify.status.success(),
        "cairn serve on the root HBase left:\n{}\nclient stderr:\n{}\nserver:\n{}",
        tail(&stdout, 20),
        tail(&String::from_utf8_lossy(&verify.stderr), 20),
        server.stderr_tail(40)
    );
    let tables: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("table "))
        .collect();
    assert_eq!(tables, [TABLE], "{stdout}");
    // HBase's system tables are not opened as tables: one table, its three regions.
    let opened = server.stdout.lock().unwrap().clone();
    assert!(opened.contains("(1 tables, 3 regions, "), "{opened}");
    drop(server);
    drop(hbase);
}
