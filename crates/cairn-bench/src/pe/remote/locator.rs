//! Where a table's regions are: read from `hbase:meta` as HBase's client reads them (a scan of
//! the table's rows, `info:regioninfo` and `info:server`), cached, and read again when a
//! server says a region is not where the cache put it (`NotServingRegionException`,
//! `RegionMovedException`, …), as HBase's client clears its location cache on those.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use cairn_rpc::cellblock::CellBlockReader;
use cairn_rpc::{pb, znode};

use super::conn::Conn;

/// Meta's region name, as clients name it in requests.
const META_REGION: &[u8] = b"hbase:meta,,1";
/// How long a load waits for every region of the table to have a server.
const SETTLE: Duration = Duration::from_secs(60);

/// One region: its name (meta's row key), key range and server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RegionLoc {
    pub name: Vec<u8>,
    pub start: Vec<u8>,
    pub end: Vec<u8>,
    pub addr: String,
}

/// A table's regions in key order, covering the whole key space.
#[derive(Debug, Default)]
pub(crate) struct Regions {
    pub list: Vec<RegionLoc>,
}

impl Regions {
    /// The index of the region holding `row`.
    pub fn locate(&self, row: &[u8]) -> usize {
        // The last region whose start key is at or before the row.
        self.list
            .partition_point(|r| r.start.as_slice() <= row)
            .saturating_sub(1)
    }

    /// Whether the regions tile the key space: the first starts at the beginning, each ends
    /// where the next starts, the last at the end.
    fn contiguous(&self) -> bool {
        let Some(first) = self.list.first() else {
            return false;
        };
        first.start.is_empty()
            && self.list.last().is_some_and(|r| r.end.is_empty())
            && self.list.windows(2).all(|w| w[0].end == w[1].start)
    }
}

/// The table's name as meta's rows spell it (`ns:name`, `name` in the default namespace).
pub(crate) fn meta_name(table: &pb::TableName) -> Vec<u8> {
    if table.namespace == b"default" {
        table.qualifier.clone()
    } else {
        [&table.namespace[..], b":", &table.qualifier[..]].concat()
    }
}

/// The table's regions as meta lists them now, `None` for a region not assigned anywhere;
/// split parents and offline regions left out. Empty when meta has no row of the table.
pub(crate) fn read_meta(meta_addr: &str, table: &pb::TableName) -> Result<Vec<(RegionLoc, bool)>> {
    let mut c = Conn::open(meta_addr, "ClientService")?;
    let name = meta_name(table);
    let start = [&name[..], b",,"].concat();
    // Past every row of the table under byte order and under meta's own (which compares the
    // table part first): ',' is 0x2c, '-' the byte after it. Rows of other tables that sort
    // in between are dropped below by their region info's table name.
    let stop = [&name[..], b"-"].concat();
    let mut req = pb::ScanRequest {
        region: Some(pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
            value: META_REGION.to_vec(),
        }),
        scan: Some(pb::Scan {
            start_row: Some(start),
            stop_row: Some(stop),
            column: vec![pb::Column {
                family: b"info".to_vec(),
                qualifier: vec![b"regioninfo".to_vec(), b"server".to_vec()],
            }],
            caching: Some(1000),
            ..Default::default()
        }),
        number_of_rows: Some(1000),
        client_handles_partials: Some(true),
        client_handles_heartbeats: Some(true),
        ..Default::default()
    };
    let mut out = Vec::new();
    let mut seq = 0u64;
    loop {
        let reply = c.call::<pb::ScanResponse>("Scan", &req, &[])?;
        let m = reply.message;
        let mut cells = CellBlockReader::new(bytes::Bytes::copy_from_slice(reply.cells));
        for &n in &m.cells_per_result {
            let row = cells
                .take(n as usize)
                .with_context(|| format!("hbase:meta at {meta_addr}: a Scan answer's cells"))?;
            let (mut info, mut server, mut key) = (None, None, Vec::new());
            for kv in &row {
                let cell = kv.as_cell();
                key = cell.key.row().to_vec();
                match cell.key.qualifier() {
                    b"regioninfo" => info = Some(cell.value.to_vec()),
                    b"server" => server = Some(cell.value.to_vec()),
                    _ => {}
                }
            }
            let Some(info) = info else { continue };
            let info: pb::RegionInfo = znode::decode(&info, "hbase.pb.RegionInfo")
                .with_context(|| format!("hbase:meta row {}", String::from_utf8_lossy(&key)))?;
            if info.table_name != *table
                || info.offline.unwrap_or(false)
                || info.split.unwrap_or(false)
                || info.replica_id.unwrap_or(0) != 0
            {
                continue;
            }
            let assigned = server.is_some();
            out.push((
                RegionLoc {
                    name: key,
                    start: info.start_key.unwrap_or_default(),
                    end: info.end_key.unwrap_or_default(),
                    addr: server
                        .map(|s| String::from_utf8_lossy(&s).into_owned())
                        .unwrap_or_default(),
                },
                assigned,
            ));
        }
        let done = m.more_results == Some(false) || m.more_results_in_region == Some(false);
        let Some(id) = m.scanner_id.filter(|_| !done) else {
            break;
        };
        seq += 1;
        req = pb::ScanRequest {
            scanner_id: Some(id),
            number_of_rows: Some(1000),
            next_call_seq: Some(seq),
            client_handles_partials: Some(true),
            client_handles_heartbeats: Some(true),
            ..Default::default()
        };
    }
    out.sort_by(|a, b| a.0.start.cmp(&b.0.start));
    Ok(out)
}

