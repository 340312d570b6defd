//! End-to-end tests of `cairn checksum`, running the built binary.

use std::path::Path;
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

fn write_sample(path: &Path, len: usize) {
    let data: Vec<u8> = (0..len as u32)
        .map(|i| (i.wrapping_mul(0x9E37_79B1) >> 13) as u8)
        .collect();
    std::fs::write(path, data).unwrap();
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn compute_then_verify_round_trips_for_every_type_and_chunk_size() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data");
    write_sample(&file, 1_000_003);
    for t in ["NULL", "crc32", "CRC32C"] {
        for bpc in ["1", "512", "16384", "2000000"] {
            let o = cairn(&["checksum", "compute", "-t", t, "-b", bpc, s(&file)]);
            assert!(o.status.success(), "{}", text(&o));
            let o = cairn(&["checksum", "verify", s(&file)]);
            assert!(o.status.success(), "{t} {bpc}: {}", text(&o));
            assert!(text(&o).contains(": OK,"), "{}", text(&o));
        }
    }
}

#[test]
fn sums_file_is_an_hdfs_block_metadata_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("blk_1073741825");
    write_sample(&file, 1500);
    let meta = dir.path().join("blk_1073741825_1001.meta");
    let o = cairn(&["checksum", "compute", s(&file), "-o", s(&meta)]);
    assert!(o.status.success(), "{}", text(&o));
    let bytes = std::fs::read(&meta).unwrap();
    // Version 1, CRC32C (2), 512 bytes per checksum, then three big-endian CRCs.
    assert_eq!(&bytes[..7], &[0, 1, 2, 0, 0, 2, 0]);
    assert_eq!(bytes.len(), 7 + 3 * 4);
    let data = std::fs::read(&file).unwrap();
    let last = crc32c_reference(&data[1024..]);
    assert_eq!(&bytes[15..19], &last.to_be_bytes());
}

fn crc32c_reference(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn corruption_is_reported_with_chunk_and_offset_and_exit_code_1() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data");
    write_sample(&file, 5_000_000);
    assert!(cairn(&["checksum", "compute", s(&file)]).status.success());
    let mut data = std::fs::read(&file).unwrap();
    data[1_000_000] ^= 0x40;
    data[4_999_999] ^= 0x01;
    std::fs::write(&file, &data).unwrap();

    let o = cairn(&["checksum", "verify", s(&file)]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("chunk 1953 (bytes 999936..1000448)"), "{out}");
    assert!(!out.contains("chunk 9765 "), "stops at the first: {out}");
    assert!(out.contains("CORRUPT"), "{out}");

    let o = cairn(&["checksum", "verify", "--all", s(&file)]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o);
    assert!(out.contains("chunk 1953 (bytes 999936..1000448)"), "{out}");
    assert!(out.contains("chunk 9765 (bytes 4999680..5000000)"), "{out}");
}

#[test]
fn truncated_data_or_sums_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data");
    write_sample(&file, 100_000);
    assert!(cairn(&["checksum", "compute", s(&file)]).status.success());
    let data = std::fs::read(&file).unwrap();
    std::fs::write(&file, &data[..50_000]).unwrap();
    let o = cairn(&["checksum", "verify", s(&file)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("holds 196 checksums but"), "{}", text(&o));
}

