//! The fixed file trailer of HFile v3: the last 4096 bytes of the file.
//!
//! `TRABLK"$` magic, a length-delimited `FileTrailerProto`, zero padding, and a final big-endian
//! int holding the version: major in the low 24 bits, minor in the top 8 (3 and 3 for files
//! HBase 2.6 writes; minor 3 means index keys may be shortened "fake" keys).

use std::sync::Arc;

use prost::Message;

use crate::block_type::{BlockType, MAGIC_LEN};
use crate::compression::Compression;
use crate::error::{HFileError, Result};

/// Bytes of a v3 trailer.
pub const TRAILER_SIZE: usize = 4096;
/// The major version cairn reads and writes.
pub const MAJOR_VERSION: u32 = 3;
/// The minor version HBase 2.6 writes.
pub const MINOR_VERSION: u32 = 3;

/// What HBase 2.6 writes for the default cell comparator, in HBase 1 form for compatibility.
pub const KV_COMPARATOR: &str = "org.apache.hadoop.hbase.KeyValue$KVComparator";

/// Comparator names that mean HBase's normal cell order (`FixedFileTrailer.getComparatorClass`).
const CELL_COMPARATOR_NAMES: [&str; 6] = [
    "org.apache.hadoop.hbase.KeyValue$KVComparator",
    "org.apache.hadoop.hbase.KeyValue$KeyComparator",
    "org.apache.hadoop.hbase.CellComparator",
    "org.apache.hadoop.hbase.CellComparatorImpl",
    "org.apache.hadoop.hbase.InnerStoreCellComparator",
    "org.apache.hadoop.hbase.CellComparatorImpl$InnerStoreCellComparator",
];

/// `hbase.pb.FileTrailerProto` from HBase's HFile.proto.
#[derive(Clone, PartialEq, Message)]
pub struct FileTrailerProto {
    /// Offset of the file info block.
    #[prost(uint64, optional, tag = "1")]
    pub file_info_offset: Option<u64>,
    /// Offset of the load-on-open section (the data index root).
    #[prost(uint64, optional, tag = "2")]
    pub load_on_open_data_offset: Option<u64>,
    /// Uncompressed bytes of the data index blocks, headers excluded.
    #[prost(uint64, optional, tag = "3")]
    pub uncompressed_data_index_size: Option<u64>,
    /// Uncompressed bytes of the file, as HBase counts them.
    #[prost(uint64, optional, tag = "4")]
    pub total_uncompressed_bytes: Option<u64>,
    /// Entries in the data index root.
    #[prost(uint32, optional, tag = "5")]
    pub data_index_count: Option<u32>,
    /// Entries in the meta index: the file's meta blocks.
    #[prost(uint32, optional, tag = "6")]
    pub meta_index_count: Option<u32>,
    /// Cells in the file.
    #[prost(uint64, optional, tag = "7")]
    pub entry_count: Option<u64>,
    /// Levels of the data index.
    #[prost(uint32, optional, tag = "8")]
    pub num_data_index_levels: Option<u32>,
    /// Offset of the first data block; 2^64 - 1 (HBase's -1) when there is none.
    #[prost(uint64, optional, tag = "9")]
    pub first_data_block_offset: Option<u64>,
    /// Offset of the last data block; 2^64 - 1 (HBase's -1) when there is none.
    #[prost(uint64, optional, tag = "10")]
    pub last_data_block_offset: Option<u64>,
    /// The cell comparator's Java class name.
    #[prost(string, optional, tag = "11")]
    pub comparator_class_name: Option<String>,
    /// `Compression.Algorithm` ordinal of every block.
    #[prost(uint32, optional, tag = "12")]
    pub compression_codec: Option<u32>,
    /// The wrapped data key of an encrypted file; cairn neither writes nor reads encrypted files.
    #[prost(bytes = "vec", optional, tag = "13")]
    pub encryption_key: Option<Vec<u8>>,
}

