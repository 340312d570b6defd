//! `cairn serve` end to end with Thrift's own Rust client (the code generated from cairn's IDL):
//! every protocol × transport pair, the handler's semantics and errors, hostile connections,
//! limits, and a stop that flushes memstores.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use cairn_region::{RegionServer, ServerConfig, TableName};
use cairn_server::{Config, Server};
use cairn_thrift::hbase::{
    AlreadyExists, BatchMutation, ColumnDescriptor, HbaseSyncClient, IOError, IllegalArgument,
    Mutation, THbaseSyncClient, TIncrement, TScan,
};
use cairn_thrift::thrift;
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol,
    TInputProtocol, TOutputProtocol,
};
use thrift::transport::{
    TBufferedReadTransport, TBufferedWriteTransport, TFramedReadTransport, TFramedWriteTransport,
    TIoChannel, TTcpChannel,
};

type Client = HbaseSyncClient<Box<dyn TInputProtocol>, Box<dyn TOutputProtocol>>;

fn client(addr: SocketAddr, framed: bool, compact: bool) -> Client {
    let mut ch = TTcpChannel::new();
    ch.open(addr.to_string()).unwrap();
    let (r, w) = ch.split().unwrap();
    let (r, w): (
        Box<dyn thrift::transport::TReadTransport>,
        Box<dyn thrift::transport::TWriteTransport>,
    ) = if framed {
        (
            Box::new(TFramedReadTransport::new(r)),
            Box::new(TFramedWriteTransport::new(w)),
        )
    } else {
        (
            Box::new(TBufferedReadTransport::new(r)),
            Box::new(TBufferedWriteTransport::new(w)),
        )
    };
    let (i, o): (Box<dyn TInputProtocol>, Box<dyn TOutputProtocol>) = if compact {
        (
            Box::new(TCompactInputProtocol::new(r)),
            Box::new(TCompactOutputProtocol::new(w)),
        )
    } else {
        (
            Box::new(TBinaryInputProtocol::new(r, true)),
            Box::new(TBinaryOutputProtocol::new(w, true)),
        )
    };
    HbaseSyncClient::new(i, o)
}

