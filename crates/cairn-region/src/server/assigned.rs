//! Regions a master assigns ([`Hosting::Assigned`]): opened from the cluster's root when
//! the master says open, closed when it says close (HBase's `AssignRegionHandler` and
//! `UnassignRegionHandler`). The routing table then holds, per table, only the regions this
//! server has open; requests name their region, so rows outside them find no region here and
//! the client asks meta again.

use super::*;

/// What opening an assigned region did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opened {
    /// The region's first sequence id here (HBase's `openSeqNum`, which the master records
    /// in meta): above every edit in its store files and recovered edits.
    pub open_sequence_id: u64,
    /// Whether the region was open already (the master asked again).
    pub already_open: bool,
    /// Edits replayed from the region's `recovered.edits`.
    pub recovered_edits: u64,
}

impl RegionServer {
    /// The open region whose encoded name is `encoded`, if this server holds it.
    pub fn hosted_region(&self, encoded: &str) -> Option<Arc<Region>> {
        self.tables
            .load()
            .values()
            .flat_map(|t| t.regions.iter())
            .find(|r| r.info.encoded_name == encoded && !r.is_closed())
            .cloned()
    }

    /// Every open region, in table then key order.
    pub fn hosted_regions(&self) -> Vec<Arc<Region>> {
        self.tables
            .load()
            .values()
            .flat_map(|t| t.regions.iter().cloned())
            .filter(|r| !r.is_closed())
            .collect()
    }

    /// Opens the region `info` names from its directory under the root, as the master
    /// assigned it: the table's descriptor from `.tabledesc`, the region's `.regioninfo`
    /// written if the directory lacks one, its `recovered.edits` replayed and flushed (then
    /// deleted), and the region added to the routing table. Opening a region that is open
    /// already is not an error.
    pub fn open_assigned(&self, info: &RegionInfo) -> Result<Opened> {
        let _admin = self.admin.lock();
        if let Some(r) = self.hosted_region(&info.encoded_name) {
            return Ok(Opened {
                open_sequence_id: r.write_point() + 1,
                already_open: true,
                recovered_edits: 0,
            });
        }
        let fs = self.config.region.fs.clone();
        let tdir = layout::table_dir(&self.config.root, &info.table);
        // Read at every open: the master reopens a table's regions after `modifyTable`, and
        // each must open with the descriptor as it is now.
        let descriptor = Arc::new(
            layout::read_table_descriptor(&*fs, &tdir)?
                .ok_or_else(|| RegionError::TableNotFound(info.table.to_string()))?,
        );
        let rdir = tdir.join(&info.encoded_name);
        let info_file = rdir.join(REGION_INFO_FILE);
        if !fs
            .exists(&info_file)
            .map_err(|e| RegionError::io(&info_file, e))?
        {
            // HBase's region server writes it too when the master's procedure did not.
            fs.mkdirs_durable(&rdir)
                .map_err(|e| RegionError::io(&rdir, e))?;
            layout::write_region_info(&*fs, &rdir, info)?;
        }
        let region = Arc::new(Region::open(
            &rdir,
            descriptor.clone(),
            None,
            self.cache.clone(),
            self.config.region.clone(),
        )?);
        if region.info.encoded_name != info.encoded_name {
            return Err(RegionError::InvalidArgument(format!(
                "{} holds region {}, not {}",
                rdir.display(),
                region.info.encoded_name,
                info.encoded_name
            )));
        }
        let flushed = region.flushed_sequence_ids();
        let mut report = RecoveryReport::default();
        let edits = recovered_edits::replay(&*fs, &region, &flushed, &mut report)?;
        if edits.max_sequence_id.is_some() {
            region.flush()?;
        }
        recovered_edits::remove(&*fs, &edits.files)?;
        region.attach_wal(self.wal.clone());
        let opened = Opened {
            open_sequence_id: region.write_point() + 1,
            already_open: false,
            recovered_edits: report.recovered_edits_replayed,
        };
        self.install(descriptor, tdir, region);
        Ok(opened)
    }

