//! L2: HBase's `BucketCache` — one preallocated region (anonymous memory or a file) carved into
//! buckets of size-classed slots. Blocks are queued to writer threads that copy them into slots;
//! until then they are served from the queue's RAM cache. Readers of the memory engine get the
//! slot's bytes themselves (no copy), pinned by a reference count; eviction unpublishes a slot
//! and its memory is reused only after the last reader drops it (see `slot.rs`).
//!
//! Each slot starts with a 40-byte header: magic, payload length, the key (file and offset), the
//! next block's size hint, priority, a CRC32C over header and payload, and the length of the
//! block's cell index. The payload is the block header, the cell index, then the data: the
//! index sits next to the slot header, so a seek reads both from the same few cache lines. Blocks read back from
//! the file engine are always verified against it (and against the key, so a slot reused for
//! another block is never served under the old key); blocks served from memory can be verified
//! too (`verify_memory_hits`).

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use cairn_checksum::{ChecksumType, DataChecksum};
use cairn_hfile::{Block, BlockHeader};
use crossbeam_channel::{Receiver, Sender, TrySendError};
use parking_lot::{Mutex, RwLock};

use crate::allocator::{AllocError, BucketAllocator, DEFAULT_SIZE_CLASSES};
use crate::engine::{Engine, FileArena, OffHeapArena};
use crate::key::{BlockCacheKey, BlockPriority};
use crate::lru::{MEMORY_SHARE, MULTI_SHARE, SINGLE_SHARE};
use crate::persistence;
use crate::slot::{Slot, SlotSink, SlotTable};
use crate::stats::{CacheCounters, CacheStats};

/// Bytes of a slot header.
pub(crate) const SLOT_HEADER: usize = 40;
const SLOT_MAGIC: &[u8; 4] = b"CBS1";
const BLOCK_HEADER: usize = 33;
/// The file engine keeps its own header in the first 4 KiB.
pub(crate) const FILE_HEADER_LEN: u64 = 4096;

/// Where the bucket cache keeps its bytes (`hbase.bucketcache.ioengine`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IoEngineKind {
    /// Anonymous memory (`offheap`), optionally on huge pages.
    OffHeap {
        /// Back the region with huge pages (needs them reserved in the kernel).
        huge_pages: bool,
    },
    /// A file (`file:/path`).
    File {
        /// The cache file.
        path: PathBuf,
    },
}

/// Bucket cache settings; defaults are HBase's.
#[derive(Clone, Debug)]
pub struct BucketCacheConfig {
    /// Bytes of the region (`hbase.bucketcache.size`).
    pub capacity: u64,
    /// Memory or file.
    pub engine: IoEngineKind,
    /// Slot sizes (`hbase.bucketcache.bucket.sizes`).
    pub size_classes: Vec<u32>,
    /// Writer threads (`hbase.bucketcache.writer.threads`, 3).
    pub writer_threads: usize,
    /// Blocks each writer queue holds (`hbase.bucketcache.writer.queuelength`, 64).
    pub writer_queue_len: usize,
    /// Verify the slot checksum of blocks served from memory too.
    pub verify_memory_hits: bool,
    /// Where the file engine persists its block map (`hbase.bucketcache.persistent.path`).
    pub persistence_path: Option<PathBuf>,
    /// How often the map is persisted while running (`hbase.bucketcache.persist.intervalinmillis`).
    pub persist_interval: Option<Duration>,
}

impl Default for BucketCacheConfig {
    fn default() -> Self {
        BucketCacheConfig {
            capacity: 256 << 20,
            engine: IoEngineKind::OffHeap { huge_pages: false },
            size_classes: DEFAULT_SIZE_CLASSES.to_vec(),
            writer_threads: 3,
            writer_queue_len: 64,
            verify_memory_hits: false,
            persistence_path: None,
            persist_interval: Some(Duration::from_secs(1)),
        }
    }
}

enum Job {
    Write(BlockCacheKey, Block, BlockPriority),
    Flush(Sender<()>),
}

/// Gives freed slots back to the allocator. Every slot holds it, and it holds the engine: so
/// the cache memory outlives every slot, and every block handed out (which holds its slot).
struct AllocatorSink {
    allocator: Arc<Mutex<BucketAllocator>>,
    _engine: Arc<Engine>,
}

impl SlotSink for AllocatorSink {
    fn release(&self, offset: u64) {
        self.allocator.lock().free(offset);
    }
}

