//! The multi-level block index (`HFileBlockIndex`): which block holds a key.
//!
//! Root format (the `IDXROOT2` block, the meta index, Bloom chunk indexes), per entry:
//! `offset i64 | onDiskSize i32 | vint keyLength | key`; the entry count comes from the trailer.
//! Non-root format (`IDXLEAF2`, `IDXINTE2`): `n i32 | n+1 entry offsets i32 | entries`, each
//! `offset i64 | onDiskSize i32 | key` with the offsets relative to the end of the offset table.
//! Sizes are whole blocks on disk (header, body, checksums). A data index with leaf blocks
//! appends 16 bytes of mid-key metadata to its root: `leafOffset i64 | leafOnDiskSize i32 |
//! entryInLeaf i32`.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::block_type::BlockType;
use crate::cell::{compare_keys, KeyRef};
use crate::error::{HFileError, Result};
use crate::vint;

/// Bytes of the mid-key metadata.
pub const MID_KEY_METADATA_SIZE: usize = 16;
/// Per-entry overhead in the non-root format: offset and size.
const NON_ROOT_ENTRY_OVERHEAD: usize = 12;

/// How index keys compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOrder {
    /// HBase's cell order over KeyValue keys (data index, ROWCOL Bloom chunks).
    Cells,
    /// Unsigned bytes (meta index, row Bloom chunks).
    Bytes,
}

impl KeyOrder {
    fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            KeyOrder::Bytes => a.cmp(b),
            KeyOrder::Cells => match (KeyRef::parse(a), KeyRef::parse(b)) {
                (Ok(a), Ok(b)) => compare_keys(&a, &b),
                // Keys are validated when an index is decoded; searches use valid keys.
                _ => a.cmp(b),
            },
        }
    }
}

/// One level's worth of entries being built.
#[derive(Default, Debug, Clone)]
pub(crate) struct IndexChunk {
    keys: Vec<Vec<u8>>,
    offsets: Vec<u64>,
    sizes: Vec<u32>,
    /// For entries pointing at leaf blocks: data blocks covered up to and including each.
    sub_entries_at: Vec<u64>,
    non_root_entries_size: usize,
    root_size: usize,
}

impl IndexChunk {
    pub(crate) fn add(&mut self, key: Vec<u8>, offset: u64, size: u32, sub_entries: Option<u64>) {
        self.non_root_entries_size += NON_ROOT_ENTRY_OVERHEAD + key.len();
        self.root_size += 12 + vint::vlong_size(key.len() as i64) + key.len();
        self.keys.push(key);
        self.offsets.push(offset);
        self.sizes.push(size);
        if let Some(n) = sub_entries {
            self.sub_entries_at.push(n);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    fn root_size(&self) -> usize {
        self.root_size
    }

    fn non_root_size(&self) -> usize {
        4 + 4 * (self.keys.len() + 1) + self.non_root_entries_size
    }

    pub(crate) fn encode_root(&self, out: &mut Vec<u8>) {
        for i in 0..self.keys.len() {
            out.extend_from_slice(&self.offsets[i].to_be_bytes());
            out.extend_from_slice(&self.sizes[i].to_be_bytes());
            vint::write_vlong(out, self.keys[i].len() as i64);
            out.extend_from_slice(&self.keys[i]);
        }
    }

    fn encode_non_root(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.keys.len() as u32).to_be_bytes());
        let mut at = 0usize;
        for k in &self.keys {
            out.extend_from_slice(&(at as u32).to_be_bytes());
            at += NON_ROOT_ENTRY_OVERHEAD + k.len();
        }
        out.extend_from_slice(&(at as u32).to_be_bytes());
        for i in 0..self.keys.len() {
            out.extend_from_slice(&self.offsets[i].to_be_bytes());
            out.extend_from_slice(&self.sizes[i].to_be_bytes());
            out.extend_from_slice(&self.keys[i]);
        }
    }

