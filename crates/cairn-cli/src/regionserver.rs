//! `cairn regionserver start`: a region server of an HBase cluster, as `hbase regionserver
//! start` with the same hbase-site.xml: it joins the active master found in ZooKeeper and
//! holds the regions the master assigns it, until SIGINT or SIGTERM, then closes (flushes)
//! and reports every region so the master moves them. A second signal, or a lost ZooKeeper
//! session, stops the process at once (the master then splits its WAL).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};

/// What to do (HBase's `hbase regionserver start|stop`).
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Action {
    /// Start the region server and stay in the foreground.
    Start,
}

#[derive(Args)]
pub struct RegionServerArgs {
    /// start
    #[arg(value_enum)]
    action: Action,
    /// HBase's configuration directory (hbase-site.xml with hbase.rootdir,
    /// hbase.zookeeper.quorum, ...) [default: $HBASE_CONF_DIR].
    #[arg(long = "conf", value_name = "DIR")]
    conf: Option<PathBuf>,
    /// Any property by name, after the configuration directory:
    /// -D hbase.regionserver.port=16021
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    define: Vec<String>,
}

fn config(a: &RegionServerArgs) -> anyhow::Result<cairn_server::Config> {
    let mut config = cairn_server::Config::default();
    // A region server listens where HBase's does unless told otherwise.
    config.set("hbase.regionserver.port", "16020")?;
    let site = crate::serve::load_site(&mut config, "regionserver", a.conf.as_deref(), &a.define)?;
    crate::serve::apply_defines(&mut config, &site)?;
    Ok(config)
}

pub fn run(a: RegionServerArgs, log: crate::log_control::LogControl) -> anyhow::Result<ExitCode> {
    let Action::Start = a.action;
    let mut config = config(&a)?;
    config.build = cairn_server::metrics::BuildInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        commit: env!("CAIRN_COMMIT").into(),
        features: crate::FEATURES.into(),
    };
    config.log_level = Some(Arc::new(log));
    let _ = cairn_server::connections::raise_open_files_limit();
    // The first signal asks for the orderly stop; the second ends the process at once.
    let signals = Arc::new(AtomicUsize::new(0));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let s = signals.clone();
        // SAFETY: the handler only touches an atomic counter and calls `_exit`, both
        // async-signal-safe.
        unsafe {
            signal_hook::low_level::register(sig, move || {
                if s.fetch_add(1, Ordering::AcqRel) >= 1 {
                    signal_hook::low_level::exit(130);
                }
            })
        }
        .context("installing signal handlers")?;
    }
    let server = cairn_server::cluster::ClusterRegionServer::start(&config, |why| {
        // Nothing more may be written: the master is reopening this server's regions
        // elsewhere from its WAL. Acknowledged edits are in the WAL already.
        eprintln!("cairn regionserver: aborting: {why}");
        std::process::exit(1);
    })
    .context("starting the region server")?;
    println!(
        "cairn regionserver: {} joined the cluster (hbase rpc on {}, root {})",
        server.server_name(),
        server.addr(),
        config.data_dir.display()
    );
    if let Some(info) = server.info_addr() {
        println!(
            "cairn regionserver: info port on {info} (/rs-status, /metrics, /prometheus, /jmx, /health, /conf, /stacks, /logLevel)"
        );
    }
    while signals.load(Ordering::Acquire) == 0 {
        if let Some(reason) = server.member().stop_requested() {
            println!("cairn regionserver: asked to stop: {reason}");
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    println!("cairn regionserver: stopping (closing and reporting every region)");
    server.shutdown()?;
    println!("cairn regionserver: stopped");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Rs {
        #[command(flatten)]
        a: RegionServerArgs,
    }

    fn config_of(args: &[&str]) -> cairn_server::Config {
        let p =
            Rs::try_parse_from(["rs", "start"].into_iter().chain(args.iter().copied())).unwrap();
        config(&p.a).unwrap()
    }

    #[test]
    fn site_files_then_defines_over_the_region_servers_port() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("hbase-site.xml"),
            "<configuration><property><name>hbase.regionserver.port</name>\
             <value>${p}</value></property><property><name>p</name><value>16100</value>\
             </property></configuration>",
        )
        .unwrap();
        let conf = dir.path().to_str().unwrap();
        let addr = |c: cairn_server::Config| c.rpc.unwrap().addr;
        assert!(addr(config_of(&[])).ends_with(":16020"));
        assert!(addr(config_of(&["--conf", conf])).ends_with(":16100"));
        let c = config_of(&["--conf", conf, "-D", "hbase.regionserver.port=16200"]);
        assert!(addr(c).ends_with(":16200"));
    }
}
