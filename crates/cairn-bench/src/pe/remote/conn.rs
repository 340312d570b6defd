//! One blocking connection to a server's RPC service, as HBase's client opens it (the `HBas`
//! preamble, a connection header naming the service and `KeyValueCodec` for cell blocks), with
//! the request's cells sent in a cell block behind the parameter. Its buffers are kept between
//! calls: a call allocates only what prost's decoding of the answer does.

use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::ops::Range;
use std::time::Duration;

use cairn_rpc::cellblock::KEY_VALUE_CODEC;
use cairn_rpc::client::{version_info, ClientError};
use cairn_rpc::{pb, wire};
use prost::Message;

/// The largest answer taken (HBase's client takes frames up to an int's range).
const MAX_ANSWER: usize = i32::MAX as usize;

/// How long a call may wait for its answer (HBase's `hbase.rpc.timeout` is 60 s; a scan of a
/// large range on a slow server may take longer, so this is the operation timeout's scale).
const READ_TIMEOUT: Duration = Duration::from_secs(1200);

/// A connection to `service` on one server.
pub(crate) struct Conn {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
    addr: String,
    next_id: u32,
    call: CallBuffer,
    answer: Vec<u8>,
}

/// An answer: its message and the cell block's bytes.
pub(crate) struct Reply<'a, R> {
    pub message: R,
    pub cells: &'a [u8],
}

fn io_err(what: &'static str, addr: &str, source: std::io::Error) -> ClientError {
    ClientError::Io {
        what,
        addr: addr.to_string(),
        source,
    }
}

impl Conn {
    /// Connects to `addr` (`host:port`) and opens `service` (`ClientService`, `MasterService`,
    /// `ClientMetaService`).
    pub fn open(addr: &str, service: &str) -> Result<Conn, ClientError> {
        let stream = TcpStream::connect(addr).map_err(|e| io_err("connecting to", addr, e))?;
        // Requests are whole frames written at once: Nagle's delay would only add latency.
        stream
            .set_nodelay(true)
            .and_then(|()| stream.set_read_timeout(Some(READ_TIMEOUT)))
            .map_err(|e| io_err("connecting to", addr, e))?;
        let header = pb::ConnectionHeader {
            service_name: Some(service.into()),
            cell_block_codec_class: Some(KEY_VALUE_CODEC.into()),
            user_info: Some(pb::UserInformation {
                effective_user: std::env::var("USER").unwrap_or_else(|_| "cairn".into()),
                real_user: None,
            }),
            version_info: Some(version_info()),
            ..Default::default()
        };
        let body = header.encode_to_vec();
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(&wire::RPC_MAGIC);
        out.push(wire::RPC_VERSION);
        out.push(wire::AUTH_SIMPLE);
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        out.extend_from_slice(&body);
        let mut writer = stream;
        writer
            .write_all(&out)
            .map_err(|e| io_err("writing the connection header to", addr, e))?;
        let reader = BufReader::with_capacity(
            64 << 10,
            writer
                .try_clone()
                .map_err(|e| io_err("connecting to", addr, e))?,
        );
        Ok(Conn {
            writer,
            reader,
            addr: addr.to_string(),
            next_id: 1,
            call: CallBuffer::default(),
            answer: Vec::with_capacity(64 << 10),
        })
    }

    /// Calls `method` with `param` and `cells` (a KeyValueCodec cell block, empty for none)
    /// and waits for the answer.
    pub fn call<R: Message + Default>(
        &mut self,
        method: &str,
        param: &impl Message,
        cells: &[u8],
    ) -> Result<Reply<'_, R>, ClientError> {
        let (message, at) = self.call_raw(method, param, cells)?;
        Ok(Reply {
            message,
            cells: &self.answer[at],
        })
    }

    /// [`Conn::call`] answering the message and where the cell block is in
    /// [`Conn::answer`].
    pub fn call_raw<R: Message + Default>(
        &mut self,
        method: &str,
        param: &impl Message,
        cells: &[u8],
    ) -> Result<(R, Range<usize>), ClientError> {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        let frame = self.call.encode(id, method, param, cells);
        self.writer
            .write_all(frame)
            .map_err(|e| io_err("sending a call to", &self.addr, e))?;
        let mut len = [0u8; 4];
        self.reader
            .read_exact(&mut len)
            .map_err(|e| io_err("reading an answer from", &self.addr, e))?;
        let len = wire::frame_len(len, "response", MAX_ANSWER).map_err(|e| {
            io_err(
                "reading an answer from",
                &self.addr,
                std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
            )
        })?;
        self.answer.clear();
        // Read as the bytes arrive: a length is only a claim until they are here.
        (&mut self.reader)
            .take(len as u64)
            .read_to_end(&mut self.answer)
            .map_err(|e| io_err("reading an answer from", &self.addr, e))?;
        if self.answer.len() != len {
            return Err(io_err(
                "reading an answer from",
                &self.addr,
                std::io::ErrorKind::UnexpectedEof.into(),
            ));
        }
        decode_answer(&self.answer, id, method, &self.addr)
    }

    /// The last answer's bytes.
    pub fn answer(&self) -> &[u8] {
        &self.answer
    }

    /// The stream, for writing, and its buffered reader, for a connection that other code
    /// takes over after the handshake.
    pub fn into_parts(self) -> (TcpStream, BufReader<TcpStream>) {
        (self.writer, self.reader)
    }
}

