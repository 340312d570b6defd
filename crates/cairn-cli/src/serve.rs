//! `cairn serve`: HBase's Thrift1 gateway and metrics over the embedded region server, until
//! SIGINT or SIGTERM, then an orderly stop that flushes every memstore.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

#[derive(Args)]
pub struct ServeArgs {
    /// Data directory (tables, WAL); created if missing [default: ./cairn-data].
    #[arg(long = "data", value_name = "DIR")]
    data: Option<PathBuf>,
    /// TOML configuration (cairn's keys and HBase's property names).
    #[arg(long, short = 'c', value_name = "FILE")]
    config: Option<PathBuf>,
    /// Thrift address [default: 127.0.0.1:9090]; port 0 picks a free port.
    #[arg(long, value_name = "HOST:PORT")]
    thrift: Option<String>,
    /// HTTP address for /metrics, /jmx and /health [default: 127.0.0.1:9095]; "" turns it off.
    #[arg(long, value_name = "HOST:PORT")]
    http: Option<String>,
    /// Any setting by name, after the config file: -D hbase.client.scanner.timeout.period=30000
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    define: Vec<String>,
}

pub fn run(a: ServeArgs) -> anyhow::Result<ExitCode> {
    let mut config = cairn_server::Config::default();
    if let Some(path) = &a.config {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        config.apply_toml(&text, &path.display().to_string())?;
    }
    for d in &a.define {
        let (k, v) = d
            .split_once('=')
            .with_context(|| format!("-D {d}: expected NAME=VALUE"))?;
        config.set(k.trim(), v)?;
    }
    if let Some(d) = &a.data {
        config.data_dir = d.clone();
    }
    if let Some(t) = &a.thrift {
        config.thrift_addr = t.clone();
    }
    if let Some(h) = &a.http {
        config.http_addr = (!h.is_empty()).then(|| h.clone());
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing signal handlers")?;
    }
    let data = config.data_dir.display().to_string();
    let server = cairn_server::Server::start(config)?;
    let rec = &server.region_server().recovery;
    println!(
        "cairn serve: data {data} ({} tables, {} regions, {} WAL edits replayed)",
        rec.tables, rec.regions, rec.edits_replayed
    );
    println!(
        "cairn serve: thrift on {} (binary or compact protocol, buffered or framed transport)",
        server.thrift_addr()
    );
    match server.http_addr() {
        Some(h) => println!("cairn serve: http on {h} (/metrics, /jmx, /health)"),
        None => println!("cairn serve: http off"),
    }
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    println!("cairn serve: stopping (flushing memstores)");
    server.shutdown()?;
    println!("cairn serve: stopped");
    Ok(ExitCode::SUCCESS)
}
