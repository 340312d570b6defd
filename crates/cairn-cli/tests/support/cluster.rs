// Shared by several test files, each using a part of it.
#![allow(dead_code)]
//! A distributed HBase 2.6.1 cluster on one machine for end-to-end tests: a ZooKeeper
//! (`support/zookeeper.rs`, short tick), an `HMaster` and region servers, each its own process
//! on free ports, logging to its own file, all sharing one conf dir (`hbase-site.xml`) and a
//! `file://` root in a temp dir. Region servers are HBase's `HRegionServer` JVMs, or anything
//! else a [`RegionServerKind`] can launch with the same conf dir. HBase's own client drives the
//! cluster through ZooKeeper (`dev.cairn.interop.ClusterCheck`, one long-lived JVM).
//!
//! Every process is killed (SIGKILL) when the [`Cluster`] drops, also when a test panics; then
//! the tail of every log is printed and the temp dir is kept (its path printed too).
//!
//! The test file declares `mod hbase` (`cairn-hfile/tests/support/hbase.rs`) and `mod
//! zookeeper` (`support/zookeeper.rs`) beside this module.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::hbase;
use crate::zookeeper::ZooKeeper;

/// ZooKeeper's tick: sessions may then last between 0.6 s and 6 s.
const ZK_TICK: Duration = Duration::from_millis(300);

/// The session HBase's processes ask for (ZooKeeper's cap at `ZK_TICK`): a killed region
/// server is noticed this long after it died. Shorter makes a stalled JVM on a busy host lose
/// its session.
pub const SESSION_TIMEOUT_MS: u32 = 6000;

/// How long the master may take to come up with every region server (30-60 s on a busy host).
const READY: Duration = Duration::from_secs(240);

/// JVM flags for the master and HBase's region servers: a modest heap, and the serial
/// collector with C1 only, which start faster and use less CPU on two shared cores.
const SERVER_JVM: &[&str] = &[
    "-Xms256m",
    "-Xmx640m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
];

/// The properties every process of the cluster reads from `CONF/hbase-site.xml`. Per-process
/// settings (ports) are `-D` options on each command line instead.
fn site_properties(
    root: &Path,
    tmp: &Path,
    zk_port: u16,
    region_servers: usize,
) -> Vec<(&'static str, String)> {
    vec![
        ("hbase.cluster.distributed", "true".into()),
        ("hbase.rootdir", format!("file://{}", root.display())),
        // Otherwise /tmp/hbase-$USER, shared with every other test.
        ("hbase.tmp.dir", tmp.display().to_string()),
        ("hbase.zookeeper.quorum", "127.0.0.1".into()),
        ("hbase.zookeeper.property.clientPort", zk_port.to_string()),
        ("zookeeper.session.timeout", SESSION_TIMEOUT_MS.to_string()),
        // Hadoop's checksummed local filesystem buffers in the JVM: a kill -9 would lose the
        // WAL's tail, which no real HBase (on HDFS) loses.
        (
            "fs.file.impl",
            "org.apache.hadoop.fs.RawLocalFileSystem".into(),
        ),
        // The local filesystem has no hflush/hsync capability to enforce.
        ("hbase.unsafe.stream.capability.enforce", "false".into()),
        // The async WAL wants HDFS.
        ("hbase.wal.provider", "filesystem".into()),
        // User regions go to region servers only, never to the master.
        ("hbase.balancer.tablesOnMaster", "false".into()),
        // Regions stay where the tests put them: no balancer run within a test (the tests
        // also switch it off through Admin).
        ("hbase.balancer.period", "3600000".into()),
        // Meta is assigned once every region server is there, so start-up does the same
        // thing every time, and right then (the master otherwise waits 4.5 s more for others).
        (
            "hbase.master.wait.on.regionservers.mintostart",
            region_servers.to_string(),
        ),
        (
            "hbase.master.wait.on.regionservers.maxtostart",
            region_servers.to_string(),
        ),
        // Reports (and so the master's view of loads) every second rather than every 3.
        ("hbase.regionserver.msginterval", "1000".into()),
        // Short client pauses: retries after a move or a crash find the region sooner.
        ("hbase.client.pause", "50".into()),
        // Fewer idle threads per process on two cores.
        ("hbase.regionserver.handler.count", "10".into()),
    ]
}

