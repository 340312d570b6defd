//! Reads HFiles: trailer, load-on-open section (data and meta index roots, file info, Bloom
//! metadata), then blocks on demand through a [`BlockSource`].

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use crate::block::{Block, DecodeContext};
use crate::block_index::{KeyOrder, NonRootIndex, RootIndex};
use crate::block_type::BlockType;
use crate::bloom::{after_last_cell_key, rowcol_key, BloomType, CompoundBloom};
use crate::cell::{first_on_row, CellLayout, CellRef, KeyValue};
use crate::encoding::DataBlockEncoding;
use crate::error::{HFileError, Result};
use crate::file_info::{keys, FileInfo};
use crate::scanner::{HFileScanner, SharedHFileScanner};
use crate::source::{
    BlockPurpose, BlockReadOptions, BlockSource, FileBlockSource, LocalFile, RawSource,
};
use crate::trailer::{Trailer, TRAILER_SIZE};

/// How a file is opened.
#[derive(Clone)]
pub struct ReaderOptions {
    /// Verify every block's inline checksums (`hbase.regionserver.checksum.verify`, true).
    pub verify_checksums: bool,
    /// Another copy of the same file, read when a block from the first one is corrupt.
    pub secondary: Option<Arc<dyn RawSource>>,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            verify_checksums: true,
            secondary: None,
        }
    }
}

/// A block of the load-on-open section, for reports.
#[derive(Clone, Debug)]
pub struct LoadOnOpenBlock {
    /// What the block holds (index root, file info, Bloom meta, ...).
    pub block_type: BlockType,
    /// Offset of the block in the file.
    pub offset: u64,
    /// On-disk size with header and checksums.
    pub on_disk_size: u64,
    /// Uncompressed body size.
    pub uncompressed_size: u32,
}

/// An open HFile (HBase's `HFile.Reader`): the trailer, file info, index roots and Bloom
/// metadata in memory; data blocks read on demand through its [`BlockSource`].
pub struct HFileReader {
    path: Arc<str>,
    source: Arc<dyn BlockSource>,
    file_source: Arc<FileBlockSource>,
    file_len: u64,
    trailer: Trailer,
    data_index: RootIndex,
    meta_index: RootIndex,
    file_info: FileInfo,
    general_bloom: Option<CompoundBloom>,
    bloom_type: BloomType,
    last_bloom_key: Option<Vec<u8>>,
    delete_family_bloom: Option<CompoundBloom>,
    layout: CellLayout,
    encoding: DataBlockEncoding,
    load_on_open: Vec<LoadOnOpenBlock>,
    /// The leaf index blocks of a two-level index (one per root entry), kept once read: every
    /// get passes through one, and a cache lookup for it (hash, probe, reference count on a
    /// line every core writes) cost more than its search. They are ~0.1% of the data
    /// (1 MiB per GiB of 1-KiB cells), and while cached they are the cache's own buffers,
    /// not copies. RocksDB keeps its index blocks with each open table the same way by
    /// default.
    leaves: Box<[std::sync::OnceLock<Block>]>,
}

impl std::fmt::Debug for HFileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HFileReader")
            .field("path", &self.path)
            .field("file_len", &self.file_len)
            .field("trailer", &self.trailer)
            .finish()
    }
}

impl HFileReader {
    /// Opens a local file.
    pub fn open(path: impl AsRef<Path>, options: ReaderOptions) -> Result<HFileReader> {
        let name: Arc<str> = path.as_ref().display().to_string().into();
        let file = LocalFile::open(path.as_ref()).map_err(|e| HFileError::io(&name, 0, e))?;
        HFileReader::open_source(name, Arc::new(file), options)
    }

