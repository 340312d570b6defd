//! The atomic row operations HBase's client issues, through the region server: Append,
//! RowMutations (`mutateRow`), CheckAndMutate with column and filter conditions, region
//! lookup by name, rows sent to the wrong region, and WAL replay of each.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use cairn_cell::KeyValue;
use cairn_filter::{Comparator, CompareOp, ValueFilter};
use cairn_region::mutation::{Action, Condition};
use cairn_region::{
    Append, CheckAndMutate, ColumnFamilyDescriptor, Delete, Get, Increment, Put, RegionError,
    RegionServer, RowMutations, ServerConfig, TableDescriptor, TableName, TimeRange,
};

fn server(dir: &std::path::Path) -> Arc<RegionServer> {
    let mut c = ServerConfig::new(dir);
    c.background = false;
    RegionServer::open(c).unwrap()
}

/// Table `t` with families `f` (3 versions) and `g`, split at `m`.
fn table(s: &RegionServer) -> TableName {
    let t = TableName::parse("t").unwrap();
    let d = TableDescriptor::new(t.clone())
        .with_family(ColumnFamilyDescriptor::new("f").max_versions(3))
        .with_family(ColumnFamilyDescriptor::new("g"));
    s.create_table(d, &[b"m".to_vec()]).unwrap();
    t
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `family:qualifier=value` of each cell.
fn cols(cells: &[KeyValue]) -> Vec<String> {
    cells
        .iter()
        .map(|c| {
            let c = c.as_cell();
            format!(
                "{}:{}={}",
                text(c.family()),
                text(c.qualifier()),
                text(c.value)
            )
        })
        .collect()
}

fn row(s: &RegionServer, t: &TableName, r: &str) -> Vec<String> {
    cols(&s.get(t, Get::new(r)).unwrap())
}

#[test]
fn appends_start_empty_columns_and_extend_others_under_one_sequence_id() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s);
    let out = s.append(&t, &Append::new("a").add("f", "q", "ab")).unwrap();
    assert_eq!(
        cols(&out),
        ["f:q=ab"],
        "an empty column gets just the bytes"
    );
    s.put(&t, &Put::new("a").add("g", "x", "X")).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let future = now + 3_600_000;
    s.put(&t, &Put::new("a").add_at("f", "later", future, "L"))
        .unwrap();
    let out = s
        .append(
            &t,
            &Append::new("a")
                .add("g", "x", "1")
                .add("f", "q", "cd")
                .add("f", "later", "2")
                .add("f", "new", ""),
        )
        .unwrap();
    // Sorted by family and qualifier, as HBase returns them.
    assert_eq!(cols(&out), ["f:later=L2", "f:new=", "f:q=abcd", "g:x=X1"]);
    // Newest even over a value stamped in the future: max(now, old ts + 1).
    assert_eq!(out[0].key().timestamp(), future + 1);
    let seq = out[0].sequence_id();
    assert!(
        out.iter().all(|c| c.sequence_id() == seq),
        "one sequence id"
    );
    assert_eq!(
        row(&s, &t, "a"),
        ["f:later=L2", "f:new=", "f:q=abcd", "g:x=X1"]
    );
    // The old versions stay (f keeps 3).
    let got = s
        .get(&t, Get::new("a").column("f", "q").versions(3))
        .unwrap();
    assert_eq!(cols(&got), ["f:q=abcd", "f:q=ab"]);
    assert!(matches!(
        s.append(&t, &Append::new("a").add("nope", "q", "x")),
        Err(RegionError::NoSuchFamily { .. })
    ));
}

