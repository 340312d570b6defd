//! HBase 2.6.1's own bulk-load tool against `cairn serve`: HFiles written by HBase's
//! `StoreFileWriter` (`dev.cairn.interop.HFileInterop write`), one of them spanning two
//! region boundaries, loaded by `org.apache.hadoop.hbase.tool.BulkLoadHFilesTool DIR TABLE`
//! over native RPC (PrepareBulkLoad, BulkLoadHFile with its staging token, CleanupBulkLoad;
//! the tool splits the spanning file itself after the server answers loaded=false or from
//! the region boundaries it reads). Rows are read back through HBase's Java client and then
//! from the stopped server's files: each exactly once.
//!
//! Needs `mvn -f interop/hbase/pom.xml package` first. Without the jars the test is skipped,
//! unless `CAIRN_REQUIRE_HBASE_INTEROP=1` makes that a failure.

#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

#[path = "support/serve.rs"]
mod serve;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use cairn_region::region::hfile_row_range;
use cairn_region::{
    ColumnFamilyDescriptor, RegionServer, Scan, ServerConfig, TableDescriptor, TableName,
};
use serve::{tail, Server};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn row(i: u64) -> String {
    format!("row-{i:03}")
}

/// HFileInterop's cell lines for `family:q` over rows `rows`, value = the row number as an
/// 8-byte big-endian long (what CountRows sums).
fn cells(family: &str, rows: std::ops::Range<u64>) -> String {
    let mut out = String::new();
    for i in rows {
        // row family qualifier timestamp typecode(Put=4) value tags seqid
        writeln!(
            out,
            "{} {} {} 1000 4 {} - 0",
            hex(row(i).as_bytes()),
            hex(family.as_bytes()),
            hex(b"q"),
            hex(&i.to_be_bytes())
        )
        .unwrap();
    }
    out
}