/// A free TCP port on 127.0.0.1 (free when asked; the process binds it soon after).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// The last `lines` lines of a file ("" when it cannot be read), stack frames left out.
pub fn file_tail(path: &Path, lines: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().filter(|l| !l.starts_with("\tat ")).collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A child process with its output in a log file, killed (SIGKILL) and reaped when dropped.
pub struct Process {
    child: Option<Child>,
    /// Where its stdout and stderr go.
    pub log: PathBuf,
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Process {
    /// Spawns `cmd` with stdin closed and stdout and stderr appended to `log`.
    pub fn spawn(mut cmd: Command, log: &Path) -> Process {
        let out = File::options()
            .create(true)
            .append(true)
            .open(log)
            .expect("log file");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("log file"))
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
        Process {
            child: Some(child),
            log: log.to_path_buf(),
        }
    }

    /// Its process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether it has exited (reaped) and how.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.as_mut()?.try_wait().expect("try_wait")
    }

    /// Sends `sig` (a `kill` option such as `-TERM`) to the process.
    pub fn signal(&self, sig: &str) {
        let pid = self.pid().expect("process not started");
        let ok = Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill {sig} {pid}");
    }

    /// Waits up to `limit` for the process to exit; `None` if it still runs.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILL, then reaps it.
    pub fn kill9(&mut self) -> ExitStatus {
        let child = self.child.as_mut().expect("process not started");
        let _ = child.kill();
        child.wait().expect("wait")
    }

    /// The last `lines` lines of its log.
    pub fn log_tail(&self, lines: usize) -> String {
        file_tail(&self.log, lines)
    }
}

/// What runs as a region server of the cluster. Each reads the cluster's conf dir; its ports
/// come as `-D` options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionServerKind {
    /// HBase 2.6.1's `HRegionServer` from the interop jars.
    HBase,
    /// `cairn regionserver start` (this crate's binary).
    Cairn,
}

impl RegionServerKind {
    /// The command that starts this kind of region server with the cluster's conf dir on RPC
    /// `port` and web UI `info_port`.
    pub fn command(&self, cp: &str, conf: &Path, port: u16, info_port: u16) -> Command {
        match self {
            RegionServerKind::HBase => java_server(
                cp,
                conf,
                "org.apache.hadoop.hbase.regionserver.HRegionServer",
                &[
                    format!("hbase.regionserver.port={port}"),
                    format!("hbase.regionserver.info.port={info_port}"),
                ],
            ),
            RegionServerKind::Cairn => {
                let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
                cmd.args(["regionserver", "start", "--conf"])
                    .arg(conf)
                    .args(["-D", &format!("hbase.regionserver.port={port}")])
                    .args(["-D", &format!("hbase.regionserver.info.port={info_port}")])
                    .env("RUST_LOG", "info");
                cmd
            }
        }
    }
}

/// `java ... CLASS -D k=v ... start`: HBase's server command lines take Hadoop's generic
/// options (`-D`) before the command.
fn java_server(cp: &str, conf: &Path, class: &str, defines: &[String]) -> Command {
    let mut cmd = Command::new("java");
    cmd.args(SERVER_JVM)
        .args(&hbase::JAVA_FLAGS[..hbase::JAVA_FLAGS.len() - 1])
        .arg("-cp")
        .arg(format!("{}:{cp}", conf.display()))
        .arg(class);
    for d in defines {
        cmd.args(["-D", d]);
    }
    cmd.arg("start");
    cmd
}

/// One region server of the cluster.
pub struct RegionServer {
    /// What runs.
    pub kind: RegionServerKind,
    /// Its RPC port on 127.0.0.1.
    pub port: u16,
    /// Its web UI port.
    pub info_port: u16,
    /// Its name as the master knows it (`host,port,startcode`), once [`Cluster::wait_ready`]
    /// has seen it; a restart makes a new one.
    pub server_name: Option<String>,
    process: Process,
    /// How many times it was started.
    pub starts: u32,
}

impl RegionServer {
    /// Its server name as the master knows it.
    pub fn name(&self) -> &str {
        self.server_name
            .as_deref()
            .expect("server name unknown: call Cluster::wait_ready first")
    }

    /// SIGKILL, and waits for it to be gone.
    pub fn kill9(&mut self) -> ExitStatus {
        self.process.kill9()
    }

