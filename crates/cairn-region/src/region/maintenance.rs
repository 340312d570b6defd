//! Flushes, compactions and WAL replay of one region.

use super::*;

impl Region {
    /// Replays a recovered WAL edit: cells already in a store file are skipped.
    pub fn replay(&self, edit: &WalEdit, flushed: &BTreeMap<Vec<u8>, u64>) -> u64 {
        let mut applied = 0;
        for c in &edit.cells {
            let fam = c.key().family().to_vec();
            let Some(store) = self.stores.get(&fam) else {
                continue;
            };
            if edit.sequence_id <= flushed.get(&fam).copied().unwrap_or(0) {
                continue;
            }
            let grown = store.add(Arc::new(c.clone().with_sequence_id(edit.sequence_id)));
            self.memstore_bytes.add_unchecked(grown);
            applied += 1;
        }
        self.mvcc.advance_to(edit.sequence_id);
        applied
    }

    /// Raises MVCC past replayed edits.
    pub fn advance_sequence_id(&self, seq: u64) {
        self.mvcc.advance_to(seq);
    }

    /// Writes every store's memstore to a new file, then lets the WAL drop what is flushed.
    /// A snapshot left by a failed flush is written first, as of that flush; then what was
    /// written since, so that a flush always leaves nothing older than its start unflushed.
    pub fn flush(&self) -> Result<FlushOutcome> {
        let _one = self.flush_lock.lock();
        let (first, retried) = self.flush_once()?;
        if !retried {
            return Ok(first);
        }
        let (second, _) = self.flush_once()?;
        Ok(FlushOutcome {
            sequence_id: second.sequence_id,
            files: first.files + second.files,
            cells: first.cells + second.cells,
            bytes: first.bytes + second.bytes,
        })
    }

    /// One flush: the snapshots (a failed flush's, or new ones) written to files; true when
    /// a failed flush's snapshot was among them.
    fn flush_once(&self) -> Result<(FlushOutcome, bool)> {
        self.flush_queued.store(false, Ordering::Release);
        let (snapshots, seq) = {
            let _block_writes = self.updates.write();
            let seq = self.mvcc.write_point();
            // A store whose last flush failed hands back that snapshot and keeps the writes
            // since in its active segment: its file may claim only the snapshot's sequence
            // ids, or replay would skip those writes, and the WAL may drop only what every
            // store has on disk.
            let snaps: Vec<_> = self
                .stores
                .values()
                .filter_map(|s| s.snapshot_at(seq).map(|(seg, at)| (s.clone(), seg, at)))
                .collect();
            (snaps, seq)
        };
        // What the files will hold must be durable in the WAL first (HBase syncs its WAL to
        // the flush's sequence id before committing a flush): a store file is synced, and a
        // machine crash after one family's file but before the WAL's sync would leave a row's
        // write in that family and lose it in the others. A WAL that failed cannot be synced;
        // its recovery flushes to make its edits durable.
        if let Some(wal) = self.wal.get() {
            if !snapshots.is_empty() && wal.failure().is_none() {
                wal.sync(true)?;
            }
        }
        let mut outcome = FlushOutcome {
            sequence_id: snapshots.iter().map(|s| s.2).min().unwrap_or(seq),
            ..Default::default()
        };
        let retried = outcome.sequence_id < seq;
        for (store, seg, at) in &snapshots {
            let cells = seg.len() as u64;
            let smallest = self.read_points.smallest(self.mvcc.read_point());
            if let Some(bytes) = store.flush_snapshot(seg, *at, smallest)? {
                outcome.files += 1;
                outcome.bytes += bytes;
            }
            self.memstore_bytes
                .fetch_sub(seg.heap_size(), Ordering::Relaxed);
            outcome.cells += cells;
        }
        if outcome.files > 0 {
            self.metrics.flush_count.fetch_add(1, Ordering::Relaxed);
            self.metrics
                .flushed_cells_count
                .fetch_add(outcome.cells, Ordering::Relaxed);
            self.metrics
                .flushed_cells_size
                .fetch_add(outcome.bytes, Ordering::Relaxed);
        }
        if let Some(wal) = self.wal.get() {
            wal.mark_flushed(self.info.encoded_name.as_bytes(), outcome.sequence_id)?;
        }
        Ok((outcome, retried))
    }

    /// Whether a store still refers to a split or merge parent's files.
    pub fn has_references(&self) -> bool {
        self.stores.values().any(|s| s.has_references())
    }

    /// Whether any store has enough files for a minor compaction.
    pub fn needs_compaction(&self) -> bool {
        self.stores.values().any(|s| {
            let files = s.state().files;
            files.iter().filter(|f| !f.is_compacting()).count() >= self.config.compaction.min_files
        })
    }

    /// Compacts every store that needs it (`major`: all files of every store).
    pub fn compact(&self, major: bool) -> Result<Vec<CompactionOutcome>> {
        self.check_open()?;
        let mut out = Vec::new();
        for s in self.stores.values() {
            if let Some(o) = self.compact_store(s, major)? {
                out.push(o);
            }
        }
        Ok(out)
    }

