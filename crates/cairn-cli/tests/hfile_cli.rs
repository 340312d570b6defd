//! End-to-end tests of `cairn hfile`.

use std::path::Path;
use std::process::{Command, Output};

use cairn_cell::{CellType, KeyValue};
use cairn_hfile::{BloomType, Compression, HFileWriter, WriterOptions};

fn cairn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .output()
        .expect("run cairn")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn write_file(path: &Path, n: u32) {
    let options = WriterOptions {
        block_size: 1024,
        compression: Compression::Gz,
        bloom_type: BloomType::Row,
        bytes_per_checksum: 512,
        ..Default::default()
    };
    let mut w = HFileWriter::new(
        std::fs::File::create(path).unwrap(),
        path.display().to_string(),
        options,
    )
    .unwrap();
    for i in 0..n {
        let t = if i % 10 == 0 {
            CellType::DeleteColumn
        } else {
            CellType::Put
        };
        let kv = KeyValue::new(
            format!("row{i:05}").as_bytes(),
            b"f",
            b"q",
            100,
            t,
            format!("value {i}").as_bytes(),
        )
        .unwrap();
        w.append(&kv.as_cell().clone()).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn meta_verify_order_stats_and_print() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.hfile");
    write_file(&f, 2000);
    let p = f.to_str().unwrap();
    let o = cairn(&["hfile", "-f", p, "-m", "-v", "-k", "-s"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    for want in [
        "compression=gz",
        "entries=2000",
        "comparatorClassName=org.apache.hadoop.hbase.KeyValue$KVComparator",
        "hfile.LASTKEY = row01999/f:q/100/Put",
        "BLOOM_FILTER_TYPE = ROW",
        "BloomType: ROW",
        "verified",
        "(0 checksum failures)",
        "2000 cells, 0 out of order",
        "| Key length | 2000 |",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
    let o = cairn(&["hfile", "-f", p, "-p"]);
    let out = text(&o);
    assert_eq!(out.lines().filter(|l| l.starts_with("K: ")).count(), 2000);
    assert!(
        out.contains("K: row00010/f:q/100/DeleteColumn/vlen=8/seqid=0 V: value 10"),
        "{out}"
    );
}

#[test]
fn corruption_names_file_and_block_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("b.hfile");
    write_file(&f, 2000);
    let mut bytes = std::fs::read(&f).unwrap();
    bytes[3000] ^= 0x04;
    std::fs::write(&f, &bytes).unwrap();
    let p = f.to_str().unwrap();
    let o = cairn(&["hfile", "-f", p, "-v"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains(&format!("{p}: ERROR: {p}: block at offset")),
        "{out}"
    );
    assert!(out.contains("CRC32C checksum mismatch in chunk"), "{out}");
    // Scanning stops at the bad block too.
    let o = cairn(&["hfile", "-f", p, "-p"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("checksum mismatch"));
}

#[test]
fn not_an_hfile_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("c.txt");
    std::fs::write(&f, vec![b'x'; 10_000]).unwrap();
    let o = cairn(&["hfile", "-f", f.to_str().unwrap(), "-m"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("cannot open"), "{}", text(&o));
    assert!(text(&o).contains("trailer"), "{}", text(&o));
    let o = cairn(&["hfile", "-f", "/no/such/file", "-m"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("No such file"), "{}", text(&o));
}

#[test]
fn hbase_options_verbose_keys_block_index_and_block_headers() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("d.hfile");
    write_file(&f, 2000);
    let p = f.to_str().unwrap();
    // -h is HBase's printblockheaders, not help.
    let o = cairn(&["hfile", "-h", "-f", p]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.starts_with("Block Headers:\n"), "{out}");
    let headers = out
        .lines()
        .filter(|l| l.starts_with("block offset="))
        .count();
    assert!(headers > 10, "{out}");
    assert!(out.contains("type=DATA"), "{out}");
    assert!(!out.contains("verified"), "{out}");
    // -b is HBase's printblocks: the data block index. Files may come as arguments.
    let o = cairn(&["hfile", "-b", p]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.starts_with("Block Index:\nsize="), "{out}");
    assert!(
        out.contains("key=row00000/f:q/100/DeleteColumn\n  offset=0, dataSize="),
        "{out}"
    );
    assert!(!out.contains("block offset="), "{out}");
    // -v: HBase's verbose lines around a full scan, and cairn's checksum verification.
    let o = cairn(&["hfile", "-v", p, p]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert_eq!(
        out.matches(&format!("Scanning -> {p}\n")).count(),
        2,
        "{out}"
    );
    assert!(out.contains("Scanned kv count -> 4000\n"), "{out}");
    assert!(out.contains("(0 checksum failures)"), "{out}");
    // -e prints keys without values.
    let o = cairn(&["hfile", "-e", "-f", p]);
    let out = text(&o);
    assert_eq!(out.lines().filter(|l| l.starts_with("K: ")).count(), 2000);
    assert!(
        out.contains("K: row00010/f:q/100/DeleteColumn/vlen=8/seqid=0\n"),
        "{out}"
    );
    assert!(!out.contains(" V: "), "{out}");
    // Help is --help only; no file at all is a usage error.
    let o = cairn(&["hfile", "--help"]);
    assert!(o.status.success());
    assert!(text(&o).contains("--printblockheaders"), "{}", text(&o));
    let o = cairn(&["hfile", "-m"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}