/// The trailer's contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trailer {
    /// Offset of the file info block.
    pub file_info_offset: u64,
    /// Offset of the data index root block: the start of the load-on-open section.
    pub load_on_open_data_offset: u64,
    /// Uncompressed bytes of all data index blocks (without headers).
    pub uncompressed_data_index_size: u64,
    /// Uncompressed bytes of the file, as HBase counts them.
    pub total_uncompressed_bytes: u64,
    /// Entries in the data index root.
    pub data_index_count: u32,
    /// Entries in the meta index: the file's meta blocks.
    pub meta_index_count: u32,
    /// Cells in the file.
    pub entry_count: u64,
    /// Levels of the data index (1 = root points at data blocks).
    pub num_data_index_levels: u32,
    /// Offset of the first data block, or `None` for a file without cells.
    pub first_data_block_offset: Option<u64>,
    /// Offset of the last data block, or `None` for a file without cells.
    pub last_data_block_offset: Option<u64>,
    /// The cell comparator's Java class name as stored (HBase 2.6 writes [`KV_COMPARATOR`]).
    pub comparator_class_name: String,
    /// Compression of every block.
    pub compression: Compression,
    /// Minor version from the trailer's last int (3: index keys may be shortened fake keys).
    pub minor_version: u32,
}

/// HBase stores "unset" (-1) in these uint64 fields as 2^64 - 1.
fn offset_field(v: Option<u64>) -> u64 {
    v.unwrap_or(u64::MAX)
}

impl Trailer {
    /// The 4096 trailer bytes.
    pub fn encode(&self) -> Vec<u8> {
        let proto = FileTrailerProto {
            file_info_offset: Some(self.file_info_offset),
            load_on_open_data_offset: Some(self.load_on_open_data_offset),
            uncompressed_data_index_size: Some(self.uncompressed_data_index_size),
            total_uncompressed_bytes: Some(self.total_uncompressed_bytes),
            data_index_count: Some(self.data_index_count),
            meta_index_count: Some(self.meta_index_count),
            entry_count: Some(self.entry_count),
            num_data_index_levels: Some(self.num_data_index_levels),
            first_data_block_offset: Some(offset_field(self.first_data_block_offset)),
            last_data_block_offset: Some(offset_field(self.last_data_block_offset)),
            comparator_class_name: Some(self.comparator_class_name.clone()),
            compression_codec: Some(self.compression.ordinal()),
            encryption_key: None,
        };
        let mut out = Vec::with_capacity(TRAILER_SIZE);
        out.extend_from_slice(BlockType::Trailer.magic());
        proto.encode_length_delimited(&mut out).expect("Vec grows");
        assert!(
            out.len() <= TRAILER_SIZE - 4,
            "trailer protobuf fits: it holds only scalars and a class name"
        );
        out.resize(TRAILER_SIZE - 4, 0);
        out.extend_from_slice(
            &((MAJOR_VERSION & 0x00FF_FFFF) | (self.minor_version << 24)).to_be_bytes(),
        );
        out
    }

