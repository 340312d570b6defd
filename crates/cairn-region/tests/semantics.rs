//! HBase's read semantics through the region server: versions, the four delete markers,
//! TTL, time ranges, scans (ranges, reversed, batch, limit, columns), filters, counters,
//! check-and-put — each checked before a flush, after it, and after compactions.

use std::sync::Arc;

use cairn_cell::KeyValue;
use cairn_region::{
    ColumnFamilyDescriptor, Delete, Get, Increment, Put, RegionServer, Scan, ServerConfig,
    TableDescriptor, TableName, TimeRange,
};

/// With a block cache, so every read below also goes through it (the model test runs
/// without one).
fn server(dir: &std::path::Path) -> Arc<RegionServer> {
    let mut c = ServerConfig::new(dir);
    c.background = false;
    c.block_cache = Some(cairn_blockcache::BlockCacheConfig::default());
    RegionServer::open(c).unwrap()
}

fn table(
    s: &RegionServer,
    name: &str,
    families: Vec<ColumnFamilyDescriptor>,
    splits: &[&str],
) -> TableName {
    let t = TableName::parse(name).unwrap();
    let mut d = TableDescriptor::new(t.clone());
    d.families = families;
    let splits: Vec<Vec<u8>> = splits.iter().map(|s| s.as_bytes().to_vec()).collect();
    s.create_table(d, &splits).unwrap();
    t
}

/// `(row, family, qualifier, ts, value)` of each cell.
fn cells(r: &[KeyValue]) -> Vec<(String, String, String, i64, String)> {
    r.iter()
        .map(|c| {
            let c = c.as_cell();
            (
                String::from_utf8_lossy(c.row()).into(),
                String::from_utf8_lossy(c.family()).into(),
                String::from_utf8_lossy(c.qualifier()).into(),
                c.timestamp(),
                String::from_utf8_lossy(c.value).into(),
            )
        })
        .collect()
}

fn values(r: &[KeyValue]) -> Vec<String> {
    r.iter()
        .map(|c| String::from_utf8_lossy(c.as_cell().value).into_owned())
        .collect()
}

fn rows(s: &RegionServer, t: &TableName, scan: Scan) -> Vec<String> {
    s.scanner(t, scan)
        .unwrap()
        .map(|r| String::from_utf8_lossy(r.unwrap()[0].as_cell().row()).into_owned())
        .collect()
}

/// Runs `check` on the live memstore, after a flush, after a minor and after a major
/// compaction, and after a restart.
fn at_every_stage(
    dir: &std::path::Path,
    s: Arc<RegionServer>,
    t: &TableName,
    check: impl Fn(&RegionServer),
) {
    check(&s);
    s.flush_table(t).unwrap();
    check(&s);
    s.compact_table(t, false).unwrap();
    check(&s);
    s.compact_table(t, true).unwrap();
    check(&s);
    s.close().unwrap();
    drop(s);
    let s = server(dir);
    check(&s);
    s.close().unwrap();
}

#[test]
fn versions_are_capped_by_family_and_get() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(
        &s,
        "v",
        vec![ColumnFamilyDescriptor::new("f").max_versions(3)],
        &[],
    );
    for ts in 1..=5 {
        s.put(&t, &Put::new("r").add_at("f", "q", ts, format!("v{ts}")))
            .unwrap();
    }
    // A second flush adds a file, so compactions have something to merge.
    s.flush_table(&t).unwrap();
    s.put(&t, &Put::new("r").add_at("f", "q", 6, "v6")).unwrap();
    at_every_stage(dir.path(), s, &t, |s| {
        assert_eq!(values(&s.get(&t, Get::new("r")).unwrap()), ["v6"]);
        assert_eq!(
            values(&s.get(&t, Get::new("r").versions(10)).unwrap()),
            ["v6", "v5", "v4"]
        );
        assert_eq!(
            values(&s.get(&t, Get::new("r").versions(2)).unwrap()),
            ["v6", "v5"]
        );
        let tr = s
            .get(
                &t,
                Get::new("r").versions(10).time_range(TimeRange::new(4, 6)),
            )
            .unwrap();
        assert_eq!(values(&tr), ["v5", "v4"], "time range is [min, max)");
    });
}

