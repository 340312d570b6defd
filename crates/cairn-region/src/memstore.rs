//! The memstore: recent writes of one store, sorted, in memory until a flush.
//!
//! A segment is a lock-free skip list of cells ordered as in an HFile (key, then sequence id
//! descending). Flushing turns the active segment into the snapshot and starts a new one, so
//! writes never wait for the flush's I/O (HBase's `DefaultMemStore`).

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use cairn_cell::{compare_keys, CellRef, CellType, KeyRef, KeyValue};
use crossbeam_skiplist::SkipSet;

use crate::error::Result;
use crate::heap::CellScanner;

/// A cell in a segment; clones share it. It carries the first bytes of its row inline (in
/// the skip-list node), so most of a search's compares are decided there without following
/// the pointer to the cell: a search on a large segment otherwise waits on a cache miss or
/// two at every step.
#[derive(Clone, Debug)]
pub struct MemCell(pub Arc<KeyValue>, RowHead);

/// The first 24 (`ROW_HEAD_BYTES`) bytes of a row, zero-padded, as big-endian words: when two
/// heads differ they order their rows as the rows' bytes do (a row shorter than the head
/// has zeros where the longer has bytes, and a row that is a prefix of another sorts first
/// anyway); equal heads decide nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RowHead([u64; 3]);

const ROW_HEAD_BYTES: usize = 24;

impl RowHead {
    fn of(row: &[u8]) -> RowHead {
        let mut b = [0u8; ROW_HEAD_BYTES];
        let n = row.len().min(ROW_HEAD_BYTES);
        b[..n].copy_from_slice(&row[..n]);
        let word = |i: usize| u64::from_be_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        RowHead([word(0), word(1), word(2)])
    }
}

impl PartialEq for MemCell {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for MemCell {}
impl PartialOrd for MemCell {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for MemCell {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        self.1.cmp(&other.1).then_with(|| {
            // A skip-list insert compares ~20 times: the keys only, no value or tags views.
            compare_keys(&self.0.key(), &other.0.key())
                .then_with(|| other.0.sequence_id().cmp(&self.0.sequence_id()))
        })
    }
}

impl MemCell {
    /// Wraps a cell for a segment, copying the head of its row inline.
    pub fn new(kv: Arc<KeyValue>) -> MemCell {
        let head = RowHead::of(kv.as_cell().row());
        MemCell(kv, head)
    }

    /// A probe that sorts before every cell whose key is ≥ `key`.
    fn probe(key: &[u8]) -> Result<MemCell> {
        let k = KeyRef::parse(key)?;
        let t = CellType::from_code(k.type_code()).unwrap_or(CellType::Maximum);
        let kv = KeyValue::new(k.row(), k.family(), k.qualifier(), k.timestamp(), t, &[])?
            .with_sequence_id(u64::MAX);
        Ok(MemCell::new(Arc::new(kv)))
    }
}

/// Approximate memory a cell costs in a segment (HBase's heapSize: data plus overhead).
pub fn cell_heap_size(kv: &KeyValue) -> u64 {
    const OVERHEAD: u64 = 120; // skip-list node with the row head, Arc and Vec headers
    kv.as_cell().serialized_len() as u64 + OVERHEAD
}

/// Adds `by` (which may be negative) to a size counter.
pub(crate) fn add_signed(counter: &AtomicU64, by: i64) {
    if by >= 0 {
        counter.fetch_add(by as u64, AtomicOrdering::Relaxed);
    } else {
        counter.fetch_sub(by.unsigned_abs(), AtomicOrdering::Relaxed);
    }
}

/// One sorted run of cells.
#[derive(Debug, Default)]
pub struct Segment {
    cells: SkipSet<MemCell>,
    heap_size: AtomicU64,
    max_sequence_id: AtomicU64,
    min_ts: AtomicI64,
    max_ts: AtomicI64,
}

impl Segment {
    /// An empty segment; its time range reads `None` until a cell arrives.
    pub fn new() -> Segment {
        Segment {
            min_ts: AtomicI64::new(i64::MAX),
            max_ts: AtomicI64::new(i64::MIN),
            ..Default::default()
        }
    }

