//! cairn's WAL segment format: file names, the segment header, record framing, the edit
//! payload, and a scanner that reads a segment back and says exactly where and why it stopped.
//!
//! This is cairn's own format, not HBase's `ProtobufLogWriter` layout (`PWAL` magic, delimited
//! `WALKey` protobufs, codec cells, `LAWP` trailer): cairn's WALs are only ever read by cairn,
//! and a fixed frame with a CRC per record lets replay tell a torn tail from good data without
//! a trailer.
//!
//! ```text
//! segment  = header record* zero*       (zeros: the unwritten preallocated tail, if any)
//!          | header' record'* [zero frame, then anything]          (a recycled segment)
//! header   = "CAIRNWAL" | version u16 (1) | flags u16 (0) | segment id u64 | crc32c u32
//!            (24 bytes; crc32c covers the 20 bytes before it)
//! header'  = "CAIRNWAL" | version u16 (2) | flags u16 (1: recycled) | segment id u64 | crc32c u32
//! record   = length u32 | crc32c u32 | payload[length]
//!            crc32c covers the 4 length bytes and then the payload, so a torn or garbage
//!            length cannot pass as a record
//! record'  = length u32 | crc32c ^ mask(segment id) u32 | payload[length]
//! payload  = region (varint length + bytes) | sequence id varint | write time zigzag varint
//!            | cell sequence ids mode u8 | cell count varint | cell*
//! cell     = key (varint length + KeyValue key bytes) | value (varint length + bytes)
//!            | tags (varint length + bytes) | [sequence id varint, mode 2 only]
//! ```
//!
//! A recycled segment is the file of an older, fully flushed segment reused for a new id, so
//! that the writer finds its pages already in the page cache instead of having the kernel
//! allocate and zero fresh ones (RocksDB's `recycle_log_file_num`). Past its last record lie
//! the old segment's bytes, so two rules keep them from passing as records: each record's
//! checksum is XORed with a mask derived from the segment id (an old record fails the check
//! under the new id), and the writer zeroes the frame after each record before writing the
//! record, so a zero frame ends a recycled segment's records whatever follows it.
//!
//! Fixed-width integers are big-endian, as in HFiles; varints are LEB128. Like HBase's WALKey,
//! an edit carries one sequence id for all its cells; the mode byte records whether the cells
//! carry that id (mode 0, the usual case: nothing stored per cell), none (mode 1, cells with
//! sequence id 0, not yet stamped) or their own ids (mode 2), so an edit reads back exactly as
//! it was appended.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cairn_cell::{CellRef, KeyRef, MAX_TAGS_LEN};
use cairn_checksum::{ChecksumType, DataChecksum, Implementation};

use crate::{DropReason, Dropped, WalEdit, WalError};

/// First bytes of every segment.
pub const MAGIC: [u8; 8] = *b"CAIRNWAL";
/// The format version of a segment created for its id (and the oldest this crate reads).
pub const VERSION: u16 = 1;
/// The format version of a recycled segment: version 1 plus the `RECYCLED` flag, masked record
/// checksums and the zero-frame end.
pub const VERSION_RECYCLED: u16 = 2;
/// Header flag of a recycled segment (version 2 only).
pub const FLAG_RECYCLED: u16 = 1;
/// Bytes of the segment header.
pub const HEADER_LEN: usize = 24;
/// Bytes of a record's frame (length and checksum) before its payload.
pub const FRAME_LEN: usize = 8;
/// Largest payload a record may have. Far above HBase's per-cell limit
/// (`hbase.server.keyvalue.maxsize`, 10 MB) so that large multi-cell edits fit, and low enough
/// that a garbage length is recognised as one.
pub const MAX_RECORD_LEN: u32 = 512 << 20;
/// Smallest possible payload: empty region, one-byte sequence id and time, mode, no cells.
const MIN_PAYLOAD_LEN: u32 = 5;

const MODE_EDIT_SEQUENCE_ID: u8 = 0;
const MODE_ZERO: u8 = 1;
const MODE_PER_CELL: u8 = 2;

/// `wal.<id, 20 digits>`: zero-padding makes name order id order, for people listing the
/// directory (cairn itself sorts by the parsed id).
pub fn segment_file_name(id: u64) -> String {
    format!("wal.{id:020}")
}

