//! `cairn split`, `cairn merge` and `cairn regions` on an embedded store, and the children's
//! directories read by HBase 2.6.1's own code: its `StoreFileInfo` must take cairn's
//! reference files as references, and its `HalfStoreFileReader` must read through them exactly
//! the cells of the parent's files in the child's key range.
//!
//! The HBase half needs `mvn -f interop/hbase/pom.xml package` first (the test script does
//! it); without the jars it is skipped, unless `CAIRN_REQUIRE_HBASE_INTEROP=1`.

#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cairn_region::{
    ColumnFamilyDescriptor, Delete, Get, Put, RegionServer, Scan, ServerConfig, TableDescriptor,
    TableName,
};

fn cairn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .output()
        .expect("run cairn")
}

fn ok(args: &[&str]) -> String {
    let out = cairn(args);
    assert!(
        out.status.success(),
        "cairn {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn open(root: &Path) -> std::sync::Arc<RegionServer> {
    let mut c = ServerConfig::new(root);
    c.background = false;
    RegionServer::open(c).unwrap()
}

/// Two families, three flushed files each with overwritten versions and deletes, in one
/// region.
fn populate(root: &Path) -> TableName {
    let s = open(root);
    let t = TableName::parse("st").unwrap();
    s.create_table(
        TableDescriptor::new(t.clone())
            .with_family(
                ColumnFamilyDescriptor::new("a")
                    .max_versions(3)
                    .block_size(1024),
            )
            .with_family(ColumnFamilyDescriptor::new("b")),
        // Every row is in the first region; the second stays empty.
        &[b"r200".to_vec()],
    )
    .unwrap();
    for round in 0..3i64 {
        for i in 0..120 {
            let row = format!("r{i:03}");
            let ts = 1_700_000_000_000 + round;
            s.put(
                &t,
                &Put::with_timestamp(&row, ts)
                    .add("a", "q", format!("{row}-{round}"))
                    .add("b", "x", format!("b{round}")),
            )
            .unwrap();
            if i % 13 == round as usize {
                s.delete(&t, &Delete::with_timestamp(&row, ts).family("b"))
                    .unwrap();
            }
        }
        s.flush_table(&t).unwrap();
    }
    s.close().unwrap();
    t
}

/// Every row's newest cells, through the embedded API.
fn snapshot(root: &Path, t: &TableName) -> Vec<String> {
    let s = open(root);
    let out = s
        .scanner(t, Scan::new())
        .unwrap()
        .map(|r| {
            r.unwrap()
                .iter()
                .map(|c| {
                    let c = c.as_cell();
                    format!(
                        "{} {} {}",
                        String::from_utf8_lossy(c.row()),
                        String::from_utf8_lossy(c.family()),
                        String::from_utf8_lossy(c.value)
                    )
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    s.close().unwrap();
    out
}

fn region_dirs(root: &Path) -> Vec<PathBuf> {
    let tdir = root.join("data/default/st");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&tdir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    out.sort();
    out
}

/// What HBase's store reads from each file of `family_dir`: `(file line, cell lines)`.
fn hbase_dump(cp: &str, family_dir: &Path) -> Vec<(String, Vec<String>)> {
    let out = hbase::java(cp, "RegionDirInterop", &[family_dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "HBase could not read {}: {}",
        family_dir.display(),
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| !l.contains(" DEBUG ") && !l.contains(" INFO "))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let mut files: Vec<(String, Vec<String>)> = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        if let Some(f) = line.strip_prefix("file ") {
            files.push((f.to_string(), Vec::new()));
        } else if let Some(last) = files.last_mut() {
            last.1.push(line.to_string());
        }
    }
    files
}

fn row_of(cell_line: &str) -> Vec<u8> {
    let hex = cell_line.split(' ').next().unwrap();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn split_and_merge_from_the_command_line_and_hbase_reads_the_children() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let data = root.to_str().unwrap();
    let t = populate(root);
    let before = snapshot(root, &t);
    assert_eq!(before.len(), 120);
    let s = open(root);
    let first = s.table(&t).unwrap().regions[0].info.clone();
    s.close().unwrap();
    drop(s);
    let parent = root.join("data/default/st").join(&first.encoded_name);
    let parent_enc = first.encoded_name.clone();
    // A bad split row: HBase's words, exit code 1, nothing changed.
    let out = cairn(&["split", "--data", data, &parent_enc, "r300"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Split row is not inside region key range"),
        "{err}"
    );
    assert_eq!(
        err.matches("Split row is not inside").count(),
        1,
        "said once: {err}"
    );
    assert_eq!(region_dirs(root).len(), 2);
    // The table split where its policy would (the middle of its largest file); its empty
    // region has no middle and stays, with a message.
    let out = cairn(&["split", "--data", data, "st"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("bestSplitPoint = null"));
    let listing = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        listing.lines().count(),
        4,
        "header and three regions:\n{listing}"
    );
    assert_eq!(snapshot(root, &t), before, "same rows after the split");
    assert_eq!(
        region_dirs(root).len(),
        4,
        "the parent stays while referred to"
    );
    // HBase reads each child's references as halves of the parent's files.
    if let Some(cp) = hbase::classpath_or_skip() {
        let s = open(root);
        let regions: Vec<_> = s
            .table(&t)
            .unwrap()
            .regions
            .iter()
            .map(|r| r.info.clone())
            .filter(|r| r.start_key.as_slice() < b"r200".as_slice())
            .collect();
        assert_eq!(regions.len(), 2);
        s.close().unwrap();
        drop(s);
        for family in ["a", "b"] {
            let whole = hbase_dump(&cp, &parent.join(family));
            assert_eq!(whole.len(), 3, "three flushed files");
            for info in &regions {
                let child = root.join("data/default/st").join(&info.encoded_name);
                let halves = hbase_dump(&cp, &child.join(family));
                assert!(!halves.is_empty());
                for (file, cells) in &halves {
                    let name = file.split(' ').next().unwrap();
                    assert!(file.contains("reference=true"), "{file}");
                    let (hfile, p) = name.split_once('.').unwrap();
                    assert_eq!(p, parent_enc);
                    let (_, all) = whole
                        .iter()
                        .find(|(f, _)| f.starts_with(&format!("{hfile} ")))
                        .expect("refers to a parent file");
                    let want: Vec<&String> = all
                        .iter()
                        .filter(|c| info.contains_row(&row_of(c)))
                        .collect();
                    assert!(!want.is_empty());
                    assert_eq!(
                        cells.iter().collect::<Vec<_>>(),
                        want,
                        "{family}/{name}: HBase's half of the parent's file"
                    );
                }
            }
        }
    }
    let listing = ok(&["regions", "--data", data, "st"]);
    // The two children: the regions before r200.
    let encoded: Vec<String> = listing
        .lines()
        .skip(1)
        .filter(|l| !l.split_whitespace().nth(2).unwrap().starts_with("r200"))
        .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
        .collect();
    assert_eq!(encoded.len(), 2, "{listing}");
    // Children holding references do not merge until they compact.
    let out = cairn(&["merge", "--data", data, &encoded[0], &encoded[1]]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not mergeable"));
    ok(&[
        "compact",
        "--major",
        root.join("data/default/st").to_str().unwrap(),
    ]);
    // The offline compaction rewrote the references; the parent is archived at the next
    // open, and the children merge.
    let merged = ok(&["merge", "--data", data, &encoded[1], &encoded[0]]);
    assert!(merged.starts_with("merged into st,,"), "{merged}");
    assert_eq!(snapshot(root, &t), before, "same rows after the merge");
    let s = open(root);
    assert_eq!(s.table(&t).unwrap().regions.len(), 2);
    assert_eq!(s.get(&t, Get::new("r077")).unwrap().len(), 2);
    s.close().unwrap();
    drop(s);
    assert!(!parent.exists(), "the split parent went to the archive");
    assert!(root
        .join("archive/data/default/st")
        .join(&parent_enc)
        .exists());
    let out = cairn(&[
        "split",
        "--data",
        data,
        "0123456789abcdef0123456789abcdef",
        "r050",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("0123456789abcdef0123456789abcdef"), "{err}");
}