    /// Adds a cell and returns how much the segment grew. A cell equal to one already here
    /// (same key and sequence id: the same column written twice in one batch) replaces it, as
    /// in HBase's memstore, and only the difference in size counts.
    pub fn add(&self, kv: Arc<KeyValue>) -> i64 {
        let size = cell_heap_size(&kv);
        let c = kv.as_cell();
        self.max_sequence_id
            .fetch_max(c.sequence_id, AtomicOrdering::Relaxed);
        self.min_ts
            .fetch_min(c.timestamp(), AtomicOrdering::Relaxed);
        self.max_ts
            .fetch_max(c.timestamp(), AtomicOrdering::Relaxed);
        // One skip-list search in the usual case (no equal cell). Equal cells share a sequence
        // id, so they come from one batch on one thread: nothing else replaces the one found
        // before this thread does.
        let entry = self.cells.get_or_insert(MemCell::new(Arc::clone(&kv)));
        let replaced = if Arc::ptr_eq(&entry.value().0, &kv) {
            0
        } else {
            let old = cell_heap_size(&entry.value().0);
            drop(entry);
            self.cells.insert(MemCell::new(kv));
            old
        };
        let grown = size as i64 - replaced as i64;
        add_signed(&self.heap_size, grown);
        grown
    }

    /// Approximate bytes the segment holds ([`cell_heap_size`] summed): what counts toward the
    /// flush size and the blocking limit.
    pub fn heap_size(&self) -> u64 {
        self.heap_size.load(AtomicOrdering::Relaxed)
    }

    /// Cells in the segment, every version and delete marker counted (cells of writes not yet
    /// visible too).
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether no cell was ever added (a flush skips such a segment).
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The highest sequence id of any cell added, 0 when empty; a flushed file records at least
    /// this so replay skips its edits.
    pub fn max_sequence_id(&self) -> u64 {
        self.max_sequence_id.load(AtomicOrdering::Relaxed)
    }

    /// `[min, max]` timestamps of the cells, `None` when empty.
    pub fn time_range(&self) -> Option<(i64, i64)> {
        let lo = self.min_ts.load(AtomicOrdering::Relaxed);
        let hi = self.max_ts.load(AtomicOrdering::Relaxed);
        (lo <= hi).then_some((lo, hi))
    }

    /// Cells in order (for flushes).
    pub fn iter(&self) -> impl Iterator<Item = MemCell> + '_ {
        self.cells.iter().map(|e| e.value().clone())
    }

    /// The last cell sorting before `key`.
    pub fn last_before(&self, key: &[u8]) -> Result<Option<MemCell>> {
        let probe = MemCell::probe(key)?;
        Ok(self
            .cells
            .upper_bound(Bound::Excluded(&probe))
            .map(|e| e.value().clone()))
    }
}

/// A cursor that walks a segment by its skip-list links (one step per cell), for flushes:
/// it borrows the segment, and every cell in a flush snapshot is committed.
pub struct SegmentCursor<'a> {
    segment: &'a Segment,
    current: Option<crossbeam_skiplist::set::Entry<'a, MemCell>>,
}

