//! One WAL entry in HBase's format, as `ProtobufLogWriter.append` writes it with
//! `WALCellCodec` and no compression: a delimited `WALKey` (WAL.proto), then the entry's
//! cells, each a 4-byte length and the cell in KeyValue form with its tags
//! (`WALCellCodec.EnsureKvEncoder`):
//!
//! ```text
//! entry = varint(key length) WALKey cell*        (cell count: the key's following_kv_count)
//! WALKey: 1 encoded_region_name, 2 table_name, 3 log_sequence_number, 4 write_time,
//!         7 following_kv_count, 8 cluster_ids, 9 nonceGroup, 10 nonce,
//!         11 orig_sequence_number (as HBase sets them: nonces only when not 0, the original
//!         sequence number only when above 0), then cairn's 1000 (fixed32): a CRC32C
//! cell  = total u32 | key length u32 | value length u32 | key | value | [tags length u16 | tags]
//! ```
//!
//! Integers outside the protobuf message are big-endian, as HBase's `Bytes.toInt` reads them.
//!
//! HBase's format has no checksum of its own (HDFS checksums its blocks). cairn adds one that
//! HBase's reader ignores: field 1000 of the `WALKey`, a fixed32 holding the CRC32C of every
//! byte of the entry but that field itself (the key's length, the key's other fields, the
//! cells). HBase's parser keeps it as an unknown field and drops it when it rewrites an entry.
//! In a recycled file the stored value is XORed with a mask derived from the file's number,
//! so an entry left over from the file's previous life fails the check.

use cairn_cell::{CellRef, KeyRef, KeyValue, MAX_TAGS_LEN};

use crate::wire::{self, Fields, Value};
use crate::{ClusterId, WalEdit, WalError};

/// The `WALKey` field cairn's CRC32C is in (fixed32; HBase's fields are 1 to 12).
pub const CRC_FIELD: u32 = 1000;
/// Bytes of the CRC field: its key (two varint bytes) and the fixed32.
const CRC_FIELD_LEN: usize = 6;
/// Largest entry: far above HBase's per-cell limit (`hbase.server.keyvalue.maxsize`, 10 MB),
/// so that large batches fit, and low enough that a garbage length is seen as one.
pub const MAX_ENTRY_LEN: u64 = 512 << 20;
/// Largest `WALKey` cairn reads (HBase's are tens of bytes).
pub const MAX_KEY_LEN: u64 = 16 << 20;
/// The family of HBase's marker cells (region open and close, flush and compaction
/// descriptors, bulk loads): `WALEdit.METAFAMILY`.
pub const META_FAMILY: &[u8] = b"METAFAMILY";

/// What [`encode_entry`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoded {
    /// Bytes of the entry.
    pub len: usize,
    /// Offset of the CRC32C's four bytes from the start of the entry.
    pub crc_at: usize,
}

