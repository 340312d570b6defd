//! Archiving flushed WAL files to `<wal root>/oldWALs/` (HBase's `AbstractFSWAL.archive`), and
//! deleting cairn's own archived files once they are older than the archive TTL (what HBase's
//! master does with `TimeToLiveLogCleaner`). Written once for both backends.

use std::io;
use std::path::Path;
use std::time::Duration;

use cairn_fs::FileSystem;

use crate::names;
use crate::WalError;

fn io_err(op: &'static str, path: &Path) -> impl FnOnce(io::Error) -> WalError {
    let path = path.to_path_buf();
    move |source| WalError::Io {
        op,
        path,
        offset: 0,
        source,
    }
}

/// Moves `file` into `archive` under its own name. A file already gone is not an error (the
/// archive may have it from an earlier try); a dead server's directory emptied by the move
/// is removed, as HBase removes a split server's directory. Returns whether the file moved.
pub(crate) fn archive_file(
    fs: &dyn FileSystem,
    file: &Path,
    archive: &Path,
    own_dir: &Path,
) -> Result<bool, WalError> {
    let Some(name) = file.file_name() else {
        return Ok(false);
    };
    fs.mkdirs(archive)
        .map_err(io_err("create the archive directory", archive))?;
    let to = archive.join(name);
    match fs.rename(file, &to) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) if fs.exists(&to).unwrap_or(false) => {
            // HDFS does not replace: a file archived before (a retry after a crash) goes
            // first. Both hold the same flushed edits.
            let _ = e;
            fs.delete(&to)
                .map_err(io_err("replace in the archive", &to))?;
            fs.rename(file, &to).map_err(io_err("archive", file))?;
        }
        Err(e) => return Err(io_err("archive", file)(e)),
    }
    if let Some(dir) = file.parent().filter(|d| *d != own_dir) {
        let dir_is_a_wal_dir = dir
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(names::ServerName::from_wal_dir_name)
            .is_some();
        if dir_is_a_wal_dir && fs.list(dir).is_ok_and(|l| l.is_empty()) {
            let _ = fs.delete(dir);
        }
    }
    Ok(true)
}

/// Deletes the files in `archive` whose names start with `prefix.` (one server's WAL files)
/// and that were last modified more than `ttl` before `now_ms`. Other files are left alone:
/// HBase's, and other servers'. Returns how many went.
pub(crate) fn clean_archive(
    fs: &dyn FileSystem,
    archive: &Path,
    prefix: &str,
    ttl: Duration,
    now_ms: u64,
) -> Result<usize, WalError> {
    let entries = match fs.list(archive) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io_err("list", archive)(e)),
    };
    let mut removed = 0;
    let cutoff = now_ms.saturating_sub(ttl.as_millis() as u64) as i64;
    for e in entries {
        let ours = e
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(names::parse_wal_file_name)
            .is_some_and(|n| n.prefix == prefix);
        if ours && !e.is_dir && e.modified_ms > 0 && e.modified_ms < cutoff {
            fs.delete(&e.path)
                .map_err(io_err("delete an expired archived WAL", &e.path))?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_fs::LocalFileSystem;

    #[test]
    fn archiving_moves_files_and_removes_emptied_dead_directories() {
        let root = tempfile::tempdir().unwrap();
        let fs = LocalFileSystem;
        let own = root.path().join("WALs/me,1,1");
        let dead = root.path().join("WALs/dead,1,1");
        let archive = root.path().join("oldWALs");
        for d in [&own, &dead] {
            std::fs::create_dir_all(d).unwrap();
        }
        let files = [
            own.join("me%2C1%2C1.5"),
            dead.join("dead%2C1%2C1.3"),
            dead.join("dead%2C1%2C1.4"),
        ];
        for f in &files {
            std::fs::write(f, b"x").unwrap();
        }
        assert!(archive_file(&fs, &files[0], &archive, &own).unwrap());
        assert!(archive.join("me%2C1%2C1.5").exists() && own.exists());
        assert!(archive_file(&fs, &files[1], &archive, &own).unwrap());
        assert!(dead.exists(), "one file left in it");
        assert!(archive_file(&fs, &files[2], &archive, &own).unwrap());
        assert!(!dead.exists(), "emptied");
        assert!(
            !archive_file(&fs, &files[2], &archive, &own).unwrap(),
            "gone already"
        );

        std::fs::write(archive.join("hbase%2C1%2C1.7"), b"x").unwrap();
        let now = crate::ledger::now_ms();
        assert_eq!(
            clean_archive(&fs, &archive, "me%2C1%2C1", Duration::from_secs(60), now).unwrap(),
            0
        );
        let later = now + 120_000;
        assert_eq!(
            clean_archive(&fs, &archive, "me%2C1%2C1", Duration::from_secs(60), later).unwrap(),
            1
        );
        assert!(!archive.join("me%2C1%2C1.5").exists());
        assert!(archive.join("dead%2C1%2C1.3").exists(), "another server's");
        assert!(archive.join("hbase%2C1%2C1.7").exists(), "HBase's");
    }
}
