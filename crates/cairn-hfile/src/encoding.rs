//! Data block encodings (HBase's `DataBlockEncoding`): which ones a file may use, each decoded
//! on read into the plain cell layout every other part of the reader works on, and FAST_DIFF
//! written from it. Decoding once per block read keeps seeks and scans on the plain layout:
//! blocks go to the cache decoded.
//!
//! An encoded data block (`DATABLKE`) holds, after its header, the encoding's 2-byte id, then
//! what the encoding writes. PREFIX, DIFF and FAST_DIFF (HBase's `BufferedDataBlockEncoder`s)
//! start with the 4-byte size of the cells once decoded and end each cell with its tags length
//! (a 7-bit varint) and tags (dictionary-compressed when the file says so) and the sequence id
//! as in plain blocks. FAST_DIFF (this file) writes each cell as a flag byte, the key and value
//! lengths unless they equal the previous cell's (7-bit varints), the length of the key's
//! prefix shared with the previous key, then only what differs: the rest of the row (the
//! family is the file's one), the rest of the qualifier, the timestamp bytes after those it
//! shares with the previous one, the type unless it is the same, the value unless it is the
//! same. PREFIX (`encoding/prefix.rs`), DIFF (`diff.rs`) and ROW_INDEX_V1 (`row_index.rs`)
//! are described where they are decoded.

use crate::cell::CellLayout;
use crate::vint::read_vlong;

/// A file's data block encoding, by its name in file info (`DATA_BLOCK_ENCODING`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataBlockEncoding {
    /// Plain cells (`DATABLK*` blocks).
    None,
    /// PREFIX (id 2): each key as the length of the prefix it shares with the previous key and
    /// the rest.
    Prefix,
    /// DIFF (id 3): FAST_DIFF's key sharing with the family written once per block and
    /// timestamps as differences.
    Diff,
    /// FAST_DIFF (id 4): HBase's most used encoding.
    FastDiff,
    /// ROW_INDEX_V1 (id 7): plain cells followed by the offset of each row.
    RowIndexV1,
}

impl DataBlockEncoding {
    /// HBase's id of FAST_DIFF, the first two bytes of an encoded block's body.
    pub const FAST_DIFF_ID: u16 = 4;

    /// Every encoding cairn reads.
    pub const ALL: [DataBlockEncoding; 5] = [
        DataBlockEncoding::None,
        DataBlockEncoding::Prefix,
        DataBlockEncoding::Diff,
        DataBlockEncoding::FastDiff,
        DataBlockEncoding::RowIndexV1,
    ];

    /// HBase's id, the first two bytes of an encoded block's body.
    pub fn id(self) -> u16 {
        match self {
            DataBlockEncoding::None => 0,
            DataBlockEncoding::Prefix => 2,
            DataBlockEncoding::Diff => 3,
            DataBlockEncoding::FastDiff => Self::FAST_DIFF_ID,
            DataBlockEncoding::RowIndexV1 => 7,
        }
    }

    /// HBase's name, as file info and family schemas spell it.
    pub fn name(self) -> &'static str {
        match self {
            DataBlockEncoding::None => "NONE",
            DataBlockEncoding::Prefix => "PREFIX",
            DataBlockEncoding::Diff => "DIFF",
            DataBlockEncoding::FastDiff => "FAST_DIFF",
            DataBlockEncoding::RowIndexV1 => "ROW_INDEX_V1",
        }
    }

    /// The encoding a file-info name denotes, if cairn reads it.
    pub fn from_name(name: &[u8]) -> Option<DataBlockEncoding> {
        Self::ALL.into_iter().find(|e| e.name().as_bytes() == name)
    }
}

/// Decodes the body of an encoded data block (after its 2-byte encoding id) into the plain
/// layout: `keyLength | valueLength | key | value | [tagsLength | tags] | [sequence id]`.
/// `tags_compressed`: the file's tags are dictionary-compressed (HBase's `COMPRESS_TAGS`).
pub fn decode_cells(
    encoding: DataBlockEncoding,
    body: &[u8],
    layout: CellLayout,
    tags_compressed: bool,
) -> Result<Vec<u8>, DecodeError> {
    match encoding {
        DataBlockEncoding::None => Err(DecodeError::Corrupt(
            "an encoded block in a file without an encoding".into(),
        )),
        DataBlockEncoding::Prefix => prefix::decode(body, layout, tags_compressed),
        DataBlockEncoding::Diff => diff::decode(body, layout, tags_compressed),
        DataBlockEncoding::FastDiff => decode(body, layout, tags_compressed),
        DataBlockEncoding::RowIndexV1 => row_index::decode(body, layout),
    }
}

mod diff;
mod prefix;
mod row_index;

const MASK_TIMESTAMP_LENGTH: u8 = 0b111;
const FLAG_SAME_KEY_LENGTH: u8 = 1 << 3;
const FLAG_SAME_VALUE_LENGTH: u8 = 1 << 4;
const FLAG_SAME_TYPE: u8 = 1 << 5;
const FLAG_SAME_VALUE: u8 = 1 << 6;

/// Decoded blocks larger than this are refused (HBase's blocks are ~64 KiB; one cell may make
/// one larger, but not past what a Java array holds).
const MAX_DECODED: usize = i32::MAX as usize;

struct Input<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// The cell being decoded and the byte it starts at, named in errors. Errors are built
    /// only when they happen: a block has hundreds of cells.
    cell: Option<(usize, usize)>,
}

