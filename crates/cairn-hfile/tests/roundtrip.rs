//! Writing and reading back: every option combination, seeks against a reference, Bloom
//! filters without false negatives, corruption never returned as data.

use std::cmp::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use cairn_checksum::ChecksumType;
use cairn_hfile::bloom::BloomType;
use cairn_hfile::cell::{
    compare_cells, compare_keys, first_on_row, first_on_row_col, CellType, KeyValue,
};
use cairn_hfile::encoding::DataBlockEncoding;
use cairn_hfile::{
    BlockType, Compression, HFileError, HFileReader, HFileWriter, ReaderOptions, WriterOptions,
};
use proptest::prelude::*;

fn cells(n: usize, value_len: usize, seed: u64) -> Vec<KeyValue> {
    let mut x = seed | 1;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut v = Vec::new();
    for i in 0..n {
        let row = format!("row-{:08}", i / 3);
        let qual = format!("q{}", i % 3);
        let value: Vec<u8> = (0..value_len).map(|_| rnd() as u8).collect();
        let t = if i % 17 == 5 {
            CellType::DeleteColumn
        } else {
            CellType::Put
        };
        v.push(
            KeyValue::new(
                row.as_bytes(),
                b"f",
                qual.as_bytes(),
                1_000 + (rnd() % 50) as i64,
                t,
                &value,
            )
            .unwrap()
            .with_sequence_id(rnd() % 1000),
        );
    }
    v.sort_by(|a, b| compare_cells(&a.as_cell(), &b.as_cell()));
    v
}

fn write(cells: &[KeyValue], options: WriterOptions) -> Bytes {
    let mut w = HFileWriter::new(Vec::new(), "mem.hfile", options).unwrap();
    for c in cells {
        w.append(&c.as_cell()).unwrap();
    }
    let (bytes, summary) = w.finish().unwrap();
    assert_eq!(summary.entry_count, cells.len() as u64);
    Bytes::from(bytes)
}

fn open(bytes: Bytes) -> HFileReader {
    HFileReader::open_source(
        "mem.hfile".into(),
        Arc::new(bytes),
        ReaderOptions::default(),
    )
    .unwrap()
}

fn read_all(r: &HFileReader) -> Vec<KeyValue> {
    let mut s = r.scanner();
    let mut out = Vec::new();
    let mut more = s.seek_to_first().unwrap();
    while more {
        out.push(s.cell().unwrap().to_owned());
        more = s.next().unwrap();
    }
    out
}

#[test]
fn every_option_combination_round_trips() {
    let data = cells(3000, 100, 7);
    for checksum_type in [
        ChecksumType::Null,
        ChecksumType::Crc32,
        ChecksumType::Crc32C,
    ] {
        for bytes_per_checksum in [512u32, 16384] {
            for compression in [
                Compression::None,
                Compression::Gz,
                Compression::Snappy,
                Compression::Lz4,
                Compression::Zstd,
            ] {
                for (bloom_type, encoding) in [
                    (BloomType::None, DataBlockEncoding::None),
                    (BloomType::Row, DataBlockEncoding::Prefix),
                    (BloomType::RowCol, DataBlockEncoding::Diff),
                    (BloomType::None, DataBlockEncoding::FastDiff),
                    (BloomType::Row, DataBlockEncoding::RowIndexV1),
                ] {
                    let options = WriterOptions {
                        block_size: 4096,
                        checksum_type,
                        bytes_per_checksum,
                        compression,
                        bloom_type,
                        data_block_encoding: encoding,
                        ..Default::default()
                    };
                    let r = open(write(&data, options));
                    let label = format!(
                        "{checksum_type} {bytes_per_checksum} {compression} {bloom_type} {encoding:?}"
                    );
                    assert_eq!(r.data_block_encoding(), encoding, "{label}");
                    assert_eq!(read_all(&r), data, "{label}");
                    assert_eq!(r.entry_count(), 3000);
                    assert_eq!(r.trailer().compression, compression);
                    for c in data.iter().step_by(97) {
                        let cell = c.as_cell();
                        assert!(
                            r.may_contain_column(cell.row(), cell.family(), cell.qualifier())
                                .unwrap(),
                            "{label}"
                        );
                        let got = r
                            .get(cell.row(), cell.family(), cell.qualifier())
                            .unwrap()
                            .unwrap();
                        assert_eq!(got.as_cell().row(), cell.row());
                    }
                }
            }
        }
    }
}

