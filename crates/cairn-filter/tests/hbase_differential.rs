//! Differential test against HBase 2.6.1 itself: the same filter strings go through HBase's
//! `ParseFilter` and filter classes (`interop/hbase`'s `FilterInterop`, which drives them over
//! a list of cells in the region scanner's call order) and through cairn-filter's parser and
//! [`apply_filter`]; acceptance, kept cells and end of scan must agree case by case.
//!
//! Needs `mvn -f interop/hbase/pom.xml package` first (the test script does it). Without the
//! jars the test is skipped, unless `CAIRN_REQUIRE_HBASE_INTEROP=1` makes that a failure.

#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

use std::fmt::Write as _;

use cairn_cell::compare_cells;
use cairn_cell::KeyValue;
use cairn_filter::driver::apply_filter;
use cairn_filter::parse_filter;

fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        "-".into()
    } else {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
}

fn table() -> Vec<KeyValue> {
    let rows = ["row1", "row10", "row2", "rox", "ab", "abc", "b"];
    let quals = ["", "a", "ab", "abc", "b", "ba", "c"];
    let values = ["yes", "no", "x'y", "ABC", "", "12", "yes!"];
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut cells = Vec::new();
    for row in rows {
        for family in ["f", "g"] {
            for q in quals {
                if rnd() % 3 == 0 {
                    continue;
                }
                for ts in 1..=(1 + rnd() % 3) as i64 {
                    let v = values[(rnd() % values.len() as u64) as usize];
                    cells.push(
                        KeyValue::put(
                            row.as_bytes(),
                            family.as_bytes(),
                            q.as_bytes(),
                            ts,
                            v.as_bytes(),
                        )
                        .unwrap(),
                    );
                }
            }
        }
    }
    cells.sort_by(|a, b| compare_cells(&a.as_cell(), &b.as_cell()));
    cells
}

struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
    fn quoted(&mut self) -> String {
        let s = self.pick(&[
            "", "a", "ab", "abc", "b", "row1", "row", "f", "g", "yes", "x'y", "c", "ro",
        ]);
        format!("'{}'", s.replace('\'', "''"))
    }
    fn comparison(&mut self) -> String {
        let op = self.pick(&["<", "<=", "=", "!=", ">=", ">"]);
        match self.next() % 6 {
            0 | 1 => format!(
                "{op}, 'binary:{}'",
                self.pick(&["", "a", "ab", "b", "row1", "yes", "no", "f"])
            ),
            2 => format!(
                "{op}, 'binaryprefix:{}'",
                self.pick(&["", "a", "ro", "row1", "ye", "x"])
            ),
            3 => format!(
                "{}, 'substring:{}'",
                self.pick(&["=", "!="]),
                self.pick(&["", "e", "Y", "row", "b"])
            ),
            4 => format!(
                "{}, 'regexstring:{}'",
                self.pick(&["=", "!="]),
                self.pick(&["^r", "o.$", "[0-9]+", "^$", "x''y"])
            ),
            _ => format!(
                "{}, 'regexstringnocase:{}'",
                self.pick(&["=", "!="]),
                self.pick(&["^AB", "YES", "^R.W"])
            ),
        }
    }
    fn boolean(&mut self) -> &'static str {
        self.pick(&["true", "false", "TRUE", "False"])
    }
    fn leaf(&mut self) -> String {
        match self.next() % 19 {
            0 => format!("PrefixFilter({})", self.quoted()),
            1 => format!("ColumnPrefixFilter({})", self.quoted()),
            2 => format!("InclusiveStopFilter({})", self.quoted()),
            3 => format!("KeyOnlyFilter({})", self.pick(&["", "true", "false"])),
            4 => "FirstKeyOnlyFilter()".into(),
            5 => format!("PageFilter({})", self.next() % 5),
            6 => format!("ColumnCountGetFilter({})", self.next() % 4),
            7 => format!(
                "ColumnPaginationFilter({}, {})",
                self.next() % 4,
                self.next() % 3
            ),
            8 => format!(
                "TimestampsFilter({})",
                self.pick(&["", "1", "2", "1, 3", "3, 2", "5"])
            ),
            9 => format!(
                "MultipleColumnPrefixFilter({})",
                self.pick(&["", "'a'", "'b', 'ab'", "'c', 'a'", "'ba'"])
            ),
            10 => format!(
                "{}({})",
                self.pick(&["RowFilter", "FamilyFilter"]),
                self.comparison()
            ),
            11 => format!(
                "{}({})",
                self.pick(&["QualifierFilter", "ValueFilter"]),
                self.comparison()
            ),
            12 => format!(
                "ColumnRangeFilter({}, {}, {}, {})",
                self.quoted(),
                self.boolean(),
                self.quoted(),
                self.boolean()
            ),
            13 | 14 => {
                let name =
                    self.pick(&["SingleColumnValueFilter", "SingleColumnValueExcludeFilter"]);
                let fam = self.pick(&["'f'", "'g'"]);
                let q = self.pick(&["'a'", "'b'", "''", "'zz'"]);
                let tail = if self.next().is_multiple_of(2) {
                    String::new()
                } else {
                    format!(", {}, {}", self.boolean(), self.boolean())
                };
                format!("{name}({fam}, {q}, {}{tail})", self.comparison())
            }
            15 => format!(
                "DependentColumnFilter('f', {}{})",
                self.pick(&["'a'", "'b'", "'c'"]),
                self.pick(&[
                    "",
                    ", true",
                    ", false",
                    ", false, =, 'binary:yes'",
                    ", true, !=, 'binary:no'"
                ])
            ),
            16 => format!(
                "ColumnValueFilter({}, {}, {})",
                self.pick(&["'f'", "'g'"]),
                self.pick(&["'a'", "'b'"]),
                self.comparison()
            ),
            17 => format!("ValueFilter({})", self.comparison()),
            _ => format!("QualifierFilter({})", self.comparison()),
        }
    }
    fn expr(&mut self, depth: u32) -> String {
        if depth == 0 {
            return self.leaf();
        }
        match self.next() % 6 {
            0 | 1 => self.leaf(),
            2 => format!("SKIP {}", self.operand(depth - 1)),
            3 => format!("WHILE {}", self.operand(depth - 1)),
            _ => {
                let op = self.pick(&[" AND ", " OR "]);
                let n = 2 + self.next() % 2;
                let parts: Vec<String> = (0..n).map(|_| self.operand(depth - 1)).collect();
                format!("({})", parts.join(op))
            }
        }
    }
    fn operand(&mut self, depth: u32) -> String {
        let e = self.expr(depth);
        if e.starts_with("SKIP ") || e.starts_with("WHILE ") {
            format!("({e})")
        } else {
            e
        }
    }
    /// Loose text: operators without parentheses (precedence), stray spaces, errors.
    fn loose(&mut self) -> String {
        let n = 1 + self.next() % 4;
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push_str(self.pick(&[
                    " AND ",
                    " OR ",
                    " AND SKIP ",
                    " OR WHILE ",
                    "AND",
                    " ",
                    ")AND(",
                ]));
            }
            s.push_str(self.pick(&["", "(", "SKIP ", "WHILE ", "  "]));
            s.push_str(&self.leaf());
            s.push_str(self.pick(&["", ")", " ", ","]));
        }
        s
    }
}

fn rust_side(cases: &[(String, usize)], cells: &[KeyValue]) -> String {
    let mut out = String::new();
    for (i, (text, max_versions)) in cases.iter().enumerate() {
        match parse_filter(text) {
            Err(_) => writeln!(out, "ERROR {i}").unwrap(),
            Ok(mut f) => {
                let o = apply_filter(f.as_mut(), cells, *max_versions);
                for c in o.cells() {
                    let c = c.as_cell();
                    writeln!(
                        out,
                        "KEEP {i} {} {} {} {} {}",
                        hex(c.row()),
                        hex(c.family()),
                        hex(c.qualifier()),
                        c.timestamp(),
                        hex(c.value)
                    )
                    .unwrap();
                }
                writeln!(out, "END {i} {}", o.stopped_early).unwrap();
            }
        }
    }
    out
}

