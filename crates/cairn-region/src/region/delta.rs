//! Increments and appends: read-modify-write of columns under the row lock, as HBase's
//! `reckonDeltas` / `reckonDeltasByStore` / `reckonDelta` compute them.

use super::*;
use crate::matcher::TimeRange;
use crate::mutation::Append;

/// What an increment or append does to one column's current value.
enum Delta<'a> {
    /// Adds to an 8-byte big-endian long.
    Add(i64),
    /// Appends bytes.
    Append(&'a [u8]),
}

/// One column of an increment or append, with the request's settings.
struct Deltas<'a> {
    row: &'a [u8],
    columns: Vec<(&'a [u8], &'a [u8], Delta<'a>)>,
    time_range: TimeRange,
    durability: Option<Durability>,
    return_results: bool,
}

impl Region {
    /// Adds to counters (8-byte big-endian longs), atomically for the row; returns the new
    /// cells (sorted by family and qualifier, as HBase returns them), or none if the
    /// increment asked for no results. A counter's new cell is stamped now, or just after the
    /// current value when that is newer; an increment by 0 writes too, as in HBase 2.x.
    /// A current value that is not 8 bytes fails the increment with
    /// [`RegionError::InvalidArgument`] (HBase's `DoNotRetryIOException`), writing nothing.
    pub fn increment(&self, inc: &Increment) -> Result<Vec<KeyValue>> {
        let _row = self.row_lock(&inc.row).write();
        self.increment_locked(inc)
    }

    pub(super) fn increment_locked(&self, inc: &Increment) -> Result<Vec<KeyValue>> {
        self.apply_deltas(Deltas {
            row: &inc.row,
            columns: inc
                .columns
                .iter()
                .map(|(f, q, n)| (f.as_slice(), q.as_slice(), Delta::Add(*n)))
                .collect(),
            time_range: inc.time_range,
            durability: inc.durability,
            return_results: inc.return_results,
        })
    }

    /// Appends bytes to columns' newest values (just the bytes for a column with none),
    /// atomically for the row under one sequence id (HBase's `append`); returns the new cells
    /// like [`Region::increment`], stamped the same way.
    pub fn append(&self, append: &Append) -> Result<Vec<KeyValue>> {
        let _row = self.row_lock(&append.row).write();
        self.append_locked(append)
    }

    pub(super) fn append_locked(&self, append: &Append) -> Result<Vec<KeyValue>> {
        self.apply_deltas(Deltas {
            row: &append.row,
            columns: append
                .columns
                .iter()
                .map(|(f, q, v)| (f.as_slice(), q.as_slice(), Delta::Append(v)))
                .collect(),
            time_range: append.time_range,
            durability: append.durability,
            return_results: append.return_results,
        })
    }

    /// HBase's `reckonDeltas`: reads the newest value of every column (within the time
    /// range) in one get, computes each new cell from it, and applies them all under one
    /// sequence id. The caller holds the row's lock exclusively.
    fn apply_deltas(&self, mut d: Deltas<'_>) -> Result<Vec<KeyValue>> {
        self.check_row(d.row)?;
        for (f, _, _) in &d.columns {
            self.check_family(f)?;
        }
        if d.columns.is_empty() {
            return Ok(Vec::new());
        }
        // HBase sorts each family's deltas by qualifier (stably) and goes family by family;
        // two deltas to one column both start from its current value, the later one is read
        // back.
        d.columns.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let mut get = Get::new(d.row).time_range(d.time_range);
        for (f, q, _) in &d.columns {
            get = get.column(f, q);
        }
        let current = self.get(get)?;
        let now = now_ms();
        let mut cells = Vec::with_capacity(d.columns.len());
        for (f, q, delta) in &d.columns {
            let cur = current
                .binary_search_by(|c| (c.key().family(), c.key().qualifier()).cmp(&(f, q)))
                .ok()
                .map(|i| &current[i]);
            let old = cur.map(|c| c.as_cell().value);
            let value = match delta {
                Delta::Add(n) => {
                    let old = match old {
                        None => 0,
                        Some(v) => i64::from_be_bytes(v.try_into().map_err(|_| {
                            RegionError::InvalidArgument(format!(
                                "Field is not a long, it's {} bytes wide (column {}:{} of row {} is \
                                 not a counter: it needs an 8-byte long)",
                                v.len(),
                                String::from_utf8_lossy(f),
                                String::from_utf8_lossy(q),
                                cairn_cell::Escaped(d.row)
                            ))
                        })?),
                    };
                    old.wrapping_add(*n).to_be_bytes().to_vec()
                }
                Delta::Append(bytes) => {
                    let mut v = old.unwrap_or_default().to_vec();
                    v.extend_from_slice(bytes);
                    v
                }
            };
            // `reckonDelta`: max(current timestamp + 1, now), so the new cell is the newest
            // even over a value stamped in the future.
            let ts = match cur {
                Some(c) => now.max(c.key().timestamp().saturating_add(1)),
                None => now,
            };
            cells.push(KeyValue::put(d.row, f, q, ts, &value)?);
        }
        let out = if d.return_results {
            cells.clone()
        } else {
            Vec::new()
        };
        let stores = self.stores_of(&cells);
        self.apply(cells, stores, now, d.durability)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{region, values};
    use super::*;

    #[test]
    fn increments_start_at_zero_and_stay_newest() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        let out = r.increment(&Increment::new("c").add("f", "n", 5)).unwrap();
        assert_eq!(out[0].as_cell().value, 5i64.to_be_bytes());
        // A counter stamped in the future: the increment's cell must still be the newest,
        // or the next read would see the old value.
        let future = now_ms() + 3_600_000;
        r.put(&Put::new("c").add_at("f", "m", future, 10i64.to_be_bytes()))
            .unwrap();
        let out = r.increment(&Increment::new("c").add("f", "m", -3)).unwrap();
        assert_eq!(out[0].key().timestamp(), future + 1);
        let got = r.get(Get::new("c").column("f", "m")).unwrap();
        assert_eq!(got[0].as_cell().value, 7i64.to_be_bytes());
        r.put(&Put::new("c").add("f", "s", "abc")).unwrap();
        let before = r.write_point();
        let e = r
            .increment(&Increment::new("c").add("f", "n", 1).add("f", "s", 1))
            .unwrap_err();
        let m = e.to_string();
        // HBase's words (DoNotRetryIOException), then which column.
        assert!(
            matches!(e, RegionError::InvalidArgument(_))
                && m.contains("Field is not a long, it's 3 bytes wide")
                && m.contains("f:s"),
            "{m}"
        );
        assert_eq!(r.write_point(), before, "nothing written, n included");
    }

