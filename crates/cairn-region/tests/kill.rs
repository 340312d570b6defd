//! Kill -9 during flush and compaction: a child process (this test binary, re-run in child
//! mode) writes puts, flushes and compacts in a loop, printing each acknowledged row and the
//! phase it enters; the parent kills it with SIGKILL after a random delay, reopens the
//! directory and checks that
//! - every acknowledged put is there (SIGKILL is a process crash: `SYNC_WAL` survives it);
//! - the store directories hold exactly the files the stores opened: nothing left under the
//!   region's `.tmp`, no file the store did not load;
//! - no cell is in two store files of one store (what a compaction killed between committing
//!   its output and removing its inputs, or a flush done twice, would leave).
//!
//! Compactions are throttled so that they take long enough for kills to land inside them, and
//! in the trials aimed at compactions the child's store files are on a [`FaultFileSystem`]
//! that makes removing a store file slow, so kills also land between a compaction's commit
//! and the removal of its inputs. The WAL stays on local disk (its memory-mapped backend).
//! `CAIRN_KILL_TRIALS` sets the number of kills (default 36).

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_fs::{Fault, FaultFileSystem, FaultOp, FaultRule, FileSystem, LocalFileSystem};
use cairn_region::{
    ColumnFamilyDescriptor, Get, Put, RegionServer, ServerConfig, TableDescriptor, TableName,
    Throttle,
};

const CHILD_ENV: &str = "CAIRN_KILL_CHILD_DIR";
const TMP_DIR: &str = ".tmp";

mod store_check;
use store_check::check_store_files;

fn open(dir: &Path) -> Arc<RegionServer> {
    open_on(dir, Arc::new(LocalFileSystem))
}

/// Store files on `fs`, the WAL on local disk (its memory-mapped backend).
fn open_on(dir: &Path, fs: Arc<dyn FileSystem>) -> Arc<RegionServer> {
    let mut c = ServerConfig::new(dir);
    c.region.fs = fs;
    c.wal_fs = Some(Arc::new(LocalFileSystem));
    c.wal_dir = Some(dir.to_path_buf());
    c.background = false;
    c.region.compaction.min_files = 3;
    c.region.compaction.min_size = 1;
    // About 100 ms per compaction of this test's files: kills land inside them.
    c.region.throttle = Throttle {
        bytes_per_second: Some(8 << 20),
    };
    c.wal.roll_size = 256 * 1024;
    RegionServer::open(c).unwrap()
}

fn table() -> TableName {
    TableName::parse("kill").unwrap()
}

fn value(row: &str) -> Vec<u8> {
    row.as_bytes().repeat(32)
}

/// The child's job: runs only when the parent starts this test binary with the variable set.
#[test]
fn kill_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let trial: u32 = std::env::var("CAIRN_KILL_TRIAL").unwrap().parse().unwrap();
    // In the trials aimed at compactions, removing a store file is slow (as on a loaded
    // disk), so kills land between a compaction's commit and the removal of its inputs.
    let fs = FaultFileSystem::new(Arc::new(LocalFileSystem), trial.into());
    if trial % 3 == 2 {
        fs.add_rule(FaultRule::new(FaultOp::Delete, Fault::Stall(150)).on_paths_containing("/f/"));
    }
    let s = open_on(Path::new(&dir), fs);
    let t = table();
    if s.table(&t).is_err() {
        let d = TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f"));
        s.create_table(d, &[b"k5".to_vec()]).unwrap();
    }
    for i in 0u32.. {
        for n in 0..300u32 {
            let row = format!("k{}-{trial:03}-{i:05}-{n:04}", n % 10);
            s.put(&t, &Put::new(&row).add("f", "q", value(&row)))
                .unwrap();
            println!("ack {row}");
        }
        println!("phase flush");
        s.flush_table(&t).unwrap();
        println!("phase compact");
        s.compact_table(&t, i % 4 == 3).unwrap();
        println!("phase put");
    }
}

