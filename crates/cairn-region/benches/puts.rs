//! Sequential puts into an embedded `RegionServer`, in the shape of HBase PE's
//! `sequentialWrite`: row keys are PE's `format(i)` (the row number zero-padded to 26 digits),
//! one column `info0:0` (PE's `FAMILY_ZERO` / `COLUMN_ZERO`), a value of VALUE_SIZE bytes made
//! like PE's `generateData` (runs of 8 equal random capitals), one `put` per row. One table,
//! one family, one region, the default 128 MiB flush size, background flushes on.
//!
//! Cases: durability SYNC_WAL (HBase's default), ASYNC_WAL and FSYNC_WAL, from 1 and 2 threads.
//! With T threads each writes its own contiguous range of ROWS / T rows (PE `--nomapred` with
//! T clients, but the total kept at ROWS). Each case gets a fresh server in a fresh directory.
//! Reported per case: puts/s (wall time from the first put to the last), per-put latency
//! percentiles, and user + system CPU seconds of the whole process (background flusher and
//! WAL syncer included) per million puts, from getrusage.
//!
//! `cargo bench -p cairn-region --bench puts`. Environment:
//! - `CAIRN_BENCH_ROWS` rows per case (default 1,000,000; `CAIRN_BENCH_QUICK=1`: 20,000)
//! - `CAIRN_BENCH_FSYNC_ROWS` rows for FSYNC_WAL cases, which pay an fdatasync per put or
//!   per group commit (default 5,000; quick: 200)
//! - `CAIRN_BENCH_VALUE_SIZE` (default 100, db_bench's fillseq default)
//! - `CAIRN_BENCH_DURABILITY` comma list (default `SYNC_WAL,ASYNC_WAL,FSYNC_WAL`)
//! - `CAIRN_BENCH_THREADS` comma list (default `1,2`)
//! - `CAIRN_BENCH_DIR` where the temporary server directories go (default: the system's)
//!
//! Prints a Markdown table, and one `puts-result key=value ...` line per case, the format
//! `bench/rocksdb-peer fillseq` prints too, which `bench/puts-vs-rocksdb.sh` reads.

// As the `cairn` binary does: glibc's malloc stalls writers for tens of milliseconds while a
// flush frees a 128 MiB memstore from another thread.
/// `mi_option_purge_delay` in mimalloc v3's `mi_option_e` (libmimalloc-sys does not name it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use common::{cpu_seconds, env_u64};

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use cairn_region::{
    ColumnFamilyDescriptor, Durability, Put, RegionError, RegionServer, ServerConfig,
    TableDescriptor, TableName,
};
use hdrhistogram::Histogram;

/// PE's `ROW_LENGTH`.
const ROW_LENGTH: usize = 26;
/// PE's `FAMILY_ZERO` (`FAMILY_NAME_BASE + 0`).
const FAMILY: &[u8] = b"info0";
/// PE's `COLUMN_ZERO`.
const QUALIFIER: &[u8] = b"0";

/// PE's `format(long)`: the number, zero-padded to `ROW_LENGTH` digits.
fn pe_row(i: u64, row: &mut [u8; ROW_LENGTH]) {
    let mut d = i;
    for b in row.iter_mut().rev() {
        *b = b'0' + (d % 10) as u8;
        d /= 10;
    }
}

/// PE's `generateData`: runs of 8 equal random capitals (xorshift instead of
/// `ThreadLocalRandom`, so every engine and run writes the same bytes).
fn pe_value(x: &mut u64, value: &mut [u8]) {
    for chunk in value.chunks_mut(8) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        chunk.fill(b'A' + (*x % 26) as u8);
    }
}

#[derive(Clone, Copy, Debug)]
struct Case {
    durability: Durability,
    threads: usize,
    rows: u64,
}

