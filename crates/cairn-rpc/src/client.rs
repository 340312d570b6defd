//! A small blocking client of HBase's native RPC, for cairn's own tools that talk to a
//! running server (`cairn completebulkload --hbase`): one connection per service, one call
//! at a time, cells in KeyValueCodec cell blocks. Not a general HBase client: no retries, no
//! region location cache, no security.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use bytes::Bytes;
use prost::Message;

use crate::cellblock::{self, CellBlockReader};
use crate::pb;
use crate::wire;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The connection failed or broke.
    #[error("{what} {addr}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The server's address.
        addr: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The server answered the call with an exception.
    #[error("{method} failed on {addr}: {class}: {message}")]
    Remote {
        /// The method called.
        method: String,
        /// The server's address.
        addr: String,
        /// HBase's exception class name.
        class: String,
        /// The exception's message.
        message: String,
    },
    /// The server's answer did not parse.
    #[error("{method} on {addr}: the response does not parse: {reason}")]
    Decode {
        /// The method called.
        method: String,
        /// The server's address.
        addr: String,
        /// What was wrong.
        reason: String,
    },
}

/// The HBase version cairn speaks as (its RPC and formats are HBase 2.6.1's), as HBase's
/// `VersionInfo`: sent in every connection header, so that a master deciding by the region
/// server's version (where meta may go, whether it handles splits itself) sees 2.6.1, and
/// written in `/hbase/rs/<server>`.
pub fn version_info() -> pb::VersionInfo {
    pb::VersionInfo {
        version: "2.6.1".into(),
        url: "cairn".into(),
        revision: format!("cairn {}", env!("CARGO_PKG_VERSION")),
        user: "cairn".into(),
        date: String::new(),
        src_checksum: String::new(),
        version_major: Some(2),
        version_minor: Some(6),
    }
}

/// A connection to one service (`ClientService`, `MasterService`, ...) of a server.
pub struct RpcClient {
    stream: TcpStream,
    addr: String,
    next_id: u32,
}

/// A call's answer: its message and the cells of its cell block.
pub struct Answer<R> {
    /// The response message.
    pub message: R,
    /// The cell block, empty when the response has none.
    pub cells: Bytes,
}

impl RpcClient {
    /// Connects to `addr` (`host:port`) and opens `service`, as HBase 2.6.1
    /// ([`version_info`]).
    pub fn connect(addr: &str, service: &str) -> Result<RpcClient, ClientError> {
        RpcClient::connect_as(addr, service, version_info())
    }

    /// [`RpcClient::connect`] telling the server `version` in the connection header.
    pub fn connect_as(
        addr: &str,
        service: &str,
        version: pb::VersionInfo,
    ) -> Result<RpcClient, ClientError> {
        let io = |what, source| ClientError::Io {
            what,
            addr: addr.to_string(),
            source,
        };
        let mut stream = TcpStream::connect(addr).map_err(|e| io("connecting to", e))?;
        stream
            .set_read_timeout(Some(Duration::from_secs(600)))
            .map_err(|e| io("connecting to", e))?;
        // The preamble: "HBas", version 0, SIMPLE authentication (0x50).
        let header = pb::ConnectionHeader {
            service_name: Some(service.into()),
            cell_block_codec_class: Some(cellblock::KEY_VALUE_CODEC.into()),
            user_info: Some(pb::UserInformation {
                effective_user: std::env::var("USER").unwrap_or_else(|_| "cairn".into()),
                real_user: None,
            }),
            version_info: Some(version),
            ..Default::default()
        };
        let body = header.encode_to_vec();
        let mut out = b"HBas\x00\x50".to_vec();
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        out.extend_from_slice(&body);
        stream
            .write_all(&out)
            .map_err(|e| io("writing the connection header to", e))?;
        Ok(RpcClient {
            stream,
            addr: addr.to_string(),
            next_id: 1,
        })
    }

