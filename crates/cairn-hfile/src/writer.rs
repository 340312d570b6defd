//! Writes HFiles in the layout HBase 2.6's `HFileWriterImpl` (with `StoreFileWriter`'s Bloom
//! filters and file info) produces:
//!
//! ```text
//! data blocks, with leaf index and Bloom chunks inline after the data block that filled them
//! meta blocks
//! intermediate index blocks (only for very large indexes)
//! data index root          <- trailer.load_on_open_data_offset
//! meta index root
//! file info                <- trailer.file_info_offset
//! general Bloom meta, delete-family Bloom meta (when they hold keys)
//! fixed trailer (4096 bytes)
//! ```

use std::cmp::Ordering;
use std::io::Write;

use cairn_checksum::{ChecksumType, DataChecksum};

use crate::block::{BlockEncoder, HEADER_SIZE};
use crate::block_index::{BlockIndexWriter, IndexChunk};
use crate::block_type::BlockType;
use crate::bloom::{BloomOptions, BloomType, CompoundBloomWriter};
use crate::cell::CellLayout;
use crate::cell::{compare_keys, make_key, CellRef, CellType, KeyRef, LATEST_TIMESTAMP};
use crate::compression::{Compression, ZstdFraming};
use crate::encoding::{encode_cells, DataBlockEncoding};
use crate::error::{HFileError, Result};
use crate::file_info::{keys, FileInfo};
use crate::trailer::{Trailer, KV_COMPARATOR, MINOR_VERSION, TRAILER_SIZE};
use crate::vint;

/// How a file is written. Defaults are HBase's.
#[derive(Clone, Debug, PartialEq)]
pub struct WriterOptions {
    /// Uncompressed data block size that ends a block (`BLOCKSIZE`, 64 KiB).
    pub block_size: usize,
    /// Checksum of every block (`hbase.hstore.checksum.algorithm`, CRC32C).
    pub checksum_type: ChecksumType,
    /// Checksum chunk size (`hbase.hstore.bytes.per.checksum`, 16384).
    pub bytes_per_checksum: u32,
    /// Compression of every block (`COMPRESSION`, NONE).
    pub compression: Compression,
    /// How ZSTD bodies are framed.
    pub zstd_framing: ZstdFraming,
    /// General Bloom filter (`BLOOMFILTER`, ROW).
    pub bloom_type: BloomType,
    /// Bloom filter sizing and hash.
    pub bloom: BloomOptions,
    /// Write a delete-family Bloom filter when the general one is not ROWCOL
    /// (`io.storefile.delete.family.bloom.enabled`, true).
    pub delete_family_bloom: bool,
    /// Give every cell a tags section (HBase does when any cell of the flush has tags).
    pub include_tags: bool,
    /// Give every cell its sequence id (HBase always does on flush).
    pub include_mvcc: bool,
    /// Index chunk size (`hfile.index.block.max.size`, 128 KiB).
    pub index_block_size: usize,
    /// Fewest entries per intermediate index block (`hfile.index.block.min.entries`, 16).
    pub min_index_entries: usize,
    /// Creation time recorded in file info (ms since the epoch; default now).
    pub create_time_ms: i64,
    /// How data blocks hold their cells (`DATA_BLOCK_ENCODING`, NONE). Encoded blocks are
    /// encoded from the plain block when it is finished; its size decides where blocks end,
    /// as in HBase.
    pub data_block_encoding: DataBlockEncoding,
    /// Dictionary-compress the tags of encoded blocks (`COMPRESS_TAGS`; false here, HBase's
    /// families default to true). Recorded as `TAGS_COMPRESSED` in file info.
    pub compress_tags: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            block_size: 64 * 1024,
            checksum_type: ChecksumType::Crc32C,
            bytes_per_checksum: 16 * 1024,
            compression: Compression::None,
            zstd_framing: ZstdFraming::default(),
            bloom_type: BloomType::Row,
            bloom: BloomOptions::default(),
            delete_family_bloom: true,
            include_tags: false,
            include_mvcc: true,
            index_block_size: 128 * 1024,
            min_index_entries: 16,
            create_time_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0),
            data_block_encoding: DataBlockEncoding::None,
            compress_tags: false,
        }
    }
}

