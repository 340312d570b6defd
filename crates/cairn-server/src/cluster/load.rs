//! The load a region server reports to its master (`RegionServerReport`'s `ServerLoad`):
//! the regions it holds with their store files, sizes, request counts and the sequence id
//! every edit at or below which is in store files (`complete_sequence_id`, which the master
//! hands to WAL splitting as `GetLastFlushedSequenceId`, so it must never run ahead of what
//! is flushed).

use std::collections::HashMap;

use cairn_region::{Region, RegionServer};
use cairn_rpc::pb;

/// The load of every region `rs` holds, over the period from `since` (ms; the previous
/// report, or the server's start) to now. The master assigns regions only to a server
/// whose report has a start time (`ServerMetrics.getLastReportTimestamp`, HBASE-25032).
pub fn server_load(rs: &RegionServer, info_port: Option<u16>, since: u64) -> pb::ServerLoad {
    let mut requests = 0;
    let region_loads: Vec<_> = rs
        .hosted_regions()
        .iter()
        .map(|r| {
            let l = region_load(r);
            requests += l.read_requests_count.unwrap_or(0) + l.write_requests_count.unwrap_or(0);
            l
        })
        .collect();
    pb::ServerLoad {
        number_of_requests: Some(0),
        total_number_of_requests: Some(requests),
        region_loads,
        info_server_port: info_port.map(u32::from),
        report_start_time: Some(since),
        report_end_time: Some(super::now_ms()),
        ..Default::default()
    }
}

/// One region's load.
pub fn region_load(r: &Region) -> pb::RegionLoad {
    let m: HashMap<&str, u64> = r.metric_values().into_iter().collect();
    let get = |k: &str| m.get(k).copied().unwrap_or(0);
    let flushed = r.flushed_sequence_ids();
    pb::RegionLoad {
        region_specifier: pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
            value: r.info.region_name_bytes(),
        },
        stores: Some(get("storeCount") as u32),
        storefiles: Some(get("storeFileCount") as u32),
        storefile_size_mb: Some((get("storeFileSize") >> 20) as u32),
        mem_store_size_mb: Some((get("memStoreSize") >> 20) as u32),
        read_requests_count: Some(get("readRequestCount")),
        write_requests_count: Some(get("writeRequestCount")),
        filtered_read_requests_count: Some(get("filteredReadRequestCount")),
        // The least any store has flushed: an edit above it may be only in the WAL.
        complete_sequence_id: Some(flushed.values().copied().min().unwrap_or(0)),
        store_complete_sequence_id: flushed
            .iter()
            .map(|(family, seq)| pb::StoreSequenceId {
                family_name: family.clone(),
                sequence_id: *seq,
            })
            .collect(),
        ..Default::default()
    }
}
