//! Compound Bloom filters (`CompoundBloomFilterWriter` / `CompoundBloomFilter`): chunks of bits
//! written inline between data blocks (`BLMFBLK2`), a meta block in the load-on-open section
//! (`BLMFMET2`, or `DFBLMET2` for delete-family), and a root-format index of chunk first keys.
//!
//! Bits for a key: `h1 = hash(key, 0)`, `h2 = hash(key, h1)`, positions
//! `|(h1 + i·h2) mod bits|` for `i < hashCount` in 32-bit wrapping arithmetic, least significant
//! bit first within each byte. ROW filters hash the row and index chunks by row; ROWCOL filters
//! hash `rowLen u16 | row | 0x00 | qualifier | LATEST_TIMESTAMP | 0xFF` and index chunks by the
//! same bytes: the KeyValue key HBase's `createFirstOnRowCol(cell)` makes, whose family is
//! empty (the family is deliberately left out of ROWCOL keys).

use std::collections::VecDeque;
use std::sync::Arc;

use crate::block_index::{IndexChunk, KeyOrder, RootIndex};
use crate::block_type::BlockType;
use crate::cell::{compare_keys, make_key, CellType, KeyRef, LATEST_TIMESTAMP};
use crate::error::{HFileError, Result};
use crate::hash::HashType;
use crate::vint;

/// Bloom filter version in the meta block.
const VERSION: i32 = 3;
/// Class name HBase records for ROWCOL filters.
pub const ROWCOL_COMPARATOR: &str = "org.apache.hadoop.hbase.CellComparatorImpl";

/// A column family's `BLOOMFILTER` setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BloomType {
    /// No Bloom filter.
    None,
    /// Keyed by row (HBase's default).
    #[default]
    Row,
    /// Keyed by row and qualifier.
    RowCol,
}

impl BloomType {
    /// HBase's name.
    pub fn name(self) -> &'static str {
        match self {
            BloomType::None => "NONE",
            BloomType::Row => "ROW",
            BloomType::RowCol => "ROWCOL",
        }
    }
}

impl std::fmt::Display for BloomType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for BloomType {
    type Err = HFileError;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_uppercase().as_str() {
            "NONE" => Ok(BloomType::None),
            "ROW" => Ok(BloomType::Row),
            "ROWCOL" => Ok(BloomType::RowCol),
            other => Err(HFileError::InvalidArgument(format!(
                "unknown Bloom filter type {other:?} (expected NONE, ROW or ROWCOL)"
            ))),
        }
    }
}

/// The key of a ROWCOL filter for a row and qualifier: what it hashes, indexes chunks by, and
/// stores as `LAST_BLOOM_KEY` (HBase's `createFirstOnRowCol(cell)`, with an empty family).
pub fn rowcol_key(row: &[u8], qualifier: &[u8]) -> Result<Vec<u8>> {
    Ok(make_key(
        row,
        &[],
        qualifier,
        LATEST_TIMESTAMP,
        CellType::Maximum.code(),
    )?)
}

/// [`rowcol_key`] into a reused buffer.
pub fn rowcol_hash_key(row: &[u8], qualifier: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&(row.len() as u16).to_be_bytes());
    out.extend_from_slice(row);
    out.push(0);
    out.extend_from_slice(qualifier);
    out.extend_from_slice(&LATEST_TIMESTAMP.to_be_bytes());
    out.push(0xFF);
}

/// `BloomFilterUtil.computeFoldableByteSize`.
fn foldable_byte_size(bit_size: u64, fold: u32) -> u64 {
    let mut bytes = bit_size.div_ceil(8);
    let mask = (1u64 << fold) - 1;
    if bytes & mask != 0 {
        bytes >>= fold;
        bytes += 1;
        bytes <<= fold;
    }
    bytes
}

/// One chunk's sizing, computed as `BloomFilterUtil.createBySize` does.
#[derive(Clone, Copy, Debug, PartialEq)]
struct ChunkParams {
    byte_size: u64,
    hash_count: u32,
    max_keys: u64,
}

