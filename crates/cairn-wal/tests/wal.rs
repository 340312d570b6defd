//! End-to-end behaviour of the WAL: round trips across rolls, recovery from torn and damaged
//! files, retiring files after flushes, durability levels and group commit.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_wal::file::{self, END_MARKER, TRAILER};
use cairn_wal::{DropReason, Dropped, Durability, Wal, WalEdit, WalError, WalOptions};
use common::{edit, loc, open, record_offsets, replay, segment_files, snapshot, wal_dir};

/// Bytes of the trailer a sealed file ends in.
const TAIL: u64 = TRAILER.len() as u64;

fn small_rolls(roll_size: u64) -> WalOptions {
    WalOptions {
        roll_size,
        ..WalOptions::default()
    }
}

#[test]
fn round_trip_across_rolls_keeps_order_and_per_region_maxima() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, replayed, report) = open(dir.path(), small_rolls(4096)).unwrap();
    assert!(replayed.is_empty());
    assert_eq!(report.segments, 0);

    let regions = ["a", "b", "c"];
    let mut appended = Vec::new();
    for i in 0..1500u64 {
        let region = regions[(i % 3) as usize];
        let e = edit(region, 1000 + i, 1 + (i % 4) as usize);
        let durability = if i % 5 == 0 {
            Durability::FsyncWal
        } else {
            Durability::SyncWal
        };
        wal.append(&e, durability).unwrap();
        appended.push(e);
        if i == 700 {
            wal.roll().unwrap();
        }
    }
    let stats = wal.stats();
    assert_eq!(stats.appends, 1500);
    assert!(stats.rolls >= 10, "{stats:?}");
    let segments = wal.segments();
    assert_eq!(segments.len() as u64, stats.rolls + 1);
    assert!(segments.last().unwrap().active);
    // What the WAL tracks per file is what the file holds.
    for s in &segments {
        let mut expected = BTreeMap::new();
        file::scan_file(&s.path, |_, e| {
            let m = expected.entry(e.region.clone()).or_insert(0);
            *m = e.sequence_id.max(*m);
            Ok(())
        })
        .unwrap();
        assert_eq!(s.max_sequence_id, expected, "segment {}", s.id);
    }
    wal.close().unwrap();

    let (replayed, report) = replay(dir.path());
    assert_eq!(replayed, appended);
    assert_eq!(report.edits, 1500);
    assert_eq!(
        report.cells,
        appended.iter().map(|e| e.cells.len() as u64).sum::<u64>()
    );
    assert_eq!(report.segments, segments.len());
    assert!(report.dropped.is_empty(), "{:?}", report.dropped);
    let expected_max: BTreeMap<Vec<u8>, u64> = [(b"a", 2497), (b"b", 2498), (b"c", 2499)]
        .into_iter()
        .map(|(r, s)| (r.to_vec(), s))
        .collect();
    assert_eq!(report.max_sequence_id, expected_max);

    // A second open sees the segment the first replay started too (empty) and nothing new.
    let (again, report) = replay(dir.path());
    assert_eq!(again, appended);
    assert_eq!(report.segments, segments.len() + 1);
}

/// Writes `n` small edits into a fresh WAL and returns the one (sealed) file holding them:
/// its name and bytes.
fn one_segment(dir: &Path, n: u64) -> (Vec<WalEdit>, String, Vec<u8>) {
    let (wal, _, _) = open(dir, WalOptions::default()).unwrap();
    let edits: Vec<WalEdit> = (1..=n).map(|s| edit("r", s, 1)).collect();
    for e in &edits {
        wal.append(e, Durability::SyncWal).unwrap();
    }
    wal.close().unwrap();
    let files = segment_files(dir);
    assert_eq!(files.len(), 1);
    let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
    (edits, name, fs::read(&files[0]).unwrap())
}

/// Replays a WAL holding only `bytes` as the file `name`; returns the file's path too.
fn replay_bytes(
    name: &str,
    bytes: &[u8],
) -> (
    Vec<WalEdit>,
    Vec<Dropped>,
    std::path::PathBuf,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = wal_dir(dir.path()).join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, bytes).unwrap();
    let (edits, report) = replay(dir.path());
    (edits, report.dropped, path, dir)
}

#[test]
fn torn_last_record_at_every_offset_drops_exactly_it() {
    let src = tempfile::tempdir().unwrap();
    let (edits, name, bytes) = one_segment(src.path(), 4);
    let (offsets, end, len) = record_offsets(&segment_files(src.path())[0]);
    let last = offsets[3];
    assert_eq!((len, end + TAIL), (bytes.len() as u64, len));
    for cut in last..=len {
        let (got, dropped, path, _dir) = replay_bytes(&name, &bytes[..cut as usize]);
        let whole = if cut >= end { 4 } else { 3 };
        assert_eq!(got, edits[..whole], "cut at {cut}");
        if cut == last || cut >= end {
            // At an entry's end, or in the trailer (a close cut short): a clean end.
            assert!(dropped.is_empty(), "cut at {cut}: {dropped:?}");
            // Sealed again: the entries, then a whole trailer.
            let sealed = if cut == last { last } else { end };
            assert_eq!(fs::metadata(&path).unwrap().len(), sealed + TAIL);
            continue;
        }
        assert_eq!(dropped.len(), 1, "cut at {cut}");
        let d = &dropped[0];
        assert_eq!(
            (&d.segment, d.offset, d.bytes),
            (&path, last, cut - last),
            "cut at {cut}"
        );
        assert!(
            matches!(d.reason, DropReason::Truncated { .. }),
            "cut at {cut}: {}",
            d.reason
        );
        // A torn file is left as it is, for the operator.
        assert_eq!(fs::metadata(&path).unwrap().len(), cut);
    }
}

