//! Fuzzes the reading of znode data written by someone else: what `cairn serve --zookeeper`
//! finds in `/hbase/master` at start (another master, or an earlier cairn), and the other
//! znode formats it reads (meta location, cluster id). Malformed bytes must give an error,
//! never a panic; what parses must encode back to bytes that parse to the same message.
#![no_main]

use cairn_rpc::znode;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(stripped) = znode::strip_metadata(data) {
        assert!(stripped.len() <= data.len());
    }
    let _ = znode::writer_identifier(data);
    let _ = znode::parse_cluster_id(data);
    let _ = znode::parse_meta_region_server(data);
    if let Ok(master) = znode::parse_master(data) {
        let again = znode::encode("master:1", 7, &master);
        assert_eq!(znode::parse_master(&again).as_ref(), Ok(&master));
    }
});
