//! `cairn compact`: HBase's CompactionTool — offline compaction of a table, region or family
//! directory, with a report of what it read, wrote and spent.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use cairn_region::compaction::CompactionConfig;
use cairn_region::offline;

use crate::bench::{cpu_times, human};
use clap::Args;

#[derive(Args)]
pub struct CompactArgs {
    /// Major compaction: rewrite all files, dropping deletes, expired and surplus versions.
    #[arg(long, visible_alias = "major-compaction")]
    major: bool,
    /// Just one compaction step per store (default: while the policy finds work).
    #[arg(long = "once", visible_alias = "compactOnce")]
    once: bool,
    /// HBase properties, e.g. -D hbase.hstore.compaction.min=2.
    #[arg(short = 'D', value_name = "KEY=VALUE")]
    properties: Vec<String>,
    /// Print a JSON summary instead of the table.
    #[arg(long)]
    json: bool,
    /// Table, region or family directories (HBase's layout): local paths, `file:///…`, or
    /// `hdfs://host:port/…` (HDFS needs a build with `--features hdfs`).
    #[arg(required = true)]
    paths: Vec<String>,
}

pub fn run(a: CompactArgs) -> Result<ExitCode> {
    let mut config = CompactionConfig::default();
    let mut major = a.major;
    for p in &a.properties {
        let Some((k, v)) = p.split_once('=') else {
            bail!("-D {p}: expected KEY=VALUE");
        };
        if k.trim() == "hbase.compactiontool.compact.major" {
            major |= v.trim() == "true";
            continue;
        }
        config.set(k.trim(), v).map_err(anyhow::Error::msg)?;
    }
    let mut stores = Vec::new();
    for p in &a.paths {
        stores.extend(offline::family_dirs(p).with_context(|| p.clone())?);
    }
    if stores.is_empty() {
        bail!("no family directories under {:?}", a.paths);
    }
    cairn_checksum::accounting::enable(true);
    let cpu0 = cpu_times();
    let started = Instant::now();
    let total: u64 = stores.iter().filter_map(|s| s.bytes().ok()).sum();
    let bar = crate::progress::bytes("compacting", total);
    let mut reports = Vec::new();
    for store in stores {
        let dir = store.uri();
        let r = offline::compact_family(&store, major, a.once, &config, |o| {
            bar.inc(o.bytes_in);
            bar.suspend(|| {
                eprintln!(
                    "  {}: {} files ({}) -> {} file ({}), {} -> {} cells{}",
                    dir,
                    o.files_in,
                    human(o.bytes_in),
                    o.files_out,
                    human(o.bytes_out),
                    o.cells_in,
                    o.cells_out,
                    if o.major { ", major" } else { "" }
                )
            });
        })
        .with_context(|| format!("compacting {dir}"))?;
        reports.push(r);
    }
    bar.finish_and_clear();
    let wall = started.elapsed();
    let (user, sys) = cpu_times();
    let (user, sys) = (user - cpu0.0, sys - cpu0.1);
    let (ck_bytes, ck_time) = cairn_checksum::accounting::totals();
    let sum = |f: fn(&cairn_region::CompactionOutcome) -> u64| -> u64 {
        reports.iter().flat_map(|r| &r.compactions).map(f).sum()
    };
    let files_in = sum(|o| o.files_in as u64);
    let files_out = sum(|o| o.files_out as u64);
    let bytes_in = sum(|o| o.bytes_in);
    let bytes_out = sum(|o| o.bytes_out);
    let cells_in = sum(|o| o.cells_in);
    let cells_out = sum(|o| o.cells_out);
    let cpu = user + sys;
    let share = if cpu.is_zero() {
        0.0
    } else {
        ck_time.as_secs_f64() / cpu.as_secs_f64() * 100.0
    };
    let compactions: usize = reports.iter().map(|r| r.compactions.len()).sum();
    if a.json {
        println!(
            "{{\"stores\":{},\"compactions\":{compactions},\"files_in\":{files_in},\"files_out\":{files_out},\"bytes_in\":{bytes_in},\"bytes_out\":{bytes_out},\"cells_in\":{cells_in},\"cells_out\":{cells_out},\"wall_s\":{:.6},\"user_s\":{:.6},\"sys_s\":{:.6},\"checksum_bytes\":{ck_bytes},\"checksum_s\":{:.6},\"checksum_share_pct\":{share:.3}}}",
            reports.len(),
            wall.as_secs_f64(),
            user.as_secs_f64(),
            sys.as_secs_f64(),
            ck_time.as_secs_f64()
        );
    } else {
        println!("| | |");
        println!("|---|---|");
        println!("| stores | {} ({compactions} compactions) |", reports.len());
        println!("| files in / out | {files_in} / {files_out} |");
        println!(
            "| bytes in / out | {} / {} |",
            human(bytes_in),
            human(bytes_out)
        );
        println!("| cells in / out | {cells_in} / {cells_out} |");
        println!("| wall time | {:.3} s |", wall.as_secs_f64());
        println!(
            "| user / system CPU | {:.3} s / {:.3} s |",
            user.as_secs_f64(),
            sys.as_secs_f64()
        );
        if bytes_in > 0 {
            println!(
                "| user CPU per GB read | {:.3} s |",
                user.as_secs_f64() / (bytes_in as f64 / 1e9)
            );
        }
        println!(
            "| checksums | {} in {:.3} s: {share:.2}% of CPU |",
            human(ck_bytes),
            ck_time.as_secs_f64()
        );
    }
    Ok(ExitCode::SUCCESS)
}
