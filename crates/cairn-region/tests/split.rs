//! Splits and merges on the embedded server: by hand and by policy, reads through reference
//! files, compaction dropping the references and archiving the parents, crash safety at
//! every step (a simulated crash: the server dropped without closing, reopened over the same
//! files), and concurrent reads and writes checked against a model while regions split and
//! merge under them.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_region::server::TransitionStep;
use cairn_region::{
    ColumnFamilyDescriptor, Delete, Get, Put, RegionError, RegionServer, Scan, ServerConfig,
    TableDescriptor, TableName,
};

fn config(dir: &Path, background: bool) -> ServerConfig {
    let mut c = ServerConfig::new(dir);
    c.background = background;
    c.region.compaction.min_files = 3;
    c.region.compaction.min_size = 1;
    c
}

fn open(dir: &Path) -> Arc<RegionServer> {
    RegionServer::open(config(dir, false)).unwrap()
}

fn create(s: &RegionServer, name: &str, splits: &[&str]) -> TableName {
    let t = TableName::parse(name).unwrap();
    let d = TableDescriptor::new(t.clone())
        // Small blocks: a region of a few hundred rows has a middle block to split at.
        .with_family(ColumnFamilyDescriptor::new("a").block_size(1024))
        .with_family(ColumnFamilyDescriptor::new("b").max_versions(3));
    let keys: Vec<Vec<u8>> = splits.iter().map(|k| k.as_bytes().to_vec()).collect();
    s.create_table(d, &keys).unwrap();
    t
}

fn row(i: usize) -> String {
    format!("row{i:05}")
}

/// Writes rows `0..n` (family a, and b for even rows), flushing every `flush_every` rows.
fn load(s: &RegionServer, t: &TableName, n: usize, flush_every: usize) {
    for i in 0..n {
        let mut p = Put::new(row(i)).add("a", "q", format!("v{i}"));
        if i % 2 == 0 {
            p = p.add("b", "x", format!("w{i}"));
        }
        s.put(t, &p).unwrap();
        if flush_every > 0 && (i + 1) % flush_every == 0 {
            s.flush_table(t).unwrap();
        }
    }
}

/// Every row through a full scan, as (row, cells).
fn scan_all(s: &RegionServer, t: &TableName, reversed: bool) -> Vec<(String, usize)> {
    let mut scan = Scan::new();
    scan.reversed = reversed;
    s.scanner(t, scan)
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            (
                String::from_utf8(r[0].key().row().to_vec()).unwrap(),
                r.len(),
            )
        })
        .collect()
}

/// Checks rows `0..n` as [`load`] wrote them: each once, by scan (both ways) and by get.
fn check(s: &RegionServer, t: &TableName, n: usize, when: &str) {
    let want: Vec<(String, usize)> = (0..n)
        .map(|i| (row(i), if i % 2 == 0 { 2 } else { 1 }))
        .collect();
    assert_eq!(scan_all(s, t, false), want, "{when}: forward scan");
    let mut rev = want.clone();
    rev.reverse();
    assert_eq!(scan_all(s, t, true), rev, "{when}: reversed scan");
    for i in (0..n).step_by(7) {
        let cells = s.get(t, Get::new(row(i))).unwrap();
        assert_eq!(cells.len(), want[i].1, "{when}: get {}", row(i));
        assert_eq!(
            cells[0].as_cell().value,
            format!("v{i}").as_bytes(),
            "{when}"
        );
    }
}

