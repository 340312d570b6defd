//! The serialized key: `rowLength u16 | row | familyLength u8 | family | qualifier | timestamp
//! i64 | type u8`, big-endian; the qualifier's length is what remains. Index entries, file info
//! and Bloom chunk indexes store keys in exactly this form.

use std::fmt;

use crate::{CellError, CellType, Escaped};

/// Largest row HBase accepts (`Short.MAX_VALUE`).
pub const MAX_ROW_LEN: usize = i16::MAX as usize;
/// Largest family HBase accepts (`Byte.MAX_VALUE`).
pub const MAX_FAMILY_LEN: usize = i8::MAX as usize;
/// Key bytes besides row, family and qualifier: row length, family length, timestamp, type.
pub const KEY_INFRASTRUCTURE: usize = 2 + 1 + 8 + 1;
/// `HConstants.LATEST_TIMESTAMP`.
pub const LATEST_TIMESTAMP: i64 = i64::MAX;

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

    /// Wraps a key already known to be valid (built by [`make_key`] or checked by
    /// [`parse`](Self::parse) before): reads the two length fields without the checks, which
    /// sorting a memstore pays per comparison. Bytes that are not a valid key panic on a
    /// slice bound here or in an accessor, so only pass bytes checked earlier.
    #[inline]
    pub fn from_valid(bytes: &'a [u8]) -> KeyRef<'a> {
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
    pub(crate) fn is_last_on_row(&self) -> bool {
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

/// A key from strings, for tests across the crate.
#[cfg(test)]
pub(crate) fn test_key(row: &str, fam: &str, qual: &str, ts: i64, t: CellType) -> Vec<u8> {
    make_key(
        row.as_bytes(),
        fam.as_bytes(),
        qual.as_bytes(),
        ts,
        t.code(),
    )
    .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_keyvalue() {
        let k = test_key("r1", "f", "q", 5, CellType::Put);
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
