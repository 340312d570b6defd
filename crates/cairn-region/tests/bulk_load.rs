//! Bulk load into a live multi-region table: HFiles written with cairn's writer handed to the
//! regions at once, ordered against puts by sequence id, and durable across close, crash and
//! WAL replay.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_cell::KeyValue;
use cairn_hfile::{HFileWriter, WriterOptions};
use cairn_region::region::BULK_LOAD_JOURNAL;
use cairn_region::{
    ColumnFamilyDescriptor, Get, Put, RegionServer, Scan, ServerConfig, TableDescriptor, TableName,
};

fn server(dir: &Path) -> Arc<RegionServer> {
    let mut c = ServerConfig::new(dir);
    c.background = false;
    // The tests' input files are in temporary directories beside the root.
    c.bulk_load_source_dirs = vec![std::env::temp_dir()];
    RegionServer::open(c).unwrap()
}

/// Table `t` with families `f` and `g`, regions split at `m`.
fn table(s: &RegionServer) -> TableName {
    let t = TableName::parse("t").unwrap();
    let d = TableDescriptor::new(t.clone())
        .with_family(ColumnFamilyDescriptor::new("f"))
        .with_family(ColumnFamilyDescriptor::new("g"));
    s.create_table(d, &[b"m".to_vec()]).unwrap();
    t
}

/// An HFile of `family` cells `(row, ts, value)` (sorted by row), qualifier `q`.
fn hfile(dir: &Path, name: &str, family: &str, cells: &[(&str, i64, &str)]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    let out = std::fs::File::create(&path).unwrap();
    let mut w =
        HFileWriter::new(out, path.display().to_string(), WriterOptions::default()).unwrap();
    for (row, ts, v) in cells {
        let kv = KeyValue::put(row.as_bytes(), family.as_bytes(), b"q", *ts, v.as_bytes()).unwrap();
        w.append(&kv.as_cell()).unwrap();
    }
    w.finish().unwrap();
    path
}

/// The newest value of `family:q` in `row`, if any.
fn value(s: &RegionServer, t: &TableName, row: &str, family: &str) -> Option<String> {
    let cells = s.get(t, Get::new(row).column(family, "q")).unwrap();
    cells
        .first()
        .map(|c| String::from_utf8_lossy(c.as_cell().value).into_owned())
}

/// Every cell of the table, all versions: (row, family, ts, value).
fn all_cells(s: &RegionServer, t: &TableName) -> Vec<(String, String, i64, String)> {
    let mut out = Vec::new();
    for row in s.scanner(t, Scan::new().versions(100)).unwrap() {
        for c in row.unwrap() {
            let c = c.as_cell();
            out.push((
                String::from_utf8_lossy(c.row()).into_owned(),
                String::from_utf8_lossy(c.family()).into_owned(),
                c.timestamp(),
                String::from_utf8_lossy(c.value).into_owned(),
            ));
        }
    }
    out
}

fn fp(family: &str, path: &Path) -> (Vec<u8>, PathBuf) {
    (family.as_bytes().to_vec(), path.to_path_buf())
}

fn region_name(s: &RegionServer, t: &TableName, i: usize) -> Vec<u8> {
    s.table(t).unwrap().regions[i].info.region_name_bytes()
}

