//! HBase's protobuf requests as region-store operations, and cells back as protobuf results
//! (in the response's cell block when the connection has a codec, as HBase's server does).

use cairn_cell::{CellType, KeyValue, LATEST_TIMESTAMP};
use cairn_region::mutation::{row_bound, Columns};
use cairn_region::{Delete, Durability, Get, Increment, Put, ReadOptions, Scan, TimeRange};
use cairn_rpc::cellblock::{self, CellBlockReader};
use cairn_rpc::pb;

use super::errors::RpcError;
use super::filter::filter_from_pb;

/// A `TimeRange` message: `[from, to)`, defaults 0 and `Long.MAX_VALUE`.
pub fn time_range(tr: &pb::TimeRange) -> TimeRange {
    let from = tr.from.map_or(0, |v| v as i64);
    let to = tr.to.map_or(i64::MAX, |v| v as i64);
    TimeRange::new(from.max(0), to.max(0))
}

/// A mutation's durability (`USE_DEFAULT` = the table's).
pub fn durability(d: Option<i32>) -> Option<Durability> {
    use pb::mutation_proto::Durability as D;
    match d.and_then(|d| D::try_from(d).ok()) {
        Some(D::SkipWal) => Some(Durability::SkipWal),
        Some(D::AsyncWal) => Some(Durability::AsyncWal),
        Some(D::SyncWal) => Some(Durability::SyncWal),
        Some(D::FsyncWal) => Some(Durability::FsyncWal),
        Some(D::UseDefault) | None => None,
    }
}

fn add_columns(columns: &mut Columns, cols: &[pb::Column]) {
    for c in cols {
        if c.qualifier.is_empty() {
            // A whole family wins over single columns of it, as in HBase's familyMap.
            columns.insert(c.family.clone(), None);
        } else {
            let entry = columns.entry(c.family.clone()).or_insert(Some(Vec::new()));
            if let Some(qs) = entry {
                qs.extend(c.qualifier.iter().cloned());
            }
        }
    }
}

fn unsupported_read_options(
    what: &str,
    cf_time_range: &[pb::ColumnFamilyTimeRange],
) -> Result<(), RpcError> {
    if !cf_time_range.is_empty() {
        return Err(RpcError::bad_request(format!(
            "{what}: per-family time ranges (setColumnFamilyTimeRange) are not supported by cairn"
        )));
    }
    Ok(())
}

/// HBase's per-family limits (`storeLimit`, `storeOffset`), as the client sends them: a limit
/// only when one was set (`setMaxResultsPerColumnFamily`), an offset only when above zero.
fn store_limits(options: &mut ReadOptions, limit: Option<u32>, offset: Option<u32>) {
    options.store_limit = limit;
    options.store_offset = offset.unwrap_or(0);
}

/// A `Get` message as a region-store get.
pub fn get_from_pb(g: &pb::Get) -> Result<Get, RpcError> {
    unsupported_read_options("Get", &g.cf_time_range)?;
    let mut get = Get::new(&g.row);
    store_limits(&mut get.options, g.store_limit, g.store_offset);
    add_columns(&mut get.columns, &g.column);
    get.options.max_versions = g.max_versions.unwrap_or(1).max(1);
    if let Some(tr) = &g.time_range {
        get.options.time_range = time_range(tr);
    }
    get.options.cache_blocks = g.cache_blocks.unwrap_or(true);
    if let Some(f) = &g.filter {
        get.options.filter =
            Some(filter_from_pb(f).map_err(|e| RpcError::bad_request(e.to_string()))?);
    }
    Ok(get)
}

/// A `Scan` message as a region-store scan: its start and stop rows are bounds, each
/// inclusive or not as HBase 2's `includeStartRow` (default true) and `includeStopRow`
/// (default false) say; an empty row is no bound.
pub fn scan_from_pb(s: &pb::Scan) -> Result<Scan, RpcError> {
    unsupported_read_options("Scan", &s.cf_time_range)?;
    let mut scan = Scan::new()
        .reversed(s.reversed.unwrap_or(false))
        .with_start(row_bound(
            s.start_row.as_deref().unwrap_or_default(),
            s.include_start_row.unwrap_or(true),
        ))
        .with_stop(row_bound(
            s.stop_row.as_deref().unwrap_or_default(),
            s.include_stop_row.unwrap_or(false),
        ));
    store_limits(&mut scan.options, s.store_limit, s.store_offset);
    add_columns(&mut scan.columns, &s.column);
    scan.options.max_versions = s.max_versions.unwrap_or(1).max(1);
    if let Some(tr) = &s.time_range {
        scan.options.time_range = time_range(tr);
    }
    scan.options.cache_blocks = s.cache_blocks.unwrap_or(true);
    scan.options.batch = s.batch_size.unwrap_or(0) as usize;
    if let Some(f) = &s.filter {
        scan.options.filter =
            Some(filter_from_pb(f).map_err(|e| RpcError::bad_request(e.to_string()))?);
    }
    let rp = s.mvcc_read_point.unwrap_or(0);
    if rp > 0 {
        scan.options.read_point = Some(rp);
    }
    if s.caching.unwrap_or(0) > 0 {
        scan.caching = s.caching.unwrap_or(0) as usize;
    }
    Ok(scan)
}

