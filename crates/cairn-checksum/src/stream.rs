//! Streaming checksums: a writer that checksums bytes as they pass through (the job of
//! Hadoop's `FSOutputSummer`) and a reader that verifies every chunk before handing out a byte.

use std::io::{self, Read, Write};

use crate::{ChecksumError, ChecksumType, DataChecksum, RunningChecksum};

/// Passes data through to `W` and writes one checksum per chunk to `S`; [`finish`] adds the
/// checksum of a short last chunk.
///
/// [`finish`]: ChecksumWriter::finish
pub struct ChecksumWriter<W: Write, S: Write> {
    data: W,
    sums: S,
    checksum: DataChecksum,
    partial: RunningChecksum,
    partial_len: usize,
    scratch: Vec<u8>,
    bytes: u64,
}

impl<W: Write, S: Write> ChecksumWriter<W, S> {
    /// Checksums everything written, sending data to `data` and checksums to `sums`.
    pub fn new(data: W, sums: S, checksum: DataChecksum) -> Self {
        ChecksumWriter {
            data,
            sums,
            checksum,
            partial: checksum.running(),
            partial_len: 0,
            scratch: Vec::new(),
            bytes: 0,
        }
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes
    }

    /// Writes the last short chunk's checksum, flushes both sinks and returns them.
    pub fn finish(mut self) -> io::Result<(W, S)> {
        if self.partial_len > 0 {
            let value = self.partial.value();
            self.sums.write_all(&value.to_be_bytes())?;
            self.partial_len = 0;
        }
        self.data.flush()?;
        self.sums.flush()?;
        Ok((self.data, self.sums))
    }

    fn absorb(&mut self, mut buf: &[u8]) -> io::Result<()> {
        self.bytes += buf.len() as u64;
        if self.checksum.checksum_type() == ChecksumType::Null {
            return Ok(());
        }
        let bpc = self.checksum.bytes_per_checksum() as usize;
        if self.partial_len > 0 {
            let take = (bpc - self.partial_len).min(buf.len());
            self.partial.update(&buf[..take]);
            self.partial_len += take;
            buf = &buf[take..];
            if self.partial_len == bpc {
                self.sums.write_all(&self.partial.value().to_be_bytes())?;
                self.partial.reset();
                self.partial_len = 0;
            }
        }
        let whole = buf.len() / bpc * bpc;
        if whole > 0 {
            self.scratch.resize(self.checksum.sums_len(whole), 0);
            self.checksum
                .compute_chunked(&buf[..whole], &mut self.scratch)
                .map_err(io::Error::other)?;
            self.sums.write_all(&self.scratch)?;
        }
        let tail = &buf[whole..];
        if !tail.is_empty() {
            self.partial.update(tail);
            self.partial_len = tail.len();
        }
        Ok(())
    }
}

impl<W: Write, S: Write> Write for ChecksumWriter<W, S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.data.write(buf)?;
        self.absorb(&buf[..n])?;
        Ok(n)
    }

    /// Flushes both sinks; the checksum of a short chunk in progress is written only by
    /// [`finish`](ChecksumWriter::finish), since later bytes may still extend that chunk.
    fn flush(&mut self) -> io::Result<()> {
        self.data.flush()?;
        self.sums.flush()
    }
}

/// Reads data from `R` and its checksums from `S`, verifying each chunk before returning any
/// of its bytes. A corrupt chunk, checksums that end early, or checksums that go on after the
/// data (a truncated file) are `InvalidData` errors carrying a [`ChecksumError`].
pub struct ChecksumReader<R: Read, S: Read> {
    data: R,
    sums: S,
    checksum: DataChecksum,
    buf: Vec<u8>,
    sums_buf: Vec<u8>,
    pos: usize,
    filled: usize,
    /// Absolute offset of `buf[0]`.
    offset: u64,
    done: bool,
}

/// Verified bytes are handed out in batches of about this size.
const READ_BATCH: usize = 256 * 1024;

impl<R: Read, S: Read> ChecksumReader<R, S> {
    /// Verifies `data` against `sums` as it is read; `base_offset` is the position of the first
    /// data byte, used in error reports.
    pub fn new(data: R, sums: S, checksum: DataChecksum, base_offset: u64) -> Self {
        let bpc = checksum.bytes_per_checksum() as usize;
        let chunks = (READ_BATCH / bpc).max(1);
        ChecksumReader {
            data,
            sums,
            checksum,
            buf: vec![0; chunks * bpc],
            sums_buf: Vec::new(),
            pos: 0,
            filled: 0,
            offset: base_offset,
            done: false,
        }
    }

