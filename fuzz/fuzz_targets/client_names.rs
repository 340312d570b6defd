//! Fuzzes the names a client shapes (cairn-region's `names`): table names as the Thrift
//! gateway reads them and as protobuf `TableName`s carry them, namespaces, families, rows.
//! Whatever the bytes, no panic; a name every check takes is one plain directory directly
//! under its parent, and a table name parses back to itself from its printed form.
#![no_main]

use std::path::Path;

use cairn_region::{names, TableName};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parent = Path::new("/root/data");
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (a, b) = (&data[..split], data.get(split + 1..).unwrap_or_default());
    for t in [TableName::from_full_name(data), TableName::from_parts(a, b)]
        .into_iter()
        .flatten()
    {
        for part in [&t.namespace, &t.qualifier] {
            let p = names::child(parent, part).expect("an accepted name is a plain component");
            assert_eq!(p.parent(), Some(parent));
        }
        assert_eq!(TableName::parse(&t.to_string()).ok().as_ref(), Some(&t));
    }
    if names::check_family(data).is_ok() {
        let dir = String::from_utf8_lossy(data);
        let p = names::child(parent, &dir).expect("an accepted family is a plain component");
        assert_eq!(p.parent(), Some(parent));
    }
    if let Ok(ns) = names::check_namespace(data) {
        assert!(names::child(parent, &ns).is_ok());
    }
    let _ = names::check_row(data);
});
