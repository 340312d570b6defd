//! A WAL file in HBase 2.6's format (`AbstractProtobufLogWriter`, `ProtobufLogWriter`) and the
//! scanner that reads one back, saying exactly where and why it stopped.
//!
//! ```text
//! file    = "PWAL" varint(header length) WALHeader entry* end
//! end     = trailer                       a file closed cleanly
//!         | marker anything               cairn's preallocated file: the writer's end mark
//!         | zero*                         nothing written past the last entry
//!         | a torn entry                  a writer that died mid-write (HBase's files)
//! trailer = WALTrailer (empty: 0 bytes) | size int32 (0) | "LAWP"
//! marker  = FF FF FF FF 07 00 00 00
//! ```
//!
//! The header is HBase's (`has_compression` and `has_tag_compression` false,
//! `writer_cls_name` `ProtobufLogWriter`, `cell_codec_cls_name` `WALCellCodec`), plus cairn's
//! field 1000, which HBase's reader keeps as an unknown field: the file's number and whether
//! the file is a recycled one. Its entries carry cairn's CRC32C (see [`crate::entry`]).
//!
//! cairn's local WAL is a preallocated file written through a memory mapping, so past the
//! last entry there is space that the writer has not used yet. HBase's reader parses a
//! `WALKey` length there; at zeros it would read an empty key and fail with "missing required
//! fields" (an `IOException`, which stops `WALSplitter`), not the `EOFException` it takes as
//! the normal end of a WAL whose writer died. So the writer keeps an end marker right after
//! the last entry: a `WALKey` length of 2^31-1, which HBase's `ProtobufUtil.parseDelimitedFrom`
//! refuses with an `EOFException` ("Available bytes not enough for parsing PB message") since
//! the file has fewer bytes left; cairn's scanner ends the entries there too. A new entry is
//! written in an order that never leaves the marker missing (see `mapped.rs`). A file is
//! sealed at a roll or close: the trailer replaces the marker and the file is cut after it.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::OnceLock;

use cairn_checksum::{ChecksumType, DataChecksum, Implementation};

use crate::entry::{self, MAX_ENTRY_LEN, MAX_KEY_LEN};
use crate::wire::{self, Fields, Value};
use crate::{DropReason, Dropped, WalEdit, WalError};

/// First bytes of every WAL file: `AbstractProtobufWALReader.PB_WAL_MAGIC`.
pub const MAGIC: &[u8; 4] = b"PWAL";
/// Last bytes of a WAL file closed cleanly: `PB_WAL_COMPLETE_MAGIC`.
pub const TRAILER_MAGIC: &[u8; 4] = b"LAWP";
/// What a clean close appends: the empty `WALTrailer`, its size (0) and the magic.
pub const TRAILER: [u8; 8] = [0, 0, 0, 0, b'L', b'A', b'W', b'P'];
/// cairn's end mark after the last entry of a preallocated file: a `WALKey` length of
/// 2^31-1 (a five-byte varint) that no file has room for.
pub const END_MARKER: [u8; 8] = [0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0, 0, 0];
/// The writer class HBase's reader is told (it accepts only its own writers' names).
pub const WRITER_CLASS: &str = "ProtobufLogWriter";
/// The cell codec HBase writes by default (`WALCellCodec.getWALCellCodecClass`).
pub const CELL_CODEC: &str = "org.apache.hadoop.hbase.regionserver.wal.WALCellCodec";
/// The writer classes HBase 2.6's reader accepts (`AbstractProtobufWALReader`).
pub const HBASE_WRITER_CLASSES: [&str; 4] = [
    "ProtobufLogWriter",
    "AsyncProtobufLogWriter",
    "SecureProtobufLogWriter",
    "SecureAsyncProtobufLogWriter",
];
/// The `WALHeader` field holding cairn's [`CairnFileInfo`].
pub const CAIRN_HEADER_FIELD: u32 = 1000;
/// Largest `WALHeader` cairn reads (HBase's are under a hundred bytes).
const MAX_HEADER_LEN: u64 = 1 << 20;

