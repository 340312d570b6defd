//! `cairn pe`: HBase's PerformanceEvaluation (`hbase pe`) on the embedded store: PE's options,
//! spelled as PE spells them, mapped to [`PeOptions`] for `cairn_bench::pe`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use cairn_bench::pe::{self, PeCommand, PeOptions, TotalSize};
use clap::builder::{BoolishValueParser, PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{ArgAction, Args};

use cairn_bench::units::parse_bytes as size;

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
put on its own, or N at a time with --multiPut=N (which, as in PE, needs --autoFlush=true).

Measured as PE measures: latencies of rows past --measureAfter of each client's range (with 0,
all but the first); --cycles runs the range again; --latencyThreshold=MS counts slower requests;
--randomSleep=MS sleeps before each randomRead get, inside its time; --valueZipf draws value
sizes as HBase's RandomDistribution.Zipf(1, valueSize, 1.2); --splitPolicy sets the table's
SPLIT_POLICY. Refused by name: --replicas other than 1, --inmemoryCompaction and --encryption
other than NONE, --usetags, --commandPropertiesFile.

Embedded differences: --oneCon, --connCount, --asyncPrefetch, --flushCommits, --traceRate,
--period and --scanReadType are taken and have no effect (said once); --caching has no effect (the scanner streams rows); --cacheBlocks=false reads data blocks without adding them to the block
cache (index and Bloom blocks are cached, as in HBase); append is a get followed by checkAndPut, retried when another client
changed the cell in between (cairn-region has no Append); --blockEncoding takes NONE, PREFIX,
DIFF, FAST_DIFF and ROW_INDEX_V1. Latency is always recorded (per request, in microseconds; --multiGet batches count
as one request); --latency adds per-client percentiles. CPU time is the whole process's,
background flushes and compactions included.

