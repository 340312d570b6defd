//! The protobuf filter conversion against hand-built messages.
use super::*;
use cairn_cell::{compare_cells, KeyValue};
use cairn_filter::driver::apply_filter;

const PKG: &str = "org.apache.hadoop.hbase.filter.";

fn filter(class: &str, m: &impl Message) -> pb::Filter {
    pb::Filter {
        name: format!("{PKG}{class}"),
        serialized_filter: Some(m.encode_to_vec()),
    }
}

fn comparator(class: &str, m: &impl Message) -> pb::Comparator {
    pb::Comparator {
        name: format!("{PKG}{class}"),
        serialized_comparator: Some(m.encode_to_vec()),
    }
}

fn binary(value: &str) -> pb::Comparator {
    comparator(
        "BinaryComparator",
        &pb::BinaryComparator {
            comparable: pb::ByteArrayComparable {
                value: Some(value.as_bytes().to_vec()),
            },
        },
    )
}

fn regex(pattern: &str, flags: i32) -> pb::Comparator {
    comparator(
        "RegexStringComparator",
        &pb::RegexStringComparator {
            pattern: pattern.into(),
            pattern_flags: flags,
            charset: "UTF-8".into(),
            engine: Some("JAVA".into()),
        },
    )
}

fn value_filter(op: pb::CompareType, c: pb::Comparator) -> pb::Filter {
    filter(
        "ValueFilter",
        &pb::ValueFilter {
            compare_filter: pb::CompareFilter {
                compare_op: op as i32,
                comparator: Some(c),
            },
        },
    )
}

fn prefix(p: &str) -> pb::Filter {
    filter(
        "PrefixFilter",
        &pb::PrefixFilter {
            prefix: Some(p.as_bytes().to_vec()),
        },
    )
}

fn list(op: pb::filter_list::Operator, filters: Vec<pb::Filter>) -> pb::Filter {
    filter(
        "FilterList",
        &pb::FilterList {
            operator: op as i32,
            filters,
        },
    )
}

/// Rows r1..r3: f:a versions 2 and 1, f:b, g:c; r3 lacks f:a.
fn table() -> Vec<KeyValue> {
    let spec = [
        ("r1", "f", "a", 2, "yes"),
        ("r1", "f", "a", 1, "no"),
        ("r1", "f", "b", 1, "x\ny"),
        ("r1", "g", "c", 1, "YES"),
        ("r2", "f", "a", 2, "no"),
        ("r2", "f", "a", 1, "yes"),
        ("r2", "f", "b", 1, "a.b"),
        ("r3", "f", "b", 1, "yes"),
        ("r3", "g", "c", 1, "axb"),
    ];
    let mut cells: Vec<KeyValue> = spec
        .iter()
        .map(|&(r, f, q, ts, v)| {
            KeyValue::put(r.as_bytes(), f.as_bytes(), q.as_bytes(), ts, v.as_bytes())
                .expect("valid cell")
        })
        .collect();
    cells.sort_by(|a, b| compare_cells(&a.as_cell(), &b.as_cell()));
    cells
}

/// `row/family:qualifier/ts` of every kept cell.
fn kept(f: &pb::Filter) -> Vec<String> {
    let mut built = filter_from_pb(f).expect("builds");
    apply_filter(built.as_mut(), &table(), usize::MAX)
        .cells()
        .map(|c| {
            let c = c.as_cell();
            format!(
                "{}/{}:{}/{}",
                String::from_utf8_lossy(c.row()),
                String::from_utf8_lossy(c.family()),
                String::from_utf8_lossy(c.qualifier()),
                c.timestamp()
            )
        })
        .collect()
}

fn rows(f: &pb::Filter) -> Vec<String> {
    let mut out: Vec<String> = kept(f)
        .into_iter()
        .map(|k| k.split('/').next().unwrap_or_default().to_owned())
        .collect();
    out.dedup();
    out
}

fn error(f: &pb::Filter) -> FilterPbError {
    match filter_from_pb(f) {
        Ok(built) => panic!("{} built {built:?}", f.name),
        Err(e) => e,
    }
}

#[test]
fn prefix_and_compare_filters() {
    assert_eq!(rows(&prefix("r2")), ["r2"]);
    let f = value_filter(pb::CompareType::Equal, binary("yes"));
    assert_eq!(kept(&f), ["r1/f:a/2", "r2/f:a/1", "r3/f:b/1"]);
    // CompareFilter's inverted sense: LESS keeps values below the comparator's.
    let f = value_filter(pb::CompareType::Less, binary("o"));
    assert_eq!(
        kept(&f),
        ["r1/f:a/1", "r1/g:c/1", "r2/f:a/2", "r2/f:b/1", "r3/g:c/1"]
    );
    let f = value_filter(pb::CompareType::NoOp, binary("yes"));
    assert!(kept(&f).is_empty());
}

