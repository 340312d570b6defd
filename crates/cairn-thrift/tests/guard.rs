//! The guarded input protocol: it decodes what Apache Thrift's own protocols encode (property
//! test over HBase's structs, both protocols), and hostile lengths and counts are errors, not
//! panics or huge allocations.

use std::io::Cursor;

use cairn_thrift::guard::{Flavor, Guarded};
use cairn_thrift::hbase::{BatchMutation, ColumnDescriptor, Mutation, TScan};
use proptest::prelude::*;
use thrift::protocol::{
    TBinaryOutputProtocol, TCompactOutputProtocol, TInputProtocol, TMessageIdentifier,
    TMessageType, TOutputProtocol, TSerializable, TType,
};

fn encode<T: TSerializable>(flavor: Flavor, name: &str, seq: i32, value: &T) -> Vec<u8> {
    let mut buf = Vec::new();
    {
        let mut p: Box<dyn TOutputProtocol> = match flavor {
            Flavor::Binary => Box::new(TBinaryOutputProtocol::new(&mut buf, true)),
            Flavor::Compact => Box::new(TCompactOutputProtocol::new(&mut buf)),
        };
        p.write_message_begin(&TMessageIdentifier::new(name, TMessageType::Call, seq))
            .unwrap();
        value.write_to_out_protocol(&mut *p).unwrap();
        p.write_message_end().unwrap();
        p.flush().unwrap();
    }
    buf
}

fn decode<T: TSerializable>(
    flavor: Flavor,
    bytes: Vec<u8>,
    limit: usize,
) -> thrift::Result<(TMessageIdentifier, T)> {
    let mut g = Guarded::new(Cursor::new(bytes), flavor, limit);
    g.begin_request();
    let m = g.read_message_begin()?;
    let v = T::read_from_in_protocol(&mut g)?;
    assert!(g.request_complete());
    Ok((m, v))
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..40)
}

/// Mutation's fields all have IDL defaults (absent reads as the default), so they are always set.
fn mutation() -> impl Strategy<Value = Mutation> {
    (any::<bool>(), bytes(), bytes(), any::<bool>()).prop_map(|(d, c, v, w)| Mutation {
        is_delete: Some(d),
        column: Some(c),
        value: Some(v),
        write_to_w_a_l: Some(w),
    })
}

fn batch() -> impl Strategy<Value = BatchMutation> {
    (bytes(), prop::collection::vec(mutation(), 0..20)).prop_map(|(row, mutations)| BatchMutation {
        row: Some(row),
        mutations: Some(mutations),
    })
}

fn scan() -> impl Strategy<Value = TScan> {
    (
        (
            prop::option::of(bytes()),
            prop::option::of(bytes()),
            prop::option::of(any::<i64>()),
            prop::option::of(prop::collection::vec(bytes(), 0..20)),
            prop::option::of(any::<i32>()),
        ),
        (
            prop::option::of(bytes()),
            prop::option::of(any::<i32>()),
            prop::option::of(any::<bool>()),
            prop::option::of(any::<bool>()),
            prop::option::of(any::<bool>()),
        ),
    )
        .prop_map(|((a, b, c, d, e), (f, g, h, i, j))| TScan {
            start_row: a,
            stop_row: b,
            timestamp: c,
            columns: d,
            caching: e,
            filter_string: f,
            batch_size: g,
            sort_columns: h,
            reversed: i,
            cache_blocks: j,
        })
}

fn flavor() -> impl Strategy<Value = Flavor> {
    prop_oneof![Just(Flavor::Binary), Just(Flavor::Compact)]
}

proptest! {
    #[test]
    fn decodes_what_thrift_encodes(f in flavor(), s in scan(), b in batch(), seq in any::<i32>()) {
        let (m, back) = decode::<TScan>(f, encode(f, "scannerOpenWithScan", seq, &s), 1 << 20).unwrap();
        prop_assert_eq!(m.name, "scannerOpenWithScan");
        prop_assert_eq!(m.sequence_number, seq);
        prop_assert_eq!(back, s);
        let (_, back) = decode::<BatchMutation>(f, encode(f, "mutateRows", seq, &b), 1 << 20).unwrap();
        prop_assert_eq!(back, b);
    }

    /// Any damage (a truncation, a changed byte, a smaller budget) is an error or a (different)
    /// value, never a panic; a budget below the message's size is always an error.
    #[test]
    fn damaged_bytes_never_panic(f in flavor(), b in batch(), cut in any::<prop::sample::Index>(),
                                 at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let good = encode(f, "mutateRows", 1, &b);
        let mut bad = good.clone();
        let i = at.index(bad.len());
        bad[i] = byte;
        let _ = decode::<BatchMutation>(f, bad, 1 << 20);
        let n = cut.index(good.len());
        prop_assert!(decode::<BatchMutation>(f, good[..n].to_vec(), 1 << 20).is_err());
        prop_assert!(decode::<BatchMutation>(f, good.clone(), n).is_err());
    }

    /// Arbitrary bytes read as a request and skipped as a struct: errors only.
    #[test]
    fn arbitrary_bytes_never_panic(f in flavor(), data in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut g = Guarded::new(Cursor::new(data), f, 1 << 16);
        g.begin_request();
        if g.read_message_begin().is_ok() {
            let _ = g.skip(TType::Struct);
        }
    }
}

