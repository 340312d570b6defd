//! The narrow read interface every region implements, in the spirit of TiKV's
//! `engine_traits` (`Peekable` and `Iterable`): a get, and a scanner over a [`Scan`] whose
//! start and stop are `std::ops::Bound`s (inclusive or exclusive, forward or reversed), each
//! with the read options cairn has ([`ReadOptions`](crate::ReadOptions)).
//!
//! User regions ([`Region`]) and `hbase:meta` ([`MetaRegion`](crate::meta::MetaRegion),
//! virtual in a standalone server, a real region in a cluster) both implement it, and both
//! read through the same [`RegionScanner`]: a read option added to `ReadOptions` and the
//! scanner reaches every protocol and meta at once. A protocol translates a request into a
//! `Get` or `Scan` and the rows back; it never drops or picks rows after the region.

use cairn_cell::KeyValue;

use crate::error::Result;
use crate::layout::RegionInfo;
use crate::mutation::{Get, Scan};
use crate::region::Region;
use crate::scanner::RegionScanner;

/// What every region answers reads with.
pub trait RegionRead: Send + Sync {
    /// The region's identity and key range.
    fn info(&self) -> &RegionInfo;

    /// One row's cells, as the get selects them (columns, versions, time range, filter,
    /// per-family limits); empty when the row has none.
    fn get(&self, get: Get) -> Result<Vec<KeyValue>>;

    /// A scanner over the rows of the scan's range that this region holds, at a read point
    /// fixed now (or the one the scan's options name).
    fn scanner(&self, scan: Scan) -> Result<RegionScanner>;
}

impl RegionRead for Region {
    fn info(&self) -> &RegionInfo {
        &self.info
    }

    fn get(&self, get: Get) -> Result<Vec<KeyValue>> {
        Region::get(self, get)
    }

    fn scanner(&self, scan: Scan) -> Result<RegionScanner> {
        Region::scanner(self, scan)
    }
}