impl<'a> Input<'a> {
    fn new(bytes: &'a [u8]) -> Input<'a> {
        Input {
            bytes,
            pos: 0,
            cell: None,
        }
    }

    /// Starts the next cell: it is named in errors from here on.
    fn start_cell(&mut self, cell: usize) {
        self.cell = Some((cell, self.pos));
    }

    /// An error message naming the cell being decoded.
    fn fail(&self, what: impl std::fmt::Display) -> String {
        match self.cell {
            Some((cell, at)) => format!("cell {cell} (byte {at}): {what}"),
            None => what.to_string(),
        }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                self.fail(format_args!(
                    "{what} of {n} bytes at byte {} runs past the end ({} bytes)",
                    self.pos,
                    self.bytes.len()
                ))
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn byte(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?[0])
    }

    /// HBase's `ByteBufferUtils.readCompressedInt`: 7 bits per byte, low bits first.
    fn compressed_int(&mut self, what: &str) -> Result<usize, String> {
        let mut v: u64 = 0;
        for i in 0..5 {
            let b = self.byte(what)?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return usize::try_from(v)
                    .ok()
                    .filter(|&v| v <= i32::MAX as usize)
                    .ok_or_else(|| {
                        self.fail(format_args!("{what} {v} is larger than a Java int"))
                    });
            }
        }
        Err(self.fail(format_args!("{what}: a compressed int longer than 5 bytes")))
    }
}

/// HBase's `LRUDictionary` as a block's compressed tags use it: up to 127 entries (one block's
/// `TagCompressionContext`), each new tag taking the next index until it is full, then the
/// index of the least recently used one; reading an entry makes it the most recently used.
#[derive(Default)]
struct TagDictionary {
    entries: Vec<Vec<u8>>,
    /// Indexes, most recently used first.
    recent: std::collections::VecDeque<usize>,
}

impl TagDictionary {
    const CAPACITY: usize = 127;

    fn add(&mut self, tag: &[u8]) {
        if tag.is_empty() {
            return;
        }
        let index = if self.entries.len() < Self::CAPACITY {
            self.entries.push(tag.to_vec());
            self.entries.len() - 1
        } else {
            let index = self.recent.pop_back().expect("a full dictionary");
            self.entries[index] = tag.to_vec();
            index
        };
        self.recent.push_front(index);
    }

    /// HBase's `Dictionary.write` with this dictionary: a tag it holds is written as its 2-byte
    /// index and becomes the most recent; any other as 0xff, its length (7-bit varint) and its
    /// bytes, and joins the dictionary.
    fn write_tag(&mut self, tag: &[u8], out: &mut Vec<u8>) {
        let hit = if tag.is_empty() {
            None
        } else {
            self.entries.iter().position(|e| e == tag)
        };
        match hit {
            Some(i) => {
                self.get(i);
                out.extend_from_slice(&(i as u16).to_be_bytes());
            }
            None => {
                out.push(0xff);
                put_compressed_int(out, tag.len());
                out.extend_from_slice(tag);
                self.add(tag);
            }
        }
    }

    fn get(&mut self, index: usize) -> Option<&[u8]> {
        let at = self.recent.iter().position(|&i| i == index)?;
        self.recent.remove(at);
        self.recent.push_front(index);
        Some(&self.entries[index])
    }
}

/// One cell's dictionary-compressed tags (HBase's `TagCompressionContext.uncompressTags`),
/// `tags_len` bytes once written out as `length u16 | tag` each. A tag is a status byte: -1
/// (0xff) then its length (7-bit varint) and bytes, which join the dictionary; otherwise that
/// byte and the next are the 2-byte index of a tag in the dictionary.
fn uncompress_tags(
    input: &mut Input<'_>,
    dictionary: &mut TagDictionary,
    tags_len: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let end = out.len() + tags_len;
    while out.len() < end {
        let status = input.byte("tag status")?;
        if status == 0xff {
            let len = input.compressed_int("tag length")?;
            let len16 = u16::try_from(len)
                .map_err(|_| input.fail(format_args!("tag length {len} exceeds 65535")))?;
            let tag = input.take(len, "tag")?;
            out.extend_from_slice(&len16.to_be_bytes());
            out.extend_from_slice(tag);
            dictionary.add(tag);
        } else {
            let index = usize::from(u16::from_be_bytes([status, input.byte("tag index")?]));
            let tag = dictionary
                .get(index)
                .ok_or_else(|| input.fail(format_args!("tag dictionary has no entry {index}")))?;
            out.extend_from_slice(&(tag.len() as u16).to_be_bytes());
            out.extend_from_slice(tag);
        }
    }
    if out.len() != end {
        return Err(input.fail(format_args!("tags decode past their length {tags_len}")));
    }
    Ok(())
}

/// Where the previous cell's parts are in the decoded output.
struct Previous {
    key: usize,
    key_len: usize,
    value: usize,
    value_len: usize,
    row_len: usize,
    family_len: usize,
}

/// Decodes the cells of a FAST_DIFF block body (after the 2-byte encoding id) into the plain
/// layout: `keyLength | valueLength | key | value | [tagsLength | tags] | [sequence id]`.
/// `tags_compressed`: the file's tags are dictionary-compressed (HBase's `COMPRESS_TAGS`).
pub fn decode_fast_diff(
    body: &[u8],
    layout: CellLayout,
    tags_compressed: bool,
) -> Result<Vec<u8>, DecodeError> {
    decode(body, layout, tags_compressed)
}

/// HBase's `ByteBufferUtils.putCompressedInt`: 7 bits per byte, low bits first.
fn put_compressed_int(out: &mut Vec<u8>, mut v: usize) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// One cell of a plain block, as the encoder needs its parts.
struct PlainCell<'a> {
    key: &'a [u8],
    value: &'a [u8],
    row_len: usize,
    tags: Option<&'a [u8]>,
    /// The sequence id's vlong bytes, copied as they are.
    mvcc: &'a [u8],
}

