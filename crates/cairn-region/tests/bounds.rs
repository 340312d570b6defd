//! Scan bounds against a model: every start and stop — open, inclusive or exclusive, at a row
//! that is there, between rows, at a region's edge, outside every row — forward and reversed,
//! over a table of three regions, with the rows in memstores, in store files, and in the
//! reference halves a split leaves. The model is Rust's own `RangeBounds` over a sorted set
//! of rows: nothing of cairn's bounds code computes the expectation.

use std::collections::BTreeSet;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use cairn_region::{
    ColumnFamilyDescriptor, Put, RegionServer, Scan, ServerConfig, TableDescriptor, TableName,
};

/// The rows written. The table splits at `c` and `e`.
const ROWS: [&str; 7] = ["a", "b", "c", "d", "e", "f", "f\0"];

/// Rows bounds are put at: rows that are there, between them, before and after all of them.
const PROBES: [&str; 9] = ["0", "a", "b", "bb", "c", "d", "e", "f", "g"];

fn bounds() -> Vec<Bound<String>> {
    let mut out = vec![Bound::Unbounded];
    for p in PROBES {
        out.push(Bound::Included(p.to_string()));
        out.push(Bound::Excluded(p.to_string()));
    }
    out
}

fn as_bytes(b: &Bound<String>) -> Bound<Vec<u8>> {
    b.as_ref().map(|s| s.as_bytes().to_vec())
}

/// What the model says a scan from `start` to `stop` returns, in scan order.
fn expected(
    rows: &BTreeSet<String>,
    start: &Bound<String>,
    stop: &Bound<String>,
    reversed: bool,
) -> Vec<String> {
    let range = if reversed {
        (stop.as_ref(), start.as_ref())
    } else {
        (start.as_ref(), stop.as_ref())
    };
    let mut out: Vec<String> = rows
        .iter()
        .filter(|r| RangeBounds::<String>::contains(&range, *r))
        .cloned()
        .collect();
    if reversed {
        out.reverse();
    }
    out
}

fn check_every_bound(s: &RegionServer, t: &TableName, rows: &BTreeSet<String>, when: &str) {
    let mut checked = 0;
    for start in bounds() {
        for stop in bounds() {
            for reversed in [false, true] {
                let scan = Scan::new()
                    .with_start(as_bytes(&start))
                    .with_stop(as_bytes(&stop))
                    .reversed(reversed);
                let got: Vec<String> = s
                    .scanner(t, scan)
                    .unwrap()
                    .map(|r| String::from_utf8(r.unwrap()[0].as_cell().row().to_vec()).unwrap())
                    .collect();
                assert_eq!(
                    got,
                    expected(rows, &start, &stop, reversed),
                    "{when}: start {start:?}, stop {stop:?}, reversed {reversed}"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 19 * 19 * 2);
}

#[test]
fn every_bound_forward_and_reversed_across_regions_and_splits() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = ServerConfig::new(dir.path());
    c.background = false;
    let s: Arc<RegionServer> = RegionServer::open(c).unwrap();
    let t = TableName::parse("bounds").unwrap();
    s.create_table(
        TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f")),
        &[b"c".to_vec(), b"e".to_vec()],
    )
    .unwrap();
    let rows: BTreeSet<String> = ROWS.iter().map(|r| r.to_string()).collect();
    for r in &rows {
        s.put(&t, &Put::new(r).add("f", "q", r)).unwrap();
    }
    check_every_bound(&s, &t, &rows, "memstores");
    s.flush_table(&t).unwrap();
    check_every_bound(&s, &t, &rows, "store files");
    // The last region splits at `f`: its daughters read halves of its file.
    let last = s.table(&t).unwrap().regions[2].info.region_name_bytes();
    s.split_region(&last, Some(b"f")).unwrap();
    assert_eq!(s.table(&t).unwrap().regions.len(), 4);
    check_every_bound(&s, &t, &rows, "after a split");
}
