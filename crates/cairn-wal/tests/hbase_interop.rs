//! cairn's WAL files against HBase 2.6.1's own WAL code (`dev.cairn.interop.WalInterop` in
//! interop/hbase): HBase's `WALFactory` stream reader (what `WALPrettyPrinter`, `WALPlayer`
//! and `WALSplitter` read with) reads every file cairn writes — rolled and closed, active and
//! open, recycled — with every entry's key and cells as cairn wrote them; and cairn replays
//! the files HBase's own writer (`FSHLog`, `ProtobufLogWriter`) wrote, a meta WAL and a rolled
//! set among them, closed or left open by a killed JVM.
//!
//! Needs `mvn -f interop/hbase/pom.xml package`; skipped without the jars unless
//! `CAIRN_REQUIRE_HBASE_INTEROP=1`.

#[allow(dead_code)]
#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cairn_wal::{
    ClusterId, Durability, KeyValue, ServerName, Wal, WalEdit, WalLocation, WalOptions,
};

fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".into();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// An edit as `WalInterop` prints one: its `entry` line and a `cell` line per cell.
fn lines(e: &WalEdit) -> Vec<String> {
    let clusters = if e.cluster_ids.is_empty() {
        "-".to_string()
    } else {
        e.cluster_ids
            .iter()
            .map(|c| format!("{}:{}", c.most_sig_bits, c.least_sig_bits))
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut v = vec![format!(
        "entry region={} table={} seq={} time={} nonceGroup={} nonce={} orig={} clusters={} cells={}",
        hex(&e.region),
        String::from_utf8_lossy(&e.table),
        e.sequence_id,
        e.write_time_ms,
        e.nonce_group as i64,
        e.nonce as i64,
        e.orig_sequence_id,
        clusters,
        e.cells.len()
    )];
    for kv in &e.cells {
        let c = kv.as_cell();
        v.push(format!(
            "cell {} {} {} {} {} {} {}",
            hex(c.row()),
            hex(c.family()),
            hex(c.qualifier()),
            c.timestamp(),
            c.type_code(),
            hex(c.value),
            hex(c.tags)
        ));
    }
    v
}

/// `WalInterop read` over `files`: the entry and cell lines per file, and how each ended.
fn hbase_read(cp: &str, raw: bool, files: &[PathBuf]) -> Vec<(PathBuf, Vec<String>, String)> {
    let mut args = vec!["read".to_string()];
    if raw {
        args.push("--raw".into());
    }
    args.extend(files.iter().map(|f| f.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = hbase::java(cp, "WalInterop", &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "WalInterop read failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut result = Vec::new();
    let mut current = Vec::new();
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("end ") {
            let (file, end) = rest.split_once(' ').expect("end <file> <how>");
            result.push((
                PathBuf::from(file),
                std::mem::take(&mut current),
                end.to_string(),
            ));
        } else if line.starts_with("entry ") || line.starts_with("cell ") {
            current.push(line.to_string());
        }
    }
    assert_eq!(result.len(), files.len(), "{stdout}");
    result
}

fn server() -> ServerName {
    ServerName::parse("cairn-test.example.com,16020,1700000000000").unwrap()
}

/// The edits the tests write: several regions and tables, tags, a delete, an empty value,
/// nonces, cluster ids, an original sequence id, an edit of many cells and one of none.
fn edits() -> Vec<WalEdit> {
    let mut out = Vec::new();
    for i in 0..60u64 {
        let region = format!("{:032x}", 0xabcdef + i % 3);
        let table = if i % 2 == 0 { "ns:orders" } else { "plain" };
        let row = format!("row-{i:05}");
        let mut cells = vec![KeyValue::put(
            row.as_bytes(),
            b"f",
            b"q",
            1_700_000_000_000 + i as i64,
            format!("v{i}").as_bytes(),
        )
        .unwrap()];
        match i % 6 {
            1 => cells.push(
                KeyValue::put(row.as_bytes(), b"g", b"tagged", 5, b"x")
                    .unwrap()
                    .with_tags(vec![0, 2, 1, 9])
                    .unwrap(),
            ),
            2 => cells.push(
                KeyValue::new(
                    row.as_bytes(),
                    b"f",
                    b"q",
                    9,
                    cairn_cell::CellType::Delete,
                    b"",
                )
                .unwrap(),
            ),
            3 => cells.push(KeyValue::put(row.as_bytes(), b"f", b"", 7, b"").unwrap()),
            4 => cells.extend((0..40).map(|c| {
                KeyValue::put(
                    row.as_bytes(),
                    b"f",
                    format!("c{c}").as_bytes(),
                    3,
                    &[c as u8; 300],
                )
                .unwrap()
            })),
            _ => {}
        }
        let mut e = WalEdit::new(
            region.into_bytes(),
            table.as_bytes().to_vec(),
            100 + i,
            1_700_000_000_000 + i as i64,
            cells,
        );
        if i % 5 == 1 {
            e.nonce_group = 0x1234_5678 + i;
            e.nonce = u64::MAX - i;
        }
        if i % 7 == 3 {
            e.cluster_ids = vec![ClusterId {
                most_sig_bits: 0x0123_4567_89ab_cdef,
                least_sig_bits: i,
            }];
        }
        if i % 11 == 5 {
            e.orig_sequence_id = 7 + i;
        }
        if i == 59 {
            e.cells.clear();
        }
        out.push(e);
    }
    out
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

/// What HBase's reader says at the end of an open (never closed) WAL: the EOF it takes as
/// the normal end of a WAL whose writer died (`WALSplitter` logs "EOF from ...;
/// continuing"), never another error.
fn ends_like_an_open_wal(end: &str) -> bool {
    end.starts_with("java.io.EOFException")
}

#[test]
fn hbase_reads_every_file_cairn_writes_open_or_closed() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let loc = WalLocation::new(root.path(), server());
    let options = WalOptions {
        roll_size: 64 << 10,
        recycled_segments: 1,
        ..WalOptions::default()
    };
    let written = edits();
    let expected: Vec<String> = written.iter().flat_map(lines).collect();
    // First run: rolls (some files closed), then HBase reads while the last one is open.
    let (wal, report) = Wal::open(&loc, options.clone(), |_| Ok(())).unwrap();
    assert_eq!(report.edits, 0);
    for (i, e) in written.iter().enumerate() {
        wal.append(e, Durability::SyncWal).unwrap();
        if i == 20 {
            wal.roll().unwrap();
        }
    }
    let files = wal_files(&loc.dir());
    assert!(files.len() >= 3, "{files:?}");
    for raw in [false, true] {
        let read = hbase_read(&cp, raw, &files);
        let got: Vec<String> = read.iter().flat_map(|(_, l, _)| l.clone()).collect();
        assert_eq!(got, expected, "raw={raw}");
        for (i, (f, _, end)) in read.iter().enumerate() {
            if i + 1 < read.len() {
                assert!(
                    end.starts_with("clean"),
                    "closed file {}: {end}",
                    f.display()
                );
            } else {
                assert!(
                    ends_like_an_open_wal(end),
                    "open file {}: {end}",
                    f.display()
                );
            }
        }
    }
    // Closed: every file ends in its trailer. Retire the first files (flushed) so that the
    // next run writes into a recycled file, whose old bytes lie past the new entries.
    for region in written.iter().map(|e| e.region.clone()) {
        wal.mark_flushed(&region, 1000).unwrap();
    }
    wal.close().unwrap();
    let mut replayed = Vec::new();
    let (wal, report) = Wal::open(&loc, options, |e| {
        replayed.push(e);
        Ok(())
    })
    .unwrap();
    assert!(report.files.iter().all(|f| f.closed), "{:?}", report.files);
    // The file not retired (the one active at the close) replays: the last edits written.
    assert!(!replayed.is_empty());
    let tail: Vec<String> = written[written.len() - replayed.len()..]
        .iter()
        .flat_map(lines)
        .collect();
    assert_eq!(replayed.iter().flat_map(lines).collect::<Vec<_>>(), tail);
    let active = wal.segments().into_iter().find(|s| s.active).unwrap().path;
    let header = cairn_wal::file::scan_file(&active, |_, _| Ok(()))
        .unwrap()
        .header
        .unwrap();
    assert!(
        header.cairn.unwrap().recycled,
        "the active file is a reused one"
    );
    let second: Vec<WalEdit> = written[..5]
        .iter()
        .map(|e| WalEdit {
            sequence_id: e.sequence_id + 1000,
            ..e.clone()
        })
        .collect();
    for e in &second {
        wal.append(e, Durability::FsyncWal).unwrap();
    }
    let read = hbase_read(&cp, true, &wal_files(&loc.dir()));
    let got: Vec<String> = read.iter().flat_map(|(_, l, _)| l.clone()).collect();
    let want: Vec<String> = replayed.iter().chain(&second).flat_map(lines).collect();
    assert_eq!(got, want);
    let (_, _, end) = read.last().unwrap();
    assert!(ends_like_an_open_wal(end), "{end}");
    wal.close().unwrap();
    let read = hbase_read(&cp, false, &wal_files(&loc.dir()));
    assert!(
        read.iter().all(|(_, _, e)| e.starts_with("clean")),
        "{read:?}"
    );
}

/// `WalInterop write` output: the edits as HBase's writer wrote them, by region.
fn hbase_write(cp: &str, root: &Path, server: &str, args: &[&str]) -> Vec<String> {
    let mut all = vec!["write", root.to_str().unwrap(), server];
    all.extend_from_slice(args);
    let out = hbase::java(cp, "WalInterop", &all);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "WalInterop write failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .filter(|l| l.starts_with("entry ") || l.starts_with("cell "))
        .map(str::to_string)
        .collect()
}

/// Groups `entry`/`cell` lines into one string per entry, sorted: replay order across files
/// of several servers is not the write order.
fn entries(lines: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in lines {
        if l.starts_with("entry ") {
            out.push(l.clone());
        } else {
            out.last_mut()
                .expect("a cell after its entry")
                .push_str(&format!("\n{l}"));
        }
    }
    out.sort();
    out
}

#[test]
fn cairn_replays_what_hbases_own_writer_wrote() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    // Closed with a meta WAL and rolls; and a second server killed without closing anything.
    let closed = hbase_write(
        &cp,
        root.path(),
        "hbase-a,16020,1700000000001",
        &["4", "50", "12", "meta"],
    );
    let crashed = hbase_write(
        &cp,
        root.path(),
        "hbase-b,16020,1700000000002",
        &["3", "30", "0", "crash"],
    );
    let a_dir = root.path().join("WALs/hbase-a,16020,1700000000001");
    let a_files = wal_files(&a_dir);
    assert!(
        a_files.len() >= 5,
        "rolled files and a meta WAL: {a_files:?}"
    );
    assert!(a_files
        .iter()
        .any(|f| cairn_wal::names::is_meta_file(f.to_str().unwrap())));

    let loc = WalLocation::new(root.path(), server());
    let mut replayed = Vec::new();
    let (wal, report) = Wal::open(&loc, WalOptions::default(), |e| {
        replayed.push(e);
        Ok(())
    })
    .unwrap();
    let got: Vec<String> = replayed.iter().flat_map(lines).collect();
    let mut want = closed.clone();
    want.extend(crashed.iter().cloned());
    assert_eq!(entries(&got), entries(&want));
    assert!(report.dropped.is_empty(), "{:?}", report.dropped);
    // Server a's files holding entries were all closed by its rolls (the files the last
    // rolls started are empty and open); server b's last file was left open with entries.
    let by_server: BTreeMap<&str, Vec<(u64, bool)>> =
        report.files.iter().fold(BTreeMap::new(), |mut m, f| {
            m.entry(f.server.as_str())
                .or_default()
                .push((f.entries, f.closed));
            m
        });
    let a = &by_server["hbase-a,16020,1700000000001"];
    assert!(a.iter().all(|&(n, closed)| closed || n == 0), "{a:?}");
    assert_eq!(
        a.iter().filter(|&&(n, _)| n == 0).count(),
        2,
        "a data and a meta WAL: {a:?}"
    );
    let b = &by_server["hbase-b,16020,1700000000002"];
    assert!(b.iter().any(|&(n, closed)| !closed && n > 0), "{b:?}");
    // Every region flushed: the dead servers' files go to oldWALs and their directories go.
    for e in &replayed {
        wal.mark_flushed(&e.region, u64::MAX).unwrap();
    }
    assert!(!a_dir.exists());
    let archived = std::fs::read_dir(root.path().join("oldWALs"))
        .unwrap()
        .count();
    assert!(archived >= a_files.len(), "{archived}");
    wal.close().unwrap();
}