#[test]
fn a_reader_never_sees_half_a_row_mutation() {
    // 20 columns; generation n puts the columns of n's parity (value n, timestamp n + 1) and
    // deletes the others (markers at n + 1, below the next generation's puts), in one
    // mutate_row. Every read must see exactly one generation: ten columns of one parity, all
    // with that generation's value. The writer goes on until the reader has read many
    // generations, however the two threads get scheduled.
    const COLUMNS: usize = 20;
    const MIN_GENERATIONS: u64 = 400;
    const MAX_GENERATIONS: u64 = 50_000;
    const MIN_READS: u64 = 3_000;
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s);
    let done = Arc::new(AtomicBool::new(false));
    let reads_seen = Arc::new(AtomicU64::new(0));
    let writer = {
        let (s, t, done, reads_seen) = (s.clone(), t.clone(), done.clone(), reads_seen.clone());
        std::thread::spawn(move || {
            let mut n = 0;
            while n < MIN_GENERATIONS
                || (n < MAX_GENERATIONS && reads_seen.load(Ordering::Relaxed) < MIN_READS)
            {
                let ts = n as i64 + 1;
                let mut put = Put::with_timestamp("r", ts);
                let mut del = Delete::with_timestamp("r", ts);
                for j in 0..COLUMNS {
                    let q = format!("q{j:02}");
                    if j as u64 % 2 == n % 2 {
                        put = put.add("f", &q, n.to_string());
                    } else {
                        del = del.columns("f", &q);
                    }
                }
                s.mutate_row(&t, &RowMutations::new("r").put(put).delete(del))
                    .unwrap();
                if n % 150 == 149 {
                    // Some generations come back from store files.
                    s.flush_table(&t).unwrap();
                }
                n += 1;
            }
            done.store(true, Ordering::Release);
        })
    };
    let mut seen = std::collections::BTreeSet::new();
    while !done.load(Ordering::Acquire) {
        let cells = s.get(&t, Get::new("r")).unwrap();
        if cells.is_empty() {
            continue;
        }
        let reads = reads_seen.fetch_add(1, Ordering::Relaxed) + 1;
        let gens: Vec<u64> = cells
            .iter()
            .map(|c| text(c.as_cell().value).parse().unwrap())
            .collect();
        let n = gens[0];
        let columns: Vec<usize> = cells
            .iter()
            .map(|c| text(&c.as_cell().qualifier()[1..]).parse().unwrap())
            .collect();
        assert!(
            gens.iter().all(|&g| g == n)
                && columns.len() == COLUMNS / 2
                && columns.iter().all(|&j| j as u64 % 2 == n % 2),
            "read {reads} saw a partial mutation: columns {columns:?}, values {gens:?}"
        );
        seen.insert(n);
    }
    writer.join().unwrap();
    assert!(seen.len() > 10, "the reader saw {} generations", seen.len());
    let last = s.get(&t, Get::new("r")).unwrap();
    assert_eq!(last.len(), COLUMNS / 2);
}

#[test]
fn a_row_mutation_with_a_bad_family_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s);
    s.put(&t, &Put::new("a").add("f", "keep", "1")).unwrap();
    let rm = RowMutations::new("a")
        .put(Put::new("a").add("f", "q", "v"))
        .delete(Delete::new("a").columns("f", "keep"))
        .put(Put::new("a").add("nope", "q", "v"));
    assert!(matches!(
        s.mutate_row(&t, &rm),
        Err(RegionError::NoSuchFamily { ref family, .. }) if family == "nope"
    ));
    assert_eq!(row(&s, &t, "a"), ["f:keep=1"]);
    // A mutation for another row fails it too (HBase's WrongRowIOException).
    let rm = RowMutations::new("a")
        .put(Put::new("a").add("f", "q", "v"))
        .delete(Delete::new("b"));
    assert!(matches!(
        s.mutate_row(&t, &rm),
        Err(RegionError::InvalidArgument(_))
    ));
    assert_eq!(row(&s, &t, "a"), ["f:keep=1"]);
}

/// Runs a check-and-put of `f:q` on row `a` (which holds `stored`, or nothing) and returns
/// whether it applied, checking the put landed exactly when it says it did. Each call writes
/// its own column of `g`, so no call's write can hide or stand for another's.
fn check_then_put(s: &RegionServer, t: &TableName, op: CompareOp, expected: &[u8]) -> bool {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let q = format!("done{}", CALLS.fetch_add(1, Ordering::Relaxed));
    let put = Put::new("a").add("g", &q, "1");
    let out = s
        .check_and_mutate(
            t,
            CheckAndMutate::if_matches("a", "f", "q", op, expected, put),
        )
        .unwrap();
    assert!(out.cells.is_empty());
    let after = s.get(t, Get::new("a").column("g", &q)).unwrap();
    assert_eq!(out.success, !after.is_empty());
    out.success
}