fn start(dir: &std::path::Path, defines: &[(&str, &str)]) -> Server {
    let mut c = Config {
        data_dir: dir.to_path_buf(),
        thrift_addr: "127.0.0.1:0".into(),
        http_addr: None,
        // The native RPC port runs beside Thrift, on a free port.
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

fn family(name: &str, versions: i32) -> ColumnDescriptor {
    ColumnDescriptor {
        name: Some(format!("{name}:").into_bytes()),
        max_versions: Some(versions),
        ..ColumnDescriptor::default()
    }
}

fn put(col: &str, v: &str) -> Mutation {
    Mutation {
        is_delete: Some(false),
        column: Some(col.as_bytes().to_vec()),
        value: Some(v.as_bytes().to_vec()),
        write_to_w_a_l: Some(true),
    }
}

fn del(col: &str) -> Mutation {
    Mutation {
        is_delete: Some(true),
        column: Some(col.as_bytes().to_vec()),
        value: None,
        write_to_w_a_l: Some(true),
    }
}

/// A TScan with nothing set (the generated `Default` sets every optional field to zero, and a
/// timestamp of 0 is a scan of nothing, as in HBase).
fn empty_scan() -> TScan {
    TScan {
        start_row: None,
        stop_row: None,
        timestamp: None,
        columns: None,
        caching: None,
        filter_string: None,
        batch_size: None,
        sort_columns: None,
        reversed: None,
        cache_blocks: None,
    }
}

fn no_attrs() -> BTreeMap<Vec<u8>, Vec<u8>> {
    BTreeMap::new()
}

fn user_err<E: std::error::Error + 'static>(r: thrift::Result<impl std::fmt::Debug>) -> String {
    match r {
        Err(thrift::Error::User(u)) => {
            assert!(
                u.downcast_ref::<E>().is_some(),
                "expected {}, got {u:?}",
                std::any::type_name::<E>()
            );
            if let Some(e) = u.downcast_ref::<IOError>() {
                e.message.clone().unwrap_or_default()
            } else if let Some(e) = u.downcast_ref::<IllegalArgument>() {
                e.message.clone().unwrap_or_default()
            } else if let Some(e) = u.downcast_ref::<AlreadyExists>() {
                e.message.clone().unwrap_or_default()
            } else {
                u.to_string()
            }
        }
        other => panic!("expected {}, got {other:?}", std::any::type_name::<E>()),
    }
}

fn exercise(c: &mut Client, table: &str) {
    let t = table.as_bytes().to_vec();
    c.create_table(t.clone(), vec![family("f", 3), family("g", 1)])
        .unwrap();
    assert!(c.get_table_names().unwrap().contains(&t));
    let e = user_err::<AlreadyExists>(c.create_table(t.clone(), vec![family("f", 1)]));
    assert!(e.contains(table), "{e}");
    let descs = c.get_column_descriptors(t.clone()).unwrap();
    assert_eq!(descs[&b"f:".to_vec()].max_versions, Some(3));
    assert_eq!(descs[&b"g:".to_vec()].max_versions, Some(1));

    // mutateRows: puts and deletes; rows are visible to gets and multi-gets
    let batches: Vec<BatchMutation> = (0..20)
        .map(|i| BatchMutation {
            row: Some(format!("r{i:02}").into_bytes()),
            mutations: Some(vec![put("f:a", &i.to_string()), put("g:b", "x")]),
        })
        .collect();
    c.mutate_rows(t.clone(), batches, no_attrs()).unwrap();
    c.mutate_row(t.clone(), b"r05".to_vec(), vec![del("g:b")], no_attrs())
        .unwrap();
    let rows = c
        .get_rows_with_columns(
            t.clone(),
            vec![b"r04".to_vec(), b"r05".to_vec(), b"zz".to_vec()],
            vec![],
            no_attrs(),
        )
        .unwrap();
    assert_eq!(rows.len(), 2);
    let cols = rows[1].columns.as_ref().unwrap();
    assert_eq!(rows[1].row.as_deref(), Some(&b"r05"[..]));
    assert_eq!(cols.len(), 1);
    assert_eq!(cols[&b"f:a".to_vec()].value.as_deref(), Some(&b"5"[..]));
    assert!(c
        .get_row(t.clone(), b"nope".to_vec(), no_attrs())
        .unwrap()
        .is_empty());

    // versions and timestamps: getVerTs sees versions strictly older than its timestamp
    for ts in [10, 20, 30] {
        c.mutate_row_ts(
            t.clone(),
            b"v".to_vec(),
            vec![put("f:q", &format!("at{ts}"))],
            ts,
            no_attrs(),
        )
        .unwrap();
    }
    let cells = c
        .get_ver(t.clone(), b"v".to_vec(), b"f:q".to_vec(), 5, no_attrs())
        .unwrap();
    let ts: Vec<i64> = cells.iter().map(|c| c.timestamp.unwrap()).collect();
    assert_eq!(ts, vec![30, 20, 10]);
    let cells = c
        .get_ver_ts(t.clone(), b"v".to_vec(), b"f:q".to_vec(), 30, 5, no_attrs())
        .unwrap();
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[0].value.as_deref(), Some(&b"at20"[..]));
    let e =
        user_err::<IOError>(c.get_ver(t.clone(), b"v".to_vec(), b"f:q".to_vec(), 0, no_attrs()));
    assert!(e.contains("numVersions"), "{e}");
    c.delete_all_ts(t.clone(), b"v".to_vec(), b"f:q".to_vec(), 20, no_attrs())
        .unwrap();
    let cells = c
        .get_ver(t.clone(), b"v".to_vec(), b"f:q".to_vec(), 5, no_attrs())
        .unwrap();
    assert_eq!(cells.len(), 1);

    // scanners: TScan with stop row, columns, filter, batch, reversed, sorted columns
    let scan = TScan {
        start_row: Some(b"r03".to_vec()),
        stop_row: Some(b"r08".to_vec()),
        columns: Some(vec![b"f:a".to_vec()]),
        filter_string: Some(b"ValueFilter(!=, 'binary:6')".to_vec()),
        ..empty_scan()
    };
    let id = c
        .scanner_open_with_scan(t.clone(), scan, no_attrs())
        .unwrap();
    let mut keys = Vec::new();
    loop {
        let rows = c.scanner_get_list(id, 2).unwrap();
        if rows.is_empty() {
            break;
        }
        keys.extend(
            rows.into_iter()
                .map(|r| String::from_utf8(r.row.unwrap()).unwrap()),
        );
    }
    assert_eq!(keys, ["r03", "r04", "r05", "r07"]);
    c.scanner_close(id).unwrap();
    user_err::<IllegalArgument>(c.scanner_get(id));
    let id = c
        .scanner_open_with_scan(
            t.clone(),
            TScan {
                reversed: Some(true),
                sort_columns: Some(true),
                start_row: Some(b"r02".to_vec()),
                ..empty_scan()
            },
            no_attrs(),
        )
        .unwrap();
    let rows = c.scanner_get_list(id, 10).unwrap();
    let keys: Vec<_> = rows.iter().map(|r| r.row.clone().unwrap()).collect();
    assert_eq!(keys, [b"r02".to_vec(), b"r01".to_vec(), b"r00".to_vec()]);
    let sorted = rows[0].sorted_columns.as_ref().unwrap();
    let names: Vec<_> = sorted
        .iter()
        .map(|c| c.column_name.clone().unwrap())
        .collect();
    assert_eq!(names, [b"f:a".to_vec(), b"g:b".to_vec()]);
    assert!(rows[0].columns.is_none());
    c.scanner_close(id).unwrap();
    let id = c
        .scanner_open_with_prefix(t.clone(), b"r1".to_vec(), vec![b"g".to_vec()], no_attrs())
        .unwrap();
    assert_eq!(c.scanner_get_list(id, 100).unwrap().len(), 10);
    c.scanner_close(id).unwrap();
    let id = c
        .scanner_open_with_stop(
            t.clone(),
            b"r00".to_vec(),
            b"r02".to_vec(),
            vec![],
            no_attrs(),
        )
        .unwrap();
    assert_eq!(c.scanner_get(id).unwrap().len(), 1);
    assert_eq!(c.scanner_get(id).unwrap().len(), 1);
    assert!(c.scanner_get(id).unwrap().is_empty());
    c.scanner_close(id).unwrap();
    let e = user_err::<IOError>(c.scanner_open_with_scan(
        t.clone(),
        TScan {
            filter_string: Some(b"NotAFilter(".to_vec()),
            ..empty_scan()
        },
        no_attrs(),
    ));
    assert!(e.contains("filterString"), "{e}");

    // counters, increments, checkAndPut
    assert_eq!(
        c.atomic_increment(t.clone(), b"n".to_vec(), b"f:c".to_vec(), 5)
            .unwrap(),
        5
    );
    c.increment(TIncrement {
        table: Some(t.clone()),
        row: Some(b"n".to_vec()),
        column: Some(b"f:c".to_vec()),
        ammount: Some(2),
    })
    .unwrap();
    assert_eq!(
        c.atomic_increment(t.clone(), b"n".to_vec(), b"f:c".to_vec(), 0)
            .unwrap(),
        7
    );
    let e = user_err::<IllegalArgument>(c.atomic_increment(
        t.clone(),
        b"r01".to_vec(),
        b"f:a".to_vec(),
        1,
    ));
    assert!(e.contains("not a counter"), "{e}");
    assert!(!c
        .check_and_put(
            t.clone(),
            b"r01".to_vec(),
            b"f:a".to_vec(),
            b"wrong".to_vec(),
            put("f:a", "new"),
            no_attrs()
        )
        .unwrap());
    assert!(c
        .check_and_put(
            t.clone(),
            b"r01".to_vec(),
            b"f:a".to_vec(),
            b"1".to_vec(),
            put("f:a", "new"),
            no_attrs()
        )
        .unwrap());
    assert!(c
        .check_and_put(
            t.clone(),
            b"fresh".to_vec(),
            b"f:a".to_vec(),
            vec![],
            put("f:a", "first"),
            no_attrs()
        )
        .unwrap());
    let cells = c
        .get(t.clone(), b"r01".to_vec(), b"f:a".to_vec(), no_attrs())
        .unwrap();
    assert_eq!(cells[0].value.as_deref(), Some(&b"new"[..]));

    // errors name what is wrong
    let e = user_err::<IllegalArgument>(c.mutate_row(
        t.clone(),
        b"r".to_vec(),
        vec![put(":x", "1")],
        no_attrs(),
    ));
    assert!(e.contains("mutations[0].column"), "{e}");
    let e = user_err::<IOError>(c.get_row(b"missing".to_vec(), b"r".to_vec(), no_attrs()));
    assert!(e.contains("missing"), "{e}");
    let e = user_err::<IOError>(c.get(t.clone(), b"r01".to_vec(), b"nofam:x".to_vec(), no_attrs()));
    assert!(e.contains("nofam"), "{e}");

    // the remaining timestamp variants and batch increments
    c.mutate_rows_ts(
        t.clone(),
        vec![BatchMutation {
            row: Some(b"ts".to_vec()),
            mutations: Some(vec![put("f:a", "old"), put("g:b", "old")]),
        }],
        100,
        no_attrs(),
    )
    .unwrap();
    c.mutate_row_ts(
        t.clone(),
        b"ts".to_vec(),
        vec![put("f:a", "new")],
        200,
        no_attrs(),
    )
    .unwrap();
    let at = |rows: Vec<cairn_thrift::hbase::TRowResult>| -> Vec<(Vec<u8>, Vec<u8>, i64)> {
        rows.into_iter()
            .flat_map(|r| {
                let row = r.row.unwrap();
                r.columns.unwrap().into_iter().map(move |(k, v)| {
                    (
                        row.clone(),
                        [k, b"=".to_vec(), v.value.unwrap()].concat(),
                        v.timestamp.unwrap(),
                    )
                })
            })
            .collect()
    };
    assert_eq!(
        at(c.get_row_ts(t.clone(), b"ts".to_vec(), 200, no_attrs())
            .unwrap()),
        [
            (b"ts".to_vec(), b"f:a=old".to_vec(), 100),
            (b"ts".to_vec(), b"g:b=old".to_vec(), 100)
        ]
    );
    assert_eq!(
        at(c.get_row_with_columns_ts(
            t.clone(),
            b"ts".to_vec(),
            vec![b"f".to_vec()],
            201,
            no_attrs()
        )
        .unwrap()),
        [(b"ts".to_vec(), b"f:a=new".to_vec(), 200)]
    );
    assert_eq!(
        at(c.get_rows_ts(
            t.clone(),
            vec![b"ts".to_vec(), b"r01".to_vec()],
            150,
            no_attrs()
        )
        .unwrap()),
        [
            (b"ts".to_vec(), b"f:a=old".to_vec(), 100),
            (b"ts".to_vec(), b"g:b=old".to_vec(), 100)
        ]
    );
    assert_eq!(
        at(c.get_rows_with_columns_ts(
            t.clone(),
            vec![b"ts".to_vec()],
            vec![b"g:b".to_vec()],
            300,
            no_attrs()
        )
        .unwrap()),
        [(b"ts".to_vec(), b"g:b=old".to_vec(), 100)]
    );
    let id = c
        .scanner_open_ts(
            t.clone(),
            b"ts".to_vec(),
            vec![b"f:a".to_vec()],
            150,
            no_attrs(),
        )
        .unwrap();
    assert_eq!(
        at(c.scanner_get_list(id, 1).unwrap()),
        [(b"ts".to_vec(), b"f:a=old".to_vec(), 100)]
    );
    c.scanner_close(id).unwrap();
    let id = c
        .scanner_open_with_stop_ts(
            t.clone(),
            b"r19".to_vec(),
            b"tt".to_vec(),
            vec![b"f:a".to_vec()],
            250,
            no_attrs(),
        )
        .unwrap();
    // r19's cells carry the server's clock, far past 250: only "ts" has versions before it
    let rows = at(c.scanner_get_list(id, 10).unwrap());
    assert_eq!(rows, [(b"ts".to_vec(), b"f:a=new".to_vec(), 200)]);
    c.scanner_close(id).unwrap();
    c.delete_all_row_ts(t.clone(), b"ts".to_vec(), 150, no_attrs())
        .unwrap();
    assert_eq!(
        at(c.get_row(t.clone(), b"ts".to_vec(), no_attrs()).unwrap()),
        [(b"ts".to_vec(), b"f:a=new".to_vec(), 200)]
    );
    let inc = |n: i64| TIncrement {
        table: Some(t.clone()),
        row: Some(b"n2".to_vec()),
        column: Some(b"f:c".to_vec()),
        ammount: Some(n),
    };
    c.increment_rows(vec![inc(1), inc(2), inc(3)]).unwrap();
    assert_eq!(
        c.atomic_increment(t.clone(), b"n2".to_vec(), b"f:c".to_vec(), 0)
            .unwrap(),
        6
    );
    let e = user_err::<IOError>(c.increment_rows(vec![
        inc(1),
        TIncrement {
            column: None,
            ..inc(1)
        },
    ]));
    assert!(e.contains("increments[1]") && e.contains("column"), "{e}");
    assert!(c.get_table_names_with_is_table_enabled().unwrap()[&t]);
    assert_eq!(
        c.get_thrift_server_type().unwrap(),
        cairn_thrift::hbase::TThriftServerType::ONE
    );
    assert!(!c.get_cluster_id().unwrap().is_empty());

    // regions, admin
    let regions = c.get_table_regions(t.clone()).unwrap();
    assert_eq!(regions.len(), 1);
    c.major_compact(t.clone()).unwrap();
    c.compact(regions[0].name.clone().unwrap()).unwrap();
    user_err::<IOError>(c.compact(b"nothing-like-this".to_vec()));
    c.delete_all_row(t.clone(), b"r00".to_vec(), no_attrs())
        .unwrap();
    assert!(c
        .get_row(t.clone(), b"r00".to_vec(), no_attrs())
        .unwrap()
        .is_empty());
    c.disable_table(t.clone()).unwrap();
    assert!(!c.is_table_enabled(t.clone()).unwrap());
    user_err::<IOError>(c.get_row(t.clone(), b"r01".to_vec(), no_attrs()));
    c.enable_table(t.clone()).unwrap();
    assert_eq!(
        c.get_row(t.clone(), b"r02".to_vec(), no_attrs())
            .unwrap()
            .len(),
        1
    );
    user_err::<IOError>(c.delete_table(t.clone()));
    c.disable_table(t.clone()).unwrap();
    c.delete_table(t.clone()).unwrap();
    assert!(!c.get_table_names().unwrap().contains(&t));
}

