//! An owned cell: what a memstore holds and a read returns.

use std::fmt;

use bytes::Bytes;

use crate::key::{write_key, KeyRef, KEY_INFRASTRUCTURE};
use crate::{CellError, CellRef, CellType};

/// Largest tags section (an unsigned short).
pub const MAX_TAGS_LEN: usize = u16::MAX as usize;

/// An owned cell.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct KeyValue {
    /// The key, then the value, then the tags section: one allocation per cell, which is
    /// what a memstore holds millions of; or a part of a cached block (see
    /// [`CellRef::to_owned_in`]), which a read returns without copying.
    pub(crate) buf: Bytes,
    pub(crate) key_len: u32,
    pub(crate) value_len: u32,
    pub(crate) sequence_id: u64,
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
