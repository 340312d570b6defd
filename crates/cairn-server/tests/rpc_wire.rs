//! The native RPC port at the byte level, with a hand-rolled client built on cairn-rpc's
//! frames: preambles, connection headers, pipelined calls, limits, and bytes that are not
//! HBase RPC at all. (HBase's own Java client is exercised by cairn-cli's `java_client` test.)

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use cairn_cell::KeyValue;
use cairn_region::{RegionServer, ServerConfig};
use cairn_rpc::cellblock::{self, CellBlockReader};
use cairn_rpc::pb;
use cairn_server::rpc::RpcConfig;
use cairn_server::{Config, Server};
use prost::Message;

fn start(dir: &std::path::Path, rpc: RpcConfig) -> Server {
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
            info_addr: None,
            ..Config::default()
        },
    )
    .unwrap()
}

/// A response as read off the wire.
struct Response {
    header: pb::ResponseHeader,
    body: Bytes,
    cells: Bytes,
}

impl Response {
    fn message<M: Message + Default>(&self) -> M {
        assert!(
            self.header.exception.is_none(),
            "call failed: {:?}",
            self.header.exception
        );
        M::decode_length_delimited(self.body.clone()).unwrap()
    }
    fn exception_class(&self) -> Option<String> {
        self.header
            .exception
            .as_ref()
            .and_then(|e| e.exception_class_name.clone())
    }
}

struct Client {
    s: TcpStream,
    next_id: u32,
}

impl Client {
    fn connect(addr: SocketAddr, service: &str) -> Client {
        Client::connect_with_codec(addr, service, Some(cellblock::KEY_VALUE_CODEC))
    }

    /// A connection whose header names cell-block codec `codec` (none: cells travel inside
    /// the messages).
    fn connect_with_codec(addr: SocketAddr, service: &str, codec: Option<&str>) -> Client {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s.write_all(b"HBas\x00\x50").unwrap();
        let h = pb::ConnectionHeader {
            service_name: Some(service.into()),
            cell_block_codec_class: codec.map(str::to_string),
            ..Default::default()
        };
        let b = h.encode_to_vec();
        s.write_all(&(b.len() as u32).to_be_bytes()).unwrap();
        s.write_all(&b).unwrap();
        Client { s, next_id: 1 }
    }

    /// Sends a call without waiting; returns its id.
    fn send(&mut self, method: &str, param: &impl Message, cells: &[u8]) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        let h = pb::RequestHeader {
            call_id: Some(id),
            method_name: Some(method.into()),
            request_param: Some(true),
            cell_block_meta: (!cells.is_empty()).then_some(pb::CellBlockMeta {
                length: Some(cells.len() as u32),
            }),
            ..Default::default()
        };
        let mut f = Vec::new();
        h.encode_length_delimited(&mut f).unwrap();
        param.encode_length_delimited(&mut f).unwrap();
        f.extend_from_slice(cells);
        self.s.write_all(&(f.len() as u32).to_be_bytes()).unwrap();
        self.s.write_all(&f).unwrap();
        id
    }

    fn read(&mut self) -> Option<Response> {
        read_response(&mut self.s)
    }

    fn call(&mut self, method: &str, param: &impl Message, cells: &[u8]) -> Response {
        let id = self.send(method, param, cells);
        let r = self.read().expect("a response");
        assert_eq!(r.header.call_id, Some(id));
        r
    }
}

fn read_response(s: &mut TcpStream) -> Option<Response> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).ok()?;
    let mut buf = vec![0u8; u32::from_be_bytes(len) as usize];
    s.read_exact(&mut buf).ok()?;
    let mut b = Bytes::from(buf);
    let header = pb::ResponseHeader::decode_length_delimited(&mut b).unwrap();
    let cells_len = header
        .cell_block_meta
        .as_ref()
        .and_then(|m| m.length)
        .unwrap_or(0) as usize;
    let cells = b.split_off(b.len() - cells_len);
    Some(Response {
        header,
        body: b,
        cells,
    })
}

fn region_spec(name: Vec<u8>) -> pb::RegionSpecifier {
    pb::RegionSpecifier {
        r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
        value: name,
    }
}

fn table_name(t: &str) -> pb::TableName {
    pb::TableName {
        namespace: b"default".to_vec(),
        qualifier: t.as_bytes().to_vec(),
    }
}

/// Creates table `t` with family `f`, split at `splits`, through MasterService.
fn create(addr: SocketAddr, t: &str, splits: &[&[u8]]) {
    let mut m = Client::connect(addr, "MasterService");
    let req = pb::CreateTableRequest {
        table_schema: pb::TableSchema {
            table_name: Some(table_name(t)),
            column_families: vec![pb::ColumnFamilySchema {
                name: b"f".to_vec(),
                attributes: vec![pb::BytesBytesPair {
                    first: b"VERSIONS".to_vec(),
                    second: b"3".to_vec(),
                }],
                ..Default::default()
            }],
            ..Default::default()
        },
        split_keys: splits.iter().map(|s| s.to_vec()).collect(),
        ..Default::default()
    };
    let r: pb::CreateTableResponse = m.call("CreateTable", &req, b"").message();
    assert!(r.proc_id.is_some());
}

/// The region names of table `t`, read from meta as the client's locator does.
fn regions(addr: SocketAddr, t: &str) -> Vec<Vec<u8>> {
    let mut c = Client::connect(addr, "ClientService");
    let req = pb::ScanRequest {
        region: Some(region_spec(b"hbase:meta,,1".to_vec())),
        scan: Some(pb::Scan {
            // As HBase's MetaTableAccessor bounds a table's region rows (meta's own order).
            start_row: Some(format!("{t},,").into_bytes()),
            stop_row: Some(format!("{t} ,,").into_bytes()),
            column: vec![pb::Column {
                family: b"info".to_vec(),
                qualifier: vec![b"regioninfo".to_vec()],
            }],
            ..Default::default()
        }),
        number_of_rows: Some(100),
        ..Default::default()
    };
    let r = c.call("Scan", &req, b"");
    let resp: pb::ScanResponse = r.message();
    let mut cells = CellBlockReader::new(r.cells.clone());
    let mut names = Vec::new();
    for n in &resp.cells_per_result {
        let row = cells.take(*n as usize).unwrap();
        names.push(row[0].as_cell().row().to_vec());
    }
    names
}

