//! The native RPC port's limits and its authorization at the byte level: the call queue's
//! byte bound, the scanner cap, the opening's deadline, the idle timeout, and who may run
//! admin operations with SIMPLE user names. (HBase's own Java client checks the same in
//! cairn-cli's `limits` and `authorization` tests.)

#[path = "support/rpc.rs"]
mod rpc;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_region::{RegionServer, ServerConfig};
use cairn_rpc::pb;
use cairn_server::rpc::RpcConfig;
use cairn_server::security::SecurityConfig;
use cairn_server::{Config, Server};

use rpc::{create_request, mutate, region_spec, regions, table_name, Client};

fn start_with(dir: &std::path::Path, rpc: RpcConfig, security: SecurityConfig) -> Server {
    let rs: Arc<RegionServer> = RegionServer::open(ServerConfig::new(dir)).unwrap();
    Server::start_with(
        rs,
        Config {
            data_dir: dir.to_path_buf(),
            thrift_addr: "127.0.0.1:0".into(),
            http_addr: None,
            rpc: Some(RpcConfig {
                addr: "127.0.0.1:0".into(),
                ..rpc
            }),
            security,
            info_addr: None,
            ..Config::default()
        },
    )
    .unwrap()
}

fn start(dir: &std::path::Path, rpc: RpcConfig) -> Server {
    start_with(dir, rpc, SecurityConfig::default())
}

fn create(addr: SocketAddr, t: &str) -> Vec<u8> {
    let mut m = Client::connect(addr, "MasterService");
    let _: pb::CreateTableResponse = m.call("CreateTable", &create_request(t), b"").message();
    regions(addr, t).remove(0)
}

/// Whether the server closed `s` within `within` (reads see the end of the stream, or an
/// error that is not a timeout).
fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    s.set_read_timeout(Some(within)).unwrap();
    let mut sink = [0u8; 256];
    loop {
        match s.read(&mut sink) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) => {
                return !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                )
            }
        }
    }
}

#[test]
fn the_call_queue_is_bounded_in_bytes_as_hbase_bounds_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        RpcConfig {
            max_queue_bytes: 4096,
            ..RpcConfig::default()
        },
    );
    let addr = server.rpc_addr().unwrap();
    let region = create(addr, "qb");
    let mut c = Client::connect(addr, "ClientService");
    let (small, cells) = mutate(&region, b"small", &[(b"q", b"v")]);
    let _: pb::MutateResponse = c.call("Mutate", &small, &cells).message();
    // One call larger than the whole bound is refused, whatever else is queued.
    let big_value = vec![7u8; 8000];
    let (big, cells) = mutate(&region, b"big", &[(b"q", &big_value)]);
    let r = c.call("Mutate", &big, &cells);
    let (class, message) = r.exception().expect("refused");
    assert_eq!(class, "org.apache.hadoop.hbase.CallQueueTooBigException");
    let name = server.rpc().unwrap().server_name();
    assert_eq!(
        message,
        format!("Call queue is full on {name}, is hbase.ipc.server.max.callqueue.size too small?")
    );
    let e = r.header.exception.as_ref().unwrap();
    assert_eq!(
        e.do_not_retry,
        Some(false),
        "the client backs off and retries"
    );
    assert_eq!(e.server_overloaded, Some(true));
    // The bytes of answered calls are given back: small calls go on being served.
    for i in 0..50 {
        let (m, cells) = mutate(&region, format!("r{i}").as_bytes(), &[(b"q", &[1u8; 1000])]);
        let _: pb::MutateResponse = c.call("Mutate", &m, &cells).message();
    }
    let get = pb::GetRequest {
        region: region_spec(region.clone()),
        get: pb::Get {
            row: b"big".to_vec(),
            ..Default::default()
        },
    };
    let resp: pb::GetResponse = c.call("Get", &get, b"").message();
    assert_eq!(
        resp.result
            .and_then(|r| r.associated_cell_count)
            .unwrap_or(0),
        0,
        "the refused put was not applied"
    );
}

