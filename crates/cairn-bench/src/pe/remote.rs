//! PE against a running cluster, cairn or HBase, over HBase's native RPC: what `cairn pe` runs
//! when its client properties name a cluster (`hbase.zookeeper.quorum`, or
//! `hbase.client.bootstrap.servers`; see [`ClusterConfig`]).
//!
//! The same commands, keys, values, options and report as an embedded run, with PE's
//! `checkTable` done through the master (`CreateTable` with PE's split keys for `--presplit`,
//! an existing table disabled and deleted first, as PE does; a read command on a missing table
//! is refused, as PE refuses it) and the rows sent as HBase's client sends them. The CPU time
//! in the report is this process's alone, the client's: next to the server's (from /proc),
//! it shows what a request costs each side.

mod admin;
mod client;
mod cluster;
mod conn;
mod links;
mod locator;
mod scan;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Barrier;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::command::PeCommand;
use super::keys::split_keys;
use super::options::{PeOptions, Plan, DEFAULT_BLOCK_CACHE_SIZE};
use super::report::PeReport;
use crate::cpu::cpu_times;
use client::Shared;
use links::SharedPool;
use locator::Locator;

pub use cluster::{ClusterConfig, Registry};

/// A remote run, checked: the embedded plan's settings and table, and how to connect.
pub struct RemotePlan {
    plan: Plan,
    one_con: bool,
}

impl RemotePlan {
    /// Checks `o` as an embedded run's options are checked ([`Plan::new`]; its errors are
    /// bad usage), minus what only an embedded store reads: the `-D` properties go to the
    /// client (those it does not read are noted), and the store's options are noted as
    /// having no effect.
    pub fn new(o: &PeOptions) -> Result<RemotePlan> {
        let mut notes = Vec::new();
        let mut one_con = false;
        for c in &o.client_side {
            match c.strip_prefix("--oneCon=") {
                Some(v) => {
                    one_con = match v.trim().to_ascii_lowercase().as_str() {
                        "true" => true,
                        "false" => false,
                        _ => {
                            return Err(crate::UsageError::wrap(anyhow::anyhow!(
                                "--oneCon={v}: expected true or false"
                            )))
                        }
                    }
                }
                None => notes.push(format!("{c} has no effect in cairn pe's RPC client")),
            }
        }
        for (k, _) in &o.properties {
            if !ClusterConfig::reads(k) {
                notes.push(format!(
                    "-D {k}: not read by cairn pe's RPC client (server properties belong in \
                     the server's configuration)"
                ));
            }
        }
        let embedded_only = [
            (o.data.is_some(), "--data"),
            (o.keep, "--keep"),
            (o.warm_cache, "--warmCache"),
            (
                o.block_cache_size != DEFAULT_BLOCK_CACHE_SIZE,
                "--blockCacheSize",
            ),
            (o.bucket_cache_size.is_some(), "--bucketCacheSize"),
        ];
        for (given, name) in embedded_only {
            if given {
                notes.push(format!(
                    "{name} has no effect against a cluster: it shapes an embedded store"
                ));
            }
        }
        let mut embedded = o.clone();
        embedded.properties.clear();
        embedded.client_side.clear();
        let mut plan = Plan::new(&embedded)?;
        // The embedded plan's notes that say --caching does nothing: over RPC it does.
        plan.notes.retain(|n| !n.starts_with("--caching"));
        plan.notes.extend(notes);
        if !matches!(
            o.command,
            PeCommand::SequentialWrite
                | PeCommand::RandomWrite
                | PeCommand::SequentialRead
                | PeCommand::RandomRead
                | PeCommand::Scan
                | PeCommand::ScanRange10
                | PeCommand::ScanRange100
                | PeCommand::ScanRange1000
                | PeCommand::ScanRange10000
        ) {
            return Err(crate::UsageError::wrap(anyhow::anyhow!(
                "{}: not run against a cluster yet (sequentialWrite, randomWrite, \
                 sequentialRead, randomRead, scan and scanRange* are); run it embedded",
                o.command
            )));
        }
        Ok(RemotePlan { plan, one_con })
    }
}

