//! Fuzzes the decoders of HBase's data block encodings (PREFIX, DIFF, FAST_DIFF,
//! ROW_INDEX_V1): any block body gives the decoded cells or an error, never a panic, and
//! decoded cells always parse as plain cells.
//!
//! The first input byte chooses the cell layout (bit 0: tags, bit 1: sequence ids, bit 2:
//! compressed tags) and the encoding (bits 3-4); the rest is the block body after its
//! encoding id.
#![no_main]

use cairn_hfile::cell::{parse_block_cell, CellLayout};
use cairn_hfile::encoding::{decode_cells, DataBlockEncoding};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let layout = CellLayout {
        tags: mode & 1 != 0,
        mvcc: mode & 2 != 0,
    };
    let encoding = [
        DataBlockEncoding::Prefix,
        DataBlockEncoding::Diff,
        DataBlockEncoding::FastDiff,
        DataBlockEncoding::RowIndexV1,
    ][usize::from(mode >> 3 & 3)];
    if let Ok(cells) = decode_cells(encoding, body, layout, mode & 4 != 0) {
        let mut pos = 0;
        while pos < cells.len() {
            match parse_block_cell(&cells, pos, layout) {
                Ok((_, next)) if next > pos => pos = next,
                other => panic!("{encoding:?}: decoded cells do not parse at {pos}: {other:?}"),
            }
        }
    }
});