#[test]
fn unwritten_tails_are_not_drops_and_garbage_tails_are_reported() {
    let src = tempfile::tempdir().unwrap();
    let (edits, name, sealed) = one_segment(src.path(), 5);
    let body = &sealed[..sealed.len() - TAIL as usize];
    let end = body.len() as u64;

    // What a writer that died leaves after its last entry: nothing, zeros (shorter and longer
    // than a trailer), the end marker and zeros, the end marker and a recycled file's old
    // bytes. Replayed whole, nothing reported, and the file sealed as a close would have.
    let tails: Vec<Vec<u8>> = vec![
        vec![],
        vec![0; 1],
        vec![0; 7],
        vec![0; 9],
        vec![0; 4096],
        vec![0; 1 << 20],
        [&END_MARKER[..], &[0; 4096]].concat(),
        [&END_MARKER[..], &[0xA5; 100]].concat(),
    ];
    for tail in tails {
        let (got, dropped, path, _dir) = replay_bytes(&name, &[body, &tail].concat());
        assert_eq!(got, edits, "tail of {}", tail.len());
        assert!(dropped.is_empty(), "tail of {}: {dropped:?}", tail.len());
        assert_eq!(
            fs::read(&path).unwrap(),
            sealed,
            "tail of {} not sealed",
            tail.len()
        );
    }

    let check = |tail: &[u8], expect: &dyn Fn(&DropReason) -> bool| {
        let (got, dropped, _, _dir) = replay_bytes(&name, &[body, tail].concat());
        assert_eq!(got, edits, "tail {:02X?}", &tail[..tail.len().min(16)]);
        assert_eq!(dropped.len(), 1, "{dropped:?}");
        assert_eq!(
            (dropped[0].offset, dropped[0].bytes),
            (end, tail.len() as u64)
        );
        assert!(expect(&dropped[0].reason), "{:?}", dropped[0].reason);
    };
    // Zeros then garbage is damage, not an unwritten tail.
    let mut zeros_then_junk = vec![0u8; 64];
    zeros_then_junk[40] = 1;
    check(&zeros_then_junk, &|r| {
        *r == DropReason::BadLength {
            what: "WALKey",
            length: 0,
        }
    });
    // A key length past the end of the file, and one no key can have.
    check(&[0xFF, 0xFF, 0x7F, 1, 2, 3], &|r| {
        matches!(r, DropReason::Truncated { what: "WALKey", .. })
    });
    check(&[0xFF, 0xFF, 0xFF, 0x7F, 1, 2, 3], &|r| {
        matches!(r, DropReason::BadLength { what: "WALKey", .. })
    });
    // A whole entry whose checksum does not hold.
    let mut e = Vec::new();
    let enc = cairn_wal::entry::encode_entry(&edit("r", 6, 1), &mut e).unwrap();
    e[enc.crc_at] ^= 0x01;
    check(&e, &|r| matches!(r, DropReason::ChecksumMismatch { .. }));
    // Random garbage never replays and is always reported whole.
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..200 {
        let len = 1 + (x % 300) as usize;
        let junk: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8 | 1
            })
            .collect();
        check(&junk, &|_| true);
    }
}

/// Three segments of ten edits each (segment ids 1, 2, 3).
fn three_segments(dir: &Path) -> Vec<WalEdit> {
    let (wal, _, _) = open(dir, WalOptions::default()).unwrap();
    let mut all = Vec::new();
    for seg in 0..3u64 {
        for i in 0..10 {
            let e = edit(if i % 2 == 0 { "a" } else { "b" }, seg * 100 + i, 2);
            wal.append(&e, Durability::SyncWal).unwrap();
            all.push(e);
        }
        if seg < 2 {
            wal.roll().unwrap();
        }
    }
    wal.close().unwrap();
    assert_eq!(segment_files(dir).len(), 3);
    all
}

