//! Per-region counters with HBase's metric names (`MetricsRegionSource`).

use std::sync::atomic::{AtomicU64, Ordering};

pub use cairn_blockcache::StripedCounter;

/// One region's counters. The read and write paths bump them with relaxed atomics: they are
/// statistics, read without any ordering against the data. [`counters`](Self::counters) names
/// them as HBase does. The ones bumped by every request are [`StripedCounter`]s: each thread
/// adds to its own cache line, so requests on different cores do not pass one counter's line
/// back and forth.
#[derive(Debug, Default)]
pub struct RegionMetrics {
    /// `readRequestCount`: one per get, per scanner opened and per get of a multi-get (not per row
    /// a scanner returns).
    pub read_request_count: StripedCounter,
    /// `writeRequestCount`: one per atomic apply, i.e. a put, delete or increment, or a whole
    /// mini-batch of puts.
    pub write_request_count: StripedCounter,
    /// `filteredReadRequestCount`: rows a filter rejected, added once per `next_row` call rather
    /// than per row.
    pub filtered_read_request_count: StripedCounter,
    /// `flushesCount`: flushes that wrote at least one store file (an empty memstore does not
    /// count).
    pub flush_count: AtomicU64,
    /// `flushedCellsCount`: cells taken from memstore snapshots by those flushes, before the
    /// flush's matcher dropped excess versions.
    pub flushed_cells_count: AtomicU64,
    /// `flushedCellsSize`: bytes of store files those flushes wrote (file length, after encoding
    /// and compression).
    pub flushed_cells_size: AtomicU64,
    /// `compactionsCompletedCount`: compactions run, minor and major, one per store compacted.
    pub compaction_count: AtomicU64,
    /// `compactedCellsCount`: cells compactions wrote (after dropping versions, deletes, expired).
    pub compacted_cells_count: AtomicU64,
    /// `compactedCellsSize`: bytes of store files compactions wrote.
    pub compacted_cells_size: AtomicU64,
    /// `majorCompactedCellsCount`: the part of `compacted_cells_count` written by major
    /// (all-files) compactions.
    pub major_compacted_cells_count: AtomicU64,
}

impl RegionMetrics {
    /// A snapshot of every counter under its HBase metric name, for metrics endpoints;
    /// [`Region::metric_values`](crate::Region::metric_values) adds the gauges.
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let striped = |c: &StripedCounter| c.get();
        vec![
            ("readRequestCount", striped(&self.read_request_count)),
            ("writeRequestCount", striped(&self.write_request_count)),
            (
                "filteredReadRequestCount",
                striped(&self.filtered_read_request_count),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_counter_is_exported_under_its_hbase_name() {
        let m = RegionMetrics::default();
        // A distinct value per counter, so a name wired to the wrong field shows.
        let sharded = [
            (&m.read_request_count, "readRequestCount"),
            (&m.write_request_count, "writeRequestCount"),
            (&m.filtered_read_request_count, "filteredReadRequestCount"),
        ];
        let plain = [
            (&m.flush_count, "flushesCount"),
            (&m.flushed_cells_count, "flushedCellsCount"),
            (&m.flushed_cells_size, "flushedCellsSize"),
            (&m.compaction_count, "compactionsCompletedCount"),
            (&m.compacted_cells_count, "compactedCellsCount"),
            (&m.compacted_cells_size, "compactedCellsSize"),
            (&m.major_compacted_cells_count, "majorCompactedCellsCount"),
        ];
        for (i, (counter, _)) in sharded.iter().enumerate() {
            counter.add(100 + i as u64);
        }
        for (i, (counter, _)) in plain.iter().enumerate() {
            counter.store(100 + (sharded.len() + i) as u64, Ordering::Relaxed);
        }
        let names = sharded
            .iter()
            .map(|(_, n)| *n)
            .chain(plain.iter().map(|(_, n)| *n));
        let expected: Vec<(&str, u64)> = names
            .enumerate()
            .map(|(i, name)| (name, 100 + i as u64))
            .collect();
        assert_eq!(m.counters(), expected);
    }
}