/// Files under the region directories' `.tmp` (what an interrupted flush or compaction left).
fn tmp_files(root: &Path) -> usize {
    fn walk(d: &Path, in_tmp: bool, n: &mut usize) {
        let Ok(rd) = std::fs::read_dir(d) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let tmp = in_tmp || e.file_name() == TMP_DIR;
            if p.is_dir() {
                walk(&p, tmp, n);
            } else if tmp {
                *n += 1;
            }
        }
    }
    let mut n = 0;
    walk(&root.join("data"), false, &mut n);
    n
}

fn verify(s: &RegionServer, rows: &[&String], trial: usize) {
    let t = table();
    for chunk in rows.chunks(500) {
        let gets = chunk.iter().map(|r| Get::new(r.as_bytes())).collect();
        let got = s.get_many(&t, gets).unwrap();
        for (row, cells) in chunk.iter().zip(got) {
            assert!(
                cells
                    .first()
                    .is_some_and(|c| c.as_cell().value == value(row)),
                "trial {trial}: acknowledged put {row} is missing after SIGKILL and recovery"
            );
        }
    }
}

#[test]
fn sigkill_during_flush_and_compaction_loses_nothing_and_leaves_no_orphans() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let started = Instant::now();
    let trials: usize = std::env::var("CAIRN_KILL_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(36);
    let mut acked: Vec<String> = Vec::new();
    let mut seed = 0x2545_f491_4f6c_dd1du64 ^ started.elapsed().as_nanos() as u64;
    let mut phases: HashMap<String, usize> = HashMap::new();
    let mut tmp_left = 0;
    for trial in 0..trials {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut child = Command::new(&exe)
            .args(["--exact", "kill_child", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, dir.path())
            .env("CAIRN_KILL_TRIAL", trial.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            let mut rows = Vec::new();
            let mut phase = "start".to_string();
            for l in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
                if let Some(r) = l.strip_prefix("ack ") {
                    rows.push(r.to_string());
                } else if let Some(p) = l.strip_prefix("phase ") {
                    phase = p.to_string();
                    let _ = tx.send(phase.clone());
                }
            }
            (rows, phase)
        });
        // A third of the kills at a random moment, a third soon after a flush starts, a
        // third inside a compaction.
        let (target, pause) = match trial % 3 {
            0 => (None, 100 + seed % 600),
            1 => (Some("flush"), seed % 5),
            _ => (Some("compact"), seed % 400),
        };
        if let Some(target) = target {
            let deadline = Instant::now() + Duration::from_secs(20);
            while let Ok(p) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                if p == target {
                    break;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(pause));
        child.kill().unwrap();
        child.wait().unwrap();
        let (new, phase) = reader.join().unwrap();
        *phases.entry(phase.clone()).or_default() += 1;
        tmp_left += tmp_files(dir.path());
        let s = open(dir.path());
        let mut check: Vec<&String> = new.iter().collect();
        if !acked.is_empty() {
            check.extend(
                (0..200).map(|i| &acked[(seed as usize).wrapping_add(i * 7919) % acked.len()]),
            );
        }
        verify(&s, &check, trial);
        check_store_files(&s, &table(), &format!("trial {trial}"));
        acked.extend(new);
        drop(s);
    }
    let s = open(dir.path());
    verify(&s, &acked.iter().collect::<Vec<_>>(), trials);
    check_store_files(&s, &table(), "at the end");
    eprintln!(
        "{trials} SIGKILLs (last phase entered: {phases:?}), {tmp_left} temporary files left by kills and removed, {} acknowledged puts all recovered, {:.1}s",
        acked.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        phases.get("flush").copied().unwrap_or(0) >= trials / 12
            && phases.get("compact").copied().unwrap_or(0) >= trials / 12,
        "too few kills landed in a flush and in a compaction: {phases:?}"
    );
    assert!(
        tmp_left > 0,
        "no kill left a temporary store file: the test misses the cleanup path"
    );
}
