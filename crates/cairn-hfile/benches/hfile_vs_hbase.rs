//! cairn's HFile writer and verified scanner against HBase 2.6.1's on the same workload, in
//! the same run: 1 M cells of 1 KiB (rows `row-%010d`, family `f`, qualifier `q`), CRC32C per
//! 16 KiB, 64 KiB blocks, no compression, ROW Bloom filter. Files live in the page cache; each
//! side runs a warm-up round, then `ROUNDS` measured rounds, and the medians are compared.
//! The checksum share is the scan time saved by turning verification off.
//!
//! `cargo bench -p cairn-hfile --bench hfile_vs_hbase` (HBase's side needs
//! `mvn -f interop/hbase/pom.xml package`). `CAIRN_BENCH_CELLS` and `CAIRN_BENCH_ROUNDS`
//! change the size.

#[path = "../tests/support/hbase.rs"]
mod hbase;

use std::io::BufWriter;
use std::path::Path;
use std::time::Instant;

use cairn_hfile::{BloomType, HFileReader, HFileWriter, KeyValue, ReaderOptions, WriterOptions};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn write(path: &Path, cells: usize, value_size: usize) {
    let options = WriterOptions {
        bloom_type: BloomType::Row,
        ..Default::default()
    };
    let file = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let mut w = HFileWriter::new(file, path.display().to_string(), options).unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut value = vec![0u8; value_size];
    for i in 0..cells {
        for chunk in value.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
        }
        let kv = KeyValue::put(format!("row-{i:010}").as_bytes(), b"f", b"q", 1, &value)
            .unwrap()
            .with_sequence_id(i as u64);
        w.append(&kv.as_cell()).unwrap();
    }
    w.finish().unwrap();
}

fn scan(path: &Path, verify: bool) -> u64 {
    let r = HFileReader::open(
        path,
        ReaderOptions {
            verify_checksums: verify,
            ..Default::default()
        },
    )
    .unwrap();
    let mut s = r.scanner();
    let mut sum = 0u64;
    let mut more = s.seek_to_first().unwrap();
    while more {
        let c = s.cell().unwrap();
        sum += c.value[0] as u64 + c.value.len() as u64;
        more = s.next().unwrap();
    }
    sum
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let cells = env_usize("CAIRN_BENCH_CELLS", 1_000_000);
    let rounds = env_usize("CAIRN_BENCH_ROUNDS", 3).max(1);
    let value_size = 1024;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cairn-bench.hfile");

    let (mut w, mut s, mut s_off) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..=rounds {
        let t = Instant::now();
        write(&path, cells, value_size);
        let write_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        std::hint::black_box(scan(&path, true));
        let scan_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        std::hint::black_box(scan(&path, false));
        let scan_off = t.elapsed().as_secs_f64();
        if round > 0 {
            w.push(write_s);
            s.push(scan_s);
            s_off.push(scan_off);
        }
    }
    let file_len = std::fs::metadata(&path).unwrap().len();
    std::fs::remove_file(&path).unwrap();
    let (cw, cs, cs_off) = (median(w), median(s), median(s_off));

    let hbase = hbase::classpath().map(|cp| {
        let out = hbase::java(
            &cp,
            "HFileBench",
            &[
                dir.path().to_str().unwrap(),
                &cells.to_string(),
                &value_size.to_string(),
                &rounds.to_string(),
            ],
        );
        assert!(
            out.status.success(),
            "HBase bench failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let pick = |what: &str| {
            median(
                text.lines()
                    .filter_map(|l| l.strip_prefix(what))
                    .map(|v| v.trim().parse().unwrap())
                    .collect(),
            )
        };
        (pick("write "), pick("scan "))
    });

    let rate = |s: f64| cells as f64 / s / 1e6;
    println!();
    println!(
        "HFile write and verified full scan, {cells} cells x {value_size} B ({:.0} MiB file), median of {rounds} rounds",
        file_len as f64 / 1048576.0
    );
    println!();
    println!("| operation | cairn (M cells/s) | HBase 2.6.1 (M cells/s) | cairn / HBase |");
    println!("|---|---|---|---|");
    let row = |name: &str, c: f64, h: Option<f64>| match h {
        Some(h) => println!(
            "| {name} | {:.2} | {:.2} | {:.2}x |",
            rate(c),
            rate(h),
            h / c
        ),
        None => println!("| {name} | {:.2} | not run (no HBase jars) | — |", rate(c)),
    };
    row("write", cw, hbase.map(|h| h.0));
    row("scan, checksums verified", cs, hbase.map(|h| h.1));
    println!();
    println!(
        "cairn checksum share of the verified scan: {:.1}% (scan with verification {:.3} s, without {:.3} s)",
        ((cs - cs_off) / cs * 100.0).max(0.0),
        cs,
        cs_off
    );
}
