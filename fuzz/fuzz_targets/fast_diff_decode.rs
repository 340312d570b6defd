//! Fuzzes the decoder of HBase's FAST_DIFF data block encoding: any block body gives the
//! decoded cells or an error, never a panic, and decoded cells always parse as plain cells.
//!
//! The first input byte chooses the cell layout (bit 0: tags, bit 1: sequence ids, bit 2:
//! compressed tags); the rest is the block body after its encoding id.
#![no_main]

use cairn_hfile::cell::{parse_block_cell, CellLayout};
use cairn_hfile::encoding::decode_fast_diff;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let layout = CellLayout {
        tags: mode & 1 != 0,
        mvcc: mode & 2 != 0,
    };
    if let Ok(cells) = decode_fast_diff(body, layout, mode & 4 != 0) {
        let mut pos = 0;
        while pos < cells.len() {
            match parse_block_cell(&cells, pos, layout) {
                Ok((_, next)) if next > pos => pos = next,
                other => panic!("decoded cells do not parse at {pos}: {other:?}"),
            }
        }
    }
});
