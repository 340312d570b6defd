//! HBase's Thrift1 `Hbase` service over the embedded region server, with the semantics of
//! HBase's `ThriftHBaseServiceHandler`: columns are `family` or `family:qualifier`, `…Ts`
//! reads see versions strictly older than the timestamp, mutations of a row apply its deletes
//! and then its puts, a row that is not there is an empty list, and errors are `IOError`,
//! `IllegalArgument` (where the method declares it) or `AlreadyExists`, with a message naming
//! the table, family or field.
//!
//! This file dispatches each method, timing it for the metrics; the work is in `admin`
//! (tables), `reads`, `writes` and `scanners` (open scanners, leases, reading ahead), with
//! Thrift ↔ region-store types in `conversions` and exceptions in `errors`. The handler only
//! translates: storage is cairn-region's.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_cell::LATEST_TIMESTAMP;
use cairn_region::{Delete, RegionServer};
use cairn_thrift::hbase::{
    BatchMutation, ColumnDescriptor, HbaseSyncHandler, Mutation, ScannerID, TCell, TIncrement,
    TRegionInfo, TRowResult, TScan, TThriftServerType, Text,
};
use cairn_thrift::thrift;
use parking_lot::Mutex;

use crate::connections::Activity;
use crate::metrics::{Method, ThriftMetrics};
use crate::security::{Authorizer, Caller, ACCESS_DENIED};

mod admin;
mod conversions;
mod errors;
mod reads;
mod scanners;
mod writes;

pub use scanners::NextBatch;

use conversions::{before, versions};
use errors::{as_io, io_error};

type Attrs = BTreeMap<Text, Text>;
type TResult<T> = thrift::Result<T>;

/// Limits and identity of the handler.
#[derive(Clone, Debug)]
pub struct HandlerConfig {
    /// At most this many scanners open at once, over all connections
    /// (`cairn.thrift.max.open.scanners`): opening one more closes the least recently used.
    pub max_open_scanners: usize,
    /// A scanner not used for this long is closed (HBase's
    /// `hbase.client.scanner.timeout.period`, 60 s).
    pub scanner_lease: Duration,
    /// Rows one `scannerGetList` / `getRows` call may ask for (`cairn.thrift.max.rows.per.call`).
    pub max_rows_per_call: usize,
    /// Bytes of rows a scanner reads ahead of the client's next `scannerGetList` (0: none;
    /// `cairn.thrift.scanner.read_ahead.bytes`).
    pub scanner_read_ahead_bytes: usize,
    /// What `getTableRegions` reports as the server.
    pub server_name: String,
    /// What `getTableRegions` reports as the server's port.
    pub port: i32,
    /// What `getClusterId` answers.
    pub cluster_id: String,
    /// Who may run admin operations (`hbase.security.authorization`, `hbase.superuser`).
    pub authorizer: Arc<Authorizer>,
}

impl Default for HandlerConfig {
    fn default() -> Self {
        HandlerConfig {
            max_open_scanners: 10_000,
            scanner_lease: Duration::from_secs(60),
            max_rows_per_call: 100_000,
            scanner_read_ahead_bytes: 4 << 20,
            server_name: "localhost".into(),
            port: 9090,
            cluster_id: "cairn".into(),
            authorizer: Arc::new(Authorizer::off()),
        }
    }
}

/// The state behind [`Handler`], shared by every connection.
pub struct HandlerCore {
    rs: Arc<RegionServer>,
    metrics: Arc<ThriftMetrics>,
    config: HandlerConfig,
    scanners: scanners::Scanners,
    /// Bytes of rows read ahead by all open scanners.
    ahead_total: Arc<AtomicUsize>,
}

impl Handler {
    /// The state every connection's handle shares, as a metrics source.
    pub fn core(&self) -> Arc<HandlerCore> {
        self.core.clone()
    }
}

