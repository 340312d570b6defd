//! The info server (`hbase.regionserver.info.port`) of a running server: both Prometheus
//! pages checked by Prometheus' own parsers (`promtool check metrics` and the Python
//! client's text parser) after some traffic, the status page (also rendered by headless
//! Chromium), `/conf`, `/stacks` and `/logLevel`, and the old HTTP port serving the same.
//!
//! promtool and the Python parser are skipped when missing unless
//! `CAIRN_REQUIRE_PROMTOOL=1`; Chromium unless `CAIRN_REQUIRE_CHROMIUM=1` (scripts/test.sh
//! installs all three and sets both).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_region::{
    ColumnFamilyDescriptor, RegionServer, ServerConfig, TableDescriptor, TableName,
};
use cairn_server::rpc::RpcConfig;
use cairn_server::server::{LogLevel, LogLevelError};
use cairn_server::{Config, Server};

#[path = "support/rpc.rs"]
mod rpc;

/// A log filter the test can read back.
#[derive(Debug)]
struct Filter(parking_lot::Mutex<String>);

impl LogLevel for Filter {
    fn filter(&self) -> String {
        self.0.lock().clone()
    }
    fn set_filter(&self, d: &str) -> Result<String, LogLevelError> {
        *self.0.lock() = d.to_string();
        Ok(d.to_string())
    }
}

const TABLE: &str = "status_page_table";

/// A server with table [`TABLE`] in three regions, some rows written through the native RPC
/// and flushed, a few read back.
fn start(dir: &Path, filter: Arc<Filter>) -> Server {
    let rs = RegionServer::open(ServerConfig::new(dir)).unwrap();
    rs.create_table(
        TableDescriptor::new(TableName::parse(TABLE).unwrap())
            .with_family(ColumnFamilyDescriptor::new("f")),
        &[b"g".to_vec(), b"p".to_vec()],
    )
    .unwrap();
    let mut config = Config {
        data_dir: dir.to_path_buf(),
        thrift_addr: "127.0.0.1:0".into(),
        http_addr: Some("127.0.0.1:0".into()),
        info_addr: Some("127.0.0.1:0".into()),
        rpc: Some(RpcConfig {
            addr: "127.0.0.1:0".into(),
            ..RpcConfig::default()
        }),
        log_level: Some(filter),
        ..Config::default()
    };
    config
        .set("hbase.client.scanner.timeout.period", "61000")
        .unwrap();
    // Every call counts as slow (over 0 ms): the page lists them.
    config.set("hbase.ipc.warn.response.time", "0").unwrap();
    let server = Server::start_with(rs, config).unwrap();
    let addr = server.rpc_addr().unwrap();
    let regions = rpc::regions(addr, TABLE);
    assert_eq!(regions.len(), 3);
    let mut c = rpc::Client::connect(addr, "ClientService");
    for (i, row) in [&b"a1"[..], b"h1", b"q1", b"q2"].iter().enumerate() {
        let region = &regions[[0, 1, 2, 2][i]];
        let (m, cells) = rpc::mutate(region, row, &[(b"q", b"v")]);
        let _: cairn_rpc::pb::MutateResponse = c.call("Mutate", &m, &cells).message();
    }
    let get = cairn_rpc::pb::GetRequest {
        region: rpc::region_spec(regions[2].clone()),
        get: cairn_rpc::pb::Get {
            row: b"q1".to_vec(),
            ..Default::default()
        },
    };
    let _: cairn_rpc::pb::GetResponse = c.call("Get", &get, b"").message();
    server
        .region_server()
        .flush_table(&TableName::parse(TABLE).unwrap())
        .unwrap();
    server
}

/// GET `path` over HTTP/1.0: the status and the body.
fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\n\r\n").unwrap();
    let mut all = String::new();
    s.read_to_string(&mut all).unwrap();
    let (head, body) = all.split_once("\r\n\r\n").unwrap_or((&all, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, body.to_string())
}

/// Whether `tool` runs; when it does not and `require` is set in the environment, fails.
fn available(tool: &str, args: &[&str], require: &str) -> bool {
    let ok = Command::new(tool)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var(require).as_deref() != Ok("1"),
            "{tool} is missing and {require}=1"
        );
        eprintln!("skipped: {tool} is missing (set {require}=1 to fail instead)");
    }
    ok
}

/// The Python with `prometheus_client`: `$CAIRN_PYTHON`, else the suite's venv.
fn python() -> PathBuf {
    std::env::var_os("CAIRN_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/venv/bin/python")
        })
}

