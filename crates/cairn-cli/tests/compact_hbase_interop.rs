//! `cairn compact` on store files HBase 2.6.1's own writer produced, checked against HBase's own
//! compaction of a copy of the same directory, and read back by HBase with its inline checksum
//! verification on.
//!
//! Each test lays out `<root>/data/default/t/<region>/f/` with cairn's `.tabledesc` and
//! `.regioninfo` writers, has HBase write several overlapping flush-like store files into it
//! (versions, timestamps colliding across files, all four kinds of delete marker, explicit
//! sequence ids), copies the tree, compacts one copy with `cairn compact` and the other with
//! HBase's `HStore` driven the way `CompactionTool` drives it, and compares what HBase's reader
//! sees in both: every cell (row, family, qualifier, timestamp, type, value) and the store-file
//! metadata HBase acts on (max sequence id, major-compaction flag, time range, entry count).
//! Cell sequence ids are compared as HBase's semantics allow, see [`same_seq_ids`].
//!
//! Needs `mvn -f interop/hbase/pom.xml package` first (the test script does it). Without the
//! jars the tests are skipped, unless `CAIRN_REQUIRE_HBASE_INTEROP=1` makes that a failure.

#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use cairn_hfile::encoding::DataBlockEncoding;
use cairn_region::layout::{write_region_info, write_table_descriptor};
use cairn_region::{ColumnFamilyDescriptor, RegionInfo, TableDescriptor, TableName};

/// HBase's type codes (`KeyValue.Type`).
const PUT: u8 = 4;
const DELETE_MARKERS: [u8; 4] = [8, 10, 12, 14];

fn require() -> Option<String> {
    hbase::classpath_or_skip()
}