    /// SIGTERM, and waits up to `limit` for it to exit (`None`: still running).
    pub fn sigterm(&mut self, limit: Duration) -> Option<ExitStatus> {
        self.process.signal("-TERM");
        self.process.wait_exit(limit)
    }

    /// Whether the process has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.process.try_wait()
    }

    /// Its process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    /// Its log file.
    pub fn log(&self) -> &Path {
        &self.process.log
    }

    /// The last `lines` lines of its log.
    pub fn log_tail(&self, lines: usize) -> String {
        self.process.log_tail(lines)
    }
}

/// A running cluster; every process is killed when it drops.
pub struct Cluster {
    /// The region servers, in the order given to [`Cluster::start`]. (Declared first: dropped
    /// first.)
    pub region_servers: Vec<RegionServer>,
    client: Option<Client>,
    master: Process,
    /// The master's RPC port.
    pub master_port: u16,
    zk: ZooKeeper,
    /// The interop classpath.
    pub cp: String,
    /// The conf dir holding `hbase-site.xml` (and `log4j.properties` for the servers).
    pub conf: PathBuf,
    /// `hbase.rootdir` (a local path).
    pub root: PathBuf,
    dir: Option<tempfile::TempDir>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if thread::panicking() {
            eprintln!("{}", self.logs_tail(40));
            if let Some(dir) = self.dir.take() {
                eprintln!(
                    "cluster files (logs, root) kept in {}",
                    dir.keep().display()
                );
            }
        }
        self.region_servers.clear();
        self.client = None;
    }
}

impl Cluster {
    /// Writes the conf dir and starts ZooKeeper, the master and one region server per entry
    /// of `kinds`; returns without waiting for the master (see [`Cluster::wait_ready`]).
    pub fn start(cp: &str, kinds: &[RegionServerKind]) -> Cluster {
        Cluster::start_with(cp, kinds, &[])
    }

    /// [`Cluster::start`] with `extra` properties in `hbase-site.xml` (after the harness's).
    pub fn start_with(cp: &str, kinds: &[RegionServerKind], extra: &[(&str, &str)]) -> Cluster {
        let dir = tempfile::tempdir().expect("temp dir");
        let base = dir.path().to_path_buf();
        let conf = base.join("conf");
        let root = base.join("root");
        fs::create_dir_all(&conf).expect("conf dir");
        let zk = ZooKeeper::start_with_tick_time(cp, ZK_TICK);
        let mut props = site_properties(&root, &base.join("tmp"), zk.port, kinds.len());
        props.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        write_conf(&conf, &props);
        let master_port = free_port();
        let master = Process::spawn(
            java_server(
                cp,
                &conf,
                "org.apache.hadoop.hbase.master.HMaster",
                &[
                    format!("hbase.master.port={master_port}"),
                    format!("hbase.master.info.port={}", free_port()),
                ],
            ),
            &base.join("master.log"),
        );
        let mut cluster = Cluster {
            region_servers: Vec::new(),
            client: None,
            master,
            master_port,
            zk,
            cp: cp.to_string(),
            conf,
            root,
            dir: Some(dir),
        };
        for &kind in kinds {
            cluster.add_region_server(kind);
        }
        cluster
    }

    /// Starts one more region server of `kind` (index: the number there were); call
    /// [`Cluster::wait_ready`] to learn its name.
    pub fn add_region_server(&mut self, kind: RegionServerKind) -> usize {
        let (port, info_port) = (free_port(), free_port());
        let i = self.region_servers.len();
        let log = self.dir().join(format!("rs{i}.log"));
        let process = Process::spawn(kind.command(&self.cp, &self.conf, port, info_port), &log);
        self.region_servers.push(RegionServer {
            kind,
            port,
            info_port,
            server_name: None,
            process,
            starts: 1,
        });
        i
    }

    /// The temp dir holding the conf dir, the root and the logs.
    pub fn dir(&self) -> &Path {
        self.dir.as_ref().expect("cluster dir").path()
    }

    /// ZooKeeper's client port.
    pub fn zk_port(&self) -> u16 {
        self.zk.port
    }

    /// The master's log.
    pub fn master_log(&self) -> String {
        fs::read_to_string(&self.master.log).unwrap_or_default()
    }