#[test]
fn the_four_delete_markers_behave_as_in_hbase() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(
        &s,
        "d",
        vec![ColumnFamilyDescriptor::new("f").max_versions(10)],
        &[],
    );
    for q in ["a", "b", "c", "d"] {
        for ts in 1..=3 {
            s.put(&t, &Put::new("r").add_at("f", q, ts, format!("{q}{ts}")))
                .unwrap();
        }
    }
    s.flush_table(&t).unwrap();
    // Delete: exactly one version (given ts), and the newest version when no ts is given.
    s.delete(&t, &Delete::new("r").column_at("f", "a", 2))
        .unwrap();
    s.delete(&t, &Delete::new("r").column("f", "b")).unwrap();
    // DeleteColumn: every version <= ts.
    s.delete(&t, &Delete::new("r").columns_at("f", "c", 2))
        .unwrap();
    // DeleteFamilyVersion: every column at exactly ts.
    s.delete(&t, &Delete::new("r").family_version("f", 1))
        .unwrap();
    at_every_stage(dir.path(), s, &t, |s| {
        let got = s.get(&t, Get::new("r").versions(10)).unwrap();
        let got: Vec<String> = cells(&got).into_iter().map(|c| c.4).collect();
        assert_eq!(got, ["a3", "b2", "c3", "d3", "d2"]);
    });
}

#[test]
fn delete_family_and_whole_row_mask_older_cells_only() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(
        &s,
        "df",
        vec![
            ColumnFamilyDescriptor::new("f"),
            ColumnFamilyDescriptor::new("g"),
        ],
        &[],
    );
    s.put(
        &t,
        &Put::new("r")
            .add_at("f", "a", 10, "old")
            .add_at("g", "a", 10, "old"),
    )
    .unwrap();
    s.delete(&t, &Delete::with_timestamp("r", 15).family("f"))
        .unwrap();
    s.put(&t, &Put::new("r").add_at("f", "b", 20, "new"))
        .unwrap();
    s.put(&t, &Put::new("x").add_at("f", "a", 10, "x")).unwrap();
    s.delete(&t, &Delete::new("x")).unwrap();
    at_every_stage(dir.path(), s, &t, |s| {
        let got = cells(&s.get(&t, Get::new("r")).unwrap());
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!((got[0].1.as_str(), got[0].4.as_str()), ("f", "new"));
        assert_eq!((got[1].1.as_str(), got[1].4.as_str()), ("g", "old"));
        assert!(s.get(&t, Get::new("x")).unwrap().is_empty());
    });
}

#[test]
fn major_compaction_drops_markers_and_what_they_mask() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(
        &s,
        "m",
        vec![ColumnFamilyDescriptor::new("f").max_versions(2)],
        &[],
    );
    for ts in 1..=4 {
        s.put(&t, &Put::new("r").add_at("f", "q", ts, "v")).unwrap();
        s.flush_table(&t).unwrap();
    }
    s.delete(&t, &Delete::new("r").column_at("f", "q", 4))
        .unwrap();
    s.flush_table(&t).unwrap();
    let raw = |s: &RegionServer| {
        let r = s
            .scanner(&t, Scan::new().raw(true).versions(100))
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        cells(&r).into_iter().map(|c| c.3).collect::<Vec<_>>()
    };
    assert_eq!(
        raw(&s),
        [4, 4, 3, 2, 1],
        "raw scans show the marker and every version"
    );
    s.compact_table(&t, true).unwrap();
    // The marker and the version it masked are gone; two versions remain (VERSIONS = 2).
    assert_eq!(raw(&s), [3, 2]);
    let store_files: usize = s.table(&t).unwrap().regions[0]
        .stores()
        .map(|s| s.file_count())
        .sum();
    assert_eq!(store_files, 1);
    s.close().unwrap();
}

#[test]
fn ttl_hides_expired_cells_but_min_versions_keeps_some() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(
        &s,
        "ttl",
        vec![
            ColumnFamilyDescriptor::new("f")
                .ttl_seconds(60)
                .max_versions(5),
            ColumnFamilyDescriptor::new("g")
                .ttl_seconds(60)
                .max_versions(5)
                .min_versions(1),
        ],
        &[],
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let old = now - 3_600_000;
    s.put(
        &t,
        &Put::new("r")
            .add_at("f", "q", old, "old")
            .add_at("g", "q", old, "old"),
    )
    .unwrap();
    s.put(&t, &Put::new("r").add_at("f", "p", now, "new"))
        .unwrap();
    at_every_stage(dir.path(), s, &t, |s| {
        let got = cells(&s.get(&t, Get::new("r").versions(5)).unwrap());
        let got: Vec<_> = got.iter().map(|c| (c.1.as_str(), c.4.as_str())).collect();
        assert_eq!(got, [("f", "new"), ("g", "old")]);
    });
}

