//! Where the table's regions split and how its families write files, from one of three
//! sources: an embedded store directory (read-only: the table descriptor and the regions'
//! `.regioninfo` files), a split-keys file with default family settings, or a running cairn
//! over Thrift (`getTableRegions`, `getColumnDescriptors`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{bail, Context, Result};
use cairn_cell::compare_bytes;
use cairn_region::tools::layout::{
    self, read_region_info, read_table_descriptor, REGION_INFO_FILE,
};
use cairn_region::{ColumnFamilyDescriptor, TableName};

/// The table as importtsv needs it.
#[derive(Clone, Debug)]
pub struct TableLayout {
    /// Rows where a region starts, sorted, without the empty first start key.
    pub split_keys: Vec<Vec<u8>>,
    /// The table's families by name.
    pub families: BTreeMap<Vec<u8>, ColumnFamilyDescriptor>,
    /// Where this came from, for the summary.
    pub source: String,
}

impl TableLayout {
    /// The region (0-based, in key order) holding `row`.
    pub fn region_of(&self, row: &[u8]) -> usize {
        self.split_keys
            .partition_point(|k| compare_bytes(k, row) != std::cmp::Ordering::Greater)
    }

    /// One region; families with HBase's defaults (what ImportTsv's `create.table` makes).
    pub fn single_region(families: &BTreeSet<Vec<u8>>) -> TableLayout {
        TableLayout {
            split_keys: Vec::new(),
            families: default_families(families),
            source: "one region, default family settings".into(),
        }
    }

