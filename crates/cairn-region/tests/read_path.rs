//! The read path's contracts, each pinned by a deterministic case: gets and multi-gets read
//! one MVCC snapshot, the read points of open reads keep what compactions would drop,
//! explicit read points, delete markers told apart, multi-get routing at split keys, and
//! filters against results written out by hand (not computed by cairn's own filter code).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use cairn_cell::KeyValue;
use cairn_region::{
    ColumnFamilyDescriptor, Delete, Get, Put, RegionServer, Scan, ServerConfig, TableDescriptor,
    TableName,
};

fn server(dir: &std::path::Path) -> Arc<RegionServer> {
    let mut c = ServerConfig::new(dir);
    c.background = false;
    c.block_cache = Some(cairn_blockcache::BlockCacheConfig::default());
    RegionServer::open(c).unwrap()
}

fn table(s: &RegionServer, name: &str, versions: u32, splits: &[&str]) -> TableName {
    let t = TableName::parse(name).unwrap();
    let mut f = ColumnFamilyDescriptor::new("f");
    f.max_versions = versions;
    let splits: Vec<Vec<u8>> = splits.iter().map(|k| k.as_bytes().to_vec()).collect();
    s.create_table(TableDescriptor::new(t.clone()).with_family(f), &splits)
        .unwrap();
    t
}

fn values(cells: &[KeyValue]) -> Vec<String> {
    cells
        .iter()
        .map(|c| String::from_utf8(c.as_cell().value.to_vec()).unwrap())
        .collect()
}

const COLUMNS: usize = 64;

/// A put of many columns racing reads of its row: each read sees all of one put or none of
/// it (the row's columns all carry one value), whether it is a get or a multi-get.
#[test]
fn gets_and_multi_gets_see_a_multi_column_put_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s, "race", 1, &[]);
    let put = |n: usize| {
        let mut p = Put::new("row");
        for q in 0..COLUMNS {
            p = p.add("f", format!("q{q:02}"), format!("v{n}"));
        }
        p
    };
    s.put(&t, &put(0)).unwrap();
    let done = AtomicBool::new(false);
    let torn = std::thread::scope(|scope| {
        scope.spawn(|| {
            for n in 1..3000 {
                s.put(&t, &put(n)).unwrap();
                if n % 1000 == 0 {
                    s.flush_table(&t).unwrap();
                }
            }
            done.store(true, Ordering::Release);
        });
        let mut torn = Vec::new();
        let mut reads = 0;
        while !done.load(Ordering::Acquire) || reads < 100 {
            reads += 1;
            let rows = if reads % 2 == 0 {
                vec![s.get(&t, Get::new("row")).unwrap()]
            } else {
                s.get_many(&t, vec![Get::new("row"), Get::new("other")])
                    .unwrap()
            };
            let v = values(&rows[0]);
            if v.len() != COLUMNS || v.iter().any(|x| *x != v[0]) {
                torn.push((reads, v));
            }
        }
        torn
    });
    assert!(
        torn.is_empty(),
        "{} reads saw a put in part, e.g. {:?}",
        torn.len(),
        torn.first()
    );
}

/// An open scanner's read point is registered, and a compaction keeps the versions it can
/// still see: a read at that read point after the compaction finds the old value. A read at
/// the latest read point finds the new one.
#[test]
fn compactions_keep_what_open_readers_can_see_and_reads_take_an_explicit_read_point() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s, "points", 1, &[]);
    s.put(&t, &Put::new("r").add("f", "q", "old")).unwrap();
    s.flush_table(&t).unwrap();
    let region = s.table(&t).unwrap().regions[0].clone();
    let old_point = region.read_point();
    // Opened now, read later: the registration is what protects "old".
    let mut open = s.scanner(&t, Scan::new()).unwrap();
    s.put(&t, &Put::new("r").add("f", "q", "new")).unwrap();
    s.flush_table(&t).unwrap();
    s.compact_table(&t, true).unwrap();

    let at = |rp: Option<u64>| {
        let mut g = Get::new("r");
        g.options.read_point = rp;
        values(&s.get(&t, g).unwrap())
    };
    assert_eq!(
        at(Some(old_point)),
        ["old"],
        "the version the open scanner sees"
    );
    assert_eq!(at(None), ["new"]);
    assert_eq!(
        at(Some(u64::MAX)),
        ["new"],
        "a read point past the region's is clamped to it"
    );
    let mut batch = Get::new("r");
    batch.options.read_point = Some(old_point);
    assert_eq!(values(&s.get_many(&t, vec![batch]).unwrap()[0]), ["old"]);
    assert_eq!(values(&open.next().unwrap().unwrap()), ["old"]);
    drop(open);

    // With no reader left at the old point, the next major compaction drops "old".
    s.put(&t, &Put::new("x").add("f", "q", "x")).unwrap();
    s.flush_table(&t).unwrap();
    s.compact_table(&t, true).unwrap();
    assert!(at(Some(old_point)).is_empty(), "{:?}", at(Some(old_point)));
}

