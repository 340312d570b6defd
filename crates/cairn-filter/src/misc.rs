//! `FirstKeyOnlyFilter`, `KeyOnlyFilter`, `PageFilter`, `TimestampsFilter`, and
//! `FilterAllFilter`.

use std::collections::BTreeSet;
use std::ops::Bound;

use cairn_cell::CellType;
use cairn_cell::{CellRef, KeyValue};

use crate::keys::{first_on_row_col_ts, last_on_row_col};
use crate::{Filter, FilterError, ReturnCode};

/// `FirstKeyOnlyFilter`: keeps the first cell the filter sees in each row.
#[derive(Debug, Clone, Default)]
pub struct FirstKeyOnlyFilter {
    found: bool,
}

impl FirstKeyOnlyFilter {
    /// A filter in its start state (no row seen yet).
    pub fn new() -> FirstKeyOnlyFilter {
        FirstKeyOnlyFilter::default()
    }
}

impl Filter for FirstKeyOnlyFilter {
    fn reset(&mut self) {
        self.found = false;
    }
    fn filter_cell(&mut self, _cell: &CellRef<'_>) -> ReturnCode {
        if self.found {
            return ReturnCode::NextRow;
        }
        self.found = true;
        ReturnCode::Include
    }
    fn filter_string(&self) -> Option<String> {
        Some("FirstKeyOnlyFilter()".to_owned())
    }
}

/// `KeyOnlyFilter`: strips values (or, with `len_as_val`, replaces each value by its length as
/// a 4-byte big-endian int). Tags are dropped and the sequence id reads 0, as in HBase's
/// `KeyOnlyCell`.
#[derive(Debug, Clone, Default)]
pub struct KeyOnlyFilter {
    len_as_val: bool,
}

impl KeyOnlyFilter {
    /// The filter; `len_as_val` keeps the value's length instead of nothing.
    pub fn new(len_as_val: bool) -> KeyOnlyFilter {
        KeyOnlyFilter { len_as_val }
    }
}

impl Filter for KeyOnlyFilter {
    fn filter_cell(&mut self, _cell: &CellRef<'_>) -> ReturnCode {
        ReturnCode::Include
    }
    fn transform_cell(&self, cell: KeyValue) -> KeyValue {
        let c = cell.as_cell();
        // HBase's getValueLength() is an int; values are far below 2 GiB.
        let len = (c.value.len() as u32).to_be_bytes();
        let value: &[u8] = if self.len_as_val { &len } else { &[] };
        let Some(cell_type) = CellType::from_code(c.type_code()) else {
            // A type code outside HBase's set cannot be rebuilt; such cells never reach a
            // filter from a valid store, so pass them through.
            return cell;
        };
        KeyValue::new(
            c.row(),
            c.family(),
            c.qualifier(),
            c.timestamp(),
            cell_type,
            value,
        )
        .unwrap_or(cell)
    }
    fn filter_string(&self) -> Option<String> {
        Some(if self.len_as_val {
            "KeyOnlyFilter(true)".to_owned()
        } else {
            "KeyOnlyFilter()".to_owned()
        })
    }
}

/// `PageFilter`: keeps the first `page_size` rows that pass the other filters. Rows are counted
/// in `filter_row`, per filter instance (so per region scan; the client merges regions).
#[derive(Debug, Clone)]
pub struct PageFilter {
    page_size: i64,
    rows_accepted: i64,
}

impl PageFilter {
    /// A page of `page_size` rows; HBase rejects a negative size.
    pub fn new(page_size: i64) -> Result<PageFilter, FilterError> {
        if page_size < 0 {
            return Err(FilterError::invalid(
                "PageFilter",
                format!("page size must not be negative, got {page_size}"),
            ));
        }
        Ok(PageFilter {
            page_size,
            rows_accepted: 0,
        })
    }
}

impl Filter for PageFilter {
    fn filter_all_remaining(&mut self) -> bool {
        self.rows_accepted >= self.page_size
    }
    fn filter_row_key(&mut self, _row: &[u8]) -> bool {
        self.filter_all_remaining()
    }
    fn filter_cell(&mut self, _cell: &CellRef<'_>) -> ReturnCode {
        ReturnCode::Include
    }
    fn has_filter_row(&self) -> bool {
        true
    }
    fn filter_row(&mut self) -> bool {
        // HBase's counter is an int; it cannot get past the page size by much.
        self.rows_accepted = self.rows_accepted.saturating_add(1);
        self.rows_accepted > self.page_size
    }
    fn filter_string(&self) -> Option<String> {
        Some(format!("PageFilter({})", self.page_size))
    }
}

/// `TimestampsFilter`: keeps cells whose timestamp is in the list.
#[derive(Debug, Clone)]
pub struct TimestampsFilter {
    timestamps: BTreeSet<i64>,
    min: i64,
    can_hint: bool,
}

impl TimestampsFilter {
    /// Keeps the listed versions; `can_hint` seeks to the next listed version instead of
    /// skipping one cell at a time (the filter language always uses `false`). HBase rejects
    /// negative timestamps.
    pub fn new(
        timestamps: impl IntoIterator<Item = i64>,
        can_hint: bool,
    ) -> Result<TimestampsFilter, FilterError> {
        let timestamps: BTreeSet<i64> = timestamps.into_iter().collect();
        if let Some(&t) = timestamps.first().filter(|&&t| t < 0) {
            return Err(FilterError::invalid(
                "TimestampsFilter",
                format!("timestamps must not be negative, got {t}"),
            ));
        }
        Ok(TimestampsFilter {
            min: timestamps.first().copied().unwrap_or(i64::MAX),
            timestamps,
            can_hint,
        })
    }
}

