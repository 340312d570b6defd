//! The fault layer's own tests.

use super::*;
use crate::LocalFileSystem;

fn setup() -> (tempfile::TempDir, Arc<FaultFileSystem>) {
    let dir = tempfile::tempdir().unwrap();
    (dir, FaultFileSystem::new(Arc::new(LocalFileSystem), 7))
}

fn on_disk(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

#[test]
fn a_crash_keeps_what_was_synced_and_drops_the_rest() {
    let (dir, fs) = setup();
    let p = dir.path().join("a/f");
    let mut out = fs.create(&p).unwrap();
    out.write_all(b"abc").unwrap();
    out.hsync().unwrap();
    out.write_all(b"def").unwrap();
    assert_eq!(on_disk(&p), b"abc", "unflushed bytes wait in the layer");
    out.hflush().unwrap();
    assert_eq!(on_disk(&p), b"abcdef", "flushed bytes are visible");
    assert_eq!(fs.unsynced_bytes(&p), Some(3));
    let report = fs.crash().unwrap();
    assert_eq!(report.truncated, 1);
    assert_eq!(report.bytes_dropped, 3);
    assert_eq!(on_disk(&p), b"abc");
    // The writer belonged to the crashed process.
    assert!(out.write_all(b"x").is_err());
    assert!(out.hsync().is_err());
    assert_eq!(on_disk(&p), b"abc");
    // A file never synced is empty after a crash; a closed one is not synced by closing.
    let q = dir.path().join("a/g");
    let mut out = fs.create(&q).unwrap();
    out.write_all(b"zzz").unwrap();
    out.close().unwrap();
    assert_eq!(on_disk(&q), b"zzz");
    fs.crash().unwrap();
    assert_eq!(on_disk(&q), b"");
    assert_eq!(fs.uri(), "fault+file://");
}

#[test]
fn a_failed_hsync_loses_its_bytes_even_after_a_later_one_succeeds() {
    let (dir, fs) = setup();
    let p = dir.path().join("wal");
    let mut out = fs.create(&p).unwrap();
    out.write_all(b"aaa").unwrap();
    out.hsync().unwrap();
    fs.add_rule(FaultRule::new(FaultOp::Hsync, Fault::Io).times(1));
    out.write_all(b"bbb").unwrap();
    let e = out.hsync().unwrap_err();
    assert_eq!(e.raw_os_error(), None, "wrapped, with the path: {e}");
    assert!(e.to_string().contains("wal"), "{e}");
    assert_eq!(on_disk(&p), b"aaabbb", "readers still see the bytes");
    out.write_all(b"ccc").unwrap();
    out.hsync().unwrap();
    fs.crash().unwrap();
    assert_eq!(on_disk(&p), b"aaa\0\0\0ccc");
}

#[test]
fn hflushed_bytes_survive_a_crash_only_on_the_paths_named() {
    let (dir, fs) = setup();
    let wal = dir.path().join("WALs-1");
    let other = dir.path().join("store");
    for p in [&wal, &other] {
        let mut out = fs.create(p).unwrap();
        out.write_all(b"aaa").unwrap();
        out.hsync().unwrap();
        out.write_all(b"bbb").unwrap();
        out.hflush().unwrap();
        std::mem::forget(out);
    }
    fs.set_hflush_survives(Some("WALs"));
    let mut out = fs.create(&wal.with_extension("2")).unwrap();
    out.write_all(b"ccc").unwrap();
    out.hflush().unwrap();
    std::mem::forget(out);
    fs.crash().unwrap();
    assert_eq!(on_disk(&other), b"aaa", "hflushed only: lost");
    assert_eq!(
        on_disk(&wal),
        b"aaa",
        "hflushed before the mode was set: lost"
    );
    assert_eq!(
        on_disk(&wal.with_extension("2")),
        b"ccc",
        "hflushed on a named path: kept"
    );
}

#[test]
fn a_full_disk_refuses_creates_and_writes_until_freed() {
    let (dir, fs) = setup();
    let p = dir.path().join("f");
    let mut out = fs.create(&p).unwrap();
    fs.set_full(true);
    let e = fs.create(&dir.path().join("g")).err().unwrap();
    assert_eq!(e.kind(), io::ErrorKind::StorageFull, "{e}");
    assert_eq!(
        out.write(b"x").unwrap_err().kind(),
        io::ErrorKind::StorageFull
    );
    assert!(fs.mkdirs(&dir.path().join("d")).is_err());
    // Deleting still works on a full disk.
    assert!(fs.delete(&p).unwrap());
    fs.set_full(false);
    out.write_all(b"x").unwrap();
    fs.create(&dir.path().join("g")).unwrap();
    assert!(fs.injected() >= 3);
}

#[test]
fn a_deactivated_disk_fails_everything_until_reactivated() {
    let (dir, fs) = setup();
    let p = dir.path().join("f");
    fs.write_atomic(&p, b"kept").unwrap();
    let mut out = fs.create(&dir.path().join("g")).unwrap();
    fs.deactivate(io::Error::other("gone"));
    assert!(fs.open(&p).is_err());
    assert!(fs.status(&p).is_err());
    assert!(fs.delete(&p).is_err());
    assert!(out.write(b"x").is_err());
    assert!(out.hflush().is_err());
    assert!(fs.rename(&p, &dir.path().join("h")).is_err());
    fs.reactivate();
    assert_eq!(fs.read(&p).unwrap(), b"kept");
    fs.deactivate_after(2, io::Error::other("later"));
    fs.status(&p).unwrap();
    fs.status(&p).unwrap();
    assert!(fs.status(&p).is_err());
    assert!(fs.status(&p).is_err());
}

#[test]
fn short_and_partial_writes() {
    let (dir, fs) = setup();
    let p = dir.path().join("f");
    let mut out = fs.create(&p).unwrap();
    fs.add_rule(FaultRule::new(FaultOp::Write, Fault::ShortWrite).times(1));
    assert_eq!(out.write(b"0123456789").unwrap(), 5);
    fs.add_rule(FaultRule::new(FaultOp::Write, Fault::ShortWrite).times(2));
    out.write_all(b"abcdefgh").unwrap(); // write_all carries on after short writes
    fs.add_rule(FaultRule::new(FaultOp::Write, Fault::PartialWrite).times(1));
    let e = out.write_all(b"WXYZ").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::StorageFull);
    out.hsync().unwrap();
    assert_eq!(on_disk(&p), b"01234abcdefghWX");
    fs.add_rule(FaultRule::new(FaultOp::Create, Fault::QuotaExceeded).times(1));
    let e = fs.create(&dir.path().join("g")).err().unwrap();
    assert_eq!(e.kind(), io::ErrorKind::QuotaExceeded, "{e}");
    fs.create(&dir.path().join("g")).unwrap();
    fs.add_rule(FaultRule::new(FaultOp::Delete, Fault::Stall(30)).times(1));
    let started = std::time::Instant::now();
    assert!(
        fs.delete(&dir.path().join("g")).unwrap(),
        "a stall is no error"
    );
    assert!(started.elapsed() >= std::time::Duration::from_millis(30));
}

