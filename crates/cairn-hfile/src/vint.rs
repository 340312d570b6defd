//! Hadoop's `WritableUtils` variable-length integers, used for cell sequence ids and for the
//! key lengths of root index entries.
//!
//! Values in -112..=127 take one byte. Otherwise the first byte gives sign and length
//! (-113..=-120: positive, 1..8 bytes; -121..=-128: negative, stored one's-complemented), and
//! the value follows big-endian without leading zero bytes.

/// Appends `v` in Hadoop's vlong encoding.
pub fn write_vlong(out: &mut Vec<u8>, v: i64) {
    if (-112..=127).contains(&v) {
        out.push(v as u8);
        return;
    }
    let (magnitude, base) = if v < 0 { (!v, -120i32) } else { (v, -112i32) };
    let len = 8 - (magnitude.leading_zeros() as usize / 8);
    out.push((base - len as i32) as u8);
    out.extend_from_slice(&magnitude.to_be_bytes()[8 - len..]);
}

/// Bytes `write_vlong` uses for `v`.
pub fn vlong_size(v: i64) -> usize {
    if (-112..=127).contains(&v) {
        return 1;
    }
    let magnitude = if v < 0 { !v } else { v };
    1 + 8 - (magnitude.leading_zeros() as usize / 8)
}

/// Decodes a vlong at the start of `buf`: the value and the bytes it took, or `None` when
/// `buf` ends inside it.
#[inline]
pub fn read_vlong(buf: &[u8]) -> Option<(i64, usize)> {
    let first = *buf.first()? as i8;
    if first >= -112 {
        return Some((first as i64, 1));
    }
    let negative = first < -120;
    let len = if negative {
        (-120 - first as i32) as usize
    } else {
        (-112 - first as i32) as usize
    };
    let payload = buf.get(1..1 + len)?;
    let magnitude = payload.iter().fold(0i64, |acc, &b| (acc << 8) | b as i64);
    Some((if negative { !magnitude } else { magnitude }, 1 + len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_hadoop_examples() {
        let enc = |v| {
            let mut o = Vec::new();
            write_vlong(&mut o, v);
            o
        };
        assert_eq!(enc(0), [0x00]);
        assert_eq!(enc(127), [0x7F]);
        assert_eq!(enc(-112), [0x90]);
        assert_eq!(enc(128), [0x8F, 0x80]);
        assert_eq!(enc(300), [0x8E, 0x01, 0x2C]);
        assert_eq!(enc(-113), [0x87, 0x70]);
        assert_eq!(
            enc(i64::MAX),
            [0x88, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        );
    }

    #[test]
    fn round_trips() {
        let mut values = vec![0i64, 1, -1, 127, 128, -112, -113, 255, 256, 65535, 1 << 40];
        values.extend([
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
            i32::MAX as i64,
            i32::MIN as i64,
        ]);
        for shift in 0..63 {
            values.push(1i64 << shift);
            values.push(-(1i64 << shift));
        }
        for v in values {
            let mut o = Vec::new();
            write_vlong(&mut o, v);
            assert_eq!(o.len(), vlong_size(v), "{v}");
            assert_eq!(read_vlong(&o), Some((v, o.len())), "{v}");
            assert_eq!(read_vlong(&o[..o.len() - 1]), None, "{v} truncated");
        }
    }
}
