//! Every subcommand reads HBase's configuration the same way: `--conf DIR` (else
//! `$HBASE_CONF_DIR`) with core-site.xml then hbase-site.xml (Hadoop's format: a property a
//! file marks final is not overridden by a later file; `${...}` expands), then `-D`, which wins.
//! For each tool: a property it reads, set in the files, takes effect; a final one holds
//! against hbase-site.xml; a value expands; -D overrides the file; an unknown -D is warned
//! about in exactly one log line (level and time, the same words for every tool).

#[path = "support/serve.rs"]
mod serve;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cairn_region::TableName;
use cairn_region::{ColumnFamilyDescriptor, Put, RegionServer, ServerConfig, TableDescriptor};

fn cairn_env(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.args(args)
        .env_remove("HBASE_CONF_DIR")
        .env_remove("RUST_LOG");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run cairn")
}

fn cairn(args: &[&str]) -> Output {
    cairn_env(args, &[])
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn ok(o: Output) -> Output {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(&o),
        stderr(&o)
    );
    o
}

/// `<property>` elements; a name starting with `!` is final.
fn xml(props: &[(&str, &str)]) -> String {
    let mut s = String::from("<?xml version=\"1.0\"?>\n<configuration>\n");
    for (k, v) in props {
        let (name, fin) = match k.strip_prefix('!') {
            Some(n) => (n, "<final>true</final>"),
            None => (*k, ""),
        };
        s += &format!("  <property><name>{name}</name><value>{v}</value>{fin}</property>\n");
    }
    s + "</configuration>\n"
}

/// A configuration directory: core-site.xml, then hbase-site.xml.
fn conf_dir(core: &[(&str, &str)], site: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("core-site.xml"), xml(core)).unwrap();
    std::fs::write(d.path().join("hbase-site.xml"), xml(site)).unwrap();
    d
}

/// The lines of stderr that are the unknown-property warning of `tool`.
fn unread_lines(o: &Output, tool: &str) -> Vec<String> {
    let want = format!("cairn {tool}: ignoring -D properties cairn {tool} does not read: ");
    stderr(o)
        .lines()
        .filter(|l| l.contains(&want))
        .map(str::to_string)
        .collect()
}

/// Exactly one warning naming both unknown names, as a log line: time, then WARN.
fn assert_one_unread_warning(o: &Output, tool: &str) {
    let lines = unread_lines(o, tool);
    assert_eq!(lines.len(), 1, "{tool}: {}", stderr(o));
    let l = &lines[0];
    assert!(
        l.ends_with("does not read: no.such.key, other.unknown"),
        "{l}"
    );
    // The log subscriber's format: an RFC 3339 time, then the level.
    let (time, rest) = l.split_once(' ').unwrap();
    assert!(time.starts_with("20") && time.contains('T'), "{l}");
    assert!(rest.trim_start().starts_with("WARN"), "{l}");
}

/// The -Ds every test adds: two names no tool reads.
const UNKNOWN: [&str; 4] = ["-D", "no.such.key=1", "-D", "other.unknown=2"];

fn final_warning(o: &Output, name: &str) -> bool {
    stderr(o).contains(&format!("an attempt to override final parameter: {name}"))
}

fn args<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(extra).copied().collect()
}

// ---- importtsv ----

