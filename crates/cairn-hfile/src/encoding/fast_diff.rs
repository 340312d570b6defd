//! FAST_DIFF (HBase's `FastDiffDeltaEncoder`, its most used encoding): after the decoded size,
//! each cell as a flag byte, the key and value lengths unless they equal the previous cell's
//! (7-bit varints), the length of the key's prefix shared with the previous key, then only
//! what differs: the rest of the row (the family is the file's one), the rest of the
//! qualifier, the timestamp bytes after those it shares with the previous one, the type
//! unless it is the same, the value unless it is the same; then tags and sequence id as every
//! `BufferedDataBlockEncoder` writes them.

use super::buffered::{
    check_decoded_size, decode_cell_tail, decoded_size_hint, put_cell_tail, put_decoded_size,
};
use super::input::{put_compressed_int, Input};
use super::plain::{common_prefix, each_plain_cell};
use super::tags::TagDictionary;
use super::{DataBlockEncoding, DecodeError};
use crate::cell::CellLayout;

const MASK_TIMESTAMP_LENGTH: u8 = 0b111;
const FLAG_SAME_KEY_LENGTH: u8 = 1 << 3;
const FLAG_SAME_VALUE_LENGTH: u8 = 1 << 4;
const FLAG_SAME_TYPE: u8 = 1 << 5;
const FLAG_SAME_VALUE: u8 = 1 << 6;

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

/// Decodes a FAST_DIFF block body (after the encoding id); see [`decode_fast_diff`].
pub(super) fn decode(
    body: &[u8],
    layout: CellLayout,
    tags_compressed: bool,
) -> Result<Vec<u8>, DecodeError> {
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
                    // The same row: the family (the file's one) comes from the previous key
                    // too, length byte included; a prefix ending inside it would take the
                    // family from the block and could leave a key its own lengths overrun.
                    if common < 2 + row_len + 1 + p.family_len {
                        return Err(DecodeError::Corrupt(what(&format!(
                            "common prefix {common} ends inside the row's family"
                        ))));
                    }
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
                crate::cell::KeyRef::parse(&out[key..]).map_err(|e| what(&e.to_string()))?;
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

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use crate::vint::write_vlong;
    use proptest::prelude::*;

    /// Found by the fuzzer: a cell of the same row whose common prefix ends inside the
    /// family, which the decoder then took from the block, making a key its own family
    /// length overran.
    #[test]
    fn a_prefix_ending_inside_the_family_is_an_error() {
        let body = [
            0x00, 0x00, 0x00, 0x3f, 0x00, 0x0e, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x57, 0x00,
            0x00, 0x00, 0x42, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1d, 0x04, 0x03, 0x1d, 0x00,
            0x1d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x13, 0x04,
            0x00, 0x00, 0x00, 0x00, 0x20, 0x1d, 0x08, 0x0e, 0x00, 0x00, 0x00, 0x00, 0x26, 0xff,
        ];
        let layout = CellLayout {
            tags: false,
            mvcc: false,
        };
        let e = decode_fast_diff(&body, layout, false).unwrap_err();
        assert!(
            format!("{e:?}").contains("ends inside the row's family"),
            "{e:?}"
        );
    }

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
