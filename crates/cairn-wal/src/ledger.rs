//! What each WAL file holds and which files can go, written once for both backends: the
//! active file's byte and edit accounting (its size, the log position, appends, the highest
//! sequence id per region), the closed files (this server's, and dead servers' files replay
//! adopted) with the same per-region maxima, regions' flush marks (HBase's
//! `SequenceIdAccounting`, reduced to what deciding retirements needs), and the counting of
//! replayed edits.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::{ReplayReport, WalEdit, WalError};

/// One file of the WAL, as [`Wal::segments`](crate::Wal::segments) lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    /// The file number (the creation time in milliseconds, the last part of its name).
    pub id: u64,
    /// The file.
    pub path: PathBuf,
    /// Bytes written, header included (the active file is longer: preallocated).
    pub size: u64,
    /// Highest sequence id per region among the edits in the file.
    pub max_sequence_id: BTreeMap<Vec<u8>, u64>,
    /// True for the file being appended to (never retired).
    pub active: bool,
    /// This server's file; otherwise a dead server's that replay read and keeps until its
    /// edits are flushed.
    pub own: bool,
}

/// The active segment's "highest sequence id per region", updated on every append: a hash map
/// keyed by the region name. In memory only (segments store edits, not this map), so any
/// fast hash will do; region names are chosen by the server, not by clients.
pub(crate) type RegionMax = HashMap<Box<[u8]>, u64, foldhash::fast::RandomState>;

/// Raises `region`'s entry in `map` to at least `sequence_id`.
pub(crate) fn raise(map: &mut BTreeMap<Vec<u8>, u64>, region: &[u8], sequence_id: u64) {
    match map.get_mut(region) {
        Some(m) => *m = (*m).max(sequence_id),
        None => {
            map.insert(region.to_vec(), sequence_id);
        }
    }
}

/// The byte and edit accounting of the segment being appended to.
pub(crate) struct ActiveTally {
    /// Bytes of the segment, header included (the mapped WAL's write offset).
    pub(crate) size: u64,
    /// Record bytes appended since open, across segments: the log position, and
    /// [`WalStats::appended_bytes`](crate::WalStats::appended_bytes).
    pub(crate) lsn: u64,
    /// Edits appended since open.
    pub(crate) appends: u64,
    /// Highest sequence id per region among the segment's edits.
    pub(crate) regions: RegionMax,
    /// Bytes of the file's header: `size` is this while the file holds no entry.
    pub(crate) header: u64,
}

impl ActiveTally {
    /// A new, empty file (just its header of `header` bytes) at the start of the log.
    pub(crate) fn new(header: u64) -> ActiveTally {
        ActiveTally {
            size: header,
            lsn: 0,
            appends: 0,
            regions: RegionMax::default(),
            header,
        }
    }

    /// Counts one appended record of `len` bytes holding `edit`; returns the log position
    /// just past it.
    #[inline]
    pub(crate) fn record(&mut self, len: u64, edit: &WalEdit) -> u64 {
        self.size += len;
        self.lsn += len;
        self.appends += 1;
        match self.regions.get_mut(edit.region.as_slice()) {
            Some(max) => {
                if *max < edit.sequence_id {
                    *max = edit.sequence_id;
                }
            }
            None => {
                self.regions
                    .insert(edit.region.as_slice().into(), edit.sequence_id);
            }
        }
        self.lsn
    }

    /// The regions of the segment, sorted.
    pub(crate) fn sorted_regions(&self) -> BTreeMap<Vec<u8>, u64> {
        self.regions.iter().map(|(r, &s)| (r.to_vec(), s)).collect()
    }

    /// Ends the file (a roll): what it held, and the tally restarted for the next one, whose
    /// header takes `next_header` bytes.
    pub(crate) fn finish_segment(&mut self, next_header: u64) -> ClosedSegment {
        let closed = ClosedSegment {
            size: std::mem::replace(&mut self.size, next_header),
            regions: self.sorted_regions(),
            own: true,
        };
        self.regions.clear();
        self.header = next_header;
        closed
    }
}

/// A file no longer appended to.
pub(crate) struct ClosedSegment {
    /// Bytes written, header included.
    pub(crate) size: u64,
    /// Highest sequence id per region among its edits.
    pub(crate) regions: BTreeMap<Vec<u8>, u64>,
    /// This server's file (a dead server's otherwise).
    pub(crate) own: bool,
}