#[test]
fn every_protocol_and_transport() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &[]);
    for (framed, compact) in [(false, false), (true, false), (false, true), (true, true)] {
        let mut c = client(server.thrift_addr(), framed, compact);
        exercise(&mut c, &format!("t_{framed}_{compact}"));
    }
    let m = server.metrics();
    assert_eq!(
        m.wire
            .protocol_errors
            .load(std::sync::atomic::Ordering::Relaxed),
        0
    );
    for n in &m.wire.connections {
        assert_eq!(n.load(std::sync::atomic::Ordering::Relaxed), 1);
    }
    server.shutdown().unwrap();
}

fn send_raw(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(bytes).unwrap();
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

#[test]
fn hostile_connections_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &[]);
    let addr = server.thrift_addr();
    let mut c = client(addr, false, false);
    let t = b"h".to_vec();
    c.create_table(t.clone(), vec![family("f", 1)]).unwrap();
    c.mutate_row(
        t.clone(),
        b"keep".to_vec(),
        vec![put("f:q", "safe")],
        no_attrs(),
    )
    .unwrap();
    let hostile: Vec<Vec<u8>> = vec![
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03".to_vec(), // a TLS hello
        [&(200i32 << 20).to_be_bytes()[..], b"\x80\x01\x00\x01"].concat(),
        [&0x8001_0001u32.to_be_bytes()[..], &(-7i32).to_be_bytes()].concat(),
        vec![0x82, 0x21, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f],
        vec![0x80, 0x01],
    ];
    for h in &hostile {
        send_raw(addr, h);
        let got = c.get_row(t.clone(), b"keep".to_vec(), no_attrs()).unwrap();
        assert_eq!(got.len(), 1, "after {h:02x?}");
    }
    let m = server.metrics();
    assert!(load(&m.wire.protocol_errors) >= hostile.len() as u64);
    // The frame of 200 MiB and the string of -7 bytes.
    assert!(load(&m.wire.oversized) >= 2);
    drop(c);
    server.shutdown().unwrap();
}

