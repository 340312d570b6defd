//! The bytes HBase keeps in its znodes, written and read.
//!
//! Every znode with data that an HBase server writes has two layers, outermost first:
//!
//! 1. a metadata prefix (HBase's `ZKMetadata`): `0xFF`, a big-endian `i32` length `L`, then `L`
//!    bytes naming the writer — an identifier such as `master:16000` followed by 8 random
//!    salt bytes. Readers drop it when the first byte is `0xFF` and take the data as it is
//!    otherwise; empty data never gets one.
//! 2. the protobuf payload: the 4 bytes `PBUF`, then the serialized message.
//!
//! Reading is strict where HBase is lax: HBase skips the 4 magic bytes without looking at
//! them, this checks them, so a stranger's bytes give an error rather than a wrong answer.

use prost::Message;

use crate::pb;

/// The first byte of a metadata prefix.
pub const META_MAGIC: u8 = 0xFF;

/// What starts every protobuf payload (HBase's `ProtobufMagic.PB_MAGIC`).
pub const PB_MAGIC: &[u8; 4] = b"PBUF";

/// Bytes after the identifier in the metadata prefix: a random number, so two writes of the
/// same content by the same process differ (HBase's reason: ZooKeeper's ABA problem).
pub const SALT_LEN: usize = 8;

/// Why znode data could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZnodeError {
    /// The metadata prefix claims more bytes than the data holds, or a negative length.
    #[error("metadata prefix: id length {claimed} does not fit in {available} bytes")]
    BadMetadataLength {
        /// The length the prefix gives.
        claimed: i64,
        /// The bytes after the length field.
        available: usize,
    },
    /// The data ends inside the metadata prefix's length field.
    #[error("metadata prefix: {len} bytes end inside the 4-byte length")]
    TruncatedMetadata {
        /// The data's length.
        len: usize,
    },
    /// The payload does not start with `PBUF`.
    #[error("payload does not start with PBUF (starts with {start:02x?})")]
    NoPbMagic {
        /// Up to the first 4 bytes of the payload.
        start: Vec<u8>,
    },
    /// The protobuf does not decode as the expected message.
    #[error("{message}: {reason}")]
    Decode {
        /// The message expected (`hbase.pb.Master`, …).
        message: &'static str,
        /// prost's reason.
        reason: String,
    },
}

/// `data` behind a metadata prefix naming `identifier`, salted with `salt`; empty data stays
/// empty, as HBase leaves it.
pub fn with_metadata(identifier: &str, salt: u64, data: &[u8]) -> Vec<u8> {
    if data.is_empty() {
        return Vec::new();
    }
    let id = identifier.as_bytes();
    let id_len = id.len() + SALT_LEN;
    let mut out = Vec::with_capacity(1 + 4 + id_len + data.len());
    out.push(META_MAGIC);
    // An identifier is a short name like `master:16000`; one past i32 cannot be written by
    // HBase's readers' rules, so it is cut rather than mis-framed.
    let id_len = i32::try_from(id_len).unwrap_or(i32::MAX);
    out.extend_from_slice(&id_len.to_be_bytes());
    let keep = (id_len as usize).saturating_sub(SALT_LEN);
    out.extend_from_slice(&id[..keep]);
    out.extend_from_slice(&salt.to_be_bytes());
    out.extend_from_slice(data);
    out
}

/// The data behind the metadata prefix when there is one (first byte `0xFF`), else `data`
/// unchanged, as HBase's `ZKMetadata.removeMetaData` reads it.
pub fn strip_metadata(data: &[u8]) -> Result<&[u8], ZnodeError> {
    if data.first() != Some(&META_MAGIC) {
        return Ok(data);
    }
    let len_bytes: [u8; 4] = data
        .get(1..5)
        .and_then(|b| b.try_into().ok())
        .ok_or(ZnodeError::TruncatedMetadata { len: data.len() })?;
    let claimed = i32::from_be_bytes(len_bytes);
    let available = data.len() - 5;
    match usize::try_from(claimed) {
        Ok(n) if n <= available => Ok(&data[5 + n..]),
        _ => Err(ZnodeError::BadMetadataLength {
            claimed: i64::from(claimed),
            available,
        }),
    }
}

