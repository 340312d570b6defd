//! File info: the key/value map in the `FILEINF2` block. Its body is `PBUF` followed by a
//! length-delimited `FileInfoProto` whose entries are sorted by key bytes.

use std::collections::BTreeMap;
use std::sync::Arc;

use prost::Message;

use crate::error::{HFileError, Result};

/// `ProtobufMagic.PB_MAGIC`.
pub const PB_MAGIC: &[u8; 4] = b"PBUF";

/// Keys written by HBase's HFile writer (`HFileInfo`).
pub mod keys {
    /// Key of the last cell.
    pub const LASTKEY: &[u8] = b"hfile.LASTKEY";
    /// Average key length (i32).
    pub const AVG_KEY_LEN: &[u8] = b"hfile.AVG_KEY_LEN";
    /// Average value length (i32).
    pub const AVG_VALUE_LEN: &[u8] = b"hfile.AVG_VALUE_LEN";
    /// Creation time in ms (i64).
    pub const CREATE_TIME_TS: &[u8] = b"hfile.CREATE_TIME_TS";
    /// Key of the largest cell.
    pub const KEY_OF_BIGGEST_CELL: &[u8] = b"hfile.KEY_OF_BIGGEST_CELL";
    /// Serialized size of the largest cell (i64).
    pub const LEN_OF_BIGGEST_CELL: &[u8] = b"hfile.LEN_OF_BIGGEST_CELL";
    /// Longest tags section (i32); present only when cells carry a tags section.
    pub const MAX_TAGS_LEN: &[u8] = b"hfile.MAX_TAGS_LEN";
    /// Whether tags are compressed (bool).
    pub const TAGS_COMPRESSED: &[u8] = b"hfile.TAGS_COMPRESSED";
    /// Largest sequence id (i64); present when cells carry sequence ids.
    pub const MAX_MEMSTORE_TS_KEY: &[u8] = b"MAX_MEMSTORE_TS_KEY";
    /// 1 when cells carry sequence ids (i32).
    pub const KEY_VALUE_VERSION: &[u8] = b"KEY_VALUE_VERSION";
    /// Data block encoding name, when not NONE.
    pub const DATA_BLOCK_ENCODING: &[u8] = b"DATA_BLOCK_ENCODING";

    /// Written by HBase's store layer (`HStoreFile`): time range (two i64).
    pub const TIMERANGE: &[u8] = b"TIMERANGE";
    /// Earliest Put timestamp (i64).
    pub const EARLIEST_PUT_TS: &[u8] = b"EARLIEST_PUT_TS";
    /// Bloom filter type name.
    pub const BLOOM_FILTER_TYPE: &[u8] = b"BLOOM_FILTER_TYPE";
    /// Last key added to the general Bloom filter.
    pub const LAST_BLOOM_KEY: &[u8] = b"LAST_BLOOM_KEY";
    /// Number of DeleteFamily/DeleteFamilyVersion cells (i64).
    pub const DELETE_FAMILY_COUNT: &[u8] = b"DELETE_FAMILY_COUNT";
    /// Largest sequence id of the edits in the file (i64).
    pub const MAX_SEQ_ID_KEY: &[u8] = b"MAX_SEQ_ID_KEY";
    /// Whether the file came from a major compaction (bool).
    pub const MAJOR_COMPACTION_KEY: &[u8] = b"MAJOR_COMPACTION_KEY";
}

#[derive(Clone, PartialEq, Message)]
struct BytesBytesPair {
    #[prost(bytes = "vec", required, tag = "1")]
    first: Vec<u8>,
    #[prost(bytes = "vec", required, tag = "2")]
    second: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
struct FileInfoProto {
    #[prost(message, repeated, tag = "1")]
    map_entry: Vec<BytesBytesPair>,
}

/// The file info map, ordered by key bytes as HBase orders it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileInfo {
    map: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl FileInfo {
    /// An empty map.
    pub fn new() -> FileInfo {
        FileInfo::default()
    }

    /// Sets a key.
    pub fn insert(&mut self, key: &[u8], value: impl Into<Vec<u8>>) {
        self.map.insert(key.to_vec(), value.into());
    }

    /// A value.
    pub fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.map.get(key).map(Vec::as_slice)
    }

    /// Every entry in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.map.iter().map(|(k, v)| (k.as_slice(), v.as_slice()))
    }

    /// Entries.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// A big-endian i32 value.
    pub fn get_i32(&self, key: &[u8]) -> Option<i32> {
        self.get(key)
            .and_then(|v| v.try_into().ok())
            .map(i32::from_be_bytes)
    }

    /// A big-endian i64 value.
    pub fn get_i64(&self, key: &[u8]) -> Option<i64> {
        self.get(key)
            .and_then(|v| v.try_into().ok())
            .map(i64::from_be_bytes)
    }

    /// The block body.
    pub fn encode(&self) -> Vec<u8> {
        let proto = FileInfoProto {
            map_entry: self
                .map
                .iter()
                .map(|(k, v)| BytesBytesPair {
                    first: k.clone(),
                    second: v.clone(),
                })
                .collect(),
        };
        let mut out = PB_MAGIC.to_vec();
        proto.encode_length_delimited(&mut out).expect("Vec grows");
        out
    }

    /// Parses a block body.
    pub fn decode(body: &[u8], path: &Arc<str>, offset: u64) -> Result<FileInfo> {
        let err = |reason: String| HFileError::corrupt(path, "FILE_INFO block", offset, reason);
        let rest = body.strip_prefix(PB_MAGIC.as_slice()).ok_or_else(|| {
            err("does not start with PBUF (pre-0.96 Writable file info is not supported)".into())
        })?;
        let proto = FileInfoProto::decode_length_delimited(rest)
            .map_err(|e| err(format!("protobuf does not parse: {e}")))?;
        let mut info = FileInfo::new();
        for e in proto.map_entry {
            info.map.insert(e.first, e.second);
        }
        Ok(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_sorted() {
        let mut f = FileInfo::new();
        f.insert(b"b", vec![2]);
        f.insert(keys::AVG_KEY_LEN, 17i32.to_be_bytes().to_vec());
        f.insert(b"a", vec![1]);
        let body = f.encode();
        assert_eq!(&body[..4], b"PBUF");
        let path: Arc<str> = "x".into();
        let back = FileInfo::decode(&body, &path, 0).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.get_i32(keys::AVG_KEY_LEN), Some(17));
        let keys: Vec<&[u8]> = back.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, [&b"a"[..], b"b", b"hfile.AVG_KEY_LEN"]);
        assert!(FileInfo::decode(b"XXXX", &path, 0).is_err());
        assert!(FileInfo::decode(b"PBUF\x05\x0a", &path, 0).is_err());
    }
}
