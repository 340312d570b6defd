//! `cairn importtsv`: HBase's ImportTsv with bulk output, without MapReduce. Lines of the
//! input become cells (the [`parser`]), which an [`external_sort`] puts in HBase's key order
//! in bounded memory; the sorted cells become HFiles split at the table's region boundaries
//! ([`bulk_output`]), ready for `completebulkload`.

mod bulk_output;
mod columns;
mod external_sort;
mod input;
mod options;
mod parser;
mod pipeline;
mod regions;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use cairn_bench::cpu::cpu_times;
use cairn_bench::units::human;
use cairn_cell::{compare_keys, KeyRef};
use cairn_region::{ColumnFamilyDescriptor, TableName};
use clap::Args;

use external_sort::ExternalSorter;
use options::Options;
use parser::LineParser;
use regions::TableLayout;

const AFTER_HELP: &str = "\
HBase's properties (-D NAME=VALUE, or -DNAME=VALUE; also from --conf DIR or $HBASE_CONF_DIR's
hbase-site.xml, which -D overrides; other -D names are warned about once and ignored):
  importtsv.columns=HBASE_ROW_KEY,[HBASE_TS_KEY,]family[:qualifier],...   (required)
  importtsv.bulk.output=DIR        where the HFiles go, DIR/<family>/<32 hex> (required:
                                   cairn does not put into a live table; load the files
                                   with completebulkload)
  importtsv.separator=C            one byte (default tab)
  importtsv.timestamp=MS           the cells' timestamp when there is no HBASE_TS_KEY (now)
  importtsv.skip.bad.lines=BOOL    count bad lines and go on (true); false fails on the first
  importtsv.log.bad.lines=BOOL     print the bad lines themselves too (false)
  importtsv.skip.empty.columns=BOOL  write no cell for an empty field (false)
  no.strict=BOOL                   allow families the table lacks, with default settings
  importtsv.dry.run=BOOL           parse, sort and count every line, write nothing (false)
  hbase.mapreduce.hfileoutputformat.compression / .datablock.encoding   for every family
  hbase.hregion.max.filesize=BYTES roll a family's file at the next row past this size

Region boundaries and family settings (compression, encoding, Bloom type, block size) come
from --data (an embedded store; read only), --splits (one split key per line, families from
importtsv.columns with HBase's defaults) or --thrift (a running cairn: region start keys,
compression and Bloom type); with none of them, one region and default families.";

/// `cairn importtsv [-D NAME=VALUE]... TABLE INPUT`.
#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct ImportTsvArgs {
    /// HBase properties, e.g. -Dimporttsv.columns=HBASE_ROW_KEY,f:a.
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    properties: Vec<String>,
    /// HBase's configuration directory: its core-site.xml and hbase-site.xml give properties
    /// as -D does, before the -Ds [default: $HBASE_CONF_DIR].
    #[arg(long = "conf", value_name = "DIR")]
    conf: Option<PathBuf>,
    /// The embedded store holding TABLE: its region boundaries and family settings.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["splits", "thrift"])]
    data: Option<PathBuf>,
    /// Region split keys, one per line.
    #[arg(long, value_name = "FILE", conflicts_with = "thrift")]
    splits: Option<PathBuf>,
    /// A running cairn's Thrift address, HOST:PORT.
    #[arg(long, value_name = "HOST:PORT")]
    thrift: Option<String>,
    /// Memory for sorting before runs spill to disk: bytes, or with K, M, G (KiB...). Half of
    /// it fills while the other half is sorted and written on a second thread.
    #[arg(long, value_name = "SIZE", default_value = "64M")]
    sort_memory: String,
    /// Where sorted runs spill (default: inside the output directory).
    #[arg(long, value_name = "DIR")]
    tmp_dir: Option<PathBuf>,
    /// TABLE INPUT: the table, and a file or a directory of files.
    #[arg(value_name = "TABLE INPUT")]
    args: Vec<String>,
}

