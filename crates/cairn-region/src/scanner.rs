//! The region scanner: merges every store's memstore and files, applies the matcher and the
//! filter, and assembles rows (HBase's `RegionScannerImpl` + `StoreScanner`).

use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

use cairn_cell::{first_on_row, last_on_row, same_bytes, KeyValue};
use cairn_filter::Filter;
use parking_lot::Mutex;

use crate::bounds::{self, RowOrder};
use crate::error::Result;
use crate::heap::KeyValueHeap;
use crate::matcher::{MatchCode, Matcher};
pub use crate::read_points::{ReadPointGuard, ReadPointHold, ReadPoints};
use crate::store::seek_or_next;

/// Rows of one region, in order (or reverse order), as lists of cells.
pub struct RegionScanner {
    heap: KeyValueHeap<'static>,
    matcher: Matcher,
    filter: Option<Box<dyn Filter>>,
    /// Where the scan begins (its upper bound when reversed); a get's row is `Included`.
    start: Bound<Vec<u8>>,
    /// Where it ends (its lower bound when reversed).
    stop: Bound<Vec<u8>>,
    /// How the region's rows sort (bytes, or `hbase:meta`'s order).
    order: RowOrder,
    reversed: bool,
    batch: usize,
    limit: usize,
    single_row: bool,
    /// HBase's `storeLimit` and `storeOffset`, when the read has either.
    per_family: Option<PerFamily>,
    /// The read point the scanner reads at.
    read_point: u64,
    rows: usize,
    pending: VecDeque<Vec<KeyValue>>,
    done: bool,
    started: bool,
    /// Reversed scans: the next row is the last one before this key.
    reverse_cursor: Option<Vec<u8>>,
    metrics: Option<Arc<crate::metrics::RegionMetrics>>,
    /// Rows filtered out since the last call returned, added to the region's metric once per
    /// call: a filtered scan passes millions of rows, and an atomic add per row showed up.
    filtered_rows: u64,
    /// The row being assembled, kept to reuse its allocation from row to row.
    row: Vec<u8>,
    /// When set, [`next_row`](Self::next_row) gives up at this instant while it is skipping
    /// rows the filter drops (an RPC server's heartbeat: the client hears from the server
    /// before its call times out).
    deadline: Option<std::time::Instant>,
    /// Whether the last `next_row` returned `None` because of the deadline.
    timed_out: bool,
    /// `None` when the caller holds the registration (a multi-get's batch).
    _guard: Option<ReadPointGuard>,
}

pub(crate) struct ScannerParts {
    pub heap: KeyValueHeap<'static>,
    pub matcher: Matcher,
    pub filter: Option<Box<dyn Filter>>,
    pub start: Bound<Vec<u8>>,
    pub stop: Bound<Vec<u8>>,
    pub order: RowOrder,
    pub reversed: bool,
    pub batch: usize,
    pub limit: usize,
    pub store_limit: Option<u32>,
    pub store_offset: u32,
    pub single_row: bool,
    pub read_point: u64,
    pub guard: Option<ReadPointGuard>,
    pub metrics: Option<Arc<crate::metrics::RegionMetrics>>,
}

/// HBase's `storeLimit` / `storeOffset` at work: how many cells of the current family of the
/// current row the matcher has let through (`StoreScanner.countPerRow`; one store is one
/// family).
struct PerFamily {
    limit: Option<u32>,
    offset: u32,
    family: Vec<u8>,
    count: u32,
}

/// What [`PerFamily`] says of a cell the matcher let through.
enum FamilyCount {
    /// Within the limit and past the offset: returned.
    Take,
    /// Returned, and the family's last in this row: the limit is reached.
    TakeLast,
    /// Within the offset: left out, and the scan moves on as if returned.
    Skip,
}

impl PerFamily {
    fn new(limit: Option<u32>, offset: u32) -> Option<PerFamily> {
        (limit.is_some() || offset > 0).then(|| PerFamily {
            limit,
            offset,
            family: Vec::new(),
            count: 0,
        })
    }

    fn start_row(&mut self) {
        self.family.clear();
        self.count = 0;
    }

