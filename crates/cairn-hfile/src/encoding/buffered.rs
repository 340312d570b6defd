//! What PREFIX, DIFF and FAST_DIFF share as HBase's `BufferedDataBlockEncoder`s: the block
//! starts with the size of its cells once decoded, and each cell ends with its tags length (a
//! compressed int) and tags (dictionary-compressed when the file says so) and its sequence id
//! (a Hadoop vlong, as in plain blocks). Both ways: written from plain cells, decoded into
//! the plain layout.

use super::input::{put_compressed_int, Input};
use super::plain::PlainCell;
use super::tags::{compress_tags, uncompress_tags, TagDictionary};
use super::DecodeError;
use crate::cell::CellLayout;
use crate::vint::read_vlong;

/// Decoded blocks larger than this are refused (HBase's blocks are ~64 KiB; one cell may make
/// one larger, but not past what a Java array holds).
const MAX_DECODED: usize = i32::MAX as usize;

/// What every `BufferedDataBlockEncoder` writes after a cell's value: the tags length and the
/// tags, compressed with the block's dictionary when there is one; the sequence id.
pub(super) fn put_cell_tail(
    c: &PlainCell<'_>,
    dictionary: &mut Option<TagDictionary>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    if let Some(tags) = c.tags {
        put_compressed_int(out, tags.len());
        match dictionary {
            None => out.extend_from_slice(tags),
            Some(d) => compress_tags(tags, d, out)?,
        }
    }
    out.extend_from_slice(c.mvcc);
    Ok(())
}

/// The 4-byte decoded size PREFIX, DIFF and FAST_DIFF blocks start with.
pub(super) fn put_decoded_size(plain: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let size = i32::try_from(plain.len()).map_err(|_| {
        format!(
            "a block of {} bytes is larger than HBase reads",
            plain.len()
        )
    })?;
    out.extend_from_slice(&size.to_be_bytes());
    Ok(())
}

/// What every encoding built on HBase's `BufferedDataBlockEncoder` (PREFIX, DIFF, FAST_DIFF)
/// writes after a cell's value, decoded into the plain layout: the tags length as a compressed
/// int and the tags (dictionary-compressed when the file says so) become `tagsLength u16 |
/// tags`; the sequence id (a Hadoop vlong) is copied as it is. Refuses output past 2 GiB.
pub(super) fn decode_cell_tail(
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
pub(super) fn decoded_size_hint(input: &mut Input<'_>) -> Result<(usize, Vec<u8>), DecodeError> {
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
pub(super) fn check_decoded_size(out: &[u8], size: usize, cells: usize) -> Result<(), DecodeError> {
    if out.len() != size {
        return Err(DecodeError::Corrupt(format!(
            "{cells} cells decode to {} bytes, the block says {size}",
            out.len()
        )));
    }
    Ok(())
}
