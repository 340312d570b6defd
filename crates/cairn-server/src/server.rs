//! The running server: the Thrift listener (a thread per connection, at most
//! `max_connections`, the quietest idle one making room for a new one; a connection whose
//! client sends nothing for `hbase.thrift.server.socket.read.timeout` is closed, as HBase's
//! Thrift server closes it), the HTTP endpoint (its pages in `server/http.rs`), the
//! scanner-lease reaper, the ZooKeeper
//! registration, TLS on each port when configured (the handshake runs on the connection's
//! own thread, so a slow or hostile client holds up no one else), and an orderly stop that first leaves ZooKeeper (so clients stop being sent
//! here), then closes connections and the region server, which flushes every memstore.

use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cairn_region::RegionServer;
use cairn_thrift::hbase::HbaseSyncProcessor;
use cairn_thrift::{serve_connection, BetweenRequests, Outcome};
use cairn_tls::{TlsAcceptor, TlsSettings};

use crate::config::tls::Port;
use crate::config::Config;
use crate::connections::{self, Activity, Registry, Tracked};
use crate::handler::Handler;
use crate::metrics::{self, ThriftMetrics};
use crate::rpc::{RpcMetrics, RpcServer};
use crate::security::Authorizer;
use crate::zookeeper::{Identity, Registration, ZkError};

pub(crate) mod conf_page;
pub(crate) mod http;
pub(crate) mod log_level;
pub(crate) mod stacks;
pub(crate) mod status;
pub mod status_page;

use http::{http_loop, https_accept_loop};
pub use log_level::{LogLevel, LogLevelError};
pub use status_page::{
    BlockCacheStatus, RegionStatus, ServerStatus, StoreStatus, TableStatus, WalFileStatus,
};

/// Between a connection's requests, reads ahead for the scanner it last read from, until the
/// client's next request arrives (or the connection closes).
struct ReadAhead<'a> {
    handler: &'a Handler,
    /// The connection's socket (under TLS, the encrypted bytes: a record arriving still
    /// means a request is on its way).
    fd: RawFd,
    /// The connection's activity: its answers are all out now, so it is idle (and past its
    /// first request).
    activity: &'a Activity,
}

impl BetweenRequests for ReadAhead<'_> {
    fn between_requests(&mut self, request_waiting: &mut dyn FnMut() -> bool) {
        self.activity.all_done();
        self.activity.set_established();
        let fd = self.fd;
        self.handler
            .read_ahead(&mut || request_waiting() || readable(fd));
    }
}

/// Whether `fd` has bytes to read, or has closed or failed, right now (no waiting).
pub(crate) fn readable(fd: std::os::fd::RawFd) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `p` is one valid pollfd on the stack for the length of the call, and `fd`
    // belongs to a TcpStream the caller holds open; a timeout of 0 never blocks.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    // An error of poll itself: say yes, so the caller stops and reads the socket.
    n != 0
}

/// Why `cairn serve` could not start or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The configuration was refused.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The region server did not open (for example its WAL did not replay).
    #[error("opening the region server at {dir}: {source}")]
    Open {
        /// The data directory (`hbase.rootdir`).
        dir: String,
        /// What the region server reported.
        source: cairn_region::RegionError,
    },
    /// A port could not be bound.
    #[error("listening on {addr} ({what}): {source}")]
    Listen {
        /// Which listener: `thrift` or `http`.
        what: &'static str,
        /// The address as configured.
        addr: String,
        /// The bind error.
        source: io::Error,
    },
    /// Closing the region server (flushing memstores) failed at shutdown.
    #[error("closing the region server: {0}")]
    Close(cairn_region::RegionError),
    /// Registering in ZooKeeper failed at start, or unregistering at shutdown.
    #[error(transparent)]
    ZooKeeper(#[from] ZkError),
    /// A port's TLS files could not be loaded.
    #[error("TLS for the {port} port: {source}")]
    Tls {
        /// Which port.
        port: &'static str,
        /// What was wrong, naming the file.
        source: cairn_tls::TlsError,
    },
    /// A ZooKeeper quorum was given but the native RPC is off: there would be nothing for
    /// the znodes to point at.
    #[error("zookeeper registration needs the hbase rpc listener (--hbase / hbase.regionserver.port), which is off")]
    ZooKeeperWithoutRpc,
    /// A region server of a cluster could not start or join (`cairn regionserver`).
    #[error("{0}")]
    Cluster(String),
}

