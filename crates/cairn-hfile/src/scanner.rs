//! Forward scans and seeks over an HFile's cells, borrowed from the block buffer.

use std::cmp::Ordering;
use std::ops::Deref;
use std::sync::Arc;

use crate::block::Block;
use crate::block_type::BlockType;
use crate::cell::{compare_keys, CellRef, KeyRef};
use crate::error::{HFileError, Result};
use crate::reader::HFileReader;
use crate::source::{BlockPurpose, BlockReadOptions};

/// Where the current cell's parts are in its block, once parsed.
#[derive(Clone, Copy)]
struct ParsedCell {
    block: u64,
    pos: usize,
    key: (u32, u32),
    value: (u32, u32),
    tags: (u32, u32),
    sequence_id: u64,
}

/// A position among an HFile's cells (HBase's `HFileScanner`), over any handle `R` to its
/// reader. Cells it hands out borrow from the current block, which the scanner holds (a cheap
/// reference-counted buffer, shared with any cache).
pub struct ScannerOver<R: Deref<Target = HFileReader>> {
    parsed: std::cell::Cell<Option<ParsedCell>>,
    reader: R,
    block: Option<Block>,
    /// Start of the current cell in the block body, and of the next one.
    pos: usize,
    next_pos: usize,
    /// How this scanner's data blocks are read (whether they fill the cache).
    options: BlockReadOptions,
}

/// A scanner that borrows its reader.
pub type HFileScanner<'r> = ScannerOver<&'r HFileReader>;

/// A scanner that shares ownership of its reader, so it can outlive the borrow (region
/// scanners hold these while files are swapped underneath them by compactions).
pub type SharedHFileScanner = ScannerOver<Arc<HFileReader>>;

impl<R: Deref<Target = HFileReader>> ScannerOver<R> {
    pub(crate) fn new(reader: R) -> ScannerOver<R> {
        ScannerOver {
            parsed: std::cell::Cell::new(None),
            reader,
            block: None,
            pos: 0,
            next_pos: 0,
            options: BlockReadOptions::default(),
        }
    }

    /// The same scanner reading its data blocks with `options`.
    pub fn with_options(mut self, options: BlockReadOptions) -> ScannerOver<R> {
        self.options = options;
        self
    }

    /// The reader this scanner walks.
    pub fn reader(&self) -> &HFileReader {
        &self.reader
    }