fn put_cells(row: &[u8], cols: &[(&[u8], &[u8])]) -> (pb::MutationProto, Vec<u8>) {
    let mut block = Vec::new();
    for (q, v) in cols {
        let kv = KeyValue::put(row, b"f", q, i64::MAX, v).unwrap();
        cellblock::encode_cell(&mut block, &kv.as_cell(), false);
    }
    (
        pb::MutationProto {
            row: Some(row.to_vec()),
            mutate_type: Some(pb::mutation_proto::MutationType::Put as i32),
            associated_cell_count: Some(cols.len() as i32),
            ..Default::default()
        },
        block,
    )
}

#[test]
fn registry_preamble_answers_the_cluster_id_and_closes() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), RpcConfig::default());
    let addr = server.rpc_addr().unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"Regist").unwrap();
    let r = read_response(&mut s).unwrap();
    assert_eq!(r.header.call_id, Some(u32::MAX), "call id -1");
    let m: pb::GetConnectionRegistryResponse = r.message();
    assert_eq!(m.cluster_id, server.rpc().unwrap().cluster_id());
    assert_eq!(m.cluster_id.len(), 36);
    let mut rest = Vec::new();
    assert_eq!(
        s.read_to_end(&mut rest).unwrap(),
        0,
        "then the server closes"
    );
}

#[test]
fn garbage_and_bad_headers_close_one_connection_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), RpcConfig::default());
    let addr = server.rpc_addr().unwrap();
    // Not HBase at all.
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let r = read_response(&mut s).unwrap();
    assert_eq!(
        r.exception_class().as_deref(),
        Some("org.apache.hadoop.hbase.ipc.FatalConnectionException")
    );
    // A service that does not exist.
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"HBas\x00\x50").unwrap();
    let h = pb::ConnectionHeader {
        service_name: Some("NoSuchService".into()),
        ..Default::default()
    }
    .encode_to_vec();
    s.write_all(&(h.len() as u32).to_be_bytes()).unwrap();
    s.write_all(&h).unwrap();
    let r = read_response(&mut s).unwrap();
    assert_eq!(
        r.exception_class().as_deref(),
        Some("org.apache.hadoop.hbase.ipc.UnknownServiceException")
    );
    // A frame whose header length runs past the frame: the connection is dropped.
    let mut c = Client::connect(addr, "ClientService");
    c.s.write_all(&5u32.to_be_bytes()).unwrap();
    c.s.write_all(&[0x7f, 1, 2, 3, 4]).unwrap();
    let r = c.read().unwrap();
    assert!(r.exception_class().is_some());
    assert!(c.read().is_none(), "closed after a broken frame");
    // Random bytes after a good connection header.
    for seed in 0..20u64 {
        let mut c = Client::connect(addr, "ClientService");
        let mut x = seed.wrapping_mul(0x9e3779b97f4a7c15) | 1;
        let junk: Vec<u8> = (0..200)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let _ = c.s.write_all(&junk);
        let _ = c.s.shutdown(std::net::Shutdown::Write);
        while c.read().is_some() {}
    }
    // A truncated connection.
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"HBa").unwrap();
    drop(s);
    // The server still serves.
    let mut m = Client::connect(addr, "MasterService");
    let r: pb::IsMasterRunningResponse = m
        .call("IsMasterRunning", &pb::IsMasterRunningRequest {}, b"")
        .message();
    assert!(r.is_master_running);
}

#[test]
fn a_malformed_parameter_fails_its_call_and_the_connection_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), RpcConfig::default());
    let addr = server.rpc_addr().unwrap();
    let mut c = Client::connect(addr, "ClientService");
    // A GetRequest whose field 1 claims 100 bytes that are not there.
    let bad = pb::NameBytesPair {
        name: "x".into(),
        value: Some(vec![0x0a, 100, 1, 2]),
    };
    // Encoded as a NameBytesPair, decoded by the server as a GetRequest: field 1 (region)
    // is the string "x", which is not a RegionSpecifier.
    let r = c.call("Get", &bad, b"");
    assert_eq!(
        r.exception_class().as_deref(),
        Some("org.apache.hadoop.hbase.DoNotRetryIOException")
    );
    assert_eq!(
        r.header.exception.as_ref().unwrap().do_not_retry,
        Some(true)
    );
    let r = c.call("NoSuchMethod", &pb::IsMasterRunningRequest {}, b"");
    assert_eq!(
        r.exception_class().as_deref(),
        Some("org.apache.hadoop.hbase.DoNotRetryIOException")
    );
    // Unknown region.
    let g = pb::GetRequest {
        region: region_spec(b"nosuch,,1.abc.".to_vec()),
        get: pb::Get {
            row: b"r".to_vec(),
            ..Default::default()
        },
    };
    let r = c.call("Get", &g, b"");
    assert_eq!(
        r.exception_class().as_deref(),
        Some("org.apache.hadoop.hbase.NotServingRegionException")
    );
    assert_eq!(
        r.header.exception.as_ref().unwrap().do_not_retry,
        Some(false)
    );
}

#[test]
fn requests_over_the_size_limit_are_refused_by_call_id() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        RpcConfig {
            max_request_size: 1024,
            ..RpcConfig::default()
        },
    );
    let addr = server.rpc_addr().unwrap();
    let mut c = Client::connect(addr, "ClientService");
    let big = pb::NameBytesPair {
        name: "x".into(),
        value: Some(vec![7; 4096]),
    };
    let id = c.send("Get", &big, b"");
    let r = c.read().unwrap();
    assert_eq!(r.header.call_id, Some(id));
    assert_eq!(
        r.exception_class().as_deref(),
        Some("org.apache.hadoop.hbase.exceptions.RequestTooBigException")
    );
}

