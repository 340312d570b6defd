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

#[path = "support/serve.rs"]
mod serve;

use serve::{tail, Server};

#[test]
fn hbase_java_client_against_cairn_serve() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let data = tempfile::tempdir().expect("temp dir");
    let server = Server::start(data.path(), &[]);
    let addr = server.addr.clone();
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
