//! Cells in HBase's KeyValue layout, and HBase's cell order (`CellComparatorImpl`).
//!
//! A key is `rowLength u16 | row | familyLength u8 | family | qualifier | timestamp i64 | type
//! u8`, big-endian; the qualifier's length is what remains. Index entries, file info and
//! Bloom chunk indexes store keys in exactly this form.

use std::cmp::Ordering;
use std::fmt;

use bytes::Bytes;

/// Largest row HBase accepts (`Short.MAX_VALUE`).
pub const MAX_ROW_LEN: usize = i16::MAX as usize;
/// Largest family HBase accepts (`Byte.MAX_VALUE`).
pub const MAX_FAMILY_LEN: usize = i8::MAX as usize;
/// Largest tags section (an unsigned short).
pub const MAX_TAGS_LEN: usize = u16::MAX as usize;
/// Key bytes besides row, family and qualifier: row length, family length, timestamp, type.
pub const KEY_INFRASTRUCTURE: usize = 2 + 1 + 8 + 1;
/// `HConstants.LATEST_TIMESTAMP`.
pub const LATEST_TIMESTAMP: i64 = i64::MAX;

/// The type of a cell (`KeyValue.Type`), ordered in a file from `Maximum` down to `Minimum`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CellType {
    /// Sorts after every real cell of its row/column; used by searches.
    Minimum = 0,
    /// A value.
    Put = 4,
    /// Deletes one version of a column.
    Delete = 8,
    /// Deletes one version of every column of a family.
    DeleteFamilyVersion = 10,
    /// Deletes all versions of a column up to a timestamp.
    DeleteColumn = 12,
    /// Deletes all columns of a family up to a timestamp.
    DeleteFamily = 14,
    /// Sorts before every real cell of its row/column; used by searches and index keys.
    Maximum = 255,
}

impl CellType {
    /// The type for a code, if it is one of HBase's.
    pub fn from_code(code: u8) -> Option<CellType> {
        Some(match code {
            0 => CellType::Minimum,
            4 => CellType::Put,
            8 => CellType::Delete,
            10 => CellType::DeleteFamilyVersion,
            12 => CellType::DeleteColumn,
            14 => CellType::DeleteFamily,
            255 => CellType::Maximum,
            _ => return None,
        })
    }

    /// The code stored in keys.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// HBase's name for the type.
    pub fn name(self) -> &'static str {
        match self {
            CellType::Minimum => "Minimum",
            CellType::Put => "Put",
            CellType::Delete => "Delete",
            CellType::DeleteFamilyVersion => "DeleteFamilyVersion",
            CellType::DeleteColumn => "DeleteColumn",
            CellType::DeleteFamily => "DeleteFamily",
            CellType::Maximum => "Maximum",
        }
    }
}

/// Why bytes are not a valid key or cell.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CellError {
    /// The key is shorter than its own length fields say.
    #[error("key of {len} bytes is too short: row length {row_len} and family length {family_len} need at least {needed}")]
    KeyTooShort {
        /// Key length.
        len: usize,
        /// Declared row length.
        row_len: usize,
        /// Declared family length.
        family_len: usize,
        /// Bytes those lengths need.
        needed: usize,
    },
    /// A row over HBase's limit.
    #[error("row of {0} bytes is longer than HBase's limit of 32767")]
    RowTooLong(usize),
    /// A family over HBase's limit.
    #[error("family of {0} bytes is longer than HBase's limit of 127")]
    FamilyTooLong(usize),
    /// Tags over HBase's limit.
    #[error("tags of {0} bytes are longer than HBase's limit of 65535")]
    TagsTooLong(usize),
    /// A cell that does not fit in its block.
    #[error("cell at block offset {offset} is truncated: {what}")]
    Truncated {
        /// Offset within the block's data.
        offset: usize,
        /// What did not fit.
        what: &'static str,
    },
}

/// A key in KeyValue key format, borrowed.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyRef<'a> {
    bytes: &'a [u8],
    row_len: usize,
    family_len: usize,
}

