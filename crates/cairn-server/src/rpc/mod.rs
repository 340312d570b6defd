//! HBase's native RPC: the port HBase 2.x's Java client (and everything built on it) speaks
//! to, serving what a standalone HBase serves on one port — `ClientMetaService` (connection
//! registry), `MasterService` (what `Admin` uses), `ClientService` (reads and writes),
//! `AdminService` (region information, flushes, compactions) — over the embedded region
//! server, with `hbase:meta` read as a region (cairn-region's `MetaRegion`; [`meta`] names it on
//! the wire).
//!
//! Threads: one acceptor; one reader per connection (which first runs the TLS handshake
//! when the port has TLS: HBase's optional SSL handler, plaintext told apart by its first
//! byte when `hbase.server.netty.tls.supportplaintext` allows it), which decodes calls and queues them;
//! `hbase.regionserver.handler.count` handlers, which run calls and write each response as it
//! is ready, so pipelined calls on one connection are answered out of order. A full call queue
//! (by count, `hbase.ipc.server.max.callqueue.length`, or by bytes of calls queued or running,
//! `hbase.ipc.server.max.callqueue.size`) answers `CallQueueTooBigException` at once, as HBase
//! does. Connections are capped, the quietest idle one making room for a new one
//! ([`crate::connections`]); the opening (TLS handshake, preamble, connection header) has a
//! deadline, and a connection with nothing in flight is closed after an idle timeout.

mod admin;
mod bulk_load;
mod client;
mod conditions;
mod connection;
pub mod convert;
mod dispatch;
pub mod errors;
pub mod filter;
mod master;
pub mod meta;
pub mod metrics;
mod procedures;
mod queue;
mod registry;
pub mod scanners;
mod split;

use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cairn_region::RegionServer;

use crate::connections::{self, Registry};
use crate::security::Authorizer;

pub use connection::Service;
pub use errors::RpcError;
pub use metrics::RpcMetrics;

use cairn_region::MetaRegion;
use connection::Job;
use meta::Location;
use scanners::Scanners;

/// The native RPC server's settings, with HBase's property names.
#[derive(Clone, Debug)]
pub struct RpcConfig {
    /// `host:port` to listen on (`hbase.regionserver.port`, 16020); port 0 picks one.
    pub addr: String,
    /// The host name advertised to clients in `ServerName`s and meta (`hbase.regionserver.hostname`);
    /// default: the address listened on.
    pub hostname: Option<String>,
    /// Handler threads (`hbase.regionserver.handler.count`, 30).
    pub handlers: usize,
    /// Calls queued for the handlers at most (`hbase.ipc.server.max.callqueue.length`,
    /// 10 per handler); more get `CallQueueTooBigException`.
    pub max_queue_length: usize,
    /// Bytes of calls queued or running at most (`hbase.ipc.server.max.callqueue.size`,
    /// 1 GiB); a call that would pass it gets `CallQueueTooBigException`.
    pub max_queue_bytes: usize,
    /// Largest request frame (`hbase.ipc.max.request.size`, 256 MiB); a larger one gets
    /// `RequestTooBigException` and the connection is closed.
    pub max_request_size: usize,
    /// Connections open at once (`cairn.ipc.server.max.connections`, 4000): at the cap the
    /// quietest connection with no call in flight is closed to make room.
    pub max_connections: usize,
    /// How long a new connection has for its TLS handshake, preamble and connection header
    /// (`cairn.ipc.server.header.timeout`, 10 s).
    pub header_timeout: Duration,
    /// A connection with no call in flight is closed once its client has sent nothing for this
    /// long (`cairn.ipc.server.idle.timeout`, 300 s: past HBase's client, which closes its own
    /// idle connections after `hbase.ipc.client.connection.minIdleTimeBeforeClose`, 120 s,
    /// checked as often, so up to 240 s; never below twice the scanner lease; 0 = never).
    pub idle_timeout: Duration,
    /// Scanners open at once (`cairn.ipc.server.max.open.scanners`, 10000): opening one more
    /// closes the least recently used, whose next call gets `UnknownScannerException` as if
    /// its lease had expired.
    pub max_open_scanners: usize,
    /// Scanner lease (`hbase.client.scanner.timeout.period`, 60 s).
    pub scanner_lease: Duration,
    /// Most bytes one scan call returns (`hbase.server.scanner.max.result.size`, 100 MiB).
    pub max_result_size: usize,
    /// The least time a scan call may spend skipping filtered rows before it answers with a
    /// heartbeat (`hbase.region.server.rpc.minimum.scan.time.limit.delta`, 10 ms).
    pub min_scan_time_limit: Duration,
    /// TLS for the port (`hbase.server.netty.tls.enabled` and friends, or `--tls-cert`);
    /// `None` = plaintext only.
    pub tls: Option<Arc<cairn_tls::TlsAcceptor>>,
    /// Who may run admin operations (`hbase.security.authorization`, `hbase.superuser`).
    pub authorizer: Arc<Authorizer>,
    /// The start code of the `ServerName` (default: the time the server starts, in ms).
    pub start_code: Option<u64>,
    /// Set when the server is a region server of an HBase cluster (`cairn regionserver`):
    /// where the member will be once it has joined. Then there is no virtual `hbase:meta`,
    /// no `MasterService` and no `ClientMetaService` (the cluster's master serves them), and
    /// `AdminService` takes the master's open and close requests.
    pub cluster: Option<crate::cluster::MemberSlot>,
}