fn chunk_params(byte_size_hint: u64, error_rate: f64, fold: u32) -> ChunkParams {
    let byte_size = foldable_byte_size(byte_size_hint * 8, fold);
    let bits = byte_size * 8;
    let ln2 = std::f64::consts::LN_2;
    let ideal_max_keys = (bits as f64 * (ln2 * ln2 / -error_rate.ln())) as i64 as i32;
    let per_key = bits / ideal_max_keys.max(1) as u64;
    let hash_count = (ln2 * per_key as f64).ceil() as u32;
    let max_keys = (-(bits as f64) * 1.0 / hash_count as f64
        * (1.0 - (error_rate.ln() / hash_count as f64).exp()).ln()) as i64
        as i32;
    ChunkParams {
        byte_size,
        hash_count,
        max_keys: max_keys.max(1) as u64,
    }
}

struct Chunk {
    bits: Vec<u8>,
    params: ChunkParams,
    key_count: u64,
    first_key: Vec<u8>,
}

impl Chunk {
    fn add(&mut self, hash_type: HashType, key: &[u8]) {
        let h1 = hash_type.hash(key, 0);
        let h2 = hash_type.hash(key, h1);
        let bit_count = self.params.byte_size * 8;
        for i in 0..self.params.hash_count as i32 {
            let composite = h1.wrapping_add(i.wrapping_mul(h2));
            let pos = ((composite as i64) % bit_count as i64).unsigned_abs();
            self.bits[(pos / 8) as usize] |= 1 << (pos % 8);
        }
        self.key_count += 1;
    }

    /// Folds a sparsely filled chunk in halves while that loses nothing (`compactBloom`).
    fn compact(&mut self) {
        if self.key_count == 0 {
            return;
        }
        let mut pieces = 1u64;
        let mut size = self.params.byte_size;
        let mut max_keys = self.params.max_keys;
        while size & 1 == 0 && max_keys > self.key_count << 1 {
            pieces <<= 1;
            size >>= 1;
            max_keys >>= 1;
        }
        if pieces > 1 {
            let size = size as usize;
            for p in 1..pieces as usize {
                for i in 0..size {
                    self.bits[i] |= self.bits[p * size + i];
                }
            }
            self.bits.truncate(size);
            self.params.byte_size = size as u64;
            self.params.max_keys = max_keys;
        }
    }
}

/// Settings of a Bloom filter writer (HBase's `io.storefile.bloom.*` and `hbase.hash.type`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BloomOptions {
    /// Chunk size in bytes (`io.storefile.bloom.block.size`, 128 KiB).
    pub block_size: u32,
    /// Wanted false positive rate (`io.storefile.bloom.error.rate`, 0.01).
    pub error_rate: f32,
    /// Largest folding factor (`io.storefile.bloom.max.fold`, 7).
    pub max_fold: u32,
    /// Hash function (`hbase.hash.type`, murmur).
    pub hash_type: HashType,
}

impl Default for BloomOptions {
    fn default() -> Self {
        BloomOptions {
            block_size: 128 * 1024,
            error_rate: 0.01,
            max_fold: 7,
            hash_type: HashType::Murmur,
        }
    }
}

/// Builds one compound Bloom filter while cells are written.
pub(crate) struct CompoundBloomWriter {
    bloom_type: BloomType,
    hash_type: HashType,
    error_rate: f64,
    max_fold: u32,
    chunk_byte_size: u64,
    chunk: Option<Chunk>,
    prev_params: Option<ChunkParams>,
    ready: VecDeque<Chunk>,
    index: IndexChunk,
    total_keys: u64,
    total_max_keys: u64,
    total_byte_size: u64,
    chunks: u32,
    last_key: Option<Vec<u8>>,
    hash_buf: Vec<u8>,
}

impl CompoundBloomWriter {
    pub(crate) fn new(bloom_type: BloomType, options: BloomOptions) -> CompoundBloomWriter {
        let mut err = options.error_rate;
        if bloom_type == BloomType::RowCol {
            // A ROWCOL lookup ORs two probes; HBase lowers each probe's rate to keep the total.
            err = (1.0 - (1.0 - err as f64).sqrt()) as f32;
        }
        CompoundBloomWriter {
            bloom_type,
            hash_type: options.hash_type,
            error_rate: err as f64,
            max_fold: options.max_fold,
            chunk_byte_size: foldable_byte_size(options.block_size as u64 * 8, options.max_fold),
            chunk: None,
            prev_params: None,
            ready: VecDeque::new(),
            index: IndexChunk::default(),
            total_keys: 0,
            total_max_keys: 0,
            total_byte_size: 0,
            chunks: 0,
            last_key: None,
            hash_buf: Vec::new(),
        }
    }

