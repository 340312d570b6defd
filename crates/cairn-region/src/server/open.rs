//! Opening the server: tables and regions from the root directory, then what a crash left
//! replayed into them (recovery): each region's `recovered.edits`, this server's WAL and every
//! dead server's under the WAL root (cairn's earlier runs, an HBase whose root this is).

use super::*;

/// What opening found in the WAL.
#[derive(Clone, Debug, Default)]
pub struct RecoveryReport {
    /// Tables found under `<root>/data`.
    pub tables: usize,
    /// Regions opened across those tables.
    pub regions: usize,
    /// What reading the WAL files found (files, edits, bytes dropped at a torn tail); `None`
    /// only in a report no open filled in.
    pub wal: Option<cairn_wal::ReplayReport>,
    /// Files read from regions' `recovered.edits` (what HBase's `WALSplitter` split out of a
    /// dead server's WAL).
    pub recovered_edits_files: usize,
    /// Edits of those files routed to their region.
    pub recovered_edits_replayed: u64,
    /// Bytes of those files replay could not use (a torn tail), one entry per file.
    pub recovered_edits_dropped: Vec<cairn_wal::Dropped>,
    /// Edits of HBase's own tables (`hbase:meta`, `hbase:namespace`) found in WAL files:
    /// cairn does not serve those tables, so the files holding them stay as they are.
    pub system_edits_kept: u64,
    /// WAL edits routed to a region of this server (including edits whose cells were all flushed
    /// already).
    pub edits_replayed: u64,
    /// Cells of those edits added to memstores: the ones newer than their store's flushed
    /// sequence id.
    pub cells_replayed: u64,
    /// Edits for regions that no longer exist (dropped tables, split or merged parents, all
    /// of whose edits were flushed before the change).
    pub edits_skipped: u64,
    /// Edits for regions replay could not find and that were not retired: kept in their
    /// segments, which stay on disk (see [`missing_regions`](Self::missing_regions)).
    pub edits_kept: u64,
    /// The regions those edits belong to, with the segments holding them (also logged).
    pub missing_regions: Vec<MissingRegion>,
    /// Splits and merges a crash interrupted after their point of no return, finished.
    pub transitions_finished: usize,
    /// Splits and merges a crash interrupted before it, undone.
    pub transitions_undone: usize,
}

