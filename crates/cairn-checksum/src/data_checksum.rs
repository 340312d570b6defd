//! Chunked checksums: one checksum per `bytes_per_checksum` bytes, as Hadoop's `DataChecksum`
//! computes them for HDFS block files and HBase for the inline checksums of HFile blocks.

use crate::kernel::Engine;
use crate::{ChecksumError, ChecksumMismatch, ChecksumType, Implementation};

/// A checksum type, a chunk size and the implementation that computes them.
///
/// Checksums are stored big-endian, 4 bytes per chunk; the last chunk may be short. NULL has
/// no checksums: it computes nothing and every buffer verifies.
#[derive(Clone, Copy)]
pub struct DataChecksum {
    checksum_type: ChecksumType,
    bytes_per_checksum: u32,
    implementation: Implementation,
    engine: &'static Engine,
}

impl std::fmt::Debug for DataChecksum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataChecksum")
            .field("checksum_type", &self.checksum_type)
            .field("bytes_per_checksum", &self.bytes_per_checksum)
            .field("implementation", &self.implementation)
            .finish()
    }
}

impl PartialEq for DataChecksum {
    /// Equal when they compute the same bytes; the implementation does not matter.
    fn eq(&self, other: &Self) -> bool {
        self.checksum_type == other.checksum_type
            && self.bytes_per_checksum == other.bytes_per_checksum
    }
}

impl Eq for DataChecksum {}

/// How many checksums cover verification in one batch; keeps the computed sums on the stack.
const VERIFY_BATCH_CHUNKS: usize = 64;

impl DataChecksum {
    /// A chunked checksum using the process-wide [`Implementation::selected`].
    pub fn new(
        checksum_type: ChecksumType,
        bytes_per_checksum: u32,
    ) -> Result<Self, ChecksumError> {
        Self::with_implementation(
            checksum_type,
            bytes_per_checksum,
            Implementation::selected(),
        )
    }

    /// A chunked checksum computed by a given implementation (tests, benchmarks).
    pub fn with_implementation(
        checksum_type: ChecksumType,
        bytes_per_checksum: u32,
        implementation: Implementation,
    ) -> Result<Self, ChecksumError> {
        if bytes_per_checksum == 0 {
            return Err(ChecksumError::InvalidBytesPerChecksum(bytes_per_checksum));
        }
        Ok(DataChecksum {
            checksum_type,
            bytes_per_checksum,
            implementation,
            engine: implementation.engine()?,
        })
    }

    /// The algorithm.
    pub fn checksum_type(&self) -> ChecksumType {
        self.checksum_type
    }

    /// The chunk size.
    pub fn bytes_per_checksum(&self) -> u32 {
        self.bytes_per_checksum
    }

    /// The implementation computing the checksums.
    pub fn implementation(&self) -> Implementation {
        self.implementation
    }

    /// Bytes of one checksum: 0 for NULL, else 4.
    pub fn checksum_size(&self) -> usize {
        self.checksum_type.checksum_size()
    }

    /// Chunks covering `data_len` bytes (the last one may be short).
    pub fn chunk_count(&self, data_len: usize) -> usize {
        data_len.div_ceil(self.bytes_per_checksum as usize)
    }

    /// Bytes of checksums for `data_len` bytes of data (Hadoop's `getChecksumSize(dataSize)`).
    pub fn sums_len(&self, data_len: usize) -> usize {
        self.chunk_count(data_len) * self.checksum_size()
    }

    /// Writes the checksum of every chunk of `data` into `sums`, big-endian.
    ///
    /// `sums` must be exactly [`sums_len`](Self::sums_len)`(data.len())` bytes.
    pub fn compute_chunked(&self, data: &[u8], sums: &mut [u8]) -> Result<(), ChecksumError> {
        self.check_sums_len(data.len(), sums.len())?;
        let bpc = self.bytes_per_checksum as usize;
        match self.checksum_type {
            ChecksumType::Null => {}
            ChecksumType::Crc32 => {
                crate::accounting::timed(data.len(), || (self.engine.crc32_chunks)(data, bpc, sums))
            }
            ChecksumType::Crc32C => crate::accounting::timed(data.len(), || {
                (self.engine.crc32c_chunks)(data, bpc, sums)
            }),
        }
        Ok(())
    }

