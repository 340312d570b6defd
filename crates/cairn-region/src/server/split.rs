//! Splits and merges (HBase's `SplitTableRegionProcedure` and `MergeTableRegionsProcedure`,
//! run by the server itself): children that refer to their parents' files through
//! reference files, a journal that makes the change crash-safe
//! ([`transition`](super::transition)), and the parents archived once no child refers to
//! them.

use super::split_policy::{self, SplitPolicyKind};
use super::transition::{Transition, TRANSITIONS_DIR};
use super::*;
use crate::reference::{self, Half};
use crate::storefile::StoreFile;
use std::io::Write;

/// Tries at opening a committed split's or merge's child before giving up until a restart.
const CHILD_OPEN_TRIES: u32 = 4;

/// What [`RegionServer::split_region`] and [`RegionServer::merge_regions`] may be asked to
/// stop after, to test crash safety: the step a simulated crash happens after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransitionStep {
    /// The journal says PREPARED; no child directory exists yet.
    Prepared,
    /// The first child's directory is complete.
    FirstChild,
    /// Every child's directory is complete, the journal not yet COMMITTED.
    Children,
    /// The journal says COMMITTED; the parents are not yet marked offline.
    Committed,
    /// The parents are marked offline; the children are not open yet.
    ParentsRetired,
}

impl RegionServer {
    /// Splits the region `region` names (HBase's full region name or the encoded name) at
    /// `split_row`, or where its policy would (the middle key of its largest file). The
    /// parent stops taking requests for the moment the split takes (clients get
    /// `NotServingRegion` and look the row up again); its daughters `[start, split_row)` and
    /// `[split_row, end)` refer to its files until their next compaction rewrites them.
    pub fn split_region(
        &self,
        region: &[u8],
        split_row: Option<&[u8]>,
    ) -> Result<(RegionInfo, RegionInfo)> {
        self.split_region_until(region, split_row, None)
    }

    /// [`split_region`](Self::split_region) that stops after `crash_after` as a crash would
    /// (the parent left closed, nothing cleaned up): for crash-safety tests.
    #[doc(hidden)]
    pub fn split_region_until(
        &self,
        region: &[u8],
        split_row: Option<&[u8]>,
        crash_after: Option<TransitionStep>,
    ) -> Result<(RegionInfo, RegionInfo)> {
        let _admin = self.admin.lock();
        let (table, parent) = self.region_by_name(region)?;
        let desc = &table.descriptor;
        let policy = self.config.split.policy_for(desc)?;
        if !desc.split_enabled() || policy == SplitPolicyKind::Disabled {
            return Err(RegionError::InvalidArgument(format!(
                "Split of {} failed: splits are disabled for table {} (SPLIT_ENABLED or its split policy)",
                parent.info.region_name(),
                desc.name
            )));
        }
        if parent.stores().any(|s| s.has_references()) {
            return Err(RegionError::InvalidArgument(format!(
                "{} NOT splittable: it still refers to its parent's files until its next compaction",
                parent.info.encoded_name
            )));
        }
        let row = match split_row {
            Some(r) if !r.is_empty() => r.to_vec(),
            _ => {
                // The policy's split point comes from the store files: flush first so a
                // region whose data is all in memory can split too.
                parent.flush()?;
                split_policy::split_point(&parent)?.ok_or_else(|| {
                    RegionError::InvalidArgument(
                        "Region not splittable because bestSplitPoint = null, maybe table is too small for auto split. For force split, try specifying split row".into(),
                    )
                })?
            }
        };
        names::check_row(&row)?;
        if row == parent.info.start_key {
            return Err(RegionError::InvalidArgument(format!(
                "Split row is equal to startkey: {}",
                cairn_cell::Escaped(&row)
            )));
        }
        if !parent.info.contains_row(&row) {
            return Err(RegionError::InvalidArgument(format!(
                "Split row is not inside region key range splitKey:{} region: {}",
                cairn_cell::Escaped(&row),
                parent.info.region_name()
            )));
        }
        // Daughters sort after their parent in meta: their id is later (HBase's rule).
        let id = (now_ms().max(0) as u64).max(parent.info.region_id + 1);
        let p = &parent.info;
        let a = RegionInfo::new(p.table.clone(), &p.start_key, &row, id);
        let b = RegionInfo::new(p.table.clone(), &row, &p.end_key, id);
        names::check_meta_row(&b)?;
        parent.close_for_transition()?;
        let children = [a.clone(), b.clone()];
        // Daughter 0 takes the bottom half, daughter 1 the top.
        let halves = |i: usize| Half {
            split_row: row.clone(),
            top: i == 1,
        };
        self.transition(
            &table,
            std::slice::from_ref(&parent),
            &children,
            &halves,
            true,
            crash_after,
        )?;
        tracing::info!(
            "split {} at {} into {} and {}",
            p.region_name(),
            cairn_cell::Escaped(&row),
            a.region_name(),
            b.region_name()
        );
        Ok((a, b))
    }

