//! `CompareOperator` and the `ByteArrayComparable`s.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

use cairn_cell::compare_bytes;
use regex::bytes::{Regex, RegexBuilder};

use crate::FilterError;

/// HBase's `CompareOperator`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompareOp {
    /// `<`
    Less,
    /// `<=`
    LessOrEqual,
    /// `=`
    Equal,
    /// `!=`
    NotEqual,
    /// `>=`
    GreaterOrEqual,
    /// `>`
    Greater,
    /// No comparison: compare filters treat every cell as filtered out. It has no spelling in
    /// the filter language.
    NoOp,
}

impl CompareOp {
    /// `CompareFilter.compare`: true means the cell is filtered OUT. `comparison` is the
    /// comparator's value compared with the cell's bytes (comparator on the left), so `Less`
    /// keeps a cell whose bytes are less than the value. `None` for `NoOp`, which HBase's
    /// `compare` rejects (its callers decide what `NoOp` means).
    pub fn filters_out(self, comparison: Ordering) -> Option<bool> {
        Some(match self {
            CompareOp::Less => comparison != Ordering::Greater,
            CompareOp::LessOrEqual => comparison == Ordering::Less,
            CompareOp::Equal => comparison != Ordering::Equal,
            CompareOp::NotEqual => comparison == Ordering::Equal,
            CompareOp::GreaterOrEqual => comparison == Ordering::Greater,
            CompareOp::Greater => comparison != Ordering::Less,
            CompareOp::NoOp => return None,
        })
    }

    /// `CompareFilter.compareRow/Family/Qualifier/Value`: `NoOp` filters everything out.
    pub(crate) fn compare_filters_out(self, comparator: &Comparator, cell_bytes: &[u8]) -> bool {
        match self {
            CompareOp::NoOp => true,
            op => op
                .filters_out(comparator.compare_to(cell_bytes))
                .unwrap_or(true),
        }
    }

    /// The filter-language token, `None` for `NoOp`.
    pub fn token(self) -> Option<&'static str> {
        Some(match self {
            CompareOp::Less => "<",
            CompareOp::LessOrEqual => "<=",
            CompareOp::Equal => "=",
            CompareOp::NotEqual => "!=",
            CompareOp::GreaterOrEqual => ">=",
            CompareOp::Greater => ">",
            CompareOp::NoOp => return None,
        })
    }

    /// `ParseFilter.createCompareOperator`: exactly one of `< <= > >= != =`.
    pub fn from_token(token: &[u8]) -> Option<CompareOp> {
        Some(match token {
            b"<" => CompareOp::Less,
            b"<=" => CompareOp::LessOrEqual,
            b">" => CompareOp::Greater,
            b">=" => CompareOp::GreaterOrEqual,
            b"!=" => CompareOp::NotEqual,
            b"=" => CompareOp::Equal,
            _ => return None,
        })
    }
}

/// `BitComparator.BitwiseOp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BitwiseOp {
    /// Some bit set in both.
    And,
    /// Some bit set in either.
    Or,
    /// Some bit differs.
    Xor,
}

/// HBase's `ByteArrayComparable`s. [`Comparator::compare_to`] returns the comparator's value
/// compared with the cell's bytes; the "matching" comparators (substring, regex, null, bit)
/// return `Equal` for a match and `Greater` otherwise, as HBase's 0/1.
#[derive(Clone)]
pub enum Comparator {
    /// `BinaryComparator`: unsigned lexicographic order of the whole arrays.
    Binary(Vec<u8>),
    /// `BinaryPrefixComparator`: compares with the first `value.len()` bytes of the cell (all
    /// of them if the cell is shorter).
    BinaryPrefix(Vec<u8>),
    /// `SubstringComparator`: case-insensitive containment; holds the lowercased substring.
    Substring(String),
    /// `RegexStringComparator`: `find()` anywhere in the cell decoded as UTF-8.
    RegexString {
        /// The pattern as given.
        pattern: String,
        /// `Pattern.CASE_INSENSITIVE` (the language's `regexstringnocase`).
        case_insensitive: bool,
        /// The compiled pattern (`Pattern.DOTALL` always on, as HBase's default).
        regex: Regex,
    },
    /// `NullComparator`: a cell's bytes are never null, so never a match.
    Null,
    /// `BitComparator`: matches when the lengths agree and `op` of value and cell is non-zero
    /// in some byte.
    Bit {
        /// The mask.
        value: Vec<u8>,
        /// How the mask is combined with the cell.
        op: BitwiseOp,
    },
}

impl Comparator {
    /// `BinaryComparator`.
    pub fn binary(value: impl Into<Vec<u8>>) -> Comparator {
        Comparator::Binary(value.into())
    }