impl<'a> KeyRef<'a> {
    /// Checks the length fields of `bytes` and wraps them.
    #[inline]
    pub fn parse(bytes: &'a [u8]) -> Result<KeyRef<'a>, CellError> {
        let too_short = |row_len, family_len| CellError::KeyTooShort {
            len: bytes.len(),
            row_len,
            family_len,
            needed: row_len + family_len + KEY_INFRASTRUCTURE,
        };
        if bytes.len() < KEY_INFRASTRUCTURE {
            return Err(too_short(0, 0));
        }
        let row_len = u16::from_be_bytes([bytes[0], bytes[1]]) as usize;
        let family_len = *bytes
            .get(2 + row_len)
            .ok_or_else(|| too_short(row_len, 0))? as usize;
        if row_len + family_len + KEY_INFRASTRUCTURE > bytes.len() {
            return Err(too_short(row_len, family_len));
        }
        Ok(KeyRef {
            bytes,
            row_len,
            family_len,
        })
    }

    /// Wraps a key already known to be valid (built by [`make_key`] or checked before): reads
    /// the two length fields without the checks, which sorting a memstore pays per comparison.
    #[inline]
    pub(crate) fn from_valid(bytes: &'a [u8]) -> KeyRef<'a> {
        let row_len = u16::from_be_bytes([bytes[0], bytes[1]]) as usize;
        KeyRef {
            bytes,
            row_len,
            family_len: bytes[2 + row_len] as usize,
        }
    }

    /// The serialized key.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The row.
    #[inline]
    pub fn row(&self) -> &'a [u8] {
        &self.bytes[2..2 + self.row_len]
    }

    /// The column family.
    #[inline]
    pub fn family(&self) -> &'a [u8] {
        let start = 3 + self.row_len;
        &self.bytes[start..start + self.family_len]
    }

    /// The column qualifier.
    #[inline]
    pub fn qualifier(&self) -> &'a [u8] {
        let start = 3 + self.row_len + self.family_len;
        &self.bytes[start..self.bytes.len() - 9]
    }

    /// The timestamp.
    #[inline]
    pub fn timestamp(&self) -> i64 {
        let end = self.bytes.len() - 1;
        i64::from_be_bytes(self.bytes[end - 8..end].try_into().expect("8 bytes"))
    }

    /// The raw type code.
    #[inline]
    pub fn type_code(&self) -> u8 {
        self.bytes[self.bytes.len() - 1]
    }

    /// The type, if the code is one of HBase's.
    #[inline]
    pub fn cell_type(&self) -> Option<CellType> {
        CellType::from_code(self.type_code())
    }

    /// True for HBase's "last on row" search key: type Minimum, no family, no qualifier.
    fn is_last_on_row(&self) -> bool {
        self.type_code() == CellType::Minimum.code()
            && self.family_len == 0
            && self.bytes.len() == self.row_len + KEY_INFRASTRUCTURE
    }
}

impl fmt::Debug for KeyRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}:{}/{}/{}",
            Escaped(self.row()),
            Escaped(self.family()),
            Escaped(self.qualifier()),
            self.timestamp(),
            self.cell_type().map_or("?", CellType::name)
        )
    }
}

impl fmt::Display for KeyRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Bytes printed as HBase's `Bytes.toStringBinary` does: printable ASCII as is, the rest as
/// `\xNN`.
pub struct Escaped<'a>(pub &'a [u8]);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &b in self.0 {
            if (0x20..0x7F).contains(&b) && b != b'\\' {
                write!(f, "{}", b as char)?;
            } else {
                write!(f, "\\x{b:02X}")?;
            }
        }
        Ok(())
    }
}

/// HBase's key order (`CellComparatorImpl`, ignoring sequence ids): row, then family, then
/// qualifier ascending as unsigned bytes; timestamp descending; type code descending. A
/// "last on row" key sorts after every other key of its row.
#[inline]
pub fn compare_keys(a: &KeyRef<'_>, b: &KeyRef<'_>) -> Ordering {
    compare_bytes(a.row(), b.row()).then_with(|| {
        if a.is_last_on_row() {
            return Ordering::Greater;
        }
        if b.is_last_on_row() {
            return Ordering::Less;
        }
        compare_bytes(a.family(), b.family())
            .then_with(|| compare_bytes(a.qualifier(), b.qualifier()))
            .then_with(|| b.timestamp().cmp(&a.timestamp()))
            .then_with(|| b.type_code().cmp(&a.type_code()))
    })
}

