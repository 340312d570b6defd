//! The block cache end to end: zero-copy hits, eviction by file, references under concurrent
//! eviction, the file engine's restart and damage detection, and the cache under an HFile
//! reader.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use cairn_blockcache::*;
use cairn_cell::KeyValue;
use cairn_checksum::ChecksumType;
use cairn_hfile::{
    Block, BlockHeader, BlockReadOptions, BlockType, HFileReader, HFileWriter, ReaderOptions,
    WriterOptions,
};

/// A block whose every byte is derived from its key, so a block served under the wrong key
/// (or from reused memory) is recognisable.
fn block_for(key: &BlockCacheKey, len: usize) -> Block {
    let seed = key.file ^ key.offset.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let data: Vec<u8> = (0..len)
        .map(|i| (seed.wrapping_add(i as u64 * 31) >> 3) as u8)
        .collect();
    let header = BlockHeader {
        block_type: BlockType::Data,
        on_disk_size_without_header: len as u32 + 4,
        uncompressed_size_without_header: len as u32,
        prev_block_offset: -1,
        checksum_type: ChecksumType::Crc32C,
        bytes_per_checksum: 16384,
        on_disk_data_size_with_header: len as u32 + 33,
    };
    Block::from_parts(key.offset, header, Bytes::from(data)).with_next_block_on_disk_size(Some(777))
}

fn assert_block(key: &BlockCacheKey, b: &Block) {
    let expect = block_for(key, b.data().len());
    assert_eq!(
        b.data(),
        expect.data(),
        "block {key:?} holds another block's bytes"
    );
    assert_eq!(b.header(), expect.header());
}

fn offheap(capacity: u64) -> BucketCache {
    BucketCache::new(BucketCacheConfig {
        capacity,
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn hits_are_slots_not_copies() {
    let c = offheap(64 << 20);
    let key = BlockCacheKey::new("f1", 4096);
    c.cache_block(key, block_for(&key, 65_000), BlockPriority::Single);
    c.wait_for_writes();
    let a = c.get(&key).unwrap();
    let b = c.get(&key).unwrap();
    assert_block(&key, &a);
    assert_eq!(
        a.data().as_ptr(),
        b.data().as_ptr(),
        "both hits point at the same slot memory"
    );
    assert_eq!(a.next_block_on_disk_size(), Some(777));
    let s = c.stats();
    assert_eq!((s.hit_count, s.block_count, s.insert_count), (2, 1, 1));
    assert!(c.get(&BlockCacheKey::new("f1", 0)).is_none());
    assert_eq!(c.stats().miss_count, 1);
}

#[test]
fn an_evicted_file_is_never_served_even_from_the_queue() {
    let c = offheap(64 << 20);
    for round in 0..20 {
        let name = format!("file{round}");
        let keys: Vec<BlockCacheKey> = (0..50)
            .map(|i| BlockCacheKey::new(&name, i * 70_000))
            .collect();
        for k in &keys {
            c.cache_block(*k, block_for(k, 5000), BlockPriority::Single);
        }
        if round % 2 == 0 {
            c.wait_for_writes();
        }
        c.evict_file(file_id(&name));
        c.wait_for_writes();
        for k in &keys {
            assert!(
                c.get(k).is_none(),
                "{k:?} served after its file was evicted"
            );
        }
    }
}

#[test]
fn references_survive_concurrent_eviction() {
    // A small cache, many writers forcing eviction, readers checking every byte they get.
    let c = Arc::new(
        BucketCache::new(BucketCacheConfig {
            capacity: 24 << 20,
            writer_threads: 2,
            ..Default::default()
        })
        .unwrap(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let served = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    for t in 0..3u64 {
        let (c, stop) = (c.clone(), stop.clone());
        threads.push(std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let k = BlockCacheKey {
                    file: t % 2,
                    offset: (i * 7919) % 4000 * 100_000,
                };
                c.cache_block(
                    k,
                    block_for(&k, 1000 + (k.offset as usize / 100_000 % 60) * 1000),
                    BlockPriority::Single,
                );
                i += 1;
                if i.is_multiple_of(64) {
                    std::thread::yield_now();
                }
            }
        }));
    }
    for t in 0..3u64 {
        let (c, stop, served) = (c.clone(), stop.clone(), served.clone());
        threads.push(std::thread::spawn(move || {
            let mut held: Vec<(BlockCacheKey, Block)> = Vec::new();
            let mut i = t;
            while !stop.load(Ordering::Relaxed) {
                let k = BlockCacheKey {
                    file: i % 2,
                    offset: (i * 104_729) % 4000 * 100_000,
                };
                if let Some(b) = c.get(&k) {
                    assert_block(&k, &b);
                    served.fetch_add(1, Ordering::Relaxed);
                    held.push((k, b));
                }
                // Hold some references across evictions, then check them again.
                if held.len() > 32 {
                    for (k, b) in held.drain(..) {
                        assert_block(&k, &b);
                    }
                }
                i += 1;
            }
            for (k, b) in held {
                assert_block(&k, &b);
            }
        }));
    }
    {
        let (c, stop) = (c.clone(), stop.clone());
        threads.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                c.evict_file(0);
                std::thread::sleep(std::time::Duration::from_millis(3));
            }
        }));
    }
    std::thread::sleep(std::time::Duration::from_secs(3));
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let s = c.stats();
    assert!(
        served.load(Ordering::Relaxed) > 1000,
        "readers were served: {}",
        served.load(Ordering::Relaxed)
    );
    assert!(s.eviction_count > 0, "the cache was under pressure: {s:?}");
    assert!(s.size <= s.capacity);
}

