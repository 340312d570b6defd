//! cairn's own HDFS reads against hdfs-native's, same file, same run: a MiniDFSCluster with one
//! DataNode (interop/hdfs) holds a 100 MiB file; each round reads it front to back in 64 KiB
//! pieces that overlap by a block header (as store-file scans and compactions read), then makes
//! 2,000 random 64 KiB reads (as gets that miss the block cache do), through
//!
//! - cairn without HDFS checksums (how store files are read: their blocks carry their own),
//! - cairn with HDFS checksums verified (every other file, and the fallback),
//! - hdfs-native's `FileReader::read_range` (which verifies them).
//!
//! Rounds alternate the three readers; the table gives the best and median round of each and
//! the ratios to hdfs-native's. Wall time of this process; the DataNode's CPU is not counted.
//!
//! `cargo bench -p cairn-fs --features hdfs --bench hdfs_reads` (needs the MiniDFSCluster jar:
//! `mvn -f interop/hdfs/pom.xml package`). `CAIRN_BENCH_QUICK=1`: one round of a 16 MiB file.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use cairn_fs::minidfs::MiniDfs;
use cairn_fs::{FileSystem, HdfsFileSystem};

const PIECE: usize = 65_536 + 33;
const RANDOM_READS: usize = 2000;

fn pieces(len: usize) -> impl Iterator<Item = usize> {
    (0..)
        .map(|i| i * 65_536)
        .take_while(move |at| at + PIECE <= len)
}

fn random_offsets(len: usize) -> Vec<usize> {
    let mut x = 12345u64;
    (0..RANDOM_READS)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 20) as usize % (len - PIECE)
        })
        .collect()
}

fn timed(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn main() {
    let quick = std::env::var_os("CAIRN_BENCH_QUICK").is_some();
    let (len, rounds) = if quick { (16 << 20, 1) } else { (100 << 20, 5) };
    let Some(cluster) = MiniDfs::start(1).expect("MiniDFSCluster") else {
        eprintln!("hdfs_reads: skipped (MiniDFSCluster jar not built)");
        return;
    };
    let fs = HdfsFileSystem::connect(cluster.url()).expect("connect");
    let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
    let p = Path::new("/bench/file");
    let mut out = fs.create(p).expect("create");
    out.write_all(&data).expect("write");
    out.close().expect("close");
    let offsets = random_offsets(len);
    let native = hdfs_native::sync::ClientBuilder::new()
        .with_url(cluster.url())
        .build()
        .expect("hdfs-native client");

    let names = [
        "cairn, no HDFS checksums",
        "cairn, HDFS checksums",
        "hdfs-native",
    ];
    let mut seq: [Vec<Duration>; 3] = Default::default();
    let mut random: [Vec<Duration>; 3] = Default::default();
    for _ in 0..rounds {
        for (i, verify) in [(0, false), (1, true)] {
            let src = if verify {
                fs.open(p).expect("open")
            } else {
                fs.open_no_checksum(p).expect("open")
            };
            seq[i].push(timed(|| {
                for at in pieces(len) {
                    let b = src.read_at(at as u64, PIECE).expect("read");
                    assert_eq!(b[..], data[at..at + PIECE]);
                }
            }));
            random[i].push(timed(|| {
                for &at in &offsets {
                    let b = src.read_at(at as u64, PIECE).expect("read");
                    assert_eq!(b.len(), PIECE);
                }
            }));
        }
        let reader = native.read("/bench/file").expect("open");
        seq[2].push(timed(|| {
            for at in pieces(len) {
                let b = reader.read_range(at, PIECE).expect("read");
                assert_eq!(b[..], data[at..at + PIECE]);
            }
        }));
        random[2].push(timed(|| {
            for &at in &offsets {
                let b = reader.read_range(at, PIECE).expect("read");
                assert_eq!(b.len(), PIECE);
            }
        }));
    }
    let stat = |v: &mut Vec<Duration>| {
        v.sort();
        (v[0], v[v.len() / 2])
    };
    println!(
        "hdfs_reads: {} MiB file, 1 DataNode, {rounds} rounds; sequential: {} reads of {PIECE} B; random: {RANDOM_READS} reads of {PIECE} B",
        len >> 20,
        pieces(len).count()
    );
    println!("| reader | sequential ms (best / median) | random ms (best / median) | hdfs-native / this, sequential | hdfs-native / this, random |");
    println!("|---|---|---|---|---|");
    let seq_stats: Vec<_> = seq.iter_mut().map(stat).collect();
    let random_stats: Vec<_> = random.iter_mut().map(stat).collect();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for i in 0..3 {
        println!(
            "| {} | {:.0} / {:.0} | {:.0} / {:.0} | {:.2}x | {:.2}x |",
            names[i],
            ms(seq_stats[i].0),
            ms(seq_stats[i].1),
            ms(random_stats[i].0),
            ms(random_stats[i].1),
            ms(seq_stats[2].1) / ms(seq_stats[i].1),
            ms(random_stats[2].1) / ms(random_stats[i].1),
        );
    }
}