/// The checksum of every entry: CRC32C, computed by the kernel `cairn-checksum` selected for
/// this process.
pub(crate) fn crc32c() -> &'static DataChecksum {
    static CRC: OnceLock<DataChecksum> = OnceLock::new();
    CRC.get_or_init(|| {
        // The selected implementation is always one this CPU can run, so the first call only
        // fails if that invariant is broken; the portable kernel needs no CPU support at all.
        DataChecksum::new(ChecksumType::Crc32C, 512).unwrap_or_else(|_| {
            DataChecksum::with_implementation(ChecksumType::Crc32C, 512, Implementation::Portable)
                .expect("the portable kernel is always available")
        })
    })
}

/// What cairn records about one of its files in the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CairnFileInfo {
    /// The file number, which the file's name must carry.
    pub number: u64,
    /// The file held an older WAL before: its entries' checksums are masked with
    /// [`crc_mask`] of `number`.
    pub recycled: bool,
}

/// What a WAL file's header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHeader {
    /// Bytes of the magic and the delimited header: where the first entry starts.
    pub len: u64,
    /// `writer_cls_name`.
    pub writer: Option<String>,
    /// `cell_codec_cls_name` (`None`: HBase's default, `WALCellCodec`).
    pub codec: Option<String>,
    /// cairn's field: `Some` for a file cairn wrote, whose entries must carry checksums.
    pub cairn: Option<CairnFileInfo>,
}

/// The bytes of a cairn WAL file's header (magic, delimited `WALHeader`).
pub fn encode_header(info: CairnFileInfo) -> Vec<u8> {
    let mut cairn = Vec::new();
    wire::put_uint(&mut cairn, 1, info.number);
    wire::put_uint(&mut cairn, 2, u64::from(info.recycled));
    let mut h = Vec::new();
    wire::put_uint(&mut h, 1, 0); // has_compression: false
    wire::put_uint(&mut h, 3, 0); // has_tag_compression: false
    wire::put_bytes(&mut h, 4, WRITER_CLASS.as_bytes());
    wire::put_bytes(&mut h, 5, CELL_CODEC.as_bytes());
    wire::put_uint(&mut h, 6, 0); // has_value_compression: false
    wire::put_bytes(&mut h, CAIRN_HEADER_FIELD, &cairn);
    let mut out = MAGIC.to_vec();
    wire::put_varint(&mut out, h.len() as u64);
    out.extend_from_slice(&h);
    out
}

/// What a recycled file XORs into each entry's checksum: the CRC32C of its number (never 0,
/// so that an entry of the file's previous life cannot pass either).
pub fn crc_mask(number: u64) -> u32 {
    match crc32c().checksum(&number.to_be_bytes()) {
        0 => 0x5A5A_5A5A,
        m => m,
    }
}

/// Why a header cannot be read.
enum HeaderError {
    /// The file ends inside the header (a writer that died creating the file).
    Torn,
    /// Not a WAL header, or damaged.
    Bad(String),
    /// A WAL cairn cannot read (compression, encryption, another codec).
    Unsupported(String),
}

