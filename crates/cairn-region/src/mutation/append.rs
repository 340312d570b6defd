//! HBase's `Append`: bytes added to the end of columns' values, atomically per row.

use cairn_wal::Durability;

use crate::matcher::TimeRange;

/// Appends bytes to the newest values of columns in one row (HBase's `Append`). Each column's
/// new value is its newest value (within [`time_range`](Self::time_range)) followed by the
/// bytes given, or just those bytes when the column has none; the new cells are written under
/// one sequence id, as HBase's `HRegion.append` does.
#[derive(Clone, Debug, PartialEq)]
pub struct Append {
    /// The row.
    pub row: Vec<u8>,
    /// `(family, qualifier, bytes to append)` per column, in the order added.
    pub columns: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)>,
    /// `None` = the table's durability (`USE_DEFAULT`).
    pub durability: Option<Durability>,
    /// Only versions in this range count as the current value (HBase's `setTimeRange`); a
    /// column with none in it gets just the appended bytes. All time by default.
    pub time_range: TimeRange,
    /// Whether the new cells come back (HBase's `setReturnResults`, true by default).
    pub return_results: bool,
}

impl Append {
    /// An append to `row`, no columns yet.
    pub fn new(row: impl AsRef<[u8]>) -> Append {
        Append {
            row: row.as_ref().to_vec(),
            columns: Vec::new(),
            durability: None,
            time_range: TimeRange::default(),
            return_results: true,
        }
    }

    /// Appends `value` to column `f:q` (HBase's `addColumn`).
    pub fn add(
        mut self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Append {
        self.columns.push((
            family.as_ref().to_vec(),
            qualifier.as_ref().to_vec(),
            value.as_ref().to_vec(),
        ));
        self
    }

    /// Overrides the table's durability for this append (HBase's `setDurability`).
    pub fn durability(mut self, d: Durability) -> Append {
        self.durability = Some(d);
        self
    }

    /// Reads the current values within `tr` only (HBase's `setTimeRange`).
    pub fn time_range(mut self, tr: TimeRange) -> Append {
        self.time_range = tr;
        self
    }

    /// Whether the new cells come back (HBase's `setReturnResults`).
    pub fn return_results(mut self, on: bool) -> Append {
        self.return_results = on;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_append_returns_results_over_all_time_unless_told() {
        let a = Append::new("r").add("f", "a", "x").add("g", "b", "yz");
        assert_eq!(a.row, b"r");
        assert_eq!(
            a.columns,
            vec![
                (b"f".to_vec(), b"a".to_vec(), b"x".to_vec()),
                (b"g".to_vec(), b"b".to_vec(), b"yz".to_vec()),
            ]
        );
        assert!(a.return_results && a.time_range.is_all_time() && a.durability.is_none());
        let a = a
            .return_results(false)
            .time_range(TimeRange::new(5, 9))
            .durability(Durability::SkipWal);
        assert!(!a.return_results);
        assert_eq!(a.time_range, TimeRange::new(5, 9));
        assert_eq!(a.durability, Some(Durability::SkipWal));
    }
}
