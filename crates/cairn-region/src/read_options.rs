//! What a read asks for beyond its rows and columns: one value shared by Get, multi-get and
//! Scan, handed by value from the request to the region, its stores and down to the block
//! reader (as RocksDB's `ReadOptions` travel to its block-based table reader). No request
//! state travels any other way: nothing is kept in thread-locals or globals.

use cairn_filter::Filter;
use cairn_hfile::BlockReadOptions;

use crate::matcher::TimeRange;

/// A read's options (HBase's `Query` fields shared by `Get` and `Scan`, plus the read point).
#[derive(Debug)]
pub struct ReadOptions {
    /// HBase's `cacheBlocks` (RocksDB's `fill_cache`): whether data blocks read from store
    /// files are added to the block cache. Blocks already cached are used either way; index
    /// and Bloom blocks are always cached.
    pub cache_blocks: bool,
    /// The MVCC read point to read at (HBase's `Scan.mvccReadPoint`): `None` reads everything
    /// committed when the read starts. A point past the region's current one is clamped to
    /// it, so no read ever sees an uncommitted edit.
    pub read_point: Option<u64>,
    /// Only cells with timestamps in this range.
    pub time_range: TimeRange,
    /// Versions per column (HBase's `readVersions`).
    pub max_versions: u32,
    /// HBase's filter, applied cell by cell and row by row.
    pub filter: Option<Box<dyn Filter>>,
    /// At most this many rows (0 = no limit).
    pub limit: usize,
    /// At most this many cells per result; a wider row comes back in parts (0 = no limit).
    pub batch: usize,
    /// Return delete markers and the cells they mask too (HBase's `Scan.setRaw`).
    pub raw: bool,
    /// At most this many cells per family and row (HBase's `storeLimit`,
    /// `setMaxResultsPerColumnFamily`; `None` = no limit), counted after
    /// [`store_offset`](Self::store_offset) cells are skipped.
    pub store_limit: Option<u32>,
    /// Cells of each family and row left out before any is returned (HBase's `storeOffset`,
    /// `setRowOffsetPerColumnFamily`).
    pub store_offset: u32,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            cache_blocks: true,
            read_point: None,
            time_range: TimeRange::default(),
            max_versions: 1,
            filter: None,
            limit: 0,
            batch: 0,
            raw: false,
            store_limit: None,
            store_offset: 0,
        }
    }
}

impl ReadOptions {
    /// What the block reader needs of these options.
    pub fn block_options(&self) -> BlockReadOptions {
        BlockReadOptions {
            fill_cache: self.cache_blocks,
        }
    }

    /// The read point to read at, given the region's current one.
    pub fn read_point_within(&self, current: u64) -> u64 {
        self.read_point.map_or(current, |p| p.min(current))
    }

    /// The same options with no filter (a filter has state, and moves on its own from one
    /// region's scanner to the next).
    pub(crate) fn clone_without_filter(&self) -> ReadOptions {
        ReadOptions {
            filter: None,
            ..*self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_options_carry_cache_blocks() {
        let mut o = ReadOptions::default();
        assert!(o.block_options().fill_cache);
        o.cache_blocks = false;
        assert!(!o.block_options().fill_cache);
    }

    #[test]
    fn a_read_point_is_never_past_the_regions() {
        let mut o = ReadOptions::default();
        assert_eq!(o.read_point_within(7), 7);
        o.read_point = Some(5);
        assert_eq!(o.read_point_within(7), 5);
        o.read_point = Some(9);
        assert_eq!(o.read_point_within(7), 7);
    }

    #[test]
    fn clone_without_filter_keeps_everything_else() {
        let o = ReadOptions {
            cache_blocks: false,
            read_point: Some(3),
            time_range: TimeRange::new(1, 5),
            max_versions: 4,
            filter: Some(Box::new(cairn_filter::PrefixFilter::new(b"p".to_vec()))),
            limit: 6,
            batch: 2,
            raw: true,
            store_limit: Some(7),
            store_offset: 8,
        };
        let c = o.clone_without_filter();
        assert!(c.filter.is_none());
        assert_eq!(
            (
                c.cache_blocks,
                c.read_point,
                c.time_range,
                c.max_versions,
                c.limit,
                c.batch,
                c.raw
            ),
            (false, Some(3), TimeRange::new(1, 5), 4, 6, 2, true)
        );
        assert_eq!((c.store_limit, c.store_offset), (Some(7), 8));
    }
}