fn parse_header(bytes: &[u8], len: u64) -> Result<FileHeader, HeaderError> {
    if bytes.len() < MAGIC.len() {
        return if MAGIC.starts_with(bytes) {
            Err(HeaderError::Torn)
        } else {
            Err(HeaderError::Bad(format!(
                "not a WAL: the file of {len} bytes starts with {bytes:02X?}, not \"PWAL\""
            )))
        };
    }
    if &bytes[..4] != MAGIC {
        return Err(HeaderError::Bad(format!(
            "not a WAL: magic {:02X?}, expected \"PWAL\"",
            &bytes[..4]
        )));
    }
    let (hlen, n) = match wire::read_varint(&bytes[4..], 5) {
        Ok(Some(v)) => v,
        Ok(None) => return Err(HeaderError::Torn),
        Err(()) => return Err(HeaderError::Bad("malformed header length".into())),
    };
    if hlen > MAX_HEADER_LEN {
        return Err(HeaderError::Bad(format!(
            "header length {hlen} is not credible"
        )));
    }
    let start = 4 + n;
    let end = start + hlen as usize;
    if end > bytes.len() {
        return Err(HeaderError::Torn);
    }
    let mut h = FileHeader {
        len: end as u64,
        writer: None,
        codec: None,
        cairn: None,
    };
    let (mut compression, mut encrypted, mut value_compression) = (false, false, false);
    let mut f = Fields::new(&bytes[start..end]);
    let text = |b: &[u8], what: &str| {
        String::from_utf8(b.to_vec()).map_err(|_| HeaderError::Bad(format!("{what} is not UTF-8")))
    };
    loop {
        let next = f
            .next()
            .map_err(|e| HeaderError::Bad(format!("WALHeader: {e}")))?;
        let Some((field, value)) = next else { break };
        match (field, value) {
            (1, Value::Varint(v)) => compression = v != 0,
            (2, Value::Bytes(_)) => encrypted = true,
            (4, Value::Bytes(b)) => h.writer = Some(text(b, "writer_cls_name")?),
            (5, Value::Bytes(b)) => h.codec = Some(text(b, "cell_codec_cls_name")?),
            (6, Value::Varint(v)) => value_compression = v != 0,
            (CAIRN_HEADER_FIELD, Value::Bytes(b)) => {
                let mut info = CairnFileInfo {
                    number: 0,
                    recycled: false,
                };
                let mut c = Fields::new(b);
                while let Some((f, v)) = c
                    .next()
                    .map_err(|e| HeaderError::Bad(format!("cairn's header field: {e}")))?
                {
                    match (f, v) {
                        (1, Value::Varint(v)) => info.number = v,
                        (2, Value::Varint(v)) => info.recycled = v != 0,
                        _ => {}
                    }
                }
                h.cairn = Some(info);
            }
            _ => {}
        }
    }
    if let Some(w) = &h.writer {
        if !HBASE_WRITER_CLASSES.contains(&w.as_str()) {
            return Err(HeaderError::Bad(format!(
                "unknown writer class {w:?} (HBase's reader refuses it too)"
            )));
        }
    }
    if encrypted {
        return Err(HeaderError::Unsupported(
            "the WAL is encrypted (hbase.regionserver.wal.encryption); cairn does not read \
             encrypted WALs"
                .into(),
        ));
    }
    if compression || value_compression {
        return Err(HeaderError::Unsupported(
            "the WAL is compressed (hbase.regionserver.wal.enablecompression); cairn does not \
             read compressed WALs: replay it with HBase, or set the property to false before \
             the server that wrote it stopped"
                .into(),
        ));
    }
    if let Some(c) = &h.codec {
        if c != CELL_CODEC {
            return Err(HeaderError::Unsupported(format!(
                "cell codec {c} (hbase.regionserver.wal.codec); cairn reads only {CELL_CODEC}"
            )));
        }
    }
    Ok(h)
}

/// What reading one WAL file found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileScan {
    /// The header; `None` for an empty file or one whose header was never written whole.
    pub header: Option<FileHeader>,
    /// Entries read back whole.
    pub entries: u64,
    /// Offset just past the last whole entry (the header's end if there is none).
    pub end: u64,
    /// File length.
    pub len: u64,
    /// The file ends in HBase's trailer: it was closed cleanly.
    pub trailer: bool,
    /// The entries end at cairn's end marker (a preallocated file whose writer did not seal
    /// it).
    pub marker: bool,
    /// What was left unread after `end` and why (`None` if the file ended cleanly).
    pub dropped: Option<Dropped>,
}

/// Reads buffered from a file of known length, tracking the offset.
struct Input<R> {
    r: R,
    buf: Vec<u8>,
    /// `buf[at..]` holds the bytes from `offset` on.
    at: usize,
    offset: u64,
    len: u64,
}