    #[test]
    fn an_increment_by_zero_writes_a_newer_cell_as_hbase_2_does() {
        // HBase 1.x skipped the write for a 0 amount; 2.x's `reckonDeltasByStore` has no such
        // case: the cell is rewritten with a new timestamp and sequence id.
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        r.put(&Put::new("c").add_at("f", "n", 100, 41i64.to_be_bytes()))
            .unwrap();
        let before = r.write_point();
        let out = r.increment(&Increment::new("c").add("f", "n", 0)).unwrap();
        assert_eq!(out[0].as_cell().value, 41i64.to_be_bytes());
        assert_eq!(r.write_point(), before + 1);
        let got = r.get(Get::new("c").column("f", "n").versions(3)).unwrap();
        assert_eq!(got.len(), 2, "a second version");
        assert!(got[0].key().timestamp() > 100);
    }

    #[test]
    fn results_come_sorted_and_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        let out = r
            .append(
                &Append::new("a")
                    .add("g", "z", "1")
                    .add("f", "b", "2")
                    .add("f", "a", "3"),
            )
            .unwrap();
        let cols: Vec<String> = out
            .iter()
            .map(|c| {
                let k = c.key();
                String::from_utf8_lossy(&[k.family(), b":", k.qualifier()].concat()).into_owned()
            })
            .collect();
        assert_eq!(cols, ["f:a", "f:b", "g:z"]);
        assert_eq!(values(&out), ["3", "2", "1"]);
        let out = r
            .append(&Append::new("a").add("f", "a", "x").return_results(false))
            .unwrap();
        assert!(out.is_empty());
        let got = r.get(Get::new("a").column("f", "a")).unwrap();
        assert_eq!(values(&got), ["3x"], "written all the same");
        // All columns of one append under one sequence id.
        let got = r.get(Get::new("a")).unwrap();
        assert_eq!(got[1].sequence_id(), got[2].sequence_id());
    }

    #[test]
    fn the_time_range_hides_older_values_from_the_read() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        r.put(&Put::new("a").add_at("f", "n", 10, 5i64.to_be_bytes()))
            .unwrap();
        r.put(&Put::new("a").add_at("f", "s", 10, "old")).unwrap();
        // The current values are outside [20, MAX): the counter starts again at 0 and the
        // append starts from nothing.
        let tr = TimeRange::new(20, i64::MAX);
        let out = r
            .increment(&Increment::new("a").add("f", "n", 2).time_range(tr))
            .unwrap();
        assert_eq!(out[0].as_cell().value, 2i64.to_be_bytes());
        let out = r
            .append(&Append::new("a").add("f", "s", "new").time_range(tr))
            .unwrap();
        assert_eq!(values(&out), ["new"]);
        // Within the range they count.
        let tr = TimeRange::new(0, 20);
        let out = r
            .increment(&Increment::new("a").add("f", "n", 1).time_range(tr))
            .unwrap();
        assert_eq!(out[0].as_cell().value, 6i64.to_be_bytes());
    }
}
