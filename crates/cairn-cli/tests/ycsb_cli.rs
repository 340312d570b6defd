//! `cairn ycsb` at tiny sizes: every core workload loads and runs, prints YCSB's lines with
//! operation counts that add up, roughly keeps its mix; bad properties are named. (YCSB's
//! generators are tested beside them, in cairn-bench.)

use std::collections::HashMap;
use std::process::{Command, Output};

fn cairn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .output()
        .expect("run cairn")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// One phase's output: `[METRIC], MEASUREMENT, VALUE` lines by (metric, measurement).
type Block = HashMap<(String, String), String>;

/// Splits stdout into phases (each starts with `[OVERALL], RunTime(ms)`).
fn blocks(stdout: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    for l in stdout.lines() {
        let Some(rest) = l.strip_prefix('[') else {
            panic!("not a YCSB line: {l:?}");
        };
        let (metric, rest) = rest.split_once("], ").expect("[METRIC], ...");
        let (m, v) = rest.split_once(", ").expect("MEASUREMENT, VALUE");
        if metric == "OVERALL" && m == "RunTime(ms)" {
            out.push(Block::new());
        }
        out.last_mut()
            .expect("a block starts with [OVERALL], RunTime(ms)")
            .insert((metric.to_string(), m.to_string()), v.to_string());
    }
    out
}

fn get(b: &Block, metric: &str, m: &str) -> Option<u64> {
    b.get(&(metric.to_string(), m.to_string()))
        .map(|v| v.parse().unwrap_or_else(|_| panic!("[{metric}], {m}, {v}")))
}

fn ops(b: &Block, metric: &str) -> u64 {
    get(b, metric, "Operations").unwrap_or(0)
}

/// Checks every line YCSB prints for an operation that ran.
fn has_op_lines(b: &Block, metric: &str) {
    for m in [
        "Operations",
        "AverageLatency(us)",
        "MinLatency(us)",
        "MaxLatency(us)",
        "95thPercentileLatency(us)",
        "99thPercentileLatency(us)",
        "Return=OK",
    ] {
        assert!(
            b.contains_key(&(metric.to_string(), m.to_string())),
            "[{metric}], {m} missing in {b:?}"
        );
    }
    assert_eq!(get(b, metric, "Operations"), get(b, metric, "Return=OK"));
}

fn run_all(workload: &str, extra: &[&str]) -> (Block, Block) {
    let mut args = vec![
        "ycsb",
        "all",
        "-P",
        workload,
        "-p",
        "recordcount=500",
        "-p",
        "operationcount=1000",
        "-p",
        "fieldlength=20",
    ];
    args.extend_from_slice(extra);
    let o = cairn(&args);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    let stdout = String::from_utf8(o.stdout).unwrap();
    let mut b = blocks(&stdout);
    assert_eq!(b.len(), 2, "load and run blocks: {stdout}");
    let run = b.pop().unwrap();
    let load = b.pop().unwrap();
    for blk in [&load, &run] {
        assert!(blk.contains_key(&("OVERALL".into(), "Throughput(ops/sec)".into())));
        for m in ["UserCPU(s)", "SysCPU(s)", "OpsPerCPUSecond"] {
            assert!(
                blk.contains_key(&("CAIRN".into(), m.into())),
                "{m}: {blk:?}"
            );
        }
    }
    has_op_lines(&load, "INSERT");
    assert_eq!(ops(&load, "INSERT"), 500);
    assert_eq!(get(&run, "CAIRN", "Threads").map(|_| ()), Some(()));
    (load, run)
}

/// Operations the run did: READ-MODIFY-WRITE also counts one READ and one UPDATE, as in YCSB.
fn run_total(b: &Block) -> u64 {
    let rmw = ops(b, "READ-MODIFY-WRITE");
    ops(b, "READ") + ops(b, "UPDATE") + ops(b, "INSERT") + ops(b, "SCAN") + rmw - 2 * rmw
}

fn near(x: u64, want: u64, slack: u64, what: &str) {
    assert!(
        x.abs_diff(want) <= slack,
        "{what}: {x}, expected {want} ± {slack}"
    );
}