    /// `BinaryPrefixComparator`.
    pub fn binary_prefix(value: impl Into<Vec<u8>>) -> Comparator {
        Comparator::BinaryPrefix(value.into())
    }

    /// `SubstringComparator`: lowercases `substring` (Unicode, like `Locale.ROOT`).
    pub fn substring(substring: &str) -> Comparator {
        Comparator::Substring(substring.to_lowercase())
    }

    /// `RegexStringComparator(expr)`: HBase's default flags (`DOTALL`), or
    /// `CASE_INSENSITIVE | DOTALL` when `case_insensitive`. The pattern is compiled by the
    /// `regex` crate, whose syntax is close to Java's but not equal: look-around and
    /// back-references are rejected, and `\w`, `\d`, `\s` and case folding are Unicode-aware.
    pub fn regex_string(pattern: &str, case_insensitive: bool) -> Result<Comparator, FilterError> {
        let regex = RegexBuilder::new(pattern)
            .dot_matches_new_line(true)
            .case_insensitive(case_insensitive)
            .build()
            .map_err(|e| FilterError::invalid("RegexStringComparator", e.to_string()))?;
        Ok(Comparator::RegexString {
            pattern: pattern.to_owned(),
            case_insensitive,
            regex,
        })
    }

    /// The comparator's value compared with `cell_bytes` (HBase's `compareTo`).
    pub fn compare_to(&self, cell_bytes: &[u8]) -> Ordering {
        let matched = |yes: bool| {
            if yes {
                Ordering::Equal
            } else {
                Ordering::Greater
            }
        };
        match self {
            Comparator::Binary(value) => compare_bytes(value, cell_bytes),
            Comparator::BinaryPrefix(value) => {
                let n = value.len().min(cell_bytes.len());
                compare_bytes(value, &cell_bytes[..n])
            }
            Comparator::Substring(lower) => matched(
                String::from_utf8_lossy(cell_bytes)
                    .to_lowercase()
                    .contains(lower.as_str()),
            ),
            Comparator::RegexString { regex, .. } => {
                // Java decodes the bytes first, replacing malformed input with U+FFFD; so do we,
                // so that `.` matches such a byte as one character.
                let text: Cow<'_, str> = String::from_utf8_lossy(cell_bytes);
                matched(regex.is_match(text.as_bytes()))
            }
            Comparator::Null => Ordering::Greater,
            Comparator::Bit { value, op } => {
                if value.len() != cell_bytes.len() {
                    return Ordering::Greater;
                }
                let any = value.iter().zip(cell_bytes).any(|(&m, &c)| match op {
                    BitwiseOp::And => m & c != 0,
                    BitwiseOp::Or => m | c != 0,
                    BitwiseOp::Xor => m ^ c != 0,
                });
                matched(any)
            }
        }
    }

    /// True for the comparators that only tell match / no match, which the filter language
    /// allows only with `=` and `!=`.
    pub(crate) fn is_matching_only(&self) -> bool {
        matches!(
            self,
            Comparator::Substring(_) | Comparator::RegexString { .. }
        )
    }

    /// The filter-language spelling (`binary:...`), unquoted; `None` for comparators the
    /// language cannot express.
    pub fn spelling(&self) -> Option<Vec<u8>> {
        let (kind, value): (&str, &[u8]) = match self {
            Comparator::Binary(v) => ("binary", v),
            Comparator::BinaryPrefix(v) => ("binaryprefix", v),
            Comparator::Substring(s) => ("substring", s.as_bytes()),
            Comparator::RegexString {
                pattern,
                case_insensitive,
                ..
            } => (
                if *case_insensitive {
                    "regexstringnocase"
                } else {
                    "regexstring"
                },
                pattern.as_bytes(),
            ),
            Comparator::Null | Comparator::Bit { .. } => return None,
        };
        let mut out = Vec::with_capacity(kind.len() + 1 + value.len());
        out.extend_from_slice(kind.as_bytes());
        out.push(b':');
        out.extend_from_slice(value);
        Some(out)
    }
}

impl PartialEq for Comparator {
    fn eq(&self, other: &Comparator) -> bool {
        match (self, other) {
            (Comparator::Binary(a), Comparator::Binary(b)) => a == b,
            (Comparator::BinaryPrefix(a), Comparator::BinaryPrefix(b)) => a == b,
            (Comparator::Substring(a), Comparator::Substring(b)) => a == b,
            (
                Comparator::RegexString {
                    pattern: a,
                    case_insensitive: ai,
                    ..
                },
                Comparator::RegexString {
                    pattern: b,
                    case_insensitive: bi,
                    ..
                },
            ) => a == b && ai == bi,
            (Comparator::Null, Comparator::Null) => true,
            (Comparator::Bit { value: a, op: ao }, Comparator::Bit { value: b, op: bo }) => {
                a == b && ao == bo
            }
            _ => false,
        }
    }
}

