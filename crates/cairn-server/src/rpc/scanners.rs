//! Open scanners of the native RPC: one per `Scan` that opened one, until the client closes
//! it, the region runs out, or its lease (`hbase.client.scanner.timeout.period`) expires.
//!
//! HBase keeps any number of scanners until their leases expire; cairn caps them per server
//! (`cairn.ipc.server.max.open.scanners`): opening one past the cap closes the least recently
//! used scanner not in a call right now. Its next call gets `UnknownScannerException`, as
//! after an expired lease, and HBase's client reopens the scan after the last row it got.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_hfile::cell::KeyValue;
use cairn_region::{Region, RegionScanner};
use parking_lot::Mutex;

use super::convert::ScanBounds;

/// Where an open scanner's rows come from.
pub enum Source {
    /// A user region.
    Region {
        /// The region (kept so its metrics and state stay reachable).
        region: Arc<Region>,
        /// Its scanner.
        scanner: Box<RegionScanner>,
    },
    /// `hbase:meta`, read whole when the scanner opened.
    Meta(VecDeque<Vec<KeyValue>>),
}

/// One open scanner.
pub struct OpenScanner {
    /// Its rows.
    pub source: Source,
    /// What is left of the scan's bounds.
    pub bounds: ScanBounds,
    /// The `next_call_seq` the next call must carry.
    pub next_call_seq: u64,
    /// Rows still to return when the scan has a limit (`limit_of_rows`).
    pub rows_left: Option<usize>,
    /// The read point the scanner reads at (sent to the client, which reopens at it after a
    /// region move).
    pub read_point: u64,
    /// Set when the last row has been read past the bounds.
    pub exhausted: bool,
    /// The rest of a row a call returned only part of (its byte budget ran out mid-row); the
    /// next call starts with it.
    pub partial_rest: Option<Vec<KeyValue>>,
    /// Bytes of cells one call returns at most (the scan's `max_result_size`, within the
    /// server's `hbase.server.scanner.max.result.size`); at least one row is always returned.
    pub max_bytes: usize,
    last_used: Instant,
}

impl OpenScanner {
    /// A scanner over `source`.
    pub fn new(
        source: Source,
        bounds: ScanBounds,
        rows_left: Option<usize>,
        read_point: u64,
    ) -> Self {
        OpenScanner {
            source,
            bounds,
            next_call_seq: 0,
            rows_left,
            read_point,
            exhausted: false,
            max_bytes: usize::MAX,
            partial_rest: None,
            last_used: Instant::now(),
        }
    }

    /// The next row within the bounds, `None` when there are no more.
    pub fn next_row(&mut self) -> cairn_region::Result<Option<Vec<KeyValue>>> {
        if self.exhausted {
            return Ok(None);
        }
        loop {
            let row = match &mut self.source {
                Source::Region { scanner, .. } => scanner.next_row()?,
                Source::Meta(rows) => rows.pop_front(),
            };
            let Some(row) = row else {
                if !self.timed_out() {
                    self.exhausted = true;
                }
                return Ok(None);
            };
            let key = row[0].as_cell().row();
            if let Some(last) = &self.bounds.last_row {
                // A reversed scan with an inclusive stop row: rows below it end the scan.
                if cairn_hfile::cell::compare_bytes(key, last) == std::cmp::Ordering::Less {
                    self.exhausted = true;
                    return Ok(None);
                }
            }
            if self.bounds.skip_row.as_deref() == Some(key) {
                continue;
            }
            return Ok(Some(row));
        }
    }

    /// Gives up skipping filtered-out rows at `deadline` (see [`RegionScanner::set_deadline`]).
    pub fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        if let Source::Region { scanner, .. } = &mut self.source {
            scanner.set_deadline(deadline);
        }
    }

    /// Whether the last [`next_row`](Self::next_row) stopped at the deadline.
    pub fn timed_out(&self) -> bool {
        match &self.source {
            Source::Region { scanner, .. } => scanner.timed_out(),
            Source::Meta(_) => false,
        }
    }

    /// The last row looked at (the scan cursor a heartbeat reports).
    pub fn cursor_row(&self) -> Option<Vec<u8>> {
        match &self.source {
            Source::Region { scanner, .. } => Some(scanner.cursor_row().to_vec()),
            Source::Meta(_) => None,
        }
    }

    /// Whether the scan's filter has ended the scan everywhere.
    pub fn filter_done(&mut self) -> bool {
        match &mut self.source {
            Source::Region { scanner, .. } => scanner.filter_done(),
            Source::Meta(_) => false,
        }
    }
}

/// The open scanners, by id.
pub struct Scanners {
    open: Mutex<HashMap<u64, Arc<Mutex<OpenScanner>>>>,
    next_id: AtomicU64,
    lease: Duration,
    max: usize,
    evicted: AtomicU64,
}

