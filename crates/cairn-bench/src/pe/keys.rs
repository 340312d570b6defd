//! PE's table layout: row keys, family names, the presplit points (the filter `--filterAll`
//! adds is cairn-filter's `FilterAllFilter`).

/// PE's `ROW_LENGTH`: keys are this many decimal digits.
pub const ROW_LENGTH: usize = 26;
/// PE's `FAMILY_NAME_BASE`: families are `info0`, `info1`, ….
pub const FAMILY_NAME_BASE: &str = "info";

/// PE's `format(int)`: the row number as 26 zero-padded decimal digits, filled from the right
/// as PE does (`format!` was ~8% of the client thread's profile in randomRead; the peers'
/// benches fill their keys the same way as this).
pub fn format_row(mut n: u64) -> Vec<u8> {
    let mut row = vec![b'0'; ROW_LENGTH];
    for d in row.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    row
}

/// PE's `getSplits`: `presplit - 1` keys at multiples of `totalRows / presplit`.
pub fn split_keys(presplit: u32, total_rows: u64) -> Vec<Vec<u8>> {
    if presplit <= 1 {
        return Vec::new();
    }
    let jump = total_rows / presplit as u64;
    (1..presplit as u64).map(|i| format_row(jump * i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_pe_keys() {
        assert_eq!(format_row(0), b"00000000000000000000000000".to_vec());
        assert_eq!(format_row(1234), b"00000000000000000000001234".to_vec());
        assert_eq!(format_row(i32::MAX as u64).len(), ROW_LENGTH);
        for n in [0, 9, 10, 99_999, i32::MAX as u64, u64::MAX] {
            assert_eq!(format_row(n), format!("{n:026}").into_bytes(), "{n}");
        }
    }

    #[test]
    fn splits_follow_pe() {
        let k = split_keys(4, 1000);
        assert_eq!(k, vec![format_row(250), format_row(500), format_row(750)]);
        assert!(split_keys(1, 1000).is_empty());
        assert!(split_keys(0, 1000).is_empty());
    }
}
