//! `KeyValueHeap` (a binary heap with the current scanner held out) against the linear pick
//! it replaced (every step compares every scanner's cell), merging 1 to 32 sorted sources
//! of the same cells, in the same run. Two shapes: cells spread round-robin over the
//! sources (each step changes scanner: the heap's worst case), and runs of 16 cells per
//! source (a row's cells in one file: the common case). CPU ns per cell, best and median of
//! `CAIRN_BENCH_ROUNDS` (3) rounds.
//!
//! `cargo bench -p cairn-region --bench heap` (`CAIRN_BENCH_CELLS`, default 400,000).

mod common;

use std::cmp::Ordering;

use cairn_cell::{compare_cells, first_on_row, CellRef, KeyValue};
use cairn_region::heap::{CellScanner, KeyValueHeap, VecScanner};

/// The merge as it was: the current scanner is found by comparing every scanner's cell.
struct LinearHeap {
    scanners: Vec<Box<dyn CellScanner>>,
    current: Option<usize>,
}

impl LinearHeap {
    fn new(scanners: Vec<Box<dyn CellScanner>>) -> LinearHeap {
        let mut h = LinearHeap {
            scanners,
            current: None,
        };
        h.pick();
        h
    }

    fn pick(&mut self) {
        if let [only] = self.scanners.as_slice() {
            self.current = only.has_cell().then_some(0);
            return;
        }
        let mut best: Option<(usize, CellRef<'_>)> = None;
        for (i, s) in self.scanners.iter().enumerate() {
            if let Some(c) = s.peek() {
                if best
                    .as_ref()
                    .is_none_or(|(_, b)| compare_cells(&c, b) == Ordering::Less)
                {
                    best = Some((i, c));
                }
            }
        }
        self.current = best.map(|(i, _)| i);
    }

    fn peek(&self) -> Option<CellRef<'_>> {
        self.current.and_then(|i| self.scanners[i].peek())
    }

    fn next(&mut self) {
        if let Some(i) = self.current {
            self.scanners[i].next().unwrap();
            self.pick();
        }
    }

    fn seek(&mut self, key: &[u8]) {
        for s in &mut self.scanners {
            s.seek(key).unwrap();
        }
        self.pick();
    }
}

/// `cells` cells split over `n` sources, `run` consecutive cells at a time.
fn sources(cells: usize, n: usize, run: usize) -> Vec<Box<dyn CellScanner>> {
    let mut parts: Vec<Vec<KeyValue>> = vec![Vec::new(); n];
    for i in 0..cells {
        let kv = KeyValue::put(
            format!("row{:08}", i / 4).as_bytes(),
            b"f",
            format!("q{}", i % 4).as_bytes(),
            1,
            b"value",
        )
        .unwrap();
        parts[(i / run) % n].push(kv);
    }
    parts
        .into_iter()
        .map(|p| Box::new(VecScanner::new(p)) as Box<dyn CellScanner>)
        .collect()
}

/// CPU ns per merged cell of `merge` over fresh sources each round (built untimed).
fn measure(
    build: impl Fn() -> Vec<Box<dyn CellScanner>>,
    mut merge: impl FnMut(Vec<Box<dyn CellScanner>>) -> usize,
    rounds: usize,
) -> (f64, f64) {
    let mut per_cell: Vec<f64> = (0..rounds)
        .map(|_| {
            let src = build();
            let t0 = common::cpu_seconds();
            let n = merge(src);
            (common::cpu_seconds() - t0) * 1e9 / n as f64
        })
        .collect();
    per_cell.sort_by(f64::total_cmp);
    (per_cell[0], per_cell[per_cell.len() / 2])
}

fn main() {
    let cells = common::env_u64("CAIRN_BENCH_CELLS", 400_000) as usize;
    let rounds = common::env_u64("CAIRN_BENCH_ROUNDS", 3) as usize;
    let start = first_on_row(b"").unwrap();
    println!("| sources | cells per turn | linear ns/cell best / median | heap ns/cell best / median | linear / heap (median) |");
    println!("|---|---|---|---|---|");
    for run in [1, 16] {
        for n in [1, 2, 3, 8, 32] {
            let build = || sources(cells, n, run);
            let linear = measure(
                build,
                |src| {
                    let mut h = LinearHeap::new(src);
                    h.seek(&start);
                    let mut count = 0;
                    while h.peek().is_some() {
                        count += 1;
                        h.next();
                    }
                    count
                },
                rounds,
            );
            let heap = measure(
                build,
                |src| {
                    let mut h = KeyValueHeap::new(src);
                    h.seek(&start).unwrap();
                    let mut count = 0;
                    while h.peek().is_some() {
                        count += 1;
                        h.next().unwrap();
                    }
                    count
                },
                rounds,
            );
            println!(
                "| {n} | {run} | {:.1} / {:.1} | {:.1} / {:.1} | {:.2} |",
                linear.0,
                linear.1,
                heap.0,
                heap.1,
                linear.1 / heap.1
            );
        }
    }
}
