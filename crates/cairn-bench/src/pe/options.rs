//! What a PE run is asked to do ([`PeOptions`], PE's options by PE's meanings) and what it will
//! do once they are checked ([`Plan`]): the key space (PE's `calculateRowsAndSize`), the table
//! descriptor, the block cache and the `-D` properties.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use cairn_blockcache::{BlockCacheConfig, BucketCacheConfig};
use cairn_hfile::encoding::DataBlockEncoding;
use cairn_hfile::{BloomType, Compression};
use cairn_region::{ColumnFamilyDescriptor, ServerConfig, TableDescriptor, TableName};

use super::command::PeCommand;
use super::keys::FAMILY_NAME_BASE;
use super::properties::{self, PropertyKind};

/// PE's `ONE_GB` (1024 × 1024 × 1000, as PE defines it): what `--size=N` counts in.
pub const ONE_GB: u64 = 1024 * 1024 * 1000;
/// PE's default rows per client: `ONE_GB / DEFAULT_VALUE_LENGTH` = 1,048,576.
pub const DEFAULT_ROWS: u64 = ONE_GB / DEFAULT_VALUE_SIZE as u64;
/// PE's `DEFAULT_VALUE_LENGTH`.
pub const DEFAULT_VALUE_SIZE: usize = 1000;
/// PE's scan caching default.
pub const DEFAULT_CACHING: usize = 30;
/// PE's `bufferSize` default (2 MiB), the BufferedMutator's write buffer.
pub const DEFAULT_BUFFER_SIZE: usize = 2 * 1024 * 1024;
/// HBase's default HFile block size.
pub const DEFAULT_BLOCK_SIZE: usize = 65536;
/// cairn's default L1 block cache for a benchmark run.
pub const DEFAULT_BLOCK_CACHE_SIZE: u64 = 1 << 30;

/// PE's `--size`: the total data the run covers, instead of `--rows` per client.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TotalSize {
    /// A bare number, as PE takes it: whole units of PE's [`ONE_GB`] (PE truncates the
    /// fraction; PE refuses 1 or less).
    Gigabytes(f64),
    /// A size with a unit (`512MiB`, `1.5GiB`): cairn's extension for smaller runs.
    Bytes(u64),
}

