//! HBase's cell order (`CellComparatorImpl`).

use std::cmp::Ordering;

use crate::{CellError, CellRef, KeyRef};

/// HBase's key order (`CellComparatorImpl`, ignoring sequence ids): row, then family, then
/// qualifier ascending as unsigned bytes; timestamp descending; type code descending. A
/// "last on row" key sorts after every other key of its row.
#[inline]
pub fn compare_keys(a: &KeyRef<'_>, b: &KeyRef<'_>) -> Ordering {
    compare_bytes(a.row(), b.row()).then_with(|| compare_keys_without_row(a, b))
}

/// `hbase:meta`'s key order (`MetaCellComparator`): rows by [`compare_meta_rows`], the rest
/// as [`compare_keys`].
pub fn compare_meta_keys(a: &KeyRef<'_>, b: &KeyRef<'_>) -> Ordering {
    compare_meta_rows(a.row(), b.row()).then_with(|| compare_keys_without_row(a, b))
}

/// The order of two keys of one row (`CellComparatorImpl.compareWithoutRow`).
#[inline]
fn compare_keys_without_row(a: &KeyRef<'_>, b: &KeyRef<'_>) -> Ordering {
    if a.is_last_on_row() {
        return if b.is_last_on_row() {
            Ordering::Equal
        } else {
            Ordering::Greater
        };
    }
    if b.is_last_on_row() {
        return Ordering::Less;
    }
    compare_bytes(a.family(), b.family())
        .then_with(|| compare_bytes(a.qualifier(), b.qualifier()))
        .then_with(|| b.timestamp().cmp(&a.timestamp()))
        .then_with(|| b.type_code().cmp(&a.type_code()))
}

/// `hbase:meta`'s row order (`MetaCellComparator.compareRows`): a meta row
/// `<table>,<start key>,<region id>.<encoded name>.` compares by table name, then start key,
/// then the rest, each part bytewise, not by the whole row's bytes (which would put `t ,`
/// before `t,`). The start key is what lies between the first comma and the last one.
pub fn compare_meta_rows(l: &[u8], r: &[u8]) -> Ordering {
    let (ld, rd) = (
        l.iter().position(|&b| b == b','),
        r.iter().position(|&b| b == b','),
    );
    let o = compare_bytes(&l[..ld.unwrap_or(l.len())], &r[..rd.unwrap_or(r.len())]);
    if o != Ordering::Equal {
        return o;
    }
    let (ls, rs) = match (ld, rd) {
        (None, Some(_)) => return Ordering::Less,
        (Some(_), None) => return Ordering::Greater,
        (None, None) => return Ordering::Equal,
        (Some(a), Some(b)) => (a + 1, b + 1),
    };
    let lf = l[ls..].iter().rposition(|&b| b == b',').map(|i| i + ls);
    let rf = r[rs..].iter().rposition(|&b| b == b',').map(|i| i + rs);
    let o = compare_bytes(&l[ls..lf.unwrap_or(l.len())], &r[rs..rf.unwrap_or(r.len())]);
    if o != Ordering::Equal {
        return o;
    }
    // As HBase: with no second delimiter the last part compared is the whole row.
    compare_bytes(&l[lf.map_or(0, |f| f + 1)..], &r[rf.map_or(0, |f| f + 1)..])
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
    fn meta_rows_sort_by_table_then_start_key_then_id() {
        use Ordering::*;
        // The client's region scan of table t runs from "t,," to "t ,," in this order.
        assert_eq!(compare_meta_rows(b"t,,1.a.", b"t ,,"), Less);
        assert_eq!(compare_meta_rows(b"t,,", b"t,,1.a."), Less);
        assert_eq!(compare_meta_rows(b"t,b,1.a.", b"t ,,"), Less);
        assert_eq!(
            compare_meta_rows(b"t", b"t,,1.a."),
            Less,
            "the table state row first"
        );
        assert_eq!(compare_meta_rows(b"t,a,2.x.", b"t,b,1.y."), Less);
        assert_eq!(compare_meta_rows(b"t,a,1.x.", b"t,a,2.x."), Less);
        // A start key with a comma: the middle part ends at the last comma.
        assert_eq!(compare_meta_rows(b"t,a,b,1.x.", b"t,a,c,1.x."), Less);
        assert_eq!(compare_meta_rows(b"s,z,1.x.", b"t,,1.x."), Less);
        assert_eq!(compare_meta_rows(b"t,,1.x.", b"t,,1.x."), Equal);
        // Plain byte order would say otherwise.
        assert_eq!(b"t,,1.a.".as_slice().cmp(b"t ,,".as_slice()), Greater);
    }

    #[test]
    fn meta_keys_order_rows_as_meta_and_the_rest_as_every_table() {
        let k = |row: &str, q: &str| key(row, "info", q, 1, CellType::Put);
        let mut keys = [
            k("t ,,", "a"),
            last_on_row(b"t,,1.x.").unwrap(),
            k("t,,1.x.", "server"),
            first_on_row(b"t,,1.x.").unwrap(),
            k("t,,1.x.", "regioninfo"),
            k("t", "state"),
        ];
        keys.sort_by(|a, b| {
            compare_meta_keys(&KeyRef::parse(a).unwrap(), &KeyRef::parse(b).unwrap())
        });
        let shown: Vec<String> = keys
            .iter()
            .map(|k| format!("{:?}", KeyRef::parse(k).unwrap()))
            .collect();
        assert_eq!(
            shown,
            [
                "t/info:state/1/Put",
                "t,,1.x./:/9223372036854775807/Maximum",
                "t,,1.x./info:regioninfo/1/Put",
                "t,,1.x./info:server/1/Put",
                "t,,1.x./:/9223372036854775807/Minimum",
                "t ,,/info:a/1/Put",
            ]
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
