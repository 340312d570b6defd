//! Regions by name, for servers whose clients address regions (HBase's native RPC), and the
//! region-level writes, flushes and compactions such servers do.

use super::*;

impl RegionServer {
    /// The open region named `name`: HBase's full region name bytes
    /// (`<table>,<start key>,<region id>.<encoded>.`) or the bare encoded name. A name no
    /// enabled table has is [`RegionError::NotServingRegion`].
    pub fn region_by_name(&self, name: &[u8]) -> Result<(Arc<Table>, Arc<Region>)> {
        let encoded = match name.strip_suffix(b".") {
            // `<...>.<encoded>.`: the encoded name is the part after the last inner dot.
            Some(body) => match body.iter().rposition(|&b| b == b'.') {
                Some(i) => &body[i + 1..],
                None => name,
            },
            None => name,
        };
        let tables = self.tables.load();
        for t in tables.values() {
            if let Some(r) = t.regions.iter().find(|r| {
                r.info.encoded_name.as_bytes() == encoded || r.info.region_name_bytes() == name
            }) {
                if !t.is_enabled() || r.is_closed() {
                    break;
                }
                return Ok((t.clone(), r.clone()));
            }
        }
        Err(RegionError::NotServingRegion(
            String::from_utf8_lossy(name).into_owned(),
        ))
    }

    /// Call after writing to a region directly (not through this server's table methods):
    /// queues the region's flush once its memstore passed the flush size, as those do.
    pub fn wrote(&self, region: &Arc<Region>) {
        self.after_write(region);
    }

    /// Flushes one region's memstores now.
    pub fn flush_region(&self, region: &Arc<Region>) -> Result<()> {
        region.flush().map(|_| ())
    }

    /// Compacts one region's stores now (all files if `major`).
    pub fn compact_region(&self, region: &Arc<Region>, major: bool) -> Result<()> {
        region.compact(major).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::{ColumnFamilyDescriptor, TableName};

    #[test]
    fn regions_are_found_by_full_and_encoded_name() {
        let dir = tempfile::tempdir().unwrap();
        let rs = RegionServer::open(ServerConfig::new(dir.path())).unwrap();
        let name = TableName::parse("t").unwrap();
        rs.create_table(
            TableDescriptor::new(name.clone()).with_family(ColumnFamilyDescriptor::new("f")),
            &[b"\x00.m.".to_vec()],
        )
        .unwrap();
        let t = rs.table(&name).unwrap();
        for r in &t.regions {
            let (_, by_full) = rs.region_by_name(&r.info.region_name_bytes()).unwrap();
            assert_eq!(by_full.info, r.info);
            let (_, by_enc) = rs.region_by_name(r.info.encoded_name.as_bytes()).unwrap();
            assert_eq!(by_enc.info, r.info);
        }
        assert!(matches!(
            rs.region_by_name(b"t,,1.nosuch."),
            Err(RegionError::NotServingRegion(_))
        ));
        rs.disable_table(&name).unwrap();
        let r = &t.regions[0];
        assert!(matches!(
            rs.region_by_name(&r.info.region_name_bytes()),
            Err(RegionError::NotServingRegion(_))
        ));
    }
}