/// What a finished file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSummary {
    /// Length of the file, trailer included.
    pub file_len: u64,
    /// Cells written (the trailer's entry count).
    pub entry_count: u64,
    /// Data blocks written.
    pub data_blocks: u64,
    /// Levels of the data index (1 = the root points at data blocks).
    pub index_levels: u32,
}

struct Position<W> {
    inner: W,
    pos: u64,
}

impl<W: Write> Position<W> {
    fn write_all(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.inner.write_all(b)?;
        self.pos += b.len() as u64;
        Ok(())
    }
}

/// Writes one HFile, cells in HBase's order.
pub struct HFileWriter<W: Write> {
    out: Position<W>,
    path: String,
    options: WriterOptions,
    encoder: BlockEncoder,
    encoded: Vec<u8>,
    block: Vec<u8>,
    prev_offsets: [i64; BlockType::CHAINS],
    index: BlockIndexWriter,
    general_bloom: Option<CompoundBloomWriter>,
    delete_bloom: Option<CompoundBloomWriter>,
    meta_blocks: Vec<(Vec<u8>, Vec<u8>)>,
    user_info: FileInfo,
    last_key: Option<Vec<u8>>,
    first_key_in_block: Option<Vec<u8>>,
    last_key_of_previous_block: Option<Vec<u8>>,
    /// Key of the last cell added to the general Bloom filter.
    prev_general_bloom_key: Option<Vec<u8>>,
    prev_delete_bloom_row: Option<Vec<u8>>,
    scratch: Vec<u8>,
    entry_count: u64,
    data_blocks: u64,
    total_key_len: u64,
    total_value_len: u64,
    max_sequence_id: u64,
    max_tags_len: usize,
    biggest_cell: Option<(usize, Vec<u8>)>,
    time_range: Option<(i64, i64)>,
    earliest_put_ts: i64,
    delete_family_count: u64,
    first_data_block_offset: Option<u64>,
    last_data_block_offset: Option<u64>,
    total_uncompressed: u64,
}

impl<W: Write> HFileWriter<W> {
    /// A writer into `out`; `path` names the file in errors.
    pub fn new(out: W, path: impl Into<String>, options: WriterOptions) -> Result<HFileWriter<W>> {
        if options.block_size == 0 || options.index_block_size == 0 || options.min_index_entries < 2
        {
            return Err(HFileError::InvalidArgument(
                "block size and index block size must be positive, min index entries at least 2"
                    .into(),
            ));
        }
        let checksum = DataChecksum::new(options.checksum_type, options.bytes_per_checksum)
            .map_err(|e| HFileError::InvalidArgument(e.to_string()))?;
        let encoder = BlockEncoder::new(checksum, options.compression, options.zstd_framing)?;
        let general_bloom = (options.bloom_type != BloomType::None)
            .then(|| CompoundBloomWriter::new(options.bloom_type, options.bloom));
        let delete_bloom = (options.delete_family_bloom && options.bloom_type != BloomType::RowCol)
            .then(|| CompoundBloomWriter::new(BloomType::Row, options.bloom));
        Ok(HFileWriter {
            out: Position { inner: out, pos: 0 },
            path: path.into(),
            index: BlockIndexWriter::new(options.index_block_size, options.min_index_entries),
            options,
            encoder,
            encoded: Vec::new(),
            block: vec![0; HEADER_SIZE],
            prev_offsets: [-1; BlockType::CHAINS],
            general_bloom,
            delete_bloom,
            meta_blocks: Vec::new(),
            user_info: FileInfo::new(),
            last_key: None,
            first_key_in_block: None,
            last_key_of_previous_block: None,
            prev_general_bloom_key: None,
            prev_delete_bloom_row: None,
            scratch: Vec::new(),
            entry_count: 0,
            data_blocks: 0,
            total_key_len: 0,
            total_value_len: 0,
            max_sequence_id: 0,
            max_tags_len: 0,
            biggest_cell: None,
            time_range: None,
            earliest_put_ts: LATEST_TIMESTAMP,
            delete_family_count: 0,
            first_data_block_offset: None,
            last_data_block_offset: None,
            total_uncompressed: 0,
        })
    }

