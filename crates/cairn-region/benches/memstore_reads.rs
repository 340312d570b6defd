//! Reads served from the memstore alone (nothing flushed): full scans, random gets and
//! 100-row multi-gets over ROWS rows of VALUE_SIZE-byte values in one region, as rows per
//! second and this process's CPU per row. Each workload runs ROUNDS times, interleaved.
//!
//! `cargo bench -p cairn-region --bench memstore_reads`. Environment: `CAIRN_BENCH_ROWS`
//! (200,000), `CAIRN_BENCH_VALUE_SIZE` (1024), `CAIRN_BENCH_ROUNDS` (3).

mod common;
use common::{cpu_seconds, env_u64};

use std::time::Instant;

use cairn_region::{
    ColumnFamilyDescriptor, Durability, Get, Put, RegionServer, Scan, ServerConfig,
    TableDescriptor, TableName,
};

fn row(i: u64) -> String {
    format!("user{i:010}")
}

/// Rows per second and CPU microseconds per row of `f`, which returns the rows it read.
fn measure(f: impl FnOnce() -> u64) -> (f64, f64) {
    let cpu = cpu_seconds();
    let started = Instant::now();
    let rows = f() as f64;
    let wall = started.elapsed().as_secs_f64();
    (rows / wall, (cpu_seconds() - cpu) / rows * 1e6)
}

fn main() {
    let rows = env_u64("CAIRN_BENCH_ROWS", 200_000);
    let value_size = env_u64("CAIRN_BENCH_VALUE_SIZE", 1024) as usize;
    let rounds = env_u64("CAIRN_BENCH_ROUNDS", 3);
    let dir = tempfile::tempdir().unwrap();
    let mut config = ServerConfig::new(dir.path());
    config.background = false;
    let s = RegionServer::open(config).unwrap();
    let t = TableName::parse("bench").unwrap();
    let mut d = TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f"));
    d.memstore_flush_size = Some(1 << 40);
    s.create_table(d, &[]).unwrap();
    let value = vec![b'v'; value_size];
    let mut x = 0x9e3779b97f4a7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    // Inserted in random order, as the skip list then spreads its nodes over memory.
    let mut order: Vec<u64> = (0..rows).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    for chunk in order.chunks(1000) {
        let puts: Vec<Put> = chunk
            .iter()
            .map(|&i| {
                Put::new(row(i))
                    .add("f", "q", &value)
                    .durability(Durability::SkipWal)
            })
            .collect();
        s.put_many(&t, &puts).unwrap();
    }
    eprintln!("memstore_reads: {rows} rows x {value_size} B in the memstore, {rounds} rounds");
    let lookups = (rows / 4).max(1000);
    let mut results: Vec<(&str, Vec<(f64, f64)>)> = vec![
        ("full scan", vec![]),
        ("random gets", vec![]),
        ("100-row multi-gets", vec![]),
    ];
    for _ in 0..rounds {
        results[0].1.push(measure(|| {
            let mut n = 0u64;
            for r in s.scanner(&t, Scan::new()).unwrap() {
                n += r.unwrap().len() as u64;
            }
            n
        }));
        results[1].1.push(measure(|| {
            for _ in 0..lookups {
                assert_eq!(s.get(&t, Get::new(row(next() % rows))).unwrap().len(), 1);
            }
            lookups
        }));
        results[2].1.push(measure(|| {
            for _ in 0..lookups / 100 {
                let mut gets: Vec<Get> = (0..100).map(|_| Get::new(row(next() % rows))).collect();
                gets.sort_by(|a, b| a.row.cmp(&b.row));
                assert_eq!(s.get_many(&t, gets).unwrap().len(), 100);
            }
            lookups / 100 * 100
        }));
    }
    println!("| workload | rows/s (best) | CPU µs per row (best) | CPU µs per row (median) |");
    println!("|---|---|---|---|");
    for (name, mut r) in results {
        let best_rate = r.iter().map(|x| x.0).fold(0.0, f64::max);
        r.sort_by(|a, b| a.1.total_cmp(&b.1));
        println!(
            "| {name} | {best_rate:.0} | {:.3} | {:.3} |",
            r[0].1,
            r[r.len() / 2].1
        );
    }
    s.close().unwrap();
}
