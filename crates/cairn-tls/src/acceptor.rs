//! Turning an accepted socket into a [`Stream`]: the first byte tells a TLS ClientHello
//! (record type 0x16) from plaintext, as HBase's optional SSL handler does; TLS connections
//! get the handshake under a timeout, with the configuration current at that moment.

use std::fs;
use std::io;
use std::net::TcpStream;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use parking_lot::Mutex;
use rustls::{ServerConfig, ServerConnection};

use crate::stream::{Stream, TlsStream};
use crate::{TlsError, TlsSettings};

/// The first byte of every TLS connection: a handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// How long a client may take to send its first byte and finish the handshake (HBase's
/// client gives up after 5 s by default, `hbase.client.netty.tls.handshaketimeout`).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why an accepted connection was not served.
#[derive(Debug, thiserror::Error)]
pub enum AcceptError {
    /// The client closed before sending anything.
    #[error("closed before sending anything")]
    Closed,
    /// Plaintext on a port that takes TLS only.
    #[error("plaintext on a TLS-only port (first byte 0x{0:02x})")]
    Plaintext(u8),
    /// The handshake failed: a refused or missing client certificate, bytes that are not
    /// TLS, a timeout.
    #[error("TLS handshake: {0}")]
    Handshake(io::Error),
}

/// What the configuration was built from, to notice when a file changes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stamp(Vec<Option<(SystemTime, u64, u64)>>);

impl Stamp {
    fn of(files: &[PathBuf]) -> Stamp {
        Stamp(
            files
                .iter()
                .map(|f| {
                    let m = fs::metadata(f).ok()?;
                    Some((m.modified().ok()?, m.len(), m.ino()))
                })
                .collect(),
        )
    }
}

/// One port's TLS: the settings, the configuration built from them, and (with reload on)
/// a rebuild when a file has changed since, checked at each new connection.
pub struct TlsAcceptor {
    settings: TlsSettings,
    files: Vec<PathBuf>,
    current: Mutex<(Arc<ServerConfig>, Stamp)>,
}

