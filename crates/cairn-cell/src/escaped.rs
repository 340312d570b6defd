//! Bytes shown the way HBase prints them in keys and logs.

use std::fmt;

/// Bytes printed as HBase's `Bytes.toStringBinary` does: printable ASCII as is, the rest as
/// `\xNN`.
pub struct Escaped<'a>(pub &'a [u8]);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &b in self.0 {
            if (0x20..0x7F).contains(&b) && b != b'\\' {
                write!(f, "{}", b as char)?;
            } else {
                write!(f, "\\x{b:02X}")?;
            }
        }
        Ok(())
    }
}
