//! `cairn serve --zookeeper` against a real ZooKeeper (`ZooKeeperServerMain` from the interop
//! jars), read back by HBase 2.6.1's own code: `dev.cairn.interop.ZkRegistryView` reads the
//! znodes through the classes a real cluster uses (`ZKClusterId`, `MasterAddressTracker`,
//! `MetaTableLocator`) and prints their raw bytes, and `ClientApiCheck --zookeeper` runs the
//! Java client's checks with the default ZooKeeper connection registry. Expected values come
//! from what cairn printed at start (its server name and cluster id) and HBase's formats.
//!
//! Needs `mvn -f interop/hbase/pom.xml package` first. Without the jars the tests that need
//! them are skipped, unless `CAIRN_REQUIRE_HBASE_INTEROP=1` makes that a failure.

#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

#[path = "support/serve.rs"]
mod serve;

#[path = "support/zookeeper.rs"]
mod zookeeper;

use std::collections::BTreeMap;
use std::fs::File;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serve::{tail, Server};
use zookeeper::ZooKeeper;

fn classpath() -> Option<String> {
    hbase::classpath_or_skip()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// What a running cairn said about itself: (server name, cluster id).
fn identity(server: &Server) -> (String, String) {
    identity_in(&server.stdout.lock().unwrap())
}

/// The server name and cluster id in cairn's start-up lines `out`.
fn identity_in(out: &str) -> (String, String) {
    let between = |from: &str, to: &str| -> String {
        let at = out
            .find(from)
            .unwrap_or_else(|| panic!("no {from:?} in:\n{out}"))
            + from.len();
        let end = out[at..].find(to).expect("terminator") + at;
        out[at..end].to_string()
    };
    (
        between("server name ", ", cluster id "),
        between("cluster id ", ";"),
    )
}

/// Waits until the server's stdout holds `needle` (the registration line comes after the
/// address line `Server::start` waits for).
fn wait_for_stdout(server: &Server, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = server.stdout.lock().unwrap().clone();
        if out.contains(needle) {
            return out;
        }
        assert!(
            Instant::now() < deadline,
            "cairn serve never printed {needle:?}; stdout:\n{out}\nstderr:\n{}",
            server.stderr_tail(30)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What HBase's own ZooKeeper code reads: `key -> rest of line`, raw znodes as
/// `znode PATH -> ephemeral=… hex=…`.
fn view(cp: &str, zk: &ZooKeeper) -> BTreeMap<String, String> {
    let out = hbase::java(cp, "ZkRegistryView", &[&zk.connect_string()]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "ZkRegistryView failed:\n{text}\n{}",
        tail(&String::from_utf8_lossy(&out.stderr), 30)
    );
    let mut map = BTreeMap::new();
    for line in text.lines() {
        let (key, rest) = if let Some(r) = line.strip_prefix("znode ") {
            let (path, rest) = r.split_once(' ').unwrap_or((r, ""));
            (format!("znode {path}"), rest)
        } else if let Some(r) = line.strip_prefix("rs_info ") {
            let (name, rest) = r.split_once(' ').unwrap_or((r, ""));
            (format!("rs_info {name}"), rest)
        } else {
            let (k, rest) = line.split_once(' ').unwrap_or((line, ""));
            (k.to_string(), rest)
        };
        map.insert(key, rest.to_string());
    }
    map
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

/// Checks the raw bytes of `path`: ephemeral or not, and HBase's metadata prefix naming
/// `identifier` (+ 8 salt bytes) before `PBUF`.
fn check_raw(v: &BTreeMap<String, String>, path: &str, ephemeral: bool, identifier: &str) {
    let line = v
        .get(&format!("znode {path}"))
        .unwrap_or_else(|| panic!("no znode line for {path}: {v:#?}"));
    assert!(
        line.starts_with(&format!("ephemeral={ephemeral} ")),
        "{path}: {line}"
    );
    let data = unhex(line.split("hex=").nth(1).expect("hex="));
    let id = identifier.as_bytes();
    assert!(
        data.len() > 5 + id.len() + 8 + 4,
        "{path}: too short {data:02x?}"
    );
    assert_eq!(data[0], 0xFF, "{path}: metadata magic");
    let len = i32::from_be_bytes(data[1..5].try_into().unwrap());
    assert_eq!(len as usize, id.len() + 8, "{path}: identifier length");
    assert_eq!(&data[5..5 + id.len()], id, "{path}: identifier");
    let pb = 5 + id.len() + 8;
    assert_eq!(&data[pb..pb + 4], b"PBUF", "{path}: protobuf magic");
}

fn rs_children(v: &BTreeMap<String, String>) -> Vec<String> {
    let list = v.get("rs").expect("rs line");
    list.trim_matches(|c| c == '[' || c == ']')
        .split(", ")
        .filter(|s| !s.is_empty() && *s != "-")
        .map(str::to_string)
        .collect()
}

fn client_check(cp: &str, zk: &ZooKeeper, server: &Server) {
    let out = hbase::java(
        cp,
        "ClientApiCheck",
        &["--zookeeper", &zk.connect_string(), "--deadline", "240"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "ClientApiCheck through ZooKeeper {} failed ({}):\n{}\nclient stderr (tail):\n{}\n\
         server stderr (tail):\n{}",
        zk.connect_string(),
        out.status,
        stdout
            .lines()
            .filter(|l| l.starts_with("FAIL") || l.starts_with("summary"))
            .collect::<Vec<_>>()
            .join("\n"),
        tail(&String::from_utf8_lossy(&out.stderr), 40),
        server.stderr_tail(40)
    );
    let summary = stdout.lines().find(|l| l.starts_with("summary"));
    println!("ClientApiCheck via zookeeper: {summary:?}");
}

#[test]
fn hbase_clients_find_cairn_through_zookeeper() {
    let Some(cp) = classpath() else { return };
    let zk = ZooKeeper::start(&cp);
    let quorum = zk.connect_string();
    let data = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let rpc = format!("127.0.0.1:{port}");
    let args = ["--zookeeper", quorum.as_str(), "--hbase", rpc.as_str()];

    // First incarnation.
    let first = Server::start(data.path(), &args);
    let out = wait_for_stdout(&first, "registered in zookeeper");
    assert!(
        out.contains(&format!("registered in zookeeper {quorum} under /hbase")),
        "{out}"
    );
    let (name1, cluster_id) = identity(&first);
    assert!(name1.starts_with(&format!("127.0.0.1,{port},")), "{name1}");
    let v = view(&cp, &zk);
    println!("{v:#?}");
    for child in [
        "hbaseid",
        "master",
        "meta-region-server",
        "running",
        "rs",
        "draining",
        "table",
        "splitWAL",
        "backup-masters",
    ] {
        assert!(
            v["children"].contains(&format!("{child},"))
                || v["children"].contains(&format!("{child}]")),
            "/hbase lacks {child}: {}",
            v["children"]
        );
    }
    assert_eq!(v["cluster_id"], cluster_id);
    assert_eq!(v["master"], name1);
    assert_eq!(v["master_info_port"], "0", "no HTTP listener in the test");
    assert_eq!(v["meta"], format!("{name1} OPEN"));
    assert_eq!(rs_children(&v), vec![name1.clone()]);
    assert!(
        v[&format!("rs_info {name1}")].starts_with("info_port=-1 version=2.6.1"),
        "{v:#?}"
    );
    assert!(!v["running"].is_empty() && v["running"] != "-", "{v:#?}");
    let master_id = format!("master:{port}");
    check_raw(&v, "/hbase/master", true, &master_id);
    check_raw(&v, "/hbase/hbaseid", false, &master_id);
    check_raw(&v, "/hbase/meta-region-server", false, &master_id);
    check_raw(&v, "/hbase/running", false, &master_id);
    check_raw(
        &v,
        &format!("/hbase/rs/{name1}"),
        true,
        &format!("regionserver:{port}"),
    );
    client_check(&cp, &zk, &first);

    // Killed (SIGKILL): its session, and so its ephemeral znodes, outlive it until ZooKeeper
    // expires them. A new incarnation on the same data and port takes the master znode over.
    drop(first);
    let second = Server::start(data.path(), &args);
    let out = wait_for_stdout(&second, "registered in zookeeper");
    assert!(
        !out.contains("another master"),
        "the killed incarnation's master znode was not taken over:\n{out}"
    );
    let (name2, cluster_id2) = identity(&second);
    assert_ne!(name2, name1, "a new start code");
    assert_eq!(cluster_id2, cluster_id, "same data dir, same cluster id");
    let v = view(&cp, &zk);
    println!("{v:#?}");
    assert_eq!(v["master"], name2);
    assert_eq!(v["meta"], format!("{name2} OPEN"));
    let rs = rs_children(&v);
    assert!(rs.contains(&name2), "{rs:?}");
    // The killed one's node, if its session still lives, is a different znode.
    assert!(rs.iter().all(|r| *r == name2 || *r == name1), "{rs:?}");
    check_raw(&v, "/hbase/master", true, &master_id);
    client_check(&cp, &zk, &second);

    // A cairn at another address while this one holds the master znode: it waits (up to its
    // session timeout) and fails, naming the holder.
    let other_data = tempfile::tempdir().expect("temp dir");
    let other = serve::run_to_exit(
        other_data.path(),
        &[
            "--zookeeper",
            &quorum,
            "-D",
            "zookeeper.session.timeout=2000",
        ],
    );
    let (o, e) = (
        String::from_utf8_lossy(&other.stdout),
        String::from_utf8_lossy(&other.stderr),
    );
    assert!(
        !other.status.success(),
        "a second master started:\n{o}\n{e}"
    );
    assert!(
        o.contains(&format!("another master at {name2} is active")),
        "{o}\n{e}"
    );
    assert!(e.contains("/hbase/master") && e.contains(&name2), "{e}");
    assert_eq!(
        view(&cp, &zk)["master"],
        name2,
        "the waiting one took nothing"
    );

    // Orderly stop: what routes clients here goes, the cluster id stays.
    assert!(second.stop(Duration::from_secs(60)), "orderly stop failed");
    let v = view(&cp, &zk);
    println!("{v:#?}");
    assert_eq!(v["master"], "-");
    assert_eq!(v["meta"], "-");
    assert_eq!(v["running"], "-");
    assert!(!rs_children(&v).contains(&name2), "{v:#?}");
    assert_eq!(v["cluster_id"], cluster_id);
}

#[test]
fn unreachable_zookeeper_fails_naming_the_quorum() {
    let data = tempfile::tempdir().expect("temp dir");
    let quorum = format!("127.0.0.1:{}", free_port());
    let started = Instant::now();
    let out = serve::run_to_exit(
        data.path(),
        &[
            "--zookeeper",
            &quorum,
            "-D",
            "zookeeper.session.timeout=1500",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "started without ZooKeeper:\n{stderr}"
    );
    assert!(
        stderr.contains(&format!("zookeeper quorum {quorum}")),
        "{stderr}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
}

/// A child process killed (and reaped) when dropped.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill {sig} {pid}");
}

/// Polls `check` (about once a second, each a JVM run) until it holds or `limit` passes.
fn eventually(limit: Duration, what: &str, mut check: impl FnMut() -> Result<(), String>) {
    let deadline = Instant::now() + limit;
    loop {
        match check() {
            Ok(()) => return,
            Err(e) if Instant::now() >= deadline => panic!("{what} not within {limit:?}: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(500)),
        }
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn registers_again_after_the_session_expires() {
    let Some(cp) = classpath() else { return };
    let zk = ZooKeeper::start(&cp);
    let dir = tempfile::tempdir().expect("temp dir");
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    // ZooKeeper's shortest session (2 ticks of 2 s), so a stopped process expires quickly.
    let child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("serve")
        .arg("--data")
        .arg(dir.path().join("data"))
        .args(serve::LISTENERS)
        .args(["--zookeeper", &zk.connect_string()])
        .args(["-D", "zookeeper.session.timeout=4000"])
        .stdin(Stdio::null())
        .stdout(File::create(&out).expect("stdout file"))
        .stderr(File::create(&err).expect("stderr file"))
        .spawn()
        .expect("run cairn serve");
    let mut child = Reaped(child);
    let pid = child.0.id();
    eventually(Duration::from_secs(60), "registration", || {
        read(&out)
            .contains("registered in zookeeper")
            .then_some(())
            .ok_or_else(|| read(&err))
    });
    let (name, _) = identity_in(&read(&out));
    assert_eq!(view(&cp, &zk)["master"], name);

    // Stopped past its session timeout: ZooKeeper expires the session and its ephemerals.
    signal(pid, "-STOP");
    eventually(
        Duration::from_secs(60),
        "expiry of the stopped server's znodes",
        || {
            let v = view(&cp, &zk);
            (v["master"] == "-" && rs_children(&v).is_empty())
                .then_some(())
                .ok_or_else(|| format!("{v:#?}"))
        },
    );
    signal(pid, "-CONT");
    eventually(
        Duration::from_secs(60),
        "registration in a new session",
        || {
            let v = view(&cp, &zk);
            (v["master"] == name
                && rs_children(&v) == vec![name.clone()]
                && v["meta"] == format!("{name} OPEN"))
            .then_some(())
            .ok_or_else(|| format!("{v:#?}\nstderr:\n{}", read(&err)))
        },
    );
    assert!(
        read(&err).contains("registering again in a new session"),
        "{}",
        read(&err)
    );

    signal(pid, "-TERM");
    let status = child.0.wait().expect("wait");
    assert!(status.success(), "{status}: {}", read(&err));
    assert_eq!(view(&cp, &zk)["master"], "-");
}
