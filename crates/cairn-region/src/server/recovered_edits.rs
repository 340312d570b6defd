//! A region's `recovered.edits` at open (HBase's `HRegion.replayRecoveredEditsIfAny`): the
//! edits HBase's `WALSplitter` split out of a dead server's WAL for this region, one file per
//! split WAL named by the highest sequence id in it. A file whose highest sequence id every
//! store has flushed past is skipped whole; the others replay edit by edit, each store taking
//! only edits above its flushed sequence id (the `MAX_SEQ_ID_KEY` of its files). `<n>.seqid`
//! files (the sequence id HBase gave the region when it last opened it) raise the region's
//! sequence id past `n`. `.temp` files (a split still writing, or one that died) are left
//! alone, as HBase leaves them. The files replayed are deleted once the region has flushed
//! what they held, so a crash before that replays them again and the flushed sequence ids
//! make the second replay a no-op: every edit lands exactly once.

use cairn_wal::names::{self, RecoveredEditsFile};

use super::*;

/// The files a region's replay read: deleted once the region has flushed.
pub(super) struct Replayed {
    /// Highest sequence id of an edit replayed, if any was.
    pub(super) max_sequence_id: Option<u64>,
    /// The edits files read or skipped (not the `.seqid` or `.temp` ones).
    pub(super) files: Vec<PathBuf>,
}

/// Replays region `r`'s `recovered.edits` into its memstores; `flushed` is each store's
/// flushed sequence id. A file that is not a WAL, or one cairn cannot read, stops the open
/// (its edits would be lost): the error names it.
pub(super) fn replay(
    fs: &dyn FileSystem,
    r: &Region,
    flushed: &BTreeMap<Vec<u8>, u64>,
    report: &mut RecoveryReport,
) -> Result<Replayed> {
    let dir = names::recovered_edits_dir(r.dir());
    let mut out = Replayed {
        max_sequence_id: None,
        files: Vec::new(),
    };
    let entries = match fs.list(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(RegionError::io(&dir, e)),
    };
    let mut edits_files = Vec::new();
    for e in entries.into_iter().filter(|e| !e.is_dir) {
        let name = e
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match names::recovered_edits_kind(&name) {
            RecoveredEditsFile::Edits(n) => edits_files.push((n, e.path)),
            RecoveredEditsFile::SequenceId(n) => r.advance_sequence_id(n),
            RecoveredEditsFile::Temporary | RecoveredEditsFile::Other => {}
        }
    }
    edits_files.sort();
    // Every store has flushed at least this far.
    let min_flushed = flushed.values().copied().min().unwrap_or(0);
    let encoded = r.info.encoded_name.as_bytes();
    for (max_in_file, path) in edits_files {
        report.recovered_edits_files += 1;
        if max_in_file <= min_flushed {
            tracing::info!(
                "{}: every edit (up to sequence id {max_in_file}) is in the region's store \
                 files (flushed up to {min_flushed}); skipped",
                path.display()
            );
            out.files.push(path);
            continue;
        }
        let mut foreign = 0u64;
        let scan = cairn_wal::file::scan_on(fs, &path, |_, edit| {
            if edit.region != encoded {
                foreign += 1;
                return Ok(());
            }
            if !edit.is_marker() {
                report.cells_replayed += r.replay(&edit, flushed);
            } else {
                r.advance_sequence_id(edit.sequence_id);
            }
            report.recovered_edits_replayed += 1;
            let m = out.max_sequence_id.get_or_insert(0);
            *m = (*m).max(edit.sequence_id);
            Ok(())
        })?;
        if foreign > 0 {
            tracing::warn!(
                "{}: {foreign} edits of other regions than {} skipped",
                path.display(),
                r.info.encoded_name
            );
        }
        tracing::info!("{}", cairn_wal::file::describe(&path, &scan));
        if let Some(d) = scan.dropped {
            tracing::warn!("recovered edits: {d}; the entries before it were replayed");
            report.recovered_edits_dropped.push(d);
        }
        out.files.push(path);
    }
    Ok(out)
}

/// Deletes the edits files a region replayed, now that it has flushed them.
pub(super) fn remove(fs: &dyn FileSystem, files: &[PathBuf]) -> Result<()> {
    for f in files {
        fs.delete(f).map_err(|e| RegionError::io(f, e))?;
    }
    Ok(())
}