    /// One compaction of one store, if the policy selects anything.
    pub fn compact_store(&self, store: &Store, major: bool) -> Result<Option<CompactionOutcome>> {
        let files = store.state().files;
        // After a split or merge (HBase's `isAfterSplit`): references are rewritten, with
        // every other file, as soon as possible, so the parent can go.
        let major = major || files.iter().any(|f| f.is_reference());
        let candidates: Vec<Candidate> = files
            .iter()
            .map(|f| Candidate {
                size: f.size,
                compacting: f.is_compacting(),
                modified_ms: f.modified_ms,
                major: f.major,
                min_ts: f.time_range.map(|t| t.0),
                name: f.name(),
            })
            .collect();
        let Some(sel) = compaction::select(
            &candidates,
            &self.config.compaction,
            major,
            major,
            store.family.ttl_ms(),
            now_ms(),
        ) else {
            return Ok(None);
        };
        // A single major file with nothing to drop needs no rewrite unless asked.
        if sel.files.len() < 2 && !major && sel.all_files && files.len() == 1 && files[0].major {
            return Ok(None);
        }
        let selection = sel.files.iter().map(|&i| files[i].clone()).collect();
        let smallest = self.read_points.smallest(self.mvcc.read_point());
        let outcome = store.compact(selection, smallest, self.config.throttle)?;
        self.metrics
            .compaction_count
            .fetch_add(1, Ordering::Relaxed);
        self.metrics
            .compacted_cells_count
            .fetch_add(outcome.cells_out, Ordering::Relaxed);
        self.metrics
            .compacted_cells_size
            .fetch_add(outcome.bytes_out, Ordering::Relaxed);
        if outcome.major {
            self.metrics
                .major_compacted_cells_count
                .fetch_add(outcome.cells_out, Ordering::Relaxed);
        }
        Ok(Some(outcome))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{region, values};
    use super::*;

    fn edit(r: &Region, seq: u64, value: &str) -> WalEdit {
        WalEdit {
            region: r.info.encoded_name.as_bytes().to_vec(),
            sequence_id: seq,
            write_time_ms: 0,
            cells: vec![
                KeyValue::put(b"a", b"f", b"q", seq as i64, value.as_bytes()).unwrap(),
                KeyValue::put(b"a", b"g", b"q", seq as i64, value.as_bytes()).unwrap(),
            ],
            ..WalEdit::default()
        }
    }

    #[test]
    fn replay_skips_what_each_family_already_flushed() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        // Family f has store files up to sequence id 5, family g has none.
        let flushed = BTreeMap::from([(b"f".to_vec(), 5), (b"g".to_vec(), 0)]);
        assert_eq!(r.replay(&edit(&r, 5, "five"), &flushed), 1, "only g's cell");
        assert_eq!(r.replay(&edit(&r, 6, "six"), &flushed), 2);
        // MVCC moved past the replayed edits: they are visible, and new writes come after.
        assert_eq!(r.read_point(), 6);
        let got = r.get(Get::new("a").versions(3)).unwrap();
        assert_eq!(values(&got), vec!["six", "six"]);
        let cells = |f: &[u8]| r.store(f).unwrap().state().active.len();
        assert_eq!(
            (cells(b"f"), cells(b"g")),
            (1, 2),
            "f's edit 5 was not replayed"
        );
        r.put(&Put::new("a").add("f", "q", "new")).unwrap();
        assert_eq!(r.write_point(), 7);
    }

    #[test]
    fn a_flush_writes_up_to_the_write_point_and_compactions_follow_the_policy() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        let nothing = r.flush().unwrap();
        assert_eq!((nothing.files, nothing.cells), (0, 0));
        for i in 0..3 {
            assert!(
                !r.needs_compaction(),
                "{i} files are below hbase.hstore.compaction.min"
            );
            r.put(&Put::new(format!("r{i}")).add("f", "q", "v"))
                .unwrap();
            let out = r.flush().unwrap();
            assert_eq!(
                (out.files, out.cells, out.sequence_id),
                (1, 1, r.write_point())
            );
        }
        assert!(r.needs_compaction());
        assert_eq!(r.metrics.flush_count.load(Ordering::Relaxed), 3);
        let done = r.compact(false).unwrap();
        assert_eq!(done.len(), 1, "only f has files");
        // Three files are every file of the store: the compaction is a major one.
        assert!(done[0].major && done[0].files_in == 3 && done[0].cells_out == 3);
        assert_eq!(r.store(b"f").unwrap().file_count(), 1);
        assert!(!r.needs_compaction());
        assert_eq!(r.metrics.compaction_count.load(Ordering::Relaxed), 1);
        assert_eq!(
            r.metrics
                .major_compacted_cells_count
                .load(Ordering::Relaxed),
            3
        );
    }
}
