//! Background flushes and compactions: the worker threads and the tick that queues work.

use std::time::Instant;

use super::*;

pub(super) enum Work {
    Flush(Arc<Region>),
    Compact(Arc<Region>, bool),
    /// The server's memstores passed the lower mark (HBase's `WAKEUPFLUSH_INSTANCE`).
    GlobalPressure,
    Stop,
}

pub(super) fn spawn_worker(
    name: &str,
    rx: Receiver<Work>,
    server: std::sync::Weak<RegionServer>,
) -> JoinHandle<()> {
    let flusher = name == "cairn-flusher";
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || loop {
            let work = match rx.recv_timeout(Duration::from_millis(500)) {
                Ok(w) => w,
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    match server.upgrade() {
                        // The flusher also looks for work nobody asked for.
                        Some(s) if flusher => s.background_tick(),
                        Some(_) => {}
                        None => return,
                    }
                    continue;
                }
                Err(_) => return,
            };
            match work {
                Work::Stop => return,
                Work::Flush(r) => {
                    // Cleared whatever happens next: a request that finds nothing to flush
                    // (an earlier one took it all) must not leave the flag set, or no write
                    // or tick would ever queue the region's flush again.
                    r.flush_queued.store(false, Ordering::Release);
                    background_flush(&r, server.upgrade().as_deref());
                }
                Work::GlobalPressure => {
                    if let Some(s) = server.upgrade() {
                        s.flush_for_global_pressure();
                    }
                }
                Work::Compact(r, major) => {
                    let now = Instant::now();
                    if !r.is_closed() && r.compaction_retry.lock().due(now) {
                        let what = || format!("compaction of {}", r.info.region_name());
                        match r.compact(major) {
                            Ok(_) => {
                                r.compaction_retry.lock().succeeded(&what());
                                if let Some(s) = server.upgrade() {
                                    s.after_maintenance(&r);
                                }
                            }
                            Err(e) => {
                                r.compaction_retry
                                    .lock()
                                    .failed(&what(), &e.to_string(), now)
                            }
                        }
                    }
                }
            }
        })
        .expect("spawn background thread")
}

/// Flushes `r` on a background thread unless it is closed, empty or its retry is not due
/// yet (the tick asks again once it is); a failure is recorded for the backoff. Whether a
/// flush ran and succeeded.
pub(super) fn background_flush(r: &Arc<Region>, server: Option<&RegionServer>) -> bool {
    let now = Instant::now();
    if r.is_closed() || !r.flush_retry.lock().due(now) || r.memstore_size() == 0 {
        return false;
    }
    let what = || format!("flush of {}", r.info.region_name());
    match r.flush() {
        Ok(_) => {
            r.flush_retry.lock().succeeded(&what());
            if let Some(s) = server {
                s.after_maintenance(r);
            }
            true
        }
        Err(e) => {
            r.flush_retry.lock().failed(&what(), &e.to_string(), now);
            false
        }
    }
}

impl RegionServer {
    /// After a flush or compaction of `r`: parents no child refers to any more are
    /// archived, and `r` splits if its policy says it has grown enough.
    pub(super) fn after_maintenance(&self, r: &Arc<Region>) {
        if let Ok(t) = self.table(&r.info.table) {
            if t.has_parents.load(Ordering::Acquire) && !r.stores().any(|s| s.has_references()) {
                if let Err(e) = self.archive_unreferenced_parents(&r.info.table) {
                    tracing::warn!("archiving split or merge parents of {}: {e}", r.info.table);
                }
            }
        }
        // In a cluster the master drives splits: the server only asks for one.
        if self.config.hosting == Hosting::Assigned {
            match self.split_wanted(r) {
                Ok(Some(row)) => {
                    if let Some(ask) = self.split_requester.get() {
                        ask(r, row);
                    }
                }
                Ok(None) => {}
                Err(e) => tracing::warn!("split check of {}: {e}", r.info.region_name()),
            }
            return;
        }
        if let Err(e) = self.split_if_needed(r) {
            tracing::warn!("split of {} failed: {e}", r.info.region_name());
        }
    }