    /// The checksums of every chunk of `data`, in a new buffer.
    pub fn compute_chunked_to_vec(&self, data: &[u8]) -> Vec<u8> {
        let mut sums = vec![0u8; self.sums_len(data.len())];
        self.compute_chunked(data, &mut sums)
            .expect("buffer sized by sums_len");
        sums
    }

    /// Checks every chunk of `data` against `sums`.
    ///
    /// `base_offset` is the absolute position of `data[0]` (in a file, a block, a stream); the
    /// error of the first bad chunk carries its index, absolute offset, and both values. NULL
    /// always verifies.
    pub fn verify_chunked(
        &self,
        data: &[u8],
        sums: &[u8],
        base_offset: u64,
    ) -> Result<(), ChecksumError> {
        if self.checksum_type == ChecksumType::Null {
            return Ok(());
        }
        self.check_sums_len(data.len(), sums.len())?;
        let bpc = self.bytes_per_checksum as usize;
        let batch_bytes = bpc.saturating_mul(VERIFY_BATCH_CHUNKS);
        let mut computed = [0u8; 4 * VERIFY_BATCH_CHUNKS];
        for (batch_index, (batch, stored)) in data
            .chunks(batch_bytes)
            .zip(sums.chunks(4 * VERIFY_BATCH_CHUNKS))
            .enumerate()
        {
            let computed = &mut computed[..stored.len()];
            self.compute_chunked(batch, computed)?;
            if computed != stored {
                let first_chunk = batch_index * VERIFY_BATCH_CHUNKS;
                return Err(self.first_mismatch(batch, stored, computed, first_chunk, base_offset));
            }
        }
        Ok(())
    }

    fn first_mismatch(
        &self,
        batch: &[u8],
        stored: &[u8],
        computed: &[u8],
        first_chunk: usize,
        base_offset: u64,
    ) -> ChecksumError {
        let bpc = self.bytes_per_checksum as usize;
        let (i, (s, c)) = stored
            .chunks_exact(4)
            .zip(computed.chunks_exact(4))
            .enumerate()
            .find(|(_, (s, c))| s != c)
            .expect("caller saw a difference");
        let chunk_index = first_chunk + i;
        let start = i * bpc;
        ChecksumMismatch {
            checksum_type: self.checksum_type,
            chunk_index,
            offset: base_offset + (chunk_index as u64) * bpc as u64,
            chunk_len: (batch.len() - start).min(bpc),
            expected: u32::from_be_bytes(s.try_into().expect("4 bytes")),
            computed: u32::from_be_bytes(c.try_into().expect("4 bytes")),
        }
        .into()
    }

    fn check_sums_len(&self, data_len: usize, actual: usize) -> Result<(), ChecksumError> {
        let expected = self.sums_len(data_len);
        if actual != expected {
            return Err(ChecksumError::SumsLength {
                data_len,
                bytes_per_checksum: self.bytes_per_checksum,
                expected,
                actual,
            });
        }
        Ok(())
    }

    /// One checksum over all of `data`, ignoring the chunk size (WAL records, whole files).
    /// NULL gives 0.
    pub fn checksum(&self, data: &[u8]) -> u32 {
        let mut running = self.running();
        running.update(data);
        running.value()
    }

    /// A checksum computed incrementally over pieces of data.
    pub fn running(&self) -> RunningChecksum {
        RunningChecksum::new(self.checksum_type, self.engine)
    }
}

/// An incremental checksum (Hadoop's `java.util.zip.Checksum`): update with pieces, read the
/// value of everything so far at any time.
#[derive(Clone, Copy)]
pub struct RunningChecksum {
    checksum_type: ChecksumType,
    engine: &'static Engine,
    state: u32,
}

impl RunningChecksum {
    fn new(checksum_type: ChecksumType, engine: &'static Engine) -> Self {
        RunningChecksum {
            checksum_type,
            engine,
            state: !0,
        }
    }

    /// Adds `data`.
    #[inline]
    pub fn update(&mut self, data: &[u8]) {
        self.state = match self.checksum_type {
            ChecksumType::Null => self.state,
            ChecksumType::Crc32 => (self.engine.crc32_update)(self.state, data),
            ChecksumType::Crc32C => (self.engine.crc32c_update)(self.state, data),
        };
    }

