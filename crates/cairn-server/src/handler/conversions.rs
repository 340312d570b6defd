//! Thrift's types to the region store's and back, as HBase's `ThriftUtilities` and
//! `ThriftHBaseServiceHandler` convert them: columns are `family` or `family:qualifier`, `…Ts`
//! reads see versions strictly older than the timestamp, a row's mutations become one Put and
//! one Delete. Errors are messages naming the field; the caller picks the exception.

use std::collections::BTreeMap;

use cairn_cell::KeyValue;
use cairn_region::mutation::row_bound;
use cairn_region::{
    ColumnFamilyDescriptor, Delete, Durability, Get, Put, Scan, TableName, TimeRange,
};
use cairn_thrift::hbase::{
    BatchMutation, ColumnDescriptor, Mutation, TCell, TColumn, TRowResult, TScan, Text,
};

pub(super) fn utf8<'a>(what: &str, b: &'a [u8]) -> Result<&'a str, String> {
    std::str::from_utf8(b)
        .map_err(|_| format!("{what} is not UTF-8: {:?}", String::from_utf8_lossy(b)))
}

pub(super) fn table_name(b: &[u8]) -> Result<TableName, String> {
    if b.is_empty() {
        return Err("tableName is missing".into());
    }
    // As HBase's Thrift handler: `TableName.valueOf(byte[])`.
    TableName::from_full_name(b).map_err(|e| e.to_string())
}

/// HBase's `CellUtil.parseColumn`: `family` alone, or `family:qualifier` (an empty qualifier
/// for `family:`).
pub(super) fn parse_column(c: &[u8]) -> (Vec<u8>, Option<Vec<u8>>) {
    match c.iter().position(|&b| b == b':') {
        None => (c.to_vec(), None),
        Some(i) => (c[..i].to_vec(), Some(c[i + 1..].to_vec())),
    }
}

fn column_name(kv: &KeyValue) -> Vec<u8> {
    let c = kv.as_cell();
    let mut name = Vec::with_capacity(c.family().len() + 1 + c.qualifier().len());
    name.extend_from_slice(c.family());
    name.push(b':');
    name.extend_from_slice(c.qualifier());
    name
}

pub(super) fn tcell(kv: &KeyValue) -> TCell {
    let c = kv.as_cell();
    TCell {
        value: Some(c.value.to_vec()),
        timestamp: Some(c.timestamp()),
    }
}

/// HBase's `rowResultFromHBase`: `columns` (a map, newest version per column) or, sorted,
/// `sortedColumns` in cell order.
pub(super) fn row_result(cells: &[KeyValue], sort_columns: bool) -> Option<TRowResult> {
    let first = cells.first()?;
    let row = first.as_cell().row().to_vec();
    if sort_columns {
        let sorted = cells
            .iter()
            .map(|kv| TColumn {
                column_name: Some(column_name(kv)),
                cell: Some(tcell(kv)),
            })
            .collect();
        Some(TRowResult {
            row: Some(row),
            columns: None,
            sorted_columns: Some(sorted),
        })
    } else {
        let mut columns = BTreeMap::new();
        for kv in cells {
            // Cells come newest first within a column: keep the first.
            columns.entry(column_name(kv)).or_insert_with(|| tcell(kv));
        }
        Some(TRowResult {
            row: Some(row),
            columns: Some(columns),
            sorted_columns: None,
        })
    }
}

pub(super) fn add_columns_get(mut get: Get, columns: &[Text]) -> Get {
    for c in columns {
        get = match parse_column(c) {
            (f, None) => get.family(f),
            (f, Some(q)) => get.column(f, q),
        };
    }
    get
}

pub(super) fn add_columns_scan(mut scan: Scan, columns: &[Text]) -> Scan {
    for c in columns {
        scan = match parse_column(c) {
            (f, None) => scan.family(f),
            (f, Some(q)) => scan.column(f, q),
        };
    }
    scan
}

/// Timestamps at or below zero make no time range (`setTimeRange(0, 0)` is empty in HBase too).
pub(super) fn before(ts: i64) -> TimeRange {
    TimeRange::new(0, ts.max(0))
}

pub(super) fn versions(n: i32) -> Result<u32, String> {
    if n < 1 {
        Err(format!("numVersions must be at least 1, not {n}"))
    } else {
        Ok(n as u32)
    }
}

pub(super) fn counter_value(kv: &KeyValue) -> Result<i64, String> {
    let v = kv.as_cell().value;
    let b: [u8; 8] = v
        .try_into()
        .map_err(|_| format!("counter value is {} bytes, not 8", v.len()))?;
    Ok(i64::from_be_bytes(b))
}

