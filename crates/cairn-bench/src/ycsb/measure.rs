//! YCSB's measurements (`measurementtype=hdrhistogram`, `measurement.interval=op`): one HDR
//! histogram of microsecond latencies per operation name (3 significant digits, as YCSB's
//! `Recorder(3)`), return-code counts per operation, and the text exporter's lines
//! (`[READ], AverageLatency(us), 412.3`) with Java's number formatting and Java's
//! `ConcurrentHashMap` iteration order, so the output reads exactly as YCSB's.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hdrhistogram::Histogram;

/// YCSB's `Status` names this binding returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Ok,
    NotFound,
    Error,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::NotFound => "NOT_FOUND",
            Status::Error => "ERROR",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Status::Ok => "The operation completed successfully.",
            Status::NotFound => "The requested record was not found.",
            Status::Error => "The operation failed.",
        }
    }

    pub fn is_ok(self) -> bool {
        self == Status::Ok
    }

    /// `Status.hashCode()`: 31 * (31 + description.hashCode()) + name.hashCode().
    fn java_hash(self) -> i32 {
        let r = 31i32.wrapping_add(java_string_hash(self.description()));
        31i32
            .wrapping_mul(r)
            .wrapping_add(java_string_hash(self.name()))
    }
}

/// One operation's latencies and return codes.
#[derive(Clone)]
pub struct OneMeasurement {
    pub histogram: Histogram<u64>,
    pub statuses: BTreeMap<Status, u64>,
}

impl OneMeasurement {
    fn new() -> OneMeasurement {
        OneMeasurement {
            histogram: Histogram::new(3).expect("3 significant digits is valid"),
            statuses: BTreeMap::new(),
        }
    }
}

/// A set of measurements by name (one per client thread, merged at the end).
#[derive(Clone, Default)]
pub struct Measurements {
    /// Names in creation order.
    order: Vec<String>,
    by_name: BTreeMap<String, OneMeasurement>,
}

impl Measurements {
    fn entry(&mut self, name: &str) -> &mut OneMeasurement {
        if !self.by_name.contains_key(name) {
            self.order.push(name.to_string());
            self.by_name.insert(name.to_string(), OneMeasurement::new());
        }
        self.by_name.get_mut(name).expect("inserted above")
    }

    /// `Measurements.measure`: a latency in microseconds.
    pub fn measure(&mut self, name: &str, micros: u64) {
        // `record` grows the histogram (YCSB's auto-resizing `Recorder`); `saturating_record`
        // would clamp everything past the initial range (2047 us) instead.
        let h = &mut self.entry(name).histogram;
        if h.record(micros).is_err() {
            h.saturating_record(micros);
        }
    }

    /// `Measurements.reportStatus`.
    pub fn report_status(&mut self, name: &str, status: Status) {
        *self.entry(name).statuses.entry(status).or_insert(0) += 1;
    }

    /// `DBWrapper`'s measure + reportStatus: the latency goes under `OP` when the call
    /// succeeded and `OP-FAILED` when it did not; the status always under `OP`.
    pub fn op(&mut self, name: &str, status: Status, micros: u64) {
        if status.is_ok() {
            self.measure(name, micros);
        } else {
            self.measure(&format!("{name}-FAILED"), micros);
        }
        self.report_status(name, status);
    }

    /// Adds `other` into this set.
    pub fn merge(&mut self, other: &Measurements) {
        for name in &other.order {
            let o = &other.by_name[name];
            let m = self.entry(name);
            let _ = m.histogram.add(&o.histogram);
            for (s, n) in &o.statuses {
                *m.statuses.entry(*s).or_insert(0) += n;
            }
        }
    }

    /// Takes the measurements out, leaving this set empty (an interval's worth).
    pub fn take(&mut self) -> Measurements {
        std::mem::take(self)
    }

    /// Names in the order YCSB's `ConcurrentHashMap` would list them.
    fn names_in_java_order(&self) -> Vec<&str> {
        let mut v: Vec<(usize, usize, &str)> = self
            .order
            .iter()
            .enumerate()
            .map(|(i, n)| (java_bucket(java_string_hash(n)), i, n.as_str()))
            .collect();
        v.sort();
        v.into_iter().map(|(_, _, n)| n).collect()
    }

    /// The exporter's lines for every measurement (`OneMeasurementHdrHistogram
    /// .exportMeasurements`), with the given percentiles.
    pub fn export(&self, percentiles: &[f64], out: &mut String) {
        for name in self.names_in_java_order() {
            let m = &self.by_name[name];
            let h = &m.histogram;
            line(out, name, "Operations", h.len());
            line(out, name, "AverageLatency(us)", java_double(mean(h)));
            line(out, name, "MinLatency(us)", min(h));
            line(out, name, "MaxLatency(us)", max(h));
            for &p in percentiles {
                line(
                    out,
                    name,
                    &format!("{}PercentileLatency(us)", ordinal(p)),
                    at_percentile(h, p),
                );
            }
            let mut statuses: Vec<(usize, Status, u64)> = m
                .statuses
                .iter()
                .map(|(s, n)| (java_bucket(s.java_hash()), *s, *n))
                .collect();
            statuses.sort();
            for (_, s, n) in statuses {
                line(out, name, &format!("Return={}", s.name()), n);
            }
        }
    }