/// The `Hbase` service as one connection uses it: the shared [`HandlerCore`] and what this
/// connection's last scanner call left to read ahead between its requests. Clones are
/// handles to the same connection (the processor owns one, the connection loop another);
/// [`Handler::connection`] makes a handle for a new connection.
#[derive(Clone)]
pub struct Handler {
    core: Arc<HandlerCore>,
    /// The batch this connection's last `scannerGetList` leaves to read ahead: set by that
    /// call, taken by [`Handler::read_ahead`] after the answer is sent.
    next_batch: Arc<Mutex<Option<NextBatch>>>,
    /// Who calls on this connection (its client certificate's holder, or nobody).
    caller: Caller,
    /// The connection's activity, marked busy while a call runs (so the connection is not
    /// closed as idle under it); `None` outside a server.
    activity: Option<Arc<Activity>>,
}

impl std::ops::Deref for Handler {
    type Target = HandlerCore;
    fn deref(&self) -> &HandlerCore {
        &self.core
    }
}

impl Handler {
    /// A handler over `rs` (a handle of no connection yet: see [`Handler::connection`]).
    pub fn new(
        rs: Arc<RegionServer>,
        metrics: Arc<ThriftMetrics>,
        config: HandlerConfig,
    ) -> Handler {
        Handler {
            core: Arc::new(HandlerCore {
                rs,
                metrics,
                scanners: scanners::scanners(&config),
                config,
                ahead_total: Arc::new(AtomicUsize::new(0)),
            }),
            next_batch: Arc::default(),
            caller: Caller::Nobody,
            activity: None,
        }
    }

    /// A handle for a new connection: the same tables and scanners, its own read-ahead.
    pub fn connection(&self) -> Handler {
        Handler {
            core: self.core.clone(),
            next_batch: Arc::default(),
            caller: Caller::Nobody,
            activity: None,
        }
    }

    /// Who may run admin operations.
    pub fn authorizer(&self) -> &Authorizer {
        &self.config.authorizer
    }

    /// A handle for a new connection of `caller`, whose calls are marked on `activity`.
    pub fn connection_of(&self, caller: Caller, activity: Arc<Activity>) -> Handler {
        Handler {
            caller,
            activity: Some(activity),
            ..self.connection()
        }
    }

    /// Runs one call of this connection: an admin operation only for a superuser when
    /// authorization is on (an `IOError` carrying HBase's `AccessDeniedException` message
    /// otherwise), the connection marked busy while it runs.
    fn call<T>(&self, m: Method, f: impl FnOnce() -> TResult<T>) -> TResult<T> {
        if crate::security::thrift_is_admin(m) {
            if let Err(d) = self.config.authorizer.require_admin(&self.caller) {
                return self
                    .core
                    .call(m, || Err(io_error(format!("{ACCESS_DENIED}: {d}"))));
            }
        }
        if let Some(a) = &self.activity {
            // Done once the answer is out: the connection loop marks it, between requests.
            a.call_started();
        }
        self.core.call(m, f)
    }

    /// Between this connection's requests: reads ahead for the scanner its last
    /// `scannerGetList` read from, if that left rows (see [`HandlerCore::read_ahead`]).
    pub fn read_ahead(&self, request_waiting: &mut dyn FnMut() -> bool) {
        let next = self.next_batch.lock().take();
        if let Some(next) = next {
            self.core.read_ahead(next, request_waiting);
        }
    }

    fn scanner_rows(&self, id: ScannerID, n: i32) -> TResult<Vec<TRowResult>> {
        let (rows, next) = self.core.scanner_rows(id, n)?;
        if next.is_some() {
            *self.next_batch.lock() = next;
        }
        Ok(rows)
    }
}

impl crate::metrics::MetricsSource for HandlerCore {
    fn sources(&self, out: &mut Vec<crate::metrics::Source>) {
        let counts = crate::metrics::ScannerCounts {
            open: self.scanners.len(),
            expired: self.scanners.expired(),
            evicted: self.scanners.evicted(),
        };
        out.push(crate::metrics::thrift_source(&self.metrics, counts));
    }
}

impl HandlerCore {
    /// The region server the handler serves.
    pub fn region_server(&self) -> &Arc<RegionServer> {
        &self.rs
    }