    /// Bytes verified and handed out or buffered so far, plus the base offset.
    pub fn position(&self) -> u64 {
        self.offset + self.pos as u64
    }

    fn fill(&mut self) -> io::Result<()> {
        self.offset += self.filled as u64;
        self.pos = 0;
        self.filled = 0;
        while self.filled < self.buf.len() {
            match self.data.read(&mut self.buf[self.filled..]) {
                Ok(0) => break,
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let n = self.filled;
        if n < self.buf.len() {
            self.done = true;
        }
        let need = self.checksum.sums_len(n);
        self.sums_buf.resize(need, 0);
        if let Err(e) = self.sums.read_exact(&mut self.sums_buf) {
            self.filled = 0;
            return Err(if e.kind() == io::ErrorKind::UnexpectedEof {
                invalid(ChecksumError::MissingSums {
                    offset: self.offset,
                })
            } else {
                e
            });
        }
        if self.done && self.checksum.checksum_size() > 0 {
            let mut probe = [0u8; 1];
            if read_some(&mut self.sums, &mut probe)? > 0 {
                self.filled = 0;
                return Err(invalid(ChecksumError::ExtraSums {
                    data_len: self.offset + n as u64,
                }));
            }
        }
        if let Err(e) = self
            .checksum
            .verify_chunked(&self.buf[..n], &self.sums_buf, self.offset)
        {
            self.filled = 0;
            return Err(invalid(e));
        }
        Ok(())
    }
}

fn read_some(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match r.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

fn invalid(e: ChecksumError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl<R: Read, S: Read> Read for ChecksumReader<R, S> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.filled {
            if self.done {
                return Ok(0);
            }
            self.fill()?;
        }
        let n = (self.filled - self.pos).min(out.len());
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(len: usize) -> Vec<u8> {
        (0..len as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect()
    }

    #[test]
    fn writer_matches_chunked_api_for_any_write_sizes() {
        let dc = DataChecksum::new(ChecksumType::Crc32C, 512).unwrap();
        let data = sample(100_003);
        for step in [1, 7, 511, 512, 513, 4096, 100_003] {
            let mut w = ChecksumWriter::new(Vec::new(), Vec::new(), dc);
            for piece in data.chunks(step) {
                w.write_all(piece).unwrap();
            }
            assert_eq!(w.bytes_written(), data.len() as u64);
            let (d, s) = w.finish().unwrap();
            assert_eq!(d, data);
            assert_eq!(s, dc.compute_chunked_to_vec(&data), "step {step}");
        }
    }

    #[test]
    fn reader_round_trips_and_catches_corruption() {
        let dc = DataChecksum::new(ChecksumType::Crc32, 100).unwrap();
        let data = sample(1_000_050);
        let sums = dc.compute_chunked_to_vec(&data);
        let mut out = Vec::new();
        ChecksumReader::new(&data[..], &sums[..], dc, 0)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, data);

        let mut bad = data.clone();
        bad[777_777] ^= 4;
        let mut out = Vec::new();
        let err = ChecksumReader::new(&bad[..], &sums[..], dc, 0)
            .read_to_end(&mut out)
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let inner = err
            .get_ref()
            .unwrap()
            .downcast_ref::<ChecksumError>()
            .unwrap();
        let ChecksumError::Mismatch(m) = inner else {
            panic!("{inner}")
        };
        assert_eq!(m.offset, 777_700);
        // Nothing from the bad batch was handed out.
        assert!(out.len() as u64 <= m.offset);
    }

    #[test]
    fn reader_detects_truncation_either_side() {
        let dc = DataChecksum::new(ChecksumType::Crc32C, 512).unwrap();
        let data = sample(10_000);
        let sums = dc.compute_chunked_to_vec(&data);
        let err = ChecksumReader::new(&data[..5_000], &sums[..], dc, 0)
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        let inner = err
            .get_ref()
            .unwrap()
            .downcast_ref::<ChecksumError>()
            .unwrap();
        assert!(matches!(inner, ChecksumError::ExtraSums { .. }), "{inner}");
        let err = ChecksumReader::new(&data[..], &sums[..8], dc, 0)
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        let inner = err
            .get_ref()
            .unwrap()
            .downcast_ref::<ChecksumError>()
            .unwrap();
        assert_eq!(inner, &ChecksumError::MissingSums { offset: 0 });
    }
}
