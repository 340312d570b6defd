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

/// An HFile of `cells` (row, family, value, tags), in order, at `path` (directories made).
fn write_cells(path: &Path, cells: &[(&str, &str, &[u8], Vec<u8>)]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let options = WriterOptions {
        include_tags: cells.iter().any(|c| !c.3.is_empty()),
        ..Default::default()
    };
    let mut w = HFileWriter::new(
        std::fs::File::create(path).unwrap(),
        path.display().to_string(),
        options,
    )
    .unwrap();
    for (row, family, value, tags) in cells {
        let kv = KeyValue::new(
            row.as_bytes(),
            family.as_bytes(),
            b"q",
            5,
            CellType::Put,
            value,
        )
        .unwrap()
        .with_tags(tags.clone())
        .unwrap();
        w.append(&kv.as_cell().clone()).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn seek_to_row_reads_that_row_only_with_hbase_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("w.hfile");
    write_file(&f, 2000);
    let p = f.to_str().unwrap();
    let keys = |o: &Output| -> Vec<String> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.starts_with("K: "))
            .map(str::to_string)
            .collect()
    };
    let o = cairn(&["hfile", "-f", p, "-p", "-w", "row01234"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        keys(&o),
        ["K: row01234/f:q/100/Put/vlen=10/seqid=0 V: value 1234"]
    );
    assert!(text(&o).contains("Scanned kv count -> 1"), "{}", text(&o));
    // The row as Bytes.toStringBinary writes it: \x escapes are read back.
    let o = cairn(&["hfile", "-f", p, "-e", "-w", "row\\x3012\\x334"]);
    assert_eq!(keys(&o), ["K: row01234/f:q/100/Put/vlen=10/seqid=0"]);
    // A row between two others: nothing, and the scan stops there.
    let o = cairn(&["hfile", "-f", p, "-p", "-w", "row01234a"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(keys(&o).is_empty(), "{}", text(&o));
    let o = cairn(&["hfile", "-f", p, "-p", "-w", ""]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("Invalid row is specified."),
        "{}",
        text(&o)
    );
}

#[test]
fn family_check_reports_cells_outside_their_files_family() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("fam1").join("a");
    write_cells(
        &good,
        &[("r1", "fam1", b"v", vec![]), ("r2", "fam1", b"v", vec![])],
    );
    let o = cairn(&["hfile", "-a", good.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("WARNING"), "{}", text(&o));

    let bad = dir.path().join("other").join("b");
    write_cells(
        &bad,
        &[("r1", "fam1", b"v", vec![]), ("r2", "fam2", b"v", vec![])],
    );
    let o = cairn(&["hfile", "-a", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err.matches("WARNING, filename does not match kv family")
            .count(),
        2,
        "{err}"
    );
    assert_eq!(
        err.matches("WARNING, previous kv has different family")
            .count(),
        1,
        "{err}"
    );
}

#[test]
fn details_count_sizes_by_hbases_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("d.hfile");
    write_file(&f, 2000);
    let o = cairn(&["hfile", "-d", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    // -d implies -s.
    assert!(out.contains("| Val length | 2000 |"), "{out}");
    // Values "value 0" .. "value 1999" are 7 to 10 bytes: all at or below 10, none at or
    // below 3 (printed for context).
    let val = out
        .split("Val length (range <= count):\n")
        .nth(1)
        .expect(&out);
    let lines: Vec<&str> = val.lines().take(3).collect();
    assert_eq!(
        lines,
        [
            "                3 <= 0",
            "               10 <= 2000",
            "Row size (bytes) (range <= count):"
        ]
    );
    let o = cairn(&["hfile", "-s", f.to_str().unwrap()]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("range <= count"));
}

#[test]
fn a_region_is_read_by_its_name_under_the_root() {
    let root = tempfile::tempdir().unwrap();
    let enc = "0123456789abcdef0123456789abcdef";
    let region = root.path().join("data/ns1/t1").join(enc);
    write_cells(&region.join("cf/f1"), &[("a", "cf", b"1", vec![])]);
    write_cells(&region.join("cf/f2"), &[("b", "cf", b"2", vec![])]);
    write_cells(&region.join("cg/f3"), &[("c", "cg", b"3", vec![])]);
    // Not store files: a region's own directories and files.
    std::fs::create_dir_all(region.join(".tmp/cf")).unwrap();
    std::fs::create_dir_all(region.join("recovered.edits")).unwrap();
    std::fs::write(region.join("recovered.edits/1"), b"x").unwrap();
    std::fs::write(region.join(".regioninfo"), b"x").unwrap();
    let name = format!("ns1:t1,a,1700000000000.{enc}.");
    let data = root.path().to_str().unwrap();
    let o = cairn(&["hfile", "--data", data, "-r", &name, "-v", "-e"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("Number of region files found -> 3"), "{out}");
    for row in ["a/cf:q", "b/cf:q", "c/cg:q"] {
        assert!(out.contains(&format!("K: {row}")), "{row} missing: {out}");
    }
    let o = cairn(&["hfile", "-r", &name]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("--data"), "{}", text(&o));
    let o = cairn(&["hfile", "--data", data, "-r", "ns1:t1,a,1700000000000"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("no encoded region name"), "{}", text(&o));
}

#[test]
fn mob_integrity_finds_missing_mob_files() {
    // A MOB reference cell as HBase writes it: tag 5 (reference), tag 6 (table name), value =
    // the real value's length and the MOB file's name.
    let tag = |t: u8, v: &[u8]| {
        let mut b = ((v.len() + 1) as u16).to_be_bytes().to_vec();
        b.push(t);
        b.extend_from_slice(v);
        b
    };
    let mut tags = tag(5, b"");
    tags.extend(tag(6, b"t"));
    let mut value = 100u32.to_be_bytes().to_vec();
    value.extend_from_slice(b"mobfile1");
    let root = tempfile::tempdir().unwrap();
    let f = root.path().join("cf").join("h");
    write_cells(
        &f,
        &[("r1", "cf", &value, tags), ("r2", "cf", b"plain", vec![])],
    );
    let data = root.path().to_str().unwrap();
    let o = cairn(&["hfile", "--data", data, "-i", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("ERROR, the mob file [mobfile1] is missing referenced by cell r1/cf:q"),
        "{}",
        text(&o)
    );
    // The MOB region's encoded name is MD5("t,.mob,0"), as HBase's MobUtils names it.
    let mob_dir = root
        .path()
        .join("mobdir/data/default/t/8710f5362b237e340ba83eeb6e111434/cf");
    std::fs::create_dir_all(&mob_dir).unwrap();
    std::fs::write(mob_dir.join("mobfile1"), b"x").unwrap();
    let o = cairn(&["hfile", "--data", data, "-i", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let o = cairn(&["hfile", "-i", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "-i needs --data: {}", text(&o));
    // A MOB file name that is a path (from a crafted file) is a bad reference, not a lookup
    // outside the root.
    let mut tags = tag(5, b"");
    tags.extend(tag(6, b"t"));
    let mut value = 100u32.to_be_bytes().to_vec();
    value.extend_from_slice(b"../../../../etc/hostname");
    let crafted = root.path().join("cf").join("crafted");
    write_cells(&crafted, &[("r1", "cf", &value, tags)]);
    let o = cairn(&["hfile", "--data", data, "-i", crafted.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("ERROR, wrong value format in mob reference cell r1/cf:q"),
        "{}",
        text(&o)
    );
}
