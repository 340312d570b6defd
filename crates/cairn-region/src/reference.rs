//! HBase's reference files: how a daughter region of a split (or the child of a merge) points
//! at half (or all) of a parent region's store file without copying it, until its next
//! compaction rewrites the cells into a file of its own.
//!
//! A reference lives at `<table>/<child>/<family>/<hfile>.<parent encoded name>` and refers to
//! `<table>/<parent>/<family>/<hfile>`. Its bytes are `PBUF` and an `FSProtos.Reference`
//! message: the split key (the key of the first possible cell of the split row) and which
//! half, TOP (rows at or after the split row) or BOTTOM (rows before it). HBase's
//! `StoreFileInfo` and `HalfStoreFileReader` read the same files.

use std::path::{Path, PathBuf};

use prost::Message;

use crate::error::{RegionError, Result};

const PB_MAGIC: &[u8] = b"PBUF";

/// `FSProtos.Reference` (FS.proto): field 1 the split key, field 2 the range.
#[derive(Clone, PartialEq, prost::Message)]
struct ReferencePb {
    #[prost(bytes = "vec", required, tag = "1")]
    splitkey: Vec<u8>,
    #[prost(int32, required, tag = "2")]
    range: i32,
}

/// `Reference.Range.TOP` in FS.proto.
const RANGE_TOP: i32 = 0;
/// `Reference.Range.BOTTOM`.
const RANGE_BOTTOM: i32 = 1;

/// Which half of the referred file a reference covers, and where the halves meet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Half {
    /// The split row: TOP covers rows ≥ it, BOTTOM rows < it.
    pub split_row: Vec<u8>,
    /// TOP (true) or BOTTOM (false).
    pub top: bool,
}

impl Half {
    /// Whether `row` is in this half.
    #[inline]
    pub fn contains_row(&self, row: &[u8]) -> bool {
        (cairn_cell::compare_bytes(row, &self.split_row) != std::cmp::Ordering::Less) == self.top
    }

    /// The reference file's bytes: `PBUF` + `FSProtos.Reference`, the split key being the
    /// key of the first possible cell of the split row (`KeyValueUtil.createFirstOnRow`).
    pub fn encode(&self) -> Result<Vec<u8>> {
        let key = cairn_cell::first_on_row(&self.split_row)?;
        let m = ReferencePb {
            splitkey: key,
            range: if self.top { RANGE_TOP } else { RANGE_BOTTOM },
        };
        let mut out = PB_MAGIC.to_vec();
        m.encode(&mut out).expect("vec grows");
        Ok(out)
    }

    /// Parses a reference file's bytes; `path` names it in errors. Reads the protobuf form
    /// (`PBUF` prefix) and HBase's older Writable form (a boolean `top`, then the split key
    /// with a variable-length size).
    pub fn decode(bytes: &[u8], path: &Path) -> Result<Half> {
        let corrupt = |reason: String| RegionError::Corrupt {
            path: path.display().to_string(),
            reason,
        };
        let (key, top) = if let Some(body) = bytes.strip_prefix(PB_MAGIC) {
            let m = ReferencePb::decode(body)
                .map_err(|e| corrupt(format!("reference does not parse: {e}")))?;
            let top = match m.range {
                RANGE_TOP => true,
                RANGE_BOTTOM => false,
                r => {
                    return Err(corrupt(format!(
                        "reference range {r} is neither TOP nor BOTTOM"
                    )))
                }
            };
            (m.splitkey, top)
        } else {
            let (&flag, rest) = bytes
                .split_first()
                .ok_or_else(|| corrupt("reference file is empty".into()))?;
            let (len, n) = read_hadoop_vint(rest)
                .ok_or_else(|| corrupt("reference split key length does not parse".into()))?;
            // `len` is at most an int's range (read_hadoop_vint), so the end cannot overflow.
            let key = rest.get(n..n + len).ok_or_else(|| {
                corrupt(format!("reference split key of {len} bytes is cut short"))
            })?;
            (key.to_vec(), flag != 0)
        };
        let split_row = cairn_cell::KeyRef::parse(&key)
            .map_err(|e| corrupt(format!("reference split key is not a cell key: {e}")))?
            .row()
            .to_vec();
        Ok(Half { split_row, top })
    }
}

