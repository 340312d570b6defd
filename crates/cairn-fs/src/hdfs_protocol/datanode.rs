//! Reading a byte range of one replica from one DataNode: DataTransferProtocol's
//! `OP_READ_BLOCK`, with or without HDFS's checksums.
//!
//! The request is the protocol version (2 bytes, 28), the op code (1 byte, 81) and a
//! varint-delimited `OpReadBlockProto`; the DataNode answers a delimited
//! `BlockOpResponseProto` (status, checksum type and chunk size, where its first chunk starts),
//! then packets — a 4-byte length (itself, checksums and data), a 2-byte header length, a
//! `PacketHeaderProto`, the chunk checksums, the data — ending with an empty packet. The client
//! then says `CHECKSUM_OK` (it verified them) or `SUCCESS`, and the connection may carry the
//! next read: idle connections are kept for reuse a little less long than DataNodes keep them
//! (`dfs.datanode.socket.reuse.keepalive`, 4 s by default).

use std::collections::HashMap;
use std::io::{self, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cairn_checksum::{ChecksumError, ChecksumType, DataChecksum};
use prost::Message;

use super::namenode::connect_to;
use super::proto::{
    BaseHeaderProto, BlockOpResponseProto, ClientOperationHeaderProto, ClientReadStatusProto,
    DatanodeIdProto, ExtendedBlockProto, OpReadBlockProto, PacketHeaderProto, TokenProto,
    CHECKSUM_CRC32, CHECKSUM_CRC32C, CHECKSUM_NULL, STATUS_CHECKSUM_OK, STATUS_SUCCESS,
};

const DATA_TRANSFER_VERSION: u16 = 28;
const OP_READ_BLOCK: u8 = 81;
/// DataNodes send packets of 64 KiB by default; anything past this is not a packet.
const MAX_PACKET: usize = 16 << 20;
const MAX_RESPONSE_HEADER: usize = 1 << 20;
/// Below the DataNode's default keepalive of 4 s, so a reused connection is still open.
const IDLE_REUSE: Duration = Duration::from_millis(3000);
const IDLE_PER_DATANODE: usize = 16;

/// Why a replica could not be read.
#[derive(Debug)]
pub enum ReplicaError {
    /// The replica's bytes failed HDFS's checksum: the replica is bad.
    Checksum(String),
    /// The DataNode could not be reached or refused the read: says nothing about the replica.
    Io(io::Error),
}

impl std::fmt::Display for ReplicaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplicaError::Checksum(s) => write!(f, "HDFS checksum failure: {s}"),
            ReplicaError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<io::Error> for ReplicaError {
    fn from(e: io::Error) -> Self {
        ReplicaError::Io(e)
    }
}

/// What to read: `len` bytes at `offset` within a block.
pub struct BlockRead<'a> {
    /// The block, as the NameNode located it.
    pub block: &'a ExtendedBlockProto,
    /// Its access token, from the same answer.
    pub token: &'a TokenProto,
    /// Offset within the block.
    pub offset: u64,
    /// Bytes wanted; the read returns exactly this many or fails.
    pub len: usize,
    /// Ask for HDFS's checksums and verify them.
    pub verify: bool,
}

/// Idle connections by DataNode address, each with when it went idle.
type IdleConnections = HashMap<String, Vec<(BufReader<TcpStream>, Instant)>>;

/// Connections to DataNodes, kept between reads.
pub struct DataNodePool {
    client_name: String,
    idle: Mutex<IdleConnections>,
}

/// `host:port` of a DataNode's data transfer service.
pub fn xfer_addr(dn: &DatanodeIdProto) -> String {
    format!("{}:{}", dn.ip_addr, dn.xfer_port)
}

fn malformed(addr: &str, what: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("DataNode {addr}: malformed answer: {what}"),
    )
}

