//! Serving one connection: find the protocol and transport from the first bytes, then answer
//! requests until the peer closes, sends something that cannot be decoded, or the server stops.
//!
//! HBase's Thrift server is started with one transport and protocol (`-f` framed, `-c`
//! compact); cairn tells them apart per connection, so one port serves every client:
//! a strict binary message starts with `0x80 0x01`, a compact one with `0x82`, and anything else
//! is read as a frame length (framed transport) followed by one of those two.

use std::cell::RefCell;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use thrift::protocol::{
    TBinaryOutputProtocol, TCompactOutputProtocol, TInputProtocol, TOutputProtocol, TType,
};
use thrift::server::TProcessor;
use thrift::transport::{TBufferedWriteTransport, TFramedWriteTransport};

use crate::guard::{Flavor, Guarded};

/// Bounds on what a peer may send.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest frame of the framed transport
    /// (`hbase.regionserver.thrift.framed.max_frame_size_in_mb`, 2 MiB in HBase).
    pub max_frame_bytes: usize,
    /// Largest request, whatever the transport.
    pub max_request_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame_bytes: 2 << 20,
            max_request_bytes: 64 << 20,
        }
    }
}

/// Protocol and transport of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// `TBinaryProtocol` over the buffered transport (HBase's default gateway).
    BinaryBuffered,
    /// `TBinaryProtocol` over `TFramedTransport` (HBase's `-f`).
    BinaryFramed,
    /// `TCompactProtocol` over the buffered transport (HBase's `-c`).
    CompactBuffered,
    /// `TCompactProtocol` over `TFramedTransport` (HBase's `-c -f`).
    CompactFramed,
}

impl Encoding {
    /// Every encoding, in the order [`ConnectionStats`] counts them.
    pub const ALL: [Encoding; 4] = [
        Encoding::BinaryBuffered,
        Encoding::BinaryFramed,
        Encoding::CompactBuffered,
        Encoding::CompactFramed,
    ];

    /// The encoding's label in metrics (`binary_framed`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::BinaryBuffered => "binary_buffered",
            Encoding::BinaryFramed => "binary_framed",
            Encoding::CompactBuffered => "compact_buffered",
            Encoding::CompactFramed => "compact_framed",
        }
    }

    fn flavor(self) -> Flavor {
        match self {
            Encoding::BinaryBuffered | Encoding::BinaryFramed => Flavor::Binary,
            Encoding::CompactBuffered | Encoding::CompactFramed => Flavor::Compact,
        }
    }

    fn framed(self) -> bool {
        matches!(self, Encoding::BinaryFramed | Encoding::CompactFramed)
    }
}

/// Wire-level counters, shared by all connections (atomics, updated without lookups).
#[derive(Debug, Default)]
pub struct ConnectionStats {
    /// Requests answered (errors the handler reported included).
    pub requests: AtomicU64,
    /// Connections closed because their bytes could not be decoded.
    pub protocol_errors: AtomicU64,
    /// Requests naming a method the service does not have (answered with an exception).
    pub unknown_methods: AtomicU64,
    /// Frames or requests over the limits.
    pub oversized: AtomicU64,
    /// Connections per [`Encoding`], in [`Encoding::ALL`]'s order.
    pub connections: [AtomicU64; 4],
}

/// How a connection ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The peer closed between requests.
    Closed,
    /// cairn closed it: the reason.
    Dropped(String),
}

/// Work a server does for a connection after answering one request, before the next arrives.
/// cairn reads a scanner's next batch ahead here, so the rows are ready when the peer asks for
/// them instead of the peer waiting while they are read (HBase's client does the same with its
/// prefetching scanner; a Thrift client cannot).
pub trait BetweenRequests {
    /// Runs after each answer has been flushed. `request_waiting` says whether the peer's next
    /// request has begun to arrive; the work should stop soon after it does, as the peer waits.
    fn between_requests(&mut self, request_waiting: &mut dyn FnMut() -> bool);
}

/// Nothing to do between requests.
impl BetweenRequests for () {
    fn between_requests(&mut self, _: &mut dyn FnMut() -> bool) {}
}

/// A request source that may hold bytes already read from the socket.
trait ReadAhead: Read {
    /// Bytes read from the socket and not yet consumed.
    fn buffered(&self) -> usize;
}

impl<R: Read> ReadAhead for BufReader<R> {
    fn buffered(&self) -> usize {
        self.buffer().len()
    }
}