#[test]
fn importtsv_reads_the_site_files() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("in.csv");
    std::fs::write(&input, "r1,v1\nr2,v2\nr3,v3\n").unwrap();
    let out = work.path().join("out");
    let conf = conf_dir(
        // Final in core-site.xml: hbase-site.xml's ';' must not take.
        &[
            ("!importtsv.separator", ","),
            ("out.base", out.to_str().unwrap()),
        ],
        &[
            ("importtsv.separator", ";"),
            ("cols", "HBASE_ROW_KEY,f:a"),
            ("importtsv.columns", "${cols}"),
            ("importtsv.bulk.output", "${out.base}/hfiles"),
            ("importtsv.dry.run", "true"),
        ],
    );
    let c = conf.path().to_str().unwrap();
    let i = input.to_str().unwrap();
    // The file's dry run holds: nothing written; three good lines (',' split them).
    let o = ok(cairn(&args(
        &["importtsv", "--conf", c],
        &args(&UNKNOWN, &["t", i]),
    )));
    assert!(stdout(&o).contains("Bad Lines=0"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("importtsv.dry.run=true"),
        "{}",
        stdout(&o)
    );
    assert!(!out.join("hfiles").exists());
    assert!(final_warning(&o, "importtsv.separator"), "{}", stderr(&o));
    assert_one_unread_warning(&o, "importtsv");
    // -D wins over the file: files are written where the expanded property says.
    let o = ok(cairn_env(
        &["importtsv", "-Dimporttsv.dry.run=false", "t", i],
        &[("HBASE_CONF_DIR", conf.path())],
    ));
    assert!(stdout(&o).contains("Bad Lines=0"), "{}", stdout(&o));
    assert!(out.join("hfiles/f").is_dir(), "{}", stdout(&o));
    assert!(unread_lines(&o, "importtsv").is_empty(), "{}", stderr(&o));
}

// ---- completebulkload ----

#[test]
fn completebulkload_reads_the_site_files() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("in.tsv");
    std::fs::write(&input, "r1\tv1\nr2\tv2\n").unwrap();
    let out = work.path().join("out");
    let o = cairn(&[
        "importtsv",
        "-Dimporttsv.columns=HBASE_ROW_KEY,f:a",
        &format!("-Dimporttsv.bulk.output={}", out.display()),
        "t",
        input.to_str().unwrap(),
    ]);
    ok(o);
    let hfiles = |d: &Path| std::fs::read_dir(d.join("f")).map_or(0, |r| r.count());
    assert_eq!(hfiles(&out), 1);
    let conf = conf_dir(
        &[("!always.copy.files", "${copy}"), ("copy", "true")],
        &[("always.copy.files", "false")],
    );
    let data = work.path().join("data");
    let (c, d, o_) = (
        conf.path().to_str().unwrap(),
        data.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    let o = ok(cairn(&args(
        &["completebulkload", "--conf", c, "--data", d],
        &args(&UNKNOWN, &[o_, "t"]),
    )));
    // Copied, not moved: the final, expanded `true` held.
    assert_eq!(hfiles(&out), 1, "{}", stdout(&o));
    assert!(final_warning(&o, "always.copy.files"), "{}", stderr(&o));
    assert_one_unread_warning(&o, "completebulkload");
    // $HBASE_CONF_DIR without --conf: copied again.
    let o = ok(cairn_env(
        &["completebulkload", "--data", d, o_, "t"],
        &[("HBASE_CONF_DIR", conf.path())],
    ));
    assert_eq!(hfiles(&out), 1, "{}", stdout(&o));
    // -D wins: moved this time.
    let o = ok(cairn_env(
        &[
            "completebulkload",
            "-D",
            "always.copy.files=false",
            "--data",
            d,
            o_,
            "t",
        ],
        &[("HBASE_CONF_DIR", conf.path())],
    ));
    assert_eq!(hfiles(&out), 0, "{}", stdout(&o));
}

// ---- compact, hfile, split: a store made here ----

/// A store with table `st`, family `f`, four flushed files of 50 rows each.
fn store(root: &Path) -> TableName {
    let mut c = ServerConfig::new(root);
    c.background = false;
    let s = RegionServer::open(c).unwrap();
    let t = TableName::parse("st").unwrap();
    s.create_table(
        TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f")),
        &[],
    )
    .unwrap();
    for round in 0..4 {
        for i in 0..50 {
            let row = format!("r{i:03}");
            s.put(&t, &Put::new(&row).add("f", "q", format!("v{round}")))
                .unwrap();
        }
        s.flush_table(&t).unwrap();
    }
    s.close().unwrap();
    t
}

fn family_dirs(root: &Path) -> Vec<PathBuf> {
    let tdir = root.join("data/default/st");
    let mut out = Vec::new();
    for r in std::fs::read_dir(tdir).unwrap() {
        let r = r.unwrap().path();
        if r.join("f").is_dir() {
            out.push(r.join("f"));
        }
    }
    out
}

