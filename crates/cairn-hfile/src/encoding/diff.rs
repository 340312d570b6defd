//! DIFF (HBase's `DiffKeyDeltaEncoder`): after the decoded size, the family (length byte and
//! name) once, then each cell as a flag byte, the key and value lengths unless they equal the
//! previous cell's (7-bit varints), the length of the prefix shared with the previous key, the
//! rest of the row and the qualifier (the family left out), the timestamp in as few bytes as
//! it needs (least significant first) or its difference from the previous one, the type unless
//! it is the same, the value; then tags and sequence id as every `BufferedDataBlockEncoder`
//! writes them.

use super::buffered::{
    check_decoded_size, decode_cell_tail, decoded_size_hint, put_cell_tail, put_decoded_size,
};
use super::input::{put_compressed_int, Input};
use super::plain::{common_prefix, each_plain_cell};
use super::tags::TagDictionary;
use super::DecodeError;
use crate::cell::CellLayout;

const FLAG_SAME_KEY_LENGTH: u8 = 1;
const FLAG_SAME_VALUE_LENGTH: u8 = 1 << 1;
const FLAG_SAME_TYPE: u8 = 1 << 2;
const FLAG_TIMESTAMP_IS_DIFF: u8 = 1 << 3;
const MASK_TIMESTAMP_LENGTH: u8 = 0b0111_0000;
const SHIFT_TIMESTAMP_LENGTH: u32 = 4;
const FLAG_TIMESTAMP_SIGN: u8 = 1 << 7;

/// Row length, family length, timestamp and type.
const MIN_KEY: usize = 2 + 1 + 9;

struct Previous {
    key: usize,
    key_len: usize,
    value_len: usize,
    row_len: usize,
    timestamp: i64,
    kind: u8,
}

pub(super) fn decode(
    body: &[u8],
    layout: CellLayout,
    tags_compressed: bool,
) -> Result<Vec<u8>, DecodeError> {
    let mut input = Input::new(body);
    let (size, mut out) = decoded_size_hint(&mut input)?;
    let mut dictionary = TagDictionary::default();
    let mut family: &[u8] = &[];
    let mut prev: Option<Previous> = None;
    let mut cell = 0usize;
    while input.pos < body.len() {
        if prev.is_none() {
            // The family, with its length byte, before the first cell.
            let len = usize::from(input.byte("family length")?);
            input.pos -= 1;
            family = input.take(1 + len, "family")?;
        }
        let at = input.pos;
        input.start_cell(cell);
        let what = |s: &str| format!("cell {cell} (byte {at}): {s}");
        let flag = input.byte("flag")?;
        let same = |bit: u8| flag & bit != 0;
        let first_same = |bit: u8, name: &str| {
            if prev.is_none() && same(bit) {
                Err(DecodeError::Corrupt(what(&format!(
                    "the first cell of a block has the same {name} as the one before it"
                ))))
            } else {
                Ok(())
            }
        };
        first_same(FLAG_SAME_KEY_LENGTH, "key length")?;
        first_same(FLAG_SAME_VALUE_LENGTH, "value length")?;
        first_same(FLAG_SAME_TYPE, "type")?;
        first_same(FLAG_TIMESTAMP_IS_DIFF, "timestamp base")?;
        let key_len = match &prev {
            Some(p) if same(FLAG_SAME_KEY_LENGTH) => p.key_len,
            _ => input.compressed_int("key length")?,
        };
        let value_len = match &prev {
            Some(p) if same(FLAG_SAME_VALUE_LENGTH) => p.value_len,
            _ => input.compressed_int("value length")?,
        };
        let common = input.compressed_int("common prefix length")?;
        if key_len < MIN_KEY {
            return Err(DecodeError::Corrupt(what(&format!(
                "key length {key_len} is too short"
            ))));
        }
        // Only the row, family and qualifier may be shared.
        let shareable = prev.as_ref().map_or(0, |p| p.key_len - 9);
        if common > shareable || common > key_len - 9 {
            return Err(DecodeError::Corrupt(what(&format!(
                "common prefix {common} is longer than the keys' row and columns"
            ))));
        }
        out.extend_from_slice(&(key_len as u32).to_be_bytes());
        out.extend_from_slice(&(value_len as u32).to_be_bytes());
        let key = out.len();
        if let Some(p) = &prev {
            out.extend_from_within(p.key..p.key + common);
        }
        let new_row = prev.as_ref().is_none_or(|p| common < p.row_len + 2);
        let row_len;
        let qualifier;
        if new_row {
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
            out.extend_from_slice(family);
            qualifier = key_len
                .checked_sub(2 + row_len + family.len() + 9)
                .ok_or_else(|| what("key length is shorter than its row and family"))?;
        } else {
            row_len = prev.as_ref().map_or(0, |p| p.row_len);
            // The same row shares the family too (the file's one); a prefix ending inside it
            // would take the family from the block.
            if common < 2 + row_len + family.len() {
                return Err(DecodeError::Corrupt(what(&format!(
                    "common prefix {common} ends inside the row's family"
                ))));
            }
            qualifier = key_len - common - 9;
        }
        out.extend_from_slice(input.take(qualifier, "qualifier")?);
        let width = usize::from((flag & MASK_TIMESTAMP_LENGTH) >> SHIFT_TIMESTAMP_LENGTH) + 1;
        let mut stored: u64 = 0;
        for (i, &b) in input.take(width, "timestamp")?.iter().enumerate() {
            stored |= u64::from(b) << (8 * i);
        }
        let mut value = stored as i64;
        if same(FLAG_TIMESTAMP_SIGN) {
            value = value.wrapping_neg();
        }
        let timestamp = match &prev {
            Some(p) if same(FLAG_TIMESTAMP_IS_DIFF) => p.timestamp.wrapping_sub(value),
            _ => value,
        };
        out.extend_from_slice(&timestamp.to_be_bytes());
        let kind = match &prev {
            Some(p) if same(FLAG_SAME_TYPE) => p.kind,
            _ => input.byte("type")?,
        };
        out.push(kind);
        if out.len() - key != key_len {
            return Err(DecodeError::Corrupt(what(&format!(
                "the key's parts make {} bytes, its length says {key_len}",
                out.len() - key
            ))));
        }
        crate::cell::KeyRef::parse(&out[key..]).map_err(|e| what(&e.to_string()))?;
        out.extend_from_slice(input.take(value_len, "value")?);
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
            value_len,
            row_len,
            timestamp,
            kind,
        });
        cell += 1;
    }
    check_decoded_size(&out, size, cell)?;
    Ok(out)
}

