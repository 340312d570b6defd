//! Bulk load at the server: routing a load to its region, and the staging directories of
//! HBase's secure bulk load (`SecureBulkLoadManager`) that `PrepareBulkLoad`,
//! `BulkLoadHFile` with a token and `CleanupBulkLoad` use.

use std::path::Component;

use super::*;

/// `<hbase.rootdir>/staging`: where bulk-load staging directories go
/// (`HConstants.BULKLOAD_STAGING_DIR_NAME`).
pub const STAGING_DIR: &str = "staging";

/// A path as a client sends it (`file:/x`, `file:///x`, `hdfs://nn:8020/x` or `/x`) as a path
/// on the server's filesystem: the scheme and authority dropped.
pub fn fs_path(s: &str) -> PathBuf {
    if let Some(rest) = s.strip_prefix("file:") {
        // `file:///x` and `file:/x` both mean `/x`.
        let trimmed = rest.trim_start_matches('/');
        return PathBuf::from(format!("/{trimmed}"));
    }
    if let Some((scheme, rest)) = s.split_once("://") {
        if !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric()) {
            return PathBuf::from(match rest.find('/') {
                Some(i) => &rest[i..],
                None => "/",
            });
        }
    }
    PathBuf::from(s)
}

/// HBase's staging directory name: `<user>__<table, ':' as '_'>__<random 320-bit number in
/// radix 32>` (SecureBulkLoadManager.prepareBulkLoad).
fn staging_name(user: &str, table: &TableName) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuv";
    // 320 bits are exactly 64 radix-32 digits; like BigInteger.toString, no leading zeros.
    let digits: String = (0..64)
        .map(|_| DIGITS[rand::random::<u8>() as usize % 32] as char)
        .collect();
    let digits = digits.trim_start_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    format!("{user}__{}__{digits}", table.to_string().replace(':', "_"))
}

/// A file a bulk load will read: the path the client gave, and the same file with every link
/// resolved, which is what the load moves or copies.
struct Source {
    given: PathBuf,
    real: PathBuf,
}

impl RegionServer {
    /// Loads HFiles into the region named `region` (full or encoded name) at once
    /// ([`Region::bulk_load_hfiles`]): `Ok(false)`, nothing loaded, when a file does not fit
    /// the region. The files must be in a directory listed in `cairn.bulkload.source.dirs`
    /// ([`ServerConfig::bulk_load_source_dirs`]). A compaction is queued after a load that
    /// leaves a store needing one (`hbase.compaction.after.bulkload.enable`).
    pub fn bulk_load_hfiles(
        &self,
        region: &[u8],
        family_paths: &[(Vec<u8>, PathBuf)],
        assign_seq_num: bool,
        copy: bool,
    ) -> Result<bool> {
        let (_, r) = self.region_by_name(region)?;
        self.load_checked(&r, family_paths, assign_seq_num, copy)
    }

    /// [`bulk_load_hfiles`](Self::bulk_load_hfiles) into the region of `table` holding `row`.
    pub fn bulk_load_hfiles_at(
        &self,
        table: &TableName,
        row: &[u8],
        family_paths: &[(Vec<u8>, PathBuf)],
        assign_seq_num: bool,
        copy: bool,
    ) -> Result<bool> {
        let t = self.enabled_table(table)?;
        let r = t.region_for(row).clone();
        self.load_checked(&r, family_paths, assign_seq_num, copy)
    }

    /// A load without a staging directory: every file from a listed source directory.
    fn load_checked(
        &self,
        r: &Arc<Region>,
        family_paths: &[(Vec<u8>, PathBuf)],
        assign_seq_num: bool,
        copy: bool,
    ) -> Result<bool> {
        let mut checked = Vec::with_capacity(family_paths.len().min(1024));
        for (family, path) in family_paths {
            check_bulk_load_family(r, family)?;
            checked.push((family.clone(), self.bulk_load_source(path, None)?.real));
        }
        let loaded = r.bulk_load_hfiles(&checked, assign_seq_num, copy)?;
        if loaded {
            self.after_bulk_load(r);
        }
        Ok(loaded)
    }

    fn after_bulk_load(&self, r: &Arc<Region>) {
        if r.needs_compaction() {
            if let Some(tx) = &self.compact_tx {
                let _ = tx.send(background::Work::Compact(r.clone(), false));
            }
        }
    }

    /// `<root>/staging`, where `PrepareBulkLoad` makes its directories.
    fn staging_dir(&self) -> PathBuf {
        self.config.root.join(STAGING_DIR)
    }

