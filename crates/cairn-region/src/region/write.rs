//! The region's write path: row locks, WAL append and sync, memstore inserts under MVCC;
//! puts, batched puts, deletes, increments, check-and-mutate.

use super::*;

impl Region {
    /// Applies cells of one row atomically: one sequence id, WAL first, then the memstore,
    /// visible to readers when MVCC completes.
    /// `stores[i]` is the store of `cells[i]` (looked up once by the caller).
    pub(super) fn apply(
        &self,
        cells: Vec<KeyValue>,
        stores: Vec<&Arc<Store>>,
        now: i64,
        durability: Option<Durability>,
    ) -> Result<u64> {
        let n = cells.len();
        self.apply_logged(cells, stores, n, now, durability)
    }

    /// [`Self::apply`] where only the first `wal_cells` cells go to the WAL (a batch whose
    /// other puts asked for `SKIP_WAL`).
    pub(super) fn apply_logged(
        &self,
        cells: Vec<KeyValue>,
        stores: Vec<&Arc<Store>>,
        wal_cells: usize,
        now: i64,
        durability: Option<Durability>,
    ) -> Result<u64> {
        self.check_open()?;
        let limit = self
            .descriptor
            .memstore_flush_size
            .saturating_mul(self.config.block_multiplier);
        let size = self.memstore_size();
        if size > limit {
            return Err(RegionError::RegionTooBusy {
                region: self.info.region_name(),
                size,
                limit,
            });
        }
        let durability = durability.unwrap_or(self.descriptor.durability);
        let _updates = self.updates.read();
        let seq = self.mvcc.begin();
        let cells: Vec<KeyValue> = cells.into_iter().map(|c| c.with_sequence_id(seq)).collect();
        let mut edit = WalEdit {
            region: self.info.encoded_name.as_bytes().to_vec(),
            sequence_id: seq,
            write_time_ms: now,
            cells,
        };
        if let (Some(wal), true) = (
            self.wal.get(),
            durability != Durability::SkipWal && wal_cells > 0,
        ) {
            let appended = if wal_cells == edit.cells.len() {
                wal.append(&edit, durability)
            } else {
                let part = WalEdit {
                    region: edit.region.clone(),
                    sequence_id: edit.sequence_id,
                    write_time_ms: edit.write_time_ms,
                    cells: edit.cells[..wal_cells].to_vec(),
                };
                wal.append(&part, durability)
            };
            if let Err(e) = appended {
                self.mvcc.complete(seq);
                return Err(e.into());
            }
        }
        let mut grown = 0;
        for (c, store) in edit.cells.drain(..).zip(stores) {
            grown += store.add(Arc::new(c));
        }
        crate::memstore::add_signed(&self.memstore_bytes, grown);
        self.mvcc.complete_and_wait(seq);
        self.metrics
            .write_request_count
            .fetch_add(1, Ordering::Relaxed);
        Ok(seq)
    }

    /// Applies one put atomically: all its cells under one sequence id, in the WAL (as its
    /// durability asks) before the memstore, visible to readers together once this returns.
    /// Fails with [`RegionError::RegionTooBusy`] over the blocking limit.
    pub fn put(&self, put: &Put) -> Result<()> {
        let _row = self.row_lock(&put.row).read();
        self.put_locked(put)
    }

    pub(super) fn put_locked(&self, put: &Put) -> Result<()> {
        let now = now_ms();
        let mut cells = Vec::with_capacity(put.cells.len());
        let mut stores = Vec::with_capacity(put.cells.len());
        self.put_cells(put, now, &mut cells, &mut stores)?;
        self.apply(cells, stores, now, put.durability)?;
        Ok(())
    }

