//! Cell blocks: the cells of a request or response, outside its protobuf message, in HBase's
//! `KeyValueCodec` layout — per cell a 4-byte big-endian length, then the cell as a KeyValue
//! (key length, value length, key, value; with `KeyValueCodecWithTags` also a 2-byte tags
//! length and the tags).

use bytes::Bytes;
use cairn_cell::{CellRef, KeyRef, KeyValue};

use crate::error::WireError;

/// HBase's default cell block codec (`hbase.client.default.rpc.codec`).
pub const KEY_VALUE_CODEC: &str = "org.apache.hadoop.hbase.codec.KeyValueCodec";
/// The codec that also carries tags.
pub const KEY_VALUE_CODEC_WITH_TAGS: &str = "org.apache.hadoop.hbase.codec.KeyValueCodecWithTags";

/// The cell block codecs this crate reads and writes: whether a connection header's codec
/// class is one, and whether it carries tags.
pub fn codec_carries_tags(class: &str) -> Option<bool> {
    match class {
        KEY_VALUE_CODEC => Some(false),
        KEY_VALUE_CODEC_WITH_TAGS => Some(true),
        _ => None,
    }
}

/// Appends one cell to a cell block.
pub fn encode_cell(out: &mut Vec<u8>, cell: &CellRef<'_>, with_tags: bool) {
    let key = cell.key.as_bytes();
    let tags = if with_tags && !cell.tags.is_empty() {
        cell.tags
    } else {
        &[]
    };
    let mut len = 8 + key.len() + cell.value.len();
    if !tags.is_empty() {
        len += 2 + tags.len();
    }
    out.reserve(4 + len);
    out.extend_from_slice(&(len as u32).to_be_bytes());
    out.extend_from_slice(&(key.len() as u32).to_be_bytes());
    out.extend_from_slice(&(cell.value.len() as u32).to_be_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(cell.value);
    if !tags.is_empty() {
        out.extend_from_slice(&(tags.len() as u16).to_be_bytes());
        out.extend_from_slice(tags);
    }
}

/// Bytes [`encode_cell`] writes for `cell`.
pub fn encoded_len(cell: &CellRef<'_>, with_tags: bool) -> usize {
    let tags = if with_tags && !cell.tags.is_empty() {
        2 + cell.tags.len()
    } else {
        0
    };
    12 + cell.key.as_bytes().len() + cell.value.len() + tags
}

/// Reads the cells of a cell block in order; every length is checked against the block and
/// every key parsed, so a malformed block is an error naming the cell and offset.
pub struct CellBlockReader {
    block: Bytes,
    pos: usize,
    index: usize,
}

impl CellBlockReader {
    /// A reader over `block`.
    pub fn new(block: Bytes) -> CellBlockReader {
        CellBlockReader {
            block,
            pos: 0,
            index: 0,
        }
    }

    /// Whether every cell has been read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.block.len()
    }

    fn err(&self, reason: String) -> WireError {
        WireError::Cell {
            index: self.index,
            offset: self.pos,
            reason,
        }
    }

    /// The next cell, `None` at the end of the block.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<KeyValue>, WireError> {
        let b = &self.block[self.pos..];
        if b.is_empty() {
            return Ok(None);
        }
        let u32_at = |i: usize| -> Option<usize> {
            b.get(i..i + 4)
                .map(|s| u32::from_be_bytes(s.try_into().expect("4 bytes")) as usize)
        };
        let len = u32_at(0).ok_or_else(|| self.err("length cut off".into()))?;
        if len > b.len() - 4 {
            return Err(self.err(format!(
                "length {len} runs past the block's {} remaining bytes",
                b.len() - 4
            )));
        }
        let cell = &b[4..4 + len];
        let (Some(klen), Some(vlen)) = (
            cell.get(0..4)
                .map(|s| u32::from_be_bytes(s.try_into().expect("4")) as usize),
            cell.get(4..8)
                .map(|s| u32::from_be_bytes(s.try_into().expect("4")) as usize),
        ) else {
            return Err(self.err(format!("cell of {len} bytes has no key and value lengths")));
        };
        let kv_end = 8usize
            .checked_add(klen)
            .and_then(|n| n.checked_add(vlen))
            .filter(|&n| n <= len)
            .ok_or_else(|| {
                self.err(format!(
                    "key length {klen} and value length {vlen} do not fit in a cell of {len} bytes"
                ))
            })?;
        let tags: &[u8] = if kv_end == len {
            &[]
        } else {
            let t = &cell[kv_end..];
            let tlen = t
                .get(0..2)
                .map(|s| u16::from_be_bytes([s[0], s[1]]) as usize)
                .ok_or_else(|| self.err("tags length cut off".into()))?;
            if 2 + tlen != t.len() {
                return Err(self.err(format!(
                    "tags length {tlen} does not match the {} bytes after the value",
                    t.len() - 2
                )));
            }
            &t[2..]
        };
        let key = KeyRef::parse(&cell[8..8 + klen]).map_err(|e| self.err(e.to_string()))?;
        let kv = CellRef {
            key,
            value: &cell[8 + klen..kv_end],
            tags,
            sequence_id: 0,
        }
        .to_owned();
        self.pos += 4 + len;
        self.index += 1;
        Ok(Some(kv))
    }

    /// The next `n` cells; fewer in the block is an error (a message said it has `n`).
    pub fn take(&mut self, n: usize) -> Result<Vec<KeyValue>, WireError> {
        let mut out = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            match self.next()? {
                Some(c) => out.push(c),
                None => {
                    return Err(self.err(format!(
                        "the message says {n} cells follow, the block has {}",
                        out.len()
                    )))
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_cell::CellType;
    use proptest::prelude::*;

    fn kv(row: &[u8], q: &[u8], ts: i64, v: &[u8]) -> KeyValue {
        KeyValue::new(row, b"f", q, ts, CellType::Put, v).unwrap()
    }

    #[test]
    fn one_cell_is_laid_out_as_key_value_codec_writes_it() {
        let c = kv(b"r", b"q", 5, b"val");
        let mut out = Vec::new();
        encode_cell(&mut out, &c.as_cell(), false);
        // Key: row length (2) + row + family length (1) + family + qualifier + ts (8) + type.
        let key_len = 2 + 1 + 1 + 1 + 1 + 8 + 1;
        let mut want = Vec::new();
        want.extend_from_slice(&((8 + key_len + 3) as u32).to_be_bytes());
        want.extend_from_slice(&(key_len as u32).to_be_bytes());
        want.extend_from_slice(&3u32.to_be_bytes());
        want.extend_from_slice(&[0, 1, b'r', 1, b'f', b'q']);
        want.extend_from_slice(&5i64.to_be_bytes());
        want.push(CellType::Put.code());
        want.extend_from_slice(b"val");
        assert_eq!(out, want);
        assert_eq!(out.len(), encoded_len(&c.as_cell(), false));
    }

    #[test]
    fn malformed_blocks_are_errors_not_panics() {
        let mut out = Vec::new();
        encode_cell(&mut out, &kv(b"r", b"q", 1, b"v").as_cell(), false);
        for cut in 0..out.len() {
            let mut r = CellBlockReader::new(Bytes::copy_from_slice(&out[..cut]));
            if cut == 0 {
                assert_eq!(r.next(), Ok(None));
            } else {
                assert!(r.next().is_err(), "cut at {cut}");
            }
        }
        let mut r = CellBlockReader::new(Bytes::from(out));
        assert!(r.take(2).is_err(), "fewer cells than announced");
    }

    proptest! {
        #[test]
        fn cells_round_trip(cells in prop::collection::vec(
            (prop::collection::vec(any::<u8>(), 1..20),
             prop::collection::vec(any::<u8>(), 0..10),
             any::<i64>().prop_map(|t| t & i64::MAX),
             prop::collection::vec(any::<u8>(), 0..50),
             prop::option::of(prop::collection::vec(any::<u8>(), 1..20))), 0..20),
            with_tags in any::<bool>()) {
            let kvs: Vec<KeyValue> = cells.iter().map(|(r, q, ts, v, tags)| {
                let c = kv(r, q, *ts, v);
                match tags {
                    Some(t) => c.with_tags(t.clone()).unwrap(),
                    None => c,
                }
            }).collect();
            let mut block = Vec::new();
            for c in &kvs {
                encode_cell(&mut block, &c.as_cell(), with_tags);
            }
            let mut r = CellBlockReader::new(Bytes::from(block));
            let back = r.take(kvs.len()).unwrap();
            prop_assert!(r.is_empty());
            for (a, b) in kvs.iter().zip(&back) {
                prop_assert_eq!(a.key().as_bytes(), b.key().as_bytes());
                prop_assert_eq!(a.as_cell().value, b.as_cell().value);
                let want: &[u8] = if with_tags { a.as_cell().tags } else { &[] };
                prop_assert_eq!(want, b.as_cell().tags);
            }
        }

        #[test]
        fn any_bytes_decode_without_panicking(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let mut r = CellBlockReader::new(Bytes::from(bytes));
            for _ in 0..50 {
                match r.next() {
                    Ok(Some(_)) => {}
                    _ => break,
                }
            }
        }
    }
}
