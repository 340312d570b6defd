//! Offline compaction of store directories, HBase's `CompactionTool`: the path may be a
//! table directory (has `.tabledesc`), a region directory (has `.regioninfo`) or a family
//! directory (its parent has `.regioninfo`), on local disk or (with the `hdfs` feature) at an
//! `hdfs://host:port/path` URI. Works on directories HBase wrote.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_fs::FileSystem;

use crate::compaction::{self, Candidate, CompactionConfig};
use crate::descriptor::ColumnFamilyDescriptor;
use crate::error::{RegionError, Result};
use crate::layout::{self, REGION_INFO_FILE, TABLE_DESC_DIR};
use crate::store::{now_ms, CompactionOutcome, Store, Throttle};

/// One store's compactions.
#[derive(Clone, Debug)]
pub struct StoreReport {
    /// The family directory compacted.
    pub family_dir: PathBuf,
    /// Store files in it before the first compaction.
    pub files_before: usize,
    /// Store files left after the last.
    pub files_after: usize,
    /// Each compaction run, in order (empty when the policy found nothing to do).
    pub compactions: Vec<CompactionOutcome>,
}

/// A family directory to compact: where it is, and its schema.
#[derive(Clone, Debug)]
pub struct FamilyDir {
    /// The filesystem the directory is on (local, or HDFS for an `hdfs://` path).
    pub fs: Arc<dyn FileSystem>,
    /// `<region>/<family>`, without the scheme.
    pub dir: PathBuf,
    /// The family's schema: from the table's `.tabledesc`, or HBase's defaults when there is none
    /// or it does not list the family.
    pub family: ColumnFamilyDescriptor,
}

impl FamilyDir {
    /// The directory as a URI (`file:///…`, `hdfs://host:port/…`).
    pub fn uri(&self) -> String {
        format!("{}{}", self.fs.uri(), self.dir.display())
    }

    /// Bytes of the files directly in the directory (its store files).
    pub fn bytes(&self) -> Result<u64> {
        let listed = self
            .fs
            .list(&self.dir)
            .map_err(|e| RegionError::io(&self.dir, e))?;
        Ok(listed.iter().filter(|f| !f.is_dir).map(|f| f.len).sum())
    }
}

/// The family directories a path or URI stands for, with their schema (from the table's
/// `.tabledesc` when there is one, HBase's defaults otherwise).
pub fn family_dirs(path: &str) -> Result<Vec<FamilyDir>> {
    let (fs, path) =
        cairn_fs::resolve(path).map_err(|e| RegionError::InvalidArgument(e.to_string()))?;
    let fs_ref: &dyn FileSystem = &*fs;
    let path = path.as_path();
    let status = |p: &Path| match fs_ref.status(p) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(RegionError::io(p, e)),
    };
    let is_dir = |p: &Path| Ok::<_, RegionError>(status(p)?.is_some_and(|s| s.is_dir));
    let is_region = |p: &Path| {
        Ok::<_, RegionError>(status(&p.join(REGION_INFO_FILE))?.is_some_and(|s| !s.is_dir))
    };
    let subdirs = |dir: &Path| -> Result<Vec<PathBuf>> {
        let mut v: Vec<PathBuf> = fs_ref
            .list(dir)
            .map_err(|e| RegionError::io(dir, e))?
            .into_iter()
            .filter(|e| e.is_dir)
            .map(|e| e.path)
            .collect();
        v.sort();
        Ok(v)
    };
    let families_of = |region: &Path| -> Result<Vec<PathBuf>> {
        Ok(subdirs(region)?
            .into_iter()
            .filter(|p| {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default();
                !name.starts_with('.') && name != "recovered.edits"
            })
            .collect())
    };
    if !is_dir(path)? {
        return Err(RegionError::InvalidArgument(format!(
            "{}: specified path is not a directory",
            path.display()
        )));
    }
    // A split or merge parent (offline in its .regioninfo) is never compacted: its children
    // read its files through references until they compact them away.
    let is_parent = |region: &Path| -> Result<bool> {
        Ok(crate::layout::read_region_info(fs_ref, region)?.offline)
    };
    let refuse_parent = |region: &Path| {
        RegionError::InvalidArgument(format!(
            "{}: a split or merge parent; its children refer to its files, so it is not compacted",
            region.display()
        ))
    };
    let (table_dir, fams) = if is_dir(&path.join(TABLE_DESC_DIR))? {
        let mut fams = Vec::new();
        for r in subdirs(path)? {
            if is_region(&r)? && !is_parent(&r)? {
                fams.extend(families_of(&r)?);
            }
        }
        (Some(path.to_path_buf()), fams)
    } else if is_region(path)? {
        if is_parent(path)? {
            return Err(refuse_parent(path));
        }
        (path.parent().map(Path::to_path_buf), families_of(path)?)
    } else if path.parent().map(is_region).transpose()?.unwrap_or(false) {
        let region = path.parent().expect("checked");
        if is_parent(region)? {
            return Err(refuse_parent(region));
        }
        (
            path.parent().and_then(Path::parent).map(Path::to_path_buf),
            vec![path.to_path_buf()],
        )
    } else {
        return Err(RegionError::InvalidArgument(format!(
            "{}: not a table (.tabledesc), region (.regioninfo) or family directory",
            path.display()
        )));
    };
    let desc = match &table_dir {
        Some(t) => layout::read_table_descriptor(fs_ref, t)?,
        None => None,
    };
    Ok(fams
        .into_iter()
        .map(|dir| {
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let family = desc
                .as_ref()
                .and_then(|d| d.family(name.as_bytes()).cloned())
                .unwrap_or_else(|| ColumnFamilyDescriptor::new(&name));
            FamilyDir {
                fs: Arc::clone(&fs),
                dir,
                family,
            }
        })
        .collect())
}

