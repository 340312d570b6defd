//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use cairn_wal::{
    file, names, ReplayReport, ServerName, Wal, WalEdit, WalError, WalLocation, WalOptions,
};

/// The server every test WAL belongs to.
pub const SERVER: &str = "localhost,16020,1700000000000";

/// The WAL of [`SERVER`] under `root`.
pub fn loc(root: &Path) -> WalLocation {
    WalLocation::new(root, ServerName::parse(SERVER).unwrap())
}

/// `<root>/WALs/<SERVER>`.
pub fn wal_dir(root: &Path) -> PathBuf {
    loc(root).dir()
}

/// An edit of `cells` Puts for `region` at `seq`.
pub fn edit(region: &str, seq: u64, cells: usize) -> WalEdit {
    WalEdit::new(
        region.as_bytes().to_vec(),
        b"ns:t".to_vec(),
        seq,
        1_700_000_000_000 + seq as i64,
        (0..cells)
            .map(|c| {
                cairn_wal::KeyValue::put(
                    format!("row-{seq:08}").as_bytes(),
                    b"f",
                    format!("q{c}").as_bytes(),
                    seq as i64,
                    format!("value-{region}-{seq}-{c}").as_bytes(),
                )
                .unwrap()
                .with_sequence_id(seq)
            })
            .collect(),
    )
}

/// Opens the WAL under `root`, collecting every replayed edit.
pub fn open(
    root: &Path,
    options: WalOptions,
) -> Result<(Wal, Vec<WalEdit>, ReplayReport), WalError> {
    let mut edits = Vec::new();
    let (wal, report) = Wal::open(&loc(root), options, |e| {
        edits.push(e);
        Ok(())
    })?;
    Ok((wal, edits, report))
}

/// Replays the WAL under `root` and closes it again.
pub fn replay(root: &Path) -> (Vec<WalEdit>, ReplayReport) {
    let (wal, edits, report) = open(root, WalOptions::default()).unwrap();
    wal.close().unwrap();
    (edits, report)
}

/// The WAL files in `dir`, oldest first.
pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<(u64, PathBuf)> = fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            let n = names::parse_wal_file_name(e.file_name().to_str()?)?;
            Some((n.number, e.path()))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, p)| p).collect()
}

/// The WAL files of [`SERVER`] under `root`, oldest first.
pub fn segment_files(root: &Path) -> Vec<PathBuf> {
    files_in(&wal_dir(root))
}

/// Start offsets of the entries in a WAL file, the end of the last, and the file length.
pub fn record_offsets(path: &Path) -> (Vec<u64>, u64, u64) {
    let mut offsets = Vec::new();
    let scan = file::scan_file(path, |o, _| {
        offsets.push(o);
        Ok(())
    })
    .unwrap();
    assert!(scan.dropped.is_none(), "{:?}", scan.dropped);
    (offsets, scan.end, scan.len)
}

/// Copies every file under `from` to the same place under `to`, as it is now (the page
/// cache's view, which is what a killed process leaves behind). The WAL's background thread
/// may rename a kept file to prepare the next one meanwhile: a file gone between the listing
/// and its copy is skipped, as a kill at that moment would leave it under its new name only.
pub fn snapshot(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        let ty = e.file_type().unwrap();
        if ty.is_dir() {
            snapshot(&e.path(), &to.join(&name));
        } else if ty.is_file() {
            match fs::copy(e.path(), to.join(&name)) {
                Ok(_) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => panic!("copy {name:?}: {err}"),
            }
        }
    }
}
