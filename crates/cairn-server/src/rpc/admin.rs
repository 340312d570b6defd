//! `AdminService`, as much of it as `Admin` and the client use: region information (with
//! whether the region may split or merge, and where it would split), the regions online, flushes and compactions of one region, the server's identity.

use cairn_rpc::pb;
use cairn_rpc::wire::Call;

use super::client::Target;
use super::dispatch::{ok, Reply};
use super::errors::RpcError;
use super::master::now_ms;
use super::meta::{self, ServerNamePb};
use super::Services;

impl Services {
    /// An `AdminService` call; `None` for a method cairn does not serve.
    pub(super) fn admin(&self, call: &Call, method: &str) -> Option<Result<Reply, RpcError>> {
        if let Some(r) = self.procedures(call, method) {
            return Some(r);
        }
        let r = (|| -> Result<Option<Reply>, RpcError> {
            Ok(Some(match method {
                "GetRegionInfo" => {
                    let req: pb::GetRegionInfoRequest = call.decode_param()?;
                    let (info, (splittable, mergeable, best)) = match self.target(&req.region)? {
                        // Meta never splits nor merges.
                        Target::Meta => (meta::meta_region_info(), (false, false, None)),
                        Target::Region(r) => (
                            meta::region_info_pb(&r.info),
                            self.split_fitness(&r, req.best_split_row.unwrap_or(false))?,
                        ),
                    };
                    ok(pb::GetRegionInfoResponse {
                        region_info: info,
                        // cairn compacts in the background without tracking the kind: NONE.
                        compaction_state: req
                            .compaction_state
                            .unwrap_or(false)
                            .then_some(pb::get_region_info_response::CompactionState::None as i32),
                        splittable: Some(splittable),
                        mergeable: Some(mergeable),
                        best_split_row: best,
                    })?
                }
                "GetOnlineRegion" => {
                    // In a cluster, only the regions the master assigned here.
                    let mut infos = match self.cluster {
                        Some(_) => Vec::new(),
                        None => vec![meta::meta_region_info()],
                    };
                    for name in self.rs.table_names() {
                        if let Ok(t) = self.rs.table(&name) {
                            if t.is_enabled() {
                                infos.extend(
                                    t.regions.iter().map(|r| meta::region_info_pb(&r.info)),
                                );
                            }
                        }
                    }
                    ok(pb::GetOnlineRegionResponse { region_info: infos })?
                }
                "FlushRegion" => {
                    let req: pb::FlushRegionRequest = call.decode_param()?;
                    let flushed = match self.target(&req.region)? {
                        Target::Meta => false,
                        Target::Region(r) => {
                            self.rs.flush_region(&r)?;
                            true
                        }
                    };
                    ok(pb::FlushRegionResponse {
                        last_flush_time: now_ms(),
                        flushed: Some(flushed),
                        ..Default::default()
                    })?
                }
                "CompactRegion" => {
                    let req: pb::CompactRegionRequest = call.decode_param()?;
                    if let Target::Region(r) = self.target(&req.region)? {
                        self.rs.compact_region(&r, req.major.unwrap_or(false))?;
                    }
                    ok(pb::CompactRegionResponse {})?
                }
                "GetServerInfo" => ok(pb::GetServerInfoResponse {
                    server_info: pb::ServerInfo {
                        server_name: self.meta.location().server_name(),
                        webui_port: self.info_port.map(u32::from),
                    },
                })?,
                // Every region here, or the named table's only (Admin.getRegionMetrics(server,
                // table)).
                "GetRegionLoad" => {
                    let req: pb::GetRegionLoadRequest = call.decode_param()?;
                    let only = req
                        .table_name
                        .as_ref()
                        .map(super::master::table_name)
                        .transpose()?;
                    let mut loads = Vec::new();
                    for name in self.rs.table_names() {
                        if only.as_ref().is_some_and(|t| *t != name) {
                            continue;
                        }
                        let Ok(t) = self.rs.table(&name) else {
                            continue;
                        };
                        loads.extend(
                            t.regions
                                .iter()
                                .map(|r| crate::cluster::load::region_load(r)),
                        );
                    }
                    ok(pb::GetRegionLoadResponse {
                        region_loads: loads,
                    })?
                }
                _ => return Ok(None),
            }))
        })();
        match r {
            Ok(Some(reply)) => Some(Ok(reply)),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}
