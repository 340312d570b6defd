//! One connection: the preamble, the connection header, then calls read and queued for the
//! handlers; responses are written by whichever handler finishes a call, under the
//! connection's write lock.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use cairn_rpc::wire::{self, Call, Preamble};
use cairn_rpc::{pb, WireError};
use cairn_tls::Stream;
use parking_lot::Mutex;
use prost::Message;

use super::errors::{self, RpcError};
use super::Shared;
use crate::connections::{self, Activity, Deadline, Tracked};
use crate::security::{Caller, ACCESS_DENIED};

/// The reader's buffer: several small calls per receive.
const READ_BUFFER: usize = 64 << 10;

/// How long writing one response may block before the connection is given up.
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

/// Which service a connection's header named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Service {
    /// `ClientService`.
    Client,
    /// `MasterService`.
    Master,
    /// `AdminService`.
    Admin,
    /// `ClientMetaService`.
    ClientMeta,
}

impl Service {
    fn from_name(name: &str) -> Option<Service> {
        Some(match name {
            "ClientService" => Service::Client,
            "MasterService" => Service::Master,
            "AdminService" => Service::Admin,
            "ClientMetaService" => Service::ClientMeta,
            _ => return None,
        })
    }

    /// The name HBase's metrics use for the service.
    pub fn name(self) -> &'static str {
        match self {
            Service::Client => "ClientService",
            Service::Master => "MasterService",
            Service::Admin => "AdminService",
            Service::ClientMeta => "ClientMetaService",
        }
    }
}

/// What a handler needs of the connection a call came on.
pub struct Conn {
    /// The service the connection's header named.
    pub service: Service,
    /// Cell block codec: `None` = none (cells in messages), `Some(tags)` = KeyValueCodec.
    pub codec: Option<bool>,
    /// Who is calling: the client certificate's holder, or the connection header's user.
    pub caller: Caller,
    /// The client's address (`host:port`), as the slow-call log names it.
    pub peer: String,
    /// Plaintext or TLS: under TLS, a handle on the session the reader also uses.
    writer: Mutex<Stream>,
    /// Calls in flight and when the client last sent bytes, for the idle timeout and the
    /// connection cap.
    activity: Arc<Activity>,
}

impl Conn {
    /// Writes a whole response frame; on failure the connection is shut down (its reader
    /// then ends).
    pub fn send(&self, frame: &[u8]) -> bool {
        let mut w = self.writer.lock();
        match w.write_all(frame) {
            Ok(()) => true,
            Err(_) => {
                let _ = w.shutdown(Shutdown::Both);
                false
            }
        }
    }
}

/// Work for a handler.
pub enum Job {
    /// A call to run.
    Call {
        /// The connection it came on.
        conn: Arc<Conn>,
        /// The call (boxed: a call is large and the queue holds many).
        call: Box<Call>,
        /// When it was queued.
        queued: Instant,
    },
    /// Stop the handler.
    Stop,
}

/// Reads exactly `buf.len()` bytes; `Ok(false)` on a clean end of stream before the first.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("connection closed after {got} of {} bytes", buf.len()),
                ))
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// A response that answers no call (call id -1): a preamble answer or a fatal error.
fn fatal(stream: &mut impl Write, class: &'static str, message: &str) {
    let frame = wire::encode_response(
        wire::NO_CALL_ID,
        None,
        Some(RpcError::new(class, message, true).to_response()),
        b"",
    );
    let _ = stream.write_all(&frame);
}

