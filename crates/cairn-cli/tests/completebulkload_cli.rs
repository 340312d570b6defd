//! `cairn completebulkload --data ROOT DIR TABLE`: HFiles written with cairn's writer, one of
//! them spanning every region boundary of the table, loaded into an embedded store; the
//! spanning file is split until each piece fits one region, and every row reads back once.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cairn_cell::KeyValue;
use cairn_hfile::{HFileWriter, WriterOptions};
use cairn_region::region::hfile_row_range;
use cairn_region::{
    ColumnFamilyDescriptor, Get, Put, RegionServer, Scan, ServerConfig, TableDescriptor, TableName,
};

#[path = "support/serve.rs"]
mod serve;

fn row(i: u64) -> String {
    format!("row-{i:03}")
}

fn open(root: &Path) -> std::sync::Arc<RegionServer> {
    let mut c = ServerConfig::new(root);
    c.background = false;
    RegionServer::open(c).unwrap()
}

/// Table `t` (family `f`) in three regions: split at row-030 and row-060.
fn create(root: &Path) -> TableName {
    let rs = open(root);
    let t = TableName::parse("t").unwrap();
    rs.create_table(
        TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f")),
        &[row(30).into_bytes(), row(60).into_bytes()],
    )
    .unwrap();
    // An existing cell with the same timestamp as a loaded one: the load (later) wins.
    rs.put(&t, &Put::with_timestamp(row(5), 1000).add("f", "q", "old"))
        .unwrap();
    rs.close().unwrap();
    t
}

/// `f:q` = `v<i>` at timestamp 1000 for each row number in `rows`; small blocks.
fn hfile(path: &Path, rows: std::ops::Range<u64>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let out = std::fs::File::create(path).unwrap();
    let options = WriterOptions {
        block_size: 512,
        ..WriterOptions::default()
    };
    let mut w = HFileWriter::new(out, path.display().to_string(), options).unwrap();
    for i in rows {
        let kv = KeyValue::put(
            row(i).as_bytes(),
            b"f",
            b"q",
            1000,
            format!("v{i}").as_bytes(),
        )
        .unwrap();
        w.append(&kv.as_cell()).unwrap();
    }
    w.append_file_info(b"BULKLOAD_SOURCE_TASK", b"test-task")
        .unwrap();
    w.finish().unwrap();
}

fn cairn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .output()
        .expect("run cairn")
}

