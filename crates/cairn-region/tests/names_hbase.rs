//! cairn's name rules against HBase 2.6.1's own classes (`dev.cairn.interop.NameRules` in
//! interop/hbase): every UTF-16 code unit of the BMP in every position that matters, the
//! special names, and random bytes — the same verdict, and for names that are valid UTF-8
//! without supplementary characters, the same message. The sweep of the BMP is also the check
//! that the letter table cairn carries (`names/java_letters.rs`) is Java's. Skipped without
//! the interop jars unless `CAIRN_REQUIRE_HBASE_INTEROP=1`.

#[path = "../../cairn-hfile/tests/support/hbase.rs"]
#[allow(dead_code)] // its `java` helper runs a program to its end; this test talks to one
mod hbase;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use cairn_region::names;
use cairn_region::TableName;
use rand::{Rng, SeedableRng};

/// One name to judge: the kind `NameRules check` takes and its byte strings.
struct Case {
    kind: &'static str,
    parts: Vec<Vec<u8>>,
}

fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".into();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// cairn's verdict: `OK` or `BAD <message>`, as `NameRules` prints HBase's.
fn cairn_verdict(c: &Case) -> String {
    let r = match c.kind {
        "table" => TableName::from_parts(&c.parts[0], &c.parts[1]).map(|_| ()),
        "full" => TableName::from_full_name(&c.parts[0]).map(|_| ()),
        "family" => names::check_family(&c.parts[0]),
        "namespace" => names::check_namespace(&c.parts[0]).map(|_| ()),
        k => unreachable!("{k}"),
    };
    match r {
        Ok(()) => "OK".into(),
        Err(e) => format!("BAD {e}"),
    }
}

/// Whether Java's message can be compared byte for byte: valid UTF-8 with no character
/// outside the BMP (Java prints half of a surrogate pair as `?`; Rust strings hold none).
fn comparable(c: &Case) -> bool {
    c.parts
        .iter()
        .all(|p| std::str::from_utf8(p).is_ok_and(|s| s.chars().all(|ch| (ch as u32) < 0x10000)))
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let one = |kind, b: Vec<u8>| Case {
        kind,
        parts: vec![b],
    };
    let table = |ns: &[u8], q: &[u8]| Case {
        kind: "table",
        parts: vec![ns.to_vec(), q.to_vec()],
    };
    // Every BMP code unit that UTF-8 can carry, first and later in each kind of name.
    for u in (0u32..0x10000).filter(|u| !(0xd800..0xe000).contains(u)) {
        let c = char::from_u32(u).unwrap().to_string();
        out.push(table(b"", format!("a{c}").as_bytes()));
        out.push(table(b"", format!("{c}a").as_bytes()));
        out.push(table(format!("n{c}").as_bytes(), b"t"));
        out.push(one("family", format!("{c}f").into_bytes()));
        out.push(one("family", format!("f{c}").into_bytes()));
    }
    // Every byte alone and after a letter: malformed UTF-8 included.
    for b in 0u8..=255 {
        out.push(table(b"", &[b'a', b]));
        out.push(table(&[b'n', b], b"t"));
        out.push(one("family", vec![b'f', b]));
        out.push(one("family", vec![b]));
    }
    for name in [
        "",
        ":",
        "t",
        "ns:t",
        ":t",
        "ns:",
        "a:b:c",
        "zookeeper",
        "zookeeper:t",
        "ns:zookeeper",
        "-ROOT-",
        ".META.",
        "hbase:meta",
        "hbase:namespace",
        "default:t",
        "..",
        ".",
        "../x",
        "a/b",
        "/abs",
        "t.",
        "t-",
        "_",
        "1",
        "表",
        "𝐀",
        "a\u{301}",
    ] {
        out.push(one("full", name.as_bytes().to_vec()));
        if let Some((ns, q)) = name.split_once(':') {
            out.push(table(ns.as_bytes(), q.as_bytes()));
        } else {
            out.push(table(b"", name.as_bytes()));
        }
        out.push(one("namespace", name.as_bytes().to_vec()));
        out.push(one("family", name.as_bytes().to_vec()));
    }
    for f in [
        "recovered.edits",
        "recovered.edit",
        "Recovered.edits",
        ".f",
        "f.",
        "f:",
    ] {
        out.push(one("family", f.as_bytes().to_vec()));
    }
    for n in [126, 127, 128, 200] {
        out.push(one("family", vec![b'f'; n]));
    }
    // Random short names over an alphabet of the characters the rules care about.
    let alphabet: &[u8] = b"az_.-:/\\\x00\x1f\x7f\x80\xc3\xa9\xff 9";
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x6e61_6d65);
    for _ in 0..20_000 {
        let mut bytes = || {
            let n = rng.random_range(0..7);
            (0..n)
                .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                .collect::<Vec<u8>>()
        };
        let (a, b) = (bytes(), bytes());
        out.push(table(&a, &b));
        out.push(one("full", [a.as_slice(), b":", b.as_slice()].concat()));
        out.push(one("namespace", a.clone()));
        out.push(one("family", b));
    }
    out
}

#[test]
fn name_rules_match_hbase_2_6_1() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let cases = cases();
    let mut child = Command::new("java")
        .args(hbase::JAVA_FLAGS)
        .arg("-cp")
        .arg(&cp)
        .arg("dev.cairn.interop.NameRules")
        .arg("check")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run java");
    let mut input = String::new();
    for c in &cases {
        input.push_str(c.kind);
        for p in &c.parts {
            input.push(' ');
            input.push_str(&hex(p));
        }
        input.push('\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    // `BAD <hex of the message's UTF-8>`, so any byte of a message comes through.
    let unhex = |h: &str| -> String {
        let bytes: Vec<u8> = (0..h.len() / 2)
            .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    let answers: Vec<String> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| {
            let l = l.unwrap();
            match l.strip_prefix("BAD ") {
                Some(h) => format!("BAD {}", unhex(h)),
                None => l,
            }
        })
        .collect();
    writer.join().unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(answers.len(), cases.len(), "one answer per case");
    let mut wrong = Vec::new();
    for (c, hbase) in cases.iter().zip(&answers) {
        let ours = cairn_verdict(c);
        // HBase's own message for an empty full name is a precondition's text (`offset (0)
        // must be < array length (0)`); only the verdict is compared there.
        let empty_full = c.kind == "full" && c.parts[0].is_empty();
        let same = if comparable(c) && !empty_full {
            &ours == hbase
        } else {
            ours.starts_with("OK") == hbase.starts_with("OK")
        };
        if !same {
            wrong.push(format!(
                "{} {:?}: HBase {hbase:?}, cairn {ours:?}",
                c.kind,
                c.parts
                    .iter()
                    .map(|p| String::from_utf8_lossy(p).into_owned())
                    .collect::<Vec<_>>()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases differ, first ones:\n{}",
        wrong.len(),
        cases.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
}