    /// Which entry holds the `k`-th data block (0-based).
    fn entry_by_sub_entry(&self, k: u64) -> usize {
        match self.sub_entries_at.binary_search(&k) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    /// The leaf block and entry of the middle data block (`getMidKeyMetadata`).
    fn mid_key_metadata(&self) -> Option<[u8; MID_KEY_METADATA_SIZE]> {
        let total = *self.sub_entries_at.last()?;
        if total == 0 {
            return None;
        }
        let mid = (total - 1) / 2;
        let e = self.entry_by_sub_entry(mid);
        let before = if e > 0 { self.sub_entries_at[e - 1] } else { 0 };
        let mut m = [0u8; MID_KEY_METADATA_SIZE];
        m[..8].copy_from_slice(&self.offsets[e].to_be_bytes());
        m[8..12].copy_from_slice(&self.sizes[e].to_be_bytes());
        m[12..].copy_from_slice(&((mid - before) as u32).to_be_bytes());
        Some(m)
    }
}

/// Writes blocks for the index writer: `(type, body) -> (offset, onDiskSizeWithHeader,
/// uncompressedSizeWithoutHeader)`.
pub(crate) type WriteBlock<'a> = dyn FnMut(BlockType, &[u8]) -> Result<(u64, u32, u32)> + 'a;

/// Builds a data index the way HBase's `BlockIndexWriter` does, so files get the same shape
/// (leaf blocks inline once a chunk reaches the chunk size, intermediate levels at close).
#[derive(Debug)]
pub(crate) struct BlockIndexWriter {
    max_chunk_size: usize,
    min_entries: usize,
    inline: Option<IndexChunk>,
    root: IndexChunk,
    levels: u32,
    total_entries: u64,
    leaf_first_key: Option<Vec<u8>>,
    total_uncompressed: u64,
}

impl BlockIndexWriter {
    pub(crate) fn new(max_chunk_size: usize, min_entries: usize) -> BlockIndexWriter {
        BlockIndexWriter {
            max_chunk_size,
            min_entries,
            inline: Some(IndexChunk::default()),
            root: IndexChunk::default(),
            levels: 1,
            total_entries: 0,
            leaf_first_key: None,
            total_uncompressed: 0,
        }
    }

    /// Records a finished data block.
    pub(crate) fn add_entry(&mut self, key: Vec<u8>, offset: u64, on_disk_size: u32) {
        self.inline
            .as_mut()
            .expect("no entries after the index was closed")
            .add(key, offset, on_disk_size, None);
        self.total_entries += 1;
    }

    /// Whether a leaf block is due (`closing`: the file is ending).
    pub(crate) fn should_write_block(&mut self, closing: bool) -> bool {
        let Some(inline) = &self.inline else {
            return false;
        };
        if inline.len() == 0 {
            return false;
        }
        if closing && self.root.len() == 0 {
            // No leaf written yet: the entries become a single-level root.
            self.root = self.inline.take().expect("checked");
            return false;
        }
        closing || inline.non_root_size() >= self.max_chunk_size
    }

    /// The leaf block body; remembers its first key for the root.
    pub(crate) fn write_inline_block(&mut self, out: &mut Vec<u8>) {
        let inline = self.inline.as_mut().expect("inline chunk");
        inline.encode_non_root(out);
        self.leaf_first_key = Some(inline.keys[0].clone());
        *inline = IndexChunk::default();
    }

    /// Records where the leaf block went.
    pub(crate) fn block_written(&mut self, offset: u64, on_disk_size: u32, uncompressed_size: u32) {
        self.total_uncompressed += uncompressed_size as u64;
        self.levels = 2.max(self.levels);
        let key = self
            .leaf_first_key
            .take()
            .expect("write_inline_block first");
        self.root
            .add(key, offset, on_disk_size, Some(self.total_entries));
    }

