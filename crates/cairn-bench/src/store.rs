//! The embedded store a benchmark runs against (a directory of the user's or a temporary one)
//! and waiting out a busy region, as HBase's client retries do.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use cairn_blockcache::BlockCacheConfig;
use cairn_region::{RegionError, RegionServer, ServerConfig};

/// How long a write waits out `RegionTooBusy` (the memstore over its blocking limit while a
/// flush runs) before giving up, as HBase's client retries do.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `f` again while the region is too busy for writes, counting the waits in `waits`.
pub fn busy_retry<T>(
    waits: &mut u64,
    mut f: impl FnMut() -> cairn_region::Result<T>,
) -> cairn_region::Result<T> {
    let started = Instant::now();
    let mut pause = Duration::from_micros(200);
    loop {
        match f() {
            Err(RegionError::RegionTooBusy { .. }) if started.elapsed() < BUSY_TIMEOUT => {
                *waits += 1;
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// The embedded store a benchmark runs against.
pub struct Store {
    /// The open region server.
    pub server: Arc<RegionServer>,
    /// Its root directory (or URI).
    pub root: PathBuf,
    /// "kept", "temporary, kept (--keep)" or "temporary, deleted at exit".
    pub data_note: String,
    temp: Option<tempfile::TempDir>,
    keep: bool,
    tool: &'static str,
}

impl Store {
    /// Opens the store in `data`, or in a fresh temporary directory (deleted when the store is
    /// finished unless `keep`). `tool` prefixes messages (`pe`, `ycsb`).
    /// `properties` are HBase property names and values applied to the server's configuration
    /// (WAL, memstore and compaction settings) before it opens.
    pub fn open(
        tool: &'static str,
        data: Option<&Path>,
        keep: bool,
        cache: BlockCacheConfig,
        properties: &[(String, String)],
    ) -> Result<Store> {
        let mut temp = None;
        let root = match data {
            Some(d) => d.to_path_buf(),
            None => {
                let t = tempfile::Builder::new()
                    .prefix(&format!("cairn-{tool}-"))
                    .tempdir()
                    .context("creating a temporary directory")?;
                let path = t.path().to_path_buf();
                temp = Some(t);
                path
            }
        };
        let data_note = match (data, keep) {
            (Some(_), _) => "kept".to_string(),
            (None, true) => "temporary, kept (--keep)".to_string(),
            (None, false) => "temporary, deleted at exit".to_string(),
        };
        // --data may be a local path, file:///dir or hdfs://host:port/dir (feature `hdfs`).
        let mut config = ServerConfig::from_uri(&root.to_string_lossy())
            .with_context(|| format!("--data {}", root.display()))?;
        for (k, v) in properties {
            config
                .set_property(k, v)
                .with_context(|| format!("-D {k}={v}"))?;
        }
        config.block_cache = Some(cache);
        let server = RegionServer::open(config)
            .with_context(|| format!("opening the store at {}", root.display()))?;
        if server.recovery.cells_replayed > 0 {
            eprintln!(
                "cairn {tool}: recovered {} cells from the WAL of an earlier run",
                server.recovery.cells_replayed
            );
        }
        Ok(Store {
            server,
            root,
            data_note,
            temp,
            keep,
            tool,
        })
    }

    /// Closes the store (memstores flushed) after the work whose result is `outcome`: the
    /// work's error comes first, then a failure to close. A kept temporary directory is named
    /// on stderr. `quiet` leaves out the timing line.
    pub fn finish<T>(self, outcome: Result<T>, quiet: bool) -> Result<T> {
        let Store {
            server,
            temp,
            keep,
            tool,
            ..
        } = self;
        let closed = Instant::now();
        let close = server.close();
        if !quiet {
            eprintln!(
                "cairn {tool}: closed the store (memstores flushed) in {:.3} s",
                closed.elapsed().as_secs_f64()
            );
        }
        drop(server);
        let value = outcome?;
        close.context("closing the store")?;
        if let Some(t) = temp {
            if keep {
                let path = t.keep();
                eprintln!("cairn {tool}: data kept in {}", path.display());
            }
        }
        Ok(value)
    }
}
