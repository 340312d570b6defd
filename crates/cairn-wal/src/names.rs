//! Where HBase keeps its WAL files, and what they are called (`AbstractFSWALProvider`,
//! `AbstractFSWAL`, `WALSplitUtil`):
//!
//! ```text
//! <wal root>/WALs/<server name>/<URL-encoded server name>.<file number>        a WAL
//! <wal root>/WALs/<server name>/<URL-encoded server name>.meta.<number>.meta   a meta WAL
//! <wal root>/WALs/<server name>-splitting/...       a dead server's WALs being split
//! <wal root>/oldWALs/<file name>                    archived: every edit is in store files
//! <region dir>/recovered.edits/<max sequence id, 19 digits>   edits split out of WALs
//! ```
//!
//! A server name is HBase's `ServerName` string, `host,port,startcode`; the file number is
//! the time the file was created in milliseconds, one more than the previous file's if the
//! clock has not moved on. The WAL root is `hbase.wal.dir`, or `hbase.rootdir` when that is
//! not set.

use std::fmt;
use std::path::{Path, PathBuf};

/// HBase's `HConstants.HREGION_LOGDIR_NAME`: the WAL directories of all servers.
pub const WALS_DIR: &str = "WALs";
/// HBase's `HConstants.HREGION_OLDLOGDIR_NAME`: archived WAL files.
pub const OLD_WALS_DIR: &str = "oldWALs";
/// `AbstractFSWALProvider.SPLITTING_EXT`: a dead server's WAL directory while it is split.
pub const SPLITTING_EXT: &str = "-splitting";
/// `AbstractFSWALProvider.META_WAL_PROVIDER_ID`: the suffix of a meta WAL's file name.
pub const META_SUFFIX: &str = ".meta";
/// `HConstants.RECOVERED_EDITS_DIR`: edits split out of dead servers' WALs, per region.
pub const RECOVERED_EDITS_DIR: &str = "recovered.edits";
/// cairn's own directory under the WAL root: per server, the next WAL file being prepared
/// and the files of flushed WALs kept for reuse, where HBase's tools never look.
pub const SPARE_DIR: &str = ".cairn-wal";

/// HBase's `ServerName` as a string, `host,port,startcode`: names a region server and its WAL
/// directory.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServerName(String);

/// A string that is not `host,port,startcode`, or that cannot name a directory.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a server name (host,port,startcode: a host name, a port from 0 to 65535 and a non-negative start code)")]
pub struct BadServerName(pub String);

impl ServerName {
    /// Parses `host,port,startcode` as HBase's `ServerName.parseServerName` accepts it, and
    /// only host names that are plain directory names (no `/`, no control characters).
    pub fn parse(s: &str) -> Result<ServerName, BadServerName> {
        let bad = || BadServerName(s.to_string());
        let mut parts = s.split(',');
        let (Some(host), Some(port), Some(start), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let host_ok = !host.is_empty()
            && host.len() <= 255
            && host != "."
            && host != ".."
            && host
                .chars()
                .all(|c| !c.is_control() && c != '/' && c != '\\' && c != '%');
        if !host_ok || port.parse::<u16>().is_err() || start.parse::<u64>().is_err() {
            return Err(bad());
        }
        if start.parse::<i64>().is_err() {
            return Err(bad());
        }
        Ok(ServerName(s.to_string()))
    }

    /// A server name from its parts.
    pub fn new(host: &str, port: u16, start_code: u64) -> Result<ServerName, BadServerName> {
        ServerName::parse(&format!("{host},{port},{start_code}"))
    }

    /// `host,port,startcode`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The prefix of this server's WAL file names: the name URL-encoded as Java's
    /// `URLEncoder.encode(name, "UTF-8")` does (`,` becomes `%2C`).
    pub fn file_prefix(&self) -> String {
        url_encode(&self.0)
    }

    /// The server whose WAL directory `name` is (`<server name>` or
    /// `<server name>-splitting`), and whether it is being split.
    pub fn from_wal_dir_name(name: &str) -> Option<(ServerName, bool)> {
        match name.strip_suffix(SPLITTING_EXT) {
            Some(base) => ServerName::parse(base).ok().map(|s| (s, true)),
            None => ServerName::parse(name).ok().map(|s| (s, false)),
        }
    }
}

impl fmt::Display for ServerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Java's `URLEncoder.encode(s, "UTF-8")`: letters, digits and `.-*_` stay, a space becomes
/// `+`, every other byte `%XX` (upper-case hex).
pub fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `<wal root>/WALs`.
pub fn wals_dir(root: &Path) -> PathBuf {
    root.join(WALS_DIR)
}

/// `<wal root>/WALs/<server name>`: `AbstractFSWALProvider.getWALDirectoryName`.
pub fn wal_dir(root: &Path, server: &ServerName) -> PathBuf {
    wals_dir(root).join(server.as_str())
}

/// `<wal root>/oldWALs`: `AbstractFSWALProvider.getWALArchiveDirectoryName`.
pub fn archive_dir(root: &Path) -> PathBuf {
    root.join(OLD_WALS_DIR)
}

/// `<wal root>/.cairn-wal/<server name>`: cairn's prepared and kept WAL files.
pub fn spare_dir(root: &Path, server: &ServerName) -> PathBuf {
    root.join(SPARE_DIR).join(server.as_str())
}

/// The name of `server`'s WAL file number `number`: `<prefix>.<number>`.
pub fn wal_file_name(server: &ServerName, number: u64) -> String {
    format!("{}.{number}", server.file_prefix())
}

/// The name of `server`'s meta WAL file number `number`: `<prefix>.meta.<number>.meta`.
pub fn meta_wal_file_name(server: &ServerName, number: u64) -> String {
    format!(
        "{}{META_SUFFIX}.{number}{META_SUFFIX}",
        server.file_prefix()
    )
}

/// `AbstractFSWALProvider.isMetaFile`: the name ends in `.meta`.
pub fn is_meta_file(name: &str) -> bool {
    name.ends_with(META_SUFFIX)
}

/// A WAL file's name taken apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalFileName {
    /// The prefix before the number (the URL-encoded server name, `.meta` included for a
    /// meta WAL).
    pub prefix: String,
    /// The file number: the creation time in milliseconds.
    pub number: u64,
    /// A meta WAL (`.meta` suffix).
    pub meta: bool,
}

