//! `hbase:meta` as the client reads it: a virtual region whose rows are made, when read, from
//! the tables the region server has. HBase's client finds regions by (reversed) scans of meta,
//! decides whether a table exists and is enabled by gets of its `table:state` row, and lists a
//! table's regions by scanning its rows; cairn serves all of those from this one place.
//!
//! Rows, as HBase 2.6 writes them:
//! - `<table>` → `table:state` = `PBUF` + `TableState`;
//! - `<table>,<start key>,<region id>.<encoded name>.` → `info:regioninfo` (`PBUF` +
//!   `RegionInfo`), `info:seqnumDuringOpen` (8-byte long), `info:server` (`host:port`),
//!   `info:serverstartcode` (8-byte long), `info:sn` (`host,port,startcode`), `info:state`.
//!
//! Region rows come from the live routing table, so the children of a split or merge show
//! as soon as they serve. The parents do not: HBase keeps a split parent's row (offline,
//! split, `info:splitA`/`info:splitB`) until its janitor archives it, but every client path
//! skips such rows (the region locator, `Admin.split`, `getAllRegionLocations`,
//! `Admin.getRegions`), and a parent row without a location would make the 2.6.1 locator
//! fail instead of skipping it, should its reversed scan ever reach one first. A merge's
//! parents leave meta in HBase too.

use std::cmp::Ordering;

use cairn_hfile::cell::KeyValue;
use cairn_region::{RegionServer, Scan, TableName};
use cairn_rpc::pb;
use prost::Message;

use super::convert::ScanBounds;

/// The table name of meta.
pub const META_TABLE: &str = "hbase:meta";
/// Meta's region name (`hbase:meta,,1`), as the client addresses it.
pub const META_REGION_NAME: &[u8] = b"hbase:meta,,1";
/// Meta's encoded region name (HBase's `FIRST_META_REGIONINFO`, a legacy-format name).
pub const META_ENCODED_NAME: &str = "1588230740";

const PBUF: &[u8] = b"PBUF";

/// Whether a region specifier names meta.
pub fn is_meta(spec: &pb::RegionSpecifier) -> bool {
    spec.value == META_REGION_NAME || spec.value == META_ENCODED_NAME.as_bytes()
}

/// A `TableName` message.
pub fn table_name_pb(t: &TableName) -> pb::TableName {
    pb::TableName {
        namespace: t.namespace.as_bytes().to_vec(),
        qualifier: t.qualifier.as_bytes().to_vec(),
    }
}

/// Meta's own `RegionInfo` message.
pub fn meta_region_info() -> pb::RegionInfo {
    pb::RegionInfo {
        region_id: 1,
        table_name: pb::TableName {
            namespace: b"hbase".to_vec(),
            qualifier: b"meta".to_vec(),
        },
        start_key: Some(Vec::new()),
        end_key: Some(Vec::new()),
        offline: Some(false),
        split: Some(false),
        replica_id: Some(0),
    }
}

/// A region's `RegionInfo` message.
pub fn region_info_pb(info: &cairn_region::RegionInfo) -> pb::RegionInfo {
    pb::RegionInfo {
        region_id: info.region_id,
        table_name: table_name_pb(&info.table),
        start_key: Some(info.start_key.clone()),
        end_key: Some(info.end_key.clone()),
        offline: Some(false),
        split: Some(false),
        replica_id: Some(0),
    }
}

/// Who serves the regions: this server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// Host as advertised.
    pub host: String,
    /// RPC port.
    pub port: u16,
    /// Start code (start time in ms).
    pub start_code: u64,
}

impl Location {
    /// HBase's `ServerName` string, `host,port,startcode`.
    pub fn name(&self) -> String {
        format!("{},{},{}", self.host, self.port, self.start_code)
    }

    /// The `ServerName` message.
    pub fn server_name(&self) -> pb::ServerName {
        pb::ServerName {
            host_name: self.host.clone(),
            port: Some(u32::from(self.port)),
            start_code: Some(self.start_code),
        }
    }
}

