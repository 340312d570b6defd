//! Requests no real client sends, sent raw over both protocols: names shaped as paths, rows
//! and split keys past HBase's limit, bulk loads aimed outside the server's staging area.
//! Each is refused as HBase refuses it (`DoNotRetryIOException` carrying the
//! `IllegalArgumentException`; Thrift `IllegalArgument`), nothing is created outside the
//! data root, and other tables keep working, also after a restart.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use cairn_cell::KeyValue;
use cairn_hfile::{HFileWriter, WriterOptions};
use cairn_rpc::client::{meta_region_infos, ClientError, RpcClient};
use cairn_rpc::pb;
use cairn_server::{Config, Server};
use cairn_thrift::hbase::{
    ColumnDescriptor, HbaseSyncClient, IllegalArgument, Mutation, THbaseSyncClient, TIncrement,
};
use cairn_thrift::thrift;
use prost::Message;
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::transport::{TBufferedReadTransport, TBufferedWriteTransport, TIoChannel, TTcpChannel};

const DO_NOT_RETRY: &str = "org.apache.hadoop.hbase.DoNotRetryIOException";
const IAE: &str = "java.lang.IllegalArgumentException: ";

fn start(dir: &Path, defines: &[(&str, &str)]) -> Server {
    let mut c = Config {
        data_dir: dir.to_path_buf(),
        thrift_addr: "127.0.0.1:0".into(),
        http_addr: None,
        rpc: Some(cairn_server::rpc::RpcConfig {
            addr: "127.0.0.1:0".into(),
            ..Default::default()
        }),
        info_addr: None,
        ..Config::default()
    };
    for (k, v) in defines {
        c.set(k, v).unwrap();
    }
    Server::start(c).unwrap()
}

type Thrift = HbaseSyncClient<
    TBinaryInputProtocol<TBufferedReadTransport<thrift::transport::ReadHalf<TTcpChannel>>>,
    TBinaryOutputProtocol<TBufferedWriteTransport<thrift::transport::WriteHalf<TTcpChannel>>>,
>;

fn thrift_client(addr: SocketAddr) -> Thrift {
    let mut ch = TTcpChannel::new();
    ch.open(addr.to_string()).unwrap();
    let (r, w) = ch.split().unwrap();
    HbaseSyncClient::new(
        TBinaryInputProtocol::new(TBufferedReadTransport::new(r), true),
        TBinaryOutputProtocol::new(TBufferedWriteTransport::new(w), true),
    )
}

fn illegal_message(e: thrift::Error) -> String {
    match e {
        thrift::Error::User(u) => match u.downcast_ref::<IllegalArgument>() {
            Some(x) => x.message.clone().unwrap_or_default(),
            None => panic!("not IllegalArgument: {u:?}"),
        },
        e => panic!("not IllegalArgument: {e:?}"),
    }
}

fn rpc(server: &Server, service: &str) -> RpcClient {
    RpcClient::connect(&server.rpc_addr().unwrap().to_string(), service).unwrap()
}

/// The class and message of a refused call.
fn refused<R>(r: Result<R, ClientError>) -> (String, String) {
    match r {
        Err(ClientError::Remote { class, message, .. }) => (class, message),
        Err(e) => panic!("expected a refusal, got {e}"),
        Ok(_) => panic!("expected a refusal, the call succeeded"),
    }
}

fn table_pb(ns: &str, q: &str) -> pb::TableName {
    pb::TableName {
        namespace: ns.as_bytes().to_vec(),
        qualifier: q.as_bytes().to_vec(),
    }
}

