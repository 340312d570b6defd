//! Replay at open, written once for both backends: this server's earlier WAL files, then the
//! WAL directory of every dead server under the same root (cairn's earlier runs under other
//! names, HBase's region servers), each file read through the filesystem, its edits handed to
//! the visitor, and the file adopted into the ledger so it is retired once its edits are
//! flushed.

use std::collections::BTreeMap;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_fs::{FileSystem, RawSource};

use crate::file::{self, FileScan};
use crate::ledger::{count_replayed, ClosedSegment, FileKey};
use crate::names::{self, ServerName};
use crate::{ReplayReport, ReplayedFile, WalEdit, WalError, WalLocation};

/// Reads a file through [`RawSource::read_at`], as a stream that can seek.
pub(crate) struct SourceReader {
    src: Arc<dyn RawSource>,
    pos: u64,
}

impl SourceReader {
    pub(crate) fn new(src: Arc<dyn RawSource>) -> SourceReader {
        SourceReader { src, pos: 0 }
    }
}

impl Read for SourceReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.src.len().saturating_sub(self.pos);
        let n = (buf.len() as u64).min(left).min(4 << 20) as usize;
        if n == 0 {
            return Ok(0);
        }
        let b = self.src.read_at(self.pos, n)?;
        buf[..n].copy_from_slice(&b);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for SourceReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let len = self.src.len() as i128;
        let at = match to {
            SeekFrom::Start(n) => n as i128,
            SeekFrom::End(d) => len + d as i128,
            SeekFrom::Current(d) => self.pos as i128 + d as i128,
        };
        if at < 0 {
            return Err(io::ErrorKind::InvalidInput.into());
        }
        self.pos = at as u64;
        Ok(self.pos)
    }
}

/// A file replay read: its place in the ledger, what it holds, and how it ended.
pub(crate) struct Adopted {
    pub(crate) key: FileKey,
    pub(crate) segment: ClosedSegment,
    pub(crate) scan: FileScan,
}

/// What replay found under the WAL root.
pub(crate) struct Replayed<C> {
    /// This server's earlier files, oldest first.
    pub(crate) own: Vec<Adopted>,
    /// Dead servers' files.
    pub(crate) foreign: Vec<Adopted>,
    /// What claiming each dead server's directory returned (kept while the WAL is open).
    pub(crate) claims: Vec<C>,
}

fn io_err(op: &'static str, path: &Path) -> impl FnOnce(io::Error) -> WalError {
    let path = path.to_path_buf();
    move |source| WalError::Io {
        op,
        path,
        offset: 0,
        source,
    }
}

/// WAL files by number.
type Numbered = Vec<(u64, PathBuf)>;

/// The WAL files in `dir`, by number; names that are not WAL names are returned apart.
fn wal_files(fs: &dyn FileSystem, dir: &Path) -> Result<(Numbered, Vec<PathBuf>), WalError> {
    let entries = match fs.list(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(e) => return Err(io_err("list", dir)(e)),
    };
    let mut files = Vec::new();
    let mut other = Vec::new();
    for e in entries {
        if e.is_dir {
            other.push(e.path);
            continue;
        }
        let parsed = e
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(names::parse_wal_file_name);
        match parsed {
            Some(n) => files.push((n.number, e.path)),
            None => other.push(e.path),
        }
    }
    files.sort();
    Ok((files, other))
}

/// Reads one file into `visit`, counting into `report`.
fn replay_file(
    fs: &dyn FileSystem,
    path: &Path,
    server: &ServerName,
    own: bool,
    report: &mut ReplayReport,
    visit: &mut dyn FnMut(WalEdit) -> Result<(), WalError>,
) -> Result<(ClosedSegment, FileScan), WalError> {
    let src = fs.open(path).map_err(io_err("open", path))?;
    let len = src.len();
    let mut regions = BTreeMap::new();
    let scan = file::scan_from(path, len, SourceReader::new(src), |_, edit| {
        count_replayed(report, &mut regions, &edit);
        visit(edit)
    })?;
    report.segments += 1;
    report.files.push(ReplayedFile {
        path: path.to_path_buf(),
        server: server.to_string(),
        own,
        entries: scan.entries,
        closed: scan.trailer,
    });
    if let Some(d) = &scan.dropped {
        report.dropped.push(d.clone());
    }
    Ok((
        ClosedSegment {
            size: scan.len,
            regions,
            own,
        },
        scan,
    ))
}

