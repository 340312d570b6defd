//! `/metrics` and `/prometheus`: the gathered sources in Prometheus' text format (0.0.4),
//! encoded by the `prometheus` crate, with the process metrics it reads from /proc and a
//! build-info gauge.
//!
//! HBase's metric names are camelCase; Prometheus wants snake_case, a `_total` suffix on
//! counters and no `_count` suffix outside histograms. So `cairn_<source>_<name>` is turned
//! into snake_case, counters get `_total`, and the few gauges whose HBase name ends in `Count`
//! get a plural name ([`GAUGE_RENAMES`]). `/jmx` keeps HBase's names; each family's HELP
//! line names the HBase metric and bean it comes from.

use prometheus::core::Collector;
use prometheus::proto::{LabelPair, Metric, MetricFamily, MetricType};

use super::{Kind, Source};

/// What the build-info gauge says about the binary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildInfo {
    /// The release (`CARGO_PKG_VERSION`).
    pub version: String,
    /// The commit the binary was built from (cairn-cli's build.rs `CAIRN_COMMIT`), or
    /// `unknown`.
    pub commit: String,
    /// The optional features built in (`hdfs`, or `none`).
    pub features: String,
}

impl Default for BuildInfo {
    fn default() -> Self {
        BuildInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: "unknown".into(),
            features: if cfg!(feature = "hdfs") {
                "hdfs"
            } else {
                "none"
            }
            .into(),
        }
    }
}

/// Gauges whose HBase name ends in `Count` (Prometheus keeps `_count` for histograms and
/// summaries), and the snake_case name each gets instead.
pub const GAUGE_RENAMES: &[(&str, &str)] = &[
    ("regionCount", "regions"),
    ("tableCount", "tables"),
    ("storeCount", "stores"),
    ("storeFileCount", "store_files"),
    ("blockCacheCount", "block_cache_blocks"),
    ("l1CacheCount", "l1_cache_blocks"),
    ("l2CacheCount", "l2_cache_blocks"),
];

/// `name` in snake_case, with every character Prometheus does not allow in a name (the dots
/// of HBase's `exceptions.<Name>` counters) made `_`, and no doubled or trailing `_`.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1);
            let boundary = match prev {
                Some(p) if p.is_ascii_lowercase() || p.is_ascii_digit() => true,
                // The last capital of an acronym starts the next word (`RPCServer`).
                Some(p) if p.is_ascii_uppercase() => next.is_some_and(|n| n.is_ascii_lowercase()),
                _ => false,
            };
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// The Prometheus name of HBase metric `name` of source `source`.
pub fn family_name(source: &str, name: &str, kind: Kind) -> String {
    let base = match (kind, GAUGE_RENAMES.iter().find(|(n, _)| *n == name)) {
        (Kind::Gauge, Some((_, renamed))) => renamed.to_string(),
        _ => snake_case(name),
    };
    let mut full = snake_case(&format!("cairn_{source}_{base}"));
    match kind {
        Kind::Counter if !full.ends_with("_total") => full.push_str("_total"),
        Kind::Gauge => {
            // Suffixes Prometheus keeps for counters, histograms and summaries.
            for reserved in ["_total", "_count", "_sum", "_bucket"] {
                if full.ends_with(reserved) {
                    full.push_str("_value");
                    break;
                }
            }
        }
        Kind::Counter => {}
    }
    full
}

fn label(name: &str, value: &str) -> LabelPair {
    let mut l = LabelPair::default();
    l.set_name(name.to_string());
    l.set_value(value.to_string());
    l
}

/// The families of one gathered source: its samples grouped by name (a family's samples
/// must be together), in first-seen order, then its histograms.
fn source_families(s: &Source, out: &mut Vec<MetricFamily>) {
    let mut names: Vec<&str> = Vec::new();
    for m in &s.samples {
        if !names.contains(&m.name.as_str()) {
            names.push(&m.name);
        }
    }
    for name in names {
        let mut samples = s.samples.iter().filter(|m| m.name == name).peekable();
        let kind = samples.peek().map_or(Kind::Gauge, |m| m.kind);
        let mut f = MetricFamily::default();
        f.set_name(family_name(s.name, name, kind));
        f.set_help(format!("HBase's {name} ({}).", s.bean));
        f.set_field_type(match kind {
            Kind::Counter => MetricType::COUNTER,
            Kind::Gauge => MetricType::GAUGE,
        });
        for m in samples {
            let mut metric = Metric::from_label(
                m.labels
                    .iter()
                    .map(|(k, v)| label(k, v))
                    .collect::<Vec<_>>(),
            );
            match kind {
                Kind::Counter => {
                    let mut c = prometheus::proto::Counter::default();
                    c.set_value(m.value);
                    metric.set_counter(c);
                }
                Kind::Gauge => {
                    let mut g = prometheus::proto::Gauge::default();
                    g.set_value(m.value);
                    metric.set_gauge(g);
                }
            }
            f.mut_metric().push(metric);
        }
        out.push(f);
    }
    out.extend(s.families.iter().cloned());
}