    /// Writes intermediate levels if the root is too big, then the root; returns the root's
    /// offset, the number of levels and the root entry count.
    pub(crate) fn write_index_blocks(
        &mut self,
        write: &mut WriteBlock<'_>,
    ) -> Result<(u64, u32, u32)> {
        let mid_key = if self.levels > 1 {
            self.root.mid_key_metadata()
        } else {
            None
        };
        if self.inline.is_some() {
            while self.root.root_size() > self.max_chunk_size
                && self.root.len() > self.min_entries
                && self.levels < 16
            {
                self.root = self.write_intermediate_level(write)?;
                self.levels += 1;
            }
        }
        let mut body = Vec::with_capacity(self.root.root_size() + MID_KEY_METADATA_SIZE);
        self.root.encode_root(&mut body);
        if let Some(m) = mid_key {
            body.extend_from_slice(&m);
        }
        let (offset, _, uncompressed) = write(BlockType::RootIndex, &body)?;
        self.total_uncompressed += uncompressed as u64;
        Ok((offset, self.levels, self.root.len() as u32))
    }

    fn write_intermediate_level(&mut self, write: &mut WriteBlock<'_>) -> Result<IndexChunk> {
        let mut parent = IndexChunk::default();
        let mut cur = IndexChunk::default();
        let level = std::mem::take(&mut self.root);
        for i in 0..level.len() {
            cur.add(
                level.keys[i].clone(),
                level.offsets[i],
                level.sizes[i],
                None,
            );
            if i >= self.min_entries && cur.root_size() >= self.max_chunk_size {
                self.write_intermediate_block(write, &mut parent, &mut cur)?;
            }
        }
        if cur.len() > 0 {
            self.write_intermediate_block(write, &mut parent, &mut cur)?;
        }
        Ok(parent)
    }

    fn write_intermediate_block(
        &mut self,
        write: &mut WriteBlock<'_>,
        parent: &mut IndexChunk,
        cur: &mut IndexChunk,
    ) -> Result<()> {
        let mut body = Vec::with_capacity(cur.non_root_size());
        cur.encode_non_root(&mut body);
        let (offset, on_disk, uncompressed) = write(BlockType::IntermediateIndex, &body)?;
        self.total_uncompressed += uncompressed as u64;
        parent.add(cur.keys[0].clone(), offset, on_disk, None);
        *cur = IndexChunk::default();
        Ok(())
    }

    /// Uncompressed bytes of all index blocks written (the trailer's
    /// `uncompressed_data_index_size`).
    pub(crate) fn total_uncompressed_size(&self) -> u64 {
        self.total_uncompressed
    }
}

/// A root-format index, decoded.
#[derive(Debug, Clone)]
pub struct RootIndex {
    keys: Vec<Vec<u8>>,
    offsets: Vec<u64>,
    sizes: Vec<u32>,
    order: KeyOrder,
    mid_key: Option<MidKeyMetadata>,
}

/// Where the middle data block's key is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MidKeyMetadata {
    /// Leaf index block offset.
    pub leaf_offset: u64,
    /// Its on-disk size.
    pub leaf_on_disk_size: u32,
    /// Entry within it.
    pub entry: u32,
}

