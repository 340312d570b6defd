//! The info port of a cluster's region server (`hbase.regionserver.info.port`, 16030), which
//! the master's UI links to: the status page (`/`, `/rs-status`, the same page as `cairn
//! serve`'s, rendered from a snapshot of values), `/metrics` and `/prometheus`, `/jmx`,
//! `/health`, `/conf`, `/stacks` and `/logLevel`.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::SystemTime;

use cairn_region::RegionServer;

use crate::config::Config;
use crate::metrics::{Exposition, Registry};
use crate::server::http::{self, Page};
use crate::server::{status, status_page};
use crate::slow_log::SlowLog;

/// A running info server; stops when dropped.
pub struct InfoServer {
    server: Arc<tiny_http::Server>,
    addr: SocketAddr,
    thread: Option<JoinHandle<()>>,
}

/// What the pages show.
struct Pages {
    rs: Arc<RegionServer>,
    registry: Registry,
    slow_log: Arc<SlowLog>,
    exposition: Exposition,
    server_name: String,
    rpc_addr: SocketAddr,
    started: SystemTime,
    config: Config,
}

impl InfoServer {
    /// Binds `addr` and serves the pages of `rs`, whose RPC server listens on `rpc_addr` as
    /// `server_name`; `registry` holds its metrics sources, `slow_log` its slow calls,
    /// `config` is what `/conf` shows (and its log filter what `/logLevel` changes).
    pub fn start(
        addr: &str,
        rs: Arc<RegionServer>,
        registry: Registry,
        slow_log: Arc<SlowLog>,
        config: &Config,
        server_name: String,
        rpc_addr: SocketAddr,
    ) -> io::Result<InfoServer> {
        let server = Arc::new(tiny_http::Server::http(addr).map_err(io::Error::other)?);
        let bound = server
            .server_addr()
            .to_ip()
            .ok_or_else(|| io::Error::other("the info server has no IP address"))?;
        let pages = Pages {
            rs,
            registry,
            slow_log,
            exposition: Exposition::new(config.build.clone()),
            server_name,
            rpc_addr,
            started: SystemTime::now(),
            config: config.clone(),
        };
        let srv = server.clone();
        let thread = std::thread::Builder::new()
            .name("cairn-info".into())
            .spawn(move || {
                for req in srv.incoming_requests() {
                    let p = pages.page(req.url(), bound);
                    let header = tiny_http::Header::from_bytes("Content-Type", p.content_type)
                        .expect("a valid header");
                    let _ = req.respond(
                        tiny_http::Response::from_string(p.body)
                            .with_status_code(p.status)
                            .with_header(header),
                    );
                }
            })?;
        Ok(InfoServer {
            server,
            addr: bound,
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for InfoServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Pages {
    /// The answer to a GET of `url`.
    fn page(&self, url: &str, info: SocketAddr) -> Page {
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        let gather = || self.registry.gather();
        if let Some(p) = http::common_page(path, query, &self.exposition, &gather, &self.config) {
            return p;
        }
        let (status, content_type, body) = match path {
            "/" | "/rs-status" => {
                let listeners = vec![
                    ("HBase RPC".to_string(), self.rpc_addr.to_string()),
                    ("Info port".to_string(), info.to_string()),
                ];
                let st = status::region_server_status(
                    &self.rs,
                    self.server_name.clone(),
                    self.exposition.build(),
                    self.started,
                    listeners,
                    &self.slow_log,
                );
                (200, "text/html; charset=utf-8", status_page::render(&st))
            }
            "/health" => {
                let failure = self.rs.write_failure();
                let body = serde_json::json!({
                    "status": if failure.is_some() { "degraded" } else { "ok" },
                    "regions": self.rs.hosted_regions().len(),
                    "writeFailure": failure,
                });
                (200, "application/json; charset=utf-8", body.to_string())
            }
            _ => (
                404,
                "text/plain; charset=utf-8",
                "not found: try /rs-status, /metrics, /prometheus, /jmx, /health, /conf, /stacks \
                 or /logLevel\n"
                    .into(),
            ),
        };
        Page {
            status,
            content_type,
            body,
        }
    }
}