fn plain_cell<'a>(input: &mut Input<'a>, layout: CellLayout) -> Result<PlainCell<'a>, String> {
    let key_len = u32::from_be_bytes(input.take(4, "key length")?.try_into().expect("4 bytes"));
    let value_len = u32::from_be_bytes(input.take(4, "value length")?.try_into().expect("4 bytes"));
    let key = input.take(key_len as usize, "key")?;
    let value = input.take(value_len as usize, "value")?;
    let row_len = match key {
        [a, b, ..] => usize::from(u16::from_be_bytes([*a, *b])),
        _ => 0,
    };
    let family_len = key.get(2 + row_len).map(|&f| usize::from(f));
    if family_len.is_none_or(|f| 2 + row_len + 1 + f + 9 > key.len()) {
        return Err(format!(
            "key of {} bytes is too short for its row and family",
            key.len()
        ));
    }
    let tags = if layout.tags {
        let n = u16::from_be_bytes(input.take(2, "tags length")?.try_into().expect("2 bytes"));
        Some(input.take(usize::from(n), "tags")?)
    } else {
        None
    };
    let mvcc = if layout.mvcc {
        let (_, n) =
            read_vlong(&input.bytes[input.pos..]).ok_or("sequence id runs past the end")?;
        input.take(n, "sequence id")?
    } else {
        &[]
    };
    Ok(PlainCell {
        key,
        value,
        row_len,
        tags,
        mvcc,
    })
}

impl PlainCell<'_> {
    /// Where the family (with its length byte) ends in the key.
    fn family_end(&self) -> usize {
        2 + self.row_len + 1 + usize::from(self.key[2 + self.row_len])
    }

    /// The family with its length byte.
    fn family(&self) -> &[u8] {
        &self.key[2 + self.row_len..self.family_end()]
    }

    fn qualifier(&self) -> &[u8] {
        &self.key[self.family_end()..self.key.len() - 9]
    }

    fn timestamp(&self) -> i64 {
        let at = self.key.len() - 9;
        i64::from_be_bytes(self.key[at..at + 8].try_into().expect("8 bytes"))
    }

    fn kind(&self) -> u8 {
        self.key[self.key.len() - 1]
    }
}

/// The prefix two cells' keys share as HBase's `findCommonPrefixInFlatKey` counts it: row
/// length, row, then (same row) family and qualifier, then (same qualifier and `with_ts_type`)
/// timestamp bytes and type. The family is taken as shared: a block holds one family, and
/// cells of two families are an error.
fn common_prefix(
    c: &PlainCell<'_>,
    p: &PlainCell<'_>,
    with_ts_type: bool,
) -> Result<usize, String> {
    let lcp = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
    if c.family() != p.family() {
        return Err("another family than the cell before it".into());
    }
    if c.row_len != p.row_len {
        return Ok(lcp(&c.key[..2], &p.key[..2]));
    }
    let row = lcp(&c.key[2..2 + c.row_len], &p.key[2..2 + p.row_len]);
    if row != c.row_len {
        return Ok(2 + row);
    }
    let (cq, pq) = (c.qualifier(), p.qualifier());
    let q = lcp(cq, pq);
    let mut common = c.family_end() + q;
    if !with_ts_type || cq.len().max(pq.len()) != q {
        return Ok(common);
    }
    let t = lcp(&c.timestamp().to_be_bytes(), &p.timestamp().to_be_bytes());
    common += t;
    if t == 8 && c.kind() == p.kind() {
        common += 1;
    }
    Ok(common)
}

/// What every `BufferedDataBlockEncoder` writes after a cell's value: the tags length and the
/// tags, compressed with the block's dictionary when there is one; the sequence id.
fn put_cell_tail(
    c: &PlainCell<'_>,
    dictionary: &mut Option<TagDictionary>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    if let Some(tags) = c.tags {
        put_compressed_int(out, tags.len());
        match dictionary {
            None => out.extend_from_slice(tags),
            Some(d) => {
                let mut pos = 0;
                while pos < tags.len() {
                    let len = tags
                        .get(pos..pos + 2)
                        .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
                        .ok_or("a tag's length is cut off")?;
                    let tag = tags
                        .get(pos + 2..pos + 2 + len)
                        .ok_or("a tag runs past the cell's tags")?;
                    d.write_tag(tag, out);
                    pos += 2 + len;
                }
            }
        }
    }
    out.extend_from_slice(c.mvcc);
    Ok(())
}

/// Calls `f` with each cell of a plain block and the one before it; errors name the cell.
fn each_plain_cell<'a>(
    plain: &'a [u8],
    layout: CellLayout,
    mut f: impl FnMut(&PlainCell<'a>, Option<&PlainCell<'a>>) -> Result<(), String>,
) -> Result<(), String> {
    let mut input = Input::new(plain);
    let mut prev: Option<PlainCell<'a>> = None;
    let mut n = 0usize;
    while input.pos < plain.len() {
        let at = input.pos;
        let what = |e: String| format!("cell {n} (byte {at}): {e}");
        let c = plain_cell(&mut input, layout).map_err(what)?;
        f(&c, prev.as_ref()).map_err(what)?;
        prev = Some(c);
        n += 1;
    }
    Ok(())
}

/// The 4-byte decoded size PREFIX, DIFF and FAST_DIFF blocks start with.
fn put_decoded_size(plain: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let size = i32::try_from(plain.len()).map_err(|_| {
        format!(
            "a block of {} bytes is larger than HBase reads",
            plain.len()
        )
    })?;
    out.extend_from_slice(&size.to_be_bytes());
    Ok(())
}

