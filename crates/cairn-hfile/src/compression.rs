//! Block compression, framed exactly as HBase's codecs frame a block body.
//!
//! Every block of a compressed HFile (data, index, Bloom, file info; not the trailer) has its
//! body compressed on its own, after the 33-byte header, before the checksums:
//! - GZ: one RFC 1952 gzip member (HBase's `ReusableStreamGzipCodec`).
//! - SNAPPY, LZ4: Hadoop's `BlockCompressorStream` framing: `u32 BE uncompressed length`, then
//!   `u32 BE compressed length | raw block` pieces of at most 218,422 (Snappy) or 261,100 (LZ4)
//!   input bytes each.
//! - ZSTD: either the same framing around zstd frames (HBase's `hbase-compression-zstd`
//!   codec, which works without native Hadoop libraries) or one bare zstd frame (Hadoop's
//!   native `ZStandardCodec`, HBase 2.6's default class). The trailer does not say which; the
//!   reader tells them apart by the zstd magic.

use std::fmt;
use std::io::{Read, Write};

/// A compression algorithm, with the ordinal HBase stores in the trailer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Compression {
    /// LZO (not supported by cairn).
    Lzo,
    /// gzip.
    Gz,
    /// No compression.
    #[default]
    None,
    /// Snappy.
    Snappy,
    /// LZ4.
    Lz4,
    /// bzip2 (not supported by cairn).
    Bzip2,
    /// Zstandard.
    Zstd,
    /// LZMA (not supported by cairn).
    Lzma,
    /// Brotli (not supported by cairn).
    Brotli,
}

/// How ZSTD block bodies are framed (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ZstdFraming {
    /// `hbase-compression-zstd` (`org.apache.hadoop.hbase.io.compress.zstd.ZstdCodec`):
    /// length-prefixed pieces, readable by HBase without native libraries.
    #[default]
    HBaseBlock,
    /// Hadoop's native `ZStandardCodec`: one bare zstd frame.
    HadoopNative,
}

/// A compression or decompression failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompressionError {
    /// The algorithm exists in HBase but not in cairn.
    #[error("compression {0} is not supported by cairn (supported: NONE, GZ, SNAPPY, LZ4, ZSTD)")]
    Unsupported(Compression),
    /// An ordinal HBase does not define.
    #[error("unknown compression codec ordinal {0}")]
    UnknownOrdinal(u32),
    /// A configuration name HBase does not define.
    #[error("unknown compression name {0:?} (expected NONE, GZ, SNAPPY, LZ4 or ZSTD)")]
    UnknownName(String),
    /// Compressed bytes that do not decode to the expected length.
    #[error("{algorithm} body does not decompress: {reason}")]
    Corrupt {
        /// The algorithm.
        algorithm: Compression,
        /// What went wrong.
        reason: String,
    },
}

impl Compression {
    const ALL: [Compression; 9] = [
        Compression::Lzo,
        Compression::Gz,
        Compression::None,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Bzip2,
        Compression::Zstd,
        Compression::Lzma,
        Compression::Brotli,
    ];

    /// The ordinal stored in the trailer (`Compression.Algorithm.ordinal()`).
    pub fn ordinal(self) -> u32 {
        Self::ALL.iter().position(|c| *c == self).expect("listed") as u32
    }

    /// The algorithm for a trailer ordinal.
    pub fn from_ordinal(ordinal: u32) -> Result<Compression, CompressionError> {
        Self::ALL
            .get(ordinal as usize)
            .copied()
            .ok_or(CompressionError::UnknownOrdinal(ordinal))
    }

    /// HBase's name (`COMPRESSION => 'SNAPPY'`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::Lzo => "LZO",
            Compression::Gz => "GZ",
            Compression::None => "NONE",
            Compression::Snappy => "SNAPPY",
            Compression::Lz4 => "LZ4",
            Compression::Bzip2 => "BZIP2",
            Compression::Zstd => "ZSTD",
            Compression::Lzma => "LZMA",
            Compression::Brotli => "BROTLI",
        }
    }

    /// True when cairn can read and write it.
    pub fn is_supported(self) -> bool {
        matches!(
            self,
            Compression::None | Compression::Gz | Compression::Snappy | Compression::Lz4
        ) || (self == Compression::Zstd && cfg!(feature = "zstd"))
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Compression {
    type Err = CompressionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        Self::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| CompressionError::UnknownName(s.to_string()))
    }
}