/// Serves one connection until it closes; the error says why it ended early. The opening
/// (preamble and connection header) must be in by `deadline`.
pub fn serve(
    s: &Arc<Shared>,
    stream: Stream,
    activity: &Arc<Activity>,
    deadline: Instant,
) -> Result<(), String> {
    let metrics = &s.services.metrics;
    let socket = stream.socket().try_clone().map_err(|e| e.to_string())?;
    // Every read of the opening ends by the deadline, however the bytes trickle in.
    let mut stream = Deadline::new(Tracked::new(stream, activity.clone()), &socket, deadline);
    let auth = loop {
        let mut pre = [0u8; 6];
        if !read_full(&mut stream, &mut pre).map_err(|e| e.to_string())? {
            return Ok(());
        }
        match wire::parse_preamble(pre) {
            Ok(Preamble::Registry) => {
                let resp = pb::GetConnectionRegistryResponse {
                    cluster_id: s.services.cluster_id.clone(),
                };
                let frame = wire::encode_response(wire::NO_CALL_ID, Some(&resp), None, b"");
                let _ = stream.get_mut().get_mut().write_all(&frame);
                return Ok(());
            }
            Ok(Preamble::Security) => {
                fatal(
                    stream.get_mut().get_mut(),
                    errors::SECURITY_NOT_ENABLED,
                    "security is not enabled",
                );
            }
            Ok(Preamble::Rpc { auth }) => break auth,
            Err(e @ WireError::BadVersion(_)) => {
                fatal(
                    stream.get_mut().get_mut(),
                    errors::WRONG_VERSION,
                    &e.to_string(),
                );
                return Err(e.to_string());
            }
            Err(e) => {
                fatal(
                    stream.get_mut().get_mut(),
                    errors::FATAL_CONNECTION,
                    &e.to_string(),
                );
                return Err(e.to_string());
            }
        }
    };
    if auth != wire::AUTH_SIMPLE {
        let msg = format!(
            "authentication method {auth} is not supported: cairn serves SIMPLE authentication only"
        );
        fatal(stream.get_mut().get_mut(), errors::BAD_AUTH, &msg);
        return Err(msg);
    }
    let limit = s.config.max_request_size;
    let mut prefix = [0u8; 4];
    if !read_full(&mut stream, &mut prefix).map_err(|e| e.to_string())? {
        return Ok(());
    }
    let len = wire::frame_len(prefix, "connection header", limit).map_err(|e| {
        fatal(
            stream.get_mut().get_mut(),
            errors::FATAL_CONNECTION,
            &e.to_string(),
        );
        e.to_string()
    })?;
    let buf = wire::read_frame(&mut stream, len).map_err(|e| e.to_string())?;
    let header = wire::decode_connection_header(&buf).map_err(|e| {
        fatal(
            stream.get_mut().get_mut(),
            errors::FATAL_CONNECTION,
            &e.to_string(),
        );
        e.to_string()
    })?;
    let service_name = header.service_name.as_deref().unwrap_or("");
    let Some(service) = Service::from_name(service_name) else {
        let msg = format!("Unknown service: {service_name}");
        fatal(stream.get_mut().get_mut(), errors::UNKNOWN_SERVICE, &msg);
        return Err(msg);
    };
    let codec = match header.cell_block_codec_class.as_deref() {
        None | Some("") => None,
        Some(c) => match cairn_rpc::cellblock::codec_carries_tags(c) {
            Some(tags) => Some(tags),
            None => {
                let msg = format!("cell block codec {c} is not supported (cairn speaks KeyValueCodec and KeyValueCodecWithTags)");
                fatal(
                    stream.get_mut().get_mut(),
                    errors::UNSUPPORTED_CELL_CODEC,
                    &msg,
                );
                return Err(msg);
            }
        },
    };
    if let Some(c) = header
        .cell_block_compressor_class
        .as_deref()
        .filter(|c| !c.is_empty())
    {
        let msg = format!("cell block compressor {c} is not supported");
        fatal(
            stream.get_mut().get_mut(),
            errors::UNSUPPORTED_COMPRESSION_CODEC,
            &msg,
        );
        return Err(msg);
    }
    let caller = caller_of(s, &header, stream.get_ref().get_ref()).inspect_err(|msg| {
        fatal(stream.get_mut().get_mut(), ACCESS_DENIED, msg);
    })?;
    activity.set_established();
    let stream = stream.into_inner();
    // A client with nothing in flight that sends nothing for the idle timeout is gone; one
    // that stops reading must not hold a handler forever either: its connection is closed
    // once a response cannot be written for this long.
    let idle = s.config.effective_idle_timeout();
    let _ = socket.set_read_timeout((!idle.is_zero()).then_some(idle));
    let _ = socket.set_write_timeout(Some(WRITE_TIMEOUT));
    let writer = stream.get_ref().try_clone().map_err(|e| e.to_string())?;
    // Under TLS the socket shows encrypted bytes waiting, which as surely means a call is.
    let fd = socket.as_raw_fd();
    let conn = Arc::new(Conn {
        service,
        codec,
        caller,
        peer: socket
            .peer_addr()
            .map(|a| a.to_string())
            .unwrap_or_default(),
        writer: Mutex::new(writer),
        activity: activity.clone(),
    });
    // One receive usually brings a call's length and its frame, and any calls behind it.
    let mut stream = BufReader::with_capacity(READ_BUFFER, stream);
    loop {
        if !next_call(&mut stream, activity, idle)? {
            return Ok(());
        }
        if !read_full(&mut stream, &mut prefix).map_err(|e| e.to_string())? {
            return Ok(());
        }
        let len = match wire::frame_len(prefix, "request", limit) {
            Ok(n) => n,
            Err(e) => {
                too_big(&conn, &mut stream, i32::from_be_bytes(prefix), &e);
                return Err(e.to_string());
            }
        };
        let frame = wire::read_frame(&mut stream, len).map_err(|e| e.to_string())?;
        metrics.received(4 + len);
        let call = match wire::decode_call(Bytes::from(frame)) {
            Ok(c) => c,
            Err(e) => {
                // The frame's own structure is broken: nothing after it can be trusted.
                conn.send(&wire::encode_response(
                    wire::NO_CALL_ID,
                    None,
                    Some(
                        RpcError::new(errors::FATAL_CONNECTION, e.to_string(), true).to_response(),
                    ),
                    b"",
                ));
                return Err(e.to_string());
            }
        };
        let id = call.id();
        // Bytes of calls queued or running are bounded as HBase bounds them (inline calls
        // too), the call counted until its answer is written.
        if !s.reserve_queue_bytes(call.size) {
            refuse_queue_full(
                s,
                &conn,
                id,
                "is hbase.ipc.server.max.callqueue.size too small?",
            );
            continue;
        }
        conn.activity.call_started();
        // A single-row call with nothing behind it on this connection runs here on the reader:
        // handing it to a handler would cost a thread wake-up and a context switch, more than
        // the call itself (a cached get takes a few microseconds). Calls behind it, or long
        // ones (scans, admin), go to the handlers so that a connection's calls run in
        // parallel.
        // At most one such call per CPU at a time, though: past that the handlers take them.
        if inline(&call) && stream.buffer().is_empty() && !crate::server::readable(fd) {
            if let Some(_slot) = s.inline.take() {
                run(s, &conn, &call, Instant::now());
                continue;
            }
        }
        let size = call.size;
        let job = Job::Call {
            conn: conn.clone(),
            call: Box::new(call),
            queued: Instant::now(),
        };
        if s.queue.try_push(job).is_err() {
            s.release_queue_bytes(size);
            conn.activity.call_done();
            refuse_queue_full(s, &conn, id, "too many items queued ?");
        }
    }
}