/// Parses `<prefix>.<number>[.meta]` as `AbstractFSWALProvider.getTS` does; `None` for any
/// other name (cairn's own temporary names included).
pub fn parse_wal_file_name(name: &str) -> Option<WalFileName> {
    let (rest, meta) = match name.strip_suffix(META_SUFFIX) {
        Some(r) => (r, true),
        None => (name, false),
    };
    let (prefix, digits) = rest.rsplit_once('.')?;
    if prefix.is_empty()
        || digits.is_empty()
        || digits.len() > 19
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    Some(WalFileName {
        prefix: prefix.to_string(),
        number: digits.parse().ok()?,
        meta,
    })
}

/// The local path of the WAL file `wal_path` that a cluster's master asks a region server to
/// split (`SplitWALParameter.wal_path`: a URI as the master's filesystem names it, `file:/...`,
/// `file:///...`, `hdfs://host:port/...`, or a bare path), checked to be a file of a server's
/// directory under `<wal_root>/WALs/`: nothing else is ever read for a split.
pub fn split_wal_file(wal_path: &str, wal_root: &Path) -> Result<PathBuf, String> {
    use std::path::Component;
    let path = if let Some(rest) = wal_path.strip_prefix("hdfs://") {
        // hdfs://authority/path: the path part; the authority is the cluster's own.
        rest.find('/').map(|i| &rest[i..]).unwrap_or("")
    } else if let Some(rest) = wal_path.strip_prefix("file:") {
        rest.trim_start_matches("//")
    } else {
        wal_path
    };
    let path = Path::new(path);
    let bad = |why: &str| format!("WAL path {wal_path:?} from the master: {why}");
    if !path.is_absolute()
        || path
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::RootDir))
    {
        return Err(bad("not a plain absolute path"));
    }
    let wals = wals_dir(wal_root);
    let rel = path
        .strip_prefix(&wals)
        .map_err(|_| bad(&format!("not under {}", wals.display())))?;
    if rel.components().count() != 2 {
        return Err(bad("not a file of a server's WAL directory"));
    }
    Ok(path.to_path_buf())
}

/// `<region dir>/recovered.edits`.
pub fn recovered_edits_dir(region_dir: &Path) -> PathBuf {
    region_dir.join(RECOVERED_EDITS_DIR)
}

/// `WALSplitUtil.formatRecoveredEditsFileName`: the sequence id as 19 digits.
pub fn recovered_edits_file_name(max_sequence_id: u64) -> String {
    format!("{max_sequence_id:019}")
}

/// What a file in `recovered.edits` is, by its name, as HBase's `WALSplitUtil` tells them
/// apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveredEditsFile {
    /// Edits up to this sequence id (the name's digits, `-` allowed as HBase's pattern
    /// `-?[0-9]+` does; HBase takes the absolute value).
    Edits(u64),
    /// `<n>.seqid` (or the old `<n>_seqid`): the region's sequence id when it was opened.
    SequenceId(u64),
    /// `*.temp`: a split still writing it, or one that died; never replayed.
    Temporary,
    /// Anything else: ignored.
    Other,
}