    /// Merges two adjacent regions of one table (named as for
    /// [`split_region`](Self::split_region)) into one that refers to both parents' files.
    pub fn merge_regions(&self, first: &[u8], second: &[u8]) -> Result<RegionInfo> {
        self.merge_regions_until(first, second, None)
    }

    /// [`merge_regions`](Self::merge_regions) that stops after `crash_after`, as
    /// [`split_region_until`](Self::split_region_until).
    #[doc(hidden)]
    pub fn merge_regions_until(
        &self,
        first: &[u8],
        second: &[u8],
        crash_after: Option<TransitionStep>,
    ) -> Result<RegionInfo> {
        let _admin = self.admin.lock();
        let (t1, r1) = self.region_by_name(first)?;
        let (t2, r2) = self.region_by_name(second)?;
        if Arc::ptr_eq(&r1, &r2) {
            return Err(RegionError::InvalidArgument(
                "Duplicate regions specified; cannot merge a region to itself. Passed in 2 but only 1 unique.".into(),
            ));
        }
        if t1.descriptor.name != t2.descriptor.name {
            return Err(RegionError::InvalidArgument(format!(
                "Can't merge regions from different tables: {}, {}",
                t1.descriptor.name, t2.descriptor.name
            )));
        }
        let (lo, hi) = if r1.info.start_key <= r2.info.start_key && !r1.info.end_key.is_empty() {
            (r1, r2)
        } else {
            (r2, r1)
        };
        let names = || format!("{}, {}", lo.info.region_name(), hi.info.region_name());
        if lo.info.end_key != hi.info.start_key {
            return Err(RegionError::InvalidArgument(format!(
                "Unable to merge non-adjacent or non-overlapping regions '{}', '{}' when force=false",
                lo.info.region_name(),
                hi.info.region_name()
            )));
        }
        if !t1.descriptor.merge_enabled() {
            return Err(RegionError::InvalidArgument(format!(
                "Merge of {} failed as region merge is disabled for the table",
                names()
            )));
        }
        for r in [&lo, &hi] {
            if r.stores().any(|s| s.has_references()) {
                return Err(RegionError::InvalidArgument(format!(
                    "{} is not mergeable: it still refers to its parent's files until its next compaction",
                    r.info.region_name()
                )));
            }
        }
        let id = lo.info.region_id.max(hi.info.region_id) + 1;
        let merged = RegionInfo::new(
            lo.info.table.clone(),
            &lo.info.start_key,
            &hi.info.end_key,
            id,
        );
        lo.close_for_transition()?;
        if let Err(e) = hi.close_for_transition() {
            lo.reopen();
            return Err(e);
        }
        // Each parent's files whole: a top half from the parent's own start row.
        let starts = [lo.info.start_key.clone(), hi.info.start_key.clone()];
        let whole = |i: usize| Half {
            split_row: starts[i].clone(),
            top: true,
        };
        let parents = [lo.clone(), hi.clone()];
        self.transition(
            &t1,
            &parents,
            std::slice::from_ref(&merged),
            &whole,
            false,
            crash_after,
        )?;
        tracing::info!("merged {} into {}", names(), merged.region_name());
        Ok(merged)
    }

