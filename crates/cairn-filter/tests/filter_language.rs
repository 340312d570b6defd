//! Properties of the filter-language parser: no input makes it panic, and the spelling of any
//! filter tree parses back to a filter with the same spelling.

use cairn_filter::{parse_filter, FilterError};
use proptest::prelude::*;

/// A filter tree in its canonical spelling (the one `Filter::filter_string` produces).
#[derive(Debug, Clone)]
enum Tree {
    Leaf(String),
    List { and: bool, children: Vec<Tree> },
    Skip(Box<Tree>),
    While(Box<Tree>),
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn operand(t: &Tree) -> String {
    match t {
        Tree::Skip(_) | Tree::While(_) => format!("({})", render(t)),
        _ => render(t),
    }
}

fn render(t: &Tree) -> String {
    match t {
        Tree::Leaf(s) => s.clone(),
        Tree::List { and, children } => {
            let parts: Vec<String> = children.iter().map(operand).collect();
            format!("({})", parts.join(if *and { " AND " } else { " OR " }))
        }
        Tree::Skip(c) => format!("SKIP {}", operand(c)),
        Tree::While(c) => format!("WHILE {}", operand(c)),
    }
}

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 ',()_:é-]{0,6}"
}

fn op() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["<", "<=", "=", "!=", ">=", ">"])
}

fn comparator() -> impl Strategy<Value = (bool, String)> {
    // (only = and != allowed, spelling)
    prop_oneof![
        text().prop_map(|t| (false, quote(&format!("binary:{t}")))),
        text().prop_map(|t| (false, quote(&format!("binaryprefix:{t}")))),
        "[a-z0-9 ']{0,5}".prop_map(|t| (true, quote(&format!("substring:{t}")))),
        prop::sample::select(vec!["^a", "b.c", "x+y?", "[0-9]{2}", "it''s|é", "(?:ab)*$"])
            .prop_map(|t| (true, format!("'regexstring:{t}'"))),
        prop::sample::select(vec!["^A", "row-\\d+"])
            .prop_map(|t| (true, format!("'regexstringnocase:{t}'"))),
    ]
}

fn comparison() -> impl Strategy<Value = String> {
    (op(), comparator(), any::<bool>()).prop_map(|(op, (matching_only, cmp), ne)| {
        let op = if matching_only {
            if ne {
                "!="
            } else {
                "="
            }
        } else {
            op
        };
        format!("{op}, {cmp}")
    })
}

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        text().prop_map(|t| format!("PrefixFilter({})", quote(&t))),
        text().prop_map(|t| format!("ColumnPrefixFilter({})", quote(&t))),
        text().prop_map(|t| format!("InclusiveStopFilter({})", quote(&t))),
        Just("KeyOnlyFilter()".to_owned()),
        Just("KeyOnlyFilter(true)".to_owned()),
        Just("FirstKeyOnlyFilter()".to_owned()),
        (0i64..=i64::MAX).prop_map(|n| format!("PageFilter({n})")),
        (0i32..=i32::MAX).prop_map(|n| format!("ColumnCountGetFilter({n})")),
        (0i32..1000, 0i32..1000).prop_map(|(a, b)| format!("ColumnPaginationFilter({a}, {b})")),
        prop::collection::btree_set(0i64..=i64::MAX, 0..4).prop_map(|s| {
            let v: Vec<String> = s.iter().map(i64::to_string).collect();
            format!("TimestampsFilter({})", v.join(", "))
        }),
        prop::collection::btree_set(text(), 0..4).prop_map(|s| {
            // Canonical order is byte order of the prefixes.
            let mut v: Vec<&String> = s.iter().collect();
            v.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            let v: Vec<String> = v.into_iter().map(|p| quote(p)).collect();
            format!("MultipleColumnPrefixFilter({})", v.join(", "))
        }),
        (
            prop::sample::select(vec![
                "RowFilter",
                "FamilyFilter",
                "QualifierFilter",
                "ValueFilter"
            ]),
            comparison()
        )
            .prop_map(|(name, c)| format!("{name}({c})")),
        (text(), any::<bool>(), text(), any::<bool>()).prop_map(|(a, ai, b, bi)| format!(
            "ColumnRangeFilter({}, {ai}, {}, {bi})",
            quote(&a),
            quote(&b)
        )),
        (
            prop::sample::select(vec![
                "SingleColumnValueFilter",
                "SingleColumnValueExcludeFilter"
            ]),
            text(),
            text(),
            comparison(),
            any::<bool>(),
            any::<bool>()
        )
            .prop_map(|(name, f, q, c, missing, latest)| {
                let tail = if missing || !latest {
                    format!(", {missing}, {latest}")
                } else {
                    String::new()
                };
                format!("{name}({}, {}, {c}{tail})", quote(&f), quote(&q))
            }),
        (
            text(),
            text(),
            any::<bool>(),
            prop::option::of(comparison())
        )
            .prop_map(|(f, q, drop, c)| match c {
                None => format!(
                    "DependentColumnFilter({}, {}, {drop})",
                    quote(&f),
                    quote(&q)
                ),
                Some(c) => format!(
                    "DependentColumnFilter({}, {}, {drop}, {c})",
                    quote(&f),
                    quote(&q)
                ),
            }),
        (text(), text(), comparison()).prop_map(|(f, q, c)| format!(
            "ColumnValueFilter({}, {}, {c})",
            quote(&f),
            quote(&q)
        )),
    ]
}

