//! What the benchmark commands (`cairn pe`, `cairn ycsb`) share: the embedded store they run
//! against (a directory of the user's or a temporary one), the process's CPU time, seeds, size
//! options and waiting out a busy region.

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

/// User and system CPU time of this process.
pub fn cpu_times() -> (Duration, Duration) {
    // SAFETY: `usage` is a valid, writable rusage for the duration of the call.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc != 0 {
        return (Duration::ZERO, Duration::ZERO);
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(usage.ru_utime), tv(usage.ru_stime))
}

/// Bytes in binary units for reports (`1.5 MiB`).
pub fn human(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A seed that differs between runs and processes.
pub fn seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ ((std::process::id() as u64) << 32)
}

/// A size option (`1GiB`, `512MiB`, bytes); `what` names the option in the error.
pub fn parse_size(what: &str, s: &str) -> Result<u64> {
    parse_size::parse_size(s).with_context(|| format!("{what}={s}: not a size (e.g. 1GiB, 512MiB)"))
}

/// The embedded store a benchmark runs against.
pub struct Store {
    pub server: Arc<RegionServer>,
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
    pub fn open(
        tool: &'static str,
        data: Option<&Path>,
        keep: bool,
        cache: BlockCacheConfig,
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