/// Largest input piece per frame: Hadoop's `bufferSize - compressionOverhead` for a 256 KiB
/// buffer.
fn max_piece(algorithm: Compression) -> usize {
    const BUFFER: usize = 256 * 1024;
    match algorithm {
        Compression::Snappy => BUFFER - (BUFFER / 6 + 32),
        Compression::Lz4 => BUFFER - (BUFFER / 255 + 16),
        // zstd's compressBound(256 KiB) - 256 KiB = 1 KiB.
        _ => BUFFER - 1024,
    }
}

/// Compresses a block body into `out` (appending).
pub fn compress(
    algorithm: Compression,
    zstd_framing: ZstdFraming,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), CompressionError> {
    match algorithm {
        Compression::None => out.extend_from_slice(input),
        Compression::Gz => {
            let mut e = flate2::write::GzEncoder::new(out, flate2::Compression::default());
            e.write_all(input).expect("writing to a Vec");
            e.finish().expect("writing to a Vec");
        }
        Compression::Snappy | Compression::Lz4 => block_framed(algorithm, input, out)?,
        Compression::Zstd => match zstd_framing {
            ZstdFraming::HBaseBlock => block_framed(algorithm, input, out)?,
            ZstdFraming::HadoopNative => out.extend_from_slice(&zstd_frame(input)?),
        },
        other => return Err(CompressionError::Unsupported(other)),
    }
    Ok(())
}

/// Hadoop's `BlockCompressorStream` output for one `write()` of the whole body followed by
/// `finish()`.
fn block_framed(
    algorithm: Compression,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), CompressionError> {
    out.extend_from_slice(&(input.len() as u32).to_be_bytes());
    let limit = max_piece(algorithm);
    for piece in input.chunks(limit) {
        let c = compress_piece(algorithm, piece)?;
        out.extend_from_slice(&(c.len() as u32).to_be_bytes());
        out.extend_from_slice(&c);
    }
    if input.len() > limit {
        // The stream's finish() runs on a reset compressor and writes an empty group.
        out.extend_from_slice(&0u32.to_be_bytes());
    }
    Ok(())
}

fn compress_piece(algorithm: Compression, piece: &[u8]) -> Result<Vec<u8>, CompressionError> {
    Ok(match algorithm {
        Compression::Snappy => snap::raw::Encoder::new().compress_vec(piece).map_err(|e| {
            CompressionError::Corrupt {
                algorithm,
                reason: e.to_string(),
            }
        })?,
        Compression::Lz4 => lz4_flex::block::compress(piece),
        Compression::Zstd => zstd_frame(piece)?,
        other => return Err(CompressionError::Unsupported(other)),
    })
}

#[cfg(feature = "zstd")]
fn zstd_frame(input: &[u8]) -> Result<Vec<u8>, CompressionError> {
    zstd::bulk::compress(input, 3).map_err(|e| CompressionError::Corrupt {
        algorithm: Compression::Zstd,
        reason: e.to_string(),
    })
}

