//! Fuzzes the verify path with untrusted bytes: an HDFS `.meta` header, then data and sums cut
//! at a position the input chooses. Verification must return Ok or an error, never panic, and
//! every implementation must agree with the portable one.
#![no_main]

use std::io::Read;

use cairn_checksum::hdfs::BlockMetadataHeader;
use cairn_checksum::{ChecksumReader, ChecksumType, DataChecksum, Implementation};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    if input.len() < 9 {
        let _ = BlockMetadataHeader::decode(input);
        return;
    }
    let (header, rest) = input.split_at(7);
    let split = u16::from_le_bytes([rest[0], rest[1]]) as usize;
    let body = &rest[2..];
    let (data, sums) = body.split_at(split.min(body.len()));
    let (checksum_type, bpc) = match BlockMetadataHeader::decode(header) {
        Ok(h) => (h.checksum_type, h.bytes_per_checksum),
        // Still exercise verification with a small chunk size derived from the bytes.
        Err(_) => (
            ChecksumType::from_code(header[2] % 3).expect("code < 3"),
            u32::from(header[6]) + 1,
        ),
    };
    // Chunk sizes beyond the data behave like one chunk; keep runs fast.
    let bpc = bpc.min(1 << 20);
    let portable = DataChecksum::with_implementation(checksum_type, bpc, Implementation::Portable)
        .expect("bpc > 0");
    let expected = portable.verify_chunked(data, sums, 0);
    for imp in Implementation::available() {
        let dc = DataChecksum::with_implementation(checksum_type, bpc, imp).expect("available");
        assert_eq!(dc.verify_chunked(data, sums, 0), expected, "{imp}");
    }
    let mut out = Vec::new();
    let streamed = ChecksumReader::new(data, sums, portable, 0).read_to_end(&mut out);
    if expected.is_ok() {
        assert!(streamed.is_ok(), "{streamed:?}");
        assert_eq!(out, data);
    } else {
        assert!(streamed.is_err());
    }
});
