//! RocksDB as cairn's peer in two workloads.
//!
//! `rocksdb-peer DIR CELLS VALUE_SIZE GETS` — cached point lookups: CELLS keys `row-%010d` with
//! VALUE_SIZE-byte values, loaded, compacted, read once to warm a block cache that holds
//! everything, then GETS random point lookups on one thread. Prints `gets_per_cpu_second N` and
//! `gets_per_second N`.
//!
//! `rocksdb-peer fillseq DIR ROWS VALUE_SIZE THREADS SYNC` — sequential puts, db_bench's
//! `fillseq` with the keys and values of HBase PE's `sequentialWrite` (as cairn-region's `puts`
//! bench writes them): row `i` is `i` zero-padded to 26 digits, the value VALUE_SIZE bytes of
//! runs of 8 equal random capitals; one `put` per row; THREADS threads each write their own
//! contiguous range of ROWS / THREADS rows. The WAL is on; SYNC is `true` (`WriteOptions::sync`:
//! fdatasync before returning, HBase's FSYNC_WAL) or `false` (written to the OS before
//! returning, survives a process crash: HBase's SYNC_WAL). Every other option is RocksDB's
//! default (only `create_if_missing` is set). Prints one `puts-result key=value ...` line in the
//! format of cairn-region's `puts` bench: wall and user + system CPU time of the whole process
//! from the first put to the last, per-put latency percentiles.
//!
//! `rocksdb-peer pe DIR ROWS VALUE_SIZE GETS SCANS BATCH RANGE WORKLOADS` — the read workloads of
//! `bench/report.sh`, with HBase PE's keys and values (as `fillseq`): ROWS rows are loaded,
//! flushed, compacted into one level and read once so the block cache (4 GiB) holds every
//! block; then each workload of the comma-separated WORKLOADS (`get:T`, `multiget:T`, `scan:T`,
//! T client threads) runs: GETS random point lookups (`get_pinned`), GETS / BATCH multi-gets of
//! BATCH random rows (`batched_multi_get_cf`, pinned values), or SCANS iterators over RANGE rows
//! from a random row, touching every value and returning nothing (PE's `scanRange10000
//! --filterAll`). Operations are split evenly over the threads. Prints one `bench-result
//! key=value ...` line per workload: operations, rows read, wall time, the process's user and
//! system CPU, per-operation latency percentiles (µs).

fn cpu_user_sys() -> (f64, f64) {
    // SAFETY: getrusage writes into the zeroed struct we pass; RUSAGE_SELF is always valid.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (t(r.ru_utime), t(r.ru_stime))
}

fn cpu_seconds() -> f64 {
    let (u, s) = cpu_user_sys();
    u + s
}

type Hist = hdrhistogram::Histogram<u64>;

fn new_hist() -> Hist {
    hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap()
}