fn tree() -> impl Strategy<Value = Tree> {
    leaf()
        .prop_map(Tree::Leaf)
        .prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                (any::<bool>(), prop::collection::vec(inner.clone(), 2..4))
                    .prop_map(|(and, children)| Tree::List { and, children }),
                inner.clone().prop_map(|t| Tree::Skip(Box::new(t))),
                inner.prop_map(|t| Tree::While(Box::new(t))),
            ]
        })
}

/// Pieces of filter-language text, so that random strings get past the first byte.
fn token() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "(",
        ")",
        " ",
        "\t",
        "AND",
        "OR",
        "SKIP",
        "WHILE",
        "'",
        "''",
        ",",
        "PrefixFilter",
        "ValueFilter",
        "SingleColumnValueFilter",
        "TimestampsFilter",
        "PageFilter",
        "=",
        "!=",
        "<=",
        "'binary:",
        "'regexstring:",
        "'substring:",
        "1",
        "-",
        "99999999999999999999",
        "true",
        "a",
        "é",
        "(?<x>",
        "[",
        "*",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn spelling_round_trips(t in tree()) {
        let text = render(&t);
        let f = parse_filter(&text).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(f.filter_string(), Some(text));
    }

    #[test]
    fn never_panics_on_any_string(s in any::<String>()) {
        let _ = parse_filter(&s);
    }

    #[test]
    fn never_panics_on_token_soup(tokens in prop::collection::vec(token(), 0..40)) {
        let s = tokens.concat();
        if let Ok(f) = parse_filter(&s) {
            // Whatever parses has a spelling that parses to the same spelling.
            let spelled = f.filter_string().expect("parsed filters have a spelling");
            let again = parse_filter(&spelled)
                .map_err(|e| TestCaseError::fail(format!("{s:?} -> {spelled:?}: {e}")))?;
            prop_assert_eq!(again.filter_string(), Some(spelled));
        }
    }

    #[test]
    fn errors_point_inside_the_text(tokens in prop::collection::vec(token(), 1..20)) {
        let s = tokens.concat();
        if let Err(e) = parse_filter(&s) {
            let offset = match e {
                FilterError::Syntax { offset, .. }
                | FilterError::UnknownFilter { offset, .. }
                | FilterError::ArgumentCount { offset, .. }
                | FilterError::Argument { offset, .. }
                | FilterError::TooDeep { offset, .. } => offset,
                FilterError::Invalid { .. } => return Err(TestCaseError::fail("Invalid from the parser")),
            };
            prop_assert!(offset <= s.len(), "{} > {} for {:?}", offset, s.len(), s);
        }
    }
}
