//! `cairn ycsb`: YCSB's core workloads (A–F and any mix of the same properties) run embedded
//! against the region store, with YCSB's command line (`-P`, `-p`, `-threads`, `-target`,
//! `-s`), YCSB's generators and YCSB's HBase binding's mapping (table `usertable`, one family,
//! rows `user…`, qualifiers `field0…`), printing YCSB's own text output. Lines cairn adds are
//! tagged `[CAIRN]`.

mod generator;
mod measure;
mod workload;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use cairn_blockcache::{BlockCacheConfig, BucketCacheConfig};
use cairn_region::{ColumnFamilyDescriptor, Durability, RegionServer, TableDescriptor, TableName};
use clap::{Args, ValueEnum};
use rand::Rng;

use crate::bench::{cpu_times, parse_size, seed, Store};
use generator::{AckCounter, Counter, ScrambledZipfian, SkewedLatest, Zipfian};
use measure::{java_double, Measurements};
use workload::{FieldLength, KeyChooser, Op, ScanLength, Shared, ThreadSlot, Workload};

/// YCSB's `workloads/workloada` … `workloadf` (the values of YCSB's files; the text is
/// cairn's).
const BUILTIN: [(&str, &str); 6] = [
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
const KNOWN: &[&str] = &[
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

/// Which phase to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Phase {
    /// Insert recordcount records (YCSB's `-load`).
    Load,
    /// Run operationcount operations of the workload's mix (YCSB's `-t`).
    Run,
    /// Load, then run, in one process (two outputs, one after the other).
    All,
}

const AFTER_HELP: &str = "\
YCSB's options (single dash, as YCSB spells them):
  -P FILE|workloada..f   property file; workloada..workloadf (or a, …, f, or a path ending in
                         one whose file does not exist) are built in; several are read in order
  -p NAME=VALUE          a property; overrides every -P file
  -threads N             client threads (threadcount)
  -target N              total operations per second (target; default unthrottled)
  -s                     status lines on stderr every status.interval (10) seconds
  -l LABEL               prefix for status lines
cairn's options:
  --data DIR             store directory (kept; HBase's layout); default a temporary one
  --keep                 keep the temporary directory and print its path
  --blockCacheSize SIZE  L1 block cache (default 1GiB)
  --bucketCacheSize SIZE add an off-heap L2 bucket cache

Properties: recordcount, operationcount, workload (CoreWorkload only), threadcount, target,
insertstart, insertcount, table (usertable), columnfamily (family), fieldcount (10),
fieldlength (100), minfieldlength, fieldlengthdistribution (constant|uniform|zipfian),
fieldnameprefix, readallfields, readallfieldsbyname, writeallfields, readproportion,
updateproportion, insertproportion, scanproportion, readmodifywriteproportion,
requestdistribution (uniform|zipfian|latest), minscanlength, maxscanlength (1000),
scanlengthdistribution (uniform|zipfian), insertorder (hashed|ordered), zeropadding,
durability (SKIP_WAL|ASYNC_WAL|SYNC_WAL|FSYNC_WAL|USE_DEFAULT), maxexecutiontime (s),
hdrhistogram.percentiles (95,99), status.interval, label.

`load` creates the table (one family) if it is missing. `run` needs a loaded table: give the
same --data as the load, or use `all`, which loads then runs in one process. Output on stdout
is YCSB's text exporter's (`[OVERALL], RunTime(ms), …`, `[READ], Operations, …`); the
`[CAIRN]` lines after it are cairn's (phase, CPU time, operations per CPU-second, store).

Examples:
  cairn ycsb all -P workloada -p recordcount=100000 -p operationcount=100000 -threads 2
  cairn ycsb load -P workloada -p recordcount=1000000 --data /tmp/ycsb
  cairn ycsb run -P workloadb -p recordcount=1000000 -p operationcount=1000000 --data /tmp/ycsb";

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct YcsbArgs {
    /// load, run, or all (load then run).
    #[arg(value_enum, value_name = "PHASE")]
    phase: Phase,
    /// YCSB's options (-P, -p, -threads, -target, -s, -l) and cairn's (--data, --keep,
    /// --blockCacheSize, --bucketCacheSize); see below.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "OPTIONS"
    )]
    options: Vec<String>,
}

/// The parsed command line.
struct Cmd {
    phase: Phase,
    props: BTreeMap<String, String>,
    data: Option<PathBuf>,
    keep: bool,
    cache: BlockCacheConfig,
    help: bool,
}