    /// Checks one put and appends its cells (timestamps resolved against `now`) and their stores.
    pub(super) fn put_cells<'a>(
        &'a self,
        put: &Put,
        now: i64,
        cells: &mut Vec<KeyValue>,
        stores: &mut Vec<&'a Arc<Store>>,
    ) -> Result<()> {
        self.check_row(&put.row)?;
        if put.cells.is_empty() {
            return Err(RegionError::InvalidArgument(
                "put has no columns".to_string(),
            ));
        }
        for (f, q, ts, v) in &put.cells {
            stores.push(self.check_family(f)?);
            let ts = if *ts == LATEST_TIMESTAMP { now } else { *ts };
            if ts < 0 {
                return Err(RegionError::InvalidArgument(format!(
                    "timestamp {ts} of column {}:{} is negative",
                    String::from_utf8_lossy(f),
                    String::from_utf8_lossy(q)
                )));
            }
            cells.push(KeyValue::put(&put.row, f, q, ts, v)?);
        }
        Ok(())
    }

    /// Applies puts of several rows of this region as one mini-batch (HBase's
    /// `doMiniBatchMutate`): one sequence id, one WAL record and one sync for all of them,
    /// visible together. Every put is checked before anything is applied, so a bad put fails
    /// the batch and writes nothing. Puts asking for `SKIP_WAL` stay out of the WAL record;
    /// the record is synced as the strongest durability in the batch asks.
    pub fn put_batch(&self, puts: &[&Put]) -> Result<()> {
        match puts {
            [] => return Ok(()),
            [one] => return self.put(one),
            _ => {}
        }
        // Stripes are locked in index order, each once, so two batches cannot deadlock and a
        // batch never waits on a stripe it already holds.
        let mut stripes: Vec<usize> = puts.iter().map(|p| self.row_stripe(&p.row)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        let _rows: Vec<_> = stripes.iter().map(|&i| self.row_locks[i].read()).collect();
        let now = now_ms();
        let table_durability = self.descriptor.durability;
        let mut logged = Vec::new();
        let mut logged_stores = Vec::new();
        let mut skipped = Vec::new();
        let mut skipped_stores = Vec::new();
        let mut durability = Durability::SkipWal;
        for (i, put) in puts.iter().enumerate() {
            let d = put.durability.unwrap_or(table_durability);
            let (cells, stores) = if d == Durability::SkipWal {
                (&mut skipped, &mut skipped_stores)
            } else {
                durability = durability.max(d);
                (&mut logged, &mut logged_stores)
            };
            self.put_cells(put, now, cells, stores)
                .map_err(|e| match e {
                    RegionError::InvalidArgument(m) => {
                        RegionError::InvalidArgument(format!("put {i} of the batch: {m}"))
                    }
                    e => e,
                })?;
        }
        let wal_cells = logged.len();
        logged.append(&mut skipped);
        logged_stores.append(&mut skipped_stores);
        self.apply_logged(logged, logged_stores, wal_cells, now, Some(durability))?;
        Ok(())
    }

    /// Writes a delete's markers atomically, like a put. A marker for the newest version
    /// ([`Delete::column`] without a timestamp) is resolved to that version's timestamp first, and
    /// writes nothing if the column is empty, as in HBase.
    pub fn delete(&self, delete: &Delete) -> Result<()> {
        let _row = self.row_lock(&delete.row).write();
        self.delete_locked(delete)
    }

    /// Resolves `LATEST_TIMESTAMP` as HBase's `prepareDeleteTimestamps` does: a
    /// single-version Delete targets the newest existing version; the others mean now.
    pub(super) fn delete_locked(&self, delete: &Delete) -> Result<()> {
        self.check_row(&delete.row)?;
        let now = now_ms();
        let resolve = |ts: i64| if ts == LATEST_TIMESTAMP { now } else { ts };
        let mut cells = Vec::new();
        if delete.markers.is_empty() {
            for f in self.stores.keys() {
                cells.push(KeyValue::new(
                    &delete.row,
                    f,
                    b"",
                    resolve(delete.ts),
                    CellType::DeleteFamily,
                    b"",
                )?);
            }
        }
        for m in &delete.markers {
            self.check_family(&m.family)?;
            let ts = if m.kind == CellType::Delete && m.ts == LATEST_TIMESTAMP {
                let latest = self.get(Get::new(&delete.row).column(&m.family, &m.qualifier))?;
                match latest.first() {
                    Some(c) => c.key().timestamp(),
                    // Nothing to delete: HBase writes nothing for it either.
                    None => continue,
                }
            } else {
                resolve(m.ts)
            };
            cells.push(KeyValue::new(
                &delete.row,
                &m.family,
                &m.qualifier,
                ts,
                m.kind,
                b"",
            )?);
        }
        if cells.is_empty() {
            return Ok(());
        }
        let stores = self.stores_of(&cells);
        self.apply(cells, stores, now, delete.durability)?;
        Ok(())
    }

    /// Adds to counters (8-byte big-endian longs), atomically for the row; returns the new
    /// cells.
    pub fn increment(&self, inc: &Increment) -> Result<Vec<KeyValue>> {
        let _row = self.row_lock(&inc.row).write();
        self.check_row(&inc.row)?;
        let now = now_ms();
        let mut cells = Vec::new();
        for (f, q, amount) in &inc.columns {
            self.check_family(f)?;
            let current = self.get(Get::new(&inc.row).column(f, q))?;
            let (old, old_ts) = match current.first() {
                None => (0i64, i64::MIN),
                Some(c) => {
                    let v = c.as_cell().value;
                    let bytes: [u8; 8] = v.try_into().map_err(|_| {
                        RegionError::InvalidArgument(format!(
                            "column {}:{} is not a counter: its value is {} bytes wide, not 8",
                            String::from_utf8_lossy(f),
                            String::from_utf8_lossy(q),
                            v.len()
                        ))
                    })?;
                    (i64::from_be_bytes(bytes), c.key().timestamp())
                }
            };
            let ts = now.max(old_ts.saturating_add(1));
            let new = old.wrapping_add(*amount);
            cells.push(KeyValue::put(&inc.row, f, q, ts, &new.to_be_bytes())?);
        }
        if cells.is_empty() {
            return Ok(cells);
        }
        let out = cells.clone();
        let stores = self.stores_of(&cells);
        self.apply(cells, stores, now, inc.durability)?;
        Ok(out)
    }

    /// Applies `put` only if the newest version of the column equals `expected` (`None`:
    /// only if the column has no value). Returns whether it was applied.
    pub fn check_and_put(
        &self,
        family: &[u8],
        qualifier: &[u8],
        expected: Option<&[u8]>,
        put: &Put,
    ) -> Result<bool> {
        let _row = self.row_lock(&put.row).write();
        self.check_family(family)?;
        let matches = self.newest_value_is(&put.row, family, qualifier, expected)?;
        if matches {
            self.put_locked(put)?;
        }
        Ok(matches)
    }

    /// Whether the newest version of a column has value `expected` (`None`: no value).
    pub(super) fn newest_value_is(
        &self,
        row: &[u8],
        family: &[u8],
        qualifier: &[u8],
        expected: Option<&[u8]>,
    ) -> Result<bool> {
        let current = self.get(Get::new(row).column(family, qualifier))?;
        Ok(match (current.first(), expected) {
            (None, None) => true,
            (Some(c), Some(v)) => c.as_cell().value == v,
            _ => false,
        })
    }

    /// Like [`Region::check_and_put`] for a delete.
    pub fn check_and_delete(
        &self,
        family: &[u8],
        qualifier: &[u8],
        expected: Option<&[u8]>,
        delete: &Delete,
    ) -> Result<bool> {
        let _row = self.row_lock(&delete.row).write();
        self.check_family(family)?;
        let matches = self.newest_value_is(&delete.row, family, qualifier, expected)?;
        if matches {
            self.delete_locked(delete)?;
        }
        Ok(matches)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{region, values};
    use super::*;

    #[test]
    fn a_batch_applies_whole_under_one_sequence_id_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        let good = Put::new("a").add("f", "q", "1");
        let bad = Put::with_timestamp("b", -5).add("f", "q", "2");
        let e = r.put_batch(&[&good, &bad]).unwrap_err().to_string();
        assert!(e.contains("put 1 of the batch") && e.contains("-5"), "{e}");
        assert!(
            r.get(Get::new("a")).unwrap().is_empty(),
            "the good put was not applied"
        );
        assert_eq!(r.write_point(), 0);
        let other = Put::new("b").add("g", "q", "2");
        r.put_batch(&[&good, &other]).unwrap();
        assert_eq!(r.write_point(), 1, "one sequence id for the batch");
        let a = r.get(Get::new("a")).unwrap();
        let b = r.get(Get::new("b")).unwrap();
        assert_eq!(
            (values(&a), values(&b)),
            (vec!["1".into()], vec!["2".into()])
        );
        assert_eq!(a[0].sequence_id(), b[0].sequence_id());
    }

    #[test]
    fn a_delete_of_the_newest_version_resolves_its_timestamp_at_write_time() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        for ts in 1..=3 {
            r.put(&Put::new("a").add_at("f", "q", ts, format!("v{ts}")))
                .unwrap();
        }
        r.delete(&Delete::new("a").column("f", "q")).unwrap();
        let got = r.get(Get::new("a").versions(3)).unwrap();
        assert_eq!(
            values(&got),
            vec!["v2", "v1"],
            "only the newest version is deleted"
        );
        // Nothing to delete in an empty column: HBase writes no marker, nor does cairn.
        let before = r.write_point();
        r.delete(&Delete::new("a").column("f", "empty")).unwrap();
        assert_eq!(r.write_point(), before);
        // A whole-row delete marks every family.
        r.put(&Put::new("b").add("f", "q", "1").add("g", "q", "2"))
            .unwrap();
        r.delete(&Delete::new("b")).unwrap();
        assert!(r.get(Get::new("b")).unwrap().is_empty());
    }

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
        let e = r
            .increment(&Increment::new("c").add("f", "s", 1))
            .unwrap_err()
            .to_string();
        assert!(e.contains("f:s") && e.contains("3 bytes"), "{e}");
    }

    #[test]
    fn check_and_put_compares_the_newest_value() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        let p = |v: &str| Put::new("a").add("f", "q", v);
        assert!(
            r.check_and_put(b"f", b"q", None, &p("1")).unwrap(),
            "absent"
        );
        assert!(
            !r.check_and_put(b"f", b"q", None, &p("2")).unwrap(),
            "present now"
        );
        assert!(!r.check_and_put(b"f", b"q", Some(b"0"), &p("2")).unwrap());
        assert!(r.check_and_put(b"f", b"q", Some(b"1"), &p("2")).unwrap());
        assert_eq!(values(&r.get(Get::new("a")).unwrap()), vec!["2"]);
        let d = Delete::new("a");
        assert!(!r.check_and_delete(b"f", b"q", Some(b"1"), &d).unwrap());
        assert!(r.check_and_delete(b"f", b"q", Some(b"2"), &d).unwrap());
        assert!(r.get(Get::new("a")).unwrap().is_empty());
    }
}