/// Where HBase archives a family directory's replaced files: `<root>/data/<ns>/<table>/
/// <region>/<family>` → `<root>/archive/data/<ns>/<table>/<region>/<family>` (HBase's
/// `HFileArchiveUtil.getStoreArchivePath`).
pub fn archive_dir_of(family_dir: &Path) -> Result<PathBuf> {
    let parts: Vec<_> = family_dir.components().collect();
    let n = parts.len();
    if n < 6 || parts[n - 5].as_os_str() != "data" {
        return Err(RegionError::InvalidArgument(format!(
            "{}: cannot archive its compacted files: not a family directory under \
             <root>/data/<namespace>/<table>/<region>/<family>",
            family_dir.display()
        )));
    }
    let root: PathBuf = parts[..n - 5].iter().collect();
    let rest: PathBuf = parts[n - 5..].iter().collect();
    Ok(root.join("archive").join(rest))
}

/// Compacts one family directory: a major compaction first if `major`, then minor ones while
/// the policy finds work (just one step with `once`). Replaced files are deleted.
pub fn compact_family(
    store_dir: &FamilyDir,
    major: bool,
    once: bool,
    config: &CompactionConfig,
    progress: impl FnMut(&CompactionOutcome),
) -> Result<StoreReport> {
    compact_family_archiving(store_dir, major, once, config, false, progress)
}