impl<'a> SegmentCursor<'a> {
    /// A cursor before the first cell; [`seek`](CellScanner::seek) positions it. It sees every
    /// cell, whatever its sequence id.
    pub fn new(segment: &'a Segment) -> SegmentCursor<'a> {
        SegmentCursor {
            segment,
            current: None,
        }
    }
}

impl CellScanner for SegmentCursor<'_> {
    fn peek(&self) -> Option<CellRef<'_>> {
        self.current.as_ref().map(|e| e.value().0.as_cell())
    }

    fn next(&mut self) -> Result<()> {
        self.current = self.current.take().and_then(|e| e.next());
        Ok(())
    }

    fn seek(&mut self, key: &[u8]) -> Result<()> {
        let probe = MemCell::probe(key)?;
        self.current = self.segment.cells.lower_bound(Bound::Included(&probe));
        Ok(())
    }

    fn last_row_before(&mut self, key: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        let c = match key {
            Some(k) => self.segment.last_before(k)?,
            None => self.segment.cells.back().map(|e| e.value().clone()),
        };
        Ok(c.map(|c| c.0.as_cell().row().to_vec()))
    }
}

/// A scanner over a segment that sees only cells with sequence id ≤ its read point.
///
/// It owns its segment (an `Arc`), so it cannot hold a skip-list entry between calls; instead
/// of searching the list again for every step it takes the next cells in chunks, each chunk
/// one search plus link steps. Chunks are safe to take early: a cell this reader may see was
/// in the list before its read point was published, so no later insert belongs in a chunk.
pub struct SegmentScanner {
    segment: Arc<Segment>,
    current: Option<MemCell>,
    /// Cells after `current`, in order, not yet checked against the read point.
    ahead: VecDeque<MemCell>,
    /// How many cells the next chunk takes: one at first, as a get reads a row or less and
    /// every cell taken costs a reference-count update on its own cache line; doubling while
    /// the reader keeps walking.
    chunk: usize,
    /// The last reseek found its target a few cells on.
    walking: bool,
    read_point: u64,
}

const FIRST_CHUNK: usize = 1;
const MAX_CHUNK: usize = 256;

impl SegmentScanner {
    /// A scanner of `segment` that hides cells with a sequence id above `read_point`; unpositioned
    /// until its first [`seek`](CellScanner::seek).
    pub fn new(segment: Arc<Segment>, read_point: u64) -> SegmentScanner {
        SegmentScanner {
            segment,
            current: None,
            ahead: VecDeque::new(),
            chunk: FIRST_CHUNK,
            walking: false,
            read_point,
        }
    }

    /// The cell after `c`: from the chunk, or a new chunk that starts after `c`. A chunk of
    /// one needs no queue and no step to a further node, so gets cost what a search costs.
    fn after(&mut self, c: &MemCell) -> Option<MemCell> {
        if let Some(n) = self.ahead.pop_front() {
            return Some(n);
        }
        let mut e = self.segment.cells.lower_bound(Bound::Excluded(c))?;
        let first = e.value().clone();
        for _ in 1..self.chunk {
            let Some(n) = e.next() else { break };
            self.ahead.push_back(n.value().clone());
            e = n;
        }
        self.chunk = (self.chunk * 2).min(MAX_CHUNK);
        Some(first)
    }

    /// Makes `from` (or the first visible cell after it) current.
    fn settle(&mut self, mut from: Option<MemCell>) {
        while let Some(c) = from {
            if c.0.as_cell().sequence_id <= self.read_point {
                self.current = Some(c);
                return;
            }
            from = self.after(&c);
        }
        self.current = None;
    }
}

