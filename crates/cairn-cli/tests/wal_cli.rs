//! HBase 2.6.1's `WALPrettyPrinter` (`hbase wal -p`, run through `dev.cairn.interop.WalInterop
//! print`) over the WAL files cairn writes: a rolled file, closed with its trailer, and the
//! active one, preallocated and ending in cairn's end marker. HBase's tool prints every entry
//! (sequence id, table, region, every cell and value) as written, and `cairn wal -p` prints
//! exactly what HBase's prints, line for line.
//!
//! Needs `mvn -f interop/hbase/pom.xml package`; skipped without the jars unless
//! `CAIRN_REQUIRE_HBASE_INTEROP=1`.

#[allow(dead_code)]
#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cairn_cell::CellType;
use cairn_wal::{Durability, KeyValue, ServerName, Wal, WalEdit, WalLocation, WalOptions};

/// HBase's `Bytes.toStringBinary`: printable ASCII but `\` as is, the rest as `\xHH`.
fn string_binary(b: &[u8]) -> String {
    b.iter()
        .map(|&c| {
            if (b' '..=b'~').contains(&c) && c != b'\\' {
                (c as char).to_string()
            } else {
                format!("\\x{c:02X}")
            }
        })
        .collect()
}

fn edits() -> Vec<WalEdit> {
    (0..40u64)
        .map(|i| {
            let row = format!("row-{i:04}");
            let mut cells = vec![KeyValue::put(
                row.as_bytes(),
                b"f",
                b"q",
                1_700_000_000_000 + i as i64,
                format!("value-{i}").as_bytes(),
            )
            .unwrap()];
            match i % 4 {
                1 => cells.push(
                    KeyValue::put(row.as_bytes(), b"g", b"bin", 5, &[0, 1, b'\\', 0xFF])
                        .unwrap()
                        .with_tags(vec![0, 5, 8, 0, 0, 0, i as u8])
                        .unwrap(),
                ),
                2 => cells.push(
                    KeyValue::new(row.as_bytes(), b"f", b"q", 9, CellType::Delete, b"").unwrap(),
                ),
                3 => cells.extend((0..20).map(|c| {
                    KeyValue::put(
                        row.as_bytes(),
                        b"f",
                        format!("c{c}").as_bytes(),
                        3,
                        &[c; 200],
                    )
                    .unwrap()
                })),
                _ => {}
            }
            let table = if i % 2 == 0 { "ns:orders" } else { "plain" };
            WalEdit::new(
                format!("{:032x}", 0xabc + i % 3).into_bytes(),
                table.as_bytes().to_vec(),
                1000 + i,
                1_700_000_000_000 + i as i64,
                cells,
            )
        })
        .collect()
}

/// `WalInterop print -p FILE`: HBase's `WALPrettyPrinter`, dates in UTC as `cairn wal` prints
/// them.
fn hbase_print(cp: &str, file: &Path) -> Output {
    Command::new("java")
        .env("TZ", "UTC")
        .args(hbase::JAVA_FLAGS)
        .arg("-cp")
        .arg(cp)
        .arg("dev.cairn.interop.WalInterop")
        .args(["print", "-p"])
        .arg(file)
        .output()
        .expect("run java")
}

fn cairn_wal(file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["wal", "-p"])
        .arg(file)
        .output()
        .expect("run cairn wal")
}

/// What HBase's printer says of each entry: its `Sequence=…, table=…, region=…` head and every
/// `row=…` and `value: …` line, in order.
fn printed_entries(stdout: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for l in stdout.lines() {
        if let Some(head) = l.strip_prefix("Sequence=") {
            let head = head.split(", at write timestamp").next().unwrap();
            out.push(vec![format!("Sequence={head}")]);
        } else if l.starts_with("row=") || l.starts_with("    value: ") {
            out.last_mut()
                .expect("a cell after its entry")
                .push(l.into());
        }
    }
    out
}

/// The same for what was written.
fn written_entries(edits: &[WalEdit]) -> Vec<Vec<String>> {
    edits
        .iter()
        .map(|e| {
            let mut v = vec![format!(
                "Sequence={}, table={}, region={}",
                e.sequence_id,
                String::from_utf8_lossy(&e.table),
                String::from_utf8_lossy(&e.region)
            )];
            for kv in &e.cells {
                let c = kv.as_cell();
                let ty = if c.type_code() == 4 { "Put" } else { "Delete" };
                v.push(format!(
                    "row={}, column={}:{}, timestamp={}, type={ty}",
                    string_binary(c.row()),
                    string_binary(c.family()),
                    string_binary(c.qualifier()),
                    c.timestamp()
                ));
                v.push(format!("    value: {}", string_binary(c.value)));
            }
            v
        })
        .collect()
}

fn wal_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            let n = cairn_wal::names::parse_wal_file_name(p.file_name()?.to_str()?)?;
            Some((n.number, p))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, p)| p).collect()
}

#[test]
fn hbase_wal_pretty_printer_reads_cairns_files_as_cairn_wal_does() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let loc = WalLocation::new(
        root.path(),
        ServerName::parse("cairn-cli.example.com,16020,1700000000000").unwrap(),
    );
    let roll_size = 256 << 10;
    let options = WalOptions {
        roll_size,
        ..WalOptions::default()
    };
    let (wal, _) = Wal::open(&loc, options, |_| Ok(())).unwrap();
    let written = edits();
    for (i, e) in written.iter().enumerate() {
        wal.append(e, Durability::SyncWal).unwrap();
        if i == 24 {
            wal.roll().unwrap();
        }
    }
    let files = wal_files(&loc.dir());
    assert_eq!(files.len(), 2, "{files:?}");
    let closed = std::fs::read(&files[0]).unwrap();
    assert!(closed.ends_with(b"LAWP"), "the rolled file has its trailer");
    // The active file is preallocated: its length is the roll size, its entries far shorter.
    assert!(std::fs::metadata(&files[1]).unwrap().len() >= roll_size);

    let mut printed = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let hbase = hbase_print(&cp, f);
        let hbase_out = String::from_utf8_lossy(&hbase.stdout).into_owned();
        let hbase_err = String::from_utf8_lossy(&hbase.stderr);
        if i == 0 {
            assert!(hbase.status.success(), "{}: {hbase_err}", f.display());
        } else {
            // As at the end of HBase's own files never closed: an EOF after the last entry.
            assert!(
                hbase_err.contains("java.io.EOFException"),
                "{}: {hbase_err}",
                f.display()
            );
        }
        let ours = cairn_wal(f);
        assert!(
            ours.status.success(),
            "{}",
            String::from_utf8_lossy(&ours.stderr)
        );
        let ours_out = String::from_utf8_lossy(&ours.stdout);
        let hbase_lines: Vec<&str> = hbase_out.lines().collect();
        let our_lines: Vec<&str> = ours_out.lines().collect();
        assert_eq!(our_lines, hbase_lines, "cairn wal -p {}", f.display());
        printed.extend(printed_entries(&hbase_out));
    }
    assert_eq!(printed, written_entries(&written));
    wal.close().unwrap();
}
