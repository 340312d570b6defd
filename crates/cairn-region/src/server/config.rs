//! How the embedded region server runs: its root, WAL, block cache, region settings and
//! background work, settable by HBase's property names.

use super::*;

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The root directory on the filesystem `region.fs` (local unless the root was an
    /// `hdfs://` URI, see [`ServerConfig::from_uri`]).
    pub root: PathBuf,
    /// `hbase.wal.dir`: where the WAL goes, on `wal_fs`; `None` puts it in `<root>/WALs`
    /// on the root's filesystem (HBase's default).
    pub wal_dir: Option<PathBuf>,
    /// The filesystem of `wal_dir` (local if unset).
    pub wal_fs: Option<Arc<dyn FileSystem>>,
    /// How the WAL writes: roll size, ASYNC_WAL sync interval, segments kept for reuse
    /// (`cairn.wal.recycled_segments`).
    pub wal: WalOptions,
    /// `None`: no block cache (reads go to the files every time).
    pub block_cache: Option<BlockCacheConfig>,
    /// What every region gets: its filesystem, blocking multiplier, compaction policy and throttle.
    pub region: RegionConfig,
    /// Run flushes and compactions on background threads (off: only when asked).
    pub background: bool,
    /// `hbase.regionserver.maxlogs` (32): past this many closed WAL segments, the regions
    /// holding the oldest one are flushed so it can be dropped.
    pub max_wal_segments: usize,
    /// `hbase.regionserver.hlog.blocksize` (256 MiB) and
    /// `hbase.regionserver.logroll.multiplier` (0.5): the WAL rolls at their product
    /// (`wal.roll_size`), which is also how much of it is preallocated and mapped.
    pub wal_block_size: u64,
    /// See [`wal_block_size`](Self::wal_block_size).
    pub wal_roll_multiplier: f64,
    /// When regions split by themselves (`hbase.regionserver.region.split.policy`,
    /// `hbase.hregion.max.filesize`, ...).
    pub split: SplitConfig,
    /// `cairn.bulkload.source.dirs`: directories (comma-separated, absolute) a bulk load may
    /// take files from, besides the staging directory `PrepareBulkLoad` handed out. Empty by
    /// default: clients stage their files, or the operator lists where loads come from.
    pub bulk_load_source_dirs: Vec<PathBuf>,
}

/// The WAL roll size HBase derives from its block size and roll multiplier; `None` for a
/// result under one page.
fn roll_size(block: u64, multiplier: f64) -> Option<u64> {
    let r = block as f64 * multiplier;
    (r.is_finite() && r >= 4096.0).then_some(r as u64)
}

impl ServerConfig {
    /// Applies an HBase property by its HBase name; names cairn does not use are ignored (as
    /// HBase ignores unknown keys), malformed values are errors naming the key.
    pub fn set_property(&mut self, key: &str, value: &str) -> Result<()> {
        let bad = || RegionError::InvalidArgument(format!("{key} = {value:?} is not valid"));
        let v = value.trim();
        match key {
            "cairn.bulkload.source.dirs" => {
                let dirs: Vec<PathBuf> = v
                    .split(',')
                    .map(str::trim)
                    .filter(|d| !d.is_empty())
                    .map(PathBuf::from)
                    .collect();
                if dirs.iter().any(|d| !d.is_absolute()) {
                    return Err(bad());
                }
                self.bulk_load_source_dirs = dirs;
            }
            // HBase 2.6 ignores it too: staging is always `<hbase.rootdir>/staging`.
            "hbase.bulkload.staging.dir" => tracing::warn!(
                "hbase.bulkload.staging.dir is deprecated (as in HBase 2.6): bulk load staging is {}/{}",
                self.root.display(),
                super::STAGING_DIR
            ),
            "hbase.regionserver.maxlogs" => self.max_wal_segments = v.parse().map_err(|_| bad())?,
            "hbase.rootdir" => {
                let (fs, root) = cairn_fs::resolve(v)
                    .map_err(|e| RegionError::InvalidArgument(e.to_string()))?;
                self.region.fs = fs;
                self.root = root;
            }
            "hbase.wal.dir" => {
                let (fs, dir) = cairn_fs::resolve(v)
                    .map_err(|e| RegionError::InvalidArgument(e.to_string()))?;
                self.wal_fs = Some(fs);
                self.wal_dir = Some(dir);
            }
            "cairn.direct_io_for_flush_and_compaction" => {
                self.region.direct_io = v.parse().map_err(|_| bad())?
            }
            // HBase rolls its WAL at hlog.blocksize x logroll.multiplier (256 MiB x 0.5).
            "hbase.regionserver.hlog.blocksize" => {
                let block: u64 = v.parse().map_err(|_| bad())?;
                self.wal.roll_size = roll_size(block, self.wal_roll_multiplier).ok_or_else(bad)?;
                self.wal_block_size = block;
            }
            "hbase.regionserver.logroll.multiplier" => {
                let m: f64 = v.parse().map_err(|_| bad())?;
                self.wal.roll_size = roll_size(self.wal_block_size, m).ok_or_else(bad)?;
                self.wal_roll_multiplier = m;
            }
            "cairn.wal.recycled_segments" => {
                self.wal.recycled_segments = v.parse().map_err(|_| bad())?
            }
            "hbase.hregion.memstore.block.multiplier" => {
                self.region.block_multiplier = v.parse().map_err(|_| bad())?
            }
            "hbase.hstore.compaction.throughput.higher.bound" => {
                let n: u64 = v.parse().map_err(|_| bad())?;
                self.region.throttle.bytes_per_second = (n > 0).then_some(n);
            }
            "hbase.regionserver.thread.compaction.throttle" | "hbase.hstore.blockingWaitTime" => {}
            k if self.split.set(k, v).map_err(RegionError::InvalidArgument)? => {}
            k if k.starts_with("hbase.hstore.compaction.")
                || k == "hbase.hstore.compactionThreshold"
                || k == "hbase.hstore.blockingStoreFiles"
                || k.starts_with("hbase.hregion.majorcompaction") =>
            {
                self.region
                    .compaction
                    .set(k, v)
                    .map_err(RegionError::InvalidArgument)?
            }
            _ => {}
        }
        Ok(())
    }

