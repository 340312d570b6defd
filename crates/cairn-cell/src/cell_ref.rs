//! A cell borrowed from wherever its bytes live: a block, a WAL record, a [`KeyValue`].

use std::fmt;

use bytes::Bytes;

use crate::{KeyRef, KeyValue};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::test_key as key;
    use crate::CellType;

    /// A block body holding `cells` (key, value, tags) as `keyLength i32 | valueLength i32 |
    /// key | value | tagsLength u16 | tags`.
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

    /// The cell `block_of` wrote at `pos`, borrowed from the block, and where the next starts.
    fn cell_at(block: &[u8], pos: usize) -> (CellRef<'_>, usize) {
        let len = |at: usize| u32::from_be_bytes(block[at..at + 4].try_into().unwrap()) as usize;
        let (klen, vlen) = (len(pos), len(pos + 4));
        let value_start = pos + 8 + klen;
        let tags_len_at = value_start + vlen;
        let tlen = u16::from_be_bytes([block[tags_len_at], block[tags_len_at + 1]]) as usize;
        let cell = CellRef {
            key: KeyRef::parse(&block[pos + 8..value_start]).unwrap(),
            value: &block[value_start..tags_len_at],
            tags: &block[tags_len_at + 2..tags_len_at + 2 + tlen],
            sequence_id: 0,
        };
        (cell, tags_len_at + 2 + tlen)
    }

    #[test]
    fn a_cell_owned_from_a_block_shares_it_unless_it_has_tags() {
        let tags: &[u8] = &[1, 0, 3, b'x', b'y', b'z'];
        let block = block_of(&[
            (key("r1", "f", "q", 5, CellType::Put), b"value-one", b""),
            (key("r2", "f", "q", 6, CellType::Put), b"value-two", tags),
        ]);
        let (first, next) = cell_at(&block, 0);
        let (second, _) = cell_at(&block, next);
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
}
