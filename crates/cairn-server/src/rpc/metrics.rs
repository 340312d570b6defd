//! The native RPC server's metrics, with the names of HBase's `MetricsHBaseServerSource`
//! (bean `Hadoop:service=HBase,name=RegionServer,sub=IPC`): call, queue and processing times,
//! request and response sizes, bytes in and out, connections, exceptions by class; plus
//! per-method call counts and times.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use super::connection::Service;
use crate::metrics::{Kind, MethodLatencies, Source};

/// The methods with a counter slot of their own, sorted (looked up by binary search); any
/// other method counts under `other`.
const METHODS: &[&str] = &[
    "Balance",
    "BulkLoadHFile",
    "CleanupBulkLoad",
    "CompactRegion",
    "CreateNamespace",
    "CreateTable",
    "DeleteNamespace",
    "DeleteTable",
    "DisableTable",
    "EnableTable",
    "FlushRegion",
    "FlushTable",
    "Get",
    "GetActiveMaster",
    "GetBootstrapNodes",
    "GetClusterId",
    "GetClusterStatus",
    "GetMasters",
    "GetMetaRegionLocations",
    "GetNamespaceDescriptor",
    "GetOnlineRegion",
    "GetRegionInfo",
    "GetRegionLoad",
    "GetServerInfo",
    "GetTableDescriptors",
    "GetTableNames",
    "GetTableState",
    "IsBalancerEnabled",
    "IsMasterRunning",
    "IsProcedureDone",
    "IsSplitOrMergeEnabled",
    "ListNamespaceDescriptors",
    "ListNamespaces",
    "MergeTableRegions",
    "Multi",
    "Mutate",
    "PrepareBulkLoad",
    "Scan",
    "SetBalancerRunning",
    "SetSplitOrMergeEnabled",
    "SplitRegion",
    "getProcedureResult",
    "truncateTable",
];
const SLOTS: usize = METHODS.len() + 1;

/// Exception classes counted by name, as HBase's `exceptions.<Name>` metrics.
const EXCEPTIONS: &[(&str, &str)] = &[
    (
        "org.apache.hadoop.hbase.RegionTooBusyException",
        "exceptions.RegionTooBusyException",
    ),
    (
        "org.apache.hadoop.hbase.CallQueueTooBigException",
        "exceptions.callQueueTooBig",
    ),
    (
        "org.apache.hadoop.hbase.UnknownScannerException",
        "exceptions.UnknownScannerException",
    ),
    (
        "org.apache.hadoop.hbase.NotServingRegionException",
        "exceptions.NotServingRegionException",
    ),
    (
        "org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException",
        "exceptions.OutOfOrderScannerNextException",
    ),
    (
        "org.apache.hadoop.hbase.exceptions.RequestTooBigException",
        "exceptions.RequestTooBigException",
    ),
    (
        "org.apache.hadoop.hbase.exceptions.FailedSanityCheckException",
        "exceptions.FailedSanityCheckException",
    ),
    (
        "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException",
        "exceptions.NoSuchColumnFamilyException",
    ),
];

#[derive(Default)]
struct Sum {
    count: AtomicU64,
    total: AtomicU64,
    max: AtomicU64,
}

impl Sum {
    fn add(&self, v: u64) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.total.fetch_add(v, Ordering::Relaxed);
        self.max.fetch_max(v, Ordering::Relaxed);
    }
    fn emit(&self, src: &mut Source, name: &str) {
        let n = self.count.load(Ordering::Relaxed);
        let t = self.total.load(Ordering::Relaxed);
        src.add(format!("{name}_num_ops"), Kind::Counter, n as f64);
        src.add(
            format!("{name}_mean"),
            Kind::Gauge,
            if n == 0 { 0.0 } else { t as f64 / n as f64 },
        );
        src.add(
            format!("{name}_max"),
            Kind::Gauge,
            self.max.load(Ordering::Relaxed) as f64,
        );
    }
}

impl crate::metrics::MetricsSource for RpcMetrics {
    fn sources(&self, out: &mut Vec<Source>) {
        out.push(self.source());
    }
}