    /// The one rule for the files a bulk load reads (HBase's `SecureBulkLoadManager` relies
    /// on HDFS permissions for it; a server on local disk has only this): a regular file, given
    /// as an absolute path without `.` or `..`, that lies — links resolved — in this load's
    /// staging directory `token` or in a directory the operator listed in
    /// `cairn.bulkload.source.dirs`, and never anywhere else under the root or the WAL
    /// directory, so no load can take another table's store file, a WAL or another load's
    /// staged files.
    fn bulk_load_source(&self, given: &Path, token: Option<&Path>) -> Result<Source> {
        let refuse = |why: String| {
            RegionError::InvalidArgument(format!("bulk load source {}: {why}", given.display()))
        };
        let plain = given.is_absolute()
            && given
                .components()
                .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
        if !plain {
            return Err(refuse("not an absolute path free of '.' and '..'".into()));
        }
        let fs = self.config.fs();
        let real_of = |p: &Path| fs.canonicalize(p).map_err(|e| RegionError::io(p, e));
        let real = real_of(given)?;
        if fs
            .status(&real)
            .map_err(|e| RegionError::io(&real, e))?
            .is_dir
        {
            return Err(refuse("a directory, not a file".into()));
        }
        let inside = |dir: &Path| fs.canonicalize(dir).is_ok_and(|d| real.starts_with(d));
        let staged = token.is_some_and(&inside);
        let (wal_fs, wal_loc) = self.config.wal_location();
        let in_wal = wal_fs.uri() == fs.uri() && inside(&wal_loc.root);
        if !staged && (inside(&self.config.root) || in_wal) {
            return Err(refuse(format!(
                "it is inside the server's own files ({}); a load reads there only from the staging directory PrepareBulkLoad gave it",
                real.display()
            )));
        }
        if !staged && !self.config.bulk_load_source_dirs.iter().any(|d| inside(d)) {
            return Err(refuse(format!(
                "outside {} and the directories listed in cairn.bulkload.source.dirs ({}); stage the file there or ask the operator to list its directory",
                token.map_or_else(
                    || "the staging directory of a PrepareBulkLoad".to_string(),
                    |t| t.display().to_string()
                ),
                if self.config.bulk_load_source_dirs.is_empty() {
                    "none".to_string()
                } else {
                    self.config
                        .bulk_load_source_dirs
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            )));
        }
        Ok(Source {
            given: given.to_path_buf(),
            real,
        })
    }

    /// A bulk token as a staging directory of this server: `<root>/staging/<one name>`, and
    /// there.
    fn staging_token(&self, token: &Path) -> Result<PathBuf> {
        let staging = self.staging_dir();
        let name = token
            .strip_prefix(&staging)
            .ok()
            .and_then(|rest| rest.to_str())
            .filter(|rest| !rest.is_empty());
        let refuse = || {
            RegionError::InvalidArgument(format!(
                "bulk token {} is not a staging directory under {}",
                token.display(),
                staging.display()
            ))
        };
        let dir = names::child(&staging, name.ok_or_else(refuse)?).map_err(|_| refuse())?;
        Ok(dir)
    }

    /// HBase's `PrepareBulkLoad`: creates a fresh staging directory
    /// `<root>/staging/<user>__<table>__<random>` and returns its path (the bulk token).
    pub fn prepare_bulk_load(&self, table: &TableName, user: &str) -> Result<PathBuf> {
        self.table(table)?;
        let fs = self.config.fs();
        // The user name is the caller's claim: one that would not make a plain directory name
        // is not used in it.
        let user = if user.is_empty() || user.contains(['/', '\\', '\0']) {
            "cairn"
        } else {
            user
        };
        let dir = names::child(&self.staging_dir(), &staging_name(user, table))?;
        fs.mkdirs(&dir).map_err(|e| RegionError::io(&dir, e))?;
        Ok(dir)
    }

    /// HBase's `BulkLoadHFile` with a bulk token: moves (or copies, with `copy`) each file
    /// into `<token>/<family>/` first, then loads from there with a sequence id assigned (as
    /// HBase's secure path always does). Every family and file is checked before anything
    /// moves ([`bulk_load_source`](Self::bulk_load_source)); nothing already in the staging
    /// directory is replaced, and when the load does not happen each file goes back where it
    /// was (a copy is deleted).
    pub fn bulk_load_staged(
        &self,
        token: &Path,
        region: &[u8],
        family_paths: &[(Vec<u8>, PathBuf)],
        copy: bool,
    ) -> Result<bool> {
        let token = self.staging_token(token)?;
        let (_, r) = self.region_by_name(region)?;
        let fs = self.config.fs();
        if !fs.exists(&token).map_err(|e| RegionError::io(&token, e))? {
            return Err(RegionError::InvalidArgument(format!(
                "bulk token {} names no staging directory (cleaned up already?)",
                token.display()
            )));
        }
        let mut sources = Vec::with_capacity(family_paths.len().min(1024));
        for (family, path) in family_paths {
            check_bulk_load_family(&r, family)?;
            sources.push((family, self.bulk_load_source(path, Some(&token))?));
        }
        // (family, where the file was, where it is staged, moved rather than copied)
        let mut staged: Vec<(Vec<u8>, PathBuf, PathBuf, bool)> = Vec::new();
        let result = (|| -> Result<bool> {
            for (family, src) in &sources {
                let name = src.real.file_name().ok_or_else(|| {
                    RegionError::InvalidArgument(format!(
                        "bulk load path {} names no file",
                        src.given.display()
                    ))
                })?;
                let fdir = names::child(&token, &String::from_utf8_lossy(family))?;
                let to = fdir.join(name);
                if src.real == to {
                    // The client staged it itself (HBase's documented secure path).
                    staged.push((family.to_vec(), src.real.clone(), to, false));
                    continue;
                }
                fs.mkdirs(&fdir).map_err(|e| RegionError::io(&fdir, e))?;
                let renamed = if copy {
                    copy_file(&**fs, &src.real, &to)?;
                    false
                } else {
                    fs.rename_no_replace(&src.real, &to)
                        .map_err(|e| RegionError::io(&src.real, e))?;
                    true
                };
                staged.push((family.to_vec(), src.real.clone(), to, renamed));
            }
            let paths: Vec<(Vec<u8>, PathBuf)> = staged
                .iter()
                .map(|(f, _, to, _)| (f.clone(), to.clone()))
                .collect();
            r.bulk_load_hfiles(&paths, true, false)
        })();
        if matches!(result, Ok(true)) {
            self.after_bulk_load(&r);
        } else {
            // HBase's SecureBulkLoadListener.failedBulkLoad: the caller gets its files back.
            for (_, src, to, renamed) in &staged {
                if *renamed {
                    if let Err(e) = fs.rename_no_replace(to, src) {
                        tracing::warn!(
                            "bulk load failed and its file {} could not go back to {}: {e}; it stays staged",
                            to.display(),
                            src.display()
                        );
                    }
                } else if src != to {
                    let _ = fs.delete(to);
                }
            }
        }
        result
    }

    /// HBase's `CleanupBulkLoad`: deletes the staging directory; `Failed to clean up <path>`
    /// if it is still there after.
    pub fn cleanup_bulk_load(&self, token: &Path) -> Result<()> {
        let token = self.staging_token(token)?;
        let fs = self.config.fs();
        let _ = fs.delete(&token);
        if fs.exists(&token).map_err(|e| RegionError::io(&token, e))? {
            return Err(RegionError::InvalidArgument(format!(
                "Failed to clean up {}",
                token.display()
            )));
        }
        Ok(())
    }
}

/// A family of the region's table, by HBase's rule: `No such column family <f>` before any
/// file moves.
fn check_bulk_load_family(r: &Region, family: &[u8]) -> Result<()> {
    names::check_family(family)?;
    if r.store(family).is_none() {
        return Err(RegionError::InvalidArgument(format!(
            "No such column family {}",
            String::from_utf8_lossy(family)
        )));
    }
    Ok(())
}

/// Copies `from` to a new file `to` on `fs`, synced; never replaces a file at `to`.
fn copy_file(fs: &dyn FileSystem, from: &Path, to: &Path) -> Result<()> {
    let mut out = fs.create_new(to).map_err(|e| RegionError::io(to, e))?;
    let io = (|| -> std::io::Result<()> {
        let src = fs.open(from)?;
        let len = src.len();
        let mut at = 0u64;
        while at < len {
            let n = (len - at).min(8 << 20) as usize;
            std::io::Write::write_all(&mut out, &src.read_at(at, n)?)?;
            at += n as u64;
        }
        out.hsync()?;
        out.close()
    })();
    io.map_err(|e| {
        let _ = fs.delete(to);
        RegionError::io(from, e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_paths_lose_their_scheme() {
        assert_eq!(fs_path("file:/tmp/a/b"), PathBuf::from("/tmp/a/b"));
        assert_eq!(fs_path("file:///tmp/a"), PathBuf::from("/tmp/a"));
        assert_eq!(fs_path("hdfs://nn:8020/hbase/x"), PathBuf::from("/hbase/x"));
        assert_eq!(fs_path("/plain/p"), PathBuf::from("/plain/p"));
        assert_eq!(fs_path("rel/p"), PathBuf::from("rel/p"));
    }

    #[test]
    fn staging_names_follow_hbase() {
        let t = TableName::parse("ns:t1").unwrap();
        let n = staging_name("alice", &t);
        let rest = n.strip_prefix("alice__ns_t1__").unwrap();
        assert!(!rest.is_empty() && rest.len() <= 64, "{n}");
        assert!(rest
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'v').contains(&b)));
        assert_ne!(n, staging_name("alice", &t));
    }
}