impl<R: Read> Input<R> {
    /// At least `n` bytes from the current offset (the caller checks that the file has them).
    fn fill(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.buf.len() - self.at < n {
            self.buf.drain(..self.at);
            self.at = 0;
            let want = n.max(256 << 10);
            let left = (self.len - self.offset) as usize;
            let target = want.min(left.max(n));
            let have = self.buf.len();
            if target > have {
                self.buf.resize(target, 0);
                let mut got = have;
                while got < n {
                    match self.r.read(&mut self.buf[got..]) {
                        Ok(0) => {
                            self.buf.truncate(got);
                            return Err(io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                "the file shrank while it was read",
                            ));
                        }
                        Ok(k) => got += k,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            self.buf.truncate(got);
                            return Err(e);
                        }
                    }
                }
                self.buf.truncate(got);
            }
        }
        Ok(&self.buf[self.at..self.at + n])
    }

    fn consume(&mut self, n: usize) {
        self.at += n;
        self.offset += n as u64;
        if self.at == self.buf.len() {
            self.buf.clear();
            self.at = 0;
        }
        if self.buf.capacity() > 8 << 20 && self.buf.len() - self.at < 256 << 10 {
            self.buf.drain(..self.at);
            self.at = 0;
            self.buf.shrink_to(256 << 10);
        }
    }

    /// True if every byte from the current offset to `end` is zero.
    fn rest_is_zero(&mut self, end: u64) -> io::Result<bool> {
        const CHUNK: usize = 64 << 10;
        static ZEROS: [u8; CHUNK] = [0; CHUNK];
        while self.offset < end {
            let n = ((end - self.offset) as usize).min(CHUNK);
            // A slice comparison is a memcmp: fast over the megabytes of an unused tail.
            if self.fill(n)? != &ZEROS[..n] {
                return Ok(false);
            }
            self.consume(n);
        }
        Ok(true)
    }
}

/// Reads the WAL file at `path`; see [`scan_from`].
pub fn scan_file(
    path: &Path,
    visit: impl FnMut(u64, WalEdit) -> Result<(), WalError>,
) -> Result<FileScan, WalError> {
    let file = File::open(path).map_err(io_err("open", path, 0))?;
    let len = file.metadata().map_err(io_err("stat", path, 0))?.len();
    scan_from(path, len, BufReader::with_capacity(64 << 10, file), visit)
}

/// The header of the WAL file at `path`: `None` for an empty file or one whose header was cut
/// short; an error for a file that is not a WAL or one cairn cannot read.
pub fn read_header(path: &Path) -> Result<Option<FileHeader>, WalError> {
    let mut f = File::open(path).map_err(io_err("open", path, 0))?;
    let len = f.metadata().map_err(io_err("stat", path, 0))?.len();
    let mut head = Vec::new();
    (&mut f)
        .take(len.min(9 + MAX_HEADER_LEN))
        .read_to_end(&mut head)
        .map_err(io_err("read the header of", path, 0))?;
    match parse_header(&head, len) {
        Ok(h) => Ok(Some(h)),
        Err(HeaderError::Torn) => Ok(None),
        Err(_) if head.iter().all(|&b| b == 0) => Ok(None),
        Err(HeaderError::Bad(reason)) => Err(WalError::BadHeader {
            path: path.to_path_buf(),
            reason,
        }),
        Err(HeaderError::Unsupported(reason)) => Err(WalError::Unsupported {
            path: path.to_path_buf(),
            reason,
        }),
    }
}

/// Reads the WAL file at `path` on `fs` (a region's `recovered.edits` on HDFS, say); see
/// [`scan_from`].
pub fn scan_on(
    fs: &dyn cairn_fs::FileSystem,
    path: &Path,
    visit: impl FnMut(u64, WalEdit) -> Result<(), WalError>,
) -> Result<FileScan, WalError> {
    let src = fs.open(path).map_err(io_err("open", path, 0))?;
    let len = src.len();
    scan_from(path, len, crate::replay::SourceReader::new(src), visit)
}

fn io_err(op: &'static str, path: &Path, offset: u64) -> impl FnOnce(io::Error) -> WalError {
    let path = path.to_path_buf();
    move |source| WalError::Io {
        op,
        path,
        offset,
        source,
    }
}