/// Unsigned lexicographic order, inlined and eight bytes at a time: rows, families and
/// qualifiers are short, and a call into `memcmp` per comparison dominated seeks.
#[inline]
pub fn compare_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_be_bytes(a[i..i + 8].try_into().expect("8 bytes"));
        let y = u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        if x != y {
            return x.cmp(&y);
        }
        i += 8;
    }
    while i < n {
        if a[i] != b[i] {
            return a[i].cmp(&b[i]);
        }
        i += 1;
    }
    a.len().cmp(&b.len())
}

/// Byte equality without a call into `memcmp` (see [`compare_bytes`]): for the rows and
/// family names a scan compares for every cell.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && compare_bytes(a, b) == Ordering::Equal
}

/// [`compare_keys`] on serialized keys that are known to be valid.
pub fn compare_key_bytes(a: &[u8], b: &[u8]) -> Result<Ordering, CellError> {
    Ok(compare_keys(&KeyRef::parse(a)?, &KeyRef::parse(b)?))
}

/// A cell borrowed from a block (or from a [`KeyValue`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CellRef<'a> {
    /// The key.
    pub key: KeyRef<'a>,
    /// The value.
    pub value: &'a [u8],
    /// The tags section (a sequence of `length u16 | type u8 | value`), empty if none.
    pub tags: &'a [u8],
    /// The MVCC write number / sequence id (0 when the file does not store them).
    pub sequence_id: u64,
}

impl<'a> CellRef<'a> {
    /// The row.
    #[inline]
    pub fn row(&self) -> &'a [u8] {
        self.key.row()
    }
    /// The family.
    #[inline]
    pub fn family(&self) -> &'a [u8] {
        self.key.family()
    }
    /// The qualifier.
    #[inline]
    pub fn qualifier(&self) -> &'a [u8] {
        self.key.qualifier()
    }
    /// The timestamp.
    #[inline]
    pub fn timestamp(&self) -> i64 {
        self.key.timestamp()
    }
    /// The type code.
    #[inline]
    pub fn type_code(&self) -> u8 {
        self.key.type_code()
    }

    /// Bytes of this cell in KeyValue form (lengths, key, value, and tags if any).
    #[inline]
    pub fn serialized_len(&self) -> usize {
        8 + self.key.as_bytes().len()
            + self.value.len()
            + if self.tags.is_empty() {
                0
            } else {
                2 + self.tags.len()
            }
    }

    /// An owned copy.
    pub fn to_owned(&self) -> KeyValue {
        let key = self.key.as_bytes();
        let mut buf = Vec::with_capacity(key.len() + self.value.len() + self.tags.len());
        buf.extend_from_slice(key);
        buf.extend_from_slice(self.value);
        buf.extend_from_slice(self.tags);
        KeyValue {
            buf: Bytes::from(buf),
            key_len: key.len() as u32,
            value_len: self.value.len() as u32,
            sequence_id: self.sequence_id,
        }
    }

    /// An owned cell that shares `block`'s memory when this cell lies in it as a KeyValue
    /// does (key then value, no tags): no copy, only a reference count, as HBase's
    /// off-heap block cache hands out cells. Otherwise a copy ([`to_owned`](Self::to_owned)).
    /// The result keeps the whole block alive while it lives.
    pub fn to_owned_in(&self, block: &Bytes) -> KeyValue {
        let key = self.key.as_bytes();
        let (start, block_start) = (key.as_ptr() as usize, block.as_ptr() as usize);
        let end = start + key.len() + self.value.len();
        let inside = start >= block_start && end <= block_start + block.len();
        let adjacent = self.value.as_ptr() as usize == start + key.len();
        if !(self.tags.is_empty() && inside && adjacent) {
            return self.to_owned();
        }
        KeyValue {
            buf: block.slice(start - block_start..end - block_start),
            key_len: key.len() as u32,
            value_len: self.value.len() as u32,
            sequence_id: self.sequence_id,
        }
    }
}