#[test]
fn scanners_past_the_cap_close_the_least_recently_used() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        RpcConfig {
            max_open_scanners: 2,
            ..RpcConfig::default()
        },
    );
    let addr = server.rpc_addr().unwrap();
    let region = create(addr, "sc");
    let mut c = Client::connect(addr, "ClientService");
    for row in [b"a", b"b", b"c"] {
        let (m, cells) = mutate(&region, row, &[(b"q", b"v")]);
        let _: pb::MutateResponse = c.call("Mutate", &m, &cells).message();
    }
    let open = pb::ScanRequest {
        region: Some(region_spec(region.clone())),
        scan: Some(pb::Scan::default()),
        number_of_rows: Some(1),
        ..Default::default()
    };
    let mut ids = Vec::new();
    for _ in 0..3 {
        let r: pb::ScanResponse = c.call("Scan", &open, b"").message();
        ids.push(r.scanner_id.unwrap());
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(server.rpc().unwrap().open_scanners(), 2);
    assert_eq!(server.rpc().unwrap().evicted_scanners(), 1);
    let next = |id: u64| pb::ScanRequest {
        scanner_id: Some(id),
        number_of_rows: Some(1),
        ..Default::default()
    };
    let r = c.call("Scan", &next(ids[0]), b"");
    let (class, message) = r.exception().expect("the first scanner made room");
    assert_eq!(class, "org.apache.hadoop.hbase.UnknownScannerException");
    assert!(
        message.starts_with(&format!("Unknown scanner '{}'.", ids[0])),
        "{message}"
    );
    for id in &ids[1..] {
        let r: pb::ScanResponse = c.call("Scan", &next(*id), b"").message();
        assert_eq!(r.cells_per_result, vec![1], "scanner {id} reads on");
    }
}