    /// Adds a row (ROW) or a row and column (ROWCOL); the caller adds each only once, as
    /// HBase's `BloomContext` does.
    pub(crate) fn add(&mut self, row: &[u8], qualifier: &[u8]) -> Result<()> {
        self.enqueue_ready_chunk(false);
        if self.chunk.is_none() {
            let first_key = match self.bloom_type {
                BloomType::RowCol => rowcol_key(row, qualifier)?,
                _ => row.to_vec(),
            };
            let params = self.prev_params.unwrap_or_else(|| {
                chunk_params(self.chunk_byte_size, self.error_rate, self.max_fold)
            });
            self.chunk = Some(Chunk {
                bits: vec![0; params.byte_size as usize],
                params,
                key_count: 0,
                first_key,
            });
            self.chunks += 1;
        }
        let mut key = std::mem::take(&mut self.hash_buf);
        match self.bloom_type {
            BloomType::RowCol => rowcol_hash_key(row, qualifier, &mut key),
            _ => {
                key.clear();
                key.extend_from_slice(row);
            }
        }
        self.chunk
            .as_mut()
            .expect("allocated")
            .add(self.hash_type, &key);
        self.hash_buf = key;
        self.total_keys += 1;
        let last = self.last_key.get_or_insert_with(Vec::new);
        match self.bloom_type {
            BloomType::RowCol => rowcol_hash_key(row, qualifier, last),
            _ => {
                last.clear();
                last.extend_from_slice(row);
            }
        }
        Ok(())
    }

    fn enqueue_ready_chunk(&mut self, closing: bool) {
        let Some(chunk) = &self.chunk else { return };
        if chunk.key_count < chunk.params.max_keys && !closing {
            return;
        }
        let mut chunk = self.chunk.take().expect("checked");
        self.prev_params = Some(chunk.params);
        chunk.compact();
        self.total_max_keys += chunk.params.max_keys;
        self.total_byte_size += chunk.params.byte_size;
        self.ready.push_back(chunk);
    }

    /// Whether a chunk is ready to be written as an inline block.
    pub(crate) fn should_write_block(&mut self, closing: bool) -> bool {
        self.enqueue_ready_chunk(closing);
        !self.ready.is_empty()
    }

    /// The next chunk's block body.
    pub(crate) fn write_inline_block(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.ready.front().expect("should_write_block said so").bits);
    }

    /// Records where the chunk went.
    pub(crate) fn block_written(&mut self, offset: u64, on_disk_size: u32) {
        let chunk = self.ready.pop_front().expect("a chunk was written");
        self.index.add(chunk.first_key, offset, on_disk_size, None);
    }

    /// Keys added.
    pub(crate) fn key_count(&self) -> u64 {
        self.total_keys
    }

    /// The last key added, as HBase's `LAST_BLOOM_KEY` holds it.
    pub(crate) fn last_key(&self) -> Option<&[u8]> {
        self.last_key.as_deref()
    }

    /// The meta block body (call after the last chunk was written).
    pub(crate) fn meta_block(&self) -> Vec<u8> {
        let params = self.prev_params.expect("at least one chunk");
        let mut out = Vec::new();
        out.extend_from_slice(&VERSION.to_be_bytes());
        out.extend_from_slice(&(self.total_byte_size as i64).to_be_bytes());
        out.extend_from_slice(&(params.hash_count as i32).to_be_bytes());
        out.extend_from_slice(&self.hash_type.code().to_be_bytes());
        out.extend_from_slice(&(self.total_keys as i64).to_be_bytes());
        out.extend_from_slice(&(self.total_max_keys as i64).to_be_bytes());
        out.extend_from_slice(&(self.chunks as i32).to_be_bytes());
        let comparator: &[u8] = if self.bloom_type == BloomType::RowCol {
            ROWCOL_COMPARATOR.as_bytes()
        } else {
            &[]
        };
        vint::write_vlong(&mut out, comparator.len() as i64);
        out.extend_from_slice(comparator);
        self.index.encode_root(&mut out);
        out
    }
}

