//! `cairn importtsv` on generated TSV: every cell the output HFiles hold is checked against a
//! model the test computes from the lines it generated (ImportTsv's rules: bad lines skipped
//! and counted, the first of equal cells kept, empty fields written or skipped), files never
//! straddle a region boundary, family settings reach the files, and HBase 2.6.1's own store
//! file reader (with its checksum verification on) reads the same cells and HFileOutputFormat2's
//! file info.

#[path = "../../cairn-hfile/tests/support/hbase.rs"]
mod hbase;
#[path = "support/serve.rs"]
mod serve;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cairn_cell::compare_keys;
use cairn_hfile::encoding::DataBlockEncoding;
use cairn_hfile::{BloomType, Compression, HFileReader};
use cairn_region::layout::{self, write_region_info, write_table_descriptor};
use cairn_region::{ColumnFamilyDescriptor, RegionInfo, TableDescriptor, TableName};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn cairn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .output()
        .expect("run cairn")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A cell as the test models it; ordered as HBase orders keys (row, family, qualifier
/// ascending as unsigned bytes, timestamp descending).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Cell {
    row: Vec<u8>,
    family: Vec<u8>,
    qualifier: Vec<u8>,
    neg_ts: std::cmp::Reverse<i64>,
    value: Vec<u8>,
}

/// The columns every generated line follows.
const COLUMNS: &str = "HBASE_ROW_KEY,f:a,HBASE_TS_KEY,g:b,f";

/// A cell's key in the model: row, family, qualifier, timestamp (descending).
type CellKey = (Vec<u8>, Vec<u8>, Vec<u8>, std::cmp::Reverse<i64>);

/// What the generator wrote and what ImportTsv must make of it.
struct Generated {
    /// `(file name, bytes)`, read in name order.
    files: Vec<(String, Vec<u8>)>,
    /// Cells by key (without the value): the first good line's value wins.
    model: BTreeMap<CellKey, Vec<u8>>,
    /// `(file, byte offset, message)` of every bad line, in input order.
    bad: Vec<(String, u64, &'static str)>,
}

impl Generated {
    fn cells(&self) -> Vec<Cell> {
        self.model
            .iter()
            .map(|((row, family, qualifier, neg_ts), value)| Cell {
                row: row.clone(),
                family: family.clone(),
                qualifier: qualifier.clone(),
                neg_ts: *neg_ts,
                value: value.clone(),
            })
            .collect()
    }
}

/// `lines` lines spread over `files` files: good lines (some with empty fields, some with
/// fewer fields than columns, rows and timestamps colliding so equal cells occur, rows with
/// bytes above 0x7f), CRLF endings, and each kind of bad line. `skip_empty` is the model's
/// `importtsv.skip.empty.columns`.
fn generate(seed: u64, files: usize, lines: usize, skip_empty: bool) -> Generated {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut g = Generated {
        files: Vec::new(),
        model: BTreeMap::new(),
        bad: Vec::new(),
    };
    let specs: [(&[u8], &[u8]); 3] = [(b"f", b"a"), (b"g", b"b"), (b"f", b"")];
    for fi in 0..files {
        let name = format!("part-{fi:03}.tsv");
        let mut data = Vec::new();
        for _ in 0..lines / files {
            let offset = data.len() as u64;
            let kind = rng.random_range(0..100);
            let row = if rng.random_ratio(1, 20) {
                format!("\u{e9}row{:04}", rng.random_range(0..100))
            } else {
                format!("row{:05}", rng.random_range(0..3000))
            };
            let ts: i64 = rng.random_range(1..4);
            let line: Vec<u8> = match kind {
                0..=1 => {
                    g.bad.push((name.clone(), offset, "No delimiter"));
                    row.into_bytes()
                }
                2..=3 => {
                    g.bad.push((name.clone(), offset, "Excessive columns"));
                    format!("{row}\tv\t{ts}\tv\tv\textra").into_bytes()
                }
                4..=5 => {
                    g.bad.push((name.clone(), offset, "Invalid timestamp"));
                    format!("{row}\tv\tT{ts}\tv").into_bytes()
                }
                6 => {
                    g.bad.push((name.clone(), offset, "No timestamp"));
                    format!("{row}\tv").into_bytes()
                }
                7 => {
                    g.bad.push((name.clone(), offset, "Row length is 0"));
                    format!("\tv\t{ts}\tv").into_bytes()
                }
                _ => {
                    // 3 to 5 fields: row, f:a, ts, then maybe g:b and f.
                    let extra = rng.random_range(0..3);
                    let mut values = Vec::new();
                    for _ in 0..1 + extra {
                        values.push(if rng.random_ratio(1, 6) {
                            String::new()
                        } else {
                            format!("v{}", rng.random_range(0..1_000_000))
                        });
                    }
                    let mut line = format!("{row}\t{}\t{ts}", values[0]);
                    for v in &values[1..] {
                        line.push('\t');
                        line.push_str(v);
                    }
                    for (i, v) in values.iter().enumerate() {
                        if skip_empty && v.is_empty() {
                            continue;
                        }
                        let (family, qualifier) = specs[i];
                        g.model
                            .entry((
                                row.as_bytes().to_vec(),
                                family.to_vec(),
                                qualifier.to_vec(),
                                std::cmp::Reverse(ts),
                            ))
                            .or_insert_with(|| v.as_bytes().to_vec());
                    }
                    line.into_bytes()
                }
            };
            data.extend_from_slice(&line);
            data.extend_from_slice(if rng.random_ratio(1, 10) {
                b"\r\n"
            } else {
                b"\n"
            });
        }
        g.files.push((name, data));
    }
    g
}

fn write_input(dir: &Path, g: &Generated) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, data) in &g.files {
        std::fs::write(dir.join(name), data).unwrap();
    }
    // Hidden files are not input, as Hadoop's TextInputFormat skips them.
    std::fs::write(dir.join("_SUCCESS"), b"not a tsv line").unwrap();
}

