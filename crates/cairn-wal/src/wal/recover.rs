//! Recovery from a failure after which the WAL cannot trust what it wrote: the failed segments
//! are set aside (kept for replay, sealed if the disk lets them be) and a new one is started,
//! so the region server can make the set-aside edits durable by flushing before edits are
//! taken again (see [`crate::Wal::recover`]).

use std::sync::atomic::Ordering::{Relaxed, Release};

use std::time::Instant;

use super::{sync_dir, Shared, PREFAULT_STEP};
use crate::ledger::next_number;
use crate::mapped::{self, TAIL};
use crate::WalError;

impl Shared {
    /// Starts a new active segment in place of the failed one (unless an earlier attempt of
    /// this recovery already did), seals what it can of the old ones, and starts a new epoch:
    /// a waiter for a position taken before it is refused, because no sync can promise it.
    pub(super) fn replace_untrusted(&self) -> Result<(), WalError> {
        let mut a = self.active.lock();
        if a.fresh {
            return Ok(());
        }
        let old_id = a.seg.id();
        let min_id = next_number(Some(old_id), &self.paths.file(old_id))?;
        let next = self.take_prepared(min_id)?;
        let id = next.id();
        mapped::publish(&self.paths, id)?;
        sync_dir(&self.paths.dir)?;
        self.durable_name.fetch_max(id, Release);
        let header = next.header_len();
        a.limit = self
            .options
            .roll_size
            .min(next.capacity())
            .max(header + TAIL);
        let mut old = std::mem::replace(&mut a.seg, next);
        a.since = Instant::now();
        let closed = a.tally.finish_segment(header);
        let size = closed.size;
        self.closed
            .lock()
            .ledger
            .insert((old_id, self.paths.file(old_id)), closed);
        a.prefault_at = PREFAULT_STEP;
        a.fresh = true;
        a.epoch += 1;
        let (lsn, appends) = (a.tally.lsn, a.tally.appends);
        {
            let mut s = self.sync.lock();
            s.epoch = a.epoch;
            s.synced_lsn = s.synced_lsn.max(lsn);
            s.synced_appends = s.synced_appends.max(appends);
        }
        self.synced.notify_all();
        drop(a);
        // Best effort: a sealed segment has no zero tail to trim at the next open. Replay
        // reads it either way, and the caller's flush makes its edits durable elsewhere.
        let _ = old.seal(size);
        drop(old);
        {
            let _in_order = self.sealer.lock();
            while let Some(mut job) = self.seal_queue.lock().pop_front() {
                let _ = job.seg.seal(job.size);
            }
        }
        self.stats.rolls.fetch_add(1, Relaxed);
        {
            let mut b = self.bg.lock();
            b.next_id = id.saturating_add(1);
            b.prepare = id < u64::MAX;
        }
        self.bg_wake.notify_one();
        Ok(())
    }

