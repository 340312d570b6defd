//! A store file as a cell source: its HFile scanner, with the cells newer than the read's
//! MVCC read point hidden, read with the read's block options.

use std::cmp::Ordering;
use std::sync::Arc;

use cairn_cell::{CellRef, KeyValue};
use cairn_hfile::{HFileReader, SharedHFileScanner};

use crate::cell_scanner::CellScanner;
use crate::error::Result;

/// A store file's cells, hiding those newer than the reader's read point.
pub struct StoreFileScanner {
    inner: SharedHFileScanner,
    exhausted: bool,
    read_point: u64,
    /// Whether the file may hold a cell newer than the read point. Most files cannot (they
    /// were flushed before the scan began), and then no cell needs the check: HBase's
    /// StoreFileScanner skips it the same way when the reader's max memstore ts is not past
    /// the read point.
    may_hide: bool,
    /// The leaf index block of the last far reseek: only multi-gets reseek far, and their
    /// scanners last one batch, so no long-lived scanner keeps an index block alive.
    leaf: Option<cairn_hfile::Block>,
    /// The scanner serves a one-row read whose row the file's Bloom filter has not been asked
    /// about: its first seek asks, unless the block it needs is cached anyway.
    row_bloom_pending: bool,
    /// A bulk-loaded file's sequence id, which every one of its cells reads with (HBase's
    /// bulk-loaded reader); `None` for other files.
    cell_sequence_id: Option<u64>,
}

impl StoreFileScanner {
    /// A scanner of `reader`'s cells visible at `read_point`, reading blocks with `options`.
    pub fn new(
        reader: &Arc<HFileReader>,
        read_point: u64,
        options: cairn_hfile::BlockReadOptions,
    ) -> StoreFileScanner {
        let may_hide = if reader.cell_layout().mvcc {
            reader
                .file_info()
                .get_i64(cairn_hfile::file_info::keys::MAX_MEMSTORE_TS_KEY)
                .is_none_or(|newest| newest < 0 || newest as u64 > read_point)
        } else {
            // Cells without a sequence id read as 0, which every read point sees.
            false
        };
        StoreFileScanner {
            inner: reader.shared_scanner_with(options),
            exhausted: true,
            read_point,
            may_hide,
            leaf: None,
            row_bloom_pending: false,
            cell_sequence_id: None,
        }
    }

    /// For a bulk-loaded file (`Some(n)`): every cell reads with sequence id `n`, whatever
    /// the file recorded, and is visible from read point `n` on.
    pub fn with_cell_sequence_id(mut self, n: Option<u64>) -> StoreFileScanner {
        if let Some(n) = n {
            self.cell_sequence_id = Some(n);
            self.may_hide = n > self.read_point;
        }
        self
    }

    /// For a read of one row that has not asked the file's row Bloom filter yet: the first
    /// seek (to the row) asks it only when the data block it needs is not cached (see
    /// [`cairn_hfile::HFileScanner::seek_row`]), and a row it proves absent leaves the scanner
    /// empty.
    pub fn for_one_row(mut self) -> StoreFileScanner {
        self.row_bloom_pending = true;
        self
    }

    fn skip_invisible(&mut self) -> Result<()> {
        if !self.may_hide {
            return Ok(());
        }
        while !self.exhausted {
            match self.peek() {
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
        } else if let Some(n) = self.cell_sequence_id {
            self.inner.cell().map(|mut c| {
                c.sequence_id = n;
                c
            })
        } else {
            self.inner.cell()
        }
    }

    fn has_cell(&self) -> bool {
        !self.exhausted
    }

    fn peek_owned(&self) -> Option<KeyValue> {
        if self.exhausted {
            None
        } else if let Some(n) = self.cell_sequence_id {
            self.inner.cell_owned().map(|c| c.with_sequence_id(n))
        } else {
            self.inner.cell_owned()
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
        self.exhausted = if std::mem::take(&mut self.row_bloom_pending) {
            !self.inner.seek_row(key)?
        } else {
            !self.inner.seek(key)?
        };
        self.skip_invisible()
    }

    /// Steps forward while the target is near (most reseeks in a scan land a cell or two
    /// ahead); otherwise lets the file scanner search, within the block it holds when the
    /// index says the target is there (multi-gets walking a batch in key order).
    fn reseek(&mut self, key: &[u8]) -> Result<()> {
        const MAX_STEPS: usize = 2;
        let target = cairn_cell::KeyRef::parse(key)?;
        for _ in 0..MAX_STEPS {
            match self.peek() {
                None => return Ok(()),
                Some(c) if cairn_cell::compare_keys(&c.key, &target) != Ordering::Less => {
                    return Ok(())
                }
                Some(_) => self.next()?,
            }
        }
        self.search_if_behind(key, &target, false)
    }

    fn reseek_far(&mut self, key: &[u8]) -> Result<()> {
        self.search_if_behind(key, &cairn_cell::KeyRef::parse(key)?, true)
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
            let seq = self.cell_sequence_id.unwrap_or(c.sequence_id);
            if seq <= self.read_point {
                self.exhausted = false;
                return Ok(Some(c.row().to_vec()));
            }
            probe = c.key.as_bytes().to_vec();
        }
    }
}

impl StoreFileScanner {
    /// Lets the file scanner search for `key` (parsed: `target`) when the current cell sorts
    /// before it; `keep_leaf`: through the leaf index block kept from the last such search.
    fn search_if_behind(
        &mut self,
        key: &[u8],
        target: &cairn_cell::KeyRef<'_>,
        keep_leaf: bool,
    ) -> Result<()> {
        if self
            .peek()
            .is_some_and(|c| cairn_cell::compare_keys(&c.key, target) == Ordering::Less)
        {
            let found = if keep_leaf {
                self.inner.reseek_keeping_leaf(key, &mut self.leaf)?
            } else {
                self.inner.reseek(key)?
            };
            self.exhausted = !found;
            self.skip_invisible()?;
        }
        Ok(())
    }

