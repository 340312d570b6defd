//! The master's `SplitWALRemoteProcedure` on a cairn region server: one WAL file of a dead
//! server (HBase's or cairn's) split into its regions' `recovered.edits`
//! (cairn-wal's [`split_file`](cairn_wal::split::split_file)), each region's edits below
//! what it has flushed skipped (`GetLastFlushedSequenceId` from the master). The master then
//! archives the file and reopens the regions, which replay what was split.
//!
//! The path comes from the master: it must name a file under this cluster's
//! `<wal root>/WALs/` ([`cairn_wal::names::split_wal_file`]), or nothing is read.

use std::path::{Path, PathBuf};

use cairn_region::layout;
use cairn_region::TableName;
use cairn_rpc::pb;

/// The class HBase's master names in the `RemoteProcedureRequest`.
pub const SPLIT_WAL_CALLABLE: &str = "org.apache.hadoop.hbase.regionserver.SplitWALCallable";

/// The directory of the region an edit belongs to, under `root`; `None` when its table or
/// region name is not one HBase allows (never a path outside the root) or the region is gone.
pub fn region_dir(
    fs: &dyn cairn_fs::FileSystem,
    root: &Path,
    table: &[u8],
    encoded: &[u8],
) -> Option<PathBuf> {
    let table = TableName::parse(std::str::from_utf8(table).ok()?).ok()?;
    if encoded.len() != 32 || !encoded.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let dir = layout::table_dir(root, &table).join(std::str::from_utf8(encoded).ok()?);
    fs.exists(&dir).ok()?.then_some(dir)
}

/// The `SplitWALParameter` of a procedure request.
pub fn parameter(data: Option<&[u8]>) -> Result<pb::SplitWalParameter, String> {
    use prost::Message;
    pb::SplitWalParameter::decode(data.unwrap_or_default())
        .map_err(|e| format!("SplitWALParameter does not parse: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_dirs_only_for_legal_names_that_exist() {
        let dir = tempfile::tempdir().unwrap();
        let fs = cairn_fs::LocalFileSystem;
        let enc = "0123456789abcdef0123456789abcdef";
        std::fs::create_dir_all(dir.path().join("data/ns/t").join(enc)).unwrap();
        assert!(region_dir(&fs, dir.path(), b"ns:t", enc.as_bytes()).is_some());
        assert!(region_dir(&fs, dir.path(), b"ns:u", enc.as_bytes()).is_none());
        assert!(region_dir(&fs, dir.path(), b"../x", enc.as_bytes()).is_none());
        assert!(region_dir(&fs, dir.path(), b"ns:t", b"../../../etc/passwd00000000000").is_none());
    }
}