impl fmt::Debug for CellRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?}/vlen={}/seqid={}",
            self.key,
            self.value.len(),
            self.sequence_id
        )
    }
}

/// What a data block's cells carry besides key and value (from the file's info): a tags
/// section (`MAX_TAGS_LEN` present) and a sequence id (`KEY_VALUE_VERSION` = 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellLayout {
    /// Every cell has `tagsLength u16 | tags`.
    pub tags: bool,
    /// Every cell ends with its sequence id as a Hadoop vlong.
    pub mvcc: bool,
}

/// Parses the cell at `pos` of a data block body: `keyLength i32 | valueLength i32 | key |
/// value | [tags] | [sequence id]`. Returns the cell and where the next one starts.
#[inline]
pub fn parse_block_cell(
    data: &[u8],
    pos: usize,
    layout: CellLayout,
) -> Result<(CellRef<'_>, usize), String> {
    let lens = data.get(pos..pos + 8).ok_or("lengths cut off")?;
    let klen = u32::from_be_bytes(lens[..4].try_into().expect("4 bytes")) as usize;
    let vlen = u32::from_be_bytes(lens[4..].try_into().expect("4 bytes")) as usize;
    let key_start = pos + 8;
    let value_start = key_start.checked_add(klen).ok_or("key length overflows")?;
    let mut at = value_start
        .checked_add(vlen)
        .ok_or("value length overflows")?;
    if at > data.len() {
        return Err(format!(
            "key of {klen} and value of {vlen} bytes run past the block"
        ));
    }
    let key = KeyRef::parse(&data[key_start..value_start]).map_err(|e| e.to_string())?;
    let value = &data[value_start..at];
    let mut tags: &[u8] = &[];
    if layout.tags {
        let t = data.get(at..at + 2).ok_or("tags length cut off")?;
        let tlen = u16::from_be_bytes([t[0], t[1]]) as usize;
        tags = data.get(at + 2..at + 2 + tlen).ok_or("tags cut off")?;
        at += 2 + tlen;
    }
    let mut sequence_id = 0;
    if layout.mvcc {
        let (v, used) = crate::vint::read_vlong(&data[at..]).ok_or("sequence id cut off")?;
        sequence_id = v as u64;
        at += used;
    }
    Ok((
        CellRef {
            key,
            value,
            tags,
            sequence_id,
        },
        at,
    ))
}

/// An in-memory index of a data block's cells, so a seek binary searches a small contiguous
/// array instead of walking (or jumping around) a 64 KiB block in memory: `prefix length u16 |
/// prefix (the row bytes every cell shares) | n u32 | n × (offset u32, row fingerprint u64)`,
/// little-endian. `None` if the block does not parse.
pub fn build_cell_index(data: &[u8], layout: CellLayout) -> Option<Vec<u8>> {
    // One pass over the cells: their offsets and rows; then the fingerprints.
    let mut cells: Vec<(u32, &[u8])> = Vec::with_capacity(data.len() / 512 + 1);
    let mut pos = 0;
    while pos < data.len() {
        let (cell, next) = parse_block_cell(data, pos, layout).ok()?;
        cells.push((u32::try_from(pos).ok()?, cell.row()));
        pos = next;
    }
    let (first, last) = (cells.first()?.1, cells.last()?.1);
    // Rows are sorted, so the first and last share the prefix every row of the block shares.
    let common = first
        .iter()
        .zip(last)
        .take_while(|(a, b)| a == b)
        .count()
        .min(u16::MAX as usize);
    let mut index = Vec::with_capacity(6 + common + cells.len() * 12);
    index.extend_from_slice(&(common as u16).to_le_bytes());
    index.extend_from_slice(&first[..common]);
    index.extend_from_slice(&(cells.len() as u32).to_le_bytes());
    for (o, row) in cells {
        index.extend_from_slice(&o.to_le_bytes());
        index.extend_from_slice(&row_fingerprint(row, common).to_le_bytes());
    }
    Some(index)
}

