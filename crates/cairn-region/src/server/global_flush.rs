//! Flushes for memory (HBase's `MemStoreFlusher.flushOneForGlobalPressure`): while the
//! server's memstores hold the lower mark or more, the region with the largest memstore is
//! flushed, preferring regions whose stores are not at `hbase.hstore.blockingStoreFiles`
//! unless the largest is more than twice the largest of those.

use super::background::background_flush;
use super::*;

impl RegionServer {
    /// Flushes the largest memstores, one region at a time, until the server is below the
    /// lower mark or no region can be flushed now (closed, flushing already, empty, or a
    /// failed flush whose retry is not due: those wait for the tick or the next wake-up).
    pub(super) fn flush_for_global_pressure(&self) {
        let accounting = self.memstore_accounting();
        accounting.wakeup_taken();
        let mut excluded: Vec<Arc<Region>> = Vec::new();
        while accounting.is_above_low_water_mark() {
            let Some(r) = self.region_to_flush_for_pressure(&excluded) else {
                break;
            };
            tracing::debug!(
                "flush of {} for global memstore pressure: server {} bytes, region {} bytes",
                r.info.region_name(),
                accounting.size(),
                r.memstore_size()
            );
            // A region that failed, or whose flush freed nothing, is not asked again in this
            // round: the loop must end even if its count and its segments disagree.
            let before = r.memstore_size();
            if !background_flush(&r, Some(self)) || r.memstore_size() >= before {
                excluded.push(r);
            }
        }
    }

    /// The region a flush for memory should take (see the module docs), if any.
    pub(super) fn region_to_flush_for_pressure(
        &self,
        excluded: &[Arc<Region>],
    ) -> Option<Arc<Region>> {
        let now = std::time::Instant::now();
        let mut candidates: Vec<(u64, Arc<Region>)> = Vec::new();
        for t in self.tables.load().values() {
            for r in &t.regions {
                let size = r.memstore_size();
                if size == 0
                    || r.is_closed()
                    || r.is_flushing()
                    || excluded.iter().any(|x| Arc::ptr_eq(x, r))
                    || !r.flush_retry.lock().due(now)
                {
                    continue;
                }
                candidates.push((size, r.clone()));
            }
        }
        let biggest = |flushable_only: bool| {
            candidates
                .iter()
                .filter(|(_, r)| !flushable_only || !r.has_too_many_store_files())
                .max_by_key(|(size, _)| *size)
        };
        let any = biggest(false)?;
        match biggest(true) {
            Some(flushable) if any.0 <= 2 * flushable.0 => Some(flushable.1.clone()),
            _ => Some(any.1.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{server, table};
    use super::*;
    use crate::mutation::Put;

    #[test]
    fn the_largest_memstore_goes_first_unless_its_stores_are_full_of_files() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let t = table(&s, "t", &["b", "c"]);
        let regions = s.table(&t).unwrap().regions.clone();
        let put = |row: &str, bytes: usize| {
            s.put(&t, &Put::new(row).add("f", "q", vec![b'x'; bytes]))
                .unwrap()
        };
        put("a", 1000);
        put("b", 3000);
        put("c", 2000);
        let pick = |excluded: &[Arc<Region>]| s.region_to_flush_for_pressure(excluded).unwrap();
        assert!(Arc::ptr_eq(&pick(&[]), &regions[1]), "the largest");
        assert!(Arc::ptr_eq(&pick(&[regions[1].clone()]), &regions[2]));
        // Region b's store reaches hbase.hstore.blockingStoreFiles (16): c, at more than half
        // its size, goes first; once b is over twice c's size, b goes anyway.
        for i in 0..16 {
            put("b", 10);
            s.flush_region(&regions[1]).unwrap();
            assert_eq!(regions[1].store(b"f").unwrap().file_count(), i + 1);
        }
        put("b", 3000);
        assert!(regions[1].has_too_many_store_files());
        assert!(Arc::ptr_eq(&pick(&[]), &regions[2]));
        put("b", 2000);
        assert!(Arc::ptr_eq(&pick(&[]), &regions[1]));
        // Nothing in memory: nothing to pick.
        for r in &regions {
            s.flush_region(r).unwrap();
        }
        assert!(s.region_to_flush_for_pressure(&[]).is_none());
    }
}
