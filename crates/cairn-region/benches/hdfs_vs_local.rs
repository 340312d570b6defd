//! The region store on HDFS against the same store on local disk, same data, same run: a
//! MiniDFSCluster (interop/hdfs, one DataNode on this machine) and a local directory each get
//! ROWS rows of VALUE_SIZE-byte values in one region, flushed into several store files; then,
//! on each:
//! - random gets with no block cache (every get reads its block through the filesystem),
//! - a major compaction of the table (wall time and this process's CPU: the NameNode and
//!   DataNode run in another process and are not counted),
//! - sequential SYNC_WAL puts from one thread (local: a copy into the mapped WAL; HDFS: an
//!   hflush per put), then FSYNC_WAL puts (local: an fdatasync; HDFS: an hsync).
//!
//! `cargo bench -p cairn-region --features hdfs --bench hdfs_vs_local` (needs
//! `mvn -f interop/hdfs/pom.xml package` first). Environment: `CAIRN_BENCH_ROWS` (200,000),
//! `CAIRN_BENCH_VALUE_SIZE` (1024), `CAIRN_BENCH_GETS` (20,000), `CAIRN_BENCH_PUTS` (2,000),
//! `CAIRN_BENCH_QUICK=1` for a smoke run.

mod common;
use common::cpu_seconds;

use std::time::Instant;

use cairn_fs::minidfs::MiniDfs;
use cairn_region::{
    ColumnFamilyDescriptor, Durability, Get, Put, RegionServer, ServerConfig, TableDescriptor,
    TableName,
};

fn env_u64(name: &str, default: u64, quick: u64) -> u64 {
    if std::env::var_os("CAIRN_BENCH_QUICK").is_some() {
        return quick;
    }
    common::env_u64(name, default)
}

fn row(i: u64) -> String {
    format!("{i:026}")
}

struct Figures {
    gets_per_s: f64,
    get_cpu_us: f64,
    compact_s: f64,
    compact_cpu_s: f64,
    puts_per_s: f64,
    fsync_puts_per_s: f64,
}

fn run(config: ServerConfig, rows: u64, value_size: usize, gets: u64, puts: u64) -> Figures {
    let t = TableName::parse("bench").unwrap();
    let s = RegionServer::open(config.clone()).unwrap();
    let mut d = TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("info0"));
    d.memstore_flush_size = Some(1 << 40);
    s.create_table(d, &[]).unwrap();
    let value = vec![b'v'; value_size];
    // Loaded with ASYNC_WAL and flushed in four parts: four store files to compact.
    for part in 0..4 {
        let batch: Vec<Put> = (part * rows / 4..(part + 1) * rows / 4)
            .map(|i| {
                Put::new(row(i))
                    .add("info0", "0", &value)
                    .durability(Durability::AsyncWal)
            })
            .collect();
        for chunk in batch.chunks(1000) {
            s.put_many(&t, chunk).unwrap();
        }
        s.flush_table(&t).unwrap();
    }
    s.close().unwrap();
    drop(s);

    let s = RegionServer::open(config.clone()).unwrap();
    let mut x = 0x9e3779b97f4a7c15u64;
    let cpu = cpu_seconds();
    let started = Instant::now();
    for _ in 0..gets {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let got = s.get(&t, Get::new(row(x % rows))).unwrap();
        assert_eq!(got.len(), 1);
    }
    let get_wall = started.elapsed().as_secs_f64();
    let get_cpu = cpu_seconds() - cpu;

    let cpu = cpu_seconds();
    let started = Instant::now();
    s.compact_table(&t, true).unwrap();
    let compact_s = started.elapsed().as_secs_f64();
    let compact_cpu_s = cpu_seconds() - cpu;

    let started = Instant::now();
    for i in 0..puts {
        s.put(&t, &Put::new(row(rows + i)).add("info0", "0", &value))
            .unwrap();
    }
    let puts_per_s = puts as f64 / started.elapsed().as_secs_f64();
    let started = Instant::now();
    for i in 0..puts {
        let put = Put::new(row(rows + puts + i))
            .add("info0", "0", &value)
            .durability(Durability::FsyncWal);
        s.put(&t, &put).unwrap();
    }
    let fsync_puts_per_s = puts as f64 / started.elapsed().as_secs_f64();
    s.close().unwrap();
    Figures {
        gets_per_s: gets as f64 / get_wall,
        get_cpu_us: get_cpu / gets as f64 * 1e6,
        compact_s,
        compact_cpu_s,
        puts_per_s,
        fsync_puts_per_s,
    }
}

fn main() {
    let rows = env_u64("CAIRN_BENCH_ROWS", 200_000, 4_000);
    let value_size = env_u64("CAIRN_BENCH_VALUE_SIZE", 1024, 1024) as usize;
    let gets = env_u64("CAIRN_BENCH_GETS", 20_000, 500);
    let puts = env_u64("CAIRN_BENCH_PUTS", 2_000, 100);
    let Some(cluster) = MiniDfs::start(1).expect("MiniDFSCluster") else {
        eprintln!("hdfs_vs_local: build interop/hdfs first (mvn -f interop/hdfs/pom.xml package)");
        return;
    };
    let local_dir = tempfile::tempdir().unwrap();
    eprintln!(
        "hdfs_vs_local: {rows} rows x {value_size} B, {gets} random gets (no block cache), \
         a major compaction, {puts} SYNC_WAL and {puts} FSYNC_WAL puts; HDFS at {}",
        cluster.url()
    );
    let mut local = ServerConfig::new(local_dir.path());
    local.background = false;
    let local = run(local, rows, value_size, gets, puts);
    let mut hdfs = ServerConfig::from_uri(&format!("{}/hbase", cluster.url())).unwrap();
    hdfs.background = false;
    let hdfs = run(hdfs, rows, value_size, gets, puts);

    println!("| | local disk | HDFS (MiniDFSCluster, 1 DataNode) | HDFS / local |");
    println!("|---|---|---|---|");
    let line = |name: &str, l: f64, h: f64, digits: usize| {
        println!(
            "| {name} | {l:.digits$} | {h:.digits$} | {:.2} |",
            h / l,
            digits = digits
        );
    };
    line(
        "random gets/s, no block cache",
        local.gets_per_s,
        hdfs.gets_per_s,
        0,
    );
    line(
        "CPU µs per get (this process)",
        local.get_cpu_us,
        hdfs.get_cpu_us,
        1,
    );
    line(
        "major compaction, wall s",
        local.compact_s,
        hdfs.compact_s,
        2,
    );
    line(
        "major compaction, CPU s (this process)",
        local.compact_cpu_s,
        hdfs.compact_cpu_s,
        2,
    );
    line(
        "SYNC_WAL puts/s, 1 thread",
        local.puts_per_s,
        hdfs.puts_per_s,
        0,
    );
    line(
        "FSYNC_WAL puts/s, 1 thread",
        local.fsync_puts_per_s,
        hdfs.fsync_puts_per_s,
        0,
    );
}