/// [`compact_family`], with the replaced files moved to HBase's archive directory
/// ([`archive_dir_of`]) instead of deleted when `archive` is set.
pub fn compact_family_archiving(
    store_dir: &FamilyDir,
    major: bool,
    once: bool,
    config: &CompactionConfig,
    archive: bool,
    mut progress: impl FnMut(&CompactionOutcome),
) -> Result<StoreReport> {
    let family_dir = &store_dir.dir;
    let region_dir = family_dir.parent().ok_or_else(|| {
        RegionError::InvalidArgument(format!("{}: has no parent", family_dir.display()))
    })?;
    let mut store = Store::open(
        Arc::clone(&store_dir.fs),
        region_dir,
        store_dir.family.clone(),
        None,
        true,
    )?;
    if archive {
        store = store.archive_compacted_to(archive_dir_of(family_dir)?);
    }
    let mut report = StoreReport {
        family_dir: family_dir.to_path_buf(),
        files_before: store.file_count(),
        files_after: 0,
        compactions: Vec::new(),
    };
    let mut force_major = major;
    loop {
        let files = store.state().files;
        let candidates: Vec<Candidate> = files
            .iter()
            .map(|f| Candidate {
                size: f.size,
                compacting: false,
                modified_ms: f.modified_ms,
                major: f.major,
                min_ts: f.time_range.map(|t| t.0),
                name: f.name(),
            })
            .collect();
        let sel = compaction::select(
            &candidates,
            config,
            force_major,
            true,
            store.family.ttl_ms(),
            now_ms(),
        );
        let Some(sel) = sel else { break };
        let selection = sel.files.iter().map(|&i| files[i].clone()).collect();
        let outcome = store.compact(selection, u64::MAX, Throttle::default())?;
        progress(&outcome);
        report.compactions.push(outcome);
        force_major = false;
        // CompactionTool: `while (store.needsCompaction() && !compactOnce)`.
        let remaining = store.file_count();
        if once || remaining < config.min_files {
            break;
        }
    }
    report.files_after = store.file_count();
    let tmp = region_dir.join(layout::TMP_DIR);
    let _ = store_dir.fs.delete(&tmp);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::{TableDescriptor, TableName};
    use crate::layout::RegionInfo;
    use cairn_cell::KeyValue;

    /// `<root>/t` with `.tabledesc` (family `f`, VERSIONS 5) and one region with `f/`, a
    /// `.tmp/` and a `recovered.edits/` directory. Returns (table dir, region dir).
    fn table(root: &Path) -> (PathBuf, PathBuf) {
        let fs = cairn_fs::LocalFileSystem;
        let t = TableName::parse("t").unwrap();
        let tdir = root.join("t");
        let d = TableDescriptor::new(t.clone())
            .with_family(ColumnFamilyDescriptor::new("f").max_versions(5));
        layout::write_table_descriptor(&fs, &tdir, &d).unwrap();
        let info = RegionInfo::new(t, b"", b"", 1);
        let rdir = tdir.join(&info.encoded_name);
        layout::write_region_info(&fs, &rdir, &info).unwrap();
        for sub in ["f", ".tmp", "recovered.edits"] {
            std::fs::create_dir_all(rdir.join(sub)).unwrap();
        }
        (tdir, rdir)
    }

    fn dirs(path: &Path) -> Result<Vec<(PathBuf, u32)>> {
        Ok(family_dirs(path.to_str().unwrap())?
            .into_iter()
            .map(|f| (f.dir, f.family.max_versions))
            .collect())
    }

    #[test]
    fn a_table_region_or_family_directory_names_its_families() {
        let root = tempfile::tempdir().unwrap();
        let (tdir, rdir) = table(root.path());
        let want = vec![(rdir.join("f"), 5)];
        assert_eq!(dirs(&tdir).unwrap(), want, "table directory");
        assert_eq!(dirs(&rdir).unwrap(), want, "region directory");
        assert_eq!(dirs(&rdir.join("f")).unwrap(), want, "family directory");
        // Anything else is refused, naming the path.
        let e = dirs(root.path()).unwrap_err().to_string();
        assert!(e.contains(&root.path().display().to_string()), "{e}");
        assert!(dirs(&rdir.join("nope")).is_err());
        // Without a `.tabledesc`, a family gets HBase's defaults.
        std::fs::remove_dir_all(tdir.join(layout::TABLE_DESC_DIR)).unwrap();
        assert_eq!(dirs(&rdir).unwrap(), vec![(rdir.join("f"), 1)]);
    }

    #[test]
    fn compacting_a_family_leaves_one_file_with_every_cell() {
        let root = tempfile::tempdir().unwrap();
        let (tdir, rdir) = table(root.path());
        let fam = family_dirs(tdir.to_str().unwrap()).unwrap().remove(0);
        {
            let store =
                Store::open(fam.fs.clone(), &rdir, fam.family.clone(), None, false).unwrap();
            for i in 0..4u64 {
                let kv = KeyValue::put(format!("r{i}").as_bytes(), b"f", b"q", 1, b"v")
                    .unwrap()
                    .with_sequence_id(i + 1);
                store.add(Arc::new(kv));
                let snap = store.snapshot().unwrap();
                store.flush_snapshot(&snap, i + 1, u64::MAX).unwrap();
            }
            assert_eq!(store.file_count(), 4);
        }
        let mut seen = 0;
        let report = compact_family(&fam, true, false, &CompactionConfig::default(), |_| {
            seen += 1
        })
        .unwrap();
        assert_eq!((report.files_before, report.files_after), (4, 1));
        assert_eq!(seen, report.compactions.len());
        let c = &report.compactions[0];
        assert!(c.major && c.files_in == 4 && c.cells_out == 4, "{c:?}");
        assert!(!rdir.join(layout::TMP_DIR).exists(), ".tmp cleaned up");
        // Nothing left to do: a second run compacts nothing.
        let again =
            compact_family(&fam, false, false, &CompactionConfig::default(), |_| {}).unwrap();
        assert!(again.compactions.is_empty() && again.files_after == 1);
    }
}

#[cfg(test)]
mod archive_tests {
    use super::*;

    #[test]
    fn the_archive_mirrors_the_data_directory_as_hbase_lays_it_out() {
        assert_eq!(
            archive_dir_of(Path::new("/hbase/data/default/t/0123abcd/f")).unwrap(),
            PathBuf::from("/hbase/archive/data/default/t/0123abcd/f")
        );
        assert_eq!(
            archive_dir_of(Path::new("root/data/ns/t/r/f")).unwrap(),
            PathBuf::from("root/archive/data/ns/t/r/f")
        );
        for bad in ["/hbase/t/r/f", "/hbase/data/t/r/f", "/x/nodata/ns/t/r/f"] {
            let e = archive_dir_of(Path::new(bad)).unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains("cannot archive"), "{e}");
        }
    }
}