#[test]
fn flipped_byte_in_a_middle_segment_is_reported_and_replay_goes_on() {
    let src = tempfile::tempdir().unwrap();
    let all = three_segments(src.path());
    let files = segment_files(src.path());
    let (offsets, _, len) = record_offsets(&files[1]);
    let originals: Vec<Vec<u8>> = files.iter().map(|f| fs::read(f).unwrap()).collect();
    let name = files[1].file_name().unwrap().to_str().unwrap().to_string();

    let (start, end) = (offsets[4], offsets[5]);
    for at in start..end {
        let dir = tempfile::tempdir().unwrap();
        let to = wal_dir(dir.path());
        fs::create_dir_all(&to).unwrap();
        for (i, bytes) in originals.iter().enumerate() {
            let mut b = bytes.clone();
            if i == 1 {
                b[at as usize] ^= 0x40;
            }
            fs::write(to.join(files[i].file_name().unwrap()), b).unwrap();
        }
        let (got, report) = replay(dir.path());
        let expected: Vec<WalEdit> = all[..14].iter().chain(&all[20..]).cloned().collect();
        assert_eq!(got, expected, "flip at {at}");
        assert_eq!(report.dropped.len(), 1, "flip at {at}");
        let d = &report.dropped[0];
        assert_eq!(
            (&d.segment, d.offset, d.bytes),
            (&to.join(&name), start, len - start),
            "flip at {at}"
        );
        assert!(d.to_string().contains(&name));
    }
}

#[test]
fn damaged_header_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    three_segments(dir.path());
    let victim = segment_files(dir.path())[1].clone();
    let good = fs::read(&victim).unwrap();
    let name = victim.file_name().unwrap().to_str().unwrap().to_string();
    // The magic, the header's length (one short: its last field is cut), a field key inside
    // it (wire type 3), the writer class's name (one HBase does not know either).
    assert!(good[4] < 0x80, "a one-byte header length");
    for (at, value) in [(0, b'Q'), (4, good[4] - 1), (5, 0x0B), (13, b'Q')] {
        let mut b = good.clone();
        b[at] = value;
        fs::write(&victim, &b).unwrap();
        let err = open(dir.path(), WalOptions::default()).err().unwrap();
        assert!(
            matches!(&err, WalError::BadHeader { path, .. } if *path == victim),
            "flip at {at}: {err}"
        );
        assert!(err.to_string().contains(&name), "{err}");
    }
    // A header cut short holds no entry: not an error (HBase skips such a file too), but
    // reported.
    fs::write(&victim, &good[..20]).unwrap();
    let (wal, _, report) = open(dir.path(), WalOptions::default()).unwrap();
    assert_eq!(report.dropped.len(), 1, "{:?}", report.dropped);
    assert_eq!(report.dropped[0].reason, DropReason::TornHeader);
    wal.close().unwrap();
    // A header copied from another of this server's files does not pass for this one.
    fs::write(&victim, fs::read(&segment_files(dir.path())[0]).unwrap()).unwrap();
    let err = open(dir.path(), WalOptions::default()).err().unwrap();
    assert!(
        err.to_string().contains("the header names file number"),
        "{err}"
    );
    // A compressed WAL (HBase's hbase.regionserver.wal.enablecompression) is refused, named.
    let mut compressed = b"PWAL".to_vec();
    compressed.extend_from_slice(&[2, 0x08, 1]);
    fs::write(&victim, &compressed).unwrap();
    let err = open(dir.path(), WalOptions::default()).err().unwrap();
    assert!(
        matches!(&err, WalError::Unsupported { path, .. } if *path == victim),
        "{err}"
    );
    assert!(err.to_string().contains("compressed") && err.to_string().contains(&name));
}

#[test]
fn leftover_prepared_files_are_removed_and_strangers_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let l = loc(dir.path());
    let spare = l.spare_dir();
    fs::create_dir_all(&spare).unwrap();
    fs::create_dir_all(l.dir()).unwrap();
    let prefix = l.server.file_prefix();
    let tmp = spare.join(format!("{prefix}.7.tmp"));
    fs::write(&tmp, b"PWAL").unwrap();
    let others = [
        spare.join("other%2C1%2C1.7.tmp"),
        spare.join("notes.txt"),
        l.dir().join("notes.txt"),
    ];
    for o in &others {
        fs::write(o, b"not ours").unwrap();
    }
    let (edits, report) = replay(dir.path());
    assert!(edits.is_empty() && report.segments == 0, "{report:?}");
    assert!(!tmp.exists());
    for o in &others {
        assert!(o.exists(), "{}", o.display());
    }
}

#[test]
fn a_segment_of_cairns_old_format_stops_the_open() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("WALs").join("wal.00000000000000000003");
    fs::create_dir_all(old.parent().unwrap()).unwrap();
    fs::write(&old, b"CAIRNWAL").unwrap();
    let err = open(dir.path(), WalOptions::default()).err().unwrap();
    assert!(
        matches!(&err, WalError::Unsupported { path, .. } if *path == old),
        "{err}"
    );
}

#[test]
fn visitor_error_stops_the_open() {
    let dir = tempfile::tempdir().unwrap();
    three_segments(dir.path());
    let mut seen = 0;
    let err = Wal::open(&loc(dir.path()), WalOptions::default(), |_| {
        seen += 1;
        if seen == 12 {
            Err(WalError::visitor("memstore full"))
        } else {
            Ok(())
        }
    })
    .err()
    .unwrap();
    assert!(matches!(err, WalError::Visitor(_)));
    assert_eq!(seen, 12);
    assert!(err.to_string().contains("memstore full"));
}

