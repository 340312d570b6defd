//! Splits and merges as HBase's `Admin` asks for them: `MasterService.SplitRegion` and
//! `MergeTableRegions` mapped onto the region server's own split and merge, and what
//! `AdminService.GetRegionInfo` says about a region's fitness for them (`splittable`,
//! `mergeable`, `best_split_row`).
//!
//! HBase's master runs each as a procedure the client then polls; cairn runs it to completion
//! inside the call and answers with the id of a finished procedure (as for `CreateTable`), so
//! the client's `getProcedureResult` finds it done. A request HBase's procedure would refuse in
//! its constructor is refused the same way, with HBase's exception class: a
//! `DoNotRetryIOException` for a split, a `MergeRegionException` for a merge,
//! `DoNotRetryRegionException` / `UnknownRegionException` for a region that is not open here.

use std::sync::Arc;

use cairn_region::server::{split_point, SplitPolicyKind};
use cairn_region::{Region, RegionError, RegionInfo};
use cairn_rpc::pb;

use super::errors::{self, RpcError};
use super::master::table_name;
use super::Services;

/// `org.apache.hadoop.hbase.client.DoNotRetryRegionException`: the region is not open.
pub const DO_NOT_RETRY_REGION: &str = "org.apache.hadoop.hbase.client.DoNotRetryRegionException";
/// `org.apache.hadoop.hbase.UnknownRegionException`: no region by that name.
pub const UNKNOWN_REGION: &str = "org.apache.hadoop.hbase.UnknownRegionException";
/// `org.apache.hadoop.hbase.exceptions.MergeRegionException`: a merge refused.
pub const MERGE_REGION: &str = "org.apache.hadoop.hbase.exceptions.MergeRegionException";

/// A split's or merge's failure as HBase's master reports it: a region that is not open (or
/// closed meanwhile) must not send the client back to retry, as `NotServingRegionException`
/// would; a refused request keeps the region server's message under `refused`'s class.
fn master_error(e: RegionError, encoded: &str, refused: &'static str) -> RpcError {
    match e {
        RegionError::NotServingRegion(_) | RegionError::Closed => {
            RpcError::new(DO_NOT_RETRY_REGION, format!("{encoded} is not OPEN"), true)
        }
        RegionError::InvalidArgument(m) => RpcError::new(refused, m, true),
        other => other.into(),
    }
}

impl Services {
    /// `SplitRegion`: splits the region the request's `RegionInfo` names at `split_row`, or,
    /// without one, where the region's split policy would (the middle of its largest file).
    pub(super) fn split_region(&self, req: &pb::SplitTableRegionRequest) -> Result<(), RpcError> {
        let ri = &req.region_info;
        let info = RegionInfo::new(
            table_name(&ri.table_name)?,
            ri.start_key.as_deref().unwrap_or_default(),
            ri.end_key.as_deref().unwrap_or_default(),
            ri.region_id,
        );
        if ri.replica_id.unwrap_or(0) != 0 {
            return Err(RpcError::bad_request(
                "Can't invoke split on non-default regions directly",
            ));
        }
        let row = req.split_row.as_deref().filter(|r| !r.is_empty());
        self.rs
            .split_region(info.encoded_name.as_bytes(), row)
            .map_err(|e| master_error(e, &info.encoded_name, errors::DO_NOT_RETRY))?;
        Ok(())
    }