impl<R: Read> ReadAhead for FramedSource<R> {
    fn buffered(&self) -> usize {
        self.inner.buffer().len()
    }
}

/// The framed transport's read side with a frame-size limit (the `thrift` crate's
/// `TFramedReadTransport` accepts any length the peer sends and allocates it).
struct FramedSource<R> {
    inner: BufReader<R>,
    left: usize,
    max: usize,
}

impl<R: Read> FramedSource<R> {
    fn next_frame(&mut self) -> io::Result<()> {
        let mut len = [0u8; 4];
        self.inner.read_exact(&mut len)?;
        let len = i32::from_be_bytes(len);
        if len < 0 || len as usize > self.max {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "frame of {len} bytes exceeds the limit of {} bytes",
                    self.max
                ),
            ));
        }
        self.left = len as usize;
        Ok(())
    }
}

impl<R: Read> Read for FramedSource<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.left == 0 {
            self.next_frame()?;
        }
        let want = buf.len().min(self.left);
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.left -= n;
        Ok(n)
    }
}

fn detect<R: Read>(reader: &mut BufReader<R>) -> io::Result<Option<Encoding>> {
    let buf = reader.fill_buf()?;
    let Some(&first) = buf.first() else {
        return Ok(None);
    };
    Ok(Some(match first {
        0x80 => Encoding::BinaryBuffered,
        0x82 => Encoding::CompactBuffered,
        _ => Encoding::BinaryFramed, // refined once the frame header is read
    }))
}

fn is_eof(e: &thrift::Error) -> bool {
    matches!(e, thrift::Error::Transport(t) if t.kind == thrift::TransportErrorKind::EndOfFile)
}

fn is_size(e: &thrift::Error) -> bool {
    match e {
        thrift::Error::Protocol(p) => matches!(
            p.kind,
            thrift::ProtocolErrorKind::SizeLimit | thrift::ProtocolErrorKind::NegativeSize
        ),
        thrift::Error::Transport(t) => t.message.contains("exceeds the limit"),
        _ => false,
    }
}

/// Answers held back while the peer's next request is already here: a client that pipelines
/// (sends several requests before reading) gets them in one write instead of one write each,
/// which on loopback cost the server more than the requests themselves. A client that waits
/// for each answer gets it at once, as the connection loop sends the held answers whenever no
/// request is waiting.
struct HeldAnswers<W>(Rc<RefCell<Held<W>>>);

struct Held<W> {
    inner: W,
    bytes: Vec<u8>,
}

impl<W: Write> Held<W> {
    /// More than this is written out even while requests wait: memory stays bounded, and a
    /// large answer goes out without waiting for the next small one.
    const MAX: usize = 64 * 1024;

    fn send(&mut self) -> io::Result<()> {
        if self.bytes.is_empty() {
            return Ok(());
        }
        let r = self.inner.write_all(&self.bytes);
        self.bytes.clear();
        r?;
        self.inner.flush()
    }
}

impl<W: Write> Write for HeldAnswers<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    /// The transports flush after each answer; the answer is held unless it makes too much.
    fn flush(&mut self) -> io::Result<()> {
        let mut held = self.0.borrow_mut();
        if held.bytes.len() >= Held::<W>::MAX {
            held.send()
        } else {
            Ok(())
        }
    }
}

