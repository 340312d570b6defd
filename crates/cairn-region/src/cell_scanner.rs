//! The cursor every source of cells implements (HBase's `KeyValueScanner`): memstore
//! segments, store files, and plain sorted lists for tests and benchmarks.

use std::cmp::Ordering;

use cairn_cell::{compare_keys, compare_meta_keys, CellRef, KeyRef, KeyValue};

use crate::error::Result;

/// A forward cursor over cells in HBase's order.
pub trait CellScanner: Send {
    /// The current cell, `None` when exhausted.
    fn peek(&self) -> Option<CellRef<'_>>;
    /// Moves to the next cell.
    fn next(&mut self) -> Result<()>;
    /// Moves to the first cell whose key is ≥ `key` (forward or backward).
    fn seek(&mut self, key: &[u8]) -> Result<()>;
    /// Like `seek` for a key at or after the current cell: scanners that can step forward
    /// cheaply do so instead of searching from the top (HBase's `reseek`).
    fn reseek(&mut self, key: &[u8]) -> Result<()> {
        self.seek(key)
    }
    /// Like `reseek` for a key that is likely far ahead (the next row of a multi-get batch):
    /// scanners that step a few cells before searching search at once.
    fn reseek_far(&mut self, key: &[u8]) -> Result<()> {
        self.reseek(key)
    }
    /// The row of the last cell sorting before `key` (`None`: the last cell of all), for
    /// reversed scans. Leaves the position undefined: callers seek afterwards.
    fn last_row_before(&mut self, key: Option<&[u8]>) -> Result<Option<Vec<u8>>>;
    /// The current cell, owned: scanners over shared memory (cached blocks, the memstore's
    /// cells) share it rather than copy it.
    fn peek_owned(&self) -> Option<KeyValue> {
        self.peek().map(|c| c.to_owned())
    }
    /// Whether there is a current cell: `peek().is_some()`, for scanners that know it
    /// without building the cell.
    fn has_cell(&self) -> bool {
        self.peek().is_some()
    }
}

/// A scanner over an owned, sorted list of cells (tests, benchmarks, small merges, the
/// virtual `hbase:meta`).
pub struct VecScanner {
    cells: Vec<KeyValue>,
    pos: usize,
    /// The key order the cells are in, which seeks search by.
    compare: fn(&KeyRef<'_>, &KeyRef<'_>) -> Ordering,
}

impl VecScanner {
    /// Cells in HBase's order (the caller sorts them).
    pub fn new(cells: Vec<KeyValue>) -> VecScanner {
        VecScanner {
            cells,
            pos: 0,
            compare: compare_keys,
        }
    }

    /// Cells in `hbase:meta`'s order ([`compare_meta_keys`]), which they are sorted into.
    pub fn in_meta_order(mut cells: Vec<KeyValue>) -> VecScanner {
        cells.sort_by(|a, b| {
            compare_meta_keys(&a.as_cell().key, &b.as_cell().key)
                .then_with(|| b.as_cell().sequence_id.cmp(&a.as_cell().sequence_id))
        });
        VecScanner {
            cells,
            pos: 0,
            compare: compare_meta_keys,
        }
    }

    /// Where the first cell whose key is ≥ `key` is (the length when none is).
    fn first_at_or_after(&self, key: &[u8]) -> Result<usize> {
        let k = KeyRef::parse(key)?;
        Ok(self
            .cells
            .partition_point(|c| (self.compare)(&c.as_cell().key, &k) == Ordering::Less))
    }
}

impl CellScanner for VecScanner {
    fn peek(&self) -> Option<CellRef<'_>> {
        self.cells.get(self.pos).map(|c| c.as_cell())
    }

    fn next(&mut self) -> Result<()> {
        if self.pos < self.cells.len() {
            self.pos += 1;
        }
        Ok(())
    }

    fn seek(&mut self, key: &[u8]) -> Result<()> {
        self.pos = self.first_at_or_after(key)?;
        Ok(())
    }

    fn last_row_before(&mut self, key: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        let end = match key {
            None => self.cells.len(),
            Some(key) => self.first_at_or_after(key)?,
        };
        Ok(end
            .checked_sub(1)
            .map(|i| self.cells[i].as_cell().row().to_vec()))
    }

    fn has_cell(&self) -> bool {
        self.pos < self.cells.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(row: &str) -> KeyValue {
        KeyValue::put(row.as_bytes(), b"f", b"q", 1, b"v").unwrap()
    }

    #[test]
    fn a_vec_scanner_seeks_steps_and_finds_the_last_row_before_a_key() {
        let mut s = VecScanner::new(vec![kv("a"), kv("c"), kv("e")]);
        assert_eq!(s.peek().unwrap().row(), b"a");
        s.seek(&cairn_cell::first_on_row(b"b").unwrap()).unwrap();
        assert_eq!(s.peek().unwrap().row(), b"c");
        s.next().unwrap();
        assert_eq!(s.peek().unwrap().row(), b"e");
        s.next().unwrap();
        assert!(!s.has_cell() && s.peek().is_none());
        s.next().unwrap();
        assert!(s.peek().is_none());
        let before = |s: &mut VecScanner, row: &[u8]| {
            let k = cairn_cell::first_on_row(row).unwrap();
            s.last_row_before(Some(&k)).unwrap()
        };
        assert_eq!(before(&mut s, b"d"), Some(b"c".to_vec()));
        assert_eq!(before(&mut s, b"a"), None);
        assert_eq!(s.last_row_before(None).unwrap(), Some(b"e".to_vec()));
    }
}
