//! Table and column-family descriptors, with HBase's attribute names and defaults.

use std::fmt;
use std::str::FromStr;

use cairn_checksum::ChecksumType;
use cairn_hfile::encoding::DataBlockEncoding;
use cairn_hfile::{BloomType, Compression};

use crate::error::{RegionError, Result};
use crate::names;

/// HBase's `HConstants.FOREVER`: a TTL of this many seconds means "never expires".
pub const FOREVER: u32 = i32::MAX as u32;

/// `hbase.hregion.memstore.flush.size`.
pub const DEFAULT_MEMSTORE_FLUSH_SIZE: u64 = 128 * 1024 * 1024;

/// A table name: namespace and qualifier (`ns:table`; the namespace `default` is implied).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableName {
    /// The namespace (`default` when the name had none); the directory under `<root>/data/`.
    pub namespace: String,
    /// The table's name within its namespace; its directory under the namespace's.
    pub qualifier: String,
}

impl TableName {
    /// Parses `table` or `namespace:table` as HBase's `TableName.valueOf(String)` does: the
    /// first `:` ends the namespace, an empty namespace is `default`, and both parts must pass
    /// HBase's name rules ([`names`]).
    pub fn parse(name: &str) -> Result<TableName> {
        match name.split_once(':') {
            Some((ns, q)) => TableName::from_parts(ns.as_bytes(), q.as_bytes()),
            None => TableName::from_parts(b"", name.as_bytes()),
        }
    }

    /// A name as a client or a file spells it in bytes, as HBase's `TableName.valueOf(byte[])`
    /// reads it (the Thrift gateway's table names): the last `:` ends the namespace.
    pub fn from_full_name(name: &[u8]) -> Result<TableName> {
        match name.iter().rposition(|&b| b == b':') {
            // Unlike a protobuf name, a spelled-out empty namespace is not `default`.
            Some(0) => Err(RegionError::IllegalArgument(
                "Namespace name must not be empty".into(),
            )),
            Some(i) => TableName::from_parts(&name[..i], &name[i + 1..]),
            None => TableName::from_parts(b"", name),
        }
    }

    /// A namespace and qualifier as a protobuf `TableName` carries them
    /// (`TableName.valueOf(byte[], byte[])`): an empty namespace is `default`; the legacy
    /// catalog names are refused, then the namespace and the qualifier are checked.
    pub fn from_parts(namespace: &[u8], qualifier: &[u8]) -> Result<TableName> {
        let namespace: &[u8] = if namespace.is_empty() {
            b"default"
        } else {
            namespace
        };
        names::check_legacy_qualifier(&String::from_utf8_lossy(qualifier))?;
        Ok(TableName {
            namespace: names::check_namespace(namespace)?,
            qualifier: names::check_qualifier(qualifier)?,
        })
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace == "default" {
            f.write_str(&self.qualifier)
        } else {
            write!(f, "{}:{}", self.namespace, self.qualifier)
        }
    }
}

/// A column family's schema (`ColumnFamilyDescriptor`), with HBase's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnFamilyDescriptor {
    /// The family name: the store's directory name and every cell's family bytes.
    pub name: Vec<u8>,
    /// `VERSIONS` (1).
    pub max_versions: u32,
    /// `MIN_VERSIONS` (0): kept even when past the TTL.
    pub min_versions: u32,
    /// `TTL` in seconds ([`FOREVER`]).
    pub ttl_seconds: u32,
    /// `BLOCKSIZE` (65536).
    pub block_size: usize,
    /// `BLOOMFILTER` (ROW).
    pub bloom_type: BloomType,
    /// `COMPRESSION` (NONE).
    pub compression: Compression,
    /// `hbase.hstore.checksum.algorithm` (CRC32C).
    pub checksum_type: ChecksumType,
    /// `hbase.hstore.bytes.per.checksum` (16384).
    pub bytes_per_checksum: u32,
    /// `IN_MEMORY` (false): blocks go to the in-memory share of the cache.
    pub in_memory: bool,
    /// `BLOCKCACHE` (true): data blocks read by scans and gets are cached.
    pub block_cache_enabled: bool,
    /// `DATA_BLOCK_ENCODING` (NONE): how flushes and compactions write data blocks. Files of
    /// any encoding cairn reads are read whatever the family says, as in HBase, where changing
    /// the encoding applies to files written after it.
    pub data_block_encoding: DataBlockEncoding,
    /// `COMPRESS_TAGS` (true): encoded store files compress their cells' tags with a
    /// dictionary per block.
    pub compress_tags: bool,
}