/// A mutation of one row, as the region store takes it.
#[derive(Debug)]
pub enum Mutation {
    /// `PUT`.
    Put(Put),
    /// `DELETE`.
    Delete(Delete),
    /// `INCREMENT`.
    Increment(Increment),
    /// `APPEND`.
    Append(cairn_region::mutation::Append),
}

impl Mutation {
    /// The row it changes.
    pub fn row(&self) -> &[u8] {
        match self {
            Mutation::Put(p) => &p.row,
            Mutation::Delete(d) => &d.row,
            Mutation::Increment(i) => &i.row,
            Mutation::Append(a) => &a.row,
        }
    }
}

/// One column of a mutation: family, qualifier, timestamp, type, value.
struct Col {
    family: Vec<u8>,
    qualifier: Vec<u8>,
    ts: i64,
    kind: CellType,
    value: Vec<u8>,
}

/// The columns of a mutation: in the request's cell block (`associated_cell_count` cells) or
/// in the message itself.
fn columns_of(
    m: &pb::MutationProto,
    row: &[u8],
    cells: &mut CellBlockReader,
) -> Result<Vec<Col>, RpcError> {
    use pb::mutation_proto::{DeleteType, MutationType};
    let mtype = MutationType::try_from(m.mutate_type.unwrap_or(0)).unwrap_or(MutationType::Put);
    let default_ts = m.timestamp.map_or(LATEST_TIMESTAMP, |t| t as i64);
    let mut out = Vec::new();
    if let Some(n) = m.associated_cell_count.filter(|&n| n > 0) {
        for c in cells.take(n as usize)? {
            let cell = c.as_cell();
            if cell.row() != row {
                return Err(RpcError::bad_request(format!(
                    "a cell of row {} in a mutation of row {}",
                    cairn_cell::Escaped(cell.row()),
                    cairn_cell::Escaped(row)
                )));
            }
            let kind = CellType::from_code(cell.type_code()).ok_or_else(|| {
                RpcError::bad_request(format!("cell type {} is not HBase's", cell.type_code()))
            })?;
            out.push(Col {
                family: cell.family().to_vec(),
                qualifier: cell.qualifier().to_vec(),
                ts: cell.timestamp(),
                kind,
                value: cell.value.to_vec(),
            });
        }
        return Ok(out);
    }
    for cv in &m.column_value {
        for qv in &cv.qualifier_value {
            let kind = match mtype {
                MutationType::Delete => {
                    match DeleteType::try_from(qv.delete_type.unwrap_or(0))
                        .unwrap_or(DeleteType::DeleteOneVersion)
                    {
                        DeleteType::DeleteOneVersion => CellType::Delete,
                        DeleteType::DeleteMultipleVersions => CellType::DeleteColumn,
                        DeleteType::DeleteFamily => CellType::DeleteFamily,
                        DeleteType::DeleteFamilyVersion => CellType::DeleteFamilyVersion,
                    }
                }
                _ => CellType::Put,
            };
            out.push(Col {
                family: cv.family.clone(),
                qualifier: qv.qualifier.clone().unwrap_or_default(),
                ts: qv.timestamp.map_or(default_ts, |t| t as i64),
                kind,
                value: qv.value.clone().unwrap_or_default(),
            });
        }
    }
    Ok(out)
}