/// Java `Properties.load`, simplified: `key=value`, `key: value` or `key value` per line,
/// `#` and `!` comments.
fn parse_properties(text: &str, into: &mut BTreeMap<String, String>) {
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
fn property_file(name: &str) -> Result<String> {
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

fn parse_cmd(a: &YcsbArgs) -> Result<Cmd> {
    let mut file_props = BTreeMap::new();
    let mut props = BTreeMap::new();
    let mut cmd = Cmd {
        phase: a.phase,
        props: BTreeMap::new(),
        data: None,
        keep: false,
        cache: BlockCacheConfig {
            l1_size: 1 << 30,
            l2: None,
        },
        help: false,
    };
    let mut it = a.options.iter();
    while let Some(opt) = it.next() {
        let (name, inline) = match opt.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (opt.as_str(), None),
        };
        let mut value = |what: &str| -> Result<String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => it
                    .next()
                    .cloned()
                    .ok_or_else(|| anyhow!("missing argument value for {what}")),
            }
        };
        match name {
            "-h" | "--help" | "-help" => cmd.help = true,
            "-P" => parse_properties(&property_file(&value("-P")?)?, &mut file_props),
            "-p" => {
                let kv = value("-p")?;
                let (k, v) = kv.split_once('=').ok_or_else(|| {
                    anyhow!("-p {kv}: expected key=value (e.g., -p operationcount=99999)")
                })?;
                props.insert(k.trim().to_string(), v.to_string());
            }
            "-threads" => {
                props.insert("threadcount".into(), value("-threads")?);
            }
            "-target" => {
                props.insert("target".into(), value("-target")?);
            }
            "-s" => {
                props.insert("status".into(), "true".into());
            }
            "-l" => {
                props.insert("label".into(), value("-l")?);
            }
            "-db" => {
                let db = value("-db")?;
                eprintln!("cairn ycsb: note: -db {db} ignored: the embedded store is the database");
            }
            "-load" | "-t" => {
                let want = if name == "-load" {
                    Phase::Load
                } else {
                    Phase::Run
                };
                if cmd.phase != want {
                    bail!("{name} contradicts the phase given ({:?})", cmd.phase);
                }
            }
            "--data" => cmd.data = Some(PathBuf::from(value("--data")?)),
            "--keep" => cmd.keep = true,
            "--blockCacheSize" => {
                cmd.cache.l1_size = parse_size("--blockCacheSize", &value("--blockCacheSize")?)?
            }
            "--bucketCacheSize" => {
                cmd.cache.l2 = Some(BucketCacheConfig {
                    capacity: parse_size("--bucketCacheSize", &value("--bucketCacheSize")?)?,
                    ..BucketCacheConfig::default()
                })
            }
            other => bail!(
                "unknown option {other} (YCSB's: -P, -p, -threads, -target, -s, -l; cairn's: \
                 --data, --keep, --blockCacheSize, --bucketCacheSize)"
            ),
        }
    }
    // Command-line properties override the files', whatever their order (YCSB's rule).
    file_props.extend(props);
    cmd.props = file_props;
    Ok(cmd)
}

/// Typed access to the properties, naming the property in every error.
struct Props<'a>(&'a BTreeMap<String, String>);

impl Props<'_> {
    fn str(&self, k: &str, default: &str) -> String {
        self.0
            .get(k)
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| default.into())
    }
    fn u64(&self, k: &str, default: u64) -> Result<u64> {
        match self.0.get(k) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| anyhow!("{k}={v}: not a non-negative whole number")),
        }
    }
    fn f64(&self, k: &str, default: f64) -> Result<f64> {
        match self.0.get(k) {
            None => Ok(default),
            Some(v) => match v.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
                _ => bail!("{k}={v}: not a non-negative number"),
            },
        }
    }
    fn bool(&self, k: &str, default: bool) -> Result<bool> {
        match self.0.get(k).map(|v| v.trim().to_ascii_lowercase()) {
            None => Ok(default),
            Some(v) if v == "true" => Ok(true),
            Some(v) if v == "false" => Ok(false),
            Some(v) => bail!("{k}={v}: expected true or false"),
        }
    }
}

/// Everything a phase needs, resolved from the properties.
struct Plan {
    workload: Workload,
    /// Load: the records to insert; run: the operations.
    load_ops: u64,
    run_ops: u64,
    threads: usize,
    target: u64,
    status: bool,
    status_interval: Duration,
    label: String,
    max_time: Option<Duration>,
    percentiles: Vec<f64>,
    descriptor: TableDescriptor,
}

