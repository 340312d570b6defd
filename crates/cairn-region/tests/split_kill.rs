//! SIGKILL while regions split by themselves: a child process writes SYNC_WAL puts into a
//! table whose regions split at a tiny `hbase.hregion.max.filesize` (flushes, compactions of
//! daughters' references and splits run underneath), printing each acknowledged row; the
//! parent kills it at a random moment, reopens the directory and checks that every
//! acknowledged put is there and that a full scan sees each row once (a split undone and
//! redone, or parents opened beside their daughters, would show rows twice). Repeated over
//! one directory, so recovery also recovers from earlier kills.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_region::{
    ColumnFamilyDescriptor, Put, RegionError, RegionServer, Scan, ServerConfig, TableDescriptor,
    TableName,
};

mod killed_child;

const CHILD_ENV: &str = "CAIRN_SPLIT_KILL_CHILD_DIR";

fn open(dir: &std::path::Path, background: bool) -> Arc<RegionServer> {
    let mut c = ServerConfig::new(dir);
    c.background = background;
    c.region.compaction.min_files = 3;
    c.region.compaction.min_size = 1;
    c.wal.roll_size = 64 * 1024;
    c.set_property(
        "hbase.regionserver.region.split.policy",
        "org.apache.hadoop.hbase.regionserver.ConstantSizeRegionSplitPolicy",
    )
    .unwrap();
    c.set_property("hbase.hregion.max.filesize", "49152")
        .unwrap();
    RegionServer::open(c).unwrap()
}

fn table() -> TableName {
    TableName::parse("splitkill").unwrap()
}

/// The child's job: runs only when the parent starts this test binary with the variable set.
#[test]
fn split_kill_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let trial: u32 = std::env::var("CAIRN_SPLIT_KILL_TRIAL")
        .unwrap()
        .parse()
        .unwrap();
    let s = open(std::path::Path::new(&dir), true);
    let t = table();
    if s.table(&t).is_err() {
        let mut d = TableDescriptor::new(t.clone())
            .with_family(ColumnFamilyDescriptor::new("f").block_size(1024));
        d.memstore_flush_size = Some(16 * 1024);
        s.create_table(d, &[]).unwrap();
    }
    let threads: Vec<_> = (0..2)
        .map(|th| {
            let s = s.clone();
            let t = t.clone();
            std::thread::spawn(move || {
                for n in 0u32.. {
                    // Rows spread over the key space, so every region keeps growing.
                    let row = format!("k{:03}-{trial:03}-{th}-{n:07}", (n * 37) % 1000);
                    let put = Put::new(&row).add("f", "q", row.as_bytes());
                    loop {
                        match s.put(&t, &put) {
                            Ok(()) => break,
                            // Backpressure while flushes catch up: a client retries.
                            Err(RegionError::RegionTooBusy { .. }) => {
                                std::thread::sleep(Duration::from_millis(5))
                            }
                            Err(e) => panic!("put {row}: {e}"),
                        }
                    }
                    println!("ack {row}");
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
}

fn verify(s: &RegionServer, rows: &[&String], trial: usize) {
    let t = table();
    killed_child::verify_acked(s, &t, rows, trial);
    let mut last: Option<Vec<u8>> = None;
    for r in s.scanner(&t, Scan::new()).unwrap() {
        let row = r.unwrap()[0].key().row().to_vec();
        assert!(
            last.as_ref().is_none_or(|l| *l < row),
            "trial {trial}: row {} seen twice or out of order in a full scan",
            String::from_utf8_lossy(&row)
        );
        last = Some(row);
    }
}

#[test]
fn every_acknowledged_put_survives_sigkill_during_splits() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut acked: Vec<String> = Vec::new();
    let mut seed = 0x2545f4914f6cdd1du64;
    let trials = 30;
    let (mut finished, mut undone) = (0, 0);
    for trial in 0..trials {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let new = killed_child::kill_after(
            "split_kill_child",
            &[
                (CHILD_ENV, dir.path().display().to_string()),
                ("CAIRN_SPLIT_KILL_TRIAL", trial.to_string()),
            ],
            Duration::from_millis(100 + seed % 400),
        );
        let s = open(dir.path(), false);
        finished += s.recovery.transitions_finished;
        undone += s.recovery.transitions_undone;
        let mut check: Vec<&String> = new.iter().collect();
        check.extend(killed_child::sample(&acked, seed, 200));
        verify(&s, &check, trial);
        acked.extend(new);
        drop(s);
    }
    let s = open(dir.path(), false);
    let regions = s.table(&table()).unwrap().regions.len();
    assert!(
        regions >= 4,
        "only {regions} regions: the children hardly split"
    );
    verify(&s, &acked.iter().collect::<Vec<_>>(), trials);
    eprintln!(
        "{trials} SIGKILL trials, {} acknowledged puts all recovered, {regions} regions, \
         {finished} splits finished and {undone} undone at recovery, {:.1}s",
        acked.len(),
        started.elapsed().as_secs_f64()
    );
}
