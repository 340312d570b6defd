//! cairn-fs against a real HDFS (MiniDFSCluster): the FileSystem contract, and reads past a
//! damaged replica.
#![cfg(feature = "hdfs")]

use std::io::Write;
use std::path::Path;
use std::sync::atomic::Ordering;

use cairn_fs::minidfs::MiniDfs;
use cairn_fs::{hdfs_stats, FileSystem, HdfsFileSystem};

fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn filesystem_contract_on_hdfs() {
    let Some(cluster) = MiniDfs::start(1).unwrap() else {
        return;
    };
    let fs = HdfsFileSystem::connect(cluster.url()).unwrap();
    let data = pattern(3 << 20, 7);
    let p = Path::new("/t/a/file.bin");
    let mut out = fs.create(p).unwrap();
    out.write_all(&data[..1000]).unwrap();
    // hdfs-native's readers take the NameNode's length, which leaves out the block still
    // being written: synced bytes of an open file show up only after close or lease
    // recovery (below).
    out.hsync().unwrap();
    out.write_all(&data[1000..]).unwrap();
    out.close().unwrap();

    // With HDFS's checksums and without, kept connections and new ones, within a block and
    // across the 1 MiB block boundaries.
    for src in [fs.open(p).unwrap(), fs.open_no_checksum(p).unwrap()] {
        assert_eq!(src.len(), data.len() as u64);
        for (at, len) in [
            (12345usize, 100_000usize),
            (0, 1),
            ((1 << 20) - 100, 300),
            ((1 << 20) - 1, (1 << 20) + 2),
            (data.len() - 7, 7),
            (0, data.len()),
        ] {
            assert_eq!(
                &src.read_at(at as u64, len).unwrap()[..],
                &data[at..at + len],
                "{len} bytes at {at}"
            );
        }
        assert!(src.read_at(5, 0).unwrap().is_empty());
        let err = src.read_at(data.len() as u64 - 10, 11).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof, "{err}");
    }
    // Sequential reads, each overlapping the last by a block header as store-file scans do,
    // are served from read-ahead across block boundaries and up to the end of the file.
    for src in [fs.open(p).unwrap(), fs.open_no_checksum(p).unwrap()] {
        let mut at = 100usize;
        while at < data.len() {
            let len = (65_536 + 33).min(data.len() - at);
            assert_eq!(
                &src.read_at(at as u64, len).unwrap()[..],
                &data[at..at + len],
                "{len} bytes at {at}"
            );
            at += len.max(34) - 33;
            if at + 33 >= data.len() {
                break;
            }
        }
        // A jump back after a sequential run reads what it asks for.
        assert_eq!(&src.read_at(5, 10).unwrap()[..], &data[5..15]);
    }
    // A DataNode closes an idle connection after 4 s; a read after that must open a new one.
    let src = fs.open_no_checksum(p).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(4500));
    assert_eq!(&src.read_at(777, 1000).unwrap()[..], &data[777..1777]);
    assert!(fs.open(p).unwrap().fs_checksummed().is_none());
    let missing = fs.open(Path::new("/t/a/none")).err().unwrap();
    assert_eq!(missing.kind(), std::io::ErrorKind::NotFound, "{missing}");

    let q = Path::new("/t/b/renamed.bin");
    fs.mkdirs(Path::new("/t/b")).unwrap();
    fs.rename(p, q).unwrap();
    assert!(!fs.exists(p).unwrap());
    assert_eq!(fs.status(q).unwrap().len, data.len() as u64);
    fs.write_atomic(Path::new("/t/b/small"), b"hello").unwrap();
    assert_eq!(fs.read(Path::new("/t/b/small")).unwrap(), b"hello");
    let listed: Vec<_> = fs
        .list(Path::new("/t/b"))
        .unwrap()
        .into_iter()
        .map(|s| (s.path, s.len, s.is_dir))
        .collect();
    assert_eq!(
        listed,
        vec![
            (q.to_path_buf(), data.len() as u64, false),
            (Path::new("/t/b/small").to_path_buf(), 5, false)
        ]
    );
    let missing = fs.list(Path::new("/nope")).unwrap_err();
    assert_eq!(missing.kind(), std::io::ErrorKind::NotFound, "{missing}");
    assert!(fs.delete(Path::new("/t")).unwrap());
    assert!(!fs.delete(Path::new("/t")).unwrap());
    assert!(!fs.exists(q).unwrap());

    // A file left open by a writer that went away: lease recovery closes it at what was synced.
    let w = Path::new("/wal/seg");
    let mut out = fs.create(w).unwrap();
    out.write_all(&data[..4096]).unwrap();
    out.hsync().unwrap();
    std::mem::forget(out);
    let other = HdfsFileSystem::connect(cluster.url()).unwrap();
    let mut closed = false;
    for _ in 0..60 {
        if other.recover_lease(w).unwrap() {
            closed = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    assert!(closed, "lease recovery did not finish");
    assert_eq!(&other.read(w).unwrap()[..], &data[..4096]);
}

/// The DataNode address in a MiniDfs answer (`/127.0.0.1:port` or `host/127.0.0.1:port`).
fn datanode_addr(answer: &str) -> String {
    answer.rsplit('/').next().unwrap().to_string()
}

#[test]
fn a_damaged_replica_is_read_around_named_and_reported() {
    let Some(mut cluster) = MiniDfs::start(3).unwrap() else {
        return;
    };
    let fs = HdfsFileSystem::connect(cluster.url()).unwrap();
    let data = pattern(1 << 20, 11);
    let p = Path::new("/d/file.bin");
    let mut out = fs.create(p).unwrap();
    out.write_all(&data).unwrap();
    out.close().unwrap();
    assert_eq!(cluster.command("replicas /d/file.bin").unwrap(), "3");
    let damaged = cluster.corrupt_one_replica("/d/file.bin").unwrap();
    assert!(damaged.starts_with("1 "), "{damaged}");
    let bad_dn = datanode_addr(&damaged);
    assert_eq!(cluster.command("corrupt-replica-blocks").unwrap(), "0");

    // Reads without HDFS's checksums (as store files are read) return the damaged replica's
    // bytes as they are: the caller's own checksums must catch them. Its checksummed view reads
    // the same range again, verifying each replica, and names the bad one. A reader keeps the
    // NameNode's order of replicas, so fresh readers are opened until one starts at the
    // damaged replica.
    let before = hdfs_stats().checksum_failures.load(Ordering::Relaxed);
    let mut met = false;
    for _ in 0..40 {
        let src = fs.open_no_checksum(p).unwrap();
        if src.read_at(0, 4096).unwrap()[..] == data[..4096] {
            continue;
        }
        met = true;
        // A sequential run fills the read-ahead buffer from the damaged replica; a read inside
        // it is served from there.
        src.read_at(0, 16).unwrap();
        src.read_at(0, 16).unwrap();
        assert_ne!(&src.read_at(0, 4096).unwrap()[..], &data[..4096]);
        let checked = src.clone().fs_checksummed().expect("a checksummed view");
        assert_eq!(&checked.read_at(0, 4096).unwrap()[..], &data[..4096]);
        // Once a replica is found bad, read-ahead filled from it is dropped and this file's
        // reads go to the other replicas first, even without HDFS's checksums.
        assert_eq!(&src.read_at(0, 4096).unwrap()[..], &data[..4096]);
        assert_eq!(&src.read_at(100, 50).unwrap()[..], &data[100..150]);
        break;
    }
    assert!(
        met,
        "40 unverified reads never met the damaged replica ({damaged})"
    );
    assert!(hdfs_stats().checksum_failures.load(Ordering::Relaxed) > before);
    let bad = hdfs_stats().bad_replicas();
    let last = bad.last().expect("a bad replica recorded");
    assert_eq!(last.datanode, bad_dn, "{last}");
    assert_eq!(last.file, format!("{}/d/file.bin", cluster.url()));
    assert!(last.block.contains(":blk_"), "{last}");
    assert!(last.detail.contains("checksum mismatch"), "{last}");
    // The NameNode was told, as HDFS's own client tells it.
    let mut reported = String::new();
    for _ in 0..50 {
        reported = cluster.command("corrupt-replica-blocks").unwrap();
        if reported != "0" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(reported, "1");

    // Verified reads (fs.open) never return the damaged bytes, whichever replica comes first.
    for _ in 0..10 {
        let got = fs.open(p).unwrap().read_at(0, 4096).unwrap();
        assert_eq!(&got[..], &data[..4096]);
    }
}

#[test]
fn every_replica_damaged_is_an_error_not_wrong_bytes() {
    let Some(mut cluster) = MiniDfs::start(1).unwrap() else {
        return;
    };
    let fs = HdfsFileSystem::connect(cluster.url()).unwrap();
    let data = pattern(64 << 10, 5);
    let p = Path::new("/e/file.bin");
    let mut out = fs.create(p).unwrap();
    out.write_all(&data).unwrap();
    out.close().unwrap();
    cluster.corrupt_all_replicas("/e/file.bin").unwrap();
    let err = fs.open(p).unwrap().read_at(0, 4096).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("/e/file.bin") && msg.contains("no replica passed HDFS checksums"),
        "{msg}"
    );
    let err = fs
        .open_no_checksum(p)
        .unwrap()
        .fs_checksummed()
        .unwrap()
        .read_at(100, 10)
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData, "{err}");
    // Bytes past the damaged chunk are still readable.
    assert_eq!(
        &fs.open(p).unwrap().read_at(8192, 4096).unwrap()[..],
        &data[8192..12288]
    );
}