fn read_varint(r: &mut impl Read) -> io::Result<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let mut b = [0u8; 1];
        r.read_exact(&mut b)?;
        value |= u64::from(b[0] & 0x7f) << shift;
        if b[0] & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        "varint longer than 10 bytes",
    ))
}

impl DataNodePool {
    /// An empty pool; `client_name` is what DataNodes log for this client's reads.
    pub fn new(client_name: String) -> DataNodePool {
        DataNodePool {
            client_name,
            idle: Mutex::new(HashMap::new()),
        }
    }

    fn checkout(&self, addr: &str) -> io::Result<(BufReader<TcpStream>, bool)> {
        {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(list) = idle.get_mut(addr) {
                while let Some((conn, since)) = list.pop() {
                    if since.elapsed() < IDLE_REUSE {
                        return Ok((conn, true));
                    }
                }
            }
        }
        Ok((
            BufReader::with_capacity(128 << 10, connect_to(addr)?),
            false,
        ))
    }

    fn checkin(&self, addr: &str, conn: BufReader<TcpStream>) {
        // Bytes left unread would be taken for the next answer: such a connection is dropped.
        if !conn.buffer().is_empty() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let list = idle.entry(addr.to_string()).or_default();
        list.retain(|(_, since)| since.elapsed() < IDLE_REUSE);
        if list.len() < IDLE_PER_DATANODE {
            list.push((conn, Instant::now()));
        }
    }

    /// Reads `req.len` bytes of the block's replica on `dn`. A kept connection the DataNode has
    /// meanwhile closed is replaced by a new one, once.
    pub fn read(&self, dn: &DatanodeIdProto, req: &BlockRead<'_>) -> Result<Vec<u8>, ReplicaError> {
        let addr = xfer_addr(dn);
        let (conn, reused) = self.checkout(&addr)?;
        match self.read_on(&addr, conn, req) {
            Err(ReplicaError::Io(e)) if reused && e.kind() != io::ErrorKind::InvalidData => {
                let conn = BufReader::with_capacity(128 << 10, connect_to(&addr)?);
                self.read_on(&addr, conn, req)
            }
            other => other,
        }
    }

    fn read_on(
        &self,
        addr: &str,
        mut conn: BufReader<TcpStream>,
        req: &BlockRead<'_>,
    ) -> Result<Vec<u8>, ReplicaError> {
        let op = OpReadBlockProto {
            header: ClientOperationHeaderProto {
                base_header: BaseHeaderProto {
                    block: req.block.clone(),
                    token: Some(req.token.clone()),
                },
                client_name: self.client_name.clone(),
            },
            offset: req.offset,
            len: req.len as u64,
            send_checksums: Some(req.verify),
        };
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(&DATA_TRANSFER_VERSION.to_be_bytes());
        out.push(OP_READ_BLOCK);
        op.encode_length_delimited(&mut out)
            .expect("a Vec grows as needed");
        conn.get_mut().write_all(&out)?;

        let block_name = format!("blk_{}_{}", req.block.block_id, req.block.generation_stamp);
        let (data, verified) = read_block_answer(
            &mut conn,
            addr,
            &block_name,
            req.offset,
            req.len,
            req.verify,
        )?;
        let status = ClientReadStatusProto {
            status: if verified {
                STATUS_CHECKSUM_OK
            } else {
                STATUS_SUCCESS
            },
        };
        let mut out = Vec::with_capacity(8);
        status
            .encode_length_delimited(&mut out)
            .expect("a Vec grows as needed");
        // The read is complete either way; only the connection's reuse depends on this.
        if conn.get_mut().write_all(&out).is_ok() {
            self.checkin(addr, conn);
        }
        Ok(data)
    }
}