#[test]
fn writes_reads_scans_and_meta_through_the_wire() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), RpcConfig::default());
    let addr = server.rpc_addr().unwrap();
    create(addr, "t", &[b"m"]);
    let names = regions(addr, "t");
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[0].starts_with(b"t,,"));
    assert!(names[1].starts_with(b"t,m,"));
    let mut c = Client::connect(addr, "ClientService");
    // Rows a..z, each in its region; a batch of 26 puts in two region actions.
    let mut by_region: [Vec<(pb::MutationProto, Vec<u8>)>; 2] = [Vec::new(), Vec::new()];
    for b in b'a'..=b'z' {
        let row = [b];
        let v = [b, b];
        by_region[usize::from(b >= b'm')].push(put_cells(&row, &[(b"q", &v)]));
    }
    let mut block = Vec::new();
    let mut req = pb::MultiRequest::default();
    let mut index = 0;
    for (i, puts) in by_region.iter().enumerate() {
        let mut ra = pb::RegionAction {
            region: region_spec(names[i].clone()),
            ..Default::default()
        };
        for (m, cells) in puts {
            ra.action.push(pb::Action {
                index: Some(index),
                mutation: Some(m.clone()),
                ..Default::default()
            });
            index += 1;
            block.extend_from_slice(cells);
        }
        req.region_action.push(ra);
    }
    // A put to a missing family in the second region: that action fails, the rest apply.
    let kv = KeyValue::put(b"zz", b"nofamily", b"q", i64::MAX, b"v").unwrap();
    cellblock::encode_cell(&mut block, &kv.as_cell(), false);
    req.region_action[1].action.push(pb::Action {
        index: Some(index),
        mutation: Some(pb::MutationProto {
            row: Some(b"zz".to_vec()),
            mutate_type: Some(pb::mutation_proto::MutationType::Put as i32),
            associated_cell_count: Some(1),
            ..Default::default()
        }),
        ..Default::default()
    });
    let resp: pb::MultiResponse = c.call("Multi", &req, &block).message();
    assert_eq!(resp.region_action_result.len(), 2);
    let second = &resp.region_action_result[1];
    let failed: Vec<_> = second
        .result_or_exception
        .iter()
        .filter(|r| r.exception.is_some())
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].index, Some(index));
    assert_eq!(
        failed[0].exception.as_ref().unwrap().name,
        "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException"
    );
    let ok = resp
        .region_action_result
        .iter()
        .flat_map(|r| &r.result_or_exception)
        .filter(|r| r.result.is_some())
        .count();
    assert_eq!(ok, 26);
    // A get of each row from its region, values in the cell block.
    for b in [b'a', b'l', b'm', b'z'] {
        let g = pb::GetRequest {
            region: region_spec(names[usize::from(b >= b'm')].clone()),
            get: pb::Get {
                row: vec![b],
                ..Default::default()
            },
        };
        let r = c.call("Get", &g, b"");
        let resp: pb::GetResponse = r.message();
        assert_eq!(resp.result.unwrap().associated_cell_count, Some(1));
        let cell = CellBlockReader::new(r.cells.clone()).take(1).unwrap();
        assert_eq!(cell[0].as_cell().value, [b, b]);
    }
    // A row in the wrong region.
    let g = pb::GetRequest {
        region: region_spec(names[0].clone()),
        get: pb::Get {
            row: b"x".to_vec(),
            ..Default::default()
        },
    };
    let r = c.call("Get", &g, b"");
    assert_eq!(
        r.exception_class().as_deref(),
        Some("org.apache.hadoop.hbase.regionserver.WrongRegionException")
    );
    // A scan of the second region, 5 rows per call, to its end.
    let mut got = Vec::new();
    let open = pb::ScanRequest {
        region: Some(region_spec(names[1].clone())),
        scan: Some(pb::Scan::default()),
        number_of_rows: Some(5),
        ..Default::default()
    };
    let r = c.call("Scan", &open, b"");
    let mut resp: pb::ScanResponse = r.message();
    let id = resp.scanner_id.unwrap();
    assert!(
        resp.mvcc_read_point.unwrap_or(0) > 0,
        "the read point the client reopens at after a region move"
    );
    let mut cells = r.cells.clone();
    // The first call after the open carries 0.
    let mut seq = u64::MAX;
    loop {
        let mut rd = CellBlockReader::new(cells.clone());
        for n in &resp.cells_per_result {
            got.push(rd.take(*n as usize).unwrap()[0].as_cell().row().to_vec());
        }
        if resp.more_results_in_region != Some(true) {
            break;
        }
        seq = seq.wrapping_add(1);
        let next = pb::ScanRequest {
            scanner_id: Some(id),
            number_of_rows: Some(5),
            next_call_seq: Some(seq),
            ..Default::default()
        };
        let r = c.call("Scan", &next, b"");
        resp = r.message();
        cells = r.cells.clone();
    }
    let want: Vec<Vec<u8>> = (b'm'..=b'z').map(|b| vec![b]).collect();
    assert_eq!(got, want);
    // A next call out of sequence (a retried call the server already answered) is refused,
    // so no rows are skipped silently; the scanner is then gone.
    let r = c.call("Scan", &open, b"");
    let resp2: pb::ScanResponse = r.message();
    let id2 = resp2.scanner_id.unwrap();
    let skip = pb::ScanRequest {
        scanner_id: Some(id2),
        number_of_rows: Some(5),
        next_call_seq: Some(5),
        ..Default::default()
    };
    let r = c.call("Scan", &skip, b"");
    assert_eq!(
        r.exception_class().as_deref(),
        Some("org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException")
    );
    assert_eq!(
        r.header.exception.as_ref().unwrap().do_not_retry,
        Some(true)
    );
    // The scanner closed itself at the region's end.
    let next = pb::ScanRequest {
        scanner_id: Some(id),
        number_of_rows: Some(5),
        ..Default::default()
    };
    let r = c.call("Scan", &next, b"");
    assert_eq!(
        r.exception_class().as_deref(),
        Some("org.apache.hadoop.hbase.UnknownScannerException")
    );
}

