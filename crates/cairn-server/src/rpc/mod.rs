//! HBase's native RPC: the port HBase 2.x's Java client (and everything built on it) speaks
//! to, serving what a standalone HBase serves on one port — `ClientMetaService` (connection
//! registry), `MasterService` (what `Admin` uses), `ClientService` (reads and writes),
//! `AdminService` (region information, flushes, compactions) — over the embedded region
//! server, with `hbase:meta` as a virtual region ([`meta`]).
//!
//! Threads: one acceptor; one reader per connection (which first runs the TLS handshake
//! when the port has TLS: HBase's optional SSL handler, plaintext told apart by its first
//! byte when `hbase.server.netty.tls.supportplaintext` allows it), which decodes calls and queues them;
//! `hbase.regionserver.handler.count` handlers, which run calls and write each response as it
//! is ready, so pipelined calls on one connection are answered out of order. A full call queue
//! answers `CallQueueTooBigException` at once, as HBase does.

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
mod queue;
mod registry;
pub mod scanners;
mod split;

use std::collections::HashMap;
use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cairn_region::RegionServer;
use parking_lot::Mutex;

pub use errors::RpcError;
pub use metrics::RpcMetrics;

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
    /// Largest request frame (`hbase.ipc.max.request.size`, 256 MiB); a larger one gets
    /// `RequestTooBigException` and the connection is closed.
    pub max_request_size: usize,
    /// Connections served at once; more are refused.
    pub max_connections: usize,
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
}

impl Default for RpcConfig {
    fn default() -> Self {
        RpcConfig {
            addr: "127.0.0.1:16020".into(),
            hostname: None,
            handlers: 30,
            max_queue_length: 300,
            max_request_size: 256 << 20,
            max_connections: 1000,
            scanner_lease: Duration::from_secs(60),
            max_result_size: 100 << 20,
            min_scan_time_limit: Duration::from_millis(10),
            tls: None,
        }
    }
}

/// What every call needs: the region server, who this server is, its open scanners.
pub struct Services {
    rs: Arc<RegionServer>,
    location: Location,
    cluster_id: String,
    scanners: Scanners,
    procedures: master::Procedures,
    metrics: Arc<RpcMetrics>,
    max_result_size: usize,
    min_scan_time_limit: Duration,
    info_port: Option<u16>,
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
    conns: Mutex<HashMap<u64, TcpStream>>,
    next_conn: AtomicU64,
    queue: queue::CallQueue<Job>,
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
        let listener = TcpListener::bind(&config.addr)?;
        let addr = listener.local_addr()?;
        let start_code = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_millis() as u64);
        let host = config
            .hostname
            .clone()
            .unwrap_or_else(|| advertised_host(&addr));
        let cluster_id = rs
            .cluster_id()
            .map_err(|e| io::Error::other(format!("reading the cluster id: {e}")))?;
        let services = Services {
            location: Location {
                host,
                port: addr.port(),
                start_code,
            },
            cluster_id,
            scanners: Scanners::new(config.scanner_lease, start_code),
            procedures: master::Procedures::default(),
            metrics,
            max_result_size: config.max_result_size,
            min_scan_time_limit: config.min_scan_time_limit,
            info_port,
            rs,
        };
        let queue_length = config.max_queue_length;
        let shared = Arc::new(Shared {
            services,
            config,
            stop: AtomicBool::new(false),
            conns: Mutex::new(HashMap::new()),
            next_conn: AtomicU64::new(0),
            queue: queue::CallQueue::new(queue_length),
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
        self.shared.services.location.name()
    }

    /// Where clients reach this server, as `hbase:meta` advertises it.
    pub fn location(&self) -> &Location {
        &self.shared.services.location
    }

    /// The cluster id clients see.
    pub fn cluster_id(&self) -> &str {
        &self.shared.services.cluster_id
    }

    /// Open scanners.
    pub fn open_scanners(&self) -> usize {
        self.shared.services.scanners.len()
    }

    /// Stops accepting, closes every connection and waits for the handlers.
    pub fn stop(&mut self) {
        let s = &self.shared;
        if s.stop.swap(true, Ordering::AcqRel) {
            return;
        }
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        for c in s.conns.lock().values() {
            let _ = c.shutdown(Shutdown::Both);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while !s.conns.lock().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
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
        if s.conns.lock().len() >= s.config.max_connections {
            s.services.metrics.rejected_connection();
            let _ = stream.shutdown(Shutdown::Both);
            continue;
        }
        let _ = stream.set_nodelay(true);
        let id = s.next_conn.fetch_add(1, Ordering::Relaxed);
        let Ok(registered) = stream.try_clone() else {
            continue;
        };
        s.conns.lock().insert(id, registered);
        let s2 = s.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("cairn-rpc-conn-{id}"))
            .spawn(move || {
                let peer = stream
                    .peer_addr()
                    .map(|a| a.to_string())
                    .unwrap_or_default();
                let stream = match cairn_tls::acceptor::accept(s2.config.tls.as_deref(), stream) {
                    Ok(st) => st,
                    Err(e) => {
                        if !s2.stop.load(Ordering::Acquire) {
                            tracing::info!("refused rpc connection from {peer}: {e}");
                        }
                        s2.conns.lock().remove(&id);
                        return;
                    }
                };
                s2.services.metrics.connection_opened();
                if let Err(reason) = connection::serve(&s2, stream) {
                    if !s2.stop.load(Ordering::Acquire) {
                        tracing::info!("rpc connection from {peer} closed: {reason}");
                    }
                }
                s2.conns.lock().remove(&id);
                s2.services.metrics.connection_closed();
            });
        if spawned.is_err() {
            s.conns.lock().remove(&id);
        }
    }
}
