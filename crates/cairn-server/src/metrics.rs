//! Metrics in the spirit of Hadoop's metrics2: one source per subsystem, HBase's names.
//!
//! Hot-path counters are plain atomics reached by a fixed index (a Thrift method's position in
//! [`METHODS`]), never through a map. Sources are gathered only when `/metrics` or `/jmx` is
//! read: the Thrift server's own counters, the region server (`regionCount`, `memStoreSize`,
//! …), per-region counters aggregated into one source labelled by namespace, table and region,
//! the WAL, the block cache and checksums.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cairn_region::RegionServer;
use cairn_thrift::{ConnectionStats, Encoding};

mod exposition;
mod latency;

pub use exposition::{family_name, snake_case, BuildInfo, Exposition, GAUGE_RENAMES};
pub use latency::{from_buckets, MethodLatencies, CALL_BUCKETS};

macro_rules! methods {
    ($($id:ident = $name:literal),* $(,)?) => {
        /// The Thrift methods, each with a fixed counter slot.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Method { $(#[doc = concat!("The `", $name, "` call.")] $id),* }
        /// Names of [`Method`]s as on the wire, in slot order.
        pub const METHODS: &[&str] = &[$($name),*];
    };
}

methods! {
    EnableTable = "enableTable",
    DisableTable = "disableTable",
    IsTableEnabled = "isTableEnabled",
    Compact = "compact",
    MajorCompact = "majorCompact",
    GetTableNames = "getTableNames",
    GetTableNamesWithIsTableEnabled = "getTableNamesWithIsTableEnabled",
    GetColumnDescriptors = "getColumnDescriptors",
    GetTableRegions = "getTableRegions",
    CreateTable = "createTable",
    DeleteTable = "deleteTable",
    Get = "get",
    GetVer = "getVer",
    GetVerTs = "getVerTs",
    GetRow = "getRow",
    GetRowWithColumns = "getRowWithColumns",
    GetRowTs = "getRowTs",
    GetRowWithColumnsTs = "getRowWithColumnsTs",
    GetRows = "getRows",
    GetRowsWithColumns = "getRowsWithColumns",
    GetRowsTs = "getRowsTs",
    GetRowsWithColumnsTs = "getRowsWithColumnsTs",
    MutateRow = "mutateRow",
    MutateRowTs = "mutateRowTs",
    MutateRows = "mutateRows",
    MutateRowsTs = "mutateRowsTs",
    AtomicIncrement = "atomicIncrement",
    DeleteAll = "deleteAll",
    DeleteAllTs = "deleteAllTs",
    DeleteAllRow = "deleteAllRow",
    Increment = "increment",
    IncrementRows = "incrementRows",
    DeleteAllRowTs = "deleteAllRowTs",
    ScannerOpenWithScan = "scannerOpenWithScan",
    ScannerOpen = "scannerOpen",
    ScannerOpenWithStop = "scannerOpenWithStop",
    ScannerOpenWithPrefix = "scannerOpenWithPrefix",
    ScannerOpenTs = "scannerOpenTs",
    ScannerOpenWithStopTs = "scannerOpenWithStopTs",
    ScannerGet = "scannerGet",
    ScannerGetList = "scannerGetList",
    ScannerClose = "scannerClose",
    CheckAndPut = "checkAndPut",
    GetThriftServerType = "getThriftServerType",
    GetClusterId = "getClusterId",
}

const N: usize = METHODS.len();

/// The Thrift server's counters (HBase's `MetricsThriftServerSource`).
#[derive(Debug)]
pub struct ThriftMetrics {
    calls: [AtomicU64; N],
    errors: [AtomicU64; N],
    nanos: [AtomicU64; N],
    /// Protocol-level counters kept by cairn-thrift (`requestCount`, `protocolErrorCount`,
    /// `connectionCount` by encoding, …).
    pub wire: ConnectionStats,
    /// Connections being served now (`openConnections`).
    pub open_connections: AtomicI64,
    /// Connections refused at `hbase.thrift.maxWorkerThreads` (`rejectedConnectionCount`).
    pub rejected_connections: AtomicU64,
    /// Rows sent back by gets and scanners (`rowsReturnedCount`).
    pub rows_returned: AtomicU64,
    /// Rows scanners read ahead of the client's next `scannerGetList`.
    pub rows_read_ahead: AtomicU64,
    /// Cells sent back by gets and scanners (`cellsReturnedCount`).
    pub cells_returned: AtomicU64,
    /// Rows written or deleted by mutations (`rowsMutatedCount`).
    pub rows_mutated: AtomicU64,
    /// Call latencies by method (`cairn_thrift_call_time_seconds`).
    call_time: MethodLatencies,
    /// Calls past the slow or large limits (shared with the native RPC front end).
    pub slow_log: Arc<crate::slow_log::SlowLog>,
}