/// Answers call `id` with `CallQueueTooBigException` (HBase's message, `why` after the
/// server name); the client backs off and retries.
fn refuse_queue_full(s: &Shared, conn: &Conn, id: u32, why: &str) {
    let metrics = &s.services.metrics;
    metrics.exception(errors::CALL_QUEUE_TOO_BIG);
    let e = RpcError::new(
        errors::CALL_QUEUE_TOO_BIG,
        format!(
            "Call queue is full on {}, {why}",
            s.services.meta.location().name()
        ),
        false,
    );
    let frame = wire::encode_response(id, None, Some(e.to_response()), b"");
    metrics.sent(frame.len());
    conn.send(&frame);
}

/// Waits for the next call's first bytes; `Ok(false)` when the client closed. A client that
/// sends nothing for `idle` while none of its calls is in flight is gone.
fn next_call(
    stream: &mut impl BufRead,
    activity: &Activity,
    idle: Duration,
) -> Result<bool, String> {
    loop {
        match stream.fill_buf() {
            Ok(b) => return Ok(!b.is_empty()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if connections::timed_out(&e) => {
                if activity.in_flight() > 0 || activity.quiet_for() < idle {
                    continue;
                }
                return Err(format!(
                    "idle for {} s with no call in flight",
                    idle.as_secs()
                ));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Who calls on a connection: its client certificate's holder, else the header's SIMPLE user.
/// With authorization on, a header asking to act for another user (a proxy user) is
/// refused, as HBase refuses it without `hadoop.proxyuser.*` rules.
fn caller_of(s: &Shared, header: &pb::ConnectionHeader, stream: &Stream) -> Result<Caller, String> {
    let info = header.user_info.as_ref();
    let claimed = info.map(|u| u.effective_user.as_str());
    if s.config.authorizer.enabled() {
        if let Some((user, real)) =
            info.and_then(|u| Some((&u.effective_user, u.real_user.as_ref()?)))
        {
            if !real.is_empty() && real != user {
                return Err(format!(
                    "user {real} may not act for {user}: cairn serves no proxy users"
                ));
            }
        }
    }
    Ok(s.config
        .authorizer
        .caller(stream.peer_certificates().as_deref(), claimed))
}

/// Answers a request over the size limit with `RequestTooBigException` (for the call whose
/// header starts the frame, if it can be read) and ends the connection, as HBase does.
fn too_big(conn: &Conn, stream: &mut impl Read, len: i32, e: &WireError) {
    let mut head = [0u8; 64];
    let mut id = wire::NO_CALL_ID;
    if len > 0 {
        let n = (len as usize).min(head.len());
        if read_full(stream, &mut head[..n]).unwrap_or(false) {
            if let Ok(h) = pb::RequestHeader::decode_length_delimited(&head[..n]) {
                id = h.call_id.unwrap_or(wire::NO_CALL_ID);
            }
        }
    }
    let err = RpcError::new(errors::REQUEST_TOO_BIG, e.to_string(), true);
    conn.send(&wire::encode_response(
        id,
        None,
        Some(err.to_response()),
        b"",
    ));
}

/// A handler thread: runs queued calls until told to stop.
pub fn handler_loop(s: &Arc<Shared>) {
    loop {
        let Job::Call { conn, call, queued } = s.queue.pop() else {
            return;
        };
        run(s, &conn, &call, queued);
    }
}

/// A count of calls running on connection readers, bounded.
pub struct InlineSlots {
    running: AtomicUsize,
    limit: usize,
}

/// A taken slot, given back when dropped.
pub struct InlineSlot<'a>(&'a AtomicUsize);

impl Drop for InlineSlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl InlineSlots {
    /// Slots for `limit` calls at once.
    pub fn new(limit: usize) -> InlineSlots {
        InlineSlots {
            running: AtomicUsize::new(0),
            limit,
        }
    }

    /// A slot, if fewer than the limit are taken.
    pub fn take(&self) -> Option<InlineSlot<'_>> {
        self.running
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.limit).then_some(n + 1)
            })
            .ok()
            .map(|_| InlineSlot(&self.running))
    }
}