fn file_engine(dir: &std::path::Path, verify: bool) -> BucketCacheConfig {
    BucketCacheConfig {
        capacity: 32 << 20,
        engine: IoEngineKind::File {
            path: dir.join("cache.data"),
        },
        persistence_path: Some(dir.join("cache.map")),
        persist_interval: None,
        verify_memory_hits: verify,
        ..Default::default()
    }
}

#[test]
fn a_restarted_file_cache_serves_identical_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<BlockCacheKey> = (0..200)
        .map(|i| BlockCacheKey::new("hfile-a", i * 66_000))
        .collect();
    {
        let c = BucketCache::new(file_engine(dir.path(), false)).unwrap();
        // In batches: a full writer queue drops blocks (as HBase's does with its default
        // wait time of 0), and 200 blocks can outrun the writers.
        for batch in keys.chunks(32) {
            for k in batch {
                c.cache_block(
                    *k,
                    block_for(k, 3000 + (k.offset as usize % 50_000)),
                    BlockPriority::Multi,
                );
            }
            c.wait_for_writes();
        }
        c.wait_for_writes();
        let s = c.stats();
        assert_eq!(s.block_count, 200, "{s:?}");
    } // drop: writers drain, map persisted
    let c = BucketCache::new(file_engine(dir.path(), false)).unwrap();
    assert_eq!(
        c.restore_report(),
        RestoreReport {
            restored: 200,
            dropped: 0,
            discarded_map: false
        }
    );
    for k in &keys {
        let b = c.get(k).expect("restored");
        assert_block(k, &b);
    }
}

#[test]
fn damage_to_the_map_the_cache_file_or_a_slot_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<BlockCacheKey> = (0..50)
        .map(|i| BlockCacheKey::new("hfile-b", i * 66_000))
        .collect();
    let fill = |c: &BucketCache| {
        for k in &keys {
            c.cache_block(*k, block_for(k, 20_000), BlockPriority::Single);
        }
        c.wait_for_writes();
    };
    // A damaged map: start empty.
    drop({
        let c = BucketCache::new(file_engine(dir.path(), false)).unwrap();
        fill(&c);
        c
    });
    let map = dir.path().join("cache.map");
    let mut m = std::fs::read(&map).unwrap();
    m[60] ^= 1;
    std::fs::write(&map, &m).unwrap();
    let c = BucketCache::new(file_engine(dir.path(), false)).unwrap();
    assert!(c.restore_report().discarded_map);
    assert!(keys.iter().all(|k| c.get(k).is_none()));
    fill(&c);
    drop(c);

    // A damaged slot: that block is a miss (counted), never wrong bytes; the rest are served.
    let data = dir.path().join("cache.data");
    let mut f = std::fs::read(&data).unwrap();
    let len = f.len();
    for i in (4096..len).step_by(100_003) {
        f[i] ^= 0x55;
    }
    std::fs::write(&data, &f).unwrap();
    let c = BucketCache::new(file_engine(dir.path(), false)).unwrap();
    let mut served = 0;
    for k in &keys {
        if let Some(b) = c.get(k) {
            assert_block(k, &b);
            served += 1;
        }
    }
    assert!(served > 0 && served < keys.len(), "{served}");
    assert!(c.stats().corrupt_count > 0);
    drop(c);

    // A cache file whose header no longer matches (re-created, resized): the map is refused.
    let c = BucketCache::new(BucketCacheConfig {
        capacity: 16 << 20,
        ..file_engine(dir.path(), false)
    })
    .unwrap();
    assert!(c.restore_report().discarded_map);
    assert_eq!(c.stats().block_count, 0);
}