#[test]
fn scans_respect_ranges_regions_reversal_batches_limits_and_columns() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(
        &s,
        "s",
        vec![ColumnFamilyDescriptor::new("f")],
        &["r3", "r6"],
    );
    for i in 0..10 {
        let mut p = Put::new(format!("r{i}"));
        for q in ["a", "b", "c"] {
            p = p.add("f", q, format!("{i}{q}"));
        }
        s.put(&t, &p).unwrap();
    }
    s.flush_table(&t).unwrap();
    s.put(&t, &Put::new("r5").add("f", "d", "5d")).unwrap();
    at_every_stage(dir.path(), s, &t, |s| {
        assert_eq!(rows(s, &t, Scan::new()).len(), 10);
        assert_eq!(
            rows(s, &t, Scan::new().range("r2", "r7")),
            ["r2", "r3", "r4", "r5", "r6"]
        );
        assert_eq!(
            rows(s, &t, Scan::new().reversed(true).range("r7", "r2")),
            ["r7", "r6", "r5", "r4", "r3"]
        );
        assert_eq!(
            rows(s, &t, Scan::new().reversed(true))
                .first()
                .map(String::as_str),
            Some("r9")
        );
        assert_eq!(rows(s, &t, Scan::new().reversed(true)).len(), 10);
        assert_eq!(rows(s, &t, Scan::new().limit(4)), ["r0", "r1", "r2", "r3"]);
        assert_eq!(rows(s, &t, Scan::new().prefix("r1")), ["r1"]);
        let parts: Vec<usize> = s
            .scanner(&t, Scan::new().range("r5", "r6").batch(3))
            .unwrap()
            .map(|r| r.unwrap().len())
            .collect();
        assert_eq!(parts, [3, 1], "r5 has four cells, batch 3");
        let only_b: Vec<_> = s
            .scanner(&t, Scan::new().column("f", "b").column("f", "d"))
            .unwrap()
            .flat_map(|r| cells(&r.unwrap()))
            .map(|c| c.4)
            .collect();
        assert_eq!(only_b.len(), 11);
        assert!(only_b.contains(&"5d".to_string()));
    });
}

#[test]
fn multi_get_returns_rows_in_request_order() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s, "mg", vec![ColumnFamilyDescriptor::new("f")], &["m"]);
    for r in ["a", "c", "n", "z"] {
        s.put(&t, &Put::new(r).add("f", "q", r)).unwrap();
    }
    s.flush_table(&t).unwrap();
    s.put(&t, &Put::new("b").add("f", "q", "b")).unwrap();
    let gets = ["z", "missing", "a", "n", "b", "c"]
        .map(Get::new)
        .into_iter()
        .collect();
    let got: Vec<Vec<String>> = s
        .get_many(&t, gets)
        .unwrap()
        .iter()
        .map(|r| values(r))
        .collect();
    let want: Vec<Vec<String>> = [
        vec!["z"],
        vec![],
        vec!["a"],
        vec!["n"],
        vec!["b"],
        vec!["c"],
    ]
    .iter()
    .map(|v| v.iter().map(|s| s.to_string()).collect())
    .collect();
    assert_eq!(got, want);
}

