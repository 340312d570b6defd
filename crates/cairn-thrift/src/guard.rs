//! A bounds-checking input protocol over Apache Thrift's binary and compact protocols.
//!
//! The `thrift` crate (0.17) allocates whatever length a peer sends before reading it: a
//! binary string length of `-1` becomes a `usize::MAX` allocation (a panic), a compact one of
//! 4 GiB a 4 GiB allocation, and its generated code reserves lists by the size on the wire
//! (`scripts/generate.sh` makes cairn's grow as their elements arrive instead). [`Guarded`]
//! sits between the generated code and the crate's protocol: it decodes the message header,
//! strings and binaries itself (reading a string in chunks as its bytes arrive) and checks every
//! length and element count against what is left of the request's byte budget; all other
//! reads go to the crate's protocol unchanged. Both read from one shared, metered source, so the
//! budget also bounds the request as a whole.

use std::cell::RefCell;
use std::io::{self, Read};
use std::rc::Rc;

use thrift::protocol::{
    TBinaryInputProtocol, TCompactInputProtocol, TFieldIdentifier, TInputProtocol, TListIdentifier,
    TMapIdentifier, TMessageIdentifier, TMessageType, TSetIdentifier, TStructIdentifier,
};
use thrift::{ProtocolError, ProtocolErrorKind};

/// Which Thrift protocol the bytes are in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// `TBinaryProtocol`, strict (messages start with `0x80 0x01`).
    Binary,
    /// `TCompactProtocol` (messages start with `0x82`).
    Compact,
}

struct Metered<R> {
    inner: R,
    remaining: usize,
    limit: usize,
    exceeded: bool,
}

/// The request's bytes, shared by the crate's protocol and the guard; every byte handed out
/// is taken from the request's budget.
struct Source<R>(Rc<RefCell<Metered<R>>>);

impl<R> Clone for Source<R> {
    fn clone(&self) -> Self {
        Source(self.0.clone())
    }
}

impl<R: Read> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut m = self.0.borrow_mut();
        if buf.is_empty() {
            return Ok(0);
        }
        if m.remaining == 0 {
            m.exceeded = true;
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("request is larger than the limit of {} bytes", m.limit),
            ));
        }
        let want = buf.len().min(m.remaining);
        let n = m.inner.read(&mut buf[..want])?;
        m.remaining -= n;
        Ok(n)
    }
}

fn size_error(what: &str, n: i64, remaining: usize) -> thrift::Error {
    thrift::Error::Protocol(ProtocolError::new(
        if n < 0 {
            ProtocolErrorKind::NegativeSize
        } else {
            ProtocolErrorKind::SizeLimit
        },
        format!("{what} of {n} does not fit in the {remaining} bytes left of the request"),
    ))
}

/// How much of a string is read (and allocated) at a time.
const STRING_CHUNK: usize = 64 << 10;

/// The largest field id read: one compact-protocol delta (at most 15) more still fits an i16.
const MAX_FIELD_ID: i16 = i16::MAX - 15;

fn invalid(msg: String) -> thrift::Error {
    thrift::Error::Protocol(ProtocolError::new(ProtocolErrorKind::InvalidData, msg))
}

/// An input protocol that never allocates more than the request has left to send.
pub struct Guarded<R: Read + 'static> {
    inner: Box<dyn TInputProtocol>,
    src: Source<R>,
    flavor: Flavor,
    depth: u32,
    structs: u32,
    message: Option<TMessageIdentifier>,
    oversized: bool,
}

/// Structs nested deeper than this are refused (the Hbase IDL nests three deep).
pub const MAX_STRUCT_DEPTH: u32 = 32;