struct Shared {
    /// The handler every connection gets a handle of ([`Handler::connection`]); the lease
    /// reaper uses it directly.
    handler: Handler,
    metrics: Arc<ThriftMetrics>,
    /// Every source `/metrics` and `/jmx` show.
    registry: metrics::Registry,
    /// The process and build families of `/metrics`.
    exposition: metrics::Exposition,
    /// When the server started (the status page's uptime).
    started: std::time::SystemTime,
    /// The bound Thrift, native RPC and info addresses, for the status page.
    addrs: std::sync::OnceLock<Addresses>,
    rs: Arc<RegionServer>,
    config: Config,
    stop: AtomicBool,
    conns: Registry,
    rpc_metrics: Arc<RpcMetrics>,
    thrift_tls: Option<Arc<TlsAcceptor>>,
    /// HTTPS connections being answered (each on a thread of its own, so bounded).
    https_open: std::sync::atomic::AtomicUsize,
}

/// The addresses the server listens on, as bound.
#[derive(Clone, Debug, Default)]
struct Addresses {
    thrift: Option<SocketAddr>,
    rpc: Option<SocketAddr>,
    server_name: Option<String>,
    info: Option<SocketAddr>,
    http: Option<SocketAddr>,
}

/// Binds an HTTP listener (the info port or the old HTTP port; both serve the same pages).
fn bind_http(
    what: &'static str,
    addr: &str,
    tls: &Option<Arc<TlsAcceptor>>,
) -> Result<HttpListener, ServeError> {
    Ok(match tls {
        None => HttpListener::Plain(Arc::new(tiny_http::Server::http(addr).map_err(|e| {
            ServeError::Listen {
                what,
                addr: addr.to_string(),
                source: io::Error::other(e.to_string()),
            }
        })?)),
        Some(tls) => HttpListener::Tls(
            TcpListener::bind(addr).map_err(|source| ServeError::Listen {
                what,
                addr: addr.to_string(),
                source,
            })?,
            tls.clone(),
        ),
    })
}

impl HttpListener {
    fn local_addr(&self) -> Option<SocketAddr> {
        match self {
            HttpListener::Plain(s) => s.server_addr().to_ip(),
            HttpListener::Tls(l, _) => l.local_addr().ok(),
        }
    }

    /// Starts the listener's thread.
    fn spawn(self, s: Arc<Shared>, name: &str) -> Http {
        let spawn = std::thread::Builder::new().name(name.into());
        match self {
            HttpListener::Tls(listener, tls) => {
                let addr = listener.local_addr().expect("bound above");
                let h = spawn
                    .spawn(move || https_accept_loop(listener, &tls, &s))
                    .expect("spawn http");
                Http::Tls(addr, h)
            }
            HttpListener::Plain(srv) => {
                let srv2 = srv.clone();
                let h = spawn
                    .spawn(move || http_loop(&srv2, &s))
                    .expect("spawn http");
                Http::Plain(srv, h)
            }
        }
    }
}

impl Http {
    fn stop(self) {
        match self {
            Http::Plain(srv, h) => {
                srv.unblock();
                let _ = h.join();
            }
            Http::Tls(addr, h) => connections::stop_acceptor(addr, Some(h)),
        }
    }
}

/// The HTTP endpoint: tiny_http for plaintext; over TLS, a listener of ours with a small
/// GET responder (tiny_http's TLS cannot ask for client certificates).
enum Http {
    Plain(Arc<tiny_http::Server>, JoinHandle<()>),
    Tls(SocketAddr, JoinHandle<()>),
}

