//! HBase 2.6.1's own Java client against `cairn serve`: `dev.cairn.interop.ClientApiCheck`
//! (interop/hbase) drives Admin, Table, BufferedMutator and RegionLocator through HBase's native
//! RPC, reaching the server through the RPC connection registry (`--bootstrap`, no ZooKeeper),
//! and checks every answer against what it wrote. `scripts/hbase-client-check.sh` runs the same
//! program against a real HBase 2.6.1, which is what proves its expectations right.
//!
//! Needs `mvn -f interop/hbase/pom.xml package` first (the test script does it). Without the
//! jars the test is skipped, unless `CAIRN_REQUIRE_HBASE_INTEROP=1` makes that a failure.

#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// What `cairn serve` prints before the address of its HBase RPC listener.
const HBASE_RPC_ON: &str = "hbase rpc on ";

/// How long the server may take to print its HBase RPC address.
const STARTUP: Duration = Duration::from_secs(60);

/// A running `cairn serve`, killed when dropped, so a failing assertion does not leave it behind.
struct Server {
    child: Child,
    /// Everything the server wrote to stderr so far, for failure messages.
    stderr: Arc<Mutex<String>>,
    _data: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `cairn serve` with every listener on a free port and waits for the line naming
    /// the HBase RPC address; returns the server and that `HOST:PORT`.
    fn start() -> (Server, String) {
        let data = tempfile::tempdir().expect("temp dir");
        let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("serve")
            .arg("--data")
            .arg(data.path())
            .args([
                "--thrift",
                "127.0.0.1:0",
                "--http",
                "",
                "--hbase",
                "127.0.0.1:0",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run cairn serve");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err = child.stderr.take().expect("piped stderr");
        let sink = stderr.clone();
        thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        // Stdout is read to its end on a thread of its own (a full pipe would stall the
        // server); the address line is handed over through the channel.
        let out = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                println!("server: {line}");
                if let Some(at) = line.find(HBASE_RPC_ON) {
                    let rest = &line[at + HBASE_RPC_ON.len()..];
                    let addr = rest.split_whitespace().next().unwrap_or("").to_string();
                    let _ = tx.send(addr);
                }
            }
        });
        let server = Server {
            child,
            stderr,
            _data: data,
        };
        let addr = match rx.recv_timeout(STARTUP) {
            Ok(addr) => addr,
            Err(e) => panic!(
                "cairn serve printed no `{HBASE_RPC_ON}HOST:PORT` line ({e}); its stderr:\n{}",
                server.stderr.lock().unwrap()
            ),
        };
        assert!(
            addr.contains(':'),
            "cairn serve's HBase RPC address is not HOST:PORT: {addr:?}"
        );
        (server, addr)
    }
}

fn tail(s: &str, lines: usize) -> String {
    let all: Vec<&str> = s.lines().filter(|l| !l.contains(" DEBUG ")).collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[test]
fn hbase_java_client_against_cairn_serve() {
    let Some(cp) = hbase::classpath() else {
        assert!(
            std::env::var_os("CAIRN_REQUIRE_HBASE_INTEROP").is_none(),
            "HBase interop jars are missing: run mvn -f interop/hbase/pom.xml package"
        );
        eprintln!("skipped: HBase interop jars not built (mvn -f interop/hbase/pom.xml package)");
        return;
    };
    let (server, addr) = Server::start();
    let out = hbase::java(&cp, "ClientApiCheck", &["--bootstrap", &addr]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "ClientApiCheck against cairn serve at {addr} failed ({}):\n{}\n\
         client stderr (tail):\n{}\nserver stderr (tail):\n{}",
        out.status,
        stdout
            .lines()
            .filter(|l| l.starts_with("FAIL") || l.starts_with("summary"))
            .collect::<Vec<_>>()
            .join("\n"),
        tail(&String::from_utf8_lossy(&out.stderr), 40),
        tail(&server.stderr.lock().unwrap(), 40)
    );
    drop(server);
}