/// Appends `edit` to `out` as one entry; on error `out` is left as it was.
pub fn encode_entry(edit: &WalEdit, out: &mut Vec<u8>) -> Result<Encoded, WalError> {
    let start = out.len();
    let table = &edit.table[..];
    let too_large = |size: u64| WalError::RecordTooLarge {
        region: String::from_utf8_lossy(&edit.region).into_owned(),
        size: size as usize,
        max: MAX_ENTRY_LEN as u32,
    };
    if edit.cells.len() > u32::MAX as usize {
        return Err(too_large(u64::MAX));
    }
    let write_time = edit.write_time_ms as u64;
    let mut key_len = wire::bytes_field_len(1, edit.region.len())
        + wire::bytes_field_len(2, table.len())
        + wire::uint_field_len(3, edit.sequence_id)
        + wire::uint_field_len(4, write_time)
        + wire::uint_field_len(7, edit.cells.len() as u64)
        + CRC_FIELD_LEN;
    for c in &edit.cluster_ids {
        key_len += wire::bytes_field_len(8, cluster_id_len(c));
    }
    if edit.nonce_group != 0 {
        key_len += wire::uint_field_len(9, edit.nonce_group);
    }
    if edit.nonce != 0 {
        key_len += wire::uint_field_len(10, edit.nonce);
    }
    if edit.orig_sequence_id > 0 {
        key_len += wire::uint_field_len(11, edit.orig_sequence_id);
    }
    let mut cells_len = 0u64;
    for kv in &edit.cells {
        cells_len += 4 + kv.as_cell().serialized_len() as u64;
    }
    let total = (wire::varint_len(key_len as u64) + key_len) as u64 + cells_len;
    if total > MAX_ENTRY_LEN || key_len as u64 > MAX_KEY_LEN {
        return Err(too_large(total));
    }
    out.reserve(total as usize);
    wire::put_varint(out, key_len as u64);
    wire::put_bytes(out, 1, &edit.region);
    wire::put_bytes(out, 2, table);
    wire::put_uint(out, 3, edit.sequence_id);
    wire::put_uint(out, 4, write_time);
    wire::put_uint(out, 7, edit.cells.len() as u64);
    for c in &edit.cluster_ids {
        wire::put_key(out, 8, wire::LEN);
        wire::put_varint(out, cluster_id_len(c) as u64);
        wire::put_uint(out, 1, c.least_sig_bits);
        wire::put_uint(out, 2, c.most_sig_bits);
    }
    if edit.nonce_group != 0 {
        wire::put_uint(out, 9, edit.nonce_group);
    }
    if edit.nonce != 0 {
        wire::put_uint(out, 10, edit.nonce);
    }
    if edit.orig_sequence_id > 0 {
        wire::put_uint(out, 11, edit.orig_sequence_id);
    }
    let crc_key = out.len();
    wire::put_key(out, CRC_FIELD, wire::FIXED32);
    let crc_at = out.len();
    out.extend_from_slice(&[0; 4]);
    debug_assert_eq!(out.len() - crc_key, CRC_FIELD_LEN);
    for kv in &edit.cells {
        let c = kv.as_cell();
        let key = c.key.as_bytes();
        out.extend_from_slice(&(c.serialized_len() as u32).to_be_bytes());
        out.extend_from_slice(&(key.len() as u32).to_be_bytes());
        out.extend_from_slice(&(c.value.len() as u32).to_be_bytes());
        out.extend_from_slice(key);
        out.extend_from_slice(c.value);
        if !c.tags.is_empty() {
            out.extend_from_slice(&(c.tags.len() as u16).to_be_bytes());
            out.extend_from_slice(c.tags);
        }
    }
    debug_assert_eq!((out.len() - start) as u64, total);
    let mut crc = crate::file::crc32c().running();
    crc.update(&out[start..crc_key]);
    crc.update(&out[crc_at + 4..]);
    out[crc_at..crc_at + 4].copy_from_slice(&crc.value().to_le_bytes());
    Ok(Encoded {
        len: out.len() - start,
        crc_at: crc_at - start,
    })
}

fn cluster_id_len(c: &ClusterId) -> usize {
    wire::uint_field_len(1, c.least_sig_bits) + wire::uint_field_len(2, c.most_sig_bits)
}

/// XORs `mask` into the CRC32C of an encoded entry (a recycled file's entries carry masked
/// checksums).
pub fn mask_crc(entry: &mut [u8], crc_at: usize, mask: u32) {
    let b = &mut entry[crc_at..crc_at + 4];
    let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) ^ mask;
    b.copy_from_slice(&v.to_le_bytes());
}

/// An entry from a `WALKey`'s bytes (without cairn's CRC field) and cells (each without its
/// 4-byte length): the key gets the CRC32C field, masked with `mask` (0 unless the entry goes
/// into a recycled file). For tests and fuzzing, which need entries no writer would make.
pub fn assemble(key: &[u8], cells: &[&[u8]], mask: u32) -> Vec<u8> {
    let mut out = Vec::new();
    wire::put_varint(&mut out, (key.len() + CRC_FIELD_LEN) as u64);
    out.extend_from_slice(key);
    let crc_key = out.len();
    wire::put_key(&mut out, CRC_FIELD, wire::FIXED32);
    let crc_at = out.len();
    out.extend_from_slice(&[0; 4]);
    for c in cells {
        out.extend_from_slice(&(c.len() as u32).to_be_bytes());
        out.extend_from_slice(c);
    }
    let mut crc = crate::file::crc32c().running();
    crc.update(&out[..crc_key]);
    crc.update(&out[crc_at + 4..]);
    out[crc_at..crc_at + 4].copy_from_slice(&(crc.value() ^ mask).to_le_bytes());
    out
}

/// A parsed `WALKey`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WalKey {
    /// `encoded_region_name`.
    pub region: Vec<u8>,
    /// `table_name`.
    pub table: Vec<u8>,
    /// `log_sequence_number`.
    pub sequence_id: u64,
    /// `write_time`.
    pub write_time: u64,
    /// `following_kv_count` (0 when absent).
    pub cell_count: u32,
    /// `cluster_ids`.
    pub cluster_ids: Vec<ClusterId>,
    /// `nonceGroup` (0 when absent).
    pub nonce_group: u64,
    /// `nonce` (0 when absent).
    pub nonce: u64,
    /// `orig_sequence_number` (0 when absent).
    pub orig_sequence_id: u64,
    /// cairn's CRC32C and where its field lies in the key bytes (start, end).
    pub crc: Option<(u32, usize, usize)>,
    /// `scopes` (replication) were present: cairn does not keep them.
    pub has_scopes: bool,
}

