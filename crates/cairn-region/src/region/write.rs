//! The region's write path: row locks, WAL append and sync, memstore inserts under MVCC;
//! puts, batched puts and deletes.

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
            .flush_size()
            .saturating_mul(self.config.block_multiplier);
        let size = self.memstore_size();
        if size > limit {
            return Err(RegionError::RegionTooBusy {
                region: self.info.region_name(),
                size,
                limit,
                global: false,
            });
        }
        // Room in the server's memstores before a sequence id is taken: a write waiting for
        // flushes must not hold back what other writers' reads may see.
        let estimate = cells.iter().map(crate::memstore::cell_heap_size).sum();
        let reservation = self
            .memstore_bytes
            .server()
            .reserve(estimate, || self.info.region_name())?;
        let durability = durability.unwrap_or(self.descriptor.durability);
        let _updates = self.updates.read();
        // A split or merge closes the region and then waits for this lock: a writer that got
        // past the first check before the close must not write after it.
        self.check_open()?;
        let seq = self.mvcc.begin();
        let cells: Vec<KeyValue> = cells.into_iter().map(|c| c.with_sequence_id(seq)).collect();
        let mut edit = WalEdit {
            region: self.info.encoded_name.as_bytes().to_vec(),
            table: self.info.table.to_string().into_bytes(),
            sequence_id: seq,
            write_time_ms: now,
            cells,
            ..WalEdit::default()
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
                    table: edit.table.clone(),
                    sequence_id: edit.sequence_id,
                    write_time_ms: edit.write_time_ms,
                    cells: edit.cells[..wal_cells].to_vec(),
                    ..WalEdit::default()
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
        self.memstore_bytes.add_reserved(grown, reservation);
        self.mvcc.complete_and_wait(seq);
        self.metrics.write_request_count.add(1);
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
        self.put_locked_at(put, i64::MIN)
    }

    /// [`Self::put_locked`] with columns lacking a timestamp stamped no earlier than
    /// `min_ts` (HBase's check-and-mutate stamps them `max(now, checked cell's ts)`).
    pub(super) fn put_locked_at(&self, put: &Put, min_ts: i64) -> Result<()> {
        let now = now_ms();
        let mut cells = Vec::with_capacity(put.cells.len());
        let mut stores = Vec::with_capacity(put.cells.len());
        self.put_cells(put, now.max(min_ts), &mut cells, &mut stores)?;
        self.apply(cells, stores, now, put.durability)?;
        Ok(())
    }

    /// Checks one put and appends its cells (`LATEST_TIMESTAMP` resolved to `now`) and their
    /// stores.
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
    /// ([`Delete::column`] without a timestamp) is resolved to that version's timestamp first
    /// (see [`Self::delete_cells`]).
    pub fn delete(&self, delete: &Delete) -> Result<()> {
        let _row = self.row_lock(&delete.row).write();
        self.delete_locked(delete)
    }

    pub(super) fn delete_locked(&self, delete: &Delete) -> Result<()> {
        let now = now_ms();
        let mut cells = Vec::new();
        self.delete_cells(delete, now, &mut cells)?;
        let stores = self.stores_of(&cells);
        self.apply(cells, stores, now, delete.durability)?;
        Ok(())
    }

    /// Checks a delete and appends its markers, timestamps resolved as HBase's
    /// `prepareDelete` and `prepareDeleteTimestamps` do: a delete without markers marks every
    /// family at the delete's timestamp; a single-version Delete without a timestamp targets
    /// the newest version of its column (the n-th newest for the n-th such marker on that
    /// column in this delete), or is stamped `now` when the column has fewer versions
    /// (`updateDeleteLatestVersionTimestamp`); every other `LATEST_TIMESTAMP` means `now`.
    /// The caller holds the row's lock exclusively.
    pub(super) fn delete_cells(
        &self,
        delete: &Delete,
        now: i64,
        cells: &mut Vec<KeyValue>,
    ) -> Result<()> {
        self.check_row(&delete.row)?;
        let resolve = |ts: i64| if ts == LATEST_TIMESTAMP { now } else { ts };
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
        }
        let mut latest_counts: BTreeMap<(&[u8], &[u8]), u32> = BTreeMap::new();
        for m in &delete.markers {
            let ts = if m.kind == CellType::Delete && m.ts == LATEST_TIMESTAMP {
                let n = latest_counts
                    .entry((&m.family, &m.qualifier))
                    .and_modify(|n| *n += 1)
                    .or_insert(1);
                let versions = self.get(
                    Get::new(&delete.row)
                        .column(&m.family, &m.qualifier)
                        .versions(*n),
                )?;
                match versions.get(*n as usize - 1) {
                    Some(c) => c.key().timestamp(),
                    None => now,
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
        Ok(())
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
        // Two newest-version markers on one column in one delete: the second takes the
        // second-newest version (HBase's `prepareDeleteTimestamps` counts them per column).
        r.put(&Put::new("a").add_at("f", "q", 4, "v4")).unwrap();
        r.delete(&Delete::new("a").column("f", "q").column("f", "q"))
            .unwrap();
        let got = r.get(Get::new("a").versions(3)).unwrap();
        assert_eq!(values(&got), vec!["v1"], "v4 and v2 deleted");
        // Nothing to delete in an empty column: HBase's `updateDeleteLatestVersionTimestamp`
        // still writes the marker, stamped now; so does cairn.
        let before = r.write_point();
        let start = now_ms();
        r.delete(&Delete::new("a").column("f", "empty")).unwrap();
        assert_eq!(r.write_point(), before + 1);
        let raw = r
            .scanner(Scan::new().column("f", "empty").raw(true))
            .unwrap()
            .next_row()
            .unwrap()
            .unwrap();
        assert_eq!(raw.len(), 1);
        assert_eq!(raw[0].key().cell_type(), Some(CellType::Delete));
        let ts = raw[0].key().timestamp();
        assert!(ts >= start && ts <= now_ms(), "{ts}");
        // A whole-row delete marks every family.
        r.put(&Put::new("b").add("f", "q", "1").add("g", "q", "2"))
            .unwrap();
        r.delete(&Delete::new("b")).unwrap();
        assert!(r.get(Get::new("b")).unwrap().is_empty());
    }
}
