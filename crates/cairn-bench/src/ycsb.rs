//! YCSB's core workloads (A–F and any mix of the same properties) run embedded against the
//! region store, with YCSB's properties, YCSB's generators and YCSB's HBase binding's mapping
//! (table `usertable`, one family, rows `user…`, qualifiers `field0…`), writing YCSB's own text
//! output. Lines cairn adds are tagged `[CAIRN]`.
//!
//! [`YcsbOptions`] holds a run's properties (the command line's `-P` files and `-p` values,
//! merged by the caller; [`read_property_file`] reads a `-P`); [`run`] runs it.

mod generator;
mod measure;
mod phase;
mod plan;
mod properties;
mod report;
mod workload;

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::PathBuf;
use std::str::FromStr;

use anyhow::{bail, Context, Result};
use cairn_blockcache::{BlockCacheConfig, BucketCacheConfig};
use cairn_region::RegionServer;

use crate::store::Store;
use plan::Plan;

pub use properties::read_property_file;

/// Which phase to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Insert recordcount records (YCSB's `-load`).
    Load,
    /// Run operationcount operations of the workload's mix (YCSB's `-t`).
    Run,
    /// Load, then run, in one process (two outputs, one after the other).
    All,
}

impl Phase {
    /// The phase's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Run => "run",
            Phase::All => "all",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Phase {
    type Err = String;

    fn from_str(s: &str) -> Result<Phase, String> {
        match s {
            "load" => Ok(Phase::Load),
            "run" => Ok(Phase::Run),
            "all" => Ok(Phase::All),
            other => Err(format!("{other}: not a phase (load, run or all)")),
        }
    }
}

/// A YCSB run as the command line asks for it.
#[derive(Clone, Debug)]
pub struct YcsbOptions {
    /// The phase(s) to run.
    pub phase: Phase,
    /// YCSB's properties, `-p` values already over the `-P` files' (YCSB's rule).
    pub properties: BTreeMap<String, String>,
    /// The store's directory (kept); `None`: a temporary one.
    pub data: Option<PathBuf>,
    /// Keep the temporary directory.
    pub keep: bool,
    /// L1 block cache bytes.
    pub block_cache_size: u64,
    /// L2 bucket cache bytes, if any.
    pub bucket_cache_size: Option<u64>,
    /// The command line as given, echoed on stderr as YCSB does.
    pub command_line: String,
    /// HBase properties of the embedded region server (HBase's configuration directory, then
    /// `-D`), applied before it opens, as YCSB's HBase binding takes hbase-site.xml.
    pub server_properties: Vec<(String, String)>,
}

/// The YCSB properties of `o` that cairn does not read (said once by the command line).
pub fn unread_properties(o: &YcsbOptions) -> Vec<String> {
    o.properties
        .keys()
        .filter(|k| !properties::KNOWN.contains(&k.as_str()))
        .cloned()
        .collect()
}

/// Creates the table for the load phase, or checks it is there for the run phase.
fn prepare_table(server: &RegionServer, plan: &Plan, phase: Phase) -> Result<()> {
    let table = &plan.workload.table;
    if server.table(table).is_err() {
        if phase == Phase::Run {
            bail!(
                "table {table} does not exist in this store: load it first (`cairn ycsb load \
                 ... --data DIR`, then `run` with the same --data), or use `cairn ycsb all`"
            );
        }
        server
            .create_table(plan.descriptor.clone(), &[])
            .with_context(|| format!("creating table {table}"))?;
        eprintln!("cairn ycsb: created table {table}");
    } else if !server.is_table_enabled(table)? {
        server.enable_table(table)?;
    }
    let family = &plan.workload.family;
    let t = server.table(table)?;
    if t.descriptor.family(family).is_none() {
        bail!(
            "table {table} has no family {}: set -p columnfamily= to its family",
            String::from_utf8_lossy(family)
        );
    }
    Ok(())
}

/// Runs `o`: checks every phase's properties (bad ones are [`crate::UsageError`]s) before
/// opening the store, then runs each phase, writing its YCSB output to `out` as it ends. YCSB's
/// progress lines go to stderr.
pub fn run(o: &YcsbOptions, out: &mut dyn Write) -> Result<()> {
    eprintln!("Command line: {}", o.command_line);
    eprintln!("Loading workload...");
    let phases: &[Phase] = match o.phase {
        Phase::All => &[Phase::Load, Phase::Run],
        Phase::Load => &[Phase::Load],
        Phase::Run => &[Phase::Run],
    };
    // Check every phase's properties before touching the store.
    for &ph in phases {
        plan::plan(&o.properties, ph).map_err(crate::UsageError::wrap)?;
    }
    let cache = BlockCacheConfig {
        l1_size: o.block_cache_size,
        l2: o.bucket_cache_size.map(|capacity| BucketCacheConfig {
            capacity,
            ..BucketCacheConfig::default()
        }),
    };
    let store = Store::open(
        "ycsb",
        o.data.as_deref(),
        o.keep,
        cache,
        &o.server_properties,
    )?;
    let outcome = (|| -> Result<()> {
        for &ph in phases {
            // A fresh workload per phase: its counters start where YCSB's would.
            let plan = plan::plan(&o.properties, ph)?;
            prepare_table(&store.server, &plan, ph)?;
            let transactions = ph == Phase::Run;
            let r = phase::run_phase(&store.server, &plan, transactions);
            if let Some(e) = &r.first_error {
                eprintln!(
                    "cairn ycsb: {} operation{} failed; the first: {e}",
                    r.errors,
                    if r.errors == 1 { "" } else { "s" }
                );
            }
            let name = if transactions { "run" } else { "load" };
            out.write_all(report::report(&plan, &r, name, &store).as_bytes())?;
            out.flush()?;
            if !transactions && r.ops_done < plan.load_ops {
                bail!(
                    "the load stopped after {} of {} records (an insert failed)",
                    r.ops_done,
                    plan.load_ops
                );
            }
        }
        Ok(())
    })();
    store.finish(outcome, false)
}