/// Encodes the cells of a plain data block body (all of one family, in order) as the body of
/// an encoded block: the encoding's id, then what the encoding writes, as HBase's encoder
/// writes it. `compress_tags`: tags are written with a dictionary per block (HBase's
/// `COMPRESS_TAGS`; ROW_INDEX_V1 never compresses them). Appends to `out`; an error names the
/// cell that is not a well-formed plain cell.
pub fn encode_cells(
    encoding: DataBlockEncoding,
    plain: &[u8],
    layout: CellLayout,
    compress_tags: bool,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let mut dictionary = compress_tags.then(TagDictionary::default);
    match encoding {
        DataBlockEncoding::None => return Err("NONE is not an encoding of data blocks".into()),
        DataBlockEncoding::FastDiff => return encode_fast_diff(plain, layout, compress_tags, out),
        _ => {}
    }
    out.extend_from_slice(&encoding.id().to_be_bytes());
    match encoding {
        DataBlockEncoding::Prefix => prefix::encode(plain, layout, &mut dictionary, out),
        DataBlockEncoding::Diff => diff::encode(plain, layout, &mut dictionary, out),
        _ => row_index::encode(plain, layout, out),
    }
}

/// Encodes the cells of a plain data block body (`keyLength | valueLength | key | value |
/// [tagsLength | tags] | [sequence id]` each, all of one family, in order) as the body of a
/// FAST_DIFF block: the encoding id, the plain size, then the cells as HBase's
/// `FastDiffDeltaEncoder` writes them, tags dictionary-compressed if `compress_tags`. Appends
/// to `out`; an error names the cell that is not a well-formed plain cell.
pub fn encode_fast_diff(
    plain: &[u8],
    layout: CellLayout,
    compress_tags: bool,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let mut dictionary = compress_tags.then(TagDictionary::default);
    out.extend_from_slice(&DataBlockEncoding::FAST_DIFF_ID.to_be_bytes());
    put_decoded_size(plain, out)?;
    each_plain_cell(plain, layout, |c, prev| {
        let Some(p) = prev else {
            // The first cell whole.
            out.push(0);
            put_compressed_int(out, c.key.len());
            put_compressed_int(out, c.value.len());
            put_compressed_int(out, 0);
            out.extend_from_slice(c.key);
            out.extend_from_slice(c.value);
            return put_cell_tail(c, &mut dictionary, out);
        };
        let common = common_prefix(c, p, false)?;
        let row_end = 2 + c.row_len;
        let column_end = c.key.len() - 9;
        let ts = &c.key[column_end..column_end + 8];
        let prev_ts = &p.key[p.key.len() - 9..p.key.len() - 1];
        // Up to 7 leading timestamp bytes shared with the previous cell (3 bits of the flag).
        let shared_ts = ts[..7]
            .iter()
            .zip(&prev_ts[..7])
            .take_while(|(x, y)| x == y)
            .count();
        let mut flag = shared_ts as u8;
        if c.key.len() == p.key.len() {
            flag |= FLAG_SAME_KEY_LENGTH;
        }
        let same_value_len = c.value.len() == p.value.len();
        if same_value_len {
            flag |= FLAG_SAME_VALUE_LENGTH;
        }
        if c.kind() == p.kind() {
            flag |= FLAG_SAME_TYPE;
        }
        if same_value_len && c.value == p.value {
            flag |= FLAG_SAME_VALUE;
        }
        out.push(flag);
        if flag & FLAG_SAME_KEY_LENGTH == 0 {
            put_compressed_int(out, c.key.len());
        }
        if flag & FLAG_SAME_VALUE_LENGTH == 0 {
            put_compressed_int(out, c.value.len());
        }
        put_compressed_int(out, common);
        if common >= row_end {
            // Same row (and family): the rest of the qualifier.
            out.extend_from_slice(&c.key[common..column_end]);
        } else {
            // The rest of the row, then the whole qualifier: the family is implied.
            out.extend_from_slice(&c.key[common..row_end]);
            out.extend_from_slice(c.qualifier());
        }
        out.extend_from_slice(&ts[shared_ts..]);
        if flag & FLAG_SAME_TYPE == 0 {
            out.push(c.kind());
        }
        if flag & FLAG_SAME_VALUE == 0 {
            out.extend_from_slice(c.value);
        }
        put_cell_tail(c, &mut dictionary, out)
    })
}

/// What every encoding built on HBase's `BufferedDataBlockEncoder` (PREFIX, DIFF, FAST_DIFF)
/// writes after a cell's value, decoded into the plain layout: the tags length as a compressed
/// int and the tags (dictionary-compressed when the file says so) become `tagsLength u16 |
/// tags`; the sequence id (a Hadoop vlong) is copied as it is. Refuses output past 2 GiB.
fn decode_cell_tail(
    input: &mut Input<'_>,
    layout: CellLayout,
    tags_compressed: bool,
    dictionary: &mut TagDictionary,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    if layout.tags {
        let tags_len = input.compressed_int("tags length")?;
        let tags_len = u16::try_from(tags_len)
            .map_err(|_| input.fail(format_args!("tags length {tags_len} exceeds 65535")))?;
        out.extend_from_slice(&tags_len.to_be_bytes());
        if tags_len > 0 {
            if tags_compressed {
                uncompress_tags(input, dictionary, usize::from(tags_len), out)?;
            } else {
                out.extend_from_slice(input.take(usize::from(tags_len), "tags")?);
            }
        }
    }
    if layout.mvcc {
        let (_, n) = read_vlong(&input.bytes[input.pos..])
            .ok_or_else(|| input.fail("sequence id runs past the end"))?;
        out.extend_from_slice(input.take(n, "sequence id")?);
    }
    if out.len() > MAX_DECODED {
        return Err(input.fail("decoded cells exceed 2 GiB"));
    }
    Ok(())
}