/// The id in a segment file name, if `name` is one.
pub fn parse_segment_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("wal.")?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The checksum every record and header carries: CRC32C, computed by the kernel
/// `cairn-checksum` selected for this process.
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

/// The header of segment `id`.
pub fn encode_header(id: u64) -> [u8; HEADER_LEN] {
    header_bytes(id, VERSION, 0)
}

/// The header of segment `id` written into the file of an older segment.
pub fn encode_recycled_header(id: u64) -> [u8; HEADER_LEN] {
    header_bytes(id, VERSION_RECYCLED, FLAG_RECYCLED)
}

fn header_bytes(id: u64, version: u16, flags: u16) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&MAGIC);
    h[8..10].copy_from_slice(&version.to_be_bytes());
    h[10..12].copy_from_slice(&flags.to_be_bytes());
    h[12..20].copy_from_slice(&id.to_be_bytes());
    let crc = crc32c().checksum(&h[..20]);
    h[20..].copy_from_slice(&crc.to_be_bytes());
    h
}

/// What a valid segment header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentHeader {
    /// The segment's id, which its file name must match.
    pub id: u64,
    /// The file held an older segment: record checksums are masked ([`record_crc_mask`]) and
    /// a zero frame ends the records.
    pub recycled: bool,
}

/// The segment id in a header, or why the header is not valid.
pub fn decode_header(h: &[u8]) -> Result<u64, String> {
    decode_segment_header(h).map(|h| h.id)
}

/// The header's fields, or why the header is not valid.
pub fn decode_segment_header(h: &[u8]) -> Result<SegmentHeader, String> {
    if h.len() < HEADER_LEN {
        return Err(format!(
            "{} bytes, shorter than the {HEADER_LEN}-byte header",
            h.len()
        ));
    }
    if h[..8] != MAGIC {
        return Err(format!("bad magic {:02X?}, expected \"CAIRNWAL\"", &h[..8]));
    }
    let stored = u32::from_be_bytes([h[20], h[21], h[22], h[23]]);
    let computed = crc32c().checksum(&h[..20]);
    if stored != computed {
        return Err(format!(
            "header checksum {stored:#010x} does not match computed {computed:#010x}"
        ));
    }
    let version = u16::from_be_bytes([h[8], h[9]]);
    let flags = u16::from_be_bytes([h[10], h[11]]);
    let recycled = match (version, flags) {
        (VERSION, 0) => false,
        (VERSION_RECYCLED, FLAG_RECYCLED) => true,
        (VERSION | VERSION_RECYCLED, _) => {
            return Err(format!(
                "unknown header flags {flags:#06x} for format version {version}"
            ))
        }
        _ => {
            return Err(format!(
                "format version {version}; this build reads versions {VERSION} and \
                 {VERSION_RECYCLED}"
            ))
        }
    };
    let mut id = [0u8; 8];
    id.copy_from_slice(&h[12..20]);
    Ok(SegmentHeader {
        id: u64::from_be_bytes(id),
        recycled,
    })
}

/// What a recycled segment XORs into each record's checksum: the CRC32C of its id (never 0,
/// so that an unmasked record of an older segment cannot pass either).
pub fn record_crc_mask(id: u64) -> u32 {
    match crc32c().checksum(&id.to_be_bytes()) {
        0 => 0x5A5A_5A5A,
        m => m,
    }
}