    /// `MergeTableRegions`: merges two adjacent regions named by encoded name (the client's
    /// form; full names work too).
    pub(super) fn merge_regions(&self, req: &pb::MergeTableRegionsRequest) -> Result<(), RpcError> {
        let names: Vec<&[u8]> = req.region.iter().map(|r| r.value.as_slice()).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        let refuse = |m: String| RpcError::new(MERGE_REGION, m, true);
        if unique.len() != names.len() {
            return Err(refuse(format!(
                "Duplicate regions specified; cannot merge a region to itself. Passed in {} but only {} unique.",
                names.len(),
                unique.len()
            )));
        }
        if names.len() < 2 {
            return Err(refuse("Need two Regions at least to run a Merge".into()));
        }
        let mut regions: Vec<Arc<Region>> = Vec::with_capacity(names.len());
        for n in &names {
            let shown = cairn_cell::Escaped(n).to_string();
            match self.rs.region_by_name(n) {
                Ok((_, r)) => regions.push(r),
                Err(RegionError::NotServingRegion(_)) | Err(RegionError::Closed) => {
                    return Err(RpcError::new(UNKNOWN_REGION, shown, true))
                }
                Err(e) => return Err(e.into()),
            }
        }
        if regions.len() > 2 {
            // The merged region refers to its parents' files until it compacts, and such a
            // region cannot merge again: a merge of more than two cannot be done in steps.
            return Err(refuse(format!(
                "cairn merges two regions at a time; {} were given",
                regions.len()
            )));
        }
        let (a, b) = (&regions[0].info, &regions[1].info);
        let adjacent = a.end_key == b.start_key && !a.end_key.is_empty()
            || b.end_key == a.start_key && !b.end_key.is_empty();
        if req.forcible.unwrap_or(false) && !adjacent && a.table == b.table {
            return Err(refuse(format!(
                "Unable to merge non-adjacent regions '{}', '{}': cairn merges adjacent regions only, force=true or not",
                a.encoded_name, b.encoded_name
            )));
        }
        self.rs
            .merge_regions(a.encoded_name.as_bytes(), b.encoded_name.as_bytes())
            .map_err(|e| master_error(e, &a.encoded_name, MERGE_REGION))?;
        Ok(())
    }

    /// `SetSplitOrMergeEnabled`: cairn has no cluster-wide switch (its automatic splits
    /// follow each table's settings only), so both stay on: turning one on is answered as the
    /// no-op it is, turning one off is refused rather than pretended.
    pub(super) fn split_or_merge_switch(
        &self,
        req: &pb::SetSplitOrMergeEnabledRequest,
    ) -> Result<pb::SetSplitOrMergeEnabledResponse, RpcError> {
        if !req.enabled {
            return Err(RpcError::bad_request(
                "cairn has no cluster-wide split or merge switch: splits and merges stay on; \
                 turn them off per table (SPLIT_ENABLED, MERGE_ENABLED, or SPLIT_POLICY \
                 DisabledRegionSplitPolicy)",
            ));
        }
        Ok(pb::SetSplitOrMergeEnabledResponse {
            prev_value: vec![true; req.switch_types.len()],
        })
    }

    /// `GetRegionInfo`'s split and merge answers for `region`: whether it may split
    /// (HBase's `splitPolicy.canSplit()`: open, splits allowed, no reference files), whether
    /// it may merge (open, no reference files), and — when asked — where it would split,
    /// flushing first if all its data is still in memory (as HBase does).
    pub(super) fn split_fitness(
        &self,
        region: &Region,
        best_split_row: bool,
    ) -> Result<(bool, bool, Option<Vec<u8>>), RpcError> {
        let open = !region.is_closed();
        let refs = region.stores().any(|s| s.has_references());
        let policy_allows = match self.rs.table(&region.info.table) {
            Ok(t) => {
                t.descriptor.split_enabled()
                    && self.rs.split_config().policy_for(&t.descriptor)?
                        != SplitPolicyKind::Disabled
            }
            Err(_) => false,
        };
        let splittable = open && !refs && policy_allows;
        let mergeable = open && !refs;
        let row = if best_split_row && open {
            match split_point(region)? {
                Some(r) => Some(r),
                None => {
                    region.flush()?;
                    split_point(region)?
                }
            }
        } else {
            None
        };
        Ok((splittable, mergeable, row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_that_is_not_open_is_a_do_not_retry_region_exception() {
        for e in [
            RegionError::NotServingRegion("t,,1.abc.".into()),
            RegionError::Closed,
        ] {
            let r = master_error(e, "abc", errors::DO_NOT_RETRY);
            assert_eq!(r.class, DO_NOT_RETRY_REGION);
            assert_eq!(r.message, "abc is not OPEN");
            assert!(
                r.do_not_retry,
                "the client must not retry a master call forever"
            );
        }
        let r = master_error(
            RegionError::InvalidArgument("Split row is equal to startkey: a".into()),
            "abc",
            errors::DO_NOT_RETRY,
        );
        assert_eq!(
            (r.class, r.message.as_str()),
            (errors::DO_NOT_RETRY, "Split row is equal to startkey: a")
        );
        let r = master_error(
            RegionError::InvalidArgument("x".into()),
            "abc",
            MERGE_REGION,
        );
        assert_eq!(r.class, MERGE_REGION);
    }
}