    /// As HBase 2's `StoreScanner`: a cell past the offset is returned, and the family stops
    /// once `count >= limit + offset` (so a limit of 0 returns one cell, as HBase does).
    fn count(&mut self, family: &[u8]) -> FamilyCount {
        if !same_bytes(&self.family, family) {
            self.family.clear();
            self.family.extend_from_slice(family);
            self.count = 0;
        }
        self.count += 1;
        if self.count <= self.offset {
            FamilyCount::Skip
        } else if self
            .limit
            .is_some_and(|l| u64::from(self.count) >= u64::from(l) + u64::from(self.offset))
        {
            FamilyCount::TakeLast
        } else {
            FamilyCount::Take
        }
    }
}

impl RegionScanner {
    pub(crate) fn new(p: ScannerParts) -> RegionScanner {
        RegionScanner {
            heap: p.heap,
            matcher: p.matcher,
            filter: p.filter,
            start: p.start,
            stop: p.stop,
            order: p.order,
            reversed: p.reversed,
            batch: p.batch,
            limit: p.limit,
            single_row: p.single_row,
            per_family: PerFamily::new(p.store_limit, p.store_offset),
            read_point: p.read_point,
            rows: 0,
            pending: VecDeque::new(),
            done: false,
            started: false,
            reverse_cursor: None,
            metrics: p.metrics,
            filtered_rows: 0,
            row: Vec::new(),
            deadline: None,
            timed_out: false,
            _guard: p.guard,
        }
    }

    /// The heap is already positioned (multi-get reseeks it row by row).
    pub(crate) fn mark_started(&mut self) {
        self.started = true;
    }

    /// Reads `row` next, with everything else as it is (a multi-get's next row, whose get
    /// asks for what the last one asked): the heap is already positioned at the row.
    pub(crate) fn restart_single_row(&mut self, row: Vec<u8>) {
        self.start = Bound::Included(row);
        self.started = true;
        self.done = false;
        self.rows = 0;
        self.pending.clear();
        self.timed_out = false;
    }

