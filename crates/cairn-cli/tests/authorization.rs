//! Authorization (`hbase.security.authorization`) with real clients: HBase 2.6.1's Java client
//! (`dev.cairn.interop.AccessCheck`) and happybase, over TLS with client certificates the test
//! makes (the certificate's CN is the user) and over plaintext with SIMPLE user names (the
//! Java client's `User.create(UserGroupInformation.createRemoteUser(name))`). Only superusers
//! (`hbase.superuser`, users and `@group`s, and the server's own account) may create, disable
//! or delete tables; everyone may read and write; others get HBase's `AccessDeniedException`
//! as the Java client surfaces it (on Thrift, an `IOError` carrying it). With authorization
//! off, everyone may.
//!
//! Needs the interop jars (skipped without them unless `CAIRN_REQUIRE_HBASE_INTEROP=1`) and
//! the project's venv for happybase (skipped without it unless `CAIRN_REQUIRE_TLS_CLIENTS=1`).

#[path = "support/certs.rs"]
mod certs;
#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;
#[path = "support/python.rs"]
mod python;
#[path = "support/serve.rs"]
mod serve;

use std::path::Path;
use std::process::Command;

use certs::Certs;
use serve::Server;

const DENIED: &str = "org.apache.hadoop.hbase.security.AccessDeniedException";

/// The lines `AccessCheck` printed for `ops`, run as the client `who` describes.
fn java(cp: &str, bootstrap: &str, who: &[&str], ops: &[&str]) -> Vec<String> {
    let out = hbase::java(
        cp,
        "AccessCheck",
        &[&["--bootstrap", bootstrap], who, ops].concat(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "AccessCheck failed:\n{stdout}\n{}",
        serve::tail(&String::from_utf8_lossy(&out.stderr), 30)
    );
    stdout.lines().map(str::to_string).collect()
}

/// The lines `happybase_access.py` printed for `ops`.
fn happybase(py: &Path, thrift: &str, tls: Option<(&Path, &Path)>, ops: &[&str]) -> Vec<String> {
    let (host, port) = thrift.rsplit_once(':').unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/authorization/happybase_access.py");
    let mut c = Command::new(py);
    c.arg(script).args([host, port]);
    match tls {
        Some((ca, cert)) => c.arg(ca).arg(cert),
        None => c.args(["-", "-"]),
    };
    let out = c.args(ops).output().expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "happybase_access.py failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.lines().map(str::to_string).collect()
}

/// `ok OP` for each op.
fn all_ok(ops: &[&str]) -> Vec<String> {
    ops.iter().map(|op| format!("ok {op}")).collect()
}

/// The Java client's line for an op refused to `user`.
fn java_denied(op: &str, user: &str) -> String {
    format!(
        "denied {op} {DENIED}: Insufficient permissions for user '{user}' (global, action=ADMIN)"
    )
}

fn tls_server(data: &Path, certs: &Certs, superusers: &str) -> Server {
    Server::start(
        data,
        &[
            "--tls-cert",
            certs.server_cert.to_str().unwrap(),
            "--tls-key",
            certs.server_key.to_str().unwrap(),
            "--tls-client-ca",
            certs.ca.to_str().unwrap(),
            "-D",
            "hbase.security.authorization=true",
            "-D",
            &format!("hbase.superuser={superusers}"),
        ],
    )
}

#[test]
fn java_client_certificates_name_the_user() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let admin = certs.client_named(dir.path(), "cairn-admin");
    let user = certs.client_named(dir.path(), "cairn-user");
    let data = tempfile::tempdir().unwrap();
    let server = tls_server(data.path(), &certs, "cairn-admin");
    let rpc = server.addr.clone();
    let ca = certs.ca.to_str().unwrap();
    let admin_args = ["--ca", ca, "--keystore", admin.to_str().unwrap()];
    let user_args = ["--ca", ca, "--keystore", user.to_str().unwrap()];
    assert_eq!(
        java(&cp, &rpc, &admin_args, &["create:t"]),
        all_ok(&["create:t"])
    );
    // The Java client also sends its OS user (a superuser's, the server's own) as its SIMPLE
    // name: the certificate, not the claim, says who it is.
    assert_eq!(
        java(
            &cp,
            &rpc,
            &user_args,
            &["create:t2", "put:t", "get:t", "disable:t", "delete:t"]
        ),
        vec![
            java_denied("create:t2", "cairn-user"),
            "ok put:t".into(),
            "ok get:t".into(),
            java_denied("disable:t", "cairn-user"),
            java_denied("delete:t", "cairn-user"),
        ],
        "server:\n{}",
        server.stderr_tail(20)
    );
    assert_eq!(
        java(&cp, &rpc, &admin_args, &["get:t", "delete:t"]),
        all_ok(&["get:t", "delete:t"])
    );
}