    /// Opens a file behind any raw source; `path` names it in errors.
    pub fn open_source(
        path: Arc<str>,
        raw: Arc<dyn RawSource>,
        options: ReaderOptions,
    ) -> Result<HFileReader> {
        let file_len = raw.len();
        let tail_len = file_len.min(TRAILER_SIZE as u64);
        // The same file with the filesystem's own checksums verified (HDFS), if it has them.
        let fs_checked = raw.clone().fs_checksummed();
        // The trailer has no checksum of its own: read it with the filesystem's where it has
        // them.
        let tail = fs_checked
            .as_ref()
            .unwrap_or(&raw)
            .read_at(file_len - tail_len, tail_len as usize)
            .map_err(|e| HFileError::io(&path, file_len - tail_len, e))?;
        let trailer = Trailer::decode(&tail, file_len, &path)?;
        if !trailer.uses_cell_comparator() {
            return Err(HFileError::Unsupported {
                path: path.clone(),
                what: format!(
                    "comparator {}: cairn reads files in HBase's normal cell order only (not hbase:meta or raw-bytes files)",
                    trailer.comparator_class_name
                ),
            });
        }
        if !trailer.compression.is_supported() {
            return Err(HFileError::Unsupported {
                path: path.clone(),
                what: format!(
                    "compression {} is not supported by this build of cairn",
                    trailer.compression
                ),
            });
        }
        let ctx = DecodeContext {
            path: path.clone(),
            compression: trailer.compression,
            verify_checksums: options.verify_checksums,
        };
        let limit = file_len - TRAILER_SIZE as u64;
        let file_source = Arc::new(FileBlockSource::new(raw, options.secondary, ctx, limit));

        // The load-on-open section: data root, meta root, file info, then Bloom metadata.
        let mut blocks: Vec<Block> = Vec::new();
        let mut offset = trailer.load_on_open_data_offset;
        let mut size_hint = None;
        while offset < limit {
            let b = file_source.read_block(offset, size_hint)?;
            offset = b.next_offset();
            size_hint = b.next_block_on_disk_size();
            blocks.push(b);
            if blocks.len() > 16 {
                return Err(HFileError::corrupt(
                    &path,
                    "load-on-open section",
                    trailer.load_on_open_data_offset,
                    "more than 16 blocks",
                ));
            }
        }
        let expect = |i: usize, t: BlockType| -> Result<&Block> {
            let b = blocks.get(i).ok_or_else(|| {
                HFileError::corrupt(
                    &path,
                    "load-on-open section",
                    trailer.load_on_open_data_offset,
                    format!("block {i} ({t}) is missing"),
                )
            })?;
            if b.block_type() != t {
                return Err(HFileError::block(
                    &path,
                    Some(b.block_type()),
                    b.offset(),
                    format!("expected a {t} block here"),
                ));
            }
            Ok(b)
        };
        let root = expect(0, BlockType::RootIndex)?;
        let data_index = RootIndex::decode(
            root.data(),
            trailer.data_index_count,
            KeyOrder::Cells,
            trailer.num_data_index_levels > 1,
            &path,
            root.offset(),
        )?;
        let meta = expect(1, BlockType::RootIndex)?;
        let meta_index = RootIndex::decode(
            meta.data(),
            trailer.meta_index_count,
            KeyOrder::Bytes,
            false,
            &path,
            meta.offset(),
        )?;
        let info_block = expect(2, BlockType::FileInfo)?;
        if info_block.offset() != trailer.file_info_offset {
            return Err(HFileError::corrupt(
                &path,
                "trailer",
                limit,
                format!(
                    "file info is at offset {}, the trailer says {}",
                    info_block.offset(),
                    trailer.file_info_offset
                ),
            ));
        }
        let file_info = FileInfo::decode(info_block.data(), &path, info_block.offset())?;
        let encoding = match file_info.get(keys::DATA_BLOCK_ENCODING) {
            None => DataBlockEncoding::None,
            Some(name) => {
                DataBlockEncoding::from_name(name).ok_or_else(|| HFileError::Unsupported {
                    path: path.clone(),
                    what: format!(
                        "data block encoding {}: cairn reads NONE, PREFIX, DIFF, FAST_DIFF and ROW_INDEX_V1",
                        String::from_utf8_lossy(name)
                    ),
                })?
            }
        };
        let tags_compressed = file_info
            .get(keys::TAGS_COMPRESSED)
            .is_some_and(|v| v.iter().any(|&b| b != 0));
        let mut general_bloom = None;
        let mut delete_family_bloom = None;
        for b in &blocks[3..] {
            match b.block_type() {
                BlockType::GeneralBloomMeta => {
                    general_bloom = Some(CompoundBloom::decode(
                        b.data(),
                        &path,
                        b.block_type(),
                        b.offset(),
                    )?)
                }
                BlockType::DeleteFamilyBloomMeta => {
                    delete_family_bloom = Some(CompoundBloom::decode(
                        b.data(),
                        &path,
                        b.block_type(),
                        b.offset(),
                    )?)
                }
                other => {
                    return Err(HFileError::block(
                        &path,
                        Some(other),
                        b.offset(),
                        "unexpected in the load-on-open section",
                    ))
                }
            }
        }
        let bloom_type = match file_info.get(keys::BLOOM_FILTER_TYPE) {
            None => BloomType::None,
            Some(b"ROW") => BloomType::Row,
            Some(b"ROWCOL") => BloomType::RowCol,
            // ROWPREFIX_FIXED_LENGTH and unknown kinds: read the file, ignore the filter.
            Some(_) => BloomType::None,
        };
        if bloom_type == BloomType::None {
            general_bloom = None;
        }
        if let Some(b) = &general_bloom {
            if b.is_rowcol() != (bloom_type == BloomType::RowCol) {
                return Err(HFileError::corrupt(
                    &path,
                    "Bloom filter metadata",
                    trailer.load_on_open_data_offset,
                    format!(
                        "file info says {bloom_type} but the chunk index is ordered for {}",
                        if b.is_rowcol() { "ROWCOL" } else { "ROW" }
                    ),
                ));
            }
        }
        let load_on_open = blocks
            .iter()
            .map(|b| LoadOnOpenBlock {
                block_type: b.block_type(),
                offset: b.offset(),
                on_disk_size: b.on_disk_size(),
                uncompressed_size: b.header().uncompressed_size_without_header,
            })
            .collect();
        let layout = CellLayout {
            tags: file_info.get(keys::MAX_TAGS_LEN).is_some(),
            mvcc: file_info.get_i32(keys::KEY_VALUE_VERSION) == Some(1),
        };
        // From now on data blocks read from the file carry an index of their cells (and
        // encoded ones are decoded first).
        file_source.set_cell_layout(layout, encoding, tags_compressed);
        let pinned = if trailer.num_data_index_levels == 2 {
            data_index.len()
        } else {
            0
        };
        let leaves = (0..pinned).map(|_| std::sync::OnceLock::new()).collect();
        Ok(HFileReader {
            last_bloom_key: file_info.get(keys::LAST_BLOOM_KEY).map(<[u8]>::to_vec),
            layout,
            source: file_source.clone(),
            file_source,
            path,
            file_len,
            trailer,
            leaves,
            data_index,
            meta_index,
            file_info,
            general_bloom,
            bloom_type,
            delete_family_bloom,
            load_on_open,
            encoding,
        })
    }