    /// The common part of a split and a merge, once the parents are closed: journal,
    /// children's directories, commit, parents offline, children open. Before the commit a
    /// failure puts everything back and reopens the parents.
    ///
    /// For a split, child `i` takes the half `half(i)` of the one parent's files; for a merge,
    /// the one child takes every file of every parent `i` through `half(i)`.
    fn transition(
        &self,
        table: &Arc<Table>,
        parents: &[Arc<Region>],
        children: &[RegionInfo],
        half: &dyn Fn(usize) -> Half,
        split: bool,
        crash_after: Option<TransitionStep>,
    ) -> Result<()> {
        let fs = &**self.config.fs();
        let tdir = &table.dir;
        let journal = Transition::path(tdir, &parents[0].info);
        let parent_infos: Vec<&RegionInfo> = parents.iter().map(|p| &p.info).collect();
        let child_infos: Vec<&RegionInfo> = children.iter().collect();
        let mut t = Transition::new(&parent_infos, &child_infos, split);
        let undo = |e: RegionError, t: &Transition| {
            if let Err(u) = t.remove_children(fs, tdir).and_then(|()| {
                fs.delete(&journal)
                    .map(drop)
                    .map_err(|x| RegionError::io(&journal, x))
            }) {
                tracing::warn!(
                    "undoing a failed split or merge: {u}; the next open finishes undoing it"
                );
            }
            for p in parents {
                p.reopen();
            }
            Err(e)
        };
        let stop = |step| crash_after == Some(step);
        if let Err(e) = t.write(fs, &journal) {
            return undo(e, &t);
        }
        if stop(TransitionStep::Prepared) {
            return Ok(());
        }
        for (i, child) in children.iter().enumerate() {
            let built = if split {
                self.write_child(fs, tdir, child, &parents[..1], &|_| half(i))
            } else {
                self.write_child(fs, tdir, child, parents, half)
            };
            if let Err(e) = built {
                return undo(e, &t);
            }
            if i == 0 && stop(TransitionStep::FirstChild) {
                return Ok(());
            }
        }
        if stop(TransitionStep::Children) {
            return Ok(());
        }
        t.committed = true;
        if let Err(e) = t.write(fs, &journal) {
            t.committed = false;
            return undo(e, &t);
        }
        // The point of no return: from here on a failure leaves the rest to recovery.
        if stop(TransitionStep::Committed) {
            return Ok(());
        }
        let retired = t.retire_parents(fs, tdir);
        if let Err(e) = &retired {
            tracing::warn!(
                "marking {} offline failed ({e}); the journal stays so that the next open does it",
                parents[0].info.region_name()
            );
        }
        if stop(TransitionStep::ParentsRetired) {
            return Ok(());
        }
        let mut opened = Vec::new();
        for child in children {
            match self.open_child(table, tdir, child) {
                Ok(r) => opened.push(r),
                Err(e) => {
                    // Committed: only a restart's recovery can finish it now. The parents
                    // stop waiting for children that will not come, so that requests for
                    // their rows fail at once (NotServingRegion) instead of each waiting
                    // out the transition.
                    tracing::error!(
                        "the split or merge of {} is committed but {} does not open ({e}); \
                         its rows are not served until the server restarts and finishes it",
                        parents[0].info.region_name(),
                        child.region_name()
                    );
                    for p in parents {
                        p.stay_closed();
                    }
                    return Err(e);
                }
            }
        }
        self.replace_regions(table, parents, opened.clone());
        if retired.is_ok() {
            fs.delete(&journal)
                .map_err(|e| RegionError::io(&journal, e))?;
        }
        // References go at the children's first compaction; then the parents can go.
        for r in opened {
            if let Some(tx) = &self.compact_tx {
                let _ = tx.send(Work::Compact(r, true));
            }
        }
        Ok(())
    }

    /// Opens a committed child, trying again a few times over about a second: a passing
    /// I/O fault must not leave its rows unserved until a restart.
    fn open_child(&self, table: &Table, tdir: &Path, child: &RegionInfo) -> Result<Arc<Region>> {
        let mut pause = Duration::from_millis(50);
        let mut tries = 0;
        loop {
            tries += 1;
            match Region::open(
                &tdir.join(&child.encoded_name),
                table.descriptor.clone(),
                Some(self.wal.clone()),
                self.cache.clone(),
                self.config.region.clone(),
            ) {
                Ok(r) => return Ok(Arc::new(r)),
                Err(e) if tries >= CHILD_OPEN_TRIES => return Err(e),
                Err(e) => {
                    tracing::warn!(
                        "opening {} (try {tries} of {CHILD_OPEN_TRIES}): {e}",
                        child.region_name()
                    );
                    std::thread::sleep(pause);
                    pause *= 2;
                }
            }
        }
    }