fn store_files(root: &Path) -> usize {
    family_dirs(root)
        .iter()
        .map(|f| std::fs::read_dir(f).unwrap().count())
        .sum()
}

#[test]
fn compact_reads_the_site_files() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    store(&root);
    assert_eq!(store_files(&root), 4);
    let conf = conf_dir(
        // Final: hbase-site.xml's 50 (no minor compaction at all) must not take.
        &[("!hbase.hstore.compaction.min", "2"), ("two", "2")],
        &[
            ("hbase.hstore.compaction.min", "50"),
            ("hbase.hstore.compaction.max", "${two}"),
        ],
    );
    let table = root.join("data/default/st");
    let (c, t) = (conf.path().to_str().unwrap(), table.to_str().unwrap());
    // Once, at most two files (the expanded max): 4 files become 3.
    let o = ok(cairn(&args(
        &["compact", "--conf", c, "--once", "--json"],
        &args(&UNKNOWN, &[t]),
    )));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["files_in"], 2, "{v}");
    assert_eq!(store_files(&root), 3);
    assert!(
        final_warning(&o, "hbase.hstore.compaction.min"),
        "{}",
        stderr(&o)
    );
    assert_one_unread_warning(&o, "compact");
    // $HBASE_CONF_DIR without --conf: two of the three again (HBase's defaults would take
    // all three).
    let compact = |extra: &[&str]| {
        let all = args(&args(&["compact", "--once", "--json"], extra), &[t]);
        let o = ok(cairn_env(&all, &[("HBASE_CONF_DIR", conf.path())]));
        serde_json::from_str::<serde_json::Value>(stdout(&o).trim()).unwrap()
    };
    assert_eq!(compact(&[])["files_in"], 2);
    assert_eq!(store_files(&root), 2);
    // -D wins over the final min: two files are too few for 3.
    let v = compact(&["-D", "hbase.hstore.compaction.min=3"]);
    assert_eq!(v["compactions"], 0, "{v}");
    assert_eq!(store_files(&root), 2);
    // And the file's min of 2 takes the last two.
    assert_eq!(compact(&[])["files_in"], 2);
    assert_eq!(store_files(&root), 1);
}

#[test]
fn hfile_reads_the_site_files() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    store(&root);
    let region_dir = family_dirs(&root)[0].parent().unwrap().to_path_buf();
    let encoded = region_dir
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    // HBase's full region name: `-r` takes its table and encoded parts.
    let region = format!("st,,1.{encoded}.");
    let conf = conf_dir(
        // Final: hbase-site.xml's root elsewhere must not take.
        &[
            ("!hbase.rootdir", "file://${base}"),
            ("base", root.to_str().unwrap()),
        ],
        &[("hbase.rootdir", "/nowhere")],
    );
    let c = conf.path().to_str().unwrap();
    // -r finds the region under the configuration's (expanded, final) hbase.rootdir.
    let o = ok(cairn(&args(
        &["hfile", "--conf", c, "-v"],
        &args(&UNKNOWN, &["-r", &region]),
    )));
    assert!(
        stdout(&o).contains("Number of region files found -> 4"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("Scanned kv count -> 200"),
        "{}",
        stdout(&o)
    );
    assert!(final_warning(&o, "hbase.rootdir"), "{}", stderr(&o));
    assert_one_unread_warning(&o, "hfile");
    // -D wins: a root without the region.
    let empty = work.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = cairn_env(
        &[
            "hfile",
            "-D",
            &format!("hbase.rootdir={}", empty.display()),
            "-r",
            &region,
        ],
        &[("HBASE_CONF_DIR", conf.path())],
    );
    assert!(!o.status.success(), "{}", stdout(&o));
    // Without -D, $HBASE_CONF_DIR's root is used.
    ok(cairn_env(
        &["hfile", "-r", &region],
        &[("HBASE_CONF_DIR", conf.path())],
    ));
}