#[test]
fn filters_from_the_filter_language_apply_server_side() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s, "fl", vec![ColumnFamilyDescriptor::new("f")], &["k"]);
    for i in 0..20 {
        s.put(
            &t,
            &Put::new(format!("row{i:02}"))
                .add("f", "q", format!("v{}", i % 3))
                .add("f", "p", "x"),
        )
        .unwrap();
    }
    s.flush_table(&t).unwrap();
    let f = cairn_filter::parse_filter("PrefixFilter ('row1') AND ValueFilter (=, 'binary:v0')")
        .unwrap();
    let got: Vec<_> = s
        .scanner(&t, Scan::new().filter(f))
        .unwrap()
        .flat_map(|r| cells(&r.unwrap()))
        .map(|c| (c.0, c.2))
        .collect();
    let want: Vec<_> = [12, 15, 18]
        .iter()
        .map(|i| (format!("row{i}"), "q".to_string()))
        .collect();
    assert_eq!(got, want);
    // row00-row09 fail the prefix, and seven of row10-row19 lose every cell to the value
    // filter: HBase counts each as a filtered read request.
    let filtered = || -> u64 {
        s.region_metrics()
            .iter()
            .flat_map(|(_, m)| m.iter())
            .filter(|(name, _)| *name == "filteredReadRequestCount")
            .map(|(_, v)| v)
            .sum()
    };
    assert_eq!(filtered(), 17);
    // So is a get whose row the filter rejects, and not one whose row it keeps.
    let prefix = || cairn_filter::parse_filter("PrefixFilter ('row1')").unwrap();
    assert!(s
        .get(&t, Get::new("row05").filter(prefix()))
        .unwrap()
        .is_empty());
    assert_eq!(
        s.get(&t, Get::new("row15").filter(prefix())).unwrap().len(),
        2
    );
    assert_eq!(filtered(), 18);
    let page = cairn_filter::parse_filter("PageFilter (4)").unwrap();
    assert_eq!(rows(&s, &t, Scan::new().filter(page)).len(), 4);
    let keys = cairn_filter::parse_filter("KeyOnlyFilter ()").unwrap();
    let r = s
        .scanner(&t, Scan::new().filter(keys))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert!(r.iter().all(|c| c.as_cell().value.is_empty()));
}

