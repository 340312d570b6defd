//! Optional, process-wide accounting of the time spent computing chunked checksums, so tools
//! (`cairn compact`, benchmarks) can report the checksum share of their CPU time by
//! measurement rather than by estimate. Off by default; then a call pays one relaxed load.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

static ENABLED: AtomicBool = AtomicBool::new(false);
static NANOS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

/// Turns accounting on or off for the whole process.
pub fn enable(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Bytes checksummed and time spent since accounting was enabled (all threads).
pub fn totals() -> (u64, Duration) {
    (
        BYTES.load(Ordering::Relaxed),
        Duration::from_nanos(NANOS.load(Ordering::Relaxed)),
    )
}

#[inline]
pub(crate) fn timed<R>(bytes: usize, f: impl FnOnce() -> R) -> R {
    if !ENABLED.load(Ordering::Relaxed) {
        return f();
    }
    let start = Instant::now();
    let r = f();
    NANOS.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChecksumType, DataChecksum};

    #[test]
    fn counts_bytes_only_when_enabled() {
        let dc = DataChecksum::new(ChecksumType::Crc32C, 512).unwrap();
        let data = vec![7u8; 4096];
        let (b0, _) = totals();
        dc.compute_chunked_to_vec(&data);
        enable(true);
        dc.compute_chunked_to_vec(&data);
        enable(false);
        let (b1, _) = totals();
        // Other tests in this process may checksum while enabled; at least ours counted.
        assert!(b1 - b0 >= 4096);
    }
}
