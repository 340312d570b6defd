//! A phase's output: YCSB's text exporter (`[OVERALL], RunTime(ms), …`, one block per
//! operation), then the `[CAIRN]` lines cairn adds.

use super::measure::java_double;
use super::phase::PhaseResult;
use super::plan::Plan;
use crate::store::Store;

/// `Client.exportMeasurements` with the text exporter, then cairn's lines.
pub(crate) fn report(plan: &Plan, r: &PhaseResult, phase: &str, store: &Store) -> String {
    let mut out = String::new();
    let runtime_ms = r.runtime.as_millis() as u64;
    out += &format!("[OVERALL], RunTime(ms), {runtime_ms}\n");
    let throughput = 1000.0 * r.ops_done as f64 / runtime_ms as f64;
    out += &format!(
        "[OVERALL], Throughput(ops/sec), {}\n",
        java_double(throughput)
    );
    // YCSB's JVM garbage-collection lines: cairn has no collector.
    out += "[TOTAL_GCs], Count, 0\n";
    out += "[TOTAL_GC_TIME], Time(ms), 0\n";
    out += "[TOTAL_GC_TIME_%], Time(%), 0.0\n";
    r.measurements.export(&plan.percentiles, &mut out);
    let cpu = (r.user + r.sys).as_secs_f64();
    out += &format!("[CAIRN], Phase, {phase}\n");
    out += &format!("[CAIRN], Threads, {}\n", r.threads);
    out += &format!("[CAIRN], UserCPU(s), {:.3}\n", r.user.as_secs_f64());
    out += &format!("[CAIRN], SysCPU(s), {:.3}\n", r.sys.as_secs_f64());
    out += &format!(
        "[CAIRN], OpsPerCPUSecond, {:.0}\n",
        if cpu > 0.0 {
            r.ops_done as f64 / cpu
        } else {
            0.0
        }
    );
    if r.busy_waits > 0 {
        out += &format!("[CAIRN], BusyRegionWaits, {}\n", r.busy_waits);
    }
    if r.errors > 0 {
        out += &format!("[CAIRN], Errors, {}\n", r.errors);
    }
    if let Some(c) = store.server.block_cache() {
        let s = c.stats().2;
        let lookups = s.hit_count + s.miss_count;
        if lookups > 0 {
            out += &format!(
                "[CAIRN], BlockCacheHitRatio, {:.4}\n",
                s.hit_count as f64 / lookups as f64
            );
        }
    }
    out += &format!(
        "[CAIRN], Data, {} ({})\n",
        store.root.display(),
        store.data_note
    );
    out
}
