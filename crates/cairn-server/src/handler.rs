//! HBase's Thrift1 `Hbase` service over the embedded region server, with the semantics of
//! HBase's `ThriftHBaseServiceHandler`: columns are `family` or `family:qualifier`, `…Ts`
//! reads see versions strictly older than the timestamp, mutations of a row apply its deletes
//! and then its puts, a row that is not there is an empty list, and errors are `IOError`,
//! `IllegalArgument` (where the method declares it) or `AlreadyExists`, with a message naming
//! the table, family or field.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_hfile::cell::LATEST_TIMESTAMP;
use cairn_hfile::KeyValue;
use cairn_region::{
    ColumnFamilyDescriptor, Delete, Durability, Get, Increment, Put, RegionError, RegionServer,
    Scan, TableDescriptor, TableName, TableScanner, TimeRange,
};
use cairn_thrift::hbase::{
    AlreadyExists, BatchMutation, ColumnDescriptor, HbaseSyncHandler, IOError, IllegalArgument,
    Mutation, ScannerID, TCell, TColumn, TIncrement, TRegionInfo, TRowResult, TScan,
    TThriftServerType, Text,
};
use cairn_thrift::thrift;
use parking_lot::Mutex;

use crate::metrics::{Method, ThriftMetrics};

type Attrs = BTreeMap<Text, Text>;
type TResult<T> = thrift::Result<T>;

fn io_error(msg: impl std::fmt::Display) -> thrift::Error {
    thrift::Error::User(Box::new(IOError {
        message: Some(msg.to_string()),
        can_retry: Some(false),
    }))
}

fn illegal(msg: impl std::fmt::Display) -> thrift::Error {
    thrift::Error::User(Box::new(IllegalArgument {
        message: Some(msg.to_string()),
    }))
}

/// A region-store error for a method that declares only `IOError`.
fn io(e: RegionError) -> thrift::Error {
    io_error(e)
}

/// A region-store error for a method that declares `IllegalArgument` too.
fn io_or_illegal(e: RegionError) -> thrift::Error {
    match e {
        RegionError::InvalidArgument(_) | RegionError::Filter(_) | RegionError::Cell(_) => {
            illegal(e)
        }
        e => io_error(e),
    }
}

/// Limits and identity of the handler.
#[derive(Clone, Debug)]
pub struct HandlerConfig {
    /// At most this many scanners open at once (over all connections).
    pub max_open_scanners: usize,
    /// A scanner not used for this long is closed (HBase's
    /// `hbase.client.scanner.timeout.period`, 60 s).
    pub scanner_lease: Duration,
    /// Rows one `scannerGetList` / `getRows` call may ask for.
    pub max_rows_per_call: usize,
    /// Bytes of rows a scanner reads ahead of the client's next `scannerGetList` (0: none).
    pub scanner_read_ahead_bytes: usize,
    /// What `getTableRegions` reports as the server.
    pub server_name: String,
    pub port: i32,
    pub cluster_id: String,
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
        }
    }
}

struct OpenScanner {
    scanner: TableScanner,
    sort_columns: bool,
    last_used: Instant,
    /// Rows read ahead of the client's next call, in order (see [`HandlerCore::read_ahead`]).
    ahead: VecDeque<TRowResult>,
    /// Their estimated size, also counted in `ahead_total`.
    ahead_bytes: usize,
    ahead_total: Arc<AtomicUsize>,
    /// The scanner has returned its last row.
    exhausted: bool,
    /// An error met while reading ahead: answered once the rows before it are taken.
    failed: Option<RegionError>,
}

impl OpenScanner {
    fn take_ahead(&mut self, n: usize, out: &mut Vec<TRowResult>) {
        let n = n.min(self.ahead.len());
        let mut bytes = 0;
        for r in self.ahead.drain(..n) {
            bytes += row_result_bytes(&r);
            out.push(r);
        }
        self.ahead_bytes -= bytes;
        self.ahead_total.fetch_sub(bytes, Ordering::Relaxed);
    }
}

impl Drop for OpenScanner {
    fn drop(&mut self) {
        self.ahead_total
            .fetch_sub(self.ahead_bytes, Ordering::Relaxed);
    }
}

/// Rows read ahead by all scanners together stop growing past this.
const READ_AHEAD_TOTAL_BYTES: usize = 256 << 20;

/// Rows read ahead between two looks at whether the client's next request has arrived.
const READ_AHEAD_STEP: usize = 64;

thread_local! {
    /// The scanner (and batch size) the last call on this connection's thread read from, if
    /// it has rows left: what [`HandlerCore::read_ahead`] reads ahead for.
    static READ_AHEAD: Cell<Option<(ScannerID, usize)>> = const { Cell::new(None) };
}

/// Roughly the bytes a row result holds.
fn row_result_bytes(r: &TRowResult) -> usize {
    let cell = |c: &TCell| c.value.as_ref().map_or(0, |v| v.len()) + 32;
    r.row.as_ref().map_or(0, |v| v.len())
        + r.columns
            .as_ref()
            .map_or(0, |m| m.iter().map(|(k, c)| k.len() + cell(c) + 32).sum())
        + r.sorted_columns.as_ref().map_or(0, |v| {
            v.iter()
                .map(|c| {
                    c.column_name.as_ref().map_or(0, |n| n.len()) + c.cell.as_ref().map_or(0, cell)
                })
                .sum()
        })
        + 64
}

/// The state behind [`Handler`].
pub struct HandlerCore {
    rs: Arc<RegionServer>,
    metrics: Arc<ThriftMetrics>,
    config: HandlerConfig,
    scanners: Mutex<HashMap<i32, Arc<Mutex<OpenScanner>>>>,
    next_scanner: AtomicI32,
    /// Bytes of rows read ahead by all open scanners.
    ahead_total: Arc<AtomicUsize>,
}

fn utf8<'a>(what: &str, b: &'a [u8]) -> Result<&'a str, String> {
    std::str::from_utf8(b)
        .map_err(|_| format!("{what} is not UTF-8: {:?}", String::from_utf8_lossy(b)))
}

fn table_name(b: &[u8]) -> Result<TableName, String> {
    if b.is_empty() {
        return Err("tableName is missing".into());
    }
    TableName::parse(utf8("tableName", b)?).map_err(|e| e.to_string())
}

