//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use cairn_wal::{segment, ReplayReport, Wal, WalEdit, WalError, WalOptions};

/// An edit of `cells` Puts for `region` at `seq`.
pub fn edit(region: &str, seq: u64, cells: usize) -> WalEdit {
    WalEdit {
        region: region.as_bytes().to_vec(),
        sequence_id: seq,
        write_time_ms: 1_700_000_000_000 + seq as i64,
        cells: (0..cells)
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
    }
}

/// Opens `dir`, collecting every replayed edit.
pub fn open(
    dir: &Path,
    options: WalOptions,
) -> Result<(Wal, Vec<WalEdit>, ReplayReport), WalError> {
    let mut edits = Vec::new();
    let (wal, report) = Wal::open(dir, options, |e| {
        edits.push(e);
        Ok(())
    })?;
    Ok((wal, edits, report))
}

/// Replays `dir` and closes the WAL again.
pub fn replay(dir: &Path) -> (Vec<WalEdit>, ReplayReport) {
    let (wal, edits, report) = open(dir, WalOptions::default()).unwrap();
    wal.close().unwrap();
    (edits, report)
}

/// Segment files in `dir`, oldest first.
pub fn segment_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            let id = segment::parse_segment_file_name(e.file_name().to_str()?)?;
            Some((id, e.path()))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, p)| p).collect()
}

/// Start offsets of the records in a segment file, and the file length.
pub fn record_offsets(path: &Path) -> (Vec<u64>, u64) {
    let mut offsets = Vec::new();
    let scan = segment::scan_segment(path, None, |o, _| {
        offsets.push(o);
        Ok(())
    })
    .unwrap();
    assert!(scan.dropped.is_none(), "{:?}", scan.dropped);
    (offsets, scan.len)
}