/// A closed file's place in the ledger: its number, then its path (dead servers' files may
/// share numbers with this server's).
pub(crate) type FileKey = (u64, PathBuf);

/// The closed files and how far each region has flushed.
#[derive(Default)]
pub(crate) struct Ledger {
    segments: BTreeMap<FileKey, ClosedSegment>,
    /// Per region, the sequence id up to which it has flushed.
    flushed: HashMap<Vec<u8>, u64>,
}

impl Ledger {
    /// Adds a closed file.
    pub(crate) fn insert(&mut self, key: FileKey, segment: ClosedSegment) {
        self.segments.insert(key, segment);
    }

    /// Forgets a file (it is gone).
    pub(crate) fn remove(&mut self, key: &FileKey) {
        self.segments.remove(key);
    }

    /// Whether the file is this server's.
    pub(crate) fn is_own(&self, key: &FileKey) -> bool {
        self.segments.get(key).is_some_and(|s| s.own)
    }

    /// Records that `region` has flushed up to `sequence_id`; returns the closed files, oldest
    /// first, whose edits are now all in store files (still listed until
    /// [`remove`](Self::remove)d).
    pub(crate) fn mark_flushed(&mut self, region: &[u8], sequence_id: u64) -> Vec<FileKey> {
        match self.flushed.get_mut(region) {
            Some(f) => *f = (*f).max(sequence_id),
            None => {
                self.flushed.insert(region.to_vec(), sequence_id);
            }
        }
        let flushed = &self.flushed;
        flushed_segments(
            self.segments.iter().map(|(key, seg)| (key, &seg.regions)),
            |r| flushed.get(r).copied(),
        )
    }

    /// Every closed file, oldest first, then the active one.
    pub(crate) fn list(
        &self,
        active_id: u64,
        active_path: &Path,
        active: &ActiveTally,
    ) -> Vec<SegmentInfo> {
        let mut v: Vec<SegmentInfo> = self
            .segments
            .iter()
            .map(|((id, path), m)| SegmentInfo {
                id: *id,
                path: path.clone(),
                size: m.size,
                max_sequence_id: m.regions.clone(),
                active: false,
                own: m.own,
            })
            .collect();
        v.push(SegmentInfo {
            id: active_id,
            path: active_path.to_path_buf(),
            size: active.size,
            max_sequence_id: active.sorted_regions(),
            active: true,
            own: true,
        });
        v
    }
}

/// The files whose every region has flushed up to the file's highest sequence id for it:
/// all their edits are in store files, so they may be retired. Both WAL backends decide with
/// this one rule.
fn flushed_segments<'a>(
    segments: impl IntoIterator<Item = (&'a FileKey, &'a BTreeMap<Vec<u8>, u64>)>,
    flushed: impl Fn(&[u8]) -> Option<u64>,
) -> Vec<FileKey> {
    segments
        .into_iter()
        .filter(|(_, regions)| {
            regions
                .iter()
                .all(|(r, max)| flushed(r).is_some_and(|f| f >= *max))
        })
        .map(|(key, _)| key.clone())
        .collect()
}

/// Counts one replayed `edit` of a segment into the open's `report` and the segment's
/// per-region maxima.
pub(crate) fn count_replayed(
    report: &mut ReplayReport,
    regions: &mut BTreeMap<Vec<u8>, u64>,
    edit: &WalEdit,
) {
    raise(regions, &edit.region, edit.sequence_id);
    raise(&mut report.max_sequence_id, &edit.region, edit.sequence_id);
    report.edits += 1;
    report.cells += edit.cells.len() as u64;
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_millis() as u64)
}

