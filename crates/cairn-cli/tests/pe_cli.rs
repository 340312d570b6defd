//! `cairn pe` at tiny sizes: every command runs and counts the rows PE would, data written by
//! one run is read by the next, `--json` is one JSON object, and bad options are named.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn cairn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .output()
        .expect("run cairn")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `cairn pe ARGS --json` and parses its stdout.
fn pe_json(args: &[&str]) -> Value {
    let mut all = vec!["pe", "--json"];
    all.extend_from_slice(args);
    let o = cairn(&all);
    assert!(o.status.success(), "cairn {all:?} failed: {}", text(&o));
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("{k} missing or not a count in {v}"))
}

fn s(p: &Path) -> String {
    format!("--data={}", p.display())
}

#[test]
fn every_command_runs_and_counts_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let data = s(dir.path());
    // Write first, so the read commands find the table.
    let w = pe_json(&[
        &data,
        "--rows=200",
        "--valueSize=50",
        "sequentialWrite",
        "2",
    ]);
    assert_eq!(u(&w, "ops"), 400);
    let cases: &[(&str, u64)] = &[
        ("randomWrite", 400),
        ("sequentialRead", 400),
        ("randomRead", 400),
        ("randomSeekScan", 400),
        ("scan", 400),
        ("scanRange10", 400),
        ("scanRange100", 400),
        ("scanRange1000", 400),
        ("scanRange10000", 400),
        ("filterScan", 400),
        // CAS tests: every client walks rows 0..rows.
        ("increment", 400),
        ("append", 400),
        ("checkAndPut", 400),
    ];
    for (cmd, ops) in cases {
        let v = pe_json(&[&data, "--rows=200", "--valueSize=50", cmd, "2"]);
        assert_eq!(u(&v, "ops"), *ops, "{cmd}: {v}");
        assert_eq!(v["command"], *cmd);
        assert_eq!(v["per_client"].as_array().unwrap().len(), 2, "{cmd}");
        let returned = u(&v, "rows_returned");
        match *cmd {
            // Every row 0..400 exists: each get finds its row.
            "sequentialRead" | "randomRead" => {
                assert_eq!((returned, u(&v, "misses")), (400, 0), "{cmd}")
            }
            // Each client's scanner reads its 200 rows.
            "scan" => assert_eq!(returned, 400),
            // Up to 120 rows per scan (PageFilter), at least one.
            "randomSeekScan" => assert!((400..=400 * 120).contains(&returned), "{v}"),
            "scanRange10" => assert!((400..=4000).contains(&returned), "{v}"),
            // Random values never equal a stored one.
            "filterScan" => assert_eq!(returned, 0),
            _ => {}
        }
    }
    let v = pe_json(&[&data, "--rows=200", "--multiGet=7", "randomRead", "1"]);
    assert_eq!(u(&v, "rows_returned"), 200);
    // 28 full batches timed; the last 4 gets go out at takedown, untimed.
    assert_eq!(v["latency_us"]["count"].as_u64(), Some(28));
}

#[test]
fn reads_see_what_an_earlier_run_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let data = s(dir.path());
    let w = pe_json(&[&data, "--rows=300", "--presplit=3", "sequentialWrite", "1"]);
    assert_eq!(u(&w, "ops"), 300);
    assert_eq!(u(&w, "regions"), 3);
    let table = dir.path().join("data/default/TestTable");
    let regions = std::fs::read_dir(&table)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join(".regioninfo").exists())
        .count();
    assert_eq!(regions, 3);
    // Same key space: every random read hits; no load step.
    let o = cairn(&["pe", &data, "--rows=300", "randomRead", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(!t.contains("loading"), "{t}");
    assert!(t.contains("| rows found / missing | 300 / 0 |"), "{t}");
    assert!(
        t.contains("Finished RandomReadTest in") && t.contains("at offset 0 for 300 rows"),
        "{t}"
    );
    let v = pe_json(&[&data, "--rows=150", "scan", "2"]);
    assert_eq!(u(&v, "rows_returned"), 300);
    let offsets: Vec<u64> = v["per_client"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["offset"].as_u64().unwrap())
        .collect();
    assert_eq!(offsets, vec![0, 150]);
    // A wider key space than was written: the rows past 300 are misses.
    let v = pe_json(&[&data, "--rows=300", "sequentialRead", "2"]);
    assert_eq!((u(&v, "rows_returned"), u(&v, "misses")), (300, 300));
    // --filterAll: the server reads every row and returns none.
    let v = pe_json(&[&data, "--rows=300", "--filterAll", "scan", "1"]);
    assert_eq!(u(&v, "rows_returned"), 0);
}

/// `--blockEncoding=FAST_DIFF` makes the table's family FAST_DIFF: its store files are written
/// with encoded blocks, and every row reads back.
#[test]
fn fast_diff_tables_write_encoded_files_that_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let data = s(dir.path());
    let w = pe_json(&[
        &data,
        "--rows=2000",
        "--blockEncoding=FAST_DIFF",
        "sequentialWrite",
        "1",
    ]);
    assert_eq!(u(&w, "ops"), 2000);
    let mut files = Vec::new();
    let mut dirs = vec![dir.path().join("data/default/TestTable")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() && !name.starts_with('.') {
                dirs.push(p);
            } else if p.parent().and_then(|f| f.file_name()) == Some("info0".as_ref()) {
                files.push(p);
            }
        }
    }
    assert!(
        !files.is_empty(),
        "no store files under {}",
        dir.path().display()
    );
    for f in &files {
        let r = cairn_hfile::HFileReader::open(f, cairn_hfile::ReaderOptions::default()).unwrap();
        assert_eq!(
            r.data_block_encoding(),
            cairn_hfile::encoding::DataBlockEncoding::FastDiff,
            "{}",
            f.display()
        );
    }
    let v = pe_json(&[&data, "--rows=2000", "randomRead", "1"]);
    assert_eq!((u(&v, "rows_returned"), u(&v, "misses")), (2000, 0));
}