    /// Parses the last `TRAILER_SIZE` bytes of a file of `file_len` bytes.
    pub fn decode(bytes: &[u8], file_len: u64, path: &Arc<str>) -> Result<Trailer> {
        let offset = file_len.saturating_sub(TRAILER_SIZE as u64);
        let err = |reason: String| HFileError::corrupt(path, "trailer", offset, reason);
        if bytes.len() < TRAILER_SIZE {
            return Err(err(format!(
                "the file has {file_len} bytes, fewer than the {TRAILER_SIZE}-byte HFile v3 trailer"
            )));
        }
        let bytes = &bytes[bytes.len() - TRAILER_SIZE..];
        let version = u32::from_be_bytes(bytes[TRAILER_SIZE - 4..].try_into().expect("4 bytes"));
        let (major, minor) = (version & 0x00FF_FFFF, version >> 24);
        if &bytes[..MAGIC_LEN] != BlockType::Trailer.magic() {
            return Err(err(format!(
                "not an HFile v3 trailer: magic is \"{}\", expected TRABLK\"$ (the version field reads {major}.{minor})",
                crate::cell::Escaped(&bytes[..MAGIC_LEN])
            )));
        }
        if major != MAJOR_VERSION {
            return Err(HFileError::Unsupported {
                path: path.clone(),
                what: format!("trailer at offset {offset}: HFile version {major}.{minor}; cairn reads version 3 only"),
            });
        }
        let p = FileTrailerProto::decode_length_delimited(&bytes[MAGIC_LEN..TRAILER_SIZE - 4])
            .map_err(|e| err(format!("protobuf does not parse: {e}")))?;
        let need = |name: &str, v: Option<u64>| v.ok_or_else(|| err(format!("{name} is missing")));
        let compression = Compression::from_ordinal(p.compression_codec.unwrap_or(2))
            .map_err(|e| err(e.to_string()))?;
        if p.encryption_key.is_some() {
            return Err(HFileError::Unsupported {
                path: path.clone(),
                what: "the file is encrypted; cairn does not read encrypted HFiles".into(),
            });
        }
        let known_offset = |v: Option<u64>| v.filter(|&o| o != u64::MAX);
        let t = Trailer {
            file_info_offset: need("file_info_offset", p.file_info_offset)?,
            load_on_open_data_offset: need("load_on_open_data_offset", p.load_on_open_data_offset)?,
            uncompressed_data_index_size: p.uncompressed_data_index_size.unwrap_or(0),
            total_uncompressed_bytes: p.total_uncompressed_bytes.unwrap_or(0),
            data_index_count: p.data_index_count.unwrap_or(0),
            meta_index_count: p.meta_index_count.unwrap_or(0),
            entry_count: p.entry_count.unwrap_or(0),
            num_data_index_levels: p.num_data_index_levels.unwrap_or(1),
            first_data_block_offset: known_offset(p.first_data_block_offset),
            last_data_block_offset: known_offset(p.last_data_block_offset),
            comparator_class_name: p.comparator_class_name.unwrap_or_default(),
            compression,
            minor_version: minor,
        };
        let body_end = offset;
        if t.load_on_open_data_offset > body_end
            || t.file_info_offset > body_end
            || t.file_info_offset < t.load_on_open_data_offset
        {
            return Err(err(format!(
                "offsets point outside the file: load-on-open {}, file info {}, trailer at {body_end}",
                t.load_on_open_data_offset, t.file_info_offset
            )));
        }
        if t.num_data_index_levels == 0 || t.num_data_index_levels > 16 {
            return Err(err(format!(
                "{} data index levels (1 to 16 expected)",
                t.num_data_index_levels
            )));
        }
        Ok(t)
    }

    /// True when the stored comparator is HBase's normal cell order.
    pub fn uses_cell_comparator(&self) -> bool {
        CELL_COMPARATOR_NAMES.contains(&self.comparator_class_name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Trailer {
        Trailer {
            file_info_offset: 1000,
            load_on_open_data_offset: 900,
            uncompressed_data_index_size: 50,
            total_uncompressed_bytes: 6000,
            data_index_count: 3,
            meta_index_count: 0,
            entry_count: 77,
            num_data_index_levels: 1,
            first_data_block_offset: Some(0),
            last_data_block_offset: Some(600),
            comparator_class_name: KV_COMPARATOR.into(),
            compression: Compression::Gz,
            minor_version: 3,
        }
    }

    #[test]
    fn round_trips_with_hbase_framing() {
        let t = sample();
        let b = t.encode();
        assert_eq!(b.len(), TRAILER_SIZE);
        assert_eq!(&b[..8], b"TRABLK\"$");
        assert_eq!(&b[TRAILER_SIZE - 4..], &[3, 0, 0, 3]);
        let path: Arc<str> = "f".into();
        assert_eq!(
            Trailer::decode(&b, 1100 + TRAILER_SIZE as u64, &path).unwrap(),
            t
        );
        let empty = Trailer {
            first_data_block_offset: None,
            last_data_block_offset: None,
            ..t
        };
        let b = empty.encode();
        assert_eq!(
            Trailer::decode(&b, 1100 + TRAILER_SIZE as u64, &path).unwrap(),
            empty
        );
    }

    #[test]
    fn garbage_is_a_named_error() {
        let path: Arc<str> = "f".into();
        let mut b = sample().encode();
        b[TRAILER_SIZE - 4..].copy_from_slice(&[2, 0, 0, 2]);
        assert!(Trailer::decode(&b, 5000, &path)
            .unwrap_err()
            .to_string()
            .contains("version 2"));
        let mut b = sample().encode();
        b[0] = b'X';
        assert!(Trailer::decode(&b, 5000, &path)
            .unwrap_err()
            .to_string()
            .contains("magic"));
        let mut b = sample().encode();
        b[8] = 0xFF;
        assert!(Trailer::decode(&b, 5000, &path).is_err());
        assert!(Trailer::decode(&b[..100], 100, &path)
            .unwrap_err()
            .to_string()
            .contains("fewer than"));
    }
}