impl<R: Read + 'static> Guarded<R> {
    /// Reads `flavor` from `source`; each request may use `request_limit` bytes.
    pub fn new(source: R, flavor: Flavor, request_limit: usize) -> Guarded<R> {
        let src = Source(Rc::new(RefCell::new(Metered {
            inner: source,
            remaining: request_limit,
            limit: request_limit,
            exceeded: false,
        })));
        let inner: Box<dyn TInputProtocol> = match flavor {
            Flavor::Binary => Box::new(TBinaryInputProtocol::new(src.clone(), true)),
            Flavor::Compact => Box::new(TCompactInputProtocol::new(src.clone())),
        };
        Guarded {
            inner,
            src,
            flavor,
            depth: 0,
            structs: 0,
            message: None,
            oversized: false,
        }
    }

    /// Looks at the source the requests are read from (e.g. for bytes it holds unread).
    pub fn with_source<T>(&self, f: impl FnOnce(&R) -> T) -> T {
        f(&self.src.0.borrow().inner)
    }

    /// The per-request byte budget.
    pub fn limit(&self) -> usize {
        self.src.0.borrow().limit
    }

    /// True when the current request broke a size limit (a length, a count or its total).
    pub fn oversized(&self) -> bool {
        self.oversized || self.src.0.borrow().exceeded
    }

    /// Starts a new request: the full budget again, no message read yet.
    pub fn begin_request(&mut self) {
        let mut m = self.src.0.borrow_mut();
        m.remaining = m.limit;
        m.exceeded = false;
        drop(m);
        self.oversized = false;
        self.depth = 0;
        self.structs = 0;
        self.message = None;
    }

    /// Bytes the current request may still use.
    pub fn remaining(&self) -> usize {
        self.src.0.borrow().remaining
    }

    /// The header of the current request, once read.
    pub fn message(&self) -> Option<&TMessageIdentifier> {
        self.message.as_ref()
    }

    /// True when the request's arguments were read to their end (the stream is at the next
    /// request).
    pub fn request_complete(&self) -> bool {
        self.message.is_some() && self.structs > 0 && self.depth == 0
    }

    /// True when a header was read and nothing after it (an unknown method: its arguments are
    /// still in the stream).
    pub fn arguments_unread(&self) -> bool {
        self.message.is_some() && self.structs == 0
    }

    fn raw(&mut self, buf: &mut [u8]) -> thrift::Result<()> {
        self.src.read_exact(buf).map_err(thrift::Error::from)
    }

    fn raw_i32(&mut self) -> thrift::Result<i32> {
        let mut b = [0u8; 4];
        self.raw(&mut b)?;
        Ok(i32::from_be_bytes(b))
    }

    fn raw_u8(&mut self) -> thrift::Result<u8> {
        let mut b = [0u8; 1];
        self.raw(&mut b)?;
        Ok(b[0])
    }

    fn raw_varint_u32(&mut self) -> thrift::Result<u32> {
        let mut v: u64 = 0;
        for i in 0..5 {
            let b = self.raw_u8()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return u32::try_from(v).map_err(|_| invalid(format!("varint {v} overflows u32")));
            }
        }
        Err(invalid("varint longer than 5 bytes".into()))
    }

    /// A length-prefixed byte string, its length checked before anything is allocated.
    fn guarded_bytes(&mut self, what: &str) -> thrift::Result<Vec<u8>> {
        let len: i64 = match self.flavor {
            Flavor::Binary => i64::from(self.raw_i32()?),
            Flavor::Compact => i64::from(self.raw_varint_u32()?),
        };
        let remaining = self.remaining();
        if len < 0 || len as u64 > remaining as u64 {
            self.oversized = true;
            return Err(size_error(what, len, remaining));
        }
        // Grown as the bytes arrive: a peer that declares a large string within the budget
        // and sends it slowly (or never) holds no more memory than it has sent.
        let len = len as usize;
        let mut buf = Vec::with_capacity(len.min(STRING_CHUNK));
        while buf.len() < len {
            let at = buf.len();
            buf.resize(at + (len - at).min(STRING_CHUNK), 0);
            self.raw(&mut buf[at..])?;
        }
        Ok(buf)
    }

    fn check_count(&mut self, what: &str, n: i32, min_element_bytes: usize) -> thrift::Result<()> {
        let remaining = self.remaining();
        if n < 0 || (n as usize).saturating_mul(min_element_bytes) > remaining {
            self.oversized = true;
            return Err(size_error(what, i64::from(n), remaining));
        }
        Ok(())
    }
}