fn region_names(s: &RegionServer, t: &TableName) -> Vec<(String, String)> {
    s.table(t)
        .unwrap()
        .regions
        .iter()
        .map(|r| {
            (
                String::from_utf8_lossy(&r.info.start_key).into_owned(),
                String::from_utf8_lossy(&r.info.end_key).into_owned(),
            )
        })
        .collect()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn a_split_by_hand_reads_through_references_until_compaction_archives_the_parent() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let t = create(&s, "t", &[]);
    load(&s, &t, 600, 200);
    // Some rows only in the memstore and the WAL: the split flushes them first.
    s.put(
        &t,
        &Put::new(row(600))
            .add("a", "q", "v600")
            .add("b", "x", "w600"),
    )
    .unwrap();
    let parent = s.table(&t).unwrap().regions[0].info.clone();
    let parent_files: Vec<String> = files_in(
        &dir.path()
            .join("data/default/t")
            .join(&parent.encoded_name)
            .join("a"),
    );
    let (a, b) = s
        .split_region(parent.region_name_bytes().as_slice(), Some(b"row00250"))
        .unwrap();
    assert_eq!(
        region_names(&s, &t),
        [
            ("".into(), "row00250".into()),
            ("row00250".into(), "".into())
        ]
    );
    assert!(a.region_id > parent.region_id && a.region_id == b.region_id);
    check(&s, &t, 601, "after the split");
    // HBase's layout: each daughter family holds `<hfile>.<parent>` references; the parent
    // is offline and split in its .regioninfo, kept while referred to.
    let tdir = dir.path().join("data/default/t");
    for d in [&a, &b] {
        let refs = files_in(&tdir.join(&d.encoded_name).join("a"));
        assert!(!refs.is_empty());
        for r in &refs {
            let (hfile, p) = r.split_once('.').unwrap();
            assert_eq!(p, parent.encoded_name);
            assert!(
                files_in(&tdir.join(&parent.encoded_name).join("a")).contains(&hfile.to_string())
            );
            assert!(std::fs::read(tdir.join(&d.encoded_name).join("a").join(r))
                .unwrap()
                .starts_with(b"PBUF"));
        }
    }
    let pinfo = cairn_region::layout::read_region_info(
        &cairn_fs::LocalFileSystem,
        &tdir.join(&parent.encoded_name),
    )
    .unwrap();
    assert!(pinfo.offline && pinfo.split);
    // A region holding references does not split again.
    let e = s
        .split_region(a.encoded_name.as_bytes(), Some(b"row00100"))
        .unwrap_err();
    assert!(e.to_string().contains("NOT splittable"), "{e}");
    // Writes go to the daughters; the old region name is not served.
    s.put(&t, &Put::new(row(601)).add("a", "q", "v601"))
        .unwrap();
    assert!(matches!(
        s.region_by_name(&parent.region_name_bytes()),
        Err(RegionError::NotServingRegion(_))
    ));
    // Reopened before the references are compacted: the same rows.
    s.close().unwrap();
    drop(s);
    let s = open(dir.path());
    assert_eq!(s.recovery.regions, 2);
    check(&s, &t, 602, "reopened with references");
    // A major compaction rewrites the references; the parent then goes to the archive.
    s.compact_table(&t, true).unwrap();
    for d in [&a, &b] {
        for f in files_in(&tdir.join(&d.encoded_name).join("a")) {
            assert!(!f.contains('.'), "reference {f} left after compaction");
        }
    }
    assert!(!tdir.join(&parent.encoded_name).exists(), "parent archived");
    let archived = dir
        .path()
        .join("archive/data/default/t")
        .join(&parent.encoded_name);
    let kept = files_in(&archived.join("a"));
    assert!(
        parent_files.iter().all(|f| kept.contains(f)),
        "{parent_files:?} in {kept:?}"
    );
    check(&s, &t, 602, "after compaction");
    // The daughter splits again now.
    s.split_region(a.encoded_name.as_bytes(), None).unwrap();
    assert_eq!(s.table(&t).unwrap().regions.len(), 3);
    check(&s, &t, 602, "after a second split");
}