/// Reads the table's regions until every one is assigned and together they tile the key
/// space (a split or move in progress shows otherwise), for at most [`SETTLE`].
pub(crate) fn load(meta_addr: &str, table: &pb::TableName) -> Result<Regions> {
    let deadline = Instant::now() + SETTLE;
    loop {
        let rows = read_meta(meta_addr, table)?;
        if rows.is_empty() {
            bail!(
                "table {} not found in hbase:meta at {meta_addr}",
                String::from_utf8_lossy(&meta_name(table))
            );
        }
        let all_assigned = rows.iter().all(|(_, a)| *a);
        let regions = Regions {
            list: rows.into_iter().map(|(r, _)| r).collect(),
        };
        if all_assigned && regions.contiguous() {
            return Ok(regions);
        }
        if Instant::now() > deadline {
            bail!(
                "table {}: its {} regions in hbase:meta did not all have a server, end to end, \
                 within {SETTLE:?}",
                String::from_utf8_lossy(&meta_name(table)),
                regions.list.len()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The cached regions every client of a run shares.
pub(crate) struct Locator {
    meta_addr: String,
    table: pb::TableName,
    current: Mutex<Arc<Regions>>,
}

impl Locator {
    /// Loads the table's regions from meta at `meta_addr`.
    pub fn new(meta_addr: &str, table: pb::TableName) -> Result<Locator> {
        let regions = load(meta_addr, &table)?;
        Ok(Locator {
            meta_addr: meta_addr.to_string(),
            table,
            current: Mutex::new(Arc::new(regions)),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Arc<Regions>> {
        // A panic elsewhere leaves a whole Arc behind: the cache is still valid.
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The regions as cached now.
    pub fn regions(&self) -> Arc<Regions> {
        self.lock().clone()
    }

    /// Reads meta again unless another client already did since `seen` was handed out;
    /// returns the newer regions.
    pub fn refresh(&self, seen: &Arc<Regions>) -> Result<Arc<Regions>> {
        let mut cur = self.lock();
        if Arc::ptr_eq(&cur, seen) {
            *cur = Arc::new(load(&self.meta_addr, &self.table)?);
        }
        Ok(cur.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(start: &str, end: &str) -> RegionLoc {
        RegionLoc {
            name: format!("t,{start},1.x.").into_bytes(),
            start: start.as_bytes().to_vec(),
            end: end.as_bytes().to_vec(),
            addr: "h:1".into(),
        }
    }

    #[test]
    fn rows_find_their_region() {
        let r = Regions {
            list: vec![region("", "b"), region("b", "d"), region("d", "")],
        };
        assert!(r.contiguous());
        assert_eq!(r.locate(b""), 0);
        assert_eq!(r.locate(b"a"), 0);
        assert_eq!(r.locate(b"b"), 1);
        assert_eq!(r.locate(b"c"), 1);
        assert_eq!(r.locate(b"d"), 2);
        assert_eq!(r.locate(b"zzz"), 2);
    }

    #[test]
    fn gaps_are_not_contiguous() {
        let gap = Regions {
            list: vec![region("", "b"), region("c", "")],
        };
        assert!(!gap.contiguous());
        let open_end = Regions {
            list: vec![region("", "b")],
        };
        assert!(!open_end.contiguous());
        assert!(!Regions::default().contiguous());
    }
}
