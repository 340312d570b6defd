//! `cairn pe --cacheBlocks=false` (PE's option, HBase's `setCacheBlocks(false)`): random
//! reads, multi-gets and scans read the table's data blocks without caching them; the same
//! runs with caching on fill the cache with them. Each run opens the store afresh, so the
//! blocks its report counts are the ones that run cached.

use std::process::Command;

use serde_json::Value;

fn pe_json(args: &[&str]) -> Value {
    let mut all = vec!["pe", "--json"];
    all.extend_from_slice(args);
    let o = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(&all)
        .output()
        .expect("run cairn");
    assert!(
        o.status.success(),
        "cairn {all:?} failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("one JSON object")
}

#[test]
fn cache_blocks_false_leaves_data_blocks_out_of_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let data = format!("--data={}", dir.path().display());
    // ~3 MB of cells: about 50 data blocks of 64 KiB.
    let w = pe_json(&[
        &data,
        "--rows=20000",
        "--valueSize=100",
        "sequentialWrite",
        "1",
    ]);
    assert_eq!(w["ops"].as_u64(), Some(20000));
    let blocks = |v: &Value| v["block_cache"]["blocks"].as_u64().unwrap();
    for command in [
        &["randomRead"][..],
        &["--multiGet=20", "randomRead"],
        &["scan"],
    ] {
        let run = |cache: &str| {
            let mut args = vec![data.as_str(), "--rows=20000", cache];
            args.extend_from_slice(command);
            args.push("1");
            pe_json(&args)
        };
        let uncached = run("--cacheBlocks=false");
        assert!(
            uncached["rows_returned"].as_u64().unwrap() > 0,
            "{command:?}"
        );
        // The index and Bloom blocks may be cached; none of the ~50 data blocks.
        assert!(
            blocks(&uncached) <= 5,
            "{command:?} with --cacheBlocks=false cached {} blocks",
            blocks(&uncached)
        );
        let cached = run("--cacheBlocks=true");
        assert!(
            blocks(&cached) >= 30,
            "{command:?} with --cacheBlocks=true cached only {} blocks",
            blocks(&cached)
        );
    }
}