Size: --size=N (PE's) sets the total data instead of --rows: N is in PE's GB (1024 x 1024 x 1000
bytes; whole GBs, more than 1, as PE takes them), or give a unit (--size=512MiB, binary units);
rows = size / (value bytes per row: --valueSize, halved with --valueRandom, x --families x
--columns), split over the clients (randomRead and randomSeekScan keep a given --rows).

Properties: -D NAME=VALUE sets an HBase property of the embedded server (WAL, memstore,
compaction: hbase.hstore.compaction.min, hbase.regionserver.maxlogs, …) or its block cache
(hfile.block.cache.size, hbase.bucketcache.*), after those of --conf DIR (or $HBASE_CONF_DIR)
core-site.xml and hbase-site.xml; -D names cairn pe does not read are warned about once and
ignored. hbase.rootdir from the files is ignored (--data says where the store is).

Against a cluster: hbase.zookeeper.quorum=HOST[:PORT] (with hbase.zookeeper.property.clientPort,
zookeeper.znode.parent) or hbase.client.bootstrap.servers=HOST:PORT, from --conf's
hbase-site.xml as HBase's PE reads it or from -D, runs the commands over HBase's native RPC against that
cluster (cairn or HBase) instead of an embedded store: sequentialWrite, randomWrite,
sequentialRead, randomRead, scan and scanRange*; --oneCon=true shares one connection per server;
the CPU time reported is the client's alone.

Example: cairn pe --rows=100000 --valueSize=100 --data=/tmp/pe --presplit=4 sequentialWrite 2
         cairn pe --rows=100000 --data=/tmp/pe randomRead 2
         cairn pe -D hbase.client.bootstrap.servers=host:16000 --multiGet=100 randomRead 25";

fn bool_opt() -> BoolishValueParser {
    BoolishValueParser::new()
}

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct PeArgs {
    /// Rows each client runs (PE: perClientRunRows).
    #[arg(long, default_value_t = pe::DEFAULT_ROWS, value_name = "N")]
    rows: u64,
    /// Total size instead of --rows: PE's GB (a bare number, more than 1) or a size with a unit.
    #[arg(long, value_parser = total_size, value_name = "GB|SIZE")]
    size: Option<TotalSize>,
    /// Bytes per value.
    #[arg(
        long = "valueSize",
        alias = "value-size",
        default_value_t = pe::DEFAULT_VALUE_SIZE,
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
    #[arg(long = "blockSize", default_value_t = pe::DEFAULT_BLOCK_SIZE as u64,
          value_parser = size, value_name = "SIZE")]
    block_size: u64,
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
    #[arg(long, default_value_t = pe::DEFAULT_CACHING, value_name = "N")]
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
    #[arg(long = "bufferSize", default_value_t = pe::DEFAULT_BUFFER_SIZE as u64,
          value_parser = size, value_name = "SIZE")]
    buffer_size: u64,
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
    /// Run each client's rows this many times.
    #[arg(long, default_value_t = 1, value_name = "N")]
    cycles: u32,
    /// Record latencies only past this many rows of each client's range (PE counts rows
    /// after the N-th; with 0, all but the first).
    #[arg(long = "measureAfter", default_value_t = 0, value_name = "N")]
    measure_after: u64,
    /// Count the requests that take at least this many milliseconds (0: off).
    #[arg(long = "latencyThreshold", default_value_t = 0, value_name = "MS")]
    latency_threshold: u64,
    /// randomRead: sleep a random 0 … MS-1 milliseconds before each get (within its time).
    #[arg(long = "randomSleep", default_value_t = 0, value_name = "MS")]
    random_sleep: u64,
    /// Zipf-distributed value sizes over 1 … --valueSize (HBase's RandomDistribution.Zipf,
    /// sigma 1.2).
    #[arg(long = "valueZipf", action = ArgAction::Set, num_args = 0..=1, require_equals = true,
          default_value = "false", default_missing_value = "true", value_parser = bool_opt(),
          value_name = "BOOL")]
    value_zipf: bool,
    /// Name the columns in gets and scans (false: read whole rows).
    #[arg(long = "addColumns", action = ArgAction::Set, num_args = 0..=1, require_equals = true,
          default_value = "true", default_missing_value = "true", value_parser = bool_opt(),
          value_name = "BOOL")]
    add_columns: bool,
    /// Region replicas: 1 only (cairn serves each region once).
    #[arg(long, default_value_t = 1, value_name = "N")]
    replicas: u32,
    /// The table's split policy class (SPLIT_POLICY), e.g. ConstantSizeRegionSplitPolicy.
    #[arg(long = "splitPolicy", value_name = "CLASS")]
    split_policy: Option<String>,
    /// In-memory compaction: NONE only.
    #[arg(
        long = "inmemoryCompaction",
        default_value = "NONE",
        value_name = "POLICY"
    )]
    inmemory_compaction: String,
    /// Encryption at rest: NONE only.
    #[arg(long, default_value = "NONE", value_name = "CIPHER")]
    encryption: String,
    /// Write tags with cells: not supported (refused when true).
    #[arg(long = "usetags", action = ArgAction::Set, num_args = 0..=1, require_equals = true,
          default_value = "false", default_missing_value = "true", value_parser = bool_opt(),
          value_name = "BOOL")]
    use_tags: bool,
    /// Tags per cell with --usetags.
    #[arg(long = "numoftags", default_value_t = 1, value_name = "N")]
    num_of_tags: u32,
    /// Properties for custom commands: not supported.
    #[arg(long = "commandPropertiesFile", value_name = "FILE")]
    command_properties_file: Option<PathBuf>,
    /// One connection for every client: accepted, no effect embedded.
    #[arg(long = "oneCon", value_name = "BOOL", require_equals = true)]
    one_con: Option<String>,
    /// Connections shared by the clients: accepted, no effect embedded.
    #[arg(long = "connCount", value_name = "N", require_equals = true)]
    conn_count: Option<String>,
    /// Asynchronous scanner prefetch: accepted, no effect embedded.
    #[arg(long = "asyncPrefetch", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_name = "BOOL")]
    async_prefetch: Option<String>,
    /// Flush the client's buffer at the end: accepted, no effect (buffered puts are always
    /// applied at the end, as closing HBase's BufferedMutator does).
    #[arg(long = "flushCommits", value_name = "BOOL", require_equals = true)]
    flush_commits: Option<String>,
    /// Tracing sample rate: accepted, no effect (no tracing here).
    #[arg(long = "traceRate", value_name = "RATE", require_equals = true)]
    trace_rate: Option<String>,
    /// Status every N rows: accepted, no effect (a progress bar shows progress).
    #[arg(long, value_name = "N", require_equals = true)]
    period: Option<String>,
    /// Scan read type (DEFAULT, STREAM, PREAD): accepted, no effect embedded.
    #[arg(long = "scanReadType", value_name = "TYPE", require_equals = true)]
    scan_read_type: Option<String>,
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
    #[arg(long = "blockCacheSize", default_value = "1GiB", value_parser = size,
          value_name = "SIZE")]
    block_cache_size: u64,
    /// Add an off-heap L2 bucket cache of this size for data blocks (hbase.bucketcache.size).
    #[arg(long = "bucketCacheSize", value_parser = size, value_name = "SIZE")]
    bucket_cache_size: Option<u64>,
    /// Before the timed run, scan the whole table (untimed; again while a pass misses the
    /// cache, up to 4 passes, as the LRU promotes blocks read twice) so its blocks are in the
    /// block cache, and let each client of a read command make a few untimed reads so its thread's
    /// memory is in place, as a long-running server's would be (cairn's own; not a PE option).
    #[arg(long = "warmCache")]
    warm_cache: bool,
    /// An HBase property of the embedded server or its block cache, e.g.
    /// -D hbase.hstore.compaction.min=5 (names cairn pe does not read are warned about).
    #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = property)]
    properties: Vec<String>,
    /// HBase's configuration directory: its core-site.xml and hbase-site.xml give properties
    /// as -D does, before the -Ds [default: $HBASE_CONF_DIR].
    #[arg(long = "conf", value_name = "DIR")]
    conf: Option<PathBuf>,
    /// Print one JSON object instead of the report.
    #[arg(long)]
    json: bool,
    /// The test to run.
    #[arg(value_name = "COMMAND", value_parser = command())]
    command: PeCommand,
    /// Client threads.
    #[arg(value_name = "NCLIENTS", value_parser = clap::value_parser!(u32).range(1..=500))]
    nclients: u32,
}

