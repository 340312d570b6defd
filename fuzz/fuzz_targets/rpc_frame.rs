//! Fuzzes the native RPC's input decoding: the preamble, the connection header, a call frame
//! (request header, parameter, cell block) and the cell block's cells, as the server reads
//! them off a connection. Malformed bytes must give an error, never a panic, and nothing
//! decoded may claim bytes past the frame.
//!
//! The first input byte chooses what the rest is: 0 a preamble + connection header, 1 a call
//! frame, 2 a cell block, 3 a call frame whose parameter is decoded as each request type the
//! server serves, a master's `ExecuteProceduresRequest` to a `cairn regionserver` included
//! (its regions' names and its WAL split paths checked as the server checks them).
#![no_main]

use bytes::Bytes;
use cairn_rpc::cellblock::CellBlockReader;
use cairn_rpc::{pb, wire};
use libfuzzer_sys::fuzz_target;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    match kind % 4 {
        0 => {
            if rest.len() >= 6 {
                let _ = wire::parse_preamble(rest[..6].try_into().unwrap());
                let _ = wire::decode_connection_header(&rest[6..]);
            }
        }
        1 | 3 => {
            let frame = Bytes::copy_from_slice(rest);
            if let Ok(call) = wire::decode_call(frame) {
                assert!(call.param.len() + call.cell_block.len() <= rest.len());
                if kind % 4 == 3 {
                    let _ = call.decode_param::<pb::GetRequest>();
                    let _ = call.decode_param::<pb::MutateRequest>();
                    let _ = call.decode_param::<pb::MultiRequest>();
                    let _ = call.decode_param::<pb::ScanRequest>();
                    let _ = call.decode_param::<pb::CreateTableRequest>();
                    let _ = pb::Filter::decode(call.param.as_ref());
                    cluster_requests(&call.param);
                }
                let mut cells = CellBlockReader::new(call.cell_block);
                while let Ok(Some(_)) = cells.next() {}
            }
        }
        _ => {
            let mut cells = CellBlockReader::new(Bytes::copy_from_slice(rest));
            let mut n = 0usize;
            while let Ok(Some(c)) = cells.next() {
                n += c.as_cell().serialized_len();
                assert!(n <= rest.len() + 64);
            }
        }
    }
});

/// What a `cairn regionserver` takes from a master's `ExecuteProceduresRequest`: every region
/// (HBase's name rules, through the layout's `RegionInfo` decoder) and every WAL path a split
/// names (confined to `WALs/` under the root).
fn cluster_requests(param: &[u8]) {
    let Ok(req) = pb::ExecuteProceduresRequest::decode(param) else {
        return;
    };
    let here = std::path::Path::new("fuzz");
    for open in &req.open_region {
        for o in &open.open_info {
            let bytes = [&b"PBUF"[..], &o.region.encode_to_vec()].concat();
            let _ = cairn_region::layout::decode_region_info_bytes(&bytes, here);
        }
    }
    for p in &req.proc {
        if let Ok(param) = pb::SplitWalParameter::decode(p.proc_data.as_deref().unwrap_or_default())
        {
            if let Ok(path) =
                cairn_wal::names::split_wal_file(&param.wal_path, std::path::Path::new("/r"))
            {
                assert!(path.starts_with("/r/WALs/"), "{path:?}");
                assert!(!path
                    .components()
                    .any(|c| c == std::path::Component::ParentDir));
            }
        }
    }
}