#[test]
fn column_conditions_put_the_expected_value_left_of_the_operator() {
    // HBase 2.6 HRegion.checkAndMutateInternal: compareResult = BinaryComparator(expected)
    // .compareTo(stored value), then matches(op, compareResult): LESS holds when
    // expected < stored. An empty expected value (valueIsNull) matches a missing column or an
    // empty stored value unless the operator is NOT_EQUAL, which wants the opposite; a
    // non-empty expected value never matches a missing column.
    use CompareOp::*;
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s);
    // The column is missing.
    let missing = [
        (Equal, "", true),
        (Less, "", true),
        (Greater, "", true),
        (NotEqual, "", false),
        (Equal, "m", false),
        (NotEqual, "m", false),
        (Less, "m", false),
        (GreaterOrEqual, "m", false),
    ];
    for (op, expected, want) in missing {
        assert_eq!(
            check_then_put(&s, &t, op, expected.as_bytes()),
            want,
            "missing: {op:?} {expected:?}"
        );
    }
    // Stored "m": expected values "a" < "m" < "z".
    s.put(&t, &Put::new("a").add("f", "q", "m")).unwrap();
    let stored_m = [
        (Less, "a", true),
        (Less, "m", false),
        (Less, "z", false),
        (LessOrEqual, "a", true),
        (LessOrEqual, "m", true),
        (LessOrEqual, "z", false),
        (Equal, "a", false),
        (Equal, "m", true),
        (NotEqual, "a", true),
        (NotEqual, "m", false),
        (GreaterOrEqual, "a", false),
        (GreaterOrEqual, "m", true),
        (GreaterOrEqual, "z", true),
        (Greater, "a", false),
        (Greater, "m", false),
        (Greater, "z", true),
        // Against a present, non-empty value, "no value" fails, NOT_EQUAL to it holds.
        (Equal, "", false),
        (Greater, "", false),
        (NotEqual, "", true),
    ];
    for (op, expected, want) in stored_m {
        assert_eq!(
            check_then_put(&s, &t, op, expected.as_bytes()),
            want,
            "stored m: {op:?} {expected:?}"
        );
    }
    // Only the newest version counts.
    s.put(&t, &Put::new("a").add("f", "q", "")).unwrap();
    let stored_empty = [
        (Equal, "", true),
        (LessOrEqual, "", true),
        (NotEqual, "", false),
        (Equal, "m", false),
        (Greater, "m", true),
    ];
    for (op, expected, want) in stored_empty {
        assert_eq!(
            check_then_put(&s, &t, op, expected.as_bytes()),
            want,
            "stored empty: {op:?} {expected:?}"
        );
    }
    let cam = CheckAndMutate::if_matches("a", "f", "q", NoOp, "m", Delete::new("a"));
    assert!(matches!(
        s.check_and_mutate(&t, cam),
        Err(RegionError::InvalidArgument(_))
    ));
    let cam = CheckAndMutate::if_equals("a", "nope", "q", "m", Delete::new("a"));
    assert!(matches!(
        s.check_and_mutate(&t, cam),
        Err(RegionError::NoSuchFamily { .. })
    ));
    let f = s.get(&t, Get::new("a").family("f")).unwrap();
    assert_eq!(cols(&f), ["f:q="], "nothing else written");
}

#[test]
fn a_filter_condition_holds_when_the_filter_passes_any_cell_of_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s);
    s.put(&t, &Put::new("a").add("f", "x", "1").add("g", "y", "2"))
        .unwrap();
    let value_is = |v: &str| {
        Box::new(ValueFilter::new(
            CompareOp::Equal,
            Comparator::binary(v.as_bytes()),
        ))
    };
    let run = |s: &RegionServer, f, r: &str| {
        let put = Put::new(r).add("f", "done", "1");
        s.check_and_mutate(&t, CheckAndMutate::if_filter(r, f, put))
            .unwrap()
            .success
    };
    assert!(!run(&s, value_is("3"), "a"), "no cell has 3");
    assert!(!run(&s, value_is("2"), "b"), "an empty row matches nothing");
    assert!(run(&s, value_is("2"), "a"), "g:y has 2");
    assert_eq!(row(&s, &t, "a"), ["f:done=1", "f:x=1", "g:y=2"]);
    assert!(row(&s, &t, "b").is_empty());
}