/// HBase's Delete (`addColumn`: one version) and DeleteColumn (`addColumns`: every version
/// up to its timestamp) differ, before and after a flush and a major compaction.
#[test]
fn delete_and_delete_column_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s, "deletes", 5, &[]);
    for ts in 1..=3 {
        for q in ["a", "b"] {
            s.put(&t, &Put::new("r").add_at("f", q, ts, format!("{q}{ts}")))
                .unwrap();
        }
    }
    // The newest version of a only; every version of b at or before 3.
    s.delete(&t, &Delete::new("r").column_at("f", "a", 3))
        .unwrap();
    s.delete(&t, &Delete::new("r").columns_at("f", "b", 3))
        .unwrap();
    let check = |stage: &str| {
        let row = s.get(&t, Get::new("r").versions(5)).unwrap();
        assert_eq!(values(&row), ["a2", "a1"], "{stage}");
    };
    check("memstore");
    s.flush_table(&t).unwrap();
    check("flushed");
    s.compact_table(&t, true).unwrap();
    check("major compacted");
}

/// A multi-get whose rows fall on both sides of split keys, on them exactly and before the
/// first: each row comes from its own region, in the order asked.
#[test]
fn multi_get_routes_rows_at_split_keys() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s, "routes", 1, &["b", "d", "f"]);
    let rows = [
        "", "a", "az", "b", "b\0", "c", "d", "dd", "e\u{ff}", "f", "g", "zzz",
    ];
    for r in rows.iter().filter(|r| !r.is_empty()) {
        s.put(&t, &Put::new(r).add("f", "q", format!("v-{r}")))
            .unwrap();
    }
    // Rows asked out of order and twice.
    let asked = [
        "f", "b", "a", "d", "zzz", "b", "e\u{ff}", "c", "b\0", "g", "dd", "az",
    ];
    let got = s
        .get_many(&t, asked.iter().map(Get::new).collect())
        .unwrap();
    for (r, cells) in asked.iter().zip(&got) {
        assert_eq!(values(cells), [format!("v-{r}")], "row {r:?}");
    }
    // Every row lives in the region the router names, and only there.
    let table = s.table(&t).unwrap();
    for r in asked {
        let i = table.region_index(r.as_bytes());
        let region = &table.regions[i];
        assert!(region.info.start_key.as_slice() <= r.as_bytes(), "{r:?}");
        assert!(
            region.info.end_key.is_empty() || r.as_bytes() < region.info.end_key.as_slice(),
            "{r:?}"
        );
        assert_eq!(
            values(&region.get(Get::new(r)).unwrap()),
            [format!("v-{r}")]
        );
    }
}

