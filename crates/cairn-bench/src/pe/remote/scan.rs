//! A scan over RPC as HBase's client runs one: opened on the region holding its start row,
//! continued call by call (`--caching` rows each), then on the next region until its stop
//! row; a scanner lost on the way is opened again just past the last whole row received.

use anyhow::Result;
use cairn_rpc::pb;

use super::client::{classify, filter_all, region_spec, Client};

/// HBase's default `hbase.client.scanner.max.result.size` (2 MiB).
const MAX_RESULT_SIZE: u64 = 2 << 20;

/// Copies the row of the last whole row in a Scan answer into `last`, walking the cell block
/// (a 4-byte length per cell; a KeyValue's key starts, after the key and value lengths, with
/// its 2-byte row length and row).
fn note_last_row(m: &pb::ScanResponse, cells: &[u8], last: &mut Vec<u8>) -> Result<()> {
    let whole = |i: usize| !m.partial_flag_per_result.get(i).copied().unwrap_or(false);
    let Some(i) = (0..m.cells_per_result.len()).rev().find(|&i| whole(i)) else {
        return Ok(());
    };
    if m.cells_per_result[i] == 0 {
        return Ok(());
    }
    let skip: u64 = m.cells_per_result[..i].iter().map(|&n| u64::from(n)).sum();
    let bad = |what: &str| anyhow::anyhow!("Scan answer: cell block {what}");
    let mut at = 0usize;
    for _ in 0..skip {
        let len = cells
            .get(at..at + 4)
            .ok_or_else(|| bad("ends inside a cell length"))?;
        let len = u32::from_be_bytes(len.try_into().expect("4 bytes")) as usize;
        at = at
            .checked_add(4 + len)
            .filter(|&n| n <= cells.len())
            .ok_or_else(|| bad("has a cell running past its end"))?;
    }
    // length, key length, value length, then the key's row length and row.
    let row_len = cells
        .get(at + 12..at + 14)
        .ok_or_else(|| bad("ends inside a row length"))?;
    let row_len = u16::from_be_bytes([row_len[0], row_len[1]]) as usize;
    let row = cells
        .get(at + 14..at + 14 + row_len)
        .ok_or_else(|| bad("ends inside a row"))?;
    last.clear();
    last.extend_from_slice(row);
    Ok(())
}

/// An open scan, moving from region to region.
pub(super) struct RemoteScan {
    scan: pb::Scan,
    stop: Vec<u8>,
    /// Where the next region's scanner starts (the scan's start row, then each region's
    /// start key).
    next_start: Vec<u8>,
    /// The scanner open now: its id, server and region end key.
    open: Option<(u64, String, Vec<u8>)>,
    seq: u64,
    /// The last whole row received, where a scanner that was lost resumes (just past it).
    last_row: Vec<u8>,
    /// Failed continuations in a row.
    retries: usize,
    /// Rows fetched but not yet taken (`scan`'s one row per step).
    buffered: u64,
    exhausted: bool,
}

