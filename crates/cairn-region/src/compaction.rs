//! Which files to compact: HBase's `ExploringCompactionPolicy` over `RatioBasedCompactionPolicy`
//! defaults, as a pure function of file sizes so it can be tested on its own.

/// `hbase.hstore.compaction.*` settings.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionConfig {
    /// `hbase.hstore.compaction.min` (3; at least 2).
    pub min_files: usize,
    /// `hbase.hstore.compaction.max` (10).
    pub max_files: usize,
    /// `hbase.hstore.compaction.ratio` (1.2).
    pub ratio: f64,
    /// `hbase.hstore.compaction.min.size` (the flush size, 128 MiB): smaller files are always
    /// in ratio.
    pub min_size: u64,
    /// `hbase.hstore.compaction.max.size` (unbounded).
    pub max_size: u64,
    /// `hbase.hstore.blockingStoreFiles` (16).
    pub blocking_files: usize,
    /// `hbase.hregion.majorcompaction` in ms (7 days; 0 disables time-based majors).
    pub major_period_ms: i64,
    /// `hbase.hregion.majorcompaction.jitter` (0.5).
    pub major_jitter: f64,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            min_files: 3,
            max_files: 10,
            ratio: 1.2,
            min_size: 128 * 1024 * 1024,
            max_size: u64::MAX,
            blocking_files: 16,
            major_period_ms: 7 * 24 * 3600 * 1000,
            major_jitter: 0.5,
        }
    }
}

impl CompactionConfig {
    /// The HBase properties [`set`](Self::set) reads.
    pub const PROPERTIES: &'static [&'static str] = &[
        "hbase.hstore.compaction.min",
        "hbase.hstore.compactionThreshold",
        "hbase.hstore.compaction.max",
        "hbase.hstore.compaction.ratio",
        "hbase.hstore.compaction.min.size",
        "hbase.hstore.compaction.max.size",
        "hbase.hstore.blockingStoreFiles",
        "hbase.hregion.majorcompaction",
        "hbase.hregion.majorcompaction.jitter",
    ];

    /// Applies an HBase property; unknown names are ignored.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let bad = || format!("{key} = {value:?} is not valid");
        let v = value.trim();
        match key {
            "hbase.hstore.compaction.min" | "hbase.hstore.compactionThreshold" => {
                self.min_files = v.parse::<usize>().map_err(|_| bad())?.max(2)
            }
            "hbase.hstore.compaction.max" => self.max_files = v.parse().map_err(|_| bad())?,
            "hbase.hstore.compaction.ratio" => self.ratio = v.parse().map_err(|_| bad())?,
            "hbase.hstore.compaction.min.size" => self.min_size = v.parse().map_err(|_| bad())?,
            "hbase.hstore.compaction.max.size" => self.max_size = v.parse().map_err(|_| bad())?,
            "hbase.hstore.blockingStoreFiles" => {
                self.blocking_files = v.parse().map_err(|_| bad())?
            }
            "hbase.hregion.majorcompaction" => {
                self.major_period_ms = v.parse().map_err(|_| bad())?
            }
            "hbase.hregion.majorcompaction.jitter" => {
                self.major_jitter = v.parse().map_err(|_| bad())?
            }
            _ => {}
        }
        Ok(())
    }
}

/// `ExploringCompactionPolicy.applyCompactionPolicy`: the best contiguous window of
/// `sizes` (oldest first) — most files, then fewest bytes — whose files are all within
/// `ratio` of the rest of the window. Returns `[start, end)`, or `None`.
pub fn explore(
    sizes: &[u64],
    config: &CompactionConfig,
    might_be_stuck: bool,
) -> Option<(usize, usize)> {
    let min = config.min_files.max(2);
    let max = config.max_files.max(min);
    let mut best: Option<(usize, usize, u64)> = None;
    let mut smallest: Option<(usize, usize, u64)> = None;
    for start in 0..sizes.len() {
        for end in (start + min)..=sizes.len().min(start + max) {
            let window = &sizes[start..end];
            let total: u64 = window.iter().sum();
            if smallest.is_none_or(|(_, _, s)| total < s) {
                smallest = Some((start, end, total));
            }
            if total > config.max_size {
                continue;
            }
            if total >= config.min_size && !files_in_ratio(window, total, config.ratio) {
                continue;
            }
            if is_better(best, end - start, total, might_be_stuck) {
                best = Some((start, end, total));
            }
        }
    }
    match (best, might_be_stuck) {
        (Some((s, e, _)), _) => Some((s, e)),
        (None, true) => smallest.map(|(s, e, _)| (s, e)),
        (None, false) => None,
    }
}