    /// What a wait for an untrusted log position gets.
    #[cold]
    pub(super) fn untrusted_error(&self) -> WalError {
        match self.broken_reason.lock().clone() {
            Some(reason) => WalError::Broken { reason },
            None => WalError::Broken {
                reason: "an earlier sync failed and its segment was set aside".into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::path::Path;

    use super::super::MappedWal;
    use crate::{Durability, ServerName, WalEdit, WalError, WalLocation, WalOptions};

    fn edit(seq: u64) -> WalEdit {
        WalEdit::new(
            b"r".to_vec(),
            b"t".to_vec(),
            seq,
            0,
            vec![
                cairn_cell::KeyValue::put(format!("row{seq}").as_bytes(), b"f", b"q", 1, b"v")
                    .unwrap(),
            ],
        )
    }

    fn location(root: &Path) -> WalLocation {
        WalLocation::new(root, ServerName::parse("localhost,16020,1").unwrap())
    }

    fn open(root: &Path) -> (MappedWal, Vec<u64>) {
        let mut seqs = Vec::new();
        let options = WalOptions {
            roll_size: 64 << 10,
            ..WalOptions::default()
        };
        let (w, _) = MappedWal::open(&location(root), options, |e| {
            seqs.push(e.sequence_id);
            Ok(())
        })
        .unwrap();
        (w, seqs)
    }

    fn segment_count(root: &Path) -> usize {
        std::fs::read_dir(location(root).dir())
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                crate::names::parse_wal_file_name(name.to_str().unwrap()).is_some()
            })
            .count()
    }

    #[test]
    fn a_failed_wal_refuses_edits_until_recovered_then_replays_every_segment() {
        let dir = tempfile::tempdir().unwrap();
        let (w, _) = open(dir.path());
        assert!(!w.recover(&mut || panic!("nothing to recover")).unwrap());
        for seq in 1..=3 {
            w.append(&edit(seq), Durability::SyncWal).unwrap();
        }
        let untrusted = w.shared.active.lock().tally.lsn;
        let old_epoch = w.shared.active.lock().epoch;
        // What a failed fdatasync does.
        w.shared.fail(&WalError::Io {
            op: "fdatasync",
            path: dir.path().join("wal.x"),
            offset: 0,
            source: io::Error::from_raw_os_error(libc::EIO),
        });
        assert!(w.failure().unwrap().contains("fdatasync"));
        let refused = w.append(&edit(4), Durability::SyncWal).unwrap_err();
        assert!(matches!(refused, WalError::Broken { .. }), "{refused}");

        // The flush that would make the set-aside edits durable fails: still refusing, and a
        // second try starts no second segment.
        let before = segment_count(dir.path());
        let e = w.recover(&mut || Err("disk full".into())).unwrap_err();
        assert!(e.to_string().contains("disk full") && e.to_string().contains("fdatasync"));
        assert_eq!(segment_count(dir.path()), before + 1);
        assert!(w.append(&edit(4), Durability::SyncWal).is_err());
        let mut waited = None;
        assert!(w
            .recover(&mut || {
                // A wait for a position in the set-aside segment fails instead of returning
                // as if a sync had covered it.
                waited = Some(w.shared.sync_to(untrusted, old_epoch).is_err());
                Ok(())
            })
            .unwrap());
        assert_eq!(waited, Some(true));
        // Once recovered, a sync of everything so far succeeds: the flush made it durable.
        w.sync(true).unwrap();
        assert_eq!(segment_count(dir.path()), before + 1);
        assert_eq!(w.failure(), None);
        w.append(&edit(5), Durability::FsyncWal).unwrap();
        w.close().unwrap();
        let (w, seqs) = open(dir.path());
        assert_eq!(seqs, vec![1, 2, 3, 5]);
        w.close().unwrap();
    }

    #[test]
    fn no_room_for_the_next_segment_fails_the_append_but_not_the_wal() {
        let dir = tempfile::tempdir().unwrap();
        let (w, _) = open(dir.path());
        // The next file cannot be prepared: the roll fails the way a full disk makes it fail,
        // before anything is written. Wait for the background thread to prepare the next
        // file, discard it, and put a plain file where the directory files are prepared in
        // is.
        let started = std::time::Instant::now();
        let next = loop {
            {
                let mut b = w.shared.bg.lock();
                if !b.preparing {
                    if let Some(p) = b.prepared.take() {
                        break p.id();
                    }
                }
            }
            assert!(started.elapsed().as_secs() < 20, "never prepared");
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        let spare = w.shared.paths.spare.clone();
        std::fs::remove_file(w.shared.paths.tmp(next)).unwrap();
        std::fs::remove_dir(&spare).unwrap();
        std::fs::write(&spare, b"in the way").unwrap();
        let mut failed = None;
        for s in 1..=2_000u64 {
            if let Err(e) = w.append(&edit(s), Durability::SyncWal) {
                failed = Some((s, e));
                break;
            }
        }
        let (s, e) = failed.expect("the segment filled up");
        assert!(e.to_string().contains(".tmp"), "{e}");
        assert_eq!(w.failure(), None, "a failed roll does not fail the WAL");
        std::fs::remove_file(&spare).unwrap();
        std::fs::create_dir(&spare).unwrap();
        w.append(&edit(s), Durability::FsyncWal).unwrap();
        w.close().unwrap();
        let (w, seqs) = open(dir.path());
        assert_eq!(seqs, (1..=s).collect::<Vec<_>>());
        w.close().unwrap();
    }
}