/// The identifier (without its salt) in a metadata prefix, if `data` has one.
pub fn writer_identifier(data: &[u8]) -> Option<String> {
    let rest = strip_metadata(data).ok()?;
    if rest.len() == data.len() {
        return None;
    }
    let id = &data[5..data.len() - rest.len()];
    let name = id.get(..id.len().checked_sub(SALT_LEN)?)?;
    Some(String::from_utf8_lossy(name).into_owned())
}

/// A znode's data for `message`: the metadata prefix, `PBUF`, the message.
pub fn encode<M: Message>(identifier: &str, salt: u64, message: &M) -> Vec<u8> {
    let mut payload = Vec::with_capacity(PB_MAGIC.len() + message.encoded_len());
    payload.extend_from_slice(PB_MAGIC);
    payload.extend_from_slice(&message.encode_to_vec());
    with_metadata(identifier, salt, &payload)
}

/// The message in a znode's data, with or without a metadata prefix; `name` is what the
/// error calls it.
pub fn decode<M: Message + Default>(data: &[u8], name: &'static str) -> Result<M, ZnodeError> {
    let payload = strip_metadata(data)?;
    let body = payload
        .strip_prefix(PB_MAGIC.as_slice())
        .ok_or_else(|| ZnodeError::NoPbMagic {
            start: payload[..payload.len().min(4)].to_vec(),
        })?;
    M::decode(body).map_err(|e| ZnodeError::Decode {
        message: name,
        reason: e.to_string(),
    })
}

/// The active master's znode (`/hbase/master`) as HBase's `MasterAddressTracker` reads it.
pub fn parse_master(data: &[u8]) -> Result<pb::Master, ZnodeError> {
    let m: pb::Master = decode(data, "hbase.pb.Master")?;
    named(&m.master, "hbase.pb.Master")?;
    Ok(m)
}

/// The meta location znode (`/hbase/meta-region-server`).
pub fn parse_meta_region_server(data: &[u8]) -> Result<pb::MetaRegionServer, ZnodeError> {
    let m: pb::MetaRegionServer = decode(data, "hbase.pb.MetaRegionServer")?;
    named(&m.server, "hbase.pb.MetaRegionServer")?;
    Ok(m)
}

/// prost reads a missing `required` message as its default; HBase's parser refuses it, and a
/// server name without a host names nobody.
fn named(sn: &pb::ServerName, message: &'static str) -> Result<(), ZnodeError> {
    if sn.host_name.is_empty() {
        return Err(ZnodeError::Decode {
            message,
            reason: "no server name (host)".into(),
        });
    }
    Ok(())
}

/// The cluster id znode (`/hbase/hbaseid`): a `ClusterId` message, or, in the format before
/// protobufs, the id's bytes themselves (HBase's `ClusterId.parseFrom` takes both).
pub fn parse_cluster_id(data: &[u8]) -> Result<String, ZnodeError> {
    let payload = strip_metadata(data)?;
    if payload.starts_with(PB_MAGIC) {
        let id: pb::ClusterId = decode(payload, "hbase.pb.ClusterId")?;
        return Ok(id.cluster_id);
    }
    Ok(String::from_utf8_lossy(payload).into_owned())
}

