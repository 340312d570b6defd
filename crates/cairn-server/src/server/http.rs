//! The server's HTTP pages, the same on the info port (`hbase.regionserver.info.port`) and
//! the old HTTP port: the status page (`/`, `/rs-status`), `/metrics` and `/prometheus`
//! (Prometheus text), `/jmx` (HBase's JMX JSON), `/health`, `/conf`, `/stacks` and
//! `/logLevel`. Plain HTTP is tiny_http's; over TLS a listener of ours answers one small GET
//! per connection (tiny_http's TLS cannot ask for client certificates).

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_tls::{Stream, TlsAcceptor};

use super::{conf_page, log_level, stacks, status, status_page, Shared};
use crate::connections;
use crate::metrics;

/// HTTPS connections answered at once; more wait in the listen backlog.
const MAX_HTTPS_CONNECTIONS: usize = 64;

/// How long an HTTPS client has to send its whole request head.
const HTTPS_HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// An answer of the HTTP endpoint.
pub(crate) struct Page {
    pub(crate) status: u16,
    pub(crate) content_type: &'static str,
    pub(crate) body: String,
}

/// The pages every info server has, whatever it serves: `/metrics` and `/prometheus` of the
/// sources `gather` lists, `/jmx`, `/conf`, `/stacks` and `/logLevel` of `config`; `None`
/// for any other path.
pub(crate) fn common_page(
    path: &str,
    query: &str,
    exposition: &metrics::Exposition,
    gather: &dyn Fn() -> Vec<metrics::Source>,
    config: &crate::config::Config,
) -> Option<Page> {
    Some(match path {
        // HBase's info server has both: `/prometheus` for scrapers, `/metrics` for Hadoop's
        // metrics servlet (here the same text).
        "/metrics" | "/prometheus" => Page {
            status: 200,
            content_type: "text/plain; version=0.0.4; charset=utf-8",
            body: exposition.render(&gather()),
        },
        "/conf" => Page {
            status: 200,
            content_type: "text/xml; charset=utf-8",
            body: conf_page::page(config),
        },
        "/stacks" => Page {
            status: 200,
            content_type: "text/plain; charset=utf-8",
            body: stacks::page(&stacks::threads(std::path::Path::new("/proc/self/task"))),
        },
        "/logLevel" => {
            let (status, body) = log_level::page(config.log_level.as_deref(), &query_pairs(query));
            Page {
                status,
                content_type: "text/html; charset=utf-8",
                body,
            }
        }
        "/jmx" => {
            let mut json = metrics::jmx(&gather());
            if let Some(q) = jmx_query(query) {
                if let Some(beans) = json["beans"].as_array_mut() {
                    beans.retain(|b| b["name"].as_str() == Some(q.as_str()));
                }
            }
            Page {
                status: 200,
                content_type: "application/json; charset=utf-8",
                body: serde_json::to_string_pretty(&json).unwrap_or_default(),
            }
        }
        _ => return None,
    })
}

/// The answer to a GET of `url` (path and query).
fn page(s: &Shared, url: &str) -> Page {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    if let Some(p) = common_page(path, query, &s.exposition, &|| gather(s), &s.config) {
        return p;
    }
    match path {
        "/" | "/rs-status" => Page {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: status_page::render(&status::snapshot(s)),
        },
        "/health" => {
            let stopping = s.stop.load(Ordering::Acquire);
            // A failed WAL refuses writes until it recovers; reads go on, so the server is
            // degraded rather than down.
            let write_failure = s.rs.write_failure();
            let status = match (stopping, &write_failure) {
                (true, _) => "stopping",
                (false, Some(_)) => "degraded",
                (false, None) => "ok",
            };
            let mut body = serde_json::json!({
                "status": status,
                "tables": s.rs.table_names().len(),
                "openConnections": s.metrics.open_connections.load(Ordering::Relaxed),
            });
            if let Some(f) = write_failure {
                body["writeFailure"] = serde_json::Value::String(f);
            }
            Page {
                status: if stopping { 503 } else { 200 },
                content_type: "application/json; charset=utf-8",
                body: body.to_string(),
            }
        }
        _ => Page {
            status: 404,
            content_type: "text/plain; charset=utf-8",
            body: "not found: try /rs-status, /metrics, /prometheus, /jmx, /health, /conf, /stacks or /logLevel\n"
                .to_string(),
        },
    }
}

