//! A stable external sort of (key, value) records in bounded memory: records are buffered
//! until the memory budget is used, then sorted and spilled to a temporary run file; the
//! runs (and whatever is still buffered) are merged k ways at the end.
//!
//! Stable means records with equal keys come out in the order they were pushed, whatever
//! run they were spilled to: importtsv keeps the first of equal cells, as HBase's reducer
//! does, so the order of ties is part of the result.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Bytes each buffered record costs beyond its key and value (its entry in the index).
const ENTRY_OVERHEAD: usize = std::mem::size_of::<Entry>();

/// Buffer of each run file while merging; with many runs this is what the merge costs.
const RUN_READ_BUFFER: usize = 64 * 1024;

/// One buffered record: where its key and value lie in the arena, and its push order.
#[derive(Clone, Copy)]
struct Entry {
    start: usize,
    key_len: u32,
    value_len: u32,
    ordinal: u64,
}

/// A key order; a plain function so runs can be merged without capturing state.
pub type KeyOrder = fn(&[u8], &[u8]) -> Ordering;

/// Records waiting to be sorted: their bytes, and an index entry each.
#[derive(Default)]
struct Buffer {
    arena: Vec<u8>,
    entries: Vec<Entry>,
}

impl Buffer {
    /// Bytes held (records and index).
    fn bytes(&self) -> usize {
        self.arena.len() + self.entries.len() * ENTRY_OVERHEAD
    }

    /// Sorts the index by key, ties by push order.
    fn sort(&mut self, order: KeyOrder) {
        let arena = &self.arena;
        // Ordinals rise with push order, so an unstable sort tied on them is stable.
        self.entries.sort_unstable_by(|a, b| {
            order(key_of(arena, a), key_of(arena, b)).then(a.ordinal.cmp(&b.ordinal))
        });
    }

    /// Writes the (sorted) records as a run: per record `key_len u32 | value_len u32 |
    /// ordinal u64 | key | value`, little-endian.
    fn write_run(&self, path: &Path) -> Result<()> {
        let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let write = |w: &mut BufWriter<File>| -> std::io::Result<()> {
            for e in &self.entries {
                w.write_all(&e.key_len.to_le_bytes())?;
                w.write_all(&e.value_len.to_le_bytes())?;
                w.write_all(&e.ordinal.to_le_bytes())?;
                let end = e.start + e.key_len as usize + e.value_len as usize;
                w.write_all(&self.arena[e.start..end])?;
            }
            w.flush()
        };
        write(&mut w).with_context(|| format!("writing sort run {}", path.display()))
    }
}

/// A run being sorted and written on its own thread; gives its buffer back for reuse.
type Spilling = std::thread::JoinHandle<Result<Buffer>>;

/// Sorts (key, value) records by a [`KeyOrder`], spilling to files in a temporary directory
/// when the buffered records pass the memory budget. The budget is two buffers of half of it:
/// while one full buffer is sorted and written on a second thread, records fill the other.
pub struct ExternalSorter {
    order: KeyOrder,
    /// Bytes one buffer may hold: half the budget.
    half: usize,
    buf: Buffer,
    spare: Option<Buffer>,
    spilling: Option<Spilling>,
    next_ordinal: u64,
    dir: tempfile::TempDir,
    runs: Vec<PathBuf>,
    spilled_bytes: u64,
}

impl ExternalSorter {
    /// A sorter holding about `budget` bytes (records plus their index entries) before it
    /// spills runs into a new temporary directory under `tmp_parent`.
    pub fn new(order: KeyOrder, budget: usize, tmp_parent: &Path) -> Result<ExternalSorter> {
        let dir = tempfile::Builder::new()
            .prefix("cairn-importtsv-sort-")
            .tempdir_in(tmp_parent)
            .with_context(|| format!("creating a sort directory in {}", tmp_parent.display()))?;
        Ok(ExternalSorter {
            order,
            half: (budget / 2).max(1),
            buf: Buffer::default(),
            spare: None,
            spilling: None,
            next_ordinal: 0,
            dir,
            runs: Vec::new(),
            spilled_bytes: 0,
        })
    }

