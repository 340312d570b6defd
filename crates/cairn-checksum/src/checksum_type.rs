//! The checksum algorithms HBase and Hadoop name, with their on-disk codes.

use std::fmt;
use std::str::FromStr;

use crate::ChecksumError;

/// A checksum algorithm, with the byte code HBase stores in every HFile block header (and Hadoop
/// in its checksum headers): NULL = 0, CRC32 = 1, CRC32C = 2. The default is CRC32C, as in HBase
/// (`hbase.hstore.checksum.algorithm`) and HDFS (`dfs.checksum.type`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ChecksumType {
    /// No checksum: nothing is computed and everything verifies.
    Null = 0,
    /// CRC-32 (IEEE 802.3 / zlib polynomial 0x04C11DB7, reflected).
    Crc32 = 1,
    /// CRC-32C (Castagnoli polynomial 0x1EDC6F41, reflected), with hardware support on x86-64
    /// (SSE4.2 `crc32`) and ARMv8.
    #[default]
    Crc32C = 2,
}

impl ChecksumType {
    /// Every type, in code order.
    pub const ALL: [ChecksumType; 3] = [
        ChecksumType::Null,
        ChecksumType::Crc32,
        ChecksumType::Crc32C,
    ];

    /// The byte code stored on disk.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The type for an on-disk byte code.
    pub fn from_code(code: u8) -> Result<ChecksumType, ChecksumError> {
        Self::ALL
            .into_iter()
            .find(|t| t.code() == code)
            .ok_or(ChecksumError::UnknownCode(code))
    }

    /// The name HBase and Hadoop use: `NULL`, `CRC32`, `CRC32C`.
    pub fn name(self) -> &'static str {
        match self {
            ChecksumType::Null => "NULL",
            ChecksumType::Crc32 => "CRC32",
            ChecksumType::Crc32C => "CRC32C",
        }
    }

    /// Bytes of one stored checksum: 0 for NULL, 4 for the CRCs.
    pub fn checksum_size(self) -> usize {
        match self {
            ChecksumType::Null => 0,
            ChecksumType::Crc32 | ChecksumType::Crc32C => 4,
        }
    }
}

impl fmt::Display for ChecksumType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ChecksumType {
    type Err = ChecksumError;

    /// Parses a configuration value such as `CRC32C` or `crc32c`, ignoring case and surrounding
    /// whitespace.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        Self::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| ChecksumError::UnknownName(s.to_string()))
    }
}

impl TryFrom<u8> for ChecksumType {
    type Error = ChecksumError;

    fn try_from(code: u8) -> Result<Self, Self::Error> {
        ChecksumType::from_code(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_match_hbase() {
        assert_eq!(ChecksumType::Null.code(), 0);
        assert_eq!(ChecksumType::Crc32.code(), 1);
        assert_eq!(ChecksumType::Crc32C.code(), 2);
        for t in ChecksumType::ALL {
            assert_eq!(ChecksumType::from_code(t.code()).unwrap(), t);
            assert_eq!(t.name().parse::<ChecksumType>().unwrap(), t);
        }
        assert_eq!(ChecksumType::default(), ChecksumType::Crc32C);
    }

    #[test]
    fn parsing_ignores_case_and_whitespace() {
        assert_eq!(
            " crc32c ".parse::<ChecksumType>().unwrap(),
            ChecksumType::Crc32C
        );
        assert_eq!(
            "Crc32".parse::<ChecksumType>().unwrap(),
            ChecksumType::Crc32
        );
        assert_eq!("null".parse::<ChecksumType>().unwrap(), ChecksumType::Null);
    }

    #[test]
    fn unknown_names_and_codes_are_clear_errors() {
        let e = "adler32".parse::<ChecksumType>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown checksum type name \"adler32\" (expected NULL, CRC32 or CRC32C)"
        );
        let e = ChecksumType::from_code(3).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown checksum type code 3 (expected 0 = NULL, 1 = CRC32, 2 = CRC32C)"
        );
    }
}