pub(super) fn http_loop(srv: &tiny_http::Server, s: &Shared) {
    for req in srv.incoming_requests() {
        let p = page(s, req.url());
        let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], p.content_type.as_bytes())
            .expect("a valid header");
        let resp = tiny_http::Response::from_string(p.body)
            .with_status_code(p.status)
            .with_header(header);
        let _ = req.respond(resp);
    }
}

/// The HTTPS listener: each connection gets its handshake and one GET answered on a thread
/// of its own.
pub(super) fn https_accept_loop(listener: TcpListener, tls: &Arc<TlsAcceptor>, s: &Arc<Shared>) {
    for sock in listener.incoming() {
        if s.stop.load(Ordering::Acquire) {
            return;
        }
        let Ok(sock) = sock else {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        if s.https_open.fetch_add(1, Ordering::AcqRel) >= MAX_HTTPS_CONNECTIONS {
            s.https_open.fetch_sub(1, Ordering::AcqRel);
            let _ = sock.shutdown(Shutdown::Both);
            continue;
        }
        let (tls, s2) = (tls.clone(), s.clone());
        let spawned = std::thread::Builder::new()
            .name("cairn-https".into())
            .spawn(move || {
                let peer = sock.peer_addr().map(|a| a.to_string()).unwrap_or_default();
                match tls.accept(sock) {
                    Ok(stream) => {
                        if let Err(e) = answer_https(stream, &s2) {
                            tracing::debug!("https from {peer}: {e}");
                        }
                    }
                    Err(e) => tracing::info!("refused https connection from {peer}: {e}"),
                }
                s2.https_open.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            s.https_open.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Longest request head read (request line and headers).
const MAX_HTTP_HEAD: usize = 16 << 10;

/// Reads one request head and answers it, then closes: the endpoint serves a few small
/// pages to scrapers, for which a connection per request is no cost.
fn answer_https(mut stream: Stream, s: &Shared) -> io::Result<()> {
    let _ = stream
        .socket()
        .set_write_timeout(Some(Duration::from_secs(10)));
    let socket = stream.socket().try_clone()?;
    let deadline = Instant::now() + HTTPS_HEAD_TIMEOUT;
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        // The whole head by the deadline: trickled bytes do not extend it.
        let n = connections::Deadline::new(&mut stream, &socket, deadline).read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > MAX_HTTP_HEAD {
            return respond(
                &mut stream,
                431,
                "text/plain",
                "request header too large\n",
                true,
            );
        }
    }
    let line = String::from_utf8_lossy(&head[..head.iter().position(|&b| b == b'\r').unwrap_or(0)])
        .into_owned();
    let mut parts = line.split(' ');
    let (method, url) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    match method {
        "GET" | "HEAD" => {
            let p = page(s, url);
            respond(
                &mut stream,
                p.status,
                p.content_type,
                &p.body,
                method == "GET",
            )
        }
        _ => respond(&mut stream, 405, "text/plain", "only GET and HEAD\n", true),
    }
}

fn respond(
    stream: &mut Stream,
    status: u16,
    content_type: &str,
    body: &str,
    with_body: bool,
) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "",
    };
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if with_body {
        out.extend_from_slice(body.as_bytes());
    }
    stream.write_all(&out)?;
    stream.flush()
}

/// Every metrics source, the native RPC server's included.
fn gather(s: &Shared) -> Vec<metrics::Source> {
    s.registry.gather()
}

/// Most query parameters read (a page takes two).
const MAX_QUERY_PAIRS: usize = 16;

/// The `name=value` pairs of a query string, percent-decoded (`+` is a space, as forms send
/// it); the first [`MAX_QUERY_PAIRS`] only.
pub(crate) fn query_pairs(query: &str) -> Vec<(String, String)> {
    let decode = |v: &str| {
        percent_encoding::percent_decode_str(&v.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned()
    };
    query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .take(MAX_QUERY_PAIRS)
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(k), decode(v))
        })
        .collect()
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
    fn query_pairs_are_decoded_and_bounded() {
        assert_eq!(
            query_pairs("log=cairn_server%3A%3Arpc&level=DEBUG&x"),
            [
                ("log".to_string(), "cairn_server::rpc".to_string()),
                ("level".to_string(), "DEBUG".to_string()),
                ("x".to_string(), String::new())
            ]
        );
        assert_eq!(query_pairs("a=b+c")[0].1, "b c");
        assert_eq!(query_pairs(&"a=1&".repeat(1000)).len(), MAX_QUERY_PAIRS);
    }

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
