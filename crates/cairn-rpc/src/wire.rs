//! The connection preamble and the call and response frames of HBase 2.x RPC.
//!
//! A connection starts with six bytes: `HBas`, the RPC version (0) and the authentication
//! method (80 = SIMPLE). Two other six-byte openings ask a question and are answered by the
//! server without a connection header: `Regist` (the cluster id, for `RpcConnectionRegistry`)
//! and the security preamble (the server's Kerberos principal). After `HBas` comes the
//! [`ConnectionHeader`](crate::pb::ConnectionHeader) as a 4-byte big-endian length and the
//! message. Then calls: a 4-byte big-endian total length, a varint-delimited
//! [`RequestHeader`](crate::pb::RequestHeader), a varint-delimited request message, then the
//! request's cell block (its length in the header's `cell_block_meta`). Responses have the
//! same shape with a [`ResponseHeader`](crate::pb::ResponseHeader) and, unless the header
//! carries an exception, the response message.

use bytes::{Buf, Bytes};
use prost::Message;

use crate::error::WireError;
use crate::pb;

/// The first four bytes of an HBase RPC connection.
pub const RPC_MAGIC: [u8; 4] = *b"HBas";
/// The only RPC version HBase 2.x speaks.
pub const RPC_VERSION: u8 = 0;
/// The authentication byte of SIMPLE (no SASL): HBase's `AuthMethod.SIMPLE` code.
pub const AUTH_SIMPLE: u8 = 80;
/// The preamble `RpcConnectionRegistry` opens with to ask for the cluster id.
pub const REGISTRY_PREAMBLE: [u8; 6] = *b"Regist";
/// The preamble a client opens with to ask for the server's Kerberos principal.
pub const SECURITY_PREAMBLE: [u8; 6] = *b"Securi";
/// The call id of responses that answer no call (preamble answers, fatal connection errors).
pub const NO_CALL_ID: u32 = u32::MAX;

/// What a connection's first six bytes ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preamble {
    /// An RPC connection with this authentication byte; a connection header follows.
    Rpc {
        /// HBase's `AuthMethod` code (80 SIMPLE, 81 KERBEROS, 82 DIGEST).
        auth: u8,
    },
    /// `Regist`: answer with the cluster id, then close.
    Registry,
    /// The security preamble: answer, then expect a real preamble.
    Security,
}

/// Reads a connection's first six bytes.
pub fn parse_preamble(b: [u8; 6]) -> Result<Preamble, WireError> {
    if b == REGISTRY_PREAMBLE {
        return Ok(Preamble::Registry);
    }
    if b == SECURITY_PREAMBLE {
        return Ok(Preamble::Security);
    }
    if b[..4] != RPC_MAGIC {
        return Err(WireError::BadPreamble(b));
    }
    if b[4] != RPC_VERSION {
        return Err(WireError::BadVersion(b[4]));
    }
    Ok(Preamble::Rpc { auth: b[5] })
}

/// Checks a frame's 4-byte length prefix against `limit`.
pub fn frame_len(prefix: [u8; 4], what: &'static str, limit: usize) -> Result<usize, WireError> {
    let len = i32::from_be_bytes(prefix);
    if len < 0 || len as u64 > limit as u64 {
        return Err(WireError::TooBig {
            what,
            len: len as u32 as u64,
            limit: limit as u64,
        });
    }
    Ok(len as usize)
}

/// How much of a frame [`read_frame`] reserves before the bytes to fill it have arrived.
const FRAME_CHUNK: usize = 64 << 10;

/// Reads a frame of `len` bytes (its length prefix already read and checked against a limit),
/// growing the buffer as bytes arrive: a peer that announces a large frame and sends it slowly,
/// or not at all, holds no more memory than it has sent.
pub fn read_frame(r: &mut impl std::io::Read, len: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    read_frame_into(r, len, &mut buf)?;
    Ok(buf)
}