#[test]
fn split_reads_the_site_files() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    store(&root);
    let d = root.to_str().unwrap();
    let conf = conf_dir(
        // Final: hbase-site.xml's stepping policy must not take; the disabled policy refuses
        // splits by hand too.
        &[
            ("pkg", "org.apache.hadoop.hbase.regionserver."),
            (
                "!hbase.regionserver.region.split.policy",
                "${pkg}DisabledRegionSplitPolicy",
            ),
        ],
        &[(
            "hbase.regionserver.region.split.policy",
            "SteppingSplitPolicy",
        )],
    );
    let c = conf.path().to_str().unwrap();
    let o = cairn(&args(
        &["split", "--conf", c, "--data", d],
        &args(&UNKNOWN, &["st", "r025"]),
    ));
    assert!(!o.status.success(), "{}", stdout(&o));
    assert!(stderr(&o).contains("splits are disabled"), "{}", stderr(&o));
    assert!(
        final_warning(&o, "hbase.regionserver.region.split.policy"),
        "{}",
        stderr(&o)
    );
    assert_one_unread_warning(&o, "split");
    assert_eq!(family_dirs(&root).len(), 1);
    // -D wins: the split happens ($HBASE_CONF_DIR's files read: their final is said).
    let o = ok(cairn_env(
        &[
            "split",
            "-D",
            "hbase.regionserver.region.split.policy=SteppingSplitPolicy",
            "--data",
            d,
            "st",
            "r025",
        ],
        &[("HBASE_CONF_DIR", conf.path())],
    ));
    assert!(final_warning(&o, "hbase.regionserver.region.split.policy"));
    let o = ok(cairn(&args(
        &["regions", "--data", d],
        &args(&UNKNOWN, &["st"]),
    )));
    assert_one_unread_warning(&o, "regions");
    let rows = stdout(&o).lines().filter(|l| l.starts_with("st ")).count();
    assert_eq!(rows, 2, "{}", stdout(&o));
}

// ---- pe and ycsb: the flush size of a table without MEMSTORE_FLUSHSIZE ----

/// Store files of `table`'s family `family` under `root`.
fn files_of(root: &Path, table: &str, family: &str) -> usize {
    let tdir = root.join("data/default").join(table);
    let mut n = 0;
    for r in std::fs::read_dir(tdir).unwrap() {
        let f = r.unwrap().path().join(family);
        if f.is_dir() {
            n += std::fs::read_dir(f).unwrap().count();
        }
    }
    n
}

/// The server-wide flush size from hbase-site.xml (final in core-site.xml, expanded) applies
/// to a table that sets none: many small flushes instead of one at the end.
fn flush_conf() -> tempfile::TempDir {
    conf_dir(
        &[
            ("!hbase.hregion.memstore.flush.size", "${flush}"),
            ("flush", "65536"),
        ],
        &[
            ("hbase.hregion.memstore.flush.size", "1073741824"),
            // No compaction merges the flushed files before they are counted, and no split
            // (at twice the flush size) turns them into references.
            ("hbase.hstore.compaction.min", "100"),
            (
                "hbase.regionserver.region.split.policy",
                "DisabledRegionSplitPolicy",
            ),
            ("hbase.hstore.blockingStoreFiles", "1000"),
            // hbase.rootdir is --data's business in pe and ycsb: ignored from a file.
            ("hbase.rootdir", "hdfs://nowhere:1/x"),
        ],
    )
}

#[test]
fn pe_reads_the_site_files() {
    let conf = flush_conf();
    let work = tempfile::tempdir().unwrap();
    let (a, b) = (work.path().join("a"), work.path().join("b"));
    let c = conf.path().to_str().unwrap();
    let run = |data: &Path, extra: &[&str], env: &[(&str, &Path)]| {
        let dir = format!("--data={}", data.display());
        let base = [
            "pe",
            "--rows=5000",
            "--valueSize=100",
            "--autoFlush=true",
            &dir,
        ];
        let all = args(&base, &args(extra, &["sequentialWrite", "1"]));
        ok(cairn_env(&all, env))
    };
    let o = run(&a, &args(&["--conf", c], &UNKNOWN), &[]);
    assert!(files_of(&a, "TestTable", "info0") >= 4, "{}", stderr(&o));
    assert!(
        final_warning(&o, "hbase.hregion.memstore.flush.size"),
        "{}",
        stderr(&o)
    );
    assert_one_unread_warning(&o, "pe");
    // -D wins (over a final property): one flush, at the end. $HBASE_CONF_DIR's files are
    // read without --conf (their final property's override is said).
    let o = run(
        &b,
        &["-D", "hbase.hregion.memstore.flush.size=134217728"],
        &[("HBASE_CONF_DIR", conf.path())],
    );
    assert_eq!(files_of(&b, "TestTable", "info0"), 1);
    assert!(final_warning(&o, "hbase.hregion.memstore.flush.size"));
}