/// Counters of the native RPC server.
pub struct RpcMetrics {
    calls: [AtomicU64; SLOTS],
    process_us: [AtomicU64; SLOTS],
    queue_us: [AtomicU64; SLOTS],
    queue_call_time: Sum,
    process_call_time: Sum,
    total_call_time: Sum,
    request_size: Sum,
    response_size: Sum,
    received: AtomicU64,
    sent: AtomicU64,
    open_connections: AtomicI64,
    rejected_connections: AtomicU64,
    exceptions: AtomicU64,
    by_class: [AtomicU64; 8],
    /// Time in the call queue, by method (Prometheus only).
    queue_time: MethodLatencies,
    /// Time being processed, by method (Prometheus only).
    process_time: MethodLatencies,
    /// Calls past the slow or large limits (shared with the Thrift front end).
    pub(crate) slow_log: std::sync::Arc<crate::slow_log::SlowLog>,
}

impl Default for RpcMetrics {
    fn default() -> Self {
        RpcMetrics::new(Default::default())
    }
}

impl RpcMetrics {
    /// Counters starting at zero, recording slow and large calls into `slow_log`.
    pub fn new(slow_log: std::sync::Arc<crate::slow_log::SlowLog>) -> Self {
        RpcMetrics {
            slow_log,
            calls: std::array::from_fn(|_| AtomicU64::new(0)),
            process_us: std::array::from_fn(|_| AtomicU64::new(0)),
            queue_us: std::array::from_fn(|_| AtomicU64::new(0)),
            queue_call_time: Sum::default(),
            process_call_time: Sum::default(),
            total_call_time: Sum::default(),
            request_size: Sum::default(),
            response_size: Sum::default(),
            received: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            open_connections: AtomicI64::new(0),
            rejected_connections: AtomicU64::new(0),
            exceptions: AtomicU64::new(0),
            by_class: std::array::from_fn(|_| AtomicU64::new(0)),
            queue_time: MethodLatencies::new(
                "cairn_ipc_queue_call_time_seconds",
                "Native RPC time in the call queue by method (HBase's QueueCallTime).",
                METHODS,
                Some("other"),
            ),
            process_time: MethodLatencies::new(
                "cairn_ipc_process_call_time_seconds",
                "Native RPC processing time by method (HBase's ProcessCallTime).",
                METHODS,
                Some("other"),
            ),
        }
    }
}

fn slot(method: &str) -> usize {
    METHODS.binary_search(&method).unwrap_or(METHODS.len())
}

impl RpcMetrics {
    /// Counts one finished call.
    pub(super) fn call_done(
        &self,
        _service: Service,
        method: &str,
        queued: Duration,
        processed: Duration,
        request_bytes: usize,
        response_bytes: usize,
    ) {
        let i = slot(method);
        let (q, p) = (queued.as_micros() as u64, processed.as_micros() as u64);
        self.calls[i].fetch_add(1, Ordering::Relaxed);
        self.process_us[i].fetch_add(p, Ordering::Relaxed);
        self.queue_us[i].fetch_add(q, Ordering::Relaxed);
        self.queue_time.observe(i, queued);
        self.process_time.observe(i, processed);
        // HBase's call times are in milliseconds.
        self.queue_call_time.add(q / 1000);
        self.process_call_time.add(p / 1000);
        self.total_call_time.add((q + p) / 1000);
        self.request_size.add(request_bytes as u64);
        self.response_size.add(response_bytes as u64);
        self.sent(response_bytes);
    }