/// The bound HTTP listener, before its thread starts.
enum HttpListener {
    Plain(Arc<tiny_http::Server>),
    Tls(TcpListener, Arc<TlsAcceptor>),
}

/// How long writing an answer to a Thrift client may block before the connection is given up.
const THRIFT_WRITE_TIMEOUT: Duration = Duration::from_secs(60);

/// The TLS acceptor of `port`, if TLS is on there.
fn tls_acceptor(config: &Config, port: Port) -> Result<Option<Arc<TlsAcceptor>>, ServeError> {
    match config.tls.settings(port)? {
        Some(s) => Ok(Some(Arc::new(TlsAcceptor::new(s).map_err(|source| {
            ServeError::Tls {
                port: port.name(),
                source,
            }
        })?))),
        None => Ok(None),
    }
}

/// Warns, once per port, when a port reachable from other machines takes plaintext.
fn warn_if_exposed(port: Port, addr: SocketAddr, tls: Option<&TlsAcceptor>) {
    if addr.ip().is_loopback() {
        return;
    }
    match tls {
        None => tracing::warn!(
            "the {} port listens on {addr} without TLS: anyone who can reach it can read and change data; give --tls-cert (and --tls-client-ca) to encrypt it",
            port.name()
        ),
        Some(t) if t.settings().plaintext => tracing::warn!(
            "the {} port on {addr} also accepts plaintext (hbase.server.netty.tls.supportplaintext=true)",
            port.name()
        ),
        Some(_) => {}
    }
}

/// A started `cairn serve`.
pub struct Server {
    shared: Arc<Shared>,
    thrift_addr: SocketAddr,
    http_addr: Option<SocketAddr>,
    info_addr: Option<SocketAddr>,
    acceptor: Option<JoinHandle<()>>,
    reaper: Option<JoinHandle<()>>,
    http: Option<Http>,
    info: Option<Http>,
    rpc: Option<RpcServer>,
    zookeeper: Option<Registration>,
}

impl Server {
    /// Opens the region server (replaying its WAL), binds the Thrift and HTTP ports and starts
    /// serving.
    pub fn start(config: Config) -> Result<Server, ServeError> {
        let sc = config.server_config()?;
        let rs = RegionServer::open(sc).map_err(|source| ServeError::Open {
            dir: config.data_dir.display().to_string(),
            source,
        })?;
        Server::start_with(rs, config)
    }