/// HBase's `ByteBufferUtils.longFitsIn`: bytes a non-negative long needs, 8 for negatives.
fn fits_in(v: i64) -> usize {
    if v < 0 {
        8
    } else {
        (1..8).find(|&n| v < 1i64 << (8 * n)).unwrap_or(8)
    }
}

/// Writes the cells of a plain block as DIFF does, after the encoding id.
pub(super) fn encode(
    plain: &[u8],
    layout: CellLayout,
    dictionary: &mut Option<TagDictionary>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    put_decoded_size(plain, out)?;
    each_plain_cell(plain, layout, |c, prev| {
        let mut flag = 0u8;
        // The timestamp as itself or as its difference from the previous one, whichever
        // needs fewer bytes; its sign in the flag (Java's long arithmetic: wrapping).
        let mut ts = c.timestamp();
        let negative = ts < 0;
        if negative {
            ts = ts.wrapping_neg();
        }
        let (mut stored, mut width) = (ts, fits_in(ts));
        if negative {
            flag |= FLAG_TIMESTAMP_SIGN;
        }
        let common = match prev {
            None => {
                out.extend_from_slice(c.family());
                0
            }
            Some(p) => {
                if c.key.len() == p.key.len() {
                    flag |= FLAG_SAME_KEY_LENGTH;
                }
                if c.value.len() == p.value.len() {
                    flag |= FLAG_SAME_VALUE_LENGTH;
                }
                if c.kind() == p.kind() {
                    flag |= FLAG_SAME_TYPE;
                }
                let mut diff = p.timestamp().wrapping_sub(c.timestamp());
                let minus = diff < 0;
                if minus {
                    diff = diff.wrapping_neg();
                }
                if fits_in(diff) < width {
                    flag = (flag & !FLAG_TIMESTAMP_SIGN) | FLAG_TIMESTAMP_IS_DIFF;
                    if minus {
                        flag |= FLAG_TIMESTAMP_SIGN;
                    }
                    (stored, width) = (diff, fits_in(diff));
                }
                common_prefix(c, p, false)?
            }
        };
        flag |= ((width - 1) as u8) << SHIFT_TIMESTAMP_LENGTH;
        out.push(flag);
        if flag & FLAG_SAME_KEY_LENGTH == 0 {
            put_compressed_int(out, c.key.len());
        }
        if flag & FLAG_SAME_VALUE_LENGTH == 0 {
            put_compressed_int(out, c.value.len());
        }
        put_compressed_int(out, common);
        let row_end = 2 + c.row_len;
        if common < row_end {
            // The rest of the row, then the whole qualifier: the family is the block's.
            out.extend_from_slice(&c.key[common..row_end]);
            out.extend_from_slice(c.qualifier());
        } else {
            out.extend_from_slice(&c.key[common..c.key.len() - 9]);
        }
        out.extend_from_slice(&stored.to_le_bytes()[..width]);
        if flag & FLAG_SAME_TYPE == 0 {
            out.push(c.kind());
        }
        out.extend_from_slice(c.value);
        put_cell_tail(c, dictionary, out)
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use proptest::prelude::*;

    /// DIFF as HBase's encoder writes it (the facts of its format, for round trips).
    fn reference(cells: &[TestCell], layout: CellLayout, compressed_tags: bool) -> Vec<u8> {
        let mut dictionary = TagDictionary::default();
        let mut out = (plain(cells, layout).len() as u32).to_be_bytes().to_vec();
        let mut prev: Option<&TestCell> = None;
        for c in cells {
            let k = flat_key(c);
            let mut flag = 0u8;
            let (stored, width, common);
            match prev {
                None => {
                    out.push(2);
                    out.extend_from_slice(b"cf");
                    let mut ts = c.2;
                    if ts < 0 {
                        flag |= FLAG_TIMESTAMP_SIGN;
                        ts = ts.wrapping_neg();
                    }
                    (stored, width, common) = (ts, fits_in(ts), 0);
                }
                Some(p) => {
                    common = reference_common_prefix(c, p, false);
                    if k.len() == flat_key(p).len() {
                        flag |= FLAG_SAME_KEY_LENGTH;
                    }
                    if c.4.len() == p.4.len() {
                        flag |= FLAG_SAME_VALUE_LENGTH;
                    }
                    if c.3 == p.3 {
                        flag |= FLAG_SAME_TYPE;
                    }
                    let mut ts = c.2;
                    let mut diff = p.2.wrapping_sub(ts);
                    let negative = ts < 0;
                    if negative {
                        ts = ts.wrapping_neg();
                    }
                    let minus = diff < 0;
                    if minus {
                        diff = diff.wrapping_neg();
                    }
                    if fits_in(diff) < fits_in(ts) {
                        flag |= FLAG_TIMESTAMP_IS_DIFF;
                        if minus {
                            flag |= FLAG_TIMESTAMP_SIGN;
                        }
                        (stored, width) = (diff, fits_in(diff));
                    } else {
                        if negative {
                            flag |= FLAG_TIMESTAMP_SIGN;
                        }
                        (stored, width) = (ts, fits_in(ts));
                    }
                }
            }
            flag |= ((width - 1) as u8) << SHIFT_TIMESTAMP_LENGTH;
            out.push(flag);
            if flag & FLAG_SAME_KEY_LENGTH == 0 {
                put_int(&mut out, k.len());
            }
            if flag & FLAG_SAME_VALUE_LENGTH == 0 {
                put_int(&mut out, c.4.len());
            }
            put_int(&mut out, common);
            let row_end = 2 + c.0.len();
            if common < row_end {
                out.extend_from_slice(&k[common..row_end]);
                out.extend_from_slice(&c.1);
            } else {
                out.extend_from_slice(&c.1[common - row_end - 3..]);
            }
            out.extend_from_slice(&stored.to_le_bytes()[..width]);
            if flag & FLAG_SAME_TYPE == 0 {
                out.push(c.3);
            }
            out.extend_from_slice(&c.4);
            put_tail(c, layout, compressed_tags, &mut dictionary, &mut out);
            prev = Some(c);
        }
        out
    }

    encoding_properties!(
        reference: reference,
        encode: |plain: &[u8], layout, compressed: bool| {
            let mut body = Vec::new();
            let mut dictionary = compressed.then(TagDictionary::default);
            encode(plain, layout, &mut dictionary, &mut body).map(|()| body)
        },
        decode: decode,
    );

    #[test]
    fn timestamps_as_differences_both_ways_and_negative() {
        let layout = CellLayout {
            tags: false,
            mvcc: false,
        };
        let cell = |ts: i64| {
            (
                b"r".to_vec(),
                b"q".to_vec(),
                ts,
                4,
                b"v".to_vec(),
                vec![],
                0,
            )
        };
        let cells: Vec<TestCell> = [
            1_700_000_000_000,
            1_699_999_999_000,
            1_700_000_000_500,
            -5,
            i64::MIN,
            i64::MAX,
        ]
        .into_iter()
        .map(cell)
        .collect();
        let body = reference(&cells, layout, false);
        assert_eq!(decode(&body, layout, false).unwrap(), plain(&cells, layout));
    }

    #[test]
    fn the_first_cell_cannot_refer_to_a_previous_one() {
        let layout = CellLayout {
            tags: false,
            mvcc: false,
        };
        let cell = (b"r".to_vec(), b"q".to_vec(), 1, 4, b"v".to_vec(), vec![], 0);
        let mut body = reference(&[cell], layout, false);
        // Size, family "cf", then the first flag.
        body[4 + 3] |= FLAG_TIMESTAMP_IS_DIFF;
        let e = decode(&body, layout, false).unwrap_err();
        assert!(
            matches!(&e, DecodeError::Corrupt(m)
                if m.contains("cell 0") && m.contains("first cell")),
            "{e:?}"
        );
    }
}