/// A compound Bloom filter read from a file's load-on-open section.
#[derive(Debug, Clone)]
pub struct CompoundBloom {
    /// Hash function.
    pub hash_type: HashType,
    /// Bits set per key.
    pub hash_count: u32,
    /// Keys added.
    pub key_count: u64,
    /// Capacity at the target error rate.
    pub max_keys: u64,
    /// Bytes of all chunks.
    pub total_byte_size: u64,
    order: KeyOrder,
    index: RootIndex,
}

impl CompoundBloom {
    /// Parses a Bloom meta block body.
    pub fn decode(
        body: &[u8],
        path: &Arc<str>,
        block_type: BlockType,
        offset: u64,
    ) -> Result<CompoundBloom> {
        let err = |reason: String| HFileError::block(path, Some(block_type), offset, reason);
        let fixed = body
            .get(..44)
            .ok_or_else(|| err(format!("{} bytes, the header needs 44", body.len())))?;
        let i32_at = |at: usize| i32::from_be_bytes(fixed[at..at + 4].try_into().expect("4 bytes"));
        let i64_at = |at: usize| i64::from_be_bytes(fixed[at..at + 8].try_into().expect("8 bytes"));
        let version = i32_at(0);
        if version != VERSION {
            return Err(err(format!(
                "Bloom filter version {version}, expected {VERSION}"
            )));
        }
        let total_byte_size = i64_at(4);
        let hash_count = i32_at(12);
        let hash_code = i32_at(16);
        let key_count = i64_at(20);
        let max_keys = i64_at(28);
        let chunks = i32_at(36);
        if hash_count <= 0 || hash_count > 64 || chunks < 0 || key_count < 0 || total_byte_size < 0
        {
            return Err(err(format!(
                "implausible header: {hash_count} hashes, {chunks} chunks, {key_count} keys, {total_byte_size} bytes"
            )));
        }
        let hash_type = HashType::from_code(hash_code).ok_or_else(|| HFileError::Unsupported {
            path: path.clone(),
            what: format!("Bloom filter at offset {offset} uses hash type {hash_code}"),
        })?;
        let mut pos = 40;
        let (name_len, used) = vint::read_vlong(&body[pos..])
            .ok_or_else(|| err("comparator name is cut off".into()))?;
        pos += used;
        let name = usize::try_from(name_len)
            .ok()
            .and_then(|l| body.get(pos..pos.checked_add(l)?))
            .ok_or_else(|| err("comparator name is cut off".into()))?;
        pos += name.len();
        let order = match name {
            b"" => KeyOrder::Bytes,
            n if n == ROWCOL_COMPARATOR.as_bytes()
                || n == crate::trailer::KV_COMPARATOR.as_bytes()
                || n == b"org.apache.hadoop.hbase.CellComparator" =>
            {
                KeyOrder::Cells
            }
            other => {
                return Err(HFileError::Unsupported {
                    path: path.clone(),
                    what: format!(
                        "Bloom filter at offset {offset} orders chunks by {:?}",
                        String::from_utf8_lossy(other)
                    ),
                })
            }
        };
        let index = RootIndex::decode(&body[pos..], chunks as u32, order, false, path, offset)?;
        Ok(CompoundBloom {
            hash_type,
            hash_count: hash_count as u32,
            key_count: key_count as u64,
            max_keys: max_keys as u64,
            total_byte_size: total_byte_size as u64,
            order,
            index,
        })
    }

    /// Chunks.
    pub fn chunk_count(&self) -> usize {
        self.index.len()
    }

    /// True when the chunks are keyed by cells (ROWCOL).
    pub fn is_rowcol(&self) -> bool {
        self.order == KeyOrder::Cells
    }

