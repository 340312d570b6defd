//! RocksDB on cairn's cached point-lookup workload: CELLS keys `row-%010d` with VALUE_SIZE-byte
//! values, loaded, compacted, read once to warm a block cache that holds everything, then GETS
//! random point lookups on one thread. Prints `gets_per_cpu_second N` and `gets_per_second N`.
//!
//! usage: rocksdb-peer DIR CELLS VALUE_SIZE GETS

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct we pass; RUSAGE_SELF is always valid.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(r.ru_utime) + t(r.ru_stime)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
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