    /// The status thread's summary of an interval (`getSummary`): `[READ: Count=…, Max=…,
    /// Min=…, Avg=…, 90=…, 99=…, 99.9=…, 99.99=…] ` per measurement.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        for name in self.names_in_java_order() {
            let h = &self.by_name[name].histogram;
            let _ = write!(
                s,
                "[{name}: Count={}, Max={}, Min={}, Avg={}, 90={}, 99={}, 99.9={}, 99.99={}] ",
                h.len(),
                max(h),
                min(h),
                decimal2(mean(h)),
                at_percentile(h, 90.0),
                at_percentile(h, 99.0),
                at_percentile(h, 99.9),
                at_percentile(h, 99.99),
            );
        }
        s
    }
}

fn line(out: &mut String, metric: &str, measurement: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "[{metric}], {measurement}, {value}");
}

fn mean(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.mean()
    }
}

/// HdrHistogram's `getMinValue`: 0 when empty, else the lowest equivalent value.
fn min(h: &Histogram<u64>) -> u64 {
    if h.is_empty() {
        0
    } else {
        h.min()
    }
}

/// HdrHistogram's `getMaxValue`: the highest equivalent value of the largest recorded.
fn max(h: &Histogram<u64>) -> u64 {
    if h.is_empty() {
        0
    } else {
        h.highest_equivalent(h.max())
    }
}

fn at_percentile(h: &Histogram<u64>, p: f64) -> u64 {
    if h.is_empty() {
        0
    } else {
        h.value_at_percentile(p)
    }
}

/// `OneMeasurementHdrHistogram.ordinal`: 95 -> "95th", 1 -> "1st", 99.9 -> "99.9".
pub fn ordinal(p: f64) -> String {
    if p.fract() == 0.0 {
        let j = p as i64;
        let suffix = match j % 100 {
            11..=13 => "th",
            _ => ["th", "st", "nd", "rd", "th", "th", "th", "th", "th", "th"][(j % 10) as usize],
        };
        format!("{j}{suffix}")
    } else {
        java_double(p)
    }
}

/// `DecimalFormat("#.##")`: at most two decimals, none when whole (half-even rounding).
pub fn decimal2(x: f64) -> String {
    let r = (x * 100.0).round_ties_even() / 100.0;
    let s = format!("{r:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// Java's `Double.toString`: the shortest decimal that reads back as `x`, with at least one
/// digit after the point, in scientific notation (`1.2345E7`) outside [1e-3, 1e7).
pub fn java_double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let a = x.abs();
    if (1e-3..1e7).contains(&a) {
        let s = format!("{x}");
        if s.contains('.') {
            s
        } else {
            format!("{s}.0")
        }
    } else {
        let s = format!("{x:e}");
        let (mant, exp) = s.split_once('e').expect("{:e} has an exponent");
        let mant = if mant.contains('.') {
            mant.to_string()
        } else {
            format!("{mant}.0")
        };
        format!("{mant}E{exp}")
    }
}

/// Java's `String.hashCode` (over UTF-16 units; our names are ASCII).
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(c as i32))
}

/// The bucket of a `ConcurrentHashMap` of the default 16-slot table holding `hash`.
fn java_bucket(hash: i32) -> usize {
    let h = hash as u32;
    let spread = (h ^ (h >> 16)) & 0x7fff_ffff;
    (spread & 15) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_number_formats() {
        assert_eq!(java_double(412.5), "412.5");
        assert_eq!(java_double(3.0), "3.0");
        assert_eq!(java_double(12345678.9), "1.23456789E7");
        assert_eq!(java_double(0.0001), "1.0E-4");
        assert_eq!(java_double(f64::INFINITY), "Infinity");
        assert_eq!(decimal2(12.3456), "12.35");
        assert_eq!(decimal2(2.0), "2");
        assert_eq!(decimal2(2.5), "2.5");
        assert_eq!(ordinal(95.0), "95th");
        assert_eq!(ordinal(99.0), "99th");
        assert_eq!(ordinal(1.0), "1st");
        assert_eq!(ordinal(12.0), "12th");
        assert_eq!(ordinal(99.9), "99.9");
        assert_eq!(java_string_hash("READ"), 2_511_254);
    }

    #[test]
    fn failed_latencies_go_to_their_own_measurement() {
        let mut m = Measurements::default();
        m.op("READ", Status::Ok, 10);
        m.op("READ", Status::NotFound, 20);
        let mut out = String::new();
        m.export(&[95.0, 99.0], &mut out);
        assert!(out.contains("[READ], Operations, 1\n"), "{out}");
        assert!(out.contains("[READ], Return=OK, 1\n"), "{out}");
        assert!(out.contains("[READ], Return=NOT_FOUND, 1\n"), "{out}");
        assert!(out.contains("[READ-FAILED], Operations, 1\n"), "{out}");
        assert!(
            out.contains("[READ], 95thPercentileLatency(us), 10\n"),
            "{out}"
        );
    }
}