#[test]
fn every_core_workload_loads_runs_and_keeps_its_mix() {
    // a: 50/50 read/update.
    let (_, a) = run_all("workloada", &[]);
    has_op_lines(&a, "READ");
    has_op_lines(&a, "UPDATE");
    assert_eq!(run_total(&a), 1000);
    near(ops(&a, "READ"), 500, 80, "workload a reads");
    // b: 95/5 read/update.
    let (_, b) = run_all("workloadb", &[]);
    assert_eq!(run_total(&b), 1000);
    near(ops(&b, "READ"), 950, 40, "workload b reads");
    // c: read only.
    let (_, c) = run_all("workloadc", &[]);
    has_op_lines(&c, "READ");
    assert_eq!(ops(&c, "READ"), 1000);
    assert_eq!(ops(&c, "UPDATE"), 0);
    // d: 95/5 read/insert, latest.
    let (_, d) = run_all("workloadd", &[]);
    assert_eq!(run_total(&d), 1000);
    near(ops(&d, "INSERT"), 50, 35, "workload d inserts");
    // Latest reads only touch acknowledged inserts: every read finds its row.
    assert_eq!(get(&d, "READ", "Return=OK"), Some(ops(&d, "READ")));
    // e: 95/5 scan/insert.
    let (_, e) = run_all("workloade", &[]);
    has_op_lines(&e, "SCAN");
    assert_eq!(run_total(&e), 1000);
    near(ops(&e, "SCAN"), 950, 40, "workload e scans");
    // f: 50/50 read/read-modify-write; each RMW is also a READ and an UPDATE.
    let (_, f) = run_all("workloadf", &[]);
    has_op_lines(&f, "READ-MODIFY-WRITE");
    assert_eq!(run_total(&f), 1000);
    assert_eq!(ops(&f, "READ"), 1000);
    assert_eq!(ops(&f, "UPDATE"), ops(&f, "READ-MODIFY-WRITE"));
    near(
        ops(&f, "READ-MODIFY-WRITE"),
        500,
        80,
        "workload f read-modify-writes",
    );
    for blk in [&a, &b, &c, &d, &e, &f] {
        assert_eq!(get(blk, "READ", "Return=NOT_FOUND"), None, "{blk:?}");
        assert_eq!(get(blk, "CLEANUP", "Operations"), Some(1));
    }
}

#[test]
fn load_then_run_in_two_processes_with_threads_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    // A property file of YCSB's format, comments and all.
    let file = dir.path().join("mine.properties");
    std::fs::write(
        &file,
        "# a custom mix\nrecordcount=300\noperationcount=600\n! another comment\n\
         readproportion=0.5\nupdateproportion=0.2\nscanproportion=0.1\ninsertproportion=0.1\n\
         readmodifywriteproportion=0.1\nrequestdistribution=uniform\nmaxscanlength=10\n\
         fieldcount=3\nfieldlength=8\nreadallfields=false\ninsertorder=ordered\n\
         zeropadding=6\ncolumnfamily=cf\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let o = cairn(&["ycsb", "load", "-P", f, "-threads", "2", "--data", data]);
    assert!(o.status.success(), "{}", text(&o));
    let load = blocks(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(ops(&load[0], "INSERT"), 300);
    assert_eq!(get(&load[0], "CLEANUP", "Operations"), Some(2));
    let o = cairn(&[
        "ycsb",
        "run",
        "-P",
        f,
        "-threads",
        "2",
        "-s",
        "-p",
        "status.interval=1",
        "--data",
        data,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let run = blocks(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(run.len(), 1);
    assert_eq!(run_total(&run[0]), 600);
    assert_eq!(get(&run[0], "READ", "Return=NOT_FOUND"), None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(" sec: 600 operations; "), "{err}");
    // The rows are YCSB's: ordered keys, zero-padded to 6 digits, in family cf.
    let region_dirs = dir.path().join("data/default/usertable");
    assert!(region_dirs.is_dir(), "{}", region_dirs.display());
    // Run on a store without the table says what to do.
    let empty = tempfile::tempdir().unwrap();
    let o = cairn(&[
        "ycsb",
        "run",
        "-P",
        "workloadc",
        "--data",
        empty.path().to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("load it first"), "{}", text(&o));
}

#[test]
fn bad_properties_are_named() {
    let cases: &[(&[&str], &str)] = &[
        (&["-p", "recordcount=abc"], "recordcount=abc"),
        (
            &["-p", "requestdistribution=foo"],
            "requestdistribution=foo",
        ),
        (&["-p", "readproportion=-1"], "readproportion=-1"),
        (&["-p", "fieldlengthdistribution=histogram"], "histogram"),
        (
            &["-p", "scanlengthdistribution=latest"],
            "scanlengthdistribution",
        ),
        (
            &["-p", "insertstart=400", "-p", "insertcount=400"],
            "insertcount",
        ),
        (&["-p", "durability=SOMETIMES"], "durability=SOMETIMES"),
        (
            &["-p", "workload=site.ycsb.workloads.TimeSeriesWorkload"],
            "CoreWorkload",
        ),
        (
            &["-p", "readproportion=0", "-p", "updateproportion=0"],
            "every operation proportion is 0",
        ),
        (&["-p", "threadcount=0"], "threadcount"),
        (&["-p", "noequals"], "key=value"),
        (&["-P", "no/such/workloadz"], "not a built-in workload"),
        (&["-threads"], "missing argument value for -threads"),
        (&["--frobnicate"], "unknown option --frobnicate"),
    ];
    for (extra, want) in cases {
        let mut args = vec!["ycsb", "all", "-P", "workloadc", "-p", "recordcount=500"];
        args.extend_from_slice(extra);
        let o = cairn(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains(want),
            "{args:?}: want {want:?} in {}",
            text(&o)
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}