pub(crate) struct Inner {
    engine: Arc<Engine>,
    allocator: Arc<Mutex<BucketAllocator>>,
    sink: Arc<dyn SlotSink>,
    pub(crate) table: SlotTable,
    pending: RwLock<HashMap<BlockCacheKey, Block, foldhash::fast::RandomState>>,
    counters: CacheCounters,
    clock: AtomicU64,
    config: BucketCacheConfig,
    /// Identity of the cache file this map belongs to (file engine).
    pub(crate) uuid: u128,
    crc: DataChecksum,
}

/// The L2 cache.
pub struct BucketCache {
    inner: Arc<Inner>,
    restore: persistence::RestoreReport,
    senders: Mutex<Vec<Sender<Job>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    stop: Arc<AtomicBool>,
}

/// The bytes of a pinned slot of the memory engine: what a cache hit hands out.
struct SlotBytes {
    /// Pins the slot: its memory is neither freed nor rewritten while this lives, and the
    /// slot keeps the engine (the mapping) alive through its sink.
    _slot: Arc<Slot>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: `ptr` points into the shared, immutable-while-pinned bytes of the slot; sending or
// sharing the view between threads is as safe as sharing `&[u8]`.
unsafe impl Send for SlotBytes {}
// SAFETY: as above.
unsafe impl Sync for SlotBytes {}

impl AsRef<[u8]> for SlotBytes {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `ptr..ptr+len` was obtained from `OffHeapArena::slice` for this slot; the
        // pinned slot keeps the range allocated to this block and the mapping alive (see above).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// What a slot header says, once checked.
struct SlotInfo {
    header: BlockHeader,
    next: Option<u64>,
    /// Bytes of cell index, then of block data, after the block header.
    data_len: usize,
    index_len: usize,
}

fn slot_crc(crc: &DataChecksum, bytes: &[u8]) -> u32 {
    let mut r = crc.running();
    r.update(&bytes[..32]);
    r.update(&bytes[SLOT_HEADER..]);
    r.value()
}

/// Checks a slot's bytes against the key that should be there.
fn check_slot(
    bytes: &[u8],
    key: &BlockCacheKey,
    verify_crc: bool,
    crc: &DataChecksum,
) -> Result<SlotInfo, String> {
    let h = bytes
        .get(..SLOT_HEADER)
        .ok_or("slot shorter than its header")?;
    if &h[..4] != SLOT_MAGIC {
        return Err("slot magic missing".into());
    }
    let payload = u32::from_be_bytes(h[4..8].try_into().expect("4")) as usize;
    if SLOT_HEADER + payload != bytes.len() || payload < BLOCK_HEADER {
        return Err(format!(
            "slot payload of {payload} bytes does not fit {}",
            bytes.len()
        ));
    }
    let file = u64::from_be_bytes(h[8..16].try_into().expect("8"));
    let offset = u64::from_be_bytes(h[16..24].try_into().expect("8"));
    if file != key.file || offset != key.offset {
        return Err(format!("slot holds {file:016x}@{offset}, not {key:?}"));
    }
    if verify_crc {
        let stored = u32::from_be_bytes(h[32..36].try_into().expect("4"));
        let computed = slot_crc(crc, bytes);
        if stored != computed {
            return Err(format!(
                "slot checksum mismatch: stored {stored:#010x}, computed {computed:#010x}"
            ));
        }
    }
    let header =
        BlockHeader::decode(&bytes[SLOT_HEADER..]).ok_or("block header in the slot is damaged")?;
    let next = u32::from_be_bytes(h[24..28].try_into().expect("4"));
    let index_len = u32::from_be_bytes(h[36..40].try_into().expect("4")) as usize;
    let data_len = header.uncompressed_size_without_header as usize;
    if BLOCK_HEADER + data_len + index_len != payload {
        return Err(format!("slot payload of {payload} bytes does not hold {data_len} bytes of data and {index_len} of index"));
    }
    Ok(SlotInfo {
        header,
        next: (next != u32::MAX).then_some(next as u64),
        data_len,
        index_len,
    })
}

fn encode_slot(
    key: &BlockCacheKey,
    block: &Block,
    priority: BlockPriority,
    crc: &DataChecksum,
    out: &mut Vec<u8>,
) {
    out.clear();
    let index: &[u8] = block.cell_index().map_or(&[], |i| i.as_ref());
    let payload = BLOCK_HEADER + block.data().len() + index.len();
    out.extend_from_slice(SLOT_MAGIC);
    out.extend_from_slice(&(payload as u32).to_be_bytes());
    out.extend_from_slice(&key.file.to_be_bytes());
    out.extend_from_slice(&key.offset.to_be_bytes());
    let next = block
        .next_block_on_disk_size()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(u32::MAX);
    out.extend_from_slice(&next.to_be_bytes());
    out.extend_from_slice(&[priority as u8, 0, 0, 0]);
    out.extend_from_slice(&[0u8; 4]);
    out.extend_from_slice(&(index.len() as u32).to_be_bytes());
    out.extend_from_slice(&block.header().encode());
    out.extend_from_slice(index);
    out.extend_from_slice(block.data());
    let c = slot_crc(crc, out);
    out[32..36].copy_from_slice(&c.to_be_bytes());
}

impl BucketCache {
    /// Creates the cache; a file engine with a persistence path restores the blocks its last
    /// run persisted, if the map and the cache file still agree.
    pub fn new(config: BucketCacheConfig) -> io::Result<BucketCache> {
        let crc = DataChecksum::new(ChecksumType::Crc32C, u32::MAX).expect("valid");
        let (engine, base, uuid) = match &config.engine {
            IoEngineKind::OffHeap { huge_pages } => (
                Engine::OffHeap(OffHeapArena::new(config.capacity, *huge_pages)?),
                0,
                0,
            ),
            IoEngineKind::File { path } => {
                let arena = FileArena::open(path, config.capacity + FILE_HEADER_LEN)?;
                let uuid = persistence::open_cache_file(&arena, &config)?;
                (Engine::File(arena), FILE_HEADER_LEN, uuid)
            }
        };
        let allocator = Arc::new(Mutex::new(BucketAllocator::new(
            base,
            config.capacity,
            &config.size_classes,
        )));
        let engine = Arc::new(engine);
        let sink: Arc<dyn SlotSink> = Arc::new(AllocatorSink {
            allocator: allocator.clone(),
            _engine: engine.clone(),
        });
        let inner = Arc::new(Inner {
            engine,
            allocator,
            sink,
            table: SlotTable::new(),
            pending: RwLock::new(HashMap::default()),
            counters: CacheCounters::default(),
            clock: AtomicU64::new(1),
            config,
            uuid,
            crc,
        });
        let restore = match (&*inner.engine, &inner.config.persistence_path) {
            (Engine::File(arena), Some(map)) => persistence::restore(&inner, arena, map),
            _ => persistence::RestoreReport::default(),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let mut senders = Vec::new();
        let mut threads = Vec::new();
        for i in 0..inner.config.writer_threads.max(1) {
            let (tx, rx) = crossbeam_channel::bounded(inner.config.writer_queue_len.max(1));
            senders.push(tx);
            let inner = inner.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("bucketcache-writer-{i}"))
                    .spawn(move || writer_loop(&inner, rx))?,
            );
        }
        if let (IoEngineKind::File { .. }, Some(_), Some(every)) = (
            &inner.config.engine,
            &inner.config.persistence_path,
            inner.config.persist_interval,
        ) {
            let (inner, stop) = (inner.clone(), stop.clone());
            threads.push(
                std::thread::Builder::new()
                    .name("bucketcache-persister".into())
                    .spawn(move || {
                        while !stop.load(Ordering::Relaxed) {
                            std::thread::sleep(every);
                            if !stop.load(Ordering::Relaxed) {
                                let _ = inner.persist();
                            }
                        }
                    })?,
            );
        }
        Ok(BucketCache {
            inner,
            restore,
            senders: Mutex::new(senders),
            threads: Mutex::new(threads),
            stop,
        })
    }