/// Hadoop's `WritableUtils.readVInt` for the non-negative lengths of the legacy form:
/// `(value, bytes used)`; `None` for a negative value or one past an `int`, which Hadoop
/// refuses too ("value too long to fit in integer").
fn read_hadoop_vint(b: &[u8]) -> Option<(usize, usize)> {
    let first = *b.first()? as i8;
    if first >= -112 {
        return usize::try_from(first).ok().map(|v| (v, 1));
    }
    let negative = first < -120;
    let len = if negative {
        -119 - first as i32
    } else {
        -111 - first as i32
    } as usize;
    let mut v: u64 = 0;
    for &byte in b.get(1..len)? {
        v = (v << 8) | byte as u64;
    }
    if negative || v > i32::MAX as u64 {
        return None;
    }
    Some((usize::try_from(v).ok()?, len))
}

/// A reference file's name split into what it refers to: `(hfile, parent encoded name)` for
/// `<hfile>.<parent>` (StoreFileInfo's `REF_NAME_PATTERN`: a hex hfile name, optionally with
/// a bulk load's `_SeqId_<n>_`, a dot, and the parent's encoded name), `None` for any other
/// name.
pub fn parse_reference_name(name: &str) -> Option<(&str, &str)> {
    let (hfile, parent) = name.split_once('.')?;
    if parent.is_empty() || parent.contains('.') || !is_hfile_name(hfile) {
        return None;
    }
    Some((hfile, parent))
}

