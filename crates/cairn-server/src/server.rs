//! The running server: the Thrift listener (a thread per connection, at most
//! `max_connections`), the HTTP endpoint, the scanner-lease reaper, the ZooKeeper
//! registration, and an orderly stop that first leaves ZooKeeper (so clients stop being sent
//! here), then closes connections and the region server, which flushes every memstore.

use std::collections::HashMap;
use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cairn_region::RegionServer;
use cairn_thrift::hbase::HbaseSyncProcessor;
use cairn_thrift::{serve_connection, BetweenRequests, Outcome};
use parking_lot::Mutex;

use crate::config::Config;
use crate::handler::Handler;
use crate::metrics::{self, ThriftMetrics};
use crate::rpc::{RpcMetrics, RpcServer};
use crate::zookeeper::{Identity, Registration, ZkError};

/// Between a connection's requests, reads ahead for the scanner it last read from, until the
/// client's next request arrives (or the connection closes).
struct ReadAhead<'a> {
    handler: &'a Handler,
    stream: &'a TcpStream,
}

impl BetweenRequests for ReadAhead<'_> {
    fn between_requests(&mut self, request_waiting: &mut dyn FnMut() -> bool) {
        let fd = self.stream.as_raw_fd();
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
    /// A ZooKeeper quorum was given but the native RPC is off: there would be nothing for
    /// the znodes to point at.
    #[error("zookeeper registration needs the hbase rpc listener (--hbase / hbase.regionserver.port), which is off")]
    ZooKeeperWithoutRpc,
}

struct Shared {
    /// The handler every connection gets a handle of ([`Handler::connection`]); the lease
    /// reaper uses it directly.
    handler: Handler,
    metrics: Arc<ThriftMetrics>,
    rs: Arc<RegionServer>,
    config: Config,
    stop: AtomicBool,
    conns: Mutex<HashMap<u64, TcpStream>>,
    next_conn: AtomicU64,
    rpc_metrics: Arc<RpcMetrics>,
}

/// A started `cairn serve`.
pub struct Server {
    shared: Arc<Shared>,
    thrift_addr: SocketAddr,
    http_addr: Option<SocketAddr>,
    acceptor: Option<JoinHandle<()>>,
    reaper: Option<JoinHandle<()>>,
    http: Option<(Arc<tiny_http::Server>, JoinHandle<()>)>,
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
            TcpListener::bind(&config.thrift_addr).map_err(|source| ServeError::Listen {
                what: "thrift",
                addr: config.thrift_addr.clone(),
                source,
            })?;
        let thrift_addr = listener.local_addr().map_err(|source| ServeError::Listen {
            what: "thrift",
            addr: config.thrift_addr.clone(),
            source,
        })?;
        let http_server = match &config.http_addr {
            Some(a) => Some(Arc::new(tiny_http::Server::http(a).map_err(|e| {
                ServeError::Listen {
                    what: "http",
                    addr: a.clone(),
                    source: io::Error::other(e.to_string()),
                }
            })?)),
            None => None,
        };
        let http_addr = http_server.as_ref().and_then(|s| s.server_addr().to_ip());