    /// What the start-up restore of a persisted map did.
    pub fn restore_report(&self) -> persistence::RestoreReport {
        self.restore
    }

    /// The block, if cached. From the memory engine the block's bytes are the slot itself.
    pub fn get(&self, key: &BlockCacheKey) -> Option<Block> {
        self.get_counted(key, true)
    }

    /// [`get`](Self::get), counting a miss only if `count_miss`.
    pub fn get_counted(&self, key: &BlockCacheKey, count_miss: bool) -> Option<Block> {
        let inner = &self.inner;
        let prefetch = |offset: u64, _len: u32| {
            if let Engine::OffHeap(a) = &*inner.engine {
                // The slot header and the cell index after it: fetched while the slot's
                // reference is being taken.
                a.prefetch(offset, 2);
            }
        };
        if let Some(slot) = inner.table.pin_with(key, prefetch) {
            // Reading the clock, not advancing it: a shared counter written on every hit would
            // make hits on two cores fight over one cache line.
            slot.touch(inner.clock.load(Ordering::Relaxed));
            if let Some(b) = inner.read_slot(key, slot) {
                inner.counters.hits.inc();
                return Some(b);
            }
        }
        if let Some(b) = inner.pending.read().get(key).cloned() {
            inner.counters.hits.inc();
            return Some(b);
        }
        if count_miss {
            inner.counters.misses.inc();
        }
        None
    }