/// Classifies a file name in `recovered.edits`.
pub fn recovered_edits_kind(name: &str) -> RecoveredEditsFile {
    if name.ends_with(".temp") {
        return RecoveredEditsFile::Temporary;
    }
    let number = |s: &str| -> Option<u64> {
        let digits = s.strip_prefix('-').unwrap_or(s);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse::<u64>().ok()
    };
    if let Some(n) = name
        .strip_suffix(".seqid")
        .or_else(|| name.strip_suffix("_seqid"))
        .and_then(number)
    {
        return RecoveredEditsFile::SequenceId(n);
    }
    match number(name) {
        Some(n) => RecoveredEditsFile::Edits(n),
        None => RecoveredEditsFile::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_of_server_wal_directories_are_split() {
        let root = Path::new("/r");
        for ok in [
            "file:/r/WALs/h,1,2-splitting/h%2C1%2C2.5",
            "file:///r/WALs/h,1,2/h%2C1%2C2.5",
            "hdfs://nn:8020/r/WALs/h,1,2-splitting/x.meta",
            "/r/WALs/s/f",
        ] {
            assert!(split_wal_file(ok, root).is_ok(), "{ok}");
        }
        for bad in [
            "file:/r/WALs/../data/t/f",
            "/r/WALs/f",
            "/r/data/default/t/x",
            "/other/WALs/s/f",
            "r/WALs/s/f",
            "/r/WALs/s/f/g",
            "",
        ] {
            assert!(split_wal_file(bad, root).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_are_hbases() {
        let s = ServerName::parse("rs1.example.com,16020,1700000000000").unwrap();
        assert_eq!(s.file_prefix(), "rs1.example.com%2C16020%2C1700000000000");
        assert_eq!(
            wal_file_name(&s, 1700000000123),
            "rs1.example.com%2C16020%2C1700000000000.1700000000123"
        );
        assert_eq!(
            meta_wal_file_name(&s, 17),
            "rs1.example.com%2C16020%2C1700000000000.meta.17.meta"
        );
        assert_eq!(
            wal_dir(Path::new("/hbase"), &s),
            Path::new("/hbase/WALs/rs1.example.com,16020,1700000000000")
        );
        assert_eq!(
            archive_dir(Path::new("/hbase")),
            Path::new("/hbase/oldWALs")
        );
        assert_eq!(url_encode("a b/c,d~"), "a+b%2Fc%2Cd%7E");
        assert_eq!(recovered_edits_file_name(42), "0000000000000000042");
    }

    #[test]
    fn file_names_parse_back_and_lookalikes_do_not() {
        let s = ServerName::parse("h,1,2").unwrap();
        let p = parse_wal_file_name(&wal_file_name(&s, 99)).unwrap();
        assert_eq!(
            (p.prefix.as_str(), p.number, p.meta),
            ("h%2C1%2C2", 99, false)
        );
        let m = parse_wal_file_name(&meta_wal_file_name(&s, 7)).unwrap();
        assert_eq!(
            (m.prefix.as_str(), m.number, m.meta),
            ("h%2C1%2C2.meta", 7, true)
        );
        assert!(is_meta_file(&meta_wal_file_name(&s, 7)));
        for bad in [
            "h%2C1%2C2",
            "h.x",
            ".12",
            "h.12.tmp",
            "h.123456789012345678901",
            "h.",
        ] {
            assert_eq!(parse_wal_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn server_names_are_hbases_and_stay_plain_directory_names() {
        assert!(ServerName::parse("localhost,16020,0").is_ok());
        for bad in [
            "localhost",
            "localhost,16020",
            "a,b,c",
            "h,70000,1",
            "h,1,-1",
            "../x,1,1",
            "..,1,1",
            "a/b,1,1",
            ",1,1",
            "h,1,1,1",
            "h,1,99999999999999999999",
        ] {
            assert!(ServerName::parse(bad).is_err(), "{bad}");
        }
        let (s, splitting) = ServerName::from_wal_dir_name("h,1,2-splitting").unwrap();
        assert_eq!((s.as_str(), splitting), ("h,1,2", true));
        assert_eq!(ServerName::from_wal_dir_name("oldWALs"), None);
    }

    #[test]
    fn recovered_edits_names_sort_out_as_hbase_does() {
        use RecoveredEditsFile::*;
        assert_eq!(recovered_edits_kind("0000000000000000042"), Edits(42));
        assert_eq!(recovered_edits_kind("-0000000000000000042"), Edits(42));
        assert_eq!(recovered_edits_kind("5.seqid"), SequenceId(5));
        assert_eq!(recovered_edits_kind("5_seqid"), SequenceId(5));
        assert_eq!(
            recovered_edits_kind("0000000000000000042-h%2C1%2C2.99.temp"),
            Temporary
        );
        assert_eq!(recovered_edits_kind("notes.txt"), Other);
        assert_eq!(recovered_edits_kind(""), Other);
    }
}
