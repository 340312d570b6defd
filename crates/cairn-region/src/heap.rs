//! Sources of sorted cells and their merge (HBase's `KeyValueScanner` and `KeyValueHeap`).

use std::cmp::Ordering;
use std::sync::Arc;

use cairn_hfile::cell::compare_cells;
use cairn_hfile::{CellRef, HFileReader, SharedHFileScanner};

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
}

/// A store file's cells, hiding those newer than the reader's read point.
pub struct StoreFileScanner {
    inner: SharedHFileScanner,
    exhausted: bool,
    read_point: u64,
}

impl StoreFileScanner {
    pub fn new(reader: &Arc<HFileReader>, read_point: u64) -> StoreFileScanner {
        StoreFileScanner {
            inner: reader.shared_scanner(),
            exhausted: true,
            read_point,
        }
    }

    fn skip_invisible(&mut self) -> Result<()> {
        while !self.exhausted {
            match self.inner.cell() {
                Some(c) if c.sequence_id > self.read_point => {
                    self.exhausted = !self.inner.next()?;
                }
                Some(_) => break,
                None => self.exhausted = true,
            }
        }
        Ok(())
    }
}

impl CellScanner for StoreFileScanner {
    fn peek(&self) -> Option<CellRef<'_>> {
        if self.exhausted {
            None
        } else {
            self.inner.cell()
        }
    }

    fn next(&mut self) -> Result<()> {
        if !self.exhausted {
            self.exhausted = !self.inner.next()?;
            self.skip_invisible()?;
        }
        Ok(())
    }

    fn seek(&mut self, key: &[u8]) -> Result<()> {
        self.exhausted = !self.inner.seek(key)?;
        self.skip_invisible()
    }

    /// Steps forward while the target is near (most reseeks in a scan land a cell or two
    /// ahead); otherwise lets the file scanner search, within the block it holds when the
    /// index says the target is there (multi-gets walking a batch in key order).
    fn reseek(&mut self, key: &[u8]) -> Result<()> {
        const MAX_STEPS: usize = 2;
        let target = cairn_hfile::KeyRef::parse(key)?;
        for _ in 0..MAX_STEPS {
            match self.peek() {
                None => return Ok(()),
                Some(c) if cairn_hfile::cell::compare_keys(&c.key, &target) != Ordering::Less => {
                    return Ok(())
                }
                Some(_) => self.next()?,
            }
        }
        self.search_if_behind(key, &target)
    }

    fn reseek_far(&mut self, key: &[u8]) -> Result<()> {
        self.search_if_behind(key, &cairn_hfile::KeyRef::parse(key)?)
    }

    fn last_row_before(&mut self, key: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        let mut probe = match key {
            Some(k) => k.to_vec(),
            None => match self.inner_last_row_end()? {
                Some(k) => k,
                None => return Ok(None),
            },
        };
        loop {
            if !self.inner.seek_before(&probe)? {
                self.exhausted = true;
                return Ok(None);
            }
            let c = self.inner.cell().expect("positioned");
            if c.sequence_id <= self.read_point {
                self.exhausted = false;
                return Ok(Some(c.row().to_vec()));
            }
            probe = c.key.as_bytes().to_vec();
        }
    }
}

impl StoreFileScanner {
    /// Lets the file scanner search for `key` (parsed: `target`) when the current cell sorts
    /// before it.
    fn search_if_behind(&mut self, key: &[u8], target: &cairn_hfile::KeyRef<'_>) -> Result<()> {
        if self
            .peek()
            .is_some_and(|c| cairn_hfile::cell::compare_keys(&c.key, target) == Ordering::Less)
        {
            self.exhausted = !self.inner.reseek(key)?;
            self.skip_invisible()?;
        }
        Ok(())
    }

    /// A key after every cell of the file: past the file's last row.
    fn inner_last_row_end(&self) -> Result<Option<Vec<u8>>> {
        match self.inner.reader().last_key() {
            None => Ok(None),
            Some(k) => {
                let k = cairn_hfile::KeyRef::parse(k)?;
                Ok(Some(cairn_hfile::cell::last_on_row(k.row())?))
            }
        }
    }
}

/// Merges scanners: always positioned at the smallest current cell among them. Ties go to
/// the scanner listed first, and within equal keys the newer sequence id sorts first.
pub struct KeyValueHeap<'a> {
    scanners: Vec<Box<dyn CellScanner + 'a>>,
    current: Option<usize>,
}

impl<'a> KeyValueHeap<'a> {
    pub fn new(scanners: Vec<Box<dyn CellScanner + 'a>>) -> KeyValueHeap<'a> {
        let mut h = KeyValueHeap {
            scanners,
            current: None,
        };
        h.pick();
        h
    }

    fn pick(&mut self) {
        let mut best: Option<(usize, CellRef<'_>)> = None;
        for (i, s) in self.scanners.iter().enumerate() {
            if let Some(c) = s.peek() {
                if best
                    .as_ref()
                    .is_none_or(|(_, b)| compare_cells(&c, b) == Ordering::Less)
                {
                    best = Some((i, c));
                }
            }
        }
        self.current = best.map(|(i, _)| i);
    }

    pub fn peek(&self) -> Option<CellRef<'_>> {
        self.current.and_then(|i| self.scanners[i].peek())
    }

    // Not an `Iterator`: it fails with I/O errors and its cells borrow from the heap.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<()> {
        if let Some(i) = self.current {
            self.scanners[i].next()?;
            self.pick();
        }
        Ok(())
    }

    /// Seeks every scanner to the first cell ≥ `key`.
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        for s in &mut self.scanners {
            s.seek(key)?;
        }
        self.pick();
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
        let k = cairn_hfile::KeyRef::parse(key)?;
        for s in &mut self.scanners {
            let behind = s
                .peek()
                .is_some_and(|c| cairn_hfile::cell::compare_keys(&c.key, &k) == Ordering::Less);
            if behind {
                reseek(&mut **s, key)?;
            }
        }
        self.pick();
        Ok(())
    }

    /// The greatest row that has a cell sorting before `key`, over all scanners.
    pub fn last_row_before(&mut self, key: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        let mut best: Option<Vec<u8>> = None;
        for s in &mut self.scanners {
            if let Some(r) = s.last_row_before(key)? {
                if best
                    .as_ref()
                    .is_none_or(|b| cairn_hfile::cell::compare_bytes(&r, b) == Ordering::Greater)
                {
                    best = Some(r);
                }
            }
        }
        Ok(best)
    }
}