/// Masks (or unmasks) the checksum in the frame of an encoded record for a recycled segment.
pub fn mask_record_crc(record: &mut [u8], mask: u32) {
    if record.len() >= FRAME_LEN {
        let crc = u32::from_be_bytes([record[4], record[5], record[6], record[7]]) ^ mask;
        record[4..FRAME_LEN].copy_from_slice(&crc.to_be_bytes());
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Appends `edit` to `out` as one framed record; returns the record's length in bytes.
/// On error `out` is left as it was.
pub fn encode_record(edit: &WalEdit, out: &mut Vec<u8>) -> Result<usize, WalError> {
    let start = out.len();
    out.extend_from_slice(&[0; FRAME_LEN]);
    put_bytes(out, &edit.region);
    put_varint(out, edit.sequence_id);
    put_varint(out, zigzag(edit.write_time_ms));
    let mode = if edit
        .cells
        .iter()
        .all(|c| c.as_cell().sequence_id == edit.sequence_id)
    {
        MODE_EDIT_SEQUENCE_ID
    } else if edit.cells.iter().all(|c| c.as_cell().sequence_id == 0) {
        MODE_ZERO
    } else {
        MODE_PER_CELL
    };
    out.push(mode);
    put_varint(out, edit.cells.len() as u64);
    for kv in &edit.cells {
        let cell = kv.as_cell();
        put_bytes(out, cell.key.as_bytes());
        put_bytes(out, cell.value);
        put_bytes(out, cell.tags);
        if mode == MODE_PER_CELL {
            put_varint(out, cell.sequence_id);
        }
    }
    let payload_len = out.len() - start - FRAME_LEN;
    if payload_len > MAX_RECORD_LEN as usize {
        out.truncate(start);
        return Err(WalError::RecordTooLarge {
            region: String::from_utf8_lossy(&edit.region).into_owned(),
            size: payload_len,
            max: MAX_RECORD_LEN,
        });
    }
    let len = (payload_len as u32).to_be_bytes();
    out[start..start + 4].copy_from_slice(&len);
    let mut crc = crc32c().running();
    crc.update(&len);
    crc.update(&out[start + FRAME_LEN..]);
    out[start + 4..start + FRAME_LEN].copy_from_slice(&crc.value().to_be_bytes());
    Ok(out.len() - start)
}

/// Reads a payload; every read is bounds-checked, so no input can panic it.
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn varint(&mut self, what: &str) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self
                .data
                .get(self.pos)
                .ok_or_else(|| format!("{what} cut off at payload byte {}", self.pos))?;
            self.pos += 1;
            let bits = u64::from(b & 0x7F);
            if shift == 63 && bits > 1 {
                return Err(format!("{what} overflows 64 bits"));
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(format!("{what} is a varint longer than 10 bytes"))
    }

    fn bytes(&mut self, what: &str) -> Result<&'a [u8], String> {
        let at = self.pos;
        let len = self.varint(what)?;
        let rest = self.data.len() - self.pos;
        if len > rest as u64 {
            return Err(format!(
                "{what} of {len} bytes at payload byte {at} runs past the payload ({rest} left)"
            ));
        }
        let b = &self.data[self.pos..self.pos + len as usize];
        self.pos += len as usize;
        Ok(b)
    }

    fn byte(&mut self, what: &str) -> Result<u8, String> {
        let b = *self
            .data
            .get(self.pos)
            .ok_or_else(|| format!("{what} cut off"))?;
        self.pos += 1;
        Ok(b)
    }
}

/// Decodes a record payload (the bytes after the frame, checksum already verified).
pub fn decode_payload(payload: &[u8]) -> Result<WalEdit, String> {
    let mut c = Cursor {
        data: payload,
        pos: 0,
    };
    let region = c.bytes("region")?.to_vec();
    let sequence_id = c.varint("sequence id")?;
    let write_time_ms = unzigzag(c.varint("write time")?);
    let mode = c.byte("cell sequence id mode")?;
    if mode > MODE_PER_CELL {
        return Err(format!("unknown cell sequence id mode {mode}"));
    }
    let count = c.varint("cell count")?;
    // Each cell takes at least 3 bytes: never trust the count for an allocation.
    let mut cells = Vec::with_capacity((count as usize).min(payload.len() / 3));
    for i in 0..count {
        let key = c.bytes("cell key")?;
        let key = KeyRef::parse(key).map_err(|e| format!("cell {i}: {e}"))?;
        let value = c.bytes("cell value")?;
        let tags = c.bytes("cell tags")?;
        if tags.len() > MAX_TAGS_LEN {
            return Err(format!(
                "cell {i}: tags of {} bytes exceed HBase's limit of {MAX_TAGS_LEN}",
                tags.len()
            ));
        }
        let cell_sequence_id = match mode {
            MODE_EDIT_SEQUENCE_ID => sequence_id,
            MODE_ZERO => 0,
            _ => c.varint("cell sequence id")?,
        };
        cells.push(
            CellRef {
                key,
                value,
                tags,
                sequence_id: cell_sequence_id,
            }
            .to_owned(),
        );
    }
    if c.pos != payload.len() {
        return Err(format!(
            "{} bytes after the last cell",
            payload.len() - c.pos
        ));
    }
    Ok(WalEdit {
        region,
        sequence_id,
        write_time_ms,
        cells,
    })
}

