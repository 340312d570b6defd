//! `seek_row`, the seek of a one-row read: it lands where `seek` does for every row the file
//! holds, and for a row the file's Bloom filter rules out it reads no data block.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use cairn_hfile::bloom::BloomType;
use cairn_hfile::cell::first_on_row;
use cairn_hfile::{HFileReader, HFileWriter, KeyValue, ReaderOptions, WriterOptions};

/// A file in memory that records the offset of every read.
struct Recording {
    bytes: Bytes,
    reads: Arc<Mutex<Vec<u64>>>,
}

impl cairn_hfile::RawSource for Recording {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&self, offset: u64, len: usize) -> std::io::Result<Bytes> {
        self.reads.lock().unwrap().push(offset);
        cairn_hfile::RawSource::read_at(&self.bytes, offset, len)
    }
}

/// Even rows `r00000`, `r00002`, ... with two columns each; odd rows are absent.
fn file(bloom: BloomType) -> (HFileReader, Arc<Mutex<Vec<u64>>>) {
    let options = WriterOptions {
        block_size: 2048,
        bloom_type: bloom,
        ..WriterOptions::default()
    };
    let mut w = HFileWriter::new(Vec::new(), "mem.hfile", options).unwrap();
    for i in (0..4000).step_by(2) {
        for q in ["a", "b"] {
            let row = format!("r{i:05}");
            let kv = KeyValue::put(row.as_bytes(), b"f", q.as_bytes(), 1, &[b'v'; 100]).unwrap();
            w.append(&kv.as_cell()).unwrap();
        }
    }
    recorded(w)
}

/// The file `w` wrote, opened over a source that records its reads.
fn recorded(w: HFileWriter<Vec<u8>>) -> (HFileReader, Arc<Mutex<Vec<u64>>>) {
    let (bytes, _) = w.finish().unwrap();
    let reads = Arc::new(Mutex::new(Vec::new()));
    let source = Recording {
        bytes: Bytes::from(bytes),
        reads: reads.clone(),
    };
    let reader = HFileReader::open_source(
        "mem.hfile".into(),
        Arc::new(source),
        ReaderOptions::default(),
    )
    .unwrap();
    (reader, reads)
}

/// What `seek` and `seek_row` find for `row`, and whether `seek_row` read the data block
/// `seek` names.
fn both(
    reader: &HFileReader,
    reads: &Mutex<Vec<u64>>,
    row: &[u8],
) -> (Option<Vec<u8>>, Option<Vec<u8>>, bool) {
    let key = first_on_row(row).unwrap();
    let mut s = reader.scanner();
    let by_seek = s
        .seek(&key)
        .unwrap()
        .then(|| s.cell().unwrap().key.as_bytes().to_vec());
    // Before the first cell, the index names no block: the first one is read.
    let block = reader
        .locate_data_block(&key)
        .unwrap()
        .map(|(o, _)| o)
        .or(reader.trailer().first_data_block_offset);
    reads.lock().unwrap().clear();
    let mut s = reader.scanner();
    let by_seek_row = s
        .seek_row(&key)
        .unwrap()
        .then(|| s.cell().unwrap().key.as_bytes().to_vec());
    let read_block = block.is_some_and(|b| reads.lock().unwrap().contains(&b));
    (by_seek, by_seek_row, read_block)
}

#[test]
fn every_row_present_is_found_where_seek_finds_it() {
    for bloom in [BloomType::Row, BloomType::RowCol, BloomType::None] {
        let (reader, reads) = file(bloom);
        for i in (0..4000).step_by(2) {
            let row = format!("r{i:05}");
            let (seek, seek_row, read_block) = both(&reader, &reads, row.as_bytes());
            assert!(seek.is_some(), "{bloom:?} {row}");
            assert_eq!(seek_row, seek, "{bloom:?} {row}");
            assert!(
                read_block,
                "{bloom:?} {row}: nothing cached, so the block is read"
            );
        }
    }
}

#[test]
fn a_row_the_bloom_filter_rules_out_costs_no_data_block() {
    let (reader, reads) = file(BloomType::Row);
    let (mut ruled_out, mut passed) = (0, 0);
    for i in (1..4000).step_by(2) {
        let row = format!("r{i:05}");
        let (seek, seek_row, read_block) = both(&reader, &reads, row.as_bytes());
        match seek_row {
            None => {
                ruled_out += 1;
                assert!(!read_block, "{row}: ruled out, yet its block was read");
            }
            Some(k) => {
                // A false positive: the seek goes on, exactly as `seek` does.
                passed += 1;
                assert_eq!(Some(k), seek, "{row}");
            }
        }
    }
    // HBase's default error rate is 1%: nearly every absent row is ruled out.
    assert!(
        ruled_out > 1900 && passed < 100,
        "{ruled_out} ruled out, {passed} passed"
    );
}

#[test]
fn without_a_row_bloom_filter_seek_row_is_seek() {
    for bloom in [BloomType::None, BloomType::RowCol] {
        let (reader, reads) = file(bloom);
        for i in (1..4000).step_by(2) {
            let row = format!("r{i:05}");
            let (seek, seek_row, _) = both(&reader, &reads, row.as_bytes());
            assert_eq!(seek_row, seek, "{bloom:?} {row}");
        }
        // Past the last row, both find nothing.
        let (seek, seek_row, _) = both(&reader, &reads, b"zz");
        assert_eq!((seek, seek_row), (None, None));
    }
}

/// A file with a two-level index keeps each leaf index block once read: a second seek into
/// the same leaf reads the data block and nothing else.
#[test]
fn leaf_index_blocks_are_read_once() {
    let options = WriterOptions {
        block_size: 256,
        index_block_size: 2048,
        ..WriterOptions::default()
    };
    let mut w = HFileWriter::new(Vec::new(), "mem.hfile", options).unwrap();
    for i in 0..3000 {
        let kv = KeyValue::put(format!("r{i:05}").as_bytes(), b"f", b"q", 1, &[b'v'; 100]).unwrap();
        w.append(&kv.as_cell()).unwrap();
    }
    let (reader, reads) = recorded(w);
    assert_eq!(reader.trailer().num_data_index_levels, 2);
    // From row 7 on: a key before the first cell reads the first block by its header first.
    for i in (7..3000).step_by(7) {
        let key = first_on_row(format!("r{i:05}").as_bytes()).unwrap();
        let block = reader
            .locate_data_block(&key)
            .unwrap()
            .map(|(o, _)| o)
            .or(reader.trailer().first_data_block_offset)
            .unwrap();
        reads.lock().unwrap().clear();
        let mut s = reader.scanner();
        assert!(s.seek(&key).unwrap());
        assert_eq!(
            *reads.lock().unwrap(),
            [block],
            "row {i}: only the data block"
        );
    }
}