    /// The chunk (offset, on-disk size) whose range holds `index_key`, or `None` when the key
    /// sorts before the first chunk (then it is not in the file).
    pub fn chunk_for(&self, index_key: &[u8]) -> Option<(u64, u32)> {
        let i = self.index.search(index_key)?;
        let (_, offset, size) = self.index.entry(i);
        Some((offset, size))
    }

    /// Whether `hash_key` may be in the chunk with these bits.
    pub fn chunk_contains(&self, bits: &[u8], hash_key: &[u8]) -> bool {
        let bit_count = bits.len() as i64 * 8;
        if bit_count == 0 {
            return false;
        }
        let h1 = self.hash_type.hash(hash_key, 0);
        let h2 = self.hash_type.hash(hash_key, h1);
        let mut composite = h1;
        for _ in 0..self.hash_count {
            let pos = ((composite as i64) % bit_count).unsigned_abs();
            if bits[(pos / 8) as usize] & (1 << (pos % 8)) == 0 {
                return false;
            }
            composite = composite.wrapping_add(h2);
        }
        true
    }
}

/// For ROWCOL: true when `key` (a first-on-row-col key) sorts after the file's last Bloom key.
pub(crate) fn after_last_cell_key(key: &[u8], last: &[u8]) -> bool {
    match (KeyRef::parse(key), KeyRef::parse(last)) {
        (Ok(a), Ok(b)) => compare_keys(&a, &b) == std::cmp::Ordering::Greater,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_sizing_matches_hbase_formulas() {
        let row = chunk_params(foldable_byte_size(128 * 1024 * 8, 7), 0.01f32 as f64, 7);
        assert_eq!(row.byte_size, 131_072);
        assert_eq!(row.hash_count, 7);
        assert_eq!(row.max_keys, 109_306);
        let err = (1.0 - (1.0 - 0.01f32 as f64).sqrt()) as f32;
        let rowcol = chunk_params(foldable_byte_size(128 * 1024 * 8, 7), err as f64, 7);
        assert_eq!((rowcol.hash_count, rowcol.max_keys), (8, 95_069));
    }

    #[test]
    fn rowcol_hash_key_layout() {
        let mut k = Vec::new();
        rowcol_hash_key(b"r1", b"q", &mut k);
        assert_eq!(
            k,
            [0, 2, b'r', b'1', 0, b'q', 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        );
    }

    #[test]
    fn writer_and_reader_agree_and_fold() {
        let mut w = CompoundBloomWriter::new(
            BloomType::Row,
            BloomOptions {
                block_size: 1024,
                ..Default::default()
            },
        );
        let rows: Vec<Vec<u8>> = (0..2700)
            .map(|i| format!("row{i:06}").into_bytes())
            .collect();
        let mut written = Vec::new();
        for r in &rows {
            w.add(r, b"q").unwrap();
            while w.should_write_block(false) {
                let mut b = Vec::new();
                w.write_inline_block(&mut b);
                written.push(b);
                w.block_written(written.len() as u64 * 10_000, 99);
            }
        }
        while w.should_write_block(true) {
            let mut b = Vec::new();
            w.write_inline_block(&mut b);
            written.push(b);
            w.block_written(written.len() as u64 * 10_000, 99);
        }
        assert!(written.len() > 2);
        // The last chunk holds few keys and was folded.
        assert!(written.last().unwrap().len() < written[0].len());
        let path: Arc<str> = "t".into();
        let bloom =
            CompoundBloom::decode(&w.meta_block(), &path, BlockType::GeneralBloomMeta, 0).unwrap();
        assert_eq!(bloom.key_count, 2700);
        assert_eq!(bloom.chunk_count(), written.len());
        for r in &rows {
            let (off, _) = bloom.chunk_for(r).unwrap();
            let bits = &written[(off / 10_000) as usize - 1];
            assert!(bloom.chunk_contains(bits, r));
        }
        let mut false_positives = 0;
        for i in 0..10_000 {
            let absent = format!("zzz{i}").into_bytes();
            if let Some((off, _)) = bloom.chunk_for(&absent) {
                false_positives +=
                    bloom.chunk_contains(&written[(off / 10_000) as usize - 1], &absent) as u32;
            }
        }
        assert!(false_positives < 500, "{false_positives}");
        assert!(bloom.chunk_for(b"a").is_none());
    }
}