/// Serves requests from `reader` (answers to `writer`) with `processor` until the peer closes
/// or sends bytes that cannot be decoded. Errors of the handler are answers, not reasons to
/// close; a request that cannot be decoded is answered with an exception when its header was
/// readable, then the connection is closed (the stream's position is lost).
pub fn serve_connection<R, W, P>(
    reader: R,
    writer: W,
    processor: &P,
    limits: &Limits,
    stats: &ConnectionStats,
    idle: &mut dyn BetweenRequests,
) -> (Option<Encoding>, Outcome)
where
    R: Read + 'static,
    W: Write,
    P: TProcessor + ?Sized,
{
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let encoding = match detect(&mut reader) {
        Ok(Some(e)) => e,
        Ok(None) => return (None, Outcome::Closed),
        Err(e) => return (None, Outcome::Dropped(e.to_string())),
    };
    let (encoding, source): (Encoding, Box<dyn ReadAhead>) = if encoding.framed() {
        let mut f = FramedSource {
            inner: reader,
            left: 0,
            max: limits.max_frame_bytes,
        };
        if let Err(e) = f.next_frame() {
            stats.protocol_errors.fetch_add(1, Ordering::Relaxed);
            if e.kind() == io::ErrorKind::InvalidData {
                stats.oversized.fetch_add(1, Ordering::Relaxed);
            }
            return (None, Outcome::Dropped(e.to_string()));
        }
        let enc = match f.inner.fill_buf() {
            Ok(b) if b.first() == Some(&0x80) => Encoding::BinaryFramed,
            Ok(b) if b.first() == Some(&0x82) => Encoding::CompactFramed,
            Ok(b) => {
                stats.protocol_errors.fetch_add(1, Ordering::Relaxed);
                return (
                    None,
                    Outcome::Dropped(format!(
                        "not a Thrift binary or compact message (first bytes {:02x?})",
                        &b[..b.len().min(8)]
                    )),
                );
            }
            Err(e) => return (None, Outcome::Dropped(e.to_string())),
        };
        (enc, Box::new(f))
    } else {
        (encoding, Box::new(reader))
    };
    stats.connections[Encoding::ALL
        .iter()
        .position(|e| *e == encoding)
        .unwrap_or(0)]
    .fetch_add(1, Ordering::Relaxed);

    let mut input = Guarded::new(source, encoding.flavor(), limits.max_request_bytes);
    let held = Rc::new(RefCell::new(Held {
        inner: writer,
        bytes: Vec::new(),
    }));
    let writer = HeldAnswers(held.clone());
    let send_held = || held.borrow_mut().send();
    let mut output: Box<dyn TOutputProtocol + '_> = match (encoding.flavor(), encoding.framed()) {
        (Flavor::Binary, false) => Box::new(TBinaryOutputProtocol::new(
            TBufferedWriteTransport::with_capacity(64 * 1024, writer),
            true,
        )),
        (Flavor::Binary, true) => Box::new(TBinaryOutputProtocol::new(
            TFramedWriteTransport::with_capacity(64 * 1024, writer),
            true,
        )),
        (Flavor::Compact, false) => Box::new(TCompactOutputProtocol::new(
            TBufferedWriteTransport::with_capacity(64 * 1024, writer),
        )),
        (Flavor::Compact, true) => Box::new(TCompactOutputProtocol::new(
            TFramedWriteTransport::with_capacity(64 * 1024, writer),
        )),
    };
    let outcome = loop {
        input.begin_request();
        match processor.process(&mut input, &mut *output) {
            Ok(()) if input.request_complete() => {
                stats.requests.fetch_add(1, Ordering::Relaxed);
                if !input.with_source(|s| s.buffered() > 0) {
                    if let Err(e) = send_held() {
                        break Outcome::Dropped(e.to_string());
                    }
                    idle.between_requests(&mut || input.with_source(|s| s.buffered() > 0));
                }
            }
            Ok(()) if input.arguments_unread() => {
                // An unknown method: the processor answered with an exception; step over its
                // arguments to stay in step with the peer.
                stats.unknown_methods.fetch_add(1, Ordering::Relaxed);
                if let Err(e) = input.skip(TType::Struct) {
                    stats.protocol_errors.fetch_add(1, Ordering::Relaxed);
                    break Outcome::Dropped(format!("arguments of an unknown method: {e}"));
                }
                if let Err(e) = send_held() {
                    break Outcome::Dropped(e.to_string());
                }
            }
            Ok(()) => {
                // The arguments could not be decoded; the peer got an exception naming why.
                stats.protocol_errors.fetch_add(1, Ordering::Relaxed);
                if input.oversized() {
                    stats.oversized.fetch_add(1, Ordering::Relaxed);
                }
                let name = input.message().map(|m| m.name.clone()).unwrap_or_default();
                break Outcome::Dropped(format!("arguments of {name} could not be decoded"));
            }
            Err(e) if is_eof(&e) && input.message().is_none() && input_untouched(&input) => {
                break Outcome::Closed;
            }
            Err(e) => {
                stats.protocol_errors.fetch_add(1, Ordering::Relaxed);
                if is_size(&e) || input.oversized() {
                    stats.oversized.fetch_add(1, Ordering::Relaxed);
                }
                break Outcome::Dropped(e.to_string());
            }
        }
    };
    // The answers to the last requests, the exception explaining a drop among them.
    let _ = send_held();
    (Some(encoding), outcome)
}

/// True when the current request has consumed nothing (EOF between requests is a clean close).
fn input_untouched<R: Read + 'static>(input: &Guarded<R>) -> bool {
    input.remaining() == input.limit()
}