    /// The last lines of every log (master, region servers, client), for failure messages.
    pub fn logs_tail(&self, lines: usize) -> String {
        let mut out = format!(
            "--- master ({})\n{}\n",
            self.master.log.display(),
            self.master.log_tail(lines)
        );
        for (i, rs) in self.region_servers.iter().enumerate() {
            out.push_str(&format!(
                "--- region server {i} ({:?}, port {}, {})\n{}\n",
                rs.kind,
                rs.port,
                rs.log().display(),
                rs.log_tail(lines)
            ));
        }
        let client = self.dir().join("client.log");
        out.push_str(&format!(
            "--- client ({})\n{}\n",
            client.display(),
            file_tail(&client, lines)
        ));
        out
    }

    /// Starts region server `i` again (a new process on the same ports, so a new start code)
    /// after it was killed or stopped; call [`Cluster::wait_ready`] to learn its new name.
    pub fn restart(&mut self, i: usize) {
        let rs = &mut self.region_servers[i];
        assert!(
            rs.process.try_wait().is_some(),
            "region server {i} still runs"
        );
        let cmd = rs.kind.command(&self.cp, &self.conf, rs.port, rs.info_port);
        rs.process = Process::spawn(cmd, &rs.process.log.clone());
        rs.server_name = None;
        rs.starts += 1;
    }

    /// Waits until the master is initialized with every running region server live and meta
    /// assigned, and learns each one's server name. Returns the `SERVER`/`META` lines.
    pub fn wait_ready(&mut self) -> Vec<String> {
        let running = self
            .region_servers
            .iter_mut()
            .filter_map(|rs| rs.process.try_wait().is_none().then_some(()))
            .count();
        for (i, rs) in self.region_servers.iter_mut().enumerate() {
            if let Some(status) = rs.process.try_wait() {
                if rs.server_name.is_none() && rs.starts == 1 {
                    panic!(
                        "region server {i} exited ({status}) while starting:\n{}",
                        rs.log_tail(60)
                    );
                }
            }
        }
        if let Some(status) = self.master.try_wait() {
            panic!(
                "the master exited ({status}):\n{}",
                self.master.log_tail(80)
            );
        }
        let lines = self.check(&format!("wait-ready {running} {}", READY.as_secs()));
        for rs in self.region_servers.iter_mut() {
            if rs.process.try_wait().is_some() {
                rs.server_name = None;
                continue;
            }
            let tag = format!(",{},", rs.port);
            rs.server_name = lines
                .iter()
                .filter_map(|l| l.strip_prefix("SERVER "))
                .find(|name| name.contains(&tag))
                .map(str::to_string);
            assert!(
                rs.server_name.is_some(),
                "no live server on port {}: {lines:?}",
                rs.port
            );
        }
        lines
    }

    /// Runs one `ClusterCheck` command in the cluster's client JVM and returns its lines;
    /// panics when it fails (the cluster's drop then prints every log's tail).
    pub fn check(&mut self, command: &str) -> Vec<String> {
        match self.try_check(command) {
            Ok(lines) => lines,
            Err(lines) => panic!("ClusterCheck {command} failed:\n{}", lines.join("\n")),
        }
    }

    /// [`Cluster::check`] that returns the lines of a failure (`FAIL ...` last) as `Err`.
    pub fn try_check(&mut self, command: &str) -> Result<Vec<String>, Vec<String>> {
        if self.client.is_none() {
            self.client = Some(Client::start(
                &self.cp,
                &self.conf,
                &self.dir().join("client.log"),
            ));
        }
        self.client.as_mut().expect("client").run(command)
    }

