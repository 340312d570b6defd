//! What to do with each cell of a scan or compaction: HBase's query matchers, with its delete
//! tracker and column trackers (`NormalUserScanQueryMatcher`, `RawScanQueryMatcher`,
//! `MinorCompactionScanQueryMatcher`, `MajorCompactionScanQueryMatcher`, `ScanDeleteTracker`,
//! `ScanWildcardColumnTracker`, `ExplicitColumnTracker`).
//!
//! Cairn merges all families of a region in one heap, so "next row" for one store means "the
//! rest of this family in this row" here: [`MatchCode::SeekNextRow`] is answered with
//! [`Matcher::next_family_key`].

use std::collections::HashSet;

use cairn_cell::{make_key, same_bytes, CellRef, CellType};
use cairn_filter::{Filter, ReturnCode};

use crate::descriptor::ColumnFamilyDescriptor;

/// What the matcher tells the scan loop to do with a cell (HBase's
/// `ScanQueryMatcher.MatchCode`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatchCode {
    /// Return (or, in a compaction, write) the cell and step to the next one.
    Include,
    /// Return the cell, then seek past this column (its version limit is reached, or the
    /// filter said `INCLUDE_AND_NEXT_COL`).
    IncludeAndSeekNextCol,
    /// Return the cell, then seek past this family in this row (no requested column is left,
    /// or the filter said `INCLUDE_AND_SEEK_NEXT_ROW`).
    IncludeAndSeekNextRow,
    /// Leave the cell out and step to the next one (a masked version, a delete marker, a cell
    /// newer than the time range).
    Skip,
    /// Leave the cell out and seek past every remaining version of its column.
    SeekNextCol,
    /// Past this family in this row.
    SeekNextRow,
    /// Seek to a key given by a filter or the explicit column tracker.
    SeekTo(Vec<u8>),
    /// Stop the scan: a filter said no later cell can pass (`filterAllRemaining`).
    DoneScan,
}

/// A `[min, max)` time range, HBase's `TimeRange`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeRange {
    /// Smallest timestamp in the range, inclusive (ms since the epoch).
    pub min: i64,
    /// End of the range, exclusive; `i64::MAX` for no upper bound.
    pub max: i64,
}

impl Default for TimeRange {
    fn default() -> Self {
        TimeRange {
            min: 0,
            max: i64::MAX,
        }
    }
}

impl TimeRange {
    /// `[min, max)`; a range with `min >= max` contains nothing.
    pub fn new(min: i64, max: i64) -> TimeRange {
        TimeRange { min, max }
    }
    /// Just `ts` (HBase's `Get.setTimestamp`).
    pub fn at(ts: i64) -> TimeRange {
        TimeRange {
            min: ts,
            max: ts.saturating_add(1),
        }
    }
    /// Whether a cell written at `ts` falls in the range.
    pub fn contains(&self, ts: i64) -> bool {
        self.min <= ts && ts < self.max
    }
    /// Whether this is the default range `[0, i64::MAX)`, which excludes no cell with a valid
    /// timestamp (so reads need not check it).
    pub fn is_all_time(&self) -> bool {
        self.min == 0 && self.max == i64::MAX
    }
    /// Whether any of `[lo, hi]` falls in the range.
    pub fn overlaps(&self, lo: i64, hi: i64) -> bool {
        lo < self.max && hi >= self.min
    }
}

/// Which matcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchMode {
    /// A client scan.
    User,
    /// A raw client scan: delete markers and masked cells come back as cells.
    Raw,
    /// A compaction that keeps delete markers (not all files).
    MinorCompaction,
    /// A compaction of all files: markers and what they mask are dropped.
    MajorCompaction,
}

#[derive(Clone, Debug)]
struct FamilyRules {
    name: Vec<u8>,
    max_versions: u32,
    min_versions: u32,
    oldest_unexpired: i64,
    /// Requested qualifiers, sorted; `None` for all.
    columns: Option<Vec<Vec<u8>>>,
}