/// The subdirectories of `dir` whose names do not start with `.`, sorted; none if `dir` is
/// missing.
pub(super) fn read_dirs(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = match fs.list(dir) {
        Ok(entries) => entries
            .into_iter()
            .filter(|e| e.is_dir)
            .filter(|e| {
                !e.path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .map(|e| e.path)
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(RegionError::io(dir, e)),
    };
    out.sort();
    Ok(out)
}

/// HBase's system namespace: its tables are HBase's own.
const SYSTEM_NAMESPACE: &str = "hbase";
/// How a WAL edit names a table of the system namespace.
const SYSTEM_TABLE_PREFIX: &[u8] = b"hbase:";

/// Logs what replay read: every file of a dead server, every drop (file and offset), and the
/// edits left for HBase's system tables.
fn log_replay(wal: &cairn_wal::ReplayReport, report: &RecoveryReport) {
    for f in wal.files.iter().filter(|f| !f.own || !f.closed) {
        tracing::info!("replayed {f}");
    }
    for d in &wal.dropped {
        tracing::warn!("WAL replay: {d}; the entries before it were replayed");
    }
    for s in &wal.live_servers {
        tracing::info!("WAL directory of {s} left alone: another process holds it");
    }
    if report.system_edits_kept > 0 {
        tracing::info!(
            "{} WAL edits of HBase's system tables (hbase:meta, hbase:namespace) left in their \
             files for HBase: cairn does not serve those tables",
            report.system_edits_kept
        );
    }
}

impl RegionServer {
    /// Opens (creating) the root directory: loads every table and region, replays what a
    /// crash left into them (their `recovered.edits`, this server's WAL and every dead
    /// server's under the WAL root), and flushes what was replayed so that the old WAL files
    /// and the recovered edits can go. A WAL or recovered edits file that cannot be read
    /// stops the open with an error naming it.
    pub fn open(mut config: ServerConfig) -> Result<Arc<RegionServer>> {
        // One count for every region this server opens, replay included.
        let limits = config
            .global_memstore
            .limits(cairn_blockcache::physical_memory());
        config.region.accounting = crate::accounting::RegionServerAccounting::new(limits);
        let root = config.root.clone();
        let fs = config.region.fs.clone();
        let (wal_fs, wal_loc) = config.wal_location();
        health::check_free_space(&*fs, &root)?;
        health::check_free_space(&*wal_fs, &wal_loc.root)?;
        let data = layout::data_dir(&root);
        fs.mkdirs_durable(&data)
            .map_err(|e| RegionError::io(&data, e))?;
        let cache = match &config.block_cache {
            Some(c) => Some(Arc::new(
                CombinedBlockCache::new(c.clone()).map_err(|e| RegionError::io(&root, e))?,
            )),
            None => None,
        };
        // Regions open without a WAL first: the WAL replays into them before taking writes.
        let mut report = RecoveryReport::default();
        let mut tables = BTreeMap::new();
        let mut pending = Vec::new();
        // Regions whose WAL edits are obsolete: retired with their table, or split and merge
        // parents (offline, or in the archive), all flushed before they went.
        let assigned = config.hosting == Hosting::Assigned;
        if assigned {
            // The master splits dead servers' WALs; this server's own directory is new.
            config.wal.adopt_dead_servers = false;
        }
        let mut unopened = retired::Unopened {
            gone: if assigned {
                Default::default()
            } else {
                retired::read_record(&*fs, &root)?
            },
            discard: config.discard_missing_region_edits,
            missing: BTreeMap::new(),
        };
        if !assigned {
            unopened
                .gone
                .extend(retired::archived_regions(&*fs, &root)?);
        }
        // A cluster's server opens regions only when the master assigns them.
        let namespaces = if assigned {
            Vec::new()
        } else {
            read_dirs(&*fs, &data)?
        };
        for ns in namespaces {
            // HBase's system tables (hbase:meta, hbase:namespace, ...): HBase's, not served
            // as tables here (cairn-server answers hbase:meta itself), left untouched.
            if ns.file_name().is_some_and(|n| n == SYSTEM_NAMESPACE) {
                continue;
            }
            for tdir in read_dirs(&*fs, &ns)? {
                let Some(desc) = layout::read_table_descriptor(&*fs, &tdir)? else {
                    continue;
                };
                let desc = Arc::new(desc);
                // A split or merge a crash interrupted is finished or undone first.
                let (forward, back) = transition::recover(&*fs, &tdir)?;
                report.transitions_finished += forward;
                report.transitions_undone += back;
                let mut regions = Vec::new();
                let mut has_parents = false;
                for rdir in read_dirs(&*fs, &tdir)? {
                    let info = rdir.join(REGION_INFO_FILE);
                    if !fs.exists(&info).map_err(|e| RegionError::io(&info, e))? {
                        continue;
                    }
                    // Split and merge parents stay until archived, but never open.
                    let info = layout::read_region_info(&*fs, &rdir)?;
                    if info.offline {
                        has_parents = true;
                        unopened.gone.insert(info.encoded_name);
                    } else {
                        regions.push(rdir);
                    }
                }
                pending.push((desc, tdir, regions, has_parents));
            }
        }
        // Open regions with a placeholder-free path: create the WAL after loading regions
        // so replay can route edits; regions get the WAL handle through `attach`.
        // Encoded region name -> the region and its per-family flushed sequence ids.
        type Recovering = (Arc<Region>, BTreeMap<Vec<u8>, u64>);
        let mut by_name: HashMap<Vec<u8>, Recovering> = HashMap::new();
        let mut staged = Vec::new();
        // Per region, the recovered.edits files to delete once it has flushed them.
        let mut recovered: HashMap<Vec<u8>, Vec<PathBuf>> = HashMap::new();
        let mut seen: HashMap<Vec<u8>, u64> = HashMap::new();
        for (desc, tdir, rdirs, has_parents) in pending {
            let mut regions = Vec::new();
            for rdir in rdirs {
                let r = Arc::new(Region::open(
                    &rdir,
                    desc.clone(),
                    None,
                    cache.clone(),
                    config.region.clone(),
                )?);
                if let Err(e) = crate::names::check_meta_row(&r.info) {
                    tracing::warn!(
                        "region {} serves, but clients cannot find it: {e}",
                        r.info.encoded_name
                    );
                }
                let flushed = r.flushed_sequence_ids();
                let name = r.info.encoded_name.as_bytes().to_vec();
                let edits = recovered_edits::replay(&*fs, &r, &flushed, &mut report)?;
                if let Some(max) = edits.max_sequence_id {
                    seen.insert(name.clone(), max);
                }
                if !edits.files.is_empty() {
                    recovered.insert(name.clone(), edits.files);
                }
                by_name.insert(name, (r.clone(), flushed));
                regions.push(r);
            }
            staged.push((desc, tdir, regions, has_parents));
        }
        let (wal, wal_report) = Wal::open_on(wal_fs, &wal_loc, config.wal.clone(), |edit| {
            match by_name.get(&edit.region) {
                // HBase's markers (region events, flush and compaction descriptors) hold no
                // data; their sequence ids count.
                Some((r, _)) if edit.is_marker() => {
                    r.advance_sequence_id(edit.sequence_id);
                    report.edits_replayed += 1;
                }
                Some((r, flushed)) => {
                    report.cells_replayed += r.replay(&edit, flushed);
                    report.edits_replayed += 1;
                }
                // Left in their files, which therefore stay, for HBase.
                None if edit.table.starts_with(SYSTEM_TABLE_PREFIX) => {
                    report.system_edits_kept += 1;
                    return Ok(());
                }
                None if unopened.obsolete(&edit.region) => report.edits_skipped += 1,
                None => {
                    // Kept: its segment must not be retired.
                    report.edits_kept += 1;
                    return Ok(());
                }
            }
            let e = seen.entry(edit.region.clone()).or_default();
            *e = (*e).max(edit.sequence_id);
            Ok(())
        })?;
        drop(by_name);
        log_replay(&wal_report, &report);
        report.wal = Some(wal_report);
        let wal = Arc::new(wal);
        for (desc, tdir, mut regions, has_parents) in staged {
            for r in &regions {
                // Replayed edits go to store files before the region takes writes, so the
                // old segments can be dropped.
                if seen.contains_key(r.info.encoded_name.as_bytes()) {
                    r.flush()?;
                }
                if let Some(files) = recovered.get(r.info.encoded_name.as_bytes()) {
                    recovered_edits::remove(&*fs, files)?;
                }
                r.attach_wal(wal.clone());
            }
            regions.sort_by(|a, b| a.info.start_key.cmp(&b.info.start_key));
            report.regions += regions.len();
            report.tables += 1;
            let marker = tdir.join(DISABLED_MARKER);
            let enabled = !fs
                .exists(&marker)
                .map_err(|e| RegionError::io(&marker, e))?;
            tables.insert(
                desc.name.clone(),
                Arc::new(Table {
                    descriptor: desc,
                    regions,
                    enabled: AtomicBool::new(enabled),
                    dir: tdir,
                    has_parents: AtomicBool::new(has_parents),
                }),
            );
        }
        // Everything replayed is in store files now. Only up to what was replayed: later
        // edits of these regions will get higher sequence ids and must stay.
        for (name, seq) in &seen {
            wal.mark_flushed(name, *seq)?;
        }
        report.missing_regions = unopened.report(&wal);
        if !assigned {
            retired::prune_record(&*fs, &root, &wal)?;
        }
        let mut server = RegionServer {
            config,
            wal,
            cache,
            tables: Arc::new(ArcSwap::from_pointee(tables)),
            admin: parking_lot::Mutex::new(()),
            flush_tx: None,
            compact_tx: None,
            workers: parking_lot::Mutex::new(Vec::new()),
            wal_retry: parking_lot::Mutex::new(Retry::default()),
            recovery: report,
            split_requester: std::sync::OnceLock::new(),
        };
        for name in server.table_names() {
            if let Err(e) = server.archive_parents_locked(&name) {
                tracing::warn!("archiving split or merge parents of {name}: {e}");
            }
        }
        if server.config.background {
            let (ftx, frx) = crossbeam_channel::unbounded();
            let (ctx, crx) = crossbeam_channel::unbounded();
            let wake = ftx.clone();
            server
                .config
                .region
                .accounting
                .set_flush_requester(move || {
                    let _ = wake.send(Work::GlobalPressure);
                });
            server.flush_tx = Some(ftx);
            server.compact_tx = Some(ctx);
            let server = Arc::new(server);
            let w1 = spawn_worker("cairn-flusher", frx, Arc::downgrade(&server));
            let w2 = spawn_worker("cairn-compactor", crx, Arc::downgrade(&server));
            server.workers.lock().extend([w1, w2]);
            return Ok(server);
        }
        Ok(Arc::new(server))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{server, table};
    use super::*;

    #[test]
    fn only_visible_subdirectories_are_listed() {
        let dir = tempfile::tempdir().unwrap();
        let fs = cairn_fs::LocalFileSystem;
        for d in ["b", "a", ".tmp", ".tabledesc"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("file"), b"").unwrap();
        let names: Vec<PathBuf> = read_dirs(&fs, dir.path()).unwrap();
        assert_eq!(names, vec![dir.path().join("a"), dir.path().join("b")]);
        assert!(read_dirs(&fs, &dir.path().join("missing"))
            .unwrap()
            .is_empty());
    }

    fn open_with(dir: &Path, discard: bool) -> Arc<RegionServer> {
        let mut c = ServerConfig::new(dir);
        c.background = false;
        c.discard_missing_region_edits = discard;
        RegionServer::open(c).unwrap()
    }

    #[test]
    fn edits_of_a_region_replay_cannot_find_are_kept_until_it_is_back() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let t = table(&s, "t", &[]);
        let u = table(&s, "u", &[]);
        s.put(&t, &Put::new("a").add("f", "q", "kept")).unwrap();
        s.put(&u, &Put::new("b").add("f", "q", "1")).unwrap();
        let rdir = s.table(&t).unwrap().regions[0].dir().to_path_buf();
        let encoded = s.table(&t).unwrap().regions[0].info.encoded_name.clone();
        // A crash, then the region's directory is not there at the next start.
        drop(s);
        let aside = dir.path().join("aside");
        std::fs::rename(&rdir, &aside).unwrap();
        let s = server(dir.path());
        let r = &s.recovery;
        assert_eq!(r.edits_kept, 1, "{r:?}");
        assert_eq!(r.missing_regions.len(), 1, "{r:?}");
        let missing = r.missing_regions[0].clone();
        assert_eq!(
            (missing.region.as_str(), missing.edits),
            (encoded.as_str(), 1)
        );
        assert!(!missing.segments.is_empty());
        assert_eq!(s.get(&u, Get::new("b")).unwrap().len(), 1);
        // An orderly stop retires what it flushed, not the kept segments.
        s.close().unwrap();
        drop(s);
        for seg in &missing.segments {
            assert!(seg.exists(), "{} was retired", seg.display());
        }
        let s = server(dir.path());
        assert_eq!(s.recovery.edits_kept, 1, "kept again: {:?}", s.recovery);
        s.close().unwrap();
        drop(s);
        // The region is back: its edit replays.
        std::fs::rename(&aside, &rdir).unwrap();
        let s = server(dir.path());
        assert_eq!(
            (s.recovery.edits_kept, s.recovery.missing_regions.len()),
            (0, 0),
            "{:?}",
            s.recovery
        );
        let got = s.get(&t, Get::new("a")).unwrap();
        assert_eq!(got[0].as_cell().value, b"kept");
        s.close().unwrap();
        drop(s);
        for seg in &missing.segments {
            assert!(!seg.exists(), "{} outlived its edits", seg.display());
        }
    }

    #[test]
    fn edits_of_a_deleted_table_are_obsolete_and_the_record_is_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let t = table(&s, "t", &[]);
        let u = table(&s, "u", &[]);
        s.put(&t, &Put::new("a").add("f", "q", "1")).unwrap();
        // u's unflushed edit keeps the segment holding t's edit.
        s.put(&u, &Put::new("b").add("f", "q", "1")).unwrap();
        s.disable_table(&t).unwrap();
        s.delete_table(&t).unwrap();
        let record = dir.path().join(RETIRED_REGIONS_FILE);
        assert!(!std::fs::read_to_string(&record).unwrap().trim().is_empty());
        drop(s);
        let s = server(dir.path());
        let r = &s.recovery;
        assert!(r.edits_skipped >= 1, "{r:?}");
        assert_eq!((r.edits_kept, r.missing_regions.len()), (0, 0), "{r:?}");
        assert_eq!(s.get(&u, Get::new("b")).unwrap().len(), 1);
        // The segment went once u's edit was flushed at open; no segment names t any more.
        assert_eq!(std::fs::read_to_string(&record).unwrap().trim(), "");
    }

    #[test]
    fn missing_regions_edits_go_only_when_the_operator_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let t = table(&s, "t", &[]);
        s.put(&t, &Put::new("a").add("f", "q", "1")).unwrap();
        let tdir = layout::table_dir(s.root(), &t);
        drop(s);
        std::fs::remove_dir_all(tdir.join(".tabledesc")).unwrap();
        let s = open_with(dir.path(), true);
        assert_eq!(s.recovery.missing_regions.len(), 1, "{:?}", s.recovery);
        let segments = s.recovery.missing_regions[0].segments.clone();
        s.close().unwrap();
        drop(s);
        for seg in &segments {
            assert!(!seg.exists(), "{} kept", seg.display());
        }
        let s = open_with(dir.path(), false);
        assert_eq!(s.recovery.edits_kept, 0, "{:?}", s.recovery);
    }

    #[test]
    fn reopening_after_a_crash_replays_the_wal_and_reports_it() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let t = table(&s, "t", &["m"]);
        s.put(&t, &Put::new("a").add("f", "q", "1")).unwrap();
        s.put(&t, &Put::new("z").add("f", "q", "2").add("f", "r", "3"))
            .unwrap();
        s.flush_table(&t).unwrap();
        s.put(&t, &Put::new("b").add("f", "q", "4")).unwrap();
        // No close: the memstores are lost, the synced WAL is not.
        drop(s);
        let s = server(dir.path());
        let r = &s.recovery;
        assert_eq!((r.tables, r.regions), (1, 2));
        // Edits are replayed from the last flushed point, whichever segment holds them; edits
        // already in store files add no cells.
        assert!(r.edits_replayed >= 1);
        assert_eq!(r.cells_replayed, 1, "{r:?}");
        assert_eq!(r.edits_skipped, 0);
        assert_eq!(s.get(&t, Get::new("b")).unwrap().len(), 1);
        // Replayed edits were flushed at open: a second reopen replays nothing.
        s.close().unwrap();
        drop(s);
        let s = server(dir.path());
        assert_eq!(s.recovery.cells_replayed, 0, "{:?}", s.recovery);
        assert_eq!(s.get(&t, Get::new("z")).unwrap().len(), 2);
    }
}
