// Shared by several test files, each using a part of it.
#![allow(dead_code)]
//! `cairn serve` as a child process for end-to-end tests: every listener on a free port, the
//! HBase RPC address read from the line the server prints, killed when dropped.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// What `cairn serve` prints before the address of its HBase RPC listener.
const HBASE_RPC_ON: &str = "hbase rpc on ";

/// Thrift and HBase RPC on free ports, no HTTP listener.
pub const LISTENERS: [&str; 8] = [
    "--thrift",
    "127.0.0.1:0",
    "--http",
    "",
    "--hbase",
    "127.0.0.1:0",
    "--info",
    "",
];

/// How long the server may take to print its HBase RPC address.
const STARTUP: Duration = Duration::from_secs(60);

/// A running `cairn serve`, killed when dropped, so a failing assertion does not leave it behind.
pub struct Server {
    child: Child,
    /// Everything the server wrote to stderr so far, for failure messages.
    pub stderr: Arc<Mutex<String>>,
    /// Everything the server wrote to stdout so far.
    pub stdout: Arc<Mutex<String>>,
    /// `HOST:PORT` of its HBase RPC listener.
    pub addr: String,
    /// Its data directory.
    pub data: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `cairn serve --data DATA` plus `extra` arguments, with Thrift and HBase RPC on
    /// free ports and no HTTP listener, and waits for the line naming the HBase RPC address.
    pub fn start(data: &Path, extra: &[&str]) -> Server {
        let mut child = command(data, extra)
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
        let stdout = Arc::new(Mutex::new(String::new()));
        let sink = stdout.clone();
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
                let mut all = sink.lock().unwrap();
                all.push_str(&line);
                all.push('\n');
            }
        });
        let mut server = Server {
            child,
            stderr,
            stdout,
            addr: String::new(),
            data: data.to_path_buf(),
        };
        server.addr = match rx.recv_timeout(STARTUP) {
            Ok(addr) => addr,
            Err(e) => panic!(
                "cairn serve printed no `{HBASE_RPC_ON}HOST:PORT` line ({e}); its stderr:\n{}",
                server.stderr.lock().unwrap()
            ),
        };
        assert!(
            server.addr.contains(':'),
            "cairn serve's HBase RPC address is not HOST:PORT: {:?}",
            server.addr
        );
        server
    }

    /// Asks for an orderly stop (SIGTERM) and waits up to `timeout` for the process to exit;
    /// returns whether it exited successfully.
    pub fn stop(mut self, timeout: Duration) -> bool {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = std::time::Instant::now() + timeout;
        while std::time::Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.success();
            }
            thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// The last `lines` lines of the server's stderr, DEBUG lines left out.
    pub fn stderr_tail(&self, lines: usize) -> String {
        tail(&self.stderr.lock().unwrap(), lines)
    }
}

/// Runs `cairn serve --data DATA` with the same free-port listeners as [`Server::start`] plus
/// `extra`, for a start-up expected to fail: waits for the process to end.
pub fn run_to_exit(data: &Path, extra: &[&str]) -> std::process::Output {
    command(data, extra).output().expect("run cairn serve")
}

/// `cairn serve --data DATA`, the free-port listeners, `extra`, and no stdin.
fn command(data: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.arg("serve")
        .arg("--data")
        .arg(data)
        .args(LISTENERS)
        .args(extra)
        .stdin(Stdio::null());
    c
}

/// The last `lines` lines of `s`, DEBUG lines left out.
pub fn tail(s: &str, lines: usize) -> String {
    let all: Vec<&str> = s.lines().filter(|l| !l.contains(" DEBUG ")).collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

impl Server {
    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's resident set in KiB (`VmRSS` of /proc/PID/status).
    pub fn rss_kib(&self) -> u64 {
        self.status_kib("VmRSS:")
    }

    /// The most address space the server has held at once, in KiB (`VmPeak`): an allocation
    /// shows there even if its pages were never touched.
    pub fn vm_peak_kib(&self) -> u64 {
        self.status_kib("VmPeak:")
    }

    fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("{field} in /proc/PID/status"))
    }

    /// The address after `what` on a start-up line (`thrift on ` gives the Thrift port's).
    pub fn printed_addr(&self, what: &str) -> String {
        let deadline = std::time::Instant::now() + STARTUP;
        loop {
            {
                let out = self.stdout.lock().unwrap();
                if let Some(at) = out.find(what) {
                    let rest = &out[at + what.len()..];
                    return rest.split_whitespace().next().unwrap_or("").to_string();
                }
            }
            assert!(
                std::time::Instant::now() < deadline,
                "cairn serve printed no `{what}` line"
            );
            thread::sleep(Duration::from_millis(20));
        }
    }
}