/// Whether `call` is short enough to run on the connection's reader: single-row reads and
/// writes. Never a scan (which may run up to half its timeout), an admin or master call, or
/// a Multi: its large answers, built on many reader threads instead of a few handlers, had
/// the allocator fault in and zero fresh huge pages on each (measured: PE multi-gets at 50
/// client threads spent twice the system time and lost 10-15% of their throughput).
fn inline(call: &Call) -> bool {
    matches!(call.method(), "Get" | "Mutate")
}

/// Runs one call and writes its answer.
fn run(s: &Shared, conn: &Conn, call: &Call, queued: Instant) {
    let started = Instant::now();
    // A bug must cost one call its answer, not the server a thread.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        super::dispatch::authorize(&s.config.authorizer, conn, call)?;
        super::dispatch::call(&s.services, conn, call)
    }))
    .unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        tracing::error!("rpc handler panicked in {}: {what}", call.method());
        Err(RpcError::new(
            errors::IO_EXCEPTION,
            format!("internal error in {}: {what}", call.method()),
            false,
        ))
    });
    let processed = started.elapsed();
    let frame = match &outcome {
        Ok((msg, block)) => wire::encode_response(call.id(), Some(msg.as_ref()), None, block),
        Err(e) => {
            s.services.metrics.exception(e.class);
            wire::encode_response(call.id(), None, Some(e.to_response()), b"")
        }
    };
    let queue_time = started.duration_since(queued);
    s.services.metrics.call_done(
        conn.service,
        call.method(),
        queue_time,
        processed,
        call.size,
        frame.len(),
    );
    let slow_log = &s.services.metrics.slow_log;
    if let Some(kind) = slow_log.check(processed, frame.len() as u64) {
        slow_log.record(crate::slow_log::SlowCall {
            kind,
            start: std::time::SystemTime::now() - processed,
            protocol: "HBase RPC",
            method: call.method().to_string(),
            param: super::dispatch::describe(call),
            client: conn.peer.clone(),
            processing: processed,
            queue: queue_time,
            response_size: frame.len() as u64,
        });
    }
    conn.send(&frame);
    s.release_queue_bytes(call.size);
    conn.activity.touch();
    conn.activity.call_done();
}