#[test]
fn hbase_bulkload_tool_loads_hbase_hfiles_into_cairn_serve() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let data = tempfile::tempdir().expect("temp dir");
    let input = tempfile::tempdir().expect("temp dir");
    // A table of three regions, split at row-030 and row-060.
    let table = TableName::parse("bulk").unwrap();
    {
        let mut c = ServerConfig::new(data.path());
        c.background = false;
        let rs = RegionServer::open(c).unwrap();
        let d = TableDescriptor::new(table.clone())
            .with_family(ColumnFamilyDescriptor::new("f"))
            .with_family(ColumnFamilyDescriptor::new("g"));
        rs.create_table(d, &[row(30).into_bytes(), row(60).into_bytes()])
            .unwrap();
        rs.close().unwrap();
    }
    // f: rows 0-24 in one region; rows 25-89 across all three (the tool must split it);
    // g: rows 40-49 in the middle region.
    let files = [
        ("f", "0a1b2c3d4e5f60718293a4b5c6d7e8f9", 0..25),
        ("f", "1a1b2c3d4e5f60718293a4b5c6d7e8f9", 25..90),
        ("g", "2a1b2c3d4e5f60718293a4b5c6d7e8f9", 40..50),
    ];
    let mut manifest = String::new();
    for (family, name, rows) in &files {
        let dir = input.path().join(family);
        std::fs::create_dir_all(&dir).unwrap();
        let cells_file = input.path().join(format!("{name}.cells"));
        std::fs::write(&cells_file, cells(family, rows.clone())).unwrap();
        // Small blocks: several data blocks per file, as real files have.
        writeln!(
            manifest,
            "{} {} CRC32C 16384 NONE ROW false 1024",
            dir.join(name).display(),
            cells_file.display()
        )
        .unwrap();
    }
    let manifest_file = input.path().join("manifest");
    std::fs::write(&manifest_file, manifest).unwrap();
    let out = hbase::java(
        &cp,
        "HFileInterop",
        &["write", &manifest_file.display().to_string()],
    );
    assert!(
        out.status.success(),
        "HFileInterop write failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        tail(&String::from_utf8_lossy(&out.stderr), 30)
    );
    for (_, name, _) in &files {
        std::fs::remove_file(input.path().join(format!("{name}.cells"))).unwrap();
    }
    std::fs::remove_file(&manifest_file).unwrap();

    // The files stay where HBase's tool found them: the operator lets the server read there.
    let sources = format!("cairn.bulkload.source.dirs={}", input.path().display());
    let server = Server::start(data.path(), &["-D", &sources]);
    let addr = server.addr.clone();
    let out = Command::new("java")
        .args(hbase::JAVA_FLAGS)
        .arg("-cp")
        .arg(&cp)
        .arg("org.apache.hadoop.hbase.tool.BulkLoadHFilesTool")
        .arg("-Dhbase.client.registry.impl=org.apache.hadoop.hbase.client.RpcConnectionRegistry")
        .arg(format!("-Dhbase.client.bootstrap.servers={addr}"))
        .arg("-Dcreate.table=no")
        .arg("-Dfs.defaultFS=file:///")
        .arg("-Dhbase.client.retries.number=3")
        .arg(input.path())
        .arg("bulk")
        .output()
        .expect("run java");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "BulkLoadHFilesTool failed ({}):\n{}\nserver stderr:\n{}",
        out.status,
        tail(&stderr, 60),
        server.stderr_tail(40)
    );
    // Through HBase's client: every row once, values summed.
    let count = |column: &str| -> String {
        let out = hbase::java(&cp, "CountRows", &["--bootstrap", &addr, "bulk", column]);
        assert!(
            out.status.success(),
            "CountRows failed: {}",
            tail(&String::from_utf8_lossy(&out.stderr), 30)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let sum = |r: std::ops::Range<u64>| r.sum::<u64>();
    assert_eq!(count("f:q"), format!("90 720 {}", sum(0..90)));
    assert_eq!(count("g:q"), format!("10 80 {}", sum(40..50)));
    assert!(server.stop(Duration::from_secs(30)), "orderly stop");

    // The files moved out of the input dir and the staging dir is gone.
    for family in ["f", "g"] {
        let left: Vec<_> = std::fs::read_dir(input.path().join(family))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
    let staging = data.path().join("staging");
    let tokens: Vec<_> = std::fs::read_dir(&staging)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    assert!(tokens.is_empty(), "staging dirs left: {tokens:?}");

    // From the files: one cell per row and family, in the region that owns the row.
    let mut c = ServerConfig::new(data.path());
    c.background = false;
    let rs = RegionServer::open(c).unwrap();
    let mut seen: Vec<(String, String, u64)> = Vec::new();
    for r in rs.scanner(&table, Scan::new().versions(10)).unwrap() {
        for c in r.unwrap() {
            let c = c.as_cell();
            seen.push((
                String::from_utf8_lossy(c.row()).into_owned(),
                String::from_utf8_lossy(c.family()).into_owned(),
                u64::from_be_bytes(c.value.try_into().unwrap()),
            ));
        }
    }
    let mut want: Vec<(String, String, u64)> = (0..90).map(|i| (row(i), "f".into(), i)).collect();
    want.extend((40..50).map(|i| (row(i), "g".into(), i)));
    want.sort();
    seen.sort();
    assert_eq!(seen, want);
    // The spanning file went in as pieces, each inside its region (the tool split it), and
    // every piece got a sequence id (the staged path assigns one).
    let t = rs.table(&table).unwrap();
    let mut f_files = 0;
    for r in &t.regions {
        for s in r.stores() {
            for f in s.state().files.iter() {
                assert!(
                    f.name().contains("_SeqId_"),
                    "{} loaded without a sequence id",
                    f.path.display()
                );
                let (first, last) = hfile_row_range(&f.reader).unwrap().unwrap();
                assert!(
                    r.info.contains_row(&first) && r.info.contains_row(&last),
                    "{} holds rows outside {}",
                    f.path.display(),
                    r.info.region_name()
                );
                f_files += usize::from(s.family.name == b"f");
            }
        }
    }
    assert_eq!(
        f_files, 4,
        "one whole file and three pieces of the spanning one"
    );
    assert_has_no_dir(&data.path().join("staging"));
}

fn assert_has_no_dir(dir: &Path) {
    if let Ok(d) = std::fs::read_dir(dir) {
        let sub: Vec<_> = d
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        assert!(sub.is_empty(), "{sub:?}");
    }
}

/// The whole round trip with both tools: `cairn importtsv` turns TSV into HFiles (one file for
/// the whole table: no split keys given), and HBase 2.6.1's `BulkLoadHFilesTool` loads them
/// into a three-region `cairn serve`, splitting the file at the region boundaries itself.
#[test]
fn hbase_bulkload_tool_loads_cairn_importtsv_output() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let data = tempfile::tempdir().expect("temp dir");
    let work = tempfile::tempdir().expect("temp dir");
    let table = TableName::parse("tsv").unwrap();
    {
        let mut c = ServerConfig::new(data.path());
        c.background = false;
        let rs = RegionServer::open(c).unwrap();
        let d = TableDescriptor::new(table.clone()).with_family(ColumnFamilyDescriptor::new("f"));
        rs.create_table(d, &[row(30).into_bytes(), row(60).into_bytes()])
            .unwrap();
        rs.close().unwrap();
    }
    let mut tsv = String::new();
    for i in (0..90).rev() {
        writeln!(tsv, "{}\tv{i}\tw{i}", row(i)).unwrap();
    }
    let input = work.path().join("input.tsv");
    std::fs::write(&input, tsv).unwrap();
    let out_dir = work.path().join("out");
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "importtsv",
            "-Dimporttsv.columns=HBASE_ROW_KEY,f:a,f:b",
            &format!("-Dimporttsv.bulk.output={}", out_dir.display()),
            "-Dimporttsv.timestamp=1000",
            "tsv",
            &input.display().to_string(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "importtsv: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sources = format!("cairn.bulkload.source.dirs={}", out_dir.display());
    let server = Server::start(data.path(), &["-D", &sources]);
    let out = Command::new("java")
        .args(hbase::JAVA_FLAGS)
        .arg("-cp")
        .arg(&cp)
        .arg("org.apache.hadoop.hbase.tool.BulkLoadHFilesTool")
        .arg("-Dhbase.client.registry.impl=org.apache.hadoop.hbase.client.RpcConnectionRegistry")
        .arg(format!("-Dhbase.client.bootstrap.servers={}", server.addr))
        .arg("-Dcreate.table=no")
        .arg("-Dfs.defaultFS=file:///")
        .arg("-Dhbase.client.retries.number=3")
        .arg(&out_dir)
        .arg("tsv")
        .output()
        .expect("run java");
    assert!(
        out.status.success(),
        "BulkLoadHFilesTool failed ({}):\n{}\nserver stderr:\n{}",
        out.status,
        tail(&String::from_utf8_lossy(&out.stderr), 60),
        server.stderr_tail(40)
    );
    assert!(server.stop(Duration::from_secs(30)), "orderly stop");
    let mut c = ServerConfig::new(data.path());
    c.background = false;
    let rs = RegionServer::open(c).unwrap();
    let mut seen = Vec::new();
    for r in rs.scanner(&table, Scan::new().versions(10)).unwrap() {
        for c in r.unwrap() {
            let c = c.as_cell();
            seen.push(format!(
                "{} {} {} {}",
                String::from_utf8_lossy(c.row()),
                String::from_utf8_lossy(c.qualifier()),
                c.timestamp(),
                String::from_utf8_lossy(c.value)
            ));
        }
    }
    let want: Vec<String> = (0..90)
        .flat_map(|i| {
            [
                format!("{} a 1000 v{i}", row(i)),
                format!("{} b 1000 w{i}", row(i)),
            ]
        })
        .collect();
    assert_eq!(
        seen, want,
        "every cell once, from HBase's load of cairn's files"
    );
    let t = rs.table(&table).unwrap();
    let pieces: usize = t
        .regions
        .iter()
        .map(|r| r.store(b"f").unwrap().state().files.len())
        .sum();
    assert_eq!(
        pieces, 3,
        "HBase's tool split the one file at both boundaries"
    );
}
