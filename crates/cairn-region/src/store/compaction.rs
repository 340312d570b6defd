//! A store's compactions (HBase's `HStore.compact` and its `Compactor`): the selected files
//! run through a compaction matcher into one new file, swapped in for them in one step; the
//! inputs are archived or deleted, and named as replaced until their removal is durable.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use cairn_cell::{first_on_row, CellRef};
use cairn_fs::FsOutput;
use cairn_hfile::file_info::keys;
use cairn_hfile::{BlockReadOptions, HFileWriter};

use super::{now_ms, seek_or_next, sort_files, Store};
use crate::error::{RegionError, Result};
use crate::half_scanner::HalfScanner;
use crate::heap::{CellScanner, KeyValueHeap, StoreFileScanner};
use crate::layout::unique_file_name;
use crate::matcher::{MatchCode, MatchMode, Matcher, TimeRange};
use crate::storefile::{writer_options, StoreFile};

/// What a compaction did.
#[derive(Clone, Debug, Default)]
pub struct CompactionOutcome {
    /// Store files compacted.
    pub files_in: usize,
    /// Their total length in bytes.
    pub bytes_in: u64,
    /// Files written: 1, or 0 when every cell was dropped (all deleted or expired).
    pub files_out: usize,
    /// Length of the file written, 0 when none was kept.
    pub bytes_out: u64,
    /// Cells the matcher looked at (cells skipped by a seek are not counted).
    pub cells_in: u64,
    /// Cells written.
    pub cells_out: u64,
    /// Whether the compaction covered every file of the store, so delete markers and what they
    /// mask were dropped (HBase's major compaction).
    pub major: bool,
}

/// Limits how fast compactions write (HBase's throughput controller), so they leave disk
/// bandwidth to flushes and reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct Throttle {
    /// Bytes of cells written per second at most; `None` (the default) for no limit.
    pub bytes_per_second: Option<u64>,
}

impl Store {
    /// Runs one compaction of `selection` (files of this store, oldest first). When it
    /// covers every file, deletes and what they mask are dropped (HBase's all-files rule).
    pub fn compact(
        &self,
        selection: Vec<Arc<StoreFile>>,
        smallest_read_point: u64,
        throttle: Throttle,
    ) -> Result<CompactionOutcome> {
        let _one_at_a_time = self.compaction_lock.lock();
        let current = self.state().files;
        let selection: Vec<_> = selection
            .into_iter()
            .filter(|f| current.iter().any(|c| Arc::ptr_eq(c, f)))
            .collect();
        let all_files = selection.len() == current.len();
        let mut outcome = CompactionOutcome {
            files_in: selection.len(),
            bytes_in: selection.iter().map(|f| f.size).sum(),
            major: all_files,
            ..Default::default()
        };
        if selection.is_empty() {
            return Ok(outcome);
        }
        for f in &selection {
            f.compacting.store(true, Ordering::Release);
        }
        let result = self.compact_inner(
            &selection,
            all_files,
            smallest_read_point,
            throttle,
            &mut outcome,
        );
        for f in &selection {
            f.compacting.store(false, Ordering::Release);
        }
        result?;
        Ok(outcome)
    }

    fn compact_inner(
        &self,
        selection: &[Arc<StoreFile>],
        all_files: bool,
        smallest_read_point: u64,
        throttle: Throttle,
        outcome: &mut CompactionOutcome,
    ) -> Result<()> {
        let scanners: Vec<Box<dyn CellScanner>> = selection
            .iter()
            .rev()
            .map(|f| {
                // As HBase's compaction scanners (`cacheBlocks` false): the inputs are
                // deleted right after, so caching their blocks would only push the working
                // set out.
                let s: Box<dyn CellScanner> = Box::new(
                    StoreFileScanner::new(&f.reader, u64::MAX, BlockReadOptions::NO_FILL)
                        .with_cell_sequence_id(f.bulk_sequence_id),
                );
                match &f.half {
                    Some(half) => Ok(Box::new(HalfScanner::new(s, half.clone())?) as Box<_>),
                    None => Ok(s),
                }
            })
            .collect::<Result<_>>()?;
        // As HBase's compactor: a tags section only if some input cell really has tags.
        let include_tags = selection.iter().any(|f| {
            f.reader.includes_tags()
                && f.reader
                    .file_info()
                    .get_i32(keys::MAX_TAGS_LEN)
                    .is_none_or(|n| n > 0)
        });
        let max_seq = selection
            .iter()
            .map(|f| f.max_sequence_id)
            .max()
            .unwrap_or(0);
        let mode = if all_files {
            MatchMode::MajorCompaction
        } else {
            MatchMode::MinorCompaction
        };
        let mut replaced: Vec<String> = selection.iter().map(|f| f.name()).collect();
        replaced.extend(self.unretired.lock().iter().cloned());
        let (path, written) = self.write_through_matcher(
            KeyValueHeap::new(scanners),
            mode,
            smallest_read_point,
            include_tags,
            max_seq,
            &replaced,
            throttle,
            outcome,
        )?;
        let output = Arc::new(self.open_committed(&path)?);
        let keep_output = output.reader.entry_count() > 0;
        outcome.files_out = keep_output as usize;
        outcome.bytes_out = if keep_output { written } else { 0 };
        {
            let mut s = self.state.write();
            let mut files: Vec<_> = s
                .files
                .iter()
                .filter(|f| !selection.iter().any(|x| Arc::ptr_eq(x, f)))
                .cloned()
                .collect();
            if keep_output {
                files.push(output);
            }
            sort_files(&mut files);
            s.files = Arc::new(files);
        }
        // Readers that still hold the old files keep them open; the names go now. Each
        // stays named by later outputs until its removal is durable.
        let mut retired = Vec::new();
        for f in selection {
            self.retire_input(f);
            retired.push(f.name());
            f.evict_cached_blocks();
        }
        self.retry_unretired(retired);
        // An empty output still names the inputs left behind: it stays until they go.
        if !keep_output && self.unretired.lock().is_empty() {
            let _ = self.fs.delete(&path);
            let _ = self.fs.sync_dir(&self.dir);
        }
        Ok(())
    }

