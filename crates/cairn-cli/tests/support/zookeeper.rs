// Shared by several test files, each using a part of it.
#![allow(dead_code)]
//! A real ZooKeeper for end-to-end tests: `ZooKeeperServerMain` from the ZooKeeper 3.8.4 jars
//! that HBase 2.6.1 brings into `interop/hbase/target/lib`, on a free port with its data in a
//! temp dir, killed when dropped.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long ZooKeeper may take to serve (about 0.6 s on an idle machine).
const STARTUP: Duration = Duration::from_secs(60);

/// Connections one client address may hold: every HBase client Connection opens its own
/// session, so 75 PerformanceEvaluation threads hold 150 (HBase's own default is 300).
const MAX_CLIENT_CNXNS: &str = "300";

/// A running standalone ZooKeeper.
pub struct ZooKeeper {
    child: Child,
    /// Its client port on 127.0.0.1.
    pub port: u16,
    _data: tempfile::TempDir,
}

impl Drop for ZooKeeper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ZooKeeper {
    /// Starts ZooKeeper with the jars on `classpath` and waits until it serves requests.
    pub fn start(classpath: &str) -> ZooKeeper {
        ZooKeeper::start_with_tick_time(classpath, Duration::from_millis(2000))
    }

    /// [`ZooKeeper::start`] with another tick: ZooKeeper grants sessions between 2 and 20
    /// ticks, so a short tick lets a killed client's session (and its ephemeral znodes)
    /// expire in seconds.
    pub fn start_with_tick_time(classpath: &str, tick: Duration) -> ZooKeeper {
        let data = tempfile::tempdir().expect("temp dir");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let child = Command::new("java")
            .args([
                "-Xmx128m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Dzookeeper.admin.enableServer=false",
                "-cp",
                classpath,
                "org.apache.zookeeper.server.ZooKeeperServerMain",
            ])
            // port, data dir, tick time (ms), connections per client address
            .arg(port.to_string())
            .arg(data.path())
            .arg(tick.as_millis().to_string())
            .arg(MAX_CLIENT_CNXNS)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run java ZooKeeperServerMain");
        let mut zk = ZooKeeper {
            child,
            port,
            _data: data,
        };
        let deadline = Instant::now() + STARTUP;
        loop {
            // `srvr` is the one four-letter word ZooKeeper answers by default; it says "not
            // currently serving" until the server is up (`ruok` answers `imok` earlier).
            if zk.four_letter("srvr").contains("Zookeeper version") {
                return zk;
            }
            if let Ok(Some(status)) = zk.child.try_wait() {
                panic!("ZooKeeper exited before serving: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "ZooKeeper on port {port} did not serve within {STARTUP:?}"
            );
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// `127.0.0.1:PORT`, a ZooKeeper connect string.
    pub fn connect_string(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Sends a four-letter word and returns the answer ("" when the port does not answer).
    pub fn four_letter(&self, word: &str) -> String {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return String::new();
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let mut answer = String::new();
        if s.write_all(word.as_bytes()).is_ok() {
            let _ = s.read_to_string(&mut answer);
        }
        answer
    }
}