/// `256M`, `1G`, `4096`: binary units.
fn parse_size(s: &str) -> Result<usize> {
    let t = s.trim().to_ascii_uppercase();
    let t = t
        .strip_suffix("IB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(&t);
    let (digits, shift) = match t.chars().last() {
        Some('K') => (&t[..t.len() - 1], 10),
        Some('M') => (&t[..t.len() - 1], 20),
        Some('G') => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    let n: usize = digits
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("--sort-memory {s}: expected a size such as 256M"))?;
    n.checked_shl(shift)
        .filter(|v| *v >> shift == n && *v > 0)
        .ok_or_else(|| anyhow::anyhow!("--sort-memory {s}: out of range"))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn key_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    compare_keys(&KeyRef::from_valid(a), &KeyRef::from_valid(b))
}

/// Runs `cairn importtsv`: exit code 2 for bad usage (HBase's messages), 1 when the input
/// cannot be read or the output written (or a bad line with `importtsv.skip.bad.lines=false`).
pub fn run(a: ImportTsvArgs) -> Result<ExitCode> {
    let usage = |e: anyhow::Error| Ok(crate::usage_error("importtsv", &e));
    if a.args.len() != 2 {
        return usage(anyhow::anyhow!(
            "Wrong number of arguments: {}\nUsage: cairn importtsv -Dimporttsv.columns=a,b,c \
             -Dimporttsv.bulk.output=DIR <tablename> <inputdir>",
            a.args.len()
        ));
    }
    let started = Instant::now();
    let cpu0 = cpu_times();
    let now = now_ms();
    let site = crate::site::Site::load(
        "importtsv",
        a.conf.as_deref(),
        &a.properties,
        options::reads,
    )
    .and_then(|s| s.read(options::reads));
    let o = match site.and_then(|props| Options::parse(&props, now)) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let budget = match parse_size(&a.sort_memory) {
        Ok(b) => b,
        Err(e) => return usage(e),
    };
    let table = match TableName::parse(&a.args[0]) {
        Ok(t) => t,
        Err(e) => return usage(e.into()),
    };
    let input = Path::new(&a.args[1]);
    let files = input::input_files(input)?;
    let wanted = o.columns.families();
    let mut layout = if let Some(root) = &a.data {
        TableLayout::from_store(root, &table)?
    } else if let Some(path) = &a.splits {
        TableLayout::from_splits_file(path, &wanted)?
    } else if let Some(addr) = &a.thrift {
        TableLayout::from_thrift(addr, &table)?
    } else {
        TableLayout::single_region(&wanted)
    };
    let missing: Vec<String> = wanted
        .iter()
        .filter(|f| !layout.families.contains_key(*f))
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    if !missing.is_empty() {
        if !o.no_strict {
            let have: Vec<String> = layout
                .families
                .keys()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect();
            return usage(anyhow::anyhow!(
                "Column Families [{}] specified in importtsv.columns does not match with any of \
                 the table {table} column families [{}].",
                missing.join(", "),
                have.join(", ")
            ));
        }
        for f in &wanted {
            layout
                .families
                .entry(f.clone())
                .or_insert_with(|| ColumnFamilyDescriptor::new(f));
        }
    }
    let source = layout.source.clone();
    let regions = layout.split_keys.len() + 1;

    let out_dir = PathBuf::from(&o.bulk_output);
    let (compression, encoding) = (o.compression, o.encoding);
    // A dry run creates nothing where the output would go: its sorted runs spill into a
    // temporary directory (or --tmp-dir), removed when it ends.
    let (output, dry_run_tmp) = if o.dry_run {
        (None, Some(tempfile::tempdir()?))
    } else {
        let output = bulk_output::BulkOutput::create(
            &out_dir,
            layout,
            |f| {
                if let Some(c) = compression {
                    f.compression = c;
                }
                if let Some(e) = encoding {
                    f.data_block_encoding = e;
                }
            },
            o.max_file_size,
        )?;
        (Some(output), None)
    };
    let tmp_parent = match (&a.tmp_dir, &dry_run_tmp) {
        (Some(dir), _) => dir.clone(),
        (None, Some(tmp)) => tmp.path().to_path_buf(),
        (None, None) => out_dir.join("_temporary"),
    };
    let parser = LineParser::new(
        o.columns.clone(),
        o.separator,
        o.timestamp,
        o.skip_empty_columns,
        now,
    );
    let imported = ExternalSorter::new(key_order, budget, &tmp_parent)
        .and_then(|sorter| pipeline::import(&files, parser, &o, sorter, output, started));
    // The output directory is this run's (it must not exist before): a failed run leaves
    // nothing behind, so it can be run again as it was.
    let pipeline::Outcome {
        counts: c,
        files: written,
        runs,
        spilled,
        read_secs,
    } = match imported {
        Ok(outcome) => outcome,
        Err(e) => {
            if !o.dry_run {
                let _ = std::fs::remove_dir_all(&out_dir);
            }
            return Err(e);
        }
    };
    let wall = started.elapsed().as_secs_f64();
    let (user, sys) = cpu_times();
    let cpu = (user - cpu0.0) + (sys - cpu0.1);
    let bytes: u64 = written.iter().map(|f| f.bytes).sum();
    let regions_written: std::collections::BTreeSet<usize> =
        written.iter().map(|f| f.region).collect();

    println!("ImportTsv");
    println!("\tBad Lines={}", c.bad_lines);
    println!("| | |");
    println!("|---|---|");
    println!("| table | {table} ({regions} regions: {source}) |");
    println!(
        "| input | {} files, {}, {} lines |",
        files.len(),
        human(c.input_bytes),
        c.lines
    );
    println!("| bad lines | {} |", c.bad_lines);
    println!(
        "| rows / cells | {} / {} ({} equal cells dropped) |",
        c.rows, c.cells, c.duplicates
    );
    println!(
        "| sort | {} runs spilled ({}), memory {} |",
        runs,
        human(spilled),
        human(budget as u64)
    );
    if o.dry_run {
        println!("| output | none: importtsv.dry.run=true |");
    } else {
        println!(
            "| output | {} files, {}, {} regions, in {} |",
            written.len(),
            human(bytes),
            regions_written.len(),
            out_dir.display()
        );
    }
    println!(
        "| time | {wall:.3} s wall ({read_secs:.3} s reading and sorting), {:.3} s CPU |",
        cpu.as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("256M").unwrap(), 256 << 20);
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        assert_eq!(parse_size("64KiB").unwrap(), 64 << 10);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("0").is_err());
        assert!(parse_size("lots").is_err());
    }
}