fn text(o: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn files_spanning_regions_are_split_and_every_row_loads_once() {
    let root = tempfile::tempdir().unwrap();
    let input = tempfile::tempdir().unwrap();
    let t = create(root.path());
    let whole = input.path().join("f/0aa0aa0aa0aa0aa0aa0aa0aa0aa0aa0a");
    let spanning = input.path().join("f/1bb1bb1bb1bb1bb1bb1bb1bb1bb1bb1b");
    hfile(&whole, 0..25);
    hfile(&spanning, 25..90);
    // What HBase's tool skips: `_SUCCESS`, names starting with '_', non-HFiles, references.
    std::fs::write(input.path().join("_SUCCESS"), b"").unwrap();
    std::fs::create_dir_all(input.path().join("_logs")).unwrap();
    std::fs::write(input.path().join("f/_partial"), b"x").unwrap();
    std::fs::write(input.path().join("f/notes"), b"not an hfile").unwrap();
    std::fs::write(input.path().join("f/0abc.f00d"), b"PBUF").unwrap();

    let out = cairn(&[
        "completebulkload",
        "--data",
        &root.path().display().to_string(),
        &input.path().display().to_string(),
        "t",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // 25..90 over [.., 30), [30, 60), [60, ..): split at row-060, then the bottom at row-030.
    assert!(
        stdout.contains("4 file(s) loaded into 3 region(s) of t; 2 split(s)"),
        "{}",
        text(&out)
    );
    // The whole file moved in; the spanning one was deleted once split (HBase 2.6.1's tool
    // does the same) and its pieces moved in from .tmp; the skipped files are untouched.
    assert!(!whole.exists());
    assert!(!spanning.exists());
    assert!(files_under(&input.path().join("f/.tmp")).is_empty());
    for skipped in ["f/_partial", "f/notes", "f/0abc.f00d"] {
        assert!(input.path().join(skipped).exists(), "{skipped}");
    }

    let rs = open(root.path());
    let mut rows = Vec::new();
    for r in rs.scanner(&t, Scan::new().versions(10)).unwrap() {
        let r = r.unwrap();
        let c = r.last().unwrap().as_cell();
        rows.push((
            String::from_utf8_lossy(c.row()).into_owned(),
            r.len(),
            String::from_utf8_lossy(r[0].as_cell().value).into_owned(),
        ));
    }
    let want: Vec<(String, usize, String)> =
        (0..90).map(|i| (row(i), 1, format!("v{i}"))).collect();
    // row-005's older put has the same timestamp: one version, the load's.
    assert_eq!(rows, want, "each row once");
    let newest = rs.get(&t, Get::new(row(5))).unwrap();
    assert_eq!(newest[0].as_cell().value, b"v5", "the load wins the tie");
    // Every store file lies inside its region.
    let table = rs.table(&t).unwrap();
    let mut loaded = 0;
    for r in &table.regions {
        for f in r.store(b"f").unwrap().state().files.iter() {
            let (first, last) = hfile_row_range(&f.reader).unwrap().unwrap();
            assert!(r.info.contains_row(&first) && r.info.contains_row(&last));
            loaded += usize::from(f.name().contains("_SeqId_"));
            // Split halves keep the source's own file info.
            if f.name().contains("_SeqId_") {
                assert_eq!(
                    f.reader.file_info().get(b"BULKLOAD_SOURCE_TASK"),
                    Some(&b"test-task"[..])
                );
            }
        }
    }
    assert_eq!(loaded, 4, "the whole file and three pieces");
}

#[test]
fn unknown_families_and_tables_fail_with_hbase_messages() {
    let root = tempfile::tempdir().unwrap();
    let input = tempfile::tempdir().unwrap();
    create(root.path());
    hfile(&input.path().join("zz/0123"), 0..3);
    hfile(&input.path().join("f/0456"), 0..3);
    let data = root.path().display().to_string();
    let dir = input.path().display().to_string();
    let out = cairn(&["completebulkload", "--data", &data, &dir, "t"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains(
            "Unmatched family names found: unmatched family names in HFiles to be bulkloaded: \
             [zz]; valid family names of table t are: [f]"
        ),
        "{}",
        text(&out)
    );
    assert!(input.path().join("f/0456").exists(), "nothing loaded");
    let out = cairn(&[
        "completebulkload",
        "-D",
        "ignore.unmatched.families=yes",
        "--data",
        &data,
        &dir,
        "t",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!input.path().join("f/0456").exists());
    assert!(input.path().join("zz/0123").exists());
    // HBase creates a missing table unless told not to (create.table, "yes" by default).
    let out = cairn(&[
        "completebulkload",
        "-D",
        "create.table=no",
        "--data",
        &data,
        &dir,
        "nope",
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("Table 'nope' does not exist."),
        "{}",
        text(&out)
    );
    assert!(input.path().join("zz/0123").exists(), "nothing loaded");
    assert!(open(root.path())
        .table(&TableName::parse("nope").unwrap())
        .is_err());
}

/// A missing table is created as HBase's tool creates it: the directory's families, split keys
/// where the files' row ranges leave gaps (`inferBoundaries`), then every file loads.
#[test]
fn a_missing_table_is_created_with_boundaries_inferred_from_the_files() {
    let root = tempfile::tempdir().unwrap();
    let input = tempfile::tempdir().unwrap();
    // Row ranges 0..10 and 5..20 overlap (one group), 30..40 and 50..51 stand alone: splits
    // at row-030 and row-050.
    hfile(&input.path().join("f/0aa1"), 0..10);
    hfile(&input.path().join("f/0aa2"), 5..20);
    hfile(&input.path().join("f/0aa3"), 30..40);
    hfile(&input.path().join("f/0aa4"), 50..51);
    let data = root.path().display().to_string();
    let dir = input.path().display().to_string();
    let out = cairn(&["completebulkload", "--data", &data, &dir, "made"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("creating table made"), "{}", text(&out));
    let rs = open(root.path());
    let t = rs.table(&TableName::parse("made").unwrap()).unwrap();
    let starts: Vec<String> = t
        .regions
        .iter()
        .map(|r| String::from_utf8_lossy(&r.info.start_key).into_owned())
        .collect();
    assert_eq!(starts, ["", "row-030", "row-050"]);
    let families: Vec<&[u8]> = t.descriptor.families.iter().map(|f| &f.name[..]).collect();
    assert_eq!(families, [&b"f"[..]]);
    let name = TableName::parse("made").unwrap();
    let mut rows = 0;
    for r in rs.scanner(&name, Scan::new()).unwrap() {
        r.unwrap();
        rows += 1;
    }
    assert_eq!(rows, 20 + 10 + 1);
}

/// Against a running `cairn serve`, over HBase's native RPC (PrepareBulkLoad, BulkLoadHFile,
/// CleanupBulkLoad): the same split of a spanning file, every row once, seen by the server at
/// once, and the staging directory gone afterwards.
#[test]
fn a_running_server_takes_the_files_over_native_rpc() {
    let root = tempfile::tempdir().unwrap();
    let input = tempfile::tempdir().unwrap();
    let t = create(root.path());
    hfile(
        &input.path().join("f/0aa0aa0aa0aa0aa0aa0aa0aa0aa0aa0a"),
        0..25,
    );
    hfile(
        &input.path().join("f/1bb1bb1bb1bb1bb1bb1bb1bb1bb1bb1b"),
        25..90,
    );
    let sources = format!("cairn.bulkload.source.dirs={}", input.path().display());
    let server = serve::Server::start(root.path(), &["-D", &sources]);
    let out = cairn(&[
        "completebulkload",
        "--hbase",
        &server.addr,
        &input.path().display().to_string(),
        "t",
    ]);
    assert!(
        out.status.success(),
        "{}\nserver:\n{}",
        text(&out),
        server.stderr_tail(30)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("4 file(s) loaded into 3 region(s) of t; 2 split(s)"),
        "{}",
        text(&out)
    );
    // A table the server lacks: HBase's words.
    let out = cairn(&[
        "completebulkload",
        "--hbase",
        &server.addr,
        &input.path().display().to_string(),
        "nosuch",
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nosuch"),
        "{}",
        text(&out)
    );
    assert!(server.stop(std::time::Duration::from_secs(30)));
    let rs = open(root.path());
    let rows: Vec<(String, String)> = rs
        .scanner(&t, Scan::new())
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            let c = r[0].as_cell();
            (
                String::from_utf8_lossy(c.row()).into_owned(),
                String::from_utf8_lossy(c.value).into_owned(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = (0..90).map(|i| (row(i), format!("v{i}"))).collect();
    assert_eq!(rows, want, "each row once, the load winning row-005's tie");
    let staging = root.path().join("staging");
    assert!(
        files_under(&staging).is_empty(),
        "CleanupBulkLoad removed the staging files: {:?}",
        files_under(&staging)
    );
}