/// A `MutationProto` (its cells read from `cells` when it has them there).
pub fn mutation_from_pb(
    m: &pb::MutationProto,
    cells: &mut CellBlockReader,
) -> Result<Mutation, RpcError> {
    use pb::mutation_proto::MutationType;
    let row = m
        .row
        .clone()
        .ok_or_else(|| RpcError::bad_request("mutation has no row"))?;
    let cols = columns_of(m, &row, cells)?;
    let mtype = MutationType::try_from(m.mutate_type.unwrap_or(0)).map_err(|_| {
        RpcError::bad_request(format!("mutate_type {:?} is not HBase's", m.mutate_type))
    })?;
    let dur = durability(m.durability);
    let ts = m.timestamp.map_or(LATEST_TIMESTAMP, |t| t as i64);
    Ok(match mtype {
        MutationType::Put => {
            let mut p = Put::new(&row);
            for c in cols {
                p = p.add_at(c.family, c.qualifier, c.ts, c.value);
            }
            p.durability = dur;
            Mutation::Put(p)
        }
        MutationType::Delete => {
            let mut d = Delete::with_timestamp(&row, ts);
            for c in cols {
                d.markers.push(cairn_region::mutation::DeleteMarker {
                    family: c.family,
                    qualifier: c.qualifier,
                    ts: c.ts,
                    kind: c.kind,
                });
            }
            d.durability = dur;
            Mutation::Delete(d)
        }
        MutationType::Increment => {
            let mut inc = Increment::new(&row);
            for c in cols {
                let amount: [u8; 8] = c.value.as_slice().try_into().map_err(|_| {
                    RpcError::bad_request(format!(
                        "increment of {}:{} by a value of {} bytes, not an 8-byte long",
                        String::from_utf8_lossy(&c.family),
                        String::from_utf8_lossy(&c.qualifier),
                        c.value.len()
                    ))
                })?;
                inc = inc.add(c.family, c.qualifier, i64::from_be_bytes(amount));
            }
            inc.durability = dur;
            Mutation::Increment(inc)
        }
        MutationType::Append => {
            let mut a = cairn_region::mutation::Append::new(&row);
            for c in cols {
                a = a.add(c.family, c.qualifier, c.value);
            }
            a.durability = dur;
            Mutation::Append(a)
        }
    })
}

/// Builds `Result` messages, putting their cells in the response's cell block when the
/// connection has a codec (HBase's server always does then), or in the messages otherwise.
pub struct ResultWriter {
    codec: Option<bool>,
    /// The response's cell block.
    pub block: Vec<u8>,
}

impl ResultWriter {
    /// `codec`: the connection's codec (whether it carries tags), `None` for pure protobuf.
    pub fn new(codec: Option<bool>) -> ResultWriter {
        ResultWriter {
            codec,
            block: Vec::new(),
        }
    }

    /// Whether cells go in the cell block.
    pub fn uses_cell_block(&self) -> bool {
        self.codec.is_some()
    }

    /// Appends `cells` to the block (or the message); returns how many there were.
    pub fn add_cells(&mut self, cells: &[KeyValue], into: &mut pb::Result) {
        match self.codec {
            Some(tags) => {
                for c in cells {
                    cellblock::encode_cell(&mut self.block, &c.as_cell(), tags);
                }
                into.associated_cell_count = Some(cells.len() as i32);
            }
            None => into.cell.extend(cells.iter().map(cell_to_pb)),
        }
    }

    /// A `Result` of `cells`.
    pub fn result(&mut self, cells: &[KeyValue]) -> pb::Result {
        let mut r = pb::Result::default();
        self.add_cells(cells, &mut r);
        r
    }

    /// Bytes written to the cell block so far.
    pub fn block_len(&self) -> usize {
        self.block.len()
    }
}

