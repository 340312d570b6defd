//! When a region splits by itself: HBase's split policies, with its property and table
//! attribute names, and where it splits (the middle key of the largest file of the largest
//! store).

use super::*;

/// `hbase.hregion.max.filesize`'s default: 10 GiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 10 << 30;

/// HBase's region split policies (`hbase.regionserver.region.split.policy`, or the table's
/// `SPLIT_POLICY`), by class name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitPolicyKind {
    /// `SteppingSplitPolicy` (HBase 2's default): twice the flush size while the table has
    /// one region on the server, then the max file size.
    Stepping,
    /// `IncreasingToUpperBoundRegionSplitPolicy`: min(max file size, 2 × flush size × n³)
    /// with n the table's regions on the server.
    IncreasingToUpperBound,
    /// `ConstantSizeRegionSplitPolicy`: the max file size.
    ConstantSize,
    /// `DisabledRegionSplitPolicy`: never by itself, nor by hand.
    Disabled,
}

impl SplitPolicyKind {
    /// The policy a class name names, fully qualified or not.
    pub fn parse(class: &str) -> Option<SplitPolicyKind> {
        let short = class.trim().rsplit('.').next().unwrap_or_default();
        Some(match short {
            "SteppingSplitPolicy" => SplitPolicyKind::Stepping,
            "IncreasingToUpperBoundRegionSplitPolicy" => SplitPolicyKind::IncreasingToUpperBound,
            "ConstantSizeRegionSplitPolicy" => SplitPolicyKind::ConstantSize,
            "DisabledRegionSplitPolicy" => SplitPolicyKind::Disabled,
            _ => return None,
        })
    }
}

/// The server-wide split settings (`hbase.regionserver.region.split.policy`,
/// `hbase.hregion.max.filesize`, `hbase.hregion.max.filesize.jitter`,
/// `hbase.increasing.policy.initial.size`, `hbase.hregion.split.overallfiles`).
#[derive(Clone, Debug)]
pub struct SplitConfig {
    /// The policy tables get unless their descriptor names another.
    pub policy: SplitPolicyKind,
    /// The size past which a store splits its region.
    pub max_file_size: u64,
    /// The fraction the max size varies by per region (±half of it), so that regions
    /// loaded together do not all split at once.
    pub jitter: f64,
    /// The first step's size; `None`: twice the table's flush size.
    pub initial_size: Option<u64>,
    /// Compare the sum of the region's stores instead of each store.
    pub overall_files: bool,
}

impl Default for SplitConfig {
    fn default() -> Self {
        SplitConfig {
            policy: SplitPolicyKind::Stepping,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            jitter: 0.25,
            initial_size: None,
            overall_files: false,
        }
    }
}