    fn call<T>(&self, m: Method, f: impl FnOnce() -> TResult<T>) -> TResult<T> {
        let start = Instant::now();
        let r = f();
        let took = start.elapsed();
        self.metrics.record(m, took, r.is_ok());
        // Thrift answers are not sized here: only the time limit applies to them.
        if let Some(kind) = self.metrics.slow_log.check(took, 0) {
            self.metrics.slow_log.record(crate::slow_log::SlowCall {
                kind,
                start: std::time::SystemTime::now() - took,
                protocol: "Thrift",
                method: crate::metrics::METHODS[m as usize].to_string(),
                param: String::new(),
                client: String::new(),
                processing: took,
                queue: Duration::ZERO,
                response_size: 0,
            });
        }
        r
    }

    fn count_rows(&self, rows: &[TRowResult]) {
        let cells: usize = rows
            .iter()
            .map(|r| {
                r.columns.as_ref().map_or(0, |c| c.len())
                    + r.sorted_columns.as_ref().map_or(0, |c| c.len())
            })
            .sum();
        self.metrics
            .rows_returned
            .fetch_add(rows.len() as u64, Ordering::Relaxed);
        self.metrics
            .cells_returned
            .fetch_add(cells as u64, Ordering::Relaxed);
    }
}

impl HbaseSyncHandler for Handler {
    fn handle_enable_table(&self, table_name: Vec<u8>) -> TResult<()> {
        self.call(Method::EnableTable, || self.enable_table(&table_name))
    }

    fn handle_disable_table(&self, table_name: Vec<u8>) -> TResult<()> {
        self.call(Method::DisableTable, || self.disable_table(&table_name))
    }

    fn handle_is_table_enabled(&self, table_name: Vec<u8>) -> TResult<bool> {
        self.call(Method::IsTableEnabled, || {
            self.is_table_enabled(&table_name)
        })
    }

    fn handle_compact(&self, name: Vec<u8>) -> TResult<()> {
        self.call(Method::Compact, || self.compact(&name, false))
    }

    fn handle_major_compact(&self, name: Vec<u8>) -> TResult<()> {
        self.call(Method::MajorCompact, || self.compact(&name, true))
    }

    fn handle_get_table_names(&self) -> TResult<Vec<Text>> {
        self.call(Method::GetTableNames, || Ok(self.table_names()))
    }

    fn handle_get_table_names_with_is_table_enabled(&self) -> TResult<BTreeMap<Text, bool>> {
        self.call(Method::GetTableNamesWithIsTableEnabled, || {
            Ok(self.table_names_enabled())
        })
    }

    fn handle_get_column_descriptors(
        &self,
        table_name: Text,
    ) -> TResult<BTreeMap<Text, ColumnDescriptor>> {
        self.call(Method::GetColumnDescriptors, || {
            self.column_descriptors(&table_name)
        })
    }

    fn handle_get_table_regions(&self, table_name: Text) -> TResult<Vec<TRegionInfo>> {
        self.call(Method::GetTableRegions, || self.table_regions(&table_name))
    }

    fn handle_create_table(
        &self,
        table_name: Text,
        column_families: Vec<ColumnDescriptor>,
    ) -> TResult<()> {
        self.call(Method::CreateTable, || {
            self.create_table(&table_name, &column_families)
        })
    }

    fn handle_delete_table(&self, table_name: Text) -> TResult<()> {
        self.call(Method::DeleteTable, || self.delete_table(&table_name))
    }

    fn handle_get(&self, table: Text, row: Text, column: Text, _: Attrs) -> TResult<Vec<TCell>> {
        self.call(Method::Get, || {
            self.get_cells(&table, &row, &column, 1, None)
        })
    }

    fn handle_get_ver(
        &self,
        table: Text,
        row: Text,
        column: Text,
        num_versions: i32,
        _: Attrs,
    ) -> TResult<Vec<TCell>> {
        self.call(Method::GetVer, || {
            let n = versions(num_versions).map_err(io_error)?;
            self.get_cells(&table, &row, &column, n, None)
        })
    }

    fn handle_get_ver_ts(
        &self,
        table: Text,
        row: Text,
        column: Text,
        timestamp: i64,
        num_versions: i32,
        _: Attrs,
    ) -> TResult<Vec<TCell>> {
        self.call(Method::GetVerTs, || {
            let n = versions(num_versions).map_err(io_error)?;
            self.get_cells(&table, &row, &column, n, Some(before(timestamp)))
        })
    }