impl ColumnFamilyDescriptor {
    /// A family with HBase's defaults. Family names are printable and not empty.
    pub fn new(name: impl AsRef<[u8]>) -> ColumnFamilyDescriptor {
        ColumnFamilyDescriptor {
            name: name.as_ref().to_vec(),
            max_versions: 1,
            min_versions: 0,
            ttl_seconds: FOREVER,
            block_size: 64 * 1024,
            bloom_type: BloomType::Row,
            compression: Compression::None,
            checksum_type: ChecksumType::Crc32C,
            bytes_per_checksum: 16 * 1024,
            in_memory: false,
            block_cache_enabled: true,
            data_block_encoding: DataBlockEncoding::None,
            compress_tags: true,
        }
    }

    /// Sets `VERSIONS`: how many versions of a column reads return and major compactions keep.
    pub fn max_versions(mut self, n: u32) -> Self {
        self.max_versions = n;
        self
    }
    /// Sets `MIN_VERSIONS`: versions kept past the TTL (at most `VERSIONS`, see
    /// [`validate`](Self::validate)).
    pub fn min_versions(mut self, n: u32) -> Self {
        self.min_versions = n;
        self
    }
    /// Sets `TTL` in seconds; [`FOREVER`] (the default) disables expiry.
    pub fn ttl_seconds(mut self, s: u32) -> Self {
        self.ttl_seconds = s;
        self
    }
    /// Sets `BLOOMFILTER` for store files written from now on (ROW lets gets skip files).
    pub fn bloom_type(mut self, b: BloomType) -> Self {
        self.bloom_type = b;
        self
    }
    /// Sets `COMPRESSION` for store files written from now on; existing files keep theirs.
    pub fn compression(mut self, c: Compression) -> Self {
        self.compression = c;
        self
    }
    /// Sets `BLOCKSIZE` in bytes: the target size of a data block before compression.
    pub fn block_size(mut self, n: usize) -> Self {
        self.block_size = n;
        self
    }

    /// TTL in milliseconds, `None` for FOREVER (`HStore.determineTTLFromFamily`).
    pub fn ttl_ms(&self) -> Option<i64> {
        (self.ttl_seconds < FOREVER).then_some(self.ttl_seconds as i64 * 1000)
    }

    /// Checks what HBase's `TableDescriptorChecker` checks.
    pub fn validate(&self) -> Result<()> {
        names::check_family(&self.name)?;
        let name = String::from_utf8_lossy(&self.name);
        if self.max_versions == 0 {
            return Err(RegionError::InvalidArgument(format!(
                "family {name}: VERSIONS must be positive"
            )));
        }
        if self.min_versions > self.max_versions {
            return Err(RegionError::InvalidArgument(format!(
                "family {name}: MIN_VERSIONS ({}) exceeds VERSIONS ({})",
                self.min_versions, self.max_versions
            )));
        }
        if self.ttl_seconds == 0 {
            return Err(RegionError::InvalidArgument(format!(
                "family {name}: TTL must be positive"
            )));
        }
        if self.block_size < 1024 || self.block_size > 16 * 1024 * 1024 {
            return Err(RegionError::InvalidArgument(format!(
                "family {name}: BLOCKSIZE {} is outside 1 KiB..16 MiB",
                self.block_size
            )));
        }
        if !self.compression.is_supported() {
            return Err(RegionError::InvalidArgument(format!(
                "family {name}: compression {} is not supported",
                self.compression
            )));
        }
        if self.bytes_per_checksum == 0 {
            return Err(RegionError::InvalidArgument(format!(
                "family {name}: bytes per checksum must be positive"
            )));
        }
        Ok(())
    }

    /// The schema as HBase's attribute map (`VERSIONS`, `TTL`, …), values as HBase prints them.
    pub fn attributes(&self) -> Vec<(String, String)> {
        vec![
            ("BLOCKCACHE".into(), self.block_cache_enabled.to_string()),
            ("BLOCKSIZE".into(), self.block_size.to_string()),
            ("BLOOMFILTER".into(), self.bloom_type.name().into()),
            ("COMPRESSION".into(), self.compression.name().into()),
            (
                "DATA_BLOCK_ENCODING".into(),
                self.data_block_encoding.name().into(),
            ),
            ("COMPRESS_TAGS".into(), self.compress_tags.to_string()),
            ("IN_MEMORY".into(), self.in_memory.to_string()),
            ("KEEP_DELETED_CELLS".into(), "FALSE".into()),
            ("MIN_VERSIONS".into(), self.min_versions.to_string()),
            ("TTL".into(), self.ttl_seconds.to_string()),
            ("VERSIONS".into(), self.versions_attr()),
        ]
    }

    fn versions_attr(&self) -> String {
        self.max_versions.to_string()
    }