    /// The current cell, or `None` before a seek or after the end.
    pub fn cell(&self) -> Option<CellRef<'_>> {
        let block = self.block.as_ref()?;
        let data = block.data();
        if let Some(p) = self.parsed.get() {
            if p.block == block.offset() && p.pos == self.pos {
                // Heaps peek at the same cell many times per step; the offsets found by the
                // first parse are enough to rebuild it.
                let at = |(start, len): (u32, u32)| &data[start as usize..(start + len) as usize];
                return Some(CellRef {
                    key: KeyRef::from_valid(at(p.key)),
                    value: at(p.value),
                    tags: at(p.tags),
                    sequence_id: p.sequence_id,
                });
            }
        }
        let (c, _) = self.reader.parse_cell(block, self.pos).ok()?;
        Self::remember(&self.parsed, block, self.pos, &c);
        Some(c)
    }

    /// The current cell as an owned [`KeyValue`](crate::KeyValue) that shares the block's memory instead of
    /// copying it (see [`CellRef::to_owned_in`]).
    pub fn cell_owned(&self) -> Option<crate::KeyValue> {
        let block = self.block.as_ref()?;
        Some(self.cell()?.to_owned_in(block.data()))
    }

    /// Keeps where `c` (the cell at `pos` of `block`) has its parts, so [`cell`](Self::cell)
    /// rebuilds it without parsing it again: a seek or a step parses the cell it lands on
    /// anyway (to find the next one), and the caller then asks for that same cell.
    fn remember(
        parsed: &std::cell::Cell<Option<ParsedCell>>,
        block: &Block,
        pos: usize,
        c: &CellRef<'_>,
    ) {
        let base = block.data().as_ptr() as usize;
        let span = |s: &[u8]| ((s.as_ptr() as usize - base) as u32, s.len() as u32);
        parsed.set(Some(ParsedCell {
            block: block.offset(),
            pos,
            key: span(c.key.as_bytes()),
            value: span(c.value),
            tags: if c.tags.is_empty() {
                (0, 0)
            } else {
                span(c.tags)
            },
            sequence_id: c.sequence_id,
        }));
    }

    /// Positions at the first cell; false for an empty file.
    pub fn seek_to_first(&mut self) -> Result<bool> {
        self.first_cell(BlockPurpose::Scan)
    }

    /// Positions at the first cell, reading its block for `purpose`.
    pub(crate) fn first_cell(&mut self, purpose: BlockPurpose) -> Result<bool> {
        match self.reader.trailer().first_data_block_offset {
            None => {
                self.block = None;
                Ok(false)
            }
            Some(offset) => {
                // With a one-level index the root's first entry gives the size; deeper indexes
                // point at leaf blocks, so the size comes from the block's header.
                let index = self.reader.data_index();
                let size = (self.reader.trailer().num_data_index_levels == 1 && !index.is_empty())
                    .then(|| index.entry(0).2 as u64);
                self.load_block(offset, size, purpose)
            }
        }
    }

    /// Positions at the first cell whose key is ≥ `key` (a KeyValue key; use
    /// [`crate::cell::first_on_row`] and friends to build search keys); false if none.
    pub fn seek(&mut self, key: &[u8]) -> Result<bool> {
        let search = KeyRef::parse(key)?;
        match self.reader.locate_data_block(key)? {
            // The key sorts before every cell: the first cell is the answer.
            None => self.first_cell(BlockPurpose::Seek),
            Some((offset, size)) => {
                let b = self.data_block_for_seek(offset, Some(size))?;
                self.hold(b)?;
                self.seek_in_block(&search)
            }
        }
    }

    /// [`seek`](Self::seek) for a read of `key`'s row only (a get): when the data block the
    /// index names is cached it is searched at once; otherwise the row Bloom filter is asked
    /// first, and a row it proves absent costs no block read. False when the file has no cell
    /// at or after `key` — or, the filter having spoken, none in `key`'s row: the scanner is
    /// then unpositioned, and a later cell of another row is not looked for.
    ///
    /// A Bloom filter exists to save reading a block: when the block is cached, its search
    /// costs about what the filter's random bit probes and chunk lookup cost, and a row that
    /// is there (most gets' rows) would pay for both.
    pub fn seek_row(&mut self, key: &[u8]) -> Result<bool> {
        let search = KeyRef::parse(key)?;
        // `None`: the key sorts before every cell, and the answer is in the first block.
        let located = self.reader.locate_data_block(key)?;
        let offset = located
            .map(|(offset, _)| offset)
            .or(self.reader.trailer().first_data_block_offset);
        if let Some(b) = offset.and_then(|o| self.reader.block_source().read_cached(o)) {
            if b.block_type() == BlockType::Data {
                self.hold(b)?;
                return self.seek_in_block(&search);
            }
        }
        if !self.reader.may_contain_row(search.row())? {
            self.block = None;
            return Ok(false);
        }
        match located {
            None => self.first_cell(BlockPurpose::Seek),
            Some((offset, size)) => {
                let b = self.data_block_for_seek(offset, Some(size))?;
                self.hold(b)?;
                self.seek_in_block(&search)
            }
        }
    }

    /// Like [`seek`](Self::seek) for a key at or after the current cell: when the index puts
    /// `key` in the block already held, searches only that block (with its cell index)
    /// instead of reading the block again (HBase's `reseek`).
    pub fn reseek(&mut self, key: &[u8]) -> Result<bool> {
        self.reseek_keeping_leaf(key, &mut None)
    }

    /// [`reseek`](Self::reseek) for a caller that reseeks to many keys in order (a
    /// multi-get's rows) and keeps the last leaf index block read in `leaf` between calls.
    /// Kept by the caller rather than by the scanner, so a long-lived scanner does not hold
    /// an index block the cache may have let go.
    pub fn reseek_keeping_leaf(&mut self, key: &[u8], leaf: &mut Option<Block>) -> Result<bool> {
        let search = KeyRef::parse(key)?;
        let current = self.block.as_ref().map(|b| b.offset());
        match self.reader.locate_data_block_keeping_leaf(key, leaf)? {
            None => self.first_cell(BlockPurpose::Seek),
            Some((offset, size)) => {
                // Another block: read it with what the index just said, not by searching
                // the index again as a seek would.
                if Some(offset) != current {
                    let b = self.data_block_for_seek(offset, Some(size))?;
                    self.hold(b)?;
                }
                self.seek_in_block(&search)
            }
        }
    }

    /// Positions at the last cell whose key sorts before `key` (HBase's `seekBefore`, which
    /// reversed scans use); false if no cell does.
    pub fn seek_before(&mut self, key: &[u8]) -> Result<bool> {
        let search = KeyRef::parse(key)?;
        let Some((offset, size)) = self.reader.locate_data_block(key)? else {
            self.block = None;
            return Ok(false);
        };
        let b = self.data_block_for_seek(offset, Some(size))?;
        let prev = b.header().prev_block_offset;
        if self.last_before_in(b, &search)? {
            return Ok(true);
        }
        // `key` sorts at or before this block's first cell: the answer ends the previous
        // data block, which the header links to.
        if prev < 0 {
            self.block = None;
            return Ok(false);
        }
        let b = self.data_block_for_seek(prev as u64, None)?;
        if self.last_before_in(b, &search)? {
            return Ok(true);
        }
        self.block = None;
        Ok(false)
    }

    fn last_before_in(&mut self, block: Block, search: &KeyRef<'_>) -> Result<bool> {
        let len = block.data().len();
        let (mut pos, mut last) = (0usize, None);
        while pos < len {
            let (c, next) = self.reader.parse_cell(&block, pos)?;
            if compare_keys(&c.key, search) != Ordering::Less {
                break;
            }
            last = Some((pos, next));
            pos = next;
        }
        match last {
            Some((p, n)) => {
                self.block = Some(block);
                self.pos = p;
                self.next_pos = n;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Positions at the first cell ≥ `key` in `block` (the data block the index gives for
    /// `key`), or after it.
    pub(crate) fn seek_in(&mut self, block: Block, key: &KeyRef<'_>) -> Result<bool> {
        self.hold(block)?;
        self.seek_in_block(key)
    }

    fn seek_in_block(&mut self, search: &KeyRef<'_>) -> Result<bool> {
        let block = self.block.as_ref().expect("loaded");
        let len = block.data().len();
        // With a cell index, binary search its row fingerprints (a small contiguous
        // array) to the first cell whose row can be >= the key's; then walk from there.
        let mut pos = 0usize;
        // The search's first probes, each a miss of its own when taken in turn, asked for
        // together (a block of 1 KiB cells has a ~700-byte index: all of it).
        if let (Some(idx), Some((start, n))) = (block.cell_index(), block.index_layout()) {
            crate::prefetch::search_lines(idx, 32, start, n, 12);
        }
        let n = block.indexed_cells();
        if n > 0 {
            let prefix = block.indexed_prefix().unwrap_or(&[]);
            let row = search.row();
            let head = &row[..row.len().min(prefix.len())];
            let start = match crate::cell::compare_bytes(head, prefix) {
                Ordering::Less => 0,
                Ordering::Greater if head.len() == prefix.len() => n,
                Ordering::Greater => n,
                _ if row.len() < prefix.len() => 0,
                _ => {
                    let fp = crate::cell::row_fingerprint(row, prefix.len());
                    crate::block_index::first_not_below(n, |i| {
                        block.indexed_entry(i).expect("in range").1 < fp
                    })
                }
            };
            pos = block.indexed_cell(start).unwrap_or(len);
            // The cell found, its tail (its sequence id sits just before the next cell) and
            // the next cell's head (a get reads it to see its row end): known now, needed
            // one after the other.
            let next = block.indexed_cell(start + 1).unwrap_or(len);
            let data = block.data();
            crate::prefetch::line(data, pos);
            crate::prefetch::line(data, next.saturating_sub(1));
            crate::prefetch::line(data, next);
        }
        // Past the block's end, the next block's first cell sorts after `key` (the
        // index sent us to the last block that can hold it).
        while pos < len {
            let (c, next) = self.reader.parse_cell(block, pos)?;
            if compare_keys(&c.key, search) != Ordering::Less {
                Self::remember(&self.parsed, block, pos, &c);
                self.pos = pos;
                self.next_pos = next;
                return Ok(true);
            }
            pos = next;
        }
        self.pos = pos;
        self.next_pos = pos;
        self.next()
    }

    /// Moves to the next cell; false at the end of the file.
    // HBase's `HFileScanner.next()`; not an `Iterator`: it fails with I/O errors and its cells
    // borrow from the scanner.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<bool> {
        let Some(block) = &self.block else {
            return Ok(false);
        };
        if self.next_pos < block.data().len() {
            self.pos = self.next_pos;
            let (c, next) = self.reader.parse_cell(block, self.pos)?;
            Self::remember(&self.parsed, block, self.pos, &c);
            self.next_pos = next;
            // A scan steps on to the next cell soon: start loading its key now, while the
            // caller works on this one (with large values the hardware prefetcher does not
            // see the next cell coming, and each step began with a miss).
            if let Some(ahead) = block.data().get(next..) {
                crate::prefetch::two_lines(ahead);
            }
            // One cell's lead is less than a miss takes when the caller does little per cell
            // (a filtered scan): guess that the cell after next is as long as this one (a
            // table's cells mostly are) and start loading it too. A wrong guess costs a line.
            let len = next - self.pos;
            for k in 2..=4 {
                if let Some(further) = block.data().get(self.pos + k * len..) {
                    crate::prefetch::two_lines(further);
                }
            }
            return Ok(true);
        }
        // The next data block, skipping inline index and Bloom blocks.
        let last = self.reader.trailer().last_data_block_offset.unwrap_or(0);
        let (mut offset, mut hint) = (block.next_offset(), block.next_block_on_disk_size());
        while offset <= last {
            let b = self.reader.read_block_for(
                offset,
                hint,
                &[
                    BlockType::Data,
                    BlockType::LeafIndex,
                    BlockType::BloomChunk,
                    BlockType::EncodedData,
                ],
                BlockPurpose::Scan,
                self.options,
            )?;
            match b.block_type() {
                BlockType::Data => return self.set_block(b),
                BlockType::EncodedData => {
                    return Err(HFileError::Unsupported {
                        path: self.reader.path().clone(),
                        what: format!("encoded data block at offset {offset}"),
                    })
                }
                _ => {
                    offset = b.next_offset();
                    hint = b.next_block_on_disk_size();
                }
            }
        }
        self.block = None;
        Ok(false)
    }

    fn load_block(
        &mut self,
        offset: u64,
        size: Option<u64>,
        purpose: BlockPurpose,
    ) -> Result<bool> {
        let b =
            self.reader
                .read_block_for(offset, size, &[BlockType::Data], purpose, self.options)?;
        self.set_block(b)
    }

    /// Holds `b` positioned at its first cell.
    fn set_block(&mut self, b: Block) -> Result<bool> {
        self.hold(b)?;
        let block = self.block.as_ref().expect("just held");
        let (c, next) = self.reader.parse_cell(block, 0)?;
        Self::remember(&self.parsed, block, 0, &c);
        self.next_pos = next;
        Ok(true)
    }

    fn data_block_for_seek(&self, offset: u64, size: Option<u64>) -> Result<Block> {
        self.reader.read_block_for(
            offset,
            size,
            &[BlockType::Data],
            BlockPurpose::Seek,
            self.options,
        )
    }

    /// Holds `b` before its first cell, unparsed: a seek inside it finds and parses its own
    /// cell, and parsing the first one here would touch memory the seek does not need.
    fn hold(&mut self, b: Block) -> Result<()> {
        if b.data().is_empty() {
            return Err(HFileError::block(
                self.reader.path(),
                Some(BlockType::Data),
                b.offset(),
                "empty data block",
            ));
        }
        self.pos = 0;
        self.next_pos = 0;
        self.block = Some(b);
        Ok(())
    }
}
