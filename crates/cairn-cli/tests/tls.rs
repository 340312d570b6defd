//! TLS on every port of `cairn serve` (Thrift, HTTP, HBase native RPC), with real clients the
//! tests start: happybase (thriftpy2's TLS socket) on the Thrift port, curl on the HTTP port,
//! a rustls client on each port for what the others cannot show (which certificate the server
//! presented, bytes that are not TLS). Certificates are made by each test (rcgen).
//!
//! happybase runs from the project's venv (`target/venv`, which scripts/test.sh makes) or
//! `$CAIRN_PYTHON`; without it that test is skipped, unless `CAIRN_REQUIRE_TLS_CLIENTS=1`
//! makes that a failure.

#[path = "support/certs.rs"]
mod certs;
#[path = "support/serve.rs"]
mod serve;

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use certs::Certs;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serve::Server;

/// The three ports' addresses, from the lines `cairn serve` prints.
struct Ports {
    thrift: String,
    http: String,
    rpc: String,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Thrift,
    Http,
    Rpc,
}

/// `cairn serve` with TLS from `certs` on every port (client certificates required) and
/// `extra` arguments.
fn start(data: &Path, certs: &Certs, extra: &[&str]) -> (Server, Ports) {
    let mut args = vec![
        "--infoport",
        "0",
        "--tls-cert",
        certs.server_cert.to_str().unwrap(),
        "--tls-key",
        certs.server_key.to_str().unwrap(),
        "--tls-client-ca",
        certs.ca.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let server = Server::start(data, &args);
    let deadline = Instant::now() + Duration::from_secs(30);
    let find = |what: &str| -> Option<String> {
        let out = server.stdout.lock().unwrap();
        let at = out.find(what)? + what.len();
        Some(out[at..].split_whitespace().next()?.to_string())
    };
    loop {
        if let (Some(thrift), Some(http)) = (find("thrift on "), find("http on ")) {
            let out = server.stdout.lock().unwrap().clone();
            assert!(
                out.contains("with TLS (client certificates required"),
                "the start-up lines say TLS is on:\n{out}"
            );
            let rpc = server.addr.clone();
            return (server, Ports { thrift, http, rpc });
        }
        assert!(Instant::now() < deadline, "no thrift/http lines");
        std::thread::sleep(Duration::from_millis(20));
    }
}

type Client = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

/// A rustls client trusting `ca`, showing the key and certificate in `client` if given.
fn connect(addr: &str, ca: &Path, client: Option<&Path>) -> io::Result<Client> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let b = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let config = match client {
        Some(p) => {
            let chain = CertificateDer::pem_file_iter(p)
                .unwrap()
                .map(Result::unwrap)
                .collect();
            b.with_client_auth_cert(chain, PrivateKeyDer::from_pem_file(p).unwrap())
                .unwrap()
        }
        None => b.with_no_client_auth(),
    };
    let conn =
        rustls::ClientConnection::new(Arc::new(config), ServerName::try_from("127.0.0.1").unwrap())
            .unwrap();
    let sock = TcpStream::connect(addr)?;
    sock.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut s = rustls::StreamOwned::new(conn, sock);
    while s.conn.is_handshaking() {
        s.conn.complete_io(&mut s.sock)?;
    }
    Ok(s)
}

/// One request each port answers, sent over `s`; an error if the server refused or closed.
/// (Under TLS 1.3 a refused client certificate shows here, at the first read.)
fn exchange(kind: Kind, s: &mut Client) -> io::Result<()> {
    match kind {
        Kind::Thrift => {
            // getTableNames, binary protocol, buffered transport.
            let mut call = vec![0x80, 0x01, 0x00, 0x01];
            call.extend_from_slice(&13u32.to_be_bytes());
            call.extend_from_slice(b"getTableNames");
            call.extend_from_slice(&7u32.to_be_bytes());
            call.push(0); // no arguments
            s.write_all(&call)?;
            let mut reply = [0u8; 4];
            s.read_exact(&mut reply)?;
            assert_eq!(reply, [0x80, 0x01, 0x00, 0x02], "a thrift reply");
            // The rest of it: name, sequence id, then the result struct (field 0: a list of
            // names) and its stop byte, so the connection can be used again.
            let name_len = read_u32(s)? as usize;
            let mut name = vec![0u8; name_len];
            s.read_exact(&mut name)?;
            assert_eq!(&name, b"getTableNames");
            assert_eq!(read_u32(s)?, 7, "our sequence id");
            let mut field = [0u8; 4];
            s.read_exact(&mut field)?;
            assert_eq!(field, [0x0f, 0x00, 0x00, 0x0b], "field 0: list<binary>");
            for _ in 0..read_u32(s)? {
                let mut table = vec![0u8; read_u32(s)? as usize];
                s.read_exact(&mut table)?;
            }
            let mut stop = [0u8; 1];
            s.read_exact(&mut stop)?;
            assert_eq!(stop, [0]);
        }
        Kind::Http => {
            s.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")?;
            let mut body = Vec::new();
            match s.read_to_end(&mut body) {
                Ok(_) => {}
                // The server closes without close_notify after its answer.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && !body.is_empty() => {}
                Err(e) => return Err(e),
            }
            let text = String::from_utf8_lossy(&body);
            assert!(text.starts_with("HTTP/1.1 200"), "{text}");
            assert!(text.contains("# TYPE"), "prometheus text: {text}");
        }
        Kind::Rpc => {
            // The connection registry's preamble: answered with the cluster id.
            s.write_all(b"Regist")?;
            let len = read_u32(s)?;
            assert!(len > 0, "a registry response");
            let mut frame = vec![0u8; len as usize];
            s.read_exact(&mut frame)?;
        }
    }
    Ok(())
}