    /// Adds a cell; cells must come in HBase's key order (equal keys are allowed).
    pub fn append(&mut self, cell: &CellRef<'_>) -> Result<()> {
        let key = cell.key;
        if !cell.tags.is_empty() && !self.options.include_tags {
            return Err(HFileError::InvalidArgument(format!(
                "{}: cell {key:?} has tags but the file is written without a tags section \
                 (set include_tags)",
                self.path
            )));
        }
        let duplicate = match &self.last_key {
            Some(last) => match compare_keys(&KeyRef::parse(last)?, &key) {
                Ordering::Greater => {
                    return Err(HFileError::InvalidArgument(format!(
                        "{}: cell {key:?} is out of order: it sorts before the previous cell {:?}",
                        self.path,
                        KeyRef::parse(last)?
                    )))
                }
                Ordering::Equal => true,
                Ordering::Less => false,
            },
            None => false,
        };
        // StoreFileWriter feeds the Bloom filters before the HFile writer sees the cell.
        self.add_to_blooms(cell)?;
        if !duplicate && self.block.len() - HEADER_SIZE >= self.options.block_size {
            self.finish_block()?;
            self.write_inline_blocks(false)?;
        }
        self.write_cell(cell);
        let key_bytes = key.as_bytes();
        if self.first_key_in_block.is_none() {
            self.first_key_in_block = Some(key_bytes.to_vec());
        }
        self.total_key_len += key_bytes.len() as u64;
        self.total_value_len += cell.value.len() as u64;
        let size = cell.serialized_len() + 4;
        if self.biggest_cell.as_ref().is_none_or(|(s, _)| size > *s) {
            let (s, k) = self.biggest_cell.get_or_insert_with(|| (0, Vec::new()));
            *s = size;
            remember(k, key_bytes);
        }
        self.max_sequence_id = self.max_sequence_id.max(cell.sequence_id);
        self.max_tags_len = self.max_tags_len.max(cell.tags.len());
        self.track_timestamps(&key);
        self.entry_count += 1;
        remember(self.last_key.get_or_insert_with(Vec::new), key_bytes);
        Ok(())
    }

    fn write_cell(&mut self, cell: &CellRef<'_>) {
        let b = &mut self.block;
        b.extend_from_slice(&(cell.key.as_bytes().len() as u32).to_be_bytes());
        b.extend_from_slice(&(cell.value.len() as u32).to_be_bytes());
        b.extend_from_slice(cell.key.as_bytes());
        b.extend_from_slice(cell.value);
        if self.options.include_tags {
            b.extend_from_slice(&(cell.tags.len() as u16).to_be_bytes());
            b.extend_from_slice(cell.tags);
        }
        if self.options.include_mvcc {
            vint::write_vlong(b, cell.sequence_id as i64);
        }
    }

    fn track_timestamps(&mut self, key: &KeyRef<'_>) {
        let ts = key.timestamp();
        if key.type_code() == CellType::Put.code() {
            self.earliest_put_ts = self.earliest_put_ts.min(ts);
        }
        let mut include = |t: i64| {
            self.time_range = Some(match self.time_range {
                None => (t, t),
                Some((lo, hi)) => (lo.min(t), hi.max(t)),
            });
        };
        include(ts);
        if matches!(
            key.cell_type(),
            Some(CellType::DeleteColumn | CellType::DeleteFamily)
        ) {
            // HBase's TimeRangeTracker: these delete everything older, so the range reaches 0.
            include(0);
        }
    }