#[cfg(test)]
mod tests {
    use super::InlineSlots;
    use super::{next_call, Activity};
    use std::io::{self, BufReader, Read};
    use std::time::Duration;

    /// A socket whose reads time out `timeouts` times, then deliver `data`.
    struct Slow {
        timeouts: usize,
        data: &'static [u8],
    }

    impl Read for Slow {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.timeouts > 0 {
                self.timeouts -= 1;
                std::thread::sleep(Duration::from_millis(20));
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = buf.len().min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn activity() -> std::sync::Arc<Activity> {
        let r = crate::connections::Registry::new(4);
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let _c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        r.admit(&s).unwrap().activity
    }

    #[test]
    fn the_idle_timeout_spares_a_connection_with_a_call_in_flight() {
        let idle = Duration::from_millis(10);
        // Quiet for longer than the timeout with nothing in flight: gone.
        let a = activity();
        std::thread::sleep(Duration::from_millis(30));
        let mut r = BufReader::new(Slow {
            timeouts: 1,
            data: b"x",
        });
        let e = next_call(&mut r, &a, idle).unwrap_err();
        assert!(e.contains("idle"), "{e}");
        // The same with a call in flight: the wait goes on until the next call comes.
        a.call_started();
        let mut r = BufReader::new(Slow {
            timeouts: 5,
            data: b"x",
        });
        assert!(next_call(&mut r, &a, idle).unwrap());
        // And once it is answered, the quiet is counted from then.
        a.touch();
        a.call_done();
        let mut r = BufReader::new(Slow {
            timeouts: 0,
            data: b"",
        });
        assert!(
            !next_call(&mut r, &a, idle).unwrap(),
            "the end of the stream"
        );
    }

    #[test]
    fn inline_slots_are_bounded_and_given_back() {
        let slots = InlineSlots::new(2);
        let a = slots.take().expect("first slot");
        let b = slots.take().expect("second slot");
        assert!(slots.take().is_none(), "no third slot while two are taken");
        drop(a);
        let c = slots.take().expect("a slot given back is free again");
        assert!(slots.take().is_none());
        drop((b, c));
        assert_eq!(slots.running.load(std::sync::atomic::Ordering::Acquire), 0);
    }
}
