//! Filters as HBase 2.6.1's own client serializes them: `interop/hbase`'s `FilterProtoDump`
//! builds HBase filter objects (every filter and comparator cairn-filter implements, with
//! non-default options, nested lists and wrappers), writes each as the `hbase.pb.Filter` bytes a
//! Scan carries, and runs HBase's own filter (read back from those bytes, as a region server
//! does) over a table of cells in the region scanner's call order. cairn decodes the same bytes
//! with `filter_from_pb` and runs cairn-filter's driver over the same cells: the kept cells and
//! the end of the scan must agree case by case, and so must the filter-language equivalent
//! where there is one. Classes cairn-filter lacks must be refused with an error naming them.
//!
//! Needs `mvn -f interop/hbase/pom.xml package` first (the test script does it). Without the
//! jars the test is skipped, unless `CAIRN_REQUIRE_HBASE_INTEROP=1` makes that a failure.

#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

use std::fmt::Write as _;

use cairn_cell::{compare_cells, KeyValue};
use cairn_filter::driver::apply_filter;
use cairn_filter::{parse_filter, Filter};
use cairn_rpc::pb;
use cairn_server::rpc::filter::filter_from_pb;
use prost::Message;

fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        "-".into()
    } else {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
}

fn unhex(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

/// Rows, qualifiers and values the cases' prefixes, ranges, comparators and regular
/// expressions pick apart; which cells exist and how many versions is pseudo-random.
fn table() -> Vec<KeyValue> {
    let rows = ["ab", "abc", "b", "row1", "row10", "row2", "rox"];
    let quals = ["", "a", "ab", "abc", "b", "ba", "c", "zz"];
    let values = [
        "yes", "no", "x'y", "ABC", "", "12", "yes!", "y\ns", "1.2", "122", "YES", "Yes",
    ];
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
                        .expect("valid cell"),
                    );
                }
            }
        }
    }
    cells.sort_by(|a, b| compare_cells(&a.as_cell(), &b.as_cell()));
    cells
}

/// `FilterInterop`'s output lines for one case, from cairn's driver.
fn run(i: usize, filter: &mut dyn Filter, cells: &[KeyValue]) -> Vec<String> {
    let o = apply_filter(filter, cells, usize::MAX);
    let mut out = Vec::new();
    for c in o.cells() {
        let c = c.as_cell();
        out.push(format!(
            "KEEP {i} {} {} {} {} {}",
            hex(c.row()),
            hex(c.family()),
            hex(c.qualifier()),
            c.timestamp(),
            hex(c.value)
        ));
    }
    out.push(format!("END {i} {}", o.stopped_early));
    out
}

/// The classes cairn-filter does not implement, which the Java side lists as "error" cases.
const REFUSED: &[&str] = &[
    "LongComparator",
    "BinaryComponentComparator",
    "FuzzyRowFilter",
    "MultiRowRangeFilter",
    "RandomRowFilter",
    "RegexStringComparator",
];

#[test]
fn filters_from_hbase_serializer_agree_with_hbase() {
    let Some(cp) = hbase::classpath() else {
        assert!(
            std::env::var("CAIRN_REQUIRE_HBASE_INTEROP").as_deref() != Ok("1"),
            "CAIRN_REQUIRE_HBASE_INTEROP=1 but interop/hbase is not built"
        );
        eprintln!("skipped: run `mvn -f interop/hbase/pom.xml package` for the HBase interop test");
        return;
    };
    let cells = table();
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
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cells.txt");
    std::fs::write(&path, manifest).unwrap();
    let java = hbase::java(&cp, "FilterProtoDump", &[path.to_str().unwrap()]);
    assert!(
        java.status.success(),
        "FilterProtoDump failed: {}",
        String::from_utf8_lossy(&java.stderr)
    );
    let java = String::from_utf8(java.stdout).unwrap();

    // Case headers, and HBase's KEEP/END lines per case.
    let mut cases: Vec<(Vec<u8>, Option<String>, bool)> = Vec::new();
    let mut hbase_lines: Vec<Vec<String>> = Vec::new();
    for line in java.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        let idx: usize = parts[1].parse().expect("case number");
        if parts[0] == "CASE" {
            assert_eq!(idx, cases.len(), "cases in order");
            let language = (parts[3] != "-").then(|| String::from_utf8(unhex(parts[3])).unwrap());
            cases.push((unhex(parts[2]), language, parts[4] == "run"));
            hbase_lines.push(Vec::new());
        } else {
            hbase_lines[idx].push(line.to_owned());
        }
    }
    assert!(cases.len() >= 50, "only {} cases", cases.len());

    let mut mismatches = Vec::new();
    let mut non_empty = 0;
    let mut refused = 0;
    for (i, (bytes, language, supported)) in cases.iter().enumerate() {
        let proto = pb::Filter::decode(bytes.as_slice()).expect("HBase's bytes decode");
        let built = filter_from_pb(&proto);
        if !supported {
            match built {
                Ok(f) => mismatches.push(format!("case {i} {}: built {f:?}", proto.name)),
                Err(e) => {
                    let class = e.class();
                    let named = REFUSED
                        .iter()
                        .any(|r| class == format!("org.apache.hadoop.hbase.filter.{r}"));
                    assert!(named && e.to_string().contains(class), "case {i}: {e}");
                    refused += 1;
                }
            }
            continue;
        }
        let mut f = match built {
            Ok(f) => f,
            Err(e) => {
                mismatches.push(format!("case {i} {}: {e}", proto.name));
                continue;
            }
        };
        let expected = &hbase_lines[i];
        if expected.len() > 1 {
            non_empty += 1;
        }
        let cairn = run(i, f.as_mut(), &cells);
        if &cairn != expected {
            mismatches.push(format!(
                "case {i} {} ({language:?}):\n  hbase: {expected:?}\n  cairn: {cairn:?}",
                proto.name
            ));
        }
        if let Some(text) = language {
            let mut parsed = parse_filter(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            let spelled = run(i, parsed.as_mut(), &cells);
            if &spelled != expected {
                mismatches.push(format!(
                    "case {i} as filter language {text:?}:\n  hbase: {expected:?}\n  cairn: {spelled:?}"
                ));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} cases differ from HBase:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches.join("\n")
    );
    // The cases must exercise real filtering and real refusals.
    assert!(
        non_empty > cases.len() / 2,
        "only {non_empty} cases keep cells"
    );
    assert!(refused >= 6, "only {refused} refusals");
}