fn plan(props: &BTreeMap<String, String>, phase: Phase) -> Result<Plan> {
    let p = Props(props);
    let wl = p.str("workload", "site.ycsb.workloads.CoreWorkload");
    if !wl.ends_with(".CoreWorkload") && wl != "CoreWorkload" {
        bail!("workload={wl}: only YCSB's CoreWorkload is supported");
    }
    let mtype = p.str("measurementtype", "hdrhistogram");
    if mtype != "hdrhistogram" {
        bail!("measurementtype={mtype}: only hdrhistogram is supported");
    }
    let interval = p.str("measurement.interval", "op");
    if interval != "op" {
        bail!("measurement.interval={interval}: only op is supported");
    }
    if p.bool("dataintegrity", false)? {
        bail!("dataintegrity=true is not supported");
    }
    let record_count = p.u64("recordcount", 0)?;
    if record_count == 0 {
        bail!("recordcount must be at least 1 (set it in the -P file or with -p recordcount=N)");
    }
    let insert_start = p.u64("insertstart", 0)?;
    let insert_count = match props.get("insertcount") {
        Some(_) => p.u64("insertcount", 0)?,
        None => record_count.checked_sub(insert_start).ok_or_else(|| {
            anyhow!("insertstart={insert_start} is past recordcount={record_count}")
        })?,
    };
    if record_count < insert_start + insert_count {
        bail!(
            "insertstart={insert_start} + insertcount={insert_count} is past \
             recordcount={record_count}: recordcount must be at least insertstart + insertcount"
        );
    }
    if insert_count == 0 {
        bail!("insertcount must be at least 1");
    }
    let run_ops = p.u64("operationcount", 0)?;
    let max_secs = p.u64("maxexecutiontime", 0)?;
    if phase != Phase::Load && run_ops == 0 && max_secs == 0 {
        bail!(
            "operationcount must be at least 1 (or 0 with maxexecutiontime=SECONDS to run for a \
             time)"
        );
    }
    let field_count = p.u64("fieldcount", 10)?;
    if field_count == 0 {
        bail!("fieldcount must be at least 1");
    }
    let prefix = p.str("fieldnameprefix", "field");
    let field_length = p.u64("fieldlength", 100)?;
    let min_field_length = p.u64("minfieldlength", 1)?;
    let fld = p.str("fieldlengthdistribution", "constant");
    let field_length = match fld.as_str() {
        "constant" => FieldLength::Constant(field_length),
        "uniform" | "zipfian" if min_field_length > field_length => {
            bail!("minfieldlength={min_field_length} is more than fieldlength={field_length}")
        }
        "uniform" => FieldLength::Uniform {
            min: min_field_length,
            max: field_length,
        },
        "zipfian" => FieldLength::Zipfian(Zipfian::new(min_field_length, field_length)),
        "histogram" => bail!("fieldlengthdistribution=histogram is not supported"),
        other => bail!("fieldlengthdistribution={other}: unknown (constant, uniform or zipfian)"),
    };
    let mut ops = Vec::new();
    for (k, default, op) in [
        ("readproportion", 0.95, Op::Read),
        ("updateproportion", 0.05, Op::Update),
        ("insertproportion", 0.0, Op::Insert),
        ("scanproportion", 0.0, Op::Scan),
        ("readmodifywriteproportion", 0.0, Op::ReadModifyWrite),
    ] {
        let w = p.f64(k, default)?;
        if w > 0.0 {
            ops.push((w, op));
        }
    }
    if ops.is_empty() && phase != Phase::Load {
        bail!(
            "every operation proportion is 0: set readproportion, updateproportion, \
             insertproportion, scanproportion or readmodifywriteproportion"
        );
    }
    let insert_proportion = p.f64("insertproportion", 0.0)?;
    let dist = p.str("requestdistribution", "uniform");
    let key_chooser = match dist.as_str() {
        "uniform" => KeyChooser::Uniform {
            lb: insert_start,
            ub: insert_start + insert_count - 1,
        },
        "zipfian" => {
            // YCSB sizes the key space for the inserts it expects (x2), so popular keys stay
            // popular as the table grows; keys not yet inserted are drawn again.
            let expected_new = (run_ops as f64 * insert_proportion * 2.0) as u64;
            KeyChooser::Zipfian(ScrambledZipfian::new(
                insert_start,
                insert_start + insert_count + expected_new,
            ))
        }
        "latest" => KeyChooser::Latest(SkewedLatest::new(record_count - 1)),
        "hotspot" | "sequential" | "exponential" => {
            bail!("requestdistribution={dist} is not supported (uniform, zipfian or latest)")
        }
        other => bail!("requestdistribution={other}: unknown (uniform, zipfian or latest)"),
    };
    let min_scan = p.u64("minscanlength", 1)?;
    let max_scan = p.u64("maxscanlength", 1000)?;
    if min_scan > max_scan {
        bail!("minscanlength={min_scan} is more than maxscanlength={max_scan}");
    }
    let sld = p.str("scanlengthdistribution", "uniform");
    let scan_length = match sld.as_str() {
        "uniform" => ScanLength::Uniform {
            min: min_scan,
            max: max_scan,
        },
        "zipfian" => ScanLength::Zipfian(Zipfian::new(min_scan, max_scan)),
        other => bail!("scanlengthdistribution={other}: not allowed (uniform or zipfian)"),
    };
    let order = p.str("insertorder", "hashed");
    let ordered_inserts = match order.as_str() {
        "hashed" => false,
        // YCSB: anything other than "hashed" is ordered.
        _ => true,
    };
    let durability = match p
        .str("durability", "USE_DEFAULT")
        .to_ascii_uppercase()
        .as_str()
    {
        "USE_DEFAULT" => None,
        d => Some(
            d.parse::<Durability>()
                .map_err(|e| anyhow!("durability={d}: {e}"))?,
        ),
    };
    let table_name = p.str("table", "usertable");
    let table = TableName::parse(&table_name).map_err(|e| anyhow!("table={table_name}: {e}"))?;
    let family = p.str("columnfamily", "family");
    let descriptor = TableDescriptor::new(table.clone())
        .with_family(ColumnFamilyDescriptor::new(family.clone()));
    descriptor
        .validate()
        .map_err(|e| anyhow!("table={table_name}, columnfamily={family}: {e}"))?;
    let threads = p.u64("threadcount", 1)?;
    if threads == 0 || threads > 1024 {
        bail!("threadcount={threads}: must be 1 … 1024");
    }
    let percentiles: Vec<f64> = p
        .str("hdrhistogram.percentiles", "95,99")
        .split(',')
        .map(|s| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| (0.0..=100.0).contains(x))
                .ok_or_else(|| anyhow!("hdrhistogram.percentiles: {s:?} is not a percentile"))
        })
        .collect::<Result<_>>()?;
    let status_interval = p.u64("status.interval", 10)?.max(1);
    let load_ops = if props.contains_key("insertcount") {
        insert_count
    } else {
        record_count
    };
    Ok(Plan {
        workload: Workload {
            table,
            family: family.into_bytes(),
            field_names: (0..field_count)
                .map(|i| format!("{prefix}{i}").into_bytes())
                .collect(),
            field_length,
            read_all_fields: p.bool("readallfields", true)?,
            read_all_fields_by_name: p.bool("readallfieldsbyname", false)?,
            write_all_fields: p.bool("writeallfields", false)?,
            ordered_inserts,
            zero_padding: p.u64("zeropadding", 1)? as usize,
            ops,
            key_chooser,
            scan_length,
            key_sequence: Counter::new(insert_start),
            insert_sequence: AckCounter::new(record_count),
            durability,
        },
        load_ops,
        run_ops,
        threads: threads as usize,
        target: p.u64("target", 0)?,
        status: p.bool("status", false)?,
        status_interval: Duration::from_secs(status_interval),
        label: p.str("label", ""),
        max_time: (max_secs > 0).then(|| Duration::from_secs(max_secs)),
        percentiles,
        descriptor,
    })
}

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
struct PhaseResult {
    threads: usize,
    measurements: Measurements,
    ops_done: u64,
    runtime: Duration,
    user: Duration,
    sys: Duration,
    busy_waits: u64,
    errors: u64,
    first_error: Option<String>,
}

