//! Names a client chooses, checked once, before anything touches a filesystem.
//!
//! Table, namespace and family names become directory names (`data/<ns>/<table>/<region>/
//! <family>/`), and rows become `hbase:meta` rows. Every way in — native RPC, Thrift,
//! `importtsv`, `completebulkload`, the embedded API — reaches the store through these checks,
//! which are HBase 2.6's own (`TableName.isLegalNamespaceName`,
//! `TableName.isLegalTableQualifierName`, `ColumnFamilyDescriptorBuilder.isLegalColumnFamilyName`,
//! `Mutation.checkRow`), with HBase's messages: `tests/names_hbase.rs` holds them against
//! HBase 2.6.1's classes. [`child`] then joins a checked name onto its parent directory and
//! refuses anything that is not one plain path component, so a rule missed here still cannot
//! reach outside the root.
//!
//! Refusals are [`RegionError::IllegalArgument`]: HBase throws `IllegalArgumentException`
//! for each.

mod java_letters;

use std::path::{Component, Path, PathBuf};

use crate::error::{RegionError, Result};
use crate::layout::RegionInfo;

/// `HConstants.MAX_ROW_LENGTH` (`Short.MAX_VALUE`): the longest row HBase takes, anywhere a
/// row enters — a mutation, a split key, a split row, an `hbase:meta` row.
pub const MAX_ROW_LENGTH: usize = i16::MAX as usize;

/// The longest family name (`Byte.MAX_VALUE`): a cell's key stores its length in one byte.
pub const MAX_FAMILY_LENGTH: usize = i8::MAX as usize;

/// `HConstants.RECOVERED_EDITS_DIR`: a region directory's WAL edits awaiting replay, so never
/// a family's name.
pub const RECOVERED_EDITS_DIR: &str = "recovered.edits";

/// `TableName.DISALLOWED_TABLE_NAME`: neither a table nor a namespace may be called this.
const DISALLOWED_TABLE_NAME: &str = "zookeeper";

fn illegal(msg: String) -> RegionError {
    RegionError::IllegalArgument(msg)
}

/// A letter or digit of any language as HBase's `TableName` takes it (Java's
/// `Character.isAlphabetic` or `Character.isDigit`), on one UTF-16 code unit.
fn java_letter_or_digit(unit: u16) -> bool {
    let table = java_letters::LETTER_OR_DIGIT;
    let i = table.partition_point(|&(_, hi)| hi < unit);
    table.get(i).is_some_and(|&(lo, _)| lo <= unit)
}