    /// Applies one HBase attribute or configuration entry; unknown names are ignored, as HBase
    /// keeps them as opaque metadata.
    pub fn set_attribute(&mut self, key: &str, value: &str) -> Result<()> {
        let name = String::from_utf8_lossy(&self.name).into_owned();
        let bad = |what: &str| {
            RegionError::InvalidArgument(format!(
                "family {name}: {key} = {value:?} is not a valid {what}"
            ))
        };
        let v = value.trim();
        match key.to_ascii_uppercase().as_str() {
            "VERSIONS" => self.max_versions = v.parse().map_err(|_| bad("version count"))?,
            "MIN_VERSIONS" => self.min_versions = v.parse().map_err(|_| bad("version count"))?,
            "TTL" => {
                self.ttl_seconds = if v.eq_ignore_ascii_case("FOREVER") {
                    FOREVER
                } else {
                    let s: i64 = v.parse().map_err(|_| bad("TTL in seconds"))?;
                    if s <= 0 || s >= FOREVER as i64 {
                        FOREVER
                    } else {
                        s as u32
                    }
                }
            }
            "BLOCKSIZE" => self.block_size = v.parse().map_err(|_| bad("block size"))?,
            "BLOOMFILTER" => self.bloom_type = v.parse().map_err(|_| bad("Bloom filter type"))?,
            "COMPRESSION" => self.compression = v.parse().map_err(|_| bad("compression"))?,
            "IN_MEMORY" => self.in_memory = parse_bool(v).ok_or_else(|| bad("boolean"))?,
            "COMPRESS_TAGS" => self.compress_tags = parse_bool(v).ok_or_else(|| bad("boolean"))?,
            "BLOCKCACHE" => {
                self.block_cache_enabled = parse_bool(v).ok_or_else(|| bad("boolean"))?
            }
            "HBASE.HSTORE.CHECKSUM.ALGORITHM" => {
                self.checksum_type = ChecksumType::from_str(v).map_err(|_| bad("checksum type"))?
            }
            "HBASE.HSTORE.BYTES.PER.CHECKSUM" => {
                self.bytes_per_checksum = v.parse().map_err(|_| bad("chunk size"))?
            }
            "KEEP_DELETED_CELLS" if !v.eq_ignore_ascii_case("false") => {
                return Err(RegionError::Unsupported(format!(
                    "family {name}: KEEP_DELETED_CELLS = {v} (only FALSE is supported)"
                )))
            }
            "DATA_BLOCK_ENCODING" => {
                self.data_block_encoding =
                    DataBlockEncoding::from_name(v.to_ascii_uppercase().as_bytes())
                                                .ok_or_else(|| {
                            RegionError::Unsupported(format!(
                    "family {name}: DATA_BLOCK_ENCODING = {v} (cairn supports NONE, PREFIX, DIFF, FAST_DIFF and ROW_INDEX_V1)"
                ))
                        })?
            }
            _ => {}
        }
        Ok(())
    }
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// A table's schema (`TableDescriptor`).
#[derive(Clone, Debug, PartialEq)]
pub struct TableDescriptor {
    /// The table's name.
    pub name: TableName,
    /// Its column families, one store each per region, in the order they were added.
    pub families: Vec<ColumnFamilyDescriptor>,
    /// `MEMSTORE_FLUSHSIZE` when the table sets it; `None`: the server's
    /// `hbase.hregion.memstore.flush.size` (128 MiB unless configured), read when the region
    /// flushes, as HBase reads it.
    pub memstore_flush_size: Option<u64>,
    /// `DURABILITY`: what a mutation that says USE_DEFAULT gets (SYNC_WAL).
    pub durability: cairn_wal::Durability,
    /// The table's other attributes by HBase's names, kept as given: `SPLIT_POLICY`,
    /// `MAX_FILESIZE`, `SPLIT_ENABLED`, `MERGE_ENABLED` are read by splits and merges.
    pub values: std::collections::BTreeMap<String, String>,
}

impl TableDescriptor {
    /// A table with no families yet (add them with [`with_family`](Self::with_family)), HBase's
    /// default flush size and SYNC_WAL durability.
    pub fn new(name: TableName) -> TableDescriptor {
        TableDescriptor {
            name,
            families: Vec::new(),
            memstore_flush_size: None,
            durability: cairn_wal::Durability::SyncWal,
            values: Default::default(),
        }
    }

    /// The flush size of the table's regions: its own `MEMSTORE_FLUSHSIZE`, else `server`'s
    /// (`hbase.hregion.memstore.flush.size`).
    pub fn flush_size(&self, server: u64) -> u64 {
        self.memstore_flush_size.unwrap_or(server)
    }

    /// Sets a table attribute by HBase's name (`SPLIT_POLICY`, `MAX_FILESIZE`, ...).
    pub fn with_value(mut self, key: &str, value: &str) -> TableDescriptor {
        self.values.insert(key.to_string(), value.to_string());
        self
    }

