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

impl Escaped<'_> {
    /// The bytes a string in `Bytes.toStringBinary`'s form stands for, as HBase's
    /// `Bytes.toBytesBinary` reads it (how HBase's tools take rows on the command line): `\xNN`
    /// is the byte NN; a `\` not followed by `x` and two hex digits is dropped, as HBase drops
    /// it; any other character is its low byte.
    pub fn parse(s: &str) -> Vec<u8> {
        let chars: Vec<char> = s.chars().collect();
        let mut out = Vec::with_capacity(chars.len());
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '\\' && chars.get(i + 1) == Some(&'x') {
                let hex = |j: usize| chars.get(j).and_then(|c| c.to_digit(16));
                match (hex(i + 2), hex(i + 3)) {
                    (Some(hi), Some(lo)) => {
                        out.push((hi << 4 | lo) as u8);
                        i += 4;
                    }
                    // HBase skips the backslash of a bogus escape and reads on from the `x`.
                    _ => i += 1,
                }
                continue;
            }
            out.push(c as u32 as u8);
            i += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parse_reads_escapes_as_hbase_does() {
        assert_eq!(Escaped::parse("row\\x00\\xFF\\x7f"), b"row\x00\xff\x7f");
        // Bogus escapes: HBase drops the backslash and keeps what follows.
        assert_eq!(Escaped::parse("a\\xZ1"), b"axZ1");
        assert_eq!(Escaped::parse("a\\x1"), b"ax1");
        assert_eq!(Escaped::parse("a\\b"), b"a\\b");
    }

    proptest! {
        #[test]
        fn parse_inverts_display(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(Escaped::parse(&Escaped(&bytes).to_string()), bytes);
        }
    }
}
