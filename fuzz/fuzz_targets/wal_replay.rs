//! Fuzzes WAL replay: the input becomes segment files in an empty directory and `Wal::open`
//! replays them. Malformed segments must give an error or a drop report, never a panic, and
//! every byte of every segment must be either replayed or reported.
//!
//! The first input byte chooses how the rest is laid out:
//! - bit 0 clear: the bytes are the whole segment file (headers are fuzzed too);
//! - bit 0 set: a valid header, then the bytes;
//! - bit 1 set (with bit 0): the bytes are split into payloads (a length byte, then that many
//!   bytes), each framed with a correct length and CRC32C, so the fuzzer reaches the edit
//!   decoder behind the checksum; replay must return exactly the payloads that decode, in order;
//! - bit 2 set: a second, valid and empty-of-records segment follows, so replay must go on
//!   after a damaged one;
//! - bit 3 set (with bit 0): the header is a recycled segment's, and the frames of bit 1 carry
//!   its masked checksums.
#![no_main]

use std::fs;
use std::path::PathBuf;
use std::sync::OnceLock;

use cairn_checksum::{ChecksumType, DataChecksum};
use cairn_wal::segment::{self, decode_payload};
use cairn_wal::{Wal, WalEdit, WalError, WalOptions};
use libfuzzer_sys::fuzz_target;

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        std::env::temp_dir().join(format!("cairn-fuzz-wal-replay-{}", std::process::id()))
    })
}

fn frame(payload: &[u8], mask: u32, out: &mut Vec<u8>) {
    let len = (payload.len() as u32).to_be_bytes();
    let mut crc = DataChecksum::new(ChecksumType::Crc32C, 512)
        .expect("crc32c")
        .running();
    crc.update(&len);
    crc.update(payload);
    out.extend_from_slice(&len);
    out.extend_from_slice(&(crc.value() ^ mask).to_be_bytes());
    out.extend_from_slice(payload);
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, rest)) = input.split_first() else {
        return;
    };
    let dir = dir();
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir).expect("temp dir");

    let mut file = Vec::new();
    let mut expected: Option<Vec<WalEdit>> = None;
    if mode & 1 == 0 {
        file.extend_from_slice(rest);
    } else {
        let recycled = mode & 8 != 0;
        let mask = if recycled {
            file.extend_from_slice(&segment::encode_recycled_header(1));
            segment::record_crc_mask(1)
        } else {
            file.extend_from_slice(&segment::encode_header(1));
            0
        };
        if mode & 2 == 0 {
            file.extend_from_slice(rest);
        } else {
            let mut edits = Vec::new();
            let mut decoding = true;
            let mut r = rest;
            while let Some((&n, tail)) = r.split_first() {
                let (payload, tail) = tail.split_at((n as usize).min(tail.len()));
                frame(payload, mask, &mut file);
                if decoding {
                    match decode_payload(payload) {
                        // A payload shorter than the smallest valid one is a bad length.
                        Ok(e) if payload.len() >= 5 => edits.push(e),
                        _ => decoding = false,
                    }
                }
                r = tail;
            }
            expected = Some(edits);
        }
    }
    fs::write(segment::segment_path(dir, 1), &file).expect("write segment");
    if mode & 4 != 0 {
        fs::write(segment::segment_path(dir, 2), segment::encode_header(2)).expect("write");
    }

    let mut replayed = Vec::new();
    // A small roll size: every open preallocates its first segment to this size.
    let options = WalOptions {
        roll_size: 64 * 1024,
        ..WalOptions::default()
    };
    let result = Wal::open(dir, options, |e| {
        replayed.push(e);
        Ok::<(), WalError>(())
    });
    match result {
        Ok((wal, report)) => {
            assert_eq!(report.edits, replayed.len() as u64);
            for d in &report.dropped {
                let len = fs::metadata(&d.segment).expect("stat").len();
                assert_eq!(d.offset + d.bytes, len, "{d}");
            }
            if let Some(expected) = expected {
                assert_eq!(replayed, expected);
            }
            wal.close().expect("close");
        }
        Err(e) => {
            // Only the header of segment 1 can be refused, and the error must name it.
            assert!(mode & 1 == 0, "{e}");
            assert!(e.to_string().contains("wal.00000000000000000001"), "{e}");
        }
    }
});
