//! `ClientService` bulk load: `PrepareBulkLoad`, `BulkLoadHFile` and `CleanupBulkLoad`, a
//! thin translation over the region store's bulk load (HBase's `RSRpcServices` and
//! `SecureBulkLoadManager`).

use std::path::PathBuf;

use cairn_region::server::fs_path;
use cairn_region::RegionError;
use cairn_rpc::pb;

use super::errors::RpcError;
use super::master::table_name;
use super::meta;
use super::Services;

/// A bulk-load failure as HBase reports it: the region store's refusals of the request
/// itself (`No such column family <f>`, a file with no cells) as `DoNotRetryIOException`
/// with HBase's message, everything else as the usual mapping.
fn bulk_load_error(e: RegionError) -> RpcError {
    match e {
        RegionError::InvalidArgument(m) => RpcError::bad_request(m),
        e => e.into(),
    }
}

/// The user a staging directory is named after: the server's (cairn does not carry the
/// connection's user to its calls).
fn staging_user() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty() && !u.contains('/'))
        .unwrap_or_else(|| "cairn".to_string())
}

impl Services {
    /// `PrepareBulkLoad`: a fresh staging directory; its path is the bulk token.
    pub fn prepare_bulk_load(
        &self,
        req: &pb::PrepareBulkLoadRequest,
    ) -> Result<pb::PrepareBulkLoadResponse, RpcError> {
        let table = table_name(&req.table_name)?;
        let dir = self.rs.prepare_bulk_load(&table, &staging_user())?;
        Ok(pb::PrepareBulkLoadResponse {
            bulk_token: dir.display().to_string(),
        })
    }

    /// `CleanupBulkLoad`: removes the staging directory.
    pub fn cleanup_bulk_load(
        &self,
        req: &pb::CleanupBulkLoadRequest,
    ) -> Result<pb::CleanupBulkLoadResponse, RpcError> {
        self.rs
            .cleanup_bulk_load(&fs_path(&req.bulk_token))
            .map_err(bulk_load_error)?;
        Ok(pb::CleanupBulkLoadResponse {})
    }

    /// `BulkLoadHFile`: `loaded` false when a file no longer fits the region (the client
    /// splits it and retries); true without loading when the request already passed through
    /// this cluster (replication's loop guard).
    pub fn bulk_load_hfile(
        &self,
        req: &pb::BulkLoadHFileRequest,
    ) -> Result<pb::BulkLoadHFileResponse, RpcError> {
        if req.cluster_ids.contains(&self.cluster_id) {
            return Ok(pb::BulkLoadHFileResponse { loaded: true });
        }
        if meta::is_meta(&req.region) {
            return Err(RpcError::bad_request(
                "hbase:meta is maintained by cairn and takes no bulk loads",
            ));
        }
        let family_paths: Vec<(Vec<u8>, PathBuf)> = req
            .family_path
            .iter()
            .map(|fp| (fp.family.clone(), fs_path(&fp.path)))
            .collect();
        let copy = req.copy_file.unwrap_or(false);
        let loaded = match req.bulk_token.as_deref() {
            Some(token) => {
                self.rs
                    .bulk_load_staged(&fs_path(token), &req.region.value, &family_paths, copy)
            }
            None => self.rs.bulk_load_hfiles(
                &req.region.value,
                &family_paths,
                req.assign_seq_num.unwrap_or(false),
                copy,
            ),
        }
        .map_err(bulk_load_error)?;
        Ok(pb::BulkLoadHFileResponse { loaded })
    }
}