/// HBase's `scanFromThrift`: a `TScan`'s fields, absent ones left at the scan's defaults.
pub(super) fn scan_from_thrift(scan: &TScan) -> Result<Scan, String> {
    let mut s = Scan::new();
    if let Some(r) = &scan.start_row {
        s.start = row_bound(r, true);
    }
    if let Some(r) = &scan.stop_row {
        s.stop = row_bound(r, false);
    }
    if let Some(ts) = scan.timestamp {
        s = s.time_range(before(ts));
    }
    if let Some(c) = scan.caching {
        if c > 0 {
            s.caching = c as usize;
        }
    }
    if let Some(b) = scan.batch_size {
        if b < 0 {
            return Err(format!("TScan.batchSize must not be negative, not {b}"));
        }
        s = s.batch(b as usize);
    }
    if let Some(cols) = &scan.columns {
        s = add_columns_scan(s, cols);
    }
    if let Some(f) = &scan.filter_string {
        if !f.is_empty() {
            let text = utf8("TScan.filterString", f)?;
            let filter = cairn_filter::parse_filter(text)
                .map_err(|e| format!("TScan.filterString {text:?}: {e}"))?;
            s = s.filter(filter);
        }
    }
    if let Some(r) = scan.reversed {
        s = s.reversed(r);
    }
    if let Some(c) = scan.cache_blocks {
        s.options.cache_blocks = c;
    }
    Ok(s)
}

/// The Put and Delete of one row's mutations (HBase's `mutateRowTs`).
pub(super) fn row_mutations(
    row: &[u8],
    mutations: &[Mutation],
    ts: i64,
) -> Result<(Option<Put>, Option<Delete>), String> {
    if row.is_empty() {
        return Err("row is missing (empty row keys are not allowed)".into());
    }
    let mut put = Put::with_timestamp(row, ts);
    let mut delete = Delete::with_timestamp(row, ts);
    let (mut puts, mut deletes) = (0, 0);
    let mut skip_wal = false;
    for (i, m) in mutations.iter().enumerate() {
        let column = m
            .column
            .as_deref()
            .ok_or_else(|| format!("mutations[{i}].column is missing"))?;
        let (f, q) = parse_column(column);
        if f.is_empty() {
            return Err(format!(
                "mutations[{i}].column {:?} has no family",
                String::from_utf8_lossy(column)
            ));
        }
        if m.write_to_w_a_l == Some(false) {
            skip_wal = true;
        }
        if m.is_delete == Some(true) {
            delete = match q {
                None => delete.family(f),
                Some(q) => delete.columns(f, q),
            };
            deletes += 1;
        } else {
            // HBase drops such a put with only a warning in its log; cairn says so instead.
            let q = q.ok_or_else(|| {
                format!(
                    "mutations[{i}].column {:?} has no qualifier: a put needs family:qualifier \
                     (only a delete may name a whole family)",
                    String::from_utf8_lossy(column)
                )
            })?;
            let value = m.value.as_deref().unwrap_or_default();
            put = put.add(f, q, value);
            puts += 1;
        }
    }
    if skip_wal {
        put = put.durability(Durability::SkipWal);
        delete = delete.durability(Durability::SkipWal);
    }
    Ok(((puts > 0).then_some(put), (deletes > 0).then_some(delete)))
}

/// A row and its mutations.
pub(super) type RowMutations<'a> = (Vec<u8>, &'a [Mutation]);

/// `mutateRows`' batches as rows and their mutations.
pub(super) fn batches(b: &[BatchMutation]) -> Result<Vec<RowMutations<'_>>, String> {
    b.iter()
        .enumerate()
        .map(|(i, bm)| {
            let row = bm
                .row
                .clone()
                .ok_or_else(|| format!("rowBatches[{i}].row is missing"))?;
            Ok((row, bm.mutations.as_deref().unwrap_or_default()))
        })
        .collect()
}

/// HBase's `colDescFromHbase`.
pub(super) fn column_descriptor(f: &ColumnFamilyDescriptor) -> ColumnDescriptor {
    let mut name = f.name.clone();
    name.push(b':');
    ColumnDescriptor {
        name: Some(name),
        max_versions: Some(f.max_versions.min(i32::MAX as u32) as i32),
        compression: Some(f.compression.name().to_string()),
        in_memory: Some(f.in_memory),
        bloom_filter_type: Some(f.bloom_type.name().to_string()),
        bloom_filter_vector_size: Some(0),
        bloom_filter_nb_hashes: Some(0),
        block_cache_enabled: Some(f.block_cache_enabled),
        time_to_live: Some(f.ttl_seconds.min(i32::MAX as u32) as i32),
    }
}

