//! The merge of sorted cell sources (HBase's `KeyValueHeap`): a binary min-heap of scanners
//! ordered by their current cells, with the scanner holding the smallest cell kept out of it.
//!
//! Most steps of a scan take the next cell from the same scanner as the last one (a row's
//! cells usually sit in one file), so a step compares the current scanner's new cell with
//! the heap's top once and stays put: one comparison whatever the number of scanners, where
//! a linear pick compares all of them. Only when another scanner takes over does the heap
//! sift, in O(log n).

use std::cmp::Ordering;

use cairn_cell::{compare_cells, CellRef, KeyValue};

use crate::error::Result;

pub use crate::cell_scanner::{CellScanner, VecScanner};
pub use crate::store_file_scanner::StoreFileScanner;

/// Merges scanners: always positioned at the smallest current cell among them. Ties go to
/// the scanner listed first, and within equal keys the newer sequence id sorts first.
pub struct KeyValueHeap<'a> {
    scanners: Vec<Box<dyn CellScanner + 'a>>,
    /// The scanner holding the smallest cell, kept out of `heap`.
    current: Option<usize>,
    /// The other scanners that have a cell, as a binary min-heap of indices into
    /// `scanners` (children of `i` at `2i + 1` and `2i + 2`).
    heap: Vec<usize>,
}

impl<'a> KeyValueHeap<'a> {
    /// Merges `scanners` (already positioned, or to be positioned by a seek).
    pub fn new(scanners: Vec<Box<dyn CellScanner + 'a>>) -> KeyValueHeap<'a> {
        let mut h = KeyValueHeap {
            // One scanner (a compacted store, nothing in memory) needs no heap at all.
            heap: Vec::with_capacity(if scanners.len() > 1 {
                scanners.len()
            } else {
                0
            }),
            scanners,
            current: None,
        };
        h.rebuild();
        h
    }

    /// Whether scanner `a`'s cell sorts before scanner `b`'s (both have one).
    #[inline]
    fn less(&self, a: usize, b: usize) -> bool {
        match (self.scanners[a].peek(), self.scanners[b].peek()) {
            (Some(x), Some(y)) => match compare_cells(&x, &y) {
                Ordering::Less => true,
                Ordering::Greater => false,
                Ordering::Equal => a < b,
            },
            // Only scanners with cells are in the heap; keep the order total regardless.
            (Some(_), None) => true,
            _ => false,
        }
    }

    /// Puts every scanner that has a cell back in order: after seeks, which move them all.
    fn rebuild(&mut self) {
        self.heap.clear();
        self.current = None;
        // A scan of one store file (a compacted region, no memstore cells): nothing to merge.
        if let [only] = self.scanners.as_slice() {
            self.current = only.has_cell().then_some(0);
            return;
        }
        self.heap
            .extend((0..self.scanners.len()).filter(|&i| self.scanners[i].has_cell()));
        for i in (0..self.heap.len() / 2).rev() {
            self.sift_down(i);
        }
        self.current = self.pop();
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut smallest = i;
            if l < n && self.less(self.heap[l], self.heap[smallest]) {
                smallest = l;
            }
            if r < n && self.less(self.heap[r], self.heap[smallest]) {
                smallest = r;
            }
            if smallest == i {
                return;
            }
            self.heap.swap(i, smallest);
            i = smallest;
        }
    }

    fn pop(&mut self) -> Option<usize> {
        if self.heap.is_empty() {
            return None;
        }
        let top = self.heap.swap_remove(0);
        if !self.heap.is_empty() {
            self.sift_down(0);
        }
        Some(top)
    }

    /// After the current scanner moved: keeps it current while its cell still sorts first,
    /// else swaps it with the heap's top.
    #[inline]
    fn settle(&mut self, cur: usize) {
        if !self.scanners[cur].has_cell() {
            self.current = self.pop();
            return;
        }
        match self.heap.first() {
            Some(&top) if self.less(top, cur) => {
                self.heap[0] = cur;
                self.sift_down(0);
                self.current = Some(top);
            }
            _ => self.current = Some(cur),
        }
    }