    fn add_to_blooms(&mut self, cell: &CellRef<'_>) -> Result<()> {
        let (row, family, qualifier) = (cell.row(), cell.family(), cell.qualifier());
        if let Some(bloom) = &mut self.general_bloom {
            let new_key = match (&self.prev_general_bloom_key, self.options.bloom_type) {
                (None, _) => true,
                (Some(prev), BloomType::Row) => KeyRef::parse(prev)?.row() != row,
                (Some(prev), _) => {
                    let p = KeyRef::parse(prev)?;
                    p.row() != row || p.family() != family || p.qualifier() != qualifier
                }
            };
            if new_key {
                bloom.add(row, qualifier)?;
                remember(
                    self.prev_general_bloom_key.get_or_insert_with(Vec::new),
                    cell.key.as_bytes(),
                );
            }
        }
        if matches!(
            cell.key.cell_type(),
            Some(CellType::DeleteFamily | CellType::DeleteFamilyVersion)
        ) {
            self.delete_family_count += 1;
            if let Some(bloom) = &mut self.delete_bloom {
                if self.prev_delete_bloom_row.as_deref() != Some(row) {
                    bloom.add(row, qualifier)?;
                    remember(self.prev_delete_bloom_row.get_or_insert_with(Vec::new), row);
                }
            }
        }
        Ok(())
    }

    /// Adds an entry to the file info (HBase's `appendFileInfo`), e.g. `MAX_SEQ_ID_KEY`.
    /// Keys starting with `hfile.` are reserved for the writer.
    pub fn append_file_info(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if key.starts_with(b"hfile.") {
            return Err(HFileError::InvalidArgument(format!(
                "file info key {:?} uses the reserved prefix hfile.",
                String::from_utf8_lossy(key)
            )));
        }
        self.user_info.insert(key, value.to_vec());
        Ok(())
    }

    /// Adds a named meta block (written at close, ordered by name).
    pub fn append_meta_block(&mut self, name: &[u8], body: &[u8]) {
        let at = self
            .meta_blocks
            .partition_point(|(n, _)| n.as_slice() < name);
        self.meta_blocks.insert(at, (name.to_vec(), body.to_vec()));
    }

    /// Encodes and writes one block; returns (offset, onDiskSizeWithHeader,
    /// uncompressedSizeWithoutHeader).
    fn write_block(&mut self, block_type: BlockType, body: &[u8]) -> Result<(u64, u32, u32)> {
        let offset = self.out.pos;
        let chain = block_type.chain();
        self.encoded.clear();
        let header = self.encoder.encode(
            block_type,
            body,
            self.prev_offsets[chain],
            &mut self.encoded,
        )?;
        let path = &self.path;
        self.out
            .write_all(&self.encoded)
            .map_err(|e| HFileError::Io {
                path: path.as_str().into(),
                offset,
                source: e,
            })?;
        self.prev_offsets[chain] = offset as i64;
        Ok((
            offset,
            header.on_disk_size_with_header() as u32,
            header.uncompressed_size_without_header,
        ))
    }

    fn finish_block(&mut self) -> Result<()> {
        if self.block.len() == HEADER_SIZE {
            return Ok(());
        }
        let offset = self.out.pos;
        let chain = BlockType::Data.chain();
        // The block buffer already starts with room for the header: uncompressed blocks are
        // finished and written without copying their body.
        let (block_type, block) = match self.options.data_block_encoding {
            DataBlockEncoding::None => (BlockType::Data, &mut self.block),
            encoding => {
                let layout = CellLayout {
                    tags: self.options.include_tags,
                    mvcc: self.options.include_mvcc,
                };
                self.encoded.clear();
                self.encoded.resize(HEADER_SIZE, 0);
                encode_cells(
                    encoding,
                    &self.block[HEADER_SIZE..],
                    layout,
                    self.options.compress_tags,
                    &mut self.encoded,
                )
                .map_err(|e| {
                    HFileError::InvalidArgument(format!(
                        "{}: data block at {offset}: {e}",
                        self.path
                    ))
                })?;
                (BlockType::EncodedData, &mut self.encoded)
            }
        };
        let body_len = block.len() - HEADER_SIZE;
        let header = self.encoder.encode_in_place(
            block_type,
            block,
            self.prev_offsets[chain],
            &mut self.scratch,
        )?;
        let path = &self.path;
        self.out.write_all(block).map_err(|e| HFileError::Io {
            path: path.as_str().into(),
            offset,
            source: e,
        })?;
        self.prev_offsets[chain] = offset as i64;
        let on_disk = header.on_disk_size_with_header() as u32;
        self.first_data_block_offset.get_or_insert(offset);
        self.last_data_block_offset = Some(offset);
        self.total_uncompressed += (HEADER_SIZE + body_len) as u64;
        self.data_blocks += 1;
        let first = self
            .first_key_in_block
            .take()
            .expect("a block has a first cell");
        let index_key = midpoint_key(self.last_key_of_previous_block.as_deref(), &first)?;
        self.index.add_entry(index_key, offset, on_disk);
        if let Some(last) = &self.last_key {
            remember(
                self.last_key_of_previous_block.get_or_insert_with(Vec::new),
                last,
            );
        }
        self.block.clear();
        self.block.resize(HEADER_SIZE, 0);
        Ok(())
    }