/// cairn-checksum's HDFS file checksums against HDFS's own `getFileChecksum` of the same
/// bytes: several 1 MiB blocks and a partial last one, both combine modes.
#[test]
fn hdfs_file_checksums_match_hdfs_itself() {
    use cairn_checksum::hdfs::{CombineMode, FileChecksumOptions, FileChecksummer};
    let Some(mut cluster) = MiniDfs::start(1).unwrap() else {
        return;
    };
    let fs = HdfsFileSystem::connect(cluster.url()).unwrap();
    for (name, len) in [("small", 1000usize), ("blocks", (3 << 20) + 12345)] {
        let data = pattern(len, len as u64);
        let path = format!("/sums/{name}");
        let mut out = fs.create(Path::new(&path)).unwrap();
        out.write_all(&data).unwrap();
        out.close().unwrap();
        for mode in [CombineMode::Md5Md5Crc, CombineMode::CompositeCrc] {
            let mut c = FileChecksummer::new(FileChecksumOptions {
                block_size: 1 << 20,
                combine_mode: mode,
                ..FileChecksumOptions::default()
            })
            .unwrap();
            // Fed in uneven pieces, as a reader would.
            for piece in data.chunks(7777) {
                c.update(piece);
            }
            let ours = c.finish();
            let theirs = cluster
                .command(&format!("checksum {} {path}", mode.name()))
                .unwrap();
            assert_eq!(
                format!("{} {}", ours.algorithm_name(), ours.hex()),
                theirs,
                "{path} ({} bytes), {}",
                len,
                mode.name()
            );
        }
    }
}