/// A connection whose header names no codec gets and gives cells inside the messages; one
/// naming `KeyValueCodecWithTags` sends cells with tags (here a tag of type 1) that read back
/// through either codec. (cairn keeps no tags of client cells: what it sends has none.)
#[test]
fn connections_without_a_codec_or_with_tags_write_and_read() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), RpcConfig::default());
    let addr = server.rpc_addr().unwrap();
    create(addr, "codecs", &[]);
    let region = regions(addr, "codecs").remove(0);
    let get = |row: &[u8]| pb::GetRequest {
        region: region_spec(region.clone()),
        get: pb::Get {
            row: row.to_vec(),
            ..Default::default()
        },
    };

    let mut plain = Client::connect_with_codec(addr, "ClientService", None);
    let put = pb::MutateRequest {
        region: region_spec(region.clone()),
        mutation: pb::MutationProto {
            row: Some(b"r1".to_vec()),
            mutate_type: Some(pb::mutation_proto::MutationType::Put as i32),
            column_value: vec![pb::mutation_proto::ColumnValue {
                family: b"f".to_vec(),
                qualifier_value: vec![pb::mutation_proto::column_value::QualifierValue {
                    qualifier: Some(b"q".to_vec()),
                    value: Some(b"v1".to_vec()),
                    ..Default::default()
                }],
            }],
            ..Default::default()
        },
        ..Default::default()
    };
    let _: pb::MutateResponse = plain.call("Mutate", &put, b"").message();
    let r = plain.call("Get", &get(b"r1"), b"");
    assert!(r.cells.is_empty(), "no codec, yet a cell block came");
    let result: pb::GetResponse = r.message();
    let cells = result.result.unwrap().cell;
    assert_eq!(cells.len(), 1, "{cells:?}");
    assert_eq!(cells[0].value.as_deref(), Some(&b"v1"[..]));

    let mut tagged = Client::connect_with_codec(
        addr,
        "ClientService",
        Some(cellblock::KEY_VALUE_CODEC_WITH_TAGS),
    );
    // One tag: length 2 (type + one byte), type 1, value "x".
    let tags = vec![0, 2, 1, b'x'];
    let kv = KeyValue::put(b"r2", b"f", b"q", i64::MAX, b"v2")
        .unwrap()
        .with_tags(tags)
        .unwrap();
    let mut block = Vec::new();
    cellblock::encode_cell(&mut block, &kv.as_cell(), true);
    let put = pb::MutateRequest {
        region: region_spec(region.clone()),
        mutation: pb::MutationProto {
            row: Some(b"r2".to_vec()),
            mutate_type: Some(pb::mutation_proto::MutationType::Put as i32),
            associated_cell_count: Some(1),
            ..Default::default()
        },
        ..Default::default()
    };
    let _: pb::MutateResponse = tagged.call("Mutate", &put, &block).message();
    let mut untagged = Client::connect(addr, "ClientService");
    for (row, value) in [(&b"r1"[..], &b"v1"[..]), (b"r2", b"v2")] {
        for c in [&mut tagged, &mut untagged] {
            let r = c.call("Get", &get(row), b"");
            let got = cairn_rpc::cellblock::CellBlockReader::new(r.cells.clone())
                .next()
                .unwrap()
                .unwrap();
            assert_eq!(got.as_cell().row(), row);
            assert_eq!(got.as_cell().value, value);
            let result: pb::GetResponse = r.message();
            assert_eq!(result.result.unwrap().associated_cell_count, Some(1));
        }
    }
}

#[test]
fn pipelined_calls_are_answered_as_they_finish() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), RpcConfig::default());
    let addr = server.rpc_addr().unwrap();
    create(addr, "p", &[]);
    let region = regions(addr, "p").remove(0);
    let mut c = Client::connect(addr, "ClientService");
    // Load enough rows that a scan over all of them takes a while.
    let mut block = Vec::new();
    let mut ra = pb::RegionAction {
        region: region_spec(region.clone()),
        ..Default::default()
    };
    for i in 0..20_000u32 {
        let row = format!("r{i:06}");
        let (m, cells) = put_cells(row.as_bytes(), &[(b"q", &[1u8; 100])]);
        ra.action.push(pb::Action {
            index: Some(i),
            mutation: Some(m),
            ..Default::default()
        });
        block.extend_from_slice(&cells);
    }
    let req = pb::MultiRequest {
        region_action: vec![ra],
        ..Default::default()
    };
    let _: pb::MultiResponse = c.call("Multi", &req, &block).message();
    // A slow call (a scan of every row in one call) and then quick ones, all sent at once.
    let mut out_of_order = false;
    for _ in 0..5 {
        let slow = c.send(
            "Scan",
            &pb::ScanRequest {
                region: Some(region_spec(region.clone())),
                scan: Some(pb::Scan::default()),
                number_of_rows: Some(100_000),
                close_scanner: Some(true),
                ..Default::default()
            },
            b"",
        );
        let quick: Vec<u32> = (0..3)
            .map(|_| {
                c.send(
                    "Get",
                    &pb::GetRequest {
                        region: region_spec(region.clone()),
                        get: pb::Get {
                            row: b"r000001".to_vec(),
                            ..Default::default()
                        },
                    },
                    b"",
                )
            })
            .collect();
        let mut ids = Vec::new();
        for _ in 0..4 {
            let r = c.read().unwrap();
            assert!(r.header.exception.is_none(), "{:?}", r.header.exception);
            ids.push(r.header.call_id.unwrap());
        }
        let mut sorted = ids.clone();
        sorted.sort();
        let mut want = vec![slow];
        want.extend(&quick);
        assert_eq!(sorted, want, "every call answered once");
        if ids[0] != slow {
            out_of_order = true;
            break;
        }
    }
    assert!(out_of_order, "a quick call never overtook the slow scan");
}

