//! HBase's directory layout and its small metadata files.
//!
//! `<root>/data/<namespace>/<table>/.tabledesc/.tableinfo.<seq>.<len>` holds the table schema
//! (`PBUF` + `TableSchema`), `<table>/<encoded region>/.regioninfo` the region's boundaries
//! (`PBUF` + delimited `RegionInfo`), `<region>/<family>/<32 hex>` its store files, written
//! first under `<region>/.tmp/<family>/` and renamed in. The WAL lives in `<root>/WALs/`.

use std::path::{Path, PathBuf};

use cairn_fs::{FileSystem, LocalFileSystem};

/// The local filesystem, for callers of this module that only ever work on local disk.
pub const LOCAL: LocalFileSystem = LocalFileSystem;

use md5::{Digest, Md5};
use prost::Message;

use crate::descriptor::{ColumnFamilyDescriptor, TableDescriptor, TableName};
use crate::error::{RegionError, Result};
use crate::names;

const PB_MAGIC: &[u8] = b"PBUF";
/// The file in a region directory holding its [`RegionInfo`] (HBase's
/// `HRegionFileSystem.REGION_INFO_FILE`); its presence is what makes a directory a region.
pub const REGION_INFO_FILE: &str = ".regioninfo";
/// The directory in a table directory holding its `.tableinfo.*` schema files.
pub const TABLE_DESC_DIR: &str = ".tabledesc";
/// Where a region writes store files before renaming them into `<family>/`; whatever is left
/// there at open belonged to a flush or compaction that did not finish, and is deleted.
pub const TMP_DIR: &str = ".tmp";
/// cairn's own marker for a disabled table (HBase keeps this state in hbase:meta).
pub const DISABLED_MARKER: &str = ".cairn-disabled";

/// `<root>/data`: the namespaces' directories (HBase's `HConstants.BASE_NAMESPACE_DIR`).
pub fn data_dir(root: &Path) -> PathBuf {
    root.join("data")
}

/// `<root>/WALs`: every server's WAL directory when `hbase.wal.dir` is not set.
pub fn wal_dir(root: &Path) -> PathBuf {
    root.join("WALs")
}

/// `<root>/data/<namespace>/<table>`; tables in no namespace are under `data/default/`.
pub fn table_dir(root: &Path, table: &TableName) -> PathBuf {
    data_dir(root).join(&table.namespace).join(&table.qualifier)
}

/// A new store file name: 32 hex digits, as HBase's `UUID` without dashes.
pub fn unique_file_name() -> String {
    format!("{:032x}", rand::random::<u128>())
}

