//! A blocking Hadoop IPC client for the two NameNode calls cairn's HDFS reader makes itself:
//! `getBlockLocations` (which DataNodes hold each block of a file) and `reportBadBlocks` (tell
//! the NameNode a replica failed its checksums, as HDFS's own client does).
//!
//! Hadoop IPC, as the NameNode speaks it with simple (non-Kerberos) authentication: a 7-byte
//! connection preamble (`hrpc`, version 9, service class 0, auth NONE), then frames of a 4-byte
//! big-endian length followed by varint-delimited protobufs — a call is `RpcRequestHeaderProto`,
//! `RequestHeaderProto` (method and protocol), the request; a response is
//! `RpcResponseHeaderProto` and, on success, the response message. The first frame (call id
//! -3) carries the `IpcConnectionContextProto` naming the user and protocol.

use std::io::{self, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prost::Message;

use super::proto::{
    EmptyResponseProto, GetBlockLocationsRequestProto, GetBlockLocationsResponseProto,
    IpcConnectionContextProto, LocatedBlockProto, LocatedBlocksProto, ReportBadBlocksRequestProto,
    RequestHeaderProto, RpcRequestHeaderProto, RpcResponseHeaderProto, UserInformationProto,
    RPC_FINAL_PACKET, RPC_PROTOCOL_BUFFER, RPC_SUCCESS,
};

const CLIENT_PROTOCOL: &str = "org.apache.hadoop.hdfs.protocol.ClientProtocol";
const CONNECTION_CONTEXT_CALL_ID: i32 = -3;
/// Larger answers are refused rather than allocated (a `getBlockLocations` answer for a file of
/// thousands of blocks is a few hundred KiB).
const MAX_RESPONSE: usize = 64 << 20;
/// Read and write timeout of NameNode and DataNode sockets (60 s, as Hadoop's
/// `dfs.client.socket-timeout`): a dead peer fails the call instead of hanging it.
pub const SOCKET_TIMEOUT: Duration = Duration::from_secs(60);
/// Connect timeout (Hadoop's `ipc.client.connect.timeout`, 20 s).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// One connection to a NameNode; calls on it are made one at a time.
pub struct NameNodeConnection {
    addr: String,
    stream: BufReader<TcpStream>,
    client_id: Vec<u8>,
    next_call_id: i32,
}

/// Sixteen bytes unique to this client (the NameNode's retry cache keys on them).
fn client_id() -> Vec<u8> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let hi = nanos ^ (u64::from(std::process::id()) << 32);
    let lo = COUNTER
        .fetch_add(1, Ordering::Relaxed)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ nanos.rotate_left(17);
    let mut id = hi.to_be_bytes().to_vec();
    id.extend_from_slice(&lo.to_be_bytes());
    id
}

/// The user HDFS sees: `HADOOP_USER_NAME` as Hadoop's client takes it, else the login name.
pub fn effective_user() -> String {
    ["HADOOP_USER_NAME", "USER", "LOGNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "cairn".to_string())
}

/// A TCP connection to `host:port` with cairn's timeouts and Nagle off (calls are small
/// request/answer exchanges); tries each address the name resolves to, returning the last error.
pub fn connect_to(addr: &str) -> io::Result<TcpStream> {
    let mut last = None;
    for a in addr.to_socket_addrs()? {
        match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
            Ok(s) => {
                s.set_read_timeout(Some(SOCKET_TIMEOUT))?;
                s.set_write_timeout(Some(SOCKET_TIMEOUT))?;
                s.set_nodelay(true)?;
                return Ok(s);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("{addr}: no address to connect to"),
        )
    }))
}

/// A frame: the 4-byte length, then the varint-delimited messages.
fn frame(delimited: &[Vec<u8>]) -> Vec<u8> {
    let len: usize = delimited.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(4 + len);
    out.extend_from_slice(&(len as u32).to_be_bytes());
    for part in delimited {
        out.extend_from_slice(part);
    }
    out
}

fn bad_answer(addr: &str, what: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("NameNode {addr}: malformed answer: {what}"),
    )
}