fn load(a: &std::sync::atomic::AtomicU64) -> u64 {
    a.load(std::sync::atomic::Ordering::Relaxed)
}

/// A server with `define` and every other limit at its default, a table `l` with family `f`,
/// and a client.
fn limited(define: (&str, &str)) -> (tempfile::TempDir, Server, Client) {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &[define]);
    let mut c = client(server.thrift_addr(), false, false);
    c.create_table(b"l".to_vec(), vec![family("f", 1)]).unwrap();
    (dir, server, c)
}

/// A `mutateRow` of `row` with a value of `bytes` bytes.
fn put_big(c: &mut Client, row: &str, bytes: usize) -> thrift::Result<()> {
    c.mutate_row(
        b"l".to_vec(),
        row.as_bytes().to_vec(),
        vec![put("f:q", &"x".repeat(bytes))],
        no_attrs(),
    )
}

fn row_count(c: &mut Client, row: &str) -> usize {
    c.get_row(b"l".to_vec(), row.as_bytes().to_vec(), no_attrs())
        .unwrap()
        .len()
}

/// A framed-transport frame over `max_frame_size_in_mb` is refused although the request is
/// far under the (default, 64 MiB) request limit; the same request unframed, and a smaller
/// frame, are served.
#[test]
fn frame_size_limit_alone() {
    let (_dir, server, mut c) =
        limited(("hbase.regionserver.thrift.framed.max_frame_size_in_mb", "1"));
    let addr = server.thrift_addr();
    let mut framed = client(addr, true, false);
    assert!(put_big(&mut framed, "big", 1_500_000).is_err());
    assert_eq!(load(&server.metrics().wire.oversized), 1);
    assert_eq!(row_count(&mut c, "big"), 0);
    put_big(&mut c, "unframed", 1_500_000).unwrap();
    let mut framed = client(addr, true, true);
    put_big(&mut framed, "small", 900_000).unwrap();
    assert_eq!(row_count(&mut c, "unframed"), 1);
    assert_eq!(row_count(&mut c, "small"), 1);
    drop((c, framed));
    server.shutdown().unwrap();
}

