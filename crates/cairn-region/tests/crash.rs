//! Crash test: a child process writes SYNC_WAL puts (with small memstores, so flushes and
//! compactions run underneath) and prints each acknowledged row; the parent kills it with
//! SIGKILL at a random moment, reopens the directory, and checks that every acknowledged put
//! is there. Repeated over one directory, so recovery also recovers from earlier crashes.
//! WAL segments are small, so recovery also reads recycled segments.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_region::{
    ColumnFamilyDescriptor, Put, RegionServer, ServerConfig, TableDescriptor, TableName,
};

mod killed_child;

const CHILD_ENV: &str = "CAIRN_CRASH_CHILD_DIR";

fn open(dir: &std::path::Path, background: bool) -> Arc<RegionServer> {
    let mut c = ServerConfig::new(dir);
    c.background = background;
    c.region.compaction.min_files = 3;
    c.region.compaction.min_size = 1;
    // Small WAL segments: rolls, and flushed segments' files recycled as new segments (whose
    // old bytes a killed writer leaves past its last record), happen in every trial.
    c.wal.roll_size = 64 * 1024;
    RegionServer::open(c).unwrap()
}

fn table() -> TableName {
    TableName::parse("crash").unwrap()
}

/// The child's job: runs only when the parent starts this test binary with the variable set.
#[test]
fn crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let trial: u32 = std::env::var("CAIRN_CRASH_TRIAL").unwrap().parse().unwrap();
    let s = open(std::path::Path::new(&dir), true);
    let t = table();
    if s.table(&t).is_err() {
        let mut d = TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f"));
        d.memstore_flush_size = Some(48 * 1024);
        s.create_table(d, &[b"k05".to_vec()]).unwrap();
        println!("created");
    }
    let threads: Vec<_> = (0..2)
        .map(|th| {
            let s = s.clone();
            let t = t.clone();
            std::thread::spawn(move || {
                for n in 0u32.. {
                    let row = format!("k{:02}-{trial:03}-{th}-{n:07}", n % 10);
                    s.put(&t, &Put::new(&row).add("f", "q", row.as_bytes()))
                        .unwrap();
                    println!("ack {row}");
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
}

/// WAL files in `wal_dir` written into a recycled file.
fn recycled_segments(wal_dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(wal_dir) else {
        return 0;
    };
    entries
        .filter_map(|e| {
            let e = e.ok()?;
            cairn_wal::names::parse_wal_file_name(e.file_name().to_str()?)?;
            let scan = cairn_wal::file::scan_file(&e.path(), |_, _| Ok(())).ok()?;
            scan.header?.cairn.filter(|c| c.recycled)
        })
        .count()
}

#[test]
fn every_acknowledged_put_survives_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut acked: Vec<String> = Vec::new();
    let mut seed = 0x9e3779b97f4a7c15u64;
    let trials = 50;
    let mut recycled_reads = 0;
    for trial in 0..trials {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // Let it start (recovery and table creation), then kill at a random moment.
        let new = killed_child::kill_after(
            "crash_child",
            &[
                (CHILD_ENV, dir.path().display().to_string()),
                ("CAIRN_CRASH_TRIAL", trial.to_string()),
            ],
            Duration::from_millis(30 + seed % 120),
        );
        recycled_reads += recycled_segments(
            &dir.path()
                .join("WALs")
                .join(cairn_region::server::DEFAULT_SERVER_NAME),
        );
        let s = open(dir.path(), false);
        // This trial's acknowledged rows, and a sample of earlier trials' (all of them are
        // checked once more at the end).
        let mut check: Vec<&String> = new.iter().collect();
        check.extend(killed_child::sample(&acked, seed, 200));
        killed_child::verify_acked(&s, &table(), &check, trial);
        acked.extend(new);
        drop(s);
    }
    assert!(
        acked.len() > trials,
        "children acknowledged only {} puts",
        acked.len()
    );
    assert!(
        recycled_reads > 0,
        "no recovery read a recycled WAL segment: the test misses that path"
    );
    let s = open(dir.path(), false);
    killed_child::verify_acked(&s, &table(), &acked.iter().collect::<Vec<_>>(), trials);
    eprintln!(
        "{trials} SIGKILL trials, {} acknowledged puts all recovered, {:.1}s",
        acked.len(),
        started.elapsed().as_secs_f64()
    );
}
