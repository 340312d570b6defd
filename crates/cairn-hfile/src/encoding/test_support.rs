//! Cells, plain blocks, tags and varints as the encodings' tests build them, from the format's
//! facts, and the properties every encoding's encoder and decoder must have
//! ([`encoding_properties`]).

use super::tags::TagDictionary;
use crate::cell::CellLayout;
use crate::vint::write_vlong;
use proptest::prelude::*;

/// A cell as the tests build it: row, qualifier, timestamp, type, value, tags, sequence id
/// (family "cf" for all, as in a store file).
pub(super) type TestCell = (Vec<u8>, Vec<u8>, i64, u8, Vec<u8>, Vec<u8>, i64);

pub(super) fn flat_key(c: &TestCell) -> Vec<u8> {
    let mut k = (c.0.len() as u16).to_be_bytes().to_vec();
    k.extend_from_slice(&c.0);
    k.push(2);
    k.extend_from_slice(b"cf");
    k.extend_from_slice(&c.1);
    k.extend_from_slice(&c.2.to_be_bytes());
    k.push(c.3);
    k
}

pub(super) fn plain(cells: &[TestCell], layout: CellLayout) -> Vec<u8> {
    let mut out = Vec::new();
    for c in cells {
        let k = flat_key(c);
        out.extend_from_slice(&(k.len() as u32).to_be_bytes());
        out.extend_from_slice(&(c.4.len() as u32).to_be_bytes());
        out.extend_from_slice(&k);
        out.extend_from_slice(&c.4);
        if layout.tags {
            out.extend_from_slice(&(c.5.len() as u16).to_be_bytes());
            out.extend_from_slice(&c.5);
        }
        if layout.mvcc {
            write_vlong(&mut out, c.6);
        }
    }
    out
}

pub(super) fn put_int(out: &mut Vec<u8>, mut v: usize) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// HBase's tag compression as its encoder writes it: each tag is looked up in the block's
/// dictionary (a hit becomes the most recent entry and is written as its index, a miss
/// joins the dictionary and is written whole).
pub(super) fn compress_tags(tags: &[u8], dictionary: &mut TagDictionary, out: &mut Vec<u8>) {
    let mut pos = 0;
    while pos < tags.len() {
        let len = usize::from(u16::from_be_bytes([tags[pos], tags[pos + 1]]));
        let tag = &tags[pos + 2..pos + 2 + len];
        pos += 2 + len;
        let entries = dictionary.entries();
        let hit = (0..entries.len()).find(|&i| entries[i] == tag);
        match hit {
            Some(i) if !tag.is_empty() => {
                dictionary.get(i);
                out.extend_from_slice(&(i as u16).to_be_bytes());
            }
            _ => {
                out.push(0xff);
                put_int(out, len);
                out.extend_from_slice(tag);
                dictionary.add(tag);
            }
        }
    }
}

pub(super) fn cell_strategy() -> impl Strategy<Value = TestCell> {
    (
        prop::collection::vec(prop::sample::select(vec![b'a', b'b']), 0..6),
        prop::collection::vec(prop::sample::select(vec![b'x', b'y']), 0..4),
        prop::sample::select(vec![
            0i64,
            1,
            255,
            256,
            1_700_000_000_000,
            i64::MAX,
            -1,
            -256,
            i64::MIN,
        ]),
        prop::sample::select(vec![4u8, 8, 12, 14]),
        prop::collection::vec(prop::sample::select(vec![0u8, 1]), 0..5),
        prop::collection::vec(any::<u8>(), 0..3),
        0i64..1000,
    )
}

/// Well-formed tags (`length u16 | type | value` each), drawn from 200 different ones so a
/// block's dictionary of 127 both hits and evicts.
pub(super) fn tags_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(0u8..200, 0..4).prop_map(|ids| {
        let mut tags = Vec::new();
        for id in ids {
            tags.extend_from_slice(&2u16.to_be_bytes());
            tags.extend_from_slice(&[1, id]);
        }
        tags
    })
}

/// The prefix two cells' flat keys share as HBase's `findCommonPrefixInFlatKey` counts it
/// (the family taken as shared): row length, row, then (same row) family and qualifier,
/// then (same qualifier, `with_ts_type`) timestamp bytes and type.
pub(super) fn reference_common_prefix(c: &TestCell, p: &TestCell, with_ts_type: bool) -> usize {
    let lcp = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (l1, l2) = (
        (c.0.len() as u16).to_be_bytes(),
        (p.0.len() as u16).to_be_bytes(),
    );
    if l1 != l2 {
        return lcp(&l1, &l2);
    }
    let row = lcp(&c.0, &p.0);
    if row != c.0.len() {
        return 2 + row;
    }
    let q = lcp(&c.1, &p.1);
    let mut common = 2 + row + 1 + 2 + q;
    if !with_ts_type || c.1.len().max(p.1.len()) != q {
        return common;
    }
    let t = lcp(&c.2.to_be_bytes(), &p.2.to_be_bytes());
    common += t;
    if t == 8 && c.3 == p.3 {
        common += 1;
    }
    common
}