impl RootIndex {
    /// Decodes `count` entries from `body`; `mid_key`: read the 16 bytes of mid-key metadata
    /// that follow when present. `block_offset` and `path` go into errors.
    pub fn decode(
        body: &[u8],
        count: u32,
        order: KeyOrder,
        mid_key: bool,
        path: &Arc<str>,
        block_offset: u64,
    ) -> Result<RootIndex> {
        let err = |reason: String| {
            HFileError::block(path, Some(BlockType::RootIndex), block_offset, reason)
        };
        let mut pos = 0usize;
        let n = count as usize;
        // Each entry takes at least 13 bytes: a corrupt count cannot make us allocate much.
        if n > body.len() / 13 + 1 {
            return Err(err(format!(
                "{n} entries cannot fit in {} bytes",
                body.len()
            )));
        }
        let mut idx = RootIndex {
            keys: Vec::with_capacity(n),
            offsets: Vec::with_capacity(n),
            sizes: Vec::with_capacity(n),
            order,
            mid_key: None,
        };
        for i in 0..n {
            let fixed = body
                .get(pos..pos + 12)
                .ok_or_else(|| err(format!("entry {i} at byte {pos} is cut off")))?;
            let offset = u64::from_be_bytes(fixed[..8].try_into().expect("8 bytes"));
            let size = u32::from_be_bytes(fixed[8..].try_into().expect("4 bytes"));
            pos += 12;
            let (len, used) = vint::read_vlong(&body[pos..])
                .ok_or_else(|| err(format!("key length of entry {i} is cut off")))?;
            pos += used;
            let key = usize::try_from(len)
                .ok()
                .and_then(|l| body.get(pos..pos.checked_add(l)?))
                .ok_or_else(|| {
                    err(format!(
                        "key of entry {i} ({len} bytes at byte {pos}) is cut off"
                    ))
                })?;
            pos += key.len();
            if order == KeyOrder::Cells {
                KeyRef::parse(key).map_err(|e| err(format!("key of entry {i}: {e}")))?;
            }
            if i > 0 && order.compare(&idx.keys[i - 1], key) == Ordering::Greater {
                return Err(err(format!("entry {i} is out of order")));
            }
            if offset > i64::MAX as u64 || size > i32::MAX as u32 {
                return Err(err(format!(
                    "entry {i} has offset {offset} and size {size}"
                )));
            }
            idx.keys.push(key.to_vec());
            idx.offsets.push(offset);
            idx.sizes.push(size);
        }
        if mid_key && body.len() - pos >= MID_KEY_METADATA_SIZE {
            let m = &body[pos..pos + MID_KEY_METADATA_SIZE];
            idx.mid_key = Some(MidKeyMetadata {
                leaf_offset: u64::from_be_bytes(m[..8].try_into().expect("8 bytes")),
                leaf_on_disk_size: u32::from_be_bytes(m[8..12].try_into().expect("4 bytes")),
                entry: u32::from_be_bytes(m[12..].try_into().expect("4 bytes")),
            });
        }
        Ok(idx)
    }

    /// Entries.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True without entries.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Entry `i`: key, block offset, block on-disk size.
    pub fn entry(&self, i: usize) -> (&[u8], u64, u32) {
        (&self.keys[i], self.offsets[i], self.sizes[i])
    }

    /// The last entry whose key is ≤ `key`, or `None` if `key` sorts before every entry.
    pub fn search(&self, key: &[u8]) -> Option<usize> {
        let i = self
            .keys
            .partition_point(|k| self.order.compare(k, key) != Ordering::Greater);
        i.checked_sub(1)
    }

    /// The mid-key metadata, for multi-level data indexes.
    pub fn mid_key(&self) -> Option<MidKeyMetadata> {
        self.mid_key
    }

    /// Sum of the keys' and entries' sizes, for reports.
    pub fn heap_size(&self) -> usize {
        self.keys.iter().map(|k| k.len() + 12).sum()
    }
}

/// A non-root index block body (leaf or intermediate), read in place.
pub struct NonRootIndex<'a> {
    body: &'a [u8],
    n: usize,
    order: KeyOrder,
    /// Row fingerprints of the entries (see [`build_entry_fingerprints`]), when the block has them.
    accel: Option<&'a [u8]>,
}