    /// The smallest current cell, `None` when every scanner is exhausted.
    #[inline]
    pub fn peek(&self) -> Option<CellRef<'_>> {
        self.current.and_then(|i| self.scanners[i].peek())
    }

    /// [`peek`](Self::peek), owned (shared with the block or memstore where possible).
    pub fn peek_owned(&self) -> Option<KeyValue> {
        self.current.and_then(|i| self.scanners[i].peek_owned())
    }

    /// Moves past the current cell.
    #[inline]
    // Not an `Iterator`: it fails with I/O errors and its cells borrow from the heap.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<()> {
        if let Some(i) = self.current {
            self.scanners[i].next()?;
            if self.heap.is_empty() {
                // The only scanner left (one store file, a drained merge): nothing to compare.
                if !self.scanners[i].has_cell() {
                    self.current = None;
                }
            } else {
                self.settle(i);
            }
        }
        Ok(())
    }

    /// Seeks every scanner to the first cell ≥ `key`.
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        for s in &mut self.scanners {
            s.seek(key)?;
        }
        self.rebuild();
        Ok(())
    }

    /// Forward-only seek: scanners already at or past `key` stay where they are.
    pub fn reseek(&mut self, key: &[u8]) -> Result<()> {
        self.reseek_with(key, |s, key| s.reseek(key))
    }

    /// [`reseek`](Self::reseek) to a key that is likely far ahead (see
    /// [`CellScanner::reseek_far`]).
    pub fn reseek_far(&mut self, key: &[u8]) -> Result<()> {
        self.reseek_with(key, |s, key| s.reseek_far(key))
    }

    fn reseek_with(
        &mut self,
        key: &[u8],
        reseek: impl Fn(&mut dyn CellScanner, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let k = cairn_cell::KeyRef::parse(key)?;
        let behind = |s: &dyn CellScanner| {
            s.peek()
                .is_some_and(|c| cairn_cell::compare_keys(&c.key, &k) == Ordering::Less)
        };
        // Scanners in the heap sort after the current one: when it is not behind the key,
        // none of them is, and nothing moves.
        match self.current {
            None => return Ok(()),
            Some(i) if !behind(&*self.scanners[i]) => return Ok(()),
            Some(_) => {}
        }
        for s in &mut self.scanners {
            if behind(&**s) {
                reseek(&mut **s, key)?;
            }
        }
        self.rebuild();
        Ok(())
    }

    /// The greatest row that has a cell sorting before `key`, over all scanners.
    pub fn last_row_before(&mut self, key: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        let mut best: Option<Vec<u8>> = None;
        for s in &mut self.scanners {
            if let Some(r) = s.last_row_before(key)? {
                if best
                    .as_ref()
                    .is_none_or(|b| cairn_cell::compare_bytes(&r, b) == Ordering::Greater)
                {
                    best = Some(r);
                }
            }
        }
        Ok(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn kv(row: u8, q: u8, seq: u64) -> KeyValue {
        KeyValue::put(&[b'r', row], b"f", &[b'q', q], 1, b"v")
            .unwrap()
            .with_sequence_id(seq)
    }

    fn drain(h: &mut KeyValueHeap<'_>) -> Vec<(Vec<u8>, Vec<u8>, u64)> {
        let mut out = Vec::new();
        while let Some(c) = h.peek() {
            out.push((c.row().to_vec(), c.qualifier().to_vec(), c.sequence_id));
            h.next().unwrap();
        }
        out
    }

    fn sources() -> impl Strategy<Value = Vec<Vec<(u8, u8, u64)>>> {
        proptest::collection::vec(
            proptest::collection::vec((0u8..20, 0u8..4, 0u64..5), 0..40),
            0..12,
        )
    }

    fn scanners(src: &[Vec<(u8, u8, u64)>]) -> Vec<Box<dyn CellScanner>> {
        src.iter()
            .map(|cells| {
                let mut v: Vec<KeyValue> = cells.iter().map(|&(r, q, s)| kv(r, q, s)).collect();
                v.sort_by(|a, b| compare_cells(&a.as_cell(), &b.as_cell()));
                Box::new(VecScanner::new(v)) as Box<dyn CellScanner>
            })
            .collect()
    }

    /// What the merge must return: every cell once, in HBase's order, ties to the scanner
    /// listed first.
    fn expected(src: &[Vec<(u8, u8, u64)>]) -> Vec<(Vec<u8>, Vec<u8>, u64)> {
        let mut all: Vec<(usize, KeyValue)> = src
            .iter()
            .enumerate()
            .flat_map(|(i, cells)| cells.iter().map(move |&(r, q, s)| (i, kv(r, q, s))))
            .collect();
        all.sort_by(|(i, a), (j, b)| compare_cells(&a.as_cell(), &b.as_cell()).then(i.cmp(j)));
        all.iter()
            .map(|(_, c)| {
                let c = c.as_cell();
                (c.row().to_vec(), c.qualifier().to_vec(), c.sequence_id)
            })
            .collect()
    }

    proptest! {
        #[test]
        fn the_heap_merges_in_order_after_seeks_and_reseeks(
            src in sources(),
            seek_row in 0u8..22,
            reseek_row in 0u8..22,
        ) {
            let mut h = KeyValueHeap::new(scanners(&src));
            let first = cairn_cell::first_on_row(b"").unwrap();
            h.seek(&first).unwrap();
            prop_assert_eq!(drain(&mut h), expected(&src));

            let key = cairn_cell::first_on_row(&[b'r', seek_row]).unwrap();
            h.seek(&key).unwrap();
            let want: Vec<_> = expected(&src)
                .into_iter()
                .filter(|(r, _, _)| r.as_slice() >= [b'r', seek_row].as_slice())
                .collect();
            // A reseek to a key at or behind the position moves nothing.
            h.reseek(&first).unwrap();
            let after_reseek = {
                let key = cairn_cell::first_on_row(&[b'r', reseek_row]).unwrap();
                let mut g = KeyValueHeap::new(scanners(&src));
                g.seek(&first).unwrap();
                g.reseek(&key).unwrap();
                drain(&mut g)
            };
            prop_assert_eq!(drain(&mut h), want);
            let lo = [b'r', reseek_row];
            let want: Vec<_> = expected(&src)
                .into_iter()
                .filter(|(r, _, _)| r.as_slice() >= lo.as_slice())
                .collect();
            prop_assert_eq!(after_reseek, want);
        }
    }

    #[test]
    fn equal_keys_come_newest_first_then_in_scanner_order() {
        let tagged = |row: u8, seq: u64, v: &str| {
            KeyValue::put(&[b'r', row], b"f", b"q", 1, v.as_bytes())
                .unwrap()
                .with_sequence_id(seq)
        };
        let src: Vec<Box<dyn CellScanner>> = vec![
            Box::new(VecScanner::new(vec![
                tagged(1, 5, "a5"),
                tagged(2, 1, "a1"),
            ])),
            Box::new(VecScanner::new(vec![
                tagged(1, 7, "b7"),
                tagged(2, 1, "b1"),
            ])),
            Box::new(VecScanner::new(vec![tagged(2, 1, "c1")])),
        ];
        let mut h = KeyValueHeap::new(src);
        h.seek(&cairn_cell::first_on_row(b"").unwrap()).unwrap();
        let mut values = Vec::new();
        while let Some(c) = h.peek() {
            values.push(String::from_utf8(c.value.to_vec()).unwrap());
            h.next().unwrap();
        }
        assert_eq!(values, ["b7", "a5", "a1", "b1", "c1"]);
    }
}
