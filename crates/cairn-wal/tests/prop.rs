//! Property tests: any edits round-trip through the WAL exactly, and no bytes make replay
//! panic or invent edits.

mod common;

use std::fs;

use cairn_cell::CellType;
use cairn_wal::segment;
use cairn_wal::{Durability, KeyValue, WalEdit, WalOptions};
use common::{open, replay};
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
        proptest::collection::vec(any::<u8>(), 0..40),
        prop_oneof![Just(77u64), any::<u64>()],
        any::<i64>(),
        proptest::collection::vec(cell(), 0..6),
        any::<bool>(),
    )
        .prop_map(|(region, sequence_id, write_time_ms, mut cells, stamp)| {
            if stamp {
                // The usual case: every cell carries the edit's sequence id.
                cells = cells
                    .into_iter()
                    .map(|c| c.with_sequence_id(sequence_id))
                    .collect();
            }
            WalEdit {
                region,
                sequence_id,
                write_time_ms,
                cells,
            }
        })
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
        let mut bytes = segment::encode_header(1).to_vec();
        for e in &edits {
            segment::encode_record(e, &mut bytes).unwrap();
        }
        let valid = bytes.len() as u64;
        bytes.extend_from_slice(&junk);
        let dir = tempfile::tempdir().unwrap();
        fs::write(segment::segment_path(dir.path(), 1), &bytes).unwrap();
        let (got, report) = replay(dir.path());
        prop_assert_eq!(&got[..edits.len()], &edits[..]);
        // Whatever the junk decoded to (a valid record by chance is astronomically unlikely),
        // every byte is accounted for: replayed or reported.
        if let Some(d) = report.dropped.first() {
            prop_assert!(d.offset >= valid);
            prop_assert_eq!(d.offset + d.bytes, bytes.len() as u64);
        } else {
            // Zeros are the unwritten tail of a preallocated segment, not a drop.
            prop_assert!(
                junk.iter().all(|&b| b == 0) || got.len() > edits.len()
            );
        }
    }

    #[test]
    fn arbitrary_segment_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        with_header in any::<bool>(),
    ) {
        let mut file = if with_header { segment::encode_header(3).to_vec() } else { Vec::new() };
        file.extend_from_slice(&bytes);
        let dir = tempfile::tempdir().unwrap();
        fs::write(segment::segment_path(dir.path(), 3), &file).unwrap();
        match open(dir.path(), WalOptions::default()) {
            Ok((wal, _, _)) => wal.close().unwrap(),
            Err(e) => prop_assert!(e.to_string().contains("wal.00000000000000000003")),
        }
    }

    #[test]
    fn payload_decoding_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = segment::decode_payload(&bytes);
    }
}