    fn write_inline_blocks(&mut self, closing: bool) -> Result<()> {
        let mut body = Vec::new();
        while self.index.should_write_block(closing) {
            body.clear();
            self.index.write_inline_block(&mut body);
            let (offset, on_disk, uncompressed) = self.write_block(BlockType::LeafIndex, &body)?;
            self.index.block_written(offset, on_disk, uncompressed);
            self.total_uncompressed += (HEADER_SIZE + body.len()) as u64;
        }
        for general in [true, false] {
            loop {
                let bloom = if general {
                    self.general_bloom.as_mut()
                } else {
                    self.delete_bloom.as_mut()
                };
                let Some(bloom) = bloom else { break };
                if !bloom.should_write_block(closing) {
                    break;
                }
                body.clear();
                bloom.write_inline_block(&mut body);
                let (offset, on_disk, _) = self.write_block(BlockType::BloomChunk, &body)?;
                let bloom = if general {
                    self.general_bloom.as_mut()
                } else {
                    self.delete_bloom.as_mut()
                };
                bloom.expect("present").block_written(offset, on_disk);
                self.total_uncompressed += (HEADER_SIZE + body.len()) as u64;
            }
        }
        Ok(())
    }

    /// Writes the rest of the file and returns the sink.
    pub fn finish(mut self) -> Result<(W, FileSummary)> {
        self.finish_block()?;
        self.write_inline_blocks(true)?;

        let mut meta_index = IndexChunk::default();
        for (name, body) in std::mem::take(&mut self.meta_blocks) {
            let (offset, on_disk, _) = self.write_block(BlockType::Meta, &body)?;
            self.total_uncompressed += (HEADER_SIZE + body.len()) as u64;
            meta_index.add(name, offset, on_disk, None);
        }

        let mut index = std::mem::replace(&mut self.index, BlockIndexWriter::new(1, 2));
        let (root_offset, levels, root_entries) =
            index.write_index_blocks(&mut |t, b| self.write_block(t, b))?;

        let mut body = Vec::new();
        meta_index.encode_root(&mut body);
        self.write_block(BlockType::RootIndex, &body)?;
        self.total_uncompressed += (HEADER_SIZE + body.len()) as u64;

        let info = self.file_info();
        let body = info.encode();
        let (file_info_offset, _, _) = self.write_block(BlockType::FileInfo, &body)?;
        self.total_uncompressed += (HEADER_SIZE + body.len()) as u64;

        for (block_type, bloom) in [
            (BlockType::GeneralBloomMeta, self.general_bloom.take()),
            (BlockType::DeleteFamilyBloomMeta, self.delete_bloom.take()),
        ] {
            if let Some(bloom) = bloom.filter(|b| b.key_count() > 0) {
                let body = bloom.meta_block();
                self.write_block(block_type, &body)?;
                self.total_uncompressed += (HEADER_SIZE + body.len()) as u64;
            }
        }

        let trailer = Trailer {
            file_info_offset,
            load_on_open_data_offset: root_offset,
            uncompressed_data_index_size: index.total_uncompressed_size(),
            total_uncompressed_bytes: self.total_uncompressed + TRAILER_SIZE as u64,
            data_index_count: root_entries,
            meta_index_count: meta_index.len() as u32,
            entry_count: self.entry_count,
            num_data_index_levels: levels,
            first_data_block_offset: self.first_data_block_offset,
            last_data_block_offset: self.last_data_block_offset,
            comparator_class_name: KV_COMPARATOR.to_string(),
            compression: self.options.compression,
            minor_version: MINOR_VERSION,
        };
        let offset = self.out.pos;
        let path = self.path.clone();
        self.out
            .write_all(&trailer.encode())
            .and_then(|_| self.out.inner.flush())
            .map_err(|e| HFileError::Io {
                path: path.into(),
                offset,
                source: e,
            })?;
        Ok((
            self.out.inner,
            FileSummary {
                file_len: self.out.pos,
                entry_count: self.entry_count,
                data_blocks: self.data_blocks,
                index_levels: levels,
            },
        ))
    }