    /// Adds a record.
    pub fn push(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if key.len() > u32::MAX as usize || value.len() > u32::MAX as usize {
            anyhow::bail!(
                "a record of {} + {} bytes is too large to sort",
                key.len(),
                value.len()
            );
        }
        let need = key.len() + value.len() + ENTRY_OVERHEAD;
        if !self.buf.entries.is_empty() && self.buf.bytes() + need > self.half {
            self.spill()?;
        }
        if self.buf.arena.capacity() == 0 {
            // Reserved whole so that growing by doubling never holds twice the budget; pages
            // are only used as records fill them.
            self.buf.arena.reserve_exact(self.half);
        }
        let start = self.buf.arena.len();
        self.buf.arena.extend_from_slice(key);
        self.buf.arena.extend_from_slice(value);
        self.buf.entries.push(Entry {
            start,
            key_len: key.len() as u32,
            value_len: value.len() as u32,
            ordinal: self.next_ordinal,
        });
        self.next_ordinal += 1;
        Ok(())
    }

    /// Run files written (or being written) so far.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Bytes written (or being written) to run files so far.
    pub fn spilled_bytes(&self) -> u64 {
        self.spilled_bytes
    }

    /// Waits for the run being written, if any, and keeps its buffer for reuse.
    fn wait_spilling(&mut self) -> Result<()> {
        if let Some(handle) = self.spilling.take() {
            let mut buf = handle
                .join()
                .map_err(|_| anyhow::anyhow!("the sort thread panicked"))??;
            buf.arena.clear();
            buf.entries.clear();
            self.spare = Some(buf);
        }
        Ok(())
    }

    /// Hands the full buffer to a thread that sorts it and writes it as the next run, and
    /// goes on with the spare buffer (after the previous run is written, so at most two
    /// buffers exist).
    fn spill(&mut self) -> Result<()> {
        self.wait_spilling()?;
        let path = self.dir.path().join(format!("run-{:06}", self.runs.len()));
        let mut full = std::mem::replace(&mut self.buf, self.spare.take().unwrap_or_default());
        self.spilled_bytes += (full.arena.len() + full.entries.len() * 16) as u64;
        self.runs.push(path.clone());
        let order = self.order;
        let handle = std::thread::Builder::new()
            .name("importtsv-sort".into())
            .spawn(move || {
                full.sort(order);
                full.write_run(&path)?;
                Ok(full)
            })
            .context("starting a sort thread")?;
        self.spilling = Some(handle);
        Ok(())
    }

    /// Hands every record to `sink` in order (ties in push order) and removes the runs.
    pub fn finish(mut self, mut sink: impl FnMut(&[u8], &[u8]) -> Result<()>) -> Result<()> {
        self.wait_spilling()?;
        self.spare = None;
        self.buf.sort(self.order);
        if self.runs.is_empty() {
            for e in &self.buf.entries {
                let k = key_of(&self.buf.arena, e);
                let v =
                    &self.buf.arena[e.start + k.len()..e.start + k.len() + e.value_len as usize];
                sink(k, v)?;
            }
            return Ok(());
        }
        let order = self.order;
        let mut sources: Vec<Source> = Vec::with_capacity(self.runs.len() + 1);
        for path in &self.runs {
            let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
            sources.push(Source::Run {
                reader: BufReader::with_capacity(RUN_READ_BUFFER, file),
                path: path.clone(),
            });
        }
        sources.push(Source::Memory { next: 0 });
        let mut heap = BinaryHeap::with_capacity(sources.len());
        for (i, s) in sources.iter_mut().enumerate() {
            if let Some(head) = s.next(&self.buf.arena, &self.buf.entries)? {
                heap.push(HeapItem {
                    source: i,
                    head,
                    order,
                });
            }
        }
        while let Some(mut top) = heap.pop() {
            sink(&top.head.key, &top.head.value)?;
            if let Some(head) = sources[top.source].next(&self.buf.arena, &self.buf.entries)? {
                top.head = head;
                heap.push(top);
            }
        }
        Ok(())
    }
}

fn key_of<'a>(arena: &'a [u8], e: &Entry) -> &'a [u8] {
    &arena[e.start..e.start + e.key_len as usize]
}

/// The next record of one sorted source.
struct Head {
    key: Vec<u8>,
    value: Vec<u8>,
    ordinal: u64,
}

enum Source {
    Run {
        reader: BufReader<File>,
        path: PathBuf,
    },
    Memory {
        next: usize,
    },
}

