//! `hbase:meta` as a region: what HBase's client reads to find regions — a (reversed) scan of
//! meta to locate a row's region, gets of a table's `table:state` row to learn whether it
//! exists and is enabled, scans of its rows to list its regions.
//!
//! In a standalone server meta is virtual: [`MetaRegion`] makes its rows, when read, from the
//! tables the server hosts, and reads them through the same [`RegionScanner`] (matcher,
//! filter, bounds, limits) as every user region, in meta's own row order
//! (`MetaCellComparator`). In a cluster meta is a real region of a table with that comparator;
//! both implement [`RegionRead`], so no protocol reads meta any other way.
//!
//! Rows, as HBase 2.6 writes them:
//! - `<table>` → `table:state` = `TableState` (a bare message, no `PBUF`);
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

use std::sync::Arc;

use cairn_cell::KeyValue;
use prost::Message;

use crate::bounds::RowOrder;
use crate::cell_scanner::{CellScanner, VecScanner};
use crate::descriptor::{ColumnFamilyDescriptor, TableDescriptor, TableName};
use crate::error::{RegionError, Result};
use crate::heap::KeyValueHeap;
use crate::layout::RegionInfo;
use crate::mutation::{Get, Scan};
use crate::read::RegionRead;
use crate::region::read::{matcher_for, row_scanner};
use crate::scanner::RegionScanner;
use crate::server::RegionServer;

/// Meta's table name, as clients spell it.
pub const META_TABLE: &str = "hbase:meta";
/// Meta's region name (`hbase:meta,,1`), as the client addresses it.
pub const META_REGION_NAME: &[u8] = b"hbase:meta,,1";
/// Meta's encoded region name (HBase's `FIRST_META_REGIONINFO`, a legacy-format name).
pub const META_ENCODED_NAME: &str = "1588230740";

/// Who serves the regions meta lists: a server's host, port and start code (HBase's
/// `ServerName`).
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
}

/// Meta's table name.
pub fn meta_table_name() -> TableName {
    TableName {
        namespace: "hbase".into(),
        qualifier: "meta".into(),
    }
}

/// Meta's own region: the whole key range, region id 1, HBase's fixed encoded name.
pub fn meta_region_info() -> RegionInfo {
    let mut info = RegionInfo::new(meta_table_name(), b"", b"", 1);
    info.encoded_name = META_ENCODED_NAME.to_string();
    info
}

/// Meta's families as HBase 2.6 creates them (`info`, `rep_barrier`, `table`; three
/// versions each, as `hbase.meta.versions` defaults).
pub fn meta_descriptor() -> TableDescriptor {
    let family = |name: &str| ColumnFamilyDescriptor::new(name).max_versions(3);
    TableDescriptor::new(meta_table_name())
        .with_family(family("info"))
        .with_family(family("rep_barrier"))
        .with_family(family("table"))
}

/// HBase's `TableState` message (`table:state`).
#[derive(Clone, PartialEq, prost::Message)]
struct TableStatePb {
    #[prost(int32, required, tag = "1")]
    state: i32,
}

/// `TableState.State.ENABLED` and `DISABLED`.
const ENABLED: i32 = 0;
const DISABLED: i32 = 1;

/// The virtual `hbase:meta` of a standalone server: its rows are made from the server's
/// tables whenever a read opens.
pub struct MetaRegion {
    server: Arc<RegionServer>,
    location: Location,
    info: RegionInfo,
    descriptor: TableDescriptor,
}

impl MetaRegion {
    /// Meta over `server`'s tables, every region served at `location`.
    pub fn new(server: Arc<RegionServer>, location: Location) -> MetaRegion {
        MetaRegion {
            server,
            location,
            info: meta_region_info(),
            descriptor: meta_descriptor(),
        }
    }