/// StoreFileInfo's `HFILE_NAME_REGEX`: hex digits, optionally `_SeqId_<digits>_` or `_del`.
pub fn is_hfile_name(name: &str) -> bool {
    let hex_end = name
        .find(|c: char| !c.is_ascii_hexdigit() || c.is_ascii_uppercase())
        .unwrap_or(name.len());
    if hex_end == 0 {
        return false;
    }
    let rest = &name[hex_end..];
    rest.is_empty()
        || rest == "_del"
        || rest
            .strip_prefix("_SeqId_")
            .and_then(|r| r.strip_suffix('_'))
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// The name of a reference to `hfile` of region `parent`.
pub fn reference_name(hfile: &str, parent: &str) -> String {
    format!("{hfile}.{parent}")
}

/// The file a reference at `path` (`<table>/<child>/<family>/<hfile>.<parent>`) refers to:
/// `<table>/<parent>/<family>/<hfile>`. `None` when the path is not a reference's.
pub fn referred_path(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let (hfile, parent) = parse_reference_name(name)?;
    let family_dir = path.parent()?;
    let family = family_dir.file_name()?;
    let table_dir = family_dir.parent()?.parent()?;
    Some(table_dir.join(parent).join(family).join(hfile))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn references_encode_as_hbase_writes_them() {
        let half = Half {
            split_row: b"row5".to_vec(),
            top: false,
        };
        let bytes = half.encode().unwrap();
        // PBUF, field 1 (bytes): the first-on-row key of "row5": row length 4, the row, an
        // empty family, LATEST_TIMESTAMP and type Maximum (255); field 2 (varint) BOTTOM = 1.
        let mut key = vec![0, 4];
        key.extend_from_slice(b"row5");
        key.push(0);
        key.extend_from_slice(&i64::MAX.to_be_bytes());
        key.push(255);
        let mut want = b"PBUF".to_vec();
        want.push(0x0a);
        want.push(key.len() as u8);
        want.extend_from_slice(&key);
        want.extend_from_slice(&[0x10, 0x01]);
        assert_eq!(bytes, want);
        let back = Half::decode(&bytes, Path::new("r")).unwrap();
        assert_eq!(back, half);
        let top = Half {
            top: true,
            ..half.clone()
        };
        let enc = top.encode().unwrap();
        assert_eq!(&enc[enc.len() - 2..], &[0x10, 0x00]);
        assert_eq!(Half::decode(&enc, Path::new("r")).unwrap(), top);
    }

    #[test]
    fn the_legacy_writable_form_is_read_too() {
        let key = cairn_cell::first_on_row(b"m").unwrap();
        let mut bytes = vec![1u8, key.len() as u8];
        bytes.extend_from_slice(&key);
        let h = Half::decode(&bytes, Path::new("r")).unwrap();
        assert_eq!(
            h,
            Half {
                split_row: b"m".to_vec(),
                top: true
            }
        );
    }

    #[test]
    fn damaged_references_are_errors_naming_the_file() {
        for bad in [
            &b""[..],
            b"PBUF\xff",
            b"PBUF\x0a\x01\x00\x10\x05",
            b"\x01\x7f",
        ] {
            let e = Half::decode(bad, Path::new("/t/d/f/abc.def")).unwrap_err();
            assert!(e.to_string().contains("/t/d/f/abc.def"), "{e}");
        }
        // Lengths past an int are refused as Hadoop refuses them, before any slicing.
        for bad in [
            // Fuzz-found (region_files): a 9-byte length near 2^64, which overflowed the
            // key's end offset instead of being refused.
            &b"\x88\x88\xff\xff\xff\xff\xff\xff\xff\xff\xff"[..],
            // A length one past an int's range.
            b"\x01\x8c\x80\x00\x00\x00",
        ] {
            let e = Half::decode(bad, Path::new("/t/d/f/abc.def")).unwrap_err();
            assert!(e.to_string().contains("/t/d/f/abc.def"), "{e}");
            assert!(e.to_string().contains("length does not parse"), "{e}");
        }
    }

    #[test]
    fn halves_meet_at_the_split_row() {
        let bottom = Half {
            split_row: b"m".to_vec(),
            top: false,
        };
        let top = Half {
            top: true,
            ..bottom.clone()
        };
        for (row, in_top) in [
            (&b""[..], false),
            (b"l", false),
            (b"lz", false),
            (b"m", true),
            (b"m\0", true),
            (b"z", true),
        ] {
            assert_eq!(top.contains_row(row), in_top, "{row:?}");
            assert_eq!(bottom.contains_row(row), !in_top, "{row:?}");
        }
    }

    #[test]
    fn reference_names_follow_store_file_infos_pattern() {
        let parent = "0123456789abcdef0123456789abcdef";
        let name = reference_name("4fa1", parent);
        assert_eq!(parse_reference_name(&name), Some(("4fa1", parent)));
        assert_eq!(
            parse_reference_name("9f_SeqId_12_.aa"),
            Some(("9f_SeqId_12_", "aa"))
        );
        for not in [
            "4fa1",
            ".regioninfo",
            "4fa1.",
            "xyz.aa",
            "4FA1.aa",
            "4f_SeqId__.aa",
            "4f.a.b",
        ] {
            assert_eq!(parse_reference_name(not), None, "{not}");
        }
        let p = Path::new("/root/data/default/t/child/f").join(&name);
        assert_eq!(
            referred_path(&p).unwrap(),
            Path::new("/root/data/default/t")
                .join(parent)
                .join("f/4fa1")
        );
    }

    proptest! {
        #[test]
        fn any_half_round_trips(row in proptest::collection::vec(any::<u8>(), 0..40), top: bool) {
            let h = Half { split_row: row, top };
            prop_assert_eq!(Half::decode(&h.encode().unwrap(), Path::new("r")).unwrap(), h);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Half::decode(&bytes, Path::new("r"));
            let mut pb = b"PBUF".to_vec();
            pb.extend_from_slice(&bytes);
            let _ = Half::decode(&pb, Path::new("r"));
        }
    }
}
