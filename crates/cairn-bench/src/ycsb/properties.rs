//! YCSB's properties: the built-in workload files (`-P workloada` … `workloadf`), Java's
//! property-file syntax, the names cairn reads, and typed access naming the property in every
//! error.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

/// YCSB's `workloads/workloada` … `workloadf` (the values of YCSB's files; the text is
/// cairn's).
pub(crate) const BUILTIN: [(&str, &str); 6] = [
    (
        "workloada",
        "# Workload A: update heavy, 50/50 reads and updates, zipfian\n\
         recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n\
         readallfields=true\nreadproportion=0.5\nupdateproportion=0.5\nscanproportion=0\n\
         insertproportion=0\nrequestdistribution=zipfian\n",
    ),
    (
        "workloadb",
        "# Workload B: read mostly, 95/5 reads and updates, zipfian\n\
         recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n\
         readallfields=true\nreadproportion=0.95\nupdateproportion=0.05\nscanproportion=0\n\
         insertproportion=0\nrequestdistribution=zipfian\n",
    ),
    (
        "workloadc",
        "# Workload C: read only, zipfian\n\
         recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n\
         readallfields=true\nreadproportion=1\nupdateproportion=0\nscanproportion=0\n\
         insertproportion=0\nrequestdistribution=zipfian\n",
    ),
    (
        "workloadd",
        "# Workload D: read latest, 95/5 reads and inserts, latest\n\
         recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n\
         readallfields=true\nreadproportion=0.95\nupdateproportion=0\nscanproportion=0\n\
         insertproportion=0.05\nrequestdistribution=latest\n",
    ),
    (
        "workloade",
        "# Workload E: short ranges, 95/5 scans and inserts, zipfian, up to 100 rows\n\
         recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n\
         readallfields=true\nreadproportion=0\nupdateproportion=0\nscanproportion=0.95\n\
         insertproportion=0.05\nrequestdistribution=zipfian\nmaxscanlength=100\n\
         scanlengthdistribution=uniform\n",
    ),
    (
        "workloadf",
        "# Workload F: read-modify-write, 50/50 reads and read-modify-writes, zipfian\n\
         recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n\
         readallfields=true\nreadproportion=0.5\nupdateproportion=0\nscanproportion=0\n\
         insertproportion=0\nreadmodifywriteproportion=0.5\nrequestdistribution=zipfian\n",
    ),
];

/// Property names cairn reads; others are accepted with a note (YCSB ignores unknown ones).
pub(crate) const KNOWN: &[&str] = &[
    "recordcount",
    "operationcount",
    "workload",
    "threadcount",
    "target",
    "status",
    "status.interval",
    "label",
    "maxexecutiontime",
    "dotransactions",
    "insertcount",
    "insertstart",
    "table",
    "columnfamily",
    "fieldcount",
    "fieldlength",
    "minfieldlength",
    "fieldlengthdistribution",
    "fieldnameprefix",
    "readallfields",
    "readallfieldsbyname",
    "writeallfields",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "requestdistribution",
    "minscanlength",
    "maxscanlength",
    "scanlengthdistribution",
    "insertorder",
    "zeropadding",
    "durability",
    "measurementtype",
    "measurement.interval",
    "hdrhistogram.percentiles",
    "dataintegrity",
    "db",
    "exporter",
    "hbase.usepagefilter",
    "core_workload_insertion_retry_limit",
    "core_workload_insertion_retry_interval",
];

/// Java `Properties.load`, simplified: `key=value`, `key: value` or `key value` per line,
/// `#` and `!` comments.
pub(crate) fn parse_properties(text: &str, into: &mut BTreeMap<String, String>) {
    for raw in text.lines() {
        let l = raw.trim_start();
        if l.is_empty() || l.starts_with('#') || l.starts_with('!') {
            continue;
        }
        let cut = l.find(['=', ':', ' ', '\t']).unwrap_or(l.len());
        let key = l[..cut].trim();
        let mut rest = l[cut..].trim_start();
        if rest.starts_with('=') || rest.starts_with(':') {
            rest = rest[1..].trim_start();
        }
        into.insert(key.to_string(), rest.trim_end().to_string());
    }
}

/// The text of `-P NAME`: the file if it exists, else a built-in workload by name.
pub(crate) fn property_file(name: &str) -> Result<String> {
    let path = Path::new(name);
    if path.is_file() {
        return std::fs::read_to_string(path)
            .with_context(|| format!("-P {name}: reading the property file"));
    }
    let base = path
        .file_name()
        .and_then(|b| b.to_str())
        .unwrap_or(name)
        .to_ascii_lowercase();
    let want = if base.len() == 1 {
        format!("workload{base}")
    } else {
        base
    };
    BUILTIN
        .iter()
        .find(|(n, _)| *n == want)
        .map(|(_, t)| t.to_string())
        .ok_or_else(|| {
            anyhow!("-P {name}: no such file, and not a built-in workload (workloada … workloadf)")
        })
}

/// The properties of `-P NAME`: the file NAME if it exists, else the built-in workload of
/// that name (`workloada` … `workloadf`, or `a` … `f`, or a path ending in one of them).
pub fn read_property_file(name: &str) -> Result<BTreeMap<String, String>> {
    let mut m = BTreeMap::new();
    parse_properties(&property_file(name)?, &mut m);
    Ok(m)
}

/// Typed access to the properties, naming the property in every error.
pub(crate) struct Props<'a>(pub(crate) &'a BTreeMap<String, String>);

impl Props<'_> {
    pub(crate) fn str(&self, k: &str, default: &str) -> String {
        self.0
            .get(k)
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| default.into())
    }
    pub(crate) fn u64(&self, k: &str, default: u64) -> Result<u64> {
        match self.0.get(k) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| anyhow!("{k}={v}: not a non-negative whole number")),
        }
    }
    pub(crate) fn f64(&self, k: &str, default: f64) -> Result<f64> {
        match self.0.get(k) {
            None => Ok(default),
            Some(v) => match v.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
                _ => bail!("{k}={v}: not a non-negative number"),
            },
        }
    }
    pub(crate) fn bool(&self, k: &str, default: bool) -> Result<bool> {
        match self.0.get(k).map(|v| v.trim().to_ascii_lowercase()) {
            None => Ok(default),
            Some(v) if v == "true" => Ok(true),
            Some(v) if v == "false" => Ok(false),
            Some(v) => bail!("{k}={v}: expected true or false"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn property_files_parse() {
        let mut m = BTreeMap::new();
        parse_properties(
            "# c\n! c\nrecordcount=10\n  a : b\nc d\nempty=\nx= y z \n",
            &mut m,
        );
        assert_eq!(m["recordcount"], "10");
        assert_eq!(m["a"], "b");
        assert_eq!(m["c"], "d");
        assert_eq!(m["empty"], "");
        assert_eq!(m["x"], "y z");
    }

    #[test]
    fn builtins_resolve_by_name_and_path() {
        assert!(property_file("workloada")
            .unwrap()
            .contains("readproportion=0.5"));
        assert!(property_file("workloads/workloadf")
            .unwrap()
            .contains("readmodifywriteproportion=0.5"));
        assert!(property_file("e").unwrap().contains("maxscanlength=100"));
        assert!(property_file("workloadz").is_err());
    }
}
