//! `hbase:meta` on the native RPC: how requests name it, and its identity as protobufs. Its
//! rows are cairn-region's [`MetaRegion`](cairn_region::MetaRegion), read like any region.

use cairn_region::meta::{META_ENCODED_NAME, META_REGION_NAME};
use cairn_region::TableName;
use cairn_rpc::pb;

pub use cairn_region::meta::Location;

/// Whether a region specifier names meta.
pub fn is_meta(spec: &pb::RegionSpecifier) -> bool {
    spec.value == META_REGION_NAME || spec.value == META_ENCODED_NAME.as_bytes()
}

/// A `TableName` message.
pub fn table_name_pb(t: &TableName) -> pb::TableName {
    pb::TableName {
        namespace: t.namespace.as_bytes().to_vec(),
        qualifier: t.qualifier.as_bytes().to_vec(),
    }
}

/// Meta's own `RegionInfo` message.
pub fn meta_region_info() -> pb::RegionInfo {
    region_info_pb(&cairn_region::meta::meta_region_info())
}

/// A region's `RegionInfo` message (online: neither offline nor split).
pub fn region_info_pb(info: &cairn_region::RegionInfo) -> pb::RegionInfo {
    pb::RegionInfo {
        region_id: info.region_id,
        table_name: table_name_pb(&info.table),
        start_key: Some(info.start_key.clone()),
        end_key: Some(info.end_key.clone()),
        offline: Some(false),
        split: Some(false),
        replica_id: Some(0),
    }
}

/// A [`Location`] as HBase's `ServerName` message.
pub trait ServerNamePb {
    /// The `ServerName` message.
    fn server_name(&self) -> pb::ServerName;
}

impl ServerNamePb for Location {
    fn server_name(&self) -> pb::ServerName {
        pb::ServerName {
            host_name: self.host.clone(),
            port: Some(u32::from(self.port)),
            start_code: Some(self.start_code),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_names_keep_binary_start_keys() {
        let info =
            cairn_region::RegionInfo::new(TableName::parse("ns:t").unwrap(), b"\xff\x00k", b"", 42);
        let n = info.region_name_bytes();
        let want = [
            &b"ns:t,\xff\x00k,42."[..],
            info.encoded_name.as_bytes(),
            b".",
        ]
        .concat();
        assert_eq!(n, want);
    }

    #[test]
    fn meta_is_named_as_hbase_names_it() {
        let by_name = pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
            value: b"hbase:meta,,1".to_vec(),
        };
        assert!(is_meta(&by_name));
        let by_encoded = pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::EncodedRegionName as i32,
            value: b"1588230740".to_vec(),
        };
        assert!(is_meta(&by_encoded));
        let info = meta_region_info();
        assert_eq!(
            (info.region_id, info.table_name.qualifier.as_slice()),
            (1, &b"meta"[..])
        );
    }
}
