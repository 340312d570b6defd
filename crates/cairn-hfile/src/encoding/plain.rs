//! The encoders' side of plain cells: walking a plain block cell by cell (each with the one
//! before it), a cell's parts, and the key prefix two cells share as HBase counts it.

use super::input::Input;
use crate::cell::CellLayout;
use crate::vint::read_vlong;

/// One cell of a plain block, as the encoder needs its parts.
pub(super) struct PlainCell<'a> {
    pub(super) key: &'a [u8],
    pub(super) value: &'a [u8],
    pub(super) row_len: usize,
    pub(super) tags: Option<&'a [u8]>,
    /// The sequence id's vlong bytes, copied as they are.
    pub(super) mvcc: &'a [u8],
}

fn plain_cell<'a>(input: &mut Input<'a>, layout: CellLayout) -> Result<PlainCell<'a>, String> {
    let key_len = u32::from_be_bytes(input.take(4, "key length")?.try_into().expect("4 bytes"));
    let value_len = u32::from_be_bytes(input.take(4, "value length")?.try_into().expect("4 bytes"));
    let key = input.take(key_len as usize, "key")?;
    let value = input.take(value_len as usize, "value")?;
    let row_len = match key {
        [a, b, ..] => usize::from(u16::from_be_bytes([*a, *b])),
        _ => 0,
    };
    let family_len = key.get(2 + row_len).map(|&f| usize::from(f));
    if family_len.is_none_or(|f| 2 + row_len + 1 + f + 9 > key.len()) {
        return Err(format!(
            "key of {} bytes is too short for its row and family",
            key.len()
        ));
    }
    let tags = if layout.tags {
        let n = u16::from_be_bytes(input.take(2, "tags length")?.try_into().expect("2 bytes"));
        Some(input.take(usize::from(n), "tags")?)
    } else {
        None
    };
    let mvcc = if layout.mvcc {
        let (_, n) =
            read_vlong(&input.bytes[input.pos..]).ok_or("sequence id runs past the end")?;
        input.take(n, "sequence id")?
    } else {
        &[]
    };
    Ok(PlainCell {
        key,
        value,
        row_len,
        tags,
        mvcc,
    })
}

impl PlainCell<'_> {
    /// Where the family (with its length byte) ends in the key.
    pub(super) fn family_end(&self) -> usize {
        2 + self.row_len + 1 + usize::from(self.key[2 + self.row_len])
    }

    /// The family with its length byte.
    pub(super) fn family(&self) -> &[u8] {
        &self.key[2 + self.row_len..self.family_end()]
    }

    pub(super) fn qualifier(&self) -> &[u8] {
        &self.key[self.family_end()..self.key.len() - 9]
    }

    pub(super) fn timestamp(&self) -> i64 {
        let at = self.key.len() - 9;
        i64::from_be_bytes(self.key[at..at + 8].try_into().expect("8 bytes"))
    }

    pub(super) fn kind(&self) -> u8 {
        self.key[self.key.len() - 1]
    }
}

/// The prefix two cells' keys share as HBase's `findCommonPrefixInFlatKey` counts it: row
/// length, row, then (same row) family and qualifier, then (same qualifier and `with_ts_type`)
/// timestamp bytes and type. The family is taken as shared: a block holds one family, and
/// cells of two families are an error.
pub(super) fn common_prefix(
    c: &PlainCell<'_>,
    p: &PlainCell<'_>,
    with_ts_type: bool,
) -> Result<usize, String> {
    let lcp = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
    if c.family() != p.family() {
        return Err("another family than the cell before it".into());
    }
    if c.row_len != p.row_len {
        return Ok(lcp(&c.key[..2], &p.key[..2]));
    }
    let row = lcp(&c.key[2..2 + c.row_len], &p.key[2..2 + p.row_len]);
    if row != c.row_len {
        return Ok(2 + row);
    }
    let (cq, pq) = (c.qualifier(), p.qualifier());
    let q = lcp(cq, pq);
    let mut common = c.family_end() + q;
    if !with_ts_type || cq.len().max(pq.len()) != q {
        return Ok(common);
    }
    let t = lcp(&c.timestamp().to_be_bytes(), &p.timestamp().to_be_bytes());
    common += t;
    if t == 8 && c.kind() == p.kind() {
        common += 1;
    }
    Ok(common)
}

/// Calls `f` with each cell of a plain block and the one before it; errors name the cell.
pub(super) fn each_plain_cell<'a>(
    plain: &'a [u8],
    layout: CellLayout,
    mut f: impl FnMut(&PlainCell<'a>, Option<&PlainCell<'a>>) -> Result<(), String>,
) -> Result<(), String> {
    let mut input = Input::new(plain);
    let mut prev: Option<PlainCell<'a>> = None;
    let mut n = 0usize;
    while input.pos < plain.len() {
        let at = input.pos;
        let what = |e: String| format!("cell {n} (byte {at}): {e}");
        let c = plain_cell(&mut input, layout).map_err(what)?;
        f(&c, prev.as_ref()).map_err(what)?;
        prev = Some(c);
        n += 1;
    }
    Ok(())
}