    /// Puts another block source (a cache) between the reader and the file; `wrap` receives
    /// the file's own source.
    pub fn with_block_source(
        mut self,
        wrap: impl FnOnce(Arc<FileBlockSource>) -> Arc<dyn BlockSource>,
    ) -> HFileReader {
        self.source = wrap(self.file_source.clone());
        self
    }

    /// The file name used in errors.
    pub fn path(&self) -> &Arc<str> {
        &self.path
    }

    /// Length of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// The fixed file trailer.
    pub fn trailer(&self) -> &Trailer {
        &self.trailer
    }

    /// The file info map.
    pub fn file_info(&self) -> &FileInfo {
        &self.file_info
    }

    /// The data index root.
    pub fn data_index(&self) -> &RootIndex {
        &self.data_index
    }

    /// The meta index: names and offsets of the file's meta blocks.
    pub fn meta_index(&self) -> &RootIndex {
        &self.meta_index
    }

    /// The general Bloom filter, if the file has one cairn can use.
    pub fn general_bloom(&self) -> Option<&CompoundBloom> {
        self.general_bloom.as_ref()
    }

    /// The general Bloom filter's type.
    pub fn bloom_type(&self) -> BloomType {
        self.bloom_type
    }

    /// The delete-family Bloom filter.
    pub fn delete_family_bloom(&self) -> Option<&CompoundBloom> {
        self.delete_family_bloom.as_ref()
    }

    /// The blocks of the load-on-open section.
    pub fn load_on_open_blocks(&self) -> &[LoadOnOpenBlock] {
        &self.load_on_open
    }

    /// How the file's data blocks hold their cells (`DATA_BLOCK_ENCODING` in file info).
    pub fn data_block_encoding(&self) -> DataBlockEncoding {
        self.encoding
    }

    /// Whether cells carry a tags section.
    pub fn includes_tags(&self) -> bool {
        self.layout.tags
    }