#[test]
fn mark_flushed_retires_only_files_no_region_needs() {
    let dir = tempfile::tempdir().unwrap();
    let no_recycling = WalOptions {
        recycled_segments: 0,
        ..WalOptions::default()
    };
    let (wal, _, _) = open(dir.path(), no_recycling).unwrap();
    let put = |r: &str, seqs: std::ops::RangeInclusive<u64>| {
        for s in seqs {
            wal.append(&edit(r, s, 1), Durability::SyncWal).unwrap();
        }
    };
    put("A", 1..=5); // file 1: A ≤ 5, B ≤ 3
    put("B", 1..=3);
    wal.roll().unwrap();
    put("A", 6..=10); // file 2: A ≤ 10
    wal.roll().unwrap();
    put("B", 4..=6); // file 3: B ≤ 6, C ≤ 1
    put("C", 1..=1);
    wal.roll().unwrap();
    put("A", 11..=11); // file 4, active
    let files = segment_files(dir.path());
    assert_eq!(files.len(), 4);
    let paths = |wal: &Wal| {
        wal.segments()
            .iter()
            .map(|s| s.path.clone())
            .collect::<Vec<_>>()
    };
    let nth = |idx: &[usize]| idx.iter().map(|&i| files[i].clone()).collect::<Vec<_>>();
    assert_eq!(paths(&wal), files);
    assert_eq!(
        wal.segments()[0].max_sequence_id,
        BTreeMap::from([(b"A".to_vec(), 5), (b"B".to_vec(), 3)])
    );
    let archive = loc(dir.path()).archive_dir();
    let archived = |i: usize| archive.join(files[i].file_name().unwrap());

    assert_eq!(wal.mark_flushed(b"A", 9).unwrap(), 0);
    assert_eq!(wal.mark_flushed(b"A", 10).unwrap(), 1);
    assert_eq!(paths(&wal), nth(&[0, 2, 3]));
    assert!(
        !files[1].exists() && archived(1).exists(),
        "archived as HBase does"
    );
    assert_eq!(wal.mark_flushed(b"B", 2).unwrap(), 0);
    assert_eq!(wal.mark_flushed(b"B", 3).unwrap(), 1);
    assert_eq!(paths(&wal), nth(&[2, 3]));
    // A flush report never moves a region backwards.
    assert_eq!(wal.mark_flushed(b"B", 1).unwrap(), 0);
    assert_eq!(wal.mark_flushed(b"B", 6).unwrap(), 0, "C never flushed");
    assert_eq!(paths(&wal), nth(&[2, 3]));
    assert_eq!(wal.mark_flushed(b"C", 1).unwrap(), 1);
    // The active file is never retired, even when every region in it has flushed.
    assert_eq!(wal.mark_flushed(b"A", u64::MAX).unwrap(), 0);
    assert_eq!(paths(&wal), nth(&[3]));
    wal.roll().unwrap();
    assert_eq!(wal.mark_flushed(b"A", 11).unwrap(), 1);
    assert_eq!(wal.segments().len(), 1);
    assert_eq!(wal.stats().segments_deleted, 4);
    assert_eq!(segment_files(dir.path()), paths(&wal));
    assert_eq!(common::files_in(&archive).len(), 4);
    wal.close().unwrap();

    // Files found at open are tracked the same way.
    let dir = tempfile::tempdir().unwrap();
    three_segments(dir.path()); // a: even seqs, b: odd, in files 1..3
    let files = segment_files(dir.path());
    let (wal, _, _) = open(dir.path(), WalOptions::default()).unwrap();
    assert_eq!(paths(&wal)[..3], files[..]);
    assert_eq!(wal.mark_flushed(b"a", 108).unwrap(), 0);
    assert_eq!(wal.mark_flushed(b"b", 9).unwrap(), 1);
    assert_eq!(wal.mark_flushed(b"b", 200).unwrap(), 1);
    assert_eq!(paths(&wal)[0], files[2]);
    assert_eq!(wal.segments().len(), 2);
    wal.close().unwrap();
}

#[test]
fn cairns_own_archived_files_expire_and_others_stay() {
    let dir = tempfile::tempdir().unwrap();
    let short = WalOptions {
        recycled_segments: 0,
        archive_ttl: Duration::ZERO,
        ..WalOptions::default()
    };
    let archive = loc(dir.path()).archive_dir();
    fs::create_dir_all(&archive).unwrap();
    let hbase_file = archive.join("hbase%2C16020%2C1.1700000000000");
    fs::write(&hbase_file, b"HBase's").unwrap();
    let (wal, _, _) = open(dir.path(), short).unwrap();
    wal.append(&edit("A", 1, 1), Durability::SyncWal).unwrap();
    wal.roll().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(wal.mark_flushed(b"A", 1).unwrap(), 1);
    // Archived, then found older than the TTL (0) by the same retirement.
    assert!(common::files_in(&archive).iter().all(|f| *f == hbase_file));
    assert!(hbase_file.exists());
    wal.close().unwrap();
}

