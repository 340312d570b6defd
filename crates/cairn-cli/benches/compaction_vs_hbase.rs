//! A major compaction of the same store files by `cairn compact --major` and by HBase 2.6.1
//! (its `HStore` driven as `CompactionTool` drives it, `StoreInterop compact`), each in its own
//! process on a fresh copy of the input, which is in the page cache for both.
//!
//! Input: HBase's own writer produces `CAIRN_BENCH_FILES` (8) flush-like store files with ~10 KiB
//! values (`CAIRN_BENCH_VALUE`), overlapping rows, several versions and ~10% delete markers,
//! about 1 GiB in all (`CAIRN_BENCH_ROWS` rows per file). `CAIRN_BENCH_QUICK=1` makes it ~10 MiB
//! and one round so a CI smoke run takes well under a minute. Each side runs
//! `CAIRN_BENCH_ROUNDS` (3) times, alternating, and the medians are compared.
//!
//! CPU: cairn reports its process's user/system time (getrusage) over the compaction and the
//! share of it spent in checksums; HBase's side reports its process's user/system time from
//! /proc/self/stat over the same steps (GC and JIT threads included, as a region server pays
//! them) and, separately, the compacting thread's own.
//!
//! `cargo bench -p cairn-cli --bench compaction_vs_hbase` (HBase's side needs
//! `mvn -f interop/hbase/pom.xml package`). `CAIRN_BENCH_DIR` keeps the files somewhere else
//! than a temporary directory under `target/`.

#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use cairn_region::layout::{write_region_info, write_table_descriptor};
use cairn_region::{ColumnFamilyDescriptor, RegionInfo, TableDescriptor, TableName};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Writes `.tabledesc` and `.regioninfo` for table `t` under `root`; returns the family dir.
fn layout(root: &Path) -> PathBuf {
    let name = TableName::parse("t").unwrap();
    let table_dir = root.join("data/default/t");
    let desc = TableDescriptor::new(name.clone())
        .with_family(ColumnFamilyDescriptor::new("f").max_versions(3));
    write_table_descriptor(&cairn_region::layout::LOCAL, &table_dir, &desc).unwrap();
    let region = RegionInfo::new(name, b"", b"", 1_700_000_000_000);
    let family = table_dir.join(&region.encoded_name).join("f");
    write_region_info(
        &cairn_region::layout::LOCAL,
        family.parent().unwrap(),
        &region,
    )
    .unwrap();
    fs::create_dir_all(&family).unwrap();
    family
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            fs::copy(e.path(), &target).unwrap();
        }
    }
}

fn dir_bytes(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// `key=value` pairs from a line of `StoreInterop compact` or a flat JSON object.
fn fields(s: &str) -> BTreeMap<String, f64> {
    s.split([' ', ',', '{', '}'])
        .filter_map(|kv| kv.split_once(['=', ':']))
        .filter_map(|(k, v)| Some((k.trim_matches('"').to_string(), v.parse().ok()?)))
        .collect()
}

#[derive(Default)]
struct Run {
    user_s: f64,
    sys_s: f64,
    wall_s: f64,
    bytes_in: f64,
    bytes_out: f64,
    /// cairn: checksum share of CPU (%); HBase: the compacting thread's user time.
    extra: f64,
}

fn run_cairn(family: &Path) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["compact", "--major", "--json"])
        .arg(family)
        .output()
        .expect("run cairn");
    assert!(
        out.status.success(),
        "cairn compact failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let f = fields(&String::from_utf8_lossy(&out.stdout));
    Run {
        user_s: f["user_s"],
        sys_s: f["sys_s"],
        wall_s: f["wall_s"],
        bytes_in: f["bytes_in"],
        bytes_out: dir_bytes(family) as f64,
        extra: f["checksum_share_pct"],
    }
}

