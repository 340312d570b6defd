//! Model-based test: random puts, the four kinds of delete, gets and scans (forward and
//! reversed, with versions, each bound inclusive, exclusive or open), interleaved with flushes, minor and major compactions, clean
//! restarts and crashes (WAL replay), checked against a plain in-memory reference of HBase's
//! semantics.
//!
//! Every put gets a fresh timestamp, so the reference never meets HBase's documented
//! exceptions (a delete marker masking a later put at the same timestamp until a major
//! compaction; versions above VERSIONS resurfacing after a delete before a compaction).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use cairn_hfile::encoding::DataBlockEncoding;
use cairn_hfile::BloomType;
use cairn_region::{
    ColumnFamilyDescriptor, Delete, Get, Put, RegionServer, Scan, ServerConfig, TableDescriptor,
    TableName,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Put {
        row: u8,
        q: u8,
    },
    /// A put whose timestamp is already past the family's TTL: never visible.
    PutExpired {
        row: u8,
        q: u8,
    },
    DeleteVersion {
        row: u8,
        q: u8,
        pick: u8,
    },
    DeleteColumn {
        row: u8,
        q: u8,
    },
    DeleteFamily {
        row: u8,
    },
    DeleteFamilyVersion {
        row: u8,
        pick: u8,
    },
    DeleteRow {
        row: u8,
    },
    /// A get of the whole row, or of one column.
    Get {
        row: u8,
        versions: u32,
        column: Option<u8>,
    },
    /// A scan from `start` to `stop` (6: no bound), each inclusive or exclusive.
    Scan {
        start: u8,
        stop: u8,
        start_inclusive: bool,
        stop_inclusive: bool,
        reversed: bool,
        versions: u32,
    },
    /// Gets of whole rows and of single columns, with their own versions, in one batch.
    MultiGet {
        rows: Vec<(u8, Option<u8>, u32)>,
    },
    /// A client-side batch (`put_many`): one WAL record per region it touches.
    PutMany {
        cells: Vec<(u8, u8)>,
    },
    Flush,
    Compact {
        major: bool,
    },
    Restart {
        crash: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let row = 0u8..6;
    let q = 0u8..3;
    prop_oneof![
        8 => (row.clone(), q.clone()).prop_map(|(row, q)| Op::Put { row, q }),
        1 => (row.clone(), q.clone()).prop_map(|(row, q)| Op::PutExpired { row, q }),
        2 => (row.clone(), q.clone(), any::<u8>()).prop_map(|(row, q, pick)| Op::DeleteVersion { row, q, pick }),
        1 => (row.clone(), q.clone()).prop_map(|(row, q)| Op::DeleteColumn { row, q }),
        1 => row.clone().prop_map(|row| Op::DeleteFamily { row }),
        1 => (row.clone(), any::<u8>()).prop_map(|(row, pick)| Op::DeleteFamilyVersion { row, pick }),
        1 => row.clone().prop_map(|row| Op::DeleteRow { row }),
        3 => (row.clone(), 1u32..4, proptest::option::of(q.clone())).prop_map(|(row, versions, column)| Op::Get { row, versions, column }),
        2 => (0u8..7, 0u8..7, any::<bool>(), 1u32..3).prop_map(|(start, stop, reversed, versions)| Op::Scan { start, stop, start_inclusive: true, stop_inclusive: false, reversed, versions }),
        1 => (0u8..7, 0u8..7, any::<(bool, bool)>(), any::<bool>(), 1u32..3).prop_map(|(start, stop, (start_inclusive, stop_inclusive), reversed, versions)| Op::Scan { start, stop, start_inclusive, stop_inclusive, reversed, versions }),
        2 => proptest::collection::vec((0u8..7, proptest::option::of(q.clone()), 1u32..3), 1..8).prop_map(|rows| Op::MultiGet { rows }),
        2 => proptest::collection::vec((row.clone(), q.clone()), 1..6).prop_map(|cells| Op::PutMany { cells }),
        1 => Just(Op::Flush),
        1 => any::<bool>().prop_map(|major| Op::Compact { major }),
        1 => any::<bool>().prop_map(|crash| Op::Restart { crash }),
    ]
}

#[derive(Default)]
struct Model {
    /// (row, q) -> versions as (ts, value)
    puts: BTreeMap<(u8, u8), Vec<(i64, String)>>,
    /// (row, q or None for family markers, ts, exact?)
    markers: Vec<(u8, Option<u8>, i64, bool)>,
}

impl Model {
    fn masked(&self, row: u8, q: u8, ts: i64) -> bool {
        self.markers.iter().any(|&(r, mq, m, exact)| {
            r == row && mq.is_none_or(|x| x == q) && if exact { m == ts } else { ts <= m }
        })
    }

    fn row(&self, row: u8, versions: u32) -> Vec<(u8, i64, String)> {
        let mut out = Vec::new();
        for q in 0..3u8 {
            let Some(v) = self.puts.get(&(row, q)) else {
                continue;
            };
            let mut v: Vec<_> = v
                .iter()
                .filter(|(ts, _)| !self.masked(row, q, *ts))
                .cloned()
                .collect();
            v.sort_by_key(|p| std::cmp::Reverse(p.0));
            out.extend(
                v.into_iter()
                    .take(versions as usize)
                    .map(|(ts, val)| (q, ts, val)),
            );
        }
        out
    }

    /// The row's cells, or those of one column.
    fn column(&self, row: u8, column: Option<u8>, versions: u32) -> Vec<(u8, i64, String)> {
        let mut out = self.row(row, versions);
        out.retain(|c| column.is_none_or(|q| c.0 == q));
        out
    }
}

/// A get of `row`, whole or of one column.
fn get(row: u8, column: Option<u8>) -> Get {
    match column {
        Some(q) => Get::new(row_key(row)).column("f", format!("q{q}")),
        None => Get::new(row_key(row)),
    }
}

/// A row and its cells as (qualifier index, timestamp, value).
type RowCells = (String, Vec<(u8, i64, String)>);

const TTL_SECONDS: u32 = 86_400;

fn row_key(r: u8) -> String {
    format!("row{r}")
}

fn cells(r: &[cairn_cell::KeyValue]) -> Vec<(u8, i64, String)> {
    r.iter()
        .map(|c| {
            let c = c.as_cell();
            let q = c.qualifier()[1] - b'0';
            (
                q,
                c.timestamp(),
                String::from_utf8_lossy(c.value).into_owned(),
            )
        })
        .collect()
}

fn open(dir: &std::path::Path) -> Arc<RegionServer> {
    let mut c = ServerConfig::new(dir);
    c.background = false;
    RegionServer::open(c).unwrap()
}

/// `encoding`: the family's data block encoding, which flushes and compactions write;
/// `bloom`: its Bloom filter, which gets of absent rows and columns may consult.
fn run(
    ops: Vec<Op>,
    splits: bool,
    encoding: DataBlockEncoding,
    bloom: BloomType,
) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let t = TableName::parse("model").unwrap();
    let mut s = open(dir.path());
    let split_keys: Vec<Vec<u8>> = if splits {
        vec![b"row2".to_vec(), b"row4".to_vec()]
    } else {
        vec![]
    };
    let mut family = ColumnFamilyDescriptor::new("f")
        .max_versions(100)
        .ttl_seconds(TTL_SECONDS);
    family.data_block_encoding = encoding;
    family.bloom_type = bloom;
    s.create_table(
        TableDescriptor::new(t.clone()).with_family(family),
        &split_keys,
    )
    .unwrap();
    let mut m = Model::default();
    // Timestamps near the wall clock, so the family's TTL (a day) expires only the puts made
    // expired on purpose.
    let mut clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    for (step, op) in ops.into_iter().enumerate() {
        clock += 1;
        let ctx = format!("step {step}: {op:?}");
        match op {
            Op::Put { row, q } => {
                let v = format!("v{clock}");
                s.put(
                    &t,
                    &Put::new(row_key(row)).add_at("f", format!("q{q}"), clock, &v),
                )
                .unwrap();
                m.puts.entry((row, q)).or_default().push((clock, v));
            }
            Op::PutMany { cells } => {
                let mut puts = Vec::new();
                for (row, q) in cells {
                    clock += 1;
                    let v = format!("v{clock}");
                    puts.push(Put::new(row_key(row)).add_at("f", format!("q{q}"), clock, &v));
                    m.puts.entry((row, q)).or_default().push((clock, v));
                }
                s.put_many(&t, &puts).unwrap();
            }
            Op::PutExpired { row, q } => {
                let ts = clock - 2 * TTL_SECONDS as i64 * 1000;
                s.put(
                    &t,
                    &Put::new(row_key(row)).add_at("f", format!("q{q}"), ts, "expired"),
                )
                .unwrap();
            }
            Op::DeleteVersion { row, q, pick } => {
                let Some(v) = m.puts.get(&(row, q)).filter(|v| !v.is_empty()) else {
                    continue;
                };
                let ts = v[pick as usize % v.len()].0;
                s.delete(
                    &t,
                    &Delete::new(row_key(row)).column_at("f", format!("q{q}"), ts),
                )
                .unwrap();
                m.markers.push((row, Some(q), ts, true));
            }
            Op::DeleteColumn { row, q } => {
                s.delete(
                    &t,
                    &Delete::with_timestamp(row_key(row), clock).columns("f", format!("q{q}")),
                )
                .unwrap();
                m.markers.push((row, Some(q), clock, false));
            }
            Op::DeleteFamily { row } => {
                s.delete(&t, &Delete::with_timestamp(row_key(row), clock).family("f"))
                    .unwrap();
                m.markers.push((row, None, clock, false));
            }
            Op::DeleteFamilyVersion { row, pick } => {
                let all: Vec<i64> = (0..3)
                    .flat_map(|q| m.puts.get(&(row, q)).into_iter().flatten().map(|p| p.0))
                    .collect();
                if all.is_empty() {
                    continue;
                }
                let ts = all[pick as usize % all.len()];
                s.delete(&t, &Delete::new(row_key(row)).family_version("f", ts))
                    .unwrap();
                m.markers.push((row, None, ts, true));
            }
            Op::DeleteRow { row } => {
                s.delete(&t, &Delete::with_timestamp(row_key(row), clock))
                    .unwrap();
                m.markers.push((row, None, clock, false));
            }
            Op::Get {
                row,
                versions,
                column,
            } => {
                let got = s.get(&t, get(row, column).versions(versions)).unwrap();
                prop_assert_eq!(cells(&got), m.column(row, column, versions), "{}", ctx);
            }
            Op::Scan {
                start,
                stop,
                start_inclusive,
                stop_inclusive,
                reversed,
                versions,
            } => {
                let bound = |r: u8, inclusive: bool| match (r, inclusive) {
                    (6, _) => Bound::Unbounded,
                    (r, true) => Bound::Included(row_key(r).into_bytes()),
                    (r, false) => Bound::Excluded(row_key(r).into_bytes()),
                };
                let scan = Scan::new()
                    .versions(versions)
                    .reversed(reversed)
                    .with_start(bound(start, start_inclusive))
                    .with_stop(bound(stop, stop_inclusive));
                let got: Vec<RowCells> = s
                    .scanner(&t, scan)
                    .unwrap()
                    .map(|r| {
                        let r = r.unwrap();
                        (
                            String::from_utf8_lossy(r[0].as_cell().row()).into_owned(),
                            cells(&r),
                        )
                    })
                    .collect();
                let mut want: Vec<RowCells> = (0..6u8)
                    .filter(|&r| {
                        let (lo, hi) = if reversed {
                            ((stop, stop_inclusive), (start, start_inclusive))
                        } else {
                            ((start, start_inclusive), (stop, stop_inclusive))
                        };
                        let above = lo.0 == 6 || r > lo.0 || (r == lo.0 && lo.1);
                        let below = hi.0 == 6 || r < hi.0 || (r == hi.0 && hi.1);
                        above && below
                    })
                    .map(|r| (row_key(r), m.row(r, versions)))
                    .filter(|(_, c)| !c.is_empty())
                    .collect();
                if reversed {
                    want.reverse();
                }
                prop_assert_eq!(got, want, "{}", ctx);
            }
            Op::MultiGet { rows } => {
                let gets = rows
                    .iter()
                    .map(|&(r, column, versions)| get(r, column).versions(versions))
                    .collect();
                let got: Vec<_> = s
                    .get_many(&t, gets)
                    .unwrap()
                    .iter()
                    .map(|r| cells(r))
                    .collect();
                let want: Vec<_> = rows
                    .iter()
                    .map(|&(r, column, versions)| m.column(r, column, versions))
                    .collect();
                prop_assert_eq!(got, want, "{}", ctx);
            }
            Op::Flush => s.flush_table(&t).unwrap(),
            Op::Compact { major } => s.compact_table(&t, major).unwrap(),
            Op::Restart { crash } => {
                if !crash {
                    s.close().unwrap();
                }
                drop(s);
                s = open(dir.path());
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("CAIRN_MODEL_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64), ..ProptestConfig::default() })]

    #[test]
    fn region_server_matches_the_reference(
        ops in proptest::collection::vec(op(), 1..80),
        splits in any::<bool>(),
        encoding in prop::sample::select(DataBlockEncoding::ALL.to_vec()),
        bloom in prop::sample::select(vec![BloomType::None, BloomType::Row, BloomType::RowCol]),
    ) {
        run(ops, splits, encoding, bloom)?;
    }
}