/// The sequence ids in a WAL file as another reader of the page cache sees them now.
fn seqs_in(path: &Path) -> Vec<u64> {
    let mut seqs = Vec::new();
    let scan = file::scan_file(path, |_, e| {
        seqs.push(e.sequence_id);
        Ok(())
    })
    .unwrap();
    assert!(scan.dropped.is_none(), "{:?}", scan.dropped);
    seqs
}

#[test]
fn skip_wal_writes_nothing_and_sync_and_async_appends_are_in_the_file_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let lazy = WalOptions {
        async_sync_interval: Duration::from_secs(3600),
        ..WalOptions::default()
    };
    let (wal, _, _) = open(dir.path(), lazy).unwrap();
    let path = segment_files(dir.path())[0].clone();
    wal.append(&edit("r", 1, 1), Durability::SkipWal).unwrap();
    assert_eq!(wal.stats().skipped_appends, 1);
    let header = file::scan_file(&path, |_, _| Ok(()))
        .unwrap()
        .header
        .unwrap()
        .len;
    assert_eq!(wal.segments()[0].size, header);
    assert!(seqs_in(&path).is_empty());

    // No sync call, no syncer interval: a read of the file (the page cache) sees each append
    // as soon as it returns, which is what survives a process crash.
    wal.append(&edit("r", 2, 1), Durability::AsyncWal).unwrap();
    assert_eq!(seqs_in(&path), [2]);
    wal.append(&edit("r", 3, 1), Durability::SyncWal).unwrap();
    assert_eq!(seqs_in(&path), [2, 3]);
    let scan = file::scan_file(&path, |_, _| Ok(())).unwrap();
    assert_eq!(scan.end, wal.segments()[0].size);
    assert!(scan.marker, "the end marker follows the last entry");
    // The active segment is preallocated: its file is longer than what was written.
    assert_eq!(fs::metadata(&path).unwrap().len(), 128 << 20);
    let stats = wal.stats();
    assert_eq!((stats.fsyncs, stats.batches, stats.appends), (0, 0, 2));
    wal.close().unwrap();
}

#[test]
fn async_edits_survive_close_and_drop() {
    let dir = tempfile::tempdir().unwrap();
    let lazy = WalOptions {
        async_sync_interval: Duration::from_secs(3600),
        ..WalOptions::default()
    };
    let (wal, _, _) = open(dir.path(), lazy.clone()).unwrap();
    let header = wal.segments()[0].size;
    wal.append(&edit("r", 1, 1), Durability::AsyncWal).unwrap();
    assert!(wal.segments()[0].size > header);
    wal.sync(false).unwrap();
    wal.append(&edit("r", 2, 1), Durability::AsyncWal).unwrap();
    wal.close().unwrap();
    let (edits, _) = replay(dir.path());
    assert_eq!(edits, [edit("r", 1, 1), edit("r", 2, 1)]);

    // Dropping without close writes them too.
    let (wal, _, _) = open(dir.path(), lazy).unwrap();
    wal.append(&edit("r", 3, 1), Durability::AsyncWal).unwrap();
    drop(wal);
    let (edits, _) = replay(dir.path());
    assert_eq!(edits.last(), Some(&edit("r", 3, 1)));
}

fn group_commit(durability: Durability, threads: u64, per_thread: u64) {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _, _) = open(dir.path(), WalOptions::default()).unwrap();
    let wal = Arc::new(wal);
    std::thread::scope(|s| {
        for t in 0..threads {
            let wal = &wal;
            s.spawn(move || {
                for i in 1..=per_thread {
                    wal.append(&edit(&format!("region-{t}"), i, 1), durability)
                        .unwrap();
                }
            });
        }
    });
    let stats = wal.stats();
    let total = threads * per_thread;
    assert_eq!(stats.appends, total);
    if durability == Durability::FsyncWal {
        // One fdatasync covers every appender that copied before it.
        assert!(
            stats.batches < total && stats.max_batch_edits > 1,
            "no batching: {stats:?}"
        );
        assert!(stats.fsyncs < total, "{stats:?}");
        assert_eq!(stats.fsyncs, stats.batches, "{stats:?}");
    } else {
        // Copies into the mapped segment: no system call, nothing to batch.
        assert_eq!((stats.batches, stats.fsyncs), (0, 0), "{stats:?}");
    }
    eprintln!(
        "{durability}: {total} appends in {} batches (largest {}), {} fdatasyncs",
        stats.batches, stats.max_batch_edits, stats.fsyncs
    );
    Arc::try_unwrap(wal).ok().unwrap().close().unwrap();

    let (edits, report) = replay(dir.path());
    assert_eq!(report.edits, total);
    // Each region's edits come back complete and in the order its thread appended them.
    let mut per_region: BTreeMap<Vec<u8>, Vec<u64>> = BTreeMap::new();
    for e in edits {
        per_region.entry(e.region).or_default().push(e.sequence_id);
    }
    assert_eq!(per_region.len() as u64, threads);
    for seqs in per_region.values() {
        assert_eq!(*seqs, (1..=per_thread).collect::<Vec<_>>());
    }
}

#[test]
fn concurrent_sync_appends_need_no_syscall() {
    group_commit(Durability::SyncWal, 8, 500);
}

