//! `cairn compact`: HBase's CompactionTool — offline compaction of a table, region or family
//! directory, with a report of what it read, wrote and spent.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use cairn_region::compaction::CompactionConfig;
use cairn_region::offline;

use cairn_bench::cpu::cpu_times;
use cairn_bench::units::human;
use clap::Args;
use serde_json::json;

const AFTER_HELP: &str = "\
HBase's spellings: -major and -compactOnce (single dash, as CompactionTool takes them) are the
same as --major and --once. -mapred (CompactionTool's MapReduce job, one task per store) is
taken, and the stores are compacted here, one after another, with the same result.

Properties: from --conf DIR (or $HBASE_CONF_DIR) hbase-site.xml, then -D (which wins); names
cairn compact does not read are warned about once and ignored.
-D hbase.hstore.compaction.* and the other compaction settings as HBase reads them;
CompactionTool's own: -D hbase.compactiontool.compact.major=true (as -major),
-D hbase.compactiontool.compact.once=true (as -compactOnce), and
-D hbase.compactiontool.delete=true|false: true (cairn's default) deletes the replaced input
files; false moves them to HBase's archive directory, <root>/archive/data/<namespace>/<table>/
<region>/<family>, where HBase's own compactions leave them.";

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct CompactArgs {
    /// Major compaction: rewrite all files, dropping deletes, expired and surplus versions
    /// (HBase: -major).
    #[arg(long, visible_alias = "major-compaction")]
    major: bool,
    /// Just one compaction step per store (default: while the policy finds work) (HBase:
    /// -compactOnce).
    #[arg(long = "once", visible_alias = "compactOnce")]
    once: bool,
    /// HBase's -mapred: compact through a MapReduce job. cairn has no MapReduce: the stores
    /// are compacted by this process, with the same result.
    #[arg(long)]
    mapred: bool,
    /// HBase properties, e.g. -D hbase.hstore.compaction.min=2 (after --conf's files).
    #[arg(short = 'D', value_name = "KEY=VALUE")]
    properties: Vec<String>,
    /// HBase's configuration directory: its core-site.xml and hbase-site.xml give properties
    /// as -D does, before the -Ds [default: $HBASE_CONF_DIR].
    #[arg(long = "conf", value_name = "DIR")]
    conf: Option<std::path::PathBuf>,
    /// Print a JSON summary instead of the table.
    #[arg(long)]
    json: bool,
    /// Table, region or family directories (HBase's layout): local paths, `file:///…`, or
    /// `hdfs://host:port/…` (HDFS is in the default build).
    #[arg(required = true)]
    paths: Vec<String>,
}

/// CompactionTool's own properties.
const TOOL: &[&str] = &[
    "hbase.compactiontool.compact.major",
    "hbase.compactiontool.compact.once",
    "hbase.compactiontool.delete",
];

/// Whether `cairn compact` reads `name`.
fn reads(name: &str) -> bool {
    TOOL.contains(&name) || CompactionConfig::PROPERTIES.contains(&name)
}

/// A CompactionTool boolean property: `true` or `false`, as Hadoop's `getBoolean` reads it.
fn tool_bool(p: &crate::site::Property) -> Result<bool> {
    match p.value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => bail!("{}: expected true or false", p.origin()),
    }
}

pub fn run(a: CompactArgs) -> Result<ExitCode> {
    let mut config = CompactionConfig::default();
    let mut major = a.major;
    let mut once = a.once;
    let mut archive = false;
    let site = crate::site::Site::load("compact", a.conf.as_deref(), &a.properties, reads)?;
    for p in site.read(reads)? {
        match p.name.as_str() {
            "hbase.compactiontool.compact.major" => major |= tool_bool(&p)?,
            "hbase.compactiontool.compact.once" => once |= tool_bool(&p)?,
            // false: the replaced files go to HBase's archive directory, as HBase's own
            // compactions leave them, instead of being deleted.
            "hbase.compactiontool.delete" => archive = !tool_bool(&p)?,
            k => config
                .set(k, &p.value)
                .map_err(|e| anyhow::anyhow!("{}: {e}", p.origin()))?,
        }
    }
    if a.mapred {
        tracing::warn!(
            "cairn compact: -mapred: no MapReduce here; the stores are compacted by this process"
        );
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
    let bar = cairn_bench::progress::bytes("compacting", total);
    let mut reports = Vec::new();
    for store in stores {
        let dir = store.uri();
        let r = offline::compact_family_archiving(&store, major, once, &config, archive, |o| {
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
        let round6 = |x: f64| (x * 1e6).round() / 1e6;
        let v = json!({
            "stores": reports.len(),
            "compactions": compactions,
            "files_in": files_in,
            "files_out": files_out,
            "bytes_in": bytes_in,
            "bytes_out": bytes_out,
            "cells_in": cells_in,
            "cells_out": cells_out,
            "wall_s": round6(wall.as_secs_f64()),
            "user_s": round6(user.as_secs_f64()),
            "sys_s": round6(sys.as_secs_f64()),
            "checksum_bytes": ck_bytes,
            "checksum_s": round6(ck_time.as_secs_f64()),
            "checksum_share_pct": (share * 1000.0).round() / 1000.0,
        });
        println!("{v}");
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every listed name is read: a malformed value is refused.
    #[test]
    fn every_listed_name_is_read() {
        for name in CompactionConfig::PROPERTIES {
            let mut c = CompactionConfig::default();
            assert!(c.set(name, "not-a-number").is_err(), "{name}");
        }
        for name in TOOL {
            let p = crate::site::Property {
                name: name.to_string(),
                value: "maybe".into(),
                source: "-D".into(),
            };
            assert!(tool_bool(&p).is_err());
            let src = include_str!("compact.rs");
            assert_eq!(src.matches(&format!("\"{name}\" =>")).count(), 1, "{name}");
        }
        assert!(!reads("hbase.hstore.compaction.minn"));
    }
}