/// A PE run as the command line asks for it, in PE's terms (`--rows`, `--valueSize`, …).
/// [`Plan::new`] checks it.
#[derive(Clone, Debug)]
pub struct PeOptions {
    /// The test to run.
    pub command: PeCommand,
    /// Client threads (1 … 500).
    pub nclients: u32,
    /// Rows each client runs (PE's `perClientRunRows`).
    pub rows: u64,
    /// Total size (PE's `--size`), instead of `rows` per client.
    pub size: Option<TotalSize>,
    /// Bytes per value.
    pub value_size: usize,
    /// Vary value sizes uniformly between 0 and `value_size`.
    pub value_random: bool,
    /// Create the table with N regions split evenly over the key space.
    pub presplit: u32,
    /// Compression by HBase's name (`NONE`, `GZ`, `SNAPPY`, `LZ4`, `ZSTD`).
    pub compress: String,
    /// Data block encoding by HBase's name.
    pub block_encoding: String,
    /// Bloom filter by HBase's name (`NONE`, `ROW`, `ROWCOL`).
    pub bloom_filter: String,
    /// HFile block size in bytes.
    pub block_size: usize,
    /// IN_MEMORY families.
    pub inmemory: bool,
    /// Add HBase's FilterAllFilter to reads.
    pub filter_all: bool,
    /// Scan caching (accepted; no effect embedded).
    pub caching: usize,
    /// Cache data blocks that reads touch.
    pub cache_blocks: bool,
    /// Apply each put when made (false: buffer them as BufferedMutator does).
    pub auto_flush: bool,
    /// The client write buffer in bytes for `auto_flush == false`.
    pub buffer_size: usize,
    /// Puts go to the WAL (SYNC_WAL); false: SKIP_WAL.
    pub write_to_wal: bool,
    /// Run on this fraction of rows.
    pub sample_rate: f64,
    /// Table name.
    pub table: String,
    /// randomRead: batch gets in groups of N (0: off).
    pub multi_get: usize,
    /// Writes: batch puts in groups of N (0: off; needs `auto_flush`, as in PE).
    pub multi_put: usize,
    /// Columns per row.
    pub columns: u32,
    /// Column families.
    pub families: u32,
    /// First row of client 0.
    pub start_row: u64,
    /// The store's directory (kept); `None`: a temporary one.
    pub data: Option<PathBuf>,
    /// Keep the temporary directory.
    pub keep: bool,
    /// L1 block cache bytes.
    pub block_cache_size: u64,
    /// L2 bucket cache bytes, if any.
    pub bucket_cache_size: Option<u64>,
    /// Scan the table once, untimed, before the run (cairn's own).
    pub warm_cache: bool,
    /// HBase properties (the configuration directory's, then `-D name=value`), in order.
    pub properties: Vec<(String, String)>,
    /// The file each property came from, when one did (messages name it); the others are
    /// `-D`s.
    pub property_sources: std::collections::BTreeMap<String, String>,
    /// Leave the store's closing time off stderr (for `--json`).
    pub quiet: bool,
    /// PE's `--cycles`: each client runs its rows this many times.
    pub cycles: u32,
    /// PE's `--measureAfter`: latencies count only past this many rows of a client's range.
    pub measure_after: u64,
    /// PE's `--latencyThreshold` (ms): count the requests that took at least this long (0: off).
    pub latency_threshold_ms: u64,
    /// PE's `--randomSleep` (ms): randomRead sleeps up to this long before each get (0: off).
    pub random_sleep_ms: u64,
    /// PE's `--valueZipf`: value sizes Zipf-distributed over 1 … `value_size`.
    pub value_zipf: bool,
    /// PE's `--addColumns`: gets and scans name their columns (false: whole rows).
    pub add_columns: bool,
    /// PE's `--replicas`: region replicas (cairn serves one).
    pub replicas: u32,
    /// PE's `--splitPolicy`: the table's `SPLIT_POLICY` class.
    pub split_policy: Option<String>,
    /// PE's `--inmemoryCompaction` (`NONE`, `BASIC`, `EAGER`, `ADAPTIVE`).
    pub inmemory_compaction: String,
    /// PE's `--encryption` (`NONE` or a cipher name).
    pub encryption: String,
    /// PE's `--usetags` and `--numoftags`: tags written with each cell.
    pub use_tags: bool,
    /// PE's `--numoftags`.
    pub num_of_tags: u32,
    /// PE's `--commandPropertiesFile`.
    pub command_properties_file: Option<PathBuf>,
    /// Client-side options that mean nothing to an embedded store, by PE's spelling with the
    /// value given (`--oneCon=true`, `--connCount=4`, `--asyncPrefetch`, `--flushCommits=false`,
    /// `--traceRate=0.1`, `--period=1000`, `--scanReadType=PREAD`): said once before the run.
    pub client_side: Vec<String>,
}

impl PeOptions {
    /// `command` with `nclients` clients and PE's defaults for everything else.
    pub fn new(command: PeCommand, nclients: u32) -> PeOptions {
        PeOptions {
            command,
            nclients,
            rows: DEFAULT_ROWS,
            size: None,
            value_size: DEFAULT_VALUE_SIZE,
            value_random: false,
            presplit: 0,
            compress: "NONE".into(),
            block_encoding: "NONE".into(),
            bloom_filter: "ROW".into(),
            block_size: DEFAULT_BLOCK_SIZE,
            inmemory: false,
            filter_all: false,
            caching: DEFAULT_CACHING,
            cache_blocks: true,
            auto_flush: false,
            buffer_size: DEFAULT_BUFFER_SIZE,
            write_to_wal: true,
            sample_rate: 1.0,
            table: "TestTable".into(),
            multi_get: 0,
            multi_put: 0,
            columns: 1,
            families: 1,
            start_row: 0,
            data: None,
            keep: false,
            block_cache_size: DEFAULT_BLOCK_CACHE_SIZE,
            bucket_cache_size: None,
            warm_cache: false,
            properties: Vec::new(),
            property_sources: Default::default(),
            quiet: false,
            cycles: 1,
            measure_after: 0,
            latency_threshold_ms: 0,
            random_sleep_ms: 0,
            value_zipf: false,
            add_columns: true,
            replicas: 1,
            split_policy: None,
            inmemory_compaction: "NONE".into(),
            encryption: "NONE".into(),
            use_tags: false,
            num_of_tags: 1,
            command_properties_file: None,
            client_side: Vec::new(),
        }
    }
}