    /// Runs one `ClusterCheck` command in a JVM of its own whose client finds the cluster
    /// through region server `server`'s `ClientMetaService` (HBase's `RpcConnectionRegistry`
    /// with `hbase.client.bootstrap.servers`) rather than ZooKeeper; returns its lines and
    /// panics when it fails.
    pub fn check_through(&self, server: &str, command: &str) -> Vec<String> {
        let mut parts = server.split(',');
        let (host, port) = (
            parts.next().unwrap(),
            parts.next().expect("host,port,startcode"),
        );
        let conf = self.dir().join(format!("bootstrap-{port}"));
        fs::create_dir_all(&conf).expect("bootstrap conf dir");
        fs::write(
            conf.join("hbase-site.xml"),
            format!(
                "<configuration>\n\
                 <property><name>hbase.client.registry.impl</name>\
                 <value>org.apache.hadoop.hbase.client.RpcConnectionRegistry</value></property>\n\
                 <property><name>hbase.client.bootstrap.servers</name>\
                 <value>{host}:{port}</value></property>\n\
                 </configuration>\n"
            ),
        )
        .expect("bootstrap hbase-site.xml");
        fs::copy(
            self.conf.join("log4j-client.properties"),
            conf.join("log4j-client.properties"),
        )
        .expect("log4j-client.properties");
        // A registry that never answers has HBase's client retry without end: the command
        // gets a deadline.
        let log = conf.join("client.log");
        let mut child = client_command(&self.cp, &conf)
            .args(command.split_whitespace())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(File::create(&log).expect("client log"))
            .spawn()
            .expect("run ClusterCheck");
        let mut stdout = child.stdout.take().expect("piped stdout");
        let reader = thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
            s
        });
        let deadline = Instant::now() + Duration::from_secs(120);
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for ClusterCheck") {
                break Some(status);
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            thread::sleep(Duration::from_millis(100));
        };
        let stdout = reader.join().unwrap_or_default();
        assert!(
            status.is_some_and(|s| s.success()),
            "ClusterCheck {command} through {server}'s registry failed ({status:?}; None: no \
             end within 120 s):\n{stdout}\n{}",
            file_tail(&log, 30)
        );
        stdout.lines().map(str::to_string).collect()
    }

    /// Where every region is: `(table, encoded name, server name)`, meta first.
    pub fn regions(&mut self, table: Option<&str>) -> Vec<(String, String, String)> {
        let cmd = match table {
            Some(t) => format!("regions {t}"),
            None => "regions".to_string(),
        };
        parse_regions(&self.check(&cmd))
    }

    /// Starts `ClusterCheck load TABLE FROM TO` in a JVM of its own, reading its `ACKED` lines
    /// as they come.
    pub fn spawn_load(&self, table: &str, from: u64, to: u64) -> Load {
        let mut cmd = client_command(&self.cp, &self.conf);
        cmd.args(["load", table, &from.to_string(), &to.to_string()]);
        let log = self.dir().join(format!("load-{table}-{from}-{to}.log"));
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(File::create(&log).expect("load log"))
            .spawn()
            .expect("run ClusterCheck load");
        let stdout = child.stdout.take().expect("piped stdout");
        let state = Arc::new(Mutex::new(LoadState::default()));
        let seen = Arc::clone(&state);
        let reader = thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let mut s = seen.lock().unwrap();
                if let Some(n) = line.strip_prefix("ACKED ") {
                    s.acked = Some(n.parse().expect("ACKED row number"));
                } else {
                    s.other.push(line);
                }
            }
        });
        Load {
            child: Some(child),
            state,
            reader: Some(reader),
            stderr: log,
        }
    }
}

/// `(table, encoded name, server name)` from `REGION table encoded startkey server` lines.
pub fn parse_regions(lines: &[String]) -> Vec<(String, String, String)> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("REGION "))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 4, "REGION line: {l}");
            (f[0].to_string(), f[1].to_string(), f[3].to_string())
        })
        .collect()
}

