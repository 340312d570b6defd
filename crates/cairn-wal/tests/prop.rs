//! Property tests: any edits round-trip through the WAL exactly, and no bytes make replay
//! panic or invent edits.

mod common;

use std::fs;

use cairn_cell::CellType;
use cairn_wal::file::{self, CairnFileInfo, END_MARKER, TRAILER};
use cairn_wal::{entry, ClusterId, Durability, KeyValue, WalEdit, WalOptions};
use common::{open, replay, wal_dir};
use proptest::prelude::*;

fn cell() -> impl Strategy<Value = KeyValue> {
    (
        proptest::collection::vec(any::<u8>(), 0..24),
        proptest::collection::vec(any::<u8>(), 0..6),
        proptest::collection::vec(any::<u8>(), 0..12),
        any::<i64>(),
        prop::sample::select(vec![
            CellType::Put,
            CellType::Delete,
            CellType::DeleteColumn,
            CellType::DeleteFamily,
            CellType::DeleteFamilyVersion,
        ]),
        proptest::collection::vec(any::<u8>(), 0..300),
        proptest::collection::vec(any::<u8>(), 0..20),
        prop_oneof![Just(0u64), Just(77u64), any::<u64>()],
    )
        .prop_map(|(row, family, qualifier, ts, t, value, tags, seq)| {
            KeyValue::new(&row, &family, &qualifier, ts, t, &value)
                .unwrap()
                .with_tags(tags)
                .unwrap()
                .with_sequence_id(seq)
        })
}

fn wal_edit() -> impl Strategy<Value = WalEdit> {
    (
        (
            proptest::collection::vec(any::<u8>(), 0..40),
            proptest::collection::vec(any::<u8>(), 0..20),
            prop_oneof![Just(77u64), any::<u64>()],
            // HBase's write time is a uint64 holding a Java long.
            any::<i64>(),
        ),
        proptest::collection::vec(cell(), 0..6),
        proptest::collection::vec((any::<u64>(), any::<u64>()), 0..3),
        (any::<u64>(), any::<u64>(), any::<u64>()),
    )
        .prop_map(
            |((region, table, sequence_id, write_time_ms), cells, clusters, (g, n, o))| {
                WalEdit {
                    region,
                    table,
                    sequence_id,
                    write_time_ms,
                    // Cells read back with the edit's sequence id, as HBase's do.
                    cells: cells
                        .into_iter()
                        .map(|c| c.with_sequence_id(sequence_id))
                        .collect(),
                    cluster_ids: clusters
                        .into_iter()
                        .map(|(m, l)| ClusterId {
                            most_sig_bits: m,
                            least_sig_bits: l,
                        })
                        .collect(),
                    nonce_group: g,
                    nonce: n,
                    orig_sequence_id: o,
                }
            },
        )
}

/// `bytes` as this server's WAL file number 3 under `root`.
fn write_file(root: &std::path::Path, bytes: &[u8]) -> std::path::PathBuf {
    let dir = wal_dir(root);
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.3", common::loc(root).server.file_prefix()));
    fs::write(&path, bytes).unwrap();
    path
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_edits_round_trip(
        edits in proptest::collection::vec(wal_edit(), 1..40),
        roll_size in 64u64..8192,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let options = WalOptions { roll_size, ..WalOptions::default() };
        let (wal, _, _) = open(dir.path(), options).unwrap();
        for (i, e) in edits.iter().enumerate() {
            let d = if i % 3 == 0 { Durability::AsyncWal } else { Durability::SyncWal };
            wal.append(e, d).unwrap();
        }
        wal.close().unwrap();
        let (got, report) = replay(dir.path());
        prop_assert!(report.dropped.is_empty());
        prop_assert_eq!(got, edits);
    }

    #[test]
    fn garbage_after_valid_records_replays_the_records_and_never_panics(
        edits in proptest::collection::vec(wal_edit(), 0..6),
        junk in proptest::collection::vec(any::<u8>(), 0..400),
    ) {
        let mut bytes = file::encode_header(CairnFileInfo { number: 3, recycled: false });
        for e in &edits {
            entry::encode_entry(e, &mut bytes).unwrap();
        }
        let valid = bytes.len() as u64;
        bytes.extend_from_slice(&junk);
        let dir = tempfile::tempdir().unwrap();
        write_file(dir.path(), &bytes);
        let (got, report) = replay(dir.path());
        prop_assert_eq!(&got[..edits.len()], &edits[..]);
        // Whatever the junk decoded to (a valid entry by chance is astronomically unlikely:
        // it needs cairn's checksum), every byte is accounted for: replayed or reported.
        if let Some(d) = report.dropped.first() {
            prop_assert!(d.offset >= valid);
            prop_assert_eq!(d.offset + d.bytes, bytes.len() as u64);
        } else {
            // Zeros, the end marker, a trailer cut short: the normal ends of a file.
            prop_assert!(
                junk.iter().all(|&b| b == 0)
                    || junk.starts_with(&END_MARKER[..5])
                    || (junk.len() < 8 && TRAILER.starts_with(&junk))
                    || got.len() > edits.len()
            );
        }
    }

    #[test]
    fn arbitrary_segment_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        with_header in any::<bool>(),
    ) {
        let mut f = if with_header {
            file::encode_header(CairnFileInfo { number: 3, recycled: false })
        } else {
            Vec::new()
        };
        f.extend_from_slice(&bytes);
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(dir.path(), &f);
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        match open(dir.path(), WalOptions::default()) {
            Ok((wal, _, _)) => wal.close().unwrap(),
            Err(e) => prop_assert!(e.to_string().contains(&name), "{}", e),
        }
    }

    #[test]
    fn key_and_cell_parsing_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = entry::parse_key(&bytes);
        let _ = entry::parse_cell(&bytes, 1);
    }
}
