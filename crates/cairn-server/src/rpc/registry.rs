//! `ClientMetaService`: what `RpcConnectionRegistry` asks the bootstrap servers — the cluster
//! id, the active master, meta's location. `cairn serve` is all of it itself; a region server
//! of a cluster answers, as HBase's region servers do, from what the cluster's ZooKeeper says.

use cairn_rpc::pb;
use cairn_rpc::wire::Call;

use super::dispatch::{ok, Reply};
use super::errors::{self, RpcError};
use super::meta::{self, ServerNamePb};
use super::Services;

impl Services {
    /// A `ClientMetaService` call; `None` for a method it does not have.
    pub(super) fn client_meta(&self, call: &Call, method: &str) -> Option<Result<Reply, RpcError>> {
        if self.cluster.is_some() {
            return self.cluster_registry(method);
        }
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

    /// [`Services::client_meta`] in a cluster: the answers read from ZooKeeper.
    fn cluster_registry(&self, method: &str) -> Option<Result<Reply, RpcError>> {
        let m = match self.member() {
            Ok(m) => m,
            Err(e) => return Some(Err(e)),
        };
        let zk = m.zookeeper();
        let zk_err = |e: crate::zookeeper::ZkError| {
            RpcError::new(
                errors::IO_EXCEPTION,
                format!("reading ZooKeeper: {e}"),
                false,
            )
        };
        let master = || -> Result<pb::ServerName, RpcError> {
            let a = zk
                .master()
                .map_err(zk_err)?
                .ok_or_else(|| RpcError::new(errors::IO_EXCEPTION, "no active master", false))?;
            Ok(pb::ServerName {
                host_name: a.host,
                port: Some(u32::from(a.port)),
                start_code: Some(a.start_code),
            })
        };
        Some(match method {
            "GetClusterId" => (|| {
                let id = zk.cluster_id().map_err(zk_err)?.ok_or_else(|| {
                    RpcError::new(errors::IO_EXCEPTION, "no cluster id in ZooKeeper", false)
                })?;
                ok(pb::GetClusterIdResponse {
                    cluster_id: Some(id),
                })
            })(),
            "GetActiveMaster" => master().and_then(|sn| {
                ok(pb::GetActiveMasterResponse {
                    server_name: Some(sn),
                })
            }),
            "GetMasters" => (|| {
                let mut masters = vec![pb::GetMastersResponseEntry {
                    server_name: master()?,
                    is_active: true,
                }];
                for sn in zk.backup_masters().map_err(zk_err)? {
                    masters.push(pb::GetMastersResponseEntry {
                        server_name: sn,
                        is_active: false,
                    });
                }
                ok(pb::GetMastersResponse {
                    master_servers: masters,
                })
            })(),
            // Empty while meta is not assigned; the client retries.
            "GetMetaRegionLocations" => zk.meta_location().map_err(zk_err).and_then(|sn| {
                ok(pb::GetMetaRegionLocationsResponse {
                    meta_locations: sn
                        .map(|sn| pb::RegionLocation {
                            region_info: meta::meta_region_info(),
                            server_name: Some(sn),
                            seq_num: 0,
                        })
                        .into_iter()
                        .collect(),
                })
            }),
            "GetBootstrapNodes" => zk
                .region_servers()
                .map_err(zk_err)
                .and_then(|rs| ok(pb::GetBootstrapNodesResponse { server_name: rs })),
            _ => return None,
        })
    }
}
