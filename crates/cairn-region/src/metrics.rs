//! Per-region counters with HBase's metric names (`MetricsRegionSource`).

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct RegionMetrics {
    pub read_request_count: AtomicU64,
    pub write_request_count: AtomicU64,
    pub filtered_read_request_count: AtomicU64,
    pub flush_count: AtomicU64,
    pub flushed_cells_count: AtomicU64,
    pub flushed_cells_size: AtomicU64,
    pub compaction_count: AtomicU64,
    pub compacted_cells_count: AtomicU64,
    pub compacted_cells_size: AtomicU64,
    pub major_compacted_cells_count: AtomicU64,
}

impl RegionMetrics {
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        vec![
            ("readRequestCount", g(&self.read_request_count)),
            ("writeRequestCount", g(&self.write_request_count)),
            (
                "filteredReadRequestCount",
                g(&self.filtered_read_request_count),
            ),
            ("flushesCount", g(&self.flush_count)),
            ("flushedCellsCount", g(&self.flushed_cells_count)),
            ("flushedCellsSize", g(&self.flushed_cells_size)),
            ("compactionsCompletedCount", g(&self.compaction_count)),
            ("compactedCellsCount", g(&self.compacted_cells_count)),
            ("compactedCellsSize", g(&self.compacted_cells_size)),
            (
                "majorCompactedCellsCount",
                g(&self.major_compacted_cells_count),
            ),
        ]
    }
}
