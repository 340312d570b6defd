//! From a call's service and method name to the code that answers it.

use bytes::Bytes;
use cairn_rpc::cellblock::CellBlockReader;
use cairn_rpc::wire::{Call, EncodeDelimited};

use super::connection::{Conn, Service};
use super::convert::ResultWriter;
use super::errors::RpcError;
use super::Services;
use crate::security::Authorizer;

/// A response message and its cell block.
pub type Reply = (Box<dyn EncodeDelimited + Send>, Vec<u8>);

/// A response with no cell block.
pub(super) fn ok<M: EncodeDelimited + Send + 'static>(m: M) -> Result<Reply, RpcError> {
    Ok((Box::new(m), Vec::new()))
}

/// A method the service does not have (HBase: `UnsupportedOperationException` wrapped in a
/// `DoNotRetryIOException`).
fn unknown(service: Service, method: &str) -> RpcError {
    RpcError::bad_request(format!(
        "java.lang.UnsupportedOperationException: {method} is not a method of {} that cairn serves",
        service.name()
    ))
}

/// Runs one call (its caller already allowed to: see [`authorize`]).
pub fn call(s: &Services, conn: &Conn, call: &Call) -> Result<Reply, RpcError> {
    let method = call.method();
    // A region server of a cluster: the master is the cluster's (the registry answers from
    // ZooKeeper, rpc/registry.rs).
    if s.cluster.is_some() && conn.service == Service::Master {
        return Err(unknown(conn.service, method));
    }
    match conn.service {
        Service::Client => client(s, conn, call, method),
        Service::Master => s
            .master(call, method)
            .unwrap_or_else(|| Err(unknown(conn.service, method))),
        Service::Admin => s
            .admin(call, method)
            .unwrap_or_else(|| Err(unknown(conn.service, method))),
        Service::ClientMeta => s
            .client_meta(call, method)
            .unwrap_or_else(|| Err(unknown(conn.service, method))),
    }
}

fn client(s: &Services, conn: &Conn, call: &Call, method: &str) -> Result<Reply, RpcError> {
    let mut out = ResultWriter::new(conn.codec);
    let mut cells = CellBlockReader::new(if conn.codec.is_some() {
        call.cell_block.clone()
    } else {
        Bytes::new()
    });
    let msg: Box<dyn EncodeDelimited + Send> = match method {
        "Get" => Box::new(s.get(&call.decode_param()?, &mut out)?),
        "Mutate" => Box::new(s.mutate(&call.decode_param()?, &mut cells, &mut out)?),
        "Multi" => Box::new(s.multi(&call.decode_param()?, &mut cells, &mut out)?),
        "Scan" => Box::new(s.scan(&call.decode_param()?, call.header.timeout, &mut out)?),
        "BulkLoadHFile" => Box::new(s.bulk_load_hfile(&call.decode_param()?)?),
        "PrepareBulkLoad" => Box::new(s.prepare_bulk_load(&call.decode_param()?)?),
        "CleanupBulkLoad" => Box::new(s.cleanup_bulk_load(&call.decode_param()?)?),
        _ => return Err(unknown(conn.service, method)),
    };
    Ok((msg, out.block))
}

/// Whether the connection's caller may make `call`: admin operations, on every service, need
/// a superuser when authorization is on ([`crate::security`]); HBase's
/// `AccessDeniedException` otherwise.
pub fn authorize(authorizer: &Authorizer, conn: &Conn, call: &Call) -> Result<(), RpcError> {
    if crate::security::rpc_is_admin(conn.service, call.method()) {
        authorizer
            .require_admin(&conn.caller)
            .map_err(|d| RpcError::new(crate::security::ACCESS_DENIED, d.0, true))?;
    }
    Ok(())
}

/// A short account of what a call asked for, as HBase's `ProtobufUtil.getShortTextFormat`
/// gives it in a slow-call warning: the region and row of a Get or Mutate, the region or
/// scanner of a Scan, the first region, action count and first row of a Multi; otherwise
/// nothing. Decoded again only for a call already found slow.
pub(super) fn describe(call: &Call) -> String {
    use cairn_rpc::pb;
    let key = crate::server::status_page::key_string;
    let region = |r: &pb::RegionSpecifier| key(&r.value);
    match call.method() {
        "Get" => call
            .decode_param::<pb::GetRequest>()
            .map(|r| format!("region= {}, row={}", region(&r.region), key(&r.get.row)))
            .unwrap_or_default(),
        "Mutate" => call
            .decode_param::<pb::MutateRequest>()
            .map(|r| {
                let row = r.mutation.row.as_deref().unwrap_or_default();
                format!("region= {}, row={}", region(&r.region), key(row))
            })
            .unwrap_or_default(),
        "Scan" => call
            .decode_param::<pb::ScanRequest>()
            .map(|r| match (&r.region, r.scanner_id) {
                (Some(reg), _) => format!("region= {}", region(reg)),
                (None, Some(id)) => format!("scanner_id= {id}"),
                (None, None) => String::new(),
            })
            .unwrap_or_default(),
        "Multi" => call
            .decode_param::<pb::MultiRequest>()
            .map(|r| {
                let actions: usize = r.region_action.iter().map(|a| a.action.len()).sum();
                let Some(first) = r.region_action.first() else {
                    return String::new();
                };
                let row = first.action.first().and_then(|a| {
                    a.get
                        .as_ref()
                        .map(|g| g.row.clone())
                        .or_else(|| a.mutation.as_ref().and_then(|m| m.row.clone()))
                });
                format!(
                    "region= {}, for {actions} action(s) and 1st row key={}",
                    region(&first.region),
                    row.as_deref().map(key).unwrap_or_default()
                )
            })
            .unwrap_or_default(),
        _ => String::new(),
    }
}
