//! Fuzzes reading `hbase-site.xml`: any bytes are an error naming the file or properties,
//! never a panic, and every property read expands (or fails with Hadoop's depth error)
//! without a panic either.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut conf = cairn_conf::Configuration::new();
    if conf.add_xml(text, "hbase-site.xml").is_ok() {
        let names: Vec<String> = conf.iter().map(|(n, _, _)| n.to_string()).collect();
        for n in names {
            let _ = conf.get(&n);
        }
    }
});