#[test]
fn a_full_call_queue_answers_call_queue_too_big() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        RpcConfig {
            handlers: 1,
            max_queue_length: 1,
            ..RpcConfig::default()
        },
    );
    let addr = server.rpc_addr().unwrap();
    let mut c = Client::connect(addr, "MasterService");
    let ids: Vec<u32> = (0..200)
        .map(|_| {
            c.send(
                "GetClusterStatus",
                &pb::GetClusterStatusRequest::default(),
                b"",
            )
        })
        .collect();
    let mut too_big = 0;
    for _ in &ids {
        let r = c.read().unwrap();
        match r.exception_class().as_deref() {
            None => {}
            Some("org.apache.hadoop.hbase.CallQueueTooBigException") => {
                too_big += 1;
                let e = r.header.exception.as_ref().unwrap();
                assert_eq!(e.do_not_retry, Some(false), "the client retries");
                assert_eq!(e.server_overloaded, Some(true));
            }
            Some(other) => panic!("{other}"),
        }
    }
    assert!(too_big > 0, "200 calls at once against a queue of 1");
}

#[test]
fn an_idle_scanner_expires_with_its_lease_and_metrics_count_the_calls() {
    let dir = tempfile::tempdir().unwrap();
    let rs: Arc<RegionServer> = RegionServer::open(ServerConfig::new(dir.path())).unwrap();
    let server = Server::start_with(
        rs,
        Config {
            data_dir: dir.path().to_path_buf(),
            thrift_addr: "127.0.0.1:0".into(),
            http_addr: Some("127.0.0.1:0".into()),
            rpc: Some(RpcConfig {
                addr: "127.0.0.1:0".into(),
                scanner_lease: Duration::from_millis(300),
                ..RpcConfig::default()
            }),
            info_addr: None,
            ..Config::default()
        },
    )
    .unwrap();
    let addr = server.rpc_addr().unwrap();
    create(addr, "lease", &[]);
    let region = regions(addr, "lease").remove(0);
    let mut c = Client::connect(addr, "ClientService");
    let (m, cells) = put_cells(b"a", &[(b"q", b"v")]);
    let (m2, cells2) = put_cells(b"b", &[(b"q", b"v")]);
    for (m, cells) in [(m, cells), (m2, cells2)] {
        let _: pb::MutateResponse = c
            .call(
                "Mutate",
                &pb::MutateRequest {
                    region: region_spec(region.clone()),
                    mutation: m,
                    ..Default::default()
                },
                &cells,
            )
            .message();
    }
    let open = pb::ScanRequest {
        region: Some(region_spec(region.clone())),
        scan: Some(pb::Scan::default()),
        number_of_rows: Some(1),
        ..Default::default()
    };
    let resp: pb::ScanResponse = c.call("Scan", &open, b"").message();
    assert_eq!(resp.ttl, Some(300), "the lease the client is told");
    assert_eq!(resp.more_results_in_region, Some(true));
    let id = resp.scanner_id.unwrap();
    assert_eq!(server.rpc().unwrap().open_scanners(), 1);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(server.rpc().unwrap().open_scanners(), 0, "expired");
    let next = pb::ScanRequest {
        scanner_id: Some(id),
        number_of_rows: Some(1),
        next_call_seq: Some(1),
        ..Default::default()
    };
    let r = c.call("Scan", &next, b"");
    assert_eq!(
        r.exception_class().as_deref(),
        Some("org.apache.hadoop.hbase.UnknownScannerException")
    );
    // The calls, by method, on /metrics and /jmx.
    assert_eq!(server.rpc_metrics().calls("Mutate"), 2);
    let http = server.http_addr().unwrap();
    let get = |path: &str| {
        let mut s = TcpStream::connect(http).unwrap();
        write!(s, "GET {path} HTTP/1.0\r\n\r\n").unwrap();
        let mut body = String::new();
        s.read_to_string(&mut body).unwrap();
        body
    };
    let prom = get("/metrics");
    assert!(
        prom.contains("cairn_ipc_call_count_total{method=\"Mutate\"} 2"),
        "{prom}"
    );
    assert!(prom.contains("UnknownScannerException"), "{prom}");
    // Every sample line is Prometheus' text format: a valid metric name (HBase's dotted
    // exception counters included), optional labels, a number.
    let body = prom.split("\r\n\r\n").nth(1).unwrap_or(&prom);
    for line in body.lines().filter(|l| !l.is_empty()) {
        let sample = match line.strip_prefix("# TYPE ") {
            Some(t) => t,
            None if line.starts_with('#') => continue,
            None => line,
        };
        let name_end = sample.find(['{', ' ']).unwrap_or(sample.len());
        let name = &sample[..name_end];
        let valid = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        assert!(valid, "not a Prometheus metric name in {line:?}");
        if !line.starts_with('#') {
            let value = line.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().is_ok(), "not a value in {line:?}");
        }
    }
    let jmx = get("/jmx?qry=Hadoop:service=HBase,name=RegionServer,sub=IPC");
    assert!(jmx.contains("\"QueueCallTime_num_ops\""), "{jmx}");
    assert!(jmx.contains("\"sentBytes\""), "{jmx}");
}