#[test]
fn happybase_client_certificates_name_the_user_and_plaintext_names_no_one() {
    let Some(py) = python::happybase_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let admin = certs.client_named(dir.path(), "cairn-admin");
    let user = certs.client_named(dir.path(), "cairn-user");
    let data = tempfile::tempdir().unwrap();
    let server = tls_server(data.path(), &certs, "cairn-admin");
    let thrift = server.printed_addr("thrift on ");
    let as_admin = Some((certs.ca.as_path(), admin.as_path()));
    let as_user = Some((certs.ca.as_path(), user.as_path()));
    assert_eq!(
        happybase(&py, &thrift, as_admin, &["create:t"]),
        all_ok(&["create:t"])
    );
    let denied = |op: &str| {
        format!("denied {op} {DENIED}: Insufficient permissions for user 'cairn-user' (global, action=ADMIN)")
    };
    assert_eq!(
        happybase(
            &py,
            &thrift,
            as_user,
            &["create:t2", "put:t", "get:t", "delete:t"]
        ),
        vec![
            denied("create:t2"),
            "ok put:t".into(),
            "ok get:t".into(),
            denied("delete:t"),
        ],
        "server:\n{}",
        server.stderr_tail(20)
    );
    assert_eq!(
        happybase(&py, &thrift, as_admin, &["get:t", "delete:t"]),
        all_ok(&["get:t", "delete:t"])
    );
    drop(server);

    // Plaintext Thrift carries no identity: no one may administer, everyone may read and write.
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &["-D", "hbase.security.authorization=true"]);
    let thrift = server.printed_addr("thrift on ");
    let lines = happybase(&py, &thrift, None, &["create:t"]);
    assert_eq!(
        lines,
        vec![format!(
            "denied create:t {DENIED}: Insufficient permissions for user 'null' (global, action=ADMIN)"
        )]
    );
    assert!(server
        .stderr
        .lock()
        .unwrap()
        .contains("thrift callers have no identity"));
}

#[test]
fn java_simple_user_names_and_groups() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    // An account and its primary group, as Hadoop's shell mapping would find them.
    let id = Command::new("id").args(["-gn", "nobody"]).output().unwrap();
    assert!(id.status.success(), "the test needs the `nobody` account");
    let group = String::from_utf8_lossy(&id.stdout).trim().to_string();
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(
        data.path(),
        &[
            "-D",
            "hbase.security.authorization=true",
            "-D",
            &format!("hbase.superuser=admin,@{group}"),
        ],
    );
    let rpc = server.addr.clone();
    assert_eq!(
        java(&cp, &rpc, &["--user", "bob"], &["create:t"]),
        vec![java_denied("create:t", "bob")]
    );
    assert_eq!(
        java(&cp, &rpc, &["--user", "admin"], &["create:t", "put:t"]),
        all_ok(&["create:t", "put:t"])
    );
    assert_eq!(
        java(
            &cp,
            &rpc,
            &["--user", "bob"],
            &["get:t", "put:t", "delete:t"]
        ),
        vec![
            "ok get:t".into(),
            "ok put:t".into(),
            java_denied("delete:t", "bob")
        ]
    );
    // `nobody` is a superuser through its group; a name with no account has no groups.
    assert_eq!(
        java(
            &cp,
            &rpc,
            &["--user", "cairn-no-such-account"],
            &["delete:t"]
        ),
        vec![java_denied("delete:t", "cairn-no-such-account")]
    );
    assert_eq!(
        java(&cp, &rpc, &["--user", "nobody"], &["delete:t"]),
        all_ok(&["delete:t"])
    );
}

#[test]
fn without_authorization_everyone_may() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &["-D", "hbase.superuser=admin"]);
    assert_eq!(
        java(
            &cp,
            &server.addr,
            &["--user", "bob"],
            &["create:t", "put:t", "get:t", "delete:t"]
        ),
        all_ok(&["create:t", "put:t", "get:t", "delete:t"])
    );
}
