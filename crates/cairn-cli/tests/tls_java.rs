//! HBase 2.6.1's own Java client over TLS against `cairn serve`'s native RPC port, with
//! HBase's client settings (`hbase.client.netty.tls.enabled`, a PEM truststore, a PEM keystore
//! holding the client certificate): it creates a table, puts and gets back through the RPC
//! connection registry. A client without a certificate is refused when the server requires
//! one. Certificates are made by the test (rcgen), for 127.0.0.1, which the client checks
//! against the address it dialled.
//!
//! Needs the interop jars (`mvn -f interop/hbase/pom.xml package`); skipped without them,
//! unless `CAIRN_REQUIRE_HBASE_INTEROP=1`.

#[path = "support/certs.rs"]
mod certs;
#[path = "../../cairn-hfile/tests/support/hbase.rs"]
#[allow(dead_code)] // its `java` runs the interop jar's classes; this test runs a source file
mod hbase;
#[path = "support/serve.rs"]
mod serve;

use std::path::Path;
use std::process::Command;

use certs::Certs;
use serve::Server;

/// Runs tests/tls/TlsPutGet.java (a single-file program) with HBase's jars.
fn java_put_get(
    cp: &str,
    bootstrap: &str,
    certs: &Certs,
    keystore: Option<&Path>,
    table: &str,
) -> (Option<i32>, String) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tls/TlsPutGet.java");
    let out = Command::new("java")
        .args(hbase::JAVA_FLAGS)
        .arg("-cp")
        .arg(cp)
        .arg(&src)
        .arg(bootstrap)
        .arg(&certs.ca)
        .arg(keystore.map_or("-".into(), |p| p.display().to_string()))
        .arg(table)
        .output()
        .expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    (
        out.status.code(),
        format!("{stdout}\nstderr (tail):\n{}", serve::tail(&stderr, 30)),
    )
}

#[test]
fn hbase_java_client_over_tls_with_a_client_certificate() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(
        data.path(),
        &[
            "--tls-cert",
            certs.server_cert.to_str().unwrap(),
            "--tls-key",
            certs.server_key.to_str().unwrap(),
            "--tls-client-ca",
            certs.ca.to_str().unwrap(),
        ],
    );
    let (code, out) = java_put_get(&cp, &server.addr, &certs, Some(&certs.client), "tls_java");
    assert_eq!(
        code,
        Some(0),
        "HBase's client over TLS with a client certificate:\n{out}\nserver:\n{}",
        server.stderr_tail(30)
    );
    let (code, out) = java_put_get(&cp, &server.addr, &certs, None, "tls_java_anonymous");
    assert_eq!(
        code,
        Some(3),
        "HBase's client without a certificate must be refused:\n{out}"
    );
    assert!(
        server
            .stderr
            .lock()
            .unwrap()
            .contains("refused rpc connection"),
        "the server logs the refusal"
    );
}