#[test]
fn a_split_refuses_bad_rows_and_disabled_tables() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let t = create(&s, "t", &["m"]);
    load(&s, &t, 10, 0);
    let r0 = s.table(&t).unwrap().regions[1].info.clone();
    let e = s
        .split_region(r0.encoded_name.as_bytes(), Some(b"m"))
        .unwrap_err();
    assert!(
        e.to_string().contains("Split row is equal to startkey: m"),
        "{e}"
    );
    let e = s
        .split_region(r0.encoded_name.as_bytes(), Some(b"a"))
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("Split row is not inside region key range splitKey:a"),
        "{e}"
    );
    // Nothing in the region's files to find a middle in.
    let e = s
        .split_region(r0.encoded_name.as_bytes(), None)
        .unwrap_err();
    assert!(e.to_string().contains("bestSplitPoint = null"), "{e}");
    assert_eq!(s.table(&t).unwrap().regions.len(), 2, "nothing changed");
    let d = TableName::parse("d").unwrap();
    s.create_table(
        TableDescriptor::new(d.clone())
            .with_family(ColumnFamilyDescriptor::new("a"))
            .with_value(
                "SPLIT_POLICY",
                "org.apache.hadoop.hbase.regionserver.DisabledRegionSplitPolicy",
            ),
        &[],
    )
    .unwrap();
    let r = s.table(&d).unwrap().regions[0].info.clone();
    let e = s
        .split_region(r.encoded_name.as_bytes(), Some(b"x"))
        .unwrap_err();
    assert!(e.to_string().contains("splits are disabled"), "{e}");
    assert!(matches!(
        s.split_region(b"0123456789abcdef0123456789abcdef", Some(b"x")),
        Err(RegionError::NotServingRegion(_))
    ));
}

#[test]
fn a_merge_joins_adjacent_regions_and_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let t = create(&s, "t", &["row00100", "row00200"]);
    load(&s, &t, 300, 120);
    let regions: Vec<_> = s
        .table(&t)
        .unwrap()
        .regions
        .iter()
        .map(|r| r.info.clone())
        .collect();
    let (r0, r1, r2) = (&regions[0], &regions[1], &regions[2]);
    let e = s
        .merge_regions(r0.encoded_name.as_bytes(), r2.encoded_name.as_bytes())
        .unwrap_err();
    assert!(
        e.to_string().contains("Unable to merge non-adjacent"),
        "{e}"
    );
    let e = s
        .merge_regions(r0.encoded_name.as_bytes(), r0.encoded_name.as_bytes())
        .unwrap_err();
    assert!(
        e.to_string().contains("cannot merge a region to itself"),
        "{e}"
    );
    // Either order names the same pair.
    let m = s
        .merge_regions(r2.encoded_name.as_bytes(), r1.encoded_name.as_bytes())
        .unwrap();
    assert_eq!(m.region_id, r1.region_id.max(r2.region_id) + 1);
    assert_eq!(
        region_names(&s, &t),
        [
            ("".into(), "row00100".into()),
            ("row00100".into(), "".into())
        ]
    );
    check(&s, &t, 300, "after the merge");
    // A merged region holds references: no second merge until it compacts.
    let e = s
        .merge_regions(r0.encoded_name.as_bytes(), m.encoded_name.as_bytes())
        .unwrap_err();
    assert!(e.to_string().contains("not mergeable"), "{e}");
    s.put(
        &t,
        &Put::new(row(300))
            .add("a", "q", "v300")
            .add("b", "x", "w300"),
    )
    .unwrap();
    drop(s); // a crash: the put is only in the WAL
    let s = open(dir.path());
    check(&s, &t, 301, "after a crash");
    s.compact_table(&t, true).unwrap();
    let tdir = dir.path().join("data/default/t");
    assert!(!tdir.join(&r1.encoded_name).exists() && !tdir.join(&r2.encoded_name).exists());
    let m2 = s
        .merge_regions(r0.encoded_name.as_bytes(), m.encoded_name.as_bytes())
        .unwrap();
    assert_eq!(region_names(&s, &t), [("".into(), "".into())]);
    assert!(m2.start_key.is_empty() && m2.end_key.is_empty());
    check(&s, &t, 301, "after the second merge");
}