    /// Writes one child's directory: a reference per file of each parent (the half
    /// `half(i)` of parent `i`), skipping files with no cell in that half, then its
    /// `.regioninfo`, everything synced.
    fn write_child(
        &self,
        fs: &dyn FileSystem,
        tdir: &Path,
        child: &RegionInfo,
        parents: &[Arc<Region>],
        half: &dyn Fn(usize) -> Half,
    ) -> Result<()> {
        let cdir = tdir.join(&child.encoded_name);
        fs.delete(&cdir).map_err(|e| RegionError::io(&cdir, e))?;
        for (i, parent) in parents.iter().enumerate() {
            let h = half(i);
            for store in parent.stores() {
                let fdir = cdir.join(String::from_utf8_lossy(&store.family.name).as_ref());
                fs.mkdirs_durable(&fdir)
                    .map_err(|e| RegionError::io(&fdir, e))?;
                for f in store.state().files.iter() {
                    if !file_has_cells_in(f, &h)? {
                        continue;
                    }
                    let path = fdir.join(reference::reference_name(
                        &f.name(),
                        &parent.info.encoded_name,
                    ));
                    let bytes = h.encode()?;
                    let mut out = fs.create(&path).map_err(|e| RegionError::io(&path, e))?;
                    out.write_all(&bytes)
                        .and_then(|()| out.hsync())
                        .and_then(|()| out.close())
                        .map_err(|e| RegionError::io(&path, e))?;
                }
                fs.sync_dir(&fdir).map_err(|e| RegionError::io(&fdir, e))?;
            }
        }
        layout::write_region_info(fs, &cdir, child)?;
        fs.sync_dir(tdir).map_err(|e| RegionError::io(tdir, e))
    }

    /// Swaps a table's parents for their children in the routing table.
    fn replace_regions(
        &self,
        table: &Arc<Table>,
        parents: &[Arc<Region>],
        children: Vec<Arc<Region>>,
    ) {
        let current = self
            .table(&table.descriptor.name)
            .unwrap_or_else(|_| table.clone());
        let mut regions: Vec<Arc<Region>> = current
            .regions
            .iter()
            .filter(|r| !parents.iter().any(|p| Arc::ptr_eq(p, r)))
            .cloned()
            .chain(children)
            .collect();
        regions.sort_by(|a, b| a.info.start_key.cmp(&b.info.start_key));
        let mut tables = BTreeMap::clone(&self.tables.load());
        tables.insert(
            current.descriptor.name.clone(),
            Arc::new(Table {
                descriptor: current.descriptor.clone(),
                regions,
                enabled: AtomicBool::new(current.is_enabled()),
                dir: current.dir.clone(),
                has_parents: AtomicBool::new(true),
            }),
        );
        self.tables.store(Arc::new(tables));
    }

    /// Archives the parents of splits and merges of `table` that no open region refers to
    /// any more (HBase's CatalogJanitor): their directories move to
    /// `<root>/archive/data/<namespace>/<table>/`. Returns how many went.
    pub fn archive_unreferenced_parents(&self, name: &TableName) -> Result<usize> {
        let _admin = self.admin.lock();
        self.archive_parents_locked(name)
    }