/// `--size`: a bare number is PE's GB; anything else a size with a unit.
fn total_size(s: &str) -> Result<TotalSize, String> {
    match s.trim().parse::<f64>() {
        Ok(g) if g.is_finite() => Ok(TotalSize::Gigabytes(g)),
        Ok(_) => Err(format!("{s:?} is not a size")),
        Err(_) => size(s).map(TotalSize::Bytes),
    }
}

/// `-D NAME=VALUE`, checked as clap reads it (bad usage before anything runs).
pub fn property(s: &str) -> Result<String, String> {
    crate::define::split(s).map_err(|e| e.to_string())?;
    Ok(s.to_string())
}

/// `(name, value)` pairs, in order.
type Properties = Vec<(String, String)>;

/// The properties pe applies: the configuration directory's and the `-D`s that pe reads, and
/// the file each came from. `hbase.rootdir` from a file is left out: `--data` says where the
/// store is (a `-D` of it is refused by name).
fn properties(site: &crate::site::Site) -> Result<(Properties, BTreeMap<String, String>)> {
    let mut props = Vec::new();
    let mut sources = BTreeMap::new();
    for p in site.read(pe::reads_property)? {
        let from_file = p.source != "-D";
        if from_file && p.name == "hbase.rootdir" {
            continue;
        }
        if from_file {
            sources.insert(p.name.clone(), p.source.clone());
        }
        props.push((p.name, p.value.trim().to_string()));
    }
    Ok((props, sources))
}

/// PE's command names (clap lists them, with what each does, on a bad one and in --help).
fn command() -> impl TypedValueParser<Value = PeCommand> {
    PossibleValuesParser::new(
        PeCommand::ALL.map(|c| PossibleValue::new(c.name()).help(c.description())),
    )
    .map(|s| s.parse::<PeCommand>().expect("one of the names listed"))
}