/// HBase's `hbase.zookeeper.quorum` as a ZooKeeper connect string: every host with a port
/// (`client_port`, `hbase.zookeeper.property.clientPort`, for those given without), then the
/// chroot (`/path` after the last host) if any.
pub fn connect_string(quorum: &str, client_port: u16) -> String {
    let q = quorum.trim();
    let (hosts, chroot) = match q.find('/') {
        Some(i) => (&q[..i], &q[i..]),
        None => (q, ""),
    };
    let hosts: Vec<String> = hosts
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(|h| {
            if h.contains(':') {
                h.to_string()
            } else {
                format!("{h}:{client_port}")
            }
        })
        .collect();
    format!("{}{chroot}", hosts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn master(host: &str, port: u32, start_code: u64) -> pb::Master {
        pb::Master {
            master: pb::ServerName {
                host_name: host.into(),
                port: Some(port),
                start_code: Some(start_code),
            },
            rpc_version: Some(0),
            info_port: Some(16010),
        }
    }

    #[test]
    fn layout_is_hbases() {
        let m = master("h", 16000, 7);
        let data = encode("master:16000", 0x0102030405060708, &m);
        let id = b"master:16000";
        assert_eq!(data[0], 0xFF);
        assert_eq!(
            i32::from_be_bytes(data[1..5].try_into().unwrap()),
            (id.len() + 8) as i32
        );
        assert_eq!(&data[5..5 + id.len()], id);
        assert_eq!(
            &data[5 + id.len()..13 + id.len()],
            &[1, 2, 3, 4, 5, 6, 7, 8]
        );
        assert_eq!(&data[13 + id.len()..17 + id.len()], b"PBUF");
        assert_eq!(&data[17 + id.len()..], m.encode_to_vec().as_slice());
        assert_eq!(writer_identifier(&data).as_deref(), Some("master:16000"));
    }

    #[test]
    fn empty_data_has_no_prefix() {
        assert!(with_metadata("master:1", 9, &[]).is_empty());
        assert_eq!(strip_metadata(&[]).unwrap(), &[] as &[u8]);
    }

    #[test]
    fn the_prefix_is_optional_on_read() {
        let m = master("host-a", 1, 2);
        let mut bare = b"PBUF".to_vec();
        bare.extend_from_slice(&m.encode_to_vec());
        assert_eq!(parse_master(&bare).unwrap(), m);
    }

    #[test]
    fn cluster_id_in_both_formats() {
        let id = pb::ClusterId {
            cluster_id: "8f1b-uuid".into(),
        };
        assert_eq!(
            parse_cluster_id(&encode("master:1", 3, &id)).unwrap(),
            "8f1b-uuid"
        );
        assert_eq!(parse_cluster_id(b"old-style-id").unwrap(), "old-style-id");
    }

    #[test]
    fn bad_bytes_are_errors() {
        assert_eq!(
            strip_metadata(&[0xFF, 0, 0]).unwrap_err(),
            ZnodeError::TruncatedMetadata { len: 3 }
        );
        assert!(matches!(
            strip_metadata(&[0xFF, 0, 0, 0, 9, 1]),
            Err(ZnodeError::BadMetadataLength { claimed: 9, .. })
        ));
        assert!(matches!(
            strip_metadata(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            Err(ZnodeError::BadMetadataLength { claimed: -1, .. })
        ));
        assert!(matches!(
            parse_master(b"NOPE\x0a\x00"),
            Err(ZnodeError::NoPbMagic { .. })
        ));
        let e = parse_master(b"PBUF\x0a\x05ab").unwrap_err();
        assert!(e.to_string().contains("hbase.pb.Master"), "{e}");
        // A message missing its required server name.
        assert!(parse_meta_region_server(b"PBUF\x10\x00").is_err());
    }

    proptest! {
        #[test]
        fn round_trip(
            host in "[a-z0-9.-]{1,40}",
            port in any::<u32>(),
            start_code in any::<u64>(),
            ident in "[a-z]{1,12}:[0-9]{1,5}",
            salt in any::<u64>(),
        ) {
            let m = master(&host, port, start_code);
            let data = encode(&ident, salt, &m);
            prop_assert_eq!(parse_master(&data).unwrap(), m);
            prop_assert_eq!(writer_identifier(&data), Some(ident));
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = parse_master(&data);
            let _ = parse_meta_region_server(&data);
            let _ = parse_cluster_id(&data);
            let _ = writer_identifier(&data);
            if let Ok(rest) = strip_metadata(&data) {
                prop_assert!(rest.len() <= data.len());
            }
        }

        #[test]
        fn prefixed_garbage_after_magic(
            id in proptest::collection::vec(any::<u8>(), 0..20),
            tail in proptest::collection::vec(any::<u8>(), 0..20),
        ) {
            let data = with_metadata("x", 1, &[id.clone(), tail].concat());
            let stripped = strip_metadata(&data).unwrap();
            prop_assert_eq!(&stripped[..id.len()], id.as_slice());
        }
    }
}