/// What every page adds to the gathered sources: the process and the build.
pub struct Exposition {
    process: prometheus::process_collector::ProcessCollector,
    build: BuildInfo,
}

impl std::fmt::Debug for Exposition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exposition")
            .field("build", &self.build)
            .finish_non_exhaustive()
    }
}

impl Exposition {
    /// For this process, built as `build` says.
    pub fn new(build: BuildInfo) -> Exposition {
        Exposition {
            process: prometheus::process_collector::ProcessCollector::for_self(),
            build,
        }
    }

    /// What the build-info gauge says.
    pub fn build(&self) -> &BuildInfo {
        &self.build
    }

    /// Every family of `sources`, then the build and the process (CPU seconds, resident and
    /// virtual memory, open and most file descriptors, start time, threads).
    pub fn families(&self, sources: &[Source]) -> Vec<MetricFamily> {
        let mut out = Vec::new();
        for s in sources {
            source_families(s, &mut out);
        }
        let mut g = prometheus::proto::Gauge::default();
        g.set_value(1.0);
        let mut m = Metric::from_label(vec![
            label("commit", &self.build.commit),
            label("features", &self.build.features),
            label("version", &self.build.version),
        ]);
        m.set_gauge(g);
        let mut f = MetricFamily::default();
        f.set_name("cairn_build_info".into());
        f.set_help("The cairn build serving: release, commit and features; always 1.".into());
        f.set_field_type(MetricType::GAUGE);
        f.set_metric(vec![m]);
        out.push(f);
        out.extend(self.process.collect());
        out
    }

    /// The text exposition of `sources` (`text/plain; version=0.0.4`).
    pub fn render(&self, sources: &[Source]) -> String {
        let mut out = String::new();
        let families = self.families(sources);
        // Only an empty family or a nameless one is refused, and none is made above; should
        // one appear, the page says so rather than being cut short silently.
        if let Err(e) = prometheus::TextEncoder::new().encode_utf8(&families, &mut out) {
            out.push_str(&format!("# cairn: encoding failed: {e}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hbase_names_become_prometheus_names() {
        assert_eq!(
            snake_case("exceptions.callQueueTooBig"),
            "exceptions_call_queue_too_big"
        );
        assert_eq!(
            snake_case("QueueCallTime_num_ops"),
            "queue_call_time_num_ops"
        );
        assert_eq!(snake_case("l1CacheHitCount"), "l1_cache_hit_count");
        assert_eq!(snake_case("RPCServer9x"), "rpc_server9x");
        assert_eq!(snake_case("9-lives."), "_9_lives");
        let c = |s, n| family_name(s, n, Kind::Counter);
        let g = |s, n| family_name(s, n, Kind::Gauge);
        assert_eq!(c("ipc", "callCount"), "cairn_ipc_call_count_total");
        assert_eq!(
            c("ipc", "exceptions.NotServingRegionException"),
            "cairn_ipc_exceptions_not_serving_region_exception_total"
        );
        assert_eq!(g("server", "regionCount"), "cairn_server_regions");
        assert_eq!(g("server", "memStoreSize"), "cairn_server_mem_store_size");
        assert_eq!(g("x", "fooCount"), "cairn_x_foo_count_value");
        assert_eq!(c("x", "already_total"), "cairn_x_already_total");
    }

    #[test]
    fn the_page_has_help_type_totals_build_and_process() {
        let mut s = Source::new("x", "Hadoop:service=HBase,name=X");
        s.add("aCount", Kind::Counter, 3.0);
        s.add_labelled("bValue", Kind::Gauge, vec![("t", "a\"b".into())], 1.5);
        s.add_labelled("bValue", Kind::Gauge, vec![("t", "c".into())], 2.0);
        let e = Exposition::new(BuildInfo {
            version: "1.2.3".into(),
            commit: "abc".into(),
            features: "hdfs".into(),
        });
        let text = e.render(&[s]);
        assert!(
            text.contains(
                "# HELP cairn_x_a_count_total HBase's aCount (Hadoop:service=HBase,name=X).\n\
             # TYPE cairn_x_a_count_total counter\ncairn_x_a_count_total 3\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("cairn_x_b_value{t=\"a\\\"b\"} 1.5\ncairn_x_b_value{t=\"c\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "cairn_build_info{commit=\"abc\",features=\"hdfs\",version=\"1.2.3\"} 1\n"
            ),
            "{text}"
        );
        for p in [
            "process_cpu_seconds_total ",
            "process_resident_memory_bytes ",
            "process_open_fds ",
            "process_start_time_seconds ",
        ] {
            assert!(text.contains(p), "{p} missing: {text}");
        }
    }
}