/// Filters over a fixed table, with the expected rows and cells written out by hand from
/// HBase's documented semantics: a bug shared by the region scanner and cairn-filter's
/// reference driver cannot cancel out here.
#[test]
fn filters_return_the_rows_hbase_documents() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s, "filters", 3, &["r3"]);
    // r0..r5; q0 = "v{i % 3}", q1 = "w{i}", row r4 also has q2 = "x".
    for i in 0..6 {
        let mut p = Put::new(format!("r{i}"))
            .add_at("f", "q0", 1, format!("v{}", i % 3))
            .add_at("f", "q1", 1, format!("w{i}"));
        if i == 4 {
            p = p.add_at("f", "q2", 1, "x");
        }
        s.put(&t, &p).unwrap();
    }
    s.put(&t, &Put::new("r1").add_at("f", "q0", 2, "v9"))
        .unwrap();
    let scan = |expr: &str| -> Vec<String> {
        let f = cairn_filter::parse_filter(expr).unwrap();
        s.scanner(&t, Scan::new().versions(3).filter(f))
            .unwrap()
            .flat_map(|r| r.unwrap())
            .map(|c| {
                let c = c.as_cell();
                format!(
                    "{}/{}={}",
                    String::from_utf8_lossy(c.row()),
                    String::from_utf8_lossy(c.qualifier()),
                    String::from_utf8_lossy(c.value)
                )
            })
            .collect()
    };
    let cases: &[(&str, &[&str])] = &[
        ("PrefixFilter ('r2')", &["r2/q0=v2", "r2/q1=w2"]),
        (
            // Rows whose newest q0 is v0: r0 and r3 (r1's newest is v9).
            "SingleColumnValueFilter ('f', 'q0', =, 'binary:v0', true, true)",
            &["r0/q0=v0", "r0/q1=w0", "r3/q0=v0", "r3/q1=w3"],
        ),
        (
            // Every version of q0 equal to v1 (r1's old one and r4's).
            "ValueFilter (=, 'binary:v1')",
            &["r1/q0=v1", "r4/q0=v1"],
        ),
        ("ColumnPrefixFilter ('q2')", &["r4/q2=x"]),
        (
            // Four rows in all, across the split at r3: the page counts on in the next region.
            "FirstKeyOnlyFilter () AND PageFilter (4)",
            &["r0/q0=v0", "r1/q0=v9", "r2/q0=v2", "r3/q0=v0"],
        ),
        (
            "RowFilter (>=, 'binary:r4') AND QualifierFilter (=, 'binary:q1')",
            &["r4/q1=w4", "r5/q1=w5"],
        ),
        (
            "InclusiveStopFilter ('r1') AND ColumnCountGetFilter (1)",
            &["r0/q0=v0", "r1/q0=v9"],
        ),
        (
            "WHILE RowFilter (!=, 'binary:r2')",
            &["r0/q0=v0", "r0/q1=w0", "r1/q0=v9", "r1/q0=v1", "r1/q1=w1"],
        ),
        (
            "SKIP ValueFilter (!=, 'binary:w3')",
            &[
                "r0/q0=v0", "r0/q1=w0", "r1/q0=v9", "r1/q0=v1", "r1/q1=w1", "r2/q0=v2", "r2/q1=w2",
                "r4/q0=v1", "r4/q1=w4", "r4/q2=x", "r5/q0=v2", "r5/q1=w5",
            ],
        ),
        (
            "ColumnPaginationFilter (1, 1)",
            &[
                "r0/q1=w0", "r1/q1=w1", "r2/q1=w2", "r3/q1=w3", "r4/q1=w4", "r5/q1=w5",
            ],
        ),
    ];
    for (expr, want) in cases {
        assert_eq!(scan(expr), *want, "{expr}");
    }
}

/// A get of a cached row costs one cache lookup, for its data block: the leaf index block is
/// kept by the file's reader, and the Bloom filter is not asked when the block it would save
/// reading is cached. A get of an absent row whose block is not cached asks the filter and
/// reads no data block.
#[test]
fn a_cached_get_looks_up_only_its_data_block() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s, "lookups", 1, &[]);
    // Enough rows for a two-level index would take minutes here; one level has no leaf, so
    // this counts the data block and the Bloom chunk.
    for i in (0..2000).step_by(2) {
        s.put(
            &t,
            &Put::new(format!("r{i:05}")).add("f", "q", vec![b'v'; 2000]),
        )
        .unwrap();
    }
    s.flush_table(&t).unwrap();
    let cache = s.block_cache().unwrap();
    let lookups = || {
        let (_, _, total) = cache.stats();
        total.hit_count + total.miss_count
    };
    let blocks = || cache.stats().2.block_count;
    // Absent rows all over ~30 data blocks, none cached yet: the Bloom filter answers (its
    // one chunk is cached), and no data block is read but for a false positive or two.
    let before = blocks();
    for i in (1..2000).step_by(40) {
        assert!(s.get(&t, Get::new(format!("r{i:05}"))).unwrap().is_empty());
    }
    let data_blocks = blocks;
    assert!(
        data_blocks() <= before + 3,
        "absent rows brought {} blocks into the cache",
        data_blocks() - before
    );
    // Warm: every row once.
    for i in (0..2000).step_by(2) {
        assert_eq!(s.get(&t, Get::new(format!("r{i:05}"))).unwrap().len(), 1);
    }
    // Gets of the one column: a get of a whole row also looks at the cell after it, which
    // for the last row of a block is in the next block.
    let before = lookups();
    for i in (0..2000).step_by(2) {
        let g = Get::new(format!("r{i:05}")).column("f", "q");
        assert_eq!(s.get(&t, g).unwrap().len(), 1);
    }
    assert_eq!(lookups() - before, 1000, "one lookup per cached get");
}