impl PeArgs {
    fn options(
        &self,
        properties: Vec<(String, String)>,
        property_sources: BTreeMap<String, String>,
    ) -> PeOptions {
        PeOptions {
            command: self.command,
            nclients: self.nclients,
            rows: self.rows,
            size: self.size,
            value_size: self.value_size,
            value_random: self.value_random,
            presplit: self.presplit,
            compress: self.compress.clone(),
            block_encoding: self.block_encoding.clone(),
            bloom_filter: self.bloom_filter.clone(),
            block_size: usize::try_from(self.block_size).unwrap_or(usize::MAX),
            inmemory: self.inmemory,
            filter_all: self.filter_all,
            caching: self.caching,
            cache_blocks: self.cache_blocks,
            auto_flush: self.auto_flush,
            buffer_size: usize::try_from(self.buffer_size).unwrap_or(usize::MAX),
            write_to_wal: self.write_to_wal,
            sample_rate: self.sample_rate,
            table: self.table.clone(),
            multi_get: self.multi_get,
            multi_put: self.multi_put,
            columns: self.columns,
            families: self.families,
            start_row: self.start_row,
            data: self.data.clone(),
            keep: self.keep,
            block_cache_size: self.block_cache_size,
            bucket_cache_size: self.bucket_cache_size,
            warm_cache: self.warm_cache,
            properties,
            property_sources,
            quiet: self.json,
            cycles: self.cycles,
            measure_after: self.measure_after,
            latency_threshold_ms: self.latency_threshold,
            random_sleep_ms: self.random_sleep,
            value_zipf: self.value_zipf,
            add_columns: self.add_columns,
            replicas: self.replicas,
            split_policy: self.split_policy.clone(),
            inmemory_compaction: self.inmemory_compaction.clone(),
            encryption: self.encryption.clone(),
            use_tags: self.use_tags,
            num_of_tags: self.num_of_tags,
            command_properties_file: self.command_properties_file.clone(),
            client_side: [
                ("oneCon", &self.one_con),
                ("connCount", &self.conn_count),
                ("asyncPrefetch", &self.async_prefetch),
                ("flushCommits", &self.flush_commits),
                ("traceRate", &self.trace_rate),
                ("period", &self.period),
                ("scanReadType", &self.scan_read_type),
            ]
            .into_iter()
            .filter_map(|(name, v)| v.as_ref().map(|v| format!("--{name}={v}")))
            .collect(),
        }
    }
}

/// Whether pe reads property `name`: the embedded server's properties, and the client's that
/// name a cluster to run against.
fn reads(name: &str) -> bool {
    pe::reads_property(name) || pe::remote::ClusterConfig::reads(name)
}

pub fn run(a: PeArgs) -> Result<ExitCode> {
    // Bad option values are bad usage (exit 2), as clap's own errors are.
    let site = match crate::site::Site::load("pe", a.conf.as_deref(), &a.properties, reads) {
        Ok(s) => s,
        Err(e) => return Ok(crate::usage_error("pe", &e)),
    };
    // Client properties naming a cluster (hbase-site.xml's or -D's): run against it over RPC,
    // as HBase's PE does with the same configuration.
    let cluster =
        pe::remote::ClusterConfig::from_properties(|k| site.get(k).ok().flatten().map(|p| p.value));
    match cluster {
        Err(e) => return Ok(crate::usage_error("pe", &e)),
        Ok(Some(cluster)) => return run_remote(&a, &site, &cluster),
        Ok(None) => {}
    }
    let (props, sources) = match properties(&site) {
        Ok(p) => p,
        Err(e) => return Ok(crate::usage_error("pe", &e)),
    };
    let plan = match pe::Plan::new(&a.options(props, sources)) {
        Ok(p) => p,
        Err(e) => return Ok(crate::usage_error("pe", &e)),
    };
    let report = pe::run(&plan)?;
    if a.json {
        println!("{}", report.json());
    } else {
        print!("{}", report.text(a.latency));
    }
    Ok(ExitCode::SUCCESS)
}

fn run_remote(
    a: &PeArgs,
    site: &crate::site::Site,
    cluster: &pe::remote::ClusterConfig,
) -> Result<ExitCode> {
    // The -Ds only: the files hold every daemon's properties, which a client does not read.
    let defines = site
        .defines()?
        .into_iter()
        .map(|p| (p.name, p.value))
        .collect();
    let plan = match pe::remote::RemotePlan::new(&a.options(defines, BTreeMap::new())) {
        Ok(p) => p,
        Err(e) => return Ok(crate::usage_error("pe", &e)),
    };
    let report = pe::remote::run(&plan, cluster)?;
    if a.json {
        println!("{}", report.json());
    } else {
        print!("{}", report.text(a.latency));
    }
    Ok(ExitCode::SUCCESS)
}
