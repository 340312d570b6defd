//! `cairn pe`: HBase's PerformanceEvaluation (`hbase pe`) against the embedded region store.
//!
//! Same command names, options (`--rows=N`, `--valueSize=N`, … spelled as PE spells them),
//! row keys (26-digit zero-padded decimals), table (`TestTable`, family `info0`, qualifier `0`)
//! and per-client key ranges as PE's `--nomapred` mode: N client threads in this process share
//! one `RegionServer`. The report adds what PE leaves to other tools: latency percentiles from
//! an HDR histogram, the process's CPU time and rows per CPU-second.

mod client;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use cairn_blockcache::{BlockCacheConfig, BucketCacheConfig, CacheStats};
use cairn_filter::{Filter, ReturnCode};
use cairn_hfile::encoding::DataBlockEncoding;
use cairn_hfile::{BloomType, CellRef, Compression};
use cairn_region::{ColumnFamilyDescriptor, RegionServer, Scan, TableDescriptor, TableName};
use clap::builder::BoolishValueParser;
use clap::{ArgAction, Args, ValueEnum};
use hdrhistogram::Histogram;
use indicatif::ProgressBar;
use serde_json::json;

use crate::bench::{cpu_times, human, parse_size, seed, Store};
use client::ClientResult;

/// PE's `ROW_LENGTH`: keys are this many decimal digits.
pub const ROW_LENGTH: usize = 26;
/// PE's `FAMILY_NAME_BASE`: families are `info0`, `info1`, ….
pub const FAMILY_NAME_BASE: &str = "info";
/// PE's default rows per client: `ONE_GB / DEFAULT_VALUE_LENGTH` = 1,048,576.
const DEFAULT_ROWS: u64 = 1024 * 1024 * 1000 / 1000;

/// PE's `format(int)`: the row number as 26 zero-padded decimal digits, filled from the right
/// as PE does (`format!` was ~8% of the client thread's profile in randomRead; the peers'
/// benches fill their keys the same way as this).
pub fn format_row(mut n: u64) -> Vec<u8> {
    let mut row = vec![b'0'; ROW_LENGTH];
    for d in row.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    row
}

/// HBase's `FilterAllFilter`: every cell skipped and every row dropped on the server, so
/// nothing comes back (`--filterAll`).
#[derive(Debug, Clone, Copy)]
pub struct FilterAllFilter;

impl Filter for FilterAllFilter {
    fn filter_row_key(&mut self, _row: &[u8]) -> bool {
        false
    }
    fn filter_cell(&mut self, _cell: &CellRef<'_>) -> ReturnCode {
        ReturnCode::Skip
    }
    fn has_filter_row(&self) -> bool {
        true
    }
    fn filter_row(&mut self) -> bool {
        true
    }
}

/// PE's commands (those of `hbase pe` that have an embedded equivalent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PeCommand {
    /// Write rows in order, each client its own range.
    #[value(name = "sequentialWrite")]
    SequentialWrite,
    /// Write rows at random over the whole key space.
    #[value(name = "randomWrite")]
    RandomWrite,
    /// Get rows in order, each client its own range.
    #[value(name = "sequentialRead")]
    SequentialRead,
    /// Get random rows (`--multiGet=N` batches them).
    #[value(name = "randomRead")]
    RandomRead,
    /// Scan up to 120 rows from a random row (PageFilter(120) in a WhileMatchFilter).
    #[value(name = "randomSeekScan")]
    RandomSeekScan,
    /// One scanner per client from its first row, one row per step.
    #[value(name = "scan")]
    Scan,
    /// Scan [random, random + 10).
    #[value(name = "scanRange10")]
    ScanRange10,
    /// Scan [random, random + 100).
    #[value(name = "scanRange100")]
    ScanRange100,
    /// Scan [random, random + 1000).
    #[value(name = "scanRange1000")]
    ScanRange1000,
    /// Scan [random, random + 10000).
    #[value(name = "scanRange10000")]
    ScanRange10000,
    /// A full-table scan per step with a SingleColumnValueFilter on a random value (use small
    /// --rows).
    #[value(name = "filterScan")]
    FilterScan,
    /// Increment a counter in every row; clients overlap on the key space.
    #[value(name = "increment")]
    Increment,
    /// Append the row key to a column of every row; clients overlap on the key space.
    #[value(name = "append")]
    Append,
    /// Put a value then check-and-put on it in every row; clients overlap on the key space.
    #[value(name = "checkAndPut")]
    CheckAndPut,
}

