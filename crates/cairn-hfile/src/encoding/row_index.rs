//! ROW_INDEX_V1 (HBase's `RowIndexCodecV1`): the cells in the plain layout, then the number of
//! rows, the offset of each row's first cell in the cells, and the cells' size (4-byte
//! big-endian ints). Decoding takes the cells as they are, after checking that the index
//! agrees with them.

use super::plain::each_plain_cell;
use super::DecodeError;
use crate::cell::{parse_block_cell, CellLayout};

pub(super) fn decode(body: &[u8], layout: CellLayout) -> Result<Vec<u8>, DecodeError> {
    let int_at = |at: usize, what: &str| -> Result<usize, DecodeError> {
        let b = body
            .get(at..at + 4)
            .ok_or_else(|| DecodeError::Corrupt(format!("{what} at byte {at} is past the end")))?;
        let v = i32::from_be_bytes(b.try_into().expect("4 bytes"));
        usize::try_from(v)
            .map_err(|_| DecodeError::Corrupt(format!("{what} {v} at byte {at} is negative")))
    };
    let len = body.len();
    if len < 8 {
        return Err(DecodeError::Corrupt(format!(
            "a ROW_INDEX_V1 block of {len} bytes has no room for its row index"
        )));
    }
    let data_size = int_at(len - 4, "cells size")?;
    if data_size > len - 8 {
        return Err(DecodeError::Corrupt(format!(
            "cells size {data_size} does not leave room for the row index in {len} bytes"
        )));
    }
    let rows = int_at(data_size, "row count")?;
    if rows
        .checked_mul(4)
        .and_then(|n| n.checked_add(data_size + 8))
        != Some(len)
    {
        return Err(DecodeError::Corrupt(format!(
            "{rows} rows and {data_size} bytes of cells do not make a block of {len} bytes"
        )));
    }
    // Walk the cells; every row's first cell must be where the index says.
    let cells = &body[..data_size];
    let mut pos = 0;
    let mut row = 0;
    let mut prev_row: Option<&[u8]> = None;
    while pos < cells.len() {
        let (cell, next) = parse_block_cell(cells, pos, layout)
            .map_err(|e| DecodeError::Corrupt(format!("cell at byte {pos}: {e}")))?;
        if prev_row != Some(cell.row()) {
            let listed = if row < rows {
                Some(int_at(data_size + 4 + 4 * row, "row offset")?)
            } else {
                None
            };
            if listed != Some(pos) {
                return Err(DecodeError::Corrupt(format!(
                    "row {row} starts at byte {pos}, the row index says {listed:?}"
                )));
            }
            row += 1;
        }
        prev_row = Some(cell.row());
        pos = next;
    }
    if row != rows {
        return Err(DecodeError::Corrupt(format!(
            "the row index lists {rows} rows, the cells hold {row}"
        )));
    }
    Ok(cells.to_vec())
}

/// Writes the cells of a plain block as ROW_INDEX_V1 does, after the encoding id: the cells
/// as they are, then the row index.
pub(super) fn encode(plain: &[u8], layout: CellLayout, out: &mut Vec<u8>) -> Result<(), String> {
    let size = i32::try_from(plain.len()).map_err(|_| {
        format!(
            "a block of {} bytes is larger than HBase reads",
            plain.len()
        )
    })?;
    let mut offsets: Vec<u8> = Vec::new();
    let mut rows = 0i32;
    let mut at = 0usize;
    each_plain_cell(plain, layout, |c, prev| {
        if prev.is_none_or(|p| p.key[2..2 + p.row_len] != c.key[2..2 + c.row_len]) {
            offsets.extend_from_slice(&(at as i32).to_be_bytes());
            rows += 1;
        }
        at += 8 + c.key.len() + c.value.len() + c.tags.map_or(0, |t| 2 + t.len()) + c.mvcc.len();
        Ok(())
    })?;
    out.extend_from_slice(plain);
    out.extend_from_slice(&rows.to_be_bytes());
    out.extend_from_slice(&offsets);
    out.extend_from_slice(&size.to_be_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use proptest::prelude::*;

    /// ROW_INDEX_V1 as HBase's encoder writes it: the plain cells, then the row count, each
    /// new row's offset and the cells' size.
    fn reference(cells: &[TestCell], layout: CellLayout) -> Vec<u8> {
        let mut out = Vec::new();
        let mut offsets = Vec::new();
        let mut prev: Option<&TestCell> = None;
        for c in cells {
            if prev.is_none_or(|p| p.0 != c.0) {
                offsets.push(out.len() as u32);
            }
            out.extend_from_slice(&plain(std::slice::from_ref(c), layout));
            prev = Some(c);
        }
        let size = out.len() as u32;
        out.extend_from_slice(&(offsets.len() as u32).to_be_bytes());
        for o in offsets {
            out.extend_from_slice(&o.to_be_bytes());
        }
        out.extend_from_slice(&size.to_be_bytes());
        out
    }

    encoding_properties!(
        // ROW_INDEX_V1 never compresses tags.
        reference: |cells: &[TestCell], layout, _| reference(cells, layout),
        encode: |plain: &[u8], layout, _| {
            let mut body = Vec::new();
            encode(plain, layout, &mut body).map(|()| body)
        },
        decode: |body: &[u8], layout, _| decode(body, layout),
    );

    #[test]
    fn an_index_that_disagrees_with_the_cells_is_an_error() {
        let layout = CellLayout {
            tags: false,
            mvcc: true,
        };
        let cell = |row: &[u8]| (row.to_vec(), b"q".to_vec(), 1, 4, b"v".to_vec(), vec![], 7);
        let body = reference(&[cell(b"a"), cell(b"a"), cell(b"b")], layout);
        assert!(decode(&body, layout).is_ok());
        // Row 1's offset moved by one.
        let mut moved = body.clone();
        let at = moved.len() - 4 - 4 + 3;
        moved[at] += 1;
        let e = decode(&moved, layout).unwrap_err();
        assert!(
            matches!(&e, DecodeError::Corrupt(m) if m.contains("row 1 starts at")),
            "{e:?}"
        );
        // A size that leaves the index no room.
        let mut short = body;
        let n = short.len();
        short[n - 1] = 0xff;
        assert!(decode(&short, layout).is_err());
    }
}