    /// Serves an already open region server.
    pub fn start_with(rs: Arc<RegionServer>, config: Config) -> Result<Server, ServeError> {
        if config.zookeeper.enabled() && config.rpc.is_none() {
            return Err(ServeError::ZooKeeperWithoutRpc);
        }
        let listener =
            connections::bind(&config.thrift_addr).map_err(|source| ServeError::Listen {
                what: "thrift",
                addr: config.thrift_addr.clone(),
                source,
            })?;
        let thrift_addr = listener.local_addr().map_err(|source| ServeError::Listen {
            what: "thrift",
            addr: config.thrift_addr.clone(),
            source,
        })?;
        let thrift_tls = tls_acceptor(&config, Port::Thrift)?;
        let http_tls = tls_acceptor(&config, Port::Http)?;
        let rpc_tls = tls_acceptor(&config, Port::Rpc)?;
        let http_listener = match &config.http_addr {
            None => None,
            Some(a) => Some(bind_http("http", a, &http_tls)?),
        };
        let http_addr = http_listener.as_ref().and_then(HttpListener::local_addr);
        // The info port takes the HTTP port's TLS settings: they are one server in HBase.
        let info_listener = match &config.info_addr {
            None => None,
            Some(a) => Some(bind_http("info", a, &http_tls)?),
        };
        let info_addr = info_listener.as_ref().and_then(HttpListener::local_addr);
        warn_if_exposed(Port::Thrift, thrift_addr, thrift_tls.as_deref());
        for a in [http_addr, info_addr].into_iter().flatten() {
            warn_if_exposed(Port::Http, a, http_tls.as_deref());
        }

        if config
            .properties
            .iter()
            .any(|(k, v)| k == "cairn.checksum.accounting" && v == "true")
        {
            cairn_checksum::accounting::enable(true);
        }
        let authorizer = Arc::new(Authorizer::new(&config.security));
        let thrift_certificates = thrift_tls
            .as_ref()
            .is_some_and(|t| t.settings().client_auth != cairn_tls::ClientAuth::None);
        if authorizer.enabled() && !thrift_certificates {
            tracing::warn!(
                "hbase.security.authorization is on and the thrift port takes no client certificates: thrift callers have no identity, so none may run admin operations there"
            );
        }
        // One slow-call log for both front ends.
        let slow_log = Arc::new(crate::slow_log::SlowLog::new(config.slow_log.clone()));
        let metrics = Arc::new(ThriftMetrics::new(slow_log.clone()));
        let mut hc = config.handler.clone();
        hc.server_name = thrift_addr.ip().to_string();
        hc.port = i32::from(thrift_addr.port());
        hc.authorizer = authorizer.clone();
        let handler = Handler::new(rs.clone(), metrics.clone(), hc);
        let max_connections = config.max_connections;
        let rpc_metrics = Arc::new(RpcMetrics::new(slow_log));
        let registry = metrics::Registry::new();
        registry.register(handler.core());
        registry.register(Arc::new(metrics::RegionServerSource(rs.clone())));
        if config.rpc.is_some() {
            registry.register(rpc_metrics.clone());
        }
        let exposition = metrics::Exposition::new(config.build.clone());
        let shared = Arc::new(Shared {
            handler,
            metrics,
            registry,
            exposition,
            started: std::time::SystemTime::now(),
            addrs: std::sync::OnceLock::new(),
            rs,
            config,
            stop: AtomicBool::new(false),
            conns: Registry::new(max_connections),
            rpc_metrics,
            thrift_tls,
            https_open: std::sync::atomic::AtomicUsize::new(0),
        });
        let rpc = match &shared.config.rpc {
            Some(rc) => Some(
                RpcServer::start(
                    shared.rs.clone(),
                    crate::rpc::RpcConfig {
                        tls: rpc_tls.clone(),
                        authorizer: authorizer.clone(),
                        ..rc.clone()
                    },
                    // Clients are told the info port (HBase's), else the old HTTP port.
                    info_addr.or(http_addr).map(|a| a.port()),
                    shared.rpc_metrics.clone(),
                )
                .map_err(|source| ServeError::Listen {
                    what: "hbase rpc",
                    addr: rc.addr.clone(),
                    source,
                })?,
            ),
            None => None,
        };
        if let Some(r) = &rpc {
            warn_if_exposed(Port::Rpc, r.addr(), rpc_tls.as_deref());
        }

        let s = shared.clone();
        let acceptor = std::thread::Builder::new()
            .name("cairn-thrift-accept".into())
            .spawn(move || accept_loop(listener, s))
            .expect("spawn acceptor");
        let s = shared.clone();
        let reaper = std::thread::Builder::new()
            .name("cairn-scanner-lease".into())
            .spawn(move || {
                let tick = (s.config.handler.scanner_lease / 4)
                    .clamp(Duration::from_millis(50), Duration::from_secs(1));
                while !s.stop.load(Ordering::Acquire) {
                    std::thread::park_timeout(tick);
                    s.handler.scanners().expire();
                }
            })
            .expect("spawn reaper");
        let _ = shared.addrs.set(Addresses {
            thrift: Some(thrift_addr),
            rpc: rpc.as_ref().map(|r| r.addr()),
            server_name: rpc.as_ref().map(|r| r.server_name().to_string()),
            info: info_addr,
            http: http_addr,
        });
        let http = http_listener.map(|l| l.spawn(shared.clone(), "cairn-http"));
        let info = info_listener.map(|l| l.spawn(shared.clone(), "cairn-info"));
        let mut server = Server {
            shared,
            thrift_addr,
            http_addr,
            info_addr,
            acceptor: Some(acceptor),
            reaper: Some(reaper),
            http,
            info,
            rpc,
            zookeeper: None,
        };
        // Last: clients are sent here once everything serves. On failure `server` is
        // dropped, which stops what was started.
        if let (true, Some(rpc)) = (server.shared.config.zookeeper.enabled(), &server.rpc) {
            let identity = Identity {
                location: rpc.location().clone(),
                cluster_id: rpc.cluster_id().to_string(),
                info_port: server.info_addr.or(server.http_addr).map(|a| a.port()),
            };
            server.zookeeper = Some(Registration::start(
                server.shared.config.zookeeper.clone(),
                identity,
            )?);
        }
        Ok(server)
    }