    fn handle_get_row(&self, table: Text, row: Text, _: Attrs) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRow, || {
            self.get_rows(&table, vec![row], &[], None)
        })
    }

    fn handle_get_row_with_columns(
        &self,
        table: Text,
        row: Text,
        columns: Vec<Text>,
        _: Attrs,
    ) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRowWithColumns, || {
            self.get_rows(&table, vec![row], &columns, None)
        })
    }

    fn handle_get_row_ts(
        &self,
        table: Text,
        row: Text,
        timestamp: i64,
        _: Attrs,
    ) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRowTs, || {
            self.get_rows(&table, vec![row], &[], Some(before(timestamp)))
        })
    }

    fn handle_get_row_with_columns_ts(
        &self,
        table: Text,
        row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _: Attrs,
    ) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRowWithColumnsTs, || {
            self.get_rows(&table, vec![row], &columns, Some(before(timestamp)))
        })
    }

    fn handle_get_rows(&self, table: Text, rows: Vec<Text>, _: Attrs) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRows, || self.get_rows(&table, rows, &[], None))
    }

    fn handle_get_rows_with_columns(
        &self,
        table: Text,
        rows: Vec<Text>,
        columns: Vec<Text>,
        _: Attrs,
    ) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRowsWithColumns, || {
            self.get_rows(&table, rows, &columns, None)
        })
    }

    fn handle_get_rows_ts(
        &self,
        table: Text,
        rows: Vec<Text>,
        timestamp: i64,
        _: Attrs,
    ) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRowsTs, || {
            self.get_rows(&table, rows, &[], Some(before(timestamp)))
        })
    }

    fn handle_get_rows_with_columns_ts(
        &self,
        table: Text,
        rows: Vec<Text>,
        columns: Vec<Text>,
        timestamp: i64,
        _: Attrs,
    ) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRowsWithColumnsTs, || {
            self.get_rows(&table, rows, &columns, Some(before(timestamp)))
        })
    }

    fn handle_mutate_row(
        &self,
        table: Text,
        row: Text,
        mutations: Vec<Mutation>,
        _: Attrs,
    ) -> TResult<()> {
        self.call(Method::MutateRow, || {
            self.apply_rows(&table, &[(row, &mutations)], LATEST_TIMESTAMP)
        })
    }

    fn handle_mutate_row_ts(
        &self,
        table: Text,
        row: Text,
        mutations: Vec<Mutation>,
        timestamp: i64,
        _: Attrs,
    ) -> TResult<()> {
        self.call(Method::MutateRowTs, || {
            self.apply_rows(&table, &[(row, &mutations)], timestamp)
        })
    }

    fn handle_mutate_rows(
        &self,
        table: Text,
        batches: Vec<BatchMutation>,
        _: Attrs,
    ) -> TResult<()> {
        self.call(Method::MutateRows, || {
            self.mutate_batches(&table, &batches, LATEST_TIMESTAMP)
        })
    }

    fn handle_mutate_rows_ts(
        &self,
        table: Text,
        batches: Vec<BatchMutation>,
        timestamp: i64,
        _: Attrs,
    ) -> TResult<()> {
        self.call(Method::MutateRowsTs, || {
            self.mutate_batches(&table, &batches, timestamp)
        })
    }

    fn handle_atomic_increment(
        &self,
        table: Text,
        row: Text,
        column: Text,
        value: i64,
    ) -> TResult<i64> {
        self.call(Method::AtomicIncrement, || {
            self.increment_one(&TIncrement {
                table: Some(table),
                row: Some(row),
                column: Some(column),
                ammount: Some(value),
            })
        })
    }

    fn handle_delete_all(&self, table: Text, row: Text, column: Text, _: Attrs) -> TResult<()> {
        self.call(Method::DeleteAll, || {
            self.delete_column(&table, &row, &column, None)
        })
    }

    fn handle_delete_all_ts(
        &self,
        table: Text,
        row: Text,
        column: Text,
        timestamp: i64,
        _: Attrs,
    ) -> TResult<()> {
        self.call(Method::DeleteAllTs, || {
            self.delete_column(&table, &row, &column, Some(timestamp))
        })
    }

    fn handle_delete_all_row(&self, table: Text, row: Text, _: Attrs) -> TResult<()> {
        self.call(Method::DeleteAllRow, || {
            self.delete(&table, Delete::new(&row))
        })
    }

    fn handle_increment(&self, increment: TIncrement) -> TResult<()> {
        self.call(Method::Increment, || {
            self.increment_one(&increment).map(|_| ()).map_err(as_io)
        })
    }

    fn handle_increment_rows(&self, increments: Vec<TIncrement>) -> TResult<()> {
        self.call(Method::IncrementRows, || self.increment_rows(&increments))
    }

    fn handle_delete_all_row_ts(
        &self,
        table: Text,
        row: Text,
        timestamp: i64,
        _: Attrs,
    ) -> TResult<()> {
        self.call(Method::DeleteAllRowTs, || {
            self.delete(&table, Delete::with_timestamp(&row, timestamp))
        })
    }

    fn handle_scanner_open_with_scan(
        &self,
        table: Text,
        scan: TScan,
        _: Attrs,
    ) -> TResult<ScannerID> {
        self.call(Method::ScannerOpenWithScan, || {
            self.open_thrift_scan(&table, &scan)
        })
    }

    fn handle_scanner_open(
        &self,
        table: Text,
        start_row: Text,
        columns: Vec<Text>,
        _: Attrs,
    ) -> TResult<ScannerID> {
        self.call(Method::ScannerOpen, || {
            self.scan_with(&table, &start_row, None, &columns, None)
        })
    }

    fn handle_scanner_open_with_stop(
        &self,
        table: Text,
        start_row: Text,
        stop_row: Text,
        columns: Vec<Text>,
        _: Attrs,
    ) -> TResult<ScannerID> {
        self.call(Method::ScannerOpenWithStop, || {
            self.scan_with(&table, &start_row, Some(&stop_row), &columns, None)
        })
    }

    fn handle_scanner_open_with_prefix(
        &self,
        table: Text,
        start_and_prefix: Text,
        columns: Vec<Text>,
        _: Attrs,
    ) -> TResult<ScannerID> {
        self.call(Method::ScannerOpenWithPrefix, || {
            self.open_prefix_scan(&table, &start_and_prefix, &columns)
        })
    }

    fn handle_scanner_open_ts(
        &self,
        table: Text,
        start_row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _: Attrs,
    ) -> TResult<ScannerID> {
        self.call(Method::ScannerOpenTs, || {
            self.scan_with(&table, &start_row, None, &columns, Some(timestamp))
        })
    }

    fn handle_scanner_open_with_stop_ts(
        &self,
        table: Text,
        start_row: Text,
        stop_row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _: Attrs,
    ) -> TResult<ScannerID> {
        self.call(Method::ScannerOpenWithStopTs, || {
            self.scan_with(
                &table,
                &start_row,
                Some(&stop_row),
                &columns,
                Some(timestamp),
            )
        })
    }

    fn handle_scanner_get(&self, id: ScannerID) -> TResult<Vec<TRowResult>> {
        self.call(Method::ScannerGet, || self.scanner_rows(id, 1))
    }

    fn handle_scanner_get_list(&self, id: ScannerID, nb_rows: i32) -> TResult<Vec<TRowResult>> {
        self.call(Method::ScannerGetList, || self.scanner_rows(id, nb_rows))
    }

    fn handle_scanner_close(&self, id: ScannerID) -> TResult<()> {
        self.call(Method::ScannerClose, || self.close_scanner(id))
    }

    fn handle_check_and_put(
        &self,
        table: Text,
        row: Text,
        column: Text,
        value: Text,
        mput: Mutation,
        _: Attrs,
    ) -> TResult<bool> {
        self.call(Method::CheckAndPut, || {
            self.check_and_put(&table, &row, &column, &value, &mput)
        })
    }

    fn handle_get_thrift_server_type(&self) -> TResult<TThriftServerType> {
        self.call(Method::GetThriftServerType, || Ok(TThriftServerType::ONE))
    }

    fn handle_get_cluster_id(&self) -> TResult<String> {
        self.call(Method::GetClusterId, || Ok(self.config.cluster_id.clone()))
    }
}