/// Eight bytes of `row` after its first `skip`, zero-padded, as a big-endian number: ordered
/// like the rows themselves (ties need a full compare).
#[inline]
pub fn row_fingerprint(row: &[u8], skip: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(rest) = row.get(skip..) {
        let n = rest.len().min(8);
        b[..n].copy_from_slice(&rest[..n]);
    }
    u64::from_be_bytes(b)
}

/// HBase's full cell order: [`compare_keys`], then sequence id descending.
pub fn compare_cells(a: &CellRef<'_>, b: &CellRef<'_>) -> Ordering {
    compare_keys(&a.key, &b.key).then_with(|| b.sequence_id.cmp(&a.sequence_id))
}

/// An owned cell.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct KeyValue {
    /// The key, then the value, then the tags section: one allocation per cell, which is
    /// what a memstore holds millions of; or a part of a cached block (see
    /// [`CellRef::to_owned_in`]), which a read returns without copying.
    buf: Bytes,
    key_len: u32,
    value_len: u32,
    sequence_id: u64,
}

impl KeyValue {
    /// A cell, checked against HBase's limits.
    pub fn new(
        row: &[u8],
        family: &[u8],
        qualifier: &[u8],
        timestamp: i64,
        cell_type: CellType,
        value: &[u8],
    ) -> Result<KeyValue, CellError> {
        let mut buf = Vec::with_capacity(
            KEY_INFRASTRUCTURE + row.len() + family.len() + qualifier.len() + value.len(),
        );
        write_key(
            &mut buf,
            row,
            family,
            qualifier,
            timestamp,
            cell_type.code(),
        )?;
        let key_len = buf.len() as u32;
        buf.extend_from_slice(value);
        Ok(KeyValue {
            // Exactly as long as its capacity: the conversion takes the allocation over.
            buf: Bytes::from(buf),
            key_len,
            value_len: value.len() as u32,
            sequence_id: 0,
        })
    }

    /// A Put.
    pub fn put(
        row: &[u8],
        family: &[u8],
        qualifier: &[u8],
        timestamp: i64,
        value: &[u8],
    ) -> Result<KeyValue, CellError> {
        KeyValue::new(row, family, qualifier, timestamp, CellType::Put, value)
    }

    /// Sets the tags section (already serialized tags).
    pub fn with_tags(mut self, tags: Vec<u8>) -> Result<KeyValue, CellError> {
        if tags.len() > MAX_TAGS_LEN {
            return Err(CellError::TagsTooLong(tags.len()));
        }
        let kv = self.key_len as usize + self.value_len as usize;
        let mut buf = Vec::with_capacity(kv + tags.len());
        buf.extend_from_slice(&self.buf[..kv]);
        buf.extend_from_slice(&tags);
        self.buf = Bytes::from(buf);
        Ok(self)
    }

    /// Sets the sequence id.
    pub fn with_sequence_id(mut self, sequence_id: u64) -> KeyValue {
        self.sequence_id = sequence_id;
        self
    }

    /// A borrowed view.
    #[inline]
    pub fn as_cell(&self) -> CellRef<'_> {
        let (k, v) = (self.key_len as usize, self.value_len as usize);
        CellRef {
            key: KeyRef::from_valid(&self.buf[..k]),
            value: &self.buf[k..k + v],
            tags: &self.buf[k + v..],
            sequence_id: self.sequence_id,
        }
    }

    /// The serialized key.
    #[inline]
    pub fn key(&self) -> KeyRef<'_> {
        KeyRef::from_valid(&self.buf[..self.key_len as usize])
    }

    /// The sequence id.
    #[inline]
    pub fn sequence_id(&self) -> u64 {
        self.sequence_id
    }
}

impl fmt::Debug for KeyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.as_cell(), f)
    }
}