impl Source {
    fn next(&mut self, arena: &[u8], entries: &[Entry]) -> Result<Option<Head>> {
        match self {
            Source::Memory { next } => {
                let Some(e) = entries.get(*next) else {
                    return Ok(None);
                };
                *next += 1;
                let k = key_of(arena, e);
                let v = &arena[e.start + k.len()..e.start + k.len() + e.value_len as usize];
                Ok(Some(Head {
                    key: k.to_vec(),
                    value: v.to_vec(),
                    ordinal: e.ordinal,
                }))
            }
            Source::Run { reader, path } => {
                let mut header = [0u8; 16];
                match read_full(reader, &mut header)
                    .with_context(|| format!("reading sort run {}", path.display()))?
                {
                    0 => return Ok(None),
                    16 => {}
                    n => anyhow::bail!(
                        "sort run {} ends inside a record header ({n} of 16 bytes)",
                        path.display()
                    ),
                }
                let key_len = u32::from_le_bytes(header[0..4].try_into().expect("4")) as usize;
                let value_len = u32::from_le_bytes(header[4..8].try_into().expect("4")) as usize;
                let ordinal = u64::from_le_bytes(header[8..16].try_into().expect("8"));
                let mut key = vec![0; key_len];
                let mut value = vec![0; value_len];
                reader
                    .read_exact(&mut key)
                    .and_then(|_| reader.read_exact(&mut value))
                    .with_context(|| format!("reading sort run {}", path.display()))?;
                Ok(Some(Head {
                    key,
                    value,
                    ordinal,
                }))
            }
        }
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A source's head in the merge heap: smallest key first, then smallest ordinal.
struct HeapItem {
    source: usize,
    head: Head,
    order: KeyOrder,
}

impl PartialEq for HeapItem {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for HeapItem {}
impl PartialOrd for HeapItem {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for HeapItem {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap pops the greatest: reverse so the smallest record comes first.
        (self.order)(&other.head.key, &self.head.key)
            .then(other.head.ordinal.cmp(&self.head.ordinal))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bytes_order(a: &[u8], b: &[u8]) -> Ordering {
        a.cmp(b)
    }

    /// Orders on the first byte only, so many records tie and stability shows.
    fn first_byte_order(a: &[u8], b: &[u8]) -> Ordering {
        a.first().cmp(&b.first())
    }

    type Records = Vec<(Vec<u8>, Vec<u8>)>;

    fn run_sort(order: KeyOrder, budget: usize, records: &Records) -> (Records, usize) {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = ExternalSorter::new(order, budget, tmp.path()).unwrap();
        for (k, v) in records {
            s.push(k, v).unwrap();
        }
        let runs = s.runs();
        let mut out = Vec::new();
        s.finish(|k, v| {
            out.push((k.to_vec(), v.to_vec()));
            Ok(())
        })
        .unwrap();
        (out, runs)
    }

    #[test]
    fn spills_when_the_budget_is_small_and_merges_back() {
        let records: Vec<_> = (0..1000u32)
            .rev()
            .map(|i| (i.to_be_bytes().to_vec(), vec![i as u8; 3]))
            .collect();
        let (out, runs) = run_sort(bytes_order, 2000, &records);
        assert!(runs > 10, "only {runs} runs");
        let mut expected = records.clone();
        expected.sort();
        assert_eq!(out, expected);
    }

    fn check_against_stable_sort(
        records: &Records,
        budget: usize,
        by_first_byte: bool,
    ) -> Result<(), TestCaseError> {
        let order: KeyOrder = if by_first_byte {
            first_byte_order
        } else {
            bytes_order
        };
        let (out, _) = run_sort(order, budget, records);
        let mut expected = records.clone();
        expected.sort_by(|a, b| order(&a.0, &b.0));
        prop_assert_eq!(out, expected);
        Ok(())
    }

    fn records(max: usize) -> impl Strategy<Value = Records> {
        prop::collection::vec(
            (
                prop::collection::vec(0u8..4, 0..4),
                prop::collection::vec(any::<u8>(), 0..6),
            ),
            0..max,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// The external sort gives exactly what a stable in-memory sort gives, for tiny
        /// budgets, down to one record per run (many runs, many ties across runs).
        #[test]
        fn equals_a_stable_in_memory_sort_with_tiny_budgets(
            records in records(200),
            budget in 1usize..400,
            by_first_byte in any::<bool>(),
        ) {
            check_against_stable_sort(&records, budget, by_first_byte)?;
        }

        /// The same with buffers large enough that the in-memory sort's own tie order
        /// shows (small slices are sorted stably even by an unstable sort).
        #[test]
        fn equals_a_stable_in_memory_sort_with_large_buffers(
            records in records(3000),
            budget in 2_000usize..200_000,
            by_first_byte in any::<bool>(),
        ) {
            check_against_stable_sort(&records, budget, by_first_byte)?;
        }
    }
}