/// A cell as a `Cell` message (for connections without a codec).
pub fn cell_to_pb(c: &KeyValue) -> pb::Cell {
    let cell = c.as_cell();
    pb::Cell {
        row: Some(cell.row().to_vec()),
        family: Some(cell.family().to_vec()),
        qualifier: Some(cell.qualifier().to_vec()),
        timestamp: Some(cell.timestamp() as u64),
        cell_type: Some(i32::from(cell.type_code())),
        value: Some(cell.value.to_vec()),
        tags: (!cell.tags.is_empty()).then(|| cell.tags.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use std::ops::Bound;

    #[test]
    fn get_columns_families_and_options() {
        let g = pb::Get {
            row: b"r".to_vec(),
            column: vec![
                pb::Column {
                    family: b"a".to_vec(),
                    qualifier: vec![b"x".to_vec(), b"y".to_vec()],
                },
                pb::Column {
                    family: b"b".to_vec(),
                    qualifier: vec![],
                },
            ],
            max_versions: Some(3),
            cache_blocks: Some(false),
            time_range: Some(pb::TimeRange {
                from: Some(5),
                to: Some(9),
            }),
            ..Default::default()
        };
        let get = get_from_pb(&g).unwrap();
        assert_eq!(get.row, b"r");
        assert_eq!(
            get.columns.get(&b"a"[..]),
            Some(&Some(vec![b"x".to_vec(), b"y".to_vec()]))
        );
        assert_eq!(get.columns.get(&b"b"[..]), Some(&None));
        assert_eq!(get.options.max_versions, 3);
        assert!(!get.options.cache_blocks);
        assert_eq!(get.options.time_range, TimeRange::new(5, 9));
    }

    #[test]
    fn per_family_limits_are_taken_and_per_family_time_ranges_refused() {
        let g = pb::Get {
            row: b"r".to_vec(),
            store_limit: Some(2),
            store_offset: Some(1),
            ..Default::default()
        };
        let get = get_from_pb(&g).unwrap();
        assert_eq!(
            (get.options.store_limit, get.options.store_offset),
            (Some(2), 1)
        );
        // A limit of 0 is passed on as the client sent it (HBase then returns a cell per
        // family); no limit is None.
        let g = pb::Get {
            store_limit: Some(0),
            store_offset: None,
            ..g
        };
        let get = get_from_pb(&g).unwrap();
        assert_eq!(
            (get.options.store_limit, get.options.store_offset),
            (Some(0), 0)
        );
        assert_eq!(
            get_from_pb(&pb::Get::default())
                .unwrap()
                .options
                .store_limit,
            None
        );
        let g = pb::Get {
            cf_time_range: vec![pb::ColumnFamilyTimeRange {
                column_family: b"f".to_vec(),
                time_range: pb::TimeRange::default(),
            }],
            ..Default::default()
        };
        assert!(get_from_pb(&g).unwrap_err().do_not_retry);
    }

    #[test]
    fn scan_bounds_follow_include_flags() {
        let s = pb::Scan {
            start_row: Some(b"b".to_vec()),
            stop_row: Some(b"d".to_vec()),
            include_start_row: Some(false),
            include_stop_row: Some(true),
            ..Default::default()
        };
        let scan = scan_from_pb(&s).unwrap();
        assert_eq!(scan.start, Bound::Excluded(b"b".to_vec()));
        assert_eq!(scan.stop, Bound::Included(b"d".to_vec()));
        let s = pb::Scan {
            reversed: Some(true),
            ..s
        };
        let scan = scan_from_pb(&s).unwrap();
        assert!(scan.reversed);
        assert_eq!(scan.start, Bound::Excluded(b"b".to_vec()));
        assert_eq!(scan.stop, Bound::Included(b"d".to_vec()));
        // Defaults: start included, stop excluded; an empty row is no bound either way.
        let s = pb::Scan {
            start_row: Some(b"b".to_vec()),
            stop_row: Some(Vec::new()),
            include_stop_row: Some(true),
            ..Default::default()
        };
        let scan = scan_from_pb(&s).unwrap();
        assert_eq!(
            (scan.start, scan.stop),
            (Bound::Included(b"b".to_vec()), Bound::Unbounded)
        );
    }

    #[test]
    fn mutations_from_cell_blocks_and_from_messages() {
        use pb::mutation_proto::{column_value::QualifierValue, ColumnValue, DeleteType};
        let mut block = Vec::new();
        let kv = KeyValue::put(b"r", b"f", b"q", 7, b"v").unwrap();
        cellblock::encode_cell(&mut block, &kv.as_cell(), false);
        let m = pb::MutationProto {
            row: Some(b"r".to_vec()),
            mutate_type: Some(pb::mutation_proto::MutationType::Put as i32),
            associated_cell_count: Some(1),
            ..Default::default()
        };
        let mut cells = CellBlockReader::new(Bytes::from(block));
        match mutation_from_pb(&m, &mut cells).unwrap() {
            Mutation::Put(p) => {
                assert_eq!(
                    p.cells,
                    vec![(b"f".to_vec(), b"q".to_vec(), 7, b"v".to_vec())]
                )
            }
            other => panic!("{other:?}"),
        }
        let m = pb::MutationProto {
            row: Some(b"r".to_vec()),
            mutate_type: Some(pb::mutation_proto::MutationType::Delete as i32),
            timestamp: Some(99),
            column_value: vec![ColumnValue {
                family: b"f".to_vec(),
                qualifier_value: vec![QualifierValue {
                    qualifier: Some(b"q".to_vec()),
                    delete_type: Some(DeleteType::DeleteMultipleVersions as i32),
                    ..Default::default()
                }],
            }],
            ..Default::default()
        };
        let mut none = CellBlockReader::new(Bytes::new());
        match mutation_from_pb(&m, &mut none).unwrap() {
            Mutation::Delete(d) => {
                assert_eq!(d.markers.len(), 1);
                assert_eq!(d.markers[0].kind, CellType::DeleteColumn);
                assert_eq!(
                    d.markers[0].ts, 99,
                    "the mutation's timestamp is the default"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_cell_of_another_row_is_refused() {
        let mut block = Vec::new();
        let kv = KeyValue::put(b"other", b"f", b"q", 7, b"v").unwrap();
        cellblock::encode_cell(&mut block, &kv.as_cell(), false);
        let m = pb::MutationProto {
            row: Some(b"r".to_vec()),
            mutate_type: Some(pb::mutation_proto::MutationType::Put as i32),
            associated_cell_count: Some(1),
            ..Default::default()
        };
        let mut cells = CellBlockReader::new(Bytes::from(block));
        assert!(mutation_from_pb(&m, &mut cells).is_err());
    }
}