#[test]
fn group_commit_batches_concurrent_fsync_appends() {
    group_commit(Durability::FsyncWal, 8, 40);
}

#[test]
fn many_appends_from_few_threads_with_mixed_durability_and_rolls() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _, _) = open(dir.path(), small_rolls(16 * 1024)).unwrap();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let wal = &wal;
            s.spawn(move || {
                for i in 1..=400u64 {
                    let d = Durability::ALL[((i + t) % 4) as usize];
                    wal.append(&edit(&format!("m{t}"), i, 2), d).unwrap();
                    if i % 150 == 0 {
                        wal.roll().unwrap();
                    }
                }
            });
        }
    });
    let stats = wal.stats();
    wal.close().unwrap();
    let (edits, report) = replay(dir.path());
    assert!(report.dropped.is_empty());
    assert_eq!(edits.len() as u64, stats.appends);
    assert_eq!(stats.appends + stats.skipped_appends, 1600);
    for t in 0..4u64 {
        let region = format!("m{t}").into_bytes();
        let seqs: Vec<u64> = edits
            .iter()
            .filter(|e| e.region == region)
            .map(|e| e.sequence_id)
            .collect();
        let expected: Vec<u64> = (1..=400u64).filter(|i| (i + t) % 4 != 0).collect();
        assert_eq!(seqs, expected);
    }
}

/// What a process crash leaves is what the page cache holds: a copy of the files of a live
/// WAL, preallocated tails included. It replays completely, reports no drop, and the files
/// left open are sealed.
#[test]
fn a_live_wal_copied_mid_write_replays_whole_without_drops() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _, _) = open(dir.path(), small_rolls(64 * 1024)).unwrap();
    let mut appended = Vec::new();
    for i in 1..=2000u64 {
        let e = edit(["x", "y"][(i % 2) as usize], i, 1 + (i % 3) as usize);
        let d = [Durability::SyncWal, Durability::AsyncWal][(i % 2) as usize];
        wal.append(&e, d).unwrap();
        appended.push(e);
    }
    assert!(wal.stats().rolls > 2);
    let crashed = tempfile::tempdir().unwrap();
    snapshot(dir.path(), crashed.path());
    let active = segment_files(crashed.path()).pop().unwrap();
    let written = wal.segments().last().unwrap().size;
    assert_eq!(
        fs::metadata(&active).unwrap().len(),
        64 * 1024,
        "not preallocated"
    );

    let (edits, report) = replay(crashed.path());
    assert_eq!(edits, appended);
    assert!(report.dropped.is_empty(), "{:?}", report.dropped);
    assert_eq!(
        fs::metadata(&active).unwrap().len(),
        written + TAIL,
        "not sealed"
    );
    wal.close().unwrap();
}

#[test]
fn close_and_roll_truncate_segments_to_the_bytes_written() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _, _) = open(dir.path(), WalOptions::default()).unwrap();
    for i in 1..=50 {
        wal.append(&edit("r", i, 2), Durability::SyncWal).unwrap();
    }
    wal.roll().unwrap();
    for i in 51..=60 {
        wal.append(&edit("r", i, 2), Durability::FsyncWal).unwrap();
    }
    let segments = wal.segments();
    assert_eq!(segments.len(), 2);
    let closed = &segments[0];
    assert_eq!(
        fs::metadata(&closed.path).unwrap().len(),
        closed.size + TAIL
    );
    assert_eq!(record_offsets(&closed.path).1, closed.size);
    let active = &segments[1];
    assert!(fs::metadata(&active.path).unwrap().len() > active.size + TAIL);
    wal.close().unwrap();
    assert_eq!(
        fs::metadata(&active.path).unwrap().len(),
        active.size + TAIL
    );
    let (offsets, end, _) = record_offsets(&active.path);
    assert_eq!((offsets.len(), end), (10, active.size));
    // No prepared file is left behind: the prepared one is kept for reuse.
    let names: Vec<String> = fs::read_dir(loc(dir.path()).spare_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.ends_with(".free"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
    assert_eq!(segment_files(dir.path()).len(), 2);
    assert!(kept_files(dir.path()) <= 1);
}

#[test]
fn rolls_under_concurrent_appends_lose_and_reorder_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _, _) = open(dir.path(), small_rolls(8 * 1024)).unwrap();
    const THREADS: u64 = 4;
    const PER_THREAD: u64 = 3000;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let wal = &wal;
            s.spawn(move || {
                for i in 1..=PER_THREAD {
                    let d = match i % 50 {
                        0 => Durability::FsyncWal,
                        n if n % 2 == 0 => Durability::AsyncWal,
                        _ => Durability::SyncWal,
                    };
                    wal.append(&edit(&format!("c{t}"), i, 1 + (i % 2) as usize), d)
                        .unwrap();
                    if t == 0 && i % 700 == 0 {
                        wal.roll().unwrap();
                    }
                }
            });
        }
    });
    let stats = wal.stats();
    assert!(stats.rolls > 50, "{stats:?}");
    let segments = wal.segments();
    assert_eq!(segments.len() as u64, stats.rolls + 1);
    for s in &segments {
        let mut expected = BTreeMap::new();
        let scan = file::scan_file(&s.path, |_, e| {
            let m = expected.entry(e.region.clone()).or_insert(0);
            *m = e.sequence_id.max(*m);
            Ok(())
        })
        .unwrap();
        assert!(scan.dropped.is_none(), "{:?}", scan.dropped);
        assert_eq!(scan.end, s.size);
        if !s.active {
            assert_eq!(scan.len, s.size + TAIL, "file {} not sealed", s.id);
            assert!(scan.trailer);
        }
        assert_eq!(s.max_sequence_id, expected, "segment {}", s.id);
    }
    wal.close().unwrap();
    let (edits, report) = replay(dir.path());
    assert!(report.dropped.is_empty(), "{:?}", report.dropped);
    assert_eq!(edits.len() as u64, THREADS * PER_THREAD);
    for t in 0..THREADS {
        let region = format!("c{t}").into_bytes();
        let seqs: Vec<u64> = edits
            .iter()
            .filter(|e| e.region == region)
            .map(|e| e.sequence_id)
            .collect();
        assert_eq!(seqs, (1..=PER_THREAD).collect::<Vec<_>>());
    }
}