#[test]
fn counters_and_check_and_put_are_atomic_per_row() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s, "c", vec![ColumnFamilyDescriptor::new("f")], &[]);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let s = s.clone();
            let t = t.clone();
            std::thread::spawn(move || {
                for _ in 0..250 {
                    s.increment(&t, &Increment::new("r").add("f", "n", 1))
                        .unwrap();
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
    let v = s.get(&t, Get::new("r").column("f", "n")).unwrap();
    assert_eq!(v[0].as_cell().value, 1000i64.to_be_bytes());
    assert!(s
        .check_and_put(&t, b"f", b"x", None, &Put::new("r").add("f", "x", "1"))
        .unwrap());
    assert!(!s
        .check_and_put(&t, b"f", b"x", None, &Put::new("r").add("f", "x", "2"))
        .unwrap());
    assert!(s
        .check_and_put(
            &t,
            b"f",
            b"x",
            Some(b"1"),
            &Put::new("r").add("f", "x", "3")
        )
        .unwrap());
    assert_eq!(
        values(&s.get(&t, Get::new("r").column("f", "x")).unwrap()),
        ["3"]
    );
    s.put(&t, &Put::new("r").add("f", "s", "text")).unwrap();
    let e = s
        .increment(&t, &Increment::new("r").add("f", "s", 1))
        .unwrap_err()
        .to_string();
    assert!(e.contains("f:s") && e.contains("4 bytes"), "{e}");
}

#[test]
fn bad_requests_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s, "e", vec![ColumnFamilyDescriptor::new("f")], &[]);
    let e = s
        .put(&t, &Put::new(vec![b'x'; 40_000]).add("f", "q", "v"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("40000") && e.contains("32767"), "{e}");
    let e = s
        .put(&t, &Put::new("r").add("nope", "q", "v"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("nope") && e.contains("e"), "{e}");
    let e = s
        .get(&t, Get::new("r").family("nope"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("nope"), "{e}");
    let e = s
        .put(
            &TableName::parse("missing").unwrap(),
            &Put::new("r").add("f", "q", "v"),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing"), "{e}");
    assert!(cairn_filter::parse_filter("PrefixFilter ('x'").is_err());
    assert!(s
        .create_table(
            TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f")),
            &[]
        )
        .is_err());
}

#[test]
fn tables_are_created_disabled_enabled_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(
        &s,
        "ns1:adm",
        vec![ColumnFamilyDescriptor::new("f")],
        &["m"],
    );
    s.put(&t, &Put::new("a").add("f", "q", "v")).unwrap();
    assert!(s.delete_table(&t).is_err(), "must be disabled first");
    s.disable_table(&t).unwrap();
    assert!(s.get(&t, Get::new("a")).is_err());
    s.close().unwrap();
    drop(s);
    let s = server(dir.path());
    assert!(
        !s.is_table_enabled(&t).unwrap(),
        "disabled state survives a restart"
    );
    s.enable_table(&t).unwrap();
    assert_eq!(values(&s.get(&t, Get::new("a")).unwrap()), ["v"]);
    assert!(dir.path().join("data/ns1/adm/.tabledesc").is_dir());
    s.disable_table(&t).unwrap();
    s.delete_table(&t).unwrap();
    assert!(s.table_names().is_empty());
    assert!(!dir.path().join("data/ns1/adm").exists());
}

/// Tables created and deleted from two threads while a third reads another table: every
/// table created is found until deleted, none is lost to a concurrent create, and the reads
/// never fail.
#[test]
fn tables_created_and_deleted_concurrently_are_all_kept_and_reads_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let fixed = table(&s, "fixed", vec![ColumnFamilyDescriptor::new("f")], &[]);
    s.put(&fixed, &Put::new("r").add("f", "q", "v")).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|sc| {
        let reader = sc.spawn(|| {
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                assert_eq!(values(&s.get(&fixed, Get::new("r")).unwrap()), ["v"]);
                reads += 1;
            }
            reads
        });
        let admins: Vec<_> = (0..2)
            .map(|w| {
                let s = &s;
                sc.spawn(move || {
                    for i in 0..15 {
                        let t = table(
                            s,
                            &format!("t{w}_{i}"),
                            vec![ColumnFamilyDescriptor::new("f")],
                            &[],
                        );
                        assert!(s.table_names().contains(&t));
                        if i % 3 == 0 {
                            s.disable_table(&t).unwrap();
                            s.delete_table(&t).unwrap();
                            assert!(!s.table_names().contains(&t));
                        }
                    }
                })
            })
            .collect();
        for a in admins {
            a.join().unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
    });
    let mut names: Vec<String> = s.table_names().iter().map(|t| t.to_string()).collect();
    names.sort();
    let mut want: Vec<String> = (0..2)
        .flat_map(|w| {
            (0..15)
                .filter(|i| i % 3 != 0)
                .map(move |i| format!("t{w}_{i}"))
        })
        .collect();
    want.push("fixed".into());
    want.sort();
    assert_eq!(names, want);
}

#[test]
fn unflushed_writes_survive_a_crash_through_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = server(dir.path());
        let t = table(&s, "w", vec![ColumnFamilyDescriptor::new("f")], &["m"]);
        s.put(&t, &Put::new("a").add("f", "q", "1")).unwrap();
        s.flush_table(&t).unwrap();
        s.put(&t, &Put::new("a").add("f", "q", "2")).unwrap();
        s.put(&t, &Put::new("z").add("f", "q", "3")).unwrap();
        s.delete(&t, &Delete::new("z")).unwrap();
        s.put(
            &t,
            &Put::new("y")
                .add("f", "q", "4")
                .durability(cairn_region::Durability::SkipWal),
        )
        .unwrap();
        // No close: the memstore is lost, the WAL is not.
    }
    let s = server(dir.path());
    let t = TableName::parse("w").unwrap();
    assert_eq!(values(&s.get(&t, Get::new("a")).unwrap()), ["2"]);
    assert!(s.get(&t, Get::new("z")).unwrap().is_empty());
    assert!(
        s.get(&t, Get::new("y")).unwrap().is_empty(),
        "SKIP_WAL writes are not recovered"
    );
    assert!(s.recovery.edits_replayed >= 3, "{:?}", s.recovery);
    // New writes after recovery get higher sequence ids than the replayed ones.
    s.put(&t, &Put::new("a").add("f", "q", "5")).unwrap();
    assert_eq!(values(&s.get(&t, Get::new("a")).unwrap()), ["5"]);
    s.close().unwrap();
    drop(s);
    let s = server(dir.path());
    assert_eq!(values(&s.get(&t, Get::new("a")).unwrap()), ["5"]);
    assert_eq!(
        s.recovery.edits_replayed, 0,
        "a clean close leaves nothing to replay: {:?}",
        s.recovery
    );
}

