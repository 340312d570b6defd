//! Latency histograms per method, for `/metrics`: one Prometheus histogram per method,
//! made on the method's first call (a page lists only the methods clients use), observed
//! through a fixed slot so the hot path takes no lock and looks nothing up by name.

use std::sync::OnceLock;
use std::time::Duration;

use prometheus::core::Collector;
use prometheus::proto::MetricFamily;
use prometheus::{Histogram, HistogramOpts};

/// Bucket bounds of call latencies, in seconds: 50 µs (a cached get) to 10 s.
pub const CALL_BUCKETS: &[f64] = &[
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
];

/// One histogram family (`name`, labelled by `method`), a slot per method.
pub struct MethodLatencies {
    name: &'static str,
    help: &'static str,
    methods: &'static [&'static str],
    /// The method name of the slot past `methods` (the RPC's `other`), if there is one.
    other: Option<&'static str>,
    slots: Vec<OnceLock<Histogram>>,
}

impl std::fmt::Debug for MethodLatencies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MethodLatencies")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl MethodLatencies {
    /// A family `name` (a full Prometheus name ending in `_seconds`) with one slot per entry
    /// of `methods`, plus one named `other` when given.
    pub fn new(
        name: &'static str,
        help: &'static str,
        methods: &'static [&'static str],
        other: Option<&'static str>,
    ) -> MethodLatencies {
        let n = methods.len() + usize::from(other.is_some());
        MethodLatencies {
            name,
            help,
            methods,
            other,
            slots: (0..n).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Counts one call of the method in `slot` that took `took` (an unknown slot is
    /// ignored: the counters beside this one still count the call).
    #[inline]
    pub fn observe(&self, slot: usize, took: Duration) {
        let Some(cell) = self.slots.get(slot) else {
            return;
        };
        let h = cell.get_or_init(|| {
            let method = self
                .methods
                .get(slot)
                .copied()
                .or(self.other)
                .unwrap_or("other");
            Histogram::with_opts(
                HistogramOpts::new(self.name, self.help)
                    .const_label("method", method)
                    .buckets(CALL_BUCKETS.to_vec()),
            )
            .expect("a valid histogram name and buckets (fixed above)")
        });
        h.observe(took.as_secs_f64());
    }

    /// The family, with one histogram per method called so far; `None` before any call.
    pub fn family(&self) -> Option<MetricFamily> {
        let mut family: Option<MetricFamily> = None;
        for h in self.slots.iter().filter_map(OnceLock::get) {
            for mut f in h.collect() {
                match family.as_mut() {
                    None => family = Some(f),
                    Some(all) => all.mut_metric().extend(f.take_metric()),
                }
            }
        }
        family
    }
}

/// A histogram family of one series from cumulative-free bucket counts (`counts[i]` counts
/// values in `(bounds[i-1], bounds[i]]`, the last one those past every bound) and their sum.
pub fn from_buckets(
    name: &str,
    help: &str,
    bounds: &[f64],
    counts: &[u64],
    sum: f64,
) -> MetricFamily {
    let mut buckets = Vec::with_capacity(bounds.len());
    let mut cumulative = 0u64;
    for (bound, n) in bounds.iter().zip(counts) {
        cumulative += n;
        let mut b = prometheus::proto::Bucket::default();
        b.set_upper_bound(*bound);
        b.set_cumulative_count(cumulative);
        buckets.push(b);
    }
    let total: u64 = counts.iter().sum();
    let mut h = prometheus::proto::Histogram::default();
    h.set_bucket(buckets);
    h.set_sample_count(total);
    h.set_sample_sum(sum);
    let mut m = prometheus::proto::Metric::default();
    m.set_histogram(h);
    let mut f = MetricFamily::default();
    f.set_name(name.to_string());
    f.set_help(help.to_string());
    f.set_field_type(prometheus::proto::MetricType::HISTOGRAM);
    f.set_metric(vec![m]);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: &[&str] = &["Get", "Multi"];

    #[test]
    fn a_method_appears_on_its_first_call() {
        let l = MethodLatencies::new("x_call_time_seconds", "help", M, Some("other"));
        assert!(l.family().is_none());
        l.observe(1, Duration::from_millis(3));
        l.observe(1, Duration::from_millis(30));
        l.observe(2, Duration::from_secs(1));
        l.observe(9, Duration::from_secs(1));
        let f = l.family().unwrap();
        assert_eq!(f.name(), "x_call_time_seconds");
        let methods: Vec<&str> = f
            .get_metric()
            .iter()
            .map(|m| m.get_label()[0].value())
            .collect();
        assert_eq!(methods, ["Multi", "other"]);
        let multi = f.get_metric()[0].get_histogram();
        assert_eq!(multi.get_sample_count(), 2);
        assert!((multi.get_sample_sum() - 0.033).abs() < 1e-9);
        // 3 ms is past the 2.5 ms bound and within 5 ms.
        let le = |b: f64| {
            multi
                .get_bucket()
                .iter()
                .find(|x| x.upper_bound() == b)
                .unwrap()
                .cumulative_count()
        };
        assert_eq!((le(0.0025), le(0.005), le(0.05)), (0, 1, 2));
    }

    #[test]
    fn buckets_become_cumulative() {
        let f = from_buckets("w_seconds", "h", &[0.1, 1.0], &[2, 0, 5], 9.5);
        let h = f.get_metric()[0].get_histogram();
        let c: Vec<u64> = h
            .get_bucket()
            .iter()
            .map(|b| b.cumulative_count())
            .collect();
        assert_eq!(c, [2, 2]);
        assert_eq!(h.get_sample_count(), 7);
        assert_eq!(h.get_sample_sum(), 9.5);
    }
}
