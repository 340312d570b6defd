// Shared by several test files, each using a part of it.
#![allow(dead_code)]
//! A hand-rolled native RPC client built on cairn-rpc's frames, for tests at the byte level.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::Bytes;
use cairn_cell::KeyValue;
use cairn_rpc::cellblock;
use cairn_rpc::pb;
use prost::Message;

/// A response as read off the wire.
pub struct Response {
    pub header: pb::ResponseHeader,
    pub body: Bytes,
    pub cells: Bytes,
}

impl Response {
    /// The response message; panics if the call failed.
    pub fn message<M: Message + Default>(&self) -> M {
        assert!(
            self.header.exception.is_none(),
            "call failed: {:?}",
            self.header.exception
        );
        M::decode_length_delimited(self.body.clone()).unwrap()
    }

    /// The exception's class and message, if the call failed.
    pub fn exception(&self) -> Option<(String, String)> {
        self.header.exception.as_ref().map(|e| {
            (
                e.exception_class_name.clone().unwrap_or_default(),
                e.stack_trace.clone().unwrap_or_default(),
            )
        })
    }
}

pub struct Client {
    pub s: TcpStream,
    next_id: u32,
}

impl Client {
    /// A connection to `service` as SIMPLE user `user` (none: no user information).
    pub fn connect_as(
        addr: SocketAddr,
        service: &str,
        user: Option<(&str, Option<&str>)>,
    ) -> Client {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s.write_all(b"HBas\x00\x50").unwrap();
        let h = pb::ConnectionHeader {
            service_name: Some(service.into()),
            cell_block_codec_class: Some(cellblock::KEY_VALUE_CODEC.into()),
            user_info: user.map(|(effective, real)| pb::UserInformation {
                effective_user: effective.into(),
                real_user: real.map(str::to_string),
            }),
            ..Default::default()
        };
        let b = h.encode_to_vec();
        s.write_all(&(b.len() as u32).to_be_bytes()).unwrap();
        s.write_all(&b).unwrap();
        Client { s, next_id: 1 }
    }

    pub fn connect(addr: SocketAddr, service: &str) -> Client {
        Client::connect_as(addr, service, None)
    }

    /// Sends a call without waiting; returns its id.
    pub fn send(&mut self, method: &str, param: &impl Message, cells: &[u8]) -> u32 {
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

    pub fn read(&mut self) -> Option<Response> {
        read_response(&mut self.s)
    }

    pub fn call(&mut self, method: &str, param: &impl Message, cells: &[u8]) -> Response {
        let id = self.send(method, param, cells);
        let r = self.read().expect("a response");
        assert_eq!(r.header.call_id, Some(id));
        r
    }
}

pub fn read_response(s: &mut TcpStream) -> Option<Response> {
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

pub fn region_spec(name: Vec<u8>) -> pb::RegionSpecifier {
    pb::RegionSpecifier {
        r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
        value: name,
    }
}

pub fn table_name(t: &str) -> pb::TableName {
    pb::TableName {
        namespace: b"default".to_vec(),
        qualifier: t.as_bytes().to_vec(),
    }
}

/// The CreateTable request for table `t` with family `f`.
pub fn create_request(t: &str) -> pb::CreateTableRequest {
    pb::CreateTableRequest {
        table_schema: pb::TableSchema {
            table_name: Some(table_name(t)),
            column_families: vec![pb::ColumnFamilySchema {
                name: b"f".to_vec(),
                ..Default::default()
            }],
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The region names of table `t`, read from meta as the client's locator does.
pub fn regions(addr: SocketAddr, t: &str) -> Vec<Vec<u8>> {
    let mut c = Client::connect(addr, "ClientService");
    let req = pb::ScanRequest {
        region: Some(region_spec(b"hbase:meta,,1".to_vec())),
        scan: Some(pb::Scan {
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
    let mut cells = cairn_rpc::cellblock::CellBlockReader::new(r.cells.clone());
    let mut names = Vec::new();
    for n in &resp.cells_per_result {
        let row = cells.take(*n as usize).unwrap();
        names.push(row[0].as_cell().row().to_vec());
    }
    names
}

/// A Put of `row` with one cell per (qualifier, value), as a message and its cell block.
pub fn put_cells(row: &[u8], cols: &[(&[u8], &[u8])]) -> (pb::MutationProto, Vec<u8>) {
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

/// A Mutate request putting `cols` into `row` of `region`.
pub fn mutate(region: &[u8], row: &[u8], cols: &[(&[u8], &[u8])]) -> (pb::MutateRequest, Vec<u8>) {
    let (m, cells) = put_cells(row, cols);
    (
        pb::MutateRequest {
            region: region_spec(region.to_vec()),
            mutation: m,
            ..Default::default()
        },
        cells,
    )
}