#[test]
fn a_load_is_all_or_nothing_and_a_misfit_loads_nothing() {
    let root = tempfile::tempdir().unwrap();
    let input = tempfile::tempdir().unwrap();
    let s = server(root.path());
    let t = table(&s);
    s.put(&t, &Put::new("a").add("f", "q", "old")).unwrap();
    let f1 = hfile(input.path(), "f1", "f", &[("b", 5, "fb"), ("c", 5, "fc")]);
    let g1 = hfile(input.path(), "g1", "g", &[("b", 5, "gb")]);
    // A reader opened before the load keeps its snapshot; one opened after sees both
    // families' files.
    let mut before = s.scanner(&t, Scan::new()).unwrap();
    let r0 = region_name(&s, &t, 0);
    assert!(s
        .bulk_load_hfiles(&r0, &[fp("f", &f1), fp("g", &g1)], true, false)
        .unwrap());
    let rows_before: Vec<_> = before.by_ref().map(|r| r.unwrap().len()).collect();
    assert_eq!(rows_before, [1], "only row a, no loaded row");
    assert_eq!(value(&s, &t, "b", "f").as_deref(), Some("fb"));
    assert_eq!(value(&s, &t, "b", "g").as_deref(), Some("gb"));
    assert_eq!(value(&s, &t, "c", "f").as_deref(), Some("fc"));
    // Moved, not copied.
    assert!(!f1.exists() && !g1.exists());
    // Stored under HBase's bulk-load name: 32 hex digits and the assigned sequence id.
    let region = s.table(&t).unwrap().regions[0].clone();
    let names: Vec<String> = std::fs::read_dir(region.dir().join("g"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let (hex, seq) = names[0].split_once("_SeqId_").unwrap();
    assert!(
        hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        "{hex}"
    );
    let seq: u64 = seq.strip_suffix('_').unwrap().parse().unwrap();
    assert!(seq > 1, "after the put's sequence id: {seq}");

    // One file spans the region boundary: the whole call loads nothing, files stay put.
    let cells = all_cells(&s, &t);
    let f2 = hfile(input.path(), "f2", "f", &[("d", 7, "x")]);
    let g2 = hfile(input.path(), "g2", "g", &[("e", 7, "y"), ("n", 7, "z")]);
    assert!(!s
        .bulk_load_hfiles(&r0, &[fp("f", &f2), fp("g", &g2)], true, false)
        .unwrap());
    assert_eq!(all_cells(&s, &t), cells);
    assert!(f2.exists() && g2.exists());
    // Unknown family: HBase's message.
    let e = s
        .bulk_load_hfiles(&r0, &[fp("nope", &f2)], true, false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("No such column family nope"), "{e}");
    // The second region takes a file of its rows.
    let r1 = region_name(&s, &t, 1);
    let g3 = hfile(input.path(), "g3", "g", &[("n", 7, "z")]);
    assert!(s
        .bulk_load_hfiles(&r1, &[fp("g", &g3)], true, true)
        .unwrap());
    assert!(g3.exists(), "copied when asked");
    assert_eq!(value(&s, &t, "n", "g").as_deref(), Some("z"));
}

#[test]
fn sequence_ids_order_loaded_cells_against_puts_and_survive_restarts() {
    let root = tempfile::tempdir().unwrap();
    let input = tempfile::tempdir().unwrap();
    let s = server(root.path());
    let t = table(&s);
    let ts = 100;
    // Same row, column and timestamp: whichever has the higher sequence id wins.
    s.put(
        &t,
        &Put::with_timestamp("a", ts).add("f", "q", "put-before"),
    )
    .unwrap();
    s.flush_table(&t).unwrap();
    s.put(
        &t,
        &Put::with_timestamp("b", ts).add("f", "q", "put-before"),
    )
    .unwrap();
    s.put(
        &t,
        &Put::with_timestamp("c", ts).add("f", "q", "put-before"),
    )
    .unwrap();
    let file = hfile(
        input.path(),
        "f1",
        "f",
        &[
            ("a", ts, "loaded"),
            ("b", ts, "loaded"),
            ("c", ts, "loaded"),
        ],
    );
    let r0 = region_name(&s, &t, 0);
    assert!(s
        .bulk_load_hfiles(&r0, &[fp("f", &file)], true, false)
        .unwrap());
    assert_eq!(value(&s, &t, "a", "f").as_deref(), Some("loaded"));
    assert_eq!(value(&s, &t, "b", "f").as_deref(), Some("loaded"));
    s.put(&t, &Put::with_timestamp("c", ts).add("f", "q", "put-after"))
        .unwrap();
    // Without an assigned sequence id a file of HFileOutputFormat2's kind loses every tie.
    s.put(&t, &Put::with_timestamp("d", ts).add("f", "q", "put"))
        .unwrap();
    let old = hfile(input.path(), "f2", "f", &[("d", ts, "loaded-unassigned")]);
    assert!(s
        .bulk_load_hfiles(&r0, &[fp("f", &old)], false, false)
        .unwrap());
    let want = [
        ("a", "loaded"),
        ("b", "loaded"),
        ("c", "put-after"),
        ("d", "put"),
    ];
    let check = |s: &RegionServer, when: &str| {
        for (row, v) in want {
            assert_eq!(
                value(s, &t, row, "f").as_deref(),
                Some(v),
                "row {row} {when}"
            );
        }
    };
    check(&s, "after the loads");
    let cells = all_cells(&s, &t);
    // A crash: puts since the load are in the WAL only.
    drop(s);
    let s = server(root.path());
    check(&s, "after a crash and WAL replay");
    assert_eq!(all_cells(&s, &t), cells, "nothing doubled or lost");
    // A major compaction keeps the order (the loaded cells keep their sequence id).
    s.flush_table(&t).unwrap();
    s.compact_table(&t, true).unwrap();
    check(&s, "after a major compaction");
    s.close().unwrap();
    drop(s);
    let s = server(root.path());
    check(&s, "after close and reopen");
}

#[test]
fn a_load_with_unflushed_puts_around_it_survives_a_crash() {
    let root = tempfile::tempdir().unwrap();
    let input = tempfile::tempdir().unwrap();
    let s = server(root.path());
    let t = table(&s);
    for r in ["a1", "a2", "n1"] {
        s.put(&t, &Put::new(r).add("f", "q", "before")).unwrap();
    }
    let f = hfile(
        input.path(),
        "f",
        "f",
        &[("b1", 1, "loaded"), ("b2", 1, "loaded")],
    );
    let g = hfile(input.path(), "g", "g", &[("b1", 1, "loaded-g")]);
    let r0 = region_name(&s, &t, 0);
    assert!(s
        .bulk_load_hfiles(&r0, &[fp("f", &f), fp("g", &g)], true, false)
        .unwrap());
    for r in ["a3", "n2"] {
        s.put(&t, &Put::new(r).add("f", "q", "after")).unwrap();
    }
    let cells = all_cells(&s, &t);
    assert_eq!(cells.len(), 8);
    drop(s);
    let s = server(root.path());
    assert_eq!(all_cells(&s, &t), cells);
    // Again, now that the replayed edits were flushed at open.
    drop(s);
    let s = server(root.path());
    assert_eq!(all_cells(&s, &t), cells);
}

#[test]
fn a_crash_between_journal_and_renames_finishes_the_load_at_open() {
    let root = tempfile::tempdir().unwrap();
    let input = tempfile::tempdir().unwrap();
    let s = server(root.path());
    let t = table(&s);
    let f = hfile(input.path(), "f", "f", &[("b", 1, "fb")]);
    let g = hfile(input.path(), "g", "g", &[("b", 1, "gb")]);
    let r0 = region_name(&s, &t, 0);
    assert!(s
        .bulk_load_hfiles(&r0, &[fp("f", &f), fp("g", &g)], true, false)
        .unwrap());
    let cells = all_cells(&s, &t);
    let region_dir = s.table(&t).unwrap().regions[0].dir().to_path_buf();
    s.close().unwrap();
    drop(s);
    // Put the state back to "journal written, only f renamed": g's file hidden again.
    let only = |fam: &str| {
        let d = region_dir.join(fam);
        std::fs::read_dir(&d)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
    };
    let (fpath, gpath) = (only("f"), only("g"));
    let hidden = gpath.with_file_name(format!(
        ".bulkload-{}",
        gpath.file_name().unwrap().to_string_lossy()
    ));
    std::fs::rename(&gpath, &hidden).unwrap();
    let rel = |p: &Path| p.strip_prefix(&region_dir).unwrap().display().to_string();
    let hidden_f = fpath.with_file_name(format!(
        ".bulkload-{}",
        fpath.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(
        region_dir.join(BULK_LOAD_JOURNAL),
        format!(
            "{}\t{}\n{}\t{}\n",
            rel(&hidden_f),
            rel(&fpath),
            rel(&hidden),
            rel(&gpath)
        ),
    )
    .unwrap();
    let s = server(root.path());
    assert_eq!(all_cells(&s, &t), cells);
    assert!(!region_dir.join(BULK_LOAD_JOURNAL).exists());
    assert!(gpath.exists() && !hidden.exists());
    s.close().unwrap();
    drop(s);

    // Hidden files with no journal: the load never committed, so they are set aside.
    std::fs::rename(&gpath, &hidden).unwrap();
    let s = server(root.path());
    assert_eq!(value(&s, &t, "b", "g"), None);
    assert_eq!(value(&s, &t, "b", "f").as_deref(), Some("fb"));
    assert!(!hidden.exists());
    assert!(region_dir
        .join(".bulkload-orphans")
        .join(hidden.file_name().unwrap())
        .exists());
}

#[test]
fn a_staged_load_moves_files_through_the_token_and_back_on_a_misfit() {
    let root = tempfile::tempdir().unwrap();
    let input = tempfile::tempdir().unwrap();
    let s = server(root.path());
    let t = table(&s);
    let token = s.prepare_bulk_load(&t, "alice").unwrap();
    let name = token.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("alice__t__"), "{name}");
    assert_eq!(token.parent().unwrap(), root.path().join("staging"));
    assert!(token.is_dir());
    let r0 = region_name(&s, &t, 0);
    // A misfit: nothing loaded, and the caller gets its file back where it was.
    let misfit = hfile(input.path(), "m1", "f", &[("a", 1, "x"), ("z", 1, "y")]);
    assert!(!s
        .bulk_load_staged(&token, &r0, &[fp("f", &misfit)], false)
        .unwrap());
    assert!(misfit.exists());
    assert!(!token.join("f").join("m1").exists());
    // A fitting file goes through `<token>/f/` into the store, with a sequence id.
    let ok = hfile(input.path(), "ok1", "f", &[("b", 1, "fb")]);
    assert!(s
        .bulk_load_staged(&token, &r0, &[fp("f", &ok)], false)
        .unwrap());
    assert!(!ok.exists() && !token.join("f").join("ok1").exists());
    assert_eq!(value(&s, &t, "b", "f").as_deref(), Some("fb"));
    let region = s.table(&t).unwrap().regions[0].clone();
    let names: Vec<String> = region
        .store(b"f")
        .unwrap()
        .state()
        .files
        .iter()
        .map(|f| f.name())
        .collect();
    assert!(names.iter().all(|n| n.contains("_SeqId_")), "{names:?}");
    // Tokens outside the staging directory are refused.
    let e = s
        .bulk_load_staged(input.path(), &r0, &[fp("f", &misfit)], false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("is not a staging directory"), "{e}");
    assert!(s.cleanup_bulk_load(input.path()).is_err());
    s.cleanup_bulk_load(&token).unwrap();
    assert!(!token.exists());
}

#[test]
fn a_file_recording_high_sequence_ids_loaded_as_is_does_not_hide_wal_edits() {
    let root = tempfile::tempdir().unwrap();
    let input = tempfile::tempdir().unwrap();
    let s = server(root.path());
    let t = table(&s);
    s.put(&t, &Put::new("a").add("f", "q", "before")).unwrap();
    // A store file from elsewhere: it records sequence ids far past this region's.
    let path = input.path().join("foreign");
    let out = std::fs::File::create(&path).unwrap();
    let mut w =
        HFileWriter::new(out, path.display().to_string(), WriterOptions::default()).unwrap();
    let kv = KeyValue::put(b"b", b"f", b"q", 1, b"foreign").unwrap();
    w.append(&kv.as_cell()).unwrap();
    w.append_file_info(b"MAX_SEQ_ID_KEY", &1_000_000i64.to_be_bytes())
        .unwrap();
    w.finish().unwrap();
    let r0 = region_name(&s, &t, 0);
    assert!(s
        .bulk_load_hfiles(&r0, &[fp("f", &path)], false, false)
        .unwrap());
    s.put(&t, &Put::new("c").add("f", "q", "after")).unwrap();
    let cells = all_cells(&s, &t);
    assert_eq!(cells.len(), 3);
    // A crash: the puts before and after are in the WAL only (or flushed by the load).
    drop(s);
    let s = server(root.path());
    assert_eq!(all_cells(&s, &t), cells);
}