impl<R: Read + 'static> TInputProtocol for Guarded<R> {
    fn read_message_begin(&mut self) -> thrift::Result<TMessageIdentifier> {
        let (kind, name, seq) = match self.flavor {
            Flavor::Binary => {
                let first = self.raw_i32()?;
                if first >= 0 || (first as u32) & 0xffff_0000 != 0x8001_0000 {
                    return Err(thrift::Error::Protocol(ProtocolError::new(
                        ProtocolErrorKind::BadVersion,
                        format!("not a strict binary protocol message header: {first:#010x}"),
                    )));
                }
                let kind = (first & 0xff) as u8;
                let name = self.guarded_bytes("message name length")?;
                let seq = self.raw_i32()?;
                (kind, name, seq)
            }
            Flavor::Compact => {
                let id = self.raw_u8()?;
                if id != 0x82 {
                    return Err(thrift::Error::Protocol(ProtocolError::new(
                        ProtocolErrorKind::BadVersion,
                        format!("not a compact protocol message header: {id:#04x}"),
                    )));
                }
                let vt = self.raw_u8()?;
                if vt & 0x1f != 1 {
                    return Err(thrift::Error::Protocol(ProtocolError::new(
                        ProtocolErrorKind::BadVersion,
                        format!("compact protocol version {} (expected 1)", vt & 0x1f),
                    )));
                }
                let seq = self.raw_varint_u32()? as i32;
                let name = self.guarded_bytes("message name length")?;
                (vt >> 5, name, seq)
            }
        };
        let kind = TMessageType::try_from(kind)?;
        let name = String::from_utf8(name)
            .map_err(|_| invalid("message name is not UTF-8".to_string()))?;
        let ident = TMessageIdentifier::new(name, kind, seq);
        self.message = Some(ident.clone());
        Ok(ident)
    }

    fn read_message_end(&mut self) -> thrift::Result<()> {
        self.inner.read_message_end()
    }

    fn read_struct_begin(&mut self) -> thrift::Result<Option<TStructIdentifier>> {
        if self.depth >= MAX_STRUCT_DEPTH {
            return Err(thrift::Error::Protocol(ProtocolError::new(
                ProtocolErrorKind::DepthLimit,
                format!("structs nested deeper than {MAX_STRUCT_DEPTH}"),
            )));
        }
        let r = self.inner.read_struct_begin()?;
        self.depth += 1;
        self.structs += 1;
        Ok(r)
    }

    fn read_struct_end(&mut self) -> thrift::Result<()> {
        self.inner.read_struct_end()?;
        self.depth = self.depth.saturating_sub(1);
        Ok(())
    }

    fn read_field_begin(&mut self) -> thrift::Result<TFieldIdentifier> {
        let f = self.inner.read_field_begin()?;
        // The compact protocol adds the next field's 4-bit delta to this id in an i16; past
        // `i16::MAX - 15` that addition overflows inside the thrift crate (a panic where
        // overflow checks are on). No IDL served here uses such ids: refuse them up front.
        match f.id {
            Some(id) if id > MAX_FIELD_ID => Err(invalid(format!(
                "field id {id} is past {MAX_FIELD_ID}, the largest this server accepts"
            ))),
            _ => Ok(f),
        }
    }

    fn read_field_end(&mut self) -> thrift::Result<()> {
        self.inner.read_field_end()
    }

    fn read_bool(&mut self) -> thrift::Result<bool> {
        self.inner.read_bool()
    }

    fn read_bytes(&mut self) -> thrift::Result<Vec<u8>> {
        self.guarded_bytes("binary length")
    }

    fn read_i8(&mut self) -> thrift::Result<i8> {
        self.inner.read_i8()
    }

    fn read_i16(&mut self) -> thrift::Result<i16> {
        self.inner.read_i16()
    }

    fn read_i32(&mut self) -> thrift::Result<i32> {
        self.inner.read_i32()
    }

    fn read_i64(&mut self) -> thrift::Result<i64> {
        self.inner.read_i64()
    }

    fn read_double(&mut self) -> thrift::Result<f64> {
        self.inner.read_double()
    }

    fn read_string(&mut self) -> thrift::Result<String> {
        let b = self.guarded_bytes("string length")?;
        String::from_utf8(b).map_err(|e| invalid(format!("string is not UTF-8: {e}")))
    }

    fn read_list_begin(&mut self) -> thrift::Result<TListIdentifier> {
        let l = self.inner.read_list_begin()?;
        self.check_count("list size", l.size, 1)?;
        Ok(l)
    }

    fn read_list_end(&mut self) -> thrift::Result<()> {
        self.inner.read_list_end()
    }

    fn read_set_begin(&mut self) -> thrift::Result<TSetIdentifier> {
        let s = self.inner.read_set_begin()?;
        self.check_count("set size", s.size, 1)?;
        Ok(s)
    }

    fn read_set_end(&mut self) -> thrift::Result<()> {
        self.inner.read_set_end()
    }

    fn read_map_begin(&mut self) -> thrift::Result<TMapIdentifier> {
        let m = self.inner.read_map_begin()?;
        self.check_count("map size", m.size, 2)?;
        Ok(m)
    }

    fn read_map_end(&mut self) -> thrift::Result<()> {
        self.inner.read_map_end()
    }

    fn read_byte(&mut self) -> thrift::Result<u8> {
        self.inner.read_byte()
    }
}