/// The resolved options every client reads.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub command: PeCommand,
    pub clients: usize,
    pub rows: u64,
    /// PE's `totalRows`: the key space random commands draw from (`rows × nclients` unless
    /// `--size` set it).
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
    pub cycles: u32,
    pub measure_after: u64,
    pub latency_threshold_ms: u64,
    pub random_sleep_ms: u64,
    /// `--valueZipf`'s distribution of value sizes, built once for every client.
    pub value_zipf: Option<std::sync::Arc<super::zipf::Zipf>>,
    pub add_columns: bool,
}

/// A checked PE run: everything [`super::run`] needs, and the notes about options that have
/// no effect.
#[derive(Debug)]
pub struct Plan {
    pub(crate) settings: Settings,
    pub(crate) table: TableName,
    pub(crate) descriptor: TableDescriptor,
    pub(crate) presplit: u32,
    pub(crate) cache: BlockCacheConfig,
    /// `-D` properties for the region server's configuration.
    pub(crate) server_properties: Vec<(String, String)>,
    pub(crate) data: Option<PathBuf>,
    pub(crate) keep: bool,
    pub(crate) warm_cache: bool,
    pub(crate) quiet: bool,
    /// Options accepted that change nothing here, said once before the run.
    pub notes: Vec<String>,
}

/// PE's `getRowsPerGB` divisor: value bytes per row (half of `--valueSize` when random).
fn value_bytes_per_row(o: &PeOptions) -> u64 {
    let value = if o.value_random {
        o.value_size / 2
    } else {
        o.value_size
    };
    value as u64 * o.families as u64 * o.columns as u64
}

/// PE's `calculateRowsAndSize`: `(rows per client, total rows)`.
fn rows_and_total(o: &PeOptions) -> Result<(u64, u64)> {
    let clients = o.nclients as u64;
    let Some(size) = o.size else {
        let total = o
            .rows
            .checked_mul(clients)
            .with_context(|| format!("--rows={} x {} clients is too many rows", o.rows, clients))?;
        return Ok((o.rows, total));
    };
    let row_bytes = value_bytes_per_row(o);
    if row_bytes == 0 {
        bail!(
            "--size needs values of at least 1 byte (--valueSize={})",
            o.value_size
        );
    }
    let total = match size {
        TotalSize::Gigabytes(g) => {
            if g.is_nan() || g <= 1.0 {
                bail!(
                    "--size={g}: Size must be > 1; i.e. 1GB (as in PE: whole units of {ONE_GB} \
                     bytes; give a unit for less, e.g. --size=512MiB)"
                );
            }
            // PE: `(int) opts.size * rowsPerGB`.
            (g as u64).saturating_mul(ONE_GB / row_bytes)
        }
        TotalSize::Bytes(b) => b / row_bytes,
    };
    // PE keeps a given --rows for random reads over a larger --size key space.
    let keep_rows = matches!(o.command, PeCommand::RandomRead | PeCommand::RandomSeekScan)
        && o.rows != DEFAULT_ROWS;
    let rows = if keep_rows { o.rows } else { total / clients };
    if rows == 0 {
        bail!("--size: {total} rows of {row_bytes} value bytes is less than a row per client");
    }
    Ok((rows, total))
}

impl Plan {
    /// Checks `o` as PE does (and for what cairn cannot do): errors name the option and are
    /// bad usage ([`crate::UsageError`]).
    pub fn new(o: &PeOptions) -> Result<Plan> {
        Plan::check(o).map_err(crate::UsageError::wrap)
    }