fn read_u32(s: &mut Client) -> io::Result<u32> {
    let mut b = [0u8; 4];
    s.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

/// Sends `bytes` on a fresh TCP connection and waits for the server to close it.
fn garbage(addr: &str, bytes: &[u8]) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let _ = s.write_all(bytes);
    let started = Instant::now();
    let mut sink = Vec::new();
    match s.read_to_end(&mut sink) {
        Ok(_) => {}
        Err(e) => assert!(
            !matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
            "{addr}: the server left a garbage connection open ({e})"
        ),
    }
    assert!(started.elapsed() < Duration::from_secs(25));
    // Whatever came back is at most a TLS alert, never a protocol answer.
    assert!(
        sink.len() < 64,
        "{addr} answered garbage with {} bytes",
        sink.len()
    );
}

#[test]
fn every_port_checks_client_certificates_and_survives_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let data = tempfile::tempdir().unwrap();
    let (server, ports) = start(data.path(), &certs, &[]);
    for (kind, addr) in [
        (Kind::Thrift, &ports.thrift),
        (Kind::Http, &ports.http),
        (Kind::Rpc, &ports.rpc),
    ] {
        let mut good = connect(addr, &certs.ca, Some(&certs.client)).unwrap();
        exchange(kind, &mut good).unwrap_or_else(|e| panic!("{kind:?}: a client of the CA: {e}"));
        let anonymous = connect(addr, &certs.ca, None).and_then(|mut c| exchange(kind, &mut c));
        assert!(
            anonymous.is_err(),
            "{kind:?}: a client without a certificate got in"
        );
        let stranger = connect(addr, &certs.ca, Some(&certs.stranger))
            .and_then(|mut c| exchange(kind, &mut c));
        assert!(
            stranger.is_err(),
            "{kind:?}: a certificate from another CA got in"
        );
        for bytes in [
            &b"\x16\x03\x01\x00\x10this is not a ClientHello at all"[..],
            &b"\x16\x03\x03\x00\x05\x01\x00\x00\x01\x00"[..],
            &b"HBas\x00\x50 plaintext on a TLS port"[..],
            &b"GET /metrics HTTP/1.1\r\n\r\n"[..],
            &[0xff; 300][..],
        ] {
            garbage(addr, bytes);
        }
        let mut next = connect(addr, &certs.ca, Some(&certs.client)).unwrap();
        exchange(kind, &mut next)
            .unwrap_or_else(|e| panic!("{kind:?}: the next client after garbage: {e}"));
        // The first connection is still served too (the others answer once and close).
        if matches!(kind, Kind::Thrift) {
            exchange(kind, &mut good).unwrap();
        }
    }
    assert!(server.stop(Duration::from_secs(30)), "an orderly stop");
}

#[test]
fn rpc_port_takes_plaintext_beside_tls_only_when_told() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let data = tempfile::tempdir().unwrap();
    let (_server, ports) = start(
        data.path(),
        &certs,
        &["-D", "hbase.server.netty.tls.supportplaintext=true"],
    );
    let mut plain = TcpStream::connect(&ports.rpc).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    plain.write_all(b"Regist").unwrap();
    let mut len = [0u8; 4];
    plain
        .read_exact(&mut len)
        .expect("plaintext answered on the RPC port");
    let mut tls = connect(&ports.rpc, &certs.ca, Some(&certs.client)).unwrap();
    exchange(Kind::Rpc, &mut tls).unwrap();
    // The Thrift port still takes TLS only.
    garbage(
        &ports.thrift,
        b"\x80\x01\x00\x01\x00\x00\x00\x0dgetTableNames",
    );
}