#[test]
fn filters_agree_with_hbase() {
    let Some(cp) = hbase::classpath() else {
        assert!(
            std::env::var("CAIRN_REQUIRE_HBASE_INTEROP").as_deref() != Ok("1"),
            "CAIRN_REQUIRE_HBASE_INTEROP=1 but interop/hbase is not built"
        );
        eprintln!("skipped: run `mvn -f interop/hbase/pom.xml package` for the HBase interop test");
        return;
    };
    let cells = table();
    let fixed = [
        "PrefixFilter('row1')",
        "PrefixFilter('ab') AND (QualifierFilter(>=, 'binary:b') OR ValueFilter(!=, 'substring:Y'))",
        "PrefixFilter('ab') AND (QualifierFilter(>=, 'binary:b') OR SKIP ValueFilter(!=, 'substring:X'))",
        "(PrefixFilter('a') OR PrefixFilter('b') AND PrefixFilter('c'))",
        "PrefixFilter('a') OR PrefixFilter('b') AND PrefixFilter('c')",
        "SKIP SKIP ValueFilter(=, 'binary:yes')",
        "(SKIP SKIP ValueFilter(=, 'binary:yes'))",
        "WHILE RowFilter(<, 'binary:row2')",
        "PageFilter(2) AND ValueFilter(=, 'binary:yes')",
        "ValueFilter(=, 'binary:yes') AND PageFilter(2)",
        "ColumnCountGetFilter(2)",
        "ColumnPaginationFilter(2, 1)",
        "SingleColumnValueFilter('f', 'a', =, 'binary:yes')",
        "SingleColumnValueFilter('f', 'a', =, 'binary:yes', true, false)",
        "SingleColumnValueExcludeFilter('g', 'b', !=, 'regexstring:^n', true, true)",
        "DependentColumnFilter('f', 'a', true)",
        "ColumnValueFilter('f', 'b', =, 'substring:E')",
        "TimestampsFilter(1, 3) OR FirstKeyOnlyFilter()",
        "KeyOnlyFilter(true) AND ColumnRangeFilter('ab', false, 'c', true)",
        "MultipleColumnPrefixFilter('ab', 'c') OR ColumnPrefixFilter('b')",
        "InclusiveStopFilter('row10')",
        "FamilyFilter(=, 'binary:g') OR QualifierFilter(=, 'binary:a')",
        "PageFilter(20000000000000000000)",
        "PageFilter(-)",
        "PrefixFilter('a'x)",
        "(PrefixFilter('a')",
        "PrefixFilter('a''b)')",
        "RowFilter(<, 'substring:a')",
        "NoSuchFilter('a')",
        "PrefixFilter('a', 'b')",
        "PrefixFilter('a') and PrefixFilter('b')",
        "",
        ")",
        "()",
        "PrefixFilter('a') PrefixFilter('b')",
        "TimestampsFilter(-1)",
        "MultipleColumnPrefixFilter('a', 'a')",
        "KeyOnlyFilter(yes)",
    ];
    let mut cases: Vec<(String, usize)> = Vec::new();
    for (i, f) in fixed.iter().enumerate() {
        cases.push((f.to_string(), [usize::MAX, 1, 2][i % 3]));
    }
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    for i in 0..1500 {
        let text = if i % 4 == 3 { g.loose() } else { g.expr(3) };
        cases.push((text, [1000, 1, 2][i % 3]));
    }
    let mut manifest = String::new();
    for c in &cells {
        let c = c.as_cell();
        writeln!(
            manifest,
            "CELL {} {} {} {} {}",
            hex(c.row()),
            hex(c.family()),
            hex(c.qualifier()),
            c.timestamp(),
            hex(c.value)
        )
        .unwrap();
    }
    for (text, max_versions) in &cases {
        let mv = (*max_versions).min(i32::MAX as usize);
        writeln!(manifest, "CASE {} {mv}", hex(text.as_bytes())).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cases.txt");
    std::fs::write(&path, manifest).unwrap();
    let run = hbase::java(&cp, "FilterInterop", &[path.to_str().unwrap()]);
    assert!(
        run.status.success(),
        "FilterInterop failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let java = String::from_utf8(run.stdout).unwrap();
    let rust = rust_side(&cases, &cells);

    let group = |s: &str| {
        let mut by_case = vec![Vec::new(); cases.len()];
        for line in s.lines() {
            let idx: usize = line.split(' ').nth(1).and_then(|n| n.parse().ok()).unwrap();
            by_case[idx].push(line.to_owned());
        }
        by_case
    };
    let (java, rust) = (group(&java), group(&rust));
    let mut mismatches = Vec::new();
    let mut accepted = 0;
    for (i, (text, mv)) in cases.iter().enumerate() {
        if !java[i].iter().any(|l| l.starts_with("ERROR")) {
            accepted += 1;
        }
        if java[i] != rust[i] {
            mismatches.push(format!(
                "case {i} {text:?} (max versions {mv}):\n  hbase: {:?}\n  cairn: {:?}",
                java[i], rust[i]
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} cases differ from HBase:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The generator must exercise real filtering, not only parse errors.
    assert!(accepted > cases.len() / 2, "only {accepted} cases parsed");
}