struct Outcome {
    case: Case,
    wall: Duration,
    cpu: f64,
    latency: Histogram<u64>,
    /// Puts refused with RegionTooBusy (memstore over its blocking limit) and retried.
    busy_retries: u64,
    wal_batches: u64,
    wal_fsyncs: u64,
    /// WAL segments made from a recycled file.
    wal_reused: u64,
    flushes: u64,
}

fn parse_durability(s: &str) -> Durability {
    Durability::ALL
        .into_iter()
        .find(|d| d.name().eq_ignore_ascii_case(s.trim()))
        .unwrap_or_else(|| panic!("unknown durability {s:?}"))
}

fn run(case: Case, value_size: usize) -> Outcome {
    let base = std::env::var_os("CAIRN_BENCH_DIR");
    let dir = match &base {
        Some(b) => tempfile::tempdir_in(b),
        None => tempfile::tempdir(),
    }
    .expect("temporary directory");
    let server = RegionServer::open(ServerConfig::new(dir.path())).expect("open server");
    let table = TableName::parse("TestTable").expect("table name");
    server
        .create_table(
            TableDescriptor::new(table.clone()).with_family(ColumnFamilyDescriptor::new(FAMILY)),
            &[],
        )
        .expect("create table");

    let start = Arc::new(Barrier::new(case.threads + 1));
    let per_thread = case.rows / case.threads as u64;
    let handles: Vec<_> = (0..case.threads)
        .map(|t| {
            let (server, table, start) = (server.clone(), table.clone(), start.clone());
            let first = t as u64 * per_thread;
            let last = if t + 1 == case.threads {
                case.rows
            } else {
                first + per_thread
            };
            std::thread::spawn(move || {
                let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
                let mut busy = 0u64;
                let mut row = [0u8; ROW_LENGTH];
                let mut value = vec![0u8; value_size];
                let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (t as u64 + 1);
                start.wait();
                for i in first..last {
                    pe_row(i, &mut row);
                    pe_value(&mut x, &mut value);
                    let t0 = Instant::now();
                    let put = Put::new(row)
                        .add(FAMILY, QUALIFIER, &value)
                        .durability(case.durability);
                    loop {
                        match server.put(&table, &put) {
                            Ok(()) => break,
                            Err(RegionError::RegionTooBusy { .. }) => {
                                busy += 1;
                                std::thread::sleep(Duration::from_millis(1));
                            }
                            Err(e) => panic!("put {i}: {e}"),
                        }
                    }
                    hist.saturating_record(t0.elapsed().as_nanos() as u64);
                }
                (hist, busy)
            })
        })
        .collect();
    start.wait();
    let (cpu0, t0) = (cpu_seconds(), Instant::now());
    let mut latency = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
    let mut busy_retries = 0;
    for h in handles {
        let (hist, busy) = h.join().expect("writer thread");
        latency.add(hist).unwrap();
        busy_retries += busy;
    }
    let (wall, cpu) = (t0.elapsed(), cpu_seconds() - cpu0);
    let wal = server.wal().stats();
    let flushes = server
        .region_metrics()
        .iter()
        .flat_map(|(_, m)| m.iter())
        .filter(|(k, _)| *k == "flushesCount")
        .map(|(_, v)| *v)
        .sum();
    server.close().expect("close");
    drop(server);
    Outcome {
        case,
        wall,
        cpu,
        latency,
        busy_retries,
        wal_batches: wal.batches,
        wal_fsyncs: wal.fsyncs,
        wal_reused: wal.segments_reused,
        flushes,
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

fn main() {
    // The `cairn` binary's allocator settings, so the bench measures what `cairn serve` does:
    // 2 MiB pages for the memstore's memory (a fresh 128 MiB memstore otherwise takes a page
    // fault, and a zeroed 4 KiB page, every few puts), and freed memory given back after 1 s
    // (kept for good, the server's resident set grew past its cache and memstore bounds).
    // mimalloc's own MIMALLOC_LARGE_OS_PAGES and MIMALLOC_PURGE_DELAY variables win, as they
    // do for `cairn`.
    // SAFETY: sets process-wide allocator options; no pointers are involved.
    unsafe {
        if std::env::var_os("MIMALLOC_LARGE_OS_PAGES").is_none() {
            libmimalloc_sys::mi_option_set_enabled(libmimalloc_sys::mi_option_large_os_pages, true);
        }
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 1000);
        }
    };
    // `cargo test --benches` / `cargo bench -- --list` must not run the benchmark.
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    let quick = std::env::var("CAIRN_BENCH_QUICK").is_ok_and(|v| v == "1");
    let rows = env_u64("CAIRN_BENCH_ROWS", if quick { 20_000 } else { 1_000_000 });
    let fsync_rows = env_u64("CAIRN_BENCH_FSYNC_ROWS", if quick { 200 } else { 5_000 });
    let value_size = env_u64("CAIRN_BENCH_VALUE_SIZE", 100) as usize;
    let durabilities: Vec<Durability> = std::env::var("CAIRN_BENCH_DURABILITY")
        .unwrap_or_else(|_| "SYNC_WAL,ASYNC_WAL,FSYNC_WAL".into())
        .split(',')
        .map(parse_durability)
        .collect();
    let threads: Vec<usize> = std::env::var("CAIRN_BENCH_THREADS")
        .unwrap_or_else(|_| "1,2".into())
        .split(',')
        .map(|t| t.trim().parse().expect("CAIRN_BENCH_THREADS: numbers"))
        .collect();

    let mut outcomes = Vec::new();
    for &durability in &durabilities {
        for &threads in &threads {
            let rows = if durability == Durability::FsyncWal {
                fsync_rows
            } else {
                rows
            };
            let case = Case {
                durability,
                threads,
                rows,
            };
            let o = run(case, value_size);
            let q = |p: f64| us(o.latency.value_at_quantile(p));
            println!(
                "puts-result engine=cairn durability={} threads={} rows={} value_size={value_size} \
                 wall_s={:.4} cpu_s={:.4} mean_us={:.2} p50_us={:.2} p90_us={:.2} p99_us={:.2} p999_us={:.2} \
                 max_us={:.2} busy_retries={} wal_batches={} wal_fsyncs={} wal_reused={} flushes={}",
                durability.name(),
                threads,
                rows,
                o.wall.as_secs_f64(),
                o.cpu,
                o.latency.mean() / 1000.0,
                q(0.5),
                q(0.9),
                q(0.99),
                q(0.999),
                us(o.latency.max()),
                o.busy_retries,
                o.wal_batches,
                o.wal_fsyncs,
                o.wal_reused,
                o.flushes,
            );
            outcomes.push(o);
        }
    }

    println!();
    println!(
        "Sequential puts (PE sequentialWrite shape: 26-digit rows, one column, {value_size}-byte values), \
         embedded RegionServer, one region, 128 MiB flush size, background flushes"
    );
    println!();
    println!("| durability | threads | puts | puts/s | p50 µs | p99 µs | p99.9 µs | max µs | CPU s per M puts | puts per WAL batch | flushes |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for o in &outcomes {
        let n = o.case.rows as f64;
        let q = |p: f64| us(o.latency.value_at_quantile(p));
        println!(
            "| {} | {} | {} | {:.0} | {:.1} | {:.1} | {:.1} | {:.0} | {:.2} | {} | {} |",
            o.case.durability.name(),
            o.case.threads,
            o.case.rows,
            n / o.wall.as_secs_f64(),
            q(0.5),
            q(0.99),
            q(0.999),
            us(o.latency.max()),
            o.cpu / n * 1e6,
            if o.wal_batches > 0 {
                format!("{:.2}", n / o.wal_batches as f64)
            } else {
                "—".into()
            },
            o.flushes,
        );
        if o.busy_retries > 0 {
            println!(
                "|  ↳ {} puts refused with RegionTooBusy and retried after 1 ms | | | | | | | | | | |",
                o.busy_retries
            );
        }
    }
}
