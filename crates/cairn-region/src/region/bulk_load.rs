//! Bulk load: finished HFiles added to a region's stores (HBase's `HRegion.bulkLoadHFiles`).
//!
//! The loaded cells never pass through the WAL. They are durable because each file is
//! renamed into its family directory and the directory synced before the load returns, and
//! their order against the WAL's edits survives a restart because the sequence id the load
//! assigned is in the file's name (`_SeqId_<n>_`): a store opens with that id as the file's,
//! so replay skips exactly the edits the flush before the load wrote out, and the region's
//! MVCC restarts past it.
//!
//! Crash atomicity across families: the files are first moved into their family
//! directories under hidden names (a leading `.`, which [`Store::open`] skips), then a
//! journal listing them is written, then they are renamed to their real names. A region that
//! opens with a journal finishes those renames; one that opens with hidden files and no
//! journal drops them, so a crash leaves all of a call's files loaded or none.

use std::path::{Path, PathBuf};

use cairn_cell::KeyRef;
use cairn_fs::FileSystem;
use cairn_hfile::{HFileReader, ReaderOptions};

use super::*;
use crate::storefile::StoreFile;

/// The journal of a bulk load between its hidden and its final renames:
/// `<region>/.bulkload`, one `<family>/<hidden name>\t<family>/<final name>` line per file.
pub const BULK_LOAD_JOURNAL: &str = ".bulkload";

/// Where files of a bulk load that crashed before its journal are kept:
/// `<region>/.bulkload-orphans` (hidden, so no store or region listing takes it).
pub const ORPHANS_DIR: &str = ".bulkload-orphans";

/// Prefix of a file moved into a family directory but not yet committed.
const HIDDEN_PREFIX: &str = ".bulkload-";

/// HBase's recoverable `WrongRegionException` of a bulk load: the file's rows do not all fall
/// in the region (usually because the region split since the client grouped its files). The
/// load returns `false` and the client splits the file and retries.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("Bulk load file {path} does not fit inside region {region}")]
pub struct BulkLoadFileMisfit {
    /// The file, as given.
    pub path: String,
    /// The region name (`<table>,<start>,<id>.<encoded>.`).
    pub region: String,
}

/// The first and last row of an HFile; `None` when it has no cells.
pub fn hfile_row_range(reader: &HFileReader) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
    match (reader.first_key(), reader.last_key()) {
        (Some(f), Some(l)) => Ok(Some((
            KeyRef::parse(f)?.row().to_vec(),
            KeyRef::parse(l)?.row().to_vec(),
        ))),
        _ => Ok(None),
    }
}

/// The sequence id a store gives a file without `_SeqId_` in its name, as
/// [`StoreFile::open`] reads it: `MAX_SEQ_ID_KEY`, else `MAX_MEMSTORE_TS_KEY`, else 0 (HBase's
/// `HFileOutputFormat2` files record neither).
fn recorded_sequence_id(reader: &HFileReader) -> u64 {
    let info = reader.file_info();
    info.get_i64(cairn_hfile::file_info::keys::MAX_SEQ_ID_KEY)
        .or_else(|| info.get_i64(cairn_hfile::file_info::keys::MAX_MEMSTORE_TS_KEY))
        .unwrap_or(0)
        .max(0) as u64
}

/// Opens an HFile on `fs` for a range check.
fn open_hfile(fs: &dyn FileSystem, path: &Path) -> Result<HFileReader> {
    let raw = fs.open(path).map_err(|e| RegionError::io(path, e))?;
    Ok(HFileReader::open_source(
        path.display().to_string().as_str().into(),
        raw,
        ReaderOptions::default(),
    )?)
}

/// One file moved into place, and how to undo that.
struct Placed {
    family: Vec<u8>,
    source: PathBuf,
    hidden: PathBuf,
    destination: PathBuf,
    /// Renamed from `source` (moved back on failure) rather than copied (deleted).
    renamed: bool,
}