#[test]
fn an_opening_that_says_nothing_or_trickles_is_closed_at_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        RpcConfig {
            header_timeout: Duration::from_millis(500),
            ..RpcConfig::default()
        },
    );
    let addr = server.rpc_addr().unwrap();
    let started = Instant::now();
    let mut silent = TcpStream::connect(addr).unwrap();
    let mut half = TcpStream::connect(addr).unwrap();
    half.write_all(b"HBa").unwrap();
    let mut trickle = TcpStream::connect(addr).unwrap();
    trickle.write_all(b"HBas\x00\x50").unwrap();
    let writer = {
        let mut t = trickle.try_clone().unwrap();
        std::thread::spawn(move || {
            // A connection header announced, then a byte every 100 ms.
            let _ = t.write_all(&100u32.to_be_bytes());
            for _ in 0..40 {
                if t.write_all(b"\x0a").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    for (what, s) in [
        ("silent", &mut silent),
        ("half a preamble", &mut half),
        ("a trickled header", &mut trickle),
    ] {
        assert!(
            closed_within(s, Duration::from_secs(3)),
            "{what} still open"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(3));
    writer.join().unwrap();
    // A real client is served meanwhile and after.
    let mut c = Client::connect(addr, "MasterService");
    let _: pb::GetTableNamesResponse = c
        .call("GetTableNames", &pb::GetTableNamesRequest::default(), b"")
        .message();
}

#[test]
fn an_idle_connection_is_closed_and_a_steady_one_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        RpcConfig {
            idle_timeout: Duration::from_millis(1200),
            scanner_lease: Duration::from_millis(200),
            ..RpcConfig::default()
        },
    );
    let addr = server.rpc_addr().unwrap();
    let mut idle = Client::connect(addr, "MasterService");
    let mut steady = Client::connect(addr, "MasterService");
    let names = pb::GetTableNamesRequest::default();
    let _: pb::GetTableNamesResponse = idle.call("GetTableNames", &names, b"").message();
    let until = Instant::now() + Duration::from_millis(3000);
    while Instant::now() < until {
        let _: pb::GetTableNamesResponse = steady.call("GetTableNames", &names, b"").message();
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        closed_within(&mut idle.s, Duration::from_secs(3)),
        "the idle connection is closed"
    );
    let _: pb::GetTableNamesResponse = steady.call("GetTableNames", &names, b"").message();
}

#[test]
fn admin_operations_need_a_superuser_by_simple_name() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(
        dir.path(),
        RpcConfig::default(),
        SecurityConfig {
            authorization: true,
            superusers: vec!["admin".into()],
            ..SecurityConfig::default()
        },
    );
    let addr = server.rpc_addr().unwrap();
    let as_user = |u: &str, service: &str| Client::connect_as(addr, service, Some((u, None)));
    let mut bob = as_user("bob", "MasterService");
    let r = bob.call("CreateTable", &create_request("t"), b"");
    let (class, message) = r.exception().expect("bob may not create tables");
    assert_eq!(
        class,
        "org.apache.hadoop.hbase.security.AccessDeniedException"
    );
    assert_eq!(
        message,
        "Insufficient permissions for user 'bob' (global, action=ADMIN)"
    );
    assert_eq!(
        r.header.exception.as_ref().unwrap().do_not_retry,
        Some(true)
    );
    let mut admin = as_user("admin", "MasterService");
    let _: pb::CreateTableResponse = admin
        .call("CreateTable", &create_request("t"), b"")
        .message();
    // Reads and writes are open to bob, and so are the master's look-ups.
    let region = regions(addr, "t").remove(0);
    let mut bob_data = as_user("bob", "ClientService");
    let (m, cells) = mutate(&region, b"r", &[(b"q", b"v")]);
    let _: pb::MutateResponse = bob_data.call("Mutate", &m, &cells).message();
    let _: pb::GetTableNamesResponse = bob
        .call("GetTableNames", &pb::GetTableNamesRequest::default(), b"")
        .message();
    // Nor may bob flush a region, nor delete the table; admin may.
    let mut bob_admin = as_user("bob", "AdminService");
    let flush = pb::FlushRegionRequest {
        region: region_spec(region.clone()),
        ..Default::default()
    };
    let r = bob_admin.call("FlushRegion", &flush, b"");
    assert_eq!(
        r.exception().map(|e| e.0).as_deref(),
        Some("org.apache.hadoop.hbase.security.AccessDeniedException")
    );
    let disable = pb::DisableTableRequest {
        table_name: table_name("t"),
        ..Default::default()
    };
    let r = bob.call("DisableTable", &disable, b"");
    assert!(r.exception().is_some());
    // No user at all is nobody, and nobody is no superuser.
    let mut anonymous = Client::connect(addr, "MasterService");
    let r = anonymous.call("DisableTable", &disable, b"");
    assert_eq!(
        r.exception().map(|e| e.1).as_deref(),
        Some("Insufficient permissions for user 'null' (global, action=ADMIN)")
    );
    let _: pb::DisableTableResponse = admin.call("DisableTable", &disable, b"").message();
    let delete = pb::DeleteTableRequest {
        table_name: table_name("t"),
        ..Default::default()
    };
    let _: pb::DeleteTableResponse = admin.call("DeleteTable", &delete, b"").message();
    // Acting for another user (a proxy user) is refused with the connection.
    let mut proxy = Client::connect_as(addr, "MasterService", Some(("admin", Some("bob"))));
    let _ = proxy.send("GetTableNames", &pb::GetTableNamesRequest::default(), b"");
    let r = proxy.read().expect("a fatal answer");
    assert_eq!(
        r.exception().map(|e| e.0).as_deref(),
        Some("org.apache.hadoop.hbase.security.AccessDeniedException")
    );
    assert!(proxy.read().is_none(), "and the connection closed");
}

#[test]
fn without_authorization_anyone_may_administer() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), RpcConfig::default());
    let addr = server.rpc_addr().unwrap();
    let mut bob = Client::connect_as(addr, "MasterService", Some(("bob", None)));
    let _: pb::CreateTableResponse = bob.call("CreateTable", &create_request("t"), b"").message();
    let disable = pb::DisableTableRequest {
        table_name: table_name("t"),
        ..Default::default()
    };
    let _: pb::DisableTableResponse = bob.call("DisableTable", &disable, b"").message();
    let delete = pb::DeleteTableRequest {
        table_name: table_name("t"),
        ..Default::default()
    };
    let _: pb::DeleteTableResponse = bob.call("DeleteTable", &delete, b"").message();
}