/// Serializes a key into `key` (cleared first), reusing its allocation.
pub fn write_key(
    key: &mut Vec<u8>,
    row: &[u8],
    family: &[u8],
    qualifier: &[u8],
    timestamp: i64,
    type_code: u8,
) -> Result<(), CellError> {
    if row.len() > MAX_ROW_LEN {
        return Err(CellError::RowTooLong(row.len()));
    }
    if family.len() > MAX_FAMILY_LEN {
        return Err(CellError::FamilyTooLong(family.len()));
    }
    key.clear();
    key.extend_from_slice(&(row.len() as u16).to_be_bytes());
    key.extend_from_slice(row);
    key.push(family.len() as u8);
    key.extend_from_slice(family);
    key.extend_from_slice(qualifier);
    key.extend_from_slice(&timestamp.to_be_bytes());
    key.push(type_code);
    Ok(())
}

/// Serializes a key.
pub fn make_key(
    row: &[u8],
    family: &[u8],
    qualifier: &[u8],
    timestamp: i64,
    type_code: u8,
) -> Result<Vec<u8>, CellError> {
    let mut key =
        Vec::with_capacity(KEY_INFRASTRUCTURE + row.len() + family.len() + qualifier.len());
    write_key(&mut key, row, family, qualifier, timestamp, type_code)?;
    Ok(key)
}

/// HBase's `createFirstOnRow`: sorts before every cell of `row`.
pub fn first_on_row(row: &[u8]) -> Result<Vec<u8>, CellError> {
    make_key(row, &[], &[], LATEST_TIMESTAMP, CellType::Maximum.code())
}

/// HBase's `createFirstOnRowCol`: sorts before every version of the column.
pub fn first_on_row_col(row: &[u8], family: &[u8], qualifier: &[u8]) -> Result<Vec<u8>, CellError> {
    make_key(
        row,
        family,
        qualifier,
        LATEST_TIMESTAMP,
        CellType::Maximum.code(),
    )
}