/// Parses a `WALKey`'s bytes; every required field must be there.
pub fn parse_key(bytes: &[u8]) -> Result<WalKey, String> {
    let mut k = WalKey::default();
    let mut seen = [false; 4];
    let mut f = Fields::new(bytes);
    loop {
        let at = f.position();
        let Some((field, value)) = f.next()? else {
            break;
        };
        let end = f.position();
        match (field, value) {
            (1, Value::Bytes(b)) => {
                k.region = b.to_vec();
                seen[0] = true;
            }
            (2, Value::Bytes(b)) => {
                k.table = b.to_vec();
                seen[1] = true;
            }
            (3, Value::Varint(v)) => {
                k.sequence_id = v;
                seen[2] = true;
            }
            (4, Value::Varint(v)) => {
                k.write_time = v;
                seen[3] = true;
            }
            (6, Value::Bytes(_)) => k.has_scopes = true,
            (7, Value::Varint(v)) => {
                k.cell_count = u32::try_from(v)
                    .map_err(|_| format!("following_kv_count {v} is not a uint32"))?;
            }
            (8, Value::Bytes(b)) => k.cluster_ids.push(parse_cluster_id(b)?),
            (9, Value::Varint(v)) => k.nonce_group = v,
            (10, Value::Varint(v)) => k.nonce = v,
            (11, Value::Varint(v)) => k.orig_sequence_id = v,
            (CRC_FIELD, Value::Fixed32(v)) => k.crc = Some((v, at, end)),
            (1..=4 | 6..=11 | CRC_FIELD, v) => {
                return Err(format!(
                    "WALKey field {field} has the wrong wire type ({v:?})"
                ))
            }
            // 5 (the deprecated cluster_id), 12 (extended attributes), anything newer.
            _ => {}
        }
    }
    let names = [
        "encoded_region_name",
        "table_name",
        "log_sequence_number",
        "write_time",
    ];
    if let Some(i) = seen.iter().position(|s| !s) {
        return Err(format!("WALKey lacks the required field {}", names[i]));
    }
    Ok(k)
}

fn parse_cluster_id(b: &[u8]) -> Result<ClusterId, String> {
    let mut id = ClusterId::default();
    let mut seen = (false, false);
    let mut f = Fields::new(b);
    while let Some((field, v)) = f.next()? {
        match (field, v) {
            (1, Value::Varint(v)) => {
                id.least_sig_bits = v;
                seen.0 = true;
            }
            (2, Value::Varint(v)) => {
                id.most_sig_bits = v;
                seen.1 = true;
            }
            _ => {}
        }
    }
    if seen != (true, true) {
        return Err("a cluster id lacks one of its halves".into());
    }
    Ok(id)
}

/// Parses one cell in the form `EnsureKvEncoder` writes it, without its 4-byte length:
/// key length, value length, key, value, and the tags section if the bytes go on.
pub fn parse_cell(b: &[u8], sequence_id: u64) -> Result<KeyValue, String> {
    if b.len() < 8 {
        return Err(format!(
            "a cell of {} bytes is shorter than its lengths",
            b.len()
        ));
    }
    let klen = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as u64;
    let vlen = u32::from_be_bytes([b[4], b[5], b[6], b[7]]) as u64;
    let kv_end = 8 + klen + vlen;
    if kv_end > b.len() as u64 {
        return Err(format!(
            "key of {klen} and value of {vlen} bytes run past the cell's {} bytes",
            b.len()
        ));
    }
    let (klen, kv_end) = (klen as usize, kv_end as usize);
    let key = KeyRef::parse(&b[8..8 + klen]).map_err(|e| e.to_string())?;
    let value = &b[8 + klen..kv_end];
    let tags: &[u8] = if kv_end == b.len() {
        &[]
    } else {
        if b.len() - kv_end < 2 {
            return Err("tags length cut off".into());
        }
        let tlen = u16::from_be_bytes([b[kv_end], b[kv_end + 1]]) as usize;
        if kv_end + 2 + tlen != b.len() {
            return Err(format!(
                "tags of {tlen} bytes do not end the cell ({} bytes after the value)",
                b.len() - kv_end
            ));
        }
        &b[kv_end + 2..]
    };
    debug_assert!(tags.len() <= MAX_TAGS_LEN);
    Ok(CellRef {
        key,
        value,
        tags,
        sequence_id,
    }
    .to_owned())
}