/// Reads a WAL file of `len` bytes from `r`, calling `visit(offset, edit)` for every whole
/// entry in file order; `path` names the file in errors and drops. Stops at the first entry
/// that is torn, damaged or does not parse, and describes the rest of the file in
/// [`FileScan::dropped`]: entries cannot be found again after a bad length, so everything
/// from there on is dropped. The normal ends (a trailer, cairn's end marker, nothing but
/// zeros, the end of the file at an entry boundary, a trailer cut short) are not drops.
///
/// A file that is not a WAL ([`WalError::BadHeader`]) or is one cairn cannot read
/// ([`WalError::Unsupported`]: compressed, encrypted, another cell codec) is an error; an
/// empty file, or one whose header was cut short, holds no entries. Never panics, whatever
/// the bytes.
pub fn scan_from(
    path: &Path,
    len: u64,
    r: impl Read + Seek,
    mut visit: impl FnMut(u64, WalEdit) -> Result<(), WalError>,
) -> Result<FileScan, WalError> {
    let mut r = r;
    let mut scan = FileScan {
        header: None,
        entries: 0,
        end: 0,
        len,
        trailer: false,
        marker: false,
        dropped: None,
    };
    if len == 0 {
        return Ok(scan);
    }
    // The trailer first, as HBase's reader does: it bounds the entries.
    let mut edits_end = len;
    if len >= 8 {
        let mut t = [0u8; 8];
        r.seek(SeekFrom::Start(len - 8))
            .and_then(|_| r.read_exact(&mut t))
            .and_then(|_| r.seek(SeekFrom::Start(0)))
            .map_err(io_err("read the trailer of", path, len - 8))?;
        let size = i32::from_be_bytes([t[0], t[1], t[2], t[3]]);
        if &t[4..] == TRAILER_MAGIC && size >= 0 && (size as u64) + 8 + 5 <= len {
            edits_end = len - 8 - size as u64;
            scan.trailer = true;
        }
    }
    let mut input = Input {
        r,
        buf: Vec::new(),
        at: 0,
        offset: 0,
        len,
    };
    let head_len = len.min(9 + MAX_HEADER_LEN) as usize;
    let head = input
        .fill(head_len)
        .map_err(io_err("read the header of", path, 0))?
        .to_vec();
    // Nothing but zeros: a file whose writer died before its first bytes were on disk (a
    // machine crash loses unsynced bytes of a new file as zeros on some filesystems).
    let never_written = head.starts_with(&[0; 4])
        && input
            .rest_is_zero(len)
            .map_err(io_err("read the header of", path, 0))?;
    let header = match parse_header(&head, len) {
        Ok(h) if h.len <= edits_end => h,
        _ if never_written => {
            scan.dropped = Some(Dropped {
                segment: path.to_path_buf(),
                offset: 0,
                bytes: len,
                reason: DropReason::TornHeader,
            });
            return Ok(scan);
        }
        Ok(_) | Err(HeaderError::Torn) => {
            scan.dropped = Some(Dropped {
                segment: path.to_path_buf(),
                offset: 0,
                bytes: len,
                reason: DropReason::TornHeader,
            });
            return Ok(scan);
        }
        Err(HeaderError::Bad(reason)) => {
            return Err(WalError::BadHeader {
                path: path.to_path_buf(),
                reason,
            })
        }
        Err(HeaderError::Unsupported(reason)) => {
            return Err(WalError::Unsupported {
                path: path.to_path_buf(),
                reason,
            })
        }
    };
    input.consume(header.len as usize);
    scan.end = header.len;
    let cairn = header.cairn;
    let mask = match cairn {
        Some(CairnFileInfo {
            recycled: true,
            number,
        }) => crc_mask(number),
        _ => 0,
    };
    scan.header = Some(header);

    // Where the entry being read starts: a drop starts there.
    let mut offset;
    let reason = loop {
        offset = input.offset;
        let remaining = edits_end - offset;
        if remaining == 0 {
            return Ok(scan);
        }
        let peek = input
            .fill(remaining.min(8) as usize)
            .map_err(io_err("read", path, offset))?;
        if peek.len() >= 5 && peek[..5] == END_MARKER[..5] {
            scan.marker = true;
            return Ok(scan);
        }
        if peek[0] == 0 {
            // A trailer cut short (the writer died closing the file), or nothing written.
            if !scan.trailer && remaining < 8 && TRAILER.starts_with(peek) {
                return Ok(scan);
            }
            if input
                .rest_is_zero(edits_end)
                .map_err(io_err("read", path, offset))?
            {
                return Ok(scan);
            }
            break DropReason::BadLength {
                what: "WALKey",
                length: 0,
            };
        }
        let (key_len, n) = match wire::read_varint(peek, 5) {
            Ok(Some(v)) => v,
            Ok(None) if remaining < 5 => {
                break DropReason::Truncated {
                    what: "WALKey length",
                    needed: 5,
                    available: remaining,
                }
            }
            _ => {
                break DropReason::BadEntry {
                    reason: "malformed WALKey length".into(),
                }
            }
        };
        if key_len > MAX_KEY_LEN {
            break DropReason::BadLength {
                what: "WALKey",
                length: key_len,
            };
        }
        let mut need = n as u64 + key_len;
        if need > remaining {
            break DropReason::Truncated {
                what: "WALKey",
                needed: need,
                available: remaining,
            };
        }
        let bytes = input
            .fill(need as usize)
            .map_err(io_err("read", path, offset))?;
        let key = match entry::parse_key(&bytes[n..]) {
            Ok(k) => k,
            Err(reason) => break DropReason::BadEntry { reason },
        };
        let mut cells = Vec::with_capacity((key.cell_count as usize).min(1024));
        let mut bad = None;
        for i in 0..key.cell_count {
            if need + 4 > remaining {
                bad = Some(DropReason::Truncated {
                    what: "cell length",
                    needed: need + 4,
                    available: remaining,
                });
                break;
            }
            let b = input
                .fill(need as usize + 4)
                .map_err(io_err("read", path, offset))?;
            let l = &b[need as usize..];
            let cell_len = u64::from(u32::from_be_bytes([l[0], l[1], l[2], l[3]]));
            if cell_len < 8 || cell_len > i32::MAX as u64 || need + 4 + cell_len > MAX_ENTRY_LEN {
                bad = Some(DropReason::BadLength {
                    what: "cell",
                    length: cell_len,
                });
                break;
            }
            if need + 4 + cell_len > remaining {
                bad = Some(DropReason::Truncated {
                    what: "cell",
                    needed: need + 4 + cell_len,
                    available: remaining,
                });
                break;
            }
            let at = need as usize + 4;
            need += 4 + cell_len;
            let b = input
                .fill(need as usize)
                .map_err(io_err("read", path, offset))?;
            match entry::parse_cell(&b[at..], key.sequence_id) {
                Ok(kv) => cells.push(kv),
                Err(reason) => {
                    bad = Some(DropReason::BadEntry {
                        reason: format!("cell {i}: {reason}"),
                    });
                    break;
                }
            }
        }
        if let Some(reason) = bad {
            break reason;
        }
        match key.crc {
            Some((stored, s, e)) => {
                let bytes = input
                    .fill(need as usize)
                    .map_err(io_err("read", path, offset))?;
                let computed = entry::entry_crc(bytes, n, (s, e)) ^ mask;
                if computed != stored {
                    break DropReason::ChecksumMismatch { stored, computed };
                }
            }
            None if cairn.is_some() => break DropReason::MissingChecksum,
            None => {}
        }
        let edit = WalEdit {
            region: key.region,
            table: key.table,
            sequence_id: key.sequence_id,
            write_time_ms: key.write_time as i64,
            cluster_ids: key.cluster_ids,
            nonce_group: key.nonce_group,
            nonce: key.nonce,
            orig_sequence_id: key.orig_sequence_id,
            cells,
        };
        input.consume(need as usize);
        visit(offset, edit)?;
        scan.entries += 1;
        scan.end = input.offset;
    };
    scan.dropped = Some(Dropped {
        segment: path.to_path_buf(),
        offset,
        bytes: len - offset,
        reason,
    });
    Ok(scan)
}

