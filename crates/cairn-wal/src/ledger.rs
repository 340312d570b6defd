//! What each segment holds and which segments can go, written once for both backends: the
//! active segment's byte and edit accounting (its size, the log position, appends, the highest
//! sequence id per region), the closed segments with the same per-region maxima, regions'
//! flush marks (HBase's `SequenceIdAccounting`, reduced to what deciding deletions needs), and
//! the counting of replayed edits.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::segment::{self, HEADER_LEN};
use crate::{ReplayReport, WalEdit, WalError};

const HEADER: u64 = HEADER_LEN as u64;

/// One segment of the WAL, as [`Wal::segments`](crate::Wal::segments) lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    /// The segment's id (its file name is `wal.<id as 20 digits>`).
    pub id: u64,
    /// The file.
    pub path: PathBuf,
    /// Bytes written, header included (the active segment's file is longer: preallocated).
    pub size: u64,
    /// Highest sequence id per region among the edits in the segment.
    pub max_sequence_id: BTreeMap<Vec<u8>, u64>,
    /// True for the segment being appended to (never deleted).
    pub active: bool,
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
}

impl ActiveTally {
    /// A new, empty segment (just its header) at the start of the log.
    pub(crate) fn new() -> ActiveTally {
        ActiveTally {
            size: HEADER,
            lsn: 0,
            appends: 0,
            regions: RegionMax::default(),
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

    /// Ends the segment (a roll): what it held, and the tally restarted for the next one.
    pub(crate) fn finish_segment(&mut self) -> ClosedSegment {
        let closed = ClosedSegment {
            size: std::mem::replace(&mut self.size, HEADER),
            regions: self.sorted_regions(),
        };
        self.regions.clear();
        closed
    }
}

/// A segment no longer appended to.
pub(crate) struct ClosedSegment {
    /// Bytes written, header included.
    pub(crate) size: u64,
    /// Highest sequence id per region among its edits.
    pub(crate) regions: BTreeMap<Vec<u8>, u64>,
}

/// The closed segments and how far each region has flushed.
#[derive(Default)]
pub(crate) struct Ledger {
    segments: BTreeMap<u64, ClosedSegment>,
    /// Per region, the sequence id up to which it has flushed.
    flushed: HashMap<Vec<u8>, u64>,
}

impl Ledger {
    /// Adds closed segment `id`.
    pub(crate) fn insert(&mut self, id: u64, segment: ClosedSegment) {
        self.segments.insert(id, segment);
    }

    /// Forgets segment `id` (its file is gone).
    pub(crate) fn remove(&mut self, id: u64) {
        self.segments.remove(&id);
    }

    /// Records that `region` has flushed up to `sequence_id`; returns the closed segments, in
    /// id order, whose edits are now all in store files (still listed until
    /// [`remove`](Self::remove)d).
    pub(crate) fn mark_flushed(&mut self, region: &[u8], sequence_id: u64) -> Vec<u64> {
        match self.flushed.get_mut(region) {
            Some(f) => *f = (*f).max(sequence_id),
            None => {
                self.flushed.insert(region.to_vec(), sequence_id);
            }
        }
        let flushed = &self.flushed;
        flushed_segments(
            self.segments.iter().map(|(&id, seg)| (id, &seg.regions)),
            |r| flushed.get(r).copied(),
        )
    }

    /// Every segment in `dir`, oldest first, then the active one (`active_id`).
    pub(crate) fn list(
        &self,
        dir: &Path,
        active_id: u64,
        active: &ActiveTally,
    ) -> Vec<SegmentInfo> {
        let mut v: Vec<SegmentInfo> = self
            .segments
            .iter()
            .map(|(&id, m)| SegmentInfo {
                id,
                path: segment::segment_path(dir, id),
                size: m.size,
                max_sequence_id: m.regions.clone(),
                active: false,
            })
            .collect();
        v.push(SegmentInfo {
            id: active_id,
            path: segment::segment_path(dir, active_id),
            size: active.size,
            max_sequence_id: active.sorted_regions(),
            active: true,
        });
        v
    }
}

/// The segments whose every region has flushed up to the segment's highest sequence id for it:
/// all their edits are in store files, so they may be deleted. Both WAL backends decide with
/// this one rule.
fn flushed_segments<'a>(
    segments: impl IntoIterator<Item = (u64, &'a BTreeMap<Vec<u8>, u64>)>,
    flushed: impl Fn(&[u8]) -> Option<u64>,
) -> Vec<u64> {
    segments
        .into_iter()
        .filter(|(_, regions)| {
            regions
                .iter()
                .all(|(r, max)| flushed(r).is_some_and(|f| f >= *max))
        })
        .map(|(id, _)| id)
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

/// The id of the segment after `last` (1 for an empty WAL in `dir`).
pub(crate) fn next_segment_id(dir: &Path, last: Option<u64>) -> Result<u64, WalError> {
    match last {
        None => Ok(1),
        Some(last) => last
            .checked_add(1)
            .ok_or_else(|| WalError::SegmentIdsExhausted {
                path: segment::segment_path(dir, last),
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(pairs: &[(&str, u64)]) -> BTreeMap<Vec<u8>, u64> {
        pairs
            .iter()
            .map(|(r, s)| (r.as_bytes().to_vec(), *s))
            .collect()
    }

    fn edit(region: &str, sequence_id: u64) -> WalEdit {
        WalEdit {
            region: region.as_bytes().to_vec(),
            sequence_id,
            write_time_ms: 0,
            cells: Vec::new(),
        }
    }

    #[test]
    fn a_segment_is_deletable_only_once_every_region_in_it_has_flushed_past_it() {
        let (s1, s2, s3) = (seg(&[("a", 10), ("b", 5)]), seg(&[("a", 20)]), seg(&[]));
        let flushed: BTreeMap<Vec<u8>, u64> = seg(&[("a", 15), ("b", 5)]);
        let got = flushed_segments([(1, &s1), (2, &s2), (3, &s3)], |r| flushed.get(r).copied());
        // 1: both regions flushed past it; 2: region a only to 15 of 20; 3: no regions at all.
        assert_eq!(got, vec![1, 3]);
        let none: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        assert_eq!(
            flushed_segments([(1, &s1)], |r| none.get(r).copied()),
            Vec::<u64>::new()
        );
    }

    #[test]
    fn the_tally_counts_bytes_edits_and_region_maxima_per_segment() {
        let mut t = ActiveTally::new();
        assert_eq!(t.record(100, &edit("a", 7)), 100);
        assert_eq!(t.record(50, &edit("a", 3)), 150);
        assert_eq!(t.record(10, &edit("b", 9)), 160);
        assert_eq!((t.size, t.lsn, t.appends), (HEADER + 160, 160, 3));
        assert_eq!(t.sorted_regions(), seg(&[("a", 7), ("b", 9)]));
        let closed = t.finish_segment();
        assert_eq!(
            (closed.size, closed.regions),
            (HEADER + 160, seg(&[("a", 7), ("b", 9)]))
        );
        // The log position and append count run on across segments; the rest restarts.
        assert_eq!((t.size, t.lsn, t.appends), (HEADER, 160, 3));
        assert!(t.regions.is_empty());
        assert_eq!(t.record(5, &edit("c", 1)), 165);
    }

    #[test]
    fn flush_marks_only_rise_and_free_the_segments_they_cover() {
        let mut l = Ledger::default();
        let closed = |regions| ClosedSegment { size: 1, regions };
        l.insert(1, closed(seg(&[("a", 10)])));
        l.insert(2, closed(seg(&[("a", 20), ("b", 4)])));
        assert_eq!(l.mark_flushed(b"a", 15), vec![1]);
        // A lower mark does not undo a higher one.
        assert_eq!(l.mark_flushed(b"a", 5), vec![1]);
        l.remove(1);
        assert_eq!(l.mark_flushed(b"a", 25), Vec::<u64>::new());
        assert_eq!(l.mark_flushed(b"b", 4), vec![2]);
        let listed = l.list(Path::new("/w"), 3, &ActiveTally::new());
        let ids: Vec<(u64, bool)> = listed.iter().map(|s| (s.id, s.active)).collect();
        assert_eq!(ids, [(2, false), (3, true)]);
    }

    #[test]
    fn replay_counts_edits_cells_and_maxima() {
        let mut report = ReplayReport::default();
        let mut regions = BTreeMap::new();
        count_replayed(&mut report, &mut regions, &edit("a", 4));
        count_replayed(&mut report, &mut regions, &edit("a", 2));
        assert_eq!((report.edits, report.cells), (2, 0));
        assert_eq!(report.max_sequence_id, seg(&[("a", 4)]));
        assert_eq!(regions, seg(&[("a", 4)]));
        assert_eq!(next_segment_id(Path::new("/w"), None).unwrap(), 1);
        assert_eq!(next_segment_id(Path::new("/w"), Some(7)).unwrap(), 8);
        assert!(next_segment_id(Path::new("/w"), Some(u64::MAX)).is_err());
    }
}
