//! Splitting a dead server's WAL file into its regions' `recovered.edits` (HBase's
//! `WALSplitter`, which a cluster's master has a live region server run as
//! `SplitWALRemoteProcedure`): each region's edits that its stores have not flushed yet go
//! into one file `<region dir>/recovered.edits/<highest sequence id, 19 digits>`, a WAL file
//! in HBase's format that the region replays when it next opens, on cairn or on HBase.
//!
//! Each output is written under a `.temp` name (which no reader replays), fsynced, then
//! renamed: a split that dies leaves nothing half-written to replay, and the master runs it
//! again. Edits of regions whose directory is gone (a table dropped since) are skipped, as
//! HBase's splitter skips them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cairn_fs::FileSystem;

use crate::file::{self, CairnFileInfo, TRAILER};
use crate::names;
use crate::{Dropped, WalEdit, WalError};

/// What splitting one WAL file did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SplitReport {
    /// Edits written to recovered edits files.
    pub edits_written: u64,
    /// Edits every store of their region had flushed already, or of regions that are gone,
    /// or HBase's marker edits (region events, flush and compaction markers).
    pub edits_skipped: u64,
    /// The files written, one per region with edits.
    pub files: Vec<PathBuf>,
    /// Where the WAL file stopped being readable (a writer that died mid-entry), if it did;
    /// the entries before it were split.
    pub dropped: Option<Dropped>,
}

/// One region's edits, encoded as they will be written.
struct RegionEdits {
    dir: PathBuf,
    entries: Vec<u8>,
    max_sequence_id: u64,
}

/// Splits the WAL file `wal` (on `wal_fs`) into recovered edits files on `out_fs`.
/// `region_dir(edit)` names the directory of the edit's region (`None` when the region is
/// gone: its edits are skipped); `flushed(encoded region name)` is the highest sequence id
/// the region has flushed (edits at or below it are skipped; 0 when unknown).
pub fn split_file(
    wal_fs: &dyn FileSystem,
    wal: &Path,
    out_fs: &dyn FileSystem,
    mut region_dir: impl FnMut(&WalEdit) -> Option<PathBuf>,
    mut flushed: impl FnMut(&[u8]) -> u64,
) -> Result<SplitReport, WalError> {
    let mut report = SplitReport::default();
    let mut regions: BTreeMap<Vec<u8>, Option<RegionEdits>> = BTreeMap::new();
    let mut floors: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let scan = file::scan_on(wal_fs, wal, |_, edit| {
        if edit.is_marker() {
            report.edits_skipped += 1;
            return Ok(());
        }
        let floor = *floors
            .entry(edit.region.clone())
            .or_insert_with(|| flushed(&edit.region));
        if edit.sequence_id <= floor {
            report.edits_skipped += 1;
            return Ok(());
        }
        let slot = regions.entry(edit.region.clone()).or_insert_with(|| {
            region_dir(&edit).map(|dir| RegionEdits {
                dir,
                entries: Vec::new(),
                max_sequence_id: 0,
            })
        });
        let Some(r) = slot else {
            report.edits_skipped += 1;
            return Ok(());
        };
        crate::entry::encode_entry(&edit, &mut r.entries)?;
        r.max_sequence_id = r.max_sequence_id.max(edit.sequence_id);
        report.edits_written += 1;
        Ok(())
    })?;
    report.dropped = scan.dropped;
    let wal_name = wal
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for r in regions.into_values().flatten() {
        report
            .files
            .push(write_recovered_edits(out_fs, &r, &wal_name)?);
    }
    Ok(report)
}

/// Writes one region's recovered edits file: `.temp` first, synced, then renamed.
fn write_recovered_edits(
    fs: &dyn FileSystem,
    r: &RegionEdits,
    wal_name: &str,
) -> Result<PathBuf, WalError> {
    let dir = names::recovered_edits_dir(&r.dir);
    let io = |op: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| WalError::Io {
            op,
            path,
            offset: 0,
            source,
        }
    };
    fs.mkdirs(&dir).map_err(io("create directory", &dir))?;
    let name = names::recovered_edits_file_name(r.max_sequence_id);
    let tmp = dir.join(format!("{name}-{wal_name}.temp"));
    let path = dir.join(&name);
    let mut bytes = file::encode_header(CairnFileInfo {
        number: r.max_sequence_id,
        recycled: false,
    });
    bytes.extend_from_slice(&r.entries);
    bytes.extend_from_slice(&TRAILER);
    let mut out = fs.create(&tmp).map_err(io("create", &tmp))?;
    out.write_all(&bytes)
        .and_then(|()| out.hsync())
        .map_err(io("write", &tmp))?;
    out.close().map_err(io("close", &tmp))?;
    fs.rename(&tmp, &path).map_err(io("rename", &tmp))?;
    fs.sync_dir(&dir).map_err(io("sync directory", &dir))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_cell::KeyValue;

    fn edit(region: &str, seq: u64, row: &str) -> WalEdit {
        WalEdit::new(
            region.as_bytes().to_vec(),
            b"t".to_vec(),
            seq,
            1,
            vec![KeyValue::put(row.as_bytes(), b"f", b"q", seq as i64, b"v").unwrap()],
        )
    }

    /// A WAL file of `edits` as cairn's writer lays one out (header, entries, trailer).
    fn wal_file(path: &Path, edits: &[WalEdit]) {
        let mut bytes = file::encode_header(CairnFileInfo {
            number: 1,
            recycled: false,
        });
        for e in edits {
            crate::entry::encode_entry(e, &mut bytes).unwrap();
        }
        bytes.extend_from_slice(&TRAILER);
        std::fs::write(path, bytes).unwrap();
    }

    fn read(path: &Path) -> Vec<(Vec<u8>, u64)> {
        let mut v = Vec::new();
        file::scan_file(path, |_, e| {
            v.push((e.region.clone(), e.sequence_id));
            Ok(())
        })
        .unwrap();
        v
    }

    #[test]
    fn each_region_gets_its_unflushed_edits_in_one_file_named_by_the_highest() {
        let dir = tempfile::tempdir().unwrap();
        let wal = dir.path().join("wal.1");
        wal_file(
            &wal,
            &[
                edit("a", 1, "r1"),
                edit("b", 2, "r2"),
                edit("a", 3, "r3"),
                edit("gone", 4, "r4"),
                edit("b", 5, "r5"),
                edit("a", 6, "r6"),
            ],
        );
        let fs = cairn_fs::LocalFileSystem;
        let report = split_file(
            &fs,
            &wal,
            &fs,
            |e| {
                (e.region != b"gone")
                    .then(|| dir.path().join(String::from_utf8_lossy(&e.region).as_ref()))
            },
            // Region a flushed up to 3.
            |r| if r == b"a" { 3 } else { 0 },
        )
        .unwrap();
        assert_eq!(report.edits_written, 3, "{report:?}");
        assert_eq!(report.edits_skipped, 3, "{report:?}");
        let a = dir.path().join("a/recovered.edits/0000000000000000006");
        let b = dir.path().join("b/recovered.edits/0000000000000000005");
        assert_eq!(report.files, vec![a.clone(), b.clone()]);
        assert_eq!(read(&a), vec![(b"a".to_vec(), 6)]);
        assert_eq!(read(&b), vec![(b"b".to_vec(), 2), (b"b".to_vec(), 5)]);
        assert!(!dir.path().join("gone").exists());
        // No temporary file is left.
        let names: Vec<_> = std::fs::read_dir(dir.path().join("b/recovered.edits"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1);
    }
}
