//! One phase run: YCSB's `Client.main` from `initDb` to the joins, with the status thread's
//! lines (`2024-01-01 10:00:00:000 10 sec: 1000 operations; …`) on stderr.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cairn_region::RegionServer;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::measure::{self, Measurements};
use super::plan::Plan;
use super::workload::{self, Shared, ThreadSlot};
use crate::cpu::cpu_times;

/// The local time as YCSB's status lines show it (`yyyy-MM-dd HH:mm:ss:SSS`).
fn local_timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as libc::time_t;
    // SAFETY: `tm` is a valid, writable struct for the duration of the call.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&secs, &mut tm).is_null() };
    if !ok {
        return format!("{}", now.as_secs());
    }
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}:{:03}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        now.subsec_millis()
    )
}

/// YCSB's `RemainingFormatter` (its quirks included: "1 second " vs "10 seconds ").
fn remaining(mut seconds: u64) -> String {
    let mut t = String::new();
    let days = seconds / 86_400;
    if days > 0 {
        t += &format!("{days} {}", if days == 1 { "day " } else { "days " });
        seconds -= days * 86_400;
    }
    let hours = seconds / 3600;
    if hours > 0 {
        t += &format!("{hours} {}", if hours == 1 { "hour " } else { "hours " });
        seconds -= hours * 3600;
    }
    if days < 1 {
        let minutes = seconds / 60;
        if minutes > 0 {
            t += &format!(
                "{minutes} {}",
                if minutes == 1 { "minute " } else { "minutes " }
            );
        }
    }
    if t.is_empty() {
        let s = seconds.to_string();
        let unit = if s.len() == 1 {
            " second "
        } else {
            " seconds "
        };
        t = format!("{s}{unit}");
    }
    t
}

/// The outcome of one phase.
pub(crate) struct PhaseResult {
    pub(crate) threads: usize,
    pub(crate) measurements: Measurements,
    pub(crate) ops_done: u64,
    pub(crate) runtime: Duration,
    pub(crate) user: Duration,
    pub(crate) sys: Duration,
    pub(crate) busy_waits: u64,
    pub(crate) errors: u64,
    pub(crate) first_error: Option<String>,
}