/// HBase's `CellUtil.parseColumn`: `family` alone, or `family:qualifier` (an empty qualifier
/// for `family:`).
fn parse_column(c: &[u8]) -> (Vec<u8>, Option<Vec<u8>>) {
    match c.iter().position(|&b| b == b':') {
        None => (c.to_vec(), None),
        Some(i) => (c[..i].to_vec(), Some(c[i + 1..].to_vec())),
    }
}

fn column_name(kv: &KeyValue) -> Vec<u8> {
    let c = kv.as_cell();
    let mut name = Vec::with_capacity(c.family().len() + 1 + c.qualifier().len());
    name.extend_from_slice(c.family());
    name.push(b':');
    name.extend_from_slice(c.qualifier());
    name
}

fn tcell(kv: &KeyValue) -> TCell {
    let c = kv.as_cell();
    TCell {
        value: Some(c.value.to_vec()),
        timestamp: Some(c.timestamp()),
    }
}

/// HBase's `rowResultFromHBase`: `columns` (a map, newest version per column) or, sorted,
/// `sortedColumns` in cell order.
fn row_result(cells: &[KeyValue], sort_columns: bool) -> Option<TRowResult> {
    let first = cells.first()?;
    let row = first.as_cell().row().to_vec();
    if sort_columns {
        let sorted = cells
            .iter()
            .map(|kv| TColumn {
                column_name: Some(column_name(kv)),
                cell: Some(tcell(kv)),
            })
            .collect();
        Some(TRowResult {
            row: Some(row),
            columns: None,
            sorted_columns: Some(sorted),
        })
    } else {
        let mut columns = BTreeMap::new();
        for kv in cells {
            // Cells come newest first within a column: keep the first.
            columns.entry(column_name(kv)).or_insert_with(|| tcell(kv));
        }
        Some(TRowResult {
            row: Some(row),
            columns: Some(columns),
            sorted_columns: None,
        })
    }
}

fn add_columns_get(mut get: Get, columns: &[Text]) -> Get {
    for c in columns {
        get = match parse_column(c) {
            (f, None) => get.family(f),
            (f, Some(q)) => get.column(f, q),
        };
    }
    get
}

fn add_columns_scan(mut scan: Scan, columns: &[Text]) -> Scan {
    for c in columns {
        scan = match parse_column(c) {
            (f, None) => scan.family(f),
            (f, Some(q)) => scan.column(f, q),
        };
    }
    scan
}

/// Timestamps at or below zero make no time range (`setTimeRange(0, 0)` is empty in HBase too).
fn before(ts: i64) -> TimeRange {
    TimeRange::new(0, ts.max(0))
}

fn versions(n: i32) -> Result<u32, String> {
    if n < 1 {
        Err(format!("numVersions must be at least 1, not {n}"))
    } else {
        Ok(n as u32)
    }
}

fn counter_value(kv: &KeyValue) -> Result<i64, String> {
    let v = kv.as_cell().value;
    let b: [u8; 8] = v
        .try_into()
        .map_err(|_| format!("counter value is {} bytes, not 8", v.len()))?;
    Ok(i64::from_be_bytes(b))
}

/// The Put and Delete of one row's mutations (HBase's `mutateRowTs`).
fn row_mutations(
    row: &[u8],
    mutations: &[Mutation],
    ts: i64,
) -> Result<(Option<Put>, Option<Delete>), String> {
    if row.is_empty() {
        return Err("row is missing (empty row keys are not allowed)".into());
    }
    let mut put = Put::with_timestamp(row, ts);
    let mut delete = Delete::with_timestamp(row, ts);
    let (mut puts, mut deletes) = (0, 0);
    let mut skip_wal = false;
    for (i, m) in mutations.iter().enumerate() {
        let column = m
            .column
            .as_deref()
            .ok_or_else(|| format!("mutations[{i}].column is missing"))?;
        let (f, q) = parse_column(column);
        if f.is_empty() {
            return Err(format!(
                "mutations[{i}].column {:?} has no family",
                String::from_utf8_lossy(column)
            ));
        }
        if m.write_to_w_a_l == Some(false) {
            skip_wal = true;
        }
        if m.is_delete == Some(true) {
            delete = match q {
                None => delete.family(f),
                Some(q) => delete.columns(f, q),
            };
            deletes += 1;
        } else {
            // HBase drops such a put with only a warning in its log; cairn says so instead.
            let q = q.ok_or_else(|| {
                format!(
                    "mutations[{i}].column {:?} has no qualifier: a put needs family:qualifier \
                     (only a delete may name a whole family)",
                    String::from_utf8_lossy(column)
                )
            })?;
            let value = m.value.as_deref().unwrap_or_default();
            put = put.add(f, q, value);
            puts += 1;
        }
    }
    if skip_wal {
        put = put.durability(Durability::SkipWal);
        delete = delete.durability(Durability::SkipWal);
    }
    Ok(((puts > 0).then_some(put), (deletes > 0).then_some(delete)))
}

fn column_descriptor(f: &ColumnFamilyDescriptor) -> ColumnDescriptor {
    let mut name = f.name.clone();
    name.push(b':');
    ColumnDescriptor {
        name: Some(name),
        max_versions: Some(f.max_versions.min(i32::MAX as u32) as i32),
        compression: Some(f.compression.name().to_string()),
        in_memory: Some(f.in_memory),
        bloom_filter_type: Some(f.bloom_type.name().to_string()),
        bloom_filter_vector_size: Some(0),
        bloom_filter_nb_hashes: Some(0),
        block_cache_enabled: Some(f.block_cache_enabled),
        time_to_live: Some(f.ttl_seconds.min(i32::MAX as u32) as i32),
    }
}