impl PeCommand {
    /// PE's test class, as its reports name it.
    pub fn class_name(self) -> &'static str {
        match self {
            PeCommand::SequentialWrite => "SequentialWriteTest",
            PeCommand::RandomWrite => "RandomWriteTest",
            PeCommand::SequentialRead => "SequentialReadTest",
            PeCommand::RandomRead => "RandomReadTest",
            PeCommand::RandomSeekScan => "RandomSeekScanTest",
            PeCommand::Scan => "ScanTest",
            PeCommand::ScanRange10 => "RandomScanWithRange10Test",
            PeCommand::ScanRange100 => "RandomScanWithRange100Test",
            PeCommand::ScanRange1000 => "RandomScanWithRange1000Test",
            PeCommand::ScanRange10000 => "RandomScanWithRange10000Test",
            PeCommand::FilterScan => "FilteredScanTest",
            PeCommand::Increment => "IncrementTest",
            PeCommand::Append => "AppendTest",
            PeCommand::CheckAndPut => "CheckAndPutTest",
        }
    }

    /// The command's name on the command line.
    pub fn name(self) -> String {
        self.to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }

    /// PE's `CASTableTest`s: every client works rows `0..rows`.
    pub fn is_cas(self) -> bool {
        matches!(
            self,
            PeCommand::Increment | PeCommand::Append | PeCommand::CheckAndPut
        )
    }

    /// PE's `checkTable`: a command whose name contains "read" or "scan" needs data.
    pub fn is_read(self) -> bool {
        let n = self.name().to_ascii_lowercase();
        n.contains("read") || n.contains("scan")
    }

    fn scan_range(self) -> u64 {
        match self {
            PeCommand::ScanRange10 => 10,
            PeCommand::ScanRange100 => 100,
            PeCommand::ScanRange1000 => 1000,
            PeCommand::ScanRange10000 => 10000,
            _ => 0,
        }
    }
}

const AFTER_HELP: &str = "\
Options take PE's spelling, with '=' for values (--rows=1000, --writeToWAL=false); true/false
options given bare mean true (--inmemory, --filterAll, --latency).