impl Default for RpcConfig {
    fn default() -> Self {
        RpcConfig {
            addr: "127.0.0.1:16020".into(),
            hostname: None,
            handlers: 30,
            max_queue_length: 300,
            max_queue_bytes: 1 << 30,
            max_request_size: 256 << 20,
            max_connections: 4000,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            max_open_scanners: 10_000,
            scanner_lease: Duration::from_secs(60),
            max_result_size: 100 << 20,
            min_scan_time_limit: Duration::from_millis(10),
            tls: None,
            authorizer: Arc::new(Authorizer::off()),
            start_code: None,
            cluster: None,
        }
    }
}

impl RpcConfig {
    /// The idle timeout in force: never so short that a client reading a scanner at the
    /// pace its lease allows (a call at most every lease) is cut off between two calls.
    pub fn effective_idle_timeout(&self) -> Duration {
        if self.idle_timeout.is_zero() {
            return Duration::ZERO;
        }
        self.idle_timeout.max(self.scanner_lease * 2)
    }
}

/// What every call needs: the region server, who this server is (meta's location), its open
/// scanners.
pub struct Services {
    rs: Arc<RegionServer>,
    /// `hbase:meta`, read as any region; it knows where this server is.
    meta: MetaRegion,
    cluster_id: String,
    scanners: Scanners,
    procedures: master::Procedures,
    metrics: Arc<RpcMetrics>,
    max_result_size: usize,
    min_scan_time_limit: Duration,
    info_port: Option<u16>,
    /// See [`RpcConfig::cluster`].
    cluster: Option<crate::cluster::MemberSlot>,
}

/// A running native RPC server.
pub struct RpcServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    acceptor: Option<JoinHandle<()>>,
    handlers: Vec<JoinHandle<()>>,
    reaper: Option<JoinHandle<()>>,
}

struct Shared {
    services: Services,
    config: RpcConfig,
    stop: AtomicBool,
    conns: Registry,
    queue: queue::CallQueue<Job>,
    /// Bytes of calls queued or running now (HBase's `callQueueSizeInBytes`).
    queued_bytes: AtomicUsize,
    /// Calls running on connection readers right now, and how many may (the CPUs): past
    /// that, more threads running calls at once only contend for them, and the handlers
    /// take the rest.
    inline: connection::InlineSlots,
}

impl RpcServer {
    /// Binds `config.addr` and starts serving `rs`. `info_port` is the HTTP port advertised
    /// as the server's web UI.
    pub fn start(
        rs: Arc<RegionServer>,
        config: RpcConfig,
        info_port: Option<u16>,
        metrics: Arc<RpcMetrics>,
    ) -> io::Result<RpcServer> {
        let listener = connections::bind(&config.addr)?;
        RpcServer::start_on(listener, rs, config, info_port, metrics)
    }

