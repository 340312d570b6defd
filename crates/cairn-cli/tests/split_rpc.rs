//! Splits and merges of `cairn serve` as clients see them.
//!
//! - HBase 2.6.1's own Java client (`dev.cairn.interop.SplitMergeCheck`, interop/hbase) drives
//!   `Admin.split` (at a row and without one), `splitRegionAsync` and `mergeRegionsAsync` over
//!   the native RPC, with one `Table` held open across them whose cached locations go stale,
//!   and checks the regions meta shows, HBase's error texts, and every row once at the end.
//!   Needs `mvn -f interop/hbase/pom.xml package` first; skipped without the jars unless
//!   `CAIRN_REQUIRE_HBASE_INTEROP=1`.
//! - Automatic splits: a table loaded through Thrift (happybase, from the project's venv)
//!   past several times a small `hbase.hregion.max.filesize` ends up in several regions
//!   (Thrift `getTableRegions`) with every row readable once, and keeps every acknowledged
//!   row, once, across a kill -9 during further loading. Skipped without happybase unless
//!   `CAIRN_REQUIRE_TLS_CLIENTS=1` (the variable the other happybase tests use).

#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

#[path = "support/serve.rs"]
mod serve;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;

use serve::{tail, Server};

#[test]
fn hbase_java_client_splits_and_merges_regions_of_cairn_serve() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let data = tempfile::tempdir().expect("temp dir");
    let server = Server::start(data.path(), &[]);
    let addr = server.addr.clone();
    let dir = data.path().to_string_lossy().into_owned();
    let out = hbase::java(
        &cp,
        "SplitMergeCheck",
        &["--bootstrap", &addr, "--data", &dir],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("summary: all split and merge checks passed"),
        "SplitMergeCheck against cairn serve at {addr} failed ({}):\n{}\n\
         client stderr (tail):\n{}\nserver stderr (tail):\n{}",
        out.status,
        stdout
            .lines()
            .filter(|l| l.starts_with("FAIL"))
            .collect::<Vec<_>>()
            .join("\n"),
        tail(&String::from_utf8_lossy(&out.stderr), 40),
        tail(&server.stderr.lock().unwrap(), 40)
    );
}

/// The project's venv python with happybase, or `None` (skip) when there is none.
fn python() -> Option<PathBuf> {
    let p = std::env::var_os("CAIRN_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/venv/bin/python")
        });
    let ok = Command::new(&p)
        .args(["-c", "import happybase"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CAIRN_REQUIRE_TLS_CLIENTS").is_none(),
            "no python with happybase at {} (set CAIRN_PYTHON)",
            p.display()
        );
        eprintln!("skipped: no python with happybase at {}", p.display());
        return None;
    }
    Some(p)
}

/// `HOST:PORT` of the server's Thrift listener, from the line `cairn serve` prints.
fn thrift_addr(server: &Server) -> String {
    let out = server.stdout.lock().unwrap();
    out.lines()
        .find_map(|l| l.split("thrift on ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no `thrift on HOST:PORT` line in:\n{out}"))
}

/// Runs tests/split/autosplit.py with `args`; its stdout.
fn autosplit(py: &Path, server: &Server, args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/split/autosplit.py");
    let out = Command::new(py)
        .arg(&script)
        .arg(thrift_addr(server))
        .args(args)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("autosplit.py {args:?}:\n{}", tail(&stdout, 5));
    assert!(
        out.status.success(),
        "autosplit.py {args:?} failed ({}):\n{stdout}\nstderr:\n{}\nserver stderr (tail):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        server.stderr_tail(40)
    );
    stdout
}

/// The last `key=value` a script printed for `key`.
fn value(out: &str, key: &str) -> usize {
    out.lines()
        .rev()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key}= line in:\n{out}"))
}

/// Small regions: a store splits its region past 256 KiB. Nothing flushes a memstore that
/// small by size (the table's flush size is HBase's 128 MiB), so the WAL does it: it rolls
/// every 64 KiB and more than two closed segments flush the regions holding the oldest, as
/// `hbase.regionserver.maxlogs` makes HBase do. Each flush then checks the split policy.
const SMALL_REGIONS: &[&str] = &[
    "-D",
    "hbase.hregion.max.filesize=262144",
    "-D",
    "hbase.regionserver.hlog.blocksize=131072",
    "-D",
    "hbase.regionserver.maxlogs=2",
];

#[test]
fn a_table_loaded_through_thrift_splits_by_itself_and_survives_kill_9() {
    let Some(py) = python() else { return };
    let data = tempfile::tempdir().expect("temp dir");
    let server = Server::start(data.path(), SMALL_REGIONS);
    // ~2.5 MB of rows: ten times the max file size.
    let rows = 12_000;
    let out = autosplit(&py, &server, &["load", "0", &rows.to_string()]);
    assert_eq!(value(&out, "acked"), rows);
    let out = autosplit(
        &py,
        &server,
        &["check", &rows.to_string(), "--min-regions", "3"],
    );
    let regions = value(&out, "regions");
    assert!(regions >= 3, "{regions} regions:\n{out}");
    assert_eq!(value(&out, "rows"), rows, "{out}");

    // Kill -9 while loading more, three times, once the loader is well under way each time
    // (splits run all along): every row the client saw acknowledged must be there, once,
    // after each restart.
    let end = 1_000_000;
    let mut server = server;
    let mut acked = rows;
    for round in 0..3 {
        let (loaded, now) = load_until_killed(&py, server, acked, acked + 8_000, end);
        assert!(
            (acked + 8_000..end).contains(&now),
            "round {round}: the server was not killed during the load:\n{loaded}"
        );
        acked = now;
        server = Server::start(data.path(), SMALL_REGIONS);
        let out = autosplit(
            &py,
            &server,
            &["check", &acked.to_string(), "--upto", &end.to_string()],
        );
        assert!(value(&out, "regions") >= regions, "round {round}:\n{out}");
        assert!(
            value(&out, "rows") >= acked,
            "round {round}: acknowledged rows lost after kill -9:\n{out}"
        );
    }
}

/// Loads rows `from..end` through `server`'s Thrift port and kills the server (SIGKILL)
/// once rows up to `kill_at` are acknowledged; returns the loader's output and one past the
/// last row it saw acknowledged.
fn load_until_killed(
    py: &Path,
    server: Server,
    from: usize,
    kill_at: usize,
    end: usize,
) -> (String, usize) {
    let mut loader = Command::new(py)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/split/autosplit.py"))
        .arg(thrift_addr(&server))
        .args(["load", &from.to_string(), &end.to_string()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run python");
    let mut lines = BufReader::new(loader.stdout.take().expect("piped stdout")).lines();
    let mut loaded = String::new();
    for line in lines.by_ref() {
        let line = line.expect("loader output");
        loaded.push_str(&line);
        loaded.push('\n');
        if line.starts_with("acked=") && value(&line, "acked") >= kill_at {
            break;
        }
    }
    drop(server); // kill -9 (SIGKILL), as Server's Drop does
    for line in lines {
        loaded.push_str(&line.expect("loader output"));
        loaded.push('\n');
    }
    assert!(loader.wait().expect("loader").success(), "{loaded}");
    println!("loader killed with the server:\n{}", tail(&loaded, 3));
    let acked = value(&loaded, "acked");
    (loaded, acked)
}