/// HBase's `createLastOnRow`: sorts after every cell of `row`.
pub fn last_on_row(row: &[u8]) -> Result<Vec<u8>, CellError> {
    make_key(row, &[], &[], LATEST_TIMESTAMP, CellType::Minimum.code())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A data block body holding `cells` (key, value, tags) in the tags layout.
    fn block_of(cells: &[(Vec<u8>, &[u8], &[u8])]) -> Bytes {
        let mut b = Vec::new();
        for (k, v, t) in cells {
            b.extend_from_slice(&(k.len() as u32).to_be_bytes());
            b.extend_from_slice(&(v.len() as u32).to_be_bytes());
            b.extend_from_slice(k);
            b.extend_from_slice(v);
            b.extend_from_slice(&(t.len() as u16).to_be_bytes());
            b.extend_from_slice(t);
        }
        Bytes::from(b)
    }

    #[test]
    fn a_cell_owned_from_a_block_shares_it_unless_it_has_tags() {
        let tags: &[u8] = &[1, 0, 3, b'x', b'y', b'z'];
        let block = block_of(&[
            (key("r1", "f", "q", 5, CellType::Put), b"value-one", b""),
            (key("r2", "f", "q", 6, CellType::Put), b"value-two", tags),
        ]);
        let layout = CellLayout {
            tags: true,
            mvcc: false,
        };
        let (first, next) = parse_block_cell(&block, 0, layout).unwrap();
        let (second, _) = parse_block_cell(&block, next, layout).unwrap();
        let in_block = |kv: &KeyValue| {
            let p = kv.buf.as_ptr() as usize;
            p >= block.as_ptr() as usize && p < block.as_ptr() as usize + block.len()
        };
        let shared = first.to_owned_in(&block);
        assert_eq!(shared, first.to_owned());
        assert!(in_block(&shared));
        assert_eq!(shared.as_cell().value, b"value-one");
        let copied = second.to_owned_in(&block);
        assert_eq!(copied, second.to_owned());
        assert_eq!(copied.as_cell().tags, tags);
        assert!(!in_block(&copied));
        // A cell that is not in the block given is copied, not sliced out of it.
        let other = block_of(&[(key("r1", "f", "q", 5, CellType::Put), b"value-one", b"")]);
        let elsewhere = first.to_owned_in(&other);
        assert_eq!(elsewhere, first.to_owned());
        assert!(!in_block(&elsewhere));
        let p = elsewhere.buf.as_ptr() as usize;
        assert!(!(p >= other.as_ptr() as usize && p < other.as_ptr() as usize + other.len()));
        // The shared cell outlives the block handle it came from.
        drop(block);
        assert_eq!(shared.as_cell().row(), b"r1");
    }

    fn key(row: &str, fam: &str, qual: &str, ts: i64, t: CellType) -> Vec<u8> {
        make_key(
            row.as_bytes(),
            fam.as_bytes(),
            qual.as_bytes(),
            ts,
            t.code(),
        )
        .unwrap()
    }

    fn cmp(a: &[u8], b: &[u8]) -> Ordering {
        compare_key_bytes(a, b).unwrap()
    }

    #[test]
    fn layout_matches_keyvalue() {
        let k = key("r1", "f", "q", 5, CellType::Put);
        assert_eq!(
            k,
            [0, 2, b'r', b'1', 1, b'f', b'q', 0, 0, 0, 0, 0, 0, 0, 5, 4]
        );
        let r = KeyRef::parse(&k).unwrap();
        assert_eq!(
            (r.row(), r.family(), r.qualifier()),
            (&b"r1"[..], &b"f"[..], &b"q"[..])
        );
        assert_eq!((r.timestamp(), r.cell_type()), (5, Some(CellType::Put)));
    }

    #[test]
    fn order_follows_cell_comparator_impl() {
        let mut keys = vec![
            key("b", "f", "q", 1, CellType::Put),
            key("a", "f", "q", 1, CellType::Put),
            key("a", "f", "q", 2, CellType::Put),
            key("a", "f", "q", 2, CellType::DeleteColumn),
            key("a", "f", "", 0, CellType::DeleteFamily),
            key("a", "g", "", 9, CellType::Put),
            key("a", "f", "r", 9, CellType::Put),
            key("ab", "", "", 0, CellType::Put),
            last_on_row(b"a").unwrap(),
            first_on_row(b"a").unwrap(),
        ];
        keys.sort_by(|a, b| cmp(a, b));
        let shown: Vec<String> = keys
            .iter()
            .map(|k| format!("{:?}", KeyRef::parse(k).unwrap()))
            .collect();
        assert_eq!(
            shown,
            [
                "a/:/9223372036854775807/Maximum",
                "a/f:/0/DeleteFamily",
                "a/f:q/2/DeleteColumn",
                "a/f:q/2/Put",
                "a/f:q/1/Put",
                "a/f:r/9/Put",
                "a/g:/9/Put",
                "a/:/9223372036854775807/Minimum",
                "ab/:/0/Put",
                "b/f:q/1/Put",
            ]
        );
        // Negative timestamps sort after positive ones (signed, descending).
        assert_eq!(
            cmp(
                &key("a", "f", "q", -1, CellType::Put),
                &key("a", "f", "q", 1, CellType::Put)
            ),
            Ordering::Greater
        );
    }

    #[test]
    fn compare_bytes_is_slice_order_and_same_bytes_is_equality() {
        let words: Vec<Vec<u8>> = vec![
            vec![],
            vec![0],
            vec![0, 0],
            vec![1],
            vec![0xFF; 9],
            vec![0xFF; 8],
            b"row-00000001".to_vec(),
            b"row-00000010".to_vec(),
            b"row-0000001".to_vec(),
        ];
        for a in &words {
            for b in &words {
                assert_eq!(compare_bytes(a, b), a.cmp(b), "{a:?} {b:?}");
                assert_eq!(same_bytes(a, b), a == b, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn limits_and_malformed_keys_are_errors() {
        assert_eq!(
            make_key(&[0; 32768], b"f", b"", 0, 4),
            Err(CellError::RowTooLong(32768))
        );
        assert!(make_key(&[0; 32767], b"f", b"", 0, 4).is_ok());
        assert_eq!(
            make_key(b"r", &[0; 128], b"", 0, 4),
            Err(CellError::FamilyTooLong(128))
        );
        assert!(KeyRef::parse(&[0, 5, 1, 2]).is_err());
        assert!(KeyRef::parse(&[0, 0, 200, 0, 0, 0, 0, 0, 0, 0, 0, 4]).is_err());
        assert!(KeyRef::parse(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4]).is_ok());
    }
}