    /// Whether cells carry sequence ids.
    pub fn includes_mvcc(&self) -> bool {
        self.layout.mvcc
    }

    /// Cells in the file.
    pub fn entry_count(&self) -> u64 {
        self.trailer.entry_count
    }

    /// The block source in use.
    pub fn block_source(&self) -> &Arc<dyn BlockSource> {
        &self.source
    }

    /// Reads a block through the block source, checking its type.
    pub(crate) fn read_block(
        &self,
        offset: u64,
        size: Option<u64>,
        expected: &[BlockType],
    ) -> Result<Block> {
        let purpose = if expected.contains(&BlockType::Data) {
            BlockPurpose::Seek
        } else {
            BlockPurpose::Index
        };
        self.read_block_for(offset, size, expected, purpose, BlockReadOptions::default())
    }

    /// [`read_block`](Self::read_block) for a given purpose, with a read's options.
    pub(crate) fn read_block_for(
        &self,
        offset: u64,
        size: Option<u64>,
        expected: &[BlockType],
        purpose: BlockPurpose,
        options: BlockReadOptions,
    ) -> Result<Block> {
        let b = self.source.read_block_for(offset, size, purpose, options)?;
        if !expected.contains(&b.block_type()) {
            return Err(HFileError::block(
                &self.path,
                Some(b.block_type()),
                offset,
                format!(
                    "expected {}",
                    expected
                        .iter()
                        .map(|t| t.name())
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            ));
        }
        Ok(b)
    }

    /// The data block whose key range holds `key`: offset and on-disk size, or `None` when the
    /// key sorts before the file's first key.
    pub fn locate_data_block(&self, key: &[u8]) -> Result<Option<(u64, u64)>> {
        self.locate_data_block_keeping_leaf(key, &mut None)
    }

    /// [`locate_data_block`](Self::locate_data_block) that keeps the leaf index block it
    /// reads in `leaf` and uses it again when the next key falls under the same leaf: a
    /// multi-get walks its rows in key order, and dozens of them share each leaf, which
    /// otherwise cost a cache lookup apiece.
    pub(crate) fn locate_data_block_keeping_leaf(
        &self,
        key: &[u8],
        leaf: &mut Option<Block>,
    ) -> Result<Option<(u64, u64)>> {
        let Some(i) = self.data_index.search(key) else {
            return Ok(None);
        };
        let (_, mut offset, mut size) = self.data_index.entry(i);
        let levels = self.trailer.num_data_index_levels;
        for level in 1..levels {
            let expected = if level + 1 < levels {
                BlockType::IntermediateIndex
            } else {
                BlockType::LeafIndex
            };
            let intermediate;
            let block: &Block = if let Some(pinned) = self.leaves.get(i) {
                // Two levels: the root entry's leaf, kept by the reader.
                match pinned.get() {
                    Some(b) => b,
                    None => {
                        let b = self.read_block(offset, Some(size as u64), &[expected])?;
                        pinned.get_or_init(|| b)
                    }
                }
            } else if expected == BlockType::LeafIndex {
                if leaf.as_ref().map(Block::offset) != Some(offset) {
                    *leaf = Some(self.read_block(offset, Some(size as u64), &[expected])?);
                }
                leaf.as_ref().expect("the leaf was just read")
            } else {
                intermediate = self.read_block(offset, Some(size as u64), &[expected])?;
                &intermediate
            };
            let idx = NonRootIndex::parse(
                block.data(),
                KeyOrder::Cells,
                &self.path,
                expected,
                block.offset(),
            )?
            .with_fingerprints(block.cell_index().map(|b| b.as_ref()));
            let Some(j) = idx.search(key) else {
                return Ok(None);
            };
            (offset, size) = idx.target(j).ok_or_else(|| {
                HFileError::block(
                    &self.path,
                    Some(expected),
                    block.offset(),
                    format!("entry {j} is damaged"),
                )
            })?;
        }
        Ok(Some((offset, size as u64)))
    }

    /// A scanner over the cells.
    pub fn scanner(&self) -> HFileScanner<'_> {
        HFileScanner::new(self)
    }

    /// A scanner that keeps the reader alive by itself.
    pub fn shared_scanner(self: &Arc<Self>) -> SharedHFileScanner {
        SharedHFileScanner::new(self.clone())
    }

