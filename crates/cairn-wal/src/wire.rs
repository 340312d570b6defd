//! The few pieces of the protobuf wire format the WAL's messages need, written by hand: the
//! append path encodes a `WALKey` straight into the entry buffer (no intermediate message, no
//! allocation), and reading checks every length against what is there before using it.

/// Wire type of varint fields.
pub(crate) const VARINT: u8 = 0;
/// Wire type of length-delimited fields (bytes, strings, messages).
pub(crate) const LEN: u8 = 2;
/// Wire type of fixed 32-bit fields.
pub(crate) const FIXED32: u8 = 5;
/// Wire type of fixed 64-bit fields.
pub(crate) const FIXED64: u8 = 1;

/// Appends `v` as a varint.
#[inline]
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Bytes `v` takes as a varint.
#[inline]
pub(crate) fn varint_len(v: u64) -> usize {
    // 1 + floor(bits / 7), with 0 taking one byte.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Appends a field key.
#[inline]
pub(crate) fn put_key(out: &mut Vec<u8>, field: u32, wire_type: u8) {
    put_varint(out, (u64::from(field) << 3) | u64::from(wire_type));
}

/// Appends a varint field.
#[inline]
pub(crate) fn put_uint(out: &mut Vec<u8>, field: u32, v: u64) {
    put_key(out, field, VARINT);
    put_varint(out, v);
}

/// Appends a length-delimited field.
#[inline]
pub(crate) fn put_bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    put_key(out, field, LEN);
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Bytes a length-delimited field of `len` bytes takes, its key included.
#[inline]
pub(crate) fn bytes_field_len(field: u32, len: usize) -> usize {
    varint_len(u64::from(field) << 3) + varint_len(len as u64) + len
}

/// Bytes a varint field takes, its key included.
#[inline]
pub(crate) fn uint_field_len(field: u32, v: u64) -> usize {
    varint_len(u64::from(field) << 3) + varint_len(v)
}

/// A field's value as read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Value<'a> {
    Varint(u64),
    Fixed32(u32),
    Fixed64(u64),
    Bytes(&'a [u8]),
}

/// Reads the fields of one message; every read is bounds-checked, so no input panics it.
pub(crate) struct Fields<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Fields<'a> {
        Fields { data, pos: 0 }
    }

    /// Bytes read so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = *self
                .data
                .get(self.pos)
                .ok_or_else(|| format!("varint cut off at byte {}", self.pos))?;
            self.pos += 1;
            if shift == 63 && b > 1 {
                return Err(format!("varint at byte {} overflows 64 bits", self.pos - 1));
            }
            v |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(format!("varint longer than 10 bytes at byte {}", self.pos))
    }

    fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8], String> {
        let rest = (self.data.len() - self.pos) as u64;
        if n > rest {
            return Err(format!(
                "{what} of {n} bytes at byte {} runs past the message ({rest} bytes left)",
                self.pos
            ));
        }
        let s = &self.data[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }

    /// The next field (number and value), `None` at the end of the message.
    #[allow(clippy::should_implement_trait)] // fallible, unlike Iterator::next
    pub(crate) fn next(&mut self) -> Result<Option<(u32, Value<'a>)>, String> {
        if self.pos == self.data.len() {
            return Ok(None);
        }
        let at = self.pos;
        let key = self.varint()?;
        let field = key >> 3;
        if field == 0 || field > u64::from(u32::MAX >> 3) {
            return Err(format!("invalid field number {field} at byte {at}"));
        }
        let value = match (key & 7) as u8 {
            VARINT => Value::Varint(self.varint()?),
            FIXED64 => {
                let b = self.take(8, "fixed64")?;
                Value::Fixed64(u64::from_le_bytes(b.try_into().expect("8 bytes")))
            }
            LEN => {
                let n = self.varint()?;
                Value::Bytes(self.take(n, "field")?)
            }
            FIXED32 => {
                let b = self.take(4, "fixed32")?;
                Value::Fixed32(u32::from_le_bytes(b.try_into().expect("4 bytes")))
            }
            t => return Err(format!("field {field} at byte {at} has wire type {t}")),
        };
        Ok(Some((field as u32, value)))
    }
}

/// A varint at the start of `data`: its value and length, `Ok(None)` if `data` ends inside
/// it, an error for a varint longer than `max_len` bytes.
pub(crate) fn read_varint(data: &[u8], max_len: usize) -> Result<Option<(u64, usize)>, ()> {
    let mut v = 0u64;
    for (i, &b) in data.iter().enumerate() {
        if i >= max_len {
            return Err(());
        }
        v |= u64::from(b & 0x7F) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(Some((v, i + 1)));
        }
    }
    if data.len() >= max_len {
        return Err(());
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_know_their_length() {
        for v in [0, 1, 127, 128, 300, 1 << 35, u64::MAX - 1, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out.len(), varint_len(v), "{v}");
            assert_eq!(read_varint(&out, 10), Ok(Some((v, out.len()))));
            let mut f = Vec::new();
            put_uint(&mut f, 3, v);
            assert_eq!(f.len(), uint_field_len(3, v));
            assert_eq!(Fields::new(&f).next(), Ok(Some((3, Value::Varint(v)))));
        }
        assert_eq!(read_varint(&[0x80, 0x80], 5), Ok(None));
        assert_eq!(read_varint(&[0xFF; 5], 5), Err(()));
        let mut f = Fields::new(&[
            0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F,
        ]);
        assert!(f.next().is_err(), "a tenth byte above 1 overflows");
    }

    #[test]
    fn fields_read_back_and_damage_is_an_error() {
        let mut m = Vec::new();
        put_bytes(&mut m, 1, b"region");
        put_uint(&mut m, 1000, 5);
        assert_eq!(m.len(), bytes_field_len(1, 6) + uint_field_len(1000, 5));
        m.push((7 << 3) | FIXED32);
        m.extend_from_slice(&9u32.to_le_bytes());
        let mut f = Fields::new(&m);
        assert_eq!(f.next(), Ok(Some((1, Value::Bytes(b"region")))));
        assert_eq!(f.next(), Ok(Some((1000, Value::Varint(5)))));
        assert_eq!(f.next(), Ok(Some((7, Value::Fixed32(9)))));
        assert_eq!(f.next(), Ok(None));
        for cut in 1..m.len() {
            let mut f = Fields::new(&m[..cut]);
            let mut failed = false;
            while let Some(r) = f.next().transpose() {
                if r.is_err() {
                    failed = true;
                    break;
                }
            }
            let whole_fields = [0, 8, 11, 16];
            assert_eq!(failed, !whole_fields.contains(&cut), "cut at {cut}");
        }
        assert!(Fields::new(&[0x00]).next().is_err(), "field 0");
        assert!(Fields::new(&[0x0B]).next().is_err(), "wire type 3");
    }
}