#[test]
fn bad_paths_and_arguments_are_clear_errors() {
    let o = cairn(&["checksum", "verify", "/no/such/file"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("cannot open /no/such/file"),
        "{}",
        text(&o)
    );

    let dir = tempfile::tempdir().unwrap();
    let o = cairn(&["checksum", "compute", s(dir.path())]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("is a directory"), "{}", text(&o));

    let o = cairn(&["checksum", "compute", "-t", "adler32", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("unknown checksum type name"),
        "{}",
        text(&o)
    );

    let o = cairn(&["checksum", "hdfs", "--block-size", "1000", "x"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("not a positive multiple"), "{}", text(&o));

    let file = dir.path().join("not-meta");
    std::fs::write(&file, b"xyz").unwrap();
    let meta = dir.path().join("bad.meta");
    std::fs::write(&meta, [0u8, 7, 2, 0, 0, 2, 0]).unwrap();
    let o = cairn(&["checksum", "verify", s(&file), "-m", s(&meta)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("version 7"), "{}", text(&o));
}

#[test]
fn hdfs_checksum_prints_the_hdfs_dfs_checksum_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, b"123456789").unwrap();
    let o = cairn(&[
        "checksum",
        "hdfs",
        "--combine-mode",
        "COMPOSITE_CRC",
        s(&file),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("{}\tCOMPOSITE-CRC32C\te3069283\n", s(&file))
    );
    let o = cairn(&["checksum", "hdfs", "--block-size", "4k", s(&file)]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let fields: Vec<&str> = out.trim_end().split('\t').collect();
    assert_eq!(fields[..2], [s(&file), "MD5-of-0MD5-of-512CRC32C"]);
    assert_eq!(fields[2].len(), 56);
    // bytesPerCRC 512, crcPerBlock 0 (one block), then the MD5.
    assert!(fields[2].starts_with(concat!("00000200", "0000000000000000")));
}

#[test]
fn demo_runs_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let o = cairn(&["checksum", "demo", "--size", "3MiB", "--dir", s(dir.path())]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("verified every chunk: OK"), "{out}");
    assert!(
        out.contains("checksum mismatch in chunk 2048 (bytes 1048576..1049088)"),
        "{out}"
    );
    assert!(out.contains("COMPOSITE-CRC32C"), "{out}");
}

#[test]
fn version_names_the_commit_it_was_built_from_and_its_features() {
    let o = cairn(&["--version"]);
    assert!(o.status.success(), "{}", text(&o));
    let v = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        v.starts_with(&format!("cairn {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    // Built inside the checkout the test runs in: the same commit git reports now.
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("git");
    if head.status.success() {
        let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
        assert!(
            v.contains(&format!("commit {head};")),
            "{v} is not built from {head}"
        );
    }
    let features = if cfg!(feature = "hdfs") {
        "features: hdfs)"
    } else {
        "features: none)"
    };
    assert!(v.contains(features), "{v}");
}

#[test]
fn completions_cover_every_subcommand_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = cairn(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", text(&o));
        let script = String::from_utf8_lossy(&o.stdout);
        for sub in ["serve", "completebulkload", "importtsv", "hfile", "pe"] {
            assert!(script.contains(sub), "{shell} completion lacks {sub}");
        }
    }
    let o = cairn(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn man_pages_are_written_for_cairn_and_each_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    let o = cairn(&["man", "--out", s(&out)]);
    assert!(o.status.success(), "{}", text(&o));
    let top = std::fs::read_to_string(out.join("cairn.1")).unwrap();
    assert!(
        top.starts_with(".ie \\n(.g .ds Aq") || top.contains(".TH cairn"),
        "{top}"
    );
    assert!(top.contains("completebulkload"), "{top}");
    let serve = std::fs::read_to_string(out.join("cairn-serve.1")).unwrap();
    assert!(serve.contains(".TH cairn-serve"), "{serve}");
    assert!(
        serve.contains("data"),
        "serve's page lists its options: {serve}"
    );
}

#[test]
fn logs_into_a_file_or_pipe_carry_no_colour_codes() {
    // A configuration directory whose hbase-site.xml overrides a final property of
    // core-site.xml (logged as a warning) and then gives a bad port (so serve stops at once):
    // stderr is a pipe here.
    let dir = tempfile::tempdir().unwrap();
    let prop = |n: &str, v: &str, f: bool| {
        format!("<property><name>{n}</name><value>{v}</value><final>{f}</final></property>")
    };
    std::fs::write(
        dir.path().join("core-site.xml"),
        format!(
            "<configuration>{}</configuration>",
            prop("x.locked", "1", true)
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("hbase-site.xml"),
        format!(
            "<configuration>{}{}</configuration>",
            prop("x.locked", "2", false),
            prop("hbase.regionserver.thrift.port", "notaport", false)
        ),
    )
    .unwrap();
    let o = cairn(&[
        "serve",
        "--conf",
        s(dir.path()),
        "--data",
        s(&dir.path().join("d")),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("WARN"), "no log line to check: {err}");
    assert!(err.contains("final parameter: x.locked"), "{err}");
    assert!(
        err.contains("hbase-site.xml: property hbase.regionserver.thrift.port"),
        "{err}"
    );
    assert!(
        !err.contains('\u{1b}'),
        "escape codes in piped logs: {err:?}"
    );
}
