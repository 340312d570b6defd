//! Property tests: every implementation against a simple table-driven reference, over random
//! lengths, alignments and chunk sizes; corruption always found and located.

use cairn_checksum::{ChecksumError, ChecksumType, DataChecksum, Implementation};
use proptest::prelude::*;

/// A byte-at-a-time table-driven CRC: the textbook algorithm, sharing no code with the crate.
fn reference(t: ChecksumType, data: &[u8]) -> u32 {
    let poly: u32 = match t {
        ChecksumType::Crc32 => 0xEDB8_8320,
        ChecksumType::Crc32C => 0x82F6_3B78,
        ChecksumType::Null => return 0,
    };
    let table: Vec<u32> = (0..256u32)
        .map(|i| (0..8).fold(i, |c, _| if c & 1 != 0 { (c >> 1) ^ poly } else { c >> 1 }))
        .collect();
    !data.iter().fold(!0u32, |c, &b| {
        (c >> 8) ^ table[((c ^ b as u32) & 0xFF) as usize]
    })
}

fn reference_sums(t: ChecksumType, bpc: usize, data: &[u8]) -> Vec<u8> {
    data.chunks(bpc)
        .flat_map(|c| reference(t, c).to_be_bytes())
        .collect()
}

fn chunk_size() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(512u32),
        Just(1024),
        Just(4096),
        Just(16384),
        Just(65536),
        1u32..=70_000,
    ]
}

fn crc_type() -> impl Strategy<Value = ChecksumType> {
    prop_oneof![Just(ChecksumType::Crc32), Just(ChecksumType::Crc32C)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_implementation_matches_the_reference(
        t in crc_type(),
        bpc in chunk_size(),
        len in 0usize..300_000,
        align in 0usize..64,
        seed in any::<u64>(),
    ) {
        let mut buf = vec![0u8; len + align];
        let mut x = seed | 1;
        for b in buf.iter_mut() {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            *b = x as u8;
        }
        let data = &buf[align..];
        let expected = reference_sums(t, bpc as usize, data);
        for imp in Implementation::available() {
            let dc = DataChecksum::with_implementation(t, bpc, imp).unwrap();
            let sums = dc.compute_chunked_to_vec(data);
            prop_assert_eq!(&sums, &expected, "{} {} bpc {} len {}", imp, t, bpc, len);
            prop_assert!(dc.verify_chunked(data, &sums, 0).is_ok());
            prop_assert_eq!(dc.checksum(data), reference(t, data));
        }
    }

    #[test]
    fn corruption_is_found_in_the_right_chunk(
        t in crc_type(),
        bpc in chunk_size(),
        len in 1usize..200_000,
        pos_seed in any::<usize>(),
        bit in 0u8..8,
        base in 0u64..1 << 40,
    ) {
        let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        let pos = pos_seed % len;
        for imp in Implementation::available() {
            let dc = DataChecksum::with_implementation(t, bpc, imp).unwrap();
            let sums = dc.compute_chunked_to_vec(&data);
            let mut bad = data.clone();
            bad[pos] ^= 1 << bit;
            let err = dc.verify_chunked(&bad, &sums, base).unwrap_err();
            let ChecksumError::Mismatch(m) = err else { panic!("{err}") };
            let chunk = pos / bpc as usize;
            prop_assert_eq!(m.chunk_index, chunk);
            prop_assert_eq!(m.offset, base + (chunk as u64) * bpc as u64);
            prop_assert_eq!(m.computed, reference(t, &bad[chunk * bpc as usize..][..m.chunk_len]));
        }
    }
}

#[test]
fn published_check_values() {
    for imp in Implementation::available() {
        let c = |t| DataChecksum::with_implementation(t, 512, imp).unwrap();
        assert_eq!(
            c(ChecksumType::Crc32C).checksum(b"123456789"),
            0xE306_9283,
            "{imp}"
        );
        assert_eq!(
            c(ChecksumType::Crc32).checksum(b"123456789"),
            0xCBF4_3926,
            "{imp}"
        );
        // RFC 3720 (iSCSI) appendix B.4 CRC32C examples.
        let crc = c(ChecksumType::Crc32C);
        assert_eq!(crc.checksum(&[0u8; 32]), 0x8A91_36AA, "{imp}");
        assert_eq!(crc.checksum(&[0xFFu8; 32]), 0x62A8_AB43, "{imp}");
        let inc: Vec<u8> = (0..32).collect();
        assert_eq!(crc.checksum(&inc), 0x46DD_794E, "{imp}");
        let dec: Vec<u8> = (0..32).rev().collect();
        assert_eq!(crc.checksum(&dec), 0x113F_DB5C, "{imp}");
        let mut scsi_read = vec![0u8; 48];
        scsi_read[..8].copy_from_slice(&[0x01, 0xC0, 0, 0, 0, 0, 0, 0]);
        scsi_read[16..24].copy_from_slice(&[0x14, 0, 0, 0, 0, 0, 0x04, 0]);
        scsi_read[24..32].copy_from_slice(&[0, 0, 0, 0x14, 0, 0, 0, 0x18]);
        scsi_read[32..40].copy_from_slice(&[0x28, 0, 0, 0, 0, 0, 0, 0]);
        scsi_read[40] = 0x02;
        assert_eq!(crc.checksum(&scsi_read), 0xD996_3A56, "{imp}");
    }
}

/// Every single-bit flip anywhere in a 64 KiB block is detected and located, by the selected
/// implementation over the whole block, and by every implementation on the chunk concerned.
#[test]
fn every_single_bit_flip_in_a_64k_block_is_detected() {
    const BLOCK: usize = 64 * 1024;
    let mut block: Vec<u8> = (0..BLOCK as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 9) as u8)
        .collect();
    for t in [ChecksumType::Crc32C, ChecksumType::Crc32] {
        let whole = DataChecksum::new(t, 512).unwrap();
        let sums = whole.compute_chunked_to_vec(&block);
        let per_impl: Vec<DataChecksum> = Implementation::available()
            .into_iter()
            .map(|i| DataChecksum::with_implementation(t, 512, i).unwrap())
            .collect();
        for pos in 0..BLOCK {
            let chunk = pos / 512;
            for bit in 0..8 {
                block[pos] ^= 1 << bit;
                match whole.verify_chunked(&block, &sums, 0) {
                    Err(ChecksumError::Mismatch(m)) => assert_eq!(m.chunk_index, chunk),
                    other => panic!("{t} flip at byte {pos} bit {bit}: {other:?}"),
                }
                for dc in &per_impl {
                    let c = &block[chunk * 512..chunk * 512 + 512];
                    assert!(
                        dc.verify_chunked(c, &sums[chunk * 4..chunk * 4 + 4], 0)
                            .is_err(),
                        "{} {t} flip at byte {pos} bit {bit}",
                        dc.implementation()
                    );
                }
                block[pos] ^= 1 << bit;
            }
        }
    }
}