Data: --data=DIR keeps the table between runs (HBase's directory layout); without it each run
uses a fresh temporary directory, deleted at exit unless --keep. Write commands create the table
if missing (--presplit=N recreates it with N regions, split evenly over the key space, as PE
does). Read commands (randomRead, scan, …) on a missing or empty table first load it with
sequentialWrite over the same key space (--rows x nclients rows), untimed, and flush it, then run:
PE itself would stop with \"Run a write command first\"; an embedded run would otherwise never
have data. Reads of rows outside what was written come back empty and are counted as misses.

Writes: as in PE, --autoFlush=false (the default) buffers each client's puts as HBase's
BufferedMutator does and applies them in one batch once --bufferSize bytes are buffered (one WAL
record and sync per region's batch), and at the end of the run; --autoFlush=true applies each
put on its own, or N at a time with --multiPut=N (PE ignores --multiPut without --autoFlush=true).

Embedded differences: --caching has no effect (the scanner streams rows); --cacheBlocks=false reads data blocks without adding them to the block
cache (index and Bloom blocks are cached, as in HBase); append is a get followed by checkAndPut, retried when another client
changed the cell in between (cairn-region has no Append); --blockEncoding takes NONE, PREFIX,
DIFF, FAST_DIFF and ROW_INDEX_V1. Latency is always recorded (per request, in microseconds; --multiGet batches count
as one request); --latency adds per-client percentiles. CPU time is the whole process's,
background flushes and compactions included.

Example: cairn pe --rows=100000 --valueSize=100 --data=/tmp/pe --presplit=4 sequentialWrite 2
         cairn pe --rows=100000 --data=/tmp/pe randomRead 2";

fn bool_opt() -> BoolishValueParser {
    BoolishValueParser::new()
}

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct PeArgs {
    /// Rows each client runs (PE: perClientRunRows).
    #[arg(long, default_value_t = DEFAULT_ROWS, value_name = "N")]
    rows: u64,
    /// Bytes per value.
    #[arg(
        long = "valueSize",
        alias = "value-size",
        default_value_t = 1000,
        value_name = "N"
    )]
    value_size: usize,
    /// Vary value sizes uniformly between 0 and --valueSize.
    #[arg(long = "valueRandom", action = ArgAction::Set, num_args = 0..=1, require_equals = true,
          default_value = "false", default_missing_value = "true", value_parser = bool_opt(),
          value_name = "BOOL")]
    value_random: bool,
    /// Create the table with N regions split evenly over the key space (recreates an existing
    /// table for write commands, as PE does).
    #[arg(long, default_value_t = 0, value_name = "N")]
    presplit: u32,
    /// Compression: NONE, GZ, SNAPPY, LZ4, ZSTD.
    #[arg(long, default_value = "NONE", value_name = "ALGO")]
    compress: String,
    /// Data block encoding: NONE, PREFIX, DIFF, FAST_DIFF or ROW_INDEX_V1.
    #[arg(long = "blockEncoding", default_value = "NONE", value_name = "ENC")]
    block_encoding: String,
    /// Bloom filter: NONE, ROW, ROWCOL.
    #[arg(long = "bloomFilter", default_value = "ROW", value_name = "TYPE")]
    bloom_filter: String,
    /// HFile block size in bytes.
    #[arg(long = "blockSize", default_value_t = 65536, value_name = "BYTES")]
    block_size: usize,
    /// IN_MEMORY family: its blocks go to the cache's in-memory share.
    #[arg(long = "inmemory", action = ArgAction::Set, num_args = 0..=1, require_equals = true,
          default_value = "false", default_missing_value = "true", value_parser = bool_opt(),
          value_name = "BOOL")]
    inmemory: bool,
    /// Add HBase's FilterAllFilter to reads: the server reads everything, returns nothing.
    #[arg(long = "filterAll", action = ArgAction::Set, num_args = 0..=1, require_equals = true,
          default_value = "false", default_missing_value = "true", value_parser = bool_opt(),
          value_name = "BOOL")]
    filter_all: bool,
    /// Scan caching (rows per round trip): accepted, no effect embedded.
    #[arg(long, default_value_t = 30, value_name = "N")]
    caching: usize,
    /// Cache data blocks read by scans and gets (false: read them without caching, HBase's
    /// setCacheBlocks(false)).
    #[arg(long = "cacheBlocks", action = ArgAction::Set, num_args = 0..=1, require_equals = true,
          default_value = "true", default_missing_value = "true", value_parser = bool_opt(),
          value_name = "BOOL")]
    cache_blocks: bool,
    /// Apply each put when it is made (false: buffer puts as HBase's BufferedMutator does and
    /// apply them in batches of --bufferSize bytes).
    #[arg(long = "autoFlush", action = ArgAction::Set, num_args = 0..=1, require_equals = true,
          default_value = "false", default_missing_value = "true", value_parser = bool_opt(),
          value_name = "BOOL")]
    auto_flush: bool,
    /// Client write buffer in bytes for --autoFlush=false (hbase.client.write.buffer).
    #[arg(long = "bufferSize", default_value_t = 2 * 1024 * 1024, value_name = "BYTES")]
    buffer_size: usize,
    /// Write puts to the WAL (SYNC_WAL); false: SKIP_WAL.
    #[arg(long = "writeToWAL", action = ArgAction::Set, num_args = 0..=1, require_equals = true,
          default_value = "true", default_missing_value = "true", value_parser = bool_opt(),
          value_name = "BOOL")]
    write_to_wal: bool,
    /// Also print each client's latency percentiles.
    #[arg(long = "latency", action = ArgAction::Set, num_args = 0..=1, require_equals = true,
          default_value = "false", default_missing_value = "true", value_parser = bool_opt(),
          value_name = "BOOL")]
    latency: bool,
    /// Run on this fraction of rows (every 1/rate-th row).
    #[arg(long = "sampleRate", default_value_t = 1.0, value_name = "RATE")]
    sample_rate: f64,
    /// Table name.
    #[arg(long, default_value = "TestTable", value_name = "NAME")]
    table: String,
    /// randomRead: batch gets in groups of N.
    #[arg(long = "multiGet", default_value_t = 0, value_name = "N")]
    multi_get: usize,
    /// Writes: batch puts in groups of N.
    #[arg(long = "multiPut", default_value_t = 0, value_name = "N")]
    multi_put: usize,
    /// Columns per row (qualifiers 0, 1, …).
    #[arg(long, default_value_t = 1, value_name = "N")]
    columns: u32,
    /// Column families (info0, info1, …).
    #[arg(long, default_value_t = 1, value_name = "N")]
    families: u32,
    /// First row of client 0 (the others follow at multiples of --rows).
    #[arg(long = "startRow", default_value_t = 0, value_name = "N")]
    start_row: u64,
    /// Accepted for PE compatibility: clients are always threads.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true,
          default_value = "true", default_missing_value = "true", value_parser = bool_opt(),
          value_name = "BOOL")]
    nomapred: bool,
    /// Directory of the store (kept); default a temporary directory.
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Keep the temporary directory and print its path.
    #[arg(long)]
    keep: bool,
    /// L1 block cache size (hfile.block.cache.size), e.g. 1GiB, 512MiB.
    #[arg(long = "blockCacheSize", default_value = "1GiB", value_name = "SIZE")]
    block_cache_size: String,
    /// Add an off-heap L2 bucket cache of this size for data blocks (hbase.bucketcache.size).
    #[arg(long = "bucketCacheSize", value_name = "SIZE")]
    bucket_cache_size: Option<String>,
    /// Before the timed run, scan the whole table once (untimed) so its blocks are in the block
    /// cache, as a long-running server's would be (cairn's own; not a PE option).
    #[arg(long = "warmCache")]
    warm_cache: bool,
    /// Print one JSON object instead of the report.
    #[arg(long)]
    json: bool,
    /// The test to run.
    #[arg(value_name = "COMMAND")]
    command: PeCommand,
    /// Client threads.
    #[arg(value_name = "NCLIENTS", value_parser = clap::value_parser!(u32).range(1..=500))]
    nclients: u32,
}

