//! Fuzzes HBase's filter language with untrusted text (a Thrift TScan.filterString): parsing
//! must return a filter or an error, never panic; whatever parses must spell itself in a way
//! that parses to the same spelling, and must run over a few cells without panicking.
#![no_main]

use cairn_filter::driver::apply_filter;
use cairn_filter::parse_filter;
use cairn_hfile::KeyValue;
use libfuzzer_sys::fuzz_target;

fn check(text: &str) {
    let Ok(mut filter) = parse_filter(text) else {
        return;
    };
    let spelled = filter
        .filter_string()
        .expect("parsed filters have a spelling");
    let again = parse_filter(&spelled).expect("a filter's spelling parses");
    assert_eq!(again.filter_string().as_deref(), Some(spelled.as_str()));
    let cells: Vec<KeyValue> = [
        (&b"a"[..], &b"f"[..], &b"q"[..], 3, &b"v"[..]),
        (b"a", b"f", b"q", 1, b"w"),
        (b"a", b"g", b"", 2, b""),
        (b"b", b"f", b"r", 5, b"x'y"),
    ]
    .iter()
    .map(|&(r, f, q, t, v)| KeyValue::put(r, f, q, t, v).expect("valid cell"))
    .collect();
    let _ = apply_filter(filter.as_mut(), &cells, 2);
}

fuzz_target!(|input: &[u8]| {
    match std::str::from_utf8(input) {
        Ok(text) => check(text),
        Err(_) => check(&String::from_utf8_lossy(input)),
    }
});
