//! Open scanners of the native RPC: one per `Scan` that opened one, kept in the server's
//! lease registry ([`crate::leases`]) until the client closes it, the region runs out, or its
//! lease expires. Each reads through its region's [`RegionScanner`], user region or meta
//! alike; nothing here looks at rows.

use cairn_cell::KeyValue;
use cairn_region::RegionScanner;

use crate::leases::Leases;

/// The native RPC's open scanners.
pub type Scanners = Leases<OpenScanner>;

/// The registry of the native RPC's scanners: ids from `seed` (the server's start code, so
/// ids of a restarted server do not repeat those a client may still hold).
pub fn scanners(lease: std::time::Duration, max: usize, seed: u64) -> Scanners {
    Leases::new(lease, max, seed.wrapping_shl(20) | 1, u64::MAX)
}

/// One open scanner.
pub struct OpenScanner {
    scanner: Box<RegionScanner>,
    /// The `next_call_seq` the next call must carry.
    pub next_call_seq: u64,
    /// Rows still to return when the scan has a limit (`limit_of_rows`).
    pub rows_left: Option<usize>,
    /// Set when the region has no more rows for the scan.
    pub exhausted: bool,
    /// The rest of a row a call returned only part of (its byte budget ran out mid-row); the
    /// next call starts with it.
    pub partial_rest: Option<Vec<KeyValue>>,
    /// Bytes of cells one call returns at most (the scan's `max_result_size`, within the
    /// server's `hbase.server.scanner.max.result.size`); at least one row is always returned.
    pub max_bytes: usize,
}

impl OpenScanner {
    /// A scanner over `scanner`'s rows, `rows_left` of them at most.
    pub fn new(scanner: RegionScanner, rows_left: Option<usize>) -> Self {
        OpenScanner {
            scanner: Box::new(scanner),
            next_call_seq: 0,
            rows_left,
            exhausted: false,
            max_bytes: usize::MAX,
            partial_rest: None,
        }
    }

    /// The read point the scanner reads at (sent to the client, which reopens at it after a
    /// region move).
    pub fn read_point(&self) -> u64 {
        self.scanner.read_point()
    }

    /// The next row, `None` when there are no more (or the deadline passed: see
    /// [`timed_out`](Self::timed_out)).
    pub fn next_row(&mut self) -> cairn_region::Result<Option<Vec<KeyValue>>> {
        if self.exhausted {
            return Ok(None);
        }
        let row = self.scanner.next_row()?;
        if row.is_none() && !self.scanner.timed_out() {
            self.exhausted = true;
        }
        Ok(row)
    }

    /// Gives up skipping filtered-out rows at `deadline` (see [`RegionScanner::set_deadline`]).
    pub fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        self.scanner.set_deadline(deadline);
    }

    /// Whether the last [`next_row`](Self::next_row) stopped at the deadline.
    pub fn timed_out(&self) -> bool {
        self.scanner.timed_out()
    }

    /// The last row looked at (the scan cursor a heartbeat reports).
    pub fn cursor_row(&self) -> Vec<u8> {
        self.scanner.cursor_row().to_vec()
    }

    /// Whether the scan's filter has ended the scan everywhere.
    pub fn filter_done(&mut self) -> bool {
        self.scanner.filter_done()
    }
}