#[test]
fn read_on_an_empty_store_loads_first_and_temp_data_is_removed() {
    let o = cairn(&["pe", "--rows=100", "--latency", "randomRead", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("loading 200 rows with sequentialWrite"), "{t}");
    assert!(t.contains("| rows found / missing | 200 / 0 |"), "{t}");
    assert!(t.contains("client 1 latency (us)"), "{t}");
    assert!(t.contains("| rows per CPU-second |"), "{t}");
    let line = t.lines().find(|l| l.starts_with("| data |")).unwrap();
    assert!(line.contains("deleted at exit"), "{line}");
    let path = line
        .trim_start_matches("| data | ")
        .split(" (")
        .next()
        .unwrap();
    assert!(!Path::new(path).exists(), "{path} left behind");

    // --keep leaves the directory and says where.
    let o = cairn(&["pe", "--rows=50", "--keep", "sequentialWrite", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    let kept = t
        .lines()
        .find_map(|l| l.strip_prefix("cairn pe: data kept in "))
        .unwrap_or_else(|| panic!("{t}"));
    assert!(Path::new(kept).join("data/default/TestTable").is_dir());
    std::fs::remove_dir_all(kept).unwrap();
}

#[test]
fn json_has_the_report_fields() {
    let v = pe_json(&[
        "--rows=100",
        "--valueSize=10",
        "--writeToWAL=false",
        "--autoFlush=true",
        "--compress=GZ",
        "--bloomFilter=ROWCOL",
        "--blockSize=4096",
        "--inmemory",
        "--sampleRate=0.5",
        "--table=pe_t",
        "randomWrite",
        "2",
    ]);
    for k in [
        "wall_s",
        "rows_per_s",
        "rows_per_cpu_s",
        "sum_client_rows_per_s",
    ] {
        assert!(v[k].as_f64().is_some(), "{k} in {v}");
    }
    // Every other row of each client's 100.
    assert_eq!(u(&v, "ops"), 100);
    assert_eq!(v["table"], "pe_t");
    assert_eq!(u(&v, "total_rows"), 200);
    let lat = &v["latency_us"];
    for k in ["p50", "p75", "p95", "p99", "p99_9", "max", "count"] {
        assert!(lat[k].as_u64().is_some(), "latency {k} in {v}");
    }
    assert!(lat["p50"].as_u64() <= lat["max"].as_u64());
    assert!(v["cpu"]["user_s"].as_f64().is_some() && v["cpu"]["sys_s"].as_f64().is_some());
    let c = &v["per_client"][1];
    assert_eq!(c["offset"].as_u64(), Some(100));
    assert!(c["rows_per_s"].as_f64().is_some() && c["elapsed_ms"].as_u64().is_some());
}

#[test]
fn bad_options_are_named() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--blockEncoding=PREFIX_TREE", "sequentialWrite", "1"],
            "--blockEncoding=PREFIX_TREE: not supported",
        ),
        (
            &["--compress=LZO", "sequentialWrite", "1"],
            "--compress=LZO",
        ),
        (
            &["--bloomFilter=XYZ", "sequentialWrite", "1"],
            "--bloomFilter=XYZ",
        ),
        (&["--sampleRate=2", "randomRead", "1"], "--sampleRate=2"),
        (&["--rows=0", "randomRead", "1"], "--rows"),
        (&["--table=a/b", "sequentialWrite", "1"], "--table"),
        (
            &["--blockCacheSize=lots", "randomRead", "1"],
            "--blockCacheSize",
        ),
        (&["readEverything", "1"], "invalid value 'readEverything'"),
        (&["randomRead", "0"], "<NCLIENTS>"),
        (&["--rows=ten", "randomRead", "1"], "--rows"),
        (&["--frobnicate=1", "randomRead", "1"], "--frobnicate"),
    ];
    for (args, want) in cases {
        let mut all = vec!["pe"];
        all.extend_from_slice(args);
        let o = cairn(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let t = text(&o);
        assert!(t.contains(want), "{args:?}: wanted {want:?} in {t}");
    }
}

#[test]
fn auto_flush_false_buffers_puts_as_buffered_mutator_does() {
    let dir = tempfile::tempdir().unwrap();
    let data = s(dir.path());
    // PE's default: puts wait in a client buffer and go out in batches of --bufferSize bytes,
    // one WAL record each (one region).
    let v = pe_json(&[
        &data,
        "--rows=1000",
        "--valueSize=1000",
        "--bufferSize=100000",
        "sequentialWrite",
        "1",
    ]);
    assert_eq!(u(&v, "ops"), 1000);
    let records = u(&v, "wal_appends");
    // ~1.1 KB per put: ~90 puts per 100 KB batch, 11 or 12 batches with the final flush.
    assert!((9..=14).contains(&records), "{records} WAL records: {v}");
    // PE times every mutate() call, buffered or not, past --measureAfter (0: all rows but
    // the first, as PE's `i - startRow > measureAfter` has it).
    assert_eq!(v["latency_us"]["count"].as_u64(), Some(999));
    // --autoFlush=true: one put, one WAL record.
    let v = pe_json(&[
        &data,
        "--rows=300",
        "--valueSize=1000",
        "--autoFlush=true",
        "sequentialWrite",
        "1",
    ]);
    assert_eq!(u(&v, "wal_appends"), 300);
    // --multiPut batches only with --autoFlush=true, as in PE.
    let v = pe_json(&[
        &data,
        "--rows=300",
        "--autoFlush=true",
        "--multiPut=30",
        "sequentialWrite",
        "1",
    ]);
    assert_eq!(u(&v, "wal_appends"), 10);
    // Every buffered put landed: the next run reads all 1000 rows.
    let v = pe_json(&[&data, "--rows=1000", "sequentialRead", "1"]);
    assert_eq!((u(&v, "rows_returned"), u(&v, "misses")), (1000, 0));
}

#[test]
fn pe_refusals_are_pes() {
    // PE's validateParsedOpts: --multiPut without --autoFlush=true is refused.
    let o = cairn(&["pe", "--multiPut=10", "randomWrite", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("autoFlush must be true when multiPut is more than 0"),
        "{}",
        text(&o)
    );
    // -D names cairn pe does not read are warned about, once, and ignored, as every tool
    // does.
    let o = cairn(&[
        "pe",
        "-D",
        "unknown.key=1",
        "--rows=10",
        "sequentialWrite",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let warning = "cairn pe: ignoring -D properties cairn pe does not read: unknown.key";
    assert_eq!(text(&o).matches(warning).count(), 1, "{}", text(&o));
    let o = cairn(&[
        "pe",
        "-Dhbase.hstore.compaction.min=x",
        "sequentialWrite",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("hbase.hstore.compaction.min"),
        "{}",
        text(&o)
    );
    // PE's --size must be more than 1 (GB).
    let o = cairn(&["pe", "--size=1", "sequentialWrite", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("Size must be > 1"), "{}", text(&o));
}

#[test]
fn size_and_properties_as_pe_takes_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = s(dir.path());
    // --size with a unit: 100 KiB of 100-byte values is 1024 rows, 512 per client.
    let v = pe_json(&[
        &data,
        "--size=100KiB",
        "--valueSize=100",
        "-D",
        "hbase.hstore.compaction.min=5",
        "-D",
        "hfile.block.cache.size=8388608",
        "sequentialWrite",
        "2",
    ]);
    assert_eq!(u(&v, "total_rows"), 1024, "{v}");
    assert_eq!(u(&v, "rows_per_client"), 512, "{v}");
    assert_eq!(u(&v, "ops"), 1024, "{v}");
    // Size options take binary units everywhere.
    let v = pe_json(&[
        &data,
        "--rows=1024",
        "--blockSize=4K",
        "--bufferSize=64K",
        "--blockCacheSize=16M",
        "sequentialRead",
        "1",
    ]);
    assert_eq!((u(&v, "rows_returned"), u(&v, "misses")), (1024, 0), "{v}");
}

/// `--cacheBlocks=false` (PE's option, HBase's `setCacheBlocks(false)`): random reads,
/// multi-gets and scans read the table's data blocks without caching them; the same runs with
/// caching on fill the cache with them. Each run opens the store afresh, so the blocks its
/// report counts are the ones that run cached.
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

#[test]
fn cycles_measure_after_and_latency_threshold_as_pe_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = s(dir.path());
    // --cycles: each client runs its rows again; --measureAfter=N: latencies of rows past the
    // N-th of each client's range only (PE: `i - startRow > measureAfter`).
    let v = pe_json(&[
        &data,
        "--rows=50",
        "--valueSize=20",
        "--cycles=3",
        "--measureAfter=9",
        "sequentialWrite",
        "2",
    ]);
    assert_eq!(u(&v, "ops"), 2 * 50 * 3);
    assert_eq!(u(&v, "cycles"), 3);
    assert_eq!(v["latency_us"]["count"].as_u64(), Some(2 * 40 * 3));
    // --randomSleep of up to 30 ms per get, threshold 1 ms: the gets that slept 1 ms or
    // more are over it (29 of 30 sleeps, give or take a slow get), and say so.
    let v = pe_json(&[
        &data,
        "--rows=40",
        "--randomSleep=30",
        "--latencyThreshold=1",
        "randomRead",
        "1",
    ]);
    let over = u(&v, "replies_over_latency_threshold");
    assert!((25..=39).contains(&over), "{over} over the threshold: {v}");
    assert_eq!(u(&v, "latency_threshold_ms"), 1);
    // Without the sleep, a 10 s threshold is never reached.
    let v = pe_json(&[
        &data,
        "--rows=40",
        "--latencyThreshold=10000",
        "randomRead",
        "1",
    ]);
    assert_eq!(u(&v, "replies_over_latency_threshold"), 0);
}

#[test]
fn value_zipf_add_columns_split_policy_and_client_side_options() {
    let dir = tempfile::tempdir().unwrap();
    let data = s(dir.path());
    let v = pe_json(&[
        &data,
        "--rows=300",
        "--valueSize=500",
        "--valueZipf",
        "--splitPolicy=DisabledRegionSplitPolicy",
        "--oneCon=true",
        "--connCount=4",
        "--traceRate=0.5",
        "sequentialWrite",
        "1",
    ]);
    assert_eq!(u(&v, "ops"), 300);
    let notes = v["notes"].to_string();
    for c in ["--oneCon=true", "--connCount=4", "--traceRate=0.5"] {
        assert!(notes.contains(c), "{c} not noted: {notes}");
    }
    // The table got the split policy as its SPLIT_POLICY attribute.
    let tableinfo = std::fs::read_dir(dir.path().join("data/default/TestTable/.tabledesc"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".tableinfo")
        })
        .map(|p| std::fs::read(p).unwrap())
        .unwrap();
    let text_of = String::from_utf8_lossy(&tableinfo);
    assert!(text_of.contains("SPLIT_POLICY") && text_of.contains("DisabledRegionSplitPolicy"));
    // Zipf sizes: most values are far below --valueSize, so the store holds much less than
    // 300 x 500 bytes of values.
    let r = pe_json(&[
        &data,
        "--rows=300",
        "--addColumns=false",
        "sequentialRead",
        "1",
    ]);
    assert_eq!(u(&r, "rows_returned"), 300);
    let mut stored = 0;
    for e in std::fs::read_dir(dir.path().join("data/default/TestTable")).unwrap() {
        let fam = e.unwrap().path().join("info0");
        if let Ok(files) = std::fs::read_dir(fam) {
            for f in files {
                stored += f.unwrap().metadata().unwrap().len();
            }
        }
    }
    assert!(
        stored > 0 && stored < 300 * 500 / 2,
        "{stored} bytes stored"
    );
}

#[test]
fn what_cairn_cannot_do_is_refused_by_name() {
    for (args, says) in [
        (
            &["--valueRandom", "--valueZipf"][..],
            "Either valueRandom or valueZipf",
        ),
        (
            &["--replicas=2"][..],
            "--replicas=2: region replicas are not supported",
        ),
        (
            &["--inmemoryCompaction=BASIC"][..],
            "in-memory compaction is not supported",
        ),
        (
            &["--encryption=AES"][..],
            "encryption at rest is not supported",
        ),
        (&["--usetags=true"][..], "--usetags"),
        (
            &["--splitPolicy=KeyPrefixRegionSplitPolicy"][..],
            "--splitPolicy=KeyPrefix",
        ),
        (&["--cycles=0"][..], "--cycles must be at least 1"),
    ] {
        let mut all = vec!["pe", "--rows=10"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["sequentialWrite", "1"]);
        let o = cairn(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
    }
}