fn read_frame_into(
    r: &mut impl std::io::Read,
    len: usize,
    buf: &mut Vec<u8>,
) -> std::io::Result<()> {
    buf.reserve_exact(len.min(FRAME_CHUNK));
    while buf.len() < len {
        let at = buf.len();
        // A chunk at a time: the vector's capacity grows by doubling (a large frame costs a
        // few reallocations), but only the chunk being read is written before it arrives.
        let step = (len - at).min(FRAME_CHUNK);
        buf.resize(at + step, 0);
        let mut got = at;
        while got < at + step {
            match r.read(&mut buf[got..at + step]) {
                Ok(0) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("connection closed after {got} of a {len}-byte frame"),
                    ))
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// Decodes a connection header (the bytes after its length prefix).
pub fn decode_connection_header(frame: &[u8]) -> Result<pb::ConnectionHeader, WireError> {
    pb::ConnectionHeader::decode(frame).map_err(|e| WireError::Protobuf {
        what: "connection header",
        offset: 0,
        reason: e.to_string(),
    })
}

/// One call as it arrived: the decoded header, and the request message and cell block as
/// undecoded bytes (which message the parameter is depends on the method).
#[derive(Clone, Debug)]
pub struct Call {
    /// The request header.
    pub header: pb::RequestHeader,
    /// The request message's bytes (empty when the header says there is none).
    pub param: Bytes,
    /// The cell block (empty when the header has no `cell_block_meta`).
    pub cell_block: Bytes,
    /// The whole frame's length, for metrics and the call queue's byte budget.
    pub size: usize,
}

impl Call {
    /// The call id (`call_id` is required; a header without one gets 0, as protobuf reads it).
    pub fn id(&self) -> u32 {
        self.header.call_id.unwrap_or(0)
    }

    /// The method name (empty when missing).
    pub fn method(&self) -> &str {
        self.header.method_name.as_deref().unwrap_or("")
    }

    /// Decodes the request message as `M`; the error names the method.
    pub fn decode_param<M: Message + Default>(&self) -> Result<M, WireError> {
        M::decode(self.param.as_ref()).map_err(|e| WireError::Protobuf {
            what: "request parameter",
            offset: 0,
            reason: format!("{} request: {e}", self.method()),
        })
    }
}

/// Reads a varint length prefix at `pos`, then checks the part fits in the frame.
fn delimited(frame: &Bytes, pos: &mut usize, what: &'static str) -> Result<Bytes, WireError> {
    let mut rest = &frame[*pos..];
    let before = rest.remaining();
    let len = prost::encoding::decode_varint(&mut rest).map_err(|e| WireError::Protobuf {
        what,
        offset: *pos,
        reason: format!("bad length prefix: {e}"),
    })?;
    let start = *pos + (before - rest.remaining());
    if len > (frame.len() - start) as u64 {
        return Err(WireError::Truncated {
            what,
            offset: *pos,
            len,
            frame: frame.len(),
        });
    }
    let end = start + len as usize;
    *pos = end;
    Ok(frame.slice(start..end))
}

/// Splits a call frame (the bytes after its 4-byte length prefix) into header, request and
/// cell block. The request and cell block share the frame's memory.
pub fn decode_call(frame: Bytes) -> Result<Call, WireError> {
    let size = frame.len();
    let mut pos = 0;
    let header_bytes = delimited(&frame, &mut pos, "request header")?;
    let header = pb::RequestHeader::decode(header_bytes).map_err(|e| WireError::Protobuf {
        what: "request header",
        offset: 0,
        reason: e.to_string(),
    })?;
    let param = if header.request_param.unwrap_or(false) {
        delimited(&frame, &mut pos, "request parameter")?
    } else {
        Bytes::new()
    };
    let cell_block = match header.cell_block_meta.as_ref().and_then(|m| m.length) {
        Some(len) => {
            if len as usize > frame.len() - pos {
                return Err(WireError::Truncated {
                    what: "cell block",
                    offset: pos,
                    len: len as u64,
                    frame: frame.len(),
                });
            }
            frame.slice(pos..pos + len as usize)
        }
        None => Bytes::new(),
    };
    Ok(Call {
        header,
        param,
        cell_block,
        size,
    })
}

/// Encodes a response frame, length prefix included: the header (with the cell block's
/// length, if any), the response message unless the call failed, then the cell block.
pub fn encode_response(
    call_id: u32,
    message: Option<&dyn EncodeDelimited>,
    exception: Option<pb::ExceptionResponse>,
    cell_block: &[u8],
) -> Vec<u8> {
    let header = pb::ResponseHeader {
        call_id: Some(call_id),
        exception,
        cell_block_meta: (!cell_block.is_empty()).then_some(pb::CellBlockMeta {
            length: Some(cell_block.len() as u32),
        }),
    };
    let hlen = header.encoded_len();
    let mlen = message.map_or(0, |m| m.delimited_len());
    let total = prost::length_delimiter_len(hlen) + hlen + mlen + cell_block.len();
    let mut out = Vec::with_capacity(4 + total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    header
        .encode_length_delimited(&mut out)
        .expect("a Vec grows as needed");
    if let Some(m) = message {
        m.encode_delimited_into(&mut out);
    }
    out.extend_from_slice(cell_block);
    out
}

/// A response message, object-safe, so one encoder serves every method's response type.
pub trait EncodeDelimited {
    /// Length of the message with its varint length prefix.
    fn delimited_len(&self) -> usize;
    /// Appends the varint length and the message.
    fn encode_delimited_into(&self, out: &mut Vec<u8>);
}

impl<M: Message> EncodeDelimited for M {
    fn delimited_len(&self) -> usize {
        let n = self.encoded_len();
        prost::length_delimiter_len(n) + n
    }
    fn encode_delimited_into(&self, out: &mut Vec<u8>) {
        self.encode_length_delimited(out)
            .expect("a Vec grows as needed");
    }
}

/// HBase's `ExceptionResponse` for a Java exception class and message.
pub fn exception(class: &str, message: &str, do_not_retry: bool) -> pb::ExceptionResponse {
    pb::ExceptionResponse {
        exception_class_name: Some(class.to_string()),
        // The client shows the stack trace as the remote exception's message.
        stack_trace: Some(message.to_string()),
        hostname: None,
        port: None,
        do_not_retry: Some(do_not_retry),
        // HBase 2.6 marks the exceptions of an overloaded server so clients back off longer.
        server_overloaded: Some(
            class == "org.apache.hadoop.hbase.CallQueueTooBigException"
                || class == "org.apache.hadoop.hbase.CallDroppedException",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call_frame(header: &pb::RequestHeader, param: &[u8], cells: &[u8]) -> Bytes {
        let mut f = Vec::new();
        header.encode_length_delimited(&mut f).unwrap();
        prost::encoding::encode_varint(param.len() as u64, &mut f);
        f.extend_from_slice(param);
        f.extend_from_slice(cells);
        Bytes::from(f)
    }

    fn header(id: u32, method: &str, cells: Option<u32>) -> pb::RequestHeader {
        pb::RequestHeader {
            call_id: Some(id),
            method_name: Some(method.into()),
            request_param: Some(true),
            cell_block_meta: cells.map(|n| pb::CellBlockMeta { length: Some(n) }),
            ..Default::default()
        }
    }

    #[test]
    fn preambles_are_told_apart() {
        assert_eq!(
            parse_preamble(*b"HBas\x00\x50"),
            Ok(Preamble::Rpc { auth: AUTH_SIMPLE })
        );
        assert_eq!(parse_preamble(*b"Regist"), Ok(Preamble::Registry));
        assert_eq!(parse_preamble(*b"Securi"), Ok(Preamble::Security));
        assert_eq!(
            parse_preamble(*b"HBas\x01\x50"),
            Err(WireError::BadVersion(1))
        );
        assert!(matches!(
            parse_preamble(*b"GET / "),
            Err(WireError::BadPreamble(_))
        ));
    }

    #[test]
    fn frame_lengths_are_bounded() {
        assert_eq!(frame_len(100u32.to_be_bytes(), "request", 100), Ok(100));
        assert!(frame_len(101u32.to_be_bytes(), "request", 100).is_err());
        assert!(frame_len((-1i32).to_be_bytes(), "request", 100).is_err());
    }

    /// A reader that hands out `have` bytes, then fails as a stalled peer's socket would.
    struct Stalls {
        have: usize,
    }

    impl std::io::Read for Stalls {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.have == 0 {
                return Err(std::io::ErrorKind::TimedOut.into());
            }
            let n = buf.len().min(self.have).min(1000);
            buf[..n].fill(7);
            self.have -= n;
            Ok(n)
        }
    }

    #[test]
    fn a_frame_is_read_as_its_bytes_arrive() {
        let mut r = Stalls { have: 3000 };
        assert_eq!(read_frame(&mut r, 3000).unwrap(), vec![7; 3000]);
        // 200 MiB announced, 100 KB sent: what was reserved is near what was sent.
        let mut r = Stalls { have: 100_000 };
        let mut buf = Vec::new();
        let e = read_frame_into(&mut r, 200 << 20, &mut buf).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
        assert!(buf.capacity() <= 256 << 10, "{} reserved", buf.capacity());
        let e = read_frame(&mut &b"abc"[..], 10).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
        assert!(e.to_string().contains("3 of a 10-byte frame"), "{e}");
    }

    #[test]
    fn a_call_splits_into_header_param_and_cells() {
        let f = call_frame(&header(7, "Get", Some(3)), b"\x0a\x01x", b"abc");
        let c = decode_call(f).unwrap();
        assert_eq!(c.id(), 7);
        assert_eq!(c.method(), "Get");
        assert_eq!(&c.param[..], b"\x0a\x01x");
        assert_eq!(&c.cell_block[..], b"abc");
    }

    #[test]
    fn truncated_parts_are_errors_naming_the_part() {
        let f = call_frame(&header(1, "Get", Some(10)), b"", b"abc");
        match decode_call(f) {
            Err(WireError::Truncated { what, .. }) => assert_eq!(what, "cell block"),
            other => panic!("{other:?}"),
        }
        let mut f = Vec::new();
        header(1, "Get", None)
            .encode_length_delimited(&mut f)
            .unwrap();
        f.push(50); // a parameter of 50 bytes, none there
        match decode_call(Bytes::from(f)) {
            Err(WireError::Truncated { what, .. }) => assert_eq!(what, "request parameter"),
            other => panic!("{other:?}"),
        }
        assert!(decode_call(Bytes::from_static(b"\xff\xff\xff\xff\xff\xff")).is_err());
        assert!(decode_call(Bytes::new()).is_err());
    }

    #[test]
    fn a_response_frame_has_its_length_header_message_and_cells() {
        let msg = pb::CellBlockMeta { length: Some(5) };
        let out = encode_response(9, Some(&msg), None, b"cells");
        let total = u32::from_be_bytes(out[..4].try_into().unwrap()) as usize;
        assert_eq!(total, out.len() - 4);
        let mut body = &out[4..];
        let h = pb::ResponseHeader::decode_length_delimited(&mut body).unwrap();
        assert_eq!(h.call_id, Some(9));
        assert_eq!(h.cell_block_meta.unwrap().length, Some(5));
        let m = pb::CellBlockMeta::decode_length_delimited(&mut body).unwrap();
        assert_eq!(m, msg);
        assert_eq!(body, b"cells");
    }

    #[test]
    fn an_exception_response_has_no_message() {
        let out = encode_response(
            3,
            None,
            Some(exception(
                "org.apache.hadoop.hbase.DoNotRetryIOException",
                "no",
                true,
            )),
            b"",
        );
        let mut body = &out[4..];
        let h = pb::ResponseHeader::decode_length_delimited(&mut body).unwrap();
        let e = h.exception.unwrap();
        assert_eq!(
            e.exception_class_name.as_deref(),
            Some("org.apache.hadoop.hbase.DoNotRetryIOException")
        );
        assert_eq!(e.do_not_retry, Some(true));
        assert!(body.is_empty());
    }
}