impl SplitConfig {
    /// Sets one of the properties this owns; `Ok(false)` for any other key.
    pub fn set(&mut self, key: &str, value: &str) -> std::result::Result<bool, String> {
        let bad = || format!("{key} = {value:?} is not valid");
        let v = value.trim();
        match key {
            "hbase.regionserver.region.split.policy" => {
                self.policy = SplitPolicyKind::parse(v).ok_or_else(|| {
                    format!("unknown region split policy {v:?} ({key}): cairn has SteppingSplitPolicy, IncreasingToUpperBoundRegionSplitPolicy, ConstantSizeRegionSplitPolicy and DisabledRegionSplitPolicy")
                })?
            }
            "hbase.hregion.max.filesize" => {
                self.max_file_size = v.parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(bad)?
            }
            "hbase.hregion.max.filesize.jitter" => {
                self.jitter = v
                    .parse::<f64>()
                    .ok()
                    .filter(|j| j.is_finite() && *j >= 0.0)
                    .ok_or_else(bad)?
            }
            "hbase.increasing.policy.initial.size" => {
                let n: i64 = v.parse().map_err(|_| bad())?;
                self.initial_size = (n > 0).then_some(n as u64);
            }
            "hbase.hregion.split.overallfiles" => {
                self.overall_files = v.parse().map_err(|_| bad())?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The policy for `table`: its `SPLIT_POLICY`, else the server's.
    pub fn policy_for(&self, table: &TableDescriptor) -> Result<SplitPolicyKind> {
        match table.split_policy() {
            None => Ok(self.policy),
            Some(class) => SplitPolicyKind::parse(class).ok_or_else(|| {
                RegionError::InvalidArgument(format!(
                    "Unable to load configured region split policy '{class}' for table '{}'",
                    table.name
                ))
            }),
        }
    }

    /// The size a store of a region of `table` may reach before the region splits, with
    /// `regions_on_server` of the table's regions here and `jitter_rate` in [-0.5, 0.5)
    /// drawn once per region.
    pub fn size_to_check(
        &self,
        policy: SplitPolicyKind,
        table: &TableDescriptor,
        server_flush_size: u64,
        regions_on_server: usize,
        jitter_rate: f64,
    ) -> Option<u64> {
        let max = table.max_file_size().unwrap_or(self.max_file_size);
        let jittered = (max as f64 + max as f64 * jitter_rate * self.jitter).max(1.0) as u64;
        let initial = self
            .initial_size
            .unwrap_or_else(|| table.flush_size(server_flush_size).saturating_mul(2));
        Some(match policy {
            SplitPolicyKind::Disabled => return None,
            SplitPolicyKind::ConstantSize => jittered,
            SplitPolicyKind::Stepping if regions_on_server == 1 => initial.min(jittered),
            SplitPolicyKind::Stepping => jittered,
            SplitPolicyKind::IncreasingToUpperBound => {
                let n = regions_on_server as u64;
                if n == 0 || n > 100 {
                    jittered
                } else {
                    initial.saturating_mul(n * n * n).min(jittered)
                }
            }
        })
    }
}

/// A region's jitter rate in [-0.5, 0.5), fixed by its name: the same region gets the same
/// size to check after every restart (HBase draws it at each open).
pub(super) fn jitter_rate(encoded_name: &str) -> f64 {
    let h = xxhash_rust::xxh3::xxh3_64(encoded_name.as_bytes());
    (h >> 11) as f64 / (1u64 << 53) as f64 - 0.5
}

/// Where `region` would split: the row of the middle key of the largest file of its largest
/// store (HBase's `StoreUtils.getSplitPoint`), `None` when it cannot (no files, a reference
/// among them, or the middle key on the file's first or last row).
pub fn split_point(region: &Region) -> Result<Option<Vec<u8>>> {
    if region.stores().any(|s| s.has_references()) {
        return Ok(None);
    }
    let Some(store) = region.stores().max_by_key(|s| s.files_size()) else {
        return Ok(None);
    };
    let files = store.state().files;
    let Some(f) = files.iter().max_by_key(|f| f.size) else {
        return Ok(None);
    };
    let Some(mid) = f.reader.mid_key()? else {
        return Ok(None);
    };
    let row = |k: &[u8]| -> Result<Vec<u8>> { Ok(cairn_cell::KeyRef::parse(k)?.row().to_vec()) };
    let mid = row(&mid)?;
    let first = f.reader.first_key().map(row).transpose()?;
    let last = f.reader.last_key().map(row).transpose()?;
    if first.as_ref() == Some(&mid) || last.as_ref() == Some(&mid) {
        return Ok(None);
    }
    Ok(Some(mid).filter(|m| region.info.contains_row(m) && *m != region.info.start_key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_are_found_by_class_name() {
        for (class, kind) in [
            (
                "org.apache.hadoop.hbase.regionserver.SteppingSplitPolicy",
                SplitPolicyKind::Stepping,
            ),
            (
                "ConstantSizeRegionSplitPolicy",
                SplitPolicyKind::ConstantSize,
            ),
            (
                "org.apache.hadoop.hbase.regionserver.DisabledRegionSplitPolicy",
                SplitPolicyKind::Disabled,
            ),
            (
                "org.apache.hadoop.hbase.regionserver.IncreasingToUpperBoundRegionSplitPolicy",
                SplitPolicyKind::IncreasingToUpperBound,
            ),
        ] {
            assert_eq!(SplitPolicyKind::parse(class), Some(kind), "{class}");
        }
        assert_eq!(SplitPolicyKind::parse("org.example.Mine"), None);
        let t = TableDescriptor::new(TableName::parse("t").unwrap())
            .with_value("SPLIT_POLICY", "org.example.Mine");
        let e = SplitConfig::default().policy_for(&t).unwrap_err();
        assert!(
            e.to_string().contains(
                "Unable to load configured region split policy 'org.example.Mine' for table 't'"
            ),
            "{e}"
        );
    }

    #[test]
    fn the_size_to_check_steps_like_hbases_policies() {
        let mut c = SplitConfig::default();
        c.set("hbase.hregion.max.filesize", "1000000").unwrap();
        c.set("hbase.hregion.max.filesize.jitter", "0").unwrap();
        let mut t = TableDescriptor::new(TableName::parse("t").unwrap());
        t.memstore_flush_size = Some(1000);
        let size = |p, n| c.size_to_check(p, &t, 7, n, 0.3);
        // Stepping: 2 × flush size while one region of the table is here, then the max.
        assert_eq!(size(SplitPolicyKind::Stepping, 1), Some(2000));
        assert_eq!(size(SplitPolicyKind::Stepping, 2), Some(1_000_000));
        assert_eq!(size(SplitPolicyKind::ConstantSize, 1), Some(1_000_000));
        assert_eq!(
            size(SplitPolicyKind::IncreasingToUpperBound, 3),
            Some(2000 * 27)
        );
        assert_eq!(
            size(SplitPolicyKind::IncreasingToUpperBound, 101),
            Some(1_000_000)
        );
        assert_eq!(size(SplitPolicyKind::Disabled, 1), None);
        // A table without its own flush size steps from the server's.
        let mut own = t.clone();
        own.memstore_flush_size = None;
        assert_eq!(
            c.size_to_check(SplitPolicyKind::Stepping, &own, 3000, 1, 0.0),
            Some(6000)
        );
        // The table's MAX_FILESIZE wins over the server's.
        let t2 = t.clone().with_value("MAX_FILESIZE", "5000");
        assert_eq!(
            c.size_to_check(SplitPolicyKind::ConstantSize, &t2, 7, 1, 0.0),
            Some(5000)
        );
        // Jitter: ±(jitter / 2) of the max.
        c.set("hbase.hregion.max.filesize.jitter", "0.25").unwrap();
        assert_eq!(
            c.size_to_check(SplitPolicyKind::ConstantSize, &t, 7, 2, -0.5),
            Some(875_000)
        );
        assert!(c.set("hbase.hregion.max.filesize", "0").is_err());
        assert!(c
            .set("hbase.regionserver.region.split.policy", "Nope")
            .is_err());
        assert_eq!(c.set("hbase.other", "1"), Ok(false));
    }

    #[test]
    fn jitter_rates_stay_in_range_and_vary() {
        let rates: Vec<f64> = (0..100)
            .map(|i| jitter_rate(&format!("{i:032x}")))
            .collect();
        assert!(rates.iter().all(|r| (-0.5..0.5).contains(r)));
        assert!(rates.iter().any(|r| *r < -0.2) && rates.iter().any(|r| *r > 0.2));
    }
}