#[test]
fn records_larger_than_a_segment_get_a_segment_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _, _) = open(dir.path(), small_rolls(4096)).unwrap();
    let big = |seq: u64| {
        let mut e = edit("big", seq, 1);
        e.cells = vec![
            cairn_wal::KeyValue::put(b"row", b"f", b"q", 1, &vec![7u8; 50_000])
                .unwrap()
                .with_sequence_id(seq),
        ];
        e
    };
    let mut appended = Vec::new();
    for i in 1..=12u64 {
        let e = if i % 3 == 0 {
            big(i)
        } else {
            edit("big", i, 1)
        };
        wal.append(&e, Durability::SyncWal).unwrap();
        appended.push(e);
    }
    wal.close().unwrap();
    let (edits, report) = replay(dir.path());
    assert!(report.dropped.is_empty(), "{:?}", report.dropped);
    assert_eq!(edits, appended);
}

#[test]
fn a_directory_is_open_by_one_wal_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _, _) = open(dir.path(), WalOptions::default()).unwrap();
    wal.append(&edit("r", 1, 1), Durability::SyncWal).unwrap();
    let started = Instant::now();
    let err = open(dir.path(), WalOptions::default()).err().unwrap();
    assert!(err.to_string().contains("another WAL"), "{err}");
    assert!(started.elapsed() >= Duration::from_secs(2));
    // A second open waits for the first WAL to go away (as when a dropped server's threads
    // release their references a little later).
    std::thread::scope(|s| {
        let second = s.spawn(|| replay(dir.path()).0);
        std::thread::sleep(Duration::from_millis(200));
        wal.append(&edit("r", 2, 1), Durability::SyncWal).unwrap();
        drop(wal);
        assert_eq!(second.join().unwrap(), [edit("r", 1, 1), edit("r", 2, 1)]);
    });
}

#[test]
fn fsync_appends_are_group_committed_and_sync_covers_everything() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _, _) = open(dir.path(), WalOptions::default()).unwrap();
    // Nothing appended: nothing to flush.
    wal.sync(true).unwrap();
    assert_eq!(wal.stats().fsyncs, 0);
    wal.append(&edit("r", 1, 1), Durability::SyncWal).unwrap();
    wal.sync(true).unwrap();
    let stats = wal.stats();
    assert_eq!((stats.fsyncs, stats.batches), (1, 1));
    // Already durable: no second flush.
    wal.sync(true).unwrap();
    assert_eq!(wal.stats().fsyncs, 1);

    std::thread::scope(|s| {
        for t in 0..6u64 {
            let wal = &wal;
            s.spawn(move || {
                for i in 1..=60 {
                    wal.append(&edit(&format!("f{t}"), i, 1), Durability::FsyncWal)
                        .unwrap();
                }
            });
        }
    });
    let stats = wal.stats();
    assert_eq!(stats.appends, 361);
    assert!(
        stats.batches < 361 && stats.max_batch_edits > 1,
        "{stats:?}"
    );
    assert!(stats.fsync_time > Duration::ZERO);
    wal.close().unwrap();
}

/// Appends region `region`'s edits (3 cells each, sequence ids after `*seq`) until the WAL has
/// `segments` segments, the last one active.
fn fill_segments(wal: &Wal, region: &str, segments: usize, seq: &mut u64) {
    while wal.segments().len() < segments {
        *seq += 1;
        wal.append(&edit(region, *seq, 3), Durability::SyncWal)
            .unwrap();
    }
}

/// Files of flushed WAL files kept under `root` for reuse.
fn kept_files(root: &Path) -> usize {
    fs::read_dir(loc(root).spare_dir())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".free")
        })
        .count()
}