#[test]
fn a_scanner_sees_one_snapshot_while_writes_and_flushes_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s, "snap", vec![ColumnFamilyDescriptor::new("f")], &[]);
    for i in 0..100 {
        s.put(&t, &Put::new(format!("r{i:03}")).add("f", "q", "before"))
            .unwrap();
    }
    let mut sc = s.scanner(&t, Scan::new()).unwrap();
    let first = sc.next().unwrap().unwrap();
    for i in 0..200 {
        s.put(&t, &Put::new(format!("r{i:03}")).add("f", "q", "after"))
            .unwrap();
    }
    s.flush_table(&t).unwrap();
    s.compact_table(&t, true).unwrap();
    let rest: Vec<_> = sc.map(|r| r.unwrap()).collect();
    assert_eq!(
        rest.len() + 1,
        100,
        "rows written after the scanner opened are invisible"
    );
    assert!(std::iter::once(first)
        .chain(rest)
        .all(|r| values(&r) == ["before"]));
}

#[test]
fn hbase_property_names_configure_the_server() {
    let mut c = ServerConfig::new("/nonexistent");
    c.set_property("hbase.hstore.compaction.min", "5").unwrap();
    c.set_property("hbase.hstore.compaction.ratio", "2.5")
        .unwrap();
    c.set_property("hbase.regionserver.maxlogs", "7").unwrap();
    c.set_property("hbase.hstore.compaction.throughput.higher.bound", "1048576")
        .unwrap();
    c.set_property("some.unknown.key", "whatever").unwrap();
    assert!(c.region.direct_io, "direct I/O for flushes is the default");
    c.set_property("cairn.direct_io_for_flush_and_compaction", "false")
        .unwrap();
    assert!(!c.region.direct_io);
    assert_eq!(
        c.wal.recycled_segments, 2,
        "two WAL segment files kept by default"
    );
    c.set_property("cairn.wal.recycled_segments", "0").unwrap();
    assert_eq!(c.wal.recycled_segments, 0);
    assert_eq!(c.region.compaction.min_files, 5);
    assert_eq!(c.region.compaction.ratio, 2.5);
    assert_eq!(c.max_wal_segments, 7);
    assert_eq!(c.region.throttle.bytes_per_second, Some(1 << 20));
    let e = c
        .set_property("hbase.regionserver.maxlogs", "lots")
        .unwrap_err()
        .to_string();
    assert!(e.contains("hbase.regionserver.maxlogs"), "{e}");
}

/// Flushes and compactions write the same store files whether they go around the page cache
/// (direct I/O, the default) or through it: every row reads back, from new readers and after
/// a reopen, and the compacted files are the same size.
#[test]
fn flush_and_compaction_files_are_the_same_with_and_without_direct_io() {
    let mut sizes = Vec::new();
    for direct in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let open = || {
            let mut c = ServerConfig::new(dir.path());
            c.background = false;
            c.set_property(
                "cairn.direct_io_for_flush_and_compaction",
                &direct.to_string(),
            )
            .unwrap();
            RegionServer::open(c).unwrap()
        };
        let s = open();
        let mut f = ColumnFamilyDescriptor::new("f");
        f.block_size = 4096;
        let t = table(&s, "direct", vec![f], &[]);
        // Three flushes of uneven sizes, so files end at every offset within a 4 KiB block.
        for (flush, n) in [(0u32, 3000u32), (1, 17), (2, 1234)] {
            for i in 0..n {
                let row = format!("r{flush}-{i:05}");
                s.put(
                    &t,
                    &Put::new(&row).add("f", "q", row.repeat(1 + i as usize % 7)),
                )
                .unwrap();
            }
            s.flush_table(&t).unwrap();
        }
        s.compact_table(&t, true).unwrap();
        let check = |s: &RegionServer| {
            for (flush, n) in [(0u32, 3000u32), (1, 17), (2, 1234)] {
                for i in (0..n).step_by(7) {
                    let row = format!("r{flush}-{i:05}");
                    let got = s.get(&t, Get::new(&row)).unwrap();
                    assert_eq!(
                        values(&got),
                        [row.repeat(1 + i as usize % 7)],
                        "direct={direct}"
                    );
                }
            }
        };
        check(&s);
        drop(s);
        let s = open();
        check(&s);
        let mut files: Vec<u64> = walk(dir.path())
            .into_iter()
            .filter(|p| p.parent().is_some_and(|d| d.ends_with("f")))
            .map(|p| std::fs::metadata(p).unwrap().len())
            .collect();
        files.sort_unstable();
        assert_eq!(files.len(), 1, "one file after the major compaction");
        sizes.push(files);
    }
    assert_eq!(sizes[0], sizes[1]);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A server whose block cache has an L2 level: data blocks are cached there, index and