#[test]
fn tags_and_sequence_ids_survive() {
    let data: Vec<KeyValue> = (0..500)
        .map(|i| {
            let tags = if i % 2 == 0 {
                vec![0, 3, 65, 1, 2]
            } else {
                vec![]
            };
            KeyValue::put(format!("r{i:05}").as_bytes(), b"cf", b"q", 5, b"v")
                .unwrap()
                .with_tags(tags)
                .unwrap()
                .with_sequence_id(i)
        })
        .collect();
    for encoding in DataBlockEncoding::ALL {
        for compress_tags in [false, true] {
            let r = open(write(
                &data,
                WriterOptions {
                    include_tags: true,
                    data_block_encoding: encoding,
                    compress_tags,
                    ..Default::default()
                },
            ));
            assert!(r.includes_tags() && r.includes_mvcc());
            assert_eq!(
                read_all(&r),
                data,
                "{encoding:?}, compressed tags {compress_tags}"
            );
        }
    }
    // Without MVCC the sequence ids read back as 0.
    let plain: Vec<KeyValue> = data
        .iter()
        .map(|c| c.clone().with_tags(vec![]).unwrap().with_sequence_id(0))
        .collect();
    let r = open(write(
        &plain,
        WriterOptions {
            include_mvcc: false,
            ..Default::default()
        },
    ));
    assert!(!r.includes_mvcc());
    assert_eq!(read_all(&r), plain);
}

/// FAST_DIFF files hold the same cells as plain ones in fewer bytes, in blocks of the encoded
/// type, ended where the plain ones are (HBase ends a block by its unencoded size).
#[test]
fn fast_diff_files_are_smaller_and_split_where_plain_ones_are() {
    let data = cells(5000, 20, 11);
    let options = |encoding| WriterOptions {
        block_size: 4096,
        data_block_encoding: encoding,
        ..Default::default()
    };
    let plain = write(&data, options(DataBlockEncoding::None));
    let encoded = write(&data, options(DataBlockEncoding::FastDiff));
    assert!(
        encoded.len() * 10 < plain.len() * 8,
        "FAST_DIFF {} bytes, plain {}",
        encoded.len(),
        plain.len()
    );
    // Every data block of the encoded file is of the encoded type.
    assert_eq!(&encoded[..8], BlockType::EncodedData.magic());
    let (p, e) = (open(plain), open(encoded));
    assert_eq!(read_all(&e), data);
    assert_eq!(p.trailer().data_index_count, e.trailer().data_index_count);
}

#[test]
fn large_files_get_multi_level_indexes_and_a_mid_key() {
    let data = cells(60_000, 10, 3);
    let r = open(write(
        &data,
        WriterOptions {
            block_size: 256,
            index_block_size: 1024,
            ..Default::default()
        },
    ));
    assert!(
        r.trailer().num_data_index_levels >= 3,
        "{}",
        r.trailer().num_data_index_levels
    );
    assert_eq!(read_all(&r).len(), data.len());
    let mid = r.mid_key().unwrap().unwrap();
    let mid = cairn_hfile::cell::KeyRef::parse(&mid).unwrap();
    let pos = data.partition_point(|c| compare_keys(&c.key(), &mid) == Ordering::Less);
    assert!(
        (data.len() / 4..data.len() * 3 / 4).contains(&pos),
        "mid key at {pos} of {}",
        data.len()
    );
    for c in data.iter().step_by(1001) {
        let mut s = r.scanner();
        assert!(s.seek(c.key().as_bytes()).unwrap());
        assert_eq!(
            compare_keys(&s.cell().unwrap().key, &c.key()),
            Ordering::Equal
        );
    }
}

#[test]
fn empty_file_reads_as_empty() {
    let r = open(write(&[], WriterOptions::default()));
    assert_eq!(r.entry_count(), 0);
    assert!(read_all(&r).is_empty());
    assert!(!r.may_contain_row(b"x").unwrap());
    assert!(r.get(b"x", b"f", b"q").unwrap().is_none());
    assert!(r.mid_key().unwrap().is_none());
}

