//! Random point lookups through the HFile reader with everything cached, against RocksDB on the
//! same data in the same run: 1 M cells × 1 KiB, rows `row-%010d`; one warm pass, then random
//! gets on one thread; gets per CPU-second (user + system, the whole process).
//!
//! `cargo bench -p cairn-blockcache --bench cached_gets`. The RocksDB side runs if
//! `bench/rocksdb-peer` was built (`cargo build --release --manifest-path
//! bench/rocksdb-peer/Cargo.toml`; not in CI: RocksDB takes ~40 CPU-minutes to build).
//! `CAIRN_BENCH_CELLS` / `CAIRN_BENCH_GETS` change the size.

use std::path::Path;
use std::sync::Arc;

use cairn_blockcache::{
    BlockCacheConfig, BucketCacheConfig, CachedBlockSource, CombinedBlockCache,
};
use cairn_cell::KeyValue;
use cairn_hfile::{BloomType, HFileReader, HFileWriter, ReaderOptions, WriterOptions};

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct we pass; RUSAGE_SELF is always valid.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(r.ru_utime) + t(r.ru_stime)
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn key_sequence(gets: u64, cells: u64) -> Vec<Vec<u8>> {
    let mut r = 0x2545_F491_4F6C_DD1Du64;
    (0..gets)
        .map(|_| {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            format!("row-{:010}", r % cells).into_bytes()
        })
        .collect()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let cells = env_u64("CAIRN_BENCH_CELLS", 1_000_000);
    let gets = env_u64("CAIRN_BENCH_GETS", 1_000_000);
    let value_size = 1024usize;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gets.hfile");
    {
        let file =
            std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).unwrap());
        let mut w = HFileWriter::new(
            file,
            "gets.hfile",
            WriterOptions {
                bloom_type: BloomType::Row,
                ..Default::default()
            },
        )
        .unwrap();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut value = vec![0u8; value_size];
        for i in 0..cells {
            for chunk in value.chunks_mut(8) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
            }
            w.append(
                &KeyValue::put(format!("row-{i:010}").as_bytes(), b"f", b"q", 1, &value)
                    .unwrap()
                    .as_cell(),
            )
            .unwrap();
        }
        w.finish().unwrap();
    }
    let file_len = std::fs::metadata(&path).unwrap().len();
    let cache = Arc::new(
        CombinedBlockCache::new(BlockCacheConfig {
            l1_size: 256 << 20,
            l2: Some(BucketCacheConfig {
                capacity: file_len * 3 / 2 + (64 << 20),
                writer_queue_len: 1024,
                ..Default::default()
            }),
        })
        .unwrap(),
    );
    let r = {
        let cache = cache.clone();
        HFileReader::open(&path, ReaderOptions::default())
            .unwrap()
            .with_block_source(move |f| Arc::new(CachedBlockSource::new(cache, "gets.hfile", f)))
    };
    // Warm: every row once, letting the writers keep up.
    for i in 0..cells {
        r.get(format!("row-{i:010}").as_bytes(), b"f", b"q")
            .unwrap()
            .unwrap();
        if i.is_multiple_of(512) {
            cache.l2().unwrap().wait_for_writes();
        }
    }
    cache.l2().unwrap().wait_for_writes();
    let (_, l2_before, _) = cache.stats();
    let keys = key_sequence(gets, cells);
    let (cpu0, t0) = (cpu_seconds(), std::time::Instant::now());
    let mut sum = 0u64;
    for k in &keys {
        // Borrow the value from the cached block, as RocksDB's get_pinned does.
        sum += r
            .get_with(k, b"f", b"q", |c| c.value[0] as u64)
            .unwrap()
            .unwrap();
    }
    let (cpu, wall) = (cpu_seconds() - cpu0, t0.elapsed().as_secs_f64());
    std::hint::black_box(sum);
    let (_, l2_after, _) = cache.stats();
    let misses = l2_after.unwrap().miss_count - l2_before.unwrap().miss_count;
    let cairn_cpu = gets as f64 / cpu;

    let peer = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench/rocksdb-peer/target/release/rocksdb-peer");
    let rocks = peer.exists().then(|| {
        let db = dir.path().join("rocksdb");
        let out = std::process::Command::new(&peer)
            .args([
                db.to_str().unwrap(),
                &cells.to_string(),
                &value_size.to_string(),
                &gets.to_string(),
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let pick = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(k))
                .and_then(|v| v.trim().parse::<f64>().ok())
                .unwrap()
        };
        (pick("gets_per_cpu_second "), pick("gets_per_second "))
    });

    let rss = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map(|kib| kib * 1024)
        .unwrap_or(0);
    let (l1s, l2s, _) = cache.stats();
    let configured = l1s.capacity + l2s.as_ref().map_or(0, |s| s.capacity);
    let held = l1s.size + l2s.as_ref().map_or(0, |s| s.size);
    drop(keys);
    println!();
    println!("Random point gets, {cells} cells x {value_size} B, everything cached, 1 thread, {gets} gets ({misses} cache misses during the measurement)");
    println!(
        "Memory: resident {:.0} MiB for caches configured at {:.0} MiB (L1 + L2) holding {:.0} MiB of blocks: {:.2}x the configured size",
        rss as f64 / 1048576.0,
        configured as f64 / 1048576.0,
        held as f64 / 1048576.0,
        rss as f64 / configured as f64
    );
    println!();
    println!("| engine | gets/s | gets per CPU-second | vs RocksDB (per CPU-second) |");
    println!("|---|---|---|---|");
    let ratio = rocks.map_or("—".to_string(), |(rc, _)| {
        format!("{:.2}x", cairn_cpu / rc)
    });
    println!(
        "| cairn (HFile reader, L1 + L2 offheap) | {:.0} | {:.0} | {ratio} |",
        gets as f64 / wall,
        cairn_cpu
    );
    match rocks {
        Some((rc, rw)) => println!(
            "| RocksDB 10.4 (rust-rocksdb 0.24, LRU cache, bloom) | {rw:.0} | {rc:.0} | 1.00x |"
        ),
        None => println!("| RocksDB | not run: build bench/rocksdb-peer first | | |"),
    }
}
