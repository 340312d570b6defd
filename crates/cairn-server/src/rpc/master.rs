//! `MasterService`, as much of it as `Admin` needs: tables (create, delete, truncate,
//! enable, disable, describe, list, state), namespaces, procedures, cluster status, region
//! splits and merges ([`split`](super::split)).
//!
//! cairn runs each table operation to completion inside the call, then returns a procedure
//! id the way HBase's master does; the client's later `GetProcedureResult` finds it finished.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cairn_region::{layout, names, TableDescriptor, TableName};
use cairn_rpc::pb;
use cairn_rpc::wire::Call;
use parking_lot::Mutex;
use prost::Message;

use super::dispatch::{ok, Reply};
use super::errors::{self, RpcError};
use super::meta::{self, ServerNamePb};
use super::Services;

/// Procedures this server has run: id → submission time (ms).
#[derive(Default)]
pub struct Procedures {
    next: AtomicU64,
    done: Mutex<HashMap<u64, u64>>,
}

impl Procedures {
    fn finished(&self) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.done.lock().insert(id, now_ms());
        id
    }
}

/// Milliseconds since the epoch, as HBase's procedure and flush times are.
pub(super) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A `TableName` message as cairn's, with HBase's name rules (`TableName.valueOf(byte[],
/// byte[])`).
pub fn table_name(t: &pb::TableName) -> Result<TableName, RpcError> {
    Ok(TableName::from_parts(&t.namespace, &t.qualifier)?)
}

/// A `TableSchema` message as a table descriptor (family options by HBase's attribute names).
/// The names are checked first, so a bad one is refused as HBase refuses it, not as a file
/// that does not parse.
pub fn descriptor_from_pb(schema: &pb::TableSchema) -> Result<TableDescriptor, RpcError> {
    if let Some(t) = &schema.table_name {
        table_name(t)?;
    }
    for cf in &schema.column_families {
        names::check_family(&cf.name)?;
    }
    let mut bytes = b"PBUF".to_vec();
    schema.encode(&mut bytes).expect("a Vec grows as needed");
    layout::decode_table_descriptor(&bytes, Path::new("CreateTable request"))
        .map_err(|e| RpcError::bad_request(e.to_string()))
}

/// A table descriptor as a `TableSchema` message.
pub fn descriptor_to_pb(d: &TableDescriptor) -> pb::TableSchema {
    let bytes = layout::encode_table_descriptor(d);
    pb::TableSchema::decode(&bytes[4..]).expect("cairn's own encoding decodes")
}

impl Services {
    fn table_state(&self, name: &TableName) -> Result<bool, RpcError> {
        Ok(self.rs.table(name)?.is_enabled())
    }

    fn namespaces(&self) -> Vec<String> {
        let mut ns = self.rs.namespaces();
        for fixed in ["default", "hbase"] {
            if !ns.iter().any(|n| n == fixed) {
                ns.push(fixed.to_string());
            }
        }
        ns.sort();
        ns
    }

    fn namespace_pb(name: &str) -> pb::NamespaceDescriptor {
        pb::NamespaceDescriptor {
            name: name.as_bytes().to_vec(),
            configuration: Vec::new(),
        }
    }

    fn proc_id(&self) -> Option<u64> {
        Some(self.procedures.finished())
    }

    /// A table operation run to completion: the table must be enabled (`enabled`) or
    /// disabled, as HBase's procedures require (`TableNotEnabledException`,
    /// `TableNotDisabledException` otherwise); returns the finished procedure's id.
    fn table_procedure(
        &self,
        table: &pb::TableName,
        enabled: bool,
        op: impl FnOnce(&TableName) -> cairn_region::Result<()>,
    ) -> Result<Option<u64>, RpcError> {
        let name = table_name(table)?;
        if self.table_state(&name)? != enabled {
            let class = if enabled {
                errors::TABLE_NOT_ENABLED
            } else {
                errors::TABLE_NOT_DISABLED
            };
            return Err(RpcError::new(class, name.to_string(), true));
        }
        op(&name)?;
        Ok(self.proc_id())
    }