    /// A server rooted at a local directory.
    pub fn new(root: impl Into<PathBuf>) -> ServerConfig {
        ServerConfig {
            root: root.into(),
            wal_dir: None,
            wal_fs: None,
            wal: WalOptions::default(),
            block_cache: None,
            region: RegionConfig::default(),
            background: true,
            max_wal_segments: 32,
            wal_block_size: 256 << 20,
            wal_roll_multiplier: 0.5,
            split: SplitConfig::default(),
            bulk_load_source_dirs: Vec::new(),
        }
    }
}

impl ServerConfig {
    /// A server rooted at `root`: a local path, `file:///dir` or `hdfs://host:port/dir`.
    pub fn from_uri(root: &str) -> Result<ServerConfig> {
        let mut c = ServerConfig::new(PathBuf::new());
        c.set_property("hbase.rootdir", root)?;
        Ok(c)
    }

    /// The filesystem the root is on.
    pub fn fs(&self) -> &Arc<dyn FileSystem> {
        &self.region.fs
    }

    /// Where the WAL goes: `hbase.wal.dir`, else `<root>/WALs` on the root's filesystem.
    pub fn wal_location(&self) -> (Arc<dyn FileSystem>, PathBuf) {
        match &self.wal_dir {
            Some(d) => (
                self.wal_fs
                    .clone()
                    .unwrap_or_else(|| Arc::new(cairn_fs::LocalFileSystem)),
                d.clone(),
            ),
            None => (self.region.fs.clone(), layout::wal_dir(&self.root)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hbase_property_names_set_the_matching_fields() {
        let mut c = ServerConfig::new("/r");
        let set = |c: &mut ServerConfig, k: &str, v: &str| c.set_property(k, v).unwrap();
        set(&mut c, "hbase.hstore.compactionThreshold", "5");
        assert_eq!(c.region.compaction.min_files, 5);
        set(&mut c, "hbase.hstore.compaction.min", "1");
        assert_eq!(c.region.compaction.min_files, 2, "HBase's floor of 2");
        set(&mut c, "hbase.hstore.blockingStoreFiles", "7");
        assert_eq!(c.region.compaction.blocking_files, 7);
        set(&mut c, "hbase.hregion.majorcompaction", "0");
        assert_eq!(c.region.compaction.major_period_ms, 0);
        set(&mut c, "hbase.hregion.memstore.block.multiplier", "8");
        assert_eq!(c.region.block_multiplier, 8);
        set(
            &mut c,
            "hbase.hstore.compaction.throughput.higher.bound",
            "1048576",
        );
        assert_eq!(c.region.throttle.bytes_per_second, Some(1 << 20));
        set(
            &mut c,
            "hbase.hstore.compaction.throughput.higher.bound",
            "0",
        );
        assert_eq!(c.region.throttle.bytes_per_second, None, "0 = unlimited");
        set(&mut c, "hbase.regionserver.maxlogs", "4");
        assert_eq!(c.max_wal_segments, 4);
        assert_eq!(c.wal.roll_size, 128 << 20, "256 MiB x 0.5");
        set(&mut c, "hbase.regionserver.hlog.blocksize", "67108864");
        assert_eq!(c.wal.roll_size, 32 << 20);
        set(&mut c, "hbase.regionserver.logroll.multiplier", "0.25");
        assert_eq!(c.wal.roll_size, 16 << 20);
        assert!(c
            .set_property("hbase.regionserver.logroll.multiplier", "0")
            .is_err());
        set(&mut c, "some.unknown.key", "whatever");
        let e = c
            .set_property("hbase.regionserver.maxlogs", "many")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("hbase.regionserver.maxlogs") && e.contains("many"),
            "{e}"
        );
    }

    #[test]
    fn the_wal_goes_under_the_root_unless_hbase_wal_dir_says_otherwise() {
        let c = ServerConfig::from_uri("file:///data/cairn").unwrap();
        assert_eq!(c.root, Path::new("/data/cairn"));
        assert_eq!(c.wal_location().1, Path::new("/data/cairn/WALs"));
        let mut c = c;
        c.set_property("hbase.wal.dir", "/fast/wal").unwrap();
        assert_eq!(c.wal_location().1, Path::new("/fast/wal"));
        assert_eq!(c.wal_location().0.uri(), "file://");
        assert!(ServerConfig::from_uri("s3://bucket/x").is_err());
    }
}