#[test]
fn the_check_looks_only_at_cells_in_its_time_range() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s);
    s.put(&t, &Put::new("a").add_at("f", "q", 10, "old"))
        .unwrap();
    s.put(&t, &Put::new("a").add_at("f", "q", 20, "new"))
        .unwrap();
    let del = || Delete::new("a").column_at("f", "q", 10);
    // Over all time the newest is "new".
    let cam = CheckAndMutate::if_equals("a", "f", "q", "old", del());
    assert!(!s.check_and_mutate(&t, cam).unwrap().success);
    // In [0, 15) the newest is "old".
    let cam =
        CheckAndMutate::if_equals("a", "f", "q", "old", del()).time_range(TimeRange::new(0, 15));
    assert!(s.check_and_mutate(&t, cam).unwrap().success);
    let got = s.get(&t, Get::new("a").versions(3)).unwrap();
    assert_eq!(cols(&got), ["f:q=new"], "version 10 deleted");
    // Nothing in [30, MAX): the column counts as missing there.
    let put = Put::new("a").add("g", "x", "1");
    let cam =
        CheckAndMutate::if_not_exists("a", "f", "q", put).time_range(TimeRange::new(30, i64::MAX));
    assert!(s.check_and_mutate(&t, cam).unwrap().success);
    // A filter condition honours it too.
    let f = Box::new(ValueFilter::new(
        CompareOp::Equal,
        Comparator::binary(&b"new"[..]),
    ));
    let cam = CheckAndMutate::if_filter("a", f, Delete::new("a")).time_range(TimeRange::new(0, 20));
    assert!(!s.check_and_mutate(&t, cam).unwrap().success);
    assert_eq!(row(&s, &t, "a"), ["f:q=new", "g:x=1"]);
}

#[test]
fn every_action_kind_applies_only_when_the_condition_holds() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s);
    s.put(&t, &Put::new("a").add("f", "c", "go").add("f", "s", "x"))
        .unwrap();
    s.increment(&t, &Increment::new("a").add("g", "n", 5))
        .unwrap();
    let region = s.table(&t).unwrap().regions[0].clone();
    let actions = || -> Vec<Action> {
        vec![
            Put::new("a").add("f", "p", "1").into(),
            Increment::new("a").add("g", "n", 2).into(),
            Append::new("a").add("f", "s", "y").into(),
            RowMutations::new("a")
                .put(Put::new("a").add("f", "m", "1"))
                .delete(Delete::new("a").columns("f", "p"))
                .into(),
            Delete::new("a").columns("f", "m").into(),
        ]
    };
    // The condition fails: nothing is written, nothing comes back.
    let before = region.write_point();
    for action in actions() {
        let cam = CheckAndMutate {
            row: b"a".to_vec(),
            condition: Condition::Column {
                family: b"f".to_vec(),
                qualifier: b"c".to_vec(),
                op: CompareOp::Equal,
                value: b"stop".to_vec(),
            },
            time_range: TimeRange::default(),
            action,
        };
        let out = s.check_and_mutate(&t, cam).unwrap();
        assert!(!out.success && out.cells.is_empty());
    }
    assert_eq!(region.write_point(), before);
    // It holds: each action applies, increments and appends return their cells.
    let mut results = Vec::new();
    for action in actions() {
        let out = s
            .check_and_mutate(&t, CheckAndMutate::if_equals("a", "f", "c", "go", action))
            .unwrap();
        assert!(out.success);
        results.push(cols(&out.cells));
        results.push(row(&s, &t, "a"));
    }
    let n = |v: i64| format!("g:n={}", String::from_utf8_lossy(&v.to_be_bytes()));
    let want: Vec<Vec<String>> = vec![
        vec![],
        vec!["f:c=go".into(), "f:p=1".into(), "f:s=x".into(), n(5)],
        vec![n(7)],
        vec!["f:c=go".into(), "f:p=1".into(), "f:s=x".into(), n(7)],
        vec!["f:s=xy".into()],
        vec!["f:c=go".into(), "f:p=1".into(), "f:s=xy".into(), n(7)],
        vec![],
        vec!["f:c=go".into(), "f:m=1".into(), "f:s=xy".into(), n(7)],
        vec![],
        vec!["f:c=go".into(), "f:s=xy".into(), n(7)],
    ];
    assert_eq!(results, want);
    // The action must be for the checked row.
    let cam = CheckAndMutate::if_equals("a", "f", "c", "go", Put::new("b").add("f", "q", "1"));
    assert!(matches!(
        s.check_and_mutate(&t, cam),
        Err(RegionError::InvalidArgument(_))
    ));
    // The old wrappers keep their meaning: None is "no value".
    let put = Put::new("a").add("f", "w", "1");
    assert!(!s.check_and_put(&t, b"f", b"c", None, &put).unwrap());
    assert!(s.check_and_put(&t, b"f", b"w", None, &put).unwrap());
    assert!(s
        .check_and_delete(
            &t,
            b"f",
            b"w",
            Some(b"1"),
            &Delete::new("a").columns("f", "w")
        )
        .unwrap());
}

