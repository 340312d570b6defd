//! Which regions are gone for good, so that replay may drop their WAL edits, and what
//! replay does with the edits of any other region it cannot find.
//!
//! A WAL edit names only its region (cairn's WAL records no table), so replay cannot ask, as
//! HBase's WAL splitter does, whether the edit's table still exists. Instead the server
//! remembers what it retired itself: the regions of a deleted table are written to
//! `<root>/.retired-regions` (durably, before the table's directory goes), and split and
//! merge parents are known by their offline `.regioninfo` or their directory in the archive.
//! Edits of those regions were all flushed before the region went; they are skipped and
//! their segments may go. Edits of any other region replay cannot find — a table directory
//! without a readable descriptor, a region directory lost or damaged — are kept: their
//! segments stay on disk and replay again at the next open, once the region is back, and
//! one error line names each such region and its segments. The operator may discard them on
//! purpose with `cairn.wal.discard.missing.regions` (HBase's splitter drops edits of regions
//! it cannot find).

use std::collections::{BTreeMap, BTreeSet};

use super::*;

/// `<root>/.retired-regions`: encoded names of regions whose WAL edits are obsolete, one a
/// line. Names no WAL segment mentions any more are pruned at open.
pub const RETIRED_REGIONS_FILE: &str = ".retired-regions";

/// Edits replay found for a region it could not open, kept in the WAL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingRegion {
    /// The encoded region name the edits carry.
    pub region: String,
    /// Edits of it replay read.
    pub edits: u64,
    /// The segments holding them, which stay on disk.
    pub segments: Vec<PathBuf>,
}

fn record_path(root: &Path) -> PathBuf {
    root.join(RETIRED_REGIONS_FILE)
}

/// The retired regions recorded under `root` (none when there is no record).
pub(super) fn read_record(fs: &dyn FileSystem, root: &Path) -> Result<BTreeSet<String>> {
    let path = record_path(root);
    match fs.read(&path) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeSet::new()),
        Err(e) => Err(RegionError::io(&path, e)),
    }
}

/// Replaces the record with `names`, durably (a temporary file, a rename, a directory sync).
pub(super) fn write_record(
    fs: &dyn FileSystem,
    root: &Path,
    names: &BTreeSet<String>,
) -> Result<()> {
    let mut text = String::new();
    for n in names {
        text.push_str(n);
        text.push('\n');
    }
    layout::write_atomically(fs, &record_path(root), text.as_bytes())
}

/// The encoded names of split and merge parents in the archive (`<root>/archive/data/<ns>/
/// <table>/<region>`).
pub(super) fn archived_regions(fs: &dyn FileSystem, root: &Path) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for ns in open::read_dirs(fs, &root.join("archive").join("data"))? {
        for t in open::read_dirs(fs, &ns)? {
            for r in open::read_dirs(fs, &t)? {
                if let Some(n) = r.file_name() {
                    out.insert(n.to_string_lossy().into_owned());
                }
            }
        }
    }
    Ok(out)
}

/// What replay does with the edits of regions it did not open.
pub(super) struct Unopened {
    /// Regions whose edits are obsolete: retired, offline parents, archived parents.
    pub gone: BTreeSet<String>,
    /// `cairn.wal.discard.missing.regions`: drop the others' edits too.
    pub discard: bool,
    /// Edits per region not in `gone`.
    pub missing: BTreeMap<Vec<u8>, u64>,
}

impl Unopened {
    /// Counts an edit of a region not opened; true when the edit is obsolete (or discarded)
    /// and its segment may go once the rest of it is flushed.
    pub(super) fn obsolete(&mut self, region: &[u8]) -> bool {
        if self.gone.contains(String::from_utf8_lossy(region).as_ref()) {
            return true;
        }
        *self.missing.entry(region.to_vec()).or_default() += 1;
        self.discard
    }

    /// The regions whose edits were kept (or discarded on purpose), with the segments that
    /// hold them; logs one line for each.
    pub(super) fn report(&self, wal: &Wal) -> Vec<MissingRegion> {
        let segments = wal.segments();
        let mut out = Vec::new();
        for (region, &edits) in &self.missing {
            let name = String::from_utf8_lossy(region).into_owned();
            let paths: Vec<PathBuf> = segments
                .iter()
                .filter(|s| s.max_sequence_id.contains_key(region))
                .map(|s| s.path.clone())
                .collect();
            let list = paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ");
            if self.discard {
                tracing::warn!(
                    "discarding {edits} WAL edits of region {name}, which is not on this \
                     server (cairn.wal.discard.missing.regions): {list}"
                );
            } else {
                tracing::error!(
                    "{edits} WAL edits of region {name} were not replayed: no such region is \
                     open here (its table's descriptor or its region directory is missing or \
                     unreadable). Keeping {list} so they are not lost: restore the region and \
                     restart to replay them, or set cairn.wal.discard.missing.regions=true to \
                     drop them"
                );
            }
            out.push(MissingRegion {
                region: name,
                edits,
                segments: paths,
            });
        }
        out
    }
}

impl RegionServer {
    /// Records `regions` (encoded names) as retired before their directories go: replay will
    /// skip their edits. Callers hold the admin lock (a table's delete, archiving parents), so
    /// two updates of the record never race.
    pub(super) fn retire_regions(&self, regions: &[String]) -> Result<()> {
        let fs = &**self.config.fs();
        let mut names = read_record(fs, &self.config.root)?;
        let before = names.len();
        names.extend(regions.iter().cloned());
        if names.len() != before {
            write_record(fs, &self.config.root, &names)?;
        }
        Ok(())
    }
}

/// Drops from the record the names no WAL segment mentions any more.
pub(super) fn prune_record(fs: &dyn FileSystem, root: &Path, wal: &Wal) -> Result<()> {
    let names = read_record(fs, root)?;
    if names.is_empty() {
        return Ok(());
    }
    let segments = wal.segments();
    let kept: BTreeSet<String> = names
        .iter()
        .filter(|n| {
            segments
                .iter()
                .any(|s| s.max_sequence_id.contains_key(n.as_bytes()))
        })
        .cloned()
        .collect();
    if kept.len() != names.len() {
        write_record(fs, root, &kept)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_round_trips_and_missing_edits_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let fs = cairn_fs::LocalFileSystem;
        assert!(read_record(&fs, dir.path()).unwrap().is_empty());
        let names: BTreeSet<String> = ["a".to_string(), "b".to_string()].into();
        write_record(&fs, dir.path(), &names).unwrap();
        assert_eq!(read_record(&fs, dir.path()).unwrap(), names);
        let mut u = Unopened {
            gone: names,
            discard: false,
            missing: BTreeMap::new(),
        };
        assert!(u.obsolete(b"a"));
        assert!(!u.obsolete(b"c"));
        assert!(!u.obsolete(b"c"));
        assert_eq!(u.missing, BTreeMap::from([(b"c".to_vec(), 2)]));
        u.discard = true;
        assert!(u.obsolete(b"d"));
    }
}