/// The state of one scan or compaction's matcher.
pub struct Matcher {
    mode: MatchMode,
    /// The read's families, sorted by name: a read names a family or two, and a sorted list
    /// built from what the request already owns costs no allocation per family, where a map
    /// of shared entries cost several per read.
    families: Vec<FamilyRules>,
    time_range: TimeRange,
    /// `Scan.maxVersions` (the client's; 1 by default).
    scan_max_versions: u32,
    has_filter: bool,
    /// Cells newer than this are passed without version counting or delete tracking
    /// (compactions: the smallest read point of any open scanner).
    read_point: u64,
    // Per family and row.
    family: Vec<u8>,
    /// Where `family` is in `families`, when the read asked for it.
    rules: Option<usize>,
    /// The read wants a family sorting after `family`.
    later_family: bool,
    family_stamp: Option<i64>,
    family_versions: HashSet<i64>,
    delete_cell: Option<(Vec<u8>, i64, u8)>,
    column_index: usize,
    // Per column.
    column: ColumnSlot,
    count: u32,
    last_ts_type: Option<(i64, u8)>,
    after_filter: u32,
    after_filter_column: ColumnSlot,
}

/// The qualifier of the column being matched, or none. Set once per column of every row a
/// scan passes, so it keeps its allocation instead of copying into a new `Vec` each time.
#[derive(Default)]
struct ColumnSlot {
    qualifier: Vec<u8>,
    set: bool,
}

impl ColumnSlot {
    fn is(&self, q: &[u8]) -> bool {
        self.set && same_bytes(&self.qualifier, q)
    }

    fn set(&mut self, q: Option<&[u8]>) {
        self.qualifier.clear();
        self.set = q.is_some();
        if let Some(q) = q {
            self.qualifier.extend_from_slice(q);
        }
    }
}

fn is_delete(type_code: u8) -> bool {
    (8..=14).contains(&type_code)
}

impl Matcher {
    /// `columns`: per family, the requested qualifiers (`None` = all), handed over (they
    /// are sorted in place).
    pub fn new(
        mode: MatchMode,
        families: Vec<(&ColumnFamilyDescriptor, Option<Vec<Vec<u8>>>)>,
        time_range: TimeRange,
        scan_max_versions: u32,
        has_filter: bool,
        read_point: u64,
        now_ms: i64,
    ) -> Matcher {
        let mut families: Vec<FamilyRules> = families
            .into_iter()
            .map(|(f, mut columns)| {
                let oldest_unexpired = match (mode, f.ttl_ms()) {
                    (MatchMode::Raw, _) | (_, None) => i64::MIN,
                    (_, Some(ttl)) => now_ms.saturating_sub(ttl),
                };
                if let Some(c) = &mut columns {
                    c.sort_by(|a, b| cairn_cell::compare_bytes(a, b));
                    c.dedup();
                }
                FamilyRules {
                    name: f.name.clone(),
                    max_versions: f.max_versions,
                    min_versions: f.min_versions,
                    oldest_unexpired,
                    columns,
                }
            })
            .collect();
        families.sort_by(|a, b| cairn_cell::compare_bytes(&a.name, &b.name));
        families.dedup_by(|a, b| a.name == b.name);
        Matcher {
            mode,
            families,
            time_range,
            scan_max_versions: scan_max_versions.max(1),
            has_filter,
            read_point,
            family: Vec::new(),
            rules: None,
            later_family: true,
            family_stamp: None,
            family_versions: HashSet::new(),
            delete_cell: None,
            column_index: 0,
            column: ColumnSlot::default(),
            count: 0,
            last_ts_type: None,
            after_filter: 0,
            after_filter_column: ColumnSlot::default(),
        }
    }

    /// Called at the start of every row.
    pub fn start_row(&mut self) {
        // The family found for the last cell stays found: rows mostly begin with the same
        // family, and looking it up again took a map search and an allocation per row.
        self.reset_family();
    }

    fn reset_family(&mut self) {
        self.family_stamp = None;
        self.family_versions.clear();
        self.delete_cell = None;
        self.column_index = 0;
        self.reset_column(None);
        self.after_filter = 0;
        self.after_filter_column.set(None);
    }

    fn reset_column(&mut self, q: Option<&[u8]>) {
        self.column.set(q);
        self.count = 0;
        self.last_ts_type = None;
    }

    /// Versions a column may yield before filters (`maxVersionToCheck`).
    fn versions_to_check(&self, r: &FamilyRules) -> u32 {
        match self.mode {
            MatchMode::Raw => self.scan_max_versions,
            MatchMode::MinorCompaction | MatchMode::MajorCompaction => r.max_versions,
            MatchMode::User if self.has_filter => r.max_versions,
            MatchMode::User => self.scan_max_versions.min(r.max_versions),
        }
    }

    fn versions_after_filter(&self, r: &FamilyRules) -> u32 {
        match self.mode {
            MatchMode::Raw => self.scan_max_versions,
            _ => self.scan_max_versions.min(r.max_versions),
        }
    }