/// What a `BufferedDataBlockEncoder` writes after a cell's value: tags length (7-bit
/// varint) and tags, dictionary-compressed or not; the sequence id as a vlong.
pub(super) fn put_tail(
    c: &TestCell,
    layout: CellLayout,
    compressed_tags: bool,
    dictionary: &mut TagDictionary,
    out: &mut Vec<u8>,
) {
    if layout.tags {
        put_int(out, c.5.len());
        if compressed_tags {
            compress_tags(&c.5, dictionary, out);
        } else {
            out.extend_from_slice(&c.5);
        }
    }
    if layout.mvcc {
        write_vlong(out, c.6);
    }
}

/// Cells with well-formed tags, for dictionary compression.
pub(super) fn tagged_cells() -> impl Strategy<Value = Vec<TestCell>> {
    prop::collection::vec((cell_strategy(), tags_strategy()), 1..150).prop_map(|v| {
        v.into_iter()
            .map(|(mut c, tags)| {
                c.5 = tags;
                c
            })
            .collect()
    })
}

/// The properties every encoding's encoder and decoder must have, as proptests, given the
/// reference encoder written from the format (`reference(cells, layout, compressed_tags)`),
/// cairn's encoder (`encode(plain, layout, compressed_tags)`, the body after the encoding
/// id) and the decoder (`decode(body, layout, compressed_tags)`).
macro_rules! encoding_properties {
    (reference: $reference:expr, encode: $encode:expr, decode: $decode:expr $(,)?) => {
        fn reference_body(cells: &[TestCell], layout: CellLayout, compressed: bool) -> Vec<u8> {
            ($reference)(cells, layout, compressed)
        }

        fn cairn_body(
            plain: &[u8],
            layout: CellLayout,
            compressed: bool,
        ) -> Result<Vec<u8>, String> {
            ($encode)(plain, layout, compressed)
        }

        fn decoded(
            body: &[u8],
            layout: CellLayout,
            compressed: bool,
        ) -> Result<Vec<u8>, DecodeError> {
            ($decode)(body, layout, compressed)
        }

        proptest! {
            #[test]
            fn decodes_what_the_reference_wrote(
                cells in prop::collection::vec(cell_strategy(), 1..40),
                tags in any::<bool>(),
                mvcc in any::<bool>(),
            ) {
                let layout = CellLayout { tags, mvcc };
                let body = reference_body(&cells, layout, false);
                let cells = plain(&cells, layout);
                prop_assert_eq!(decoded(&body, layout, false).unwrap(), cells);
            }

            #[test]
            fn cairn_encodes_as_the_reference(
                cells in prop::collection::vec(cell_strategy(), 1..40),
                tags in any::<bool>(),
                mvcc in any::<bool>(),
            ) {
                let layout = CellLayout { tags, mvcc };
                let body = cairn_body(&plain(&cells, layout), layout, false).unwrap();
                prop_assert_eq!(&body, &reference_body(&cells, layout, false));
            }

            #[test]
            fn compressed_tags_as_the_reference_and_back(cells in tagged_cells()) {
                let layout = CellLayout { tags: true, mvcc: true };
                let body = cairn_body(&plain(&cells, layout), layout, true).unwrap();
                prop_assert_eq!(&body, &reference_body(&cells, layout, true));
                prop_assert_eq!(decoded(&body, layout, true).unwrap(), plain(&cells, layout));
            }

            #[test]
            fn damaged_blocks_are_errors_not_panics(
                cells in prop::collection::vec(cell_strategy(), 1..20),
                damage in prop::collection::vec(
                    (any::<prop::sample::Index>(), any::<u8>()),
                    1..4,
                ),
                cut in any::<prop::sample::Index>(),
            ) {
                let layout = CellLayout { tags: true, mvcc: true };
                let mut body = reference_body(&cells, layout, false);
                for (i, x) in &damage {
                    let i = i.index(body.len());
                    body[i] ^= x;
                }
                let _ = decoded(&body, layout, false);
                let _ = decoded(&body[..cut.index(body.len() + 1)], layout, true);
            }

            #[test]
            fn damaged_plain_cells_are_encoding_errors_not_panics(
                cells in prop::collection::vec(cell_strategy(), 1..20),
                damage in prop::collection::vec(
                    (any::<prop::sample::Index>(), any::<u8>()),
                    1..4,
                ),
                cut in any::<prop::sample::Index>(),
            ) {
                let layout = CellLayout { tags: true, mvcc: true };
                let mut plain = plain(&cells, layout);
                for (i, x) in &damage {
                    let i = i.index(plain.len());
                    plain[i] ^= x;
                }
                let cut = cut.index(plain.len() + 1);
                if let Ok(body) = cairn_body(&plain[..cut], layout, true) {
                    let _ = decoded(&body, layout, true);
                }
            }

            #[test]
            fn arbitrary_bytes_are_errors_not_panics(
                body in prop::collection::vec(any::<u8>(), 0..300),
            ) {
                for tags in [false, true] {
                    let _ = decoded(&body, CellLayout { tags, mvcc: true }, tags);
                }
            }
        }
    };
}
pub(super) use encoding_properties;