fn store_interop(cp: &str, args: &[&str]) -> String {
    let out = hbase::java(cp, "StoreInterop", args);
    assert!(
        out.status.success(),
        "HBase StoreInterop {args:?} failed ({}):\nstderr tail:\n{}",
        out.status,
        tail(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn tail(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    let lines: Vec<&str> = s.lines().filter(|l| !l.contains(" DEBUG ")).collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

fn cairn_compact(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("compact")
        .args(args)
        .output()
        .expect("run cairn");
    assert!(
        out.status.success(),
        "cairn compact {args:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One cell as HBase's reader printed it; byte fields stay in hex.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Cell {
    row: String,
    family: String,
    qualifier: String,
    ts: i64,
    typ: u8,
    value: String,
    seq: u64,
}

impl Cell {
    /// Everything but the sequence id.
    fn key_value(&self) -> (&str, &str, &str, i64, u8, &str) {
        (
            &self.row,
            &self.family,
            &self.qualifier,
            self.ts,
            self.typ,
            &self.value,
        )
    }
}

#[derive(Clone, Debug)]
struct FileDump {
    name: String,
    /// `entries=… maxSeqId=… major=… timeRange=… mvcc=…` as HBase's store-file reader saw them.
    meta: BTreeMap<String, String>,
    cells: Vec<Cell>,
}

fn parse_dump(out: &str) -> Vec<FileDump> {
    let mut files: Vec<FileDump> = Vec::new();
    for line in out.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        if f[0] == "file" {
            files.push(FileDump {
                name: f[1].to_string(),
                meta: f[2..]
                    .iter()
                    .filter_map(|kv| kv.split_once('='))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                cells: Vec::new(),
            });
        } else if f.len() == 7 {
            let file = files.last_mut().expect("a cell before any file header");
            file.cells.push(Cell {
                row: f[0].into(),
                family: f[1].into(),
                qualifier: f[2].into(),
                ts: f[3].parse().expect("timestamp"),
                typ: f[4].parse().expect("type"),
                value: f[5].into(),
                seq: f[6].parse().expect("sequence id"),
            });
        }
    }
    files
}

fn dump(cp: &str, paths: &[&Path]) -> Vec<FileDump> {
    let mut args = vec!["dump"];
    args.extend(paths.iter().map(|p| p.to_str().expect("utf-8 path")));
    parse_dump(&store_interop(cp, &args))
}

/// `<root>/data/default/t/<region>/f` with the schema and region HBase's tools need.
/// The family's `DATA_BLOCK_ENCODING` is `encoding`.
fn layout(root: &Path, max_versions: u32, encoding: DataBlockEncoding) -> PathBuf {
    let name = TableName::parse("t").unwrap();
    let table_dir = root.join("data/default/t");
    let mut family = ColumnFamilyDescriptor::new("f").max_versions(max_versions);
    family.data_block_encoding = encoding;
    let desc = TableDescriptor::new(name.clone()).with_family(family);
    write_table_descriptor(&cairn_region::layout::LOCAL, &table_dir, &desc).unwrap();
    let region = RegionInfo::new(name, b"", b"", 1_700_000_000_000);
    let region_dir = table_dir.join(&region.encoded_name);
    write_region_info(&cairn_region::layout::LOCAL, &region_dir, &region).unwrap();
    let family_dir = region_dir.join("f");
    fs::create_dir_all(&family_dir).unwrap();
    family_dir
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// Two copies of a store HBase wrote: `(cairn's root, HBase's root, family dir under each)`.
struct Twin {
    _tmp: tempfile::TempDir,
    cairn_family: PathBuf,
    hbase_family: PathBuf,
    input: Vec<FileDump>,
}

fn twin(cp: &str, max_versions: u32, write_args: &[&str]) -> Twin {
    twin_encoded(cp, max_versions, write_args, DataBlockEncoding::None)
}

/// [`twin`] of a table whose family's `DATA_BLOCK_ENCODING` is `encoding`.
fn twin_encoded(
    cp: &str,
    max_versions: u32,
    write_args: &[&str],
    encoding: DataBlockEncoding,
) -> Twin {
    let tmp = tempfile::tempdir().unwrap();
    let cairn_root = tmp.path().join("cairn");
    let hbase_root = tmp.path().join("hbase");
    let family = layout(&cairn_root, max_versions, encoding);
    let mut args = vec!["write-store", family.to_str().unwrap()];
    args.extend_from_slice(write_args);
    store_interop(cp, &args);
    copy_tree(&cairn_root, &hbase_root);
    let rel = family.strip_prefix(&cairn_root).unwrap();
    let input = dump(cp, &[&family]);
    Twin {
        cairn_family: family.clone(),
        hbase_family: hbase_root.join(rel),
        input,
        _tmp: tmp,
    }
}

fn hbase_compact(cp: &str, family: &Path, flags: &[&str]) {
    let mut args = vec!["compact"];
    args.extend_from_slice(flags);
    args.push(family.to_str().unwrap());
    store_interop(cp, &args);
}

/// Checks that the generated input exercises what the comparison is about.
fn check_input(input: &[FileDump], files: usize) {
    assert_eq!(input.len(), files, "HBase wrote {files} store files");
    let types: BTreeSet<u8> = input.iter().flat_map(|f| &f.cells).map(|c| c.typ).collect();
    for t in DELETE_MARKERS.iter().chain(&[PUT]) {
        assert!(
            types.contains(t),
            "input has no cell of type {t}: {types:?}"
        );
    }
    let mut seen = BTreeMap::new();
    let mut collisions = 0;
    for f in input {
        for c in &f.cells {
            let key = (&c.row, &c.qualifier, c.ts, c.typ);
            if let Some(other) = seen.insert(key, &f.name) {
                collisions += usize::from(other != &f.name);
            }
        }
    }
    assert!(
        collisions > 0,
        "no key appears in two files: the sequence-id tie-break goes untested"
    );
}

/// HBase zeroes the sequence ids a compaction finds at or below the store's smallest read
/// point (`Compactor.cleanSeqId`), since no reader can tell them apart any more. cairn may do the
/// same or keep them; either is correct as long as a kept id is the cell's original one. The
/// cells are compared without ids first, so both lists line up.
fn same_seq_ids(cairn: &[Cell], hbase: &[Cell], input: &[FileDump]) -> Result<(), String> {
    let mut original: BTreeMap<_, BTreeSet<u64>> = BTreeMap::new();
    for c in input.iter().flat_map(|f| &f.cells) {
        original.entry(c.key_value()).or_default().insert(c.seq);
    }
    for (a, b) in cairn.iter().zip(hbase) {
        let kept = original
            .get(&a.key_value())
            .is_some_and(|s| s.contains(&a.seq));
        if a.seq != b.seq && !(b.seq == 0 && kept) {
            return Err(format!(
                "cell {a:?}: cairn's sequence id {} is neither HBase's ({}) nor the input's",
                a.seq, b.seq
            ));
        }
    }
    Ok(())
}

/// Compares two compacted stores file by file (matched on their cells, since new files get
/// random names), cells without sequence ids, and the metadata HBase reads from a store file.
fn compare_stores(cairn: &[FileDump], hbase: &[FileDump], input: &[FileDump]) {
    let sorted = |v: &[FileDump]| {
        let mut v = v.to_vec();
        v.sort_by(|a, b| a.cells.first().cmp(&b.cells.first()));
        v
    };
    let (cairn, hbase) = (sorted(cairn), sorted(hbase));
    assert_eq!(
        cairn.iter().map(|f| f.cells.len()).collect::<Vec<_>>(),
        hbase.iter().map(|f| f.cells.len()).collect::<Vec<_>>(),
        "store files and their cell counts after compaction: cairn vs HBase"
    );
    for (a, b) in cairn.iter().zip(&hbase) {
        for (i, (x, y)) in a.cells.iter().zip(&b.cells).enumerate() {
            assert_eq!(
                x.key_value(),
                y.key_value(),
                "cell {i} of cairn's {} vs HBase's {}",
                a.name,
                b.name
            );
        }
        for key in ["entries", "maxSeqId", "major", "timeRange", "encoding"] {
            assert_eq!(
                a.meta.get(key),
                b.meta.get(key),
                "{key} of cairn's {} vs HBase's {}",
                a.name,
                b.name
            );
        }
        if let Err(e) = same_seq_ids(&a.cells, &b.cells, input) {
            panic!("{e}");
        }
        let zero = |v: &[Cell]| v.iter().filter(|c| c.seq == 0).count();
        eprintln!(
            "{} cells in {} input files -> {} cells ({} markers); zero sequence ids: cairn {}, HBase {}; meta cairn {:?} HBase {:?}",
            input.iter().map(|f| f.cells.len()).sum::<usize>(),
            input.len(),
            a.cells.len(),
            a.cells.iter().filter(|c| c.typ != PUT).count(),
            zero(&a.cells),
            zero(&b.cells),
            a.meta,
            b.meta
        );
    }
}

/// Independent of HBase's output: a major compaction's result holds no markers, only cells
/// that were in the input, at most `max_versions` per column, and fewer than went in.
fn check_major_result(out: &FileDump, input: &[FileDump], max_versions: usize) {
    let inputs: BTreeSet<_> = input
        .iter()
        .flat_map(|f| &f.cells)
        .map(Cell::key_value)
        .collect();
    let puts_in = input
        .iter()
        .flat_map(|f| &f.cells)
        .filter(|c| c.typ == PUT)
        .count();
    let mut per_column: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for c in &out.cells {
        assert_eq!(
            c.typ, PUT,
            "a major compaction keeps no delete marker: {c:?}"
        );
        assert!(inputs.contains(&c.key_value()), "not in the input: {c:?}");
        *per_column.entry((&c.row, &c.qualifier)).or_default() += 1;
    }
    assert!(per_column.values().all(|&n| n <= max_versions));
    assert!(
        !out.cells.is_empty() && out.cells.len() < puts_in,
        "{} cells kept of {puts_in} puts: deletes and versions must drop some",
        out.cells.len()
    );
}

#[test]
fn major_compaction_matches_hbase() {
    let Some(cp) = require() else { return };
    const VERSIONS: u32 = 3;
    let t = twin(&cp, VERSIONS, &["4", "150", "8", "20240601"]);
    check_input(&t.input, 4);

    cairn_compact(&["--major", t.cairn_family.to_str().unwrap()]);
    hbase_compact(&cp, &t.hbase_family, &["-major"]);
    let cairn = dump(&cp, &[&t.cairn_family]);
    let hbase = dump(&cp, &[&t.hbase_family]);

    assert_eq!(hbase.len(), 1, "HBase's major compaction leaves one file");
    assert_eq!(cairn.len(), 1, "cairn's major compaction leaves one file");
    check_major_result(&hbase[0], &t.input, VERSIONS as usize);
    compare_stores(&cairn, &hbase, &t.input);
    assert_eq!(cairn[0].meta["major"], "true");
}

/// Stores of tables created with `DATA_BLOCK_ENCODING => 'FAST_DIFF'` (and PREFIX, DIFF,
/// ROW_INDEX_V1), their files written in that encoding by HBase: cairn decodes them, its major
/// compaction keeps exactly the cells HBase's keeps, and writes its result in the encoding the
/// table's schema says, as HBase does, about as large as HBase's.
#[test]
fn major_compaction_of_encoded_stores_matches_hbase() {
    let Some(cp) = require() else { return };
    const VERSIONS: u32 = 3;
    for encoding in [
        DataBlockEncoding::FastDiff,
        DataBlockEncoding::Prefix,
        DataBlockEncoding::Diff,
        DataBlockEncoding::RowIndexV1,
    ] {
        let name = encoding.name();
        let t = twin_encoded(
            &cp,
            VERSIONS,
            &["3", "150", "8", "20240602", "1", "10", name],
            encoding,
        );
        check_input(&t.input, 3);
        for f in std::fs::read_dir(&t.cairn_family).unwrap() {
            let r = cairn_hfile::HFileReader::open(f.unwrap().path(), Default::default()).unwrap();
            assert_eq!(r.data_block_encoding(), encoding);
        }

        cairn_compact(&["--major", t.cairn_family.to_str().unwrap()]);
        hbase_compact(&cp, &t.hbase_family, &["-major"]);
        let cairn = dump(&cp, &[&t.cairn_family]);
        let hbase = dump(&cp, &[&t.hbase_family]);
        assert_eq!((cairn.len(), hbase.len()), (1, 1), "{name}");
        check_major_result(&hbase[0], &t.input, VERSIONS as usize);
        compare_stores(&cairn, &hbase, &t.input);
        assert_eq!(cairn[0].meta["encoding"], name);
        let bytes = |d: &FileDump| d.meta["bytes"].parse::<f64>().unwrap();
        let ratio = bytes(&cairn[0]) / bytes(&hbase[0]);
        assert!(
            (0.9..1.1).contains(&ratio),
            "{name}: cairn's file is {ratio:.3}x HBase's"
        );
    }
}

#[test]
fn minor_compaction_keeps_deletes_like_hbase() {
    let Some(cp) = require() else { return };
    // The oldest file is six times the others: with the ratio applied to files of any size
    // (min.size = 1 byte) the exploring policy leaves it out and picks the three newer ones,
    // so their delete markers still have cells to mask in the oldest file and must survive.
    let t = twin(&cp, 2, &["4", "120", "8", "77", "6"]);
    check_input(&t.input, 4);
    let prop = "hbase.hstore.compaction.min.size=1";

    cairn_compact(&["--once", "-D", prop, t.cairn_family.to_str().unwrap()]);
    hbase_compact(&cp, &t.hbase_family, &["-once", "-D", prop]);
    let cairn = dump(&cp, &[&t.cairn_family]);
    let hbase = dump(&cp, &[&t.hbase_family]);

    let oldest = t
        .input
        .iter()
        .min_by_key(|f| f.meta["maxSeqId"].parse::<u64>().unwrap())
        .unwrap();
    for (who, out) in [("HBase", &hbase), ("cairn", &cairn)] {
        assert_eq!(
            out.len(),
            2,
            "{who}: the oldest file plus one compacted file"
        );
        assert!(
            out.iter().any(|f| f.name == oldest.name),
            "{who}: the oldest file is not part of the compaction"
        );
        let new = out.iter().find(|f| f.name != oldest.name).unwrap();
        assert_eq!(new.meta["major"], "false", "{who}: a minor compaction");
        assert!(
            new.cells.iter().any(|c| DELETE_MARKERS.contains(&c.typ)),
            "{who}: a minor compaction keeps delete markers"
        );
    }
    compare_stores(&cairn, &hbase, &t.input);
}