    fn file_info(&self) -> FileInfo {
        let mut info = self.user_info.clone();
        let n = self.entry_count.max(1);
        if let Some(last) = &self.last_key {
            info.insert(keys::LASTKEY, last.clone());
        }
        let avg = |total: u64| {
            if self.entry_count == 0 {
                0
            } else {
                (total / n) as i32
            }
        };
        info.insert(
            keys::AVG_KEY_LEN,
            avg(self.total_key_len).to_be_bytes().to_vec(),
        );
        info.insert(
            keys::CREATE_TIME_TS,
            self.options.create_time_ms.to_be_bytes().to_vec(),
        );
        info.insert(
            keys::AVG_VALUE_LEN,
            avg(self.total_value_len).to_be_bytes().to_vec(),
        );
        if let Some((len, key)) = &self.biggest_cell {
            info.insert(keys::KEY_OF_BIGGEST_CELL, key.clone());
            info.insert(
                keys::LEN_OF_BIGGEST_CELL,
                (*len as i64).to_be_bytes().to_vec(),
            );
        }
        if self.options.data_block_encoding != DataBlockEncoding::None {
            info.insert(
                keys::DATA_BLOCK_ENCODING,
                self.options.data_block_encoding.name().as_bytes().to_vec(),
            );
        }
        if self.options.include_tags {
            info.insert(
                keys::MAX_TAGS_LEN,
                (self.max_tags_len as i32).to_be_bytes().to_vec(),
            );
            // As HBase's writer: compressed only when encoded (ROW_INDEX_V1 says so too,
            // though it writes tags as they are, and its readers ignore the flag).
            let compressed = self.options.compress_tags
                && self.options.data_block_encoding != DataBlockEncoding::None;
            // HBase's `Bytes.toBytes(boolean)`: 0xff for true.
            info.insert(
                keys::TAGS_COMPRESSED,
                vec![if compressed { 0xff } else { 0 }],
            );
        }
        if self.options.include_mvcc {
            info.insert(
                keys::MAX_MEMSTORE_TS_KEY,
                (self.max_sequence_id as i64).to_be_bytes().to_vec(),
            );
            info.insert(keys::KEY_VALUE_VERSION, 1i32.to_be_bytes().to_vec());
        }
        // What HBase's StoreFileWriter adds: time range, Bloom filter keys, delete count.
        let (lo, hi) = self.time_range.unwrap_or((i64::MAX, i64::MIN));
        let mut tr = lo.to_be_bytes().to_vec();
        tr.extend_from_slice(&hi.to_be_bytes());
        info.insert(keys::TIMERANGE, tr);
        info.insert(
            keys::EARLIEST_PUT_TS,
            self.earliest_put_ts.to_be_bytes().to_vec(),
        );
        if let Some(bloom) = self.general_bloom.as_ref().filter(|b| b.key_count() > 0) {
            info.insert(
                keys::BLOOM_FILTER_TYPE,
                self.options.bloom_type.name().as_bytes().to_vec(),
            );
            if let Some(last) = bloom.last_key() {
                info.insert(keys::LAST_BLOOM_KEY, last.to_vec());
            }
        }
        info.insert(
            keys::DELETE_FAMILY_COUNT,
            (self.delete_family_count as i64).to_be_bytes().to_vec(),
        );
        info
    }
}

/// Copies `bytes` into `slot`, reusing its allocation.
fn remember(slot: &mut Vec<u8>, bytes: &[u8]) {
    slot.clear();
    slot.extend_from_slice(bytes);
}