/// HBase's `colDescFromThrift`, with the IDL's defaults for absent fields.
fn family_from_thrift(i: usize, c: &ColumnDescriptor) -> Result<ColumnFamilyDescriptor, String> {
    let name = c
        .name
        .as_deref()
        .ok_or_else(|| format!("columnFamilies[{i}].name is missing"))?;
    let (family, _) = parse_column(name);
    if family.is_empty() {
        return Err(format!("columnFamilies[{i}].name is empty"));
    }
    let fam = String::from_utf8_lossy(&family).into_owned();
    let max_versions = c.max_versions.unwrap_or(3);
    if max_versions < 1 {
        return Err(format!(
            "columnFamilies[{i}] ({fam}): maxVersions must be positive, not {max_versions}"
        ));
    }
    let mut d = ColumnFamilyDescriptor::new(&family).max_versions(max_versions as u32);
    let compression = c.compression.as_deref().unwrap_or("NONE");
    d =
        d.compression(compression.parse().map_err(|e| {
            format!("columnFamilies[{i}] ({fam}): compression {compression:?}: {e}")
        })?);
    let bloom = c.bloom_filter_type.as_deref().unwrap_or("NONE");
    d = d.bloom_type(
        bloom
            .parse()
            .map_err(|e| format!("columnFamilies[{i}] ({fam}): bloomFilterType: {e}"))?,
    );
    d.in_memory = c.in_memory.unwrap_or(false);
    d.block_cache_enabled = c.block_cache_enabled.unwrap_or(false);
    let ttl = c.time_to_live.unwrap_or(i32::MAX);
    if ttl != -1 && ttl != i32::MAX {
        if ttl <= 0 {
            return Err(format!(
                "columnFamilies[{i}] ({fam}): timeToLive must be positive (or -1), not {ttl}"
            ));
        }
        d = d.ttl_seconds(ttl as u32);
    }
    Ok(d)
}

/// The `Hbase` service: a shared handle (the processor owns one, the server's lease reaper
/// and tests another).
#[derive(Clone)]
pub struct Handler(Arc<HandlerCore>);

impl std::ops::Deref for Handler {
    type Target = HandlerCore;
    fn deref(&self) -> &HandlerCore {
        &self.0
    }
}

impl Handler {
    pub fn new(
        rs: Arc<RegionServer>,
        metrics: Arc<ThriftMetrics>,
        config: HandlerConfig,
    ) -> Handler {
        Handler(Arc::new(HandlerCore {
            rs,
            metrics,
            config,
            scanners: Mutex::new(HashMap::new()),
            next_scanner: AtomicI32::new(1),
            ahead_total: Arc::new(AtomicUsize::new(0)),
        }))
    }
}

impl HandlerCore {
    pub fn region_server(&self) -> &Arc<RegionServer> {
        &self.rs
    }