/// After a crash at each step of a split or a merge, the reopened server serves either the
/// parents or the children, with every row once.
#[test]
fn a_crash_at_any_step_leaves_the_parents_or_the_children() {
    use TransitionStep::*;
    for step in [Prepared, FirstChild, Children, Committed, ParentsRetired] {
        for merge in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let s = open(dir.path());
            let t = create(&s, "t", &["row00150"]);
            load(&s, &t, 300, 100);
            // Unflushed rows: the transition flushes them; were it not to, a crash loses them.
            s.put(
                &t,
                &Put::new(row(300))
                    .add("a", "q", "v300")
                    .add("b", "x", "w300"),
            )
            .unwrap();
            let before = region_names(&s, &t);
            let regions = s.table(&t).unwrap().regions.clone();
            if merge {
                s.merge_regions_until(
                    regions[0].info.encoded_name.as_bytes(),
                    regions[1].info.encoded_name.as_bytes(),
                    Some(step),
                )
                .unwrap();
            } else {
                s.split_region_until(
                    regions[1].info.encoded_name.as_bytes(),
                    Some(b"row00250"),
                    Some(step),
                )
                .unwrap();
            }
            drop(regions);
            drop(s);
            let s = open(dir.path());
            let after = region_names(&s, &t);
            let committed = matches!(step, Committed | ParentsRetired);
            let want: Vec<(String, String)> = match (committed, merge) {
                (false, _) => before.clone(),
                (true, false) => vec![
                    ("".into(), "row00150".into()),
                    ("row00150".into(), "row00250".into()),
                    ("row00250".into(), "".into()),
                ],
                (true, true) => vec![("".into(), "".into())],
            };
            let what = format!(
                "crash after {step:?} of a {}",
                if merge { "merge" } else { "split" }
            );
            assert_eq!(after, want, "{what}");
            assert_eq!(
                (
                    s.recovery.transitions_finished,
                    s.recovery.transitions_undone
                ),
                if committed { (1, 0) } else { (0, 1) },
                "{what}"
            );
            check(&s, &t, 301, &what);
            // No journal left, no child directory of an undone transition.
            let tdir = dir.path().join("data/default/t");
            assert!(files_in(&tdir.join(".transitions")).is_empty(), "{what}");
            let dirs: Vec<String> = files_in(&tdir)
                .into_iter()
                .filter(|d| !d.starts_with('.'))
                .collect();
            let open_regions = s.table(&t).unwrap().regions.len();
            let parents = if committed {
                if merge {
                    2
                } else {
                    1
                }
            } else {
                0
            };
            assert_eq!(dirs.len(), open_regions + parents, "{what}: {dirs:?}");
            // Writes and a later split or merge still work.
            s.put(&t, &Put::new(row(301)).add("a", "q", "v301"))
                .unwrap();
            s.compact_table(&t, true).unwrap();
            assert_eq!(
                files_in(&tdir)
                    .into_iter()
                    .filter(|d| !d.starts_with('.'))
                    .count(),
                open_regions,
                "{what}: parents archived"
            );
            let _ = s.get(&t, Get::new(row(301))).unwrap();
        }
    }
}

