//! `/stacks`: the process's threads, in the shape of HBase's thread dump (a header, then one
//! block per thread), read from /proc: name, id, scheduler state, the kernel function it
//! waits in and its CPU time. Rust has no cheap way to walk another thread's stack, so
//! frames are not shown (`gdb -p PID -batch -ex 'thread apply all bt'` gives them).

use std::fmt::Write as _;
use std::path::Path;

/// One thread, as /proc shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadInfo {
    /// The thread id.
    pub tid: u32,
    /// Its name (`comm`).
    pub name: String,
    /// The state letter of `stat` in words (`R` running, `S` sleeping, ...).
    pub state: String,
    /// The kernel function a waiting thread sleeps in (`wchan`), if the kernel says.
    pub wchan: String,
    /// User and system CPU time, in clock ticks.
    pub cpu_ticks: u64,
}

/// The threads under `task_dir` (`/proc/self/task`), by id.
pub fn threads(task_dir: &Path) -> Vec<ThreadInfo> {
    let Ok(entries) = std::fs::read_dir(task_dir) else {
        return Vec::new();
    };
    let mut out: Vec<ThreadInfo> = entries
        .flatten()
        .filter_map(|e| {
            let tid: u32 = e.file_name().to_str()?.parse().ok()?;
            let read = |f: &str| std::fs::read_to_string(e.path().join(f)).unwrap_or_default();
            let name = read("comm").trim_end().to_string();
            let stat = read("stat");
            // The fields after the name, which is in parentheses and may hold spaces.
            let rest: Vec<&str> = stat
                .rsplit_once(')')
                .map(|(_, r)| r.split_whitespace().collect())
                .unwrap_or_default();
            let state = match rest.first().copied().unwrap_or("?") {
                "R" => "RUNNABLE (R)",
                "S" => "WAITING (S, interruptible sleep)",
                "D" => "BLOCKED (D, uninterruptible sleep)",
                "T" | "t" => "STOPPED (T)",
                "Z" => "ZOMBIE (Z)",
                other => other,
            }
            .to_string();
            let tick = |i: usize| rest.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            // utime and stime are fields 14 and 15 of stat; `rest` starts at field 3.
            let cpu_ticks = tick(11) + tick(12);
            let wchan = read("wchan").trim().to_string();
            Some(ThreadInfo {
                tid,
                name,
                state,
                wchan: if wchan == "0" { String::new() } else { wchan },
                cpu_ticks,
            })
        })
        .collect();
    out.sort_by_key(|t| t.tid);
    out
}

/// The page (text/plain).
pub fn page(threads: &[ThreadInfo]) -> String {
    let mut s = format!(
        "Process Thread Dump: cairn\n{} active threads\n",
        threads.len()
    );
    for t in threads {
        let _ = writeln!(s, "Thread {} ({}):", t.tid, t.name);
        let _ = writeln!(s, "  State: {}", t.state);
        if !t.wchan.is_empty() {
            let _ = writeln!(s, "  Waiting in: {}", t.wchan);
        }
        let _ = writeln!(s, "  CPU ticks: {}", t.cpu_ticks);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_threads_are_listed_by_name() {
        // The new thread names itself as it starts: wait until it runs.
        let (tx, rx) = std::sync::mpsc::channel();
        let h = std::thread::Builder::new()
            .name("stacks-probe".into())
            .spawn(move || {
                tx.send(()).unwrap();
                std::thread::park();
            })
            .unwrap();
        rx.recv().unwrap();
        let ts = threads(Path::new("/proc/self/task"));
        let probe = ts.iter().find(|t| t.name == "stacks-probe");
        assert!(probe.is_some(), "{ts:?}");
        let text = page(&ts);
        assert!(text.contains("active threads\n"), "{text}");
        assert!(text.contains("(stacks-probe):\n  State: "), "{text}");
        h.thread().unpark();
        h.join().unwrap();
    }
}