/// A file's path with its scan, for logs: `<path>: <n> entries, <how it ended>`.
pub fn describe(path: &Path, scan: &FileScan) -> String {
    let end = match (&scan.dropped, scan.trailer, scan.marker) {
        (Some(d), _, _) => format!("then {}", d.reason),
        (None, true, _) => "closed (trailer)".into(),
        (None, false, true) => "not closed: ends at cairn's end marker".into(),
        (None, false, false) if scan.header.is_none() => "empty".into(),
        (None, false, false) => format!("not closed: ends at offset {}", scan.end),
    };
    format!("{}: {} entries, {end}", path.display(), scan.entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_cell::KeyValue;

    fn edit(seq: u64) -> WalEdit {
        WalEdit::new(
            b"region".to_vec(),
            b"t".to_vec(),
            seq,
            1_700_000_000_000,
            vec![KeyValue::put(format!("row{seq}").as_bytes(), b"f", b"q", 1, b"v").unwrap()],
        )
    }

    fn file(info: CairnFileInfo, seqs: &[u64]) -> Vec<u8> {
        let mut f = encode_header(info);
        for &s in seqs {
            let mut e = Vec::new();
            let enc = entry::encode_entry(&edit(s), &mut e).unwrap();
            if info.recycled {
                entry::mask_crc(&mut e, enc.crc_at, crc_mask(info.number));
            }
            f.extend_from_slice(&e);
        }
        f
    }

    fn scan(bytes: &[u8]) -> (Vec<u64>, FileScan) {
        let mut seqs = Vec::new();
        let s = scan_from(
            Path::new("/w/f.1"),
            bytes.len() as u64,
            io::Cursor::new(bytes),
            |_, e| {
                seqs.push(e.sequence_id);
                Ok(())
            },
        )
        .unwrap();
        (seqs, s)
    }

    const NEW: CairnFileInfo = CairnFileInfo {
        number: 7,
        recycled: false,
    };

    #[test]
    fn every_clean_end_is_clean() {
        let body = file(NEW, &[1, 2, 3]);
        let ends: [(&str, Vec<u8>); 6] = [
            ("eof", vec![]),
            ("trailer", TRAILER.to_vec()),
            ("marker then zeros", [&END_MARKER[..], &[0; 100]].concat()),
            (
                "marker then garbage",
                [&END_MARKER[..], &[0xAB; 100]].concat(),
            ),
            ("zeros", vec![0; 4096]),
            ("trailer cut short", TRAILER[..6].to_vec()),
        ];
        for (name, end) in ends {
            let (seqs, s) = scan(&[&body[..], &end].concat());
            assert_eq!(seqs, [1, 2, 3], "{name}");
            assert_eq!(
                (s.dropped.clone(), s.end),
                (None, body.len() as u64),
                "{name}"
            );
            assert_eq!(s.trailer, name == "trailer", "{name}");
            assert_eq!(s.marker, name.starts_with("marker"), "{name}");
        }
        // A header and nothing else, with or without the marker.
        for tail in [&[][..], &END_MARKER[..]] {
            let (seqs, s) = scan(&[&file(NEW, &[])[..], tail].concat());
            assert!(seqs.is_empty() && s.dropped.is_none());
            assert_eq!(s.header.unwrap().cairn, Some(NEW));
        }
    }

    #[test]
    fn a_torn_last_entry_is_dropped_at_every_cut() {
        let whole = file(NEW, &[1, 2]);
        let first = file(NEW, &[1]).len();
        for cut in first + 1..whole.len() {
            let (seqs, s) = scan(&whole[..cut]);
            assert_eq!(seqs, [1], "cut {cut}");
            let d = s.dropped.expect("a drop");
            assert_eq!((d.offset, d.bytes), (first as u64, (cut - first) as u64));
            assert!(
                matches!(d.reason, DropReason::Truncated { .. }),
                "cut {cut}: {}",
                d.reason
            );
            // The same cut followed by zeros (a preallocated file): damage, never an entry.
            let (seqs, s) = scan(&[&whole[..cut], &[0; 64][..]].concat());
            assert_eq!(seqs, [1], "cut {cut} + zeros");
            assert!(s.dropped.is_some(), "cut {cut} + zeros");
        }
    }

    #[test]
    fn a_flipped_byte_is_caught_by_the_checksum() {
        let whole = file(NEW, &[1, 2]);
        let first = file(NEW, &[1]).len();
        for at in first..whole.len() {
            let mut b = whole.clone();
            b[at] ^= 0x04;
            let (seqs, s) = scan(&b);
            assert_eq!(seqs, [1], "flip at {at}");
            assert!(s.dropped.is_some(), "flip at {at}");
        }
    }

    #[test]
    fn recycled_files_mask_their_checksums() {
        let info = CairnFileInfo {
            number: 9,
            recycled: true,
        };
        let (seqs, s) = scan(&file(info, &[4, 5]));
        assert_eq!((seqs, s.dropped), (vec![4, 5], None));
        // An entry of the file's previous life (unmasked, or masked for another number)
        // after the new header fails.
        let mut old = file(info, &[4]);
        let mut e = Vec::new();
        entry::encode_entry(&edit(5), &mut e).unwrap();
        old.extend_from_slice(&e);
        let (seqs, s) = scan(&old);
        assert_eq!(seqs, [4]);
        assert!(matches!(
            s.dropped.unwrap().reason,
            DropReason::ChecksumMismatch { .. }
        ));
    }

    #[test]
    fn headers_that_are_not_ours_to_read_are_errors() {
        let path = Path::new("/w/f.1");
        let err = |bytes: &[u8]| {
            scan_from(path, bytes.len() as u64, io::Cursor::new(bytes), |_, _| {
                Ok(())
            })
            .unwrap_err()
            .to_string()
        };
        assert!(err(b"CAIRNWAL0000").contains("not a WAL"));
        let with = |fields: &[u8]| {
            let mut b = MAGIC.to_vec();
            b.push(fields.len() as u8);
            b.extend_from_slice(fields);
            b
        };
        assert!(err(&with(&[0x08, 1])).contains("compressed"));
        assert!(err(&with(&[0x12, 1, 0])).contains("encrypted"));
        let codec = [&[0x2A, 3][..], b"Foo"].concat();
        assert!(err(&with(&codec)).contains("cell codec Foo"));
        let writer = [&[0x22, 3][..], b"Foo"].concat();
        assert!(err(&with(&writer)).contains("unknown writer class"));
        // Empty and torn headers hold nothing, and are not errors; nor does a file of zeros
        // (a new file whose bytes a machine crash lost).
        for torn in [&b""[..], b"PW", b"PWAL", &file(NEW, &[])[..20], &[0; 300]] {
            let (seqs, s) = scan(torn);
            assert!(seqs.is_empty() && s.header.is_none());
            assert_eq!(s.dropped.is_some(), !torn.is_empty(), "{torn:?}");
        }
    }

    #[test]
    fn a_file_of_cairns_needs_checksums_and_hbases_do_not() {
        // An entry without the CRC field: HBase's own.
        let mut e = Vec::new();
        entry::encode_entry(&edit(1), &mut e).unwrap();
        let (klen, n) = wire::read_varint(&e, 5).unwrap().unwrap();
        let key_end = n + klen as usize;
        let mut hbase_entry = Vec::new();
        wire::put_varint(&mut hbase_entry, klen - 6);
        hbase_entry.extend_from_slice(&e[n..key_end - 6]);
        hbase_entry.extend_from_slice(&e[key_end..]);
        let mut hbase_header = MAGIC.to_vec();
        let h = [&[0x22, 17][..], b"ProtobufLogWriter"].concat();
        hbase_header.push(h.len() as u8);
        hbase_header.extend_from_slice(&h);
        let (seqs, s) = scan(&[&hbase_header[..], &hbase_entry, &TRAILER].concat());
        assert_eq!((seqs, s.dropped, s.trailer), (vec![1], None, true));
        let (seqs, s) = scan(&[&file(NEW, &[])[..], &hbase_entry].concat());
        assert!(seqs.is_empty());
        assert_eq!(s.dropped.unwrap().reason, DropReason::MissingChecksum);
    }
}