fn files_in_ratio(window: &[u64], total: u64, ratio: f64) -> bool {
    window.len() < 2
        || window
            .iter()
            .all(|&s| s as f64 <= (total - s) as f64 * ratio)
}

fn is_better(best: Option<(usize, usize, u64)>, count: usize, total: u64, stuck: bool) -> bool {
    let Some((bs, be, btotal)) = best else {
        return true;
    };
    let bcount = be - bs;
    if stuck && btotal > 0 && total > 0 {
        // Files per byte, with 5% slack for the incumbent.
        return (bcount as f64 / btotal as f64) * 1.05 < count as f64 / total as f64;
    }
    count > bcount || (count == bcount && total < btotal)
}

/// A store's files as the policy sees them.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// File length in bytes: what the ratio rule compares.
    pub size: u64,
    /// Already selected by a running compaction: neither it nor any older file may be selected.
    pub compacting: bool,
    /// Modification time (ms since the epoch); the oldest decides whether a time-based major is
    /// due.
    pub modified_ms: i64,
    /// Written by a major compaction (`MAJOR_COMPACTION_KEY`): a single such file needs no
    /// scheduled major unless its cells have expired.
    pub major: bool,
    /// Oldest cell timestamp, when the file says.
    pub min_ts: Option<i64>,
    /// File name; seeds the major-compaction jitter so the schedule is stable for a set of files.
    pub name: String,
}

/// What to compact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// Indexes into the candidate list, contiguous, oldest first.
    pub files: Vec<usize>,
    /// Every file of the store (deletes will be dropped).
    pub all_files: bool,
}

/// `SortedCompactionPolicy.selectCompaction` for the default store engine.
pub fn select(
    candidates: &[Candidate],
    config: &CompactionConfig,
    force_major: bool,
    user: bool,
    ttl_ms: Option<i64>,
    now_ms: i64,
) -> Option<Selection> {
    let compacting = candidates.iter().filter(|c| c.compacting).count();
    let might_be_stuck =
        candidates.len() - compacting + usize::from(compacting > 0) >= config.blocking_files;
    // Files up to the newest one being compacted cannot join another compaction.
    let first_eligible = candidates
        .iter()
        .rposition(|c| c.compacting)
        .map_or(0, |i| i + 1);
    let eligible: Vec<usize> = (first_eligible..candidates.len()).collect();
    let all_files = eligible.len() == candidates.len();
    let major_due = all_files && should_major(candidates, config, ttl_ms, now_ms);
    let trying_major = (force_major && all_files && user)
        || ((force_major && all_files) || major_due) && eligible.len() < config.max_files;
    if trying_major && all_files && !eligible.is_empty() {
        return Some(Selection {
            files: eligible,
            all_files: true,
        });
    }
    // Minor: drop leading files bigger than max_size, then the exploring window.
    let mut start = 0;
    while start < eligible.len() && candidates[eligible[start]].size > config.max_size {
        start += 1;
    }
    let sizes: Vec<u64> = eligible[start..]
        .iter()
        .map(|&i| candidates[i].size)
        .collect();
    if sizes.len() < config.min_files {
        return None;
    }
    let (s, e) = explore(&sizes, config, might_be_stuck)?;
    if e - s < config.min_files {
        return None;
    }
    let files: Vec<usize> = eligible[start + s..start + e].to_vec();
    let all = files.len() == candidates.len();
    Some(Selection {
        files,
        all_files: all,
    })
}