/// Bloom blocks in L1, so L2's block count is the number of data blocks cached.
fn server_with_l2(dir: &std::path::Path) -> Arc<RegionServer> {
    let mut c = ServerConfig::new(dir);
    c.background = false;
    c.block_cache = Some(
        cairn_blockcache::BlockCacheConfig::from_properties([
            ("hbase.bucketcache.ioengine", "offheap"),
            ("hbase.bucketcache.size", "64"),
        ])
        .unwrap(),
    );
    RegionServer::open(c).unwrap()
}

/// Data blocks in the L2 cache of a [`server_with_l2`], once its writers are done.
fn l2_blocks(s: &RegionServer) -> u64 {
    let cache = s.block_cache().unwrap();
    cache.l2().unwrap().wait_for_writes();
    cache.stats().1.unwrap().block_count
}

/// The three kinds of read, each over rows spread across the whole table (one row per data
/// block or so), with `cache_blocks` as given; returns the rows read.
fn read_spread(s: &RegionServer, t: &TableName, kind: &str, cache_blocks: bool) -> usize {
    let rows = || (0..50u32).map(|i| format!("r{:05}", i * 40));
    match kind {
        "get" => rows()
            .map(|r| {
                s.get(t, Get::new(r).cache_blocks(cache_blocks))
                    .unwrap()
                    .len()
            })
            .sum(),
        "multi-get" => {
            let gets = rows()
                .map(|r| Get::new(r).cache_blocks(cache_blocks))
                .collect();
            s.get_many(t, gets).unwrap().iter().map(Vec::len).sum()
        }
        "scan" => s
            .scanner(t, Scan::new().cache_blocks(cache_blocks))
            .unwrap()
            .count(),
        _ => unreachable!(),
    }
}

/// `cache_blocks = false` (HBase's `setCacheBlocks(false)`): gets, multi-gets and scans read
/// data blocks without adding any to the block cache, and return the same rows; the same
/// reads with caching on fill it. Data blocks go to the L2 cache here, so its block count
/// is exactly the number of data blocks cached (index and Bloom blocks live in L1).
#[test]
fn cache_blocks_false_reads_leave_no_data_block_in_the_cache() {
    for kind in ["get", "multi-get", "scan"] {
        let dir = tempfile::tempdir().unwrap();
        let s = server_with_l2(dir.path());
        let mut f = ColumnFamilyDescriptor::new("f");
        f.block_size = 1024;
        let t = table(&s, "nocache", vec![f], &[]);
        for i in 0..2000u32 {
            let row = format!("r{i:05}");
            s.put(&t, &Put::new(&row).add("f", "q", row.repeat(4)))
                .unwrap();
        }
        s.flush_table(&t).unwrap();
        let data_blocks = || l2_blocks(&s);
        let want = if kind == "scan" { 2000 } else { 50 };

        assert_eq!(read_spread(&s, &t, kind, false), want, "{kind}");
        assert_eq!(
            data_blocks(),
            0,
            "data blocks cached by {kind}s that asked not to"
        );
        // Twice: a second uncached pass still finds nothing cached and caches nothing.
        assert_eq!(read_spread(&s, &t, kind, false), want, "{kind}");
        assert_eq!(
            data_blocks(),
            0,
            "data blocks cached by {kind}s that asked not to"
        );

        assert_eq!(read_spread(&s, &t, kind, true), want, "{kind}");
        assert!(
            data_blocks() >= 40,
            "caching {kind}s cached only {} data blocks",
            data_blocks()
        );
        s.close().unwrap();
    }
}