/// Replays every WAL file under `loc.root` that belongs to this server or to a dead one.
///
/// `claim(dir)` is asked for each other server's directory: `Ok(None)` means a live process
/// holds it (left alone, named in [`ReplayReport::live_servers`]); whatever it returns
/// otherwise is kept for as long as the WAL is open. `before_read(path)` runs before each
/// file is read (HDFS recovers the file's lease). Without `adopt_dead`, only this server's
/// own directory is read.
#[allow(clippy::too_many_arguments)]
pub(crate) fn replay<C>(
    fs: &dyn FileSystem,
    loc: &WalLocation,
    adopt_dead: bool,
    mut claim: impl FnMut(&Path) -> Result<Option<C>, WalError>,
    mut before_read: impl FnMut(&Path) -> Result<(), WalError>,
    report: &mut ReplayReport,
    visit: &mut dyn FnMut(WalEdit) -> Result<(), WalError>,
) -> Result<Replayed<C>, WalError> {
    let mut out = Replayed {
        own: Vec::new(),
        foreign: Vec::new(),
        claims: Vec::new(),
    };
    let wals = names::wals_dir(&loc.root);
    let own_dir = loc.dir();
    let entries = match fs.list(&wals) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io_err("list", &wals)(e)),
    };
    let mut dirs: Vec<_> = entries.into_iter().collect();
    dirs.sort_by(|a, b| a.path.cmp(&b.path));
    for e in dirs {
        let name = e
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !e.is_dir {
            // cairn's WAL before it took HBase's format kept `wal.<20 digits>` files right
            // here: never start over edits nobody replays.
            if legacy_segment_name(&name) {
                return Err(WalError::Unsupported {
                    path: e.path,
                    reason: "a WAL segment in the format cairn wrote before it took HBase's: \
                             replay it with that build (start it and stop it cleanly), then \
                             start this one"
                        .into(),
                });
            }
            continue;
        }
        if e.path == own_dir || !adopt_dead {
            continue;
        }
        let Some((server, _splitting)) = ServerName::from_wal_dir_name(&name) else {
            continue;
        };
        let Some(c) = claim(&e.path)? else {
            report.live_servers.push(name);
            continue;
        };
        out.claims.push(c);
        let (files, _) = wal_files(fs, &e.path)?;
        for (number, path) in files {
            before_read(&path)?;
            let (segment, scan) = replay_file(fs, &path, &server, false, report, visit)?;
            out.foreign.push(Adopted {
                key: (number, path),
                segment,
                scan,
            });
        }
    }
    let (files, _) = wal_files(fs, &own_dir)?;
    let prefix = loc.server.file_prefix();
    for (number, path) in files {
        let is_own_name =
            names::parse_wal_file_name(&path.file_name().unwrap_or_default().to_string_lossy())
                .is_some_and(|n| n.prefix == prefix && !n.meta);
        before_read(&path)?;
        let (segment, scan) = replay_file(fs, &path, &loc.server, is_own_name, report, visit)?;
        if let Some(info) = scan.header.as_ref().and_then(|h| h.cairn) {
            if is_own_name && info.number != number {
                return Err(WalError::BadHeader {
                    path,
                    reason: format!(
                        "the header names file number {}, the file name {number}",
                        info.number
                    ),
                });
            }
        }
        let adopted = Adopted {
            key: (number, path),
            segment,
            scan,
        };
        if is_own_name {
            out.own.push(adopted);
        } else {
            out.foreign.push(adopted);
        }
    }
    Ok(out)
}

/// `wal.<20 digits>`: a segment of cairn's own format from before it wrote HBase's.
fn legacy_segment_name(name: &str) -> bool {
    name.strip_prefix("wal.")
        .is_some_and(|d| d.len() == 20 && d.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_reader_reads_and_seeks() {
        let src: Arc<dyn RawSource> = Arc::new(bytes::Bytes::from_static(b"0123456789"));
        let mut r = SourceReader::new(src);
        let mut b = [0u8; 4];
        r.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"0123");
        r.seek(SeekFrom::End(-2)).unwrap();
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, b"89");
        assert!(r.seek(SeekFrom::Current(-20)).is_err());
        assert!(legacy_segment_name("wal.00000000000000000001"));
        assert!(!legacy_segment_name("wal.1"));
    }
}