/// What a connection reuses from call to call: the frame being written and its request
/// header (so a call allocates nothing to be sent).
#[derive(Default)]
pub(crate) struct CallBuffer {
    out: Vec<u8>,
    header: pb::RequestHeader,
}

impl CallBuffer {
    /// The call's frame: length, request header, parameter, cell block.
    pub fn encode(&mut self, id: u32, method: &str, param: &impl Message, cells: &[u8]) -> &[u8] {
        let h = &mut self.header;
        h.call_id = Some(id);
        let name = h.method_name.get_or_insert_with(String::new);
        name.clear();
        name.push_str(method);
        h.request_param = Some(true);
        h.cell_block_meta = (!cells.is_empty()).then_some(pb::CellBlockMeta {
            length: Some(cells.len() as u32),
        });
        let out = &mut self.out;
        out.clear();
        out.extend_from_slice(&[0; 4]);
        h.encode_length_delimited(out).expect("a vector grows");
        param.encode_length_delimited(out).expect("a vector grows");
        out.extend_from_slice(cells);
        let len = (out.len() - 4) as u32;
        out[..4].copy_from_slice(&len.to_be_bytes());
        out
    }
}

/// The answer to call `id` in `frame` (without its length prefix): its message and where
/// its cell block is in `frame`.
pub(crate) fn decode_answer<R: Message + Default>(
    frame: &[u8],
    id: u32,
    method: &str,
    addr: &str,
) -> Result<(R, Range<usize>), ClientError> {
    let decode = |reason: String| ClientError::Decode {
        method: method.to_string(),
        addr: addr.to_string(),
        reason,
    };
    let mut b = frame;
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
            addr: addr.to_string(),
            class: e.exception_class_name.unwrap_or_default(),
            message: e.stack_trace.unwrap_or_default(),
        });
    }
    let cells_len = header.cell_block_meta.and_then(|m| m.length).unwrap_or(0) as usize;
    if cells_len > b.len() {
        return Err(decode(format!(
            "a cell block of {cells_len} bytes in the {} bytes after the header",
            b.len()
        )));
    }
    let (mut msg, _) = b.split_at(b.len() - cells_len);
    let message = R::decode_length_delimited(&mut msg).map_err(|e| decode(e.to_string()))?;
    Ok((message, frame.len() - cells_len..frame.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_frame_is_header_param_cells() {
        let mut buf = CallBuffer::default();
        let param = pb::GetClusterIdRequest {};
        // A longer call first: nothing of it may remain in the next.
        buf.encode(9, "GetMetaRegionLocations", &param, b"OTHER CELLS");
        let out = buf.encode(7, "GetClusterId", &param, b"CELLS").to_vec();
        let len = u32::from_be_bytes(out[..4].try_into().unwrap()) as usize;
        assert_eq!(len, out.len() - 4);
        let mut b = &out[4..];
        let h = pb::RequestHeader::decode_length_delimited(&mut b).unwrap();
        assert_eq!(h.call_id, Some(7));
        assert_eq!(h.method_name.as_deref(), Some("GetClusterId"));
        assert_eq!(h.cell_block_meta.unwrap().length, Some(5));
        pb::GetClusterIdRequest::decode_length_delimited(&mut b).unwrap();
        assert_eq!(b, b"CELLS");
    }

    #[test]
    fn answers_are_checked() {
        let mut frame = Vec::new();
        pb::ResponseHeader {
            call_id: Some(3),
            exception: None,
            cell_block_meta: Some(pb::CellBlockMeta { length: Some(99) }),
        }
        .encode_length_delimited(&mut frame)
        .unwrap();
        pb::GetClusterIdResponse {
            cluster_id: Some("c".into()),
        }
        .encode_length_delimited(&mut frame)
        .unwrap();
        let e = decode_answer::<pb::GetClusterIdResponse>(&frame, 3, "GetClusterId", "h:1")
            .err()
            .unwrap();
        assert!(e.to_string().contains("cell block of 99 bytes"), "{e}");
        let e = decode_answer::<pb::GetClusterIdResponse>(&frame, 4, "GetClusterId", "h:1")
            .err()
            .unwrap();
        assert!(e.to_string().contains("expected 4"), "{e}");
    }
}