/// A name's bytes as Java's `new String(bytes, UTF_8)` sees them: malformed sequences become
/// U+FFFD, which no name rule accepts.
fn java_string(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// The first UTF-16 code unit of `s` that `allowed` refuses, with its index in code units (as
/// Java's `String.charAt` counts).
fn first_refused(s: &str, allowed: impl Fn(u16) -> bool) -> Option<(usize, u16)> {
    s.encode_utf16().enumerate().find(|&(_, u)| !allowed(u))
}

/// A UTF-16 code unit as Java prints a `char`: itself, or `?` for half a surrogate pair.
fn java_char(unit: u16) -> char {
    char::from_u32(unit as u32).unwrap_or('?')
}

/// HBase's `TableName.isLegalNamespaceName`: not empty, not `zookeeper`, letters or digits of
/// any language and `_`. Returns the name as a string.
pub fn check_namespace(b: &[u8]) -> Result<String> {
    if b.is_empty() {
        return Err(illegal("Namespace name must not be empty".into()));
    }
    let s = java_string(b);
    if s == DISALLOWED_TABLE_NAME {
        return Err(illegal(format!(
            "Tables may not be named '{DISALLOWED_TABLE_NAME}'"
        )));
    }
    if let Some((i, u)) = first_refused(&s, |u| java_letter_or_digit(u) || u == b'_' as u16) {
        return Err(illegal(format!(
            "Illegal character <{}> at {i}. Namespaces may only contain 'alphanumeric characters' from any language and digits: {s}",
            java_char(u)
        )));
    }
    Ok(s.into_owned())
}

/// HBase's `TableName.isLegalTableQualifierName`: not empty, not `zookeeper`, not starting
/// with `.` or `-`, letters or digits of any language, `_`, `-` and `.`. Returns the name as
/// a string.
pub fn check_qualifier(b: &[u8]) -> Result<String> {
    if b.is_empty() {
        return Err(illegal("Table qualifier must not be empty".into()));
    }
    let s = java_string(b);
    if s == DISALLOWED_TABLE_NAME {
        return Err(illegal(format!(
            "Tables may not be named '{DISALLOWED_TABLE_NAME}'"
        )));
    }
    if b[0] == b'.' || b[0] == b'-' {
        return Err(illegal(format!(
            "Illegal first character <{}> at 0. User-space table qualifiers can only start with 'alphanumeric characters' from any language: {s}",
            b[0]
        )));
    }
    let allowed =
        |u: u16| java_letter_or_digit(u) || [b'_', b'-', b'.'].map(u16::from).contains(&u);
    if let Some((i, u)) = first_refused(&s, allowed) {
        return Err(illegal(format!(
            "Illegal character code:{u}, <{}> at {i}. User-space table qualifiers may only contain 'alphanumeric characters' and digits: {s}",
            java_char(u)
        )));
    }
    Ok(s.into_owned())
}

/// The qualifiers HBase's `TableName` constructor refuses before its character rules: the
/// names of the catalog tables of HBase 0.94 and before.
pub(crate) fn check_legacy_qualifier(q: &str) -> Result<()> {
    match q {
        "-ROOT-" => Err(illegal("-ROOT- has been deprecated.".into())),
        ".META." => Err(illegal(
            ".META. no longer exists. The table has been renamed to hbase:meta".into(),
        )),
        _ => Ok(()),
    }
}

/// HBase's `ColumnFamilyDescriptorBuilder.isLegalColumnFamilyName`, then the length
/// `TableDescriptorBuilder` allows: not empty, not starting with `.`, no control character,
/// `:`, `\` or `/`, not `recovered.edits`, at most 127 bytes.
pub fn check_family(b: &[u8]) -> Result<()> {
    if b.is_empty() {
        return Err(illegal("Column Family name can not be empty".into()));
    }
    if b[0] == b'.' {
        return Err(illegal(format!(
            "Column Family names cannot start with a period: {}",
            java_string(b)
        )));
    }
    // Java's `Character.isISOControl` on a (signed) byte: 0x00-0x1F and 0x7F; bytes from 0x80
    // are negative there, so never control characters.
    if let Some(&c) = b
        .iter()
        .find(|&&c| c < 0x20 || c == 0x7f || c == b':' || c == b'\\' || c == b'/')
    {
        return Err(illegal(format!(
            "Illegal character <{c}>. Column Family names cannot contain control characters or colons: {}",
            java_string(b)
        )));
    }
    if b == RECOVERED_EDITS_DIR.as_bytes() {
        return Err(illegal(format!(
            "Column Family name cannot be: {RECOVERED_EDITS_DIR}"
        )));
    }
    if b.len() > MAX_FAMILY_LENGTH {
        return Err(illegal(format!(
            "The length of family name is bigger than {MAX_FAMILY_LENGTH}"
        )));
    }
    Ok(())
}

/// HBase's `Mutation.checkRow` length rule: at most [`MAX_ROW_LENGTH`] bytes.
pub fn check_row(row: &[u8]) -> Result<()> {
    if row.len() > MAX_ROW_LENGTH {
        return Err(illegal(format!(
            "Row length {} is > {MAX_ROW_LENGTH}",
            row.len()
        )));
    }
    Ok(())
}

/// A region's `hbase:meta` row (`<table>,<start key>,<id>.<encoded name>.`) fits HBase's row
/// limit: a split key or split row near [`MAX_ROW_LENGTH`] passes [`check_row`] but makes a
/// region meta could not hold.
pub fn check_meta_row(info: &RegionInfo) -> Result<()> {
    let row = info.region_name_bytes();
    if row.len() > MAX_ROW_LENGTH {
        return Err(illegal(format!(
            "Row length {} is > {MAX_ROW_LENGTH}: the hbase:meta row of a region of {} starting at a key of {} bytes",
            row.len(),
            info.table,
            info.start_key.len()
        )));
    }
    Ok(())
}

/// `dir/name`, where `name` must be one plain path component (not empty, `.` or `..`, no
/// separator, no NUL): the last guard between a name a client shaped and the filesystem.
pub fn child(dir: &Path, name: &str) -> Result<PathBuf> {
    let one_plain = !name.contains(['/', '\\', '\0'])
        && matches!(
            Path::new(name).components().collect::<Vec<_>>().as_slice(),
            [Component::Normal(_)]
        )
        && name != "."
        && name != "..";
    if !one_plain {
        return Err(illegal(format!(
            "{name:?} is not a plain name under {}",
            dir.display()
        )));
    }
    Ok(dir.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_letter_table_is_sorted_and_disjoint() {
        let t = java_letters::LETTER_OR_DIGIT;
        assert!(t.iter().all(|(lo, hi)| lo <= hi));
        assert!(t.windows(2).all(|w| w[0].1 < w[1].0));
        for (u, yes) in [
            ('a', true),
            ('Z', true),
            ('7', true),
            ('_', false),
            ('表', true),
        ]
        .map(|(c, y)| (c as u32 as u16, y))
        {
            assert_eq!(java_letter_or_digit(u), yes, "{u:#x}");
        }
        // U+00B2 SUPERSCRIPT TWO is numeric to Rust, but not a digit to Java; U+0345, a
        // combining mark, is alphabetic to Java.
        assert!(!java_letter_or_digit(0xb2));
        assert!(java_letter_or_digit(0x345));
    }

    #[test]
    fn hbase_refuses_what_would_leave_the_directory() {
        for f in [
            "/tmp/absfam",
            "a/b",
            "../x",
            "..",
            ".",
            "a\\b",
            ".hidden",
            "",
            "recovered.edits",
            "a:b",
            "tab\t",
        ] {
            assert!(check_family(f.as_bytes()).is_err(), "{f:?}");
        }
        for ok in ["f", "cf-1", "é", "a.b", "a b"] {
            check_family(ok.as_bytes()).unwrap();
        }
        for q in ["..", ".x", "-x", "a/b", "", "zookeeper", "a b"] {
            assert!(check_qualifier(q.as_bytes()).is_err(), "{q:?}");
        }
        for ns in ["", "a.b", "a-b", "..", "zookeeper", "a/b"] {
            assert!(check_namespace(ns.as_bytes()).is_err(), "{ns:?}");
        }
        assert_eq!(check_qualifier("表-1.x_y".as_bytes()).unwrap(), "表-1.x_y");
        assert!(check_qualifier(b"t\xff").is_err(), "not UTF-8");
        assert!(
            check_qualifier("𝐀".as_bytes()).is_err(),
            "Java sees two surrogates"
        );
    }

    #[test]
    fn messages_are_hbases() {
        fn msg<T: std::fmt::Debug>(r: Result<T>) -> String {
            r.unwrap_err().to_string()
        }
        assert_eq!(
            msg(check_family(b"/x")),
            "Illegal character <47>. Column Family names cannot contain control characters or colons: /x"
        );
        assert_eq!(
            msg(check_qualifier(b"t ")),
            "Illegal character code:32, < > at 1. User-space table qualifiers may only contain 'alphanumeric characters' and digits: t "
        );
        assert_eq!(msg(check_row(&[0; 33000])), "Row length 33000 is > 32767");
        check_row(&[0; MAX_ROW_LENGTH]).unwrap();
    }

    #[test]
    fn child_takes_one_plain_component() {
        let root = Path::new("/r");
        assert_eq!(child(root, "a").unwrap(), Path::new("/r/a"));
        for bad in ["", ".", "..", "a/b", "/abs", "a\0b", "a\\b"] {
            assert!(child(root, bad).is_err(), "{bad:?}");
        }
    }

    proptest! {
        /// Whatever bytes a client sends: a name every check takes is one plain component
        /// directly under its parent.
        #[test]
        fn accepted_names_stay_under_their_parent(b in proptest::collection::vec(any::<u8>(), 0..12)) {
            let parent = Path::new("/root/data");
            let accepted = [
                check_namespace(&b).ok(),
                check_qualifier(&b).ok(),
                check_family(&b).ok().map(|_| String::from_utf8_lossy(&b).into_owned()),
            ];
            for name in accepted.into_iter().flatten() {
                let p = child(parent, &name).unwrap();
                prop_assert_eq!(p.parent(), Some(parent));
            }
        }
    }
}