    /// A key after every cell of the file: past the file's last row.
    fn inner_last_row_end(&self) -> Result<Option<Vec<u8>>> {
        match self.inner.reader().last_key() {
            None => Ok(None),
            Some(k) => {
                let k = cairn_cell::KeyRef::parse(k)?;
                Ok(Some(cairn_cell::last_on_row(k.row())?))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heap::KeyValueHeap;
    use cairn_cell::KeyValue;
    use cairn_hfile::{HFileWriter, ReaderOptions, WriterOptions};

    /// Rows r0..r5 of one column; row i has sequence id i + 1.
    fn file(dir: &std::path::Path, include_mvcc: bool) -> Arc<HFileReader> {
        let path = dir.join(format!("f-{include_mvcc}"));
        let out = std::fs::File::create(&path).unwrap();
        let options = WriterOptions {
            include_mvcc,
            ..WriterOptions::default()
        };
        let mut w = HFileWriter::new(out, path.display().to_string(), options).unwrap();
        for i in 0..6u64 {
            let kv = KeyValue::put(format!("r{i}").as_bytes(), b"f", b"q", 1, b"v")
                .unwrap()
                .with_sequence_id(i + 1);
            w.append(&kv.as_cell()).unwrap();
        }
        w.finish().unwrap();
        Arc::new(HFileReader::open(&path, ReaderOptions::default()).unwrap())
    }

    fn rows(heap: &mut KeyValueHeap<'_>) -> Vec<String> {
        heap.seek(&cairn_cell::first_on_row(b"").unwrap()).unwrap();
        let mut out = Vec::new();
        while let Some(c) = heap.peek() {
            out.push(String::from_utf8(c.row().to_vec()).unwrap());
            heap.next().unwrap();
        }
        out
    }

    #[test]
    fn a_store_file_scanner_hides_cells_past_its_read_point() {
        let dir = tempfile::tempdir().unwrap();
        let reader = file(dir.path(), true);
        for (read_point, want) in [
            (0, vec![]),
            (3, vec!["r0", "r1", "r2"]),
            (5, vec!["r0", "r1", "r2", "r3", "r4"]),
            (6, vec!["r0", "r1", "r2", "r3", "r4", "r5"]),
            (u64::MAX, vec!["r0", "r1", "r2", "r3", "r4", "r5"]),
        ] {
            let s: Box<dyn CellScanner> = Box::new(StoreFileScanner::new(
                &reader,
                read_point,
                Default::default(),
            ));
            assert_eq!(
                rows(&mut KeyValueHeap::new(vec![s])),
                want,
                "read point {read_point}"
            );
        }
    }

    #[test]
    fn cells_stored_without_sequence_ids_are_seen_at_every_read_point() {
        let dir = tempfile::tempdir().unwrap();
        let reader = file(dir.path(), false);
        let s: Box<dyn CellScanner> =
            Box::new(StoreFileScanner::new(&reader, 0, Default::default()));
        assert_eq!(rows(&mut KeyValueHeap::new(vec![s])).len(), 6);
    }

    #[test]
    fn a_heap_of_two_files_merges_and_a_heap_of_one_ends_with_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (file(dir.path(), true), file(dir.path(), false));
        let two: Vec<Box<dyn CellScanner>> = vec![
            Box::new(StoreFileScanner::new(&a, 2, Default::default())),
            Box::new(StoreFileScanner::new(&b, 0, Default::default())),
        ];
        let mut heap = KeyValueHeap::new(two);
        assert_eq!(
            rows(&mut heap),
            ["r0", "r0", "r1", "r1", "r2", "r3", "r4", "r5"]
        );
        let one: Vec<Box<dyn CellScanner>> =
            vec![Box::new(StoreFileScanner::new(&a, 1, Default::default()))];
        let mut heap = KeyValueHeap::new(one);
        assert_eq!(rows(&mut heap), ["r0"]);
        assert!(heap.peek().is_none());
        heap.next().unwrap();
        assert!(heap.peek().is_none());
    }
}
