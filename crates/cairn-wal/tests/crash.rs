//! Crash test: a child process (this test binary re-executed) appends with `SYNC_WAL` from
//! several threads and prints every acknowledged sequence id; the parent SIGKILLs it at a
//! random moment. After every trial, replay must hold every acknowledged edit. All trials
//! share one directory, so later children also replay the torn tails earlier ones left.

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn_wal::{Durability, WalOptions};
use common::{edit, open, replay};
use rand::Rng;

const CHILD_DIR_ENV: &str = "CAIRN_WAL_CRASH_CHILD_DIR";
const CHILD_TRIAL_ENV: &str = "CAIRN_WAL_CRASH_CHILD_TRIAL";
const TRIALS: u64 = 24;
const THREADS: u64 = 4;

/// The child's body; a no-op when the test harness runs it normally.
#[test]
fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR_ENV) else {
        return;
    };
    let trial: u64 = std::env::var(CHILD_TRIAL_ENV).unwrap().parse().unwrap();
    // Small segments so that kills also land in rolls.
    let options = WalOptions {
        roll_size: 32 * 1024,
        ..WalOptions::default()
    };
    let (wal, _, _) = open(Path::new(&dir), options).unwrap();
    println!("READY");
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let wal = &wal;
            s.spawn(move || {
                let out = std::io::stdout();
                for i in 0.. {
                    let seq = trial << 40 | t << 32 | i;
                    wal.append(
                        &edit(&format!("t{t}"), seq, 1 + (i % 3) as usize),
                        Durability::SyncWal,
                    )
                    .unwrap();
                    // One write(2) per line, after the append returned: a printed id is an
                    // acknowledged one.
                    writeln!(out.lock(), "ACK {seq}").unwrap();
                }
            });
        }
    });
}

#[test]
fn acknowledged_sync_appends_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = rand::rng();
    let mut acked = BTreeSet::new();
    let started = Instant::now();
    for trial in 1..=TRIALS {
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env(CHILD_DIR_ENV, dir.path())
            .env(CHILD_TRIAL_ENV, trial.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut acks = Vec::new();
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                // libtest prints "test crash_child ... " without a newline first.
                if line.ends_with("READY") {
                    let _ = ready_tx.send(());
                } else if let Some(seq) = line.strip_prefix("ACK ") {
                    // A line cut by the kill does not parse and claims nothing.
                    if let Ok(seq) = seq.parse::<u64>() {
                        acks.push(seq);
                    }
                }
            }
            acks
        });
        ready_rx
            .recv_timeout(Duration::from_secs(20))
            .expect("child never became ready");
        std::thread::sleep(Duration::from_micros(rng.random_range(0..40_000)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let acks = reader.join().unwrap();
        acked.extend(acks);

        let (edits, report) = replay(dir.path());
        let replayed: BTreeSet<u64> = edits.iter().map(|e| e.sequence_id).collect();
        // A kill leaves whole entries and the end marker after the last: never a torn one.
        assert!(
            report.dropped.is_empty(),
            "trial {trial}: {:?}",
            report.dropped
        );
        let lost: Vec<&u64> = acked.difference(&replayed).collect();
        assert!(
            lost.is_empty(),
            "trial {trial}: {} acknowledged edits lost, e.g. {:?}; dropped: {:?}",
            lost.len(),
            &lost[..lost.len().min(5)],
            report.dropped
        );
        // Every replayed edit is one a child really appended, whole.
        for e in &edits {
            let t = e.sequence_id >> 32 & 0xFF;
            assert_eq!(
                e,
                &edit(
                    &format!("t{t}"),
                    e.sequence_id,
                    1 + (e.sequence_id & 0xFFFF_FFFF) as usize % 3
                )
            );
        }
    }
    assert!(
        acked.len() > 100,
        "children acknowledged only {} edits",
        acked.len()
    );
    eprintln!(
        "{TRIALS} SIGKILL trials, {} acknowledged edits, all replayed, in {:?}",
        acked.len(),
        started.elapsed()
    );
}