#[test]
fn a_stale_map_never_serves_a_reused_slot() {
    // Persist a map, keep running (evicting and reusing slots for other blocks), then crash
    // before the next persist: the old map names slots that now hold other blocks.
    let dir = tempfile::tempdir().unwrap();
    let config = BucketCacheConfig {
        capacity: 8 << 20,
        ..file_engine(dir.path(), false)
    };
    let first: Vec<BlockCacheKey> = (0..60)
        .map(|i| BlockCacheKey::new("old", i * 66_000))
        .collect();
    let second: Vec<BlockCacheKey> = (0..60)
        .map(|i| BlockCacheKey::new("new", i * 66_000))
        .collect();
    {
        let c = BucketCache::new(config.clone()).unwrap();
        for k in &first {
            c.cache_block(*k, block_for(k, 60_000), BlockPriority::Single);
        }
        c.wait_for_writes();
        c.persist().unwrap();
        let stale = std::fs::read(dir.path().join("cache.map")).unwrap();
        c.evict_file(file_id("old"));
        for k in &second {
            c.cache_block(*k, block_for(k, 60_000), BlockPriority::Single);
        }
        c.wait_for_writes();
        drop(c);
        // The crash: the last persisted map is the stale one.
        std::fs::write(dir.path().join("cache.map"), stale).unwrap();
    }
    let c = BucketCache::new(config).unwrap();
    let r = c.restore_report();
    assert!(r.dropped > 0, "{r:?}");
    for k in first.iter().chain(&second) {
        if let Some(b) = c.get(k) {
            assert_block(k, &b);
        }
    }
}

#[test]
fn hbase_property_names_configure_the_cache() {
    let c = BlockCacheConfig::from_properties([
        ("hfile.block.cache.size", "1048576"),
        ("hbase.bucketcache.ioengine", "offheap"),
        ("hbase.bucketcache.size", "64"),
        ("hbase.bucketcache.writer.threads", "2"),
    ])
    .unwrap();
    assert_eq!(c.l1_size, 1 << 20);
    let l2 = c.l2.unwrap();
    assert_eq!((l2.capacity, l2.writer_threads), (64 << 20, 2));
    assert_eq!(l2.engine, IoEngineKind::OffHeap { huge_pages: false });
    let c = BlockCacheConfig::from_properties([
        ("hbase.bucketcache.ioengine", "file:/var/cache/x"),
        ("hbase.bucketcache.size", "10"),
    ])
    .unwrap();
    assert_eq!(
        c.l2.unwrap().engine,
        IoEngineKind::File {
            path: "/var/cache/x".into()
        }
    );
    assert!(
        BlockCacheConfig::from_properties([("hbase.bucketcache.ioengine", "pmem:/x")]).is_err()
    );
    assert!(BlockCacheConfig::from_properties([("hbase.bucketcache.size", "10")]).is_err());
    assert!(
        BlockCacheConfig::from_properties([("hbase.bucketcache.bucket.sizes", "9000,5000")])
            .is_err()
    );
}

/// 20,000 small cells in 4 KiB blocks at `path`; the cells.
fn write_small_cells(path: &std::path::Path) -> Vec<KeyValue> {
    let mut w = HFileWriter::new(
        std::fs::File::create(path).unwrap(),
        "t.hfile",
        WriterOptions {
            block_size: 4096,
            ..Default::default()
        },
    )
    .unwrap();
    let cells: Vec<KeyValue> = (0..20_000u32)
        .map(|i| {
            KeyValue::put(
                format!("r{i:06}").as_bytes(),
                b"f",
                b"q",
                1,
                &i.to_be_bytes(),
            )
            .unwrap()
        })
        .collect();
    for c in &cells {
        w.append(&c.as_cell()).unwrap();
    }
    w.finish().unwrap();
    cells
}

