//! `ClientMetaService`: what `RpcConnectionRegistry` asks the bootstrap servers — the cluster
//! id, the active master, meta's location — all of it this one server.

use cairn_rpc::pb;
use cairn_rpc::wire::Call;

use super::dispatch::{ok, Reply};
use super::errors::RpcError;
use super::meta::{self, ServerNamePb};
use super::Services;

impl Services {
    /// A `ClientMetaService` call; `None` for a method it does not have.
    pub(super) fn client_meta(&self, call: &Call, method: &str) -> Option<Result<Reply, RpcError>> {
        let me = self.meta.location().server_name();
        Some(match method {
            "GetClusterId" => ok(pb::GetClusterIdResponse {
                cluster_id: Some(self.cluster_id.clone()),
            }),
            "GetActiveMaster" => ok(pb::GetActiveMasterResponse {
                server_name: Some(me),
            }),
            "GetMasters" => ok(pb::GetMastersResponse {
                master_servers: vec![pb::GetMastersResponseEntry {
                    server_name: me,
                    is_active: true,
                }],
            }),
            "GetMetaRegionLocations" => ok(pb::GetMetaRegionLocationsResponse {
                meta_locations: vec![pb::RegionLocation {
                    region_info: meta::meta_region_info(),
                    server_name: Some(me),
                    seq_num: 0,
                }],
            }),
            "GetBootstrapNodes" => ok(pb::GetBootstrapNodesResponse {
                server_name: vec![me],
            }),
            _ => {
                let _ = call;
                return None;
            }
        })
    }
}