/// The number of the file after the one numbered `last` (HBase's `AbstractFSWAL.getNewPath`):
/// the time now in milliseconds, or one more than `last` if the clock has not moved past it.
/// `last_path` names the last file in the error when numbers run out.
pub(crate) fn next_number(last: Option<u64>, last_path: &Path) -> Result<u64, WalError> {
    let now = now_ms();
    match last {
        None => Ok(now.max(1)),
        Some(last) => {
            last.checked_add(1)
                .map(|n| n.max(now))
                .ok_or_else(|| WalError::SegmentIdsExhausted {
                    path: last_path.to_path_buf(),
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: u64 = 100;

    fn seg(pairs: &[(&str, u64)]) -> BTreeMap<Vec<u8>, u64> {
        pairs
            .iter()
            .map(|(r, s)| (r.as_bytes().to_vec(), *s))
            .collect()
    }

    fn key(n: u64) -> FileKey {
        (n, PathBuf::from(format!("/w/h%2C1%2C1.{n}")))
    }

    fn edit(region: &str, sequence_id: u64) -> WalEdit {
        WalEdit {
            region: region.as_bytes().to_vec(),
            sequence_id,
            ..WalEdit::default()
        }
    }

    #[test]
    fn a_file_is_retired_only_once_every_region_in_it_has_flushed_past_it() {
        let (s1, s2, s3) = (seg(&[("a", 10), ("b", 5)]), seg(&[("a", 20)]), seg(&[]));
        let flushed: BTreeMap<Vec<u8>, u64> = seg(&[("a", 15), ("b", 5)]);
        let (k1, k2, k3) = (key(1), key(2), key(3));
        let got = flushed_segments([(&k1, &s1), (&k2, &s2), (&k3, &s3)], |r| {
            flushed.get(r).copied()
        });
        // 1: both regions flushed past it; 2: region a only to 15 of 20; 3: no regions at all.
        assert_eq!(got, vec![key(1), key(3)]);
        let none: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        assert!(flushed_segments([(&k1, &s1)], |r| none.get(r).copied()).is_empty());
    }

    #[test]
    fn the_tally_counts_bytes_edits_and_region_maxima_per_file() {
        let mut t = ActiveTally::new(HEADER);
        assert_eq!(t.record(100, &edit("a", 7)), 100);
        assert_eq!(t.record(50, &edit("a", 3)), 150);
        assert_eq!(t.record(10, &edit("b", 9)), 160);
        assert_eq!((t.size, t.lsn, t.appends), (HEADER + 160, 160, 3));
        assert_eq!(t.sorted_regions(), seg(&[("a", 7), ("b", 9)]));
        let closed = t.finish_segment(90);
        assert_eq!(
            (closed.size, closed.regions, closed.own),
            (HEADER + 160, seg(&[("a", 7), ("b", 9)]), true)
        );
        // The log position and append count run on across files; the rest restarts.
        assert_eq!((t.size, t.lsn, t.appends), (90, 160, 3));
        assert!(t.regions.is_empty());
        assert_eq!(t.record(5, &edit("c", 1)), 165);
    }

    #[test]
    fn flush_marks_only_rise_and_free_the_files_they_cover() {
        let mut l = Ledger::default();
        let closed = |regions, own| ClosedSegment {
            size: 1,
            regions,
            own,
        };
        l.insert(key(1), closed(seg(&[("a", 10)]), false));
        l.insert(key(2), closed(seg(&[("a", 20), ("b", 4)]), true));
        assert_eq!(l.mark_flushed(b"a", 15), vec![key(1)]);
        assert!(!l.is_own(&key(1)) && l.is_own(&key(2)));
        // A lower mark does not undo a higher one.
        assert_eq!(l.mark_flushed(b"a", 5), vec![key(1)]);
        l.remove(&key(1));
        assert!(l.mark_flushed(b"a", 25).is_empty());
        assert_eq!(l.mark_flushed(b"b", 4), vec![key(2)]);
        let listed = l.list(3, Path::new("/w/active"), &ActiveTally::new(HEADER));
        let ids: Vec<(u64, bool)> = listed.iter().map(|s| (s.id, s.active)).collect();
        assert_eq!(ids, [(2, false), (3, true)]);
        assert_eq!(listed[1].path, Path::new("/w/active"));
    }

    #[test]
    fn replay_counts_edits_cells_and_maxima_and_numbers_follow_the_clock() {
        let mut report = ReplayReport::default();
        let mut regions = BTreeMap::new();
        count_replayed(&mut report, &mut regions, &edit("a", 4));
        count_replayed(&mut report, &mut regions, &edit("a", 2));
        assert_eq!((report.edits, report.cells), (2, 0));
        assert_eq!(report.max_sequence_id, seg(&[("a", 4)]));
        assert_eq!(regions, seg(&[("a", 4)]));
        let p = Path::new("/w");
        let now = now_ms();
        assert!(next_number(None, p).unwrap() >= now);
        assert!(next_number(Some(7), p).unwrap() >= now);
        assert_eq!(next_number(Some(now + 1000), p).unwrap(), now + 1001);
        assert!(next_number(Some(u64::MAX), p).is_err());
    }
}