impl Region {
    /// HBase's `HStore.assertBulkLoadHFileOk`: `Ok(Err(misfit))` when the file's first or
    /// last row is outside the region; an error when it cannot be read or has no cells.
    pub fn check_bulk_load_hfile(
        &self,
        path: &Path,
    ) -> Result<std::result::Result<(), BulkLoadFileMisfit>> {
        let reader = open_hfile(&*self.config.fs, path)?;
        let Some((first, last)) = hfile_row_range(&reader)? else {
            return Err(RegionError::InvalidArgument(format!(
                "bulk load file {} has no entries",
                path.display()
            )));
        };
        if self.info.contains_row(&first) && self.info.contains_row(&last) {
            Ok(Ok(()))
        } else {
            Ok(Err(BulkLoadFileMisfit {
                path: path.display().to_string(),
                region: self.info.region_name(),
            }))
        }
    }

    /// Loads HFiles into the region's stores at once (HBase's `HRegion.bulkLoadHFiles`):
    /// `Ok(false)` with nothing loaded when some file's rows fall outside the region (the
    /// recoverable case). With `assign_seq_num` the region flushes first and the files take
    /// the next sequence id, so their cells win over every earlier write and lose to every
    /// later one; without it a file keeps the sequence id it records (0 for HBase's
    /// `HFileOutputFormat2` files: older than any write). Each file is renamed into
    /// `<region>/<family>/<32 hex>[_SeqId_<n>_]`, or copied when `copy` is set or a rename
    /// cannot cross filesystems; readers see every file of the call or none.
    pub fn bulk_load_hfiles(
        &self,
        family_paths: &[(Vec<u8>, PathBuf)],
        assign_seq_num: bool,
        copy: bool,
    ) -> Result<bool> {
        self.check_open()?;
        let mut misfits = Vec::new();
        // The highest sequence id a file records, which (loaded without an assigned one) it
        // keeps in the store.
        let mut recorded = 0u64;
        for (family, path) in family_paths {
            if !self.stores.contains_key(family) {
                return Err(RegionError::InvalidArgument(format!(
                    "No such column family {}",
                    String::from_utf8_lossy(family)
                )));
            }
            if !assign_seq_num {
                recorded = recorded.max(recorded_sequence_id(&open_hfile(&*self.config.fs, path)?));
            }
            if let Err(m) = self.check_bulk_load_hfile(path)? {
                tracing::warn!("{m}");
                misfits.push(format!(
                    "({}, {})",
                    String::from_utf8_lossy(family),
                    path.display()
                ));
            }
        }
        if !misfits.is_empty() {
            tracing::warn!(
                "There was a recoverable bulk load failure likely due to a split. These \
                 (family, HFile) pairs were not loaded: {}",
                misfits.join(", ")
            );
            return Ok(false);
        }
        if family_paths.is_empty() {
            return Ok(true);
        }
        // As HBase's bulk region operation: no write runs while the files go in.
        let _one_flush = self.flush_lock.lock();
        let _no_writes = self.updates.write();
        // A split or merge may have closed the region meanwhile and listed its files: the
        // load must go to the children instead.
        self.check_open()?;
        // A file that claims sequence ids past what the stores hold would make replay skip
        // the memstore's edits after a crash, and later writes must get higher ids than it:
        // flush first, and hand out no id it claims.
        let shadows = recorded > 0 && self.stores.values().any(|s| s.max_sequence_id() < recorded);
        if assign_seq_num || shadows {
            self.flush_holding_updates()?;
        }
        self.mvcc.skip_past(recorded);
        // A fresh sequence id: every earlier edit is in a store file (after the flush), every
        // later one gets a higher id. Until it completes, readers skip the new files.
        let seq = self.mvcc.begin();
        let result = self.place_and_commit(family_paths, assign_seq_num.then_some(seq), seq, copy);
        self.mvcc.complete(seq);
        result.map(|()| true)
    }