#[test]
fn regions_are_found_by_name_and_refuse_rows_outside_them() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s);
    let tbl = s.table(&t).unwrap();
    let (first, second) = (tbl.regions[0].clone(), tbl.regions[1].clone());
    let (_, r) = s.region_by_name(&second.info.region_name_bytes()).unwrap();
    assert!(Arc::ptr_eq(&r, &second));
    let (found, r) = s
        .region_by_name(first.info.encoded_name.as_bytes())
        .unwrap();
    assert!(Arc::ptr_eq(&r, &first) && Arc::ptr_eq(&found, &tbl));
    assert!(matches!(
        s.region_by_name(b"t,,1.00000000000000000000000000000000."),
        Err(RegionError::NotServingRegion(_))
    ));
    // Rows routed to the wrong region: HBase's WrongRegionException, for every operation.
    let wrong = |e: RegionError| {
        matches!(e, RegionError::WrongRegion { ref row, ref region }
        if row == b"z" && *region == first.info.region_name())
    };
    assert!(wrong(
        first.put(&Put::new("z").add("f", "q", "v")).unwrap_err()
    ));
    assert!(wrong(first.get(Get::new("z")).unwrap_err()));
    assert!(wrong(first.delete(&Delete::new("z")).unwrap_err()));
    assert!(wrong(
        first
            .append(&Append::new("z").add("f", "q", "v"))
            .unwrap_err()
    ));
    assert!(wrong(
        first
            .increment(&Increment::new("z").add("f", "q", 1))
            .unwrap_err()
    ));
    assert!(wrong(
        first
            .mutate_row(&RowMutations::new("z").put(Put::new("z").add("f", "q", "v")))
            .unwrap_err()
    ));
    let cam = CheckAndMutate::if_not_exists("z", "f", "q", Put::new("z").add("f", "q", "v"));
    assert!(wrong(first.check_and_mutate(cam).unwrap_err()));
    // The same writes through the server go to the right region.
    s.put(&t, &Put::new("z").add("f", "q", "v")).unwrap();
    assert_eq!(row(&s, &t, "z"), ["f:q=v"]);
    assert_eq!(second.write_point(), 1);
}

#[test]
fn row_mutations_appends_and_checked_writes_survive_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let t = table(&s);
    s.put(&t, &Put::new("a").add("f", "gone", "1").add("f", "s", "ab"))
        .unwrap();
    s.flush_table(&t).unwrap();
    s.mutate_row(
        &t,
        &RowMutations::new("a")
            .put(Put::new("a").add("f", "x", "1").add("g", "y", "2"))
            .delete(Delete::new("a").columns("f", "gone")),
    )
    .unwrap();
    s.append(&t, &Append::new("a").add("f", "s", "cd")).unwrap();
    s.append(&t, &Append::new("z").add("g", "new", "n"))
        .unwrap();
    let cam = CheckAndMutate::if_equals("z", "g", "new", "n", Increment::new("z").add("f", "c", 3));
    assert!(s.check_and_mutate(&t, cam).unwrap().success);
    let want_a = row(&s, &t, "a");
    let want_z = row(&s, &t, "z");
    assert_eq!(want_a, ["f:s=abcd", "f:x=1", "g:y=2"]);
    // No close: only the WAL has these writes.
    drop(s);
    let s = server(dir.path());
    assert!(s.recovery.cells_replayed >= 6, "{:?}", s.recovery);
    assert_eq!(row(&s, &t, "a"), want_a);
    assert_eq!(row(&s, &t, "z"), want_z);
    assert_eq!(
        s.get(&t, Get::new("z").column("f", "c")).unwrap()[0]
            .as_cell()
            .value,
        3i64.to_be_bytes()
    );
}