    pub(super) fn background_tick(&self) {
        self.recover_when_due();
        if self.memstore_accounting().is_above_low_water_mark() {
            self.flush_for_global_pressure();
        }
        let now = Instant::now();
        let tables: Vec<_> = self.tables.load().values().cloned().collect();
        // `hbase.regionserver.maxlogs`: too many WAL segments means some region holds old
        // edits in its memstore; flush the regions the oldest segment still needs.
        let segments = self.wal.segments();
        let closed: Vec<_> = segments.iter().filter(|s| !s.active).collect();
        if closed.len() > self.config.max_wal_segments {
            if let Some(oldest) = closed.iter().min_by_key(|s| s.id) {
                for t in &tables {
                    for r in &t.regions {
                        if oldest
                            .max_sequence_id
                            .contains_key(r.info.encoded_name.as_bytes())
                            && !r.flush_queued.swap(true, Ordering::AcqRel)
                        {
                            if let Some(tx) = &self.flush_tx {
                                let _ = tx.send(Work::Flush(r.clone()));
                            }
                        }
                    }
                }
            }
        }
        for t in tables {
            for r in &t.regions {
                if r.is_closed() {
                    continue;
                }
                if r.needs_flush()
                    && r.flush_retry.lock().due(now)
                    && !r.flush_queued.swap(true, Ordering::AcqRel)
                {
                    if let Some(tx) = &self.flush_tx {
                        let _ = tx.send(Work::Flush(r.clone()));
                    }
                }
                // A split or merge child compacts its references away soon after it opens
                // (HBase requests that compaction when it opens a region holding them).
                if (r.needs_compaction() || r.has_references())
                    && r.compaction_retry.lock().due(now)
                {
                    if let Some(tx) = &self.compact_tx {
                        let _ = tx.send(Work::Compact(r.clone(), false));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{server, table};
    use super::*;
    use crate::mutation::Put;

    #[test]
    fn a_worker_runs_queued_flushes_and_compactions_until_told_to_stop() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let t = table(&s, "t", &[]);
        let region = s.table(&t).unwrap().regions[0].clone();
        let (tx, rx) = crossbeam_channel::unbounded();
        let worker = spawn_worker("cairn-test-worker", rx, Arc::downgrade(&s));
        for i in 0..3 {
            s.put(&t, &Put::new(format!("r{i}")).add("f", "q", "v"))
                .unwrap();
            tx.send(Work::Flush(region.clone())).unwrap();
            // One flush per put: wait until the worker has written this one out.
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while region.memstore_size() > 0 {
                assert!(std::time::Instant::now() < deadline, "flush {i} never ran");
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        tx.send(Work::Compact(region.clone(), true)).unwrap();
        tx.send(Work::Stop).unwrap();
        worker.join().unwrap();
        assert_eq!(region.memstore_size(), 0);
        let store = region.store(b"f").unwrap();
        assert_eq!(
            store.file_count(),
            1,
            "three flushes, then one major compaction"
        );
        assert_eq!(region.metrics.flush_count.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn a_flush_request_that_finds_nothing_to_flush_lets_the_next_one_queue() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let t = table(&s, "t", &[]);
        let region = s.table(&t).unwrap().regions[0].clone();
        let (tx, rx) = crossbeam_channel::unbounded();
        let worker = spawn_worker("cairn-test-worker", rx, Arc::downgrade(&s));
        // A second request, queued by a write while the first flush ran, finds the memstore
        // empty.
        region.flush_queued.store(true, Ordering::Release);
        tx.send(Work::Flush(region.clone())).unwrap();
        tx.send(Work::Stop).unwrap();
        worker.join().unwrap();
        assert!(
            !region.flush_queued.load(Ordering::Acquire),
            "the flag stays set: the region's memstore would never be flushed again"
        );
    }

    #[test]
    fn a_worker_exits_once_its_server_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let (_tx, rx) = crossbeam_channel::unbounded::<Work>();
        let worker = spawn_worker("cairn-test-worker", rx, Arc::downgrade(&s));
        s.close().unwrap();
        drop(s);
        // The worker notices at its next idle tick (500 ms) and returns.
        worker.join().unwrap();
    }
}