/// The shortest key sorting after `left` and no later than `right`, used as a data block's
/// index key (`HFileWriterImpl.getMidpoint`); the first block is indexed by its real first key.
pub fn midpoint_key(left: Option<&[u8]>, right: &[u8]) -> Result<Vec<u8>> {
    let r = KeyRef::parse(right)?;
    let Some(left) = left else {
        return Ok(right.to_vec());
    };
    let l = KeyRef::parse(left)?;
    let max = CellType::Maximum.code();
    if let Some(row) = minimum_midpoint(l.row(), r.row()) {
        return Ok(make_key(&row, &[], &[], LATEST_TIMESTAMP, max)?);
    }
    if let Some(family) = minimum_midpoint(l.family(), r.family()) {
        return Ok(make_key(r.row(), &family, &[], LATEST_TIMESTAMP, max)?);
    }
    if let Some(qualifier) = minimum_midpoint(l.qualifier(), r.qualifier()) {
        return Ok(make_key(
            r.row(),
            r.family(),
            &qualifier,
            LATEST_TIMESTAMP,
            max,
        )?);
    }
    Ok(right.to_vec())
}

/// `getMinimumMidpointArray`: the shortest byte string in `(left, right]`, or `None` when
/// the two are equal. `left` must not sort after `right`.
fn minimum_midpoint(left: &[u8], right: &[u8]) -> Option<Vec<u8>> {
    let min = left.len().min(right.len());
    let diff = left
        .iter()
        .zip(right)
        .position(|(a, b)| a != b)
        .unwrap_or(min);
    if diff == min {
        return match left.len().cmp(&right.len()) {
            Ordering::Less => {
                let mut m = left.to_vec();
                m.push(0);
                Some(m)
            }
            _ => None,
        };
    }
    let mut m = left[..=diff].to_vec();
    m[diff] = m[diff].wrapping_add(1);
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::compare_key_bytes;

    fn k(row: &str, fam: &str, qual: &str, ts: i64) -> Vec<u8> {
        make_key(
            row.as_bytes(),
            fam.as_bytes(),
            qual.as_bytes(),
            ts,
            CellType::Put.code(),
        )
        .unwrap()
    }

    #[test]
    fn midpoint_follows_hbase() {
        let show = |m: Vec<u8>| format!("{:?}", KeyRef::parse(&m).unwrap());
        assert_eq!(
            show(midpoint_key(None, &k("b", "f", "q", 1)).unwrap()),
            "b/f:q/1/Put"
        );
        assert_eq!(
            show(midpoint_key(Some(&k("abc", "f", "q", 1)), &k("abz", "f", "q", 1)).unwrap()),
            "abd/:/9223372036854775807/Maximum"
        );
        assert_eq!(
            show(midpoint_key(Some(&k("ab", "f", "q", 1)), &k("abc", "f", "q", 1)).unwrap()),
            "ab\\x00/:/9223372036854775807/Maximum"
        );
        assert_eq!(
            show(midpoint_key(Some(&k("r", "f", "q", 1)), &k("r", "g", "q", 1)).unwrap()),
            "r/g:/9223372036854775807/Maximum"
        );
        assert_eq!(
            show(midpoint_key(Some(&k("r", "f", "a", 1)), &k("r", "f", "c", 1)).unwrap()),
            "r/f:b/9223372036854775807/Maximum"
        );
        assert_eq!(
            show(midpoint_key(Some(&k("r", "f", "q", 2)), &k("r", "f", "q", 1)).unwrap()),
            "r/f:q/1/Put"
        );
        // The midpoint always lies in (left, right].
        for (a, b) in [
            (k("a", "f", "q", 1), k("b", "f", "q", 1)),
            (k("a\u{7f}", "f", "", 0), k("b", "", "", 0)),
        ] {
            let m = midpoint_key(Some(&a), &b).unwrap();
            assert_eq!(compare_key_bytes(&a, &m).unwrap(), Ordering::Less);
            assert_ne!(compare_key_bytes(&m, &b).unwrap(), Ordering::Greater);
        }
    }
}
