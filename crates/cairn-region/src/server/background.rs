//! Background flushes and compactions: the worker threads and the tick that queues work.

use super::*;

pub(super) enum Work {
    Flush(Arc<Region>),
    Compact(Arc<Region>, bool),
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
                    if r.memstore_size() > 0 && !r.is_closed() {
                        if let Err(e) = r.flush() {
                            tracing::error!("flush of {} failed: {e}", r.info.region_name());
                        }
                    }
                }
                Work::Compact(r, major) => {
                    if !r.is_closed() {
                        if let Err(e) = r.compact(major) {
                            tracing::error!("compaction of {} failed: {e}", r.info.region_name());
                        }
                    }
                }
            }
        })
        .expect("spawn background thread")
}

impl RegionServer {
    pub(super) fn background_tick(&self) {
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
                if r.needs_flush() && !r.flush_queued.swap(true, Ordering::AcqRel) {
                    if let Some(tx) = &self.flush_tx {
                        let _ = tx.send(Work::Flush(r.clone()));
                    }
                }
                if r.needs_compaction() {
                    if let Some(tx) = &self.compact_tx {
                        let _ = tx.send(Work::Compact(r.clone(), false));
                    }
                }
            }
        }
    }
}