impl Default for ThriftMetrics {
    fn default() -> Self {
        ThriftMetrics::new(Default::default())
    }
}

impl ThriftMetrics {
    /// Counters starting at zero, recording slow calls into `slow_log`.
    pub fn new(slow_log: Arc<crate::slow_log::SlowLog>) -> Self {
        ThriftMetrics {
            slow_log,
            calls: std::array::from_fn(|_| AtomicU64::new(0)),
            errors: std::array::from_fn(|_| AtomicU64::new(0)),
            nanos: std::array::from_fn(|_| AtomicU64::new(0)),
            wire: ConnectionStats::default(),
            open_connections: AtomicI64::new(0),
            rejected_connections: AtomicU64::new(0),
            rows_returned: AtomicU64::new(0),
            rows_read_ahead: AtomicU64::new(0),
            cells_returned: AtomicU64::new(0),
            rows_mutated: AtomicU64::new(0),
            call_time: MethodLatencies::new(
                "cairn_thrift_call_time_seconds",
                "Thrift1 call time by method, from the request read to the answer written.",
                METHODS,
                None,
            ),
        }
    }
}

impl ThriftMetrics {
    /// Counts one call of `m` that took `took`.
    #[inline]
    pub fn record(&self, m: Method, took: Duration, ok: bool) {
        let i = m as usize;
        self.calls[i].fetch_add(1, Ordering::Relaxed);
        self.nanos[i].fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
        self.call_time.observe(i, took);
        if !ok {
            self.errors[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Calls of `m` so far (`callCount{method=…}`).
    pub fn calls(&self, m: Method) -> u64 {
        self.calls[m as usize].load(Ordering::Relaxed)
    }

    /// Calls of `m` that failed so far (`callErrorCount{method=…}`).
    pub fn errors(&self, m: Method) -> u64 {
        self.errors[m as usize].load(Ordering::Relaxed)
    }
}

/// Whether a value only grows or goes up and down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Only grows (metrics2's `MutableCounter`; a Prometheus counter).
    Counter,
    /// Goes up and down (metrics2's `MutableGauge`; a Prometheus gauge).
    Gauge,
}

/// One value of a source.
#[derive(Clone, Debug)]
pub struct Sample {
    /// HBase's metric name (`callCount`, `memStoreSize`, …).
    pub name: String,
    /// Prometheus labels (`method`, `namespace`, `table`, `region`, …); empty for most.
    pub labels: Vec<(&'static str, String)>,
    /// The value when the source was gathered.
    pub value: f64,
    /// Counter or gauge.
    pub kind: Kind,
}

/// A named group of samples (one metrics2 source; one `/jmx` bean).
#[derive(Clone, Debug)]
pub struct Source {
    /// Short name, the Prometheus prefix (`thrift`, `server`, `regions`, `wal`, …).
    pub name: &'static str,
    /// The JMX bean name HBase uses for this subsystem.
    pub bean: &'static str,
    /// The source's values, in rendering order.
    pub samples: Vec<Sample>,
    /// Families only Prometheus shows (latency histograms), already in its names; `/jmx`
    /// leaves them out.
    pub families: Vec<prometheus::proto::MetricFamily>,
}

impl Source {
    pub(crate) fn new(name: &'static str, bean: &'static str) -> Source {
        Source {
            name,
            bean,
            samples: Vec::new(),
            families: Vec::new(),
        }
    }
    pub(crate) fn add(&mut self, name: impl Into<String>, kind: Kind, value: f64) {
        self.samples.push(Sample {
            name: name.into(),
            labels: Vec::new(),
            value,
            kind,
        });
    }
    pub(crate) fn add_labelled(
        &mut self,
        name: impl Into<String>,
        kind: Kind,
        labels: Vec<(&'static str, String)>,
        value: f64,
    ) {
        self.samples.push(Sample {
            name: name.into(),
            labels,
            value,
            kind,
        });
    }
}

/// Values named `...Count` that go down as well as up: how many there are now.
const COUNT_GAUGES: &[&str] = &[
    "storeCount",
    "storeFileCount",
    "blockCacheCount",
    "l1CacheCount",
    "l2CacheCount",
];

fn kind_of(name: &str) -> Kind {
    if COUNT_GAUGES.contains(&name) {
        Kind::Gauge
    } else if name.ends_with("Count") || name.ends_with("Time") || name.ends_with("Nanos") {
        Kind::Counter
    } else {
        Kind::Gauge
    }
}

/// What a part of the server reports: one source or more, read when asked.
pub trait MetricsSource: Send + Sync {
    /// Appends this part's sources, read now.
    fn sources(&self, out: &mut Vec<Source>);
}

/// The one metrics registry of a running server: every protocol and the region server
/// register their sources here, and `/metrics` and `/jmx` render what it gathers.
#[derive(Default)]
pub struct Registry {
    sources: parking_lot::RwLock<Vec<Arc<dyn MetricsSource>>>,
}

impl Registry {
    /// A registry with nothing in it yet.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Adds a part's sources; they are gathered in the order registered.
    pub fn register(&self, source: Arc<dyn MetricsSource>) {
        self.sources.write().push(source);
    }

    /// Every registered source, read now.
    pub fn gather(&self) -> Vec<Source> {
        let mut out = Vec::new();
        for s in self.sources.read().iter() {
            s.sources(&mut out);
        }
        out
    }
}

/// Counts of one protocol's open scanners (from its lease registry).
#[derive(Clone, Copy, Debug, Default)]
pub struct ScannerCounts {
    /// Open now (`openScanners`).
    pub open: usize,
    /// Closed because their lease ran out (`expiredScannerCount`).
    pub expired: u64,
    /// Closed to make room for new ones at the cap (`evictedScannerCount`).
    pub evicted: u64,
}

/// The Thrift server's source (`MetricsThriftServerSource`).
pub fn thrift_source(thrift: &ThriftMetrics, scanners: ScannerCounts) -> Source {
    let l = |v: u64| v as f64;
    let ld = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64;
    let mut t = Source::new("thrift", "Hadoop:service=HBase,name=Thrift,sub=ThriftOne");
    for (i, name) in METHODS.iter().enumerate() {
        let calls = thrift.calls[i].load(Ordering::Relaxed);
        if calls == 0 {
            continue;
        }
        let lab = || vec![("method", name.to_string())];
        t.add_labelled("callCount", Kind::Counter, lab(), l(calls));
        t.add_labelled(
            "callErrorCount",
            Kind::Counter,
            lab(),
            ld(&thrift.errors[i]),
        );
        t.add_labelled(
            "callTimeNanosCount",
            Kind::Counter,
            lab(),
            ld(&thrift.nanos[i]),
        );
    }
    let w = &thrift.wire;
    t.add("requestCount", Kind::Counter, ld(&w.requests));
    t.add("protocolErrorCount", Kind::Counter, ld(&w.protocol_errors));
    t.add("unknownMethodCount", Kind::Counter, ld(&w.unknown_methods));
    t.add("oversizedRequestCount", Kind::Counter, ld(&w.oversized));
    for (i, e) in Encoding::ALL.iter().enumerate() {
        t.add_labelled(
            "connectionCount",
            Kind::Counter,
            vec![("encoding", e.name().to_string())],
            ld(&w.connections[i]),
        );
    }
    t.add(
        "openConnections",
        Kind::Gauge,
        thrift.open_connections.load(Ordering::Relaxed) as f64,
    );
    t.add(
        "rejectedConnectionCount",
        Kind::Counter,
        ld(&thrift.rejected_connections),
    );
    t.add("openScanners", Kind::Gauge, scanners.open as f64);
    t.add("expiredScannerCount", Kind::Counter, l(scanners.expired));
    t.add("evictedScannerCount", Kind::Counter, l(scanners.evicted));
    t.add(
        "rowsReturnedCount",
        Kind::Counter,
        ld(&thrift.rows_returned),
    );
    t.add(
        "scannerReadAheadRowsCount",
        Kind::Counter,
        ld(&thrift.rows_read_ahead),
    );
    t.add(
        "cellsReturnedCount",
        Kind::Counter,
        ld(&thrift.cells_returned),
    );
    t.add("rowsMutatedCount", Kind::Counter, ld(&thrift.rows_mutated));
    t.families.extend(thrift.call_time.family());
    t
}

/// The region server's sources: the server, its regions, the WAL, the block cache and
/// checksums.
pub struct RegionServerSource(pub Arc<RegionServer>);

impl MetricsSource for RegionServerSource {
    fn sources(&self, out: &mut Vec<Source>) {
        region_server_sources(&self.0, out);
    }
}

fn region_server_sources(rs: &RegionServer, out: &mut Vec<Source>) {
    let l = |v: u64| v as f64;
    // Regions, aggregated into one source with labels; the server source sums them.
    let mut regions = Source::new(
        "regions",
        "Hadoop:service=HBase,name=RegionServer,sub=Regions",
    );
    let mut totals: Vec<(&'static str, u64)> = Vec::new();
    let mut region_count = 0u64;
    for name in rs.table_names() {
        let Ok(table) = rs.table(&name) else { continue };
        for r in &table.regions {
            region_count += 1;
            let labels = vec![
                ("namespace", name.namespace.clone()),
                ("table", name.qualifier.clone()),
                ("region", r.info.encoded_name.clone()),
            ];
            for (metric, v) in r.metric_values() {
                regions.add_labelled(metric, kind_of(metric), labels.clone(), l(v));
                match totals.iter_mut().find(|(n, _)| *n == metric) {
                    Some(t) => t.1 += v,
                    None => totals.push((metric, v)),
                }
            }
        }
    }
    let mut server = Source::new(
        "server",
        "Hadoop:service=HBase,name=RegionServer,sub=Server",
    );
    server.add("regionCount", Kind::Gauge, l(region_count));
    server.add("tableCount", Kind::Gauge, l(rs.table_names().len() as u64));
    let total_requests: u64 = totals
        .iter()
        .filter(|(n, _)| *n == "readRequestCount" || *n == "writeRequestCount")
        .map(|(_, v)| v)
        .sum();
    server.add("totalRequestCount", Kind::Counter, l(total_requests));
    for (metric, v) in &totals {
        if *metric != "maxSequenceId" {
            server.add(*metric, kind_of(metric), l(*v));
        }
    }
    // The server-wide memstore bound: its count, marks and the writes it held back.
    for (metric, v) in rs.memstore_accounting().metric_values() {
        server.add(metric, kind_of(metric), l(v));
    }
    out.push(server);
    out.push(regions);

    let s = rs.wal().stats();
    let mut wal = Source::new("wal", "Hadoop:service=HBase,name=RegionServer,sub=WAL");
    wal.add("appendCount", Kind::Counter, l(s.appends));
    wal.add("skippedAppendCount", Kind::Counter, l(s.skipped_appends));
    wal.add("appendSize", Kind::Counter, l(s.appended_bytes));
    wal.add("syncCount", Kind::Counter, l(s.fsyncs));
    wal.add("groupCommitCount", Kind::Counter, l(s.batches));
    wal.add("maxGroupCommitEdits", Kind::Gauge, l(s.max_batch_edits));
    wal.add(
        "appendTime",
        Kind::Counter,
        s.write_time.as_secs_f64() * 1e3,
    );
    wal.add("syncTime", Kind::Counter, s.fsync_time.as_secs_f64() * 1e3);
    wal.add("rollRequestCount", Kind::Counter, l(s.rolls));
    wal.add("segmentsDeletedCount", Kind::Counter, l(s.segments_deleted));
    wal.add(
        "segmentsRecycledCount",
        Kind::Counter,
        l(s.segments_recycled),
    );
    wal.add("segmentsReusedCount", Kind::Counter, l(s.segments_reused));
    wal.add("segments", Kind::Gauge, l(rs.wal().segments().len() as u64));
    wal.families.push(from_buckets(
        "cairn_wal_sync_time_seconds",
        "Time of each WAL fdatasync (or HDFS hsync), rolls and closes included.",
        &cairn_wal::FSYNC_BUCKET_BOUNDS,
        &s.fsync_buckets,
        s.fsync_time.as_secs_f64(),
    ));
    out.push(wal);

    let mut cache = Source::new(
        "blockcache",
        "Hadoop:service=HBase,name=RegionServer,sub=BlockCache",
    );
    if let Some(c) = rs.block_cache() {
        for (name, v) in c.metrics() {
            let k = kind_of(&name);
            cache.add(name, k, l(v));
        }
    }
    out.push(cache);

    let mut ck = Source::new(
        "checksum",
        "Hadoop:service=HBase,name=RegionServer,sub=Checksum",
    );
    ck.add(
        "fsChecksumFailureCount",
        Kind::Counter,
        l(cairn_hfile::checksum_failures()),
    );
    // Replicas that failed HDFS's own CRCs (the client read another one), and other replica
    // read errors: zero unless the data is on HDFS.
    #[cfg(feature = "hdfs")]
    {
        let h = cairn_fs::hdfs_stats();
        ck.add(
            "hdfsReplicaChecksumFailureCount",
            Kind::Counter,
            l(h.checksum_failures
                .load(std::sync::atomic::Ordering::Relaxed)),
        );
        ck.add(
            "hdfsReplicaReadErrorCount",
            Kind::Counter,
            l(h.replica_read_errors
                .load(std::sync::atomic::Ordering::Relaxed)),
        );
    }
    let (bytes, time) = cairn_checksum::accounting::totals();
    ck.add("checksumBytesCount", Kind::Counter, l(bytes));
    ck.add(
        "checksumTimeNanosCount",
        Kind::Counter,
        time.as_nanos() as f64,
    );
    ck.add_labelled(
        "kernel",
        Kind::Gauge,
        vec![(
            "implementation",
            cairn_checksum::Implementation::best().describe(),
        )],
        1.0,
    );
    out.push(ck);
}

/// HBase's `/jmx` JSON: one bean per source; labelled samples are flattened into HBase's
/// attribute names (`Namespace_<ns>_table_<t>_region_<r>_metric_<name>` for regions,
/// `<method>_<name>` for Thrift methods).
pub fn jmx(sources: &[Source]) -> serde_json::Value {
    let beans: Vec<serde_json::Value> = sources
        .iter()
        .map(|s| {
            let mut bean = serde_json::Map::new();
            bean.insert("name".into(), s.bean.into());
            bean.insert("modelerType".into(), s.bean.into());
            for m in &s.samples {
                let key = if m.labels.is_empty() {
                    m.name.clone()
                } else if s.name == "regions" {
                    let get = |k: &str| {
                        m.labels
                            .iter()
                            .find(|(n, _)| *n == k)
                            .map(|(_, v)| v.as_str())
                            .unwrap_or("")
                    };
                    format!(
                        "Namespace_{}_table_{}_region_{}_metric_{}",
                        get("namespace"),
                        get("table"),
                        get("region"),
                        m.name
                    )
                } else {
                    let prefix: Vec<&str> = m.labels.iter().map(|(_, v)| v.as_str()).collect();
                    format!("{}_{}", prefix.join("_"), m.name)
                };
                let v = if m.value.fract() == 0.0 {
                    serde_json::Value::from(m.value as i64)
                } else {
                    serde_json::Value::from(m.value)
                };
                bean.insert(key, v);
            }
            serde_json::Value::Object(bean)
        })
        .collect();
    serde_json::json!({ "beans": beans })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_slots_match_names() {
        assert_eq!(METHODS[Method::GetRow as usize], "getRow");
        assert_eq!(METHODS[Method::GetClusterId as usize], "getClusterId");
        let m = ThriftMetrics::default();
        m.record(Method::GetRow, Duration::from_micros(3), true);
        m.record(Method::GetRow, Duration::from_micros(3), false);
        assert_eq!(m.calls(Method::GetRow), 2);
        assert_eq!(m.errors(Method::GetRow), 1);
        assert_eq!(m.calls(Method::Get), 0);
    }

    #[test]
    fn the_server_source_shows_the_global_memstore_bound() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = cairn_region::ServerConfig::new(dir.path());
        c.background = false;
        c.global_memstore.size = Some(8388608.0);
        let rs = RegionServer::open(c).unwrap();
        let registry = Registry::new();
        registry.register(std::sync::Arc::new(RegionServerSource(rs)));
        let sources = registry.gather();
        let server = sources.iter().find(|s| s.name == "server").unwrap();
        let get = |n: &str| {
            server
                .samples
                .iter()
                .find(|s| s.name == n)
                .map(|s| (s.value, s.kind))
        };
        assert_eq!(get("globalMemStoreLimit"), Some((8388608.0, Kind::Gauge)));
        assert_eq!(get("globalMemStoreSize"), Some((0.0, Kind::Gauge)));
        assert_eq!(get("updatesBlockedCount"), Some((0.0, Kind::Counter)));
        assert_eq!(get("updatesBlockedTime"), Some((0.0, Kind::Counter)));
    }

    #[test]
    fn jmx_flattens_labels() {
        let mut s = Source::new("x", "bean");
        s.add("aCount", Kind::Counter, 3.0);
        s.add_labelled("bCount", Kind::Counter, vec![("t", "a\"b".into())], 1.0);
        s.add("cValue", Kind::Gauge, 0.0);
        s.add_labelled("bCount", Kind::Counter, vec![("t", "c".into())], 2.5);
        let j = jmx(&[s]);
        assert_eq!(j["beans"][0]["aCount"], 3);
        assert_eq!(j["beans"][0]["c_bCount"], 2.5);
    }
}
