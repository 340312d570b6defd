//! How the embedded region server runs: its root, WAL, block cache, region settings and
//! background work, settable by HBase's property names.

use super::*;
use crate::accounting::GlobalMemStoreLimits;

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The root directory on the filesystem `region.fs` (local unless the root was an
    /// `hdfs://` URI, see [`ServerConfig::from_uri`]).
    pub root: PathBuf,
    /// `hbase.wal.dir`: the WAL root, on `wal_fs`: the WAL goes in
    /// `<wal root>/WALs/<server name>/` and is archived to `<wal root>/oldWALs/`. `None`: the
    /// root itself, on the root's filesystem (HBase's default).
    pub wal_dir: Option<PathBuf>,
    /// The filesystem of `wal_dir` (local if unset).
    pub wal_fs: Option<Arc<dyn FileSystem>>,
    /// How the WAL writes: roll size, roll period (`hbase.regionserver.logroll.period`),
    /// ASYNC_WAL sync interval, files kept for reuse (`cairn.wal.recycled_segments`), how long
    /// archived files stay (`hbase.master.logcleaner.ttl`).
    pub wal: WalOptions,
    /// The server's name, HBase's `host,port,startcode` (`cairn.wal.server.name`): its WAL is
    /// `<wal root>/WALs/<server name>/`, and every other server directory there is replayed
    /// at open as a dead server's. The default, [`DEFAULT_SERVER_NAME`], is the same at every
    /// start, so an embedded store finds its own WAL again.
    pub server_name: ServerName,
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
    /// The server-wide memstore bound (`hbase.regionserver.global.memstore.size`, ...).
    pub global_memstore: GlobalMemStoreConfig,
    /// `cairn.wal.discard.missing.regions` (false): replay drops the WAL edits of regions it
    /// cannot find (HBase's splitter does) instead of keeping their segments.
    pub discard_missing_region_edits: bool,
    /// Which regions the server holds: every table under the root (the standalone
    /// default), or only those a master assigns ([`Hosting::Assigned`]).
    pub hosting: Hosting,
}

/// Which regions a server holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Hosting {
    /// Every table and region under the root, opened at start; the server also replays dead
    /// servers' WALs and splits regions by itself (`cairn serve`).
    #[default]
    All,
    /// Only the regions an HBase master assigns, opened and closed when it says
    /// ([`RegionServer::open_assigned`](super::RegionServer::open_assigned)); the root
    /// belongs to the cluster: nothing else there is read or written at start, dead servers'
    /// WALs are the master's to split, and regions split only when the master drives it
    /// (`cairn regionserver`).
    Assigned,
}

/// HBase's default `hbase.regionserver.global.memstore.size`: 0.4 (of the heap in HBase, of
/// the machine's memory in cairn).
pub const DEFAULT_GLOBAL_MEMSTORE_SIZE: f64 = 0.4;
/// HBase's default `hbase.regionserver.global.memstore.size.lower.limit`: the lower mark is
/// 95% of the upper.
pub const DEFAULT_GLOBAL_MEMSTORE_LOWER_LIMIT: f64 = 0.95;
/// Default `cairn.regionserver.global.memstore.block.wait`: 10 s, well inside HBase's client
/// RPC timeout (60 s), so the client sees the retryable `RegionTooBusyException` rather than
/// a timeout.
pub const DEFAULT_GLOBAL_MEMSTORE_BLOCK_WAIT: Duration = Duration::from_secs(10);

/// The server-wide memstore bound as configured, resolved against the machine's memory when
/// the server opens ([`limits`](Self::limits)). Values are kept as given: HBase's current
/// names win over its deprecated ones whatever order they were set in.
#[derive(Clone, Debug)]
pub struct GlobalMemStoreConfig {
    /// `hbase.regionserver.global.memstore.size`: a fraction of memory in (0, 0.8], or
    /// bytes when above 1.
    pub size: Option<f64>,
    /// `hbase.regionserver.global.memstore.upperLimit`, HBase's deprecated name of `size`.
    pub upper_limit: Option<f64>,
    /// `hbase.regionserver.global.memstore.size.lower.limit`: the lower mark as a fraction
    /// of the upper.
    pub lower_limit: Option<f64>,
    /// `hbase.regionserver.global.memstore.lowerLimit`, deprecated: the lower mark as a
    /// fraction of memory.
    pub old_lower_limit: Option<f64>,
    /// `cairn.regionserver.global.memstore.block.wait` (ms): how long a write waits at the
    /// upper mark before `RegionTooBusy`.
    pub blocking_wait: Duration,
}

impl Default for GlobalMemStoreConfig {
    fn default() -> Self {
        GlobalMemStoreConfig {
            size: None,
            upper_limit: None,
            lower_limit: None,
            old_lower_limit: None,
            blocking_wait: DEFAULT_GLOBAL_MEMSTORE_BLOCK_WAIT,
        }
    }
}