/// A request over `cairn.thrift.max.request.bytes` is refused on either transport, its frame
/// being under the (default, 2 MiB) frame limit; a smaller one is served.
#[test]
fn request_size_limit_alone() {
    let (_dir, server, mut c) = limited(("cairn.thrift.max.request.bytes", "65536"));
    let addr = server.thrift_addr();
    for (framed, compact) in [(false, false), (true, false), (false, true), (true, true)] {
        let mut big = client(addr, framed, compact);
        assert!(
            put_big(&mut big, "big", 70_000).is_err(),
            "framed {framed}, compact {compact}"
        );
        let mut small = client(addr, framed, compact);
        put_big(&mut small, "small", 60_000).unwrap();
    }
    assert_eq!(load(&server.metrics().wire.oversized), 4);
    assert_eq!(row_count(&mut c, "big"), 0);
    assert_eq!(row_count(&mut c, "small"), 1);
    drop(c);
    server.shutdown().unwrap();
}

/// At `hbase.thrift.maxWorkerThreads`, a new connection is served: the quietest connection
/// with nothing in flight is closed to make room, one that never finished a request first.
#[test]
fn connection_limit_alone() {
    let (_dir, server, mut c) = limited(("hbase.thrift.maxWorkerThreads", "2"));
    let addr = server.thrift_addr();
    std::thread::sleep(Duration::from_millis(20));
    let mut second = client(addr, true, true);
    second.get_table_names().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    // At the cap: c, quieter than `second`, makes room for a socket that says nothing.
    let mut silent = TcpStream::connect(addr).unwrap();
    // (Give the acceptor time to take it in: a call on c before that would make c the less
    // quiet of the two.)
    std::thread::sleep(Duration::from_millis(300));
    assert!(c.get_table_names().is_err(), "c was closed to make room");
    // The silent socket goes before `second`, although it is the more recent.
    let mut third = client(addr, false, false);
    third.get_table_names().unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut b = [0u8; 1];
    assert_eq!(
        silent.read(&mut b).unwrap_or(0),
        0,
        "the silent socket made room"
    );
    second.get_table_names().unwrap();
    third.get_table_names().unwrap();
    let m = server.metrics();
    assert_eq!(load(&m.rejected_connections), 0);
    let open = || {
        m.open_connections
            .load(std::sync::atomic::Ordering::Acquire)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while open() > 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(open(), 2);
    drop((second, third));
    server.shutdown().unwrap();
}

/// A connection whose client sends nothing for `hbase.thrift.server.socket.read.timeout` is
/// closed, as HBase's Thrift server closes it: silent from the start, or between requests.
#[test]
fn read_timeout_alone() {
    let (_dir, server, mut c) = limited(("hbase.thrift.server.socket.read.timeout", "300"));
    let addr = server.thrift_addr();
    let mut silent = TcpStream::connect(addr).unwrap();
    std::thread::sleep(Duration::from_millis(900));
    assert!(
        c.get_table_names().is_err(),
        "an idle client's connection is closed"
    );
    silent
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut b = [0u8; 1];
    assert_eq!(silent.read(&mut b).unwrap_or(0), 0, "so is a silent socket");
    // A client that keeps talking is served throughout.
    let mut steady = client(addr, false, false);
    for _ in 0..6 {
        steady.get_table_names().unwrap();
        std::thread::sleep(Duration::from_millis(150));
    }
    drop(steady);
    server.shutdown().unwrap();
}

/// Past `cairn.thrift.max.open.scanners`, opening a scanner closes the least recently used
/// one, whose next call finds it gone as after an expired lease.
#[test]
fn open_scanner_limit_alone() {
    let (_dir, server, mut c) = limited(("cairn.thrift.max.open.scanners", "3"));
    let t = b"l".to_vec();
    c.mutate_row(t.clone(), b"r".to_vec(), vec![put("f:q", "v")], no_attrs())
        .unwrap();
    let ids: Vec<i32> = (0..3)
        .map(|_| {
            c.scanner_open(t.clone(), vec![], vec![], no_attrs())
                .unwrap()
        })
        .collect();
    // ids[0] is used again: ids[1] is now the least recently used.
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(c.scanner_get_list(ids[0], 0).unwrap().len(), 0);
    let fourth = c
        .scanner_open(t.clone(), vec![], vec![], no_attrs())
        .unwrap();
    let e = user_err::<IllegalArgument>(c.scanner_get_list(ids[1], 1));
    assert!(e.contains("invalid"), "{e}");
    assert_eq!(server.handler().scanners().evicted(), 1);
    for id in [ids[0], ids[2], fourth] {
        assert_eq!(c.scanner_get_list(id, 5).unwrap().len(), 1, "{id}");
    }
    drop(c);
    server.shutdown().unwrap();
}

/// `getRows` of more rows than `cairn.thrift.max.rows.per.call` is refused with an error
/// naming both numbers; `scannerGetList` asking for more gets at most that many.
#[test]
fn rows_per_call_limit_alone() {
    let (_dir, server, mut c) = limited(("cairn.thrift.max.rows.per.call", "5"));
    let t = b"l".to_vec();
    let batch: Vec<BatchMutation> = (0..12)
        .map(|i| BatchMutation {
            row: Some(format!("r{i:02}").into_bytes()),
            mutations: Some(vec![put("f:q", "v")]),
        })
        .collect();
    c.mutate_rows(t.clone(), batch, no_attrs()).unwrap();
    let rows =
        |n: usize| -> Vec<Vec<u8>> { (0..n).map(|i| format!("r{i:02}").into_bytes()).collect() };
    assert_eq!(c.get_rows(t.clone(), rows(5), no_attrs()).unwrap().len(), 5);
    let e = user_err::<IOError>(c.get_rows(t.clone(), rows(6), no_attrs()));
    assert!(e.contains("6 rows") && e.contains("limit is 5"), "{e}");
    let id = c
        .scanner_open(t.clone(), vec![], vec![], no_attrs())
        .unwrap();
    let sizes: Vec<usize> = (0..4)
        .map(|_| c.scanner_get_list(id, 100).unwrap().len())
        .collect();
    assert_eq!(sizes, [5, 5, 2, 0]);
    c.scanner_close(id).unwrap();
    drop(c);
    server.shutdown().unwrap();
}

#[test]
fn shutdown_flushes_memstores() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &[]);
    let mut c = client(server.thrift_addr(), false, true);
    c.create_table(b"d".to_vec(), vec![family("f", 1)]).unwrap();
    for i in 0..100 {
        c.mutate_row(
            b"d".to_vec(),
            format!("r{i}").into_bytes(),
            vec![put("f:q", "v")],
            no_attrs(),
        )
        .unwrap();
    }
    drop(c);
    server.shutdown().unwrap();
    let rs = RegionServer::open(ServerConfig::new(dir.path())).unwrap();
    assert_eq!(
        rs.recovery.edits_replayed, 0,
        "a graceful stop leaves nothing to replay"
    );
    let t = TableName::parse("d").unwrap();
    let rows = rs.scanner(&t, cairn_region::Scan::new()).unwrap().count();
    assert_eq!(rows, 100);
    rs.close().unwrap();
}