/// The size of the cells once decoded, which PREFIX, DIFF and FAST_DIFF blocks start with; only
/// a hint until the cells are decoded, so it bounds what is reserved up front.
fn decoded_size_hint(input: &mut Input<'_>) -> Result<(usize, Vec<u8>), DecodeError> {
    let size = input.take(4, "decoded size")?;
    let size = i32::from_be_bytes(size.try_into().expect("4 bytes"));
    let size = usize::try_from(size)
        .ok()
        .filter(|&s| s <= MAX_DECODED)
        .ok_or_else(|| format!("decoded size {size} is negative"))?;
    let out = Vec::with_capacity(size.min(input.bytes.len().saturating_mul(64)));
    Ok((size, out))
}

/// Checks that the decoded cells are as many bytes as the block said.
fn check_decoded_size(out: &[u8], size: usize, cells: usize) -> Result<(), DecodeError> {
    if out.len() != size {
        return Err(DecodeError::Corrupt(format!(
            "{cells} cells decode to {} bytes, the block says {size}",
            out.len()
        )));
    }
    Ok(())
}

/// Why a block could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes are not a valid encoding.
    Corrupt(String),
    /// Valid, but uses something cairn does not decode.
    Unsupported(String),
}

impl From<String> for DecodeError {
    fn from(s: String) -> Self {
        DecodeError::Corrupt(s)
    }
}

fn decode(body: &[u8], layout: CellLayout, tags_compressed: bool) -> Result<Vec<u8>, DecodeError> {
    let mut input = Input::new(body);
    let (size, mut out) = decoded_size_hint(&mut input)?;
    let mut prev: Option<Previous> = None;
    // Compressed tags refer to the tags before them in the same block.
    let mut dictionary = TagDictionary::default();
    let mut cell = 0usize;
    while input.pos < body.len() {
        let at = input.pos;
        input.start_cell(cell);
        let flag = input.byte("flag")?;
        let what = |s: &str| format!("cell {cell} (byte {at}): {s}");
        let (mut key_len, mut value_len) = match &prev {
            Some(p) => (p.key_len, p.value_len),
            None => (0, 0),
        };
        if prev.is_none() || flag & FLAG_SAME_KEY_LENGTH == 0 {
            key_len = input.compressed_int("key length")?;
        }
        if prev.is_none() || flag & FLAG_SAME_VALUE_LENGTH == 0 {
            value_len = input.compressed_int("value length")?;
        }
        let common = input.compressed_int("common prefix length")?;
        // A key is rowLength u16, row, familyLength u8, family, qualifier, timestamp, type.
        if key_len < 2 + 1 + 9 {
            return Err(DecodeError::Corrupt(what(&format!(
                "key length {key_len} is too short"
            ))));
        }
        out.extend_from_slice(&(key_len as u32).to_be_bytes());
        out.extend_from_slice(&(value_len as u32).to_be_bytes());
        let key = out.len();
        let (row_len, family_len) = match &prev {
            None => {
                out.extend_from_slice(input.take(key_len, "key")?);
                let row_len = usize::from(u16::from_be_bytes([out[key], out[key + 1]]));
                let family_len = out
                    .get(key + 2 + row_len)
                    .map(|&f| usize::from(f))
                    .filter(|f| 2 + row_len + 1 + f + 9 <= key_len)
                    .ok_or_else(|| what("row and family overrun the key"))?;
                out.extend_from_slice(input.take(value_len, "value")?);
                (row_len, family_len)
            }
            Some(p) => {
                // The part of the key before the timestamp is what a prefix may share.
                if common > p.key_len - 9 || common > key_len - 9 {
                    return Err(DecodeError::Corrupt(what(&format!(
                        "common prefix {common} is longer than the keys' row and columns"
                    ))));
                }
                out.extend_from_within(p.key..p.key + common);
                let row_len;
                let qualifier_rest;
                if common < p.row_len + 2 {
                    // A new row: its length (if not shared), the rest of it, the file's
                    // family from the previous key, the whole qualifier.
                    if common < 2 {
                        out.extend_from_slice(input.take(2 - common, "row length")?);
                    }
                    row_len = usize::from(u16::from_be_bytes([out[key], out[key + 1]]));
                    let row_have = common.saturating_sub(2);
                    if row_have > row_len {
                        return Err(DecodeError::Corrupt(what(
                            "common prefix is longer than the row",
                        )));
                    }
                    out.extend_from_slice(input.take(row_len - row_have, "row")?);
                    let family = p.key + 2 + p.row_len;
                    out.extend_from_within(family..family + 1 + p.family_len);
                    qualifier_rest = key_len
                        .checked_sub(2 + row_len + 1 + p.family_len + 9)
                        .ok_or_else(|| what("key length is shorter than its row and family"))?;
                } else {
                    row_len = p.row_len;
                    if key_len < 2 + row_len + 1 + p.family_len + 9 {
                        return Err(DecodeError::Corrupt(what(
                            "key length is shorter than its row and family",
                        )));
                    }
                    qualifier_rest = key_len - common - 9;
                }
                out.extend_from_slice(input.take(qualifier_rest, "qualifier")?);
                let shared_ts = usize::from(flag & MASK_TIMESTAMP_LENGTH);
                let prev_ts = p.key + p.key_len - 9;
                out.extend_from_within(prev_ts..prev_ts + shared_ts);
                out.extend_from_slice(input.take(8 - shared_ts, "timestamp")?);
                if flag & FLAG_SAME_TYPE != 0 {
                    let t = out[p.key + p.key_len - 1];
                    out.push(t);
                } else {
                    out.push(input.byte("type")?);
                }
                if out.len() - key != key_len {
                    return Err(DecodeError::Corrupt(what(&format!(
                        "the key's parts make {} bytes, its length says {key_len}",
                        out.len() - key
                    ))));
                }
                if flag & FLAG_SAME_VALUE != 0 {
                    if value_len != p.value_len {
                        return Err(DecodeError::Corrupt(what(
                            "same value as the previous cell, of another length",
                        )));
                    }
                    out.extend_from_within(p.value..p.value + p.value_len);
                } else {
                    out.extend_from_slice(input.take(value_len, "value")?);
                }
                (row_len, p.family_len)
            }
        };
        decode_cell_tail(
            &mut input,
            layout,
            tags_compressed,
            &mut dictionary,
            &mut out,
        )?;
        prev = Some(Previous {
            key,
            key_len,
            value: key + key_len,
            value_len,
            row_len,
            family_len,
        });
        cell += 1;
    }
    check_decoded_size(&out, size, cell)?;
    Ok(out)
}