/// One output file: its cells (as read by cairn's reader) and reader.
struct OutFile {
    path: PathBuf,
    cells: Vec<Cell>,
    reader: HFileReader,
}

fn read_output(out: &Path) -> Vec<OutFile> {
    let mut files = Vec::new();
    for fam in std::fs::read_dir(out).unwrap().flatten() {
        if !fam.file_type().unwrap().is_dir() {
            assert_eq!(fam.file_name(), "_SUCCESS", "only families and _SUCCESS");
            continue;
        }
        for f in std::fs::read_dir(fam.path()).unwrap().flatten() {
            let path = f.path();
            let reader = HFileReader::open(&path, Default::default()).unwrap();
            let mut cells = Vec::new();
            let mut s = reader.scanner();
            let mut prev: Option<Vec<u8>> = None;
            let mut more = s.seek_to_first().unwrap();
            while more {
                let c = s.cell().unwrap();
                if let Some(p) = &prev {
                    let p = cairn_cell::KeyRef::parse(p).unwrap();
                    assert_eq!(
                        compare_keys(&p, &c.key),
                        std::cmp::Ordering::Less,
                        "{}: keys not strictly ascending",
                        path.display()
                    );
                }
                prev = Some(c.key.as_bytes().to_vec());
                assert_eq!(c.type_code(), 4, "a Put");
                assert_eq!(fam.file_name().to_str().unwrap().as_bytes(), c.family());
                cells.push(Cell {
                    row: c.row().to_vec(),
                    family: c.family().to_vec(),
                    qualifier: c.qualifier().to_vec(),
                    neg_ts: std::cmp::Reverse(c.timestamp()),
                    value: c.value.to_vec(),
                });
                more = s.next().unwrap();
            }
            drop(s);
            let name = path.file_name().unwrap().to_str().unwrap();
            assert!(
                name.len() == 32 && name.bytes().all(|b| b.is_ascii_hexdigit()),
                "file name {name}"
            );
            files.push(OutFile {
                path,
                cells,
                reader,
            });
        }
    }
    files
}

/// The region (by split keys) of `row`.
fn region_of(splits: &[&[u8]], row: &[u8]) -> usize {
    splits.iter().filter(|s| **s <= row).count()
}