#[test]
fn a_scan_whose_filter_drops_every_row_sends_heartbeats() {
    let dir = tempfile::tempdir().unwrap();
    // No floor under the time limit: a 2 ms call timeout gives 1 ms slices, so heartbeats
    // come however fast the machine is.
    let server = start(
        dir.path(),
        RpcConfig {
            min_scan_time_limit: Duration::ZERO,
            ..RpcConfig::default()
        },
    );
    let addr = server.rpc_addr().unwrap();
    create(addr, "hb", &[]);
    let region = regions(addr, "hb").remove(0);
    let mut c = Client::connect(addr, "ClientService");
    let mut block = Vec::new();
    let mut ra = pb::RegionAction {
        region: region_spec(region.clone()),
        ..Default::default()
    };
    let rows = 60_000u32;
    for i in 0..rows {
        let (m, cells) = put_cells(format!("r{i:06}").as_bytes(), &[(b"q", b"v")]);
        ra.action.push(pb::Action {
            index: Some(i),
            mutation: Some(m),
            ..Default::default()
        });
        block.extend_from_slice(&cells);
    }
    let _: pb::MultiResponse = c
        .call(
            "Multi",
            &pb::MultiRequest {
                region_action: vec![ra],
                ..Default::default()
            },
            &block,
        )
        .message();
    // PerformanceEvaluation's --filterAll: every row read, none returned.
    let filter_all = pb::Filter {
        name: "org.apache.hadoop.hbase.filter.FilterAllFilter".into(),
        serialized_filter: Some(pb::FilterAllFilter {}.encode_to_vec()),
    };
    let send = |c: &mut Client, req: &pb::ScanRequest| {
        // A 2 ms call timeout: a 1 ms time limit per call.
        let id = c.next_id;
        c.next_id += 1;
        let h = pb::RequestHeader {
            call_id: Some(id),
            method_name: Some("Scan".into()),
            request_param: Some(true),
            timeout: Some(2),
            ..Default::default()
        };
        let mut f = Vec::new();
        h.encode_length_delimited(&mut f).unwrap();
        req.encode_length_delimited(&mut f).unwrap();
        c.s.write_all(&(f.len() as u32).to_be_bytes()).unwrap();
        c.s.write_all(&f).unwrap();
        let r = c.read().unwrap();
        let resp: pb::ScanResponse = r.message();
        resp
    };
    let mut resp = send(
        &mut c,
        &pb::ScanRequest {
            region: Some(region_spec(region.clone())),
            scan: Some(pb::Scan {
                filter: Some(filter_all),
                ..Default::default()
            }),
            number_of_rows: Some(100),
            client_handles_heartbeats: Some(true),
            ..Default::default()
        },
    );
    let id = resp.scanner_id.unwrap();
    let mut heartbeats = 0;
    // The first call after the open carries 0.
    let mut seq = u64::MAX;
    let mut cursors = Vec::new();
    while resp.more_results_in_region == Some(true) {
        assert!(resp.cells_per_result.is_empty() && resp.results.is_empty());
        assert_eq!(resp.heartbeat_message, Some(true), "{resp:?}");
        heartbeats += 1;
        cursors.push(resp.cursor.clone().unwrap().row.unwrap());
        seq = seq.wrapping_add(1);
        resp = send(
            &mut c,
            &pb::ScanRequest {
                scanner_id: Some(id),
                number_of_rows: Some(100),
                next_call_seq: Some(seq),
                client_handles_heartbeats: Some(true),
                ..Default::default()
            },
        );
    }
    assert!(resp.cells_per_result.is_empty());
    assert!(heartbeats > 0, "60,000 filtered rows in 1 ms slices");
    let mut sorted = cursors.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, cursors, "the cursor moves forward");
}

#[test]
fn a_row_past_the_call_byte_budget_goes_out_in_partial_results() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), RpcConfig::default());
    let addr = server.rpc_addr().unwrap();
    create(addr, "wide", &[]);
    let region = regions(addr, "wide").remove(0);
    let mut c = Client::connect(addr, "ClientService");
    // Row "a": 40 columns of 1 KiB; row "b": one small column.
    let quals: Vec<Vec<u8>> = (0..40).map(|i| format!("q{i:02}").into_bytes()).collect();
    let value = vec![7u8; 1024];
    let cols: Vec<(&[u8], &[u8])> = quals
        .iter()
        .map(|q| (q.as_slice(), value.as_slice()))
        .collect();
    for (row, cols) in [
        (&b"a"[..], &cols[..]),
        (&b"aa"[..], &cols[..]),
        (&b"b"[..], &cols[..1]),
    ] {
        let (m, cells) = put_cells(row, cols);
        let _: pb::MutateResponse = c
            .call(
                "Mutate",
                &pb::MutateRequest {
                    region: region_spec(region.clone()),
                    mutation: m,
                    ..Default::default()
                },
                &cells,
            )
            .message();
    }
    let mut req = pb::ScanRequest {
        region: Some(region_spec(region.clone())),
        scan: Some(pb::Scan {
            max_result_size: Some(10_000),
            ..Default::default()
        }),
        number_of_rows: Some(100),
        client_handles_partials: Some(true),
        ..Default::default()
    };
    let mut parts: Vec<(Vec<u8>, usize, bool)> = Vec::new();
    let mut all_cells: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    // The first call after the open carries 0.
    let mut seq = u64::MAX;
    loop {
        let r = c.call("Scan", &req, b"");
        let resp: pb::ScanResponse = r.message();
        let mut rd = CellBlockReader::new(r.cells.clone());
        for (n, partial) in resp
            .cells_per_result
            .iter()
            .zip(&resp.partial_flag_per_result)
        {
            let cells = rd.take(*n as usize).unwrap();
            parts.push((cells[0].as_cell().row().to_vec(), cells.len(), *partial));
            for c in &cells {
                all_cells.push((c.as_cell().row().to_vec(), c.as_cell().qualifier().to_vec()));
            }
        }
        if resp.more_results_in_region != Some(true) {
            break;
        }
        seq = seq.wrapping_add(1);
        req = pb::ScanRequest {
            scanner_id: resp.scanner_id,
            number_of_rows: Some(100),
            next_call_seq: Some(seq),
            client_handles_partials: Some(true),
            ..Default::default()
        };
    }
    // Row a in parts of at most 10,000 bytes (9 cells of ~1 KiB), all but its last flagged
    // partial; then row b whole.
    let a: Vec<_> = parts.iter().filter(|p| p.0 == b"a").collect();
    assert!(a.len() >= 4, "{parts:?}");
    assert_eq!(a.iter().map(|p| p.1).sum::<usize>(), 40);
    assert!(a.iter().all(|p| p.1 <= 9), "{parts:?}");
    assert!(a[..a.len() - 1].iter().all(|p| p.2), "{parts:?}");
    assert!(!a[a.len() - 1].2, "{parts:?}");
    assert_eq!(parts.last().unwrap(), &(b"b".to_vec(), 1, false));
    // Every cell exactly once, in order.
    let mut want = Vec::new();
    for row in [&b"a"[..], b"aa"] {
        for q in &quals {
            want.push((row.to_vec(), q.clone()));
        }
    }
    want.push((b"b".to_vec(), quals[0].clone()));
    assert_eq!(all_cells, want);
}

