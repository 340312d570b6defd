//! Open scanners: kept in the server's lease registry ([`crate::leases`]: ids, leases, the
//! open-scanner cap), the rows-per-call limit, and reading a scanner's next batch ahead while
//! its client decodes the last one.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use cairn_region::{RegionError, Scan, TableScanner};
use cairn_thrift::hbase::{ScannerID, TCell, TRowResult, TScan, Text};

use crate::leases::Leases;

use super::conversions::{add_columns_scan, before, row_result, scan_from_thrift, table_name};
use super::errors::{illegal, io, io_error};
use super::{HandlerCore, TResult};

/// Rows read ahead by all scanners together stop growing past this.
pub(super) const READ_AHEAD_TOTAL_BYTES: usize = 256 << 20;

/// Rows read ahead between two looks at whether the client's next request has arrived.
pub(super) const READ_AHEAD_STEP: usize = 64;

/// The Thrift handler's open scanners (ids are positive `i32`s, as Thrift's `ScannerID`).
pub(super) type Scanners = Leases<OpenScanner>;

/// The registry of the handler's scanners.
pub(super) fn scanners(config: &super::HandlerConfig) -> Scanners {
    Leases::new(
        config.scanner_lease,
        config.max_open_scanners,
        1,
        i32::MAX as u64,
    )
}

/// A client's scanner id as the registry's (a negative one names no scanner).
fn lease_id(id: ScannerID) -> Option<u64> {
    u64::try_from(id).ok()
}

pub(super) struct OpenScanner {
    scanner: TableScanner,
    sort_columns: bool,
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

/// A scanner call that left rows to read: the scanner and the size of the call, what
/// [`HandlerCore::read_ahead`] reads ahead for until the client's next request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextBatch {
    pub(super) id: ScannerID,
    pub(super) rows: usize,
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

impl HandlerCore {
    /// `scannerOpenWithScan`.
    pub(super) fn open_thrift_scan(&self, table: &[u8], scan: &TScan) -> TResult<ScannerID> {
        let s = scan_from_thrift(scan).map_err(io_error)?;
        self.open_scanner(table, s, scan.sort_columns.unwrap_or(false))
    }

    /// `scannerOpenWithPrefix`.
    pub(super) fn open_prefix_scan(
        &self,
        table: &[u8],
        prefix: &[u8],
        columns: &[Text],
    ) -> TResult<ScannerID> {
        let scan = add_columns_scan(Scan::new().prefix(prefix), columns);
        self.open_scanner(table, scan, false)
    }

    /// `scannerOpen`, `scannerOpenWithStop` and their `…Ts` forms.
    pub(super) fn scan_with(
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

    fn open_scanner(&self, table: &[u8], scan: Scan, sort_columns: bool) -> TResult<ScannerID> {
        let t = table_name(table).map_err(io_error)?;
        self.scanners.expire();
        let scanner = self.rs.scanner(&t, scan).map_err(io)?;
        let (id, _) = self.scanners.add(OpenScanner {
            scanner,
            sort_columns,
            ahead: VecDeque::new(),
            ahead_bytes: 0,
            ahead_total: self.ahead_total.clone(),
            exhausted: false,
            failed: None,
        });
        Ok(id as ScannerID)
    }

    /// `scannerClose`.
    pub(super) fn close_scanner(&self, id: ScannerID) -> TResult<()> {
        if lease_id(id).is_some_and(|id| self.scanners.remove(id)) {
            Ok(())
        } else {
            Err(illegal(format!(
                "scanner ID {id} is invalid (closed or expired)"
            )))
        }
    }

    /// The open scanners, over all connections.
    pub fn scanners(&self) -> &Leases<impl Sized> {
        &self.scanners
    }

    /// `scannerGet` / `scannerGetList`: up to `n` rows (at most `max_rows_per_call`), those
    /// read ahead first; and, when the scanner has rows left and reading ahead is on, the
    /// batch to read ahead for.
    pub(super) fn scanner_rows(
        &self,
        id: ScannerID,
        n: i32,
    ) -> TResult<(Vec<TRowResult>, Option<NextBatch>)> {
        if n < 0 {
            return Err(illegal(format!("nbRows must not be negative, not {n}")));
        }
        let n = (n as usize).min(self.config.max_rows_per_call);
        let entry = lease_id(id)
            .and_then(|id| self.scanners.get(id))
            .ok_or_else(|| illegal(format!("scanner ID {id} is invalid (closed or expired)")))?;
        let mut s = entry.lock();
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
        let next = (more && n > 1 && self.config.scanner_read_ahead_bytes > 0)
            .then_some(NextBatch { id, rows: n });
        self.count_rows(&out);
        Ok((out, next))
    }

    /// Reads `next`'s batch (the scanner and size of a connection's last `scannerGetList`)
    /// while the client decodes the batch it was sent: a scanning client asks again for as
    /// many rows, and they are then ready at once, instead of the client waiting while the
    /// server reads them. Stops as soon as `request_waiting` says the client's next request
    /// has begun to arrive, at `scanner_read_ahead_bytes`, or when all scanners together hold
    /// 256 MiB read ahead. The rows come from the scanner's own snapshot, so reading them
    /// early changes nothing the client sees; an error is kept and answered after the rows
    /// before it.
    pub fn read_ahead(&self, next: NextBatch, request_waiting: &mut dyn FnMut() -> bool) {
        let NextBatch { id, rows: n } = next;
        let Some(entry) = lease_id(id).and_then(|id| self.scanners.peek(id)) else {
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
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use cairn_region::RegionServer;
    use cairn_thrift::hbase::{BatchMutation, ColumnDescriptor, HbaseSyncHandler, Mutation};

    use super::*;
    use crate::handler::{Handler, HandlerConfig};
    use crate::metrics::ThriftMetrics;

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

    /// What one connection's scanner call leaves to read ahead is that connection's: another
    /// connection's handle has nothing to read ahead for.
    #[test]
    fn the_batch_to_read_ahead_belongs_to_the_connection_that_asked() {
        let dir = tempfile::tempdir().unwrap();
        let rs = RegionServer::open(cairn_region::ServerConfig::new(dir.path())).unwrap();
        let metrics = Arc::new(ThriftMetrics::default());
        let server = Handler::new(rs.clone(), metrics.clone(), HandlerConfig::default());
        let (a, b) = (server.connection(), server.connection());
        let family = ColumnDescriptor {
            name: Some(b"f:".to_vec()),
            ..ColumnDescriptor::default()
        };
        a.handle_create_table(b"t".to_vec(), vec![family]).unwrap();
        let batch: Vec<BatchMutation> = (0..100)
            .map(|i| BatchMutation {
                row: Some(format!("r{i:04}").into_bytes()),
                mutations: Some(vec![Mutation {
                    is_delete: Some(false),
                    column: Some(b"f:q".to_vec()),
                    value: Some(vec![7; 10]),
                    write_to_w_a_l: Some(true),
                }]),
            })
            .collect();
        a.handle_mutate_rows(b"t".to_vec(), batch, BTreeMap::new())
            .unwrap();
        let id = a
            .handle_scanner_open(b"t".to_vec(), vec![], vec![], BTreeMap::new())
            .unwrap();
        assert_eq!(a.handle_scanner_get_list(id, 10).unwrap().len(), 10);
        let ahead = || metrics.rows_read_ahead.load(Ordering::Relaxed);
        b.read_ahead(&mut || false);
        server.read_ahead(&mut || false);
        assert_eq!(ahead(), 0);
        a.clone().read_ahead(&mut || false);
        assert_eq!(ahead(), 10);
        drop((a, b, server));
        rs.close().unwrap();
    }
}