impl Client<'_> {
    pub(super) fn new_scan(&self, start: &[u8], stop: &[u8]) -> RemoteScan {
        let s = self.settings();
        RemoteScan {
            scan: pb::Scan {
                column: self.columns.clone(),
                start_row: Some(start.to_vec()),
                stop_row: (!stop.is_empty()).then(|| stop.to_vec()),
                filter: s.filter_all.then(filter_all),
                cache_blocks: Some(s.cache_blocks),
                caching: Some(s.caching as u32),
                max_result_size: Some(MAX_RESULT_SIZE),
                ..Default::default()
            },
            stop: stop.to_vec(),
            next_start: start.to_vec(),
            open: None,
            seq: 0,
            last_row: Vec::new(),
            retries: 0,
            buffered: 0,
            exhausted: false,
        }
    }

    /// Whole rows the answer holds (a row cut into parts counts once, at its last part).
    pub(super) fn rows_in(m: &pb::ScanResponse) -> u64 {
        m.cells_per_result
            .iter()
            .enumerate()
            .filter(|(i, _)| !m.partial_flag_per_result.get(*i).copied().unwrap_or(false))
            .count() as u64
    }

    /// One round trip of `scan`: opens the scanner of the region holding its next start row,
    /// or continues the open one; adds the rows to `scan.buffered`.
    pub(super) fn scan_fetch(&mut self, scan: &mut RemoteScan) -> Result<()> {
        let caching = self.settings().caching as u32;
        let (m, end) = if let Some((id, addr, end)) = scan.open.clone() {
            let req = pb::ScanRequest {
                scanner_id: Some(id),
                number_of_rows: Some(caching),
                next_call_seq: Some(scan.seq),
                client_handles_partials: Some(true),
                client_handles_heartbeats: Some(true),
                track_scan_metrics: Some(true),
                ..Default::default()
            };
            match self
                .links
                .call::<pb::ScanResponse>(&addr, "Scan", &req, &[])
            {
                Ok(reply) => {
                    note_last_row(&reply.message, reply.cells, &mut scan.last_row)?;
                    scan.seq += 1;
                    scan.retries = 0;
                    (reply.message, end)
                }
                Err(e) => {
                    // The scanner is gone (its region moved or split, the server restarted,
                    // its lease ran out): as HBase's client does, open a new one just past the
                    // last whole row received.
                    self.recover(classify(e, "Scan (next)"), scan.retries)?;
                    scan.retries += 1;
                    scan.open = None;
                    if !scan.last_row.is_empty() {
                        scan.next_start.clear();
                        scan.next_start.extend_from_slice(&scan.last_row);
                        scan.next_start.push(0);
                    }
                    return Ok(());
                }
            }
        } else {
            let mut answer = None;
            for attempt in 0.. {
                let regions = self.regions.clone();
                let r = &regions.list[regions.locate(&scan.next_start)];
                scan.scan.start_row = Some(scan.next_start.clone());
                let req = pb::ScanRequest {
                    region: Some(region_spec(&r.name)),
                    scan: Some(scan.scan.clone()),
                    number_of_rows: Some(caching),
                    client_handles_partials: Some(true),
                    client_handles_heartbeats: Some(true),
                    track_scan_metrics: Some(true),
                    ..Default::default()
                };
                match self
                    .links
                    .call::<pb::ScanResponse>(&r.addr, "Scan", &req, &[])
                {
                    Ok(reply) => {
                        note_last_row(&reply.message, reply.cells, &mut scan.last_row)?;
                        let m = reply.message;
                        if let Some(id) = m.scanner_id {
                            scan.open = Some((id, r.addr.clone(), r.end.clone()));
                            scan.seq = 0;
                        }
                        answer = Some((m, r.end.clone()));
                        break;
                    }
                    Err(e) => self.recover(classify(e, "Scan (open)"), attempt)?,
                }
            }
            answer.expect("the attempts end in an answer or an error")
        };
        scan.buffered += Self::rows_in(&m);
        // `more_results` false: the server says the whole scan is done (HBase's client stops
        // there too); `more_results_in_region` false: this region is.
        let scan_done = m.more_results == Some(false);
        let region_done =
            scan_done || m.more_results_in_region == Some(false) || m.scanner_id.is_none();
        if region_done {
            scan.open = None;
            let past_stop = !scan.stop.is_empty() && end.as_slice() >= scan.stop.as_slice();
            if scan_done || end.is_empty() || past_stop {
                scan.exhausted = true;
            } else {
                scan.next_start = end;
            }
        }
        Ok(())
    }

    /// Scans `[from, to)` to its end; the whole rows it returned.
    pub(super) fn scan_range(&mut self, from: &[u8], to: &[u8]) -> Result<u64> {
        let mut scan = self.new_scan(from, to);
        let mut rows = 0;
        while !scan.exhausted || scan.buffered > 0 {
            self.scan_fetch(&mut scan)?;
            rows += std::mem::take(&mut scan.buffered);
        }
        Ok(rows)
    }

    /// PE's `scan`: the next row of the client's scanner, false past the table's end.
    pub(super) fn scan_next_row(&mut self, scan: &mut RemoteScan) -> Result<bool> {
        while scan.buffered == 0 {
            if scan.exhausted {
                return Ok(false);
            }
            self.scan_fetch(scan)?;
        }
        scan.buffered -= 1;
        Ok(true)
    }

    /// Closes a scanner still open at the end of the run (errors ignored: the server drops
    /// it at its lease's end anyway).
    pub(super) fn close_scan(&mut self, scan: RemoteScan) {
        if let Some((id, addr, _)) = scan.open {
            let req = pb::ScanRequest {
                scanner_id: Some(id),
                number_of_rows: Some(0),
                close_scanner: Some(true),
                ..Default::default()
            };
            let _ = self
                .links
                .call::<pb::ScanResponse>(&addr, "Scan", &req, &[]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_whole_row_of_an_answer_is_found_in_its_cell_block() {
        let cell = |row: &[u8]| {
            let mut b = Vec::new();
            let key = [
                &(row.len() as u16).to_be_bytes()[..],
                row,
                b"\x01f",
                b"q",
                &[0; 9],
            ]
            .concat();
            b.extend_from_slice(&((8 + key.len() + 1) as u32).to_be_bytes());
            b.extend_from_slice(&(key.len() as u32).to_be_bytes());
            b.extend_from_slice(&1u32.to_be_bytes());
            b.extend_from_slice(&key);
            b.push(b'v');
            b
        };
        let block = [cell(b"r1"), cell(b"r1"), cell(b"r2"), cell(b"r3")].concat();
        let mut m = pb::ScanResponse {
            cells_per_result: vec![2, 1, 1],
            partial_flag_per_result: vec![false, false, true],
            ..Default::default()
        };
        let mut last = b"old".to_vec();
        note_last_row(&m, &block, &mut last).unwrap();
        assert_eq!(last, b"r2", "r3 is only part of a row");
        m.partial_flag_per_result.clear();
        note_last_row(&m, &block, &mut last).unwrap();
        assert_eq!(last, b"r3");
        // A block shorter than its counts say is an error, not a panic.
        assert!(note_last_row(&m, &block[..block.len() - 20], &mut last).is_err());
        m.cells_per_result = vec![9, 1];
        assert!(note_last_row(&m, &block, &mut last).is_err());
    }

    #[test]
    fn partial_rows_count_once() {
        let m = pb::ScanResponse {
            cells_per_result: vec![1, 2, 1, 3],
            partial_flag_per_result: vec![false, true, false, false],
            ..Default::default()
        };
        assert_eq!(Client::rows_in(&m), 3);
    }
}