fn write_conf(conf: &Path, props: &[(&str, String)]) {
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<configuration>\n");
    for (k, v) in props {
        xml.push_str(&format!(
            "  <property><name>{k}</name><value>{v}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    fs::write(conf.join("hbase-site.xml"), xml).expect("hbase-site.xml");
    // For the servers (the conf dir is on their classpath): INFO to their log file.
    fs::write(
        conf.join("log4j.properties"),
        "log4j.rootLogger=INFO,console\n\
         log4j.appender.console=org.apache.log4j.ConsoleAppender\n\
         log4j.appender.console.layout=org.apache.log4j.PatternLayout\n\
         log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n\n",
    )
    .expect("log4j.properties");
    // For the client, whose stdout is its answer: warnings only, to stderr.
    fs::write(
        conf.join("log4j-client.properties"),
        "log4j.rootLogger=WARN,stderr\n\
         log4j.appender.stderr=org.apache.log4j.ConsoleAppender\n\
         log4j.appender.stderr.Target=System.err\n\
         log4j.appender.stderr.layout=org.apache.log4j.PatternLayout\n\
         log4j.appender.stderr.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n\n",
    )
    .expect("log4j-client.properties");
}

/// `java ... dev.cairn.interop.ClusterCheck CONF` (the command follows).
fn client_command(cp: &str, conf: &Path) -> Command {
    let mut cmd = Command::new("java");
    cmd.args(["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"])
        .arg(format!(
            "-Dlog4j.configuration=file:{}",
            conf.join("log4j-client.properties").display()
        ))
        .args(&hbase::JAVA_FLAGS[..hbase::JAVA_FLAGS.len() - 1])
        .arg("-cp")
        .arg(cp)
        .arg("dev.cairn.interop.ClusterCheck")
        .arg(conf);
    cmd
}

/// `ClusterCheck CONF shell`: one client JVM (one HBase Connection) for every command, so
/// each costs no JVM start.
struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The longest a client command may take (its own deadlines are shorter).
const COMMAND_LIMIT: Duration = Duration::from_secs(300);

impl Client {
    fn start(cp: &str, conf: &Path, log: &Path) -> Client {
        let mut child = client_command(cp, conf)
            .arg("shell")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(
                File::options()
                    .create(true)
                    .append(true)
                    .open(log)
                    .expect("client log"),
            )
            .spawn()
            .expect("run ClusterCheck shell");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            stdin,
            lines: rx,
        }
    }

    fn run(&mut self, command: &str) -> Result<Vec<String>, Vec<String>> {
        let mut out = Vec::new();
        if writeln!(self.stdin, "{command}")
            .and_then(|_| self.stdin.flush())
            .is_err()
        {
            out.push("FAIL the client JVM is gone".to_string());
            return Err(out);
        }
        let deadline = Instant::now() + COMMAND_LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line == "DONE 0" => return Ok(out),
                Ok(line) if line.starts_with("DONE ") => return Err(out),
                Ok(line) => out.push(line),
                Err(_) => {
                    out.push(format!(
                        "FAIL no answer within {COMMAND_LIMIT:?} (or the client JVM exited)"
                    ));
                    return Err(out);
                }
            }
        }
    }
}

#[derive(Default)]
struct LoadState {
    acked: Option<u64>,
    other: Vec<String>,
}

/// A `ClusterCheck load` running in the background; killed when dropped.
pub struct Load {
    child: Option<Child>,
    state: Arc<Mutex<LoadState>>,
    reader: Option<thread::JoinHandle<()>>,
    /// Its stderr (the client's log).
    pub stderr: PathBuf,
}

impl Drop for Load {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// How a background load ended.
#[derive(Debug)]
pub struct LoadOutcome {
    /// Its exit status.
    pub status: ExitStatus,
    /// The last row acknowledged (each put is synchronous: every row before it was too).
    pub last_acked: Option<u64>,
    /// Its other stdout lines (`LOADED n`, `FAIL ...`).
    pub other: Vec<String>,
}

impl Load {
    /// The last row acknowledged so far.
    pub fn acked(&self) -> Option<u64> {
        self.state.lock().unwrap().acked
    }

    /// Waits until row `at_least` (or a later one) is acknowledged; panics after `limit` or
    /// when the load ends first.
    pub fn wait_acked(&mut self, at_least: u64, limit: Duration) {
        let deadline = Instant::now() + limit;
        while self.acked().is_none_or(|a| a < at_least) {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!(
                    "the load exited ({status}) at {:?}: {:?}\n{}",
                    self.acked(),
                    self.state.lock().unwrap().other,
                    file_tail(&self.stderr, 30)
                );
            }
            assert!(
                Instant::now() < deadline,
                "row {at_least} not acknowledged within {limit:?} (last {:?})",
                self.acked()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits up to `limit` for the load to end (`None`: still running; it is left running).
    pub fn wait(&mut self, limit: Duration) -> Option<LoadOutcome> {
        let deadline = Instant::now() + limit;
        let status = loop {
            let child = self.child.as_mut().expect("load already waited for");
            if let Some(status) = child.try_wait().expect("try_wait") {
                break status;
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(50));
        };
        self.child = None;
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        let s = self.state.lock().unwrap();
        Some(LoadOutcome {
            status,
            last_acked: s.acked,
            other: s.other.clone(),
        })
    }
}