/// Checks the output against the model: the same cells, each file in one region, and
/// HFileOutputFormat2's file info.
fn check_output(files: &[OutFile], g: &Generated, splits: &[&[u8]]) {
    let mut all: Vec<Cell> = files.iter().flat_map(|f| f.cells.clone()).collect();
    all.sort();
    let expected = g.cells();
    assert_eq!(all.len(), expected.len(), "cell count");
    assert!(all == expected, "the output's cells differ from the model");
    for f in files {
        let regions: std::collections::BTreeSet<usize> =
            f.cells.iter().map(|c| region_of(splits, &c.row)).collect();
        assert_eq!(
            regions.len(),
            1,
            "{} spans regions {regions:?}",
            f.path.display()
        );
        let info = f.reader.file_info();
        assert_eq!(info.get(b"BULKLOAD_TIMESTAMP").map(<[u8]>::len), Some(8));
        assert_eq!(info.get(b"MAJOR_COMPACTION_KEY"), Some(&[0xff][..]));
        assert!(info.get(b"BULKLOAD_SOURCE_TASK").is_some());
        assert!(info.get(b"TIMERANGE").is_some());
        assert!(
            f.reader.includes_tags(),
            "HFileOutputFormat2 writes v3 cells with tags"
        );
    }
}

fn stdout_line<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} in:\n{out}"))
}

