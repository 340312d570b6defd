//! A real HDFS for tests: Hadoop's MiniDFSCluster in a child JVM (interop/hdfs), driven over
//! its stdin/stdout. The test suite builds the jar (`mvn -f interop/hdfs/pom.xml package`);
//! without it, tests skip unless `CAIRN_REQUIRE_HDFS=1` makes that a failure.

use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

/// A running MiniDFSCluster; shut down on drop.
pub struct MiniDfs {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    url: String,
    _dir: tempfile_dir::TempDir,
}

mod tempfile_dir {
    /// A directory removed on drop (std only, so the library needs no tempfile dependency).
    pub struct TempDir(pub std::path::PathBuf);

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop/hdfs/target")
}

impl MiniDfs {
    /// Starts a cluster with `datanodes` DataNodes. `Ok(None)` when the jar is not built and
    /// HDFS is not required (the caller skips its test).
    pub fn start(datanodes: usize) -> io::Result<Option<MiniDfs>> {
        let target = interop_dir();
        let jar = target.join("cairn-hdfs-minicluster-0.1.0.jar");
        if !jar.exists() {
            if std::env::var_os("CAIRN_REQUIRE_HDFS").is_some() {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "{} is missing: run mvn -f interop/hdfs/pom.xml package",
                        jar.display()
                    ),
                ));
            }
            eprintln!("skipping: MiniDFSCluster jar not built ({})", jar.display());
            return Ok(None);
        }
        let base = std::env::temp_dir().join(format!(
            "cairn-minidfs-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&base)?;
        let dir = tempfile_dir::TempDir(base.clone());
        let classpath = format!("{}:{}/lib/*", jar.display(), target.display());
        let mut child = Command::new("java")
            .args([
                "-Xmx384m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                &classpath,
                "dev.cairn.hdfs.MiniDfs",
            ])
            .arg(&base)
            .arg(datanodes.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(std::fs::File::create(
                base.join("minidfs.log"),
            )?))
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut line = String::new();
        loop {
            line.clear();
            if stdout.read_line(&mut line)? == 0 {
                let log = std::fs::read_to_string(base.join("minidfs.log")).unwrap_or_default();
                let tail: String = log
                    .lines()
                    .rev()
                    .take(30)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join("\n");
                let _ = child.kill();
                let _ = child.wait();
                return Err(io::Error::other(format!(
                    "MiniDFSCluster exited before it was ready:\n{tail}"
                )));
            }
            if let Some(url) = line.trim().strip_prefix("READY ") {
                let url = url.to_string();
                return Ok(Some(MiniDfs {
                    child,
                    stdin,
                    stdout,
                    url,
                    _dir: dir,
                }));
            }
        }
    }

    /// `hdfs://127.0.0.1:port`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends one command; the answer after `OK `, or an error with the cluster's message.
    pub fn command(&mut self, line: &str) -> io::Result<String> {
        writeln!(self.stdin, "{line}")?;
        self.stdin.flush()?;
        let mut answer = String::new();
        loop {
            answer.clear();
            if self.stdout.read_line(&mut answer)? == 0 {
                return Err(io::Error::other("MiniDFSCluster went away"));
            }
            let a = answer.trim();
            if let Some(ok) = a.strip_prefix("OK") {
                return Ok(ok.trim().to_string());
            }
            if let Some(err) = a.strip_prefix("ERR") {
                return Err(io::Error::other(format!("{line}: {}", err.trim())));
            }
        }
    }

    /// Damages the first block of `path` on one DataNode's disk; returns that DataNode.
    pub fn corrupt_one_replica(&mut self, path: &str) -> io::Result<String> {
        self.command(&format!("corrupt {path}"))
    }

    /// Damages the first block of `path` on every DataNode holding it.
    pub fn corrupt_all_replicas(&mut self, path: &str) -> io::Result<String> {
        self.command(&format!("corrupt-all {path}"))
    }
}

impl Drop for MiniDfs {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
