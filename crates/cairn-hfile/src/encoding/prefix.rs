//! PREFIX (HBase's `PrefixKeyDeltaEncoder`): after the decoded size, each cell is the length
//! of its key's part not shared with the previous key, the value length and the shared prefix
//! length (7-bit varints), that part of the key, the value, then tags and sequence id as every
//! `BufferedDataBlockEncoder` writes them.

use super::buffered::{
    check_decoded_size, decode_cell_tail, decoded_size_hint, put_cell_tail, put_decoded_size,
};
use super::input::{put_compressed_int, Input};
use super::plain::{common_prefix, each_plain_cell};
use super::tags::TagDictionary;
use super::DecodeError;
use crate::cell::{CellLayout, KeyRef};

/// Shortest key: row length, family length, timestamp and type.
const MIN_KEY: usize = 2 + 1 + 9;

pub(super) fn decode(
    body: &[u8],
    layout: CellLayout,
    tags_compressed: bool,
) -> Result<Vec<u8>, DecodeError> {
    let mut input = Input::new(body);
    let (size, mut out) = decoded_size_hint(&mut input)?;
    let mut dictionary = TagDictionary::default();
    // Where the previous key is in `out`, and its length.
    let mut prev: Option<(usize, usize)> = None;
    let mut cell = 0usize;
    while input.pos < body.len() {
        let at = input.pos;
        input.start_cell(cell);
        let what = |s: &str| format!("cell {cell} (byte {at}): {s}");
        let rest = input.compressed_int("key length")?;
        let value_len = input.compressed_int("value length")?;
        let common = input.compressed_int("common prefix length")?;
        let shared = match prev {
            Some((_, prev_len)) => prev_len,
            None => 0,
        };
        if common > shared {
            return Err(DecodeError::Corrupt(what(&format!(
                "common prefix {common} is longer than the previous key ({shared} bytes)"
            ))));
        }
        let key_len = rest
            .checked_add(common)
            .filter(|&k| k >= MIN_KEY && k <= i32::MAX as usize)
            .ok_or_else(|| what(&format!("key length {rest} + {common} is not a key's")))?;
        out.extend_from_slice(&(key_len as u32).to_be_bytes());
        out.extend_from_slice(&(value_len as u32).to_be_bytes());
        let key = out.len();
        if let Some((prev_key, _)) = prev {
            out.extend_from_within(prev_key..prev_key + common);
        }
        out.extend_from_slice(input.take(rest, "key")?);
        // Nothing else checks a PREFIX key's parts: the row and family must fit in it.
        KeyRef::parse(&out[key..]).map_err(|e| what(&e.to_string()))?;
        out.extend_from_slice(input.take(value_len, "value")?);
        decode_cell_tail(
            &mut input,
            layout,
            tags_compressed,
            &mut dictionary,
            &mut out,
        )?;
        prev = Some((key, key_len));
        cell += 1;
    }
    check_decoded_size(&out, size, cell)?;
    Ok(out)
}

/// Writes the cells of a plain block as PREFIX does, after the encoding id.
pub(super) fn encode(
    plain: &[u8],
    layout: CellLayout,
    dictionary: &mut Option<TagDictionary>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    put_decoded_size(plain, out)?;
    each_plain_cell(plain, layout, |c, prev| {
        let common = match prev {
            Some(p) => common_prefix(c, p, true)?,
            None => 0,
        };
        put_compressed_int(out, c.key.len() - common);
        put_compressed_int(out, c.value.len());
        put_compressed_int(out, common);
        out.extend_from_slice(&c.key[common..]);
        out.extend_from_slice(c.value);
        put_cell_tail(c, dictionary, out)
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use proptest::prelude::*;

    /// PREFIX as HBase's encoder writes it (the facts of its format, for round trips).
    fn reference(cells: &[TestCell], layout: CellLayout, compressed_tags: bool) -> Vec<u8> {
        let mut dictionary = TagDictionary::default();
        let mut out = (plain(cells, layout).len() as u32).to_be_bytes().to_vec();
        let mut prev: Option<&TestCell> = None;
        for c in cells {
            let k = flat_key(c);
            let common = prev.map_or(0, |p| reference_common_prefix(c, p, true));
            put_int(&mut out, k.len() - common);
            put_int(&mut out, c.4.len());
            put_int(&mut out, common);
            out.extend_from_slice(&k[common..]);
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
    fn a_prefix_longer_than_the_previous_key_is_an_error() {
        let layout = CellLayout {
            tags: false,
            mvcc: false,
        };
        let cell = (b"r".to_vec(), b"q".to_vec(), 1, 4, b"v".to_vec(), vec![], 0);
        let mut body = reference(&[cell.clone(), cell], layout, false);
        // The second cell's common prefix (its third varint) made one past the first key.
        let first =
            4 + 3 + flat_key(&(b"r".to_vec(), b"q".to_vec(), 1, 4, vec![], vec![], 0)).len() + 1;
        body[first + 2] += 1;
        let e = decode(&body, layout, false).unwrap_err();
        assert!(
            matches!(&e, DecodeError::Corrupt(m)
                if m.contains("cell 1") && m.contains("longer than the previous key")),
            "{e:?}"
        );
    }
}