#[test]
fn path_filters_and_reads() {
    let (dir, fs) = setup();
    let p = dir.path().join("store/file");
    fs.write_atomic(&p, b"data").unwrap();
    fs.add_rule(FaultRule::new(FaultOp::Read, Fault::Io).on_paths_containing("store"));
    let e = fs.read(&p).unwrap_err();
    assert!(e.to_string().contains("Input/output error"), "{e}");
    fs.write_atomic(&dir.path().join("other"), b"x").unwrap();
    assert_eq!(fs.read(&dir.path().join("other")).unwrap(), b"x");
    fs.clear_rules();
    let src = fs.open(&p).unwrap();
    fs.add_rule(FaultRule::new(FaultOp::Read, Fault::Io).times(1));
    assert!(src.read_at(0, 4).is_err(), "positional reads fail too");
    assert_eq!(&src.read_at(0, 4).unwrap()[..], b"data");
}

/// Which of 200 writes fail under a one-in-five rule.
fn failures(seed: u64) -> Vec<bool> {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFileSystem::new(Arc::new(LocalFileSystem), seed);
    let mut out = fs.create(&dir.path().join("f")).unwrap();
    fs.add_rule(FaultRule::new(FaultOp::Write, Fault::Io).one_in(5));
    (0..200).map(|_| out.write(b"x").is_err()).collect()
}

