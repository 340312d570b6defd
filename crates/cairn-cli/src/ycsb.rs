//! `cairn ycsb`: YCSB's core workloads on the embedded store, with YCSB's command line (`-P`,
//! `-p`, `-threads`, `-target`, `-s`, single dash as YCSB spells them) and cairn's own options,
//! parsed here into [`YcsbOptions`] for `cairn_bench::ycsb`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Result};
use cairn_bench::units::parse_size;
use cairn_bench::ycsb::{self, Phase, YcsbOptions};
use cairn_region::ServerConfig;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;

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
  --conf DIR             HBase's configuration directory (default $HBASE_CONF_DIR): the region
                         server properties of its core-site.xml and hbase-site.xml apply to the
                         embedded store, as YCSB's HBase binding reads hbase-site.xml
  -D NAME=VALUE          a region server property, over the files' (-DNAME=VALUE too)
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
    #[arg(value_name = "PHASE", value_parser = phase())]
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

fn phase() -> impl TypedValueParser<Value = Phase> {
    PossibleValuesParser::new(["load", "run", "all"])
        .map(|s| s.parse::<Phase>().expect("one of the names listed"))
}

/// The command line, parsed; `None` when it asks for help.
fn parse(a: &YcsbArgs) -> Result<Option<YcsbOptions>> {
    let mut file_props = BTreeMap::new();
    let mut props = BTreeMap::new();
    let mut o = YcsbOptions {
        phase: a.phase,
        properties: BTreeMap::new(),
        data: None,
        keep: false,
        block_cache_size: cairn_bench::pe::DEFAULT_BLOCK_CACHE_SIZE,
        bucket_cache_size: None,
        command_line: std::iter::once(a.phase.name().to_string())
            .chain(a.options.iter().cloned())
            .collect::<Vec<_>>()
            .join(" "),
        server_properties: Vec::new(),
    };
    let mut conf = None;
    let mut defines = Vec::new();
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
            "-h" | "--help" | "-help" => return Ok(None),
            "-P" => file_props.extend(ycsb::read_property_file(&value("-P")?)?),
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
                tracing::info!("cairn ycsb: -db {db} ignored: the embedded store is the database");
            }
            "-load" | "-t" => {
                let want = if name == "-load" {
                    Phase::Load
                } else {
                    Phase::Run
                };
                if o.phase != want {
                    bail!("{name} contradicts the phase given ({})", o.phase);
                }
            }
            "--conf" => conf = Some(PathBuf::from(value("--conf")?)),
            "-D" => defines.push(value("-D")?),
            d if d.starts_with("-D") => defines.push(d[2..].to_string()),
            "--data" => o.data = Some(PathBuf::from(value("--data")?)),
            "--keep" => o.keep = true,
            "--blockCacheSize" => {
                o.block_cache_size = parse_size("--blockCacheSize", &value("--blockCacheSize")?)?
            }
            "--bucketCacheSize" => {
                o.bucket_cache_size = Some(parse_size(
                    "--bucketCacheSize",
                    &value("--bucketCacheSize")?,
                )?)
            }
            other => bail!(
                "unknown option {other} (YCSB's: -P, -p, -threads, -target, -s, -l; cairn's: \
                 --conf, -D, --data, --keep, --blockCacheSize, --bucketCacheSize)"
            ),
        }
    }
    // Command-line properties override the files', whatever their order (YCSB's rule).
    file_props.extend(props);
    o.properties = file_props;
    o.server_properties = server_properties(conf.as_deref(), &defines)?;
    Ok(Some(o))
}

/// Whether `cairn ycsb` reads the HBase property `name`: the region server's.
fn reads(name: &str) -> bool {
    ServerConfig::reads_property(name)
}

/// The region server's properties from HBase's configuration directory and the `-D`s, each
/// checked (an error names its file or `-D`). `hbase.rootdir` from a file is left out:
/// `--data` says where the store is; a `-D` of it is refused.
fn server_properties(conf: Option<&Path>, defines: &[String]) -> Result<Vec<(String, String)>> {
    let site = crate::site::Site::load("ycsb", conf, defines, reads)?;
    let mut scratch = ServerConfig::new(PathBuf::new());
    let mut out = Vec::new();
    for p in site.read(reads)? {
        if p.name == "hbase.rootdir" {
            if p.source == "-D" {
                bail!("{}: give the store's directory with --data", p.origin());
            }
            continue;
        }
        scratch
            .set_property(&p.name, &p.value)
            .map_err(|e| anyhow!("{}: {e}", p.origin()))?;
        out.push((p.name, p.value));
    }
    Ok(out)
}

pub fn run(a: YcsbArgs) -> Result<ExitCode> {
    let o = match parse(&a) {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{AFTER_HELP}");
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => return Ok(crate::usage_error("ycsb", &e)),
    };
    let unread = ycsb::unread_properties(&o);
    if !unread.is_empty() {
        tracing::warn!("{}", crate::site::unread_warning("ycsb", "-p", &unread));
    }
    let stdout = std::io::stdout();
    match ycsb::run(&o, &mut stdout.lock()) {
        Err(e) if e.downcast_ref::<cairn_bench::UsageError>().is_some() => {
            Ok(crate::usage_error("ycsb", &e))
        }
        other => other.map(|()| ExitCode::SUCCESS),
    }
}