fn run_hbase(cp: &str, family: &Path) -> Run {
    let out = hbase::java(
        cp,
        "StoreInterop",
        &["compact", "-major", family.to_str().unwrap()],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "HBase compaction failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("cpu "))
        .expect("a cpu line");
    let f = fields(line);
    Run {
        user_s: f["user_s"],
        sys_s: f["sys_s"],
        wall_s: f["wall_s"],
        bytes_in: f["bytes_in"],
        bytes_out: dir_bytes(family) as f64,
        extra: f["thread_user_s"],
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument that is not ours means another target.
    if std::env::args()
        .skip(1)
        .any(|a| !a.starts_with('-') && !"compaction_vs_hbase".contains(a.as_str()))
    {
        return;
    }
    let Some(cp) = hbase::classpath() else {
        eprintln!("skipped: HBase interop jars not built (mvn -f interop/hbase/pom.xml package)");
        return;
    };
    let quick = std::env::var_os("CAIRN_BENCH_QUICK").is_some();
    let files = env_usize("CAIRN_BENCH_FILES", 8);
    let rows = env_usize("CAIRN_BENCH_ROWS", if quick { 30 } else { 3000 });
    let value = env_usize("CAIRN_BENCH_VALUE", 10 * 1024);
    let rounds = env_usize("CAIRN_BENCH_ROUNDS", if quick { 1 } else { 3 }).max(1);

    let _tmp;
    let base = match std::env::var_os("CAIRN_BENCH_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
            _tmp = tempfile::tempdir_in(&target).unwrap();
            _tmp.path().to_path_buf()
        }
    };
    let pristine = base.join("pristine");
    let _ = fs::remove_dir_all(&pristine);
    let family = layout(&pristine);
    let rel = family.strip_prefix(&pristine).unwrap().to_path_buf();
    let written = hbase::java(
        &cp,
        "StoreInterop",
        &[
            "write-store",
            family.to_str().unwrap(),
            &files.to_string(),
            &rows.to_string(),
            &value.to_string(),
            "42",
        ],
    );
    assert!(
        written.status.success(),
        "HBase write-store failed: {}",
        String::from_utf8_lossy(&written.stderr)
    );
    let input = dir_bytes(&family);
    eprintln!(
        "input: {files} store files written by HBase, {:.1} MiB",
        input as f64 / (1 << 20) as f64
    );

    let work = base.join("work");
    let (mut cairn, mut hbase_runs) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for side in ["cairn", "hbase"] {
            let _ = fs::remove_dir_all(&work);
            copy_tree(&pristine, &work);
            let dir = work.join(&rel);
            let r = if side == "cairn" {
                run_cairn(&dir)
            } else {
                run_hbase(&cp, &dir)
            };
            eprintln!(
                "round {round} {side}: user {:.3} s, sys {:.3} s, wall {:.3} s, {:.1} MiB -> {:.1} MiB",
                r.user_s,
                r.sys_s,
                r.wall_s,
                r.bytes_in / (1 << 20) as f64,
                r.bytes_out / (1 << 20) as f64
            );
            if side == "cairn" {
                cairn.push(r)
            } else {
                hbase_runs.push(r)
            }
        }
    }
    let _ = fs::remove_dir_all(&work);
    let _ = fs::remove_dir_all(&pristine);

    let m = |runs: &[Run], f: fn(&Run) -> f64| median(runs.iter().map(f).collect());
    let gb = |runs: &[Run]| m(runs, |r| r.bytes_in) / 1e9;
    let (c_gb, h_gb) = (gb(&cairn), gb(&hbase_runs));
    let c_user = m(&cairn, |r| r.user_s) / c_gb;
    let h_user = m(&hbase_runs, |r| r.user_s) / h_gb;
    let h_thread = m(&hbase_runs, |r| r.extra) / h_gb;
    println!(
        "\nMajor compaction, {files} HBase-written store files, {:.2} GB read, {value} B values, median of {rounds}:\n",
        c_gb
    );
    println!("| | cairn | HBase 2.6.1 | cairn / HBase |");
    println!("|---|---|---|---|");
    println!(
        "| user CPU per GB read (process) | {c_user:.3} s | {h_user:.3} s | {:.3} |",
        c_user / h_user
    );
    println!(
        "| user CPU per GB read (HBase: compacting thread only) | {c_user:.3} s | {h_thread:.3} s | {:.3} |",
        c_user / h_thread
    );
    let (c_sys, h_sys) = (
        m(&cairn, |r| r.sys_s) / c_gb,
        m(&hbase_runs, |r| r.sys_s) / h_gb,
    );
    println!(
        "| system CPU per GB read | {c_sys:.3} s | {h_sys:.3} s | {:.3} |",
        c_sys / h_sys.max(1e-9)
    );
    let (c_wall, h_wall) = (m(&cairn, |r| r.wall_s), m(&hbase_runs, |r| r.wall_s));
    println!(
        "| wall time | {c_wall:.3} s | {h_wall:.3} s | {:.3} |",
        c_wall / h_wall
    );
    println!(
        "| bytes out | {:.1} MiB | {:.1} MiB | |",
        m(&cairn, |r| r.bytes_out) / (1 << 20) as f64,
        m(&hbase_runs, |r| r.bytes_out) / (1 << 20) as f64
    );
    println!(
        "| checksum share of CPU | {:.2}% | | |",
        m(&cairn, |r| r.extra)
    );
}