#[test]
fn ycsb_reads_the_site_files() {
    let conf = flush_conf();
    let work = tempfile::tempdir().unwrap();
    let (a, b) = (work.path().join("a"), work.path().join("b"));
    let c = conf.path().to_str().unwrap();
    let run = |data: &Path, extra: &[&str], env: &[(&str, &Path)]| {
        let d = data.to_str().unwrap().to_string();
        let base = [
            "ycsb",
            "load",
            "-P",
            "workloada",
            "-p",
            "recordcount=1000",
            "--data",
            &d,
        ];
        ok(cairn_env(&args(&base, extra), env))
    };
    let o = run(&a, &args(&["--conf", c], &UNKNOWN), &[]);
    assert!(files_of(&a, "usertable", "family") >= 4, "{}", stderr(&o));
    assert!(
        final_warning(&o, "hbase.hregion.memstore.flush.size"),
        "{}",
        stderr(&o)
    );
    assert_one_unread_warning(&o, "ycsb");
    let o = run(
        &b,
        &["-Dhbase.hregion.memstore.flush.size=134217728"],
        &[("HBASE_CONF_DIR", conf.path())],
    );
    assert_eq!(files_of(&b, "usertable", "family"), 1);
    assert!(final_warning(&o, "hbase.hregion.memstore.flush.size"));
}

fn walkdir(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).into_iter().flatten() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else {
            out.push(p);
        }
    }
    out
}

// ---- wal: reads no property; the files are still read and checked ----

#[test]
fn wal_reads_the_site_files() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    store(&root);
    // Any WAL file the store left (its directory, or the archive).
    let wals = ["WALs", "oldWALs"]
        .iter()
        .flat_map(|d| walkdir(&root.join(d)))
        .next()
        .expect("a WAL file");
    let w = wals.to_str().unwrap();
    let conf = conf_dir(&[("!a.final", "1")], &[("a.final", "2")]);
    let c = conf.path().to_str().unwrap();
    let o = ok(cairn(&args(&["wal", "--conf", c], &args(&UNKNOWN, &[w]))));
    assert!(final_warning(&o, "a.final"), "{}", stderr(&o));
    assert_one_unread_warning(&o, "wal");
    // A broken hbase-site.xml in $HBASE_CONF_DIR is an error naming it.
    std::fs::write(
        conf.path().join("hbase-site.xml"),
        "<configuration><property>",
    )
    .unwrap();
    let o = cairn_env(&["wal", w], &[("HBASE_CONF_DIR", conf.path())]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("hbase-site.xml"), "{}", stderr(&o));
}

// ---- serve ----

#[test]
fn serve_reads_the_site_files() {
    let work = tempfile::tempdir().unwrap();
    let conf = conf_dir(
        &[
            ("!hbase.regionserver.handler.count", "${handlers}"),
            ("handlers", "7"),
        ],
        &[
            ("hbase.regionserver.handler.count", "99"),
            ("hbase.hregion.memstore.flush.size", "65536"),
        ],
    );
    let c = conf.path().to_str().unwrap();
    let data = work.path().join("data");
    let server = serve::Server::start(&data, &args(&["--conf", c], &UNKNOWN));
    let err = server.stderr.lock().unwrap().clone();
    let want = "cairn serve: ignoring -D properties cairn serve does not read: ";
    let lines: Vec<&str> = err.lines().filter(|l| l.contains(want)).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].ends_with("no.such.key, other.unknown"), "{err}");
    assert!(lines[0].contains("WARN"), "{err}");
    assert!(
        err.contains("an attempt to override final parameter: hbase.regionserver.handler.count"),
        "{err}"
    );
    assert!(server.stop(std::time::Duration::from_secs(30)));
}