    /// [`shared_scanner`](Self::shared_scanner) that reads its data blocks with `options`.
    pub fn shared_scanner_with(self: &Arc<Self>, options: BlockReadOptions) -> SharedHFileScanner {
        SharedHFileScanner::new(self.clone()).with_options(options)
    }

    /// The newest cell of a column, if the file has one (whatever its type), copied out;
    /// consults the Bloom filter first.
    pub fn get(&self, row: &[u8], family: &[u8], qualifier: &[u8]) -> Result<Option<KeyValue>> {
        self.get_with(row, family, qualifier, |c| c.to_owned())
    }

    /// Calls `f` with the newest cell of a column, borrowed from the (possibly cached) block:
    /// no copy. Consults the Bloom filter first. Returns `f`'s result, or `None`.
    pub fn get_with<T>(
        &self,
        row: &[u8],
        family: &[u8],
        qualifier: &[u8],
        f: impl FnOnce(CellRef<'_>) -> T,
    ) -> Result<Option<T>> {
        if self.trailer.entry_count == 0 {
            return Ok(None);
        }
        // The search key is built in a reused per-thread buffer: a get allocates nothing.
        thread_local! {
            static KEY: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let found = KEY.with(|buf| -> Result<Option<(HFileScanner<'_>, bool)>> {
            let mut key = buf.borrow_mut();
            crate::cell::write_key(
                &mut key,
                row,
                family,
                qualifier,
                crate::cell::LATEST_TIMESTAMP,
                crate::cell::CellType::Maximum.code(),
            )?;
            let search = crate::cell::KeyRef::parse(&key)?;
            let mut s = self.scanner();
            let found = match self.locate_data_block(&key)? {
                None => s.first_cell(BlockPurpose::Seek)?,
                Some((offset, size)) => match self.source.read_cached(offset) {
                    // The Bloom filter exists to save reading a block; a cached one costs less
                    // to look at than the filter's random bit probes.
                    Some(block) if block.block_type() == BlockType::Data => {
                        s.seek_in(block, &search)?
                    }
                    _ => {
                        if !self.may_contain_column(row, family, qualifier)? {
                            return Ok(None);
                        }
                        let block = self.read_block(offset, Some(size), &[BlockType::Data])?;
                        s.seek_in(block, &search)?
                    }
                },
            };
            Ok(Some((s, found)))
        })?;
        let Some((s, true)) = found else {
            return Ok(None);
        };
        Ok(s.cell()
            .filter(|c| c.row() == row && c.family() == family && c.qualifier() == qualifier)
            .map(f))
    }

    /// Every cell of a row, after consulting the Bloom filter.
    pub fn get_row(&self, row: &[u8]) -> Result<Vec<KeyValue>> {
        let mut out = Vec::new();
        if !self.may_contain_row(row)? {
            return Ok(out);
        }
        let mut s = self.scanner();
        let mut more = s.seek(&first_on_row(row)?)?;
        while more {
            let c = s.cell().expect("positioned");
            if c.row() != row {
                break;
            }
            out.push(c.to_owned());
            more = s.next()?;
        }
        Ok(out)
    }

    /// False only when the Bloom filter proves `row` is absent (ROW filters; ROWCOL filters
    /// cannot answer for whole rows and say true).
    pub fn may_contain_row(&self, row: &[u8]) -> Result<bool> {
        if self.trailer.entry_count == 0 {
            return Ok(false);
        }
        match (&self.general_bloom, self.bloom_type) {
            (Some(bloom), BloomType::Row) => {
                if self
                    .last_bloom_key
                    .as_deref()
                    .is_some_and(|last| row > last)
                {
                    return Ok(false);
                }
                self.bloom_contains(bloom, row, row)
            }
            _ => Ok(true),
        }
    }

    /// False only when the Bloom filter proves the column (or, for ROW filters, the row) is
    /// absent. For ROWCOL it also checks the row-only key, under which delete-family markers
    /// are filed, exactly as HBase's `StoreFileReader` does.
    pub fn may_contain_column(&self, row: &[u8], family: &[u8], qualifier: &[u8]) -> Result<bool> {
        match (&self.general_bloom, self.bloom_type) {
            (Some(bloom), BloomType::RowCol) => {
                if self.trailer.entry_count == 0 {
                    return Ok(false);
                }
                // HBase leaves the family out of ROWCOL keys (`createFirstOnRowCol(cell)`).
                let _ = family;
                let col_key = rowcol_key(row, qualifier)?;
                let row_key = first_on_row(row)?;
                if let Some(last) = &self.last_bloom_key {
                    if after_last_cell_key(&col_key, last) && after_last_cell_key(&row_key, last) {
                        return Ok(false);
                    }
                }
                // The row-only key hashes like a column with an empty qualifier, which is where
                // delete-family markers are filed.
                if self.bloom_contains(bloom, &col_key, &col_key)? {
                    return Ok(true);
                }
                self.bloom_contains(bloom, &row_key, &row_key)
            }
            _ => self.may_contain_row(row),
        }
    }

    fn bloom_contains(
        &self,
        bloom: &CompoundBloom,
        index_key: &[u8],
        hash_key: &[u8],
    ) -> Result<bool> {
        let Some((offset, size)) = bloom.chunk_for(index_key) else {
            return Ok(false);
        };
        let chunk = self.read_block(offset, Some(size as u64), &[BlockType::BloomChunk])?;
        Ok(bloom.chunk_contains(chunk.data(), hash_key))
    }

    /// The approximate middle key (HBase's `midKey`, used to split regions).
    pub fn mid_key(&self) -> Result<Option<Vec<u8>>> {
        if self.data_index.is_empty() {
            return Ok(None);
        }
        if let Some(m) = self.data_index.mid_key() {
            let leaf = self.read_block(
                m.leaf_offset,
                Some(m.leaf_on_disk_size as u64),
                &[BlockType::LeafIndex],
            )?;
            let idx = NonRootIndex::parse(
                leaf.data(),
                KeyOrder::Cells,
                &self.path,
                BlockType::LeafIndex,
                leaf.offset(),
            )?;
            let e = m.entry as usize;
            if e >= idx.len() {
                return Err(HFileError::block(
                    &self.path,
                    Some(BlockType::LeafIndex),
                    leaf.offset(),
                    format!("mid-key entry {e} of {}", idx.len()),
                ));
            }
            return Ok(Some(idx.key(e).to_vec()));
        }
        Ok(Some(
            self.data_index.entry(self.data_index.len() / 2).0.to_vec(),
        ))
    }

    /// A named meta block's body.
    pub fn meta_block(&self, name: &[u8]) -> Result<Option<Bytes>> {
        let Some(i) = self.meta_index.search(name) else {
            return Ok(None);
        };
        let (key, offset, size) = self.meta_index.entry(i);
        if key != name {
            return Ok(None);
        }
        Ok(Some(
            self.read_block(offset, Some(size as u64), &[BlockType::Meta])?
                .data()
                .clone(),
        ))
    }

    /// Reads every block of the file in order, verifying each (`hfile -v`); calls `visit` with
    /// each block, and stops at the first failure.
    pub fn verify_all_blocks(&self, mut visit: impl FnMut(&Block)) -> Result<u64> {
        let limit = self.file_len - TRAILER_SIZE as u64;
        let (mut offset, mut hint, mut count) = (0u64, None, 0u64);
        while offset < limit {
            let b = self.file_source.read_block(offset, hint)?;
            visit(&b);
            count += 1;
            offset = b.next_offset();
            hint = b.next_block_on_disk_size();
        }
        Ok(count)
    }

    /// The key of the first cell, from the index (a real key: the first block is indexed by it).
    pub fn first_key(&self) -> Option<&[u8]> {
        (!self.data_index.is_empty()).then(|| self.data_index.entry(0).0)
    }

    /// The key of the last cell, from file info.
    pub fn last_key(&self) -> Option<&[u8]> {
        self.file_info.get(keys::LASTKEY)
    }

    /// Parses a cell at `pos` of a data block body; returns it and where the next one starts.
    #[inline]
    pub(crate) fn parse_cell<'a>(
        &self,
        block: &'a Block,
        pos: usize,
    ) -> Result<(CellRef<'a>, usize)> {
        crate::cell::parse_block_cell(block.data(), pos, self.layout).map_err(|what| {
            HFileError::block(
                &self.path,
                Some(BlockType::Data),
                block.offset(),
                format!("cell at data byte {pos}: {what}"),
            )
        })
    }

    /// How cells are laid out in this file's data blocks.
    pub fn cell_layout(&self) -> CellLayout {
        self.layout
    }
}
