//! Checksum throughput: cairn's chunked CRC32C next to the crates called once per chunk and a
//! plain memory read loop over the same bytes (the ceiling), in one run.
//!
//! `cargo bench -p cairn-checksum --bench checksum` prints criterion's report and then a
//! Markdown table of GB/s and ratios read back from criterion's estimates.
//! `CAIRN_BENCH_QUICK=1` shortens every measurement (CI smoke runs).

use std::hint::black_box;
use std::time::Duration;

use cairn_checksum::{ChecksumType, DataChecksum, Implementation};
use criterion::{BenchmarkId, Criterion, Throughput};

const BLOCK: usize = 64 * 1024;
const DRAM_BYTES: usize = 1 << 30;

struct Case {
    group: &'static str,
    label: &'static str,
    len: usize,
    bpc: usize,
}

const CASES: [Case; 4] = [
    Case {
        group: "block64k_chunk512",
        label: "64 KiB block, 512 B chunks (L2)",
        len: BLOCK,
        bpc: 512,
    },
    Case {
        group: "block64k_chunk16k",
        label: "64 KiB block, 16 KiB chunks (L2)",
        len: BLOCK,
        bpc: 16 * 1024,
    },
    Case {
        group: "buffer1m",
        label: "one 1 MiB buffer (L2)",
        len: 1 << 20,
        bpc: 1 << 20,
    },
    Case {
        group: "dram1g_chunk512",
        label: "1 GiB from DRAM, 512 B chunks",
        len: DRAM_BYTES,
        bpc: 512,
    },
];

fn sample(len: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn per_chunk(data: &[u8], bpc: usize, sums: &mut [u8], f: impl Fn(&[u8]) -> u32) {
    for (c, s) in data.chunks(bpc).zip(sums.chunks_exact_mut(4)) {
        s.copy_from_slice(&f(c).to_be_bytes());
    }
}

/// The ceiling: touch every byte once with the widest loads the CPU has, no arithmetic.
fn read_loop(data: &[u8]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F, checked just above.
        return unsafe { read_loop_avx512(data) };
    }
    data.chunks_exact(8)
        .fold(0u64, |a, w| a ^ u64::from_le_bytes(w.try_into().unwrap()))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn read_loop_avx512(data: &[u8]) -> u64 {
    use std::arch::x86_64::*;
    let mut acc = [_mm512_setzero_si512(); 4];
    for block in data.chunks_exact(256) {
        for (i, a) in acc.iter_mut().enumerate() {
            let part: &[u8; 64] = block[i * 64..i * 64 + 64].try_into().unwrap();
            // SAFETY: `part` is a reference to 64 readable bytes; the load is unaligned.
            let v = unsafe { _mm512_loadu_si512(part.as_ptr().cast()) };
            *a = _mm512_xor_si512(*a, v);
        }
    }
    let x = _mm512_xor_si512(
        _mm512_xor_si512(acc[0], acc[1]),
        _mm512_xor_si512(acc[2], acc[3]),
    );
    _mm512_reduce_add_epi64(x) as u64
}

type Contender = (&'static str, Box<dyn Fn(&[u8], usize, &mut [u8])>);

fn contenders() -> Vec<Contender> {
    let mut v: Vec<Contender> = Vec::new();
    let best = Implementation::best();
    let cairn = DataChecksum::with_implementation(ChecksumType::Crc32C, 512, best).unwrap();
    let _ = cairn;
    v.push((
        "cairn",
        Box::new(move |d, bpc, s| {
            DataChecksum::with_implementation(ChecksumType::Crc32C, bpc as u32, best)
                .unwrap()
                .compute_chunked(d, s)
                .unwrap()
        }),
    ));
    v.push((
        "crc-fast",
        Box::new(|d, bpc, s| per_chunk(d, bpc, s, crc_fast::crc32_iscsi)),
    ));
    v.push((
        "crc32c",
        Box::new(|d, bpc, s| per_chunk(d, bpc, s, crc32c::crc32c)),
    ));
    v.push((
        "crc32fast (CRC32)",
        Box::new(|d, bpc, s| per_chunk(d, bpc, s, crc32fast::hash)),
    ));
    v.push((
        "cairn portable",
        Box::new(|d, bpc, s| {
            DataChecksum::with_implementation(
                ChecksumType::Crc32C,
                bpc as u32,
                Implementation::Portable,
            )
            .unwrap()
            .compute_chunked(d, s)
            .unwrap()
        }),
    ));
    v
}

fn bench(c: &mut Criterion, quick: bool) {
    let big = sample(DRAM_BYTES);
    for case in &CASES {
        let dram = case.len == DRAM_BYTES;
        let data = if dram { &big[..] } else { &big[..case.len] };
        let mut sums = vec![0u8; case.len.div_ceil(case.bpc) * 4];
        let mut g = c.benchmark_group(case.group);
        g.throughput(Throughput::Bytes(case.len as u64));
        if dram || quick {
            g.sample_size(10);
        }
        if quick {
            g.warm_up_time(Duration::from_millis(100));
            g.measurement_time(Duration::from_millis(300));
        } else if dram {
            g.measurement_time(Duration::from_secs(8));
        }
        for (name, f) in contenders() {
            if dram && name == "cairn portable" {
                continue;
            }
            g.bench_function(BenchmarkId::from_parameter(name), |b| {
                b.iter(|| f(black_box(data), case.bpc, &mut sums))
            });
        }
        g.bench_function(BenchmarkId::from_parameter("read loop"), |b| {
            b.iter(|| read_loop(black_box(data)))
        });
        g.finish();
    }
}

/// Reads criterion's mean estimate (ns per iteration) back from its output directory.
fn mean_ns(group: &str, id: &str) -> Option<f64> {
    let dir = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../target").to_string());
    let path = format!("{dir}/criterion/{group}/{id}/new/estimates.json");
    let text = std::fs::read_to_string(&path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["median"]["point_estimate"].as_f64()
}

fn print_table() {
    let names: Vec<&str> = contenders()
        .iter()
        .map(|c| c.0)
        .chain(["read loop"])
        .collect();
    println!();
    println!(
        "CRC32C throughput, GB/s (criterion median); cairn kernel: {}; ratio = cairn / other",
        Implementation::best().describe()
    );
    println!();
    print!("| case |");
    for n in &names {
        print!(" {n} |");
    }
    println!(" cairn / crc-fast | cairn / read loop |");
    print!("|---|");
    for _ in &names {
        print!("---|");
    }
    println!("---|---|");
    for case in &CASES {
        print!("| {} |", case.label);
        let gbps: Vec<Option<f64>> = names
            .iter()
            .map(|n| mean_ns(case.group, n).map(|ns| case.len as f64 / ns))
            .collect();
        for g in &gbps {
            match g {
                Some(g) => print!(" {g:.1} |"),
                None => print!(" — |"),
            }
        }
        let ratio = |i: usize| match (gbps[0], gbps[i]) {
            (Some(a), Some(b)) => format!("{:.2}x", a / b),
            _ => "—".into(),
        };
        println!(" {} | {} |", ratio(1), ratio(names.len() - 1));
    }
}

fn main() {
    let quick = std::env::var_os("CAIRN_BENCH_QUICK").is_some();
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, quick);
    c.final_summary();
    print_table();
}