    /// The checksum of everything added since creation or the last reset (0 for NULL).
    #[inline]
    pub fn value(&self) -> u32 {
        match self.checksum_type {
            ChecksumType::Null => 0,
            _ => !self.state,
        }
    }

    /// Starts over.
    #[inline]
    pub fn reset(&mut self) {
        self.state = !0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<DataChecksum> {
        let mut v = Vec::new();
        for imp in Implementation::available() {
            for t in [ChecksumType::Crc32, ChecksumType::Crc32C] {
                v.push(DataChecksum::with_implementation(t, 512, imp).unwrap());
            }
        }
        v
    }

    #[test]
    fn check_values() {
        for dc in all() {
            let expected = match dc.checksum_type() {
                ChecksumType::Crc32 => 0xCBF4_3926,
                _ => 0xE306_9283,
            };
            assert_eq!(dc.checksum(b"123456789"), expected, "{dc:?}");
            let mut sums = [0u8; 4];
            dc.compute_chunked(b"123456789", &mut sums).unwrap();
            assert_eq!(u32::from_be_bytes(sums), expected, "{dc:?}");
        }
    }

    #[test]
    fn sizes_follow_hadoop() {
        let dc = DataChecksum::new(ChecksumType::Crc32C, 512).unwrap();
        assert_eq!(dc.sums_len(0), 0);
        assert_eq!(dc.sums_len(1), 4);
        assert_eq!(dc.sums_len(512), 4);
        assert_eq!(dc.sums_len(513), 8);
        let null = DataChecksum::new(ChecksumType::Null, 512).unwrap();
        assert_eq!(null.sums_len(100_000), 0);
        assert!(null.verify_chunked(b"anything", &[1, 2, 3], 0).is_ok());
        assert_eq!(null.checksum(b"x"), 0);
        assert!(matches!(
            DataChecksum::new(ChecksumType::Crc32C, 0),
            Err(ChecksumError::InvalidBytesPerChecksum(0))
        ));
    }

    #[test]
    fn wrong_sums_length_is_an_error_not_a_panic() {
        let dc = DataChecksum::new(ChecksumType::Crc32C, 512).unwrap();
        let mut sums = [0u8; 4];
        let e = dc.compute_chunked(&[0u8; 513], &mut sums).unwrap_err();
        assert_eq!(
            e.to_string(),
            "checksum buffer holds 4 bytes but 513 bytes of data in chunks of 512 need 8"
        );
        assert!(dc.verify_chunked(&[0u8; 513], &sums, 0).is_err());
    }

    #[test]
    fn mismatch_names_chunk_offset_and_values() {
        let dc = DataChecksum::new(ChecksumType::Crc32C, 512).unwrap();
        let mut data = vec![7u8; 100 * 512 + 10];
        let sums = dc.compute_chunked_to_vec(&data);
        data[70 * 512 + 3] ^= 0x10;
        let err = dc.verify_chunked(&data, &sums, 1_000_000).unwrap_err();
        let ChecksumError::Mismatch(m) = err.clone() else {
            panic!("{err}")
        };
        assert_eq!(m.chunk_index, 70);
        assert_eq!(m.offset, 1_000_000 + 70 * 512);
        assert_eq!(m.chunk_len, 512);
        assert_eq!(
            m.expected,
            u32::from_be_bytes(sums[280..284].try_into().unwrap())
        );
        assert_eq!(m.computed, dc.checksum(&data[70 * 512..71 * 512]));
        assert!(err.to_string().starts_with(
            "CRC32C checksum mismatch in chunk 70 (bytes 1035840..1036352): stored 0x"
        ));
        // The short last chunk reports its real length.
        data[70 * 512 + 3] ^= 0x10;
        data[100 * 512 + 9] ^= 1;
        let ChecksumError::Mismatch(m) = dc.verify_chunked(&data, &sums, 0).unwrap_err() else {
            panic!()
        };
        assert_eq!((m.chunk_index, m.chunk_len), (100, 10));
    }

    #[test]
    fn running_checksum_matches_one_shot() {
        for dc in all() {
            let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
            let mut r = dc.running();
            for piece in data.chunks(777) {
                r.update(piece);
            }
            assert_eq!(r.value(), dc.checksum(&data));
            r.reset();
            assert_eq!(r.value(), dc.checksum(&[]));
        }
    }
}
