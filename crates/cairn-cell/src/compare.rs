//! HBase's cell order (`CellComparatorImpl`).

use std::cmp::Ordering;

use crate::{CellError, CellRef, KeyRef};

/// HBase's key order (`CellComparatorImpl`, ignoring sequence ids): row, then family, then
/// qualifier ascending as unsigned bytes; timestamp descending; type code descending. A
/// "last on row" key sorts after every other key of its row.
#[inline]
pub fn compare_keys(a: &KeyRef<'_>, b: &KeyRef<'_>) -> Ordering {
    compare_bytes(a.row(), b.row()).then_with(|| {
        if a.is_last_on_row() {
            return Ordering::Greater;
        }
        if b.is_last_on_row() {
            return Ordering::Less;
        }
        compare_bytes(a.family(), b.family())
            .then_with(|| compare_bytes(a.qualifier(), b.qualifier()))
            .then_with(|| b.timestamp().cmp(&a.timestamp()))
            .then_with(|| b.type_code().cmp(&a.type_code()))
    })
}

/// Unsigned lexicographic order, inlined and eight bytes at a time: rows, families and
/// qualifiers are short, and a call into `memcmp` per comparison dominated seeks.
#[inline]
pub fn compare_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_be_bytes(a[i..i + 8].try_into().expect("8 bytes"));
        let y = u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        if x != y {
            return x.cmp(&y);
        }
        i += 8;
    }
    while i < n {
        if a[i] != b[i] {
            return a[i].cmp(&b[i]);
        }
        i += 1;
    }
    a.len().cmp(&b.len())
}

/// Byte equality without a call into `memcmp` (see [`compare_bytes`]): for the rows and
/// family names a scan compares for every cell.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && compare_bytes(a, b) == Ordering::Equal
}

/// [`compare_keys`] on serialized keys that are known to be valid.
pub fn compare_key_bytes(a: &[u8], b: &[u8]) -> Result<Ordering, CellError> {
    Ok(compare_keys(&KeyRef::parse(a)?, &KeyRef::parse(b)?))
}

/// HBase's full cell order: [`compare_keys`], then sequence id descending.
pub fn compare_cells(a: &CellRef<'_>, b: &CellRef<'_>) -> Ordering {
    compare_keys(&a.key, &b.key).then_with(|| b.sequence_id.cmp(&a.sequence_id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::test_key as key;
    use crate::{first_on_row, last_on_row, CellType};

    fn cmp(a: &[u8], b: &[u8]) -> Ordering {
        compare_key_bytes(a, b).unwrap()
    }

    #[test]
    fn order_follows_cell_comparator_impl() {
        let mut keys = vec![
            key("b", "f", "q", 1, CellType::Put),
            key("a", "f", "q", 1, CellType::Put),
            key("a", "f", "q", 2, CellType::Put),
            key("a", "f", "q", 2, CellType::DeleteColumn),
            key("a", "f", "", 0, CellType::DeleteFamily),
            key("a", "g", "", 9, CellType::Put),
            key("a", "f", "r", 9, CellType::Put),
            key("ab", "", "", 0, CellType::Put),
            last_on_row(b"a").unwrap(),
            first_on_row(b"a").unwrap(),
        ];
        keys.sort_by(|a, b| cmp(a, b));
        let shown: Vec<String> = keys
            .iter()
            .map(|k| format!("{:?}", KeyRef::parse(k).unwrap()))
            .collect();
        assert_eq!(
            shown,
            [
                "a/:/9223372036854775807/Maximum",
                "a/f:/0/DeleteFamily",
                "a/f:q/2/DeleteColumn",
                "a/f:q/2/Put",
                "a/f:q/1/Put",
                "a/f:r/9/Put",
                "a/g:/9/Put",
                "a/:/9223372036854775807/Minimum",
                "ab/:/0/Put",
                "b/f:q/1/Put",
            ]
        );
        // Negative timestamps sort after positive ones (signed, descending).
        assert_eq!(
            cmp(
                &key("a", "f", "q", -1, CellType::Put),
                &key("a", "f", "q", 1, CellType::Put)
            ),
            Ordering::Greater
        );
    }

    #[test]
    fn compare_bytes_is_slice_order_and_same_bytes_is_equality() {
        let words: Vec<Vec<u8>> = vec![
            vec![],
            vec![0],
            vec![0, 0],
            vec![1],
            vec![0xFF; 9],
            vec![0xFF; 8],
            b"row-00000001".to_vec(),
            b"row-00000010".to_vec(),
            b"row-0000001".to_vec(),
        ];
        for a in &words {
            for b in &words {
                assert_eq!(compare_bytes(a, b), a.cmp(b), "{a:?} {b:?}");
                assert_eq!(same_bytes(a, b), a == b, "{a:?} {b:?}");
            }
        }
    }
}
