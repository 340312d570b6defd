//! `AdminService` calls a cluster's master makes on a region server (`cairn regionserver`):
//! `ExecuteProcedures` (opens, closes and remote procedures, batched), the older
//! `OpenRegion` and `CloseRegion`, `WarmupRegion` before a move, and `StopServer`
//! (`Admin.stopRegionServer`: the orderly stop, as at SIGTERM). Each request is checked
//! (it names this server's start code; region names follow HBase's rules) and handed to
//! the member's workers; the answer goes back at once, the outcome later with
//! `ReportRegionStateTransition`, as HBase's `RSRpcServices` does.

use std::sync::Arc;

use cairn_rpc::pb;
use cairn_rpc::wire::Call;

use super::dispatch::{ok, Reply};
use super::errors::RpcError;
use super::Services;
use crate::cluster::{decode_region, Assignment, Member};

/// `org.apache.hadoop.hbase.ipc.ServerNotRunningYetException`: the master retries.
const SERVER_NOT_RUNNING_YET: &str = "org.apache.hadoop.hbase.ipc.ServerNotRunningYetException";

impl Services {
    /// The member, once joined; the master's calls before that are retried.
    pub(super) fn member(&self) -> Result<Arc<Member>, RpcError> {
        self.cluster
            .as_ref()
            .and_then(|slot| slot.get().cloned())
            .ok_or_else(|| {
                RpcError::new(
                    SERVER_NOT_RUNNING_YET,
                    "the region server has not joined its cluster yet",
                    false,
                )
            })
    }

    /// A master's `AdminService` call; `None` for methods answered elsewhere (or, outside a
    /// cluster, for all of these).
    pub(super) fn procedures(&self, call: &Call, method: &str) -> Option<Result<Reply, RpcError>> {
        self.cluster.as_ref()?;
        Some(match method {
            "ExecuteProcedures" => (|| {
                let req: pb::ExecuteProceduresRequest = call.decode_param()?;
                let m = self.member()?;
                let mut work = Vec::new();
                for open in &req.open_region {
                    work.extend(self.opens(&m, open)?);
                }
                for close in &req.close_region {
                    work.push(self.close(&m, close)?);
                }
                for p in &req.proc {
                    work.push(Assignment::Remote {
                        proc_id: p.proc_id,
                        class: p.proc_class.clone(),
                        data: p.proc_data.clone(),
                        master_time: p.initiating_master_active_time,
                    });
                }
                // Checked whole before any is queued: a bad request changes nothing.
                for w in work {
                    m.submit(w);
                }
                ok(pb::ExecuteProceduresResponse {})
            })(),
            "OpenRegion" => (|| {
                let req: pb::OpenRegionRequest = call.decode_param()?;
                let m = self.member()?;
                let work = self.opens(&m, &req)?;
                let states = work
                    .iter()
                    .map(|w| match w {
                        Assignment::Open { region, .. }
                            if decode_region(region).is_ok_and(|i| {
                                self.rs.hosted_region(&i.encoded_name).is_some()
                            }) =>
                        {
                            pb::open_region_response::RegionOpeningState::AlreadyOpened as i32
                        }
                        _ => pb::open_region_response::RegionOpeningState::Opened as i32,
                    })
                    .collect();
                for w in work {
                    m.submit(w);
                }
                ok(pb::OpenRegionResponse {
                    opening_state: states,
                })
            })(),
            "CloseRegion" => (|| {
                let req: pb::CloseRegionRequest = call.decode_param()?;
                let m = self.member()?;
                let w = self.close(&m, &req)?;
                m.submit(w);
                ok(pb::CloseRegionResponse { closed: true })
            })(),
            "StopServer" => (|| {
                let req: pb::StopServerRequest = call.decode_param()?;
                self.member()?.request_stop(&req.reason);
                ok(pb::StopServerResponse {})
            })(),
            "WarmupRegion" => (|| {
                let req: pb::WarmupRegionRequest = call.decode_param()?;
                // The region's name is checked; its blocks are read when it opens (cairn's
                // open reads only file trailers and indexes, which is what warming would).
                decode_region(&req.region_info).map_err(RpcError::bad_request)?;
                ok(pb::WarmupRegionResponse {})
            })(),
            _ => return None,
        })
    }

    /// The opens of one `OpenRegionRequest`, checked.
    fn opens(&self, m: &Member, req: &pb::OpenRegionRequest) -> Result<Vec<Assignment>, RpcError> {
        check_start_code(m, req.server_start_code)?;
        req.open_info
            .iter()
            .map(|o| {
                decode_region(&o.region).map_err(RpcError::bad_request)?;
                Ok(Assignment::Open {
                    region: o.region.clone(),
                    proc_id: o.open_proc_id.unwrap_or(-1),
                    master_time: req.initiating_master_active_time,
                })
            })
            .collect()
    }

    /// The close one `CloseRegionRequest` asks for, checked.
    fn close(&self, m: &Member, req: &pb::CloseRegionRequest) -> Result<Assignment, RpcError> {
        check_start_code(m, req.server_start_code)?;
        let encoded = encoded_name(&req.region)?;
        Ok(Assignment::Close {
            encoded,
            proc_id: req.close_proc_id.unwrap_or(-1),
            master_time: req.initiating_master_active_time,
        })
    }
}

/// A request meant for an earlier incarnation of this server (same host and port, another
/// start code) is refused, as HBase refuses it.
fn check_start_code(m: &Member, start_code: Option<u64>) -> Result<(), RpcError> {
    let mine = m.server_name().start_code.unwrap_or(0);
    match start_code {
        Some(s) if s != mine => Err(RpcError::bad_request(format!(
            "This RPC was intended for a different server with startCode: {s}, this server is: {}",
            m.server_name().host_name
        ))),
        _ => Ok(()),
    }
}

/// The encoded name a `RegionSpecifier` names: the bare name, or the 32 hex digits at the
/// end of a full region name.
fn encoded_name(spec: &pb::RegionSpecifier) -> Result<String, RpcError> {
    use pb::region_specifier::RegionSpecifierType;
    let v = &spec.value;
    let encoded: &[u8] = if spec.r#type == RegionSpecifierType::EncodedRegionName as i32 {
        v
    } else {
        cairn_region::encoded_part(v)
    };
    if encoded.len() == 32 && encoded.iter().all(u8::is_ascii_hexdigit) {
        Ok(String::from_utf8_lossy(encoded).into_owned())
    } else {
        Err(RpcError::bad_request(format!(
            "{} is not a region name",
            cairn_cell::Escaped(v)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pb::region_specifier::RegionSpecifierType;

    #[test]
    fn encoded_names_from_either_specifier() {
        let encoded = "0123456789abcdef0123456789abcdef";
        let full = format!("t,row,1700000000000.{encoded}.");
        let spec = |t: RegionSpecifierType, v: &[u8]| pb::RegionSpecifier {
            r#type: t as i32,
            value: v.to_vec(),
        };
        for s in [
            spec(RegionSpecifierType::RegionName, full.as_bytes()),
            spec(RegionSpecifierType::EncodedRegionName, encoded.as_bytes()),
        ] {
            assert_eq!(encoded_name(&s).unwrap(), encoded);
        }
        for bad in [&b"../../etc"[..], b"t,,1.zz.", b""] {
            assert!(encoded_name(&spec(RegionSpecifierType::EncodedRegionName, bad)).is_err());
        }
    }
}
