//! Fuzzes the HFile reader: trailer, load-on-open section, indexes, Bloom filters, blocks and
//! cells. Malformed input must give an error, never a panic.
//!
//! Inputs starting with 0xFF are patches to a small valid file written with checksum type
//! NULL (so damaged bytes reach every parser instead of stopping at a checksum): pairs of
//! (u16 offset, xor byte). Any other input is read as a whole file.
#![no_main]

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use cairn_checksum::ChecksumType;
use cairn_hfile::bloom::BloomType;
use cairn_hfile::cell::{first_on_row, KeyValue};
use cairn_hfile::{Compression, HFileReader, HFileWriter, ReaderOptions, WriterOptions};
use libfuzzer_sys::fuzz_target;

fn base_file(compression: Compression, bloom_type: BloomType) -> Vec<u8> {
    let options = WriterOptions {
        block_size: 256,
        checksum_type: ChecksumType::Null,
        bytes_per_checksum: 512,
        compression,
        bloom_type,
        include_tags: true,
        index_block_size: 128,
        ..Default::default()
    };
    let mut w = HFileWriter::new(Vec::new(), "base", options).expect("options");
    for i in 0..60u32 {
        let kv = KeyValue::put(
            format!("r{i:03}").as_bytes(),
            b"f",
            b"q",
            i as i64,
            b"value",
        )
        .expect("cell")
        .with_sequence_id(i as u64);
        w.append(&kv.as_cell()).expect("append");
    }
    w.finish().expect("finish").0
}

fn bases() -> &'static [Vec<u8>] {
    static BASES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    BASES.get_or_init(|| {
        vec![
            base_file(Compression::None, BloomType::Row),
            base_file(Compression::Snappy, BloomType::RowCol),
            base_file(Compression::Gz, BloomType::Row),
        ]
    })
}

fn exercise(file: Vec<u8>) {
    let Ok(r) = HFileReader::open_source(
        "fuzz".into(),
        Arc::new(Bytes::from(file)),
        ReaderOptions::default(),
    ) else {
        return;
    };
    let mut s = r.scanner();
    if let Ok(true) = s.seek_to_first() {
        for _ in 0..10_000 {
            let _ = s.cell();
            match s.next() {
                Ok(true) => {}
                _ => break,
            }
        }
    }
    for row in [&b"r000"[..], b"r030", b"zzz", b""] {
        if let Ok(k) = first_on_row(row) {
            let _ = r.scanner().seek(&k);
        }
        let _ = r.get(row, b"f", b"q");
        let _ = r.may_contain_row(row);
    }
    let _ = r.mid_key();
    let _ = r.meta_block(b"x");
    let _ = r.verify_all_blocks(|_| {});
}

fuzz_target!(|input: &[u8]| {
    if input.first() == Some(&0xFF) && input.len() >= 2 {
        let base = &bases()[input[1] as usize % bases().len()];
        let mut file = base.clone();
        for patch in input[2..].chunks_exact(3) {
            let at = u16::from_le_bytes([patch[0], patch[1]]) as usize % file.len();
            file[at] ^= patch[2];
        }
        exercise(file);
    } else {
        exercise(input.to_vec());
    }
});