/// What reading one segment found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentScan {
    /// The id in the header.
    pub id: u64,
    /// Records read back whole.
    pub records: u64,
    /// Offset just past the last whole record.
    pub end: u64,
    /// File length: past `end` only if the segment has a zero-filled (preallocated) tail or
    /// `dropped` bytes.
    pub len: u64,
    /// What was left unread after `end`, and why (`None` if the segment ended cleanly).
    pub dropped: Option<Dropped>,
}

/// Reads the segment at `path`, calling `visit(offset, edit)` for every record whose checksum
/// holds, in file order. Stops at the first record that is torn, damaged or does not parse,
/// and describes the rest of the file in [`SegmentScan::dropped`]: records cannot be found
/// again after a bad length, so everything from there on is dropped.
///
/// Nothing but zeros from a record boundary to the end of the file is the unwritten end of a
/// preallocated segment, not a drop: the scan ends cleanly there with `end < len` and
/// `dropped == None`. (Only the zero bytes of a torn record can hide in such a tail, and a
/// record is acknowledged only once all of it is written.)
///
/// A missing or damaged header is an error ([`WalError::BadHeader`]), as is a header whose id
/// differs from `expected_id`. Never panics, whatever the bytes.
pub fn scan_segment(
    path: &Path,
    expected_id: Option<u64>,
    visit: impl FnMut(u64, WalEdit) -> Result<(), WalError>,
) -> Result<SegmentScan, WalError> {
    let io = |op: &'static str, offset: u64| {
        let path = path.to_path_buf();
        move |source: io::Error| WalError::Io {
            op,
            path,
            offset,
            source,
        }
    };
    let file = File::open(path).map_err(io("open", 0))?;
    let len = file.metadata().map_err(io("stat", 0))?.len();
    let r = BufReader::with_capacity(256 * 1024, file);
    scan_segment_from(path, len, r, expected_id, visit)
}

/// [`scan_segment`] over `len` bytes from any reader (a segment read from HDFS); `path` names
/// the segment in errors and drops.
pub fn scan_segment_from(
    path: &Path,
    len: u64,
    mut r: impl Read,
    expected_id: Option<u64>,
    mut visit: impl FnMut(u64, WalEdit) -> Result<(), WalError>,
) -> Result<SegmentScan, WalError> {
    let io = |op: &'static str, offset: u64| {
        let path = path.to_path_buf();
        move |source: io::Error| WalError::Io {
            op,
            path,
            offset,
            source,
        }
    };
    let bad_header = |reason: String| WalError::BadHeader {
        path: path.to_path_buf(),
        reason,
    };
    if len < HEADER_LEN as u64 {
        return Err(bad_header(format!(
            "file of {len} bytes is shorter than the {HEADER_LEN}-byte header"
        )));
    }
    let mut header = [0u8; HEADER_LEN];
    r.read_exact(&mut header).map_err(io("read header of", 0))?;
    let SegmentHeader { id, recycled } = decode_segment_header(&header).map_err(bad_header)?;
    let mask = if recycled { record_crc_mask(id) } else { 0 };
    if let Some(expected) = expected_id {
        if id != expected {
            return Err(bad_header(format!(
                "header names segment {id}, the file name segment {expected}"
            )));
        }
    }

    let mut scan = SegmentScan {
        id,
        records: 0,
        end: HEADER_LEN as u64,
        len,
        dropped: None,
    };
    let mut payload = Vec::new();
    let mut offset = HEADER_LEN as u64;
    let reason = loop {
        let remaining = len - offset;
        if remaining == 0 {
            return Ok(scan);
        }
        if remaining < FRAME_LEN as u64 {
            let mut tail = [0u8; FRAME_LEN];
            let tail = &mut tail[..remaining as usize];
            r.read_exact(tail).map_err(io("read", offset))?;
            // The unwritten end of a preallocated segment; in a recycled one, whatever the
            // old segment left where no zero frame fitted.
            if recycled || tail.iter().all(|&b| b == 0) {
                return Ok(scan);
            }
            break DropReason::TruncatedFrame {
                available: remaining,
            };
        }
        let mut frame = [0u8; FRAME_LEN];
        r.read_exact(&mut frame).map_err(io("read", offset))?;
        let length = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]);
        let stored = u32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
        if frame == [0; FRAME_LEN] {
            // Nothing but zeros to the end is the unwritten end of a preallocated segment (the
            // writer truncates it away when it seals the segment; a crash leaves it): the
            // segment ends cleanly at `offset`. Zeros followed by anything else are damage,
            // except in a recycled segment, where the writer zeroed this frame before it wrote
            // the record in front of it, and the old segment's bytes follow.
            if recycled || rest_is_zero(&mut r).map_err(io("read", offset))? {
                return Ok(scan);
            }
            break DropReason::BadLength { length };
        }
        if !(MIN_PAYLOAD_LEN..=MAX_RECORD_LEN).contains(&length) {
            break DropReason::BadLength { length };
        }
        let available = remaining - FRAME_LEN as u64;
        if u64::from(length) > available {
            break DropReason::TruncatedRecord { length, available };
        }
        payload.resize(length as usize, 0);
        r.read_exact(&mut payload).map_err(io("read", offset))?;
        let mut crc = crc32c().running();
        crc.update(&frame[..4]);
        crc.update(&payload);
        let computed = crc.value() ^ mask;
        if computed != stored {
            break DropReason::ChecksumMismatch { stored, computed };
        }
        let edit = match decode_payload(&payload) {
            Ok(edit) => edit,
            Err(reason) => break DropReason::BadPayload { reason },
        };
        visit(offset, edit)?;
        scan.records += 1;
        offset += FRAME_LEN as u64 + u64::from(length);
        scan.end = offset;
        if payload.capacity() > 4 << 20 {
            payload = Vec::new();
        }
    };
    scan.dropped = Some(Dropped {
        segment: path.to_path_buf(),
        offset,
        bytes: len - offset,
        reason,
    });
    Ok(scan)
}