/// HBase's `MetaCellComparator` row order: meta rows compare by table name, then start key,
/// then the rest (region id and encoded name), each part bytewise — not by the whole row's
/// bytes, which would put `t ,` before `t,`. Scans of meta are bounded in this order.
pub fn compare_meta_rows(l: &[u8], r: &[u8]) -> Ordering {
    let (ld, rd) = (
        l.iter().position(|&b| b == b','),
        r.iter().position(|&b| b == b','),
    );
    let o = l[..ld.unwrap_or(l.len())].cmp(&r[..rd.unwrap_or(r.len())]);
    if o != Ordering::Equal {
        return o;
    }
    let (ls, rs) = match (ld, rd) {
        (None, Some(_)) => return Ordering::Less,
        (Some(_), None) => return Ordering::Greater,
        (None, None) => return Ordering::Equal,
        (Some(a), Some(b)) => (a + 1, b + 1),
    };
    let lf = l[ls..].iter().rposition(|&b| b == b',').map(|i| i + ls);
    let rf = r[rs..].iter().rposition(|&b| b == b',').map(|i| i + rs);
    let o = l[ls..lf.unwrap_or(l.len())].cmp(&r[rs..rf.unwrap_or(r.len())]);
    if o != Ordering::Equal {
        return o;
    }
    // As HBase: with no second delimiter the last part compared is the whole row.
    l[lf.map_or(0, |f| f + 1)..].cmp(&r[rf.map_or(0, |f| f + 1)..])
}

fn with_pbuf(m: &impl Message) -> Vec<u8> {
    let mut v = PBUF.to_vec();
    m.encode(&mut v).expect("a Vec grows as needed");
    v
}

/// Every row of meta, in row order, each row's cells in column order.
pub fn rows(rs: &RegionServer, at: &Location) -> Vec<Vec<KeyValue>> {
    let ts = at.start_code as i64;
    let cell = |row: &[u8], f: &[u8], q: &[u8], v: &[u8]| KeyValue::put(row, f, q, ts, v);
    let mut rows = Vec::new();
    for name in rs.table_names() {
        let Ok(t) = rs.table(&name) else { continue };
        let enabled = t.is_enabled();
        let state = pb::TableState {
            state: if enabled {
                pb::table_state::State::Enabled as i32
            } else {
                pb::table_state::State::Disabled as i32
            },
        };
        let trow = name.to_string().into_bytes();
        // The table state is the bare message (HBase's `TableState.parseFrom`), unlike the
        // region info, which carries PBUF.
        let table_row = cell(&trow, b"table", b"state", &state.encode_to_vec());
        // Table names are short and region rows are checked when regions are made
        // (`names::check_meta_row`); a region that still cannot have a row (made before that
        // check, or on disk by hand) is left out of meta rather than failing every lookup.
        let Ok(table_row) = table_row else { continue };
        rows.push(vec![table_row]);
        for r in &t.regions {
            let row = r.info.region_name_bytes();
            let sn = format!("{},{},{}", at.host, at.port, at.start_code);
            let cells: Result<Vec<KeyValue>, _> = [
                cell(
                    &row,
                    b"info",
                    b"regioninfo",
                    &with_pbuf(&region_info_pb(&r.info)),
                ),
                cell(
                    &row,
                    b"info",
                    b"seqnumDuringOpen",
                    &(r.write_point() as i64).to_be_bytes(),
                ),
                cell(
                    &row,
                    b"info",
                    b"server",
                    format!("{}:{}", at.host, at.port).as_bytes(),
                ),
                cell(
                    &row,
                    b"info",
                    b"serverstartcode",
                    &(at.start_code as i64).to_be_bytes(),
                ),
                cell(&row, b"info", b"sn", sn.as_bytes()),
                cell(
                    &row,
                    b"info",
                    b"state",
                    if enabled { b"OPEN" } else { b"CLOSED" },
                ),
            ]
            .into_iter()
            .collect();
            match cells {
                Ok(cells) => rows.push(cells),
                // Said once, when the region opened (cairn-region's open).
                Err(e) => {
                    tracing::debug!("region {} has no hbase:meta row: {e}", r.info.encoded_name)
                }
            }
        }
    }
    rows.sort_by(|a, b| compare_meta_rows(a[0].as_cell().row(), b[0].as_cell().row()));
    rows
}

/// The cells of `row` a read of `columns` selects.
fn select(row: &[KeyValue], columns: &cairn_region::mutation::Columns) -> Vec<KeyValue> {
    row.iter()
        .filter(|c| {
            let c = c.as_cell();
            columns.is_empty()
                || match columns.get(c.family()) {
                    None => false,
                    Some(None) => true,
                    Some(Some(qs)) => qs.iter().any(|q| q == c.qualifier()),
                }
        })
        .cloned()
        .collect()
}