    /// `SPLIT_POLICY`: the split policy class this table asks for, over the server's.
    pub fn split_policy(&self) -> Option<&str> {
        self.values.get("SPLIT_POLICY").map(String::as_str)
    }

    /// `MAX_FILESIZE` when set and positive: the table's split size, over
    /// `hbase.hregion.max.filesize`.
    pub fn max_file_size(&self) -> Option<u64> {
        self.values
            .get("MAX_FILESIZE")
            .and_then(|v| v.trim().parse::<i64>().ok())
            .filter(|&n| n > 0)
            .map(|n| n as u64)
    }

    /// `SPLIT_ENABLED` (true unless set to false).
    pub fn split_enabled(&self) -> bool {
        self.flag("SPLIT_ENABLED")
    }

    /// `MERGE_ENABLED` (true unless set to false).
    pub fn merge_enabled(&self) -> bool {
        self.flag("MERGE_ENABLED")
    }

    fn flag(&self, key: &str) -> bool {
        self.values
            .get(key)
            .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false"))
    }

    /// Adds a family; duplicates are caught by [`validate`](Self::validate), not here.
    pub fn with_family(mut self, family: ColumnFamilyDescriptor) -> TableDescriptor {
        self.families.push(family);
        self
    }

    /// The family named `name`; `None` if the table has none by that name.
    pub fn family(&self, name: &[u8]) -> Option<&ColumnFamilyDescriptor> {
        self.families.iter().find(|f| f.name == name)
    }

    /// Checks a table before it is created: at least one family, each valid
    /// ([`ColumnFamilyDescriptor::validate`]), no name twice.
    pub fn validate(&self) -> Result<()> {
        // The fields are public: a name built without `TableName::parse` is checked here.
        TableName::from_parts(
            self.name.namespace.as_bytes(),
            self.name.qualifier.as_bytes(),
        )?;
        if self.families.is_empty() {
            return Err(RegionError::InvalidArgument(format!(
                "table {} must have at least one column family",
                self.name
            )));
        }
        for (i, f) in self.families.iter().enumerate() {
            f.validate()?;
            // Two families whose names differ only in bytes that are not UTF-8 would share one
            // directory (HBase names it with `Bytes.toString`, as cairn does).
            let dir = String::from_utf8_lossy(&f.name);
            if self.families[..i]
                .iter()
                .any(|g| String::from_utf8_lossy(&g.name) == dir)
            {
                return Err(RegionError::InvalidArgument(format!(
                    "table {}: column family {:?} given twice",
                    self.name,
                    String::from_utf8_lossy(&f.name)
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_follow_hbase_rules() {
        assert_eq!(TableName::parse("t1").unwrap().namespace, "default");
        let t = TableName::parse("ns:t-1.x").unwrap();
        assert_eq!(
            (t.namespace.as_str(), t.qualifier.as_str()),
            ("ns", "t-1.x")
        );
        assert_eq!(t.to_string(), "ns:t-1.x");
        for bad in ["", ":", "a b", ".t", "-t", "n-s:t", "t/x"] {
            assert!(TableName::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn attributes_round_trip_and_bad_values_are_named() {
        let mut f = ColumnFamilyDescriptor::new("cf")
            .max_versions(3)
            .ttl_seconds(60);
        f.data_block_encoding = DataBlockEncoding::FastDiff;
        f.compress_tags = false;
        let mut g = ColumnFamilyDescriptor::new("cf");
        for (k, v) in f.attributes() {
            g.set_attribute(&k, &v).unwrap();
        }
        assert_eq!(f, g);
        let e = f.set_attribute("VERSIONS", "lots").unwrap_err().to_string();
        assert!(e.contains("cf") && e.contains("VERSIONS"), "{e}");
        f.set_attribute("TTL", "FOREVER").unwrap();
        assert_eq!(f.ttl_ms(), None);
        let e = f
            .set_attribute("DATA_BLOCK_ENCODING", "PREFIX_TREE")
            .unwrap_err();
        assert!(matches!(e, RegionError::Unsupported(_)), "{e}");
        f.set_attribute("DATA_BLOCK_ENCODING", "none").unwrap();
        assert_eq!(f.data_block_encoding, DataBlockEncoding::None);
        // Deleted cells are never kept: a family asking for them is refused by name.
        f.set_attribute("KEEP_DELETED_CELLS", "false").unwrap();
        for v in ["TRUE", "TTL"] {
            let e = f.set_attribute("keep_deleted_cells", v).unwrap_err();
            assert!(
                matches!(&e, RegionError::Unsupported(m) if m.contains("KEEP_DELETED_CELLS")),
                "{e}"
            );
        }
        assert!(ColumnFamilyDescriptor::new("a:b").validate().is_err());
        assert!(ColumnFamilyDescriptor::new("x")
            .min_versions(2)
            .validate()
            .is_err());
    }
}