    /// Split keys from `path`, one per line (the line's raw bytes; empty lines skipped),
    /// families with HBase's defaults.
    pub fn from_splits_file(path: &Path, families: &BTreeSet<Vec<u8>>) -> Result<TableLayout> {
        let bytes = std::fs::read(path)
            .with_context(|| format!("reading split keys {}", path.display()))?;
        let mut keys: Vec<Vec<u8>> = bytes
            .split(|b| *b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        keys.sort_by(|a, b| compare_bytes(a, b));
        keys.dedup();
        Ok(TableLayout {
            source: format!("{} split keys from {}", keys.len(), path.display()),
            split_keys: keys,
            families: default_families(families),
        })
    }

    /// The table in the embedded store at `root`, read without opening it for writes. Every
    /// region directory's boundaries count, so files never straddle a region of either side
    /// of a split or merge that has not been cleaned up yet.
    pub fn from_store(root: &Path, table: &TableName) -> Result<TableLayout> {
        let fs = &layout::LOCAL;
        let table_dir = layout::table_dir(root, table);
        let Some(desc) = read_table_descriptor(fs, &table_dir)
            .with_context(|| format!("reading the schema of {table} in {}", root.display()))?
        else {
            bail!("Table '{table}' does not exist in {}", root.display());
        };
        let mut keys = BTreeSet::new();
        let mut regions = 0;
        let entries = std::fs::read_dir(&table_dir)
            .with_context(|| format!("listing {}", table_dir.display()))?;
        for e in entries {
            let dir = e
                .with_context(|| format!("listing {}", table_dir.display()))?
                .path();
            if !dir.join(REGION_INFO_FILE).is_file() {
                continue;
            }
            let info = read_region_info(fs, &dir)?;
            regions += 1;
            for k in [info.start_key, info.end_key] {
                if !k.is_empty() {
                    keys.insert(k);
                }
            }
        }
        if regions == 0 {
            bail!("Table '{table}' has no regions in {}", table_dir.display());
        }
        let mut split_keys: Vec<Vec<u8>> = keys.into_iter().collect();
        split_keys.sort_by(|a, b| compare_bytes(a, b));
        Ok(TableLayout {
            source: format!("{regions} regions of {table} in {}", root.display()),
            split_keys,
            families: desc
                .families
                .into_iter()
                .map(|f| (f.name.clone(), f))
                .collect(),
        })
    }

    /// The table as a running cairn (or HBase's Thrift gateway) at `addr` describes it:
    /// region start keys and the family settings Thrift1 carries (compression, Bloom type;
    /// block size and encoding are not in Thrift1's `ColumnDescriptor`, so they stay HBase's
    /// defaults).
    pub fn from_thrift(addr: &str, table: &TableName) -> Result<TableLayout> {
        use cairn_thrift::hbase::{HbaseSyncClient, THbaseSyncClient};
        use cairn_thrift::thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
        use cairn_thrift::thrift::transport::{
            TBufferedReadTransport, TBufferedWriteTransport, TIoChannel, TTcpChannel,
        };
        let mut channel = TTcpChannel::new();
        channel
            .open(addr)
            .with_context(|| format!("connecting to Thrift at {addr}"))?;
        let (r, w) = channel
            .split()
            .with_context(|| format!("connecting to Thrift at {addr}"))?;
        let mut client = HbaseSyncClient::new(
            TBinaryInputProtocol::new(TBufferedReadTransport::new(r), true),
            TBinaryOutputProtocol::new(TBufferedWriteTransport::new(w), true),
        );
        let name = table.to_string().into_bytes();
        let regions = client
            .get_table_regions(name.clone())
            .with_context(|| format!("getTableRegions({table}) at {addr}"))?;
        let columns = client
            .get_column_descriptors(name)
            .with_context(|| format!("getColumnDescriptors({table}) at {addr}"))?;
        let mut split_keys: Vec<Vec<u8>> = regions
            .into_iter()
            .filter_map(|r| r.start_key)
            .filter(|k| !k.is_empty())
            .collect();
        split_keys.sort_by(|a, b| compare_bytes(a, b));
        split_keys.dedup();
        let mut families = BTreeMap::new();
        for (name, c) in columns {
            // Thrift1 names a family `family:`.
            let name = name.strip_suffix(b":").unwrap_or(&name).to_vec();
            let mut f = ColumnFamilyDescriptor::new(&name);
            if let Some(v) = &c.compression {
                f.set_attribute("COMPRESSION", v)?;
            }
            if let Some(v) = &c.bloom_filter_type {
                f.set_attribute("BLOOMFILTER", v)?;
            }
            families.insert(name, f);
        }
        Ok(TableLayout {
            source: format!(
                "{} regions of {table} from Thrift at {addr}",
                split_keys.len() + 1
            ),
            split_keys,
            families,
        })
    }
}

fn default_families(names: &BTreeSet<Vec<u8>>) -> BTreeMap<Vec<u8>, ColumnFamilyDescriptor> {
    names
        .iter()
        .map(|n| (n.clone(), ColumnFamilyDescriptor::new(n)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_region::tools::layout::{write_region_info, write_table_descriptor};
    use cairn_region::{RegionInfo, TableDescriptor};

    #[test]
    fn rows_map_to_regions_by_start_key() {
        let mut l = TableLayout::single_region(&BTreeSet::new());
        l.split_keys = vec![b"g".to_vec(), b"p".to_vec()];
        assert_eq!(l.region_of(b""), 0);
        assert_eq!(l.region_of(b"f\xff"), 0);
        assert_eq!(l.region_of(b"g"), 1);
        assert_eq!(l.region_of(b"o"), 1);
        assert_eq!(l.region_of(b"p"), 2);
        assert_eq!(l.region_of(b"\xff"), 2);
    }

    #[test]
    fn split_files_are_sorted_and_deduplicated() {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(tmp.path(), b"m\r\nc\n\nm\n\xff\n").unwrap();
        let l = TableLayout::from_splits_file(tmp.path(), &BTreeSet::new()).unwrap();
        assert_eq!(
            l.split_keys,
            [b"c".to_vec(), b"m".to_vec(), b"\xff".to_vec()]
        );
    }

    #[test]
    fn a_store_gives_its_boundaries_and_family_settings() {
        let root = tempfile::tempdir().unwrap();
        let t = TableName::parse("ns:t").unwrap();
        let table_dir = layout::table_dir(root.path(), &t);
        let f = ColumnFamilyDescriptor::new("f").block_size(4096);
        write_table_descriptor(
            &layout::LOCAL,
            &table_dir,
            &TableDescriptor::new(t.clone()).with_family(f),
        )
        .unwrap();
        for (s, e) in [(&b""[..], &b"k"[..]), (b"k", b"")] {
            let r = RegionInfo::new(t.clone(), s, e, 1);
            write_region_info(&layout::LOCAL, &table_dir.join(&r.encoded_name), &r).unwrap();
        }
        let l = TableLayout::from_store(root.path(), &t).unwrap();
        assert_eq!(l.split_keys, [b"k".to_vec()]);
        assert_eq!(l.families[&b"f".to_vec()].block_size, 4096);
        let missing = TableName::parse("nope").unwrap();
        let e = TableLayout::from_store(root.path(), &missing).unwrap_err();
        assert!(e.to_string().contains("'nope' does not exist"), "{e}");
    }
}