    /// The ZooKeeper registration, if a quorum was configured.
    pub fn zookeeper(&self) -> Option<&Registration> {
        self.zookeeper.as_ref()
    }

    /// The bound Thrift1 address (the real port when port 0 was asked for).
    pub fn thrift_addr(&self) -> SocketAddr {
        self.thrift_addr
    }

    /// The TLS settings of `port`, if it speaks TLS.
    pub fn tls(&self, port: Port) -> Option<TlsSettings> {
        self.shared.config.tls.settings(port).ok().flatten()
    }

    /// The bound address of the old HTTP port (`/metrics`, `/jmx`, `/health` and every page
    /// of the info port, for a release), if one was started.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http_addr
    }

    /// The bound info-server address (`hbase.regionserver.info.port`: the status page,
    /// `/conf`, `/stacks`, `/logLevel`, `/metrics`, `/prometheus`, `/jmx`, `/health`), if one
    /// was started.
    pub fn info_addr(&self) -> Option<SocketAddr> {
        self.info_addr
    }

    /// What the status page shows now.
    pub fn status(&self) -> ServerStatus {
        status::snapshot(&self.shared)
    }

    /// The native RPC server, if one was started.
    pub fn rpc(&self) -> Option<&RpcServer> {
        self.rpc.as_ref()
    }

    /// The bound native RPC address, if one was started.
    pub fn rpc_addr(&self) -> Option<SocketAddr> {
        self.rpc.as_ref().map(|r| r.addr())
    }

    /// The native RPC server's counters.
    pub fn rpc_metrics(&self) -> &Arc<RpcMetrics> {
        &self.shared.rpc_metrics
    }

    /// The Thrift1 handler every connection calls into.
    pub fn handler(&self) -> &Handler {
        &self.shared.handler
    }

    /// The Thrift server's counters (`MetricsThriftServerSource`).
    pub fn metrics(&self) -> &Arc<ThriftMetrics> {
        &self.shared.metrics
    }

    /// The region server being served.
    pub fn region_server(&self) -> &Arc<RegionServer> {
        &self.shared.rs
    }

    /// Leaves ZooKeeper (removing the master, meta location, running and region server
    /// znodes, so clients stop being sent here), stops accepting, closes every connection (a
    /// request being answered finishes first, as far as the socket allows), stops the HTTP
    /// server and closes the region server, which flushes every memstore to store files.
    /// A ZooKeeper failure does not stop the flush; it is reported after it.
    pub fn shutdown(mut self) -> Result<(), ServeError> {
        let left = self.zookeeper.take().map_or(Ok(()), Registration::stop);
        self.stop_threads();
        self.shared.rs.close().map_err(ServeError::Close)?;
        left.map_err(ServeError::from)
    }

    fn stop_threads(&mut self) {
        if let Some(rpc) = self.rpc.as_mut() {
            rpc.stop();
        }
        let s = &self.shared;
        if s.stop.swap(true, Ordering::AcqRel) {
            return;
        }
        connections::stop_acceptor(self.thrift_addr, self.acceptor.take());
        s.conns.shutdown_all(Shutdown::Read);
        connections::wait_drained(|| s.metrics.open_connections.load(Ordering::Acquire) <= 0);
        s.conns.shutdown_all(Shutdown::Both);
        if let Some(r) = self.reaper.take() {
            r.thread().unpark();
            let _ = r.join();
        }
        for h in [self.http.take(), self.info.take()].into_iter().flatten() {
            h.stop();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Dropping the registration leaves ZooKeeper first, as `shutdown` does.
        drop(self.zookeeper.take());
        self.stop_threads();
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
                tracing::warn!("accept failed: {e}");
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let Some(admitted) = s.conns.admit(&stream) else {
            // Every connection is in a call: none can make room.
            s.metrics
                .rejected_connections
                .fetch_add(1, Ordering::Relaxed);
            let _ = stream.shutdown(Shutdown::Both);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let id = admitted.id;
        s.metrics.open_connections.fetch_add(1, Ordering::AcqRel);
        let s2 = s.clone();
        let spawned = std::thread::Builder::new()
            // No name: naming a thread makes it allocate as it starts, and its first
            // allocation costs the allocator's per-thread heap (~70 KB resident with
            // transparent huge pages) before the client has sent a byte. It shows under its
            // acceptor's name instead.
            .stack_size(connections::CONNECTION_STACK)
            .spawn(move || {
                serve_thrift(&s2, stream, admitted.activity);
                s2.conns.remove(id);
                s2.metrics.open_connections.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            s.conns.remove(id);
            s.metrics.open_connections.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// One Thrift connection's thread: waits, allocating nothing, for the client's first byte,
/// then serves requests until the connection ends.
fn serve_thrift(s: &Arc<Shared>, stream: TcpStream, activity: Arc<Activity>) {
    let read_timeout = s.config.thrift_read_timeout;
    let peer = crate::rpc::Peer(stream.peer_addr().ok());
    match connections::wait_for_bytes(&stream, read_timeout) {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => {
            if !s.stop.load(Ordering::Acquire) {
                tracing::debug!("thrift connection from {peer} sent nothing: {e}");
            }
            return;
        }
    }
    let deadline = Instant::now() + cairn_tls::acceptor::HANDSHAKE_TIMEOUT;
    let mut stream = match cairn_tls::acceptor::accept_by(s.thrift_tls.as_deref(), stream, deadline)
    {
        Ok(st) => st,
        Err(e) => {
            if !s.stop.load(Ordering::Acquire) {
                tracing::info!("refused thrift connection from {peer}: {e}");
            }
            return;
        }
    };
    // HBase's TServerSocket client timeout: a read that waits this long ends the connection.
    // And a client that stops reading its answers must not hold the thread (and its slot,
    // busy with the call) forever: a write that waits this long ends it too.
    let _ = stream.socket().set_read_timeout(read_timeout);
    let _ = stream
        .socket()
        .set_write_timeout(Some(THRIFT_WRITE_TIMEOUT));
    let Ok(reader) = stream.try_clone() else {
        return;
    };
    let caller = s
        .handler
        .authorizer()
        .caller(stream.peer_certificates().as_deref(), None);
    // The connection's own handle: what its scanner calls leave to read ahead stays with it.
    let handler = s.handler.connection_of(caller, activity.clone());
    let processor = HbaseSyncProcessor::new(handler.clone());
    let mut read_ahead = ReadAhead {
        handler: &handler,
        fd: stream.socket().as_raw_fd(),
        activity: &activity,
    };
    let (_, outcome) = serve_connection(
        Tracked::new(reader, activity.clone()),
        &mut stream,
        &processor,
        &s.config.limits,
        &s.metrics.wire,
        &mut read_ahead,
    );
    if let Outcome::Dropped(reason) = outcome {
        if !s.stop.load(Ordering::Acquire) {
            tracing::info!("closed connection from {peer}: {reason}");
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
}
