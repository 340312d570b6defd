//! Bulk load at the server: routing a load to its region, and the staging directories of
//! HBase's secure bulk load (`SecureBulkLoadManager`) that `PrepareBulkLoad`,
//! `BulkLoadHFile` with a token and `CleanupBulkLoad` use.

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

impl RegionServer {
    /// Loads HFiles into the region named `region` (full or encoded name) at once
    /// ([`Region::bulk_load_hfiles`]): `Ok(false)`, nothing loaded, when a file does not fit
    /// the region. A compaction is queued after a load that leaves a store needing one
    /// (`hbase.compaction.after.bulkload.enable`).
    pub fn bulk_load_hfiles(
        &self,
        region: &[u8],
        family_paths: &[(Vec<u8>, PathBuf)],
        assign_seq_num: bool,
        copy: bool,
    ) -> Result<bool> {
        let (_, r) = self.region_by_name(region)?;
        let loaded = r.bulk_load_hfiles(family_paths, assign_seq_num, copy)?;
        if loaded {
            self.after_bulk_load(&r);
        }
        Ok(loaded)
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
        let loaded = r.bulk_load_hfiles(family_paths, assign_seq_num, copy)?;
        if loaded {
            self.after_bulk_load(&r);
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

    /// HBase's `PrepareBulkLoad`: creates a fresh staging directory
    /// `<root>/staging/<user>__<table>__<random>` and returns its path (the bulk token).
    pub fn prepare_bulk_load(&self, table: &TableName, user: &str) -> Result<PathBuf> {
        self.table(table)?;
        let fs = self.config.fs();
        let dir = self
            .config
            .root
            .join(STAGING_DIR)
            .join(staging_name(user, table));
        fs.mkdirs(&dir).map_err(|e| RegionError::io(&dir, e))?;
        Ok(dir)
    }

    /// HBase's `BulkLoadHFile` with a bulk token: moves (or copies, with `copy`) each file
    /// into `<token>/<family>/` first, then loads from there with a sequence id assigned (as
    /// HBase's secure path always does). Files are moved back when the load does not happen.
    pub fn bulk_load_staged(
        &self,
        token: &Path,
        region: &[u8],
        family_paths: &[(Vec<u8>, PathBuf)],
        copy: bool,
    ) -> Result<bool> {
        let (_, r) = self.region_by_name(region)?;
        let fs = self.config.fs();
        let staging = self.config.root.join(STAGING_DIR);
        if !token.starts_with(&staging) || token.components().any(|c| c.as_os_str() == "..") {
            return Err(RegionError::InvalidArgument(format!(
                "bulk token {} is not a staging directory under {}",
                token.display(),
                staging.display()
            )));
        }
        let mut staged: Vec<(Vec<u8>, PathBuf, PathBuf, bool)> = Vec::new();
        let result = (|| -> Result<bool> {
            for (family, src) in family_paths {
                let name = src.file_name().ok_or_else(|| {
                    RegionError::InvalidArgument(format!(
                        "bulk load path {} names no file",
                        src.display()
                    ))
                })?;
                let fdir = token.join(String::from_utf8_lossy(family).as_ref());
                fs.mkdirs(&fdir).map_err(|e| RegionError::io(&fdir, e))?;
                let to = fdir.join(name);
                let renamed = if copy {
                    copy_file(&**fs, src, &to)?;
                    false
                } else {
                    fs.rename(src, &to).map_err(|e| RegionError::io(src, e))?;
                    true
                };
                staged.push((family.clone(), src.clone(), to, renamed));
            }
            let paths: Vec<(Vec<u8>, PathBuf)> = staged
                .iter()
                .map(|(f, _, to, _)| (f.clone(), to.clone()))
                .collect();
            r.bulk_load_hfiles(&paths, true, false)
        })();
        let loaded = matches!(result, Ok(true));
        if !loaded {
            // HBase's SecureBulkLoadListener.failedBulkLoad: the caller gets its files back.
            for (_, src, to, renamed) in &staged {
                if *renamed && fs.exists(to).unwrap_or(false) {
                    let _ = fs.rename(to, src);
                } else if !*renamed {
                    let _ = fs.delete(to);
                }
            }
        } else {
            self.after_bulk_load(&r);
        }
        result
    }

    /// HBase's `CleanupBulkLoad`: deletes the staging directory; `Failed to clean up <path>`
    /// if it is still there after.
    pub fn cleanup_bulk_load(&self, token: &Path) -> Result<()> {
        let fs = self.config.fs();
        let staging = self.config.root.join(STAGING_DIR);
        if !token.starts_with(&staging) || token.components().any(|c| c.as_os_str() == "..") {
            return Err(RegionError::InvalidArgument(format!(
                "bulk token {} is not a staging directory under {}",
                token.display(),
                staging.display()
            )));
        }
        let _ = fs.delete(token);
        if fs.exists(token).map_err(|e| RegionError::io(token, e))? {
            return Err(RegionError::InvalidArgument(format!(
                "Failed to clean up {}",
                token.display()
            )));
        }
        Ok(())
    }
}

/// Copies `from` to `to` on `fs`, synced.
fn copy_file(fs: &dyn FileSystem, from: &Path, to: &Path) -> Result<()> {
    let io = (|| -> std::io::Result<()> {
        let src = fs.open(from)?;
        let mut out = fs.create(to)?;
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
    io.map_err(|e| RegionError::io(from, e))
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