    pub(super) fn archive_parents_locked(&self, name: &TableName) -> Result<usize> {
        let table = self.table(name)?;
        let fs = &**self.config.fs();
        // A transition in flight may still open children that refer to its parents.
        let journals = table.dir.join(TRANSITIONS_DIR);
        if fs
            .list(&journals)
            .map(|l| l.iter().any(|e| !e.is_dir))
            .unwrap_or(false)
        {
            return Ok(0);
        }
        // The children's compactions that dropped their references must be durable before
        // the files they referred to go: a crash could otherwise bring a reference back
        // (its delete lost) or lose the output that replaced it (its rename lost).
        for r in &table.regions {
            for s in r.stores() {
                if let Err(e) = fs.sync_dir(s.dir()) {
                    tracing::warn!(
                        "not archiving parents of {name} yet: syncing {} failed: {e}",
                        s.dir().display()
                    );
                    return Ok(0);
                }
            }
        }
        let referred: std::collections::HashSet<String> = table
            .regions
            .iter()
            .flat_map(|r| r.stores())
            .flat_map(|s| s.state().files.iter().cloned().collect::<Vec<_>>())
            .filter(|f| f.is_reference())
            .filter_map(|f| reference::parse_reference_name(&f.name()).map(|(_, p)| p.to_string()))
            .collect();
        let mut left = 0;
        let mut going = Vec::new();
        for rdir in open::read_dirs(fs, &table.dir)? {
            let info_path = rdir.join(REGION_INFO_FILE);
            if !fs
                .exists(&info_path)
                .map_err(|e| RegionError::io(&info_path, e))?
            {
                continue;
            }
            let info = layout::read_region_info(fs, &rdir)?;
            if !info.offline {
                continue;
            }
            if referred.contains(&info.encoded_name) {
                left += 1;
                continue;
            }
            going.push((rdir, info));
        }
        let archived = going.len();
        if archived > 0 {
            // Recorded before they move: WAL edits of theirs that replay meets later are
            // obsolete (flushed before the split or merge) wherever the directories end up.
            let names: Vec<String> = going.iter().map(|(_, i)| i.encoded_name.clone()).collect();
            self.retire_regions(&names)?;
            let archive = layout::archive_table_dir(&self.config.root, name);
            fs.mkdirs_durable(&archive)
                .map_err(|e| RegionError::io(&archive, e))?;
            for (rdir, info) in &going {
                let to = archive.join(&info.encoded_name);
                fs.delete(&to).map_err(|e| RegionError::io(&to, e))?;
                fs.rename(rdir, &to).map_err(|e| RegionError::io(rdir, e))?;
                tracing::info!(
                    "archived parent region {} to {}",
                    info.region_name(),
                    to.display()
                );
            }
            for d in [&archive, &table.dir] {
                fs.sync_dir(d).map_err(|e| RegionError::io(d, e))?;
            }
        }
        if left == 0 {
            table.has_parents.store(false, Ordering::Release);
        }
        Ok(archived)
    }

    /// Splits `region` if its table's split policy says it has grown past its size (checked
    /// after flushes and compactions). `Ok(None)` when it need not or cannot split.
    pub fn split_if_needed(
        &self,
        region: &Arc<Region>,
    ) -> Result<Option<(RegionInfo, RegionInfo)>> {
        let Some(row) = self.split_wanted(region)? else {
            return Ok(None);
        };
        match self.split_region(region.info.encoded_name.as_bytes(), Some(&row)) {
            Ok(d) => Ok(Some(d)),
            // Closed or gone meanwhile (another split, a disable): nothing to do.
            Err(RegionError::NotServingRegion(_)) | Err(RegionError::Closed) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Where `region` should split, if its table's split policy says it has grown past its
    /// size; `None` when it need not or cannot split (references left from its own split,
    /// no middle row).
    pub fn split_wanted(&self, region: &Arc<Region>) -> Result<Option<Vec<u8>>> {
        if region.is_closed() {
            return Ok(None);
        }
        let table = self.table(&region.info.table)?;
        let desc = &table.descriptor;
        let policy = self.config.split.policy_for(desc)?;
        if !desc.split_enabled() || !table.is_enabled() {
            return Ok(None);
        }
        let on_server = table.regions.len();
        let Some(limit) = self.config.split.size_to_check(
            policy,
            desc,
            self.config.region.flush_size,
            on_server,
            split_policy::jitter_rate(&region.info.encoded_name),
        ) else {
            return Ok(None);
        };
        let sizes = region.stores().map(|s| s.files_size());
        let size = if self.config.split.overall_files {
            sizes.sum()
        } else {
            sizes.max().unwrap_or(0)
        };
        if size <= limit || region.stores().any(|s| s.has_references()) {
            return Ok(None);
        }
        split_policy::split_point(region)
    }
}

/// Whether store file `f` has a cell in half `h`, from its first and last rows.
fn file_has_cells_in(f: &StoreFile, h: &Half) -> Result<bool> {
    let row = |k: Option<&[u8]>| -> Result<Option<Vec<u8>>> {
        k.map(|k| Ok(cairn_cell::KeyRef::parse(k)?.row().to_vec()))
            .transpose()
    };
    let (Some(first), Some(last)) = (row(f.reader.first_key())?, row(f.reader.last_key())?) else {
        return Ok(false);
    };
    Ok(if h.top {
        h.contains_row(&last)
    } else {
        h.contains_row(&first)
    })
}
