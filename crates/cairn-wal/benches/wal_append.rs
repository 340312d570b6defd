//! WAL append throughput: edits of one cell with a 100-byte value, appended with `SYNC_WAL`
//! (a copy into the mapped file, no system call) and `FSYNC_WAL` (fdatasync per group
//! commit), from one thread and from four (where group commit batches the fdatasyncs).
//!
//! `cargo bench -p cairn-wal --bench wal_append` prints criterion's report (throughput in
//! elements/s = appends/s) and then a Markdown table of appends/s and edits per batch from a
//! fixed-length run of each case. `CAIRN_BENCH_QUICK=1` shortens every measurement (CI smoke
//! runs).

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use cairn_wal::{Durability, KeyValue, ServerName, Wal, WalEdit, WalLocation, WalOptions};
use criterion::{BenchmarkId, Criterion, Throughput};

const CASES: [(Durability, usize); 4] = [
    (Durability::SyncWal, 1),
    (Durability::SyncWal, 4),
    (Durability::FsyncWal, 1),
    (Durability::FsyncWal, 4),
];

fn bench_edit(thread: usize) -> WalEdit {
    let region = format!("bench-region-{thread}").into_bytes();
    WalEdit::new(
        region,
        b"bench".to_vec(),
        1,
        1_700_000_000_000,
        vec![
            KeyValue::put(b"row-000000000001", b"f", b"qualifier", 1, &[0x5A; 100])
                .expect("cell")
                .with_sequence_id(1),
        ],
    )
}

fn open(dir: &Path) -> Wal {
    let loc = WalLocation::new(
        dir,
        ServerName::parse("localhost,16020,1").expect("server name"),
    );
    // Archived files go at once, so long runs do not fill the disk.
    let options = WalOptions {
        archive_ttl: Duration::ZERO,
        ..WalOptions::default()
    };
    Wal::open(&loc, options, |_| Ok(())).expect("open").0
}

/// `per_thread` appends from each of `threads` threads; returns the wall time.
fn run(wal: &Wal, durability: Durability, threads: usize, per_thread: u64) -> Duration {
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || {
                let mut edit = bench_edit(t);
                for i in 0..per_thread {
                    edit.sequence_id = i + 1;
                    wal.append(black_box(&edit), durability).expect("append");
                }
            });
        }
    });
    let elapsed = start.elapsed();
    // Retire rolled files so long runs do not fill the disk.
    for t in 0..threads {
        wal.mark_flushed(&bench_edit(t).region, u64::MAX)
            .expect("mark_flushed");
    }
    elapsed
}

fn bench(c: &mut Criterion, quick: bool) {
    let dir = tempfile::tempdir().expect("temp dir");
    let wal = open(dir.path());
    let mut g = c.benchmark_group("wal_append");
    if quick {
        g.warm_up_time(Duration::from_millis(100))
            .measurement_time(Duration::from_millis(300))
            .sample_size(10);
    } else {
        g.measurement_time(Duration::from_secs(4)).sample_size(20);
    }
    for (durability, threads) in CASES {
        g.throughput(Throughput::Elements(threads as u64));
        g.bench_function(
            BenchmarkId::new(durability.name(), format!("{threads}_threads")),
            |b| b.iter_custom(|iters| run(&wal, durability, threads, iters)),
        );
    }
    g.finish();
    wal.close().expect("close");
}

/// Appends/s and batching from one fixed-length run per case, for the summary table.
fn print_table(quick: bool) {
    let length = if quick {
        Duration::from_millis(200)
    } else {
        Duration::from_secs(2)
    };
    println!("\n| durability | threads | appends/s | edits per batch | fdatasyncs/s |");
    println!("|---|---:|---:|---:|---:|");
    for (durability, threads) in CASES {
        let dir = tempfile::tempdir().expect("temp dir");
        let wal = open(dir.path());
        let (mut appends, mut elapsed) = (0u64, Duration::ZERO);
        let mut chunk = 64u64;
        while elapsed < length {
            elapsed += run(&wal, durability, threads, chunk);
            appends += chunk * threads as u64;
            chunk = (chunk * 2).min(20_000);
        }
        let stats = wal.stats();
        let secs = elapsed.as_secs_f64();
        // Only FSYNC_WAL appends are batched (one fdatasync per group commit).
        let per_batch = if stats.batches == 0 {
            "-".to_string()
        } else {
            format!("{:.2}", stats.appends as f64 / stats.batches as f64)
        };
        println!(
            "| {durability} | {threads} | {:.0} | {per_batch} | {:.0} |",
            appends as f64 / secs,
            stats.fsyncs as f64 / secs,
        );
        wal.close().expect("close");
    }
}

fn main() {
    let quick = std::env::var_os("CAIRN_BENCH_QUICK").is_some();
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, quick);
    c.final_summary();
    print_table(quick);
}
