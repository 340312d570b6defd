//! The status page's snapshot, read from `cairn serve`'s region server and listeners.

use std::time::SystemTime;

use super::status_page::{
    key_string, BlockCacheStatus, RegionStatus, ServerStatus, StoreStatus, TableStatus,
    WalFileStatus,
};
use super::Shared;

/// What the status page shows now.
pub(super) fn snapshot(s: &Shared) -> ServerStatus {
    let addrs = s.addrs.get().cloned().unwrap_or_default();
    let mut listeners = Vec::new();
    for (what, a) in [
        ("Thrift", addrs.thrift),
        ("HBase RPC", addrs.rpc),
        ("Info port", addrs.info),
        ("HTTP port (old)", addrs.http),
    ] {
        if let Some(a) = a {
            listeners.push((what.to_string(), a.to_string()));
        }
    }
    let build = s.exposition.build();
    let server_name = addrs
        .server_name
        .or(addrs.thrift.map(|a| a.to_string()))
        .unwrap_or_default();
    region_server_status(
        &s.rs,
        server_name,
        build,
        s.started,
        listeners,
        &s.metrics.slow_log,
    )
}

/// The status of region server `rs`: everything the page shows but the server's own
/// identity, given as values (`cairn serve` and `cairn regionserver` both render it).
pub(crate) fn region_server_status(
    rs: &cairn_region::RegionServer,
    server_name: String,
    build: &crate::metrics::BuildInfo,
    started: SystemTime,
    listeners: Vec<(String, String)>,
    slow_log: &crate::slow_log::SlowLog,
) -> ServerStatus {
    let mut tables = Vec::new();
    for name in rs.table_names() {
        let Ok(table) = rs.table(&name) else { continue };
        let regions = table
            .regions
            .iter()
            .map(|r| {
                let v = r.metric_values();
                let get = |n: &str| v.iter().find(|(k, _)| *k == n).map_or(0, |(_, x)| *x);
                RegionStatus {
                    encoded_name: r.info.encoded_name.clone(),
                    start_key: key_string(&r.info.start_key),
                    end_key: key_string(&r.info.end_key),
                    read_requests: get("readRequestCount"),
                    write_requests: get("writeRequestCount"),
                    memstore_size: r.memstore_size(),
                    stores: r
                        .stores()
                        .map(|st| StoreStatus {
                            family: key_string(&st.family.name),
                            store_files: st.file_count() as u64,
                            size: st.files_size(),
                        })
                        .collect(),
                }
            })
            .collect();
        tables.push(TableStatus {
            name: name.to_string(),
            enabled: table.is_enabled(),
            regions,
        });
    }
    let memstore: Vec<(&str, u64)> = rs.memstore_accounting().metric_values();
    let mem = |n: &str| {
        memstore
            .iter()
            .find(|(k, _)| *k == n)
            .map_or(0, |(_, x)| *x)
    };
    let block_cache = rs.block_cache().map(|c| {
        let m = c.metrics();
        let get = |n: &str| m.iter().find(|(k, _)| k == n).map_or(0, |(_, x)| *x);
        BlockCacheStatus {
            hits: get("blockCacheHitCount"),
            misses: get("blockCacheMissCount"),
            evictions: get("blockCacheEvictionCount"),
            blocks: get("blockCacheCount"),
            size: get("blockCacheSize"),
            capacity: get("blockCacheCapacity"),
        }
    });
    let wal_files = rs
        .wal()
        .segments()
        .into_iter()
        .map(|w| WalFileStatus {
            path: w.path.display().to_string(),
            size: w.size,
            active: w.active,
        })
        .collect();
    ServerStatus {
        server_name,
        version: build.version.clone(),
        commit: build.commit.clone(),
        start_time_secs: started
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        uptime: started.elapsed().unwrap_or_default(),
        listeners,
        tables,
        memstore_size: mem("globalMemStoreSize"),
        memstore_limit: Some(mem("globalMemStoreLimit")).filter(|&l| l > 0),
        block_cache,
        wal_files,
        slow_calls: slow_log.recent(),
    }
}