fn scvf(if_missing: Option<bool>, latest: Option<bool>) -> pb::SingleColumnValueFilter {
    pb::SingleColumnValueFilter {
        column_family: Some(b"f".to_vec()),
        column_qualifier: Some(b"a".to_vec()),
        compare_op: pb::CompareType::Equal as i32,
        comparator: binary("yes"),
        filter_if_missing: if_missing,
        latest_version_only: latest,
    }
}

#[test]
fn single_column_value_filter_options() {
    let f = |m: &pb::SingleColumnValueFilter| filter("SingleColumnValueFilter", m);
    // r1's newest f:a is "yes"; r2's older one is; r3 has no f:a.
    assert_eq!(rows(&f(&scvf(Some(false), Some(true)))), ["r1", "r3"]);
    assert_eq!(rows(&f(&scvf(Some(true), Some(true)))), ["r1"]);
    assert_eq!(rows(&f(&scvf(Some(true), Some(false)))), ["r1", "r2"]);
    // Absent booleans read false, as HBase's parseFrom reads them.
    assert_eq!(rows(&f(&scvf(None, None))), ["r1", "r2", "r3"]);
    let exclude = filter(
        "SingleColumnValueExcludeFilter",
        &pb::SingleColumnValueExcludeFilter {
            single_column_value_filter: scvf(Some(true), Some(true)),
        },
    );
    assert_eq!(kept(&exclude), ["r1/f:b/1", "r1/g:c/1"]);
}

#[test]
fn nested_lists_and_wrappers() {
    use pb::filter_list::Operator::{MustPassAll, MustPassOne};
    let either = list(MustPassOne, vec![prefix("r1"), prefix("r3")]);
    let yes = value_filter(pb::CompareType::Equal, binary("yes"));
    assert_eq!(rows(&either), ["r1", "r3"]);
    assert_eq!(
        kept(&list(MustPassAll, vec![either.clone(), yes.clone()])),
        ["r1/f:a/2", "r3/f:b/1"]
    );
    let skip = filter("SkipFilter", &pb::SkipFilter { filter: yes });
    assert!(
        kept(&skip).is_empty(),
        "every row has a cell that is not 'yes'"
    );
    let less_r2 = filter(
        "RowFilter",
        &pb::RowFilter {
            compare_filter: pb::CompareFilter {
                compare_op: pb::CompareType::Less as i32,
                comparator: Some(binary("r2")),
            },
        },
    );
    let while_match = filter(
        "WhileMatchFilter",
        &pb::WhileMatchFilter { filter: less_r2 },
    );
    assert_eq!(rows(&while_match), ["r1"]);
    assert_eq!(rows(&list(MustPassOne, vec![])), ["r1", "r2", "r3"]);
}

#[test]
fn column_range_inclusivity_and_absent_bounds() {
    let range = |min: Option<&str>, min_inc, max: Option<&str>, max_inc| {
        filter(
            "ColumnRangeFilter",
            &pb::ColumnRangeFilter {
                min_column: min.map(|m| m.as_bytes().to_vec()),
                min_column_inclusive: min_inc,
                max_column: max.map(|m| m.as_bytes().to_vec()),
                max_column_inclusive: max_inc,
            },
        )
    };
    let quals = |f: &pb::Filter| {
        let mut q: Vec<String> = kept(f)
            .iter()
            .map(|k| k.split([':', '/']).nth(2).unwrap_or_default().to_owned())
            .collect();
        q.sort();
        q.dedup();
        q
    };
    assert_eq!(
        quals(&range(Some("a"), Some(true), Some("b"), Some(true))),
        ["a", "b"]
    );
    assert_eq!(
        quals(&range(Some("a"), Some(false), Some("b"), Some(true))),
        ["b"]
    );
    assert_eq!(
        quals(&range(Some("a"), Some(true), Some("b"), Some(false))),
        ["a"]
    );
    assert_eq!(quals(&range(None, None, Some("c"), None)), ["a", "b"]);
    assert_eq!(quals(&range(Some("b"), Some(true), None, None)), ["b", "c"]);
}

#[test]
fn regex_flags_and_engines() {
    let eq = |c| value_filter(pb::CompareType::Equal, c);
    let values = |f: &pb::Filter| kept(f).len();
    // "x\ny" matches x.y only with DOTALL (HBase's default).
    assert_eq!(values(&eq(regex("x.y", java_flags::DOTALL))), 1);
    assert_eq!(values(&eq(regex("x.y", 0))), 0);
    assert_eq!(values(&eq(regex("^y$", 0))), 0);
    assert_eq!(values(&eq(regex("^y$", java_flags::MULTILINE))), 1);
    assert_eq!(values(&eq(regex("^YES$", 0))), 1);
    assert_eq!(values(&eq(regex("^YES$", java_flags::CASE_INSENSITIVE))), 4);
    assert_eq!(values(&eq(regex("^ y e s $ # c", java_flags::COMMENTS))), 3);
    // a.b and axb both match the pattern; only a.b matches it literally.
    assert_eq!(values(&eq(regex("a.b", 0))), 2);
    assert_eq!(values(&eq(regex("a.b", java_flags::LITERAL))), 1);
    let joni = comparator(
        "RegexStringComparator",
        &pb::RegexStringComparator {
            pattern: "^yes".into(),
            pattern_flags: java_flags::CASE_INSENSITIVE,
            charset: "UTF-8".into(),
            engine: Some("JONI".into()),
        },
    );
    assert_eq!(values(&eq(joni)), 4);
    let latin1 = comparator(
        "RegexStringComparator",
        &pb::RegexStringComparator {
            pattern: "a".into(),
            pattern_flags: 0,
            charset: "ISO-8859-1".into(),
            engine: None,
        },
    );
    assert!(matches!(
        error(&eq(latin1)),
        FilterPbError::Unsupported { .. }
    ));
    assert!(matches!(
        error(&eq(regex("(", 0))),
        FilterPbError::Invalid { .. }
    ));
    assert!(matches!(
        error(&eq(regex("a", 0x200))),
        FilterPbError::Invalid { .. }
    ));
}