impl fmt::Debug for Comparator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use cairn_cell::Escaped;
        match self {
            Comparator::Binary(v) => write!(f, "BinaryComparator({})", Escaped(v)),
            Comparator::BinaryPrefix(v) => write!(f, "BinaryPrefixComparator({})", Escaped(v)),
            Comparator::Substring(s) => write!(f, "SubstringComparator({s:?})"),
            Comparator::RegexString {
                pattern,
                case_insensitive,
                ..
            } => write!(
                f,
                "RegexStringComparator({pattern:?}, case_insensitive={case_insensitive})"
            ),
            Comparator::Null => write!(f, "NullComparator"),
            Comparator::Bit { value, op } => write!(f, "BitComparator({}, {op:?})", Escaped(value)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::*;

    #[test]
    fn compare_op_has_compare_filters_inverted_sense() {
        // The comparator's value is on the left: "value < cell" is Less, and LESS keeps cells
        // that are less than the value, i.e. filters out when value <= cell.
        let cases = [
            (CompareOp::Less, [false, true, true]),
            (CompareOp::LessOrEqual, [false, false, true]),
            (CompareOp::Equal, [true, false, true]),
            (CompareOp::NotEqual, [false, true, false]),
            (CompareOp::GreaterOrEqual, [true, false, false]),
            (CompareOp::Greater, [true, true, false]),
        ];
        for (op, expect) in cases {
            // comparison = value.cmp(cell): Greater means the cell is smaller than the value.
            let got = [Greater, Equal, Less].map(|c| op.filters_out(c).unwrap());
            assert_eq!(got, expect, "{op:?}");
        }
        assert_eq!(CompareOp::NoOp.filters_out(Equal), None);
        assert!(CompareOp::NoOp.compare_filters_out(&Comparator::binary("a"), b"a"));
    }

    #[test]
    fn binary_and_prefix() {
        let b = Comparator::binary("abc");
        assert_eq!(b.compare_to(b"abc"), Equal);
        assert_eq!(b.compare_to(b"abd"), Less);
        assert_eq!(b.compare_to(b"ab"), Greater);
        assert_eq!(Comparator::binary(vec![0x80]).compare_to(&[0x7f]), Greater);
        let p = Comparator::binary_prefix("ab");
        assert_eq!(p.compare_to(b"abzzz"), Equal);
        assert_eq!(p.compare_to(b"aa"), Greater);
        // A cell shorter than the prefix compares on its own length.
        assert_eq!(p.compare_to(b"a"), Greater);
        assert_eq!(p.compare_to(b"b"), Less);
    }

    #[test]
    fn substring_is_case_insensitive_and_regex_finds() {
        let s = Comparator::substring("HeLLo");
        assert_eq!(s.compare_to(b"say hello!"), Equal);
        assert_eq!(s.compare_to(b"SAY HELLO"), Equal);
        assert_eq!(s.compare_to(b"help"), Greater);
        let r = Comparator::regex_string("b.c", false).unwrap();
        assert_eq!(r.compare_to(b"xxb\ncyy"), Equal, "DOTALL is on");
        assert_eq!(r.compare_to(b"B c"), Greater);
        let ri = Comparator::regex_string("b.c", true).unwrap();
        assert_eq!(ri.compare_to(b"B c"), Equal);
        assert_eq!(
            Comparator::regex_string("^.$", false)
                .unwrap()
                .compare_to(&[0xff]),
            Equal,
            "a malformed byte decodes to one replacement character"
        );
        assert!(Comparator::regex_string("(", false).is_err());
    }

    #[test]
    fn bit_and_null() {
        let and = Comparator::Bit {
            value: vec![0x01, 0x00],
            op: BitwiseOp::And,
        };
        assert_eq!(and.compare_to(&[0x03, 0x00]), Equal);
        assert_eq!(and.compare_to(&[0x02, 0x00]), Greater);
        assert_eq!(and.compare_to(&[0x03]), Greater);
        let xor = Comparator::Bit {
            value: vec![0x0f],
            op: BitwiseOp::Xor,
        };
        assert_eq!(xor.compare_to(&[0x0f]), Greater);
        assert_eq!(xor.compare_to(&[0x0e]), Equal);
        assert_eq!(Comparator::Null.compare_to(b""), Greater);
    }
}