/// `scannerGetList` of any size (smaller, larger, 0), with writes landing between calls and a
/// flush in the middle, returns the rows of the scanner's snapshot in order, each once; a
/// closed scanner is refused, and a stop with a scanner left open loses nothing.
#[test]
fn scanner_calls_of_any_size_return_exactly_the_rows_of_the_snapshot() {
    let sizes = [100usize, 17, 300, 0, 1, 250, 64, 1000, 5, 1000];
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &[]);
    let mut c = client(server.thrift_addr(), false, false);
    let t = b"p".to_vec();
    let table = TableName::parse("p").unwrap();
    c.create_table(t.clone(), vec![family("f", 1)]).unwrap();
    let rows = |from: usize, to: usize, v: &str| -> Vec<BatchMutation> {
        (from..to)
            .map(|i| BatchMutation {
                row: Some(format!("r{i:05}").into_bytes()),
                mutations: Some(vec![put("f:q", v)]),
            })
            .collect()
    };
    c.mutate_rows(t.clone(), rows(0, 1500, "old"), no_attrs())
        .unwrap();
    let id = c
        .scanner_open_with_scan(t.clone(), empty_scan(), no_attrs())
        .unwrap();
    let mut got: Vec<(String, String)> = Vec::new();
    let mut calls = 0;
    for (i, n) in sizes.iter().cycle().enumerate() {
        // Writes after the scanner opened: new values and a new row it must not see.
        c.mutate_rows(t.clone(), rows(i * 7, i * 7 + 3, "new"), no_attrs())
            .unwrap();
        c.mutate_rows(t.clone(), rows(1500 + i, 1501 + i, "new"), no_attrs())
            .unwrap();
        if i == 4 {
            server.region_server().flush_table(&table).unwrap();
        }
        let batch = c.scanner_get_list(id, *n as i32).unwrap();
        calls += 1;
        assert!(batch.len() <= *n, "call {i}: {} rows for {n}", batch.len());
        if batch.is_empty() && *n > 0 {
            break;
        }
        for r in batch {
            let cols = r.columns.unwrap();
            let v = cols[&b"f:q".to_vec()].value.clone().unwrap();
            got.push((
                String::from_utf8(r.row.unwrap()).unwrap(),
                String::from_utf8(v).unwrap(),
            ));
        }
    }
    let want: Vec<(String, String)> = (0..1500)
        .map(|i| (format!("r{i:05}"), "old".to_string()))
        .collect();
    assert_eq!(got, want);
    assert!(calls > 5, "{calls} calls");
    c.scanner_close(id).unwrap();
    let e = user_err::<IllegalArgument>(c.scanner_get_list(id, 10));
    assert!(e.contains("invalid"), "{e}");

    let id = c
        .scanner_open_with_scan(t.clone(), empty_scan(), no_attrs())
        .unwrap();
    assert_eq!(c.scanner_get_list(id, 200).unwrap().len(), 200);
    drop(c);
    server.shutdown().unwrap();
    let rs = RegionServer::open(ServerConfig::new(dir.path())).unwrap();
    // Each call came after one new row (r01500, r01501, …) was written.
    assert_eq!(
        rs.scanner(&table, cairn_region::Scan::new())
            .unwrap()
            .count(),
        1500 + calls
    );
    rs.close().unwrap();
}