        if config
            .properties
            .iter()
            .any(|(k, v)| k == "cairn.checksum.accounting" && v == "true")
        {
            cairn_checksum::accounting::enable(true);
        }
        let metrics = Arc::new(ThriftMetrics::default());
        let mut hc = config.handler.clone();
        hc.server_name = thrift_addr.ip().to_string();
        hc.port = i32::from(thrift_addr.port());
        let handler = Handler::new(rs.clone(), metrics.clone(), hc);
        let shared = Arc::new(Shared {
            handler,
            metrics,
            rs,
            config,
            stop: AtomicBool::new(false),
            conns: Mutex::new(HashMap::new()),
            next_conn: AtomicU64::new(0),
            rpc_metrics: Arc::new(RpcMetrics::default()),
        });
        let rpc = match &shared.config.rpc {
            Some(rc) => Some(
                RpcServer::start(
                    shared.rs.clone(),
                    rc.clone(),
                    http_addr.map(|a| a.port()),
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
                    s.handler.expire_scanners();
                }
            })
            .expect("spawn reaper");
        let http = http_server.map(|srv| {
            let s = shared.clone();
            let srv2 = srv.clone();
            let h = std::thread::Builder::new()
                .name("cairn-http".into())
                .spawn(move || http_loop(&srv2, &s))
                .expect("spawn http");
            (srv, h)
        });
        let mut server = Server {
            shared,
            thrift_addr,
            http_addr,
            acceptor: Some(acceptor),
            reaper: Some(reaper),
            http,
            rpc,
            zookeeper: None,
        };
        // Last: clients are sent here once everything serves. On failure `server` is
        // dropped, which stops what was started.
        if let (true, Some(rpc)) = (server.shared.config.zookeeper.enabled(), &server.rpc) {
            let identity = Identity {
                location: rpc.location().clone(),
                cluster_id: rpc.cluster_id().to_string(),
                info_port: server.http_addr.map(|a| a.port()),
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

    /// The bound info-server address (`/metrics`, `/jmx`, `/health`), if one was started.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http_addr
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
        // Wake the acceptor.
        let _ = TcpStream::connect_timeout(&self.thrift_addr, Duration::from_secs(1));
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        for c in s.conns.lock().values() {
            let _ = c.shutdown(Shutdown::Read);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while s.metrics.open_connections.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        for c in s.conns.lock().values() {
            let _ = c.shutdown(Shutdown::Both);
        }
        if let Some(r) = self.reaper.take() {
            r.thread().unpark();
            let _ = r.join();
        }
        if let Some((srv, h)) = self.http.take() {
            srv.unblock();
            let _ = h.join();
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
        if s.metrics.open_connections.load(Ordering::Acquire) as usize >= s.config.max_connections {
            s.metrics
                .rejected_connections
                .fetch_add(1, Ordering::Relaxed);
            let _ = stream.shutdown(Shutdown::Both);
            continue;
        }
        let _ = stream.set_nodelay(true);
        let id = s.next_conn.fetch_add(1, Ordering::Relaxed);
        let (Ok(reader), Ok(registered)) = (stream.try_clone(), stream.try_clone()) else {
            continue;
        };
        s.conns.lock().insert(id, registered);
        s.metrics.open_connections.fetch_add(1, Ordering::AcqRel);
        let s2 = s.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("cairn-thrift-{id}"))
            .spawn(move || {
                // The connection's own handle: what its scanner calls leave to read ahead
                // stays with it.
                let handler = s2.handler.connection();
                let processor = HbaseSyncProcessor::new(handler.clone());
                let mut read_ahead = ReadAhead {
                    handler: &handler,
                    stream: &stream,
                };
                let (_, outcome) = serve_connection(
                    reader,
                    &stream,
                    &processor,
                    &s2.config.limits,
                    &s2.metrics.wire,
                    &mut read_ahead,
                );
                if let Outcome::Dropped(reason) = outcome {
                    if !s2.stop.load(Ordering::Acquire) {
                        let peer = stream
                            .peer_addr()
                            .map(|a| a.to_string())
                            .unwrap_or_default();
                        tracing::info!("closed connection from {peer}: {reason}");
                    }
                }
                let _ = stream.shutdown(Shutdown::Both);
                s2.conns.lock().remove(&id);
                s2.metrics.open_connections.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            s.conns.lock().remove(&id);
            s.metrics.open_connections.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

fn http_loop(srv: &tiny_http::Server, s: &Shared) {
    for req in srv.incoming_requests() {
        let url = req.url().to_string();
        let (path, query) = url.split_once('?').unwrap_or((url.as_str(), ""));
        let header = |v: &str| {
            tiny_http::Header::from_bytes(&b"Content-Type"[..], v.as_bytes()).expect("header")
        };
        let resp = match path {
            "/metrics" => {
                let text = metrics::prometheus(&gather(s));
                tiny_http::Response::from_string(text)
                    .with_header(header("text/plain; version=0.0.4; charset=utf-8"))
            }
            "/jmx" => {
                let mut json = metrics::jmx(&gather(s));
                if let Some(q) = jmx_query(query) {
                    if let Some(beans) = json["beans"].as_array_mut() {
                        beans.retain(|b| b["name"].as_str() == Some(q.as_str()));
                    }
                }
                tiny_http::Response::from_string(
                    serde_json::to_string_pretty(&json).unwrap_or_default(),
                )
                .with_header(header("application/json; charset=utf-8"))
            }
            "/health" => {
                let stopping = s.stop.load(Ordering::Acquire);
                let body = serde_json::json!({
                    "status": if stopping { "stopping" } else { "ok" },
                    "tables": s.rs.table_names().len(),
                    "openConnections": s.metrics.open_connections.load(Ordering::Relaxed),
                });
                tiny_http::Response::from_string(body.to_string())
                    .with_status_code(if stopping { 503 } else { 200 })
                    .with_header(header("application/json; charset=utf-8"))
            }
            _ => tiny_http::Response::from_string(
                "not found: try /metrics, /jmx or /health\n".to_string(),
            )
            .with_status_code(404)
            .with_header(header("text/plain; charset=utf-8")),
        };
        let _ = req.respond(resp);
    }
}

/// Every metrics source, the native RPC server's included.
fn gather(s: &Shared) -> Vec<metrics::Source> {
    let mut v = metrics::gather(&s.metrics, &s.rs);
    if s.config.rpc.is_some() {
        v.push(s.rpc_metrics.source());
    }
    v
}

/// The bean `/jmx?qry=NAME` asks for (Hadoop's `JMXJsonServlet` parameter), percent-decoded.
fn jmx_query(query: &str) -> Option<String> {
    let q = query.split('&').find_map(|kv| kv.strip_prefix("qry="))?;
    Some(
        percent_encoding::percent_decode_str(q)
            .decode_utf8_lossy()
            .into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jmx_query_is_percent_decoded() {
        assert_eq!(
            jmx_query("a=1&qry=Hadoop%3Aservice%3DHBase%2Cname%3DThrift%2csub%3DThriftOne")
                .as_deref(),
            Some("Hadoop:service=HBase,name=Thrift,sub=ThriftOne")
        );
        assert_eq!(
            jmx_query("qry=Hadoop:service=HBase,name=RegionServer%2Csub=WAL").as_deref(),
            Some("Hadoop:service=HBase,name=RegionServer,sub=WAL")
        );
        assert_eq!(jmx_query("qry=a%20b%25").as_deref(), Some("a b%"));
        assert_eq!(jmx_query("other=1"), None);
    }
}