fn size_error(r: thrift::Result<impl std::fmt::Debug>) -> String {
    match r {
        Err(thrift::Error::Protocol(p)) => {
            assert!(
                matches!(
                    p.kind,
                    thrift::ProtocolErrorKind::SizeLimit | thrift::ProtocolErrorKind::NegativeSize
                ),
                "{p:?}"
            );
            p.message
        }
        other => panic!("expected a size error, got {other:?}"),
    }
}

#[test]
fn hostile_lengths_are_refused_before_allocating() {
    let header = |name: &[u8]| {
        let mut v = 0x8001_0001u32.to_be_bytes().to_vec();
        v.extend((name.len() as i32).to_be_bytes());
        v.extend(name);
        v.extend(1i32.to_be_bytes());
        v
    };
    // binary: message name of -1 and of 2 GiB
    for len in [-1i32, 0x7fff_fff0] {
        let mut v = 0x8001_0001u32.to_be_bytes().to_vec();
        v.extend(len.to_be_bytes());
        let msg = size_error(decode::<TScan>(Flavor::Binary, v, 1 << 20));
        assert!(msg.contains("message name length"), "{msg}");
    }
    // binary: a TScan whose startRow claims 2 GiB
    let mut v = header(b"scannerOpenWithScan");
    v.extend([11, 0, 1]);
    v.extend(0x7fff_fff0i32.to_be_bytes());
    let msg = size_error(decode::<TScan>(Flavor::Binary, v, 1 << 20));
    assert!(msg.contains("binary length of 2147483632"), "{msg}");
    // binary: columns list of -5 and of i32::MAX elements
    for n in [-5i32, i32::MAX] {
        let mut v = header(b"scannerOpenWithScan");
        v.extend([15, 0, 4, 11]);
        v.extend(n.to_be_bytes());
        let msg = size_error(decode::<TScan>(Flavor::Binary, v, 1 << 20));
        assert!(msg.contains("list size"), "{msg}");
    }
    // compact: message name of 4 GiB (varint 0xffffffff)
    let v = vec![0x82, 0x21, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f];
    let msg = size_error(decode::<TScan>(Flavor::Compact, v, 1 << 20));
    assert!(msg.contains("message name length"), "{msg}");
    // the whole request is bounded too: a valid message over the budget
    let big = TScan {
        start_row: Some(vec![7; 5000]),
        ..TScan::default()
    };
    for f in [Flavor::Binary, Flavor::Compact] {
        let bytes = encode(f, "scannerOpenWithScan", 1, &big);
        assert!(decode::<TScan>(f, bytes.clone(), 4096).is_err());
        assert_eq!(decode::<TScan>(f, bytes, 8192).unwrap().1, big);
    }
}

/// Containers are not reserved from their declared count: a list header claiming 2^31 - 1
/// structs, with a request budget large enough to let the count through, must fail at the
/// end of the bytes rather than ask for 2^31 structs' memory up front (which aborts the
/// process: ~120 GB for `Mutation`s). A compact header claiming 2^31 reads as negative.
#[test]
fn a_list_header_claiming_two_billion_structs_reserves_nothing() {
    let budget = 1usize << 40;
    // binary: BatchMutation { row: "r", mutations: list<struct> of i32::MAX }, then nothing.
    let mut v = 0x8001_0001u32.to_be_bytes().to_vec();
    v.extend(10i32.to_be_bytes());
    v.extend(b"mutateRows");
    v.extend(1i32.to_be_bytes());
    v.extend([11, 0, 1]);
    v.extend(1i32.to_be_bytes());
    v.push(b'r');
    v.extend([15, 0, 2, 12]);
    v.extend(i32::MAX.to_be_bytes());
    let e = decode::<BatchMutation>(Flavor::Binary, v.clone(), budget).unwrap_err();
    assert!(
        matches!(&e, thrift::Error::Transport(t) if t.kind == thrift::TransportErrorKind::EndOfFile),
        "the bytes ran out: {e:?}"
    );
    // A few real elements, then the end: still an error, after reading what came.
    let one = Mutation {
        is_delete: Some(false),
        column: Some(b"f:q".to_vec()),
        value: Some(b"v".to_vec()),
        write_to_w_a_l: Some(true),
    };
    let mut with_some = v;
    for _ in 0..3 {
        let mut b = Vec::new();
        {
            let mut p = TBinaryOutputProtocol::new(&mut b, true);
            one.write_to_out_protocol(&mut p).unwrap();
            p.flush().unwrap();
        }
        with_some.extend(b);
    }
    assert!(decode::<BatchMutation>(Flavor::Binary, with_some, budget).is_err());
    // compact: the same list with a size varint of 2^31 (and of 2^31 - 1).
    for size in [1u64 << 31, (1u64 << 31) - 1] {
        let mut v = vec![0x82, 0x21, 0x01, 10];
        v.extend(b"mutateRows");
        v.extend([0x18, 1, b'r']); // field 1, binary, length 1
        v.extend([0x19, 0xfc]); // field 2 (delta 1), list; size 15 (read from the varint), structs
        let mut n = size;
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                v.push(b);
                break;
            }
            v.push(b | 0x80);
        }
        assert!(decode::<BatchMutation>(Flavor::Compact, v, budget).is_err());
    }
}

