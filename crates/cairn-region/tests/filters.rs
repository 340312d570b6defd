//! The region scanner drives filters exactly as cairn-filter's reference driver (HBase's
//! call order): same rows, same cells, for random data and filter-language strings, from
//! the memstore and from store files.

use cairn_cell::{compare_cells, KeyValue};
use cairn_filter::{driver::apply_filter, parse_filter};
use cairn_region::{
    ColumnFamilyDescriptor, Put, RegionServer, Scan, ServerConfig, TableDescriptor, TableName,
};
use proptest::prelude::*;

const FILTERS: &[&str] = &[
    "PrefixFilter ('r1')",
    "RowFilter (<, 'binary:r3')",
    "RowFilter (=, 'regexstring:r[02]')",
    "FamilyFilter (=, 'binary:g')",
    "QualifierFilter (>=, 'binary:q1')",
    "ValueFilter (=, 'binary:v1')",
    "ValueFilter (!=, 'substring:2')",
    "ValueFilter (=, 'binaryprefix:v')",
    "SingleColumnValueFilter ('f', 'q0', =, 'binary:v1')",
    "SingleColumnValueFilter ('f', 'q0', =, 'binary:v1', true, false)",
    "ColumnPrefixFilter ('q1')",
    "MultipleColumnPrefixFilter ('q0', 'q2')",
    "ColumnRangeFilter ('q0', false, 'q2', true)",
    "ColumnCountGetFilter (2)",
    "ColumnPaginationFilter (2, 1)",
    "PageFilter (3)",
    "FirstKeyOnlyFilter ()",
    "KeyOnlyFilter ()",
    "KeyOnlyFilter (true)",
    "InclusiveStopFilter ('r3')",
    "TimestampsFilter (2, 4)",
    "SKIP ValueFilter (!=, 'binary:v0')",
    "WHILE RowFilter (<, 'binary:r4')",
    "PrefixFilter ('r2') OR ValueFilter (=, 'binary:v3')",
    "QualifierFilter (=, 'binary:q1') AND ValueFilter (!=, 'binary:v1')",
    "(FirstKeyOnlyFilter () AND PageFilter (2)) OR PrefixFilter ('r4')",
    "ColumnPrefixFilter ('q') AND TimestampsFilter (1, 3, 5)",
];

fn cells() -> impl Strategy<Value = Vec<(u8, u8, u8, i64, u8)>> {
    // row, family (0 = f, 1 = g), qualifier, timestamp, value
    proptest::collection::vec((0u8..6, 0u8..2, 0u8..3, 1i64..6, 0u8..4), 1..60)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("CAIRN_FILTER_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64), ..ProptestConfig::default() })]

    #[test]
    fn region_scans_apply_filters_like_the_reference_driver(
        raw in cells(),
        which in 0..FILTERS.len(),
        versions in 1u32..4,
        flush in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut c = ServerConfig::new(dir.path());
        c.background = false;
        let s = RegionServer::open(c).unwrap();
        let t = TableName::parse("flt").unwrap();
        s.create_table(
            TableDescriptor::new(t.clone())
                .with_family(ColumnFamilyDescriptor::new("f").max_versions(10))
                .with_family(ColumnFamilyDescriptor::new("g").max_versions(10)),
            &[],
        )
        .unwrap();
        // One version per (row, family, qualifier, ts): the last write wins, as in HBase.
        let mut latest = std::collections::BTreeMap::new();
        for (r, f, q, ts, v) in &raw {
            latest.insert((*r, *f, *q, *ts), *v);
        }
        for ((r, f, q, ts), v) in &latest {
            let fam = if *f == 0 { "f" } else { "g" };
            s.put(&t, &Put::new(format!("r{r}")).add_at(fam, format!("q{q}"), *ts, format!("v{v}"))).unwrap();
        }
        if flush {
            s.flush_table(&t).unwrap();
        }
        let mut all: Vec<KeyValue> = latest
            .iter()
            .map(|((r, f, q, ts), v)| {
                let fam = if *f == 0 { "f" } else { "g" };
                KeyValue::put(format!("r{r}").as_bytes(), fam.as_bytes(), format!("q{q}").as_bytes(), *ts, format!("v{v}").as_bytes()).unwrap()
            })
            .collect();
        all.sort_by(|a, b| compare_cells(&a.as_cell(), &b.as_cell()));
        let text = FILTERS[which];
        let mut reference = parse_filter(text).unwrap();
        let want = apply_filter(reference.as_mut(), &all, versions as usize);
        let got: Vec<Vec<KeyValue>> = s
            .scanner(&t, Scan::new().versions(versions).filter(parse_filter(text).unwrap()))
            .unwrap()
            .map(|r| r.unwrap().into_iter().map(|c| c.with_sequence_id(0)).collect())
            .collect();
        prop_assert_eq!(got, want.rows, "filter {}", text);
    }
}