/// A get of meta: the row's selected cells (filter applied), empty when there is no such row.
pub fn get(rs: &RegionServer, at: &Location, get: cairn_region::Get) -> Vec<KeyValue> {
    let mut get = get;
    let all = rows(rs, at);
    let Some(row) = all
        .iter()
        .find(|r| r[0].as_cell().row() == get.row.as_slice())
    else {
        return Vec::new();
    };
    let cells = select(row, &get.columns);
    match get.options.filter.as_deref_mut() {
        Some(f) => cairn_filter::driver::apply_filter(f, &cells, usize::MAX)
            .rows
            .into_iter()
            .flatten()
            .collect(),
        None => cells,
    }
}

/// A scan of meta, all its rows at once (meta is small: one row per region and table).
pub fn scan(
    rs: &RegionServer,
    at: &Location,
    mut scan: Scan,
    bounds: &ScanBounds,
) -> Vec<Vec<KeyValue>> {
    use Ordering::*;
    let compare_bytes = compare_meta_rows;
    let mut all = rows(rs, at);
    if scan.reversed {
        all.reverse();
    }
    let (start, stop) = (scan.start_row.clone(), scan.stop_row.clone());
    let in_range = |row: &[u8]| -> bool {
        if scan.reversed {
            (start.is_empty() || compare_bytes(row, &start) != Greater)
                && (stop.is_empty() || compare_bytes(row, &stop) == Greater)
                && bounds
                    .last_row
                    .as_deref()
                    .is_none_or(|l| compare_bytes(row, l) != Less)
        } else {
            (start.is_empty() || compare_bytes(row, &start) != Less)
                && (stop.is_empty() || compare_bytes(row, &stop) == Less)
        }
    };
    let mut out = Vec::new();
    for row in all {
        let key = row[0].as_cell().row();
        if !in_range(key) || bounds.skip_row.as_deref() == Some(key) {
            continue;
        }
        let cells = select(&row, &scan.columns);
        if !cells.is_empty() {
            out.push(cells);
        }
    }
    if let Some(f) = scan.options.filter.as_deref_mut() {
        f.set_reversed(scan.reversed);
        let flat: Vec<KeyValue> = out.into_iter().flatten().collect();
        out = cairn_filter::driver::apply_filter(f, &flat, usize::MAX).rows;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_names_keep_binary_start_keys() {
        let info =
            cairn_region::RegionInfo::new(TableName::parse("ns:t").unwrap(), b"\xff\x00k", b"", 42);
        let n = info.region_name_bytes();
        let want = [
            &b"ns:t,\xff\x00k,42."[..],
            info.encoded_name.as_bytes(),
            b".",
        ]
        .concat();
        assert_eq!(n, want);
    }

    #[test]
    fn meta_rows_sort_by_table_then_start_key_then_id() {
        use Ordering::*;
        // The client's region scan of table t runs from "t,," to "t ,," in this order.
        assert_eq!(compare_meta_rows(b"t,,1.a.", b"t ,,"), Less);
        assert_eq!(compare_meta_rows(b"t,,", b"t,,1.a."), Less);
        assert_eq!(compare_meta_rows(b"t,b,1.a.", b"t ,,"), Less);
        assert_eq!(
            compare_meta_rows(b"t", b"t,,1.a."),
            Less,
            "the table state row first"
        );
        assert_eq!(compare_meta_rows(b"t,a,2.x.", b"t,b,1.y."), Less);
        assert_eq!(compare_meta_rows(b"t,a,1.x.", b"t,a,2.x."), Less);
        // A start key with a comma: the middle part ends at the last comma.
        assert_eq!(compare_meta_rows(b"t,a,b,1.x.", b"t,a,c,1.x."), Less);
        assert_eq!(compare_meta_rows(b"s,z,1.x.", b"t,,1.x."), Less);
        assert_eq!(compare_meta_rows(b"t,,1.x.", b"t,,1.x."), Equal);
        // Plain byte order would say otherwise.
        assert_eq!(b"t,,1.a.".as_slice().cmp(b"t ,,".as_slice()), Greater);
    }

    #[test]
    fn meta_is_named_as_hbase_names_it() {
        let by_name = pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
            value: b"hbase:meta,,1".to_vec(),
        };
        assert!(is_meta(&by_name));
        let by_encoded = pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::EncodedRegionName as i32,
            value: b"1588230740".to_vec(),
        };
        assert!(is_meta(&by_encoded));
    }
}