/// A directory of three files, bad lines of every kind, timestamps from a column, input
/// about 20 times the sort memory so runs spill, and three regions.
#[test]
fn a_directory_of_tsv_becomes_hfiles_split_by_region() {
    let tmp = tempfile::tempdir().unwrap();
    let g = generate(7, 3, 12_000, false);
    let input = tmp.path().join("in");
    write_input(&input, &g);
    let splits: [&[u8]; 3] = [b"row01000", b"row02000", b"\xc3"];
    let splits_file = tmp.path().join("splits");
    std::fs::write(&splits_file, b"row02000\nrow01000\n\xc3\n").unwrap();
    let out = tmp.path().join("out");
    let r = cairn(&[
        "importtsv",
        &format!("-Dimporttsv.columns={COLUMNS}"),
        "-D",
        &format!("importtsv.bulk.output={}", out.display()),
        "--splits",
        splits_file.to_str().unwrap(),
        "--sort-memory",
        "32K",
        "t",
        input.to_str().unwrap(),
    ]);
    let stdout = text(&r.stdout);
    let stderr = text(&r.stderr);
    assert!(r.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout_line(&stdout, "\tBad Lines="),
        format!("\tBad Lines={}", g.bad.len())
    );
    let runs: u64 = stdout_line(&stdout, "| sort | ")
        .trim_start_matches("| sort | ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(runs >= 10, "only {runs} sort runs spilled:\n{stdout}");
    // The first bad lines are reported with their byte offsets and HBase's messages.
    for (file, offset, msg) in g.bad.iter().take(10) {
        let head = format!("Bad line at offset: {offset} (");
        let at = stderr
            .find(&format!(
                "{head}{}",
                tmp.path().join("in").join(file).display()
            ))
            .unwrap_or_else(|| panic!("{head}{file} not reported:\n{stderr}"));
        assert!(stderr[at..].lines().nth(1).unwrap().starts_with(msg));
    }
    let files = read_output(&out);
    check_output(&files, &g, &splits);
    // Every region got files for both families.
    assert_eq!(files.len(), 8, "4 regions x 2 families");
    assert!(out.join("_SUCCESS").exists() && !out.join("_temporary").exists());
}

/// `importtsv.skip.empty.columns`, `importtsv.timestamp`, a ',' separator, one input file,
/// one region, and file rolling at `hbase.hregion.max.filesize` at row boundaries.
#[test]
fn skip_empty_columns_separator_timestamp_and_rolling() {
    let tmp = tempfile::tempdir().unwrap();
    let mut data = String::new();
    let mut model = Vec::new();
    for i in 0..2000 {
        let v = if i % 3 == 0 {
            String::new()
        } else {
            format!("x{i}")
        };
        data.push_str(&format!("k{i:04},{v},y{i}\n"));
        if !v.is_empty() {
            model.push((format!("k{i:04}"), "c".to_string(), v));
        }
        model.push((format!("k{i:04}"), "d".to_string(), format!("y{i}")));
    }
    let input = tmp.path().join("in.csv");
    std::fs::write(&input, data).unwrap();
    let out = tmp.path().join("out");
    let r = cairn(&[
        "importtsv",
        "-Dimporttsv.columns=HBASE_ROW_KEY,f:c,f:d",
        "-Dimporttsv.separator=,",
        "-Dimporttsv.timestamp=1234",
        "-Dimporttsv.skip.empty.columns=true",
        "-Dhbase.hregion.max.filesize=10000",
        &format!("-Dimporttsv.bulk.output={}", out.display()),
        "t",
        input.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    let files = read_output(&out);
    assert!(
        files.len() > 3,
        "rolled at 10000 bytes: {} files",
        files.len()
    );
    let mut got: Vec<(String, String, String)> = Vec::new();
    for f in &files {
        for c in &f.cells {
            assert_eq!(c.neg_ts.0, 1234);
            got.push((text(&c.row), text(&c.qualifier), text(&c.value)));
        }
        // A row's cells are never split between two files.
        for g in &files {
            if g.path != f.path {
                let rows = |f: &OutFile| -> std::collections::BTreeSet<Vec<u8>> {
                    f.cells.iter().map(|c| c.row.clone()).collect()
                };
                assert!(rows(f).is_disjoint(&rows(g)));
            }
        }
    }
    got.sort();
    model.sort();
    assert_eq!(got.len(), model.len(), "cells written vs the model's");
    assert!(got == model, "the cells differ from the model's");
}

/// Family settings come from an embedded store's schema; its regions split the output.
#[test]
fn an_embedded_store_gives_regions_and_family_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("store");
    let t = TableName::parse("ns1:t").unwrap();
    let table_dir = layout::table_dir(&root, &t);
    let mut f = ColumnFamilyDescriptor::new("f")
        .compression(Compression::Gz)
        .bloom_type(BloomType::RowCol)
        .block_size(4096);
    f.data_block_encoding = DataBlockEncoding::FastDiff;
    let g = ColumnFamilyDescriptor::new("g").bloom_type(BloomType::None);
    let desc = TableDescriptor::new(t.clone())
        .with_family(f)
        .with_family(g);
    write_table_descriptor(&layout::LOCAL, &table_dir, &desc).unwrap();
    for (s, e) in [(&b""[..], &b"row01500"[..]), (b"row01500", b"")] {
        let r = RegionInfo::new(t.clone(), s, e, 1_700_000_000_000);
        write_region_info(&layout::LOCAL, &table_dir.join(&r.encoded_name), &r).unwrap();
    }
    let gen = generate(11, 1, 3000, true);
    let input = tmp.path().join("in");
    write_input(&input, &gen);
    let out = tmp.path().join("out");
    let r = cairn(&[
        "importtsv",
        &format!("-Dimporttsv.columns={COLUMNS}"),
        "-Dimporttsv.skip.empty.columns=true",
        &format!("-Dimporttsv.bulk.output={}", out.display()),
        "--data",
        root.to_str().unwrap(),
        "ns1:t",
        input.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    let files = read_output(&out);
    check_output(&files, &gen, &[b"row01500"]);
    for f in &files {
        let fam = f.path.parent().unwrap().file_name().unwrap();
        let t = f.reader.trailer();
        if fam == "f" {
            assert_eq!(t.compression, Compression::Gz);
            assert_eq!(f.reader.data_block_encoding(), DataBlockEncoding::FastDiff);
            assert_eq!(f.reader.bloom_type(), BloomType::RowCol);
            assert!(t.data_index_count > 1, "4 KiB blocks");
        } else {
            assert_eq!(t.compression, Compression::None);
            assert_eq!(f.reader.bloom_type(), BloomType::None);
        }
    }

    // A family the table lacks is refused, as ImportTsv refuses it.
    let r = cairn(&[
        "importtsv",
        "-Dimporttsv.columns=HBASE_ROW_KEY,x:a",
        &format!(
            "-Dimporttsv.bulk.output={}",
            tmp.path().join("o2").display()
        ),
        "--data",
        root.to_str().unwrap(),
        "ns1:t",
        input.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(
        text(&r.stderr).contains(
            "Column Families [x] specified in importtsv.columns does not match with any of the \
             table ns1:t column families [f, g]."
        ),
        "{}",
        text(&r.stderr)
    );
}

/// A running `cairn serve` gives the regions and family settings over Thrift.
#[test]
fn a_running_cairn_gives_regions_over_thrift() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    {
        let mut c = cairn_region::ServerConfig::new(&data);
        c.background = false;
        let s = cairn_region::RegionServer::open(c).unwrap();
        let f = ColumnFamilyDescriptor::new("f").compression(Compression::Gz);
        let g = ColumnFamilyDescriptor::new("g").bloom_type(BloomType::None);
        s.create_table(
            TableDescriptor::new(TableName::parse("t").unwrap())
                .with_family(f)
                .with_family(g),
            &[b"row01000".to_vec(), b"row02000".to_vec()],
        )
        .unwrap();
        s.close().unwrap();
    }
    let server = serve::Server::start(&data, &[]);
    let thrift = server
        .stdout
        .lock()
        .unwrap()
        .lines()
        .find_map(|l| l.split("thrift on ").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .map(str::to_string)
        .expect("the Thrift address");
    let gen = generate(5, 1, 3000, false);
    let input = tmp.path().join("in");
    write_input(&input, &gen);
    let out = tmp.path().join("out");
    let r = cairn(&[
        "importtsv",
        &format!("-Dimporttsv.columns={COLUMNS}"),
        &format!("-Dimporttsv.bulk.output={}", out.display()),
        "--thrift",
        &thrift,
        "t",
        input.to_str().unwrap(),
    ]);
    drop(server);
    assert!(r.status.success(), "{}", text(&r.stderr));
    assert!(
        text(&r.stdout).contains("(3 regions: "),
        "{}",
        text(&r.stdout)
    );
    let files = read_output(&out);
    check_output(&files, &gen, &[b"row01000", b"row02000"]);
    for f in &files {
        let fam = f.path.parent().unwrap().file_name().unwrap();
        let (compression, bloom) = if fam == "f" {
            (Compression::Gz, BloomType::Row)
        } else {
            (Compression::None, BloomType::None)
        };
        assert_eq!(f.reader.trailer().compression, compression);
        assert_eq!(f.reader.bloom_type(), bloom);
    }
}

#[test]
fn bad_lines_fail_the_run_when_not_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.tsv");
    std::fs::write(&input, b"a\t1\nb\t2\nno-tab\nc\t3\n").unwrap();
    let out = tmp.path().join("out");
    let r = cairn(&[
        "importtsv",
        "-Dimporttsv.columns=HBASE_ROW_KEY,f",
        "-Dimporttsv.skip.bad.lines=false",
        &format!("-Dimporttsv.bulk.output={}", out.display()),
        "t",
        input.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(1));
    let err = text(&r.stderr);
    assert!(
        err.contains(&format!(
            "{} line 3: Bad line at offset: 8: No delimiter",
            input.display()
        )),
        "{err}"
    );
    // The failed run's output directory is gone, so the same command can run again.
    assert!(!out.exists(), "a failed run left {}", out.display());
}

#[test]
fn usage_errors_say_what_is_wrong() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.tsv");
    std::fs::write(&input, b"a\t1\n").unwrap();
    let out = format!("-Dimporttsv.bulk.output={}", tmp.path().join("o").display());
    let inp = input.to_str().unwrap();
    for (args, msg) in [
        (vec!["t"], "Wrong number of arguments: 1"),
        (vec![out.as_str(), "t", inp], "No columns specified"),
        (
            vec!["-Dimporttsv.columns=f:a", out.as_str(), "t", inp],
            "Must specify exactly one column as HBASE_ROW_KEY",
        ),
        (
            vec!["-Dimporttsv.columns=HBASE_ROW_KEY,f", "t", inp],
            "direct puts into a table are not supported",
        ),
        (
            vec![
                "-Dimporttsv.columns=HBASE_ROW_KEY,f",
                "-Dimporttsv.separator=::",
                out.as_str(),
                "t",
                inp,
            ],
            "TsvParser only supports single-byte separators",
        ),
    ] {
        let mut a = vec!["importtsv"];
        a.extend(args);
        let r = cairn(&a);
        assert_eq!(r.status.code(), Some(2), "{a:?}");
        assert!(text(&r.stderr).contains(msg), "{a:?}: {}", text(&r.stderr));
    }
    // A missing input names the path; an existing output is refused.
    let r = cairn(&[
        "importtsv",
        "-Dimporttsv.columns=HBASE_ROW_KEY,f",
        &out,
        "t",
        "/nonexistent/in.tsv",
    ]);
    assert_eq!(r.status.code(), Some(1));
    assert!(text(&r.stderr).contains("/nonexistent/in.tsv"));
    std::fs::create_dir(tmp.path().join("o")).unwrap();
    let r = cairn(&[
        "importtsv",
        "-Dimporttsv.columns=HBASE_ROW_KEY,f",
        &out,
        "t",
        inp,
    ]);
    assert!(
        text(&r.stderr).contains("already exists"),
        "{}",
        text(&r.stderr)
    );
}

/// HBase 2.6.1's store-file reader (HStoreFile + HFile.Reader through HFileSystem, so its
/// inline checksums are verified) reads exactly the model's cells from the output, with the
/// metadata a bulk-loaded file carries.
#[test]
fn hbase_reads_the_output() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let g = generate(23, 2, 4000, false);
    let input = tmp.path().join("in");
    write_input(&input, &g);
    let splits_file = tmp.path().join("splits");
    std::fs::write(&splits_file, b"row01500\n").unwrap();
    let out = tmp.path().join("out");
    let r = cairn(&[
        "importtsv",
        &format!("-Dimporttsv.columns={COLUMNS}"),
        &format!("-Dimporttsv.bulk.output={}", out.display()),
        "-Dhbase.mapreduce.hfileoutputformat.datablock.encoding=FAST_DIFF",
        "--splits",
        splits_file.to_str().unwrap(),
        "--sort-memory",
        "16K",
        "t",
        input.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    let dirs: Vec<String> = ["f", "g"]
        .iter()
        .map(|f| out.join(f).display().to_string())
        .collect();
    let mut args = vec!["dump"];
    args.extend(dirs.iter().map(String::as_str));
    let o = hbase::java(&cp, "StoreInterop", &args);
    assert!(o.status.success(), "HBase dump failed: {}", text(&o.stderr));
    let dump = text(&o.stdout);
    let hex = |b: &[u8]| {
        if b.is_empty() {
            "-".to_string()
        } else {
            b.iter().fold(String::new(), |mut s, x| {
                let _ = write!(s, "{x:02x}");
                s
            })
        }
    };
    let mut expected: Vec<String> = g
        .cells()
        .iter()
        .map(|c| {
            format!(
                "{} {} {} {} 4 {} 0",
                hex(&c.row),
                hex(&c.family),
                hex(&c.qualifier),
                c.neg_ts.0,
                hex(&c.value)
            )
        })
        .collect();
    let mut got = Vec::new();
    let mut files = 0;
    for line in dump.lines() {
        if let Some(rest) = line.strip_prefix("file ") {
            files += 1;
            for want in [
                "major=true",
                "encoding=FAST_DIFF",
                "info:BULKLOAD_TIMESTAMP=8",
                "info:MAJOR_COMPACTION_KEY=1",
                "info:BULKLOAD_SOURCE_TASK=",
            ] {
                assert!(rest.contains(want), "{want} not in {rest}");
            }
        } else if line.split(' ').count() == 7 {
            got.push(line.to_string());
        }
    }
    assert_eq!(files, 4, "2 regions x 2 families:\n{dump}");
    got.sort();
    expected.sort();
    assert_eq!(got.len(), expected.len());
    assert!(got == expected, "HBase reads other cells than the model's");
}