impl NameNodeConnection {
    /// Connects to `addr` (`host:port`) as `user`.
    pub fn connect(addr: &str, user: &str) -> io::Result<NameNodeConnection> {
        let stream = connect_to(addr)?;
        let mut conn = NameNodeConnection {
            addr: addr.to_string(),
            stream: BufReader::new(stream),
            client_id: client_id(),
            next_call_id: 0,
        };
        let header = conn.rpc_header(CONNECTION_CONTEXT_CALL_ID);
        let context = IpcConnectionContextProto {
            user_info: Some(UserInformationProto {
                effective_user: Some(user.to_string()),
            }),
            protocol: Some(CLIENT_PROTOCOL.to_string()),
        };
        let mut out = b"hrpc".to_vec();
        // IPC version 9, service class 0, authentication NONE (simple).
        out.extend_from_slice(&[9, 0, 0]);
        out.extend_from_slice(&frame(&[
            header.encode_length_delimited_to_vec(),
            context.encode_length_delimited_to_vec(),
        ]));
        conn.stream.get_mut().write_all(&out)?;
        Ok(conn)
    }

    fn rpc_header(&self, call_id: i32) -> RpcRequestHeaderProto {
        RpcRequestHeaderProto {
            rpc_kind: Some(RPC_PROTOCOL_BUFFER),
            rpc_op: Some(RPC_FINAL_PACKET),
            call_id,
            client_id: self.client_id.clone(),
            retry_count: Some(-1),
        }
    }

    /// Calls `method` of ClientProtocol and decodes its answer.
    fn call<Req: Message, Resp: Message + Default>(
        &mut self,
        method: &str,
        request: &Req,
    ) -> io::Result<Resp> {
        let call_id = self.next_call_id;
        self.next_call_id = self.next_call_id.wrapping_add(1) & i32::MAX;
        let header = self.rpc_header(call_id);
        let method_header = RequestHeaderProto {
            method_name: method.to_string(),
            declaring_class_protocol_name: CLIENT_PROTOCOL.to_string(),
            client_protocol_version: 1,
        };
        let out = frame(&[
            header.encode_length_delimited_to_vec(),
            method_header.encode_length_delimited_to_vec(),
            request.encode_length_delimited_to_vec(),
        ]);
        self.stream.get_mut().write_all(&out)?;
        loop {
            if let Some(answer) =
                read_response(&mut self.stream, &self.addr, method, call_id as u32)?
            {
                return Ok(answer);
            }
        }
    }

    /// Where the blocks of `src` overlapping `[offset, offset + length)` are, closest first.
    pub fn get_block_locations(
        &mut self,
        src: &str,
        offset: u64,
        length: u64,
    ) -> io::Result<LocatedBlocksProto> {
        let answer: GetBlockLocationsResponseProto = self.call(
            "getBlockLocations",
            &GetBlockLocationsRequestProto {
                src: src.to_string(),
                offset,
                length,
            },
        )?;
        answer.locations.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("NameNode {}: {src}: no such file", self.addr),
            )
        })
    }

    /// Tells the NameNode the given replicas (each block with only its bad locations) failed
    /// their checksums.
    pub fn report_bad_blocks(&mut self, blocks: Vec<LocatedBlockProto>) -> io::Result<()> {
        let _: EmptyResponseProto =
            self.call("reportBadBlocks", &ReportBadBlocksRequestProto { blocks })?;
        Ok(())
    }
}