/// Flushed segments' files come back as new segments: the new segment holds the old one's
/// bytes past its own records, and a crash there replays exactly the new records (no old
/// record, no drop). A damaged record in a recycled segment is still dropped and reported.
#[test]
fn recycled_segments_replay_only_their_own_records() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _, _) = open(dir.path(), small_rolls(16 << 10)).unwrap();
    // Segments 1-4 full of region A's old edits.
    let mut seq = 0;
    fill_segments(&wal, "A", 5, &mut seq);
    let old_max = seq;
    wal.sync(true).unwrap(); // seals every rolled-away segment
    assert_eq!(wal.mark_flushed(b"A", old_max).unwrap(), 4);
    let stats = wal.stats();
    assert_eq!((stats.segments_recycled, stats.segments_deleted), (2, 2));
    assert_eq!(kept_files(dir.path()), 2);

    // New edits of region B until a segment made from a kept file is active, then a few more
    // so that it holds some records and the old segment's bytes after them.
    let mut new_seqs = Vec::new();
    while wal.stats().segments_reused == 0 || wal.segments().last().unwrap().size < 2048 {
        seq += 1;
        wal.append(&edit("B", seq, 1), Durability::SyncWal).unwrap();
        new_seqs.push(seq);
    }
    let active = wal.segments().pop().unwrap();
    let bytes = fs::read(&active.path).unwrap();
    let header = file::scan_file(&active.path, |_, _| Ok(()))
        .unwrap()
        .header
        .unwrap()
        .cairn
        .unwrap();
    assert!(header.recycled, "the active file reuses a kept file");
    assert_eq!(header.number, active.id);
    let end = active.size as usize;
    assert_eq!(
        bytes[end..end + END_MARKER.len()],
        END_MARKER,
        "the end marker follows the last entry"
    );
    assert!(
        bytes[end + END_MARKER.len()..].iter().any(|&b| b != 0),
        "the old file's bytes are still there past it"
    );

    // A crash now: replay sees exactly the edits not flushed, in order, and no drop.
    let crashed = tempfile::tempdir().unwrap();
    snapshot(dir.path(), crashed.path());
    let (edits, report) = replay(crashed.path());
    // (The edit that started segment 5 is in it: it was active, so it stayed.)
    let seqs: Vec<u64> = edits.iter().map(|e| e.sequence_id).collect();
    assert_eq!(seqs, [vec![old_max], new_seqs.clone()].concat());
    assert!(report.dropped.is_empty(), "{:?}", report.dropped);

    // Damage the last record of the recycled segment: it is dropped and reported, the records
    // before it replay.
    let damaged = tempfile::tempdir().unwrap();
    snapshot(dir.path(), damaged.path());
    let path = wal_dir(damaged.path()).join(active.path.file_name().unwrap());
    let (offsets, _, _) = record_offsets(&path);
    let last = *offsets.last().unwrap() as usize;
    let mut b = fs::read(&path).unwrap();
    // A byte of the last entry's value.
    b[active.size as usize - 3] ^= 0xFF;
    fs::write(&path, &b).unwrap();
    let (edits, report) = replay(damaged.path());
    assert_eq!(edits.len(), new_seqs.len());
    assert_eq!(report.dropped.len(), 1);
    assert_eq!(report.dropped[0].offset, last as u64);
    assert!(matches!(
        report.dropped[0].reason,
        DropReason::ChecksumMismatch { .. }
    ));

    // A clean close truncates the old bytes away.
    wal.close().unwrap();
    let (wal, edits, report) = open(dir.path(), small_rolls(16 << 10)).unwrap();
    assert_eq!(edits.len(), new_seqs.len() + 1);
    assert!(report.dropped.is_empty());
    wal.close().unwrap();
}

#[test]
fn kept_segment_files_are_reused_after_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _, _) = open(dir.path(), small_rolls(16 << 10)).unwrap();
    let mut seq = 0;
    fill_segments(&wal, "A", 4, &mut seq);
    wal.sync(true).unwrap();
    assert_eq!(wal.mark_flushed(b"A", seq - 1).unwrap(), 3);
    wal.close().unwrap();
    assert_eq!(kept_files(dir.path()), 2);
    let (wal, edits, report) = open(dir.path(), small_rolls(16 << 10)).unwrap();
    assert_eq!(
        edits.iter().map(|e| e.sequence_id).collect::<Vec<_>>(),
        [seq]
    );
    assert!(report.dropped.is_empty());
    let active = wal.segments().pop().unwrap();
    let header = file::scan_file(&active.path, |_, _| Ok(()))
        .unwrap()
        .header
        .unwrap()
        .cairn
        .unwrap();
    assert!(header.recycled, "the first new file reuses a kept file");
    // The reopened WAL took a kept file for its first segment; its background thread prepares
    // the next one in the other. Closing keeps that unused prepared file instead of deleting it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while kept_files(dir.path()) > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert_eq!(
        kept_files(dir.path()),
        0,
        "the next segment was prepared in a kept file"
    );
    wal.close().unwrap();
    assert_eq!(kept_files(dir.path()), 1);
    // With no files to keep, an open deletes the kept ones.
    let no_recycling = WalOptions {
        recycled_segments: 0,
        ..small_rolls(16 << 10)
    };
    let (wal, _, _) = open(dir.path(), no_recycling).unwrap();
    wal.close().unwrap();
    assert_eq!(kept_files(dir.path()), 0);
}