    /// Calls `method` with `param` and waits for its answer.
    pub fn call<R: Message + Default>(
        &mut self,
        method: &str,
        param: &impl Message,
    ) -> Result<Answer<R>, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let header = pb::RequestHeader {
            call_id: Some(id),
            method_name: Some(method.into()),
            request_param: Some(true),
            ..Default::default()
        };
        let mut frame = Vec::new();
        header
            .encode_length_delimited(&mut frame)
            .expect("vec grows");
        param
            .encode_length_delimited(&mut frame)
            .expect("vec grows");
        let io = |what, source| ClientError::Io {
            what,
            addr: self.addr.clone(),
            source,
        };
        let mut out = (frame.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(&frame);
        self.stream
            .write_all(&out)
            .map_err(|e| io("sending a call to", e))?;
        let mut len = [0u8; 4];
        self.stream
            .read_exact(&mut len)
            .map_err(|e| io("reading an answer from", e))?;
        // A server's frame is bounded as a request is (a length past an int is refused), and
        // read as its bytes arrive.
        let len = wire::frame_len(len, "response", i32::MAX as usize).map_err(|e| {
            io(
                "reading an answer from",
                std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
            )
        })?;
        let buf =
            wire::read_frame(&mut self.stream, len).map_err(|e| io("reading an answer from", e))?;
        let decode = |reason: String| ClientError::Decode {
            method: method.to_string(),
            addr: self.addr.clone(),
            reason,
        };
        let mut b = Bytes::from(buf);
        let header = pb::ResponseHeader::decode_length_delimited(&mut b)
            .map_err(|e| decode(format!("response header: {e}")))?;
        if header.call_id != Some(id) {
            return Err(decode(format!(
                "answer to call {:?}, expected {id}",
                header.call_id
            )));
        }
        if let Some(e) = header.exception {
            return Err(ClientError::Remote {
                method: method.to_string(),
                addr: self.addr.clone(),
                class: e.exception_class_name.unwrap_or_default(),
                message: e.stack_trace.unwrap_or_default(),
            });
        }
        let cells_len = header
            .cell_block_meta
            .as_ref()
            .and_then(|m| m.length)
            .unwrap_or(0) as usize;
        if cells_len > b.len() {
            return Err(decode(format!(
                "a cell block of {cells_len} bytes in a frame of {}",
                b.len()
            )));
        }
        let cells = b.split_off(b.len() - cells_len);
        let message = R::decode_length_delimited(b).map_err(|e| decode(e.to_string()))?;
        Ok(Answer { message, cells })
    }
}

/// The `info:regioninfo` values of `table`'s rows in `hbase:meta` (HBase's `RegionInfo`
/// bytes, `PBUF` + message), read as HBase's client locator reads them.
pub fn meta_region_infos(addr: &str, table: &pb::TableName) -> Result<Vec<Vec<u8>>, ClientError> {
    let mut c = RpcClient::connect(addr, "ClientService")?;
    let name = if table.namespace == b"default" {
        table.qualifier.clone()
    } else {
        [&table.namespace[..], b":", &table.qualifier[..]].concat()
    };
    let mut start = name.clone();
    start.extend_from_slice(b",,");
    let mut stop = name;
    stop.extend_from_slice(b" ,,");
    let req = pb::ScanRequest {
        region: Some(pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
            value: b"hbase:meta,,1".to_vec(),
        }),
        scan: Some(pb::Scan {
            start_row: Some(start),
            stop_row: Some(stop),
            column: vec![pb::Column {
                family: b"info".to_vec(),
                qualifier: vec![b"regioninfo".to_vec()],
            }],
            ..Default::default()
        }),
        number_of_rows: Some(1_000_000),
        close_scanner: Some(true),
        ..Default::default()
    };
    let answer = c.call::<pb::ScanResponse>("Scan", &req)?;
    let mut cells = CellBlockReader::new(answer.cells);
    let mut out = Vec::new();
    for n in &answer.message.cells_per_result {
        let row = cells.take(*n as usize).map_err(|e| ClientError::Decode {
            method: "Scan".into(),
            addr: addr.to_string(),
            reason: e.to_string(),
        })?;
        out.extend(row.iter().map(|c| c.as_cell().value.to_vec()));
    }
    Ok(out)
}