#[test]
fn filter_all_filter_drops_every_row() {
    let all = filter("FilterAllFilter", &pb::FilterAllFilter {});
    assert!(kept(&all).is_empty());
    let mut f = FilterAllFilter;
    assert!(
        !f.filter_row_key(b"r1"),
        "row keys pass: the scan reads every row"
    );
    assert!(f.has_filter_row());
    let out = apply_filter(&mut f, &table(), usize::MAX);
    assert!(out.rows.is_empty());
    assert_eq!(out.calls.len(), table().len(), "every cell is read");
    assert!(out.calls.iter().all(|(_, rc)| *rc == ReturnCode::Skip));
    assert!(!out.stopped_early);
    // Inside an OR list the other filter's rows survive (the list's filterRow needs all).
    let either = list(
        pb::filter_list::Operator::MustPassOne,
        vec![prefix("r2"), all],
    );
    assert_eq!(rows(&either), ["r2"]);
}

#[test]
fn prefix_filter_without_prefix_drops_every_row() {
    let f = filter("PrefixFilter", &pb::PrefixFilter { prefix: None });
    assert!(kept(&f).is_empty());
    assert_eq!(rows(&prefix("")), ["r1", "r2", "r3"]);
}

#[test]
fn errors_name_the_class() {
    let unknown = pb::Filter {
        name: "com.example.MyFilter".into(),
        serialized_filter: None,
    };
    let e = error(&unknown);
    assert!(matches!(e, FilterPbError::Unsupported { .. }));
    assert_eq!(e.class(), "com.example.MyFilter");
    let fuzzy = pb::Filter {
        name: format!("{PKG}FuzzyRowFilter"),
        serialized_filter: Some(Vec::new()),
    };
    assert!(error(&fuzzy).to_string().contains("FuzzyRowFilter"));
    let long = comparator("LongComparator", &pb::BinaryComparator::default());
    let e = error(&value_filter(pb::CompareType::Equal, long));
    assert!(e.to_string().contains("LongComparator"), "{e}");
    // A varint that never ends.
    let garbage = pb::Filter {
        name: format!("{PKG}PageFilter"),
        serialized_filter: Some(vec![0x08, 0xff]),
    };
    let e = error(&garbage);
    assert!(
        matches!(
            e,
            FilterPbError::Malformed {
                message: "PageFilter",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("PageFilter") && e.to_string().contains("do not parse"));
    // Required message fields prost reads as defaults: an absent CompareFilter is LESS
    // without a comparator; an absent wrapped filter has no class name.
    let no_compare = filter("RowFilter", &pb::RowFilter::default());
    assert!(matches!(error(&no_compare), FilterPbError::Invalid { .. }));
    let no_inner = filter("SkipFilter", &pb::SkipFilter::default());
    let e = error(&no_inner);
    assert!(
        matches!(
            e,
            FilterPbError::Malformed {
                message: "SkipFilter",
                ..
            }
        ),
        "{e}"
    );
    let no_comparator = filter(
        "ValueFilter",
        &pb::ValueFilter {
            compare_filter: pb::CompareFilter {
                compare_op: pb::CompareType::Equal as i32,
                comparator: None,
            },
        },
    );
    assert!(matches!(
        error(&no_comparator),
        FilterPbError::Invalid { .. }
    ));
    let bad_op = filter(
        "FilterList",
        &pb::FilterList {
            operator: 7,
            filters: vec![],
        },
    );
    assert!(matches!(error(&bad_op), FilterPbError::Malformed { .. }));
    let negative = filter("PageFilter", &pb::PageFilter { page_size: -1 });
    assert!(matches!(error(&negative), FilterPbError::Invalid { .. }));
}

#[test]
fn nesting_is_bounded() {
    let wrap = |inner: pb::Filter| filter("SkipFilter", &pb::SkipFilter { filter: inner });
    let mut f = prefix("r1");
    for _ in 0..MAX_FILTER_DEPTH {
        f = wrap(f);
    }
    assert!(
        filter_from_pb(&f).is_ok(),
        "{MAX_FILTER_DEPTH} wrappers are accepted"
    );
    let e = error(&wrap(f));
    assert!(matches!(e, FilterPbError::TooDeep { .. }), "{e}");
}