/// Reads a DataNode's answer to `OP_READ_BLOCK` of `len` bytes at `offset` of `block_name`:
/// the response header, then packets up to the empty last one. Returns the bytes asked for
/// and whether HDFS's checksums were verified; a checksum that does not match is
/// [`ReplicaError::Checksum`], anything malformed an `InvalidData` error naming `addr`.
pub fn read_block_answer(
    r: &mut impl Read,
    addr: &str,
    block_name: &str,
    offset: u64,
    len: usize,
    verify: bool,
) -> Result<(Vec<u8>, bool), ReplicaError> {
    let header_len = read_varint(r)? as usize;
    if header_len > MAX_RESPONSE_HEADER {
        return Err(malformed(addr, format!("a response header of {header_len} bytes")).into());
    }
    let mut buf = vec![0u8; header_len];
    r.read_exact(&mut buf)?;
    let response = BlockOpResponseProto::decode(&buf[..])
        .map_err(|e| malformed(addr, format!("BlockOpResponseProto: {e}")))?;
    if response.status != STATUS_SUCCESS {
        return Err(io::Error::other(format!(
            "DataNode {addr}: read of {block_name} refused (status {}): {}",
            response.status,
            response.message.unwrap_or_default()
        ))
        .into());
    }
    let checksum = if verify {
        let info = response
            .read_op_checksum_info
            .as_ref()
            .ok_or_else(|| malformed(addr, "checksums were asked for, none announced"))?;
        let kind = match info.checksum.r#type {
            CHECKSUM_NULL => ChecksumType::Null,
            CHECKSUM_CRC32 => ChecksumType::Crc32,
            CHECKSUM_CRC32C => ChecksumType::Crc32C,
            other => return Err(malformed(addr, format!("checksum type {other}")).into()),
        };
        Some(
            DataChecksum::new(kind, info.checksum.bytes_per_checksum)
                .map_err(|e| malformed(addr, e))?,
        )
    } else {
        None
    };

    let want_start = offset;
    let want_end = offset
        .checked_add(len as u64)
        .ok_or_else(|| malformed(addr, format!("{len} bytes at {offset} overflow")))?;
    // Checksums cover packet data, not packet headers: where each packet's bytes belong is
    // pinned by the answer's first chunk (the chunk holding `offset`, when checksums are
    // sent) and by packets following each other without gaps or overlaps.
    let chunk_offset = response
        .read_op_checksum_info
        .as_ref()
        .map(|i| i.chunk_offset);
    if let Some(start) = chunk_offset {
        let bpc = checksum
            .as_ref()
            .filter(|dc| dc.checksum_type() != ChecksumType::Null)
            .map(|dc| u64::from(dc.bytes_per_checksum()));
        let aligned = bpc.is_none_or(|bpc| start % bpc == 0 && offset - start.min(offset) < bpc);
        if start > offset || !aligned {
            return Err(malformed(
                addr,
                format!("first chunk at {start} for a read at {offset}"),
            )
            .into());
        }
    }
    let mut next_packet = chunk_offset;
    let mut data_out = Vec::with_capacity(len);
    loop {
        let mut lens = [0u8; 6];
        r.read_exact(&mut lens)?;
        let payload_len = u32::from_be_bytes(lens[..4].try_into().expect("4 bytes")) as usize;
        let header_len = u16::from_be_bytes(lens[4..].try_into().expect("2 bytes")) as usize;
        if !(4..=MAX_PACKET).contains(&payload_len) || header_len == 0 {
            return Err(malformed(
                addr,
                format!("packet of {payload_len} bytes with a {header_len}-byte header"),
            )
            .into());
        }
        let mut packet = vec![0u8; header_len + payload_len - 4];
        r.read_exact(&mut packet)?;
        let header = PacketHeaderProto::decode(&packet[..header_len])
            .map_err(|e| malformed(addr, format!("PacketHeaderProto: {e}")))?;
        let body = &packet[header_len..];
        let data_len = usize::try_from(header.data_len)
            .ok()
            .filter(|&d| d <= body.len())
            .ok_or_else(|| {
                malformed(
                    addr,
                    format!(
                        "packet declares {} data bytes in a {}-byte body",
                        header.data_len,
                        body.len()
                    ),
                )
            })?;
        if header.last_packet_in_block || data_len == 0 {
            break;
        }
        let (sums, data) = body.split_at(body.len() - data_len);
        let packet_start = u64::try_from(header.offset_in_block)
            .map_err(|_| malformed(addr, "negative packet offset"))?;
        if next_packet.is_some_and(|expected| expected != packet_start) {
            return Err(malformed(
                addr,
                format!(
                    "packet at {packet_start}, where {} was next",
                    next_packet.unwrap_or_default()
                ),
            )
            .into());
        }
        next_packet = Some(packet_start.saturating_add(data_len as u64));
        if let Some(dc) = &checksum {
            match dc.verify_chunked(data, sums, packet_start) {
                Ok(()) => {}
                Err(ChecksumError::Mismatch(m)) => {
                    return Err(ReplicaError::Checksum(format!(
                        "{m} (offsets in {block_name})"
                    )));
                }
                Err(e) => return Err(malformed(addr, e).into()),
            }
        }
        // The packet's part of what was asked for (reads start at a chunk boundary).
        let packet_end = packet_start + data_len as u64;
        let have_end = want_start + data_out.len() as u64;
        if packet_start > have_end || packet_end <= have_end {
            if packet_start > have_end {
                return Err(malformed(
                    addr,
                    format!("packet at {packet_start} leaves a gap after {have_end}"),
                )
                .into());
            }
            continue;
        }
        let from = (have_end - packet_start) as usize;
        let to = (packet_end.min(want_end) - packet_start) as usize;
        data_out.extend_from_slice(&data[from..to]);
    }
    if data_out.len() != len {
        return Err(malformed(
            addr,
            format!(
                "{block_name}: {} of {} bytes at {} sent",
                data_out.len(),
                len,
                offset
            ),
        )
        .into());
    }
    Ok((data_out, checksum.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hdfs_protocol::proto::{ChecksumProto, ReadOpChecksumInfoProto};
    use proptest::prelude::*;

    /// A DataNode's answer for `block[from..to]` as `BlockSender` sends it: the start aligned
    /// down to a chunk, the end up to one, packets of `per_packet` chunks, an empty last packet.
    fn answer(block: &[u8], from: usize, to: usize, sums: bool, per_packet: usize) -> Vec<u8> {
        let bpc = 512usize;
        let dc = DataChecksum::new(ChecksumType::Crc32C, bpc as u32).unwrap();
        let start = from / bpc * bpc;
        let end = to.div_ceil(bpc).saturating_mul(bpc).min(block.len());
        let mut out = Vec::new();
        BlockOpResponseProto {
            status: STATUS_SUCCESS,
            read_op_checksum_info: Some(ReadOpChecksumInfoProto {
                checksum: ChecksumProto {
                    r#type: if sums { CHECKSUM_CRC32C } else { CHECKSUM_NULL },
                    bytes_per_checksum: bpc as u32,
                },
                chunk_offset: start as u64,
            }),
            message: None,
        }
        .encode_length_delimited(&mut out)
        .unwrap();
        let mut seqno = 0;
        let mut packet = |out: &mut Vec<u8>, at: usize, data: &[u8]| {
            let sums = if sums {
                dc.compute_chunked_to_vec(data)
            } else {
                Vec::new()
            };
            let header = PacketHeaderProto {
                offset_in_block: at as i64,
                seqno,
                last_packet_in_block: data.is_empty(),
                data_len: data.len() as i32,
            }
            .encode_to_vec();
            seqno += 1;
            out.extend_from_slice(&((4 + sums.len() + data.len()) as u32).to_be_bytes());
            out.extend_from_slice(&(header.len() as u16).to_be_bytes());
            out.extend_from_slice(&header);
            out.extend_from_slice(&sums);
            out.extend_from_slice(data);
        };
        let mut at = start;
        while at < end {
            let n = (per_packet * bpc).min(end - at);
            packet(&mut out, at, &block[at..at + n]);
            at += n;
        }
        packet(&mut out, end, &[]);
        out
    }

    fn block(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 % 251) as u8).collect()
    }

    fn read(bytes: &[u8], from: usize, to: usize, verify: bool) -> Result<Vec<u8>, ReplicaError> {
        read_block_answer(
            &mut &bytes[..],
            "dn:1",
            "blk_1_1",
            from as u64,
            to - from,
            verify,
        )
        .map(|(data, verified)| {
            assert_eq!(verified, verify);
            data
        })
    }

    #[test]
    fn reads_the_range_asked_for_from_aligned_packets() {
        let b = block(200_000);
        for (from, to) in [
            (0, 1),
            (0, 512),
            (100, 70_000),
            (65_535, 65_537),
            (199_999, 200_000),
        ] {
            for (sums, verify) in [(true, true), (true, false), (false, false)] {
                let a = answer(&b, from, to, sums, 128);
                let got = read(&a, from, to, verify).unwrap();
                assert_eq!(
                    got,
                    &b[from..to],
                    "{from}..{to} sums {sums} verify {verify}"
                );
            }
        }
    }

    #[test]
    fn a_flipped_bit_is_a_checksum_failure_only_when_verifying() {
        let b = block(10_000);
        let mut a = answer(&b, 1000, 9000, true, 4);
        // Inside the last data packet (8704..9216), at about byte 8840 of the block.
        let at = a.len() - 400;
        a[at] ^= 0x10;
        match read(&a, 1000, 9000, true) {
            Err(ReplicaError::Checksum(m)) => assert!(m.contains("blk_1_1"), "{m}"),
            other => panic!("{other:?}"),
        }
        // Unverified, the same bytes come back as they are: the caller's checksums judge them.
        let got = read(&a, 1000, 9000, false).unwrap();
        assert_ne!(got, &b[1000..9000]);
    }

    #[test]
    fn refusals_and_missing_checksums_are_errors() {
        let mut a = Vec::new();
        BlockOpResponseProto {
            status: 1,
            read_op_checksum_info: None,
            message: Some("replica not found".into()),
        }
        .encode_length_delimited(&mut a)
        .unwrap();
        let e = read(&a, 0, 10, false).unwrap_err().to_string();
        assert!(e.contains("dn:1") && e.contains("replica not found"), "{e}");
        let mut a = Vec::new();
        BlockOpResponseProto {
            status: STATUS_SUCCESS,
            read_op_checksum_info: None,
            message: None,
        }
        .encode_length_delimited(&mut a)
        .unwrap();
        let e = read(&a, 0, 10, true).unwrap_err().to_string();
        assert!(e.contains("none announced"), "{e}");
    }

    #[test]
    fn every_truncation_is_an_error() {
        let b = block(3000);
        let a = answer(&b, 10, 2900, true, 2);
        for cut in 0..a.len() {
            assert!(read(&a[..cut], 10, 2900, true).is_err(), "cut at {cut}");
        }
    }

    proptest! {
        #[test]
        fn damaged_answers_never_panic_nor_return_wrong_verified_bytes(
            from in 0usize..5000,
            len in 1usize..3000,
            damage in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        ) {
            let b = block(8192);
            let to = (from + len).min(b.len());
            let mut a = answer(&b, from, to, true, 3);
            for (i, x) in &damage {
                let i = i.index(a.len());
                a[i] ^= x | 1;
            }
            // Verified bytes are right or an error: never wrong.
            if let Ok(got) = read(&a, from, to, true) {
                prop_assert_eq!(got, &b[from..to]);
            }
            let _ = read(&a, from, to, false);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = read_block_answer(&mut &bytes[..], "dn:1", "blk_1_1", 0, 100, true);
            let _ = read_block_answer(&mut &bytes[..], "dn:1", "blk_1_1", 0, 100, false);
        }
    }
}