    /// A `MasterService` call; `None` for a method cairn does not serve.
    pub(super) fn master(&self, call: &Call, method: &str) -> Option<Result<Reply, RpcError>> {
        let r = (|| -> Result<Option<Reply>, RpcError> {
            Ok(Some(match method {
                "IsMasterRunning" => ok(pb::IsMasterRunningResponse {
                    is_master_running: true,
                })?,
                "CreateTable" => {
                    let req: pb::CreateTableRequest = call.decode_param()?;
                    let d = descriptor_from_pb(&req.table_schema)?;
                    if d.name.namespace != "default"
                        && !self.namespaces().contains(&d.name.namespace)
                    {
                        return Err(RpcError::new(
                            errors::NAMESPACE_NOT_FOUND,
                            d.name.namespace.clone(),
                            true,
                        ));
                    }
                    self.rs.create_table(d, &req.split_keys)?;
                    ok(pb::CreateTableResponse {
                        proc_id: self.proc_id(),
                    })?
                }
                "DeleteTable" => {
                    let req: pb::DeleteTableRequest = call.decode_param()?;
                    let proc_id =
                        self.table_procedure(&req.table_name, false, |n| self.rs.delete_table(n))?;
                    ok(pb::DeleteTableResponse { proc_id })?
                }
                "truncateTable" => {
                    let req: pb::TruncateTableRequest = call.decode_param()?;
                    let proc_id = self.table_procedure(&req.table_name, false, |n| {
                        let t = self.rs.table(n)?;
                        let d = (*t.descriptor).clone();
                        let splits: Vec<Vec<u8>> = if req.preserve_splits.unwrap_or(false) {
                            t.regions
                                .iter()
                                .skip(1)
                                .map(|r| r.info.start_key.clone())
                                .collect()
                        } else {
                            Vec::new()
                        };
                        drop(t);
                        self.rs.delete_table(n)?;
                        self.rs.create_table(d, &splits)
                    })?;
                    ok(pb::TruncateTableResponse { proc_id })?
                }
                "EnableTable" => {
                    let req: pb::EnableTableRequest = call.decode_param()?;
                    let proc_id =
                        self.table_procedure(&req.table_name, false, |n| self.rs.enable_table(n))?;
                    ok(pb::EnableTableResponse { proc_id })?
                }
                "DisableTable" => {
                    let req: pb::DisableTableRequest = call.decode_param()?;
                    let proc_id =
                        self.table_procedure(&req.table_name, true, |n| self.rs.disable_table(n))?;
                    ok(pb::DisableTableResponse { proc_id })?
                }
                "GetTableDescriptors" => {
                    let req: pb::GetTableDescriptorsRequest = call.decode_param()?;
                    let wanted: Vec<TableName> = req
                        .table_names
                        .iter()
                        .map(table_name)
                        .collect::<Result<_, _>>()?;
                    let names = self.list_tables(req.regex.as_deref(), req.namespace.as_deref())?;
                    let mut schemas = Vec::new();
                    for n in names {
                        if !wanted.is_empty() && !wanted.contains(&n) {
                            continue;
                        }
                        if let Ok(t) = self.rs.table(&n) {
                            schemas.push(descriptor_to_pb(&t.descriptor));
                        }
                    }
                    ok(pb::GetTableDescriptorsResponse {
                        table_schema: schemas,
                    })?
                }
                "GetTableNames" => {
                    let req: pb::GetTableNamesRequest = call.decode_param()?;
                    let names = self.list_tables(req.regex.as_deref(), req.namespace.as_deref())?;
                    ok(pb::GetTableNamesResponse {
                        table_names: names.iter().map(meta::table_name_pb).collect(),
                    })?
                }
                "GetTableState" => {
                    let req: pb::GetTableStateRequest = call.decode_param()?;
                    let name = table_name(&req.table_name)?;
                    let enabled = self.table_state(&name)?;
                    ok(pb::GetTableStateResponse {
                        table_state: pb::TableState {
                            state: if enabled {
                                pb::table_state::State::Enabled as i32
                            } else {
                                pb::table_state::State::Disabled as i32
                            },
                        },
                    })?
                }
                "IsProcedureDone" => ok(pb::IsProcedureDoneResponse {
                    done: Some(true),
                    snapshot: None,
                })?,
                "getProcedureResult" => {
                    let req: pb::GetProcedureResultRequest = call.decode_param()?;
                    let submitted = self.procedures.done.lock().get(&req.proc_id).copied();
                    use pb::get_procedure_result_response::State;
                    ok(match submitted {
                        Some(t) => pb::GetProcedureResultResponse {
                            state: State::Finished as i32,
                            submitted_time: Some(t),
                            last_update: Some(t),
                            result: None,
                            exception: None,
                        },
                        None => pb::GetProcedureResultResponse {
                            state: State::NotFound as i32,
                            ..Default::default()
                        },
                    })?
                }
                "ListNamespaceDescriptors" => ok(pb::ListNamespaceDescriptorsResponse {
                    namespace_descriptor: self
                        .namespaces()
                        .iter()
                        .map(|n| Self::namespace_pb(n))
                        .collect(),
                })?,
                "ListNamespaces" => ok(pb::ListNamespacesResponse {
                    namespace_name: self.namespaces(),
                })?,
                "GetNamespaceDescriptor" => {
                    let req: pb::GetNamespaceDescriptorRequest = call.decode_param()?;
                    if !self.namespaces().contains(&req.namespace_name) {
                        return Err(RpcError::new(
                            errors::NAMESPACE_NOT_FOUND,
                            req.namespace_name,
                            true,
                        ));
                    }
                    ok(pb::GetNamespaceDescriptorResponse {
                        namespace_descriptor: Self::namespace_pb(&req.namespace_name),
                    })?
                }
                "CreateNamespace" => {
                    let req: pb::CreateNamespaceRequest = call.decode_param()?;
                    let name = String::from_utf8_lossy(&req.namespace_descriptor.name).into_owned();
                    if self.namespaces().contains(&name) {
                        return Err(RpcError::new(errors::NAMESPACE_EXISTS, name, true));
                    }
                    self.rs.create_namespace(&name)?;
                    ok(pb::CreateNamespaceResponse {
                        proc_id: self.proc_id(),
                    })?
                }
                "DeleteNamespace" => {
                    let req: pb::DeleteNamespaceRequest = call.decode_param()?;
                    let name = req.namespace_name;
                    if name == "default" || name == "hbase" {
                        return Err(RpcError::new(
                            "org.apache.hadoop.hbase.constraint.ConstraintException",
                            format!("Reserved namespace {name} cannot be removed."),
                            true,
                        ));
                    }
                    if !self.namespaces().contains(&name) {
                        return Err(RpcError::new(errors::NAMESPACE_NOT_FOUND, name, true));
                    }
                    if self.rs.table_names().iter().any(|t| t.namespace == name) {
                        return Err(RpcError::new(
                            "org.apache.hadoop.hbase.constraint.ConstraintException",
                            format!(
                                "Only empty namespaces can be removed. Namespace {name} has tables"
                            ),
                            true,
                        ));
                    }
                    self.rs.delete_namespace(&name)?;
                    ok(pb::DeleteNamespaceResponse {
                        proc_id: self.proc_id(),
                    })?
                }
                "GetClusterStatus" => ok(pb::GetClusterStatusResponse {
                    cluster_status: self.cluster_status(),
                })?,
                "IsMasterInMaintenanceMode" => ok(pb::IsInMaintenanceModeResponse {
                    in_maintenance_mode: false,
                })?,
                "FlushTable" => {
                    let req: pb::FlushTableRequest = call.decode_param()?;
                    let proc_id =
                        self.table_procedure(&req.table_name, true, |n| self.rs.flush_table(n))?;
                    ok(pb::FlushTableResponse { proc_id })?
                }
                "ListTableDescriptorsByNamespace" => {
                    let req: pb::ListTableDescriptorsByNamespaceRequest = call.decode_param()?;
                    self.namespace_exists(&req.namespace_name)?;
                    let names = self.list_tables(None, Some(&req.namespace_name))?;
                    ok(pb::ListTableDescriptorsByNamespaceResponse {
                        table_schema: names
                            .iter()
                            .filter_map(|n| self.rs.table(n).ok())
                            .map(|t| descriptor_to_pb(&t.descriptor))
                            .collect(),
                    })?
                }
                "ListTableNamesByNamespace" => {
                    let req: pb::ListTableNamesByNamespaceRequest = call.decode_param()?;
                    self.namespace_exists(&req.namespace_name)?;
                    let names = self.list_tables(None, Some(&req.namespace_name))?;
                    ok(pb::ListTableNamesByNamespaceResponse {
                        table_name: names.iter().map(meta::table_name_pb).collect(),
                    })?
                }
                "IsBalancerEnabled" => ok(pb::IsBalancerEnabledResponse { enabled: false })?,
                "SetBalancerRunning" => ok(pb::SetBalancerRunningResponse {
                    prev_balance_value: Some(false),
                })?,
                "Balance" => ok(pb::BalanceResponse {
                    balancer_ran: false,
                    ..Default::default()
                })?,
                // Splits and merges run to completion in the call (rpc/split.rs).
                "SplitRegion" => {
                    let req: pb::SplitTableRegionRequest = call.decode_param()?;
                    self.split_region(&req)?;
                    ok(pb::SplitTableRegionResponse {
                        proc_id: self.proc_id(),
                    })?
                }
                "MergeTableRegions" => {
                    let req: pb::MergeTableRegionsRequest = call.decode_param()?;
                    self.merge_regions(&req)?;
                    ok(pb::MergeTableRegionsResponse {
                        proc_id: self.proc_id(),
                    })?
                }
                "IsSplitOrMergeEnabled" => ok(pb::IsSplitOrMergeEnabledResponse { enabled: true })?,
                "SetSplitOrMergeEnabled" => {
                    let req: pb::SetSplitOrMergeEnabledRequest = call.decode_param()?;
                    ok(self.split_or_merge_switch(&req)?)?
                }
                "ModifyTable" | "AddColumn" | "DeleteColumn" | "ModifyColumn" => {
                    return Err(RpcError::bad_request(format!(
                        "{method}: changing a table's schema is not supported by cairn yet"
                    )))
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

    fn namespace_exists(&self, ns: &str) -> Result<(), RpcError> {
        if self.namespaces().iter().any(|n| n == ns) {
            Ok(())
        } else {
            Err(RpcError::new(
                errors::NAMESPACE_NOT_FOUND,
                ns.to_string(),
                true,
            ))
        }
    }

    fn list_tables(
        &self,
        regex: Option<&str>,
        namespace: Option<&str>,
    ) -> Result<Vec<TableName>, RpcError> {
        let re = match regex {
            Some(r) if !r.is_empty() => Some(
                regex::Regex::new(&format!("^(?:{r})$"))
                    .map_err(|e| RpcError::bad_request(format!("table name pattern {r:?}: {e}")))?,
            ),
            _ => None,
        };
        Ok(self
            .rs
            .table_names()
            .into_iter()
            .filter(|t| namespace.is_none_or(|ns| ns.is_empty() || t.namespace == ns))
            .filter(|t| re.as_ref().is_none_or(|re| re.is_match(&t.to_string())))
            .collect())
    }

    /// The cluster as `Admin.getClusterMetrics` shows it: this one server, live, holding every
    /// region, named in the live servers and the server names, with every table's regions
    /// open; no dead, unknown or backup servers and nothing in transition. Every part is
    /// filled whatever the request's options ask, as HBase's master may.
    pub(super) fn cluster_status(&self) -> pb::ClusterStatus {
        let me = self.meta.location().server_name();
        let mut region_loads = Vec::new();
        let mut requests = 0u64;
        let mut table_counts = Vec::new();
        for name in self.rs.table_names() {
            let Ok(t) = self.rs.table(&name) else {
                continue;
            };
            // Every region of a table cairn holds is open on this server: none is split,
            // closed or in transition.
            let regions = t.regions.len() as u32;
            table_counts.push(pb::TableRegionStatesCount {
                table_name: super::meta::table_name_pb(&name),
                region_states_count: pb::RegionStatesCount {
                    open_regions: regions,
                    split_regions: 0,
                    closed_regions: 0,
                    regions_in_transition: 0,
                    total_regions: regions,
                },
            });
            for r in &t.regions {
                let load = crate::cluster::load::region_load(r);
                requests +=
                    load.read_requests_count.unwrap_or(0) + load.write_requests_count.unwrap_or(0);
                region_loads.push(load);
            }
        }
        pb::ClusterStatus {
            hbase_version: Some(pb::HBaseVersionFileContent {
                version: "2.6.1".into(),
            }),
            live_servers: vec![pb::LiveServerInfo {
                server: me.clone(),
                server_load: pb::ServerLoad {
                    number_of_requests: Some(0),
                    total_number_of_requests: Some(requests),
                    region_loads,
                    info_server_port: self.info_port.map(u32::from),
                    report_start_time: Some(self.meta.location().start_code),
                    report_end_time: Some(now_ms()),
                    ..Default::default()
                },
            }],
            cluster_id: Some(pb::ClusterId {
                cluster_id: self.cluster_id.clone(),
            }),
            // Admin.getRegionServers() reads this list (HBase's ITBLL stops without it).
            servers_name: vec![me.clone()],
            table_region_states_count: table_counts,
            master: Some(me),
            balancer_on: Some(false),
            master_info_port: self.info_port.map(i32::from),
            ..Default::default()
        }
    }
}