    /// The merged scanners, to position them before the next row.
    pub(crate) fn heap_mut(&mut self) -> &mut KeyValueHeap<'static> {
        &mut self.heap
    }

    pub(crate) fn into_heap(self) -> KeyValueHeap<'static> {
        self.heap
    }

    /// Hands the filter, with its state, to the next region's scanner.
    pub(crate) fn take_filter(&mut self) -> Option<Box<dyn Filter>> {
        self.filter.take()
    }

    /// Rows filtered out and not yet added to a metric (a scanner without metrics keeps
    /// them for its caller).
    pub(crate) fn take_filtered_rows(&mut self) -> u64 {
        std::mem::take(&mut self.filtered_rows)
    }

    /// Sets (or clears) the instant after which [`next_row`](Self::next_row) stops skipping
    /// filtered-out rows and returns `None` with [`timed_out`](Self::timed_out) set; the scan
    /// then goes on from the next row at the following call.
    pub fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        self.deadline = deadline;
    }

    /// Whether the last [`next_row`](Self::next_row) ended at the deadline rather than at the
    /// end of the scan.
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// The last row the scanner looked at, returned or filtered out (HBase's scan cursor).
    pub fn cursor_row(&self) -> &[u8] {
        &self.row
    }

    /// The MVCC read point the scanner reads at (a client reopening the scan elsewhere asks
    /// for it again).
    pub fn read_point(&self) -> u64 {
        self.read_point
    }

    /// The next row (or part of one, with a batch limit); `None` at the end.
    pub fn next_row(&mut self) -> Result<Option<Vec<KeyValue>>> {
        self.timed_out = false;
        let r = self.next_row_inner();
        if self.filtered_rows > 0 {
            if let Some(m) = &self.metrics {
                m.filtered_read_request_count.add(self.filtered_rows);
                self.filtered_rows = 0;
            }
        }
        r
    }

    fn next_row_inner(&mut self) -> Result<Option<Vec<KeyValue>>> {
        loop {
            if let Some(chunk) = self.pending.pop_front() {
                return Ok(Some(chunk));
            }
            if self.done || (self.limit > 0 && self.rows >= self.limit) {
                return Ok(None);
            }
            let found = if self.reversed {
                self.next_reverse_row()?
            } else {
                self.next_forward_row()?
            };
            if !found {
                self.done = true;
                continue;
            }
            let row = std::mem::take(&mut self.row);
            let cells = self.assemble_row(&row);
            self.row = row;
            let cells = cells?;
            if self.single_row {
                self.done = true;
            }
            if cells.is_empty() {
                self.filtered_rows += 1;
                // Reading the clock costs about as much as a cached row: look every 64 rows.
                if self.filtered_rows.is_multiple_of(64)
                    && self
                        .deadline
                        .is_some_and(|d| std::time::Instant::now() >= d)
                {
                    self.timed_out = true;
                    return Ok(None);
                }
                continue;
            }
            self.rows += 1;
            if self.batch == 0 || cells.len() <= self.batch {
                // Straight to the caller: a queue entry per row was an allocation per get.
                return Ok(Some(cells));
            }
            let mut cells = cells.into_iter().peekable();
            while cells.peek().is_some() {
                self.pending
                    .push_back(cells.by_ref().take(self.batch).collect());
            }
        }
    }

    /// Whether the scan's filter has ended the whole scan (`filterAllRemaining`, e.g. a
    /// `WhileMatchFilter` that stopped matching or a `PageFilter` that filled its page): an
    /// RPC server then tells the client there are no more results anywhere, not only in this
    /// region.
    pub fn filter_done(&mut self) -> bool {
        self.filter
            .as_deref_mut()
            .is_some_and(|f| f.filter_all_remaining())
    }

    /// Up to `n` rows.
    pub fn next_rows(&mut self, n: usize) -> Result<Vec<Vec<KeyValue>>> {
        let mut out = Vec::new();
        while out.len() < n {
            match self.next_row()? {
                Some(r) => out.push(r),
                None => break,
            }
        }
        Ok(out)
    }

    /// Puts the next row in `self.row`; false when there is none.
    fn next_forward_row(&mut self) -> Result<bool> {
        if !self.started {
            self.started = true;
            let key = match &self.start {
                Bound::Included(row) => first_on_row(row)?,
                // The first key after every cell of the row.
                Bound::Excluded(row) => last_on_row(row)?,
                Bound::Unbounded => first_on_row(b"")?,
            };
            self.heap.seek(&key)?;
        }
        let Some(c) = self.heap.peek() else {
            return Ok(false);
        };
        let row = c.row();
        if self.single_row {
            // A get: its row or nothing. The row is read once, so the request's copy of it
            // becomes the scanner's.
            let Bound::Included(want) = &mut self.start else {
                return Ok(false);
            };
            if !same_bytes(row, want) {
                return Ok(false);
            }
            self.row = std::mem::take(want);
            return Ok(true);
        }
        if !bounds::below(self.order, &self.stop, row) {
            return Ok(false);
        }
        self.row.clear();
        self.row.extend_from_slice(row);
        Ok(true)
    }

    /// Puts the next row (going backwards) in `self.row`; false when there is none.
    fn next_reverse_row(&mut self) -> Result<bool> {
        let cursor = if !self.started {
            self.started = true;
            match &self.start {
                Bound::Unbounded => None,
                // The last row at or before the start: every cell of it sorts before this.
                Bound::Included(row) => Some(last_on_row(row)?),
                Bound::Excluded(row) => Some(first_on_row(row)?),
            }
        } else {
            match &self.reverse_cursor {
                Some(c) => Some(c.clone()),
                None => return Ok(false),
            }
        };
        let Some(row) = self.heap.last_row_before(cursor.as_deref())? else {
            return Ok(false);
        };
        // A reversed scan's stop is its lower bound.
        if !bounds::above(self.order, &self.stop, &row) {
            return Ok(false);
        }
        self.reverse_cursor = Some(first_on_row(&row)?);
        self.heap.seek(&first_on_row(&row)?)?;
        self.row = row;
        Ok(true)
    }

    /// Moves every scanner past `row`. Most rows have a cell or two left when the matcher is
    /// done with them (the next version, the next column): stepping over those is cheaper
    /// than building a key and seeking each scanner to it.
    fn skip_rest_of_row(&mut self, row: &[u8]) -> Result<()> {
        const MAX_STEPS: usize = 2;
        for _ in 0..MAX_STEPS {
            match self.heap.peek() {
                Some(c) if same_bytes(c.row(), row) => self.heap.next()?,
                _ => return Ok(()),
            }
        }
        if self.heap.peek().is_some_and(|c| same_bytes(c.row(), row)) {
            self.heap.reseek(&last_on_row(row)?)?;
        }
        Ok(())
    }

    fn assemble_row(&mut self, row: &[u8]) -> Result<Vec<KeyValue>> {
        let mut out = Vec::new();
        self.matcher.start_row();
        if let Some(pf) = &mut self.per_family {
            pf.start_row();
        }
        if let Some(f) = self.filter.as_deref_mut() {
            f.reset();
            if f.filter_all_remaining() {
                self.done = true;
                return Ok(out);
            }
            if f.filter_row_key(row) {
                if !self.reversed {
                    self.heap.reseek(&last_on_row(row)?)?;
                }
                return Ok(out);
            }
        }
        // Whether the heap has left the row on its own (its next cell is in another row, or
        // it has none): then there is nothing to skip when the row is done.
        let mut past_row = true;
        while let Some(c) = self.heap.peek() {
            if !same_bytes(c.row(), row) {
                break;
            }
            let mut code = self.matcher.match_cell(&c, self.filter.as_deref_mut());
            if let Some(pf) = &mut self.per_family {
                if matches!(
                    code,
                    MatchCode::Include
                        | MatchCode::IncludeAndSeekNextCol
                        | MatchCode::IncludeAndSeekNextRow
                ) {
                    code = match (pf.count(c.family()), code) {
                        (FamilyCount::Take, code) => code,
                        // As HBase's StoreScanner: at the limit, the store's next row.
                        (FamilyCount::TakeLast, _) => MatchCode::IncludeAndSeekNextRow,
                        // Left out, but the scan moves on as the matcher said.
                        (FamilyCount::Skip, MatchCode::Include) => MatchCode::Skip,
                        (FamilyCount::Skip, MatchCode::IncludeAndSeekNextCol) => {
                            MatchCode::SeekNextCol
                        }
                        (FamilyCount::Skip, _) => MatchCode::SeekNextRow,
                    };
                }
            }
            match code {
                MatchCode::Include => {
                    out.push(self.heap.peek_owned().unwrap_or_else(|| c.to_owned()));
                    self.heap.next()?;
                }
                MatchCode::IncludeAndSeekNextCol => {
                    out.push(self.heap.peek_owned().unwrap_or_else(|| c.to_owned()));
                    let k = self.matcher.next_column_key(&c);
                    seek_or_next(&mut self.heap, k)?;
                }
                MatchCode::IncludeAndSeekNextRow => {
                    out.push(self.heap.peek_owned().unwrap_or_else(|| c.to_owned()));
                    if !self.matcher.wants_later_family() {
                        past_row = false;
                        break;
                    }
                    let k = Matcher::next_family_key(&c);
                    seek_or_next(&mut self.heap, k)?;
                }
                MatchCode::Skip => self.heap.next()?,
                MatchCode::SeekNextCol => {
                    let k = self.matcher.next_column_key(&c);
                    seek_or_next(&mut self.heap, k)?;
                }
                MatchCode::SeekNextRow => {
                    if !self.matcher.wants_later_family() {
                        past_row = false;
                        break;
                    }
                    let k = Matcher::next_family_key(&c);
                    seek_or_next(&mut self.heap, k)?;
                }
                MatchCode::SeekTo(k) => seek_or_next(&mut self.heap, Some(k))?,
                MatchCode::DoneScan => {
                    self.done = true;
                    break;
                }
            }
        }
        if let Some(f) = self.filter.as_deref_mut() {
            if !out.is_empty() {
                out = out.into_iter().map(|c| f.transform_cell(c)).collect();
            }
            // FilterWrapper: filterRowCells sees even an empty row; filterRow is asked only
            // about a row that still has cells (PageFilter counts rows there).
            if f.has_filter_row() {
                f.filter_row_cells(&mut out);
            }
            if !out.is_empty() && f.filter_row() {
                out.clear();
            }
        }
        // A get is over with its row; a scan moves every scanner past it.
        if !self.reversed && !self.done && !self.single_row && !past_row {
            self.skip_rest_of_row(row)?;
        }
        Ok(out)
    }
}

impl Iterator for RegionScanner {
    type Item = Result<Vec<KeyValue>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_row().transpose()
    }
}

/// Lets tests and callers share one scanner across threads.
pub type SharedScanner = Arc<Mutex<RegionScanner>>;