#[test]
fn namespaces_are_created_listed_and_deleted_only_when_empty() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), RpcConfig::default());
    let addr = server.rpc_addr().unwrap();
    let mut m = Client::connect(addr, "MasterService");
    let list = |m: &mut Client| -> Vec<String> {
        let r: pb::ListNamespacesResponse = m
            .call("ListNamespaces", &pb::ListNamespacesRequest {}, b"")
            .message();
        r.namespace_name
    };
    assert_eq!(list(&mut m), vec!["default", "hbase"]);
    let ns = pb::CreateNamespaceRequest {
        namespace_descriptor: pb::NamespaceDescriptor {
            name: b"ns1".to_vec(),
            configuration: vec![],
        },
        ..Default::default()
    };
    let r: pb::CreateNamespaceResponse = m.call("CreateNamespace", &ns, b"").message();
    assert!(r.proc_id.is_some());
    assert_eq!(list(&mut m), vec!["default", "hbase", "ns1"]);
    let again = m.call("CreateNamespace", &ns, b"");
    assert_eq!(
        again.exception_class().as_deref(),
        Some("org.apache.hadoop.hbase.NamespaceExistException")
    );
    // A table in a namespace that does not exist is refused; in ns1 it is created.
    let table_in = |ns: &str| pb::CreateTableRequest {
        table_schema: pb::TableSchema {
            table_name: Some(pb::TableName {
                namespace: ns.as_bytes().to_vec(),
                qualifier: b"t".to_vec(),
            }),
            column_families: vec![pb::ColumnFamilySchema {
                name: b"f".to_vec(),
                ..Default::default()
            }],
            ..Default::default()
        },
        ..Default::default()
    };
    let r = m.call("CreateTable", &table_in("nope"), b"");
    assert_eq!(
        r.exception_class().as_deref(),
        Some("org.apache.hadoop.hbase.NamespaceNotFoundException")
    );
    let _: pb::CreateTableResponse = m.call("CreateTable", &table_in("ns1"), b"").message();
    let del = pb::DeleteNamespaceRequest {
        namespace_name: "ns1".into(),
        ..Default::default()
    };
    let r = m.call("DeleteNamespace", &del, b"");
    assert_eq!(
        r.exception_class().as_deref(),
        Some("org.apache.hadoop.hbase.constraint.ConstraintException"),
        "a namespace with tables stays"
    );
    let names: pb::ListTableNamesByNamespaceResponse = m
        .call(
            "ListTableNamesByNamespace",
            &pb::ListTableNamesByNamespaceRequest {
                namespace_name: "ns1".into(),
            },
            b"",
        )
        .message();
    assert_eq!(names.table_name.len(), 1);
    let t = table_name("t");
    let t = pb::TableName {
        namespace: b"ns1".to_vec(),
        ..t
    };
    let _: pb::DisableTableResponse = m
        .call(
            "DisableTable",
            &pb::DisableTableRequest {
                table_name: t.clone(),
                ..Default::default()
            },
            b"",
        )
        .message();
    let _: pb::DeleteTableResponse = m
        .call(
            "DeleteTable",
            &pb::DeleteTableRequest {
                table_name: t,
                ..Default::default()
            },
            b"",
        )
        .message();
    let _: pb::DeleteNamespaceResponse = m.call("DeleteNamespace", &del, b"").message();
    assert_eq!(list(&mut m), vec!["default", "hbase"]);
    let r = m.call(
        "GetNamespaceDescriptor",
        &pb::GetNamespaceDescriptorRequest {
            namespace_name: "ns1".into(),
        },
        b"",
    );
    assert_eq!(
        r.exception_class().as_deref(),
        Some("org.apache.hadoop.hbase.NamespaceNotFoundException")
    );
}

/// A failed call's exception: class and message.
fn exception(r: &Response) -> (String, String) {
    let e = r.header.exception.as_ref().expect("the call fails");
    (
        e.exception_class_name.clone().unwrap_or_default(),
        e.stack_trace.clone().unwrap_or_default(),
    )
}

fn region_info_of(addr: SocketAddr, name: &[u8], best_split_row: bool) -> Response {
    let mut a = Client::connect(addr, "AdminService");
    let req = pb::GetRegionInfoRequest {
        region: region_spec(name.to_vec()),
        compaction_state: None,
        best_split_row: Some(best_split_row),
    };
    a.call("GetRegionInfo", &req, b"")
}

fn encoded(name: &[u8]) -> pb::RegionSpecifier {
    // `<table>,<start>,<id>.<encoded>.`: the 32 characters before the final dot.
    pb::RegionSpecifier {
        r#type: pb::region_specifier::RegionSpecifierType::EncodedRegionName as i32,
        value: name[name.len() - 33..name.len() - 1].to_vec(),
    }
}

