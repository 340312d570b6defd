//! Checksum kernels and their run-time selection.
//!
//! An [`Implementation`] names the code that computes checksums. The default is chosen once per
//! process: `CAIRN_CHECKSUM_IMPL` (`portable`, `crates`, `avx512`) if set, otherwise the fastest
//! one this CPU supports. Every implementation computes identical values; the tests hold them
//! to that against each other and against a bit-at-a-time reference.

#[cfg(target_arch = "x86_64")]
mod avx512;
mod portable;

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::ChecksumError;

/// The environment variable that forces an implementation, e.g. `CAIRN_CHECKSUM_IMPL=portable`.
pub const IMPLEMENTATION_ENV: &str = "CAIRN_CHECKSUM_IMPL";

/// Which code computes checksums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Implementation {
    /// Slicing-by-8 tables: always available, the reference for the others.
    Portable,
    /// The `crc-fast` (CRC32C) and `crc32fast` (CRC32) crates called once per chunk; each picks
    /// its own hardware kernel at run time.
    Crates,
    /// cairn's multi-chunk AVX-512 VPCLMULQDQ kernel for CRC32C (x86-64 only); CRC32 goes
    /// through `crc32fast`.
    Avx512,
}

impl Implementation {
    /// Every implementation, in order of preference (fastest first).
    pub const ALL: [Implementation; 3] = [
        Implementation::Avx512,
        Implementation::Crates,
        Implementation::Portable,
    ];

    /// The lower-case name used by `CAIRN_CHECKSUM_IMPL` and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Implementation::Portable => "portable",
            Implementation::Crates => "crates",
            Implementation::Avx512 => "avx512",
        }
    }

    /// True when this CPU can run the implementation.
    pub fn is_available(self) -> bool {
        match self {
            Implementation::Portable | Implementation::Crates => true,
            #[cfg(target_arch = "x86_64")]
            Implementation::Avx512 => avx512::is_supported(),
            #[cfg(not(target_arch = "x86_64"))]
            Implementation::Avx512 => false,
        }
    }

    /// The implementations this CPU can run, fastest first.
    pub fn available() -> Vec<Implementation> {
        Self::ALL.into_iter().filter(|i| i.is_available()).collect()
    }

    /// The fastest implementation this CPU can run.
    pub fn best() -> Implementation {
        Self::ALL
            .into_iter()
            .find(|i| i.is_available())
            .unwrap_or(Implementation::Portable)
    }

    /// The process-wide default: `CAIRN_CHECKSUM_IMPL` when set, else [`Implementation::best`].
    ///
    /// Chosen on first use and never changed afterwards. A value that names no implementation,
    /// or one this CPU cannot run, is reported once on stderr and the best one is used instead:
    /// a typo in a tuning variable must not stop a server that could run correctly.
    pub fn selected() -> Implementation {
        static SELECTED: OnceLock<Implementation> = OnceLock::new();
        *SELECTED.get_or_init(|| match std::env::var(IMPLEMENTATION_ENV) {
            Err(_) => Implementation::best(),
            Ok(value) => match value.parse::<Implementation>() {
                Ok(i) if i.is_available() => i,
                Ok(i) => {
                    tracing::warn!(
                        "{IMPLEMENTATION_ENV}={value}: the {} kernel is not supported by this \
                         CPU; using {}",
                        i.name(),
                        Implementation::best().name()
                    );
                    Implementation::best()
                }
                Err(e) => {
                    tracing::warn!(
                        "{IMPLEMENTATION_ENV}: {e}; using {}",
                        Implementation::best().name()
                    );
                    Implementation::best()
                }
            },
        })
    }

    /// A one-line description of what this implementation runs on this CPU, for reports.
    pub fn describe(self) -> String {
        match self {
            Implementation::Portable => "portable (slicing-by-8 tables)".to_string(),
            Implementation::Crates => {
                "crates (crc-fast for CRC32C, crc32fast for CRC32)".to_string()
            }
            #[cfg(target_arch = "x86_64")]
            Implementation::Avx512 if self.is_available() => {
                let t = avx512::Tuning::get();
                format!(
                    "avx512 (VPCLMULQDQ folding; scalar crc32 streams alongside: small chunks {}, \
                     long buffers {})",
                    if t.small_chunks_hybrid { "yes" } else { "no" },
                    if t.long_buffer_hybrid { "yes" } else { "no" },
                )
            }
            Implementation::Avx512 => "avx512 (not supported by this CPU)".to_string(),
        }
    }

    /// The kernels of this implementation, or an error if the CPU cannot run it.
    pub(crate) fn engine(self) -> Result<&'static Engine, ChecksumError> {
        if !self.is_available() {
            return Err(ChecksumError::ImplementationUnavailable(self));
        }
        Ok(match self {
            Implementation::Portable => &PORTABLE,
            Implementation::Crates => &CRATES,
            #[cfg(target_arch = "x86_64")]
            Implementation::Avx512 => &AVX512,
            #[cfg(not(target_arch = "x86_64"))]
            Implementation::Avx512 => unreachable!("is_available() is false off x86-64"),
        })
    }
}

