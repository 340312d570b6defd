//! The in-memory cell index of a data block (offsets and row fingerprints, built when a block
//! is read for a seek) against a linear walk: on random files of every data block encoding,
//! `seek`, `seek_row` and a chain of increasing `reseek`s land on the first cell ≥ the key,
//! exactly where walking every cell from the start lands.

use std::cmp::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use cairn_hfile::bloom::BloomType;
use cairn_hfile::cell::{compare_cells, compare_keys, first_on_row, last_on_row, CellType};
use cairn_hfile::encoding::DataBlockEncoding;
use cairn_hfile::{HFileReader, HFileWriter, KeyRef, KeyValue, ReaderOptions, WriterOptions};
use proptest::prelude::*;

/// Rows drawn from a few shapes that stress fingerprints: long shared prefixes, rows that
/// are prefixes of others, rows that differ only past 8 bytes, and empty-ish ones.
fn row() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (0u32..400).prop_map(|i| format!("row-{i:05}").into_bytes()),
        (0u32..50).prop_map(|i| format!("shared-prefix-of-many-bytes-{i}").into_bytes()),
        (0u32..20, 0u8..3).prop_map(|(i, n)| {
            let mut r = format!("p{i}").into_bytes();
            r.extend(std::iter::repeat_n(b'x', n as usize));
            r
        }),
        proptest::collection::vec(any::<u8>(), 1..12),
    ]
}

fn cell() -> impl Strategy<Value = KeyValue> {
    (
        row(),
        0u8..3,
        0i64..5,
        prop::sample::select(vec![
            CellType::Put,
            CellType::Delete,
            CellType::DeleteColumn,
        ]),
        0usize..300,
    )
        .prop_map(|(row, q, ts, t, vlen)| {
            KeyValue::new(
                &row,
                b"f",
                format!("q{q}").as_bytes(),
                ts,
                t,
                &vec![b'v'; vlen],
            )
            .unwrap()
        })
}

fn file(cells: &[KeyValue], encoding: DataBlockEncoding, block_size: usize) -> HFileReader {
    let options = WriterOptions {
        block_size,
        data_block_encoding: encoding,
        bloom_type: BloomType::Row,
        ..WriterOptions::default()
    };
    let mut w = HFileWriter::new(Vec::new(), "mem.hfile", options).unwrap();
    for c in cells {
        w.append(&c.as_cell()).unwrap();
    }
    let (bytes, _) = w.finish().unwrap();
    HFileReader::open_source(
        "mem.hfile".into(),
        Arc::new(Bytes::from(bytes)),
        ReaderOptions::default(),
    )
    .unwrap()
}

/// The first cell ≥ `key`, found by walking all of them.
fn walk<'a>(cells: &'a [KeyValue], key: &[u8]) -> Option<&'a KeyValue> {
    let k = KeyRef::parse(key).unwrap();
    cells
        .iter()
        .find(|c| compare_keys(&c.as_cell().key, &k) != Ordering::Less)
}

fn key_of(c: Option<&KeyValue>) -> Option<Vec<u8>> {
    c.map(|c| c.as_cell().key.as_bytes().to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn indexed_seeks_land_where_a_linear_walk_does(
        mut cells in proptest::collection::vec(cell(), 1..400),
        probes in proptest::collection::vec((row(), 0u8..4), 1..60),
        encoding in prop::sample::select(DataBlockEncoding::ALL.to_vec()),
        block_size in prop::sample::select(vec![256usize, 1024, 8192]),
    ) {
        cells.sort_by(|a, b| compare_cells(&a.as_cell(), &b.as_cell()));
        cells.dedup_by(|a, b| compare_cells(&a.as_cell(), &b.as_cell()) == Ordering::Equal);
        let reader = file(&cells, encoding, block_size);
        // Search keys: before, at and after rows, and exact cell keys.
        let mut keys: Vec<Vec<u8>> = probes
            .iter()
            .map(|(r, kind)| match kind {
                0 => first_on_row(r).unwrap(),
                1 => last_on_row(r).unwrap(),
                2 => cells[r.len() % cells.len()].as_cell().key.as_bytes().to_vec(),
                _ => KeyValue::new(r, b"f", b"q1", 2, CellType::Put, b"")
                    .unwrap()
                    .as_cell()
                    .key
                    .as_bytes()
                    .to_vec(),
            })
            .collect();
        for key in &keys {
            let want = key_of(walk(&cells, key));
            let mut s = reader.scanner();
            let got = s.seek(key).unwrap().then(|| s.cell().unwrap().key.as_bytes().to_vec());
            prop_assert_eq!(&got, &want, "seek {:?}", encoding);
            // seek_row may stop early only when the row is absent (the Bloom filter's no);
            // when it finds a cell, it is the walk's.
            let mut s = reader.scanner();
            if s.seek_row(key).unwrap() {
                prop_assert_eq!(Some(s.cell().unwrap().key.as_bytes().to_vec()), want.clone());
            } else {
                let row = KeyRef::parse(key).unwrap().row().to_vec();
                prop_assert!(
                    want.as_ref().is_none_or(|w| KeyRef::parse(w).unwrap().row() != row.as_slice()),
                    "seek_row gave up on a row that is there"
                );
            }
        }
        // One scanner reseeking through the keys in order.
        keys.sort_by(|a, b| cairn_hfile::cell::compare_key_bytes(a, b).unwrap());
        let mut s = reader.scanner();
        s.seek_to_first().unwrap();
        for key in &keys {
            let want = key_of(walk(&cells, key));
            let got = s.reseek(key).unwrap().then(|| s.cell().unwrap().key.as_bytes().to_vec());
            prop_assert_eq!(got, want, "reseek {:?}", encoding);
        }
    }
}