    /// True if the block is cached or queued.
    pub fn contains(&self, key: &BlockCacheKey) -> bool {
        self.inner.table.contains(key) || self.inner.pending.read().contains_key(key)
    }

    /// Queues a block to be written into the cache; it is served from the queue until then.
    /// Blocks larger than the largest slot, or arriving when the queue is full, are not cached.
    pub fn cache_block(&self, key: BlockCacheKey, block: Block, priority: BlockPriority) {
        let inner = &self.inner;
        if self.contains(&key) {
            return;
        }
        let index = block.cell_index().map_or(0, |i| i.len());
        if SLOT_HEADER + BLOCK_HEADER + block.data().len() + index
            > inner.allocator.lock().largest() as usize
        {
            inner.counters.rejected.inc();
            return;
        }
        let senders = self.senders.lock();
        if senders.is_empty() {
            return;
        }
        let queue = &senders[((key.file ^ key.offset) % senders.len() as u64) as usize];
        inner.pending.write().insert(key, block.clone());
        match queue.try_send(Job::Write(key, block, priority)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                inner.pending.write().remove(&key);
                inner.counters.rejected.inc();
            }
        }
    }

    /// Waits until every queued block has been written (or rejected).
    pub fn wait_for_writes(&self) {
        let waits: Vec<Receiver<()>> = self
            .senders
            .lock()
            .iter()
            .map(|s| {
                let (tx, rx) = crossbeam_channel::bounded(1);
                let _ = s.send(Job::Flush(tx));
                rx
            })
            .collect();
        for w in waits {
            let _ = w.recv();
        }
    }

    /// Drops every block of `file`, queued ones included; returns how many were published.
    pub fn evict_file(&self, file: u64) -> usize {
        // First the queue (writers publish only what is still queued), then the table.
        self.inner.pending.write().retain(|k, _| k.file != file);
        self.inner.table.remove_where(|k| k.file == file)
    }

    /// Drops one block.
    pub fn evict(&self, key: &BlockCacheKey) -> bool {
        self.inner.pending.write().remove(key);
        self.inner.table.remove(key).is_some()
    }

    /// Statistics.
    pub fn stats(&self) -> CacheStats {
        let a = self.inner.allocator.lock();
        let (used, cap) = (a.used_bytes(), a.capacity());
        drop(a);
        CacheStats::from_counters(
            &self.inner.counters,
            used,
            self.inner.table.len() as u64,
            cap,
        )
    }

    /// Writes the block map now (file engine with a persistence path).
    pub fn persist(&self) -> io::Result<()> {
        self.inner.persist()
    }

    /// Stops the writer threads after they drained their queues, and persists the map.
    pub fn shutdown(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.senders.lock().clear();
        for t in self.threads.lock().drain(..) {
            let _ = t.join();
        }
        let _ = self.inner.persist();
    }

    #[cfg(test)]
    pub(crate) fn inner(&self) -> &Arc<Inner> {
        &self.inner
    }
}

