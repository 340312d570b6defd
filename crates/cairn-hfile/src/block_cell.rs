//! How a data block lays out its plain (unencoded) cells, and the in-memory cell index a
//! reader builds over a block. The cell itself (its key, order and views) is cairn-cell's;
//! this file is what HFile adds around it. Reached as `crate::cell::*` with the rest of the
//! cell model (see the `cell` module in lib.rs).

use crate::cell::{CellRef, KeyRef};

/// What a data block's cells carry besides key and value (from the file's info): a tags
/// section (`MAX_TAGS_LEN` present) and a sequence id (`KEY_VALUE_VERSION` = 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellLayout {
    /// Every cell has `tagsLength u16 | tags`.
    pub tags: bool,
    /// Every cell ends with its sequence id as a Hadoop vlong.
    pub mvcc: bool,
}

/// Parses the cell at `pos` of a data block body: `keyLength i32 | valueLength i32 | key |
/// value | [tags] | [sequence id]`. Returns the cell and where the next one starts.
#[inline]
pub fn parse_block_cell(
    data: &[u8],
    pos: usize,
    layout: CellLayout,
) -> Result<(CellRef<'_>, usize), String> {
    let lens = data.get(pos..pos + 8).ok_or("lengths cut off")?;
    let klen = u32::from_be_bytes(lens[..4].try_into().expect("4 bytes")) as usize;
    let vlen = u32::from_be_bytes(lens[4..].try_into().expect("4 bytes")) as usize;
    let key_start = pos + 8;
    let value_start = key_start.checked_add(klen).ok_or("key length overflows")?;
    let mut at = value_start
        .checked_add(vlen)
        .ok_or("value length overflows")?;
    if at > data.len() {
        return Err(format!(
            "key of {klen} and value of {vlen} bytes run past the block"
        ));
    }
    let key = KeyRef::parse(&data[key_start..value_start]).map_err(|e| e.to_string())?;
    let value = &data[value_start..at];
    let mut tags: &[u8] = &[];
    if layout.tags {
        let t = data.get(at..at + 2).ok_or("tags length cut off")?;
        let tlen = u16::from_be_bytes([t[0], t[1]]) as usize;
        tags = data.get(at + 2..at + 2 + tlen).ok_or("tags cut off")?;
        at += 2 + tlen;
    }
    let mut sequence_id = 0;
    if layout.mvcc {
        let (v, used) = crate::vint::read_vlong(&data[at..]).ok_or("sequence id cut off")?;
        sequence_id = v as u64;
        at += used;
    }
    Ok((
        CellRef {
            key,
            value,
            tags,
            sequence_id,
        },
        at,
    ))
}

/// An in-memory index of a data block's cells, so a seek binary searches a small contiguous
/// array instead of walking (or jumping around) a 64 KiB block in memory: `prefix length u16 |
/// prefix (the row bytes every cell shares) | n u32 | n × (offset u32, row fingerprint u64)`,
/// little-endian. `None` if the block does not parse.
pub fn build_cell_index(data: &[u8], layout: CellLayout) -> Option<Vec<u8>> {
    // One pass over the cells: their offsets and rows; then the fingerprints.
    let mut cells: Vec<(u32, &[u8])> = Vec::with_capacity(data.len() / 512 + 1);
    let mut pos = 0;
    while pos < data.len() {
        let (cell, next) = parse_block_cell(data, pos, layout).ok()?;
        cells.push((u32::try_from(pos).ok()?, cell.row()));
        pos = next;
    }
    let (first, last) = (cells.first()?.1, cells.last()?.1);
    // Rows are sorted, so the first and last share the prefix every row of the block shares.
    let common = first
        .iter()
        .zip(last)
        .take_while(|(a, b)| a == b)
        .count()
        .min(u16::MAX as usize);
    let mut index = Vec::with_capacity(6 + common + cells.len() * 12);
    index.extend_from_slice(&(common as u16).to_le_bytes());
    index.extend_from_slice(&first[..common]);
    index.extend_from_slice(&(cells.len() as u32).to_le_bytes());
    for (o, row) in cells {
        index.extend_from_slice(&o.to_le_bytes());
        index.extend_from_slice(&row_fingerprint(row, common).to_le_bytes());
    }
    Some(index)
}

/// Eight bytes of `row` after its first `skip`, zero-padded, as a big-endian number: ordered
/// like the rows themselves (ties need a full compare).
#[inline]
pub fn row_fingerprint(row: &[u8], skip: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(rest) = row.get(skip..) {
        let n = rest.len().min(8);
        b[..n].copy_from_slice(&rest[..n]);
    }
    u64::from_be_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::{make_key, CellType};

    /// Row, value, tags and sequence id of a test cell.
    type Cell<'a> = (&'a [u8], &'a [u8], &'a [u8], i64);

    fn block(cells: &[Cell<'_>], layout: CellLayout) -> Vec<u8> {
        let mut b = Vec::new();
        for (row, value, tags, seq) in cells {
            let k = make_key(row, b"f", b"q", 7, CellType::Put.code()).unwrap();
            b.extend_from_slice(&(k.len() as u32).to_be_bytes());
            b.extend_from_slice(&(value.len() as u32).to_be_bytes());
            b.extend_from_slice(&k);
            b.extend_from_slice(value);
            if layout.tags {
                b.extend_from_slice(&(tags.len() as u16).to_be_bytes());
                b.extend_from_slice(tags);
            }
            if layout.mvcc {
                crate::vint::write_vlong(&mut b, *seq);
            }
        }
        b
    }

    #[test]
    fn block_cells_parse_in_every_layout_and_truncation_is_an_error() {
        let tags: &[u8] = &[0, 1, 9, b't'];
        let cells: [Cell<'_>; 2] = [(b"r1", b"v-one", b"", 5), (b"r2", b"v-two", tags, 300)];
        for (t, m) in [(false, false), (true, false), (false, true), (true, true)] {
            let layout = CellLayout { tags: t, mvcc: m };
            let data = block(&cells, layout);
            let (first, next) = parse_block_cell(&data, 0, layout).unwrap();
            let (second, end) = parse_block_cell(&data, next, layout).unwrap();
            assert_eq!(end, data.len(), "{layout:?}");
            assert_eq!((first.row(), first.value), (&b"r1"[..], &b"v-one"[..]));
            assert_eq!((second.row(), second.value), (&b"r2"[..], &b"v-two"[..]));
            assert_eq!(second.tags, if t { tags } else { &[][..] }, "{layout:?}");
            let seqs = (first.sequence_id, second.sequence_id);
            assert_eq!(seqs, if m { (5, 300) } else { (0, 0) }, "{layout:?}");
            for cut in next + 1..data.len() {
                assert!(
                    parse_block_cell(&data[..cut], next, layout).is_err(),
                    "{cut}"
                );
            }
            let index = build_cell_index(&data, layout).unwrap();
            // Shared row prefix "r", two cells at offsets 0 and `next`.
            assert_eq!(&index[..3], &[1, 0, b'r']);
            assert_eq!(&index[3..7], &2u32.to_le_bytes());
            assert_eq!(&index[7..11], &0u32.to_le_bytes());
            assert_eq!(&index[19..23], &(next as u32).to_le_bytes());
        }
    }
}