    /// Whether the read wants a family that sorts after the family of the cell last matched
    /// (if not, "next row" for that family means the row is done).
    pub fn wants_later_family(&self) -> bool {
        self.later_family
    }

    /// The key past every cell of `cell`'s family in its row.
    pub fn next_family_key(cell: &CellRef<'_>) -> Option<Vec<u8>> {
        let mut fam = cell.family().to_vec();
        fam.push(0);
        make_key(cell.row(), &fam, &[], i64::MAX, CellType::Maximum.code()).ok()
    }

    /// The key to seek to for `SeekNextCol` (`getKeyForNextColumn`): the next requested
    /// column if the tracker is explicit, else past every version of this column.
    pub fn next_column_key(&self, cell: &CellRef<'_>) -> Option<Vec<u8>> {
        if let Some(Some(cols)) = self.rules.map(|i| &self.families[i].columns) {
            if let Some(q) = cols.get(self.column_index) {
                if cairn_cell::compare_bytes(q, cell.qualifier()) == std::cmp::Ordering::Greater {
                    return make_key(
                        cell.row(),
                        cell.family(),
                        q,
                        i64::MAX,
                        CellType::Maximum.code(),
                    )
                    .ok();
                }
            }
        }
        make_key(
            cell.row(),
            cell.family(),
            cell.qualifier(),
            i64::MIN,
            CellType::Minimum.code(),
        )
        .ok()
    }