/// Runs `cmd` with `input` on stdin: its exit status and output.
fn run_with_input(cmd: &mut Command, input: &str) -> (bool, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// Checks a page the way Prometheus' Python client reads it: every family parses, has HELP
/// and a type, counters and histograms as such; prints `families N`.
const PY_CHECK: &str = r#"
import sys
from prometheus_client.parser import text_string_to_metric_families
text = sys.stdin.read()
names = []
for f in text_string_to_metric_families(text):
    assert f.documentation, "no HELP for " + f.name
    assert f.type in ("counter", "gauge", "histogram"), (f.name, f.type)
    assert f.name not in names, "family twice: " + f.name
    assert f.samples, "no samples: " + f.name
    names.append(f.name)
assert "cairn_ipc_call_count" in names, names
hist = [f for f in text_string_to_metric_families(text) if f.name == "cairn_ipc_process_call_time_seconds"][0]
assert hist.type == "histogram"
assert any(s.labels.get("method") == "Mutate" and s.name.endswith("_count") and s.value == 4 for s in hist.samples), hist.samples
print("families", len(names))
"#;

#[test]
fn prometheus_parsers_accept_both_pages_after_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        Arc::new(Filter(parking_lot::Mutex::new("info".into()))),
    );
    // A sync of what the traffic wrote (a second finds nothing new), counted by the WAL's
    // counter and in its histogram.
    for _ in 0..2 {
        server.region_server().wal().sync(true).unwrap();
    }
    let info = server.info_addr().unwrap();
    let (status, metrics) = get(info, "/metrics");
    assert_eq!(status, 200);
    let (_, prometheus) = get(info, "/prometheus");
    let (_, old_port) = get(server.http_addr().unwrap(), "/prometheus");
    let families = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("# TYPE "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(families(&metrics), families(&prometheus));
    assert_eq!(families(&metrics), families(&old_port));
    for want in [
        "# TYPE cairn_ipc_call_count_total counter",
        "cairn_ipc_call_count_total{method=\"Mutate\"} 4\n",
        "# TYPE cairn_ipc_process_call_time_seconds histogram",
        "cairn_ipc_process_call_time_seconds_count{method=\"Mutate\"} 4\n",
        "cairn_ipc_queue_call_time_seconds_bucket{method=\"Get\",le=\"+Inf\"} 1\n",
        "# TYPE cairn_wal_sync_time_seconds histogram",
        "# TYPE cairn_server_regions gauge\ncairn_server_regions 3\n",
        "cairn_build_info{commit=\"unknown\",",
        "# TYPE process_cpu_seconds_total counter",
        "process_resident_memory_bytes ",
        "process_open_fds ",
        "process_start_time_seconds ",
    ] {
        assert!(metrics.contains(want), "{want:?} missing from:\n{metrics}");
    }
    let value = |name: &str| -> f64 {
        let line = metrics
            .lines()
            .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
            .unwrap_or_else(|| panic!("no {name} in:\n{metrics}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let syncs = value("cairn_wal_sync_count_total");
    assert!(syncs >= 1.0, "{syncs}");
    assert_eq!(value("cairn_wal_sync_time_seconds_count"), syncs);
    assert_eq!(
        value("cairn_wal_sync_time_seconds_bucket{le=\"+Inf\"}"),
        syncs
    );
    // Every family has its HELP.
    assert_eq!(
        metrics.lines().filter(|l| l.starts_with("# HELP ")).count(),
        families(&metrics).len()
    );

    if available("promtool", &["--version"], "CAIRN_REQUIRE_PROMTOOL") {
        for (name, page) in [("/metrics", &metrics), ("/prometheus", &prometheus)] {
            let (ok, out) =
                run_with_input(Command::new("promtool").args(["check", "metrics"]), page);
            assert!(ok, "promtool check metrics on {name}:\n{out}");
        }
    }
    let py = python();
    let has_parser = Command::new(&py)
        .args(["-c", "import prometheus_client"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if has_parser {
        for (name, page) in [("/metrics", &metrics), ("/prometheus", &prometheus)] {
            let (ok, out) = run_with_input(Command::new(&py).args(["-c", PY_CHECK]), page);
            assert!(
                ok && out.starts_with("families "),
                "prometheus_client on {name}:\n{out}"
            );
        }
    } else {
        assert!(
            std::env::var("CAIRN_REQUIRE_PROMTOOL").as_deref() != Ok("1"),
            "{} has no prometheus_client and CAIRN_REQUIRE_PROMTOOL=1",
            py.display()
        );
        eprintln!("skipped: {} has no prometheus_client", py.display());
    }
}

#[test]
fn the_info_port_serves_status_conf_stacks_and_log_level() {
    let dir = tempfile::tempdir().unwrap();
    let filter = Arc::new(Filter(parking_lot::Mutex::new("info".into())));
    let server = start(dir.path(), filter.clone());
    let info = server.info_addr().unwrap();
    let status = server.status();
    let t = status.tables.iter().find(|t| t.name == TABLE).unwrap();
    assert_eq!(t.regions.len(), 3);
    assert_eq!(t.regions[2].write_requests, 2);
    assert_eq!(t.regions[2].stores[0].store_files, 1, "flushed once");

    for addr in [info, server.http_addr().unwrap()] {
        for path in ["/", "/rs-status"] {
            let (code, html) = get(addr, path);
            assert_eq!(code, 200);
            assert!(html.contains(TABLE), "{html}");
            for r in &t.regions {
                assert!(
                    html.contains(&r.encoded_name),
                    "{} missing: {html}",
                    r.encoded_name
                );
            }
            assert!(
                html.contains(&server.rpc().unwrap().server_name().to_string()),
                "{html}"
            );
            assert!(html.contains("<h2>Block cache</h2>") && html.contains("<h2>WAL</h2>"));
            // The slow-call log: the four puts and the get, with region and row, and the
            // client's address.
            assert!(html.contains("<table id=\"slow\">"), "{html}");
            for want in [
                "<td>Get</td>",
                "row=q1",
                "<td>Mutate</td>",
                "row=a1",
                "<td>127.0.0.1:",
            ] {
                assert!(html.contains(want), "{want} missing: {html}");
            }
        }
    }
    let mutates = status.slow_calls.iter().filter(|c| c.method == "Mutate");
    assert_eq!(mutates.count(), 4, "{:?}", status.slow_calls);

    let (code, conf) = get(info, "/conf");
    assert_eq!(code, 200);
    assert!(conf.starts_with("<?xml"), "{conf}");
    assert!(
        conf.contains(
            "<property><name>hbase.client.scanner.timeout.period</name><value>61000</value>"
        ),
        "{conf}"
    );

    let (code, stacks) = get(info, "/stacks");
    assert_eq!(code, 200);
    assert!(stacks.contains("(cairn-info):"), "{stacks}");
    // Linux keeps 15 bytes of a thread name.
    assert!(stacks.contains("(cairn-thrift-ac):"), "{stacks}");

    let (code, page) = get(info, "/logLevel?log=cairn_server%3A%3Arpc&level=DEBUG");
    assert_eq!(code, 200, "{page}");
    assert_eq!(filter.filter(), "info,cairn_server::rpc=debug");
    let (code, _) = get(info, "/logLevel?log=a,b=trace&level=DEBUG");
    assert_eq!(code, 400);
    assert_eq!(
        filter.filter(),
        "info,cairn_server::rpc=debug",
        "refused: unchanged"
    );
    let (code, page) = get(info, "/logLevel");
    assert_eq!(code, 200);
    assert!(page.contains("info,cairn_server::rpc=debug"), "{page}");

    assert_eq!(get(info, "/nothing-here").0, 404);
}

#[test]
fn the_status_page_renders_in_headless_chromium() {
    if !available("chromium", &["--version"], "CAIRN_REQUIRE_CHROMIUM") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        Arc::new(Filter(parking_lot::Mutex::new("info".into()))),
    );
    let url = format!("http://{}/rs-status", server.info_addr().unwrap());
    let profile = tempfile::tempdir().unwrap();
    let chromium = |extra: &[String]| {
        let mut c = Command::new("chromium");
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let child = c.spawn().unwrap();
        wait_bounded(child, Duration::from_secs(120))
    };
    let (ok, dom) = chromium(&["--dump-dom".to_string()]);
    assert!(ok, "chromium failed:\n{dom}");
    // The DOM Chromium built: the table and every region are in the regions table.
    let regions_table = dom
        .split("<table id=\"regions\">")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .unwrap_or_else(|| panic!("no regions table in the DOM:\n{dom}"));
    let status = server.status();
    let t = status.tables.iter().find(|t| t.name == TABLE).unwrap();
    assert!(regions_table.contains(TABLE));
    for r in &t.regions {
        assert!(
            regions_table.contains(&r.encoded_name),
            "{} missing:\n{dom}",
            r.encoded_name
        );
    }
    // `CAIRN_STATUS_SCREENSHOT=docs/images/status-page.png` takes the docs' picture too.
    if let Some(png) = std::env::var_os("CAIRN_STATUS_SCREENSHOT") {
        let png = std::path::absolute(PathBuf::from(png)).unwrap();
        let (ok, out) = chromium(&[
            format!("--screenshot={}", png.display()),
            "--window-size=1280,900".to_string(),
            "--hide-scrollbars".to_string(),
        ]);
        assert!(ok && png.exists(), "screenshot failed:\n{out}");
    }
}

/// Waits for `child` at most `limit` (then kills it): whether it succeeded, and its stdout
/// and stderr.
fn wait_bounded(mut child: std::process::Child, limit: Duration) -> (bool, String) {
    let deadline = Instant::now() + limit;
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = format!("{}{}", out.join().unwrap(), err.join().unwrap());
    (status.is_some_and(|s| s.success()), text)
}
