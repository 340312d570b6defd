//! HBase's PerformanceEvaluation (`hbase pe`) against the embedded region store.
//!
//! Same commands, options (by PE's meanings), row keys (26-digit zero-padded decimals), table
//! (`TestTable`, family `info0`, qualifier `0`) and per-client key ranges as PE's `--nomapred`
//! mode: N client threads in this process share one `RegionServer`. The report adds what PE
//! leaves to other tools: latency percentiles from an HDR histogram, the process's CPU time
//! and rows per CPU-second.
//!
//! [`PeOptions`] holds a run's options, [`Plan::new`] checks them, [`run`] runs the plan and
//! returns a [`PeReport`].

mod client;
mod command;
mod keys;
mod options;
mod properties;
mod report;
mod table;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use cairn_blockcache::CacheStats;
use cairn_region::{RegionServer, Scan, TableName};
use indicatif::ProgressBar;

use crate::cpu::cpu_times;
use crate::store::Store;
use client::ClientResult;
use options::Settings;

pub use command::PeCommand;
pub use keys::{format_row, FilterAllFilter, FAMILY_NAME_BASE, ROW_LENGTH};
pub use options::{
    PeOptions, Plan, TotalSize, DEFAULT_BLOCK_CACHE_SIZE, DEFAULT_BLOCK_SIZE, DEFAULT_BUFFER_SIZE,
    DEFAULT_CACHING, DEFAULT_ROWS, DEFAULT_VALUE_SIZE, ONE_GB,
};
pub use report::PeReport;

/// Runs every client of `settings` on its own thread; the first error stops the others.
fn run_clients(
    server: &Arc<RegionServer>,
    table: &TableName,
    settings: &Settings,
    bar: &ProgressBar,
) -> Result<(Vec<ClientResult>, Duration)> {
    let abort = AtomicBool::new(false);
    let shared = client::Shared {
        server,
        table,
        settings,
        abort: &abort,
        bar,
    };
    let started = Instant::now();
    let results: Vec<Result<ClientResult>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..settings.clients)
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
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("client thread panicked")))
            })
            .collect()
    });
    let wall = started.elapsed();
    let mut out = Vec::new();
    for r in results {
        out.push(r?);
    }
    Ok((out, wall))
}

fn cache_totals(server: &RegionServer) -> Option<CacheStats> {
    server.block_cache().map(|c| c.stats().2)
}

/// Runs `plan`: opens the store (the `--data` directory or a temporary one), creates or
/// loads the table as PE's `checkTable` would, runs the clients and closes the store. Notes
/// and progress go to stderr; the results come back.
pub fn run(plan: &Plan) -> Result<PeReport> {
    let s = &plan.settings;
    for n in &plan.notes {
        eprintln!("cairn pe: note: {n}");
    }
    let store = Store::open(
        "pe",
        plan.data.as_deref(),
        plan.keep,
        plan.cache.clone(),
        &plan.server_properties,
    )?;
    let (server, root, data_note) = (&store.server, &store.root, &store.data_note);
    let outcome = (|| -> Result<PeReport> {
        let mut notes = plan.notes.clone();
        notes.extend(table::prepare_table(server, plan)?);
        let regions = server.table(&plan.table)?.regions.len();
        if plan.warm_cache {
            let mut scanner = server.scanner(&plan.table, Scan::new())?;
            while scanner.next_row()?.is_some() {}
        }
        let cache_before = cache_totals(server);
        let bar = crate::progress::count(s.command.name(), s.rows * s.clients as u64);
        let wal0 = server.wal().stats().appends;
        let cpu0 = cpu_times();
        let (results, wall) = run_clients(server, &plan.table, s, &bar)?;
        let cpu1 = cpu_times();
        bar.finish_and_clear();
        Ok(PeReport {
            settings: s.clone(),
            table: plan.table.to_string(),
            regions,
            results,
            wall,
            user: cpu1.0 - cpu0.0,
            sys: cpu1.1 - cpu0.1,
            wal_appends: server.wal().stats().appends.saturating_sub(wal0),
            cache_before,
            cache_after: cache_totals(server),
            root: root.clone(),
            data_note: data_note.clone(),
            notes,
        })
    })();
    store.finish(outcome, plan.quiet)
}
