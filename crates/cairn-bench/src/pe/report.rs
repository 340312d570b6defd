//! A PE run's results: PE's per-client "Finished … in … ms" lines and a summary table, or one
//! JSON object, with what PE leaves to other tools (latency percentiles, CPU time, block cache
//! hits).

use std::path::PathBuf;
use std::time::Duration;

use cairn_blockcache::CacheStats;
use hdrhistogram::Histogram;
use serde_json::json;

use super::client::ClientResult;
use super::command::PeCommand;
use super::keys::{FAMILY_NAME_BASE, ROW_LENGTH};
use super::options::Settings;
use crate::units::human;

/// Latency summary in microseconds.
struct Latency {
    count: u64,
    mean: f64,
    p50: u64,
    p75: u64,
    p95: u64,
    p99: u64,
    p999: u64,
    max: u64,
}

impl Latency {
    fn of(h: &Histogram<u64>) -> Latency {
        let q = |x: f64| {
            if h.is_empty() {
                0
            } else {
                h.value_at_quantile(x)
            }
        };
        Latency {
            count: h.len(),
            mean: if h.is_empty() { 0.0 } else { h.mean() },
            p50: q(0.50),
            p75: q(0.75),
            p95: q(0.95),
            p99: q(0.99),
            p999: q(0.999),
            max: if h.is_empty() { 0 } else { h.max() },
        }
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "count": self.count, "mean": round3(self.mean), "p50": self.p50, "p75": self.p75,
            "p95": self.p95, "p99": self.p99, "p99_9": self.p999, "max": self.max,
        })
    }

    fn line(&self) -> String {
        format!(
            "{} / {} / {} / {} / {} / {} (mean {:.1}, {} requests)",
            self.p50, self.p75, self.p95, self.p99, self.p999, self.max, self.mean, self.count
        )
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// PE's `calculateMbps`: rows × (key + values with family and qualifier) per second.
fn mb_per_s(s: &Settings, rows: u64, elapsed: Duration) -> f64 {
    let value = if s.value_random {
        s.value_size / 2
    } else {
        s.value_size
    };
    let row_size = ROW_LENGTH
        + (value + FAMILY_NAME_BASE.len() + 1 + 1) * s.columns as usize * s.families as usize;
    let secs = elapsed.as_secs_f64().max(1e-9);
    rows as f64 * row_size as f64 / secs / (1024.0 * 1024.0)
}

fn per_s(n: u64, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64().max(1e-9)
}

/// What a PE run did, ready to print with [`PeReport::json`] or [`PeReport::text`].
pub struct PeReport {
    pub(crate) settings: Settings,
    pub(crate) table: String,
    pub(crate) regions: usize,
    pub(crate) results: Vec<ClientResult>,
    pub(crate) wall: Duration,
    pub(crate) user: Duration,
    pub(crate) sys: Duration,
    pub(crate) wal_appends: u64,
    pub(crate) cache_before: Option<CacheStats>,
    pub(crate) cache_after: Option<CacheStats>,
    pub(crate) root: PathBuf,
    pub(crate) data_note: String,
    pub(crate) notes: Vec<String>,
}

/// Totals over every client.
struct Totals {
    lat: Latency,
    ops: u64,
    returned: u64,
    misses: u64,
    busy: u64,
    relocations: u64,
    cas: u64,
    over_threshold: u64,
    rows_per_cpu: f64,
    /// CPU time per operation (the process's: with a remote run, the client's alone).
    cpu_us_per_op: f64,
    sum_client_rate: f64,
    hits: u64,
    lookups: u64,
}

impl PeReport {
    fn totals(&self) -> Totals {
        let mut all = Histogram::<u64>::new(3).expect("valid precision");
        for r in &self.results {
            let _ = all.add(&r.latency);
        }
        let ops: u64 = self.results.iter().map(|r| r.ops).sum();
        let cpu = (self.user + self.sys).as_secs_f64();
        let (hits, lookups) = match (&self.cache_before, &self.cache_after) {
            (Some(c0), Some(c1)) => {
                let h = c1.hit_count.saturating_sub(c0.hit_count);
                let m = c1.miss_count.saturating_sub(c0.miss_count);
                (h, h + m)
            }
            _ => (0, 0),
        };
        Totals {
            lat: Latency::of(&all),
            ops,
            returned: self.results.iter().map(|r| r.rows_returned).sum(),
            misses: self.results.iter().map(|r| r.misses).sum(),
            busy: self.results.iter().map(|r| r.busy_waits).sum(),
            relocations: self.results.iter().map(|r| r.relocations).sum(),
            cas: self.results.iter().map(|r| r.cas_failures).sum(),
            over_threshold: self.results.iter().map(|r| r.over_threshold).sum(),
            rows_per_cpu: if cpu > 0.0 { ops as f64 / cpu } else { 0.0 },
            cpu_us_per_op: if ops > 0 { cpu * 1e6 / ops as f64 } else { 0.0 },
            // PE's "Avg TPS": the sum of each client's rows per second.
            sum_client_rate: self.results.iter().map(|r| per_s(r.ops, r.elapsed)).sum(),
            hits,
            lookups,
        }
    }

    /// Operations done by every client together.
    pub fn ops(&self) -> u64 {
        self.results.iter().map(|r| r.ops).sum()
    }

    /// The report as one JSON object (the fields `bench/report.py` reads).
    pub fn json(&self) -> serde_json::Value {
        let s = &self.settings;
        let t = self.totals();
        let clients: Vec<_> = self
            .results
            .iter()
            .map(|r| {
                json!({
                    "client": r.index, "offset": r.offset, "rows": r.rows, "ops": r.ops,
                    "elapsed_ms": r.elapsed.as_millis() as u64,
                    "rows_per_s": round3(per_s(r.ops, r.elapsed)),
                    "mb_per_s": round3(mb_per_s(s, r.ops, r.elapsed)),
                    "rows_returned": r.rows_returned, "misses": r.misses,
                    "replies_over_latency_threshold": r.over_threshold,
                    "latency_us": Latency::of(&r.latency).json(),
                })
            })
            .collect();
        let cache = self.cache_after.as_ref();
        json!({
            "command": s.command.name(),
            "test": s.command.class_name(),
            "clients": s.clients,
            "rows_per_client": s.rows,
            "total_rows": s.total_rows,
            "table": self.table,
            "regions": self.regions,
            "value_size": s.value_size,
            "data_dir": self.root.display().to_string(),
            "ops": t.ops,
            "rows_returned": t.returned,
            "misses": t.misses,
            "busy_waits": t.busy,
            "relocations": t.relocations,
            "cas_failures": t.cas,
            "cycles": s.cycles,
            "latency_threshold_ms": s.latency_threshold_ms,
            "replies_over_latency_threshold": t.over_threshold,
            "wal_appends": self.wal_appends,
            "wall_s": round3(self.wall.as_secs_f64()),
            "rows_per_s": round3(per_s(t.ops, self.wall)),
            "sum_client_rows_per_s": round3(t.sum_client_rate),
            "latency_us": t.lat.json(),
            "cpu": {
                "user_s": round3(self.user.as_secs_f64()),
                "sys_s": round3(self.sys.as_secs_f64()),
            },
            "rows_per_cpu_s": round3(t.rows_per_cpu),
            "cpu_us_per_op": round3(t.cpu_us_per_op),
            "block_cache": {
                "lookups": t.lookups, "hits": t.hits,
                "hit_ratio": if t.lookups > 0 {
                    round3(t.hits as f64 / t.lookups as f64)
                } else {
                    0.0
                },
                "size_bytes": cache.map_or(0, |c| c.size),
                "blocks": cache.map_or(0, |c| c.block_count),
            },
            "per_client": clients,
            "notes": self.notes,
        })
    }

    /// PE's per-client lines (with each client's latency percentiles when
    /// `client_latency`, PE's `--latency`), then a summary table.
    pub fn text(&self, client_latency: bool) -> String {
        let s = &self.settings;
        let class = s.command.class_name();
        let t = self.totals();
        let mut o = String::new();
        let mut line = |l: String| {
            o.push_str(&l);
            o.push('\n');
        };
        for r in &self.results {
            line(format!(
                "Finished {class} in {} ms at offset {} for {} rows ({:.0} rows/s, {:.2} MB/s)",
                r.elapsed.as_millis(),
                r.offset,
                r.ops,
                per_s(r.ops, r.elapsed),
                mb_per_s(s, r.ops, r.elapsed)
            ));
            if client_latency {
                line(format!(
                    "  client {} latency (us) p50 / p75 / p95 / p99 / p99.9 / max: {}",
                    r.index,
                    Latency::of(&r.latency).line()
                ));
            }
        }
        line(String::new());
        line(format!("| {class} | |"));
        line("|---|---|".into());
        line(format!(
            "| clients x rows | {} x {}{} (key space {} rows; table {}, {} region{}) |",
            s.clients,
            s.rows,
            if s.cycles > 1 {
                format!(" x {} cycles", s.cycles)
            } else {
                String::new()
            },
            s.total_rows,
            self.table,
            self.regions,
            if self.regions == 1 { "" } else { "s" }
        ));
        line(format!(
            "| data | {} ({}) |",
            self.root.display(),
            self.data_note
        ));
        line(format!("| operations | {} |", t.ops));
        if s.command.is_read() {
            if matches!(s.command, PeCommand::RandomRead | PeCommand::SequentialRead) {
                line(format!(
                    "| rows found / missing | {} / {} |",
                    t.returned, t.misses
                ));
            } else {
                line(format!("| rows returned | {} |", t.returned));
            }
        }
        if self.wal_appends > 0 {
            line(format!("| WAL records appended | {} |", self.wal_appends));
        }
        if t.busy > 0 {
            line(format!("| waits on a busy region | {} |", t.busy));
        }
        if t.relocations > 0 {
            line(format!(
                "| region lookups after a region moved | {} |",
                t.relocations
            ));
        }
        if s.latency_threshold_ms > 0 {
            line(format!(
                "| replies over the latency threshold ({} ms) | {} |",
                s.latency_threshold_ms, t.over_threshold
            ));
        }
        if s.command.is_cas() && t.cas > 0 {
            line(format!(
                "| check-and-put misses / append retries | {} |",
                t.cas
            ));
        }
        line(format!("| wall time | {:.3} s |", self.wall.as_secs_f64()));
        line(format!(
            "| throughput | {:.0} rows/s ({:.2} MB/s); sum of clients {:.0} rows/s |",
            per_s(t.ops, self.wall),
            mb_per_s(s, t.ops, self.wall),
            t.sum_client_rate
        ));
        line(format!(
            "| latency (us) p50 / p75 / p95 / p99 / p99.9 / max | {} |",
            t.lat.line()
        ));
        line(format!(
            "| user / system CPU | {:.3} s / {:.3} s |",
            self.user.as_secs_f64(),
            self.sys.as_secs_f64()
        ));
        line(format!(
            "| rows per CPU-second | {:.0} ({:.1} us of CPU per operation) |",
            t.rows_per_cpu, t.cpu_us_per_op
        ));
        if let Some(c) = &self.cache_after {
            if t.lookups > 0 {
                line(format!(
                    "| block cache | {:.2}% hits of {} lookups; holds {} in {} blocks |",
                    t.hits as f64 / t.lookups as f64 * 100.0,
                    t.lookups,
                    human(c.size),
                    c.block_count
                ));
            } else {
                line(format!(
                    "| block cache | no lookups; holds {} in {} blocks |",
                    human(c.size),
                    c.block_count
                ));
            }
        }
        o
    }
}