/// The resolved options every client reads.
#[derive(Clone, Debug)]
pub struct Settings {
    pub command: PeCommand,
    pub clients: usize,
    pub rows: u64,
    /// PE's `totalRows`: `rows × nclients`, the key space random commands draw from.
    pub total_rows: u64,
    pub start_row: u64,
    pub value_size: usize,
    pub value_random: bool,
    pub families: u32,
    pub columns: u32,
    pub sample_rate: f64,
    pub multi_get: usize,
    pub multi_put: usize,
    /// PE's `autoFlush`: false buffers puts ([`Settings::buffer_size`] bytes per batch).
    pub auto_flush: bool,
    pub buffer_size: usize,
    pub filter_all: bool,
    pub caching: usize,
    pub cache_blocks: bool,
    pub write_to_wal: bool,
}

struct Plan {
    settings: Settings,
    table: TableName,
    descriptor: TableDescriptor,
    presplit: u32,
    cache: BlockCacheConfig,
}

fn plan(a: &PeArgs) -> Result<Plan> {
    if a.rows == 0 {
        bail!("--rows must be at least 1");
    }
    if !(a.sample_rate > 0.0 && a.sample_rate <= 1.0) {
        bail!("--sampleRate={} must be in (0, 1]", a.sample_rate);
    }
    if a.columns == 0 || a.families == 0 {
        bail!("--columns and --families must be at least 1");
    }
    if a.caching == 0 {
        bail!("--caching must be at least 1");
    }
    if a.buffer_size == 0 {
        bail!("--bufferSize must be at least 1 byte");
    }
    let encoding =
        DataBlockEncoding::from_name(a.block_encoding.trim().to_ascii_uppercase().as_bytes())
                        .with_context(|| {
                format!(
                    "--blockEncoding={}: not supported (cairn reads and writes NONE, PREFIX, DIFF, FAST_DIFF and ROW_INDEX_V1)",
                    a.block_encoding
                )
            })?;
    let compression: Compression = a
        .compress
        .parse()
        .map_err(|e| anyhow::anyhow!("--compress={}: {e}", a.compress))?;
    if !compression.is_supported() {
        bail!(
            "--compress={}: this compression is not supported",
            a.compress
        );
    }
    let bloom: BloomType = a
        .bloom_filter
        .parse()
        .map_err(|e| anyhow::anyhow!("--bloomFilter={}: {e}", a.bloom_filter))?;
    let table = TableName::parse(&a.table).map_err(|e| anyhow::anyhow!("--table: {e}"))?;
    let total_rows = a
        .rows
        .checked_mul(a.nclients as u64)
        .filter(|&t| t <= i32::MAX as u64)
        .with_context(|| {
            format!(
                "--rows={} x {} clients is past PE's key space of 2^31 - 1 rows",
                a.rows, a.nclients
            )
        })?;
    if a.presplit as u64 > total_rows {
        bail!(
            "--presplit={} is more regions than rows ({total_rows})",
            a.presplit
        );
    }
    let mut descriptor = TableDescriptor::new(table.clone());
    for f in 0..a.families {
        let mut cf = ColumnFamilyDescriptor::new(format!("{FAMILY_NAME_BASE}{f}"))
            .compression(compression)
            .bloom_type(bloom)
            .block_size(a.block_size);
        cf.in_memory = a.inmemory;
        cf.data_block_encoding = encoding;
        descriptor = descriptor.with_family(cf);
    }
    descriptor
        .validate()
        .map_err(|e| anyhow::anyhow!("table options: {e}"))?;
    let l1 = parse_size("--blockCacheSize", &a.block_cache_size)?;
    let l2 = match &a.bucket_cache_size {
        Some(s) => Some(BucketCacheConfig {
            capacity: parse_size("--bucketCacheSize", s)?,
            ..BucketCacheConfig::default()
        }),
        None => None,
    };
    Ok(Plan {
        settings: Settings {
            command: a.command,
            clients: a.nclients as usize,
            rows: a.rows,
            total_rows,
            start_row: a.start_row,
            value_size: a.value_size,
            value_random: a.value_random,
            families: a.families,
            columns: a.columns,
            sample_rate: a.sample_rate,
            multi_get: a.multi_get,
            multi_put: a.multi_put,
            auto_flush: a.auto_flush,
            buffer_size: a.buffer_size,
            filter_all: a.filter_all,
            caching: a.caching,
            cache_blocks: a.cache_blocks,
            write_to_wal: a.write_to_wal,
        },
        table,
        descriptor,
        presplit: a.presplit,
        cache: BlockCacheConfig { l1_size: l1, l2 },
    })
}