/// HBase's `colDescFromThrift`, with the IDL's defaults for absent fields.
pub(super) fn family_from_thrift(
    i: usize,
    c: &ColumnDescriptor,
) -> Result<ColumnFamilyDescriptor, String> {
    let name = c
        .name
        .as_deref()
        .ok_or_else(|| format!("columnFamilies[{i}].name is missing"))?;
    let (family, _) = parse_column(name);
    if family.is_empty() {
        return Err(format!("columnFamilies[{i}].name is empty"));
    }
    let fam = String::from_utf8_lossy(&family).into_owned();
    let max_versions = c.max_versions.unwrap_or(3);
    if max_versions < 1 {
        return Err(format!(
            "columnFamilies[{i}] ({fam}): maxVersions must be positive, not {max_versions}"
        ));
    }
    let mut d = ColumnFamilyDescriptor::new(&family).max_versions(max_versions as u32);
    let compression = c.compression.as_deref().unwrap_or("NONE");
    d =
        d.compression(compression.parse().map_err(|e| {
            format!("columnFamilies[{i}] ({fam}): compression {compression:?}: {e}")
        })?);
    let bloom = c.bloom_filter_type.as_deref().unwrap_or("NONE");
    d = d.bloom_type(
        bloom
            .parse()
            .map_err(|e| format!("columnFamilies[{i}] ({fam}): bloomFilterType: {e}"))?,
    );
    d.in_memory = c.in_memory.unwrap_or(false);
    d.block_cache_enabled = c.block_cache_enabled.unwrap_or(false);
    let ttl = c.time_to_live.unwrap_or(i32::MAX);
    if ttl != -1 && ttl != i32::MAX {
        if ttl <= 0 {
            return Err(format!(
                "columnFamilies[{i}] ({fam}): timeToLive must be positive (or -1), not {ttl}"
            ));
        }
        d = d.ttl_seconds(ttl as u32);
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_parse_as_hbase_does() {
        assert_eq!(parse_column(b"cf"), (b"cf".to_vec(), None));
        assert_eq!(parse_column(b"cf:"), (b"cf".to_vec(), Some(vec![])));
        assert_eq!(
            parse_column(b"cf:a:b"),
            (b"cf".to_vec(), Some(b"a:b".to_vec()))
        );
    }

    #[test]
    fn mutations_split_into_put_and_delete_and_name_bad_fields() {
        let m = |d: bool, c: &str, v: &str| Mutation {
            is_delete: Some(d),
            column: Some(c.as_bytes().to_vec()),
            value: Some(v.as_bytes().to_vec()),
            write_to_w_a_l: Some(true),
        };
        let (p, d) = row_mutations(
            b"r",
            &[m(false, "f:a", "1"), m(true, "f:b", ""), m(true, "g", "")],
            7,
        )
        .unwrap();
        let p = p.unwrap();
        assert_eq!(
            p.cells,
            vec![(b"f".to_vec(), b"a".to_vec(), 7, b"1".to_vec())]
        );
        assert_eq!(d.unwrap().markers.len(), 2);
        let mut bad = m(false, "f:a", "1");
        bad.column = None;
        let e = row_mutations(b"r", &[m(false, "f:a", "1"), bad], 7).unwrap_err();
        assert!(e.contains("mutations[1].column"), "{e}");
        assert!(row_mutations(b"", &[m(false, "f:a", "1")], 7)
            .unwrap_err()
            .contains("row"));
        assert!(row_mutations(b"r", &[m(false, ":a", "1")], 7)
            .unwrap_err()
            .contains("family"));
        assert!(row_mutations(b"r", &[m(false, "f", "1")], 7)
            .unwrap_err()
            .contains("mutations[0].column \"f\" has no qualifier"));
    }

    #[test]
    fn descriptors_round_trip_and_bad_options_are_named() {
        let c = ColumnDescriptor {
            name: Some(b"cf:".to_vec()),
            max_versions: Some(5),
            compression: Some("GZ".into()),
            in_memory: Some(true),
            bloom_filter_type: Some("ROWCOL".into()),
            bloom_filter_vector_size: Some(0),
            bloom_filter_nb_hashes: Some(0),
            block_cache_enabled: Some(true),
            time_to_live: Some(3600),
        };
        let f = family_from_thrift(0, &c).unwrap();
        assert_eq!(column_descriptor(&f), c);
        let mut bad = c.clone();
        bad.compression = Some("BOGUS".into());
        assert!(family_from_thrift(2, &bad)
            .unwrap_err()
            .contains("columnFamilies[2] (cf): compression"));
        let mut bad = c.clone();
        bad.max_versions = Some(0);
        assert!(family_from_thrift(0, &bad)
            .unwrap_err()
            .contains("maxVersions"));
        let mut forever = c;
        forever.time_to_live = Some(-1);
        assert_eq!(
            family_from_thrift(0, &forever).unwrap().ttl_seconds,
            ColumnFamilyDescriptor::new("x").ttl_seconds
        );
    }
}
