//! `cairn compact` on directories in HBase's layout: table, region and family paths, major
//! and minor runs, the report, and bad paths.

use std::path::Path;
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

fn open(root: &Path) -> std::sync::Arc<RegionServer> {
    let mut c = ServerConfig::new(root);
    c.background = false;
    RegionServer::open(c).unwrap()
}

/// A table with two regions and two families, each store holding four flushed files, with
/// deletes and overwritten versions among them.
fn populate(root: &Path) -> TableName {
    let s = open(root);
    let t = TableName::parse("ct").unwrap();
    s.create_table(
        TableDescriptor::new(t.clone())
            .with_family(ColumnFamilyDescriptor::new("a").max_versions(2))
            .with_family(ColumnFamilyDescriptor::new("b")),
        &[b"r050".to_vec()],
    )
    .unwrap();
    for round in 0..4 {
        for i in 0..100 {
            let row = format!("r{i:03}");
            s.put(
                &t,
                &Put::new(&row)
                    .add_at("a", "q", 10 + round, format!("{row}-{round}"))
                    .add_at("b", "q", 10 + round, "b"),
            )
            .unwrap();
        }
        if round == 3 {
            for i in (0..100).step_by(10) {
                s.delete(&t, &Delete::new(format!("r{i:03}"))).unwrap();
            }
        }
        s.flush_table(&t).unwrap();
    }
    s.close().unwrap();
    t
}

fn files_in(dir: &Path) -> usize {
    file_names(dir).len()
}

/// The names of the files directly in `dir`.
fn file_names(dir: &Path) -> std::collections::BTreeSet<std::ffi::OsString> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name())
        .collect()
}

/// A region directory (one with `.regioninfo`) of the table at `table_dir`.
fn first_region(table_dir: &Path) -> std::path::PathBuf {
    std::fs::read_dir(table_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join(".regioninfo").exists())
        .unwrap()
}

fn check_data(root: &Path, t: &TableName) {
    let s = open(root);
    let rows: Vec<_> = s
        .scanner(t, Scan::new().versions(5))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(rows.len(), 90, "ten rows were deleted");
    let r1 = s.get(t, Get::new("r001").family("a").versions(5)).unwrap();
    let vals: Vec<_> = r1
        .iter()
        .map(|c| String::from_utf8_lossy(c.as_cell().value).into_owned())
        .collect();
    assert_eq!(vals, ["r001-3", "r001-2"], "VERSIONS = 2");
    s.close().unwrap();
}

#[test]
fn major_compaction_of_a_table_dir_leaves_one_file_per_store() {
    let root = tempfile::tempdir().unwrap();
    let t = populate(root.path());
    let table_dir = root.path().join("data/default/ct");
    let out = cairn(&["compact", "--major", table_dir.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("files in / out | 16 / 4"), "{stdout}");
    assert!(
        stdout.contains("user / system CPU") && stdout.contains("of CPU"),
        "{stdout}"
    );
    for region in std::fs::read_dir(&table_dir).unwrap().flatten() {
        if region.path().join(".regioninfo").exists() {
            for fam in ["a", "b"] {
                assert_eq!(files_in(&region.path().join(fam)), 1);
            }
        }
    }
    check_data(root.path(), &t);
}

#[test]
fn minor_compaction_of_a_family_dir_and_json_report() {
    let root = tempfile::tempdir().unwrap();
    let t = populate(root.path());
    let table_dir = root.path().join("data/default/ct");
    let region = first_region(&table_dir);
    let fam = region.join("a");
    let out = cairn(&[
        "compact",
        "--once",
        "--json",
        "-D",
        "hbase.hstore.compaction.max=3",
        fam.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = String::from_utf8_lossy(&out.stdout);
    assert!(
        json.contains("\"files_in\":3") && json.contains("\"files_out\":1"),
        "{json}"
    );
    assert_eq!(files_in(&fam), 2);
    check_data(root.path(), &t);
}

#[test]
fn bad_paths_are_named() {
    let root = tempfile::tempdir().unwrap();
    let out = cairn(&["compact", root.path().to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a table") && err.contains(root.path().to_str().unwrap()),
        "{err}"
    );
    let out = cairn(&["compact", "/definitely/not/here"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));
}

#[test]
fn compaction_tool_spellings() {
    let root = tempfile::tempdir().unwrap();
    let t = populate(root.path());
    let table_dir = root.path().join("data/default/ct");
    let dir = table_dir.to_str().unwrap();
    let out = cairn(&["compact", "-D", "hbase.compactiontool.delete=maybe", dir]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected true or false"));
    // -compactOnce: one minor step per store (4 files, 2 at a time -> 3).
    let out = cairn(&[
        "compact",
        "-compactOnce",
        "-D",
        "hbase.hstore.compaction.min=2",
        "-D",
        "hbase.hstore.compaction.max=2",
        "-D",
        "hbase.compactiontool.delete=true",
        dir,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("files in / out | 8 / 4"), "{stdout}");
    // -major, HBase's single dash; -mapred is taken (the work is done here, said once).
    let out = cairn(&["compact", "-major", "-mapred", dir]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr)
            .matches("-mapred: no MapReduce here")
            .count(),
        1
    );
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("files in / out | 12 / 4"), "{stdout}");
    for region in std::fs::read_dir(&table_dir).unwrap().flatten() {
        if region.path().join(".regioninfo").exists() {
            for fam in ["a", "b"] {
                assert_eq!(files_in(&region.path().join(fam)), 1);
            }
        }
    }
    check_data(root.path(), &t);
}

/// CompactionTool's `-D hbase.compactiontool.delete=false`: the replaced files move to HBase's
/// archive directory (`<root>/archive/data/<ns>/<table>/<region>/<family>`) instead of being
/// deleted, and the data reads the same.
#[test]
fn delete_false_archives_the_replaced_files() {
    let root = tempfile::tempdir().unwrap();
    let t = populate(root.path());
    let table_dir = root.path().join("data/default/ct");
    let region = first_region(&table_dir);
    let fam = region.join("a");
    let before = file_names(&fam);
    let out = cairn(&[
        "compact",
        "-major",
        "-D",
        "hbase.compactiontool.delete=false",
        fam.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(files_in(&fam), 1);
    let archive = root
        .path()
        .join("archive/data/default/ct")
        .join(region.file_name().unwrap())
        .join("a");
    assert_eq!(
        file_names(&archive),
        before,
        "every replaced file is in the archive"
    );
    check_data(root.path(), &t);
    assert!(before.len() > 1, "{before:?}");
}