#[test]
fn deep_nesting_is_refused() {
    let mut v = 0x8001_0001u32.to_be_bytes().to_vec();
    v.extend(6i32.to_be_bytes());
    v.extend(b"getRow");
    v.extend(1i32.to_be_bytes());
    for _ in 0..100 {
        v.extend([12, 0, 9]); // field 9: a struct, nesting again
    }
    let mut g = Guarded::new(Cursor::new(v), Flavor::Binary, 1 << 20);
    g.begin_request();
    g.read_message_begin().unwrap();
    assert!(g.skip(TType::Struct).is_err());
}

#[test]
fn absent_fields_take_hbase_idl_defaults() {
    // A Mutation with only its column: isDelete false, writeToWAL true (HBase's IDL defaults).
    let m = Mutation {
        is_delete: None,
        column: Some(b"f:q".to_vec()),
        value: None,
        write_to_w_a_l: None,
    };
    for f in [Flavor::Binary, Flavor::Compact] {
        let (_, back) = decode::<Mutation>(f, encode(f, "x", 1, &m), 1 << 10).unwrap();
        assert_eq!(back.is_delete, Some(false));
        assert_eq!(back.write_to_w_a_l, Some(true));
        assert_eq!(back.column.as_deref(), Some(&b"f:q"[..]));
    }
    assert_eq!(Mutation::default().write_to_w_a_l, Some(true));
    // A ColumnDescriptor with only its name: maxVersions 3, NONE, NONE, TTL forever.
    let c = ColumnDescriptor {
        name: Some(b"f:".to_vec()),
        max_versions: None,
        compression: None,
        in_memory: None,
        bloom_filter_type: None,
        bloom_filter_vector_size: None,
        bloom_filter_nb_hashes: None,
        block_cache_enabled: None,
        time_to_live: None,
    };
    let (_, back) = decode::<ColumnDescriptor>(
        Flavor::Compact,
        encode(Flavor::Compact, "x", 1, &c),
        1 << 10,
    )
    .unwrap();
    assert_eq!(back.max_versions, Some(3));
    assert_eq!(back.compression.as_deref(), Some("NONE"));
    assert_eq!(back.bloom_filter_type.as_deref(), Some("NONE"));
    assert_eq!(back.time_to_live, Some(i32::MAX));
    assert_eq!(
        back,
        ColumnDescriptor {
            name: Some(b"f:".to_vec()),
            ..ColumnDescriptor::default()
        }
    );
}

/// Found by the `thrift_request` fuzz target: a field id near `i16::MAX` followed by a
/// delta-encoded field made the compact protocol's id addition overflow (a panic with overflow
/// checks on). It must be an error.
#[test]
fn field_ids_near_i16_max_are_refused_not_overflowed() {
    let mut buf = Vec::new();
    {
        let mut p = TCompactOutputProtocol::new(&mut buf);
        p.write_message_begin(&TMessageIdentifier::new("getRow", TMessageType::Call, 1))
            .unwrap();
        p.write_struct_begin(&thrift::protocol::TStructIdentifier::new("args"))
            .unwrap();
        p.write_field_begin(&thrift::protocol::TFieldIdentifier::new(
            "f",
            TType::I32,
            i16::MAX,
        ))
        .unwrap();
        p.write_i32(1).unwrap();
        p.flush().unwrap();
    }
    // A field header with delta 1 and type i32, then its value (zigzag 1) and a stop.
    buf.extend([0x15, 0x02, 0x00, 0x00]);
    let mut g = Guarded::new(Cursor::new(buf), Flavor::Compact, 1 << 20);
    g.begin_request();
    g.read_message_begin().unwrap();
    let err = format!("{:?}", g.skip(TType::Struct).unwrap_err());
    assert!(err.contains("field id 32767"), "{err}");
}