/// `Client.main` from `initDb` to the joins: the client threads, the status thread's lines
/// and the progress bar.
fn run_phase(server: &RegionServer, plan: &Plan, transactions: bool) -> PhaseResult {
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
    let base = seed();
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
                    let mut r = workload::thread_rng(base.wrapping_add(i as u64 * 0x9E37));
                    let seed2: u64 = r.random();
                    workload::run_thread(shared, slot, workload::thread_rng(seed2), ops);
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

/// `Client.exportMeasurements` with the text exporter, then cairn's lines.
fn report(plan: &Plan, r: &PhaseResult, phase: &str, store: &Store) -> String {
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

/// Creates the table for the load phase, or checks it is there for the run phase.
fn prepare_table(server: &RegionServer, plan: &Plan, phase: Phase) -> Result<()> {
    let table = &plan.workload.table;
    if server.table(table).is_err() {
        if phase == Phase::Run {
            bail!(
                "table {table} does not exist in this store: load it first (`cairn ycsb load \
                 ... --data DIR`, then `run` with the same --data), or use `cairn ycsb all`"
            );
        }
        server
            .create_table(plan.descriptor.clone(), &[])
            .with_context(|| format!("creating table {table}"))?;
        eprintln!("cairn ycsb: created table {table}");
    } else if !server.is_table_enabled(table)? {
        server.enable_table(table)?;
    }
    let family = &plan.workload.family;
    let t = server.table(table)?;
    if t.descriptor.family(family).is_none() {
        bail!(
            "table {table} has no family {}: set -p columnfamily= to its family",
            String::from_utf8_lossy(family)
        );
    }
    Ok(())
}

fn usage_error(e: anyhow::Error) -> ExitCode {
    eprintln!("cairn ycsb: error: {e:#}");
    ExitCode::from(2)
}

pub fn run(a: YcsbArgs) -> Result<ExitCode> {
    let cmd = match parse_cmd(&a) {
        Ok(c) => c,
        Err(e) => return Ok(usage_error(e)),
    };
    if cmd.help {
        println!("{AFTER_HELP}");
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "Command line: {}",
        std::iter::once(format!("{:?}", cmd.phase).to_lowercase())
            .chain(a.options.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    );
    for k in cmd.props.keys() {
        if !KNOWN.contains(&k.as_str()) {
            eprintln!("cairn ycsb: note: property {k} is not one cairn reads; ignored");
        }
    }
    eprintln!("Loading workload...");
    let phases: &[Phase] = match cmd.phase {
        Phase::All => &[Phase::Load, Phase::Run],
        Phase::Load => &[Phase::Load],
        Phase::Run => &[Phase::Run],
    };
    // Check every phase's properties before touching the store.
    for &ph in phases {
        if let Err(e) = plan(&cmd.props, ph) {
            return Ok(usage_error(e));
        }
    }
    let store = Store::open("ycsb", cmd.data.as_deref(), cmd.keep, cmd.cache.clone())?;
    let outcome = (|| -> Result<()> {
        for &ph in phases {
            // A fresh workload per phase: its counters start where YCSB's would.
            let plan = plan(&cmd.props, ph)?;
            prepare_table(&store.server, &plan, ph)?;
            let transactions = ph == Phase::Run;
            let r = run_phase(&store.server, &plan, transactions);
            if let Some(e) = &r.first_error {
                eprintln!(
                    "cairn ycsb: {} operation{} failed; the first: {e}",
                    r.errors,
                    if r.errors == 1 { "" } else { "s" }
                );
            }
            let name = if transactions { "run" } else { "load" };
            print!("{}", report(&plan, &r, name, &store));
            use std::io::Write;
            std::io::stdout().flush()?;
            if !transactions && r.ops_done < plan.load_ops {
                bail!(
                    "the load stopped after {} of {} records (an insert failed)",
                    r.ops_done,
                    plan.load_ops
                );
            }
        }
        Ok(())
    })();
    store.finish(outcome, false)?;
    Ok(ExitCode::SUCCESS)
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

    #[test]
    fn keys_are_ycsbs() {
        let mut props = BTreeMap::new();
        parse_properties(BUILTIN[0].1, &mut props);
        let mut p = plan(&props, Phase::Run).unwrap();
        p.workload.ordered_inserts = true;
        p.workload.zero_padding = 8;
        assert_eq!(p.workload.key(5), b"user00000005".to_vec());
        p.workload.zero_padding = 1;
        assert_eq!(p.workload.key(5), b"user5".to_vec());
        p.workload.ordered_inserts = false;
        let k = String::from_utf8(p.workload.key(5)).unwrap();
        assert_eq!(k, format!("user{}", generator::fnvhash64(5)));
    }

    #[test]
    fn remaining_reads_as_ycsbs() {
        assert_eq!(remaining(5), "5 second ");
        assert_eq!(remaining(42), "42 seconds ");
        assert_eq!(remaining(125), "2 minutes ");
        assert_eq!(remaining(3700), "1 hour 1 minute ");
    }
}