/// A compaction reads its inputs without adding their data blocks to the block cache (as
/// HBase's compaction scanners, `cacheBlocks` false): the inputs are deleted right after, so
/// caching them would only push the working set out. And the blocks the inputs had in the
/// cache go with them: none is left behind.
#[test]
fn compactions_read_without_filling_the_cache_and_evict_their_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let s = server_with_l2(dir.path());
    let mut f = ColumnFamilyDescriptor::new("f");
    f.block_size = 1024;
    let t = table(&s, "compactnocache", vec![f], &[]);
    for half in 0..2u32 {
        for i in 0..1000u32 {
            let row = format!("r{:05}", i * 2 + half);
            s.put(&t, &Put::new(&row).add("f", "q", row.repeat(4)))
                .unwrap();
        }
        s.flush_table(&t).unwrap();
    }
    let inserted = || s.block_cache().unwrap().stats().2.insert_count;
    // Every data block of both inputs cached.
    assert_eq!(s.scanner(&t, Scan::new()).unwrap().count(), 2000);
    let cached_inputs = l2_blocks(&s);
    assert!(cached_inputs >= 50, "{cached_inputs} input blocks cached");
    let before = inserted();
    s.compact_table(&t, true).unwrap();
    assert_eq!(
        l2_blocks(&s),
        0,
        "data blocks left in the cache after the compaction (inputs') or added by it"
    );
    // Index and Bloom blocks of the inputs may be cached; their data blocks (dozens) are not.
    assert!(
        inserted() - before <= 6,
        "{} blocks cached by a compaction",
        inserted() - before
    );
    assert_eq!(s.scanner(&t, Scan::new()).unwrap().count(), 2000);
    assert!(
        l2_blocks(&s) >= 50,
        "a scan of the compacted file cached only {} data blocks",
        l2_blocks(&s)
    );
    s.close().unwrap();
}

#[test]
fn batched_puts_take_one_wal_record_per_region_and_survive_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = server(dir.path());
        let t = table(
            &s,
            "b",
            vec![
                ColumnFamilyDescriptor::new("f"),
                ColumnFamilyDescriptor::new("g"),
            ],
            &["m"],
        );
        let before = s.wal().stats();
        let mut puts: Vec<Put> = ["a", "n", "b", "o", "c"]
            .iter()
            .map(|r| Put::new(r).add("f", "q", format!("v{r}")))
            .collect();
        puts.push(Put::new("d").add("f", "q", "vd").add("g", "q", "wd"));
        puts.push(
            Put::new("p")
                .add("f", "q", "vp")
                .durability(cairn_region::Durability::SkipWal),
        );
        s.put_many(&t, &puts).unwrap();
        let after = s.wal().stats();
        assert_eq!(
            after.appends - before.appends,
            2,
            "one WAL record per region's mini-batch"
        );
        for r in ["a", "b", "c", "d", "n", "o", "p"] {
            assert_eq!(
                values(&s.get(&t, Get::new(r).column("f", "q")).unwrap()),
                [format!("v{r}")]
            );
        }
        assert_eq!(
            values(&s.get(&t, Get::new("d").column("g", "q")).unwrap()),
            ["wd"]
        );

        // A bad put fails its whole mini-batch before anything is written.
        let bad = vec![
            Put::new("e").add("f", "q", "ve"),
            Put::new("f").add("nosuch", "q", "x"),
            Put::new("g").add("f", "q", "vg"),
        ];
        let err = s.put_many(&t, &bad).unwrap_err().to_string();
        assert!(err.contains("nosuch"), "{err}");
        assert!(s.get(&t, Get::new("e")).unwrap().is_empty());
        assert!(s.get(&t, Get::new("g")).unwrap().is_empty());
        assert_eq!(s.wal().stats().appends, after.appends);
        // No close: the memstore is lost, the WAL is not.
    }
    let s = server(dir.path());
    let t = TableName::parse("b").unwrap();
    for r in ["a", "b", "c", "d", "n", "o"] {
        assert_eq!(
            values(&s.get(&t, Get::new(r).column("f", "q")).unwrap()),
            [format!("v{r}")]
        );
    }
    assert_eq!(
        values(&s.get(&t, Get::new("d").column("g", "q")).unwrap()),
        ["wd"]
    );
    assert!(
        s.get(&t, Get::new("p")).unwrap().is_empty(),
        "a SKIP_WAL put stays out of its batch's WAL record"
    );
    assert_eq!(s.recovery.edits_replayed, 2, "{:?}", s.recovery);
}

#[test]
fn a_batch_that_puts_one_cell_twice_keeps_the_later_value() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s, "d", vec![ColumnFamilyDescriptor::new("f")], &[]);
    let puts = vec![
        Put::new("r").add("f", "q", "first"),
        Put::new("x").add("f", "q", "other"),
        Put::new("r").add("f", "q", "second"),
    ];
    s.put_many(&t, &puts).unwrap();
    at_every_stage(dir.path(), s, &t, |s| {
        assert_eq!(values(&s.get(&t, Get::new("r")).unwrap()), ["second"]);
    });
}