    /// Where meta says every region is served.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Every cell of meta now: a table-state row per table and a row per region of it
    /// (meta is small: a row per table and per region).
    pub fn cells(&self) -> Vec<KeyValue> {
        let at = &self.location;
        let ts = at.start_code as i64;
        let cell = |row: &[u8], f: &[u8], q: &[u8], v: &[u8]| KeyValue::put(row, f, q, ts, v);
        let mut out = Vec::new();
        let server = format!("{}:{}", at.host, at.port);
        let sn = at.name();
        for name in self.server.table_names() {
            let Ok(t) = self.server.table(&name) else {
                continue;
            };
            let enabled = t.is_enabled();
            let state = TableStatePb {
                state: if enabled { ENABLED } else { DISABLED },
            };
            let trow = name.to_string().into_bytes();
            // Table names are short and region rows are checked when regions are made
            // (`names::check_meta_row`); a region that still cannot have a row (made before
            // that check, or on disk by hand) is left out of meta rather than failing every
            // lookup.
            let Ok(table_row) = cell(&trow, b"table", b"state", &state.encode_to_vec()) else {
                continue;
            };
            out.push(table_row);
            for r in &t.regions {
                let row = r.info.region_name_bytes();
                let cells: std::result::Result<Vec<KeyValue>, _> = [
                    cell(&row, b"info", b"regioninfo", &r.info.to_byte_array()),
                    cell(
                        &row,
                        b"info",
                        b"seqnumDuringOpen",
                        &(r.write_point() as i64).to_be_bytes(),
                    ),
                    cell(&row, b"info", b"server", server.as_bytes()),
                    cell(&row, b"info", b"serverstartcode", &ts.to_be_bytes()),
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
                    Ok(cells) => out.extend(cells),
                    // Said once, when the region opened (the host's open).
                    Err(e) => {
                        tracing::debug!("region {} has no hbase:meta row: {e}", r.info.encoded_name)
                    }
                }
            }
        }
        out
    }

    fn family(&self, name: &[u8]) -> Result<&ColumnFamilyDescriptor> {
        self.descriptor
            .families
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| RegionError::NoSuchFamily {
                table: META_TABLE.to_string(),
                family: String::from_utf8_lossy(name).into_owned(),
            })
    }
}

impl RegionRead for MetaRegion {
    fn info(&self) -> &RegionInfo {
        &self.info
    }

    fn get(&self, get: Get) -> Result<Vec<KeyValue>> {
        crate::names::check_row(&get.row)?;
        let mut s = self.scanner(get.into_scan())?;
        Ok(s.next_row()?.unwrap_or_default())
    }

