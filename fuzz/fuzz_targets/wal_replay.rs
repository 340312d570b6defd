//! Fuzzes WAL replay in HBase's format: the input becomes a WAL file of this server's (and,
//! with bit 2, of a dead server's too) under an empty root, and `Wal::open` replays them.
//! Malformed files must give an error naming the file or a drop report, never a panic; every
//! byte of every file must be replayed or reported; replay never invents an entry.
//!
//! The first input byte chooses how the rest is laid out:
//! - bit 0 clear: the bytes are the whole file (headers are fuzzed too);
//! - bit 0 set: a valid header, then the bytes; bit 4 makes it HBase's header (no cairn
//!   field: entries need no checksum), bit 3 a recycled file's (masked checksums);
//! - bit 1 set (with bit 0): the bytes are cut into entries (a length byte, then the `WALKey`
//!   bytes; a count byte, then that many cells, each a length byte and bytes), each given a
//!   correct checksum and lengths, so the fuzzer reaches the key and cell decoders behind the
//!   checksum: replay must return exactly the entries whose key and cells parse, in order,
//!   up to the first one that does not;
//! - bit 2 set: the same file is also a dead server's (its own directory), so replay reads
//!   both and must go on after a damaged one.
#![no_main]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cairn_wal::entry::{self, parse_cell, parse_key};
use cairn_wal::file::{self, CairnFileInfo, MAGIC};
use cairn_wal::{ServerName, Wal, WalEdit, WalError, WalLocation, WalOptions};
use libfuzzer_sys::fuzz_target;

const NUMBER: u64 = 1_700_000_000_000;

fn root() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        std::env::temp_dir().join(format!("cairn-fuzz-wal-replay-{}", std::process::id()))
    })
}

fn server(name: &str) -> ServerName {
    ServerName::parse(name).expect("server name")
}

/// HBase's own header: its writer and codec, no cairn field.
fn hbase_header() -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&[0x08, 0x00, 0x18, 0x00]);
    h.push(0x22);
    h.push(17);
    h.extend_from_slice(b"ProtobufLogWriter");
    let mut out = MAGIC.to_vec();
    out.push(h.len() as u8);
    out.extend_from_slice(&h);
    out
}

/// The entry `entry::assemble` made of `key` and `cells`, decoded as replay must see it.
fn expected(key: &[u8], cells: &[&[u8]]) -> Option<WalEdit> {
    let mut with_crc = key.to_vec();
    with_crc.extend_from_slice(&[0xC5, 0x3E, 0, 0, 0, 0]);
    let k = parse_key(&with_crc).ok()?;
    if k.cell_count as usize != cells.len() {
        return None;
    }
    let cells = cells
        .iter()
        .map(|c| parse_cell(c, k.sequence_id).ok())
        .collect::<Option<Vec<_>>>()?;
    Some(WalEdit {
        region: k.region,
        table: k.table,
        sequence_id: k.sequence_id,
        write_time_ms: k.write_time as i64,
        cluster_ids: k.cluster_ids,
        nonce_group: k.nonce_group,
        nonce: k.nonce,
        orig_sequence_id: k.orig_sequence_id,
        cells,
    })
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    fs::create_dir_all(dir).expect("dir");
    let p = dir.join(name);
    fs::write(&p, bytes).expect("write");
    p
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, rest)) = input.split_first() else {
        return;
    };
    let root = root();
    let _ = fs::remove_dir_all(root);
    let own = WalLocation::new(root, server("localhost,16020,1"));

    let mut f = Vec::new();
    let mut expect: Option<Vec<WalEdit>> = None;
    if mode & 1 == 0 {
        f.extend_from_slice(rest);
    } else {
        let hbase = mode & 16 != 0;
        let recycled = mode & 8 != 0 && !hbase;
        if hbase {
            f.extend_from_slice(&hbase_header());
        } else {
            f.extend_from_slice(&file::encode_header(CairnFileInfo {
                number: NUMBER,
                recycled,
            }));
        }
        let mask = if recycled { file::crc_mask(NUMBER) } else { 0 };
        if mode & 2 == 0 {
            f.extend_from_slice(rest);
        } else {
            let mut edits = Vec::new();
            let mut decoding = true;
            let mut r = rest;
            while let Some((&klen, tail)) = r.split_first() {
                let (key, tail) = tail.split_at((klen as usize).min(tail.len()));
                let (count, mut tail) = match tail.split_first() {
                    Some((&c, t)) => (c % 4, t),
                    None => (0, tail),
                };
                let mut cells = Vec::new();
                for _ in 0..count {
                    let Some((&clen, t)) = tail.split_first() else {
                        break;
                    };
                    let (c, t) = t.split_at((clen as usize).min(t.len()));
                    cells.push(c);
                    tail = t;
                }
                f.extend_from_slice(&entry::assemble(key, &cells, mask));
                if decoding {
                    match expected(key, &cells) {
                        Some(e) => edits.push(e),
                        None => decoding = false,
                    }
                }
                r = tail;
            }
            expect = Some(edits);
        }
    }
    let name = format!("{}.{NUMBER}", own.server.file_prefix());
    write(&own.dir(), &name, &f);
    if mode & 4 != 0 {
        let dead = WalLocation::new(root, server("dead.example.com,16020,2"));
        write(
            &dead.dir(),
            &format!("{}.{NUMBER}", dead.server.file_prefix()),
            &f,
        );
    }

    let mut replayed = Vec::new();
    // A small roll size: every open preallocates its first file to this size.
    let options = WalOptions {
        roll_size: 64 * 1024,
        ..WalOptions::default()
    };
    let result = Wal::open(&own, options, |e| {
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
            // (Unless the entries happen to end like a trailer, which then bounds them.)
            let trailer_like = f.ends_with(b"LAWP");
            if let Some(expect) = expect.filter(|_| !trailer_like) {
                let copies = if mode & 4 != 0 { 2 } else { 1 };
                assert_eq!(replayed.len(), expect.len() * copies);
                for chunk in replayed.chunks(expect.len().max(1)) {
                    assert_eq!(chunk, &expect[..chunk.len()]);
                }
            }
            wal.close().expect("close");
        }
        Err(e) => {
            // Only a header can be refused, and the error names the file.
            assert!(mode & 1 == 0, "{e}");
            assert!(e.to_string().contains(&format!(".{NUMBER}")), "{e}");
        }
    }
});