    /// Moves a compacted input to the archive directory when there is one, else deletes it.
    /// An input that cannot be archived is deleted all the same: left in the family
    /// directory, it would bring back the cells its compaction dropped (deleted, expired).
    /// `false` if it is still in the family directory.
    fn retire_input(&self, f: &StoreFile) -> bool {
        if let Some(archive) = &self.archive_dir {
            let to = archive.join(f.name());
            match self
                .fs
                .mkdirs(archive)
                .and_then(|()| self.fs.rename(&f.path, &to))
            {
                Ok(()) => return true,
                Err(e) => tracing::warn!(
                    "archiving {} to {} failed ({e}); deleting it",
                    f.path.display(),
                    to.display()
                ),
            }
        }
        match self.fs.delete(&f.path) {
            Ok(_) => true,
            Err(e) => {
                tracing::warn!(
                    "removing compacted input {} failed ({e}); the next compaction names it again",
                    f.path.display()
                );
                false
            }
        }
    }

    /// Moves compacted input files into `dir` instead of deleting them (HBase archives them
    /// to `<root>/archive/data/<namespace>/<table>/<region>/<family>`).
    pub fn archive_compacted_to(mut self, dir: PathBuf) -> Store {
        self.archive_dir = Some(dir);
        self
    }

    /// Runs cells from `heap` through a compaction matcher into a new file in `.tmp`, then
    /// renames it into the family directory. Removes the temporary file on failure. Flushes
    /// write their snapshot through it too (with the minor-compaction matcher).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn write_through_matcher(
        &self,
        mut heap: KeyValueHeap<'_>,
        mode: MatchMode,
        smallest_read_point: u64,
        include_tags: bool,
        max_seq: u64,
        replaced: &[String],
        throttle: Throttle,
        outcome: &mut CompactionOutcome,
    ) -> Result<(PathBuf, u64)> {
        let mut matcher = Matcher::new(
            mode,
            vec![(&self.family, None)],
            TimeRange::default(),
            self.family.max_versions,
            false,
            smallest_read_point,
            now_ms(),
        );
        let name = unique_file_name();
        let tmp = self.tmp_dir.join(&name);
        let out = if self.direct_io {
            self.fs.create_direct(&tmp)
        } else {
            self.fs.create(&tmp)
        }
        .map_err(|e| RegionError::io(&tmp, e))?;
        let mut w = HFileWriter::new(
            out,
            tmp.display().to_string(),
            writer_options(&self.family, include_tags),
        )?;
        let started = Instant::now();
        let mut bytes = 0u64;
        let result = (|| -> Result<()> {
            heap.seek(&first_on_row(&[])?)?;
            let mut row: Vec<u8> = Vec::new();
            let mut first = true;
            while let Some(c) = heap.peek() {
                if first || c.row() != row.as_slice() {
                    first = false;
                    row.clear();
                    row.extend_from_slice(c.row());
                    matcher.start_row();
                }
                outcome.cells_in += 1;
                match matcher.match_cell(&c, None) {
                    MatchCode::Include => {
                        append(&mut w, &c, &mut bytes, outcome)?;
                        heap.next()?;
                    }
                    MatchCode::IncludeAndSeekNextCol => {
                        append(&mut w, &c, &mut bytes, outcome)?;
                        let k = matcher.next_column_key(&c);
                        seek_or_next(&mut heap, k)?;
                    }
                    MatchCode::IncludeAndSeekNextRow => {
                        append(&mut w, &c, &mut bytes, outcome)?;
                        let k = Matcher::next_family_key(&c);
                        seek_or_next(&mut heap, k)?;
                    }
                    MatchCode::Skip => heap.next()?,
                    MatchCode::SeekNextCol => {
                        let k = matcher.next_column_key(&c);
                        seek_or_next(&mut heap, k)?;
                    }
                    MatchCode::SeekNextRow => {
                        let k = Matcher::next_family_key(&c);
                        seek_or_next(&mut heap, k)?;
                    }
                    MatchCode::SeekTo(k) => seek_or_next(&mut heap, Some(k))?,
                    MatchCode::DoneScan => break,
                }
                throttle_wait(throttle, bytes, started);
            }
            Ok(())
        })();
        if let Err(e) = result {
            drop(w);
            let _ = self.fs.delete(&tmp);
            return Err(e);
        }
        self.finish_file(
            w,
            &tmp,
            &name,
            max_seq,
            mode == MatchMode::MajorCompaction,
            replaced,
        )
        .inspect_err(|_| {
            let _ = self.fs.delete(&tmp);
        })
    }
}

fn append(
    w: &mut HFileWriter<Box<dyn FsOutput>>,
    c: &CellRef<'_>,
    bytes: &mut u64,
    outcome: &mut CompactionOutcome,
) -> Result<()> {
    w.append(c)?;
    *bytes += c.serialized_len() as u64;
    outcome.cells_out += 1;
    Ok(())
}

fn throttle_wait(t: Throttle, bytes: u64, started: Instant) {
    if let Some(limit) = t.bytes_per_second.filter(|l| *l > 0) {
        let due = std::time::Duration::from_secs_f64(bytes as f64 / limit as f64);
        let spent = started.elapsed();
        if due > spent + std::time::Duration::from_millis(5) {
            std::thread::sleep(due - spent);
        }
    }
}
