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
    // A region server of a cluster: the master and the registry are the cluster's master.
    if s.cluster.is_some() && matches!(conn.service, Service::Master | Service::ClientMeta) {
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