    /// Decides what to do with `cell` (same row as the previous call unless `start_row` ran).
    pub fn match_cell(
        &mut self,
        cell: &CellRef<'_>,
        filter: Option<&mut (dyn Filter + 'static)>,
    ) -> MatchCode {
        if !same_bytes(cell.family(), &self.family) {
            self.family.clear();
            self.family.extend_from_slice(cell.family());
            let at = self
                .families
                .binary_search_by(|r| cairn_cell::compare_bytes(&r.name, cell.family()));
            self.rules = at.ok();
            // The families after this one (found or not) in the sorted list.
            let after = match at {
                Ok(i) => i + 1,
                Err(i) => i,
            };
            self.later_family = after < self.families.len();
            self.reset_family();
        }
        let Some(i) = self.rules else {
            // A family the scan did not ask for (or that the table lacks).
            return MatchCode::SeekNextRow;
        };
        // Taken out and put back (three words) so the rules can be read while the matcher's
        // per-column state changes.
        let families = std::mem::take(&mut self.families);
        let code = self.match_with_rules(&families[i], cell, filter);
        self.families = families;
        code
    }

    fn match_with_rules(
        &mut self,
        rules: &FamilyRules,
        cell: &CellRef<'_>,
        filter: Option<&mut (dyn Filter + 'static)>,
    ) -> MatchCode {
        let mut filter = filter;
        if let Some(f) = filter.as_deref_mut() {
            if f.filter_all_remaining() {
                return MatchCode::DoneScan;
            }
        }
        let ts = cell.timestamp();
        let type_code = cell.type_code();
        // preCheck: the explicit tracker has no column left.
        if let Some(cols) = &rules.columns {
            if self.column_index >= cols.len() {
                return MatchCode::SeekNextRow;
            }
        }
        if rules.min_versions == 0 && ts < rules.oldest_unexpired {
            return self.next_row_or_next_column(rules, cell);
        }
        let fresh = cell.sequence_id > self.read_point;
        if is_delete(type_code) {
            match self.mode {
                MatchMode::Raw => {}
                MatchMode::User => {
                    // Markers newer than the time range still mask (KEEP_DELETED_CELLS false).
                    if ts >= self.time_range.min {
                        self.add_delete(cell);
                    }
                    return MatchCode::Skip;
                }
                MatchMode::MinorCompaction => {
                    if !fresh {
                        self.add_delete(cell);
                    }
                    return MatchCode::Include;
                }
                MatchMode::MajorCompaction => {
                    if fresh {
                        return MatchCode::Include;
                    }
                    self.add_delete(cell);
                    return MatchCode::Skip;
                }
            }
        }
        if self.mode != MatchMode::Raw && !fresh {
            match self.is_deleted(cell) {
                Deleted::Column => return self.next_row_or_next_column(rules, cell),
                Deleted::Version => return MatchCode::Skip,
                Deleted::No => {}
            }
        }
        if matches!(self.mode, MatchMode::User | MatchMode::Raw) {
            if ts >= self.time_range.max {
                return MatchCode::Skip;
            }
            if ts < self.time_range.min {
                return self.next_row_or_next_column(rules, cell);
            }
        }
        // checkColumn (explicit tracker).
        if let Some(cols) = &rules.columns {
            loop {
                let Some(want) = cols.get(self.column_index) else {
                    return MatchCode::SeekNextRow;
                };
                match cairn_cell::compare_bytes(cell.qualifier(), want) {
                    std::cmp::Ordering::Equal => break,
                    std::cmp::Ordering::Less => {
                        self.last_ts_type = None;
                        return match make_key(
                            cell.row(),
                            cell.family(),
                            want,
                            i64::MAX,
                            CellType::Maximum.code(),
                        ) {
                            Ok(k) => MatchCode::SeekTo(k),
                            Err(_) => MatchCode::SeekNextCol,
                        };
                    }
                    std::cmp::Ordering::Greater => {
                        self.column_index += 1;
                        self.reset_column(None);
                    }
                }
            }
        }
        // checkVersions.
        let max = self.versions_to_check(rules);
        let code = if rules.columns.is_some() {
            if !self.column.is(cell.qualifier()) {
                self.reset_column(Some(cell.qualifier()));
            }
            if fresh && self.mode != MatchMode::User {
                MatchCode::Include
            } else if self.last_ts_type.map(|(t, _)| t) == Some(ts) {
                MatchCode::Skip
            } else {
                self.count += 1;
                if self.count >= max
                    || (self.count >= rules.min_versions && ts < rules.oldest_unexpired)
                {
                    self.column_index += 1;
                    self.reset_column(None);
                    if self.column_index >= rules.columns.as_ref().map_or(0, |c| c.len()) {
                        MatchCode::IncludeAndSeekNextRow
                    } else {
                        MatchCode::IncludeAndSeekNextCol
                    }
                } else {
                    self.last_ts_type = Some((ts, type_code));
                    MatchCode::Include
                }
            }
        } else {
            if !self.column.is(cell.qualifier()) {
                self.reset_column(Some(cell.qualifier()));
            }
            if fresh && self.mode != MatchMode::User {
                MatchCode::Include
            } else if self.last_ts_type == Some((ts, type_code)) {
                MatchCode::Skip
            } else {
                if !is_delete(type_code) {
                    self.count += 1;
                }
                if self.count > max {
                    MatchCode::SeekNextCol
                } else if self.count <= rules.min_versions || ts >= rules.oldest_unexpired {
                    self.last_ts_type = Some((ts, type_code));
                    MatchCode::Include
                } else {
                    MatchCode::SeekNextCol
                }
            }
        };
        if !matches!(
            code,
            MatchCode::Include
                | MatchCode::IncludeAndSeekNextCol
                | MatchCode::IncludeAndSeekNextRow
        ) {
            return code;
        }
        let Some(f) = filter else {
            return code;
        };
        let mut code = match (f.filter_cell(cell), &code) {
            (ReturnCode::Skip, MatchCode::Include) => return MatchCode::Skip,
            (ReturnCode::Skip, MatchCode::IncludeAndSeekNextCol) => return MatchCode::SeekNextCol,
            (ReturnCode::Skip, _) => return MatchCode::SeekNextRow,
            (ReturnCode::NextCol, MatchCode::IncludeAndSeekNextRow) => {
                return MatchCode::SeekNextRow
            }
            (ReturnCode::NextCol, _) => return self.next_row_or_next_column(rules, cell),
            (ReturnCode::NextRow, _) => return MatchCode::SeekNextRow,
            (ReturnCode::SeekNextUsingHint, _) => {
                return match f.next_cell_hint(cell) {
                    Some(k) => MatchCode::SeekTo(k),
                    None => MatchCode::Skip,
                }
            }
            (ReturnCode::Include, _) => code,
            (ReturnCode::IncludeAndNextCol, MatchCode::Include) => MatchCode::IncludeAndSeekNextCol,
            (ReturnCode::IncludeAndNextCol, _) => code,
            (ReturnCode::IncludeAndSeekNextRow, _) => MatchCode::IncludeAndSeekNextRow,
        };
        if !self.after_filter_column.is(cell.qualifier()) {
            self.after_filter_column.set(Some(cell.qualifier()));
            self.after_filter = 0;
        }
        self.after_filter += 1;
        if self.after_filter > self.versions_after_filter(rules) {
            code = if code == MatchCode::IncludeAndSeekNextRow {
                MatchCode::SeekNextRow
            } else {
                MatchCode::SeekNextCol
            };
        }
        if code == MatchCode::SeekNextCol || code == MatchCode::IncludeAndSeekNextCol {
            if let Some(cols) = &rules.columns {
                self.done_with_column(cols, cell);
            }
        }
        code
    }

    fn next_row_or_next_column(&mut self, rules: &FamilyRules, cell: &CellRef<'_>) -> MatchCode {
        match &rules.columns {
            None => MatchCode::SeekNextCol,
            Some(cols) => {
                self.done_with_column(cols, cell);
                if self.column_index >= cols.len() {
                    MatchCode::SeekNextRow
                } else {
                    MatchCode::SeekNextCol
                }
            }
        }
    }

    /// The explicit tracker moves past every requested column up to `cell`'s.
    fn done_with_column(&mut self, cols: &[Vec<u8>], cell: &CellRef<'_>) {
        while let Some(want) = cols.get(self.column_index) {
            let c = cairn_cell::compare_bytes(cell.qualifier(), want);
            self.last_ts_type = None;
            if c == std::cmp::Ordering::Less {
                return;
            }
            self.column_index += 1;
            self.reset_column(None);
            if c == std::cmp::Ordering::Equal {
                return;
            }
        }
    }

    fn add_delete(&mut self, cell: &CellRef<'_>) {
        let ts = cell.timestamp();
        if self.family_stamp.is_some_and(|f| ts <= f) {
            return;
        }
        match CellType::from_code(cell.type_code()) {
            Some(CellType::DeleteFamily) => self.family_stamp = Some(ts),
            Some(CellType::DeleteFamilyVersion) => {
                self.family_versions.insert(ts);
            }
            _ => {
                let q = cell.qualifier();
                if let Some((dq, _, dt)) = &self.delete_cell {
                    // For one qualifier, a less specific marker after a DeleteColumn adds nothing.
                    if dq.as_slice() == q && cell.type_code() < *dt {
                        return;
                    }
                }
                self.delete_cell = Some((q.to_vec(), ts, cell.type_code()));
            }
        }
    }

    fn is_deleted(&mut self, cell: &CellRef<'_>) -> Deleted {
        let ts = cell.timestamp();
        if self.family_stamp.is_some_and(|f| ts <= f) {
            return Deleted::Column;
        }
        if self.family_versions.contains(&ts) {
            return Deleted::Version;
        }
        if let Some((q, dts, dt)) = &self.delete_cell {
            if q.as_slice() == cell.qualifier() {
                if *dt == CellType::DeleteColumn.code() {
                    return Deleted::Column;
                }
                if ts == *dts {
                    return Deleted::Version;
                }
                if ts > *dts {
                    return Deleted::No;
                }
            }
            // An older version or another qualifier: the marker covers nothing further.
            self.delete_cell = None;
        }
        Deleted::No
    }
}

enum Deleted {
    No,
    Column,
    Version,
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_cell::KeyValue;

    fn cell(q: &str, ts: i64, t: CellType, seq: u64) -> KeyValue {
        KeyValue::new(b"r", b"f", q.as_bytes(), ts, t, b"v")
            .unwrap()
            .with_sequence_id(seq)
    }

    fn put(q: &str, ts: i64) -> KeyValue {
        cell(q, ts, CellType::Put, 1)
    }

    fn matcher(mode: MatchMode, versions: u32, read_point: u64) -> Matcher {
        let f = ColumnFamilyDescriptor::new("f").max_versions(versions);
        Matcher::new(
            mode,
            vec![(&f, None)],
            TimeRange::default(),
            versions,
            false,
            read_point,
            0,
        )
    }

    /// The code for each cell of one row, in order (cells given in HBase's key order).
    fn codes(m: &mut Matcher, cells: &[KeyValue]) -> Vec<MatchCode> {
        m.start_row();
        cells
            .iter()
            .map(|c| m.match_cell(&c.as_cell(), None))
            .collect()
    }

    use MatchCode::*;

    #[test]
    fn user_scans_apply_the_four_delete_markers() {
        let mut m = matcher(MatchMode::User, 3, u64::MAX);
        let row = [
            // Family-wide markers sort first (empty qualifier), newest first.
            cell("", 6, CellType::DeleteFamilyVersion, 1),
            cell("", 2, CellType::DeleteFamily, 1),
            put("a", 7),
            put("a", 6), // DeleteFamilyVersion: exactly ts 6, every column
            put("a", 5),
            put("a", 2), // DeleteFamily: ts <= 2, the rest of the column
            // Within a column: newest first, a marker before a put of the same timestamp.
            put("b", 5),
            cell("b", 4, CellType::DeleteColumn, 1),
            put("b", 4), // DeleteColumn: ts <= 4
            put("c", 5),
            cell("c", 4, CellType::Delete, 1),
            put("c", 4), // Delete: exactly ts 4
            put("c", 3),
        ];
        assert_eq!(
            codes(&mut m, &row),
            vec![
                Skip,
                Skip, // markers are never returned
                Include,
                Skip,
                Include,
                SeekNextCol,
                Include,
                Skip,
                SeekNextCol,
                Include,
                Skip,
                Skip,
                Include,
            ]
        );
    }

    #[test]
    fn a_marker_newer_than_the_time_range_still_masks() {
        let f = ColumnFamilyDescriptor::new("f");
        let mut m = Matcher::new(
            MatchMode::User,
            vec![(&f, None)],
            TimeRange::new(0, 5),
            1,
            false,
            u64::MAX,
            0,
        );
        let row = [cell("a", 8, CellType::DeleteColumn, 1), put("a", 4)];
        assert_eq!(codes(&mut m, &row), vec![Skip, SeekNextCol]);
        // Without the marker the same cell is in range and returned.
        assert_eq!(codes(&mut m, &[put("a", 4)]), vec![Include]);
    }

    #[test]
    fn compactions_keep_what_readers_at_the_smallest_read_point_may_see() {
        let marker = cell("a", 9, CellType::DeleteColumn, 11);
        let row = [
            marker,
            cell("a", 8, CellType::Put, 5),
            cell("a", 7, CellType::Put, 4),
        ];
        // The marker (sequence id 11) is newer than an open reader's read point 10: that reader
        // still sees the puts, so neither minor nor major compaction may drop them, and the
        // marker itself stays. Versions beyond VERSIONS (1) still go.
        for mode in [MatchMode::MinorCompaction, MatchMode::MajorCompaction] {
            let mut m = matcher(mode, 1, 10);
            assert_eq!(
                codes(&mut m, &row),
                vec![Include, Include, SeekNextCol],
                "{mode:?}"
            );
        }
        // Once every reader is past it, the marker masks the puts; a minor compaction keeps the
        // marker (older files may hold more of the column), a major one drops it too.
        let mut m = matcher(MatchMode::MinorCompaction, 1, 20);
        assert_eq!(codes(&mut m, &row), vec![Include, SeekNextCol, SeekNextCol]);
        let mut m = matcher(MatchMode::MajorCompaction, 1, 20);
        assert_eq!(codes(&mut m, &row), vec![Skip, SeekNextCol, SeekNextCol]);
        // A put newer than the read point is kept without using up a version.
        let mut m = matcher(MatchMode::MajorCompaction, 1, 10);
        let row = [
            cell("a", 9, CellType::Put, 30),
            cell("a", 8, CellType::Put, 5),
            put("a", 7),
        ];
        assert_eq!(codes(&mut m, &row), vec![Include, Include, SeekNextCol]);
    }

    #[test]
    fn explicit_columns_seek_to_the_next_one_asked_for() {
        let f = ColumnFamilyDescriptor::new("f");
        let cols = Some(vec![b"d".to_vec(), b"b".to_vec()]);
        let mut m = Matcher::new(
            MatchMode::User,
            vec![(&f, cols)],
            TimeRange::default(),
            1,
            false,
            u64::MAX,
            0,
        );
        let want_b = make_key(b"r", b"f", b"b", i64::MAX, CellType::Maximum.code()).unwrap();
        assert_eq!(
            codes(&mut m, &[put("a", 1), put("b", 1), put("d", 1)]),
            vec![SeekTo(want_b), IncludeAndSeekNextCol, IncludeAndSeekNextRow]
        );
    }

    #[test]
    fn time_ranges_are_half_open() {
        let r = TimeRange::new(5, 10);
        assert!(!r.contains(4) && r.contains(5) && r.contains(9) && !r.contains(10));
        assert!(r.overlaps(0, 5) && r.overlaps(9, 20) && !r.overlaps(0, 4) && !r.overlaps(10, 20));
        let at = TimeRange::at(7);
        assert!(at.contains(7) && !at.contains(6) && !at.contains(8));
        // `at(LATEST_TIMESTAMP)` saturates instead of overflowing.
        assert_eq!(TimeRange::at(i64::MAX).max, i64::MAX);
        assert!(TimeRange::default().is_all_time() && !at.is_all_time());
    }
}