/// Reads one response frame of a NameNode's: `Ok(None)` when it answers another call (the
/// caller reads on), the decoded answer when it is `call_id`'s, and an error when the call
/// failed (with the server's exception class and message) or the frame is malformed.
pub fn read_response<Resp: Message + Default>(
    r: &mut impl Read,
    addr: &str,
    method: &str,
    call_id: u32,
) -> io::Result<Option<Resp>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_RESPONSE {
        return Err(bad_answer(
            addr,
            format!("a frame of {len} bytes (limit {MAX_RESPONSE})"),
        ));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    let mut buf = &body[..];
    let response = RpcResponseHeaderProto::decode_length_delimited(&mut buf)
        .map_err(|e| bad_answer(addr, format!("response header: {e}")))?;
    if response.call_id != call_id {
        return Ok(None);
    }
    if response.status != RPC_SUCCESS {
        let class = response.exception_class_name.unwrap_or_default();
        let msg = response.error_msg.unwrap_or_default();
        let kind = match class.as_str() {
            "java.io.FileNotFoundException" => io::ErrorKind::NotFound,
            "org.apache.hadoop.security.AccessControlException" => io::ErrorKind::PermissionDenied,
            _ => io::ErrorKind::Other,
        };
        return Err(io::Error::new(
            kind,
            format!("NameNode {addr}: {method}: {class}: {msg}"),
        ));
    }
    Resp::decode_length_delimited(&mut buf)
        .map(Some)
        .map_err(|e| bad_answer(addr, format!("{method} answer: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hdfs_protocol::proto::{ExtendedBlockProto, LocatedBlockProto, TokenProto};
    use proptest::prelude::*;

    fn frame_of(header: &RpcResponseHeaderProto, answer: Option<&LocatedBlocksProto>) -> Vec<u8> {
        let mut body = Vec::new();
        header.encode_length_delimited(&mut body).unwrap();
        if let Some(a) = answer {
            a.encode_length_delimited(&mut body).unwrap();
        }
        let mut out = (body.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(&body);
        out
    }

    fn located() -> LocatedBlocksProto {
        LocatedBlocksProto {
            file_length: 3 << 20,
            blocks: vec![LocatedBlockProto {
                b: ExtendedBlockProto {
                    pool_id: "BP-1".into(),
                    block_id: 1073741825,
                    generation_stamp: 1001,
                    num_bytes: Some(1 << 20),
                },
                offset: 0,
                locs: Vec::new(),
                corrupt: false,
                block_token: TokenProto::default(),
                storage_types: Vec::new(),
                storage_ids: Vec::new(),
            }],
            under_construction: false,
            last_block: None,
            is_last_block_complete: true,
        }
    }

    fn header(call_id: u32, status: i32) -> RpcResponseHeaderProto {
        RpcResponseHeaderProto {
            call_id,
            status,
            exception_class_name: (status != RPC_SUCCESS)
                .then(|| "java.io.FileNotFoundException".to_string()),
            error_msg: (status != RPC_SUCCESS).then(|| "File does not exist: /x".to_string()),
        }
    }

    #[test]
    fn answers_errors_and_other_calls() {
        let mut bytes = frame_of(&header(6, RPC_SUCCESS), Some(&located()));
        bytes.extend(frame_of(&header(7, RPC_SUCCESS), Some(&located())));
        let mut r = &bytes[..];
        // The first frame answers call 6: skipped by a reader waiting for call 7.
        let skipped: Option<LocatedBlocksProto> = read_response(&mut r, "nn:1", "m", 7).unwrap();
        assert!(skipped.is_none());
        let got: Option<LocatedBlocksProto> = read_response(&mut r, "nn:1", "m", 7).unwrap();
        assert_eq!(got, Some(located()));

        let bytes = frame_of(&header(3, 1), None);
        let e =
            read_response::<LocatedBlocksProto>(&mut &bytes[..], "nn:1", "getBlockLocations", 3)
                .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("File does not exist: /x"), "{e}");

        let mut bytes = (u32::MAX).to_be_bytes().to_vec();
        bytes.extend_from_slice(&[0; 16]);
        let e = read_response::<LocatedBlocksProto>(&mut &bytes[..], "nn:1", "m", 0).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}");
    }

    proptest! {
        #[test]
        fn damaged_frames_never_panic(
            damage in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut bytes = frame_of(&header(1, RPC_SUCCESS), Some(&located()));
            for (i, x) in &damage {
                let i = i.index(bytes.len());
                bytes[i] ^= x;
            }
            let cut = cut.index(bytes.len() + 1);
            let _ = read_response::<LocatedBlocksProto>(&mut &bytes[..cut], "nn:1", "m", 1);
            let _ = read_response::<LocatedBlocksProto>(&mut &bytes[..], "nn:1", "m", 1);
        }
    }
}