    /// Adds an opened region to the routing table (under the admin lock); the table takes
    /// the descriptor the region opened with, the newest.
    fn install(&self, descriptor: Arc<TableDescriptor>, dir: PathBuf, region: Arc<Region>) {
        let mut tables = (**self.tables.load()).clone();
        let name = descriptor.name.clone();
        let mut regions: Vec<Arc<Region>> = tables
            .get(&name)
            .map(|t| {
                t.regions
                    .iter()
                    .filter(|r| !r.is_closed())
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        regions.retain(|r| r.info.encoded_name != region.info.encoded_name);
        regions.push(region);
        regions.sort_by(|a, b| a.info.start_key.cmp(&b.info.start_key));
        tables.insert(
            name,
            Arc::new(Table {
                descriptor,
                regions,
                // The master opens only regions of enabled tables.
                enabled: AtomicBool::new(true),
                dir,
                has_parents: AtomicBool::new(false),
            }),
        );
        self.tables.store(Arc::new(tables));
    }

    /// Closes the region `encoded` as the master asked: it leaves the routing table first
    /// (new requests get `NotServingRegion` and look it up again), then its memstore is
    /// flushed, so the server that opens it next finds every acknowledged edit in its store
    /// files and nothing of it is left in this server's WAL. False if it was not open here.
    pub fn close_assigned(&self, encoded: &str) -> Result<bool> {
        let _admin = self.admin.lock();
        let Some(region) = self.hosted_region(encoded) else {
            return Ok(false);
        };
        // Stops writes (waiting out those already in) and flushes everything they wrote.
        region.close_for_transition()?;
        self.uninstall(&region);
        self.wal
            .mark_flushed(region.info.encoded_name.as_bytes(), region.write_point())?;
        Ok(true)
    }

    /// Removes a region from the routing table (under the admin lock); a table left without
    /// regions leaves it too.
    fn uninstall(&self, region: &Arc<Region>) {
        let mut tables = (**self.tables.load()).clone();
        let name = region.info.table.clone();
        if let Some(t) = tables.get(&name).cloned() {
            let regions: Vec<_> = t
                .regions
                .iter()
                .filter(|r| !Arc::ptr_eq(r, region))
                .cloned()
                .collect();
            if regions.is_empty() {
                tables.remove(&name);
            } else {
                tables.insert(
                    name,
                    Arc::new(Table {
                        descriptor: t.descriptor.clone(),
                        regions,
                        enabled: AtomicBool::new(t.is_enabled()),
                        dir: t.dir.clone(),
                        has_parents: AtomicBool::new(false),
                    }),
                );
            }
        }
        self.tables.store(Arc::new(tables));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::ColumnFamilyDescriptor;

    fn assigned_server(root: &Path, start_code: u64) -> Arc<RegionServer> {
        let mut c = ServerConfig::new(root);
        c.background = false;
        c.hosting = Hosting::Assigned;
        c.server_name = ServerName::parse(&format!("localhost,16020,{start_code}")).unwrap();
        RegionServer::open(c).unwrap()
    }

    /// A table laid out as HBase's master lays it out before it assigns the regions:
    /// `.tabledesc` and one directory with `.regioninfo` per region.
    fn lay_out(root: &Path, name: &str, splits: &[&[u8]]) -> Vec<RegionInfo> {
        let fs = cairn_fs::LocalFileSystem;
        let table = TableName::parse(name).unwrap();
        let d = TableDescriptor::new(table.clone()).with_family(ColumnFamilyDescriptor::new("f"));
        let tdir = layout::table_dir(root, &table);
        layout::write_table_descriptor(&fs, &tdir, &d).unwrap();
        let mut bounds: Vec<&[u8]> = vec![b""];
        bounds.extend_from_slice(splits);
        bounds.push(b"");
        bounds
            .windows(2)
            .map(|w| {
                let info = RegionInfo::new(table.clone(), w[0], w[1], 1700000000000);
                let rdir = tdir.join(&info.encoded_name);
                std::fs::create_dir_all(&rdir).unwrap();
                layout::write_region_info(&fs, &rdir, &info).unwrap();
                info
            })
            .collect()
    }

    #[test]
    fn a_cluster_server_opens_only_what_it_is_assigned() {
        let dir = tempfile::tempdir().unwrap();
        let infos = lay_out(dir.path(), "t", &[b"m"]);
        let s = assigned_server(dir.path(), 1);
        assert!(
            s.table_names().is_empty(),
            "nothing opens before the master says so"
        );
        let opened = s.open_assigned(&infos[1]).unwrap();
        assert!(!opened.already_open);
        assert!(opened.open_sequence_id >= 1);
        assert!(s.open_assigned(&infos[1]).unwrap().already_open);
        let t = s.table(&infos[1].table).unwrap();
        assert_eq!(t.regions.len(), 1);
        assert!(s.region_by_name(infos[0].region_name().as_bytes()).is_err());
        let (_, r) = s.region_by_name(infos[1].region_name().as_bytes()).unwrap();
        r.put(&Put::new("x").add("f", "q", "v")).unwrap();
        s.open_assigned(&infos[0]).unwrap();
        let names: Vec<_> = s
            .hosted_regions()
            .iter()
            .map(|r| r.info.encoded_name.clone())
            .collect();
        assert_eq!(
            names,
            [infos[0].encoded_name.clone(), infos[1].encoded_name.clone()]
        );

        // Closing flushes: another server opening the region finds the edit in its files.
        assert!(s.close_assigned(&infos[1].encoded_name).unwrap());
        assert!(!s.close_assigned(&infos[1].encoded_name).unwrap());
        assert!(s.region_by_name(infos[1].region_name().as_bytes()).is_err());
        assert!(r.is_closed());
        s.close().unwrap();
        drop(s);
        // An orderly stop leaves nothing for a master to split: its WAL is archived.
        let own = dir.path().join("WALs/localhost,16020,1");
        let left: Vec<_> = std::fs::read_dir(&own)
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{left:?}");
        let other = assigned_server(dir.path(), 2);
        let opened = other.open_assigned(&infos[1]).unwrap();
        assert!(opened.open_sequence_id > 1, "{opened:?}");
        let (_, r) = other
            .region_by_name(infos[1].region_name().as_bytes())
            .unwrap();
        let got = r.get(Get::new("x")).unwrap();
        assert_eq!(got[0].as_cell().value, b"v");
    }

    #[test]
    fn a_region_opens_with_the_descriptor_as_it_is_now() {
        let dir = tempfile::tempdir().unwrap();
        let infos = lay_out(dir.path(), "t", &[b"m"]);
        let s = assigned_server(dir.path(), 1);
        s.open_assigned(&infos[0]).unwrap();
        // The master's modifyTable adds a family, then reopens the regions one by one.
        let table = infos[0].table.clone();
        let d = TableDescriptor::new(table.clone())
            .with_family(ColumnFamilyDescriptor::new("f"))
            .with_family(ColumnFamilyDescriptor::new("g"));
        let tdir = layout::table_dir(dir.path(), &table);
        std::fs::remove_dir_all(tdir.join(layout::TABLE_DESC_DIR)).unwrap();
        layout::write_table_descriptor(&cairn_fs::LocalFileSystem, &tdir, &d).unwrap();
        s.open_assigned(&infos[1]).unwrap();
        let (_, r) = s.region_by_name(infos[1].region_name().as_bytes()).unwrap();
        assert!(r.store(b"g").is_some(), "opened with the old descriptor");
    }

    #[test]
    fn a_cluster_server_leaves_other_servers_wals_and_tables_alone() {
        let dir = tempfile::tempdir().unwrap();
        let infos = lay_out(dir.path(), "t", &[]);
        // A standalone server under the same root leaves an edit in its WAL (a crash).
        {
            let mut c = ServerConfig::new(dir.path());
            c.background = false;
            let s = RegionServer::open(c).unwrap();
            s.put(&infos[0].table, &Put::new("a").add("f", "q", "1"))
                .unwrap();
            drop(s); // no orderly close: the edit stays in the WAL only
        }
        let s = assigned_server(dir.path(), 1);
        assert_eq!(s.recovery.wal.as_ref().unwrap().edits, 0);
        assert!(s.table_names().is_empty());
        // The dead server's directory is still there for the master to split.
        let wals = std::fs::read_dir(dir.path().join("WALs")).unwrap().count();
        assert_eq!(wals, 2);
    }
}