/// `RatioBasedCompactionPolicy.shouldPerformMajorCompaction`, with the schedule's jitter
/// seeded from the first file's name so it is stable for a given set of files.
pub fn should_major(
    candidates: &[Candidate],
    config: &CompactionConfig,
    ttl_ms: Option<i64>,
    now_ms: i64,
) -> bool {
    if config.major_period_ms <= 0 || candidates.is_empty() {
        return false;
    }
    let period = config.major_period_ms;
    let jitter = (period as f64 * config.major_jitter).round() as i64;
    let seed = candidates[0]
        .name
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
    let rnd = (seed % 1_000_003) as f64 / 1_000_003.0;
    let due_after = period + jitter - (2.0 * jitter as f64 * rnd).round() as i64;
    let oldest_modified = candidates
        .iter()
        .map(|c| c.modified_ms)
        .min()
        .unwrap_or(now_ms);
    if oldest_modified >= now_ms - due_after {
        return false;
    }
    if candidates.len() == 1 {
        let c = &candidates[0];
        let expired = match (ttl_ms, c.min_ts) {
            (Some(ttl), Some(min_ts)) => min_ts < now_ms - ttl,
            _ => false,
        };
        return !c.major || expired;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(min_size: u64) -> CompactionConfig {
        CompactionConfig {
            min_size,
            ..CompactionConfig::default()
        }
    }

    #[test]
    fn exploring_prefers_more_files_in_ratio() {
        // The old 1000 is out of ratio against the small newer files.
        let sizes = [1000, 50, 23, 12, 12];
        let c = cfg(10);
        assert_eq!(explore(&sizes, &c, false), Some((1, 5)));
        // Below min.size everything is in ratio: all five.
        assert_eq!(explore(&sizes, &cfg(10_000), false), Some((0, 5)));
        // Too few files.
        assert_eq!(explore(&[1, 1], &c, false), None);
    }

    #[test]
    fn exploring_breaks_ties_by_size_and_respects_max() {
        let c = CompactionConfig {
            max_files: 3,
            ..cfg(1)
        };
        // Windows of 3 that are in ratio: [5,5,5] (15) and [5,5,4] (14) -> smaller total wins.
        assert_eq!(explore(&[5, 5, 5, 4], &c, false), Some((1, 4)));
    }

    #[test]
    fn stuck_stores_compact_the_smallest_window() {
        let c = cfg(1);
        // Nothing is in ratio (each file dwarfs the rest), but the store is stuck.
        let sizes = [1000, 100, 10, 1];
        assert_eq!(explore(&sizes, &c, false), None);
        assert_eq!(explore(&sizes, &c, true), Some((1, 4)));
    }

    fn cand(size: u64, compacting: bool) -> Candidate {
        Candidate {
            size,
            compacting,
            modified_ms: 0,
            major: false,
            min_ts: None,
            name: format!("f{size}"),
        }
    }

    #[test]
    fn select_skips_files_being_compacted_and_forces_majors() {
        let c = CompactionConfig {
            major_period_ms: 0,
            ..cfg(1 << 30)
        };
        let files = vec![
            cand(10, true),
            cand(10, false),
            cand(10, false),
            cand(10, false),
        ];
        let s = select(&files, &c, false, false, None, 0).unwrap();
        assert_eq!(s.files, vec![1, 2, 3]);
        assert!(!s.all_files);
        let files: Vec<_> = (0..2).map(|_| cand(10, false)).collect();
        assert_eq!(
            select(&files, &c, false, false, None, 0),
            None,
            "below min files"
        );
        let s = select(&files, &c, true, true, None, 0).unwrap();
        assert!(s.all_files && s.files == vec![0, 1]);
    }

    #[test]
    fn time_based_major_is_due_after_the_period() {
        let c = CompactionConfig {
            major_period_ms: 1000,
            major_jitter: 0.0,
            ..cfg(1)
        };
        let mut files = vec![cand(10, false), cand(10, false)];
        assert!(!should_major(&files, &c, None, 500));
        assert!(should_major(&files, &c, None, 5000));
        files.truncate(1);
        files[0].major = true;
        assert!(
            !should_major(&files, &c, None, 5000),
            "one major file, nothing expired"
        );
        files[0].min_ts = Some(0);
        assert!(
            should_major(&files, &c, Some(100), 5000),
            "its cells expired"
        );
    }
}