#[test]
fn certificates_reload_without_restart() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let data = tempfile::tempdir().unwrap();
    let (_server, ports) = start(
        data.path(),
        &certs,
        &["-D", "hbase.rpc.tls.certReload=true"],
    );
    let leaf = |c: &Client| c.conn.peer_certificates().unwrap()[0].to_vec();
    let first = certs::pem_der(&std::fs::read_to_string(&certs.server_cert).unwrap());
    let mut before = Vec::new();
    for (kind, addr) in [
        (Kind::Thrift, &ports.thrift),
        (Kind::Http, &ports.http),
        (Kind::Rpc, &ports.rpc),
    ] {
        let c = connect(addr, &certs.ca, Some(&certs.client)).unwrap();
        assert!(leaf(&c) == first, "{kind:?}: the first certificate");
        before.push((kind, c));
    }
    let renewed = certs.renew_server();
    assert!(renewed != first);
    for (kind, addr) in [
        (Kind::Thrift, &ports.thrift),
        (Kind::Http, &ports.http),
        (Kind::Rpc, &ports.rpc),
    ] {
        let mut c = connect(addr, &certs.ca, Some(&certs.client)).unwrap();
        assert!(
            leaf(&c) == renewed,
            "{kind:?}: a new connection sees the new certificate"
        );
        exchange(kind, &mut c).unwrap();
    }
    // Connections made before the change go on.
    for (kind, mut c) in before {
        exchange(kind, &mut c).unwrap_or_else(|e| panic!("{kind:?}: an older connection: {e}"));
    }
    // Files that do not make a pair (a key alone written): the last good pair stays in use.
    std::fs::write(&certs.server_key, "not a key").unwrap();
    let mut c = connect(&ports.rpc, &certs.ca, Some(&certs.client)).unwrap();
    assert!(leaf(&c) == renewed);
    exchange(Kind::Rpc, &mut c).unwrap();
}

#[test]
fn http_port_over_tls_with_curl() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let data = tempfile::tempdir().unwrap();
    let (_server, ports) = start(data.path(), &certs, &[]);
    let url = format!("https://{}/metrics", ports.http);
    let curl = |cert: bool| {
        let mut c = Command::new("curl");
        c.args(["-sS", "--max-time", "20", "--cacert"])
            .arg(&certs.ca)
            .arg(&url);
        if cert {
            c.arg("--cert")
                .arg(&certs.client_cert)
                .arg("--key")
                .arg(&certs.client_key);
        }
        c.output().expect("run curl")
    };
    let out = curl(true);
    let body = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && body.contains("# TYPE"),
        "curl with a client certificate: {}\n{body}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = curl(false);
    assert!(
        !out.status.success(),
        "curl without a client certificate got: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Plain http on the TLS port: closed, nothing served.
    let plain = Command::new("curl")
        .args(["-sS", "--max-time", "20"])
        .arg(format!("http://{}/metrics", ports.http))
        .output()
        .unwrap();
    assert!(!plain.status.success());
}

/// The project's venv python with happybase, or `None` (skip) when there is none.
fn python() -> Option<PathBuf> {
    let p = std::env::var_os("CAIRN_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/venv/bin/python")
        });
    let ok = Command::new(&p)
        .args(["-c", "import happybase, thriftpy2"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CAIRN_REQUIRE_TLS_CLIENTS").is_none(),
            "no python with happybase at {} (set CAIRN_PYTHON)",
            p.display()
        );
        eprintln!("skipped: no python with happybase at {}", p.display());
        return None;
    }
    Some(p)
}

#[test]
fn happybase_over_tls_with_client_certificates() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let data = tempfile::tempdir().unwrap();
    let (server, ports) = start(data.path(), &certs, &[]);
    let (host, port) = ports.thrift.rsplit_once(':').unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tls/happybase_tls.py");
    let run = |table: &str, cert: Option<&Path>| {
        let mut c = Command::new(&py);
        c.arg(&script).args([host, port]).arg(&certs.ca).arg(table);
        if let Some(p) = cert {
            c.arg(p);
        }
        let out = c.output().expect("run python");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (code, out) = run("tls_a", Some(&certs.client));
    assert_eq!(
        code,
        Some(0),
        "happybase with a client certificate:\n{out}\nserver:\n{}",
        server.stderr_tail(20)
    );
    let (code, out) = run("tls_b", None);
    assert_eq!(
        code,
        Some(3),
        "happybase without a certificate must be refused:\n{out}"
    );
    let (code, out) = run("tls_c", Some(&certs.stranger));
    assert_eq!(
        code,
        Some(3),
        "happybase with another CA's certificate must be refused:\n{out}"
    );
    let (code, out) = run("tls_d", Some(&certs.client));
    assert_eq!(
        code,
        Some(0),
        "the server still serves after refusals:\n{out}"
    );
}

#[test]
fn a_bad_certificate_file_is_named_at_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("not-a-cert.pem");
    std::fs::write(
        &bad,
        "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let out = serve::run_to_exit(data.path(), &["--tls-cert", bad.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("not-a-cert.pem") && stderr.contains("TLS for the"),
        "the error names the file and the port: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn plaintext_on_a_public_address_is_warned_about() {
    let data = tempfile::tempdir().unwrap();
    // -b moves the Thrift port to every interface; the others stay on loopback.
    let server = Server::start(data.path(), &["-b", "0.0.0.0"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !server.stderr.lock().unwrap().contains("without TLS") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let stderr = server.stderr.lock().unwrap().clone();
    assert_eq!(
        stderr.matches("without TLS").count(),
        1,
        "one warning, for the one public port: {stderr}"
    );
    assert!(
        stderr.contains("the thrift port listens on 0.0.0.0:"),
        "{stderr}"
    );
    drop(stderr);
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let data = tempfile::tempdir().unwrap();
    let (server, _) = start(data.path(), &certs, &["-b", "0.0.0.0"]);
    std::thread::sleep(Duration::from_millis(200));
    assert!(!server.stderr.lock().unwrap().contains("without TLS"));
}