/// The CRC32C an entry should carry: of every byte but the CRC field itself. `entry` is the
/// whole entry, `key_start` the offset of the key within it, `(field_start, field_end)` the
/// CRC field within the key.
pub(crate) fn entry_crc(entry: &[u8], key_start: usize, field: (usize, usize)) -> u32 {
    let mut crc = crate::file::crc32c().running();
    crc.update(&entry[..key_start + field.0]);
    crc.update(&entry[key_start + field.1..]);
    crc.value()
}

impl WalEdit {
    /// An edit of `cells` for `region` of `table`, at `sequence_id`.
    pub fn new(
        region: impl Into<Vec<u8>>,
        table: impl Into<Vec<u8>>,
        sequence_id: u64,
        write_time_ms: i64,
        cells: Vec<KeyValue>,
    ) -> WalEdit {
        WalEdit {
            region: region.into(),
            table: table.into(),
            sequence_id,
            write_time_ms,
            cells,
            ..WalEdit::default()
        }
    }

    /// True for an edit of nothing but HBase's marker cells (family `METAFAMILY`: region
    /// events, flush and compaction descriptors), which replay does not apply.
    pub fn is_marker(&self) -> bool {
        !self.cells.is_empty()
            && self
                .cells
                .iter()
                .all(|c| c.as_cell().family() == META_FAMILY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit() -> WalEdit {
        WalEdit {
            region: b"d41d8cd98f00b204e9800998ecf8427e".to_vec(),
            table: b"ns:t".to_vec(),
            sequence_id: 1 << 40,
            write_time_ms: 1_700_000_000_000,
            cluster_ids: vec![ClusterId {
                most_sig_bits: 7,
                least_sig_bits: u64::MAX,
            }],
            nonce_group: 3,
            nonce: 4,
            orig_sequence_id: 5,
            cells: vec![
                KeyValue::put(b"row", b"f", b"q", 5, b"value")
                    .unwrap()
                    .with_tags(vec![0, 2, 1, 9])
                    .unwrap(),
                KeyValue::put(b"row2", b"f", b"", 6, b"").unwrap(),
            ],
        }
    }

    /// Splits an entry into its key and cells and reads them back.
    fn decode(entry: &[u8]) -> (WalKey, Vec<KeyValue>) {
        let (klen, n) = wire::read_varint(entry, 5).unwrap().unwrap();
        let key = parse_key(&entry[n..n + klen as usize]).unwrap();
        let mut at = n + klen as usize;
        let mut cells = Vec::new();
        for _ in 0..key.cell_count {
            let len = u32::from_be_bytes(entry[at..at + 4].try_into().unwrap()) as usize;
            cells.push(parse_cell(&entry[at + 4..at + 4 + len], key.sequence_id).unwrap());
            at += 4 + len;
        }
        assert_eq!(at, entry.len());
        let (stored, s, e) = key.crc.unwrap();
        assert_eq!(entry_crc(entry, n, (s, e)), stored);
        (key, cells)
    }

    #[test]
    fn entries_round_trip_with_every_field() {
        let e = edit();
        let mut out = vec![9, 9];
        let enc = encode_entry(&e, &mut out).unwrap();
        assert_eq!(enc.len, out.len() - 2);
        let (key, cells) = decode(&out[2..]);
        assert_eq!(key.region, e.region);
        assert_eq!(key.table, e.table);
        assert_eq!(
            (key.sequence_id, key.write_time, key.cell_count),
            (1 << 40, 1_700_000_000_000, 2)
        );
        assert_eq!(key.cluster_ids, e.cluster_ids);
        assert_eq!(
            (key.nonce_group, key.nonce, key.orig_sequence_id),
            (3, 4, 5)
        );
        let want: Vec<KeyValue> = e
            .cells
            .iter()
            .map(|c| c.clone().with_sequence_id(1 << 40))
            .collect();
        assert_eq!(cells, want);
        // The CRC field sits where encode_entry said, and masking it twice restores it.
        let mut masked = out[2..].to_vec();
        mask_crc(&mut masked, enc.crc_at, 0xDEAD_BEEF);
        assert_ne!(masked, out[2..]);
        mask_crc(&mut masked, enc.crc_at, 0xDEAD_BEEF);
        assert_eq!(masked, out[2..]);
    }

    #[test]
    fn hbase_leaves_out_zero_nonces_and_original_sequence_ids() {
        let plain = WalEdit::new(b"r".to_vec(), b"t".to_vec(), 1, 2, vec![]);
        let mut out = Vec::new();
        encode_entry(&plain, &mut out).unwrap();
        // Length, then fields 1, 2, 3, 4, 7 and the CRC: nothing else.
        let expected = [
            &[18u8][..],
            &[0x0A, 1, b'r', 0x12, 1, b't', 0x18, 1, 0x20, 2, 0x38, 0],
            &[0xC5, 0x3E],
        ]
        .concat();
        assert_eq!(&out[..expected.len()], &expected[..]);
        assert_eq!(out.len(), expected.len() + 4);
    }

    #[test]
    fn keys_without_required_fields_or_with_damage_are_refused() {
        let mut out = Vec::new();
        encode_entry(&edit(), &mut out).unwrap();
        let (klen, n) = wire::read_varint(&out, 5).unwrap().unwrap();
        let key = &out[n..n + klen as usize];
        // Every cut inside a field, or before the last required field (4, write_time) ends,
        // is refused; a cut between later fields leaves a valid, shorter key.
        let mut ends = Vec::new();
        let mut f = Fields::new(key);
        while let Some((field, _)) = f.next().unwrap() {
            ends.push((field, f.position()));
        }
        let required_end = ends.iter().find(|(f, _)| *f == 4).unwrap().1;
        for cut in 0..key.len() {
            let boundary = ends.iter().any(|&(_, e)| e == cut);
            let ok = parse_key(&key[..cut]).is_ok();
            assert_eq!(ok, boundary && cut >= required_end, "cut {cut}");
        }
        // Region name only.
        assert!(parse_key(&[0x0A, 1, b'r'])
            .unwrap_err()
            .contains("table_name"));
        // The sequence number as bytes instead of a varint.
        assert!(parse_key(&[0x0A, 0, 0x12, 0, 0x1A, 0, 0x20, 0])
            .unwrap_err()
            .contains("wire type"));
    }

    #[test]
    fn cells_parse_strictly() {
        let kv = KeyValue::put(b"r", b"f", b"q", 1, b"v").unwrap();
        let mut out = Vec::new();
        encode_entry(
            &WalEdit::new(b"r".to_vec(), b"t".to_vec(), 1, 2, vec![kv]),
            &mut out,
        )
        .unwrap();
        // The one cell is the last thing in the entry, after its 4-byte length.
        let len = 8 + 15 + 1;
        assert_eq!(
            u32::from_be_bytes(
                out[out.len() - len - 4..out.len() - len]
                    .try_into()
                    .unwrap()
            ),
            len as u32
        );
        let cell = &out[out.len() - len..];
        assert!(parse_cell(cell, 1).is_ok());
        for cut in 0..cell.len() {
            assert!(parse_cell(&cell[..cut], 1).is_err(), "cut {cut}");
        }
        let mut tags = cell.to_vec();
        tags.extend_from_slice(&[0, 5, 1]);
        assert!(
            parse_cell(&tags, 1).is_err(),
            "tags shorter than their length"
        );
    }

    #[test]
    fn assembled_entries_are_what_encode_entry_writes() {
        let e = edit();
        let mut out = Vec::new();
        let enc = encode_entry(&e, &mut out).unwrap();
        let (klen, n) = wire::read_varint(&out, 5).unwrap().unwrap();
        let key_end = n + klen as usize;
        let key = &out[n..key_end - CRC_FIELD_LEN];
        let mut cells = Vec::new();
        let mut at = key_end;
        while at < out.len() {
            let len = u32::from_be_bytes(out[at..at + 4].try_into().unwrap()) as usize;
            cells.push(&out[at + 4..at + 4 + len]);
            at += 4 + len;
        }
        assert_eq!(assemble(key, &cells, 0), out);
        let mut masked = out.clone();
        mask_crc(&mut masked, enc.crc_at, 77);
        assert_eq!(assemble(key, &cells, 77), masked);
    }

    #[test]
    fn markers_are_edits_of_metafamily_cells_only() {
        let marker = KeyValue::put(b"METAROW", META_FAMILY, b"HBASE::FLUSH", 1, b"").unwrap();
        let user = KeyValue::put(b"r", b"f", b"q", 1, b"v").unwrap();
        let e = |cells| WalEdit::new(b"r".to_vec(), b"t".to_vec(), 1, 2, cells);
        assert!(e(vec![marker.clone()]).is_marker());
        assert!(!e(vec![marker, user]).is_marker());
        assert!(!e(vec![]).is_marker());
    }
}
