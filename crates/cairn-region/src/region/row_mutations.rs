//! Atomic mutations of one row (HBase's `mutateRow`): puts and deletes checked together, then
//! applied under one row lock, one sequence id and one WAL record.

use super::*;
use crate::mutation::{RowMutation, RowMutations};

impl Region {
    /// Applies `rm`'s puts and deletes atomically (HBase's `mutateRow`, an atomic
    /// `batchMutate`): every mutation is checked first (row, families, timestamps) and a bad
    /// one fails the whole, writing nothing; then all their cells go in under one sequence id
    /// and one WAL record, visible to readers together. Timestamps are resolved once, before
    /// anything is written: a newest-version delete targets the newest version before this
    /// call, not a put of the same call. Mutations asking for `SKIP_WAL` stay out of the WAL
    /// record, which is synced as the strongest durability among the others asks.
    pub fn mutate_row(&self, rm: &RowMutations) -> Result<()> {
        let _row = self.row_lock(&rm.row).write();
        self.mutate_row_locked(rm, i64::MIN)
    }

    /// [`Self::mutate_row`] under the caller's exclusive row lock; puts' columns without a
    /// timestamp are stamped no earlier than `min_put_ts` (a check-and-mutate's checked cell).
    pub(super) fn mutate_row_locked(&self, rm: &RowMutations, min_put_ts: i64) -> Result<()> {
        self.check_row(&rm.row)?;
        let now = now_ms();
        let table_durability = self.descriptor.durability;
        let mut logged = Vec::new();
        let mut logged_stores = Vec::new();
        let mut skipped = Vec::new();
        let mut skipped_stores = Vec::new();
        let mut durability = Durability::SkipWal;
        for (i, m) in rm.mutations.iter().enumerate() {
            let context = |e: RegionError| match e {
                RegionError::InvalidArgument(msg) => {
                    RegionError::InvalidArgument(format!("mutation {i} of the row: {msg}"))
                }
                e => e,
            };
            if m.row() != rm.row.as_slice() {
                // HBase's WrongRowIOException (RowMutations.add refuses it).
                return Err(context(RegionError::InvalidArgument(format!(
                    "row {} is not the row of the mutations, {}",
                    cairn_cell::Escaped(m.row()),
                    cairn_cell::Escaped(&rm.row)
                ))));
            }
            let d = match m {
                RowMutation::Put(p) => p.durability,
                RowMutation::Delete(d) => d.durability,
            }
            .unwrap_or(table_durability);
            let (cells, stores) = if d == Durability::SkipWal {
                (&mut skipped, &mut skipped_stores)
            } else {
                durability = durability.max(d);
                (&mut logged, &mut logged_stores)
            };
            match m {
                RowMutation::Put(p) => self
                    .put_cells(p, now.max(min_put_ts), cells, stores)
                    .map_err(context)?,
                RowMutation::Delete(d) => {
                    let first = cells.len();
                    self.delete_cells(d, now, cells).map_err(context)?;
                    stores.extend(self.stores_of(&cells[first..]));
                }
            }
        }
        if logged.is_empty() && skipped.is_empty() {
            return Ok(());
        }
        let wal_cells = logged.len();
        logged.append(&mut skipped);
        logged_stores.append(&mut skipped_stores);
        self.apply_logged(logged, logged_stores, wal_cells, now, Some(durability))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{region, values};
    use super::*;

    #[test]
    fn puts_and_deletes_share_one_sequence_id() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        r.put(&Put::new("a").add_at("f", "old", 5, "x")).unwrap();
        let before = r.write_point();
        let rm = RowMutations::new("a")
            .put(Put::new("a").add("f", "new", "1").add("g", "q", "2"))
            .delete(Delete::new("a").columns("f", "old"));
        r.mutate_row(&rm).unwrap();
        assert_eq!(r.write_point(), before + 1, "one sequence id");
        let got = r.get(Get::new("a")).unwrap();
        assert_eq!(values(&got), ["1", "2"]);
        assert!(got.iter().all(|c| c.sequence_id() == before + 1));
        let raw = r
            .scanner(Scan::new().raw(true).column("f", "old"))
            .unwrap()
            .next_row()
            .unwrap()
            .unwrap();
        assert_eq!(raw[0].sequence_id(), before + 1, "the marker too");
    }

    #[test]
    fn a_bad_mutation_fails_the_whole_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"m", 1 << 20);
        let good = Put::new("a").add("f", "q", "1");
        let cases = [
            RowMutations::new("a")
                .put(good.clone())
                .delete(Delete::new("a").family("nope")),
            RowMutations::new("a")
                .put(good.clone())
                .put(Put::new("a").add("nope", "q", "v")),
            RowMutations::new("a")
                .put(good.clone())
                .put(Put::new("b").add("f", "q", "v")),
            RowMutations::new("a")
                .put(good.clone())
                .put(Put::with_timestamp("a", -1).add("f", "q", "v")),
        ];
        for rm in &cases {
            let e = r.mutate_row(rm).unwrap_err();
            assert!(r.get(Get::new("a")).unwrap().is_empty(), "{e}");
            assert_eq!(r.write_point(), 0, "{e}");
        }
        let e = r.mutate_row(&cases[1]).unwrap_err();
        assert!(matches!(e, RegionError::NoSuchFamily { ref family, .. } if family == "nope"));
        let e = r.mutate_row(&cases[2]).unwrap_err().to_string();
        assert!(
            e.contains("mutation 1 of the row") && e.contains("b"),
            "{e}"
        );
        // A row outside the region.
        let rm = RowMutations::new("z").put(Put::new("z").add("f", "q", "v"));
        assert!(matches!(
            r.mutate_row(&rm),
            Err(RegionError::WrongRegion { .. })
        ));
        assert!(
            r.mutate_row(&RowMutations::new("a")).is_ok(),
            "nothing to do"
        );
        assert_eq!(r.write_point(), 0);
    }
}