impl<'a> NonRootIndex<'a> {
    /// Checks the frame of `body` (entry count and offset table in bounds). Entries are read
    /// with checked slicing, so a damaged entry offset yields an empty key, never a panic, and
    /// a lookup costs O(log n), not a pass over every entry.
    pub fn parse(
        body: &'a [u8],
        order: KeyOrder,
        path: &Arc<str>,
        block_type: BlockType,
        offset: u64,
    ) -> Result<NonRootIndex<'a>> {
        let err = |reason: String| HFileError::block(path, Some(block_type), offset, reason);
        let n = body
            .get(..4)
            .map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")) as usize)
            .ok_or_else(|| err("entry count is cut off".into()))?;
        let table_end = n
            .checked_add(2)
            .and_then(|x| x.checked_mul(4))
            .ok_or_else(|| err(format!("{n} entries")))?;
        if n == 0 || table_end > body.len() {
            return Err(err(format!(
                "{n} entries do not fit in {} bytes",
                body.len()
            )));
        }
        let idx = NonRootIndex {
            body,
            n,
            order,
            accel: None,
        };
        if idx.mark(n) != body.len() - table_end {
            return Err(err(format!(
                "entries take {} bytes but the block has {} after the offset table",
                idx.mark(n),
                body.len() - table_end
            )));
        }
        Ok(idx)
    }

    fn mark(&self, i: usize) -> usize {
        let at = 4 + 4 * i;
        u32::from_be_bytes(self.body[at..at + 4].try_into().expect("4 bytes")) as usize
    }

    fn entries_start(&self) -> usize {
        4 + 4 * (self.n + 1)
    }

    /// Entries.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True without entries (never, once parsed).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Key of entry `i` (empty if the entry's offsets are damaged).
    pub fn key(&self, i: usize) -> &'a [u8] {
        let s = self.entries_start();
        let (from, to) = (
            s + self.mark(i) + NON_ROOT_ENTRY_OVERHEAD,
            s + self.mark(i + 1),
        );
        self.body.get(from..to).unwrap_or(&[])
    }

    /// Offset and on-disk size of the block entry `i` points at, if the entry is intact.
    pub fn target(&self, i: usize) -> Option<(u64, u32)> {
        let at = self.entries_start() + self.mark(i);
        let e = self.body.get(at..at + 12)?;
        Some((
            u64::from_be_bytes(e[..8].try_into().expect("8 bytes")),
            u32::from_be_bytes(e[8..].try_into().expect("4 bytes")),
        ))
    }

    /// The last entry whose key is ≤ `key`, or `None`.
    pub fn search(&self, key: &[u8]) -> Option<usize> {
        let (mut lo, mut hi) = (0usize, self.n);
        if let Some(range) = self.accel.and_then(|a| fingerprint_range(a, self.n, key)) {
            (lo, hi) = range;
            if lo == hi {
                return lo.checked_sub(1);
            }
        }
        // Full keys decide within the range the fingerprints could not tell apart.
        let base = lo;
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.order.compare(self.key(mid), key) == Ordering::Greater {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        if lo == base {
            return base.checked_sub(1);
        }
        Some(lo - 1)
    }

    /// Uses entry fingerprints built for this block to narrow searches.
    pub fn with_fingerprints(mut self, accel: Option<&'a [u8]>) -> NonRootIndex<'a> {
        if self.order == KeyOrder::Cells {
            self.accel = accel;
        }
        self
    }
}

/// Row fingerprints of a non-root index block's entries, kept in memory with the block:
/// `prefix length u16 | prefix | n u32 | n × u64` (little-endian), where the prefix is the row
/// bytes every entry shares and each u64 is [`crate::cell::row_fingerprint`] of the entry's row.
/// A search binary searches this small array and compares full keys only among entries whose
/// rows it cannot tell apart from the search key's.
pub fn build_entry_fingerprints(body: &[u8]) -> Option<Vec<u8>> {
    let path: Arc<str> = "".into();
    let idx = NonRootIndex::parse(body, KeyOrder::Cells, &path, BlockType::LeafIndex, 0).ok()?;
    let row = |i: usize| KeyRef::parse(idx.key(i)).ok().map(|k| k.row());
    let (first, last) = (row(0)?, row(idx.len() - 1)?);
    let common = first
        .iter()
        .zip(last)
        .take_while(|(a, b)| a == b)
        .count()
        .min(u16::MAX as usize);
    let mut out = Vec::with_capacity(6 + common + idx.len() * 8);
    out.extend_from_slice(&(common as u16).to_le_bytes());
    out.extend_from_slice(&first[..common]);
    out.extend_from_slice(&(idx.len() as u32).to_le_bytes());
    for i in 0..idx.len() {
        out.extend_from_slice(&crate::cell::row_fingerprint(row(i)?, common).to_le_bytes());
    }
    Some(out)
}

/// The first `i` in `0..n` for which `below(i)` is false, where `below` is true up to some
/// point and false after it: a binary search without branches on the comparisons. A search
/// key falls at an unpredictable place, so a branch per probe was mispredicted about half the
/// time, costing more than the probe's load from cache; a conditional move costs nothing.
#[inline]
pub(crate) fn first_not_below(n: usize, below: impl Fn(usize) -> bool) -> usize {
    if n == 0 {
        return 0;
    }
    let (mut base, mut size) = (0usize, n);
    while size > 1 {
        let half = size / 2;
        let mid = base + half;
        base = std::hint::select_unpredictable(below(mid - 1), mid, base);
        size -= half;
    }
    base + usize::from(below(base))
}

/// The entries `[lo, hi)` whose rows may equal `key`'s row: entries before `lo` have smaller
/// rows (so smaller keys), entries from `hi` on larger ones. `None` if `accel` does not match.
fn fingerprint_range(accel: &[u8], n: usize, key: &[u8]) -> Option<(usize, usize)> {
    let p = u16::from_le_bytes(accel.get(..2)?.try_into().ok()?) as usize;
    let prefix = accel.get(2..2 + p)?;
    let count = u32::from_le_bytes(accel.get(2 + p..6 + p)?.try_into().ok()?) as usize;
    let fps = accel.get(6 + p..)?;
    if count != n || fps.len() != n * 8 {
        return None;
    }
    let fp = |i: usize| u64::from_le_bytes(fps[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let row = KeyRef::parse(key).ok()?.row();
    let head = &row[..row.len().min(p)];
    match crate::cell::compare_bytes(head, prefix) {
        Ordering::Less => return Some((0, 0)),
        Ordering::Greater => return Some((n, n)),
        Ordering::Equal => {}
    }
    let target = crate::cell::row_fingerprint(row, p);
    let lower = first_not_below(n, |i| fp(i) < target);
    // Usually no entry or one shares the key's fingerprint: gallop from `lower` rather than
    // search all of `[lower, n)` again.
    let upper = {
        let (mut lo, mut step) = (lower, 1);
        while lo < n && fp(lo) <= target {
            lo += step;
            step *= 2;
        }
        let (mut lo, mut hi) = (lo.saturating_sub(step / 2).max(lower), lo.min(n));
        while lo < hi {
            let mid = (lo + hi) / 2;
            if fp(mid) <= target {
                lo = mid + 1
            } else {
                hi = mid
            }
        }
        lo
    };
    Some((lower, upper))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::{make_key, CellType};

    #[test]
    fn first_not_below_agrees_with_partition_point() {
        for n in 0..70usize {
            let v: Vec<usize> = (0..n).map(|i| i * 2).collect();
            for t in 0..(2 * n + 3) {
                let want = v.partition_point(|&x| x < t);
                assert_eq!(first_not_below(n, |i| v[i] < t), want, "n {n} t {t}");
            }
        }
    }

    fn key(i: u32) -> Vec<u8> {
        make_key(
            format!("row{i:08}").as_bytes(),
            b"f",
            b"q",
            1,
            CellType::Put.code(),
        )
        .unwrap()
    }

    #[test]
    fn non_root_layout_and_search() {
        let mut c = IndexChunk::default();
        for i in 0..5 {
            c.add(key(i * 10), 1000 * i as u64, 500 + i, None);
        }
        let mut body = Vec::new();
        c.encode_non_root(&mut body);
        assert_eq!(body.len(), c.non_root_size());
        assert_eq!(&body[..4], &5u32.to_be_bytes());
        let path: Arc<str> = "t".into();
        let idx =
            NonRootIndex::parse(&body, KeyOrder::Cells, &path, BlockType::LeafIndex, 0).unwrap();
        assert_eq!(idx.len(), 5);
        assert_eq!(idx.search(&key(0)), Some(0));
        assert_eq!(idx.search(&key(15)), Some(1));
        assert_eq!(idx.search(&key(99)), Some(4));
        assert_eq!(idx.search(&make_key(b"a", b"", b"", 0, 4).unwrap()), None);
        assert_eq!(idx.target(3), Some((3000, 503)));
        // The fingerprints give the same answers.
        let fps = build_entry_fingerprints(&body).unwrap();
        let fast = NonRootIndex::parse(&body, KeyOrder::Cells, &path, BlockType::LeafIndex, 0)
            .unwrap()
            .with_fingerprints(Some(&fps));
        for probe in (0..60).map(key).chain([
            make_key(b"a", b"", b"", 0, 4).unwrap(),
            make_key(b"zz", b"", b"", 0, 4).unwrap(),
        ]) {
            assert_eq!(fast.search(&probe), idx.search(&probe));
        }
        for cut in 0..body.len() {
            assert!(
                NonRootIndex::parse(
                    &body[..cut],
                    KeyOrder::Cells,
                    &path,
                    BlockType::LeafIndex,
                    0
                )
                .is_err()
                    || cut == body.len()
            );
        }
    }

    #[test]
    fn root_round_trip_and_search() {
        let mut c = IndexChunk::default();
        for i in 0..100 {
            c.add(key(i * 2), i as u64 * 10, 7, Some(i as u64 + 1));
        }
        let mut body = Vec::new();
        c.encode_root(&mut body);
        assert_eq!(body.len(), c.root_size());
        body.extend_from_slice(&c.mid_key_metadata().unwrap());
        let path: Arc<str> = "t".into();
        let r = RootIndex::decode(&body, 100, KeyOrder::Cells, true, &path, 0).unwrap();
        assert_eq!(r.len(), 100);
        assert_eq!(r.search(&key(3)), Some(1));
        assert_eq!(r.search(&key(198)), Some(99));
        // 100 single-block leaves: the middle data block (49) is entry 0 of leaf 49.
        assert_eq!(
            r.mid_key(),
            Some(MidKeyMetadata {
                leaf_offset: 490,
                leaf_on_disk_size: 7,
                entry: 0
            })
        );
        assert!(RootIndex::decode(&body, 101, KeyOrder::Cells, true, &path, 0).is_err());
        assert!(RootIndex::decode(&body, u32::MAX, KeyOrder::Cells, true, &path, 0).is_err());
    }

    #[test]
    fn writer_builds_leaves_and_intermediate_levels_like_hbase() {
        // Tiny chunks force three levels.
        let mut w = BlockIndexWriter::new(200, 2);
        let mut blocks: Vec<(BlockType, Vec<u8>)> = Vec::new();
        let mut write = |t: BlockType, body: &[u8]| -> Result<(u64, u32, u32)> {
            blocks.push((t, body.to_vec()));
            Ok((
                blocks.len() as u64 * 1000,
                body.len() as u32 + 33,
                body.len() as u32,
            ))
        };
        for i in 0..60u32 {
            w.add_entry(key(i), i as u64 * 100, 90);
            while w.should_write_block(false) {
                let mut body = Vec::new();
                w.write_inline_block(&mut body);
                let (o, s, u) = write(BlockType::LeafIndex, &body).unwrap();
                w.block_written(o, s, u);
            }
        }
        while w.should_write_block(true) {
            let mut body = Vec::new();
            w.write_inline_block(&mut body);
            let (o, s, u) = write(BlockType::LeafIndex, &body).unwrap();
            w.block_written(o, s, u);
        }
        let (_, levels, root_entries) = w.write_index_blocks(&mut write).unwrap();
        assert!(levels >= 3, "{levels}");
        assert!(blocks
            .iter()
            .any(|(t, _)| *t == BlockType::IntermediateIndex));
        assert_eq!(blocks.last().unwrap().0, BlockType::RootIndex);
        assert!(root_entries >= 1);
    }
}
