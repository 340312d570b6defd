//! A blocking TLS stream over a TCP socket that one reader thread and any number of writer
//! threads can use at once (each through its own clone), and [`Stream`], which is either that
//! or the plain socket, so servers handle both the same way.
//!
//! The rustls connection state sits under a mutex that is never held across a socket read:
//! the reader waits for ciphertext unlocked, then locks only to decrypt it. Writers encrypt
//! under the same mutex and write to the socket under a second lock taken first, so records
//! reach the socket in the order they were sealed while the reader keeps reading.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use rustls::ServerConnection;

/// How much ciphertext one socket read takes.
const READ_CHUNK: usize = 32 << 10;

struct Shared {
    /// Lock order: `write` before `conn`.
    conn: Mutex<ServerConnection>,
    /// Held while sealed records are written to the socket.
    write: Mutex<()>,
}

/// A server-side TLS connection over a blocking socket. [`TlsStream::try_clone`] gives
/// another handle on the same session: read from one, write from the others.
pub struct TlsStream {
    shared: Arc<Shared>,
    sock: TcpStream,
    /// Ciphertext read from the socket but not yet handed to rustls (it takes plaintext only
    /// while its buffer has room).
    pending: Vec<u8>,
    pos: usize,
    eof: bool,
}

impl TlsStream {
    /// Runs the handshake on `sock` (blocking, under whatever timeouts it has) and returns
    /// the stream; a TLS error (a client certificate refused, garbage instead of a
    /// ClientHello) is `InvalidData`, after the alert that explains it was sent.
    pub fn handshake(conn: ServerConnection, sock: TcpStream) -> io::Result<TlsStream> {
        TlsStream::handshake_by(conn, sock, None)
    }

    /// [`TlsStream::handshake`], finished by `deadline` (each socket read and write waits at
    /// most for what is left of it) or failed with `TimedOut`.
    pub fn handshake_by(
        mut conn: ServerConnection,
        mut sock: TcpStream,
        deadline: impl Into<Option<Instant>>,
    ) -> io::Result<TlsStream> {
        let deadline = deadline.into();
        while conn.is_handshaking() {
            if let Some(d) = deadline {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the TLS handshake took too long",
                    ));
                }
                sock.set_read_timeout(Some(left))?;
                sock.set_write_timeout(Some(left))?;
            }
            let (read, written) = conn.complete_io(&mut sock)?;
            if read == 0 && written == 0 && conn.is_handshaking() {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed during the TLS handshake",
                ));
            }
        }
        Ok(TlsStream {
            shared: Arc::new(Shared {
                conn: Mutex::new(conn),
                write: Mutex::new(()),
            }),
            sock,
            pending: Vec::new(),
            pos: 0,
            eof: false,
        })
    }

    /// Another handle on the same session (and a clone of the socket).
    pub fn try_clone(&self) -> io::Result<TlsStream> {
        Ok(TlsStream {
            shared: self.shared.clone(),
            sock: self.sock.try_clone()?,
            pending: Vec::new(),
            pos: 0,
            eof: false,
        })
    }

    /// The socket under the session (for timeouts, shutdown, polling).
    pub fn socket(&self) -> &TcpStream {
        &self.sock
    }

    /// The certificate chain the client showed, if any (leaf first).
    pub fn peer_certificates(&self) -> Option<Vec<rustls::pki_types::CertificateDer<'static>>> {
        self.shared
            .conn
            .lock()
            .peer_certificates()
            .map(<[_]>::to_vec)
    }

    /// Writes whatever rustls has sealed (alerts, handshake or post-handshake messages).
    fn flush_sealed(&self) -> io::Result<()> {
        let _order = self.shared.write.lock();
        let mut out = Vec::new();
        {
            let mut c = self.shared.conn.lock();
            while c.wants_write() {
                c.write_tls(&mut out)?;
            }
        }
        (&self.sock).write_all(&out)
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            {
                let mut c = self.shared.conn.lock();
                match c.reader().read(buf) {
                    Ok(n) => return Ok(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    // The peer closed without close_notify: an end like any other here,
                    // since every protocol served frames its own messages.
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                    Err(e) => return Err(e),
                }
                if self.eof {
                    return Ok(0);
                }
                if self.pos < self.pending.len() {
                    let mut rest = &self.pending[self.pos..];
                    let n = c.read_tls(&mut rest)?;
                    if n == 0 {
                        // close_notify came: nothing more is read.
                        self.eof = true;
                        continue;
                    }
                    self.pos += n;
                    let state = c.process_new_packets();
                    let sealed = c.wants_write();
                    drop(c);
                    if sealed {
                        // An alert for the error below, or a post-handshake message.
                        let flushed = self.flush_sealed();
                        if state.is_ok() {
                            flushed?;
                        }
                    }
                    state.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                    continue;
                }
            }
            // Nothing buffered: wait for the socket, unlocked, so writers go on.
            self.pending.resize(READ_CHUNK, 0);
            self.pos = 0;
            let n = match (&self.sock).read(&mut self.pending) {
                Ok(n) => n,
                Err(e) => {
                    self.pending.clear();
                    return Err(e);
                }
            };
            self.pending.truncate(n);
            if n == 0 {
                self.eof = true;
                // Tells rustls the transport ended, so it can say whether that was clean.
                let _ = self.shared.conn.lock().read_tls(&mut io::empty());
            }
        }
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let _order = self.shared.write.lock();
        let mut out = Vec::with_capacity(buf.len() + 64);
        let n = {
            let mut c = self.shared.conn.lock();
            let n = c.writer().write(buf)?;
            while c.wants_write() {
                c.write_tls(&mut out)?;
            }
            n
        };
        (&self.sock).write_all(&out)?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A connection on one of the server's ports: plaintext or TLS.
pub enum Stream {
    /// Plaintext.
    Plain(TcpStream),
    /// TLS.
    Tls(Box<TlsStream>),
}

impl Stream {
    /// Another handle on the same connection (see [`TlsStream::try_clone`]).
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Plain(s) => Stream::Plain(s.try_clone()?),
            Stream::Tls(t) => Stream::Tls(Box::new(t.try_clone()?)),
        })
    }

    /// The socket (timeouts, polling, peer address).
    pub fn socket(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(t) => t.socket(),
        }
    }

    /// Shuts the socket down (a TLS session ends with it, without close_notify).
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.socket().shutdown(how)
    }

    /// Whether the connection is encrypted.
    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    /// The certificate chain the client showed (leaf first); `None` on plaintext or when
    /// the client showed none.
    pub fn peer_certificates(&self) -> Option<Vec<rustls::pki_types::CertificateDer<'static>>> {
        match self {
            Stream::Plain(_) => None,
            Stream::Tls(t) => t.peer_certificates(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(t) => t.flush(),
        }
    }
}