    fn scanner(&self, mut scan: Scan) -> Result<RegionScanner> {
        let cells: Vec<Box<dyn CellScanner>> =
            vec![Box::new(VecScanner::in_meta_order(self.cells()))];
        // Meta's cells carry no sequence ids past any read point, and no family has a TTL.
        let matcher = matcher_for(
            self.descriptor.families.iter(),
            |f| self.family(f),
            &mut scan,
            u64::MAX,
            0,
        )?;
        Ok(row_scanner(
            KeyValueHeap::new(cells),
            matcher,
            scan,
            RowOrder::Meta,
            0,
            None,
            None,
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::ops::Bound;

    use super::*;
    use crate::descriptor::ColumnFamilyDescriptor;
    use crate::server::ServerConfig;

    /// A server with table `t` split at `\x01` (a byte sorting before meta's `,`) and `m`,
    /// and its meta at `host:1`.
    fn meta(dir: &std::path::Path) -> (Arc<RegionServer>, MetaRegion) {
        let mut c = ServerConfig::new(dir);
        c.background = false;
        let rs = RegionServer::open(c).unwrap();
        let t = TableName::parse("t").unwrap();
        rs.create_table(
            TableDescriptor::new(t).with_family(ColumnFamilyDescriptor::new("f")),
            &[b"\x01".to_vec(), b"m".to_vec()],
        )
        .unwrap();
        let location = Location {
            host: "host".into(),
            port: 1,
            start_code: 7,
        };
        (rs.clone(), MetaRegion::new(rs, location))
    }

    fn rows(s: RegionScanner) -> Vec<Vec<u8>> {
        s.map(|r| r.unwrap()[0].as_cell().row().to_vec()).collect()
    }

    fn starts(rs: &RegionServer) -> Vec<Vec<u8>> {
        let t = rs.table(&TableName::parse("t").unwrap()).unwrap();
        t.regions
            .iter()
            .map(|r| r.info.region_name_bytes())
            .collect()
    }

    #[test]
    fn meta_rows_are_in_meta_order_and_read_like_any_region() {
        let dir = tempfile::tempdir().unwrap();
        let (rs, meta) = meta(dir.path());
        let names = starts(&rs);
        let all = rows(meta.scanner(Scan::new()).unwrap());
        // The table row, then the regions by start key: "" < "\x01" < "m", though bytewise
        // "t,\x01," sorts before "t,,".
        let mut want = vec![b"t".to_vec()];
        want.extend(names.iter().cloned());
        assert_eq!(all, want);
        assert!(names[1] < names[0], "bytewise the order differs");

        // HBase's locator: a reversed scan from the row's key down to the table's first
        // region row, inclusive, one row: the region holding the row.
        let locate = |row: &[u8]| {
            let mut start = b"t,".to_vec();
            start.extend_from_slice(row);
            start.extend_from_slice(b",99999999999999");
            let scan = Scan::new()
                .with_start(Bound::Included(start))
                .with_stop(Bound::Included(b"t,,".to_vec()))
                .family("info")
                .reversed(true)
                .limit(1);
            rows(meta.scanner(scan).unwrap())
        };
        assert_eq!(locate(b"\x00"), vec![names[0].clone()]);
        assert_eq!(locate(b"\x05"), vec![names[1].clone()]);
        assert_eq!(locate(b"z"), vec![names[2].clone()]);

        // The table's regions, as MetaTableAccessor bounds them: [t,, , t ,,).
        let scan = Scan::new().range("t,,", "t ,,").family("info");
        assert_eq!(rows(meta.scanner(scan).unwrap()), names);
        // An exclusive start skips the first region's row.
        let scan = Scan::new()
            .with_start(Bound::Excluded(names[0].clone()))
            .with_stop(Bound::Excluded(b"t ,,".to_vec()));
        assert_eq!(rows(meta.scanner(scan).unwrap()), names[1..].to_vec());
    }

    #[test]
    fn meta_gets_select_columns_filter_and_limit_per_family() {
        let dir = tempfile::tempdir().unwrap();
        let (rs, meta) = meta(dir.path());
        let names = starts(&rs);
        let qualifiers = |cells: Vec<KeyValue>| -> Vec<String> {
            cells
                .iter()
                .map(|c| String::from_utf8_lossy(c.as_cell().qualifier()).into_owned())
                .collect()
        };
        let state = meta.get(Get::new("t").column("table", "state")).unwrap();
        assert_eq!(state.len(), 1);
        assert_eq!(state[0].as_cell().value, [0x08, 0x00], "TableState ENABLED");
        assert!(meta.get(Get::new("nosuch")).unwrap().is_empty());
        let row = &names[1];
        assert_eq!(
            qualifiers(meta.get(Get::new(row)).unwrap()),
            [
                "regioninfo",
                "seqnumDuringOpen",
                "server",
                "serverstartcode",
                "sn",
                "state"
            ]
        );
        assert_eq!(
            qualifiers(meta.get(Get::new(row).column("info", "sn")).unwrap()),
            ["sn"]
        );
        let server = meta.get(Get::new(row).column("info", "server")).unwrap();
        assert_eq!(server[0].as_cell().value, b"host:1");
        let filtered = Get::new(row).filter(Box::new(cairn_filter::ColumnPrefixFilter::new(
            b"server".to_vec(),
        )));
        assert_eq!(
            qualifiers(meta.get(filtered).unwrap()),
            ["server", "serverstartcode"]
        );
        assert_eq!(
            qualifiers(
                meta.get(Get::new(row).store_limit(2).store_offset(1))
                    .unwrap()
            ),
            ["seqnumDuringOpen", "server"]
        );
        let e = meta.get(Get::new(row).family("nosuch")).unwrap_err();
        assert!(matches!(e, RegionError::NoSuchFamily { .. }), "{e}");
        // The region info is the region's own, as its .regioninfo holds it.
        let info = meta
            .get(Get::new(row).column("info", "regioninfo"))
            .unwrap();
        let t = rs.table(&TableName::parse("t").unwrap()).unwrap();
        assert_eq!(info[0].as_cell().value, t.regions[1].info.to_byte_array());
        // A disabled table says so.
        rs.disable_table(&TableName::parse("t").unwrap()).unwrap();
        let state = meta.get(Get::new("t").column("table", "state")).unwrap();
        assert_eq!(
            state[0].as_cell().value,
            [0x08, 0x01],
            "TableState DISABLED"
        );
    }
}
