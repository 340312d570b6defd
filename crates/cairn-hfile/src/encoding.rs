//! Data block encodings (HBase's `DataBlockEncoding`): which ones a file may use, each decoded
//! on read into the plain cell layout every other part of the reader works on, and each
//! written from it. Decoding once per block read keeps seeks and scans on the plain layout:
//! blocks go to the cache decoded.
//!
//! An encoded data block (`DATABLKE`) holds, after its header, the encoding's 2-byte id, then
//! what the encoding writes. PREFIX, DIFF and FAST_DIFF (HBase's `BufferedDataBlockEncoder`s)
//! start with the 4-byte size of the cells once decoded and end each cell with its tags length
//! (a 7-bit varint) and tags (dictionary-compressed when the file says so) and the sequence id
//! as in plain blocks (`encoding/buffered.rs`, the dictionary in `tags.rs`). Each encoding is
//! described in its own file: PREFIX (`prefix.rs`), DIFF (`diff.rs`), FAST_DIFF
//! (`fast_diff.rs`), ROW_INDEX_V1 (`row_index.rs`); the walk over plain cells their encoders
//! share is `plain.rs`. This file names the encodings and dispatches to them.

use crate::cell::CellLayout;

mod buffered;
mod diff;
mod fast_diff;
mod input;
mod plain;
mod prefix;
mod row_index;
mod tags;
#[cfg(test)]
mod test_support;

pub use fast_diff::{decode_fast_diff, encode_fast_diff};

/// A file's data block encoding, by its name in file info (`DATA_BLOCK_ENCODING`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataBlockEncoding {
    /// Plain cells (`DATABLK*` blocks).
    None,
    /// PREFIX (id 2): each key as the length of the prefix it shares with the previous key and
    /// the rest.
    Prefix,
    /// DIFF (id 3): FAST_DIFF's key sharing with the family written once per block and
    /// timestamps as differences.
    Diff,
    /// FAST_DIFF (id 4): HBase's most used encoding.
    FastDiff,
    /// ROW_INDEX_V1 (id 7): plain cells followed by the offset of each row.
    RowIndexV1,
}

impl DataBlockEncoding {
    /// HBase's id of FAST_DIFF, the first two bytes of an encoded block's body.
    pub const FAST_DIFF_ID: u16 = 4;

    /// Every encoding cairn reads.
    pub const ALL: [DataBlockEncoding; 5] = [
        DataBlockEncoding::None,
        DataBlockEncoding::Prefix,
        DataBlockEncoding::Diff,
        DataBlockEncoding::FastDiff,
        DataBlockEncoding::RowIndexV1,
    ];

    /// HBase's id, the first two bytes of an encoded block's body.
    pub fn id(self) -> u16 {
        match self {
            DataBlockEncoding::None => 0,
            DataBlockEncoding::Prefix => 2,
            DataBlockEncoding::Diff => 3,
            DataBlockEncoding::FastDiff => Self::FAST_DIFF_ID,
            DataBlockEncoding::RowIndexV1 => 7,
        }
    }

    /// HBase's name, as file info and family schemas spell it.
    pub fn name(self) -> &'static str {
        match self {
            DataBlockEncoding::None => "NONE",
            DataBlockEncoding::Prefix => "PREFIX",
            DataBlockEncoding::Diff => "DIFF",
            DataBlockEncoding::FastDiff => "FAST_DIFF",
            DataBlockEncoding::RowIndexV1 => "ROW_INDEX_V1",
        }
    }

    /// The encoding a file-info name denotes, if cairn reads it.
    pub fn from_name(name: &[u8]) -> Option<DataBlockEncoding> {
        Self::ALL.into_iter().find(|e| e.name().as_bytes() == name)
    }
}

/// Decodes the body of an encoded data block (after its 2-byte encoding id) into the plain
/// layout: `keyLength | valueLength | key | value | [tagsLength | tags] | [sequence id]`.
/// `tags_compressed`: the file's tags are dictionary-compressed (HBase's `COMPRESS_TAGS`).
pub fn decode_cells(
    encoding: DataBlockEncoding,
    body: &[u8],
    layout: CellLayout,
    tags_compressed: bool,
) -> Result<Vec<u8>, DecodeError> {
    match encoding {
        DataBlockEncoding::None => Err(DecodeError::Corrupt(
            "an encoded block in a file without an encoding".into(),
        )),
        DataBlockEncoding::Prefix => prefix::decode(body, layout, tags_compressed),
        DataBlockEncoding::Diff => diff::decode(body, layout, tags_compressed),
        DataBlockEncoding::FastDiff => fast_diff::decode(body, layout, tags_compressed),
        DataBlockEncoding::RowIndexV1 => row_index::decode(body, layout),
    }
}

/// Encodes the cells of a plain data block body (all of one family, in order) as the body of
/// an encoded block: the encoding's id, then what the encoding writes, as HBase's encoder
/// writes it. `compress_tags`: tags are written with a dictionary per block (HBase's
/// `COMPRESS_TAGS`; ROW_INDEX_V1 never compresses them). Appends to `out`; an error names the
/// cell that is not a well-formed plain cell.
pub fn encode_cells(
    encoding: DataBlockEncoding,
    plain: &[u8],
    layout: CellLayout,
    compress_tags: bool,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let mut dictionary = compress_tags.then(tags::TagDictionary::default);
    match encoding {
        DataBlockEncoding::None => return Err("NONE is not an encoding of data blocks".into()),
        DataBlockEncoding::FastDiff => return encode_fast_diff(plain, layout, compress_tags, out),
        _ => {}
    }
    out.extend_from_slice(&encoding.id().to_be_bytes());
    match encoding {
        DataBlockEncoding::Prefix => prefix::encode(plain, layout, &mut dictionary, out),
        DataBlockEncoding::Diff => diff::encode(plain, layout, &mut dictionary, out),
        _ => row_index::encode(plain, layout, out),
    }
}

/// Why a block could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes are not a valid encoding.
    Corrupt(String),
    /// Valid, but uses something cairn does not decode.
    Unsupported(String),
}

impl From<String> for DecodeError {
    fn from(s: String) -> Self {
        DecodeError::Corrupt(s)
    }
}