    fn call<T>(&self, m: Method, f: impl FnOnce() -> TResult<T>) -> TResult<T> {
        let start = Instant::now();
        let r = f();
        self.metrics.record(m, start.elapsed(), r.is_ok());
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

    fn get_cells(
        &self,
        table: &[u8],
        row: &[u8],
        column: &[u8],
        n: u32,
        tr: Option<TimeRange>,
    ) -> TResult<Vec<TCell>> {
        let t = table_name(table).map_err(io_error)?;
        let (f, q) = parse_column(column);
        let mut get = Get::new(row).versions(n);
        get = match q {
            None => get.family(f),
            Some(q) => get.column(f, q),
        };
        if let Some(tr) = tr {
            get = get.time_range(tr);
        }
        let cells = self.rs.get(&t, get).map_err(io)?;
        self.metrics
            .cells_returned
            .fetch_add(cells.len() as u64, Ordering::Relaxed);
        Ok(cells.iter().map(tcell).collect())
    }

    fn get_rows(
        &self,
        table: &[u8],
        rows: Vec<Text>,
        columns: &[Text],
        tr: Option<TimeRange>,
    ) -> TResult<Vec<TRowResult>> {
        let t = table_name(table).map_err(io_error)?;
        if rows.len() > self.config.max_rows_per_call {
            return Err(io_error(format!(
                "{} rows asked in one call; the limit is {}",
                rows.len(),
                self.config.max_rows_per_call
            )));
        }
        let gets: Vec<Get> = rows
            .into_iter()
            .map(|r| {
                let mut g = add_columns_get(Get::new(r), columns);
                if let Some(tr) = tr {
                    g = g.time_range(tr);
                }
                g
            })
            .collect();
        let results = if gets.len() == 1 {
            let g = gets.into_iter().next().expect("one get");
            vec![self.rs.get(&t, g).map_err(io)?]
        } else {
            self.rs.get_many(&t, gets).map_err(io)?
        };
        let out: Vec<TRowResult> = results
            .iter()
            .filter_map(|cells| row_result(cells, false))
            .collect();
        self.count_rows(&out);
        Ok(out)
    }

    fn apply_rows(&self, table: &[u8], batches: &[(Vec<u8>, &[Mutation])], ts: i64) -> TResult<()> {
        let t = table_name(table).map_err(io_error)?;
        let mut puts = Vec::new();
        let mut deletes = Vec::new();
        for (row, muts) in batches {
            let (p, d) = row_mutations(row, muts, ts).map_err(illegal)?;
            puts.extend(p);
            deletes.extend(d);
        }
        for d in &deletes {
            self.rs.delete(&t, d).map_err(io_or_illegal)?;
        }
        if puts.len() == 1 {
            self.rs.put(&t, &puts[0]).map_err(io_or_illegal)?;
        } else if !puts.is_empty() {
            self.rs.put_many(&t, &puts).map_err(io_or_illegal)?;
        }
        self.metrics
            .rows_mutated
            .fetch_add(batches.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn delete(&self, table: &[u8], delete: Delete) -> TResult<()> {
        let t = table_name(table).map_err(io_error)?;
        if delete.row.is_empty() {
            return Err(io_error("row is missing (empty row keys are not allowed)"));
        }
        self.rs.delete(&t, &delete).map_err(io)
    }

    fn increment_one(&self, inc: &TIncrement) -> TResult<i64> {
        let t = table_name(inc.table.as_deref().unwrap_or_default()).map_err(illegal)?;
        let row = inc.row.as_deref().unwrap_or_default();
        if row.is_empty() {
            return Err(illegal("TIncrement.row is missing"));
        }
        let column = inc
            .column
            .as_deref()
            .ok_or_else(|| illegal("TIncrement.column is missing"))?;
        let (f, q) = parse_column(column);
        let cells = self
            .rs
            .increment(
                &t,
                &Increment::new(row).add(f, q.unwrap_or_default(), inc.ammount.unwrap_or(0)),
            )
            .map_err(io_or_illegal)?;
        let kv = cells
            .first()
            .ok_or_else(|| io_error("increment returned no cell"))?;
        counter_value(kv).map_err(io_error)
    }

    fn open_scanner(&self, table: &[u8], scan: Scan, sort_columns: bool) -> TResult<ScannerID> {
        let t = table_name(table).map_err(io_error)?;
        self.expire_scanners();
        if self.scanners.lock().len() >= self.config.max_open_scanners {
            self.metrics
                .rejected_scanners
                .fetch_add(1, Ordering::Relaxed);
            return Err(io_error(format!(
                "too many open scanners (limit {}); close scanners or wait for their lease ({} s) to expire",
                self.config.max_open_scanners,
                self.config.scanner_lease.as_secs()
            )));
        }
        let scanner = self.rs.scanner(&t, scan).map_err(io)?;
        let mut id = self.next_scanner.fetch_add(1, Ordering::Relaxed);
        if id <= 0 {
            // Wrapped around: ids stay positive.
            self.next_scanner.store(2, Ordering::Relaxed);
            id = 1;
        }
        let entry = Arc::new(Mutex::new(OpenScanner {
            scanner,
            sort_columns,
            last_used: Instant::now(),
            ahead: VecDeque::new(),
            ahead_bytes: 0,
            ahead_total: self.ahead_total.clone(),
            exhausted: false,
            failed: None,
        }));
        let mut map = self.scanners.lock();
        if map.insert(id, entry).is_none() {
            self.metrics.open_scanners.fetch_add(1, Ordering::Relaxed);
        }
        Ok(id)
    }

    /// Closes scanners whose lease ran out; returns how many.
    pub fn expire_scanners(&self) -> usize {
        let lease = self.config.scanner_lease;
        let mut map = self.scanners.lock();
        let before = map.len();
        map.retain(|_, s| match s.try_lock() {
            Some(s) => s.last_used.elapsed() < lease,
            None => true, // in use right now
        });
        let expired = before - map.len();
        if expired > 0 {
            self.metrics
                .expired_scanners
                .fetch_add(expired as u64, Ordering::Relaxed);
            self.metrics
                .open_scanners
                .fetch_sub(expired as i64, Ordering::Relaxed);
        }
        expired
    }

    pub fn open_scanner_count(&self) -> usize {
        self.scanners.lock().len()
    }

    fn scanner_rows(&self, id: ScannerID, n: i32) -> TResult<Vec<TRowResult>> {
        if n < 0 {
            return Err(illegal(format!("nbRows must not be negative, not {n}")));
        }
        let n = (n as usize).min(self.config.max_rows_per_call);
        let entry =
            self.scanners.lock().get(&id).cloned().ok_or_else(|| {
                illegal(format!("scanner ID {id} is invalid (closed or expired)"))
            })?;
        let mut s = entry.lock();
        s.last_used = Instant::now();
        let sort = s.sort_columns;
        let mut out = Vec::new();
        s.take_ahead(n, &mut out);
        if out.len() < n && !s.exhausted {
            if let Some(e) = s.failed.take() {
                // Rows read before the error go out first; the error answers the next call.
                if out.is_empty() {
                    return Err(io(e));
                }
                s.failed = Some(e);
            } else {
                let want = n - out.len();
                match s.scanner.next_rows(want) {
                    Ok(rows) => {
                        s.exhausted = rows.len() < want;
                        out.extend(rows.iter().filter_map(|r| row_result(r, sort)));
                    }
                    Err(e) if out.is_empty() => return Err(io(e)),
                    Err(e) => s.failed = Some(e),
                }
            }
        }
        let more = !s.exhausted && s.failed.is_none();
        drop(s);
        if more && n > 1 && self.config.scanner_read_ahead_bytes > 0 {
            READ_AHEAD.with(|r| r.set(Some((id, n))));
        }
        self.count_rows(&out);
        Ok(out)
    }

    /// Reads the next batch of the scanner this thread's last `scannerGetList` used, up to
    /// the size of that call, while the client decodes the batch it was sent: a scanning
    /// client asks again for as many rows, and they are then ready at once, instead of the
    /// client waiting while the server reads them. Stops as soon as `request_waiting` says the
    /// client's next request has begun to arrive, at `scanner_read_ahead_bytes`, or when all
    /// scanners together hold 256 MiB read ahead. The rows come from the scanner's own
    /// snapshot, so reading them early changes nothing the client sees; an error is kept and
    /// answered after the rows before it.
    pub fn read_ahead(&self, request_waiting: &mut dyn FnMut() -> bool) {
        let Some((id, n)) = READ_AHEAD.with(|r| r.take()) else {
            return;
        };
        let Some(entry) = self.scanners.lock().get(&id).cloned() else {
            return;
        };
        // Another connection may be using the same scanner: it does its own reading.
        let Some(mut guard) = entry.try_lock() else {
            return;
        };
        let s = &mut *guard;
        let limit = self.config.scanner_read_ahead_bytes;
        let mut rows = 0u64;
        'steps: while s.ahead.len() < n && !s.exhausted && s.failed.is_none() {
            if s.ahead_bytes >= limit
                || self.ahead_total.load(Ordering::Relaxed) >= READ_AHEAD_TOTAL_BYTES
                || request_waiting()
            {
                break;
            }
            for _ in 0..READ_AHEAD_STEP {
                match s.scanner.next_row() {
                    Ok(Some(cells)) => {
                        if let Some(r) = row_result(&cells, s.sort_columns) {
                            let bytes = row_result_bytes(&r);
                            s.ahead_bytes += bytes;
                            self.ahead_total.fetch_add(bytes, Ordering::Relaxed);
                            s.ahead.push_back(r);
                            rows += 1;
                        }
                    }
                    Ok(None) => s.exhausted = true,
                    Err(e) => s.failed = Some(e),
                }
                if s.exhausted || s.failed.is_some() || s.ahead.len() >= n {
                    break 'steps;
                }
            }
        }
        self.metrics
            .rows_read_ahead
            .fetch_add(rows, Ordering::Relaxed);
    }

    fn scan_with(
        &self,
        table: &[u8],
        start: &[u8],
        stop: Option<&[u8]>,
        columns: &[Text],
        ts: Option<i64>,
    ) -> TResult<ScannerID> {
        let mut scan = Scan::new().range(start, stop.unwrap_or_default());
        scan = add_columns_scan(scan, columns);
        if let Some(ts) = ts {
            scan = scan.time_range(before(ts));
        }
        self.open_scanner(table, scan, false)
    }
}

impl HbaseSyncHandler for Handler {
    fn handle_enable_table(&self, table_name: Vec<u8>) -> TResult<()> {
        self.call(Method::EnableTable, || {
            let t = self::table_name(&table_name).map_err(io_error)?;
            self.rs.enable_table(&t).map_err(io)
        })
    }

    fn handle_disable_table(&self, table_name: Vec<u8>) -> TResult<()> {
        self.call(Method::DisableTable, || {
            let t = self::table_name(&table_name).map_err(io_error)?;
            self.rs.disable_table(&t).map_err(io)
        })
    }

    fn handle_is_table_enabled(&self, table_name: Vec<u8>) -> TResult<bool> {
        self.call(Method::IsTableEnabled, || {
            let t = self::table_name(&table_name).map_err(io_error)?;
            self.rs.is_table_enabled(&t).map_err(io)
        })
    }

    fn handle_compact(&self, name: Vec<u8>) -> TResult<()> {
        self.call(Method::Compact, || self.compact(&name, false))
    }

    fn handle_major_compact(&self, name: Vec<u8>) -> TResult<()> {
        self.call(Method::MajorCompact, || self.compact(&name, true))
    }

    fn handle_get_table_names(&self) -> TResult<Vec<Text>> {
        self.call(Method::GetTableNames, || {
            Ok(self
                .rs
                .table_names()
                .iter()
                .map(|t| t.to_string().into_bytes())
                .collect())
        })
    }

    fn handle_get_table_names_with_is_table_enabled(&self) -> TResult<BTreeMap<Text, bool>> {
        self.call(Method::GetTableNamesWithIsTableEnabled, || {
            let mut out = BTreeMap::new();
            for t in self.rs.table_names() {
                if let Ok(enabled) = self.rs.is_table_enabled(&t) {
                    out.insert(t.to_string().into_bytes(), enabled);
                }
            }
            Ok(out)
        })
    }

    fn handle_get_column_descriptors(
        &self,
        table_name: Text,
    ) -> TResult<BTreeMap<Text, ColumnDescriptor>> {
        self.call(Method::GetColumnDescriptors, || {
            let t = self::table_name(&table_name).map_err(io_error)?;
            let table = self.rs.table(&t).map_err(io)?;
            Ok(table
                .descriptor
                .families
                .iter()
                .map(|f| {
                    let d = column_descriptor(f);
                    (d.name.clone().unwrap_or_default(), d)
                })
                .collect())
        })
    }

    fn handle_get_table_regions(&self, table_name: Text) -> TResult<Vec<TRegionInfo>> {
        self.call(Method::GetTableRegions, || {
            let t = self::table_name(&table_name).map_err(io_error)?;
            let table = self.rs.table(&t).map_err(io)?;
            Ok(table
                .regions
                .iter()
                .map(|r| TRegionInfo {
                    start_key: Some(r.info.start_key.clone()),
                    end_key: Some(r.info.end_key.clone()),
                    id: Some(r.info.region_id as i64),
                    name: Some(r.info.region_name().into_bytes()),
                    version: Some(1),
                    server_name: Some(self.config.server_name.clone().into_bytes()),
                    port: Some(self.config.port),
                })
                .collect())
        })
    }

    fn handle_create_table(
        &self,
        table_name: Text,
        column_families: Vec<ColumnDescriptor>,
    ) -> TResult<()> {
        self.call(Method::CreateTable, || {
            let t = self::table_name(&table_name).map_err(illegal)?;
            if column_families.is_empty() {
                return Err(illegal(format!(
                    "table {t}: columnFamilies is empty; a table needs at least one family"
                )));
            }
            let mut desc = TableDescriptor::new(t.clone());
            for (i, c) in column_families.iter().enumerate() {
                desc = desc.with_family(family_from_thrift(i, c).map_err(illegal)?);
            }
            match self.rs.create_table(desc, &[]) {
                Ok(()) => Ok(()),
                Err(RegionError::TableExists(m)) => {
                    Err(thrift::Error::User(Box::new(AlreadyExists {
                        message: Some(format!("table {m} already exists")),
                    })))
                }
                Err(e @ (RegionError::InvalidArgument(_) | RegionError::Unsupported(_))) => {
                    Err(illegal(e))
                }
                Err(e) => Err(io_error(e)),
            }
        })
    }

    fn handle_delete_table(&self, table_name: Text) -> TResult<()> {
        self.call(Method::DeleteTable, || {
            let t = self::table_name(&table_name).map_err(io_error)?;
            self.rs.delete_table(&t).map_err(io)
        })
    }

    fn handle_get(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        _attributes: Attrs,
    ) -> TResult<Vec<TCell>> {
        self.call(Method::Get, || {
            self.get_cells(&table_name, &row, &column, 1, None)
        })
    }

    fn handle_get_ver(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        num_versions: i32,
        _attributes: Attrs,
    ) -> TResult<Vec<TCell>> {
        self.call(Method::GetVer, || {
            let n = versions(num_versions).map_err(io_error)?;
            self.get_cells(&table_name, &row, &column, n, None)
        })
    }

    fn handle_get_ver_ts(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        timestamp: i64,
        num_versions: i32,
        _attributes: Attrs,
    ) -> TResult<Vec<TCell>> {
        self.call(Method::GetVerTs, || {
            let n = versions(num_versions).map_err(io_error)?;
            self.get_cells(&table_name, &row, &column, n, Some(before(timestamp)))
        })
    }

    fn handle_get_row(
        &self,
        table_name: Text,
        row: Text,
        _attributes: Attrs,
    ) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRow, || {
            self.get_rows(&table_name, vec![row], &[], None)
        })
    }