impl fmt::Display for Implementation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Implementation {
    type Err = ChecksumError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        Self::ALL
            .into_iter()
            .find(|i| i.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| ChecksumError::UnknownImplementation(s.to_string()))
    }
}

/// Function table of one implementation. `update` advances a raw (not inverted) CRC register;
/// `chunks` writes one big-endian, finalized CRC per chunk.
pub(crate) struct Engine {
    pub crc32c_update: fn(u32, &[u8]) -> u32,
    pub crc32c_chunks: fn(&[u8], usize, &mut [u8]),
    pub crc32_update: fn(u32, &[u8]) -> u32,
    pub crc32_chunks: fn(&[u8], usize, &mut [u8]),
}

#[inline(always)]
fn per_chunk(data: &[u8], bytes_per_checksum: usize, sums: &mut [u8], crc: impl Fn(&[u8]) -> u32) {
    for (chunk, sum) in data
        .chunks(bytes_per_checksum)
        .zip(sums.chunks_exact_mut(4))
    {
        sum.copy_from_slice(&crc(chunk).to_be_bytes());
    }
}

fn crates_crc32c_update(state: u32, data: &[u8]) -> u32 {
    let mut digest =
        crc_fast::Digest::new_with_init_state(crc_fast::CrcAlgorithm::Crc32Iscsi, state as u64);
    digest.update(data);
    digest.get_state() as u32
}

fn crates_crc32_update(state: u32, data: &[u8]) -> u32 {
    // crc32fast keeps its state finalized (inverted).
    let mut hasher = crc32fast::Hasher::new_with_initial(!state);
    hasher.update(data);
    !hasher.finalize()
}

fn crates_crc32c_chunks(data: &[u8], bytes_per_checksum: usize, sums: &mut [u8]) {
    per_chunk(data, bytes_per_checksum, sums, crc_fast::crc32_iscsi);
}

fn crates_crc32_chunks(data: &[u8], bytes_per_checksum: usize, sums: &mut [u8]) {
    per_chunk(data, bytes_per_checksum, sums, crc32fast::hash);
}

fn portable_crc32c_chunks(data: &[u8], bytes_per_checksum: usize, sums: &mut [u8]) {
    per_chunk(data, bytes_per_checksum, sums, |c| {
        !portable::crc32c_update(!0, c)
    });
}

fn portable_crc32_chunks(data: &[u8], bytes_per_checksum: usize, sums: &mut [u8]) {
    per_chunk(data, bytes_per_checksum, sums, |c| {
        !portable::crc32_update(!0, c)
    });
}

static PORTABLE: Engine = Engine {
    crc32c_update: portable::crc32c_update,
    crc32c_chunks: portable_crc32c_chunks,
    crc32_update: portable::crc32_update,
    crc32_chunks: portable_crc32_chunks,
};

static CRATES: Engine = Engine {
    crc32c_update: crates_crc32c_update,
    crc32c_chunks: crates_crc32c_chunks,
    crc32_update: crates_crc32_update,
    crc32_chunks: crates_crc32_chunks,
};

/// Reached only through `Implementation::Avx512.engine()`, which checks the CPU first.
#[cfg(target_arch = "x86_64")]
static AVX512: Engine = Engine {
    crc32c_update: avx512::update,
    crc32c_chunks: avx512::chunks,
    crc32_update: crates_crc32_update,
    crc32_chunks: crates_crc32_chunks,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_case_insensitively() {
        for i in Implementation::ALL {
            assert_eq!(
                i.name().to_uppercase().parse::<Implementation>().unwrap(),
                i
            );
        }
        assert!(matches!(
            "sse9".parse::<Implementation>(),
            Err(ChecksumError::UnknownImplementation(_))
        ));
    }

    #[test]
    fn portable_and_crates_are_always_available() {
        let available = Implementation::available();
        assert!(available.contains(&Implementation::Portable));
        assert!(available.contains(&Implementation::Crates));
        assert!(Implementation::best().is_available());
        assert!(Implementation::selected().is_available());
    }
}