#[cfg(not(feature = "zstd"))]
fn zstd_frame(_input: &[u8]) -> Result<Vec<u8>, CompressionError> {
    Err(CompressionError::Unsupported(Compression::Zstd))
}

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Decompresses a block body that must produce exactly `expected` bytes, appending them to
/// `out`. Memory grows with the output actually produced, never with what a (possibly
/// corrupt) length field claims.
pub fn decompress(
    algorithm: Compression,
    input: &[u8],
    expected: usize,
    out: &mut Vec<u8>,
) -> Result<(), CompressionError> {
    let corrupt = |reason: String| CompressionError::Corrupt { algorithm, reason };
    let start = out.len();
    match algorithm {
        Compression::None => {
            if input.len() != expected {
                return Err(corrupt(format!(
                    "{} bytes stored, {expected} expected",
                    input.len()
                )));
            }
            out.extend_from_slice(input);
        }
        Compression::Gz => {
            flate2::read::GzDecoder::new(input)
                .take(expected as u64 + 1)
                .read_to_end(out)
                .map_err(|e| corrupt(e.to_string()))?;
        }
        Compression::Snappy | Compression::Lz4 => unframe(algorithm, input, expected, out)?,
        Compression::Zstd => {
            if input.starts_with(&ZSTD_MAGIC) {
                zstd_stream(input, expected, out).map_err(corrupt)?;
            } else {
                unframe(algorithm, input, expected, out)?;
            }
        }
        other => return Err(CompressionError::Unsupported(other)),
    }
    let produced = out.len() - start;
    if produced != expected {
        return Err(corrupt(format!(
            "decompressed to {}{produced} bytes, the block header says {expected}",
            if produced > expected {
                "more than "
            } else {
                ""
            }
        )));
    }
    Ok(())
}

#[cfg(feature = "zstd")]
fn zstd_stream(input: &[u8], expected: usize, out: &mut Vec<u8>) -> Result<(), String> {
    let mut d = zstd::stream::read::Decoder::with_buffer(input).map_err(|e| e.to_string())?;
    (&mut d)
        .take(expected as u64 + 1)
        .read_to_end(out)
        .map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(not(feature = "zstd"))]
fn zstd_stream(_input: &[u8], _expected: usize, _out: &mut Vec<u8>) -> Result<(), String> {
    Err("this build of cairn has no ZSTD support (feature `zstd`)".into())
}

/// Reads `BlockCompressorStream` framing until `expected` bytes are produced. Bytes after
/// that are ignored, as HBase's reader ignores them (a trailing empty group is normal).
fn unframe(
    algorithm: Compression,
    input: &[u8],
    expected: usize,
    out: &mut Vec<u8>,
) -> Result<(), CompressionError> {
    let corrupt = |reason: String| CompressionError::Corrupt { algorithm, reason };
    let start = out.len();
    if expected == 0 {
        // Nothing is read, as in HBase; but a body that announces data is not an empty one.
        return match input.get(..4) {
            Some(len) if len != [0, 0, 0, 0] => {
                Err(corrupt("data where the header says there is none".into()))
            }
            _ => Ok(()),
        };
    }
    let mut pos = 0usize;
    let read_u32 = |pos: &mut usize| -> Result<usize, CompressionError> {
        let b = input
            .get(*pos..*pos + 4)
            .ok_or_else(|| corrupt(format!("length field at byte {} is cut off", *pos)))?;
        *pos += 4;
        Ok(u32::from_be_bytes(b.try_into().expect("4 bytes")) as usize)
    };
    while out.len() - start < expected {
        let group_len = read_u32(&mut pos)?;
        let group_start = out.len();
        while out.len() - group_start < group_len {
            let clen = read_u32(&mut pos)?;
            let piece = input.get(pos..pos + clen).ok_or_else(|| {
                corrupt(format!("piece of {clen} bytes at byte {pos} is cut off"))
            })?;
            pos += clen;
            let room = (group_len - (out.len() - group_start)).min(expected - (out.len() - start));
            decompress_piece(algorithm, piece, room, out).map_err(corrupt)?;
        }
        if group_len == 0 {
            return Err(corrupt(format!(
                "empty group at byte {} before the data ends",
                pos - 4
            )));
        }
    }
    Ok(())
}