/// Rows a scanner reads ahead while its client is away are the rows the client then gets:
/// two scanners over different ranges, used in turn on one connection with gets and writes
/// (from another connection) between the calls, return their snapshot's rows in order, each
/// once, on a server that reads ahead (also with a budget smaller than one batch) and on one
/// that does not.
#[test]
fn rows_read_ahead_are_the_rows_the_client_gets_next() {
    for (budget, reads_ahead) in [("4194304", true), ("1", true), ("0", false)] {
        let dir = tempfile::tempdir().unwrap();
        let server = start(
            dir.path(),
            &[("cairn.thrift.scanner.read_ahead.bytes", budget)],
        );
        let mut c = client(server.thrift_addr(), false, false);
        let mut writer = client(server.thrift_addr(), true, true);
        let t = b"ra".to_vec();
        c.create_table(t.clone(), vec![family("f", 1)]).unwrap();
        let rows = |from: usize, to: usize, v: &str| -> Vec<BatchMutation> {
            (from..to)
                .map(|i| BatchMutation {
                    row: Some(format!("r{i:05}").into_bytes()),
                    mutations: Some(vec![put("f:q", &format!("{v}{i}"))]),
                })
                .collect()
        };
        c.mutate_rows(t.clone(), rows(0, 700, "v"), no_attrs())
            .unwrap();
        let whole = c
            .scanner_open_with_scan(t.clone(), empty_scan(), no_attrs())
            .unwrap();
        let part = c
            .scanner_open_with_stop(
                t.clone(),
                b"r00300".to_vec(),
                b"r00600".to_vec(),
                vec![b"f:q".to_vec()],
                no_attrs(),
            )
            .unwrap();
        let sizes = [100i32, 37, 0, 1, 150, 64, 2, 300];
        let (mut got_whole, mut got_part) = (Vec::new(), Vec::new());
        let (mut whole_done, mut part_done) = (false, false);
        for (i, n) in sizes.iter().cycle().enumerate().take(200) {
            if whole_done && part_done {
                break;
            }
            let (id, got, done) = if i % 2 == 0 && !whole_done || part_done {
                (whole, &mut got_whole, &mut whole_done)
            } else {
                (part, &mut got_part, &mut part_done)
            };
            let batch = c.scanner_get_list(id, *n).unwrap();
            assert!(
                batch.len() <= *n as usize,
                "call {i}: {} rows for {n}",
                batch.len()
            );
            if batch.is_empty() && *n > 0 {
                *done = true;
            }
            for r in batch {
                let v = r.columns.unwrap()[&b"f:q".to_vec()].value.clone().unwrap();
                got.push((
                    String::from_utf8(r.row.unwrap()).unwrap(),
                    String::from_utf8(v).unwrap(),
                ));
            }
            // Between calls: the client is away (the server reads ahead), overwrites rows the
            // scanners have not reached yet, and reads on the same connection.
            std::thread::sleep(Duration::from_millis(if i % 3 == 0 { 30 } else { 0 }));
            writer
                .mutate_rows(t.clone(), rows(i * 3, i * 3 + 5, "new"), no_attrs())
                .unwrap();
            let one = c
                .get_row(
                    t.clone(),
                    format!("r{:05}", i % 700).into_bytes(),
                    no_attrs(),
                )
                .unwrap();
            assert_eq!(one.len(), 1);
        }
        let want = |from: usize, to: usize| -> Vec<(String, String)> {
            (from..to)
                .map(|i| (format!("r{i:05}"), format!("v{i}")))
                .collect()
        };
        assert_eq!(got_whole, want(0, 700), "budget {budget}");
        assert_eq!(got_part, want(300, 600), "budget {budget}");
        let ahead = server
            .metrics()
            .rows_read_ahead
            .load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(
            ahead > 0,
            reads_ahead,
            "budget {budget}: {ahead} rows read ahead"
        );
        c.scanner_close(whole).unwrap();
        c.scanner_close(part).unwrap();
        server.shutdown().unwrap();
    }
}