impl GlobalMemStoreConfig {
    /// The marks in bytes on a machine with `memory` bytes, as HBase's `MemorySizeUtil`
    /// reads them: a fraction outside (0, 0.8] falls back to 0.4 with a warning, a lower
    /// limit above 1 is taken as 1; cairn also takes a size above 1 as bytes.
    pub fn limits(&self, memory: u64) -> GlobalMemStoreLimits {
        const KEY: &str = "hbase.regionserver.global.memstore.size";
        let of_memory = |f: f64| (f * memory as f64) as u64;
        let given = self.size.or(self.upper_limit);
        let (upper, upper_fraction) = match given {
            Some(v) if v > 1.0 => (v as u64, None),
            Some(v) if v > 0.0 && v <= 0.8 => (of_memory(v), Some(v)),
            other => {
                if let Some(v) = other {
                    tracing::warn!(
                        "{KEY} = {v} is outside (0, 0.8] (a fraction of memory) and not a size \
                         in bytes above 1; using HBase's default of {DEFAULT_GLOBAL_MEMSTORE_SIZE}"
                    );
                }
                let f = DEFAULT_GLOBAL_MEMSTORE_SIZE;
                (of_memory(f), Some(f))
            }
        };
        let lower_fraction = match (self.lower_limit, self.old_lower_limit) {
            (Some(f), _) if f > 1.0 => {
                tracing::error!(
                    "hbase.regionserver.global.memstore.size.lower.limit = {f} is above 1.0; \
                     using 1.0"
                );
                1.0
            }
            (Some(f), _) => f,
            // The deprecated name is a fraction of memory: as HBase, it becomes a fraction of
            // the upper mark, and no more than all of it.
            (None, Some(old)) => match upper_fraction {
                Some(up) => old.min(up) / up,
                None => (of_memory(old).min(upper) as f64 / upper.max(1) as f64).min(1.0),
            },
            (None, None) => DEFAULT_GLOBAL_MEMSTORE_LOWER_LIMIT,
        };
        GlobalMemStoreLimits {
            upper,
            lower: (upper as f64 * lower_fraction) as u64,
            blocking_wait: self.blocking_wait,
        }
    }
}

/// The server name a [`ServerConfig`] has unless told otherwise: fixed, so that an embedded
/// store writes to the same WAL directory at every start.
pub const DEFAULT_SERVER_NAME: &str = "localhost,16020,0";