/// Cells, plain blocks, tags and varints as the encodings' tests build them, from the format's
/// facts.
#[cfg(test)]
mod test_support {
    use super::TagDictionary;
    use crate::cell::CellLayout;
    use crate::vint::write_vlong;
    use proptest::prelude::*;

    /// A cell as the tests build it: row, qualifier, timestamp, type, value, tags, sequence id
    /// (family "cf" for all, as in a store file).
    pub(super) type TestCell = (Vec<u8>, Vec<u8>, i64, u8, Vec<u8>, Vec<u8>, i64);

    pub(super) fn flat_key(c: &TestCell) -> Vec<u8> {
        let mut k = (c.0.len() as u16).to_be_bytes().to_vec();
        k.extend_from_slice(&c.0);
        k.push(2);
        k.extend_from_slice(b"cf");
        k.extend_from_slice(&c.1);
        k.extend_from_slice(&c.2.to_be_bytes());
        k.push(c.3);
        k
    }

    pub(super) fn plain(cells: &[TestCell], layout: CellLayout) -> Vec<u8> {
        let mut out = Vec::new();
        for c in cells {
            let k = flat_key(c);
            out.extend_from_slice(&(k.len() as u32).to_be_bytes());
            out.extend_from_slice(&(c.4.len() as u32).to_be_bytes());
            out.extend_from_slice(&k);
            out.extend_from_slice(&c.4);
            if layout.tags {
                out.extend_from_slice(&(c.5.len() as u16).to_be_bytes());
                out.extend_from_slice(&c.5);
            }
            if layout.mvcc {
                write_vlong(&mut out, c.6);
            }
        }
        out
    }

    pub(super) fn put_int(out: &mut Vec<u8>, mut v: usize) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    /// HBase's tag compression as its encoder writes it: each tag is looked up in the block's
    /// dictionary (a hit becomes the most recent entry and is written as its index, a miss
    /// joins the dictionary and is written whole).
    pub(super) fn compress_tags(tags: &[u8], dictionary: &mut TagDictionary, out: &mut Vec<u8>) {
        let mut pos = 0;
        while pos < tags.len() {
            let len = usize::from(u16::from_be_bytes([tags[pos], tags[pos + 1]]));
            let tag = &tags[pos + 2..pos + 2 + len];
            pos += 2 + len;
            let hit = (0..dictionary.entries.len()).find(|&i| dictionary.entries[i] == tag);
            match hit {
                Some(i) if !tag.is_empty() => {
                    dictionary.get(i);
                    out.extend_from_slice(&(i as u16).to_be_bytes());
                }
                _ => {
                    out.push(0xff);
                    put_int(out, len);
                    out.extend_from_slice(tag);
                    dictionary.add(tag);
                }
            }
        }
    }

    pub(super) fn cell_strategy() -> impl Strategy<Value = TestCell> {
        (
            prop::collection::vec(prop::sample::select(vec![b'a', b'b']), 0..6),
            prop::collection::vec(prop::sample::select(vec![b'x', b'y']), 0..4),
            prop::sample::select(vec![
                0i64,
                1,
                255,
                256,
                1_700_000_000_000,
                i64::MAX,
                -1,
                -256,
                i64::MIN,
            ]),
            prop::sample::select(vec![4u8, 8, 12, 14]),
            prop::collection::vec(prop::sample::select(vec![0u8, 1]), 0..5),
            prop::collection::vec(any::<u8>(), 0..3),
            0i64..1000,
        )
    }