/// A client that sends many calls before reading any answer (pipelining, as load generators
/// do) gets every answer, in order, each to its own call — with writes between them.
#[test]
fn pipelined_calls_are_answered_in_order() {
    use cairn_thrift::hbase::TRowResult;
    use thrift::protocol::{
        TFieldIdentifier, TMapIdentifier, TMessageIdentifier, TMessageType, TSerializable,
        TStructIdentifier, TType,
    };
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &[]);
    let mut c = client(server.thrift_addr(), false, false);
    let t = b"pipe".to_vec();
    c.create_table(t.clone(), vec![family("f", 1)]).unwrap();
    let batch: Vec<BatchMutation> = (0..50)
        .filter(|i| i % 5 != 3)
        .map(|i| BatchMutation {
            row: Some(format!("r{i:03}").into_bytes()),
            mutations: Some(vec![put("f:q", &format!("v{i}"))]),
        })
        .collect();
    c.mutate_rows(t.clone(), batch, no_attrs()).unwrap();

    // getRow for r000..r049 (every fifth from r003 missing), a mutateRow of r003 after the
    // 25th call, and getRow r003 again at the end.
    let mut calls = Vec::new();
    {
        let mut o = TBinaryOutputProtocol::new(&mut calls, true);
        let string_field = |o: &mut TBinaryOutputProtocol<&mut Vec<u8>>, id, v: &[u8]| {
            o.write_field_begin(&TFieldIdentifier::new("f", TType::String, id))
                .unwrap();
            o.write_bytes(v).unwrap();
            o.write_field_end().unwrap();
        };
        let mut seq = 0;
        let mut get_row = |o: &mut TBinaryOutputProtocol<&mut Vec<u8>>, row: &[u8]| {
            seq += 1;
            o.write_message_begin(&TMessageIdentifier::new("getRow", TMessageType::Call, seq))
                .unwrap();
            o.write_struct_begin(&TStructIdentifier::new("args"))
                .unwrap();
            string_field(o, 1, &t);
            string_field(o, 2, row);
            o.write_field_begin(&TFieldIdentifier::new("attributes", TType::Map, 3))
                .unwrap();
            o.write_map_begin(&TMapIdentifier::new(TType::String, TType::String, 0))
                .unwrap();
            o.write_map_end().unwrap();
            o.write_field_end().unwrap();
            o.write_field_stop().unwrap();
            o.write_struct_end().unwrap();
            o.write_message_end().unwrap();
        };
        for i in 0..50 {
            get_row(&mut o, format!("r{i:03}").as_bytes());
            if i == 24 {
                o.write_message_begin(&TMessageIdentifier::new(
                    "mutateRow",
                    TMessageType::Call,
                    1000,
                ))
                .unwrap();
                o.write_struct_begin(&TStructIdentifier::new("args"))
                    .unwrap();
                string_field(&mut o, 1, &t);
                string_field(&mut o, 2, b"r003");
                o.write_field_begin(&TFieldIdentifier::new("mutations", TType::List, 3))
                    .unwrap();
                o.write_list_begin(&thrift::protocol::TListIdentifier::new(TType::Struct, 1))
                    .unwrap();
                put("f:q", "late").write_to_out_protocol(&mut o).unwrap();
                o.write_list_end().unwrap();
                o.write_field_end().unwrap();
                o.write_field_stop().unwrap();
                o.write_struct_end().unwrap();
                o.write_message_end().unwrap();
            }
        }
        get_row(&mut o, b"r003");
        o.flush().unwrap();
    }
    let answers = send_raw(server.thrift_addr(), &calls);

    let mut i = TBinaryInputProtocol::new(answers.as_slice(), true);
    let mut got = Vec::new();
    while let Ok(m) = i.read_message_begin() {
        assert_eq!(m.message_type, TMessageType::Reply, "{m:?}");
        let mut rows: Vec<TRowResult> = Vec::new();
        i.read_struct_begin().unwrap();
        loop {
            let f = i.read_field_begin().unwrap();
            match (f.field_type, f.id) {
                (TType::Stop, _) => break,
                (TType::List, Some(0)) => {
                    let l = i.read_list_begin().unwrap();
                    for _ in 0..l.size {
                        rows.push(TRowResult::read_from_in_protocol(&mut i).unwrap());
                    }
                    i.read_list_end().unwrap();
                }
                other => panic!("call {} answered with {other:?}", m.sequence_number),
            }
            i.read_field_end().unwrap();
        }
        i.read_struct_end().unwrap();
        let values: Vec<String> = rows
            .iter()
            .flat_map(|r| r.columns.as_ref().unwrap().values())
            .map(|c| String::from_utf8(c.value.clone().unwrap()).unwrap())
            .collect();
        got.push((m.sequence_number, values));
    }
    let mut want: Vec<(i32, Vec<String>)> = Vec::new();
    for i in 0..50 {
        let seq = i + 1;
        want.push((
            seq,
            if i % 5 == 3 {
                vec![]
            } else {
                vec![format!("v{i}")]
            },
        ));
        if i == 24 {
            want.push((1000, vec![]));
        }
    }
    want.push((51, vec!["late".to_string()]));
    assert_eq!(got, want);
}