impl Scanners {
    /// No scanners yet; ids start from `seed` (the server's start code, so ids of a restarted
    /// server do not repeat those a client may still hold); at most 10000 open at once.
    pub fn new(lease: Duration, seed: u64) -> Scanners {
        Scanners {
            open: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(seed.wrapping_shl(20) | 1),
            lease,
            max: 10_000,
            evicted: AtomicU64::new(0),
        }
    }

    /// At most `max` scanners open at once (at least one).
    pub fn with_cap(self, max: usize) -> Scanners {
        Scanners {
            max: max.max(1),
            ..self
        }
    }

    /// Scanners closed so far to make room for new ones.
    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }

    /// The lease: a scanner unused this long is closed.
    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// Registers a scanner; returns its id and the scanner. At the cap, the least recently
    /// used scanner not in a call is closed first.
    pub fn add(&self, s: OpenScanner) -> (u64, Arc<Mutex<OpenScanner>>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let scanner = Arc::new(Mutex::new(s));
        let mut open = self.open.lock();
        while open.len() >= self.max {
            let victim = open
                .iter()
                .filter_map(|(id, s)| Some((*id, s.try_lock()?.last_used)))
                .min_by_key(|(_, used)| *used)
                .map(|(id, _)| id);
            let Some(victim) = victim else {
                // Every one is in a call: over the cap for the moment rather than waiting.
                break;
            };
            open.remove(&victim);
            self.evicted.fetch_add(1, Ordering::Relaxed);
        }
        open.insert(id, scanner.clone());
        (id, scanner)
    }

    /// An open scanner, its lease renewed.
    pub fn get(&self, id: u64) -> Option<Arc<Mutex<OpenScanner>>> {
        let s = self.open.lock().get(&id).cloned()?;
        s.lock().last_used = Instant::now();
        Some(s)
    }

    /// Closes a scanner; whether it was open.
    pub fn remove(&self, id: u64) -> bool {
        self.open.lock().remove(&id).is_some()
    }

    /// How many are open.
    pub fn len(&self) -> usize {
        self.open.lock().len()
    }

    /// Whether none is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Closes every scanner whose lease has expired; returns how many. A scanner busy in a
    /// call is not expired under it (its lock is held).
    pub fn expire(&self) -> usize {
        let now = Instant::now();
        let mut open = self.open.lock();
        let before = open.len();
        open.retain(|_, s| match s.try_lock() {
            Some(g) => now.duration_since(g.last_used) < self.lease,
            None => true,
        });
        before - open.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta_rows(rows: &[&[u8]]) -> VecDeque<Vec<KeyValue>> {
        rows.iter()
            .map(|r| vec![KeyValue::put(r, b"f", b"q", 1, b"v").unwrap()])
            .collect()
    }

    fn empty() -> OpenScanner {
        OpenScanner::new(
            Source::Meta(VecDeque::new()),
            ScanBounds::default(),
            None,
            0,
        )
    }

    #[test]
    fn at_the_cap_the_least_recently_used_scanner_makes_room() {
        let s = Scanners::new(Duration::from_secs(60), 7).with_cap(3);
        let (a, _) = s.add(empty());
        std::thread::sleep(Duration::from_millis(2));
        let (b, _) = s.add(empty());
        std::thread::sleep(Duration::from_millis(2));
        let (c, _) = s.add(empty());
        std::thread::sleep(Duration::from_millis(2));
        // a is used again: b is now the least recently used.
        assert!(s.get(a).is_some());
        let (d, _) = s.add(empty());
        assert_eq!(s.len(), 3);
        assert!(s.get(b).is_none(), "b made room");
        assert_eq!(s.evicted(), 1);
        // A scanner in a call is never taken from under it.
        let busy_c = s.get(c).unwrap();
        let busy_d = s.get(d).unwrap();
        let busy_a = s.get(a).unwrap();
        let (_ga, _gc, _gd) = (busy_a.lock(), busy_c.lock(), busy_d.lock());
        let (e, _) = s.add(empty());
        assert_eq!(s.len(), 4, "over the cap while all are busy");
        assert!(s.open.lock().contains_key(&e));
    }

    #[test]
    fn leases_expire_unused_scanners() {
        let s = Scanners::new(Duration::from_millis(30), 7);
        let (a, _) = s.add(empty());
        assert!(s.get(a).is_some());
        assert_eq!(s.expire(), 0);
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(s.expire(), 1);
        assert!(s.get(a).is_none());
    }

    #[test]
    fn bounds_skip_the_start_row_and_stop_below_the_last_row() {
        let mut o = OpenScanner::new(
            Source::Meta(meta_rows(&[b"d", b"c", b"b", b"a"])),
            ScanBounds {
                skip_row: Some(b"d".to_vec()),
                last_row: Some(b"b".to_vec()),
            },
            None,
            0,
        );
        let mut got = Vec::new();
        while let Some(r) = o.next_row().unwrap() {
            got.push(r[0].as_cell().row().to_vec());
        }
        assert_eq!(got, vec![b"c".to_vec(), b"b".to_vec()]);
    }
}