/// xorshift64: each client thread's random rows.
fn next_random(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// The `pe` mode: load, warm, then the read workloads (see the module comment).
fn pe(args: &[String]) {
    let dir = &args[0];
    let rows: u64 = args[1].parse().unwrap();
    let value_size: usize = args[2].parse().unwrap();
    let gets: u64 = args[3].parse().unwrap();
    let scans: u64 = args[4].parse().unwrap();
    let batch: u64 = args[5].parse().unwrap();
    let range: u64 = args[6].parse().unwrap();
    let workloads = &args[7];

    let mut block = rocksdb::BlockBasedOptions::default();
    let cache = rocksdb::Cache::new_lru_cache(4 << 30);
    block.set_block_cache(&cache);
    block.set_bloom_filter(10.0, false);
    block.set_cache_index_and_filter_blocks(true);
    block.set_checksum_type(rocksdb::ChecksumType::CRC32c);
    let mut opts = rocksdb::Options::default();
    opts.create_if_missing(true);
    opts.set_block_based_table_factory(&block);
    // Opened with its column family described (with these options: `open_cf` would give it
    // the defaults, a small cache and no Bloom filter) so `batched_multi_get_cf` has a handle.
    let cfd = rocksdb::ColumnFamilyDescriptor::new("default", opts.clone());
    let db = rocksdb::DB::open_cf_descriptors(&opts, dir, [cfd]).unwrap();
    let (mut row, mut value) = ([0u8; 26], vec![0u8; value_size]);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut write = rocksdb::WriteOptions::default();
    write.disable_wal(true);
    for i in 0..rows {
        pe_row(i, &mut row);
        pe_value(&mut x, &mut value);
        db.put_opt(row, &value, &write).unwrap();
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    for i in 0..rows {
        pe_row(i, &mut row);
        db.get_pinned(row).unwrap().unwrap();
    }
    let cf = db.cf_handle("default").unwrap();
    for w in workloads.split(',') {
        let (kind, threads) = w.split_once(':').expect("WORKLOAD is kind:threads");
        let threads: u64 = threads.parse().unwrap();
        let ops = match kind {
            "get" => gets,
            "multiget" => gets / batch,
            "scan" => scans,
            _ => panic!("unknown workload {kind}"),
        };
        let start = std::sync::Barrier::new(threads as usize + 1);
        let (wall, user, sys, latency, read) = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let (db, start, cf) = (&db, &start, &cf);
                    let n = ops / threads + u64::from(t < ops % threads);
                    s.spawn(move || {
                        let mut hist = new_hist();
                        let mut x = 0x2545_F491_4F6C_DD1Du64 ^ ((t + 1) * 0x9E37_79B9);
                        let mut read = 0u64;
                        let mut sum = 0u64;
                        let mut keys: Vec<[u8; 26]> = vec![[0u8; 26]; batch as usize];
                        start.wait();
                        for _ in 0..n {
                            let t0 = std::time::Instant::now();
                            match kind {
                                "get" => {
                                    let mut row = [0u8; 26];
                                    pe_row(next_random(&mut x) % rows, &mut row);
                                    let v = db.get_pinned(row).unwrap().unwrap();
                                    sum += v[0] as u64;
                                    read += 1;
                                }
                                "multiget" => {
                                    for k in keys.iter_mut() {
                                        pe_row(next_random(&mut x) % rows, k);
                                    }
                                    for v in db.batched_multi_get_cf(cf, keys.iter(), false) {
                                        sum += v.unwrap().unwrap()[0] as u64;
                                        read += 1;
                                    }
                                }
                                _ => {
                                    let first = next_random(&mut x) % rows;
                                    let (mut lo, mut hi) = ([0u8; 26], [0u8; 26]);
                                    pe_row(first, &mut lo);
                                    pe_row(first + range, &mut hi);
                                    let mut ro = rocksdb::ReadOptions::default();
                                    ro.set_iterate_upper_bound(hi.to_vec());
                                    let mut it = db.raw_iterator_opt(ro);
                                    it.seek(lo);
                                    while it.valid() {
                                        sum += it.value().unwrap()[0] as u64;
                                        read += 1;
                                        it.next();
                                    }
                                    it.status().unwrap();
                                }
                            }
                            hist.saturating_record(t0.elapsed().as_nanos() as u64);
                        }
                        std::hint::black_box(sum);
                        (hist, read)
                    })
                })
                .collect();
            start.wait();
            let ((u0, s0), t0) = (cpu_user_sys(), std::time::Instant::now());
            let mut latency = new_hist();
            let mut read = 0;
            for h in handles {
                let (h, r) = h.join().unwrap();
                latency.add(h).unwrap();
                read += r;
            }
            let wall = t0.elapsed().as_secs_f64();
            let (u1, s1) = cpu_user_sys();
            (wall, u1 - u0, s1 - s0, latency, read)
        });
        print_result("rocksdb", kind, threads, ops, read, wall, user, sys, &latency);
    }
}

/// The line every peer prints per workload (bench/report.sh parses it).
#[allow(clippy::too_many_arguments)]
fn print_result(
    engine: &str,
    workload: &str,
    threads: u64,
    ops: u64,
    rows: u64,
    wall: f64,
    user: f64,
    sys: f64,
    latency: &Hist,
) {
    let q = |p: f64| latency.value_at_quantile(p) as f64 / 1000.0;
    println!(
        "bench-result engine={engine} workload={workload} threads={threads} ops={ops} rows={rows} \
         wall_s={wall:.4} user_s={user:.4} sys_s={sys:.4} mean_us={:.2} p50_us={:.2} \
         p75_us={:.2} p95_us={:.2} p99_us={:.2} p999_us={:.2} max_us={:.2}",
        latency.mean() / 1000.0,
        q(0.5),
        q(0.75),
        q(0.95),
        q(0.99),
        q(0.999),
        latency.max() as f64 / 1000.0
    );
}

/// HBase PE's `format(long)`: `i` zero-padded to 26 digits.
fn pe_row(i: u64, row: &mut [u8; 26]) {
    let mut d = i;
    for b in row.iter_mut().rev() {
        *b = b'0' + (d % 10) as u8;
        d /= 10;
    }
}