fn rest_is_zero(r: &mut impl Read) -> io::Result<bool> {
    const CHUNK: usize = 64 * 1024;
    static ZEROS: [u8; CHUNK] = [0; CHUNK];
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            return Ok(true);
        }
        // A slice comparison is a memcmp: fast over the megabytes of a preallocated tail.
        if buf[..n] != ZEROS[..n] {
            return Ok(false);
        }
    }
}

/// The path of segment `id` in `dir`.
pub fn segment_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(segment_file_name(id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_cell::KeyValue;

    /// In a recycled segment an old segment's record (unmasked, or masked for another id)
    /// does not pass, and a zero frame ends the records whatever follows; in a new segment a
    /// zero frame followed by anything but zeros is damage.
    #[test]
    fn recycled_segments_mask_records_and_end_at_a_zero_frame() {
        let dir = tempfile::tempdir().unwrap();
        let e = WalEdit {
            region: b"r".to_vec(),
            sequence_id: 9,
            write_time_ms: 1,
            cells: vec![KeyValue::put(b"row", b"f", b"q", 1, b"v")
                .unwrap()
                .with_sequence_id(9)],
        };
        let mut plain = Vec::new();
        encode_record(&e, &mut plain).unwrap();
        let scan = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            scan_segment(&p, None, |_, _| Ok(())).unwrap()
        };
        let mut masked = plain.clone();
        mask_record_crc(&mut masked, record_crc_mask(7));
        let mut other = plain.clone();
        mask_record_crc(&mut other, record_crc_mask(6));
        let garbage = [0u8; FRAME_LEN]
            .iter()
            .chain(&[0xAB; 40])
            .copied()
            .collect::<Vec<u8>>();

        let seg = |header: [u8; HEADER_LEN], parts: &[&[u8]]| {
            let mut v = header.to_vec();
            for p in parts {
                v.extend_from_slice(p);
            }
            v
        };
        let r = scan(
            "good",
            &seg(encode_recycled_header(7), &[&masked, &garbage]),
        );
        assert_eq!((r.records, r.dropped.as_ref()), (1, None));
        assert_eq!(r.end, (HEADER_LEN + masked.len()) as u64);
        for (name, old) in [("unmasked", &plain), ("other id", &other)] {
            let r = scan(name, &seg(encode_recycled_header(7), &[&masked, old]));
            assert_eq!(r.records, 1, "{name}");
            assert!(
                matches!(
                    r.dropped.map(|d| d.reason),
                    Some(DropReason::ChecksumMismatch { .. })
                ),
                "{name}"
            );
        }
        // A few old bytes where no zero frame fitted end a recycled segment cleanly too.
        let r = scan(
            "short tail",
            &seg(encode_recycled_header(7), &[&masked, &[1, 2, 3]]),
        );
        assert_eq!((r.records, r.dropped.as_ref()), (1, None));
        // In a new segment the same bytes after a zero frame are damage.
        let r = scan("new", &seg(encode_header(7), &[&plain, &garbage]));
        assert_eq!(r.records, 1);
        assert!(matches!(
            r.dropped.map(|d| d.reason),
            Some(DropReason::BadLength { length: 0 })
        ));
        assert_eq!(
            decode_segment_header(&encode_recycled_header(7)),
            Ok(SegmentHeader {
                id: 7,
                recycled: true
            })
        );
        let mut h = encode_header(7);
        h[10..12].copy_from_slice(&FLAG_RECYCLED.to_be_bytes());
        let crc = crc32c().checksum(&h[..20]);
        h[20..].copy_from_slice(&crc.to_be_bytes());
        assert!(decode_header(&h).unwrap_err().contains("flags"));
    }

    #[test]
    fn names_round_trip_and_reject_lookalikes() {
        assert_eq!(segment_file_name(42), "wal.00000000000000000042");
        assert_eq!(
            parse_segment_file_name("wal.00000000000000000042"),
            Some(42)
        );
        assert_eq!(
            parse_segment_file_name(&segment_file_name(u64::MAX)),
            Some(u64::MAX)
        );
        for bad in [
            "wal.42",
            "wal.00000000000000000042.tmp",
            "wal.+0000000000000000042",
            "wal.99999999999999999999",
            "log.00000000000000000042",
        ] {
            assert_eq!(parse_segment_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn header_checks_magic_checksum_version() {
        let h = encode_header(7);
        assert_eq!(decode_header(&h), Ok(7));
        for i in 0..HEADER_LEN {
            let mut d = h;
            d[i] ^= 0x10;
            assert!(decode_header(&d).is_err(), "flip at {i} accepted");
        }
        assert!(decode_header(&h[..10]).is_err());
    }

    #[test]
    fn varints_and_zigzag_round_trip() {
        for v in [0, 1, 127, 128, 300, u64::MAX - 1, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut c = Cursor { data: &out, pos: 0 };
            assert_eq!(c.varint("v"), Ok(v));
            assert_eq!(c.pos, out.len());
        }
        for v in [0, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        // An 11th byte, or a 10th byte carrying more than one bit, is rejected.
        let mut c = Cursor {
            data: &[0xFF; 11],
            pos: 0,
        };
        assert!(c.varint("v").is_err());
    }

    #[test]
    fn cell_sequence_id_modes_round_trip() {
        let kv = |s: u64| {
            KeyValue::put(b"row", b"f", b"q", 5, b"v")
                .unwrap()
                .with_sequence_id(s)
        };
        for cells in [
            vec![kv(9), kv(9)],
            vec![kv(0), kv(0)],
            vec![kv(9), kv(0), kv(3)],
            vec![],
        ] {
            let e = WalEdit {
                region: b"r1".to_vec(),
                sequence_id: 9,
                write_time_ms: -3,
                cells,
            };
            let mut out = Vec::new();
            let n = encode_record(&e, &mut out).unwrap();
            assert_eq!(n, out.len());
            assert_eq!(decode_payload(&out[FRAME_LEN..]).unwrap(), e);
        }
    }

    #[test]
    fn payload_decoding_rejects_every_truncation() {
        let e = WalEdit {
            region: b"region".to_vec(),
            sequence_id: 1 << 40,
            write_time_ms: 1_700_000_000_000,
            cells: vec![KeyValue::put(b"row", b"f", b"q", 5, b"value")
                .unwrap()
                .with_tags(vec![0, 2, 1, 9])
                .unwrap()],
        };
        let mut out = Vec::new();
        encode_record(&e, &mut out).unwrap();
        let payload = &out[FRAME_LEN..];
        for cut in 0..payload.len() {
            assert!(decode_payload(&payload[..cut]).is_err(), "cut {cut}");
        }
        let mut longer = payload.to_vec();
        longer.push(0);
        assert!(decode_payload(&longer).is_err());
    }
}