/// Writers, readers and a thread that splits and merges regions, all at once; every read
/// sees at least what was acknowledged before it began, and the end state is the model's.
#[test]
fn splits_and_merges_under_concurrent_reads_and_writes_match_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let s = RegionServer::open(config(dir.path(), true)).unwrap();
    let t = create(&s, "t", &[]);
    const ROWS: usize = 400;
    // The model: per row, the newest acknowledged value (a counter) or a delete (0).
    let model: Arc<Vec<Mutex<u64>>> = Arc::new((0..ROWS).map(|_| Mutex::new(0)).collect());
    let stop = Arc::new(AtomicBool::new(false));
    // Explicit increasing timestamps: a put in the same millisecond as an earlier delete of
    // its row would be masked by it (HBase's rule), which is not what this test is about.
    let clock = Arc::new(std::sync::atomic::AtomicI64::new(1_000_000));
    let mut threads = Vec::new();
    for w in 0..2usize {
        let (s, t, model, stop) = (s.clone(), t.clone(), model.clone(), stop.clone());
        let clock = clock.clone();
        threads.push(std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let ts = clock.fetch_add(1, Ordering::Relaxed);
                // Each writer owns every other row, so the model's order is the writer's.
                let i = (n as usize * 7919 + w) % ROWS / 2 * 2 + w;
                let mut cur = model[i].lock().unwrap();
                if n.is_multiple_of(11) {
                    s.delete(&t, &Delete::with_timestamp(row(i), ts)).unwrap();
                    *cur = 0;
                } else {
                    let v = *cur + 1;
                    s.put(
                        &t,
                        &Put::with_timestamp(row(i), ts).add("a", "q", v.to_string()),
                    )
                    .unwrap();
                    *cur = v;
                }
                if n.is_multiple_of(97) {
                    s.put_many(
                        &t,
                        &(0..5)
                            .map(|k| Put::new(format!("bulk{w}-{n}-{k}")).add("b", "x", "1"))
                            .collect::<Vec<_>>(),
                    )
                    .unwrap();
                }
            }
            n
        }));
    }
    for _ in 0..2 {
        let (s, t, model, stop) = (s.clone(), t.clone(), model.clone(), stop.clone());
        threads.push(std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let i = (n as usize * 104729) % ROWS;
                // Holding the row's model lock: no write to it is in flight.
                let cur = model[i].lock().unwrap();
                let got = s.get(&t, Get::new(row(i))).unwrap();
                let v: u64 = got
                    .first()
                    .map(|c| {
                        std::str::from_utf8(c.as_cell().value)
                            .unwrap()
                            .parse()
                            .unwrap()
                    })
                    .unwrap_or(0);
                assert_eq!(v, *cur, "get {} while regions split and merge", row(i));
                drop(cur);
                if n.is_multiple_of(50) {
                    // A scan sees each row at most once, in order.
                    let rows: Vec<Vec<u8>> = s
                        .scanner(&t, Scan::new())
                        .unwrap()
                        .map(|r| r.unwrap()[0].key().row().to_vec())
                        .collect();
                    assert!(
                        rows.windows(2).all(|w| w[0] < w[1]),
                        "scan rows in order, once"
                    );
                }
            }
            n
        }));
    }
    // Splits and merges: the test's own, at rows of the model, while the others run.
    let deadline = Instant::now() + Duration::from_secs(6);
    let mut changes = 0;
    let mut k = 0usize;
    while Instant::now() < deadline {
        k += 1;
        let regions = s.table(&t).unwrap().regions.clone();
        let pick = k % regions.len();
        let r = &regions[pick];
        let result = if k.is_multiple_of(3) && regions.len() > 1 {
            let other = &regions[(pick + 1) % regions.len()];
            s.compact_table(&t, true).unwrap();
            s.merge_regions(
                r.info.encoded_name.as_bytes(),
                other.info.encoded_name.as_bytes(),
            )
            .map(drop)
        } else {
            let at = row((k * 131) % ROWS);
            s.compact_table(&t, true).unwrap();
            s.split_region(r.info.encoded_name.as_bytes(), Some(at.as_bytes()))
                .map(drop)
        };
        match result {
            Ok(()) => changes += 1,
            // Rows outside the picked region, a region still holding references, or one a
            // background split replaced: fine, try another.
            Err(RegionError::InvalidArgument(_)) | Err(RegionError::NotServingRegion(_)) => {}
            Err(e) => panic!("split or merge failed: {e}"),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    let ops: Vec<u64> = threads.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(changes >= 5, "only {changes} splits and merges ran");
    assert!(ops.iter().all(|&n| n > 100), "{ops:?}");
    let check_model = |s: &RegionServer, when: &str| {
        let mut want = BTreeMap::new();
        for (i, v) in model.iter().enumerate() {
            let v = *v.lock().unwrap();
            if v > 0 {
                want.insert(row(i), v.to_string());
            }
        }
        let mut got = BTreeMap::new();
        for r in s.scanner(&t, Scan::new()).unwrap() {
            let r = r.unwrap();
            let key = String::from_utf8(r[0].key().row().to_vec()).unwrap();
            if key.starts_with("row") {
                let v = r.iter().find(|c| c.key().family() == b"a").unwrap();
                assert!(got
                    .insert(key, String::from_utf8(v.as_cell().value.to_vec()).unwrap())
                    .is_none());
            }
        }
        assert_eq!(got, want, "{when}");
    };
    check_model(&s, "after the run");
    s.close().unwrap();
    drop(s);
    let s = open(dir.path());
    check_model(&s, "after a reopen");
}

/// A table loaded well past `hbase.hregion.max.filesize` splits by itself into several
/// regions, with every row readable once, across a restart.
#[test]
fn a_growing_table_splits_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), true);
    c.set_property(
        "hbase.regionserver.region.split.policy",
        "org.apache.hadoop.hbase.regionserver.ConstantSizeRegionSplitPolicy",
    )
    .unwrap();
    c.set_property("hbase.hregion.max.filesize", "65536")
        .unwrap();
    let s = RegionServer::open(c.clone()).unwrap();
    let t = TableName::parse("grow").unwrap();
    let mut d = TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("a"));
    d.memstore_flush_size = Some(32 * 1024);
    s.create_table(d, &[]).unwrap();
    let n = 4000;
    for i in 0..n {
        let p = Put::new(row(i)).add("a", "q", vec![b'x'; 100]);
        // As a client does: a region over its memstore limit is retried after a pause.
        while let Err(e) = s.put(&t, &p) {
            assert!(matches!(e, RegionError::RegionTooBusy { .. }), "{e}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while s.table(&t).unwrap().regions.len() < 4 {
        assert!(
            Instant::now() < deadline,
            "no splits: {:?}",
            region_names(&s, &t)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let rows = |s: &RegionServer| -> Vec<String> {
        s.scanner(&t, Scan::new())
            .unwrap()
            .map(|r| String::from_utf8(r.unwrap()[0].key().row().to_vec()).unwrap())
            .collect()
    };
    let want: Vec<String> = (0..n).map(row).collect();
    assert_eq!(rows(&s), want);
    let regions = s.table(&t).unwrap().regions.len();
    s.close().unwrap();
    drop(s);
    let s = RegionServer::open(c).unwrap();
    assert!(s.table(&t).unwrap().regions.len() >= regions);
    assert_eq!(rows(&s), want);
}

/// A table scan that is in the middle of a region when that region (or the next one) is
/// split or merged goes on with the new regions: every row once, in order, both ways.
#[test]
fn a_scan_goes_on_across_splits_and_merges_made_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let t = create(&s, "t", &["row00100", "row00200"]);
    load(&s, &t, 300, 0);
    let want: Vec<String> = (0..300).map(row).collect();
    let enc =
        |s: &RegionServer, i: usize| s.table(&t).unwrap().regions[i].info.encoded_name.clone();
    for reversed in [false, true] {
        for change in 0..3 {
            let mut scan = Scan::new();
            scan.reversed = reversed;
            let mut sc = s.scanner(&t, scan).unwrap();
            let mut got = Vec::new();
            // Into the first region scanned (the last one when reversed).
            for _ in 0..50 {
                let r = sc.next_row().unwrap().unwrap();
                got.push(String::from_utf8(r[0].key().row().to_vec()).unwrap());
            }
            let n = s.table(&t).unwrap().regions.len();
            match change {
                // The region being scanned merges with its neighbour.
                0 => {
                    let (a, b) = if reversed { (n - 2, n - 1) } else { (0, 1) };
                    s.merge_regions(enc(&s, a).as_bytes(), enc(&s, b).as_bytes())
                        .unwrap();
                }
                // The next region to scan splits.
                1 => {
                    let (i, at) = if reversed {
                        (n - 2, "row00150")
                    } else {
                        (1, "row00150")
                    };
                    s.split_region(enc(&s, i).as_bytes(), Some(at.as_bytes()))
                        .unwrap();
                }
                // The region being scanned splits.
                _ => {
                    let (i, at) = if reversed {
                        (n - 1, "row00250")
                    } else {
                        (0, "row00030")
                    };
                    s.split_region(enc(&s, i).as_bytes(), Some(at.as_bytes()))
                        .unwrap();
                }
            }
            for r in sc {
                got.push(String::from_utf8(r.unwrap()[0].key().row().to_vec()).unwrap());
            }
            let mut w = want.clone();
            if reversed {
                w.reverse();
            }
            assert_eq!(got, w, "reversed={reversed} change={change}");
            // Back to three regions with no references for the next round.
            s.compact_table(&t, true).unwrap();
            while s.table(&t).unwrap().regions.len() > 3 {
                let n = s.table(&t).unwrap().regions.len();
                let regions = s.table(&t).unwrap().regions.clone();
                let i = (0..n - 1)
                    .find(|&i| {
                        regions[i + 1].info.start_key != b"row00100"
                            && regions[i + 1].info.start_key != b"row00200"
                    })
                    .unwrap();
                s.merge_regions(enc(&s, i).as_bytes(), enc(&s, i + 1).as_bytes())
                    .unwrap();
                s.compact_table(&t, true).unwrap();
            }
            while s.table(&t).unwrap().regions.len() < 3 {
                let regions = s.table(&t).unwrap().regions.clone();
                let (i, at) = if regions[0].info.end_key.is_empty()
                    || regions[0].info.end_key.as_slice() > b"row00100".as_slice()
                {
                    (0, "row00100")
                } else {
                    (regions.len() - 1, "row00200")
                };
                s.split_region(enc(&s, i).as_bytes(), Some(at.as_bytes()))
                    .unwrap();
                s.compact_table(&t, true).unwrap();
            }
        }
    }
}

/// `hbase.hregion.memstore.flush.size` is the flush size of every table that does not set
/// `MEMSTORE_FLUSHSIZE` (and so what its first split steps from), as in HBase; a table's own
/// value wins; the server's is not written into the table's descriptor.
#[test]
fn the_servers_flush_size_is_every_table_without_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), true);
    c.set_property(
        "hbase.regionserver.region.split.policy",
        "org.apache.hadoop.hbase.regionserver.DisabledRegionSplitPolicy",
    )
    .unwrap();
    c.set_property("hbase.hregion.memstore.flush.size", "32768")
        .unwrap();
    let s = RegionServer::open(c.clone()).unwrap();
    let inherits = TableName::parse("inherits").unwrap();
    let own = TableName::parse("own").unwrap();
    s.create_table(
        TableDescriptor::new(inherits.clone()).with_family(ColumnFamilyDescriptor::new("a")),
        &[],
    )
    .unwrap();
    let mut d = TableDescriptor::new(own.clone()).with_family(ColumnFamilyDescriptor::new("a"));
    d.memstore_flush_size = Some(1 << 30);
    s.create_table(d, &[]).unwrap();
    for t in [&inherits, &own] {
        for i in 0..2000 {
            let p = Put::new(row(i)).add("a", "q", vec![b'x'; 100]);
            while let Err(e) = s.put(t, &p) {
                assert!(matches!(e, RegionError::RegionTooBusy { .. }), "{e}");
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
    let files = |t: &TableName| -> u64 {
        s.table(t)
            .unwrap()
            .regions
            .iter()
            .flat_map(|r| r.metric_values())
            .filter(|(k, _)| *k == "storeFileCount")
            .map(|(_, v)| v)
            .sum()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while files(&inherits) < 2 {
        assert!(
            Instant::now() < deadline,
            "never flushed at the server's size"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(files(&own), 0, "a table's own flush size wins");
    let stored = s.table(&inherits).unwrap().descriptor.memstore_flush_size;
    s.close().unwrap();
    drop(s);
    assert_eq!(stored, None);
    // Reopened without the property: the table follows the server's (default) size again.
    let s = RegionServer::open(config(dir.path(), false)).unwrap();
    assert_eq!(
        s.table(&inherits).unwrap().descriptor.memstore_flush_size,
        None
    );
    assert_eq!(
        s.table(&own).unwrap().descriptor.memstore_flush_size,
        Some(1 << 30)
    );
}
