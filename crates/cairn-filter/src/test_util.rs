//! Helpers for the unit tests.

use cairn_cell::compare_cells;
use cairn_cell::KeyValue;

use crate::driver::{apply_filter, Outcome};
use crate::Filter;

/// A Put.
pub(crate) fn kv(row: &str, family: &str, qualifier: &str, ts: i64, value: &str) -> KeyValue {
    KeyValue::put(
        row.as_bytes(),
        family.as_bytes(),
        qualifier.as_bytes(),
        ts,
        value.as_bytes(),
    )
    .expect("valid cell")
}

/// Puts in HBase's order.
pub(crate) fn cells(spec: &[(&str, &str, &str, i64, &str)]) -> Vec<KeyValue> {
    let mut v: Vec<KeyValue> = spec
        .iter()
        .map(|&(r, f, q, t, val)| kv(r, f, q, t, val))
        .collect();
    v.sort_by(|a, b| compare_cells(&a.as_cell(), &b.as_cell()));
    v
}

/// All versions, HBase's call order.
pub(crate) fn run(filter: &mut dyn Filter, cells: &[KeyValue]) -> Outcome {
    apply_filter(filter, cells, usize::MAX)
}

/// The row of every returned cell.
pub(crate) fn rows_of(rows: &[Vec<KeyValue>]) -> Vec<String> {
    rows.iter()
        .flatten()
        .map(|c| String::from_utf8_lossy(c.as_cell().row()).into_owned())
        .collect()
}

/// The value of every returned cell.
pub(crate) fn values_of(rows: &[Vec<KeyValue>]) -> Vec<String> {
    rows.iter()
        .flatten()
        .map(|c| String::from_utf8_lossy(c.as_cell().value).into_owned())
        .collect()
}