    fn check(o: &PeOptions) -> Result<Plan> {
        if !(1..=500).contains(&o.nclients) {
            bail!("nclients={}: must be 1 … 500", o.nclients);
        }
        if o.rows == 0 {
            bail!("--rows must be at least 1");
        }
        // PE's validateParsedOpts.
        if o.multi_put > 0 && !o.auto_flush {
            bail!(
                "--multiPut={}: autoFlush must be true when multiPut is more than 0 (give \
                 --autoFlush=true, as PE requires)",
                o.multi_put
            );
        }
        if !(o.sample_rate > 0.0 && o.sample_rate <= 1.0) {
            bail!("--sampleRate={} must be in (0, 1]", o.sample_rate);
        }
        if o.columns == 0 || o.families == 0 {
            bail!("--columns and --families must be at least 1");
        }
        if o.caching == 0 {
            bail!("--caching must be at least 1");
        }
        if o.buffer_size == 0 {
            bail!("--bufferSize must be at least 1 byte");
        }
        // PE's own checks of these, then what cairn cannot do, named.
        if o.value_random && o.value_zipf {
            bail!("Either valueRandom or valueZipf, but not both");
        }
        if o.value_zipf && o.value_size < 2 {
            bail!("--valueZipf needs --valueSize of at least 2");
        }
        if o.cycles == 0 {
            bail!("--cycles must be at least 1");
        }
        if o.replicas != 1 {
            bail!(
                "--replicas={}: region replicas are not supported (cairn serves each region once)",
                o.replicas
            );
        }
        if !o.inmemory_compaction.trim().eq_ignore_ascii_case("NONE") {
            bail!(
                "--inmemoryCompaction={}: in-memory compaction is not supported (NONE only)",
                o.inmemory_compaction
            );
        }
        if !o.encryption.trim().eq_ignore_ascii_case("NONE") {
            bail!(
                "--encryption={}: encryption at rest is not supported (NONE only)",
                o.encryption
            );
        }
        if o.use_tags {
            bail!("--usetags: writing tags with PE's puts is not supported");
        }
        if let Some(f) = &o.command_properties_file {
            bail!(
                "--commandPropertiesFile={}: not supported (it feeds custom PE commands, which cairn pe lacks)",
                f.display()
            );
        }
        if let Some(p) = &o.split_policy {
            if cairn_region::tools::SplitPolicyKind::parse(p).is_none() {
                bail!(
                    "--splitPolicy={p}: cairn has SteppingSplitPolicy, \
                     IncreasingToUpperBoundRegionSplitPolicy, ConstantSizeRegionSplitPolicy and \
                     DisabledRegionSplitPolicy"
                );
            }
        }
        let encoding =
            DataBlockEncoding::from_name(o.block_encoding.trim().to_ascii_uppercase().as_bytes())
                .with_context(|| {
                format!(
                    "--blockEncoding={}: not supported (cairn reads and writes NONE, PREFIX, \
                         DIFF, FAST_DIFF and ROW_INDEX_V1)",
                    o.block_encoding
                )
            })?;
        let compression: Compression = o
            .compress
            .parse()
            .map_err(|e| anyhow::anyhow!("--compress={}: {e}", o.compress))?;
        if !compression.is_supported() {
            bail!(
                "--compress={}: this compression is not supported",
                o.compress
            );
        }
        let bloom: BloomType = o
            .bloom_filter
            .parse()
            .map_err(|e| anyhow::anyhow!("--bloomFilter={}: {e}", o.bloom_filter))?;
        let table = TableName::parse(&o.table).map_err(|e| anyhow::anyhow!("--table: {e}"))?;
        let (rows, total_rows) = rows_and_total(o)?;
        if total_rows > i32::MAX as u64 {
            bail!(
                "--rows={rows} x {} clients ({total_rows} rows) is past PE's key space of 2^31 - 1 \
                 rows",
                o.nclients
            );
        }
        if o.presplit as u64 > total_rows {
            bail!(
                "--presplit={} is more regions than rows ({total_rows})",
                o.presplit
            );
        }
        let mut descriptor = TableDescriptor::new(table.clone());
        for f in 0..o.families {
            let mut cf = ColumnFamilyDescriptor::new(format!("{FAMILY_NAME_BASE}{f}"))
                .compression(compression)
                .bloom_type(bloom)
                .block_size(o.block_size);
            cf.in_memory = o.inmemory;
            cf.data_block_encoding = encoding;
            descriptor = descriptor.with_family(cf);
        }
        if let Some(p) = &o.split_policy {
            descriptor = descriptor.with_value("SPLIT_POLICY", p.trim());
        }
        descriptor
            .validate()
            .map_err(|e| anyhow::anyhow!("table options: {e}"))?;
        let (server_properties, cache) = split_properties(o)?;
        Ok(Plan {
            settings: Settings {
                command: o.command,
                clients: o.nclients as usize,
                rows,
                total_rows,
                start_row: o.start_row,
                value_size: o.value_size,
                value_random: o.value_random,
                families: o.families,
                columns: o.columns,
                sample_rate: o.sample_rate,
                multi_get: o.multi_get,
                multi_put: o.multi_put,
                auto_flush: o.auto_flush,
                buffer_size: o.buffer_size,
                filter_all: o.filter_all,
                caching: o.caching,
                cache_blocks: o.cache_blocks,
                write_to_wal: o.write_to_wal,
                cycles: o.cycles,
                measure_after: o.measure_after,
                latency_threshold_ms: o.latency_threshold_ms,
                random_sleep_ms: o.random_sleep_ms,
                // PE: `new RandomDistribution.Zipf(rand, 1, valueSize, 1.2)`.
                value_zipf: o.value_zipf.then(|| {
                    std::sync::Arc::new(super::zipf::Zipf::new(1, o.value_size as u64, 1.2))
                }),
                add_columns: o.add_columns,
            },
            table,
            descriptor,
            presplit: o.presplit,
            cache,
            server_properties,
            data: o.data.clone(),
            keep: o.keep,
            warm_cache: o.warm_cache,
            quiet: o.quiet,
            notes: notes(o),
        })
    }