#[test]
fn out_of_order_cells_and_bad_options_are_refused() {
    let mut w = HFileWriter::new(Vec::new(), "x", WriterOptions::default()).unwrap();
    w.append(&KeyValue::put(b"b", b"f", b"q", 1, b"").unwrap().as_cell())
        .unwrap();
    let e = w
        .append(&KeyValue::put(b"a", b"f", b"q", 1, b"").unwrap().as_cell())
        .unwrap_err();
    assert!(e.to_string().contains("out of order"), "{e}");
    let e = w
        .append(
            &KeyValue::put(b"c", b"f", b"q", 1, b"")
                .unwrap()
                .with_tags(vec![0, 1, 9])
                .unwrap()
                .as_cell(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("tags"), "{e}");
    assert!(HFileWriter::new(
        Vec::new(),
        "x",
        WriterOptions {
            bytes_per_checksum: 16,
            ..Default::default()
        }
    )
    .is_err());
}

#[test]
fn a_corrupt_block_is_reported_and_never_returned() {
    let data = cells(2000, 50, 11);
    let good = write(
        &data,
        WriterOptions {
            block_size: 4096,
            bytes_per_checksum: 512,
            ..Default::default()
        },
    );
    let r = open(good.clone());
    let (_, second_block, _) = r.data_index().entry(1);
    let mut bad = good.to_vec();
    bad[second_block as usize + 200] ^= 0x01;
    let r = open(Bytes::from(bad.clone()));
    let mut s = r.scanner();
    let mut seen = 0;
    assert!(s.seek_to_first().unwrap());
    let err = loop {
        seen += 1;
        match s.next() {
            Ok(true) => {}
            Ok(false) => panic!("scan finished over a corrupt block"),
            Err(e) => break e,
        }
    };
    assert!(matches!(err, HFileError::Checksum { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!(
            "mem.hfile: block at offset {second_block}: CRC32C checksum mismatch in chunk"
        )),
        "{msg}"
    );
    assert!(seen < data.len());
    // A secondary copy heals the read.
    let r = HFileReader::open_source(
        "mem.hfile".into(),
        Arc::new(Bytes::from(bad.clone())),
        ReaderOptions {
            secondary: Some(Arc::new(good.clone())),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(read_all(&r), data);
    // Corrupt in both copies: an error naming both, no data.
    let r = HFileReader::open_source(
        "mem.hfile".into(),
        Arc::new(Bytes::from(bad.clone())),
        ReaderOptions {
            secondary: Some(Arc::new(Bytes::from(bad))),
            ..Default::default()
        },
    )
    .unwrap();
    let mut s = r.scanner();
    s.seek_to_first().unwrap();
    let err = loop {
        match s.next() {
            Ok(true) => {}
            Ok(false) => panic!("scan finished over a corrupt block"),
            Err(e) => break e,
        }
    };
    assert!(matches!(err, HFileError::CorruptEverywhere { .. }), "{err}");
}

/// A file read without the filesystem's checksums (as HDFS store files are), with a view that
/// verifies them: `bytes` may be damaged, the view reads `good` and counts its reads.
struct SkipsFsChecksums {
    bytes: Bytes,
    good: Bytes,
    checked_reads: Arc<std::sync::atomic::AtomicUsize>,
}

struct FsChecked(Bytes, Arc<std::sync::atomic::AtomicUsize>);

impl cairn_hfile::RawSource for FsChecked {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn read_at(&self, offset: u64, len: usize) -> std::io::Result<Bytes> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        cairn_hfile::RawSource::read_at(&self.0, offset, len)
    }
}

impl cairn_hfile::RawSource for SkipsFsChecksums {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&self, offset: u64, len: usize) -> std::io::Result<Bytes> {
        cairn_hfile::RawSource::read_at(&self.bytes, offset, len)
    }

    fn fs_checksummed(self: Arc<Self>) -> Option<Arc<dyn cairn_hfile::RawSource>> {
        Some(Arc::new(FsChecked(
            self.good.clone(),
            self.checked_reads.clone(),
        )))
    }
}

#[test]
fn blocks_are_verified_by_the_file_or_by_the_filesystem_never_by_neither() {
    let data = cells(3000, 100, 41);
    for (checksum_type, verify) in [
        (ChecksumType::Crc32C, true),
        (ChecksumType::Null, true),
        (ChecksumType::Crc32C, false),
    ] {
        let good = write(
            &data,
            WriterOptions {
                block_size: 4096,
                checksum_type,
                ..Default::default()
            },
        );
        let (_, second_block, _) = open(good.clone()).data_index().entry(1);
        let mut bad = good.to_vec();
        bad[second_block as usize + 200] ^= 0x01;
        let checked_reads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let r = HFileReader::open_source(
            "mem.hfile".into(),
            Arc::new(SkipsFsChecksums {
                bytes: Bytes::from(bad),
                good: good.clone(),
                checked_reads: checked_reads.clone(),
            }),
            ReaderOptions {
                verify_checksums: verify,
                ..Default::default()
            },
        )
        .unwrap();
        // Blocks with checksums of their own, verified: the damaged one fails them and is
        // read again through the filesystem's checksums. Blocks without (NULL), or a reader
        // that does not verify them: every block comes through the filesystem's checksums.
        assert_eq!(read_all(&r), data, "{checksum_type:?} verify {verify}");
        let checked = checked_reads.load(std::sync::atomic::Ordering::Relaxed);
        let blocks = r.data_index().len();
        if checksum_type == ChecksumType::Crc32C && verify {
            // The trailer and the damaged block.
            assert_eq!(checked, 2, "{checksum_type:?}");
        } else {
            assert!(
                checked > blocks,
                "{checked} checked reads, {blocks} data blocks"
            );
        }
    }
}

#[test]
fn every_flipped_byte_anywhere_is_caught_or_harmless() {
    // Flip bytes all over a small file: opening and scanning either fails with an error or
    // returns exactly the original cells (bytes the format never reads, e.g. trailer padding).
    let data = cells(300, 20, 5);
    let good = write(
        &data,
        WriterOptions {
            block_size: 1024,
            bytes_per_checksum: 512,
            compression: Compression::Snappy,
            ..Default::default()
        },
    );
    for i in (0..good.len()).step_by(7) {
        let mut bad = good.to_vec();
        bad[i] ^= 0x80;
        let result = HFileReader::open_source(
            "f".into(),
            Arc::new(Bytes::from(bad)),
            ReaderOptions::default(),
        )
        .and_then(|r| {
            let mut s = r.scanner();
            let mut out = Vec::new();
            let mut more = s.seek_to_first()?;
            while more {
                out.push(s.cell().unwrap().to_owned());
                more = s.next()?;
            }
            Ok(out)
        });
        if let Ok(cells) = result {
            assert_eq!(cells, data, "flip at byte {i} changed the data silently");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn seeks_match_a_sorted_reference(
        n in 1usize..3000,
        seed in any::<u64>(),
        block_size in prop_oneof![Just(64usize), Just(512), Just(65536)],
        probes in proptest::collection::vec((0u32..1200, 0u8..4), 1..40),
    ) {
        let data = cells(n, 8, seed);
        let r = open(write(&data, WriterOptions { block_size, index_block_size: 512, ..Default::default() }));
        for (row, q) in probes {
            let key = if q == 3 {
                first_on_row(format!("row-{row:08}").as_bytes()).unwrap()
            } else {
                first_on_row_col(format!("row-{row:08}").as_bytes(), b"f", format!("q{q}").as_bytes()).unwrap()
            };
            let k = cairn_hfile::cell::KeyRef::parse(&key).unwrap();
            let expected = data.iter().find(|c| compare_keys(&c.key(), &k) != Ordering::Less);
            let mut s = r.scanner();
            let found = s.seek(&key).unwrap();
            prop_assert_eq!(found, expected.is_some());
            if let Some(e) = expected {
                prop_assert_eq!(s.cell().unwrap().to_owned(), e.clone());
            }
        }
    }
}

/// Every trailer field set to a wrong value: an error or the right cells, never a panic
/// (found by fuzzing: an empty data index with a first data block offset).
#[test]
fn damaged_trailer_fields_are_errors_not_panics() {
    use cairn_hfile::trailer::{Trailer, TRAILER_SIZE};
    let data = cells(500, 30, 9);
    let good = write(
        &data,
        WriterOptions {
            block_size: 512,
            index_block_size: 256,
            checksum_type: ChecksumType::Null,
            ..Default::default()
        },
    )
    .to_vec();
    let path: Arc<str> = "t".into();
    let at = good.len() - TRAILER_SIZE;
    let t = Trailer::decode(&good[at..], good.len() as u64, &path).unwrap();
    let variants: Vec<Trailer> = vec![
        Trailer {
            data_index_count: 0,
            ..t.clone()
        },
        Trailer {
            data_index_count: u32::MAX,
            ..t.clone()
        },
        Trailer {
            data_index_count: t.data_index_count + 1,
            ..t.clone()
        },
        Trailer {
            num_data_index_levels: 1,
            ..t.clone()
        },
        Trailer {
            num_data_index_levels: t.num_data_index_levels + 1,
            ..t.clone()
        },
        Trailer {
            num_data_index_levels: 16,
            ..t.clone()
        },
        Trailer {
            first_data_block_offset: Some(7),
            ..t.clone()
        },
        Trailer {
            last_data_block_offset: Some(u64::MAX - 5),
            ..t.clone()
        },
        Trailer {
            load_on_open_data_offset: 0,
            ..t.clone()
        },
        Trailer {
            load_on_open_data_offset: t.file_info_offset,
            ..t.clone()
        },
        Trailer {
            file_info_offset: t.load_on_open_data_offset,
            ..t.clone()
        },
        Trailer {
            meta_index_count: 3,
            ..t.clone()
        },
        Trailer {
            entry_count: 0,
            ..t.clone()
        },
        Trailer {
            compression: Compression::Gz,
            ..t.clone()
        },
        Trailer {
            compression: Compression::Lzo,
            ..t.clone()
        },
    ];
    for (i, v) in variants.into_iter().enumerate() {
        let mut file = good.clone();
        file[at..].copy_from_slice(&v.encode());
        let result = HFileReader::open_source(
            "t".into(),
            Arc::new(Bytes::from(file)),
            ReaderOptions::default(),
        )
        .and_then(|r| {
            let mut s = r.scanner();
            let mut out = Vec::new();
            let mut more = s.seek_to_first()?;
            while more {
                out.push(s.cell().unwrap().to_owned());
                more = s.next()?;
            }
            let _ = r.mid_key()?;
            Ok(out)
        });
        if let Ok(cells) = result {
            assert!(
                cells == data || cells.is_empty() || data.starts_with(&cells),
                "variant {i} returned wrong cells"
            );
        }
    }
}

/// `seek_before` finds the last cell sorting before any key, across data blocks (including
/// keys before the first cell, equal to a block's first cell, and after the last).
#[test]
fn seek_before_finds_the_predecessor_across_blocks() {
    let all = cells(3_000, 40, 11);
    let opts = WriterOptions {
        block_size: 1024,
        index_block_size: 256,
        ..WriterOptions::default()
    };
    let reader = Arc::new(open(write(&all, opts)));
    let mut s = reader.shared_scanner();
    let mut probes: Vec<Vec<u8>> = all
        .iter()
        .step_by(7)
        .map(|c| c.key().as_bytes().to_vec())
        .collect();
    for row in ["a", "row-", "row-00000500", "row-99999999", "zzz"] {
        probes.push(first_on_row(row.as_bytes()).unwrap());
    }
    for key in probes {
        let k = cairn_hfile::KeyRef::parse(&key).unwrap();
        let want = all
            .iter()
            .rev()
            .find(|c| compare_keys(&c.key(), &k) == Ordering::Less);
        let found = s.seek_before(&key).unwrap();
        assert_eq!(found, want.is_some(), "{k:?}");
        if let Some(w) = want {
            let got = s.cell().unwrap();
            assert_eq!(got.key, w.key(), "{k:?}");
            // The scanner continues forward from there.
            s.next().unwrap();
        }
    }
}

/// `reseek` to keys in increasing order lands where a fresh `seek` does, whether the target
/// is in the block already held or further on, and so does a reseek that keeps the leaf index
/// block between calls (files with one, two and more index levels).
#[test]
fn reseek_agrees_with_seek_for_increasing_keys() {
    let all = cells(3_000, 40, 17);
    let mut levels_seen = Vec::new();
    for index_block_size in [WriterOptions::default().index_block_size, 2048, 256] {
        let opts = WriterOptions {
            block_size: 1024,
            index_block_size,
            ..WriterOptions::default()
        };
        let reader = Arc::new(open(write(&all, opts)));
        let levels = reader.trailer().num_data_index_levels;
        levels_seen.push(levels);
        let mut moving = reader.shared_scanner();
        assert!(moving.seek_to_first().unwrap());
        let mut keeping = reader.shared_scanner();
        assert!(keeping.seek_to_first().unwrap());
        let mut leaf = None;
        // Small and large strides, including keys between cells and past the end.
        let mut targets: Vec<Vec<u8>> = Vec::new();
        let mut i = 0usize;
        let mut stride = 1usize;
        while i < all.len() {
            targets.push(all[i].key().as_bytes().to_vec());
            targets.push(first_on_row(all[i].key().row()).unwrap());
            i += stride;
            stride = (stride * 3 + 1) % 97 + 1;
        }
        targets.push(first_on_row(b"zzzz").unwrap());
        targets.sort_by(|a, b| cairn_hfile::cell::compare_key_bytes(a, b).unwrap());
        for t in targets {
            let found = moving.reseek(&t).unwrap();
            let kept = keeping.reseek_keeping_leaf(&t, &mut leaf).unwrap();
            let mut fresh = reader.shared_scanner();
            let want = fresh.seek(&t).unwrap();
            assert_eq!((found, kept), (want, want), "{levels} index levels");
            if want {
                assert_eq!(moving.cell().unwrap().key, fresh.cell().unwrap().key);
                assert_eq!(keeping.cell().unwrap().key, fresh.cell().unwrap().key);
            }
        }
        // Two levels: the reader keeps every leaf itself, and the caller needs none.
        assert_eq!(leaf.is_some(), levels > 2, "{levels} index levels");
    }
    assert_eq!(levels_seen, [1, 2, 3]);
}