    /// Well-formed tags (`length u16 | type | value` each), drawn from 200 different ones so a
    /// block's dictionary of 127 both hits and evicts.
    pub(super) fn tags_strategy() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(0u8..200, 0..4).prop_map(|ids| {
            let mut tags = Vec::new();
            for id in ids {
                tags.extend_from_slice(&2u16.to_be_bytes());
                tags.extend_from_slice(&[1, id]);
            }
            tags
        })
    }

    /// The prefix two cells' flat keys share as HBase's `findCommonPrefixInFlatKey` counts it
    /// (the family taken as shared): row length, row, then (same row) family and qualifier,
    /// then (same qualifier, `with_ts_type`) timestamp bytes and type.
    pub(super) fn reference_common_prefix(c: &TestCell, p: &TestCell, with_ts_type: bool) -> usize {
        let lcp = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let (l1, l2) = (
            (c.0.len() as u16).to_be_bytes(),
            (p.0.len() as u16).to_be_bytes(),
        );
        if l1 != l2 {
            return lcp(&l1, &l2);
        }
        let row = lcp(&c.0, &p.0);
        if row != c.0.len() {
            return 2 + row;
        }
        let q = lcp(&c.1, &p.1);
        let mut common = 2 + row + 1 + 2 + q;
        if !with_ts_type || c.1.len().max(p.1.len()) != q {
            return common;
        }
        let t = lcp(&c.2.to_be_bytes(), &p.2.to_be_bytes());
        common += t;
        if t == 8 && c.3 == p.3 {
            common += 1;
        }
        common
    }

    /// What a `BufferedDataBlockEncoder` writes after a cell's value: tags length (7-bit
    /// varint) and tags, dictionary-compressed or not; the sequence id as a vlong.
    pub(super) fn put_tail(
        c: &TestCell,
        layout: CellLayout,
        compressed_tags: bool,
        dictionary: &mut TagDictionary,
        out: &mut Vec<u8>,
    ) {
        if layout.tags {
            put_int(out, c.5.len());
            if compressed_tags {
                compress_tags(&c.5, dictionary, out);
            } else {
                out.extend_from_slice(&c.5);
            }
        }
        if layout.mvcc {
            write_vlong(out, c.6);
        }
    }

    /// Cells with well-formed tags, for dictionary compression.
    pub(super) fn tagged_cells() -> impl Strategy<Value = Vec<TestCell>> {
        prop::collection::vec((cell_strategy(), tags_strategy()), 1..150).prop_map(|v| {
            v.into_iter()
                .map(|(mut c, tags)| {
                    c.5 = tags;
                    c
                })
                .collect()
        })
    }

    /// The properties every encoding's encoder and decoder must have, as proptests, given the
    /// reference encoder written from the format (`reference(cells, layout, compressed_tags)`),
    /// cairn's encoder (`encode(plain, layout, compressed_tags)`, the body after the encoding
    /// id) and the decoder (`decode(body, layout, compressed_tags)`).
    macro_rules! encoding_properties {
        (reference: $reference:expr, encode: $encode:expr, decode: $decode:expr $(,)?) => {
            fn reference_body(cells: &[TestCell], layout: CellLayout, compressed: bool) -> Vec<u8> {
                ($reference)(cells, layout, compressed)
            }

            fn cairn_body(
                plain: &[u8],
                layout: CellLayout,
                compressed: bool,
            ) -> Result<Vec<u8>, String> {
                ($encode)(plain, layout, compressed)
            }

            fn decoded(
                body: &[u8],
                layout: CellLayout,
                compressed: bool,
            ) -> Result<Vec<u8>, DecodeError> {
                ($decode)(body, layout, compressed)
            }

            proptest! {
                #[test]
                fn decodes_what_the_reference_wrote(
                    cells in prop::collection::vec(cell_strategy(), 1..40),
                    tags in any::<bool>(),
                    mvcc in any::<bool>(),
                ) {
                    let layout = CellLayout { tags, mvcc };
                    let body = reference_body(&cells, layout, false);
                    let cells = plain(&cells, layout);
                    prop_assert_eq!(decoded(&body, layout, false).unwrap(), cells);
                }

                #[test]
                fn cairn_encodes_as_the_reference(
                    cells in prop::collection::vec(cell_strategy(), 1..40),
                    tags in any::<bool>(),
                    mvcc in any::<bool>(),
                ) {
                    let layout = CellLayout { tags, mvcc };
                    let body = cairn_body(&plain(&cells, layout), layout, false).unwrap();
                    prop_assert_eq!(&body, &reference_body(&cells, layout, false));
                }

                #[test]
                fn compressed_tags_as_the_reference_and_back(cells in tagged_cells()) {
                    let layout = CellLayout { tags: true, mvcc: true };
                    let body = cairn_body(&plain(&cells, layout), layout, true).unwrap();
                    prop_assert_eq!(&body, &reference_body(&cells, layout, true));
                    prop_assert_eq!(decoded(&body, layout, true).unwrap(), plain(&cells, layout));
                }

                #[test]
                fn damaged_blocks_are_errors_not_panics(
                    cells in prop::collection::vec(cell_strategy(), 1..20),
                    damage in prop::collection::vec(
                        (any::<prop::sample::Index>(), any::<u8>()),
                        1..4,
                    ),
                    cut in any::<prop::sample::Index>(),
                ) {
                    let layout = CellLayout { tags: true, mvcc: true };
                    let mut body = reference_body(&cells, layout, false);
                    for (i, x) in &damage {
                        let i = i.index(body.len());
                        body[i] ^= x;
                    }
                    let _ = decoded(&body, layout, false);
                    let _ = decoded(&body[..cut.index(body.len() + 1)], layout, true);
                }

                #[test]
                fn damaged_plain_cells_are_encoding_errors_not_panics(
                    cells in prop::collection::vec(cell_strategy(), 1..20),
                    damage in prop::collection::vec(
                        (any::<prop::sample::Index>(), any::<u8>()),
                        1..4,
                    ),
                    cut in any::<prop::sample::Index>(),
                ) {
                    let layout = CellLayout { tags: true, mvcc: true };
                    let mut plain = plain(&cells, layout);
                    for (i, x) in &damage {
                        let i = i.index(plain.len());
                        plain[i] ^= x;
                    }
                    let cut = cut.index(plain.len() + 1);
                    if let Ok(body) = cairn_body(&plain[..cut], layout, true) {
                        let _ = decoded(&body, layout, true);
                    }
                }

                #[test]
                fn arbitrary_bytes_are_errors_not_panics(
                    body in prop::collection::vec(any::<u8>(), 0..300),
                ) {
                    for tags in [false, true] {
                        let _ = decoded(&body, CellLayout { tags, mvcc: true }, tags);
                    }
                }
            }
        };
    }
    pub(super) use encoding_properties;
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use crate::vint::write_vlong;
    use proptest::prelude::*;

    /// FAST_DIFF as HBase's encoder writes it (the facts of its format, for round trips).
    fn encode_with(cells: &[TestCell], layout: CellLayout, compressed_tags: bool) -> Vec<u8> {
        let mut dictionary = TagDictionary::default();
        let mut out = (plain(cells, layout).len() as u32).to_be_bytes().to_vec();
        let mut prev: Option<&TestCell> = None;
        for c in cells {
            let k = flat_key(c);
            match prev {
                None => {
                    out.push(0);
                    put_int(&mut out, k.len());
                    put_int(&mut out, c.4.len());
                    put_int(&mut out, 0);
                    out.extend_from_slice(&k);
                    out.extend_from_slice(&c.4);
                }
                Some(p) => {
                    let pk = flat_key(p);
                    // Row length and row, then (the family being the file's) family and
                    // qualifier when the rows are equal.
                    let row_end = 2 + c.0.len();
                    let mut common = k[..row_end]
                        .iter()
                        .zip(&pk)
                        .take_while(|(a, b)| a == b)
                        .count();
                    if common == row_end && c.0 == p.0 {
                        common += 3;
                        common += c.1.iter().zip(&p.1).take_while(|(a, b)| a == b).count();
                    }
                    let ts = c.2.to_be_bytes();
                    let pts = p.2.to_be_bytes();
                    let shared_ts = ts
                        .iter()
                        .zip(&pts)
                        .take(7)
                        .take_while(|(a, b)| a == b)
                        .count();
                    let mut flag = shared_ts as u8;
                    if k.len() == pk.len() {
                        flag |= FLAG_SAME_KEY_LENGTH;
                    }
                    if c.4.len() == p.4.len() {
                        flag |= FLAG_SAME_VALUE_LENGTH;
                    }
                    if c.3 == p.3 {
                        flag |= FLAG_SAME_TYPE;
                    }
                    if c.4 == p.4 {
                        flag |= FLAG_SAME_VALUE;
                    }
                    out.push(flag);
                    if flag & FLAG_SAME_KEY_LENGTH == 0 {
                        put_int(&mut out, k.len());
                    }
                    if flag & FLAG_SAME_VALUE_LENGTH == 0 {
                        put_int(&mut out, c.4.len());
                    }
                    put_int(&mut out, common);
                    if common < row_end {
                        out.extend_from_slice(&k[common..row_end]);
                        out.extend_from_slice(&c.1);
                    } else {
                        out.extend_from_slice(&c.1[common - row_end - 3..]);
                    }
                    out.extend_from_slice(&ts[shared_ts..]);
                    if flag & FLAG_SAME_TYPE == 0 {
                        out.push(c.3);
                    }
                    if flag & FLAG_SAME_VALUE == 0 {
                        out.extend_from_slice(&c.4);
                    }
                }
            }
            if layout.tags {
                put_int(&mut out, c.5.len());
                if compressed_tags {
                    compress_tags(&c.5, &mut dictionary, &mut out);
                } else {
                    out.extend_from_slice(&c.5);
                }
            }
            if layout.mvcc {
                write_vlong(&mut out, c.6);
            }
            prev = Some(c);
        }
        out
    }

    encoding_properties!(
        reference: encode_with,
        encode: |plain: &[u8], layout, compressed| {
            let mut body = Vec::new();
            encode_fast_diff(plain, layout, compressed, &mut body).map(|()| body[2..].to_vec())
        },
        decode: decode_fast_diff,
    );

    #[test]
    fn cells_of_two_families_are_not_encoded() {
        let layout = CellLayout {
            tags: false,
            mvcc: false,
        };
        let cell = |row: &[u8]| (row.to_vec(), b"q".to_vec(), 1, 4, b"v".to_vec(), vec![], 0);
        let mut block = plain(&[cell(b"a")], layout);
        let mut other = plain(&[cell(b"b")], layout);
        // "cf" becomes "cg" in the second cell.
        let at = other.windows(2).position(|w| w == b"cf").unwrap();
        other[at + 1] = b'g';
        block.extend_from_slice(&other);
        let e = encode_fast_diff(&block, layout, false, &mut Vec::new()).unwrap_err();
        assert!(e.contains("cell 1") && e.contains("another family"), "{e}");
    }

    #[test]
    fn a_tag_index_not_in_the_dictionary_is_an_error() {
        let layout = CellLayout {
            tags: true,
            mvcc: false,
        };
        let cells = vec![(
            b"r".to_vec(),
            b"q".to_vec(),
            1,
            4,
            b"v".to_vec(),
            vec![0, 2, 1, 7],
            0,
        )];
        let mut body = encode_with(&cells, layout, true);
        // The tag written whole (0xff, length 2, bytes) becomes index 5, never added.
        let at = body.len() - 4;
        assert_eq!(body[at], 0xff);
        body.splice(at..at + 4, [0u8, 5, 0, 0]);
        let e = decode_fast_diff(&body, layout, true).unwrap_err();
        assert!(
            matches!(e, DecodeError::Corrupt(ref m) if m.contains("no entry 5")),
            "{e:?}"
        );
    }
}