/// `Client.main` from `initDb` to the joins: the client threads, the status thread's lines
/// and the progress bar.
pub(crate) fn run_phase(server: &RegionServer, plan: &Plan, transactions: bool) -> PhaseResult {
    let opcount = if transactions {
        plan.run_ops
    } else {
        plan.load_ops
    };
    let mut threads = plan.threads;
    if opcount > 0 && threads as u64 > opcount {
        threads = opcount as usize;
        eprintln!(
            "Warning: the threadcount is bigger than recordcount, the threadcount will be \
             recordcount!"
        );
    }
    let per_thread = workload::split_ops(opcount, threads);
    let slots: Vec<ThreadSlot> = per_thread.iter().map(|&n| ThreadSlot::new(n)).collect();
    let stop = AtomicBool::new(false);
    let target_per_thread = if plan.target > 0 {
        plan.target as f64 / threads as f64
    } else {
        0.0
    };
    let shared = Shared {
        server,
        workload: &plan.workload,
        transactions,
        target_per_thread,
        stop: &stop,
        max_time: plan.max_time,
    };
    let what = if transactions { "run" } else { "load" };
    let bar = if plan.status {
        indicatif::ProgressBar::hidden()
    } else {
        crate::progress::count(what, opcount)
    };
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let mut finished = 0usize;
    let mut ended = None;
    eprintln!("Starting test.");
    let cpu0 = cpu_times();
    let started = Instant::now();
    let mut status_total = Measurements::default();
    std::thread::scope(|scope| {
        for (i, slot) in slots.iter().enumerate() {
            let shared = &shared;
            let done_tx = done_tx.clone();
            let ops = per_thread[i];
            std::thread::Builder::new()
                .name(format!("ycsb-client-{i}"))
                .spawn_scoped(scope, move || {
                    workload::run_thread(shared, slot, SmallRng::from_os_rng(), ops);
                    let _ = done_tx.send(());
                })
                .expect("spawn client thread");
        }
        // The status thread's loop, on this thread.
        let mut next_status = started + plan.status_interval;
        let mut interval_start = started;
        let mut last_ops = 0u64;
        loop {
            let all_done = finished == threads;
            let done: u64 = slots
                .iter()
                .map(|s| s.ops_done.load(Ordering::Relaxed))
                .sum();
            bar.set_position(done);
            let now = Instant::now();
            if plan.status && (now >= next_status || all_done) {
                let todo: u64 = slots
                    .iter()
                    .map(|s| {
                        s.ops_todo
                            .saturating_sub(s.ops_done.load(Ordering::Relaxed))
                    })
                    .sum();
                let mut interval = Measurements::default();
                for s in &slots {
                    let m = s.measurements.lock().expect("measurements lock").take();
                    interval.merge(&m);
                }
                status_total.merge(&interval);
                let elapsed_ms = now.duration_since(started).as_millis().max(1) as f64;
                let cur_ms = now.duration_since(interval_start).as_millis().max(1) as f64;
                let throughput = 1000.0 * done as f64 / elapsed_ms;
                let current = 1000.0 * (done - last_ops) as f64 / cur_ms;
                let mut msg = format!(
                    "{}{} {} sec: {done} operations; ",
                    plan.label,
                    local_timestamp(),
                    now.duration_since(started).as_secs()
                );
                if done != 0 {
                    msg += &format!("{} current ops/sec; ", measure::decimal2(current));
                }
                if todo != 0 && opcount > 0 {
                    let est = (todo as f64 / throughput).ceil();
                    let est = if est.is_finite() { est as u64 } else { 0 };
                    msg += &format!("est completion in {}", remaining(est));
                }
                msg += &interval.summary();
                eprintln!("{msg}");
                last_ops = done;
                interval_start = now;
                next_status += plan.status_interval;
            }
            if all_done {
                break;
            }
            let wake = if plan.status {
                next_status.min(now + Duration::from_millis(100))
            } else {
                now + Duration::from_millis(100)
            };
            // Wake when a client finishes, to time the run to its last operation.
            let wait = wake.saturating_duration_since(Instant::now());
            if let Ok(()) = done_rx.recv_timeout(wait) {
                finished += 1;
                while done_rx.try_recv().is_ok() {
                    finished += 1;
                }
                if finished == threads {
                    ended = Some(Instant::now());
                }
            }
        }
    });
    let cpu1 = cpu_times();
    let runtime = ended.unwrap_or_else(Instant::now).duration_since(started);
    bar.finish_and_clear();
    let mut total = status_total;
    let mut busy_waits = 0;
    let mut errors = 0;
    let mut first_error = None;
    for s in &slots {
        total.merge(&s.measurements.lock().expect("measurements lock").take());
        busy_waits += s.busy_waits.load(Ordering::Relaxed);
        errors += s.errors.load(Ordering::Relaxed);
        if first_error.is_none() {
            first_error = s.first_error.lock().expect("error lock").take();
        }
    }
    PhaseResult {
        threads,
        measurements: total,
        ops_done: slots
            .iter()
            .map(|s| s.ops_done.load(Ordering::Relaxed))
            .sum(),
        runtime,
        user: cpu1.0 - cpu0.0,
        sys: cpu1.1 - cpu0.1,
        busy_waits,
        errors,
        first_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remaining_reads_as_ycsbs() {
        assert_eq!(remaining(5), "5 second ");
        assert_eq!(remaining(42), "42 seconds ");
        assert_eq!(remaining(125), "2 minutes ");
        assert_eq!(remaining(3700), "1 hour 1 minute ");
    }
}