impl TlsAcceptor {
    /// Reads the files and builds the configuration; errors name the file.
    pub fn new(settings: TlsSettings) -> Result<TlsAcceptor, TlsError> {
        let files = settings.files();
        let stamp = Stamp::of(&files);
        let config = settings.server_config()?;
        Ok(TlsAcceptor {
            settings,
            files,
            current: Mutex::new((config, stamp)),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &TlsSettings {
        &self.settings
    }

    /// The configuration for a new connection: rebuilt first if reload is on and a file
    /// changed. A rebuild that fails (say the certificate was replaced and the key not yet)
    /// keeps the previous configuration and is tried again at the next connection.
    pub fn config(&self) -> Arc<ServerConfig> {
        let mut cur = self.current.lock();
        if self.settings.reload {
            let now = Stamp::of(&self.files);
            if now != cur.1 {
                match self.settings.server_config() {
                    Ok(c) => {
                        tracing::info!(
                            "TLS: reloaded {} for new connections",
                            self.settings.cert.display()
                        );
                        *cur = (c, now);
                    }
                    Err(e) => tracing::warn!("TLS: keeping the previous certificate: {e}"),
                }
            }
        }
        cur.0.clone()
    }

    /// Serves the first bytes of `sock`: plaintext (if the port takes it) or a TLS
    /// handshake, within [`HANDSHAKE_TIMEOUT`]. Leaves the socket with no timeouts.
    pub fn accept(&self, sock: TcpStream) -> Result<Stream, AcceptError> {
        self.accept_by(sock, Instant::now() + HANDSHAKE_TIMEOUT)
    }

    /// [`TlsAcceptor::accept`], with the whole opening (first byte and handshake) due by
    /// `deadline`: a client that trickles its handshake gets no more time than one that sends
    /// nothing.
    pub fn accept_by(&self, sock: TcpStream, deadline: Instant) -> Result<Stream, AcceptError> {
        let set = |t| {
            let _ = sock.set_read_timeout(t);
            let _ = sock.set_write_timeout(t);
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(AcceptError::Handshake(io::ErrorKind::TimedOut.into()));
        }
        set(Some(left));
        let mut first = [0u8; 1];
        let n = loop {
            match sock.peek(&mut first) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => break other.map_err(AcceptError::Handshake)?,
            }
        };
        if n == 0 {
            return Err(AcceptError::Closed);
        }
        if first[0] != TLS_HANDSHAKE_RECORD {
            if self.settings.plaintext {
                set(None);
                return Ok(Stream::Plain(sock));
            }
            return Err(AcceptError::Plaintext(first[0]));
        }
        let conn = ServerConnection::new(self.config())
            .map_err(|e| AcceptError::Handshake(io::Error::other(e)))?;
        let tls = TlsStream::handshake_by(conn, sock, deadline).map_err(AcceptError::Handshake)?;
        let _ = tls.socket().set_read_timeout(None);
        let _ = tls.socket().set_write_timeout(None);
        Ok(Stream::Tls(Box::new(tls)))
    }
}

impl std::fmt::Debug for TlsAcceptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsAcceptor")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Accepts `sock` with `tls`, or as plaintext when the port has no TLS.
pub fn accept(tls: Option<&TlsAcceptor>, sock: TcpStream) -> Result<Stream, AcceptError> {
    accept_by(tls, sock, Instant::now() + HANDSHAKE_TIMEOUT)
}

/// [`accept`], with a TLS opening due by `deadline` ([`TlsAcceptor::accept_by`]).
pub fn accept_by(
    tls: Option<&TlsAcceptor>,
    sock: TcpStream,
    deadline: Instant,
) -> Result<Stream, AcceptError> {
    match tls {
        Some(t) => t.accept_by(sock, deadline),
        None => Ok(Stream::Plain(sock)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pem;
    use crate::settings::tests::make_certs;
    use crate::ClientAuth;
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::path::Path;

    /// A rustls client trusting `ca`, showing `client` (a keystore PEM) if given.
    fn client(
        ca: &Path,
        client: Option<&Path>,
        addr: std::net::SocketAddr,
    ) -> io::Result<TlsClient> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let b = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(pem::roots(ca).unwrap());
        let config = match client {
            Some(p) => b
                .with_client_auth_cert(pem::certificates(p).unwrap(), pem::private_key(p).unwrap())
                .unwrap(),
            None => b.with_no_client_auth(),
        };
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
        let conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
        let sock = TcpStream::connect(addr)?;
        sock.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut s = rustls::StreamOwned::new(conn, sock);
        // TLS 1.3: a refused client certificate shows on the first read after the handshake.
        s.write_all(b"ping")?;
        let mut back = [0u8; 4];
        s.read_exact(&mut back)?;
        assert_eq!(&back, b"ping");
        Ok(s)
    }

    type TlsClient = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

    /// Echoes each connection, reading on one thread and writing from another through a
    /// clone of the stream; returns the port and the accept results.
    fn echo_server(
        acceptor: Arc<TlsAcceptor>,
    ) -> (
        std::net::SocketAddr,
        std::sync::mpsc::Receiver<Result<bool, String>>,
    ) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for sock in listener.incoming() {
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                std::thread::spawn(move || match acceptor.accept(sock.unwrap()) {
                    Ok(mut s) => {
                        let _ = tx.send(Ok(s.is_tls()));
                        let mut w = s.try_clone().unwrap();
                        let (ctx, crx) = std::sync::mpsc::channel::<Vec<u8>>();
                        let writer = std::thread::spawn(move || {
                            for chunk in crx {
                                if w.write_all(&chunk).is_err() {
                                    break;
                                }
                            }
                        });
                        let mut buf = [0u8; 7000];
                        while let Ok(n @ 1..) = s.read(&mut buf) {
                            let _ = ctx.send(buf[..n].to_vec());
                        }
                        drop(ctx);
                        let _ = writer.join();
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string()));
                    }
                });
            }
        });
        (addr, rx)
    }

    #[test]
    fn client_certificates_by_mode() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let s = make_certs(dir.path(), "t");
        make_certs(other.path(), "other");
        let ca = dir.path().join("ca.pem");
        let good = dir.path().join("client.pem");
        let foreign = other.path().join("client.pem");
        let (addr, rx) = echo_server(Arc::new(TlsAcceptor::new(s.clone()).unwrap()));
        let mut c = client(&ca, Some(&good), addr).expect("a client of the CA gets in");
        assert_eq!(rx.recv().unwrap(), Ok(true));
        // Much more than one TLS record each way, echoed through the split stream.
        let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        c.write_all(&big).unwrap();
        let mut back = vec![0u8; big.len()];
        c.read_exact(&mut back).unwrap();
        assert!(back == big, "echo differs");
        assert!(client(&ca, None, addr).is_err(), "no certificate: refused");
        let e = rx.recv().unwrap().unwrap_err();
        assert!(e.contains("handshake"), "{e}");
        assert!(
            client(&ca, Some(&foreign), addr).is_err(),
            "other CA: refused"
        );
        assert!(rx.recv().unwrap().is_err());

        let want = TlsSettings {
            client_auth: ClientAuth::Want,
            ..s.clone()
        };
        let (addr, rx) = echo_server(Arc::new(TlsAcceptor::new(want).unwrap()));
        client(&ca, None, addr).expect("WANT: no certificate gets in");
        client(&ca, Some(&good), addr).expect("WANT: a good certificate gets in");
        assert!(
            client(&ca, Some(&foreign), addr).is_err(),
            "WANT: a bad one does not"
        );
        let results: Vec<_> = rx.iter().take(3).collect();
        assert_eq!(
            results.iter().filter(|r| r.is_ok()).count(),
            2,
            "{results:?}"
        );

        let none = TlsSettings {
            client_auth: ClientAuth::None,
            client_ca: None,
            ..s
        };
        let (addr, _rx) = echo_server(Arc::new(TlsAcceptor::new(none).unwrap()));
        client(&ca, Some(&foreign), addr).expect("NONE: no certificate is asked for");
    }

    #[test]
    fn plaintext_and_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let s = make_certs(dir.path(), "t");
        let ca = dir.path().join("ca.pem");
        let good = dir.path().join("client.pem");
        let (addr, rx) = echo_server(Arc::new(TlsAcceptor::new(s.clone()).unwrap()));
        for garbage in [
            &b"HBas\x00\x50"[..],
            &b"\x16\x03\x01\x00\x05hello garbage"[..],
        ] {
            let mut g = TcpStream::connect(addr).unwrap();
            g.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            g.write_all(garbage).unwrap();
            let mut rest = Vec::new();
            // Closed by the server (an alert at most), not left hanging.
            let _ = g.read_to_end(&mut rest);
            assert!(rx.recv().unwrap().is_err());
            client(&ca, Some(&good), addr).expect("the next client is served");
            assert_eq!(rx.recv().unwrap(), Ok(true));
        }
        let both = TlsSettings {
            plaintext: true,
            ..s
        };
        let (addr, rx) = echo_server(Arc::new(TlsAcceptor::new(both).unwrap()));
        let mut p = TcpStream::connect(addr).unwrap();
        p.write_all(b"HBas").unwrap();
        let mut back = [0u8; 4];
        p.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"HBas");
        assert_eq!(rx.recv().unwrap(), Ok(false));
        client(&ca, Some(&good), addr).unwrap();
        assert_eq!(rx.recv().unwrap(), Ok(true));
    }

    #[test]
    fn reload_picks_up_new_files_for_new_connections() {
        let dir = tempfile::tempdir().unwrap();
        let s = TlsSettings {
            reload: true,
            ..make_certs(dir.path(), "first")
        };
        let ca = dir.path().join("ca.pem");
        let acceptor = Arc::new(TlsAcceptor::new(s.clone()).unwrap());
        let (addr, _rx) = echo_server(acceptor.clone());
        let leaf = |c: &TlsClient| c.conn.peer_certificates().unwrap()[0].to_vec();
        let c1 = client(&ca, Some(&dir.path().join("client.pem")), addr).unwrap();
        // A new CA and server certificate, written over the old files.
        let next = tempfile::tempdir().unwrap();
        make_certs(next.path(), "second");
        for f in ["ca.pem", "server.pem", "server.key", "client.pem"] {
            fs::copy(next.path().join(f), dir.path().join(f)).unwrap();
        }
        let c2 = client(&ca, Some(&dir.path().join("client.pem")), addr).unwrap();
        let want = pem::certificates(&next.path().join("server.pem")).unwrap()[0].to_vec();
        assert_eq!(
            leaf(&c2),
            want,
            "the new connection sees the new certificate"
        );
        assert_ne!(leaf(&c1), leaf(&c2));
        // Half-written files keep the previous configuration.
        fs::write(dir.path().join("server.key"), "not a key").unwrap();
        client(&ca, Some(&dir.path().join("client.pem")), addr).expect("still served");

        // With reload off, the first files stay in use.
        let fixed = tempfile::tempdir().unwrap();
        let s = make_certs(fixed.path(), "fixed");
        let acceptor = TlsAcceptor::new(s).unwrap();
        let before = acceptor.config();
        make_certs(fixed.path(), "changed");
        assert!(Arc::ptr_eq(&before, &acceptor.config()));
    }
}