#[test]
fn splits_and_merges_through_the_master_and_what_get_region_info_says_of_them() {
    use cairn_region::{ColumnFamilyDescriptor, Put, TableDescriptor, TableName};
    let dir = tempfile::tempdir().unwrap();
    // No background work: a split's daughters keep their reference files until compacted here.
    let mut sc = ServerConfig::new(dir.path());
    sc.background = false;
    let rs: Arc<RegionServer> = RegionServer::open(sc).unwrap();
    let t = TableName::parse("sp").unwrap();
    rs.create_table(
        TableDescriptor::new(t.clone())
            .with_family(ColumnFamilyDescriptor::new("f").block_size(1024)),
        &[],
    )
    .unwrap();
    let row = |i: usize| format!("row{i:04}").into_bytes();
    for i in 0..600 {
        rs.put(&t, &Put::new(row(i)).add("f", "q", format!("value {i}")))
            .unwrap();
    }
    let server = Server::start_with(
        rs.clone(),
        Config {
            data_dir: dir.path().to_path_buf(),
            thrift_addr: "127.0.0.1:0".into(),
            http_addr: None,
            rpc: Some(RpcConfig {
                addr: "127.0.0.1:0".into(),
                ..RpcConfig::default()
            }),
            info_addr: None,
            ..Config::default()
        },
    )
    .unwrap();
    let addr = server.rpc_addr().unwrap();
    let mut m = Client::connect(addr, "MasterService");
    let parent = regions(addr, "sp");
    assert_eq!(parent.len(), 1);

    // All rows still in memory: asking for the split row flushes, as HBase does.
    let info: pb::GetRegionInfoResponse = region_info_of(addr, &parent[0], true).message();
    assert_eq!((info.splittable, info.mergeable), (Some(true), Some(true)));
    let best = info
        .best_split_row
        .expect("a region of many blocks has a split row");
    assert!(
        best.as_slice() > row(0).as_slice() && best.as_slice() < row(599).as_slice(),
        "{best:?}"
    );
    let split_req = |name: &[u8], row: Option<&[u8]>| {
        let info: pb::GetRegionInfoResponse = region_info_of(addr, name, false).message();
        pb::SplitTableRegionRequest {
            region_info: info.region_info,
            split_row: row.map(<[u8]>::to_vec),
            nonce_group: None,
            nonce: None,
        }
    };

    // No split row (an empty one is none): the server splits where it said it would.
    let r = m.call("SplitRegion", &split_req(&parent[0], Some(b"")), b"");
    assert!(
        r.header.exception.is_none(),
        "an empty split row means 'you pick'"
    );
    let daughters = regions(addr, "sp");
    assert_eq!(daughters.len(), 2, "split where GetRegionInfo said");
    assert!(
        daughters[1].starts_with(&[b"sp,".as_slice(), &best, b","].concat()),
        "{:?}",
        String::from_utf8_lossy(&daughters[1])
    );
    // The parent is gone: a request naming it is NotServingRegionException, HBase's text.
    let gone = region_info_of(addr, &parent[0], false);
    let (class, msg) = exception(&gone);
    assert_eq!(class, "org.apache.hadoop.hbase.NotServingRegionException");
    let name = String::from_utf8_lossy(&parent[0]).into_owned();
    assert!(
        msg.starts_with(&format!(
            "{name} is not online on 127.0.0.1,{},",
            addr.port()
        )),
        "{msg}"
    );

    // Daughters hold references: neither splittable nor mergeable, and both refused so.
    let d: pb::GetRegionInfoResponse = region_info_of(addr, &daughters[0], true).message();
    assert_eq!(
        (d.splittable, d.mergeable, d.best_split_row),
        (Some(false), Some(false), None)
    );
    let r = m.call(
        "SplitRegion",
        &split_req(&daughters[0], Some(&row(10))),
        b"",
    );
    let (class, msg) = exception(&r);
    assert_eq!(class, "org.apache.hadoop.hbase.DoNotRetryIOException");
    assert!(msg.contains("NOT splittable"), "{msg}");
    let merge = |names: &[&[u8]]| pb::MergeTableRegionsRequest {
        region: names.iter().map(|n| encoded(n)).collect(),
        forcible: Some(false),
        nonce_group: None,
        nonce: None,
    };
    let r = m.call(
        "MergeTableRegions",
        &merge(&[&daughters[0], &daughters[1]]),
        b"",
    );
    let (class, msg) = exception(&r);
    assert_eq!(
        class,
        "org.apache.hadoop.hbase.exceptions.MergeRegionException"
    );
    assert!(msg.contains("not mergeable"), "{msg}");

    // Compacted, they may merge; HBase's texts for one region and for a region twice.
    rs.compact_table(&t, true).unwrap();
    let d: pb::GetRegionInfoResponse = region_info_of(addr, &daughters[0], false).message();
    assert_eq!((d.splittable, d.mergeable), (Some(true), Some(true)));
    let r = m.call("MergeTableRegions", &merge(&[&daughters[0]]), b"");
    assert_eq!(exception(&r).1, "Need two Regions at least to run a Merge");
    let r = m.call(
        "MergeTableRegions",
        &merge(&[&daughters[0], &daughters[0]]),
        b"",
    );
    assert_eq!(
        exception(&r).1,
        "Duplicate regions specified; cannot merge a region to itself. Passed in 2 but only 1 unique."
    );
    let r = m.call(
        "MergeTableRegions",
        &merge(&[&daughters[1], &daughters[0]]),
        b"",
    );
    let done: pb::MergeTableRegionsResponse = r.message();
    assert_eq!(regions(addr, "sp").len(), 1);
    // The procedure the client then waits for is finished.
    let p: pb::GetProcedureResultResponse = m
        .call(
            "getProcedureResult",
            &pb::GetProcedureResultRequest {
                proc_id: done.proc_id.expect("a procedure id"),
            },
            b"",
        )
        .message();
    assert_eq!(
        p.state,
        pb::get_procedure_result_response::State::Finished as i32
    );
    drop(server);
}