/// Decompresses one raw piece, which may produce at most `room` bytes.
fn decompress_piece(
    algorithm: Compression,
    piece: &[u8],
    room: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    match algorithm {
        Compression::Snappy => {
            let n = snap::raw::decompress_len(piece).map_err(|e| e.to_string())?;
            if n > room {
                return Err(format!("piece claims {n} bytes, only {room} remain"));
            }
            let at = out.len();
            out.resize(at + n, 0);
            snap::raw::Decoder::new()
                .decompress(piece, &mut out[at..])
                .map_err(|e| e.to_string())?;
        }
        Compression::Lz4 => {
            // LZ4 expands at most 255:1, which bounds what a corrupt piece can make us allocate.
            let cap = room.min(piece.len().saturating_mul(255).saturating_add(16));
            let at = out.len();
            out.resize(at + cap, 0);
            let n = lz4_flex::block::decompress_into(piece, &mut out[at..])
                .map_err(|e| e.to_string())?;
            out.truncate(at + n);
        }
        Compression::Zstd => zstd_stream(piece, room, out)?,
        other => return Err(format!("{other} has no framed pieces")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| ((i * 7) % 251) as u8 ^ (i / 1000) as u8)
            .collect()
    }

    #[test]
    fn ordinals_match_hbase() {
        let names: Vec<(u32, &str)> = Compression::ALL
            .iter()
            .map(|c| (c.ordinal(), c.name()))
            .collect();
        assert_eq!(
            names,
            [
                (0, "LZO"),
                (1, "GZ"),
                (2, "NONE"),
                (3, "SNAPPY"),
                (4, "LZ4"),
                (5, "BZIP2"),
                (6, "ZSTD"),
                (7, "LZMA"),
                (8, "BROTLI")
            ]
        );
        assert_eq!(
            "snappy".parse::<Compression>().unwrap(),
            Compression::Snappy
        );
        assert!(Compression::from_ordinal(9).is_err());
    }

    #[test]
    fn round_trips_every_supported_algorithm_and_size() {
        let algorithms = [
            Compression::None,
            Compression::Gz,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ];
        for a in algorithms.into_iter().filter(|a| a.is_supported()) {
            for framing in [ZstdFraming::HBaseBlock, ZstdFraming::HadoopNative] {
                for len in [0usize, 1, 100, 65_536, 218_422, 218_423, 600_000] {
                    let data = sample(len);
                    let mut c = Vec::new();
                    compress(a, framing, &data, &mut c).unwrap();
                    let mut d = Vec::new();
                    decompress(a, &c, len, &mut d).unwrap();
                    assert_eq!(d, data, "{a} {framing:?} {len}");
                    // A wrong expected length is an error, never a short or long block.
                    if len > 0 {
                        assert!(
                            decompress(a, &c, len - 1, &mut Vec::new()).is_err(),
                            "{a} {len}"
                        );
                        assert!(
                            decompress(a, &c, len + 1, &mut Vec::new()).is_err(),
                            "{a} {len}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn hadoop_block_framing_layout() {
        let data = sample(1000);
        let mut c = Vec::new();
        compress(Compression::Snappy, ZstdFraming::HBaseBlock, &data, &mut c).unwrap();
        assert_eq!(&c[..4], &1000u32.to_be_bytes());
        let clen = u32::from_be_bytes(c[4..8].try_into().unwrap()) as usize;
        assert_eq!(c.len(), 8 + clen);
        let mut empty = Vec::new();
        compress(Compression::Lz4, ZstdFraming::HBaseBlock, &[], &mut empty).unwrap();
        assert_eq!(empty, [0, 0, 0, 0]);
        // Over one piece: length, pieces, then an empty group.
        let big = sample(300_000);
        let mut c = Vec::new();
        compress(Compression::Snappy, ZstdFraming::HBaseBlock, &big, &mut c).unwrap();
        assert_eq!(&c[c.len() - 4..], &[0, 0, 0, 0]);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic_or_a_huge_allocation() {
        for a in [
            Compression::Gz,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            for garbage in [
                &b""[..],
                &[0xFF; 16][..],
                &[0, 0, 0, 8, 0, 0, 0, 4, 1, 2, 3, 4][..],
            ] {
                assert!(
                    decompress(a, garbage, 1 << 30, &mut Vec::new()).is_err(),
                    "{a}"
                );
            }
        }
    }
}