mod pb {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TableNamePb {
        #[prost(bytes = "vec", required, tag = "1")]
        pub namespace: Vec<u8>,
        #[prost(bytes = "vec", required, tag = "2")]
        pub qualifier: Vec<u8>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BytesBytesPair {
        #[prost(bytes = "vec", required, tag = "1")]
        pub first: Vec<u8>,
        #[prost(bytes = "vec", required, tag = "2")]
        pub second: Vec<u8>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NameStringPair {
        #[prost(string, required, tag = "1")]
        pub name: String,
        #[prost(string, required, tag = "2")]
        pub value: String,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ColumnFamilySchema {
        #[prost(bytes = "vec", required, tag = "1")]
        pub name: Vec<u8>,
        #[prost(message, repeated, tag = "2")]
        pub attributes: Vec<BytesBytesPair>,
        #[prost(message, repeated, tag = "3")]
        pub configuration: Vec<NameStringPair>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TableSchema {
        #[prost(message, optional, tag = "1")]
        pub table_name: Option<TableNamePb>,
        #[prost(message, repeated, tag = "2")]
        pub attributes: Vec<BytesBytesPair>,
        #[prost(message, repeated, tag = "3")]
        pub column_families: Vec<ColumnFamilySchema>,
        #[prost(message, repeated, tag = "4")]
        pub configuration: Vec<NameStringPair>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct RegionInfoPb {
        #[prost(uint64, required, tag = "1")]
        pub region_id: u64,
        #[prost(message, required, tag = "2")]
        pub table_name: TableNamePb,
        #[prost(bytes = "vec", optional, tag = "3")]
        pub start_key: Option<Vec<u8>>,
        #[prost(bytes = "vec", optional, tag = "4")]
        pub end_key: Option<Vec<u8>>,
        #[prost(bool, optional, tag = "5")]
        pub offline: Option<bool>,
        #[prost(bool, optional, tag = "6")]
        pub split: Option<bool>,
        #[prost(int32, optional, tag = "7")]
        pub replica_id: Option<i32>,
    }
}

/// A region's identity and key range `[start_key, end_key)` (empty = unbounded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionInfo {
    /// The table the region belongs to.
    pub table: TableName,
    /// First row of the region, inclusive; empty for the table's first region.
    pub start_key: Vec<u8>,
    /// Row the next region starts at, exclusive; empty for the table's last region.
    pub end_key: Vec<u8>,
    /// HBase's region id: the creation time in ms, shared by the regions of one create; part of the
    /// region name and so of the encoded name.
    pub region_id: u64,
    /// The 32-hex MD5 of the region name (`RegionInfo.encodeRegionName`); the directory name.
    pub encoded_name: String,
    /// HBase's `offline`: the region is not to be opened (a split parent, or a parent of a
    /// merge, kept until no child refers to its files).
    pub offline: bool,
    /// HBase's `split`: the region was split into two daughters.
    pub split: bool,
}

impl RegionInfo {
    /// A region of `table` over `[start_key, end_key)`, its encoded name computed as HBase computes
    /// it, so a directory HBase wrote is found under the same name.
    pub fn new(table: TableName, start_key: &[u8], end_key: &[u8], region_id: u64) -> RegionInfo {
        // `<table>,<startKey>,<regionId>` hashed, as `RegionInfo.createRegionName` does.
        let mut name = table.to_string().into_bytes();
        name.push(b',');
        name.extend_from_slice(start_key);
        name.push(b',');
        name.extend_from_slice(region_id.to_string().as_bytes());
        let digest = Md5::digest(&name);
        let encoded_name = digest.iter().map(|b| format!("{b:02x}")).collect();
        RegionInfo {
            table,
            start_key: start_key.to_vec(),
            end_key: end_key.to_vec(),
            region_id,
            encoded_name,
            offline: false,
            split: false,
        }
    }

    /// Whether `row` is in `[start_key, end_key)`, an empty bound being open (unsigned byte order,
    /// as HBase compares rows).
    #[inline]
    pub fn contains_row(&self, row: &[u8]) -> bool {
        use cairn_cell::compare_bytes;
        use std::cmp::Ordering::Less;
        (self.start_key.is_empty() || compare_bytes(row, &self.start_key) != Less)
            && (self.end_key.is_empty() || compare_bytes(row, &self.end_key) == Less)
    }

    /// HBase's region name (`RegionInfo.getRegionName`), `<table>,<start>,<id>.<encoded>.`, with
    /// the start key's bytes as they are: what clients name the region by in a request's
    /// `RegionSpecifier`. The start key may hold any byte, `,` and `.` included, so the name is
    /// compared whole, never split.
    pub fn region_name_bytes(&self) -> Vec<u8> {
        let id = self.region_id.to_string();
        let table = self.table.to_string();
        let mut name = Vec::with_capacity(
            table.len() + self.start_key.len() + id.len() + self.encoded_name.len() + 4,
        );
        name.extend_from_slice(table.as_bytes());
        name.push(b',');
        name.extend_from_slice(&self.start_key);
        name.push(b',');
        name.extend_from_slice(id.as_bytes());
        name.push(b'.');
        name.extend_from_slice(self.encoded_name.as_bytes());
        name.push(b'.');
        name
    }

    /// `<table>,<start>,<id>.<encoded>.` for messages.
    pub fn region_name(&self) -> String {
        format!(
            "{},{},{}.{}.",
            self.table,
            String::from_utf8_lossy(&self.start_key),
            self.region_id,
            self.encoded_name
        )
    }

    /// The `.regioninfo` bytes: `PBUF` and a length-delimited `RegionInfo` message, as HBase's
    /// `RegionInfo.toDelimitedByteArray` writes them (replica 0).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = PB_MAGIC.to_vec();
        self.to_pb()
            .encode_length_delimited(&mut out)
            .expect("vec grows");
        out
    }

    /// `RegionInfo.toByteArray`: `PBUF` and the message, not length-delimited (meta's
    /// `info:regioninfo`, `info:splitA`/`splitB` and `info:merge*` values).
    pub fn to_byte_array(&self) -> Vec<u8> {
        let mut out = PB_MAGIC.to_vec();
        self.to_pb().encode(&mut out).expect("vec grows");
        out
    }

    fn to_pb(&self) -> pb::RegionInfoPb {
        pb::RegionInfoPb {
            region_id: self.region_id,
            table_name: pb::TableNamePb {
                namespace: self.table.namespace.as_bytes().to_vec(),
                qualifier: self.table.qualifier.as_bytes().to_vec(),
            },
            start_key: Some(self.start_key.clone()),
            end_key: Some(self.end_key.clone()),
            offline: Some(self.offline),
            split: Some(self.split),
            replica_id: Some(0),
        }
    }

    /// Parses `.regioninfo` bytes from HBase or cairn; `path` names the file in a
    /// [`RegionError::Corrupt`]. The encoded name is computed again, not read.
    pub fn decode(bytes: &[u8], path: &Path) -> Result<RegionInfo> {
        let m = pb::RegionInfoPb::decode_length_delimited(pb_body(bytes, path)?)
            .map_err(|e| corrupt(path, format!("RegionInfo does not parse: {e}")))?;
        Self::from_pb(m, path)
    }

    fn from_pb(m: pb::RegionInfoPb, path: &Path) -> Result<RegionInfo> {
        let table = TableName::from_parts(&m.table_name.namespace, &m.table_name.qualifier)
            .map_err(|e| corrupt(path, format!("table name: {e}")))?;
        let mut info = RegionInfo::new(
            table,
            &m.start_key.unwrap_or_default(),
            &m.end_key.unwrap_or_default(),
            m.region_id,
        );
        info.offline = m.offline.unwrap_or(false);
        info.split = m.split.unwrap_or(false);
        Ok(info)
    }
}

fn corrupt(path: &Path, reason: String) -> RegionError {
    RegionError::Corrupt {
        path: path.display().to_string(),
        reason,
    }
}

/// The protobuf message after HBase's `PBUF` prefix.
fn pb_body<'a>(bytes: &'a [u8], path: &Path) -> Result<&'a [u8]> {
    bytes
        .strip_prefix(PB_MAGIC)
        .ok_or_else(|| corrupt(path, "does not start with PBUF".into()))
}

/// A `.tableinfo` file's bytes: `PBUF` and a `TableSchema` message, family settings as HBase's
/// attribute names and values (checksum settings as family configuration, as HBase keeps them).
pub fn encode_table_descriptor(d: &TableDescriptor) -> Vec<u8> {
    let pair = |k: &str, v: String| pb::BytesBytesPair {
        first: k.as_bytes().to_vec(),
        second: v.into_bytes(),
    };
    let m = pb::TableSchema {
        table_name: Some(pb::TableNamePb {
            namespace: d.name.namespace.as_bytes().to_vec(),
            qualifier: d.name.qualifier.as_bytes().to_vec(),
        }),
        // MEMSTORE_FLUSHSIZE only when the table sets its own: without it HBase (and cairn)
        // use the server's hbase.hregion.memstore.flush.size.
        attributes: d
            .memstore_flush_size
            .map(|n| pair("MEMSTORE_FLUSHSIZE", n.to_string()))
            .into_iter()
            .chain([pair("DURABILITY", d.durability.name().to_string())])
            .chain(d.values.iter().map(|(k, v)| pair(k, v.clone())))
            .collect(),
        column_families: d
            .families
            .iter()
            .map(|f| pb::ColumnFamilySchema {
                name: f.name.clone(),
                attributes: f
                    .attributes()
                    .into_iter()
                    .map(|(k, v)| pair(&k, v))
                    .collect(),
                configuration: vec![
                    pb::NameStringPair {
                        name: "hbase.hstore.checksum.algorithm".into(),
                        value: f.checksum_type.name().into(),
                    },
                    pb::NameStringPair {
                        name: "hbase.hstore.bytes.per.checksum".into(),
                        value: f.bytes_per_checksum.to_string(),
                    },
                ],
            })
            .collect(),
        configuration: Vec::new(),
    };
    let mut out = PB_MAGIC.to_vec();
    m.encode(&mut out).expect("vec grows");
    out
}

/// Parses a `.tableinfo` file HBase or cairn wrote. Attributes cairn does not use are ignored;
/// values it cannot honour are errors naming the family
/// ([`ColumnFamilyDescriptor::set_attribute`]).
pub fn decode_table_descriptor(bytes: &[u8], path: &Path) -> Result<TableDescriptor> {
    let m = pb::TableSchema::decode(pb_body(bytes, path)?)
        .map_err(|e| corrupt(path, format!("TableSchema does not parse: {e}")))?;
    let tn = m
        .table_name
        .ok_or_else(|| corrupt(path, "no table name".into()))?;
    let name = TableName::from_parts(&tn.namespace, &tn.qualifier)
        .map_err(|e| corrupt(path, format!("table name: {e}")))?;
    let mut d = TableDescriptor::new(name);
    for a in &m.attributes {
        let v = String::from_utf8_lossy(&a.second);
        match a.first.as_slice() {
            b"MEMSTORE_FLUSHSIZE" => {
                if let Ok(n) = v.parse::<i64>() {
                    if n > 0 {
                        d.memstore_flush_size = Some(n as u64);
                    }
                }
            }
            b"DURABILITY" => {
                if let Ok(x) = v.parse() {
                    d.durability = x;
                }
            }
            k => {
                d.values
                    .insert(String::from_utf8_lossy(k).into_owned(), v.into_owned());
            }
        }
    }
    for cf in m.column_families {
        names::check_family(&cf.name).map_err(|e| corrupt(path, format!("family name: {e}")))?;
        let mut f = ColumnFamilyDescriptor::new(&cf.name);
        for a in &cf.attributes {
            f.set_attribute(
                &String::from_utf8_lossy(&a.first),
                &String::from_utf8_lossy(&a.second),
            )?;
        }
        for c in &cf.configuration {
            f.set_attribute(&c.name, &c.value)?;
        }
        d.families.push(f);
    }
    Ok(d)
}

/// Writes the table descriptor as `.tabledesc/.tableinfo.0000000001.<len>` (HBase 2.6's name).
pub fn write_table_descriptor(
    fs: &dyn FileSystem,
    table_dir: &Path,
    d: &TableDescriptor,
) -> Result<()> {
    let dir = table_dir.join(TABLE_DESC_DIR);
    // Durable names all the way down: a crash must not take the table's directory back.
    fs.mkdirs_durable(&dir)
        .map_err(|e| RegionError::io(&dir, e))?;
    let bytes = encode_table_descriptor(d);
    let path = dir.join(format!(".tableinfo.{:010}.{}", 1, bytes.len()));
    write_atomically(fs, &path, &bytes)
}

/// Reads the newest `.tableinfo*` of a table directory (any of HBase's naming forms).
pub fn read_table_descriptor(
    fs: &dyn FileSystem,
    table_dir: &Path,
) -> Result<Option<TableDescriptor>> {
    let dir = table_dir.join(TABLE_DESC_DIR);
    let Ok(entries) = fs.list(&dir) else {
        return Ok(None);
    };
    let mut best: Option<(u64, PathBuf)> = None;
    for e in entries {
        let Some(name) = e.path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        let Some(rest) = name.strip_prefix(".tableinfo") else {
            continue;
        };
        if rest.ends_with(".tmp") {
            continue;
        }
        let seq = rest
            .trim_start_matches('.')
            .split('.')
            .next()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        if best.as_ref().is_none_or(|(s, _)| seq >= *s) {
            best = Some((seq, e.path));
        }
    }
    let Some((_, path)) = best else {
        return Ok(None);
    };
    let bytes = fs.read(&path).map_err(|e| RegionError::io(&path, e))?;
    decode_table_descriptor(&bytes, &path).map(Some)
}

/// Where a table's archived files go: `<root>/archive/data/<namespace>/<table>` (HBase's
/// `HFileArchiveUtil`).
pub fn archive_table_dir(root: &Path, table: &TableName) -> PathBuf {
    root.join("archive")
        .join("data")
        .join(&table.namespace)
        .join(&table.qualifier)
}

/// Parses `RegionInfo.toByteArray` bytes (`PBUF` and the message, as meta's cells hold
/// it); `path` names where they came from in errors.
pub fn decode_region_info_bytes(bytes: &[u8], path: &Path) -> Result<RegionInfo> {
    let m = pb::RegionInfoPb::decode(pb_body(bytes, path)?)
        .map_err(|e| corrupt(path, format!("RegionInfo does not parse: {e}")))?;
    RegionInfo::from_pb(m, path)
}

/// Creates `region_dir` (its name durable) and writes its `.regioninfo` atomically.
pub fn write_region_info(fs: &dyn FileSystem, region_dir: &Path, info: &RegionInfo) -> Result<()> {
    fs.mkdirs_durable(region_dir)
        .map_err(|e| RegionError::io(region_dir, e))?;
    write_atomically(fs, &region_dir.join(REGION_INFO_FILE), &info.encode())
}

/// Reads the `.regioninfo` of `region_dir`; errors name the file.
pub fn read_region_info(fs: &dyn FileSystem, region_dir: &Path) -> Result<RegionInfo> {
    let path = region_dir.join(REGION_INFO_FILE);
    let bytes = fs.read(&path).map_err(|e| RegionError::io(&path, e))?;
    RegionInfo::decode(&bytes, &path)
}

/// Writes through a temporary name, syncs, renames: readers see the old file or the new one.
pub fn write_atomically(fs: &dyn FileSystem, path: &Path, bytes: &[u8]) -> Result<()> {
    fs.write_atomic(path, bytes)
        .map_err(|e| RegionError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_info_round_trips_and_names_like_hbase() {
        let t = TableName::parse("t1").unwrap();
        let r = RegionInfo::new(t, b"a", b"m", 1_700_000_000_000);
        assert_eq!(r.encoded_name.len(), 32);
        let back = RegionInfo::decode(&r.encode(), Path::new("x")).unwrap();
        assert_eq!(back, r);
        assert!(r.contains_row(b"a") && r.contains_row(b"l") && !r.contains_row(b"m"));
        assert!(RegionInfo::decode(b"PBUF\xff", Path::new("x")).is_err());
    }

    #[test]
    fn region_names_keep_the_start_keys_bytes() {
        // A start key with bytes that are not UTF-8 and with the name's own separators.
        let start = b"k,\xff.\x00";
        let r = RegionInfo::new(TableName::parse("ns:t").unwrap(), start, b"", 42);
        let mut want = b"ns:t,".to_vec();
        want.extend_from_slice(start);
        want.extend_from_slice(format!(",42.{}.", r.encoded_name).as_bytes());
        assert_eq!(r.region_name_bytes(), want);
        // The same name the encoded name hashes, up to the id.
        let plain = RegionInfo::new(TableName::parse("t1").unwrap(), b"a", b"m", 7);
        assert_eq!(plain.region_name_bytes(), plain.region_name().into_bytes());
    }

    #[test]
    fn encoded_names_and_directories_are_hbases() {
        // HBase: encodeRegionName(MD5 hex of "<table>,<startKey>,<regionId>"), the table name
        // without "default:" (reference digests computed with Python's hashlib).
        let r = RegionInfo::new(
            TableName::parse("t1").unwrap(),
            b"a",
            b"m",
            1_700_000_000_000,
        );
        assert_eq!(r.encoded_name, "1701a7ecba2642ef944c55a801acd7cf");
        assert_eq!(
            r.region_name(),
            "t1,a,1700000000000.1701a7ecba2642ef944c55a801acd7cf."
        );
        let first = RegionInfo::new(TableName::parse("ns:t").unwrap(), b"", b"", 1);
        assert_eq!(first.encoded_name, "1b3b6feb507160c24c08513b4b03dd66");
        // The end key is not part of the name: a region keeps its directory when the region
        // after it splits.
        let wider = RegionInfo::new(
            TableName::parse("t1").unwrap(),
            b"a",
            b"",
            1_700_000_000_000,
        );
        assert_eq!(wider.encoded_name, r.encoded_name);

        let root = Path::new("/hbase");
        let t = TableName::parse("t1").unwrap();
        assert_eq!(table_dir(root, &t), Path::new("/hbase/data/default/t1"));
        let ns = TableName::parse("ns:t").unwrap();
        assert_eq!(table_dir(root, &ns), Path::new("/hbase/data/ns/t"));
        assert_eq!(wal_dir(root), Path::new("/hbase/WALs"));
        assert!(unique_file_name().len() == 32 && unique_file_name() != unique_file_name());
    }

    #[test]
    fn the_newest_tableinfo_wins_and_temporaries_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let fs = cairn_fs::LocalFileSystem;
        let desc = dir.path().join(TABLE_DESC_DIR);
        std::fs::create_dir_all(&desc).unwrap();
        let t = TableName::parse("t").unwrap();
        let old = TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("old"));
        let new = TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("new"));
        let tmp = TableDescriptor::new(t).with_family(ColumnFamilyDescriptor::new("tmp"));
        // HBase's name forms: `.tableinfo.<seq>` (older) and `.tableinfo.<seq>.<len>` (2.6).
        std::fs::write(
            desc.join(".tableinfo.0000000002"),
            encode_table_descriptor(&old),
        )
        .unwrap();
        std::fs::write(
            desc.join(".tableinfo.0000000010.99"),
            encode_table_descriptor(&new),
        )
        .unwrap();
        std::fs::write(
            desc.join(".tableinfo.0000000011.tmp"),
            encode_table_descriptor(&tmp),
        )
        .unwrap();
        assert_eq!(
            read_table_descriptor(&fs, dir.path()).unwrap().unwrap(),
            new
        );
        assert!(read_table_descriptor(&fs, &dir.path().join("none"))
            .unwrap()
            .is_none());
        // A file that is not HBase's protobuf is corrupt, and the error names it.
        std::fs::write(desc.join(".tableinfo.0000000012"), b"garbage").unwrap();
        let e = read_table_descriptor(&fs, dir.path())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(".tableinfo.0000000012") && e.contains("PBUF"),
            "{e}"
        );
    }

    #[test]
    fn table_descriptor_round_trips() {
        let d = TableDescriptor::new(TableName::parse("ns:t").unwrap())
            .with_family(
                ColumnFamilyDescriptor::new("a")
                    .max_versions(5)
                    .ttl_seconds(3600),
            )
            .with_family(ColumnFamilyDescriptor::new("b"))
            .with_value(
                "SPLIT_POLICY",
                "org.apache.hadoop.hbase.regionserver.ConstantSizeRegionSplitPolicy",
            )
            .with_value("MAX_FILESIZE", "1048576");
        let dir = tempfile::tempdir().unwrap();
        let fs = cairn_fs::LocalFileSystem;
        write_table_descriptor(&fs, dir.path(), &d).unwrap();
        assert_eq!(read_table_descriptor(&fs, dir.path()).unwrap().unwrap(), d);
    }
}