#[test]
fn random_faults_replay_from_their_seed() {
    let a = failures(1);
    assert_eq!(a, failures(1));
    assert_ne!(a, failures(2));
    let n = a.iter().filter(|f| **f).count();
    assert!((15..=70).contains(&n), "{n} of 200 failed at one in five");
}

#[test]
fn strict_directories_undo_creates_and_renames_not_synced() {
    let (dir, fs) = setup();
    fs.set_strict_dirs(true);
    let d = dir.path();
    std::fs::write(d.join("old"), b"durable").unwrap();
    let write = |name: &str| {
        let mut out = fs.create(&d.join(name)).unwrap();
        out.write_all(name.as_bytes()).unwrap();
        out.hsync().unwrap();
        out.close().unwrap();
    };
    write("kept");
    fs.sync_dir(d).unwrap();
    write("lost");
    fs.rename(&d.join("old"), &d.join("moved")).unwrap();
    let report = fs.crash().unwrap();
    assert_eq!(report.files_removed, 1);
    assert_eq!(report.renames_undone, 1);
    assert_eq!(on_disk(&d.join("kept")), b"kept");
    assert!(!d.join("lost").exists());
    assert!(!d.join("moved").exists());
    assert_eq!(on_disk(&d.join("old")), b"durable");
    // write_atomic syncs the directory: it survives.
    fs.write_atomic(&d.join("atomic"), b"1").unwrap();
    fs.crash().unwrap();
    assert_eq!(on_disk(&d.join("atomic")), b"1");
}

#[test]
fn strict_directories_undo_directories_made_or_renamed_without_a_sync() {
    let (dir, fs) = setup();
    fs.set_strict_dirs(true);
    let d = dir.path();
    // A file synced, in its synced directory, in directories whose names never were.
    fs.mkdirs(&d.join("a/b")).unwrap();
    let mut out = fs.create(&d.join("a/b/c/f")).unwrap();
    out.write_all(b"x").unwrap();
    out.hsync().unwrap();
    out.close().unwrap();
    fs.sync_dir(&d.join("a/b/c")).unwrap();
    fs.sync_dir(&d.join("a/b")).unwrap();
    // A durable directory renamed, its rename not synced (in a directory of its own:
    // syncing `d` would make `a` durable too).
    std::fs::create_dir(d.join("kept")).unwrap();
    fs.mkdirs_durable(&d.join("kept/sub")).unwrap();
    fs.write_atomic(&d.join("kept/sub/g"), b"g").unwrap();
    fs.rename(&d.join("kept/sub"), &d.join("kept/moved"))
        .unwrap();
    assert!(d.join("kept/moved/g").exists());
    let report = fs.crash().unwrap();
    assert!(!d.join("a").exists(), "a's name was never synced");
    assert_eq!(report.dirs_removed, 1, "{report:?}");
    assert_eq!(report.renames_undone, 1, "{report:?}");
    assert_eq!(on_disk(&d.join("kept/sub/g")), b"g");
    assert!(!d.join("kept/moved").exists());
    // mkdirs_durable syncs every new name's parent: all of it survives.
    fs.mkdirs_durable(&d.join("p/q/r")).unwrap();
    fs.write_atomic(&d.join("p/q/r/h"), b"h").unwrap();
    fs.crash().unwrap();
    assert_eq!(on_disk(&d.join("p/q/r/h")), b"h");
}
