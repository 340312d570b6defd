//! The SIGKILL tests' harness: a child process (this test binary, running one named test)
//! writes and prints `ack <row>` for each acknowledged put; the parent kills it and collects
//! what it acknowledged, then checks every acknowledged row after recovery.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use cairn_region::{Get, RegionServer, TableName};

/// Runs the test `child` of this binary with `env`, kills it with SIGKILL after `after`, and
/// returns the rows it acknowledged.
pub fn kill_after(child: &str, env: &[(&str, String)], after: Duration) -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(&exe);
    cmd.args(["--exact", child, "--nocapture", "--test-threads=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut proc = cmd.spawn().unwrap();
    let stdout = proc.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(|l| l.ok())
            .filter_map(|l| l.strip_prefix("ack ").map(str::to_string))
            .collect::<Vec<_>>()
    });
    std::thread::sleep(after);
    proc.kill().unwrap();
    proc.wait().unwrap();
    reader.join().unwrap()
}

/// Checks that each of `rows` reads back with itself as its value (as the children write).
pub fn verify_acked(s: &RegionServer, t: &TableName, rows: &[&String], trial: usize) {
    for chunk in rows.chunks(500) {
        let gets = chunk.iter().map(|r| Get::new(r.as_bytes())).collect();
        let got = s.get_many(t, gets).unwrap();
        for (row, cells) in chunk.iter().zip(got) {
            assert!(
                cells
                    .first()
                    .is_some_and(|c| c.as_cell().value == row.as_bytes()),
                "trial {trial}: acknowledged put {row} is missing after SIGKILL and recovery"
            );
        }
    }
}

/// A sample of `n` earlier acknowledged rows, chosen by `seed` (all are checked at the end).
pub fn sample(acked: &[String], seed: u64, n: usize) -> Vec<&String> {
    if acked.is_empty() {
        return Vec::new();
    }
    (0..n)
        .map(|i| &acked[(seed as usize).wrapping_add(i * 7919) % acked.len()])
        .collect()
}