impl Filter for TimestampsFilter {
    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        let ts = cell.timestamp();
        if self.timestamps.contains(&ts) {
            ReturnCode::Include
        } else if ts < self.min {
            ReturnCode::NextCol
        } else if self.can_hint {
            ReturnCode::SeekNextUsingHint
        } else {
            ReturnCode::Skip
        }
    }
    fn next_cell_hint(&self, cell: &CellRef<'_>) -> Option<Vec<u8>> {
        if !self.can_hint {
            return None;
        }
        // Versions run newest first: the next wanted one is the largest listed below this.
        match self
            .timestamps
            .range((Bound::Unbounded, Bound::Excluded(cell.timestamp())))
            .next_back()
        {
            Some(&ts) => first_on_row_col_ts(cell, ts),
            None => last_on_row_col(cell),
        }
    }
    fn is_hinting(&self) -> bool {
        true
    }
    fn filter_string(&self) -> Option<String> {
        if self.can_hint {
            return None;
        }
        let list: Vec<String> = self.timestamps.iter().map(i64::to_string).collect();
        Some(format!("TimestampsFilter({})", list.join(", ")))
    }
}

/// HBase's `FilterAllFilter` (hbase-server's test jar; PerformanceEvaluation's `--filterAll`
/// sends it): every row key passes, every cell is skipped and every row is dropped, so a scan
/// reads the whole range and returns nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct FilterAllFilter;

impl Filter for FilterAllFilter {
    fn filter_row_key(&mut self, _row: &[u8]) -> bool {
        false
    }
    fn filter_cell(&mut self, _cell: &CellRef<'_>) -> ReturnCode {
        ReturnCode::Skip
    }
    fn has_filter_row(&self) -> bool {
        true
    }
    fn filter_row(&mut self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;

    fn table() -> Vec<KeyValue> {
        cells(&[
            ("r1", "f", "a", 5, "one"),
            ("r1", "f", "a", 3, "two"),
            ("r1", "f", "b", 4, "three"),
            ("r1", "g", "a", 3, "four"),
            ("r2", "f", "a", 9, "five"),
            ("r3", "f", "a", 3, "six"),
            ("r4", "f", "a", 1, "seven"),
        ])
    }

    #[test]
    fn first_key_only_keeps_one_cell_per_row() {
        let out = run(&mut FirstKeyOnlyFilter::new(), &table());
        assert_eq!(values_of(&out.rows), ["one", "five", "six", "seven"]);
    }

    #[test]
    fn key_only_strips_values() {
        let out = run(&mut KeyOnlyFilter::new(false), &table());
        assert!(out
            .rows
            .iter()
            .flatten()
            .all(|c| c.as_cell().value.is_empty()));
        assert_eq!(out.rows.iter().flatten().count(), 7);
        let tagged = kv("r", "f", "q", 1, "hello")
            .with_tags(vec![0, 2, 1, 9])
            .unwrap()
            .with_sequence_id(7);
        let t = KeyOnlyFilter::new(true).transform_cell(tagged.clone());
        assert_eq!(t.as_cell().value, &[0, 0, 0, 5]);
        assert!(t.as_cell().tags.is_empty());
        assert_eq!(t.as_cell().sequence_id, 0);
        assert_eq!(t.key(), tagged.key());
    }

    #[test]
    fn page_filter_counts_rows_in_filter_row() {
        let out = run(&mut PageFilter::new(2).unwrap(), &table());
        assert_eq!(rows_of(&out.rows), ["r1", "r1", "r1", "r1", "r2"]);
        assert!(out.stopped_early);
        // Rows dropped by another filter before filterRow are not counted.
        let mut list = crate::FilterList::new(
            crate::Operator::MustPassAll,
            vec![
                Box::new(crate::ValueFilter::new(
                    crate::CompareOp::Equal,
                    crate::Comparator::binary("six"),
                )) as Box<dyn Filter>,
                Box::new(PageFilter::new(1).unwrap()),
            ],
        );
        let out = run(&mut list, &table());
        assert_eq!(values_of(&out.rows), ["six"]);
        assert!(PageFilter::new(-1).is_err());
        let out = run(&mut PageFilter::new(0).unwrap(), &table());
        assert!(out.rows.is_empty());
    }

    #[test]
    fn timestamps_filter() {
        let mut f = TimestampsFilter::new([3, 9], false).unwrap();
        let out = run(&mut f, &table());
        assert_eq!(values_of(&out.rows), ["two", "four", "five", "six"]);
        let codes: Vec<ReturnCode> = out.calls.iter().map(|(_, c)| *c).collect();
        use ReturnCode::*;
        assert_eq!(
            codes,
            [Skip, Include, Skip, Include, Include, Include, NextCol]
        );

        let mut h = TimestampsFilter::new([3, 9], true).unwrap();
        let out = run(&mut h, &table());
        assert_eq!(values_of(&out.rows), ["two", "four", "five", "six"]);
        let c = kv("r", "f", "q", 5, "");
        assert_eq!(h.filter_cell(&c.as_cell()), SeekNextUsingHint);
        let hint = h.next_cell_hint(&c.as_cell()).unwrap();
        assert_eq!(cairn_cell::KeyRef::parse(&hint).unwrap().timestamp(), 3);
        let c = kv("r", "f", "q", 10, "");
        let hint = h.next_cell_hint(&c.as_cell()).unwrap();
        assert_eq!(cairn_cell::KeyRef::parse(&hint).unwrap().timestamp(), 9);
        let c = kv("r", "f", "q", 2, "");
        let hint = cairn_cell::KeyRef::parse(&h.next_cell_hint(&c.as_cell()).unwrap())
            .unwrap()
            .timestamp();
        assert_eq!(hint, i64::MIN, "last on the column");
        assert!(TimestampsFilter::new([-1], false).is_err());
    }
}