    /// [`RpcServer::start`] on a socket bound already (a region server of a cluster names
    /// its WAL after its port before the RPC server starts).
    pub fn start_on(
        listener: TcpListener,
        rs: Arc<RegionServer>,
        config: RpcConfig,
        info_port: Option<u16>,
        metrics: Arc<RpcMetrics>,
    ) -> io::Result<RpcServer> {
        let addr = listener.local_addr()?;
        let start_code = config.start_code.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_millis() as u64)
        });
        let host = config
            .hostname
            .clone()
            .unwrap_or_else(|| advertised_host(&addr));
        let cluster_id = rs
            .cluster_id()
            .map_err(|e| io::Error::other(format!("reading the cluster id: {e}")))?;
        let location = Location {
            host,
            port: addr.port(),
            start_code,
        };
        let services = Services {
            meta: MetaRegion::new(rs.clone(), location),
            cluster_id,
            scanners: scanners::scanners(
                config.scanner_lease,
                config.max_open_scanners,
                start_code,
            ),
            procedures: master::Procedures::default(),
            metrics,
            max_result_size: config.max_result_size,
            min_scan_time_limit: config.min_scan_time_limit,
            info_port,
            cluster: config.cluster.clone(),
            rs,
        };
        let queue_length = config.max_queue_length;
        let max_connections = config.max_connections;
        let shared = Arc::new(Shared {
            services,
            config,
            stop: AtomicBool::new(false),
            conns: Registry::new(max_connections),
            queue: queue::CallQueue::new(queue_length),
            queued_bytes: AtomicUsize::new(0),
            inline: connection::InlineSlots::new(
                std::thread::available_parallelism().map_or(1, |n| n.get()),
            ),
        });
        let mut handlers = Vec::new();
        for i in 0..shared.config.handlers.max(1) {
            let s = shared.clone();
            handlers.push(
                std::thread::Builder::new()
                    .name(format!("cairn-rpc-handler-{i}"))
                    .spawn(move || connection::handler_loop(&s))?,
            );
        }
        let s = shared.clone();
        let acceptor = std::thread::Builder::new()
            .name("cairn-rpc-accept".into())
            .spawn(move || accept_loop(listener, s))?;
        let s = shared.clone();
        let reaper = std::thread::Builder::new()
            .name("cairn-rpc-scanner-lease".into())
            .spawn(move || {
                let tick = (s.config.scanner_lease / 4)
                    .clamp(Duration::from_millis(50), Duration::from_secs(1));
                while !s.stop.load(Ordering::Acquire) {
                    std::thread::park_timeout(tick);
                    s.services.scanners.expire();
                }
            })?;
        Ok(RpcServer {
            shared,
            addr,
            acceptor: Some(acceptor),
            handlers,
            reaper: Some(reaper),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The `ServerName` clients see: host, port, start code.
    pub fn server_name(&self) -> String {
        self.shared.services.meta.location().name()
    }

    /// Where clients reach this server, as `hbase:meta` advertises it.
    pub fn location(&self) -> &Location {
        self.shared.services.meta.location()
    }

    /// The cluster id clients see.
    pub fn cluster_id(&self) -> &str {
        &self.shared.services.cluster_id
    }

    /// Open scanners.
    pub fn open_scanners(&self) -> usize {
        self.shared.services.scanners.len()
    }

    /// Scanners closed so far to make room for new ones at the cap.
    pub fn evicted_scanners(&self) -> u64 {
        self.shared.services.scanners.evicted()
    }

    /// Connections closed so far to make room for new ones at the cap.
    pub fn evicted_connections(&self) -> u64 {
        self.shared.conns.evicted()
    }

    /// Stops accepting, closes every connection and waits for the handlers.
    pub fn stop(&mut self) {
        let s = &self.shared;
        if s.stop.swap(true, Ordering::AcqRel) {
            return;
        }
        crate::connections::stop_acceptor(self.addr, self.acceptor.take());
        s.conns.shutdown_all(Shutdown::Both);
        crate::connections::wait_drained(|| s.conns.is_empty());
        // Each handler ends at a stop job of its own.
        for _ in 0..self.handlers.len() {
            s.queue.push(Job::Stop);
        }
        for h in self.handlers.drain(..) {
            let _ = h.join();
        }
        if let Some(r) = self.reaper.take() {
            r.thread().unpark();
            let _ = r.join();
        }
    }
}

impl Drop for RpcServer {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Shared {
    /// Counts `size` bytes of a call against `hbase.ipc.server.max.callqueue.size`; false
    /// when they would pass it (HBase refuses a call when its size plus those queued or
    /// running exceed the bound).
    fn reserve_queue_bytes(&self, size: usize) -> bool {
        let max = self.config.max_queue_bytes;
        self.queued_bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |q| {
                q.checked_add(size).filter(|&n| n <= max)
            })
            .is_ok()
    }

    /// Gives back what [`Shared::reserve_queue_bytes`] counted, once the call is answered.
    fn release_queue_bytes(&self, size: usize) {
        self.queued_bytes.fetch_sub(size, Ordering::AcqRel);
    }
}

/// The host clients are told to connect to: the listening address, or this machine's
/// loopback name when listening on every interface is all we know.
fn advertised_host(addr: &SocketAddr) -> String {
    if addr.ip().is_unspecified() {
        "localhost".to_string()
    } else {
        addr.ip().to_string()
    }
}

fn accept_loop(listener: TcpListener, s: Arc<Shared>) {
    for stream in listener.incoming() {
        if s.stop.load(Ordering::Acquire) {
            return;
        }
        let stream = match stream {
            Ok(st) => st,
            Err(e) => {
                tracing::warn!("rpc accept failed: {e}");
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let accepted = Instant::now();
        let Some(admitted) = s.conns.admit(&stream) else {
            // Every connection has a call in flight: none can make room.
            s.services.metrics.rejected_connection();
            let _ = stream.shutdown(Shutdown::Both);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let id = admitted.id;
        let s2 = s.clone();
        let spawned = std::thread::Builder::new()
            // No name: naming a thread makes it allocate as it starts, and its first
            // allocation costs the allocator's per-thread heap (~70 KB resident with
            // transparent huge pages) before the client has sent a byte. It shows under its
            // acceptor's name instead.
            .stack_size(connections::CONNECTION_STACK)
            .spawn(move || {
                serve_socket(&s2, stream, admitted, accepted);
                s2.conns.remove(id);
            });
        if spawned.is_err() {
            s.conns.remove(id);
        }
    }
}

/// One connection's thread: waits, allocating nothing, for the client's first byte, then
/// runs the opening and serves calls until the connection ends.
fn serve_socket(
    s: &Arc<Shared>,
    stream: TcpStream,
    admitted: connections::Admitted,
    accepted: Instant,
) {
    let deadline = accepted + s.config.header_timeout;
    // An address, not a string: nothing is allocated until the client has said something.
    let who = Peer(stream.peer_addr().ok());
    match connections::wait_for_bytes(&stream, Some(s.config.header_timeout)) {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => {
            if !s.stop.load(Ordering::Acquire) {
                tracing::debug!("rpc connection from {who} sent nothing: {e}");
            }
            return;
        }
    }
    let stream = match cairn_tls::acceptor::accept_by(s.config.tls.as_deref(), stream, deadline) {
        Ok(st) => st,
        Err(e) => {
            if !s.stop.load(Ordering::Acquire) {
                tracing::info!("refused rpc connection from {who}: {e}");
            }
            return;
        }
    };
    s.services.metrics.connection_opened();
    if let Err(reason) = connection::serve(s, stream, &admitted.activity, deadline) {
        if !s.stop.load(Ordering::Acquire) {
            tracing::info!("rpc connection from {who} closed: {reason}");
        }
    }
    s.services.metrics.connection_closed();
}

/// A client's address for log lines (empty when the socket no longer knows it).
#[derive(Clone, Copy)]
pub(crate) struct Peer(pub(crate) Option<SocketAddr>);

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(a) => write!(f, "{a}"),
            None => Ok(()),
        }
    }
}
