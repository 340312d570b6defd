//! Offline compaction of store directories, HBase's `CompactionTool`: the path may be a
//! table directory (has `.tabledesc`), a region directory (has `.regioninfo`) or a family
//! directory (its parent has `.regioninfo`). Works on directories HBase wrote.

use std::fs;
use std::path::{Path, PathBuf};

use crate::compaction::{self, Candidate, CompactionConfig};
use crate::descriptor::ColumnFamilyDescriptor;
use crate::error::{RegionError, Result};
use crate::layout::{self, REGION_INFO_FILE, TABLE_DESC_DIR};
use crate::store::{now_ms, CompactionOutcome, Store, Throttle};

/// One store's compactions.
#[derive(Clone, Debug)]
pub struct StoreReport {
    pub family_dir: PathBuf,
    pub files_before: usize,
    pub files_after: usize,
    pub compactions: Vec<CompactionOutcome>,
}

/// The family directories a path stands for, with their schema (from the table's
/// `.tabledesc` when there is one, HBase's defaults otherwise).
pub fn family_dirs(path: &Path) -> Result<Vec<(PathBuf, ColumnFamilyDescriptor)>> {
    if !path.is_dir() {
        return Err(RegionError::InvalidArgument(format!(
            "{}: specified path is not a directory",
            path.display()
        )));
    }
    let is_region = |p: &Path| p.join(REGION_INFO_FILE).is_file();
    let families_of = |region: &Path| -> Result<Vec<PathBuf>> {
        let mut v: Vec<PathBuf> = fs::read_dir(region)
            .map_err(|e| RegionError::io(region, e))?
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .filter(|e| e.file_name() != "recovered.edits")
            .map(|e| e.path())
            .collect();
        v.sort();
        Ok(v)
    };
    let (table_dir, fams) = if path.join(TABLE_DESC_DIR).is_dir() {
        let mut fams = Vec::new();
        let mut regions: Vec<PathBuf> = fs::read_dir(path)
            .map_err(|e| RegionError::io(path, e))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| is_region(p))
            .collect();
        regions.sort();
        for r in regions {
            fams.extend(families_of(&r)?);
        }
        (Some(path.to_path_buf()), fams)
    } else if is_region(path) {
        (path.parent().map(Path::to_path_buf), families_of(path)?)
    } else if path.parent().is_some_and(is_region) {
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
        Some(t) => layout::read_table_descriptor(&cairn_fs::LocalFileSystem, t)?,
        None => None,
    };
    Ok(fams
        .into_iter()
        .map(|f| {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let cf = desc
                .as_ref()
                .and_then(|d| d.family(name.as_bytes()).cloned())
                .unwrap_or_else(|| ColumnFamilyDescriptor::new(&name));
            (f, cf)
        })
        .collect())
}

/// Compacts one family directory: a major compaction first if `major`, then minor ones while
/// the policy finds work (just one step with `once`).
pub fn compact_family(
    family_dir: &Path,
    family: ColumnFamilyDescriptor,
    major: bool,
    once: bool,
    config: &CompactionConfig,
    mut progress: impl FnMut(&CompactionOutcome),
) -> Result<StoreReport> {
    let region_dir = family_dir.parent().ok_or_else(|| {
        RegionError::InvalidArgument(format!("{}: has no parent", family_dir.display()))
    })?;
    let store = Store::open(
        std::sync::Arc::new(cairn_fs::LocalFileSystem),
        region_dir,
        family,
        None,
        true,
    )?;
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
    let _ = fs::remove_dir_all(&tmp);
    Ok(report)
}