/// Runs `rp` against `cluster`: finds the master and meta, does PE's `checkTable`, runs the
/// clients (each with its own connections, or one shared per server with `--oneCon`).
pub fn run(rp: &RemotePlan, cluster: &ClusterConfig) -> Result<PeReport> {
    let (plan, s) = (&rp.plan, &rp.plan.settings);
    for n in &plan.notes {
        eprintln!("cairn pe: note: {n}");
    }
    let mut notes = plan.notes.clone();
    let mut say = |n: String| {
        eprintln!("cairn pe: {n}");
        notes.push(n);
    };
    let at = cluster
        .locate()
        .with_context(|| format!("finding the cluster through {}", cluster.describe()))?;
    let table = admin::table_pb(&plan.table);
    let mut master = admin::Master::connect(&at.master)?;
    let mut state = master.table_state(&table)?;
    let read = s.command.is_read();
    // PE's checkTable.
    if state.is_some() && plan.presplit > 0 && !read {
        say(format!(
            "--presplit={}: disabling and deleting table {}",
            plan.presplit, plan.table
        ));
        master.drop_table(&table, state == Some(true))?;
        state = None;
    }
    match state {
        None if read => bail!(
            "table {} does not exist at {}: run a write command first (PE: \"Must specify an \
             existing table for read commands\")",
            plan.table,
            cluster.describe()
        ),
        None => {
            let splits = split_keys(plan.presplit, s.total_rows);
            let n = master.create_table(&plan.descriptor, &splits, &at.meta)?;
            say(format!(
                "created table {} ({n} region{})",
                plan.table,
                if n == 1 { "" } else { "s" }
            ));
        }
        Some(false) => master.enable_table(&table)?,
        Some(true) => {}
    }
    drop(master);
    let locator = Locator::new(&at.meta, table)?;
    let regions = locator.regions().list.len();
    let pool = rp.one_con.then(SharedPool::default);
    let abort = AtomicBool::new(false);
    let gate = Barrier::new(s.clients + 1);
    let bar = crate::progress::count(
        s.command.name(),
        s.rows * s.clients as u64 * u64::from(s.cycles),
    );
    let shared = Shared {
        locator: &locator,
        settings: s,
        abort: &abort,
        bar: &bar,
        gate: &gate,
        pool: pool.as_ref(),
    };
    let (results, wall, cpu0) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..s.clients)
            .map(|i| {
                let (shared, abort) = (&shared, &abort);
                std::thread::Builder::new()
                    .name(format!("TestClient-{i}"))
                    .spawn_scoped(scope, move || {
                        let r = client::run(shared, i);
                        if r.is_err() {
                            abort.store(true, std::sync::atomic::Ordering::Relaxed);
                        }
                        r
                    })
                    .expect("spawn client thread")
            })
            .collect();
        gate.wait();
        let cpu0 = cpu_times();
        let at = Instant::now();
        gate.wait();
        let results: Vec<Result<_>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("client thread panicked")))
            })
            .collect();
        (results, at.elapsed(), cpu0)
    });
    let cpu1 = cpu_times();
    bar.finish_and_clear();
    let mut out = Vec::new();
    for r in results {
        out.push(r?);
    }
    Ok(PeReport {
        settings: s.clone(),
        table: plan.table.to_string(),
        regions,
        results: out,
        wall,
        user: cpu1.0 - cpu0.0,
        sys: cpu1.1 - cpu0.1,
        wal_appends: 0,
        cache_before: None,
        cache_after: None,
        root: PathBuf::from(cluster.describe()),
        data_note: format!(
            "over HBase's native RPC, {}; CPU below is this client's",
            if rp.one_con {
                "one connection per server shared by the clients"
            } else {
                "a connection per client and server"
            }
        ),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> PeOptions {
        let mut o = PeOptions::new(PeCommand::RandomRead, 2);
        o.rows = 10;
        o
    }

    #[test]
    fn store_options_are_noted_and_client_options_taken() {
        let mut o = options();
        o.warm_cache = true;
        o.caching = 100;
        o.properties = vec![
            ("hbase.zookeeper.quorum".into(), "zk".into()),
            ("hbase.hstore.compaction.min".into(), "5".into()),
        ];
        o.client_side = vec!["--oneCon=true".into(), "--connCount=2".into()];
        let p = RemotePlan::new(&o).unwrap();
        assert!(p.one_con);
        let notes = p.plan.notes.join("\n");
        assert!(notes.contains("--warmCache has no effect"), "{notes}");
        assert!(
            notes.contains("-D hbase.hstore.compaction.min: not read"),
            "{notes}"
        );
        assert!(notes.contains("--connCount=2 has no effect in cairn pe's RPC client"));
        assert!(!notes.contains("hbase.zookeeper.quorum"), "{notes}");
        // Over RPC, --caching is the scan's rows per call: not a no-op.
        assert!(!notes.contains("--caching"), "{notes}");
    }

    #[test]
    fn what_is_not_run_remotely_is_bad_usage() {
        let mut o = options();
        o.command = PeCommand::Increment;
        let e = RemotePlan::new(&o).err().unwrap();
        assert!(e.downcast_ref::<crate::UsageError>().is_some());
        assert!(
            e.to_string()
                .contains("increment: not run against a cluster"),
            "{e}"
        );
        let mut o = options();
        o.client_side = vec!["--oneCon=maybe".into()];
        let e = RemotePlan::new(&o).err().unwrap();
        assert!(e.to_string().contains("--oneCon=maybe"), "{e}");
        // The embedded checks still apply.
        let mut o = options();
        o.rows = 0;
        assert!(RemotePlan::new(&o).is_err());
    }
}