/// PE's `getSplits`: `presplit - 1` keys at multiples of `totalRows / presplit`.
fn split_keys(presplit: u32, total_rows: u64) -> Vec<Vec<u8>> {
    if presplit <= 1 {
        return Vec::new();
    }
    let jump = total_rows / presplit as u64;
    (1..presplit as u64).map(|i| format_row(jump * i)).collect()
}

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
    let base = seed();
    let started = Instant::now();
    let results: Vec<Result<ClientResult>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..settings.clients)
            .map(|i| {
                let (shared, abort) = (&shared, &abort);
                std::thread::Builder::new()
                    .name(format!("TestClient-{i}"))
                    .spawn_scoped(scope, move || {
                        let mut rng = client::Rng::new(base.wrapping_add(i as u64));
                        let r = client::run(shared, i, rng.next_u64());
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

fn table_is_empty(server: &RegionServer, table: &TableName) -> Result<bool> {
    let mut s = server.scanner(table, Scan::new().limit(1))?;
    Ok(s.next_row()?.is_none())
}

/// PE's `checkTable`, embedded: create (or, with --presplit on a write command, recreate) the
/// table; for read commands load a missing or empty table first. Returns notes for the report.
fn prepare_table(server: &Arc<RegionServer>, p: &Plan, quiet: bool) -> Result<Vec<String>> {
    let s = &p.settings;
    let mut notes = Vec::new();
    let exists = server.table(&p.table).is_ok();
    let splits = split_keys(p.presplit, s.total_rows);
    let mut say = |n: String| {
        if !quiet {
            eprintln!("cairn pe: {n}");
        }
        notes.push(n);
    };
    if exists && p.presplit > 0 && !s.command.is_read() {
        say(format!(
            "--presplit={}: dropping and recreating table {}",
            p.presplit, p.table
        ));
        if server.is_table_enabled(&p.table)? {
            server.disable_table(&p.table)?;
        }
        server.delete_table(&p.table)?;
    }
    if server.table(&p.table).is_err() {
        server
            .create_table(p.descriptor.clone(), &splits)
            .with_context(|| format!("creating table {}", p.table))?;
        say(format!(
            "created table {} ({} region{})",
            p.table,
            splits.len() + 1,
            if splits.is_empty() { "" } else { "s" }
        ));
    } else if !server.is_table_enabled(&p.table)? {
        server.enable_table(&p.table)?;
    }
    if s.command.is_read() && table_is_empty(server, &p.table)? {
        let mut load = s.clone();
        load.command = PeCommand::SequentialWrite;
        load.sample_rate = 1.0;
        load.multi_put = 0;
        // Loads go through the write buffer, as a user's PE sequentialWrite would by default.
        load.auto_flush = false;
        say(format!(
            "table {} is empty: loading {} rows with sequentialWrite ({} x {}) first, not timed, \
             then flushing",
            p.table, s.total_rows, s.clients, s.rows
        ));
        let bar = crate::progress::count("loading", s.total_rows);
        let t = Instant::now();
        run_clients(server, &p.table, &load, &bar).context("loading the table")?;
        server.flush_table(&p.table)?;
        bar.finish_and_clear();
        say(format!(
            "loaded {} rows in {:.3} s",
            s.total_rows,
            t.elapsed().as_secs_f64()
        ));
    }
    Ok(notes)
}

/// Latency summary in microseconds.
struct Latency {
    count: u64,
    mean: f64,
    p50: u64,
    p75: u64,
    p95: u64,
    p99: u64,
    p999: u64,
    max: u64,
}

impl Latency {
    fn of(h: &Histogram<u64>) -> Latency {
        let q = |x: f64| {
            if h.is_empty() {
                0
            } else {
                h.value_at_quantile(x)
            }
        };
        Latency {
            count: h.len(),
            mean: if h.is_empty() { 0.0 } else { h.mean() },
            p50: q(0.50),
            p75: q(0.75),
            p95: q(0.95),
            p99: q(0.99),
            p999: q(0.999),
            max: if h.is_empty() { 0 } else { h.max() },
        }
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "count": self.count, "mean": round3(self.mean), "p50": self.p50, "p75": self.p75,
            "p95": self.p95, "p99": self.p99, "p99_9": self.p999, "max": self.max,
        })
    }

    fn line(&self) -> String {
        format!(
            "{} / {} / {} / {} / {} / {} (mean {:.1}, {} requests)",
            self.p50, self.p75, self.p95, self.p99, self.p999, self.max, self.mean, self.count
        )
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// PE's `calculateMbps`: rows × (key + values with family and qualifier) per second.
fn mb_per_s(s: &Settings, rows: u64, elapsed: Duration) -> f64 {
    let value = if s.value_random {
        s.value_size / 2
    } else {
        s.value_size
    };
    let row_size = ROW_LENGTH
        + (value + FAMILY_NAME_BASE.len() + 1 + 1) * s.columns as usize * s.families as usize;
    let secs = elapsed.as_secs_f64().max(1e-9);
    rows as f64 * row_size as f64 / secs / (1024.0 * 1024.0)
}

fn per_s(n: u64, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64().max(1e-9)
}

fn cache_totals(server: &RegionServer) -> Option<CacheStats> {
    server.block_cache().map(|c| c.stats().2)
}

pub fn run(a: PeArgs) -> Result<ExitCode> {
    // Bad option values are bad usage (exit 2), as clap's own errors are.
    let p = match plan(&a) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cairn pe: error: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    let s = &p.settings;
    let mut notes = Vec::new();
    if a.caching != 30 {
        notes.push("--caching has no effect embedded: the scanner streams rows".to_string());
    }
    if s.multi_get > 0 && s.command != PeCommand::RandomRead {
        notes.push("--multiGet applies to randomRead only".to_string());
    }
    if s.multi_put > 0
        && !matches!(
            s.command,
            PeCommand::SequentialWrite | PeCommand::RandomWrite
        )
    {
        notes.push("--multiPut applies to sequentialWrite and randomWrite only".to_string());
    }
    if s.multi_put > 0 && !s.auto_flush {
        notes.push(
            "--multiPut needs --autoFlush=true (as in PE): puts go through the write buffer"
                .to_string(),
        );
    }
    for n in &notes {
        eprintln!("cairn pe: note: {n}");
    }

    // The store: a directory of the user's, or a temporary one.
    let store = Store::open("pe", a.data.as_deref(), a.keep, p.cache.clone())?;
    let (server, root, data_note) = (&store.server, &store.root, &store.data_note);
    let outcome = (|| -> Result<()> {
        notes.extend(prepare_table(server, &p, false)?);
        let regions = server.table(&p.table)?.regions.len();
        if a.warm_cache {
            let mut scanner = server.scanner(&p.table, Scan::new())?;
            while scanner.next_row()?.is_some() {}
        }
        let cache0 = cache_totals(server);
        let bar = crate::progress::count(&s.command.name(), s.rows * s.clients as u64);
        let wal0 = server.wal().stats().appends;
        let cpu0 = cpu_times();
        let (results, wall) = run_clients(server, &p.table, s, &bar)?;
        let cpu1 = cpu_times();
        bar.finish_and_clear();
        let cache1 = cache_totals(server);
        let wal_appends = server.wal().stats().appends.saturating_sub(wal0);
        let (user, sys) = (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1);
        report(
            &a,
            &p,
            regions,
            &results,
            wall,
            (user, sys),
            wal_appends,
            (cache0, cache1),
            root,
            data_note,
            &notes,
        );
        Ok(())
    })();
    store.finish(outcome, a.json)?;
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::too_many_arguments)]
fn report(
    a: &PeArgs,
    p: &Plan,
    regions: usize,
    results: &[ClientResult],
    wall: Duration,
    (user, sys): (Duration, Duration),
    wal_appends: u64,
    (cache0, cache1): (Option<CacheStats>, Option<CacheStats>),
    root: &std::path::Path,
    data_note: &str,
    notes: &[String],
) {
    let s = &p.settings;
    let class = s.command.class_name();
    let mut all = Histogram::<u64>::new(3).expect("valid precision");
    for r in results {
        let _ = all.add(&r.latency);
    }
    let lat = Latency::of(&all);
    let ops: u64 = results.iter().map(|r| r.ops).sum();
    let returned: u64 = results.iter().map(|r| r.rows_returned).sum();
    let misses: u64 = results.iter().map(|r| r.misses).sum();
    let busy: u64 = results.iter().map(|r| r.busy_waits).sum();
    let cas: u64 = results.iter().map(|r| r.cas_failures).sum();
    let cpu = (user + sys).as_secs_f64();
    let rows_per_cpu = if cpu > 0.0 { ops as f64 / cpu } else { 0.0 };
    // PE's "Avg TPS": the sum of each client's rows per second.
    let sum_client_rate: f64 = results.iter().map(|r| per_s(r.ops, r.elapsed)).sum();
    let (hits, lookups) = match (&cache0, &cache1) {
        (Some(c0), Some(c1)) => {
            let h = c1.hit_count.saturating_sub(c0.hit_count);
            let m = c1.miss_count.saturating_sub(c0.miss_count);
            (h, h + m)
        }
        _ => (0, 0),
    };
    let is_read = s.command.is_read();
    let counts_misses = matches!(s.command, PeCommand::RandomRead | PeCommand::SequentialRead);
    if a.json {
        let clients: Vec<_> = results
            .iter()
            .map(|r| {
                json!({
                    "client": r.index, "offset": r.offset, "rows": r.rows, "ops": r.ops,
                    "elapsed_ms": r.elapsed.as_millis() as u64,
                    "rows_per_s": round3(per_s(r.ops, r.elapsed)),
                    "mb_per_s": round3(mb_per_s(s, r.ops, r.elapsed)),
                    "rows_returned": r.rows_returned, "misses": r.misses,
                    "latency_us": Latency::of(&r.latency).json(),
                })
            })
            .collect();
        let v = json!({
            "command": s.command.name(),
            "test": class,
            "clients": s.clients,
            "rows_per_client": s.rows,
            "total_rows": s.total_rows,
            "table": p.table.to_string(),
            "regions": regions,
            "value_size": s.value_size,
            "data_dir": root.display().to_string(),
            "ops": ops,
            "rows_returned": returned,
            "misses": misses,
            "busy_waits": busy,
            "cas_failures": cas,
            "wal_appends": wal_appends,
            "wall_s": round3(wall.as_secs_f64()),
            "rows_per_s": round3(per_s(ops, wall)),
            "sum_client_rows_per_s": round3(sum_client_rate),
            "latency_us": lat.json(),
            "cpu": {"user_s": round3(user.as_secs_f64()), "sys_s": round3(sys.as_secs_f64())},
            "rows_per_cpu_s": round3(rows_per_cpu),
            "block_cache": {
                "lookups": lookups, "hits": hits,
                "hit_ratio": if lookups > 0 { round3(hits as f64 / lookups as f64) } else { 0.0 },
                "size_bytes": cache1.as_ref().map_or(0, |c| c.size),
                "blocks": cache1.as_ref().map_or(0, |c| c.block_count),
            },
            "per_client": clients,
            "notes": notes,
        });
        println!("{v}");
        return;
    }
    for r in results {
        println!(
            "Finished {class} in {} ms at offset {} for {} rows ({:.0} rows/s, {:.2} MB/s)",
            r.elapsed.as_millis(),
            r.offset,
            r.ops,
            per_s(r.ops, r.elapsed),
            mb_per_s(s, r.ops, r.elapsed)
        );
        if a.latency {
            println!(
                "  client {} latency (us) p50 / p75 / p95 / p99 / p99.9 / max: {}",
                r.index,
                Latency::of(&r.latency).line()
            );
        }
    }
    println!();
    println!("| {class} | |");
    println!("|---|---|");
    println!(
        "| clients x rows | {} x {} (key space {} rows; table {}, {regions} region{}) |",
        s.clients,
        s.rows,
        s.total_rows,
        p.table,
        if regions == 1 { "" } else { "s" }
    );
    println!("| data | {} ({data_note}) |", root.display());
    println!("| operations | {ops} |");
    if is_read {
        if counts_misses {
            println!("| rows found / missing | {returned} / {misses} |");
        } else {
            println!("| rows returned | {returned} |");
        }
    }
    if wal_appends > 0 {
        println!("| WAL records appended | {wal_appends} |");
    }
    if busy > 0 {
        println!("| waits on a busy region | {busy} |");
    }
    if s.command.is_cas() && cas > 0 {
        println!("| check-and-put misses / append retries | {cas} |");
    }
    println!("| wall time | {:.3} s |", wall.as_secs_f64());
    println!(
        "| throughput | {:.0} rows/s ({:.2} MB/s); sum of clients {:.0} rows/s |",
        per_s(ops, wall),
        mb_per_s(s, ops, wall),
        sum_client_rate
    );
    println!(
        "| latency (us) p50 / p75 / p95 / p99 / p99.9 / max | {} |",
        lat.line()
    );
    println!(
        "| user / system CPU | {:.3} s / {:.3} s |",
        user.as_secs_f64(),
        sys.as_secs_f64()
    );
    println!("| rows per CPU-second | {rows_per_cpu:.0} |");
    if let Some(c) = &cache1 {
        if lookups > 0 {
            println!(
                "| block cache | {:.2}% hits of {lookups} lookups; holds {} in {} blocks |",
                hits as f64 / lookups as f64 * 100.0,
                human(c.size),
                c.block_count
            );
        } else {
            println!(
                "| block cache | no lookups; holds {} in {} blocks |",
                human(c.size),
                c.block_count
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_pe_keys() {
        assert_eq!(format_row(0), b"00000000000000000000000000".to_vec());
        assert_eq!(format_row(1234), b"00000000000000000000001234".to_vec());
        assert_eq!(format_row(i32::MAX as u64).len(), ROW_LENGTH);
        for n in [0, 9, 10, 99_999, i32::MAX as u64, u64::MAX] {
            assert_eq!(format_row(n), format!("{n:026}").into_bytes(), "{n}");
        }
    }

    #[test]
    fn splits_follow_pe() {
        let k = split_keys(4, 1000);
        assert_eq!(k, vec![format_row(250), format_row(500), format_row(750)]);
        assert!(split_keys(1, 1000).is_empty());
        assert!(split_keys(0, 1000).is_empty());
    }

    #[test]
    fn read_and_cas_commands() {
        assert!(PeCommand::RandomRead.is_read());
        assert!(PeCommand::ScanRange100.is_read());
        assert!(PeCommand::FilterScan.is_read());
        assert!(!PeCommand::RandomWrite.is_read());
        assert!(!PeCommand::Increment.is_read());
        assert!(PeCommand::CheckAndPut.is_cas());
        assert_eq!(PeCommand::CheckAndPut.name(), "checkAndPut");
    }
}