    /// A flush while the caller holds `updates` exclusively (so no write can slip in); a
    /// snapshot left by a failed flush is written first, then what came after it.
    fn flush_holding_updates(&self) -> Result<()> {
        for _ in 0..2 {
            let seq = self.mvcc.write_point();
            let snaps: Vec<_> = self
                .stores
                .values()
                .filter_map(|s| s.snapshot_at(seq).map(|(seg, at)| (s.clone(), seg, at)))
                .collect();
            if snaps.is_empty() {
                return Ok(());
            }
            let flushed = snaps.iter().map(|s| s.2).min().unwrap_or(seq);
            for (store, seg, at) in &snaps {
                let smallest = self.read_points.smallest(self.mvcc.read_point());
                store.flush_snapshot(seg, *at, smallest)?;
                self.memstore_bytes
                    .fetch_sub(seg.heap_size(), Ordering::Relaxed);
            }
            if let Some(wal) = self.wal.get() {
                wal.mark_flushed(self.info.encoded_name.as_bytes(), flushed)?;
            }
        }
        if self.stores.values().any(|s| {
            let st = s.state();
            !st.active.is_empty() || st.snapshot.is_some()
        }) {
            return Err(RegionError::InvalidArgument(
                "Could not bulk load with an assigned sequential ID because the flush didn't \
                 run. Reason for not flushing: the memstore is still not empty"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Moves the files in (hidden, journal, final names), opens them and swaps them into
    /// their stores; on failure puts every source file back.
    fn place_and_commit(
        &self,
        family_paths: &[(Vec<u8>, PathBuf)],
        file_seq: Option<u64>,
        visible_from: u64,
        copy: bool,
    ) -> Result<()> {
        let fs = &*self.config.fs;
        let mut placed: Vec<Placed> = Vec::new();
        let moved = (|| -> Result<()> {
            for (family, source) in family_paths {
                let store = &self.stores[family];
                let destination = store.bulk_load_destination(file_seq);
                let name = destination
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let hidden = store.dir().join(format!("{HIDDEN_PREFIX}{name}"));
                let renamed = move_or_copy(fs, source, &hidden, store.tmp_dir(), copy)?;
                placed.push(Placed {
                    family: family.clone(),
                    source: source.clone(),
                    hidden,
                    destination,
                    renamed,
                });
                let p = placed.last().expect("just pushed");
                if p.renamed {
                    // Whoever wrote it may never have synced it: once the journal commits, the
                    // WAL holds nothing of these cells, so the file must be durable first.
                    fs.sync_file(&p.hidden)
                        .map_err(|e| RegionError::io(&p.hidden, e))?;
                }
            }
            let journal: String = placed
                .iter()
                .map(|p| {
                    format!(
                        "{}\t{}\n",
                        relative(&self.dir, &p.hidden),
                        relative(&self.dir, &p.destination)
                    )
                })
                .collect();
            for p in &placed {
                sync_parent(fs, &p.hidden)?;
            }
            layout::write_atomically(fs, &self.dir.join(BULK_LOAD_JOURNAL), journal.as_bytes())
        })();
        if let Err(e) = moved {
            undo(fs, &placed);
            let _ = fs.delete(&self.dir.join(BULK_LOAD_JOURNAL));
            return Err(e);
        }
        // Past the journal the load is decided: a crash from here on finishes it at open.
        finish_journal(fs, &self.dir)?;
        let mut opened: Vec<(Vec<u8>, StoreFile)> = Vec::new();
        for p in &placed {
            let store = &self.stores[&p.family];
            match store.open_bulk_loaded(&p.destination, visible_from) {
                Ok(f) => opened.push((p.family.clone(), f)),
                Err(e) => {
                    // Unreadable after the move (it was read for the range check): take the
                    // whole call back out rather than load part of it.
                    for q in &placed {
                        let _ = if q.renamed {
                            fs.rename_no_replace(&q.destination, &q.source)
                        } else {
                            fs.delete(&q.destination).map(|_| ())
                        };
                        let _ = sync_parent(fs, &q.destination);
                    }
                    return Err(e);
                }
            }
        }
        let mut by_family: BTreeMap<Vec<u8>, Vec<StoreFile>> = BTreeMap::new();
        for (family, f) in opened {
            by_family.entry(family).or_default().push(f);
        }
        for (family, files) in by_family {
            self.stores[&family].add_bulk_loaded(files);
        }
        Ok(())
    }
}

/// Moves `source` to `to` (same filesystem, not `copy`), else copies it through `tmp_dir`;
/// returns whether it was renamed.
fn move_or_copy(
    fs: &dyn FileSystem,
    source: &Path,
    to: &Path,
    tmp_dir: &Path,
    copy: bool,
) -> Result<bool> {
    if !copy {
        match fs.rename_no_replace(source, to) {
            Ok(()) => return Ok(true),
            // EXDEV: another filesystem, so HBase's copy.
            Err(e) if e.raw_os_error() == Some(18) => {}
            Err(e) => return Err(RegionError::io(source, e)),
        }
    }
    fs.mkdirs(tmp_dir)
        .map_err(|e| RegionError::io(tmp_dir, e))?;
    let tmp = tmp_dir.join(layout::unique_file_name());
    let result = (|| -> std::io::Result<()> {
        let src = fs.open(source)?;
        let mut out = fs.create(&tmp)?;
        let len = src.len();
        let mut at = 0u64;
        while at < len {
            let n = (len - at).min(8 << 20) as usize;
            let bytes = src.read_at(at, n)?;
            std::io::Write::write_all(&mut out, &bytes)?;
            at += n as u64;
        }
        out.hsync()?;
        out.close()?;
        fs.rename(&tmp, to)
    })();
    result.map_err(|e| {
        let _ = fs.delete(&tmp);
        RegionError::io(source, e)
    })?;
    Ok(false)
}

/// `path` relative to `dir` (the journal survives a moved root).
fn relative(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir).unwrap_or(path).display().to_string()
}

fn sync_parent(fs: &dyn FileSystem, path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) => fs.sync_dir(dir).map_err(|e| RegionError::io(dir, e)),
        None => Ok(()),
    }
}

/// Puts moved files back where they came from (copies are just deleted); a file whose old
/// name was taken meanwhile is left for [`recover`] to set aside, never put over it.
fn undo(fs: &dyn FileSystem, placed: &[Placed]) {
    for p in placed {
        if p.renamed {
            if let Err(e) = fs.rename_no_replace(&p.hidden, &p.source) {
                tracing::warn!(
                    "bulk load file {} could not go back to {}: {e}",
                    p.hidden.display(),
                    p.source.display()
                );
            }
        } else {
            let _ = fs.delete(&p.hidden);
        }
    }
}

/// Finishes a journaled bulk load: renames each hidden file to its final name (those already
/// renamed are left), syncs the family directories, then removes the journal.
fn finish_journal(fs: &dyn FileSystem, region_dir: &Path) -> Result<()> {
    let journal = region_dir.join(BULK_LOAD_JOURNAL);
    let text = match fs.read(&journal) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(RegionError::io(&journal, e)),
    };
    let mut dirs = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let Some((hidden, dest)) = line.split_once('\t') else {
            return Err(RegionError::Corrupt {
                path: journal.display().to_string(),
                reason: format!("line without a tab: {line:?}"),
            });
        };
        let (hidden, dest) = (region_dir.join(hidden), region_dir.join(dest));
        let (hidden, dest) = (hidden.as_path(), dest.as_path());
        if fs.exists(hidden).map_err(|e| RegionError::io(hidden, e))? {
            fs.rename(hidden, dest)
                .map_err(|e| RegionError::io(dest, e))?;
        }
        if let Some(d) = dest.parent() {
            if !dirs.contains(&d.to_path_buf()) {
                dirs.push(d.to_path_buf());
            }
        }
    }
    for d in &dirs {
        fs.sync_dir(d).map_err(|e| RegionError::io(d, e))?;
    }
    fs.delete(&journal)
        .map_err(|e| RegionError::io(&journal, e))?;
    let _ = fs.sync_dir(region_dir);
    Ok(())
}