/// HBase PE's `generateData`: runs of 8 equal random capitals (the same xorshift as
/// cairn-region's `puts` bench).
fn pe_value(x: &mut u64, value: &mut [u8]) {
    for chunk in value.chunks_mut(8) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        chunk.fill(b'A' + (*x % 26) as u8);
    }
}

fn fillseq(args: &[String]) {
    let dir = &args[0];
    let rows: u64 = args[1].parse().unwrap();
    let value_size: usize = args[2].parse().unwrap();
    let threads: usize = args[3].parse().unwrap();
    let sync: bool = args[4].parse().unwrap();

    let mut opts = rocksdb::Options::default();
    opts.create_if_missing(true);
    let db = rocksdb::DB::open(&opts, dir).unwrap();
    let start = std::sync::Barrier::new(threads + 1);
    let per_thread = rows / threads as u64;
    let (wall, cpu, latency) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (db, start) = (&db, &start);
                let first = t as u64 * per_thread;
                let last = if t + 1 == threads {
                    rows
                } else {
                    first + per_thread
                };
                s.spawn(move || {
                    let mut write = rocksdb::WriteOptions::default();
                    write.set_sync(sync);
                    let mut hist =
                        hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
                            .unwrap();
                    let mut row = [0u8; 26];
                    let mut value = vec![0u8; value_size];
                    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (t as u64 + 1);
                    start.wait();
                    for i in first..last {
                        pe_row(i, &mut row);
                        pe_value(&mut x, &mut value);
                        let t0 = std::time::Instant::now();
                        db.put_opt(row, &value, &write).unwrap();
                        hist.saturating_record(t0.elapsed().as_nanos() as u64);
                    }
                    hist
                })
            })
            .collect();
        start.wait();
        let (cpu0, t0) = (cpu_seconds(), std::time::Instant::now());
        let mut latency =
            hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        for h in handles {
            latency.add(h.join().unwrap()).unwrap();
        }
        (t0.elapsed().as_secs_f64(), cpu_seconds() - cpu0, latency)
    });
    let q = |p: f64| latency.value_at_quantile(p) as f64 / 1000.0;
    println!(
        "puts-result engine=rocksdb wal_sync={sync} threads={threads} rows={rows} \
         value_size={value_size} wall_s={wall:.4} cpu_s={cpu:.4} mean_us={:.2} p50_us={:.2} p90_us={:.2} \
         p99_us={:.2} p999_us={:.2} max_us={:.2}",
        latency.mean() / 1000.0,
        q(0.5),
        q(0.9),
        q(0.99),
        q(0.999),
        latency.max() as f64 / 1000.0
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("fillseq") => return fillseq(&args[2..]),
        Some("pe") => return pe(&args[2..]),
        _ => {}
    }
    let dir = &args[1];
    let cells: u64 = args[2].parse().unwrap();
    let value_size: usize = args[3].parse().unwrap();
    let gets: u64 = args[4].parse().unwrap();

    let mut block = rocksdb::BlockBasedOptions::default();
    let cache = rocksdb::Cache::new_lru_cache(4 << 30);
    block.set_block_cache(&cache);
    block.set_bloom_filter(10.0, false);
    block.set_cache_index_and_filter_blocks(true);
    block.set_checksum_type(rocksdb::ChecksumType::CRC32c);
    let mut opts = rocksdb::Options::default();
    opts.create_if_missing(true);
    opts.set_block_based_table_factory(&block);
    let db = rocksdb::DB::open(&opts, dir).unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut value = vec![0u8; value_size];
    for i in 0..cells {
        for chunk in value.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
        }
        db.put(format!("row-{i:010}"), &value).unwrap();
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    for i in 0..cells {
        db.get_pinned(format!("row-{i:010}")).unwrap().unwrap();
    }
    let mut r = 0x2545_F491_4F6C_DD1Du64;
    let keys: Vec<String> = (0..gets)
        .map(|_| {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            format!("row-{:010}", r % cells)
        })
        .collect();
    let (cpu0, t0) = (cpu_seconds(), std::time::Instant::now());
    let mut sum = 0u64;
    for k in &keys {
        sum += db.get_pinned(k).unwrap().unwrap()[0] as u64;
    }
    let (cpu, wall) = (cpu_seconds() - cpu0, t0.elapsed().as_secs_f64());
    std::hint::black_box(sum);
    println!("gets_per_cpu_second {:.0}", gets as f64 / cpu);
    println!("gets_per_second {:.0}", gets as f64 / wall);
}