/// A finite number, or `None`.
fn finite(v: &str) -> Option<f64> {
    v.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// The WAL roll size HBase derives from its block size and roll multiplier; `None` for a
/// result under one page.
fn roll_size(block: u64, multiplier: f64) -> Option<u64> {
    let r = block as f64 * multiplier;
    (r.is_finite() && r >= 4096.0).then_some(r as u64)
}

/// Every property [`ServerConfig::set_property`] reads (the region server's: WAL, memstore,
/// flushes, compactions, splits, bulk loads).
pub const SERVER_PROPERTIES: &[&str] = &[
    "cairn.bulkload.source.dirs",
    "hbase.bulkload.staging.dir",
    "hbase.regionserver.maxlogs",
    "hbase.rootdir",
    "cairn.wal.server.name",
    "hbase.regionserver.logroll.period",
    "hbase.master.logcleaner.ttl",
    "hbase.wal.dir",
    "cairn.direct_io_for_flush_and_compaction",
    "hbase.regionserver.hlog.blocksize",
    "hbase.regionserver.logroll.multiplier",
    "cairn.wal.discard.missing.regions",
    "cairn.wal.recycled_segments",
    "hbase.hregion.memstore.block.multiplier",
    "hbase.hregion.memstore.flush.size",
    "hbase.hstore.compaction.throughput.higher.bound",
    "hbase.regionserver.thread.compaction.throttle",
    "hbase.hstore.blockingWaitTime",
    "hbase.regionserver.global.memstore.size",
    "hbase.regionserver.global.memstore.upperLimit",
    "hbase.regionserver.global.memstore.size.lower.limit",
    "hbase.regionserver.global.memstore.lowerLimit",
    "cairn.regionserver.global.memstore.block.wait",
    "hbase.regionserver.region.split.policy",
    "hbase.hregion.max.filesize",
    "hbase.hregion.max.filesize.jitter",
    "hbase.increasing.policy.initial.size",
    "hbase.hregion.split.overallfiles",
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

impl ServerConfig {
    /// Whether [`ServerConfig::set_property`] reads `name`.
    pub fn reads_property(name: &str) -> bool {
        SERVER_PROPERTIES.contains(&name)
    }

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
            "cairn.wal.server.name" => {
                self.server_name = ServerName::parse(v)
                    .map_err(|e| RegionError::InvalidArgument(format!("{key}: {e}")))?
            }
            "hbase.regionserver.logroll.period" => {
                let ms: u64 = v.parse().map_err(|_| bad())?;
                self.wal.roll_period = Duration::from_millis(ms.max(1));
            }
            "hbase.master.logcleaner.ttl" => {
                let ms: u64 = v.parse().map_err(|_| bad())?;
                self.wal.archive_ttl = Duration::from_millis(ms);
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
            "cairn.wal.discard.missing.regions" => {
                self.discard_missing_region_edits = v.parse().map_err(|_| bad())?
            }
            "cairn.wal.recycled_segments" => {
                self.wal.recycled_segments = v.parse().map_err(|_| bad())?
            }
            "hbase.hregion.memstore.block.multiplier" => {
                self.region.block_multiplier = v.parse().map_err(|_| bad())?
            }
            // The flush size of every table without its own MEMSTORE_FLUSHSIZE, as HBase's
            // HRegion reads it.
            "hbase.hregion.memstore.flush.size" => {
                self.region.flush_size = v.parse().ok().filter(|n| *n > 0).ok_or_else(bad)?
            }
            "hbase.hstore.compaction.throughput.higher.bound" => {
                let n: u64 = v.parse().map_err(|_| bad())?;
                self.region.throttle.bytes_per_second = (n > 0).then_some(n);
            }
            "hbase.regionserver.thread.compaction.throttle" | "hbase.hstore.blockingWaitTime" => {}
            "hbase.regionserver.global.memstore.size" => {
                self.global_memstore.size = Some(finite(v).ok_or_else(bad)?)
            }
            "hbase.regionserver.global.memstore.upperLimit" => {
                self.global_memstore.upper_limit = Some(finite(v).ok_or_else(bad)?)
            }
            "hbase.regionserver.global.memstore.size.lower.limit" => {
                let f = finite(v).filter(|f| *f >= 0.0).ok_or_else(bad)?;
                self.global_memstore.lower_limit = Some(f)
            }
            "hbase.regionserver.global.memstore.lowerLimit" => {
                let f = finite(v).filter(|f| *f >= 0.0).ok_or_else(bad)?;
                self.global_memstore.old_lower_limit = Some(f)
            }
            "cairn.regionserver.global.memstore.block.wait" => {
                let ms: u64 = v.parse().map_err(|_| bad())?;
                self.global_memstore.blocking_wait = Duration::from_millis(ms)
            }
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
            server_name: ServerName::parse(DEFAULT_SERVER_NAME).expect("a valid server name"),
            block_cache: None,
            region: RegionConfig::default(),
            background: true,
            max_wal_segments: 32,
            wal_block_size: 256 << 20,
            wal_roll_multiplier: 0.5,
            split: SplitConfig::default(),
            bulk_load_source_dirs: Vec::new(),
            global_memstore: GlobalMemStoreConfig::default(),
            discard_missing_region_edits: false,
            hosting: Hosting::All,
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

    /// Where the WAL goes: under the WAL root `hbase.wal.dir`, else the root, on its
    /// filesystem, in the directory of [`server_name`](Self::server_name).
    pub fn wal_location(&self) -> (Arc<dyn FileSystem>, WalLocation) {
        let (fs, root) = match &self.wal_dir {
            Some(d) => (
                self.wal_fs
                    .clone()
                    .unwrap_or_else(|| Arc::new(cairn_fs::LocalFileSystem)),
                d.clone(),
            ),
            None => (self.region.fs.clone(), self.root.clone()),
        };
        (fs, WalLocation::new(root, self.server_name.clone()))
    }
}

#[cfg(test)]
mod tests {
    /// The list follows what `set_property` reads: a listed name refuses a malformed value
    /// (the names taking any value, and those accepted and ignored, excepted).
    #[test]
    fn every_listed_property_is_read() {
        let free_form = [
            "hbase.bulkload.staging.dir",
            "hbase.regionserver.thread.compaction.throttle",
            "hbase.hstore.blockingWaitTime",
            "hbase.wal.dir",
            "hbase.rootdir",
        ];
        for name in SERVER_PROPERTIES.iter().filter(|n| !free_form.contains(n)) {
            let mut c = ServerConfig::new("");
            assert!(c.set_property(name, "not-a-value").is_err(), "{name}");
        }
        let mut c = ServerConfig::new("/x");
        c.set_property("hbase.rootdir", "/y").unwrap();
        assert_eq!(c.root, PathBuf::from("/y"));
        c.set_property("hbase.wal.dir", "/w").unwrap();
        assert_eq!(c.wal_dir, Some(PathBuf::from("/w")));
        assert!(!ServerConfig::reads_property(
            "hbase.hregion.memstore.flush.sizes"
        ));
    }

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
        set(&mut c, "hbase.hregion.memstore.flush.size", "2097152");
        assert_eq!(c.region.flush_size, 2 << 20);
        assert!(c
            .set_property("hbase.hregion.memstore.flush.size", "0")
            .is_err());
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
    fn the_global_memstore_bound_reads_hbases_names_and_falls_back_as_hbase_does() {
        const GIB: u64 = 1 << 30;
        let limits = |props: &[(&str, &str)]| {
            let mut c = ServerConfig::new("/r");
            for (k, v) in props {
                c.set_property(k, v).unwrap();
            }
            let l = c.global_memstore.limits(10 * GIB);
            (l.upper, l.lower)
        };
        let gib = |f: f64| (f * GIB as f64) as u64;
        // HBase's defaults: 0.4 of memory, lower mark at 95% of it.
        assert_eq!(limits(&[]), (4 * GIB, (4.0 * 0.95 * GIB as f64) as u64));
        assert_eq!(
            limits(&[
                ("hbase.regionserver.global.memstore.size", "0.25"),
                ("hbase.regionserver.global.memstore.size.lower.limit", "0.5"),
            ]),
            (gib(2.5), gib(1.25))
        );
        // Above 1: bytes (cairn); out of HBase's (0, 0.8]: the default.
        assert_eq!(
            limits(&[("hbase.regionserver.global.memstore.size", "1048576")]).0,
            1 << 20
        );
        for bad in ["0.9", "1", "0", "-0.5"] {
            let got = limits(&[("hbase.regionserver.global.memstore.size", bad)]).0;
            assert_eq!(got, 4 * GIB, "{bad}");
        }
        // The deprecated names: upperLimit unless the new name is set; lowerLimit as a
        // fraction of memory, turned into a fraction of the upper mark.
        assert_eq!(
            limits(&[
                ("hbase.regionserver.global.memstore.size", "0.2"),
                ("hbase.regionserver.global.memstore.upperLimit", "0.5"),
            ])
            .0,
            2 * GIB
        );
        assert_eq!(
            limits(&[
                ("hbase.regionserver.global.memstore.upperLimit", "0.5"),
                ("hbase.regionserver.global.memstore.lowerLimit", "0.3"),
            ]),
            (5 * GIB, 3 * GIB)
        );
        // A lower limit above 1 is 1, as in HBase.
        let (up, low) = limits(&[("hbase.regionserver.global.memstore.size.lower.limit", "3")]);
        assert_eq!(up, low);
        let mut c = ServerConfig::new("/r");
        for (k, v) in [
            ("hbase.regionserver.global.memstore.size", "lots"),
            ("hbase.regionserver.global.memstore.size.lower.limit", "-1"),
            ("cairn.regionserver.global.memstore.block.wait", "1.5"),
        ] {
            let e = c.set_property(k, v).unwrap_err().to_string();
            assert!(e.contains(k), "{e}");
        }
        c.set_property("cairn.regionserver.global.memstore.block.wait", "250")
            .unwrap();
        assert_eq!(
            c.global_memstore.limits(GIB).blocking_wait,
            Duration::from_millis(250)
        );
    }

    #[test]
    fn the_wal_goes_under_the_root_unless_hbase_wal_dir_says_otherwise() {
        let c = ServerConfig::from_uri("file:///data/cairn").unwrap();
        assert_eq!(c.root, Path::new("/data/cairn"));
        assert_eq!(
            c.wal_location().1.dir(),
            Path::new("/data/cairn/WALs/localhost,16020,0")
        );
        let mut c = c;
        c.set_property("hbase.wal.dir", "/fast/wal").unwrap();
        c.set_property(
            "cairn.wal.server.name",
            "rs1.example.com,16020,1700000000000",
        )
        .unwrap();
        let (fs, loc) = c.wal_location();
        assert_eq!(
            loc.dir(),
            Path::new("/fast/wal/WALs/rs1.example.com,16020,1700000000000")
        );
        assert_eq!(loc.archive_dir(), Path::new("/fast/wal/oldWALs"));
        assert_eq!(fs.uri(), "file://");
        assert!(ServerConfig::from_uri("s3://bucket/x").is_err());
        for bad in ["localhost", "../up,1,1", "h,1,-1"] {
            let e = c.set_property("cairn.wal.server.name", bad).unwrap_err();
            assert!(e.to_string().contains("cairn.wal.server.name"), "{e}");
        }
        c.set_property("hbase.regionserver.logroll.period", "60000")
            .unwrap();
        c.set_property("hbase.master.logcleaner.ttl", "0").unwrap();
        assert_eq!(
            (c.wal.roll_period, c.wal.archive_ttl),
            (Duration::from_secs(60), Duration::ZERO)
        );
    }
}
