//! A cairn region server's WAL split by HBase: what HBase's `ServerCrashProcedure` has a
//! region server do with a dead server's WAL. cairn takes puts and deletes (nothing
//! flushed) and stops without closing its regions; HBase 2.6.1's `WALSplitter`
//! (`dev.cairn.interop.WalInterop split`) reads cairn's WAL directory into each region's
//! `recovered.edits` and archives the WAL to `oldWALs/`; cairn, opened on the root again,
//! replays those recovered edits and serves every row, exactly once.
//!
//! Needs `mvn -f interop/hbase/pom.xml package`; skipped without the jars unless
//! `CAIRN_REQUIRE_HBASE_INTEROP=1`.

#[allow(dead_code)]
#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_region::{
    ColumnFamilyDescriptor, Delete, Get, Put, RegionServer, ServerConfig, TableDescriptor,
    TableName,
};

const ROWS: u32 = 600;

fn open(root: &Path) -> (Arc<RegionServer>, cairn_region::RecoveryReport) {
    let mut c = ServerConfig::new(root);
    c.background = false;
    let s = RegionServer::open(c).unwrap();
    let report = s.recovery.clone();
    (s, report)
}

fn row(n: u32) -> String {
    format!("row-{n:05}")
}

fn deleted(n: u32) -> bool {
    n.is_multiple_of(13)
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The store files of the table's regions (`<region>/f/<file>`).
fn store_files(table_dir: &Path) -> Vec<PathBuf> {
    files_under(table_dir)
        .into_iter()
        .filter(|p| p.parent().unwrap().file_name().unwrap() == "f")
        .collect()
}

fn check_rows(s: &RegionServer, t: &TableName) {
    for n in 0..ROWS {
        let cells = s.get(t, Get::new(row(n))).unwrap();
        if deleted(n) {
            assert!(cells.is_empty(), "{} was deleted: {cells:?}", row(n));
        } else {
            assert_eq!(cells.len(), 1, "{}", row(n));
            assert_eq!(cells[0].as_cell().value, format!("v{n}").as_bytes());
        }
    }
}

#[test]
fn hbase_wal_splitter_splits_cairns_wal_into_edits_cairn_replays() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let t = TableName::parse("ns1:split").unwrap();
    let (s, _) = open(root.path());
    s.create_namespace("ns1").unwrap();
    s.create_table(
        TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f")),
        &[row(ROWS / 2).into_bytes()],
    )
    .unwrap();
    for n in 0..ROWS {
        s.put(&t, &Put::new(row(n)).add("f", "q", format!("v{n}")))
            .unwrap();
    }
    for n in (0..ROWS).filter(|&n| deleted(n)) {
        s.delete(&t, &Delete::new(row(n))).unwrap();
    }
    // Gone without a close: the memstores are lost, the WAL holds everything.
    drop(s);
    let table_dir = root.path().join("data/ns1/split");
    assert!(store_files(&table_dir).is_empty(), "nothing was flushed");
    let wal_dir = root
        .path()
        .join("WALs")
        // ServerConfig's default server name.
        .join("localhost,16020,0");
    assert!(!files_under(&wal_dir).is_empty());

    let out = hbase::java(
        &cp,
        "WalInterop",
        &[
            "split",
            root.path().to_str().unwrap(),
            wal_dir.to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "WALSplitter failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let split: Vec<PathBuf> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("split "))
        .map(PathBuf::from)
        .collect();
    // One recovered.edits file per region, in the region's directory.
    assert_eq!(split.len(), 2, "{stdout}");
    for p in &split {
        assert!(p.starts_with(&table_dir), "{}", p.display());
        assert_eq!(
            p.parent().unwrap().file_name().unwrap(),
            "recovered.edits",
            "{}",
            p.display()
        );
        assert!(p.exists(), "{}", p.display());
    }
    // The WAL was archived by the split: what cairn now serves comes from recovered.edits.
    assert!(
        files_under(&wal_dir).is_empty(),
        "{:?}",
        files_under(&wal_dir)
    );

    let (s, report) = open(root.path());
    assert_eq!(report.recovered_edits_files, 2, "{report:?}");
    let deletes = (0..ROWS).filter(|&n| deleted(n)).count() as u64;
    assert_eq!(report.recovered_edits_replayed, ROWS as u64 + deletes);
    assert!(report.recovered_edits_dropped.is_empty(), "{report:?}");
    assert_eq!(report.wal.as_ref().unwrap().edits, 0, "{report:?}");
    check_rows(&s, &t);
    // Replayed once: flushed, the recovered edits deleted.
    assert!(split.iter().all(|p| !p.exists()));
    assert!(!store_files(&table_dir).is_empty());
    drop(s);
    let (s, report) = open(root.path());
    assert_eq!(report.recovered_edits_files, 0, "{report:?}");
    check_rows(&s, &t);
    s.close().unwrap();
}
