//! The local filesystem.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use crate::direct::DirectOutput;
use crate::{FileStatus, FileSystem, FsOutput, RawSource};

/// A local file read with `pread`.
pub struct LocalFile {
    file: File,
    len: u64,
}

impl LocalFile {
    /// Opens `path`.
    pub fn open(path: impl AsRef<Path>) -> io::Result<LocalFile> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Ok(LocalFile { file, len })
    }
}

impl RawSource for LocalFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        use std::os::unix::fs::FileExt;
        let mut buf = vec![0u8; len];
        self.file.read_exact_at(&mut buf, offset)?;
        Ok(Bytes::from(buf))
    }
}

/// `renameat2(from, to, RENAME_NOREPLACE)`.
fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path holds a NUL byte"))
    };
    let (from_c, to_c) = (c(from)?, c(to)?);
    // SAFETY: both pointers are NUL-terminated strings that live across the call; AT_FDCWD
    // makes relative paths relative to the working directory, as `rename` does.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from_c.as_ptr(),
            libc::AT_FDCWD,
            to_c.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn modified_ms(meta: &fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64)
}

/// Bytes an unprivileged writer may still add on the filesystem holding `path` (`statvfs`:
/// available blocks times the fragment size), the nearest existing ancestor of `path` asked
/// when it does not exist yet.
pub fn free_space(path: &Path) -> io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let mut at = path;
    while !at.exists() {
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p,
            _ => break,
        }
    }
    let c = std::ffi::CString::new(at.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path holds a NUL byte"))?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c` is a NUL-terminated string alive across the call, and `st` points to memory
    // large enough for one `statvfs`, which the call fills entirely when it returns 0.
    let rc = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statvfs returned 0, so it initialised `st`.
    let st = unsafe { st.assume_init() };
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// The local filesystem (`file://`).
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalFileSystem;

/// A local file being written, buffered.
struct LocalOutput {
    out: io::BufWriter<File>,
}

impl Write for LocalOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl FsOutput for LocalOutput {
    fn hflush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn hsync(&mut self) -> io::Result<()> {
        self.out.flush()?;
        self.out.get_ref().sync_all()
    }

    fn close(mut self: Box<Self>) -> io::Result<()> {
        self.out.flush()
    }
}

impl FileSystem for LocalFileSystem {
    fn uri(&self) -> String {
        "file://".to_string()
    }

    fn free_space(&self, path: &Path) -> io::Result<Option<u64>> {
        free_space(path).map(Some)
    }

    fn open(&self, path: &Path) -> io::Result<Arc<dyn RawSource>> {
        Ok(Arc::new(LocalFile::open(path)?))
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn FsOutput>> {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        let file = File::create(path)?;
        Ok(Box::new(LocalOutput {
            out: io::BufWriter::with_capacity(1 << 20, file),
        }))
    }

    /// `O_DIRECT` where the filesystem supports it (see `direct.rs`), else [`create`].
    ///
    /// [`create`]: FileSystem::create
    fn create_direct(&self, path: &Path) -> io::Result<Box<dyn FsOutput>> {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        match DirectOutput::create(path)? {
            Some(out) => Ok(Box::new(out)),
            None => self.create(path),
        }
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FsOutput>> {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        let file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)?;
        Ok(Box::new(LocalOutput {
            out: io::BufWriter::with_capacity(1 << 20, file),
        }))
    }

    /// `renameat2(RENAME_NOREPLACE)`; where the filesystem lacks it, a hard link (which
    /// never replaces) and an unlink of the old name.
    fn rename_no_replace(&self, from: &Path, to: &Path) -> io::Result<()> {
        match rename_noreplace(from, to) {
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) => {
                fs::hard_link(from, to)?;
                fs::remove_file(from)
            }
            r => r,
        }
    }

    fn sync_file(&self, path: &Path) -> io::Result<()> {
        File::open(path)?.sync_all()
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        fs::canonicalize(path)
    }

    fn delete(&self, path: &Path) -> io::Result<bool> {
        let meta = match fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        };
        if meta.is_dir() {
            fs::remove_dir_all(path)?;
        } else {
            fs::remove_file(path)?;
        }
        Ok(true)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<FileStatus>> {
        let mut out = Vec::new();
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let meta = entry.metadata()?;
            out.push(FileStatus {
                path: entry.path(),
                len: meta.len(),
                is_dir: meta.is_dir(),
                modified_ms: modified_ms(&meta),
            });
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn mkdirs(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }

    fn status(&self, path: &Path) -> io::Result<FileStatus> {
        let meta = fs::metadata(path)?;
        Ok(FileStatus {
            path: path.to_path_buf(),
            len: meta.len(),
            is_dir: meta.is_dir(),
            modified_ms: modified_ms(&meta),
        })
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_space_matches_df_and_answers_for_paths_not_made_yet() {
        let dir = tempfile::tempdir().unwrap();
        let ours = free_space(dir.path()).unwrap();
        let df = std::process::Command::new("df")
            .args(["-B1", "--output=avail"])
            .arg(dir.path())
            .output()
            .unwrap();
        let theirs: u64 = String::from_utf8_lossy(&df.stdout)
            .lines()
            .nth(1)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Other writers on the machine move it between the two calls.
        assert!(ours.abs_diff(theirs) < 64 << 20, "{ours} vs df {theirs}");
        let later = free_space(&dir.path().join("not/yet")).unwrap();
        assert!(later.abs_diff(ours) < 64 << 20);
    }

    #[test]
    fn local_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let fs = LocalFileSystem;
        let p = dir.path().join("a/b/c.bin");
        let mut out = fs.create(&p).unwrap();
        out.write_all(b"0123456789").unwrap();
        out.hsync().unwrap();
        out.close().unwrap();
        let src = fs.open(&p).unwrap();
        assert_eq!(src.len(), 10);
        assert_eq!(&src.read_at(2, 3).unwrap()[..], b"234");
        assert!(src.read_at(8, 3).is_err());

        let q = dir.path().join("a/b/d.bin");
        fs.rename(&p, &q).unwrap();
        assert!(!fs.exists(&p).unwrap());
        assert_eq!(fs.read(&q).unwrap(), b"0123456789");
        fs.write_atomic(&q, b"new").unwrap();
        assert_eq!(fs.read(&q).unwrap(), b"new");

        let listed = fs.list(&dir.path().join("a/b")).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].len, 3);
        assert!(fs.list(&dir.path().join("nope")).unwrap_err().kind() == io::ErrorKind::NotFound);

        assert!(fs.delete(&dir.path().join("a")).unwrap());
        assert!(!fs.delete(&dir.path().join("a")).unwrap());
        assert!(!fs.exists(&q).unwrap());
    }

    #[test]
    fn no_replace_operations_never_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let fs = LocalFileSystem;
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, b"mine").unwrap();
        std::fs::write(&b, b"theirs").unwrap();
        let e = fs.create_new(&b).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        let e = fs.rename_no_replace(&a, &b).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&b).unwrap(), b"theirs");
        assert_eq!(std::fs::read(&a).unwrap(), b"mine");
        let c = dir.path().join("c");
        fs.rename_no_replace(&a, &c).unwrap();
        assert!(!a.exists());
        let mut out = fs.create_new(&a).unwrap();
        out.write_all(b"x").unwrap();
        out.close().unwrap();
        fs.sync_file(&a).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"x");
        std::os::unix::fs::symlink(&c, dir.path().join("link")).unwrap();
        assert_eq!(
            fs.canonicalize(&dir.path().join("link")).unwrap(),
            std::fs::canonicalize(&c).unwrap()
        );
    }
}