/// The first data block of `t.hfile` from L2, checked to carry its cell index.
fn first_block_cached_with_index(cache: &CombinedBlockCache, r: &HFileReader) -> Block {
    let first = BlockCacheKey::new("t.hfile", r.trailer().first_data_block_offset.unwrap());
    let cached = cache
        .l2()
        .unwrap()
        .get(&first)
        .expect("first data block cached");
    assert!(cached.indexed_cells() > 10, "{}", cached.indexed_cells());
    cached
}

fn small_combined_cache() -> Arc<CombinedBlockCache> {
    Arc::new(
        CombinedBlockCache::new(BlockCacheConfig {
            l1_size: 4 << 20,
            l2: Some(BucketCacheConfig {
                capacity: 64 << 20,
                ..Default::default()
            }),
        })
        .unwrap(),
    )
}

#[test]
fn the_reader_reads_through_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.hfile");
    let cells = write_small_cells(&path);
    let cache = small_combined_cache();
    let open = || {
        let cache = cache.clone();
        HFileReader::open(&path, ReaderOptions::default())
            .unwrap()
            .with_block_source(move |file| Arc::new(CachedBlockSource::new(cache, "t.hfile", file)))
    };
    let r = open();
    for round in 0..2 {
        for c in cells.iter().step_by(37) {
            let got = r.get(c.as_cell().row(), b"f", b"q").unwrap().unwrap();
            assert_eq!(got, *c, "round {round}");
        }
        cache.l2().unwrap().wait_for_writes();
    }
    // Data blocks keep their cell index through L2 (binary search within the block).
    let cached = first_block_cached_with_index(&cache, &r);
    assert_eq!(cached.indexed_cell(0), Some(0));
    let (l1, l2, _) = cache.stats();
    let l2 = l2.unwrap();
    assert!(
        l1.block_count > 0,
        "index and Bloom blocks went to L1: {l1:?}"
    );
    assert!(
        l2.block_count > 0 && l2.hit_count > 0,
        "data blocks went to L2 and were hit: {l2:?}"
    );
    // A second reader of the same file shares the cached blocks.
    let before = cache.stats().1.unwrap().hit_count;
    let r2 = open();
    assert_eq!(
        r2.get(cells[37].as_cell().row(), b"f", b"q")
            .unwrap()
            .unwrap(),
        cells[37]
    );
    assert!(cache.stats().1.unwrap().hit_count > before);
    assert!(!cache.metrics().is_empty());
}

/// A data block a scan brings into the cache carries its cell index, so the gets that come to
/// it later binary search it instead of walking its cells; a scan that does not cache its
/// blocks leaves nothing behind.
#[test]
fn blocks_a_scan_caches_are_indexed_for_later_gets() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.hfile");
    let cells = write_small_cells(&path);
    let cache = small_combined_cache();
    let c2 = cache.clone();
    let r = HFileReader::open(&path, ReaderOptions::default())
        .unwrap()
        .with_block_source(move |file| Arc::new(CachedBlockSource::new(c2, "t.hfile", file)));
    let scan_all = |options: BlockReadOptions| {
        let mut s = r.scanner().with_options(options);
        let mut n = 0;
        let mut more = s.seek_to_first().unwrap();
        while more {
            n += 1;
            more = s.next().unwrap();
        }
        n
    };
    let data_blocks = || cache.stats().1.unwrap().block_count;

    assert_eq!(scan_all(BlockReadOptions::NO_FILL), cells.len());
    cache.l2().unwrap().wait_for_writes();
    assert_eq!(data_blocks(), 0);

    assert_eq!(scan_all(BlockReadOptions::default()), cells.len());
    cache.l2().unwrap().wait_for_writes();
    assert!(data_blocks() > 10, "{}", data_blocks());
    first_block_cached_with_index(&cache, &r);
    let hits = cache.stats().1.unwrap().hit_count;
    for c in cells.iter().step_by(101) {
        assert_eq!(r.get(c.as_cell().row(), b"f", b"q").unwrap().unwrap(), *c);
    }
    assert!(cache.stats().1.unwrap().hit_count > hits);
}