impl Drop for BucketCache {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn writer_loop(inner: &Inner, rx: Receiver<Job>) {
    let mut buf = Vec::new();
    while let Ok(job) = rx.recv() {
        match job {
            Job::Write(key, block, priority) => {
                let slot = inner.write_block(key, &block, priority, &mut buf);
                // Publish under the queue's lock: if the block's file was evicted meanwhile its
                // entry is gone and the block must not appear in the cache.
                let mut pending = inner.pending.write();
                if pending.remove(&key).is_some() {
                    if let Some(slot) = slot {
                        if inner.table.publish(key, slot) {
                            inner.counters.inserts.inc();
                        }
                    }
                }
            }
            Job::Flush(done) => {
                let _ = done.send(());
            }
        }
    }
}

impl Inner {
    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed)
    }

    fn read_slot(&self, key: &BlockCacheKey, slot: Arc<Slot>) -> Option<Block> {
        let len = slot.len as usize;
        let checked = match &*self.engine {
            Engine::OffHeap(a) => {
                let view = a.slice(slot.offset, len);
                check_slot(view, key, self.config.verify_memory_hits, &self.crc).map(|info| {
                    // The block's bytes are the slot's own: no copy, pinned by the slot. Each
                    // view is its own `Bytes` (slicing one shared `Bytes` cost more per hit).
                    let view_of = |at: usize, n: usize| {
                        let part = &view
                            [SLOT_HEADER + BLOCK_HEADER + at..SLOT_HEADER + BLOCK_HEADER + at + n];
                        Bytes::from_owner(SlotBytes {
                            ptr: part.as_ptr(),
                            len: n,
                            _slot: slot.clone(),
                        })
                    };
                    let index = (info.index_len > 0).then(|| view_of(0, info.index_len));
                    let data = view_of(info.index_len, info.data_len);
                    (info, data, index)
                })
            }
            Engine::File(f) => match f.read(slot.offset, len) {
                Ok(v) => {
                    let bytes = Bytes::from(v);
                    check_slot(&bytes, key, true, &self.crc).map(|info| {
                        let start = SLOT_HEADER + BLOCK_HEADER;
                        let index = (info.index_len > 0)
                            .then(|| bytes.slice(start..start + info.index_len));
                        let data = bytes
                            .slice(start + info.index_len..start + info.index_len + info.data_len);
                        (info, data, index)
                    })
                }
                Err(e) => Err(e.to_string()),
            },
        };
        match checked {
            Ok((info, data, index)) => Some(
                Block::from_parts(key.offset, info.header, data)
                    .with_next_block_on_disk_size(info.next)
                    .with_cell_index(index),
            ),
            Err(_) => {
                // Never served: drop it so the next read goes to the file.
                self.counters.corrupt.inc();
                self.table.remove_exact(key, &slot);
                None
            }
        }
    }

    /// Copies the block into a new slot; the slot is returned unpublished.
    fn write_block(
        &self,
        key: BlockCacheKey,
        block: &Block,
        priority: BlockPriority,
        buf: &mut Vec<u8>,
    ) -> Option<Arc<Slot>> {
        if self.table.contains(&key) {
            return None;
        }
        encode_slot(&key, block, priority, &self.crc, buf);
        let Some((offset, class_size)) = self.allocate(buf.len()) else {
            self.counters.rejected.inc();
            return None;
        };
        let written = match &*self.engine {
            Engine::OffHeap(a) => {
                a.write(offset, buf);
                Ok(())
            }
            Engine::File(f) => f.write(offset, buf),
        };
        let slot = Arc::new(Slot::new(
            offset,
            buf.len() as u32,
            class_size,
            priority,
            self.tick(),
            self.sink.clone(),
        ));
        if written.is_err() {
            self.counters.rejected.inc();
            return None; // dropping `slot` frees the space
        }
        Some(slot)
    }

    fn allocate(&self, len: usize) -> Option<(u64, u32)> {
        for attempt in 0..2 {
            let mut a = self.allocator.lock();
            let class = a.class_size(len)?;
            match a.allocate(len) {
                Ok(o) => return Some((o, class)),
                Err(AllocError::TooLarge) => return None,
                Err(AllocError::Full) => {}
            }
            drop(a);
            if attempt == 0 {
                self.free_space(len as u64);
            }
        }
        None
    }

    /// Evicts blocks to make room, as HBase's `freeSpace` does: first from the priority groups
    /// that hold more than their share (single 25%, multi 50%, in-memory 25%), least recently
    /// used first, then from all of them; frees the wanted bytes plus 10% of the capacity.
    fn free_space(&self, needed: u64) {
        let capacity = self.allocator.lock().capacity();
        let target = needed + capacity / 10;
        let mut groups: [Vec<(u64, BlockCacheKey, Arc<Slot>)>; 3] = Default::default();
        let mut used = [0u64; 3];
        for (key, slot) in self.table.entries() {
            let g = slot.priority() as usize;
            used[g] += slot.class_size as u64;
            groups[g].push((slot.last_access(), key, slot));
        }
        for g in groups.iter_mut() {
            g.sort_by_key(|e| e.0);
        }
        let shares = [SINGLE_SHARE, MULTI_SHARE, MEMORY_SHARE];
        let mut freed = 0u64;
        let mut next = [0usize; 3];
        let evict_from = |g: usize, bytes: u64, freed: &mut u64, next: &mut [usize; 3]| {
            let goal = *freed + bytes;
            while *freed < goal && next[g] < groups[g].len() {
                let (_, key, slot) = &groups[g][next[g]];
                next[g] += 1;
                if self.table.remove_exact(key, slot) {
                    self.counters.evictions.inc();
                    *freed += slot.class_size as u64;
                }
            }
        };
        let mut order: Vec<usize> = (0..3).collect();
        order.sort_by_key(|&g| {
            std::cmp::Reverse(used[g].saturating_sub((shares[g] * capacity as f64) as u64))
        });
        for &g in &order {
            let overflow = used[g].saturating_sub((shares[g] * capacity as f64) as u64);
            if overflow > 0 && freed < target {
                evict_from(g, overflow.min(target - freed), &mut freed, &mut next);
            }
        }
        for g in order {
            if freed < target {
                evict_from(g, target - freed, &mut freed, &mut next);
            }
        }
        // The candidates' references drop here: unread slots go back to the allocator now,
        // slots still being read when their reader finishes.
    }

    /// Persists the block map of the file engine: the cache file is synced first, so every
    /// slot the map names is durable.
    pub(crate) fn persist(&self) -> io::Result<()> {
        let (Engine::File(arena), Some(path)) = (&*self.engine, &self.config.persistence_path)
        else {
            return Ok(());
        };
        arena.sync()?;
        persistence::write_map(self, path)
    }

    pub(crate) fn claim_and_publish(
        &self,
        key: BlockCacheKey,
        offset: u64,
        len: u32,
        priority: BlockPriority,
    ) -> bool {
        let mut a = self.allocator.lock();
        let Some(class) = a.class_size(len as usize) else {
            return false;
        };
        if !a.claim(offset, len as usize) {
            return false;
        }
        drop(a);
        let slot = Arc::new(Slot::new(
            offset,
            len,
            class,
            priority,
            self.tick(),
            self.sink.clone(),
        ));
        self.table.publish(key, slot)
    }

    pub(crate) fn config(&self) -> &BucketCacheConfig {
        &self.config
    }

    pub(crate) fn check_slot_header(&self, bytes: &[u8], key: &BlockCacheKey, len: u32) -> bool {
        bytes.len() >= SLOT_HEADER
            && &bytes[..4] == SLOT_MAGIC
            && u32::from_be_bytes(bytes[4..8].try_into().expect("4")) as usize + SLOT_HEADER
                == len as usize
            && u64::from_be_bytes(bytes[8..16].try_into().expect("8")) == key.file
            && u64::from_be_bytes(bytes[16..24].try_into().expect("8")) == key.offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_hfile::BlockType;

    fn block(len: usize) -> Block {
        let header = BlockHeader {
            block_type: BlockType::Data,
            on_disk_size_without_header: len as u32,
            uncompressed_size_without_header: len as u32,
            prev_block_offset: -1,
            checksum_type: ChecksumType::Crc32C,
            bytes_per_checksum: 16384,
            on_disk_data_size_with_header: len as u32 + 33,
        };
        Block::from_parts(0, header, Bytes::from(vec![9u8; len]))
    }

    #[test]
    fn memory_hits_are_reverified_when_asked() {
        for verify in [false, true] {
            let c = BucketCache::new(BucketCacheConfig {
                capacity: 8 << 20,
                verify_memory_hits: verify,
                ..Default::default()
            })
            .unwrap();
            let key = BlockCacheKey { file: 1, offset: 0 };
            c.cache_block(key, block(1000), BlockPriority::Single);
            c.wait_for_writes();
            let slot = c.inner().table.pin(&key).unwrap();
            // Damage the cached bytes (no reader holds them; this test is the only thread).
            if let Engine::OffHeap(a) = &*c.inner().engine {
                a.write(slot.offset + SLOT_HEADER as u64 + 500, &[0xFF]);
            }
            drop(slot);
            let got = c.get(&key);
            if verify {
                assert!(got.is_none(), "a damaged block is not served");
                assert_eq!(c.stats().corrupt_count, 1);
                assert!(c.get(&key).is_none(), "and it left the cache");
            } else {
                assert_eq!(
                    got.unwrap().data()[467],
                    0xFF,
                    "unverified hits are served as they are"
                );
            }
        }
    }
}