    fn handle_get_row_with_columns(
        &self,
        table_name: Text,
        row: Text,
        columns: Vec<Text>,
        _attributes: Attrs,
    ) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRowWithColumns, || {
            self.get_rows(&table_name, vec![row], &columns, None)
        })
    }

    fn handle_get_row_ts(
        &self,
        table_name: Text,
        row: Text,
        timestamp: i64,
        _attributes: Attrs,
    ) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRowTs, || {
            self.get_rows(&table_name, vec![row], &[], Some(before(timestamp)))
        })
    }

    fn handle_get_row_with_columns_ts(
        &self,
        table_name: Text,
        row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: Attrs,
    ) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRowWithColumnsTs, || {
            self.get_rows(&table_name, vec![row], &columns, Some(before(timestamp)))
        })
    }

    fn handle_get_rows(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        _attributes: Attrs,
    ) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRows, || {
            self.get_rows(&table_name, rows, &[], None)
        })
    }

    fn handle_get_rows_with_columns(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        columns: Vec<Text>,
        _attributes: Attrs,
    ) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRowsWithColumns, || {
            self.get_rows(&table_name, rows, &columns, None)
        })
    }

    fn handle_get_rows_ts(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        timestamp: i64,
        _attributes: Attrs,
    ) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRowsTs, || {
            self.get_rows(&table_name, rows, &[], Some(before(timestamp)))
        })
    }

    fn handle_get_rows_with_columns_ts(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: Attrs,
    ) -> TResult<Vec<TRowResult>> {
        self.call(Method::GetRowsWithColumnsTs, || {
            self.get_rows(&table_name, rows, &columns, Some(before(timestamp)))
        })
    }

    fn handle_mutate_row(
        &self,
        table_name: Text,
        row: Text,
        mutations: Vec<Mutation>,
        _attributes: Attrs,
    ) -> TResult<()> {
        self.call(Method::MutateRow, || {
            self.apply_rows(&table_name, &[(row, &mutations)], LATEST_TIMESTAMP)
        })
    }

    fn handle_mutate_row_ts(
        &self,
        table_name: Text,
        row: Text,
        mutations: Vec<Mutation>,
        timestamp: i64,
        _attributes: Attrs,
    ) -> TResult<()> {
        self.call(Method::MutateRowTs, || {
            self.apply_rows(&table_name, &[(row, &mutations)], timestamp)
        })
    }

    fn handle_mutate_rows(
        &self,
        table_name: Text,
        row_batches: Vec<BatchMutation>,
        _attributes: Attrs,
    ) -> TResult<()> {
        self.call(Method::MutateRows, || {
            let batches = batches(&row_batches)?;
            self.apply_rows(&table_name, &batches, LATEST_TIMESTAMP)
        })
    }

    fn handle_mutate_rows_ts(
        &self,
        table_name: Text,
        row_batches: Vec<BatchMutation>,
        timestamp: i64,
        _attributes: Attrs,
    ) -> TResult<()> {
        self.call(Method::MutateRowsTs, || {
            let batches = batches(&row_batches)?;
            self.apply_rows(&table_name, &batches, timestamp)
        })
    }

    fn handle_atomic_increment(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        value: i64,
    ) -> TResult<i64> {
        self.call(Method::AtomicIncrement, || {
            self.increment_one(&TIncrement {
                table: Some(table_name),
                row: Some(row),
                column: Some(column),
                ammount: Some(value),
            })
        })
    }

    fn handle_delete_all(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        _attributes: Attrs,
    ) -> TResult<()> {
        self.call(Method::DeleteAll, || {
            let d = match parse_column(&column) {
                (f, None) => Delete::new(&row).family(f),
                (f, Some(q)) => Delete::new(&row).columns(f, q),
            };
            self.delete(&table_name, d)
        })
    }

    fn handle_delete_all_ts(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        timestamp: i64,
        _attributes: Attrs,
    ) -> TResult<()> {
        self.call(Method::DeleteAllTs, || {
            let d = match parse_column(&column) {
                (f, None) => Delete::with_timestamp(&row, timestamp).family(f),
                (f, Some(q)) => Delete::with_timestamp(&row, timestamp).columns(f, q),
            };
            self.delete(&table_name, d)
        })
    }

    fn handle_delete_all_row(
        &self,
        table_name: Text,
        row: Text,
        _attributes: Attrs,
    ) -> TResult<()> {
        self.call(Method::DeleteAllRow, || {
            self.delete(&table_name, Delete::new(&row))
        })
    }

    fn handle_increment(&self, increment: TIncrement) -> TResult<()> {
        self.call(Method::Increment, || {
            self.increment_one(&increment).map(|_| ()).map_err(as_io)
        })
    }

    fn handle_increment_rows(&self, increments: Vec<TIncrement>) -> TResult<()> {
        self.call(Method::IncrementRows, || {
            for (i, inc) in increments.iter().enumerate() {
                self.increment_one(inc)
                    .map_err(|e| io_error(format!("increments[{i}]: {}", message(&e))))?;
            }
            Ok(())
        })
    }

    fn handle_delete_all_row_ts(
        &self,
        table_name: Text,
        row: Text,
        timestamp: i64,
        _attributes: Attrs,
    ) -> TResult<()> {
        self.call(Method::DeleteAllRowTs, || {
            self.delete(&table_name, Delete::with_timestamp(&row, timestamp))
        })
    }

    fn handle_scanner_open_with_scan(
        &self,
        table_name: Text,
        scan: TScan,
        _attributes: Attrs,
    ) -> TResult<ScannerID> {
        self.call(Method::ScannerOpenWithScan, || {
            let mut s = Scan::new();
            if let Some(r) = &scan.start_row {
                s.start_row = r.clone();
            }
            if let Some(r) = &scan.stop_row {
                s.stop_row = r.clone();
            }
            if let Some(ts) = scan.timestamp {
                s = s.time_range(before(ts));
            }
            if let Some(c) = scan.caching {
                if c > 0 {
                    s.caching = c as usize;
                }
            }
            if let Some(b) = scan.batch_size {
                if b < 0 {
                    return Err(io_error(format!(
                        "TScan.batchSize must not be negative, not {b}"
                    )));
                }
                s = s.batch(b as usize);
            }
            if let Some(cols) = &scan.columns {
                s = add_columns_scan(s, cols);
            }
            if let Some(f) = &scan.filter_string {
                if !f.is_empty() {
                    let text = utf8("TScan.filterString", f).map_err(io_error)?;
                    let filter = cairn_filter::parse_filter(text)
                        .map_err(|e| io_error(format!("TScan.filterString {text:?}: {e}")))?;
                    s = s.filter(filter);
                }
            }
            if let Some(r) = scan.reversed {
                s = s.reversed(r);
            }
            if let Some(c) = scan.cache_blocks {
                s.options.cache_blocks = c;
            }
            self.open_scanner(&table_name, s, scan.sort_columns.unwrap_or(false))
        })
    }

    fn handle_scanner_open(
        &self,
        table_name: Text,
        start_row: Text,
        columns: Vec<Text>,
        _attributes: Attrs,
    ) -> TResult<ScannerID> {
        self.call(Method::ScannerOpen, || {
            self.scan_with(&table_name, &start_row, None, &columns, None)
        })
    }

    fn handle_scanner_open_with_stop(
        &self,
        table_name: Text,
        start_row: Text,
        stop_row: Text,
        columns: Vec<Text>,
        _attributes: Attrs,
    ) -> TResult<ScannerID> {
        self.call(Method::ScannerOpenWithStop, || {
            self.scan_with(&table_name, &start_row, Some(&stop_row), &columns, None)
        })
    }

    fn handle_scanner_open_with_prefix(
        &self,
        table_name: Text,
        start_and_prefix: Text,
        columns: Vec<Text>,
        _attributes: Attrs,
    ) -> TResult<ScannerID> {
        self.call(Method::ScannerOpenWithPrefix, || {
            let scan = add_columns_scan(Scan::new().prefix(&start_and_prefix), &columns);
            self.open_scanner(&table_name, scan, false)
        })
    }

    fn handle_scanner_open_ts(
        &self,
        table_name: Text,
        start_row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: Attrs,
    ) -> TResult<ScannerID> {
        self.call(Method::ScannerOpenTs, || {
            self.scan_with(&table_name, &start_row, None, &columns, Some(timestamp))
        })
    }

    fn handle_scanner_open_with_stop_ts(
        &self,
        table_name: Text,
        start_row: Text,
        stop_row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: Attrs,
    ) -> TResult<ScannerID> {
        self.call(Method::ScannerOpenWithStopTs, || {
            self.scan_with(
                &table_name,
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
        self.call(Method::ScannerClose, || {
            match self.scanners.lock().remove(&id) {
                Some(_) => {
                    self.metrics.open_scanners.fetch_sub(1, Ordering::Relaxed);
                    Ok(())
                }
                None => Err(illegal(format!(
                    "scanner ID {id} is invalid (closed or expired)"
                ))),
            }
        })
    }

    fn handle_check_and_put(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        value: Text,
        mput: Mutation,
        _attributes: Attrs,
    ) -> TResult<bool> {
        self.call(Method::CheckAndPut, || {
            let t = self::table_name(&table_name).map_err(illegal)?;
            if row.is_empty() {
                return Err(illegal("row is missing (empty row keys are not allowed)"));
            }
            let (f, q) = parse_column(&column);
            if f.is_empty() {
                return Err(illegal("column is missing"));
            }
            let (put, delete) = row_mutations(&row, std::slice::from_ref(&mput), LATEST_TIMESTAMP)
                .map_err(|e| illegal(format!("mput: {e}")))?;
            if delete.is_some() {
                return Err(illegal("mput must be a put (isDelete = false)"));
            }
            let put = put.ok_or_else(|| illegal("mput is missing"))?;
            let expected = (!value.is_empty()).then_some(value.as_slice());
            self.rs
                .check_and_put(&t, &f, &q.unwrap_or_default(), expected, &put)
                .map_err(io_or_illegal)
        })
    }

    fn handle_get_thrift_server_type(&self) -> TResult<TThriftServerType> {
        self.call(Method::GetThriftServerType, || Ok(TThriftServerType::ONE))
    }

    fn handle_get_cluster_id(&self) -> TResult<String> {
        self.call(Method::GetClusterId, || Ok(self.config.cluster_id.clone()))
    }
}

impl HandlerCore {
    fn compact(&self, name: &[u8], major: bool) -> TResult<()> {
        // A table name, or a region name (`table,startKey,id.encoded.`).
        if let Ok(t) = table_name(name) {
            if self.rs.table(&t).is_ok() {
                return self.rs.request_compaction(&t, major).map_err(io);
            }
        }
        let wanted = String::from_utf8_lossy(name);
        for t in self.rs.table_names() {
            let Ok(table) = self.rs.table(&t) else {
                continue;
            };
            for r in &table.regions {
                if r.info.region_name() == wanted || r.info.encoded_name == wanted {
                    return self.rs.request_compaction(&t, major).map_err(io);
                }
            }
        }
        Err(io_error(format!("no table or region named {wanted:?}")))
    }
}

fn batches(b: &[BatchMutation]) -> TResult<Vec<(Vec<u8>, &[Mutation])>> {
    b.iter()
        .enumerate()
        .map(|(i, bm)| {
            let row = bm
                .row
                .clone()
                .ok_or_else(|| illegal(format!("rowBatches[{i}].row is missing")))?;
            Ok((row, bm.mutations.as_deref().unwrap_or_default()))
        })
        .collect()
}

fn message(e: &thrift::Error) -> String {
    match e {
        thrift::Error::User(u) => {
            if let Some(x) = u.downcast_ref::<IOError>() {
                x.message.clone().unwrap_or_default()
            } else if let Some(x) = u.downcast_ref::<IllegalArgument>() {
                x.message.clone().unwrap_or_default()
            } else {
                u.to_string()
            }
        }
        e => e.to_string(),
    }
}

/// For methods that declare only `IOError`.
fn as_io(e: thrift::Error) -> thrift::Error {
    match &e {
        thrift::Error::User(u) if u.downcast_ref::<IllegalArgument>().is_some() => {
            io_error(message(&e))
        }
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading ahead stops when the client's next request arrives (checked before each step
    /// of rows), hands its rows out first and in order, and gives back its memory when they
    /// are taken and when the scanner closes.
    #[test]
    fn read_ahead_stops_for_the_client_and_hands_its_rows_out_first() {
        let dir = tempfile::tempdir().unwrap();
        let rs = RegionServer::open(cairn_region::ServerConfig::new(dir.path())).unwrap();
        let metrics = Arc::new(ThriftMetrics::default());
        let h = Handler::new(rs.clone(), metrics.clone(), HandlerConfig::default());
        let family = ColumnDescriptor {
            name: Some(b"f:".to_vec()),
            ..ColumnDescriptor::default()
        };
        h.handle_create_table(b"t".to_vec(), vec![family]).unwrap();
        let batch: Vec<BatchMutation> = (0..1000)
            .map(|i| BatchMutation {
                row: Some(format!("r{i:04}").into_bytes()),
                mutations: Some(vec![Mutation {
                    is_delete: Some(false),
                    column: Some(b"f:q".to_vec()),
                    value: Some(vec![7; 100]),
                    write_to_w_a_l: Some(true),
                }]),
            })
            .collect();
        h.handle_mutate_rows(b"t".to_vec(), batch, BTreeMap::new())
            .unwrap();
        let id = h
            .handle_scanner_open(b"t".to_vec(), vec![], vec![], BTreeMap::new())
            .unwrap();
        let ahead = || metrics.rows_read_ahead.load(Ordering::Relaxed);
        let rows = |got: Vec<TRowResult>| -> Vec<String> {
            got.into_iter()
                .map(|r| String::from_utf8(r.row.unwrap()).unwrap())
                .collect()
        };
        let want = |from: usize, to: usize| -> Vec<String> {
            (from..to).map(|i| format!("r{i:04}")).collect()
        };

        assert_eq!(
            rows(h.handle_scanner_get_list(id, 100).unwrap()),
            want(0, 100)
        );
        // The request is already there: nothing is read.
        h.read_ahead(&mut || true);
        assert_eq!(ahead(), 0);
        assert_eq!(h.ahead_total.load(Ordering::Relaxed), 0);
        // Nothing to read ahead for until the next scanner call.
        h.read_ahead(&mut || false);
        assert_eq!(ahead(), 0);

        assert_eq!(
            rows(h.handle_scanner_get_list(id, 100).unwrap()),
            want(100, 200)
        );
        // The request arrives after the first step.
        let mut looks = 0;
        h.read_ahead(&mut || {
            looks += 1;
            looks > 1
        });
        assert_eq!(ahead(), READ_AHEAD_STEP as u64);
        assert!(h.ahead_total.load(Ordering::Relaxed) > READ_AHEAD_STEP * 100);
        assert_eq!(
            rows(h.handle_scanner_get_list(id, 100).unwrap()),
            want(200, 300)
        );
        assert_eq!(h.ahead_total.load(Ordering::Relaxed), 0);

        // A whole batch ahead, then a smaller call takes part of it.
        h.read_ahead(&mut || false);
        assert_eq!(ahead(), READ_AHEAD_STEP as u64 + 100);
        assert_eq!(
            rows(h.handle_scanner_get_list(id, 30).unwrap()),
            want(300, 330)
        );
        assert!(h.ahead_total.load(Ordering::Relaxed) > 0);
        // The end of the scanner stops reading ahead.
        h.read_ahead(&mut || false);
        assert_eq!(
            rows(h.handle_scanner_get_list(id, 2000).unwrap()),
            want(330, 1000)
        );
        assert!(h.handle_scanner_get_list(id, 10).unwrap().is_empty());

        // Rows left ahead are given back when the scanner closes.
        let id = h
            .handle_scanner_open(b"t".to_vec(), vec![], vec![], BTreeMap::new())
            .unwrap();
        assert_eq!(
            rows(h.handle_scanner_get_list(id, 10).unwrap()),
            want(0, 10)
        );
        h.read_ahead(&mut || false);
        assert!(h.ahead_total.load(Ordering::Relaxed) > 0);
        h.handle_scanner_close(id).unwrap();
        assert_eq!(h.ahead_total.load(Ordering::Relaxed), 0);
        drop(h);
        rs.close().unwrap();
    }

    #[test]
    fn columns_parse_as_hbase_does() {
        assert_eq!(parse_column(b"cf"), (b"cf".to_vec(), None));
        assert_eq!(parse_column(b"cf:"), (b"cf".to_vec(), Some(vec![])));
        assert_eq!(
            parse_column(b"cf:a:b"),
            (b"cf".to_vec(), Some(b"a:b".to_vec()))
        );
    }

    #[test]
    fn mutations_split_into_put_and_delete_and_name_bad_fields() {
        let m = |d: bool, c: &str, v: &str| Mutation {
            is_delete: Some(d),
            column: Some(c.as_bytes().to_vec()),
            value: Some(v.as_bytes().to_vec()),
            write_to_w_a_l: Some(true),
        };
        let (p, d) = row_mutations(
            b"r",
            &[m(false, "f:a", "1"), m(true, "f:b", ""), m(true, "g", "")],
            7,
        )
        .unwrap();
        let p = p.unwrap();
        assert_eq!(
            p.cells,
            vec![(b"f".to_vec(), b"a".to_vec(), 7, b"1".to_vec())]
        );
        assert_eq!(d.unwrap().markers.len(), 2);
        let mut bad = m(false, "f:a", "1");
        bad.column = None;
        let e = row_mutations(b"r", &[m(false, "f:a", "1"), bad], 7).unwrap_err();
        assert!(e.contains("mutations[1].column"), "{e}");
        assert!(row_mutations(b"", &[m(false, "f:a", "1")], 7)
            .unwrap_err()
            .contains("row"));
        assert!(row_mutations(b"r", &[m(false, ":a", "1")], 7)
            .unwrap_err()
            .contains("family"));
        assert!(row_mutations(b"r", &[m(false, "f", "1")], 7)
            .unwrap_err()
            .contains("mutations[0].column \"f\" has no qualifier"));
    }

    #[test]
    fn descriptors_round_trip_and_bad_options_are_named() {
        let c = ColumnDescriptor {
            name: Some(b"cf:".to_vec()),
            max_versions: Some(5),
            compression: Some("GZ".into()),
            in_memory: Some(true),
            bloom_filter_type: Some("ROWCOL".into()),
            bloom_filter_vector_size: Some(0),
            bloom_filter_nb_hashes: Some(0),
            block_cache_enabled: Some(true),
            time_to_live: Some(3600),
        };
        let f = family_from_thrift(0, &c).unwrap();
        assert_eq!(column_descriptor(&f), c);
        let mut bad = c.clone();
        bad.compression = Some("BOGUS".into());
        assert!(family_from_thrift(2, &bad)
            .unwrap_err()
            .contains("columnFamilies[2] (cf): compression"));
        let mut bad = c.clone();
        bad.max_versions = Some(0);
        assert!(family_from_thrift(0, &bad)
            .unwrap_err()
            .contains("maxVersions"));
        let mut forever = c;
        forever.time_to_live = Some(-1);
        assert_eq!(
            family_from_thrift(0, &forever).unwrap().ttl_seconds,
            ColumnFamilyDescriptor::new("x").ttl_seconds
        );
    }
}