/// At region open, before the stores open: finishes a bulk load whose journal was written,
/// and drops hidden files of one that crashed before its journal.
pub(crate) fn recover(fs: &dyn FileSystem, region_dir: &Path) -> Result<()> {
    finish_journal(fs, region_dir)?;
    let entries = match fs.list(region_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(RegionError::io(region_dir, e)),
    };
    let is_family = |e: &cairn_fs::FileStatus| {
        e.is_dir
            && !e
                .path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
    };
    for family in entries.into_iter().filter(is_family) {
        let Ok(files) = fs.list(&family.path) else {
            continue;
        };
        for f in files {
            let hidden = f
                .path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(HIDDEN_PREFIX));
            if hidden {
                // Not loaded (no journal), and the caller's copy may be gone (moved): kept
                // aside rather than deleted.
                let aside = region_dir.join(ORPHANS_DIR).join(
                    f.path
                        .file_name()
                        .map(|n| n.to_os_string())
                        .unwrap_or_default(),
                );
                tracing::warn!(
                    "bulk load file {} did not commit; moved to {}",
                    f.path.display(),
                    aside.display()
                );
                if let Some(d) = aside.parent() {
                    fs.mkdirs(d).map_err(|e| RegionError::io(d, e))?;
                }
                fs.rename(&f.path, &aside)
                    .map_err(|e| RegionError::io(&f.path, e))?;
            }
        }
    }
    Ok(())
}