    /// Rows each client runs (from `--rows`, or from `--size` as PE computes it).
    pub fn rows_per_client(&self) -> u64 {
        self.settings.rows
    }

    /// PE's `totalRows`: the key space.
    pub fn total_rows(&self) -> u64 {
        self.settings.total_rows
    }
}

/// Options that are accepted but change nothing here.
fn notes(o: &PeOptions) -> Vec<String> {
    let mut notes = Vec::new();
    if o.caching != DEFAULT_CACHING {
        notes.push("--caching has no effect embedded: the scanner streams rows".to_string());
    }
    if o.multi_get > 0 && o.command != PeCommand::RandomRead {
        notes.push("--multiGet applies to randomRead only".to_string());
    }
    if o.multi_put > 0
        && !matches!(
            o.command,
            PeCommand::SequentialWrite | PeCommand::RandomWrite
        )
    {
        notes.push("--multiPut applies to sequentialWrite and randomWrite only".to_string());
    }
    if o.random_sleep_ms > 0 && o.command != PeCommand::RandomRead {
        notes.push("--randomSleep applies to randomRead only".to_string());
    }
    for c in &o.client_side {
        notes.push(format!(
            "{c} has no effect embedded: it shapes the client's connections or reporting"
        ));
    }
    notes
}

/// Sorts the `-D` properties into the region server's and the block cache's, checking every
/// name and value before the store opens. The cache starts from `--blockCacheSize` and
/// `--bucketCacheSize`; cache properties given with `-D` override them.
fn split_properties(o: &PeOptions) -> Result<(Vec<(String, String)>, BlockCacheConfig)> {
    let mut server = Vec::new();
    let mut cache_props = Vec::new();
    let mut scratch = ServerConfig::new(PathBuf::new());
    let origin = |k: &str, v: &str| match o.property_sources.get(k) {
        Some(file) => format!("{file}: property {k}={v}"),
        None => format!("-D {k}={v}"),
    };
    for (k, v) in &o.properties {
        match properties::kind(k) {
            Some(PropertyKind::Server) => {
                scratch
                    .set_property(k, v)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", origin(k, v)))?;
                server.push((k.clone(), v.clone()));
            }
            Some(PropertyKind::BlockCache) => cache_props.push((k.clone(), v.clone())),
            Some(PropertyKind::RootDir) => {
                bail!("{}: give the store's directory with --data", origin(k, v))
            }
            None => bail!(
                "{}: not a property cairn pe knows; it takes {}",
                origin(k, v),
                properties::known().join(", ")
            ),
        }
    }
    let mut cache = BlockCacheConfig {
        l1_size: o.block_cache_size,
        l2: o.bucket_cache_size.map(|capacity| BucketCacheConfig {
            capacity,
            ..BucketCacheConfig::default()
        }),
    };
    if !cache_props.is_empty() {
        // The options as properties first, so that the user's -D ones override them.
        let mut all = vec![(
            "cairn.blockcache.l1.bytes".to_string(),
            o.block_cache_size.to_string(),
        )];
        if let Some(b) = o.bucket_cache_size {
            all.push(("hbase.bucketcache.ioengine".into(), "offheap".into()));
            all.push((
                "hbase.bucketcache.size".into(),
                (b as f64 / 1048576.0).to_string(),
            ));
        }
        all.extend(cache_props);
        cache =
            BlockCacheConfig::from_properties(all.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .map_err(|e| anyhow::anyhow!("-D {e}"))?;
    }
    Ok((server, cache))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(command: PeCommand, nclients: u32) -> PeOptions {
        PeOptions::new(command, nclients)
    }

    fn err(o: &PeOptions) -> String {
        let e = Plan::new(o).unwrap_err();
        assert!(e.downcast_ref::<crate::UsageError>().is_some());
        format!("{e:#}")
    }

    #[test]
    fn multi_put_needs_auto_flush_as_in_pe() {
        let mut o = opts(PeCommand::RandomWrite, 1);
        o.multi_put = 10;
        assert!(err(&o).contains("autoFlush must be true when multiPut is more than 0"));
        o.auto_flush = true;
        assert!(Plan::new(&o).is_ok());
    }

    #[test]
    fn size_sets_rows_as_pe_does() {
        // PE: totalRows = (int) size * (ONE_GB / valueSize); perClientRunRows = total / n.
        let mut o = opts(PeCommand::SequentialWrite, 4);
        o.size = Some(TotalSize::Gigabytes(2.7));
        let p = Plan::new(&o).unwrap();
        assert_eq!(p.total_rows(), 2 * (ONE_GB / 1000));
        assert_eq!(p.rows_per_client(), 2 * (ONE_GB / 1000) / 4);
        // Values, families and columns all count; random values count half.
        o.value_size = 100;
        o.families = 2;
        o.columns = 5;
        o.value_random = true;
        let p = Plan::new(&o).unwrap();
        assert_eq!(p.total_rows(), 2 * (ONE_GB / (50 * 2 * 5)));
        // A unit gives bytes.
        let mut o = opts(PeCommand::SequentialWrite, 2);
        o.size = Some(TotalSize::Bytes(10 << 20));
        let p = Plan::new(&o).unwrap();
        assert_eq!(p.total_rows(), (10 << 20) / 1000);
        assert_eq!(p.rows_per_client(), (10 << 20) / 1000 / 2);
        // PE keeps a given --rows for randomRead over the --size key space.
        let mut o = opts(PeCommand::RandomRead, 2);
        o.size = Some(TotalSize::Gigabytes(3.0));
        o.rows = 500;
        let p = Plan::new(&o).unwrap();
        assert_eq!(
            (p.rows_per_client(), p.total_rows()),
            (500, 3 * (ONE_GB / 1000))
        );
        // ... but not for the others.
        o.command = PeCommand::SequentialRead;
        assert_eq!(
            Plan::new(&o).unwrap().rows_per_client(),
            3 * (ONE_GB / 1000) / 2
        );
        // Without --size: rows x clients.
        let o = opts(PeCommand::RandomRead, 3);
        assert_eq!(Plan::new(&o).unwrap().total_rows(), 3 * DEFAULT_ROWS);
    }

    #[test]
    fn size_of_one_or_less_is_refused_as_in_pe() {
        let mut o = opts(PeCommand::SequentialWrite, 1);
        o.size = Some(TotalSize::Gigabytes(1.0));
        assert!(err(&o).contains("Size must be > 1"));
        o.size = Some(TotalSize::Bytes(10));
        assert!(err(&o).contains("less than a row per client"));
    }

    #[test]
    fn properties_are_checked_before_the_store_opens() {
        let mut o = opts(PeCommand::SequentialWrite, 1);
        o.properties = vec![("unknown.key".into(), "1".into())];
        let e = err(&o);
        assert!(
            e.contains("-D unknown.key=1: not a property cairn pe knows"),
            "{e}"
        );
        assert!(e.contains("hbase.hstore.compaction.min"), "{e}");
        o.properties = vec![("hbase.hstore.compaction.min".into(), "many".into())];
        assert!(err(&o).contains("-D hbase.hstore.compaction.min=many"));
        o.properties = vec![("hbase.rootdir".into(), "/x".into())];
        assert!(err(&o).contains("--data"));
        o.properties = vec![
            ("hbase.hstore.compaction.min".into(), "5".into()),
            ("hfile.block.cache.size".into(), "12345678".into()),
        ];
        let p = Plan::new(&o).unwrap();
        assert_eq!(p.server_properties.len(), 1);
        assert_eq!(p.cache.l1_size, 12345678);
        // Without cache properties the options size the cache.
        o.properties.clear();
        o.bucket_cache_size = Some(64 << 20);
        let p = Plan::new(&o).unwrap();
        assert_eq!(p.cache.l1_size, DEFAULT_BLOCK_CACHE_SIZE);
        assert_eq!(p.cache.l2.map(|l2| l2.capacity), Some(64 << 20));
        // With one, the bucket cache option still holds.
        o.properties = vec![("hbase.bucketcache.writer.threads".into(), "2".into())];
        let p = Plan::new(&o).unwrap();
        assert_eq!(p.cache.l2.map(|l2| l2.capacity), Some(64 << 20));
    }
}