impl CellScanner for SegmentScanner {
    fn peek(&self) -> Option<CellRef<'_>> {
        self.current.as_ref().map(|c| c.0.as_cell())
    }

    fn peek_owned(&self) -> Option<KeyValue> {
        self.current.as_ref().map(|c| KeyValue::clone(&c.0))
    }

    fn next(&mut self) -> Result<()> {
        if let Some(c) = self.current.take() {
            let next = self.after(&c);
            self.settle(next);
        }
        Ok(())
    }

    fn seek(&mut self, key: &[u8]) -> Result<()> {
        let probe = MemCell::probe(key)?;
        // Cells taken and jumped over: this reader jumps (a multi-get, a filter's hint), so
        // chunks start small again; a reader that used up its chunk keeps the chunk size.
        if !self.ahead.is_empty() {
            self.ahead.clear();
            self.chunk = FIRST_CHUNK;
        }
        // The cell after the one found comes by a link step: a get reads its row's cells and
        // then looks at the next one, which would otherwise cost a second search.
        let Some((found, after)) = self
            .segment
            .cells
            .lower_bound(Bound::Included(&probe))
            .map(|e| (e.value().clone(), e.next().map(|n| n.value().clone())))
        else {
            self.current = None;
            return Ok(());
        };
        self.ahead.extend(after);
        self.settle(Some(found));
        Ok(())
    }

    /// Steps forward while the target is among the next few cells (a scan's next column or
    /// next row usually is). A reader whose last reseek landed that way is taken to walk, and
    /// takes its next chunk when the one it has runs out; otherwise (a multi-get going from
    /// row to row) the target is searched for and chunks start small again.
    fn reseek(&mut self, key: &[u8]) -> Result<()> {
        const MAX_STEPS: usize = 8;
        let target = KeyRef::parse(key)?;
        let behind = |s: &SegmentScanner| {
            s.current
                .as_ref()
                .is_some_and(|c| compare_keys(&c.0.as_cell().key, &target) == Ordering::Less)
        };
        for _ in 0..MAX_STEPS {
            if !behind(self) {
                self.walking = true;
                return Ok(());
            }
            match self.ahead.pop_front() {
                Some(n) => self.settle(Some(n)),
                None if self.walking => self.next()?,
                None => break,
            }
        }
        if behind(self) {
            self.walking = false;
            self.seek(key)?;
            self.chunk = FIRST_CHUNK;
        } else {
            self.walking = true;
        }
        Ok(())
    }

    fn last_row_before(&mut self, key: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        let mut probe = match key {
            Some(k) => self.segment.last_before(k)?,
            None => self.segment.cells.back().map(|e| e.value().clone()),
        };
        // Invisible cells do not make a row exist for this reader.
        while let Some(c) = probe {
            if c.0.as_cell().sequence_id <= self.read_point {
                return Ok(Some(c.0.as_cell().row().to_vec()));
            }
            probe = self
                .segment
                .cells
                .upper_bound(Bound::Excluded(&c))
                .map(|e| e.value().clone());
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_cell::first_on_row;

    fn kv(row: &str, q: &str, ts: i64, seq: u64) -> Arc<KeyValue> {
        Arc::new(
            KeyValue::put(row.as_bytes(), b"f", q.as_bytes(), ts, b"v")
                .unwrap()
                .with_sequence_id(seq),
        )
    }

    #[test]
    fn an_equal_cell_replaces_the_first_and_counts_once() {
        let s = Segment::new();
        let first = kv("a", "q", 5, 3);
        let one = cell_heap_size(&first) as i64;
        assert_eq!(s.add(first), one);
        let longer = Arc::new(
            KeyValue::put(b"a", b"f", b"q", 5, b"a longer value")
                .unwrap()
                .with_sequence_id(3),
        );
        let grown = cell_heap_size(&longer) as i64 - one;
        assert_eq!(s.add(longer), grown);
        assert_eq!(s.len(), 1);
        assert_eq!(s.heap_size() as i64, one + grown);
        assert_eq!(
            s.iter().next().unwrap().0.as_cell().value,
            b"a longer value"
        );
        // Back to the short value: the segment shrinks.
        assert_eq!(s.add(kv("a", "q", 5, 3)), -grown);
        assert_eq!(s.heap_size() as i64, one);
    }

    #[test]
    fn scanner_orders_cells_and_hides_unread_writes() {
        let s = Arc::new(Segment::new());
        s.add(kv("b", "q", 5, 1));
        s.add(kv("a", "q", 5, 2));
        s.add(kv("a", "q", 5, 9)); // same key, newer write sorts first
        s.add(kv("a", "q", 7, 3));
        let mut sc = SegmentScanner::new(s.clone(), 3);
        sc.seek(&first_on_row(b"a").unwrap()).unwrap();
        let mut seen = vec![];
        while let Some(c) = sc.peek() {
            seen.push((c.row().to_vec(), c.timestamp(), c.sequence_id));
            sc.next().unwrap();
        }
        assert_eq!(
            seen,
            vec![
                (b"a".to_vec(), 7, 3),
                (b"a".to_vec(), 5, 2),
                (b"b".to_vec(), 5, 1)
            ]
        );
        assert_eq!(
            sc.last_row_before(Some(&first_on_row(b"b").unwrap()))
                .unwrap(),
            Some(b"a".to_vec())
        );
        assert_eq!(s.time_range(), Some((5, 7)));
        assert_eq!(s.max_sequence_id(), 9);
    }

    proptest::proptest! {
        /// Row heads that differ order their rows as the rows' bytes do (zeros inside rows,
        /// rows that are prefixes of others, rows longer than the head).
        #[test]
        fn different_row_heads_order_rows_as_their_bytes(
            common in proptest::collection::vec(0u8..3, 0..30),
            a in proptest::collection::vec(0u8..3, 0..6),
            b in proptest::collection::vec(0u8..3, 0..6),
        ) {
            let a = [common.clone(), a].concat();
            let b = [common, b].concat();
            let (ha, hb) = (RowHead::of(&a), RowHead::of(&b));
            if ha != hb {
                proptest::prop_assert_eq!(ha.cmp(&hb), a.cmp(&b));
            }
            if a == b {
                proptest::prop_assert_eq!(ha, hb);
            }
        }

        /// Chunked stepping, reseeks and seeks land where a search of the visible cells
        /// would, over segments longer than a chunk and with cells the reader must not see.
        #[test]
        fn scanner_walks_match_a_sorted_reference(
            cells in proptest::collection::vec((0u16..400, 0u8..3, 1i64..4, 1u64..40), 1..700),
            read_point in 1u64..40,
            moves in proptest::collection::vec((0u8..3, 0u16..420, 0u8..3), 1..200),
            long_rows in proptest::bool::ANY,
        ) {
            // Long rows share more than the inline row head: their order is decided past it.
            let row = |r: u16| if long_rows { format!("{r:030}") } else { format!("r{r:04}") };
            let s = Arc::new(Segment::new());
            for (r, q, ts, seq) in &cells {
                s.add(kv(&row(*r), &format!("q{q}"), *ts, *seq));
            }
            let visible: Vec<MemCell> = s
                .iter()
                .filter(|c| c.0.as_cell().sequence_id <= read_point)
                .collect();
            let key_of = |c: &MemCell| c.0.key().as_bytes().to_vec();
            let at_or_after = |k: &[u8]| {
                let k = KeyRef::parse(k).unwrap();
                visible
                    .iter()
                    .position(|c| compare_keys(&c.0.as_cell().key, &k) != Ordering::Less)
                    .unwrap_or(visible.len())
            };
            let mut sc = SegmentScanner::new(s.clone(), read_point);
            sc.seek(&first_on_row(b"").unwrap()).unwrap();
            let mut at = 0usize;
            for (op, r, q) in moves {
                let target = KeyValue::put(
                    row(r).as_bytes(), b"f", format!("q{q}").as_bytes(), 2, b"",
                )
                .unwrap();
                let target = target.key().as_bytes().to_vec();
                match op {
                    0 => {
                        if at < visible.len() {
                            sc.next().unwrap();
                            at += 1;
                        }
                    }
                    1 => {
                        sc.seek(&target).unwrap();
                        at = at_or_after(&target);
                    }
                    _ => {
                        // A reseek never moves backwards.
                        sc.reseek(&target).unwrap();
                        at = at.max(at_or_after(&target));
                    }
                }
                let got = sc.peek().map(|c| c.key.as_bytes().to_vec());
                proptest::prop_assert_eq!(got, visible.get(at).map(key_of));
            }
        }
    }
}