fn schema(table: pb::TableName, families: &[&[u8]]) -> pb::TableSchema {
    pb::TableSchema {
        table_name: Some(table),
        column_families: families
            .iter()
            .map(|f| pb::ColumnFamilySchema {
                name: f.to_vec(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn create(
    m: &mut RpcClient,
    schema: pb::TableSchema,
    split_keys: Vec<Vec<u8>>,
) -> Result<(), ClientError> {
    let req = pb::CreateTableRequest {
        table_schema: schema,
        split_keys,
        nonce_group: None,
        nonce: None,
    };
    m.call::<pb::CreateTableResponse>("CreateTable", &req)
        .map(|_| ())
}

/// Every path under `dir`.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn families_and_tables_shaped_as_paths_create_nothing() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let server = start(root.path(), &[]);
    let abs = outside.path().join("absfam");
    let abs_family = abs.display().to_string();
    let before = tree(root.path());
    let mut m = rpc(&server, "MasterService");
    for family in [abs_family.as_bytes(), b"a/b", b"../x", b"..", b"a\\b"] {
        let (class, msg) = refused(create(&mut m, schema(table_pb("", "t"), &[family]), vec![]));
        assert_eq!(class, DO_NOT_RETRY, "{msg}");
        assert!(
            msg.starts_with(IAE)
                && (msg
                    .contains("Column Family names cannot contain control characters or colons")
                    || msg.contains("Column Family names cannot start with a period")),
            "{msg}"
        );
    }
    for (ns, q) in [
        ("..", "t"),
        ("default", "../x"),
        ("a/b", "t"),
        ("default", "zookeeper"),
    ] {
        let (class, msg) = refused(create(&mut m, schema(table_pb(ns, q), &[b"f"]), vec![]));
        assert_eq!(class, DO_NOT_RETRY, "{msg}");
        assert!(msg.starts_with(IAE), "{msg}");
    }
    for name in ["../up", "a.b", "zookeeper"] {
        let ns = pb::CreateNamespaceRequest {
            namespace_descriptor: pb::NamespaceDescriptor {
                name: name.as_bytes().to_vec(),
                configuration: vec![],
            },
            nonce_group: None,
            nonce: None,
        };
        let (class, msg) = refused(m.call::<pb::CreateNamespaceResponse>("CreateNamespace", &ns));
        assert_eq!(class, DO_NOT_RETRY, "{msg}");
    }
    // happybase sends `family:`; the gateway parses the family out of it.
    let mut t = thrift_client(server.thrift_addr());
    for family in [format!("{abs_family}:"), "a/b:".into(), "../x:".into()] {
        let cd = ColumnDescriptor {
            name: Some(family.clone().into_bytes()),
            ..Default::default()
        };
        let msg = illegal_message(t.create_table(b"x".to_vec(), vec![cd]).unwrap_err());
        assert!(
            msg.contains("Column Family names cannot"),
            "{family}: {msg}"
        );
    }
    let cd = ColumnDescriptor {
        name: Some(b"f:".to_vec()),
        ..Default::default()
    };
    for name in ["../x", "a/b", "ns/x:t"] {
        illegal_message(
            t.create_table(name.as_bytes().to_vec(), vec![cd.clone()])
                .unwrap_err(),
        );
    }
    assert!(!abs.exists(), "nothing made outside the root");
    assert!(tree(outside.path()).is_empty());
    assert_eq!(
        tree(root.path()),
        before,
        "nothing made inside the root either"
    );
    server.shutdown().unwrap();
}

#[test]
fn long_split_keys_and_rows_are_refused_and_lookups_keep_working() {
    let root = tempfile::tempdir().unwrap();
    let server = start(root.path(), &[]);
    let mut m = rpc(&server, "MasterService");
    create(
        &mut m,
        schema(table_pb("", "good"), &[b"f"]),
        vec![b"m".to_vec()],
    )
    .unwrap();
    let before = tree(root.path());
    // A split key past the row limit, and one under it whose meta row would not be.
    for key in [vec![b'k'; 33_000], vec![b'k'; 32_767 - 10]] {
        let (class, msg) = refused(create(
            &mut m,
            schema(table_pb("", "bad"), &[b"f"]),
            vec![key.clone()],
        ));
        assert_eq!(class, DO_NOT_RETRY);
        if key.len() > 32_767 {
            assert_eq!(msg, format!("{IAE}Row length 33000 is > 32767"));
        } else {
            assert!(
                msg.contains("the hbase:meta row of a region of bad"),
                "{msg}"
            );
        }
    }
    assert_eq!(tree(root.path()), before, "no table directory was made");
    // A split row past the limit.
    let addr = server.rpc_addr().unwrap().to_string();
    let infos = meta_region_infos(&addr, &table_pb("default", "good")).unwrap();
    assert_eq!(infos.len(), 2);
    let first = pb::RegionInfo::decode(&infos[0][4..]).unwrap();
    let split = pb::SplitTableRegionRequest {
        region_info: first,
        split_row: Some(vec![b'a'; 33_000]),
        nonce_group: None,
        nonce: None,
    };
    let (class, msg) = refused(m.call::<pb::SplitTableRegionResponse>("SplitRegion", &split));
    assert_eq!(class, DO_NOT_RETRY);
    assert_eq!(msg, format!("{IAE}Row length 33000 is > 32767"));
    // Meta answers for every table, and again after a restart.
    let lookups = |server: &Server| {
        let addr = server.rpc_addr().unwrap().to_string();
        meta_region_infos(&addr, &table_pb("default", "good"))
            .unwrap()
            .len()
    };
    assert_eq!(lookups(&server), 2);
    server.shutdown().unwrap();
    let server = start(root.path(), &[]);
    assert_eq!(lookups(&server), 2);
    server.shutdown().unwrap();
}

#[test]
fn rows_past_the_limit_are_refused_on_every_write() {
    let root = tempfile::tempdir().unwrap();
    let server = start(root.path(), &[]);
    let mut m = rpc(&server, "MasterService");
    create(&mut m, schema(table_pb("", "t"), &[b"f"]), vec![]).unwrap();
    let addr = server.rpc_addr().unwrap().to_string();
    let region = meta_region_infos(&addr, &table_pb("default", "t")).unwrap()[0].clone();
    let info = pb::RegionInfo::decode(&region[4..]).unwrap();
    let name = cairn_region::RegionInfo::new(
        cairn_region::TableName::parse("t").unwrap(),
        b"",
        b"",
        info.region_id,
    )
    .region_name_bytes();
    let mut c = rpc(&server, "ClientService");
    let long = vec![b'r'; 33_000];
    use pb::mutation_proto::{column_value::QualifierValue, ColumnValue, MutationType};
    for kind in [
        MutationType::Put,
        MutationType::Delete,
        MutationType::Increment,
        MutationType::Append,
    ] {
        let value = if kind == MutationType::Increment {
            1i64.to_be_bytes().to_vec()
        } else {
            b"v".to_vec()
        };
        let req = pb::MutateRequest {
            region: pb::RegionSpecifier {
                r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
                value: name.clone(),
            },
            mutation: pb::MutationProto {
                row: Some(long.clone()),
                mutate_type: Some(kind as i32),
                column_value: vec![ColumnValue {
                    family: b"f".to_vec(),
                    qualifier_value: vec![QualifierValue {
                        qualifier: Some(b"q".to_vec()),
                        value: Some(value),
                        ..Default::default()
                    }],
                }],
                ..Default::default()
            },
            condition: None,
            nonce_group: None,
        };
        let (class, msg) = refused(c.call::<pb::MutateResponse>("Mutate", &req));
        assert_eq!(class, DO_NOT_RETRY, "{kind:?}: {msg}");
        assert_eq!(msg, format!("{IAE}Row length 33000 is > 32767"), "{kind:?}");
    }
    let mut t = thrift_client(server.thrift_addr());
    let put = Mutation {
        column: Some(b"f:q".to_vec()),
        value: Some(b"v".to_vec()),
        ..Default::default()
    };
    let msg = illegal_message(
        t.mutate_row(b"t".to_vec(), long.clone(), vec![put], Default::default())
            .unwrap_err(),
    );
    assert!(msg.contains("Row length 33000 is > 32767"), "{msg}");
    let e = t
        .increment(TIncrement {
            table: Some(b"t".to_vec()),
            row: Some(long.clone()),
            column: Some(b"f:q".to_vec()),
            ammount: Some(1),
        })
        .unwrap_err();
    assert!(format!("{e:?}").contains("32767"), "{e:?}");
    server.shutdown().unwrap();
}

fn hfile(path: &Path, rows: &[&str]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let out = std::fs::File::create(path).unwrap();
    let mut w =
        HFileWriter::new(out, path.display().to_string(), WriterOptions::default()).unwrap();
    for r in rows {
        let kv = KeyValue::put(r.as_bytes(), b"f", b"q", 1, b"v").unwrap();
        w.append(&kv.as_cell()).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn bulk_loads_reach_nothing_outside_staging_and_listed_directories() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let input = tempfile::tempdir().unwrap();
    let server = start(root.path(), &[]);
    let mut m = rpc(&server, "MasterService");
    create(&mut m, schema(table_pb("", "victim"), &[b"f"]), vec![]).unwrap();
    create(&mut m, schema(table_pb("", "thief"), &[b"f"]), vec![]).unwrap();
    let mut c = rpc(&server, "ClientService");
    let addr = server.rpc_addr().unwrap().to_string();
    let region_of = |t: &str| {
        let b = meta_region_infos(&addr, &table_pb("default", t)).unwrap()[0].clone();
        let info = pb::RegionInfo::decode(&b[4..]).unwrap();
        cairn_region::RegionInfo::new(
            cairn_region::TableName::parse(t).unwrap(),
            b"",
            b"",
            info.region_id,
        )
        .region_name_bytes()
    };
    // The victim table gets a store file.
    let mut thrift = thrift_client(server.thrift_addr());
    let put = Mutation {
        column: Some(b"f:q".to_vec()),
        value: Some(b"v".to_vec()),
        ..Default::default()
    };
    thrift
        .mutate_row(
            b"victim".to_vec(),
            b"r".to_vec(),
            vec![put],
            Default::default(),
        )
        .unwrap();
    let flush = pb::FlushRegionRequest {
        region: pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
            value: region_of("victim"),
        },
        if_older_than_ts: None,
        write_flush_wal_marker: None,
        family: None,
    };
    rpc(&server, "AdminService")
        .call::<pb::FlushRegionResponse>("FlushRegion", &flush)
        .unwrap();
    let store_file = tree(&root.path().join("data/default/victim"))
        .into_iter()
        .find(|p| p.parent().is_some_and(|d| d.ends_with("f")) && p.is_file())
        .expect("a store file");
    let store_bytes = std::fs::read(&store_file).unwrap();
    // A file outside the root the absolute family aimed at.
    let victim = outside.path().join("victim");
    std::fs::write(&victim, vec![9u8; 15_892]).unwrap();
    let src = input.path().join("victim");
    hfile(&src, &["a"]);
    let token = c
        .call::<pb::PrepareBulkLoadResponse>(
            "PrepareBulkLoad",
            &pb::PrepareBulkLoadRequest {
                table_name: table_pb("default", "thief"),
                region: None,
            },
        )
        .unwrap()
        .message
        .bulk_token;
    let load = |c: &mut RpcClient, family: &[u8], path: &Path, token: Option<&str>, copy: bool| {
        let req = pb::BulkLoadHFileRequest {
            region: pb::RegionSpecifier {
                r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
                value: region_of("thief"),
            },
            family_path: vec![pb::bulk_load_h_file_request::FamilyPath {
                family: family.to_vec(),
                path: format!("file:{}", path.display()),
            }],
            assign_seq_num: Some(true),
            fs_token: None,
            bulk_token: token.map(str::to_string),
            copy_file: Some(copy),
            cluster_ids: vec![],
            replicate: None,
        };
        c.call::<pb::BulkLoadHFileResponse>("BulkLoadHFile", &req)
    };
    let abs_family = outside.path().display().to_string();
    for copy in [true, false] {
        let (class, _) = refused(load(
            &mut c,
            abs_family.as_bytes(),
            &src,
            Some(&token),
            copy,
        ));
        assert_eq!(class, DO_NOT_RETRY);
        // Another table's store file, with and without a token, and through `..`.
        let dotted = root
            .path()
            .join("staging/..")
            .join(store_file.strip_prefix(root.path()).unwrap());
        for path in [&store_file, &dotted] {
            for tok in [None, Some(token.as_str())] {
                let (class, msg) = refused(load(&mut c, b"f", path, tok, copy));
                assert_eq!(class, DO_NOT_RETRY, "{msg}");
            }
        }
        // A file in a directory nobody listed.
        let (_, msg) = refused(load(&mut c, b"f", &src, Some(&token), copy));
        assert!(msg.contains("cairn.bulkload.source.dirs"), "{msg}");
    }
    assert_eq!(
        std::fs::read(&victim).unwrap(),
        vec![9u8; 15_892],
        "victim unchanged"
    );
    assert_eq!(std::fs::read(&store_file).unwrap(), store_bytes);
    assert!(src.exists());
    let get = pb::GetRequest {
        region: pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
            value: region_of("victim"),
        },
        get: pb::Get {
            row: b"r".to_vec(),
            ..Default::default()
        },
    };
    let answer = c.call::<pb::GetResponse>("Get", &get).unwrap();
    let cells = answer.message.result.and_then(|r| r.associated_cell_count);
    assert_eq!(cells, Some(1), "the victim table still reads its row");
    server.shutdown().unwrap();
    // Listed by the operator, the same file loads.
    let server = start(
        root.path(),
        &[(
            "cairn.bulkload.source.dirs",
            &input.path().display().to_string(),
        )],
    );
    let mut c = rpc(&server, "ClientService");
    let addr = server.rpc_addr().unwrap().to_string();
    let b = meta_region_infos(&addr, &table_pb("default", "thief")).unwrap()[0].clone();
    let info = pb::RegionInfo::decode(&b[4..]).unwrap();
    let thief = cairn_region::RegionInfo::new(
        cairn_region::TableName::parse("thief").unwrap(),
        b"",
        b"",
        info.region_id,
    )
    .region_name_bytes();
    let req = pb::BulkLoadHFileRequest {
        region: pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
            value: thief,
        },
        family_path: vec![pb::bulk_load_h_file_request::FamilyPath {
            family: b"f".to_vec(),
            path: src.display().to_string(),
        }],
        assign_seq_num: Some(true),
        ..Default::default()
    };
    assert!(
        c.call::<pb::BulkLoadHFileResponse>("BulkLoadHFile", &req)
            .unwrap()
            .message
            .loaded
    );
    server.shutdown().unwrap();
}
