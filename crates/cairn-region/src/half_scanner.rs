//! A store file seen through a reference: only the cells of one half (HBase's
//! `HalfStoreFileReader`). A BOTTOM half ends before the split row; a TOP half starts at it.

use std::cmp::Ordering;

use cairn_cell::{compare_bytes, CellRef, KeyRef, KeyValue};

use crate::cell_scanner::CellScanner;
use crate::error::Result;
use crate::reference::Half;

/// Wraps the referred file's scanner so that only the half's cells show.
pub struct HalfScanner {
    inner: Box<dyn CellScanner>,
    half: Half,
    /// The first possible key of the split row.
    split_key: Vec<u8>,
}

impl HalfScanner {
    /// `inner` limited to `half`.
    pub fn new(inner: Box<dyn CellScanner>, half: Half) -> Result<HalfScanner> {
        let split_key = cairn_cell::first_on_row(&half.split_row)?;
        Ok(HalfScanner {
            inner,
            half,
            split_key,
        })
    }

    /// Whether the inner scanner's cell is outside the half: past the end of a bottom half
    /// (a top half never sits before its start, since every seek is raised to it).
    fn past_end(&self) -> bool {
        !self.half.top
            && self
                .inner
                .peek()
                .is_some_and(|c| compare_bytes(c.row(), &self.half.split_row) != Ordering::Less)
    }

    /// `key`, raised to the split key for a top half.
    fn clamp<'a>(&'a self, key: &'a [u8]) -> Result<&'a [u8]> {
        if self.half.top {
            let k = KeyRef::parse(key)?;
            if compare_bytes(k.row(), &self.half.split_row) == Ordering::Less {
                return Ok(&self.split_key);
            }
        }
        Ok(key)
    }
}

impl CellScanner for HalfScanner {
    fn peek(&self) -> Option<CellRef<'_>> {
        if self.past_end() {
            None
        } else {
            self.inner.peek()
        }
    }

    fn has_cell(&self) -> bool {
        self.inner.has_cell() && !self.past_end()
    }

    fn peek_owned(&self) -> Option<KeyValue> {
        if self.past_end() {
            None
        } else {
            self.inner.peek_owned()
        }
    }

    fn next(&mut self) -> Result<()> {
        if !self.past_end() {
            self.inner.next()?;
        }
        Ok(())
    }

    fn seek(&mut self, key: &[u8]) -> Result<()> {
        let key = self.clamp(key)?.to_vec();
        self.inner.seek(&key)
    }

    fn reseek(&mut self, key: &[u8]) -> Result<()> {
        if self.past_end() {
            return Ok(());
        }
        let key = self.clamp(key)?.to_vec();
        self.inner.reseek(&key)
    }

    fn reseek_far(&mut self, key: &[u8]) -> Result<()> {
        if self.past_end() {
            return Ok(());
        }
        let key = self.clamp(key)?.to_vec();
        self.inner.reseek_far(&key)
    }

    fn last_row_before(&mut self, key: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        if self.half.top {
            let row = self.inner.last_row_before(key)?;
            return Ok(row.filter(|r| self.half.contains_row(r)));
        }
        // A bottom half's last cell is the last one before the split row.
        let key = match key {
            Some(k)
                if compare_bytes(KeyRef::parse(k)?.row(), &self.half.split_row)
                    == Ordering::Less =>
            {
                k.to_vec()
            }
            _ => self.split_key.clone(),
        };
        self.inner.last_row_before(Some(&key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell_scanner::VecScanner;
    use proptest::prelude::*;

    fn kv(row: &[u8], q: &[u8]) -> KeyValue {
        KeyValue::put(row, b"f", q, 1, b"v").unwrap()
    }

    fn cells(rows: &[Vec<u8>]) -> Vec<KeyValue> {
        let mut rows = rows.to_vec();
        rows.sort();
        rows.dedup();
        rows.iter()
            .flat_map(|r| [kv(r, b"a"), kv(r, b"b")])
            .collect()
    }

    fn walk(s: &mut dyn CellScanner, from: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        s.seek(&cairn_cell::first_on_row(from).unwrap()).unwrap();
        let mut out = Vec::new();
        while let Some(c) = s.peek() {
            out.push((c.row().to_vec(), c.qualifier().to_vec()));
            s.next().unwrap();
        }
        out
    }

    proptest! {
        /// Whatever the rows, the split row and where a scan starts, a half shows exactly
        /// the cells of the whole file that are in the half and at or after the start.
        #[test]
        fn a_half_shows_exactly_its_rows(
            rows in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..4), 0..20),
            split in proptest::collection::vec(0u8..4, 1..4),
            from in proptest::collection::vec(0u8..4, 0..4),
            top: bool,
        ) {
            let all = cells(&rows);
            let half = Half { split_row: split.clone(), top };
            let mut s = HalfScanner::new(Box::new(VecScanner::new(all.clone())), half.clone()).unwrap();
            let want: Vec<_> = all
                .iter()
                .map(|c| c.as_cell())
                .filter(|c| half.contains_row(c.row()) && c.row() >= from.as_slice())
                .map(|c| (c.row().to_vec(), c.qualifier().to_vec()))
                .collect();
            prop_assert_eq!(walk(&mut s, &from), want.clone());
            // Reseeking from the start key of the scan gives the same.
            s.seek(&cairn_cell::first_on_row(b"").unwrap()).unwrap();
            s.reseek(&cairn_cell::first_on_row(&from).unwrap()).unwrap();
            let mut again = Vec::new();
            while let Some(c) = s.peek() {
                again.push((c.row().to_vec(), c.qualifier().to_vec()));
                s.next().unwrap();
            }
            prop_assert_eq!(again, want);
            // The last row before a key, as a reversed scan asks it.
            let key = cairn_cell::first_on_row(&from).unwrap();
            let before = all
                .iter()
                .map(|c| c.as_cell().row().to_vec())
                .rfind(|r| half.contains_row(r) && r.as_slice() < from.as_slice());
            prop_assert_eq!(s.last_row_before(Some(&key)).unwrap(), before);
            let last = all
                .iter()
                .map(|c| c.as_cell().row().to_vec())
                .rfind(|r| half.contains_row(r));
            prop_assert_eq!(s.last_row_before(None).unwrap(), last);
        }
    }
}