    /// Bytes read off connections.
    pub(super) fn received(&self, n: usize) {
        self.received.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Bytes written to connections.
    pub(super) fn sent(&self, n: usize) {
        self.sent.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// A failed call of exception class `class`.
    pub(super) fn exception(&self, class: &str) {
        self.exceptions.fetch_add(1, Ordering::Relaxed);
        if let Some(i) = EXCEPTIONS.iter().position(|(c, _)| *c == class) {
            self.by_class[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(super) fn connection_opened(&self) {
        self.open_connections.fetch_add(1, Ordering::AcqRel);
    }

    pub(super) fn connection_closed(&self) {
        self.open_connections.fetch_sub(1, Ordering::AcqRel);
    }

    pub(super) fn rejected_connection(&self) {
        self.rejected_connections.fetch_add(1, Ordering::Relaxed);
    }

    /// Calls of `method` so far.
    pub fn calls(&self, method: &str) -> u64 {
        self.calls[slot(method)].load(Ordering::Relaxed)
    }

    /// Exceptions sent so far.
    pub fn exceptions(&self) -> u64 {
        self.exceptions.load(Ordering::Relaxed)
    }

    /// Connections open now.
    pub fn open_connections(&self) -> i64 {
        self.open_connections.load(Ordering::Acquire)
    }

    /// The metrics as a source (`/metrics`, `/jmx`).
    pub fn source(&self) -> Source {
        let mut s = Source::new("ipc", "Hadoop:service=HBase,name=RegionServer,sub=IPC");
        let ld = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64;
        s.add(
            "numOpenConnections",
            Kind::Gauge,
            self.open_connections() as f64,
        );
        s.add(
            "rejectedConnectionCount",
            Kind::Counter,
            ld(&self.rejected_connections),
        );
        s.add("receivedBytes", Kind::Counter, ld(&self.received));
        s.add("sentBytes", Kind::Counter, ld(&self.sent));
        self.queue_call_time.emit(&mut s, "QueueCallTime");
        self.process_call_time.emit(&mut s, "ProcessCallTime");
        self.total_call_time.emit(&mut s, "TotalCallTime");
        self.request_size.emit(&mut s, "RequestSize");
        self.response_size.emit(&mut s, "ResponseSize");
        s.add("exceptions", Kind::Counter, ld(&self.exceptions));
        for (i, (_, name)) in EXCEPTIONS.iter().enumerate() {
            s.add(*name, Kind::Counter, ld(&self.by_class[i]));
        }
        for i in 0..SLOTS {
            let n = self.calls[i].load(Ordering::Relaxed);
            if n == 0 {
                continue;
            }
            let m = METHODS.get(i).copied().unwrap_or("other");
            let lab = || vec![("method", m.to_string())];
            s.add_labelled("callCount", Kind::Counter, lab(), n as f64);
            s.add_labelled(
                "processCallTimeMicros",
                Kind::Counter,
                lab(),
                ld(&self.process_us[i]),
            );
            s.add_labelled(
                "queueCallTimeMicros",
                Kind::Counter,
                lab(),
                ld(&self.queue_us[i]),
            );
        }
        s.families.extend(self.queue_time.family());
        s.families.extend(self.process_time.family());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_sorted_for_the_binary_search() {
        assert!(METHODS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(METHODS[slot("Get")], "Get");
        assert_eq!(slot("NoSuchMethod"), METHODS.len());
    }

    #[test]
    fn calls_and_exceptions_are_counted_by_name() {
        let m = RpcMetrics::default();
        m.call_done(
            Service::Client,
            "Get",
            Duration::from_millis(2),
            Duration::from_millis(4),
            10,
            20,
        );
        m.call_done(
            Service::Client,
            "Get",
            Duration::ZERO,
            Duration::from_millis(8),
            10,
            20,
        );
        m.exception("org.apache.hadoop.hbase.RegionTooBusyException");
        assert_eq!(m.calls("Get"), 2);
        let src = m.source();
        let v = |n: &str| {
            src.samples
                .iter()
                .find(|s| s.name == n && s.labels.is_empty())
                .map(|s| s.value)
        };
        assert_eq!(v("ProcessCallTime_num_ops"), Some(2.0));
        assert_eq!(v("ProcessCallTime_mean"), Some(6.0));
        assert_eq!(v("ProcessCallTime_max"), Some(8.0));
        assert_eq!(v("exceptions.RegionTooBusyException"), Some(1.0));
        assert_eq!(v("sentBytes"), Some(40.0));
    }
}
