//! The HBase properties `cairn pe` reads (from `-D name=value` or HBase's configuration
//! directory): those the embedded region server and its block cache read. PE hands any `-D`
//! to HBase's configuration, where a misspelt name is silently ignored; cairn's command line
//! warns about the `-D` names not listed here, so a typo does not pass for a setting unseen.

/// Where a property goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PropertyKind {
    /// The region server's configuration (`ServerConfig::set_property`).
    Server,
    /// The block cache's (`BlockCacheConfig::from_properties`).
    BlockCache,
    /// `hbase.rootdir`: `--data` says where the store is.
    RootDir,
}

/// Names `ServerConfig::set_property` acts on (WAL, memstore, compaction, splits).
const SERVER: &[&str] = &[
    "hbase.regionserver.maxlogs",
    "hbase.regionserver.logroll.period",
    "hbase.master.logcleaner.ttl",
    "hbase.hregion.memstore.flush.size",
    "hbase.wal.dir",
    "cairn.direct_io_for_flush_and_compaction",
    "cairn.wal.recycled_segments",
    "hbase.hregion.memstore.block.multiplier",
    "hbase.hstore.compaction.throughput.higher.bound",
    "hbase.regionserver.thread.compaction.throttle",
    "hbase.hstore.blockingWaitTime",
    "hbase.hstore.compaction.min",
    "hbase.hstore.compactionThreshold",
    "hbase.hstore.compaction.max",
    "hbase.hstore.compaction.ratio",
    "hbase.hstore.compaction.min.size",
    "hbase.hstore.compaction.max.size",
    "hbase.hstore.blockingStoreFiles",
    "hbase.hregion.majorcompaction",
    "hbase.hregion.majorcompaction.jitter",
    "hbase.regionserver.hlog.blocksize",
    "hbase.regionserver.logroll.multiplier",
    "hbase.regionserver.region.split.policy",
    "hbase.hregion.max.filesize",
    "hbase.hregion.max.filesize.jitter",
    "hbase.increasing.policy.initial.size",
    "hbase.hregion.split.overallfiles",
    "hbase.regionserver.global.memstore.size",
    "hbase.regionserver.global.memstore.upperLimit",
    "hbase.regionserver.global.memstore.size.lower.limit",
    "hbase.regionserver.global.memstore.lowerLimit",
    "cairn.regionserver.global.memstore.block.wait",
    "cairn.wal.discard.missing.regions",
];

/// Names `BlockCacheConfig::from_properties` reads.
const BLOCK_CACHE: &[&str] = &[
    "hfile.block.cache.size",
    "cairn.blockcache.l1.bytes",
    "hbase.bucketcache.ioengine",
    "hbase.bucketcache.size",
    "hbase.bucketcache.persistent.path",
    "hbase.bucketcache.writer.threads",
    "hbase.bucketcache.writer.queuelength",
    "hbase.bucketcache.bucket.sizes",
    "cairn.blockcache.verify.memory.hits",
];

/// Where `name` goes, or `None` for a name cairn does not read.
pub(crate) fn kind(name: &str) -> Option<PropertyKind> {
    if SERVER.contains(&name) {
        Some(PropertyKind::Server)
    } else if BLOCK_CACHE.contains(&name) {
        Some(PropertyKind::BlockCache)
    } else if name == "hbase.rootdir" {
        Some(PropertyKind::RootDir)
    } else {
        None
    }
}

/// Whether `cairn pe` reads `name` (`hbase.rootdir` included: `--data` gives it instead).
pub fn reads(name: &str) -> bool {
    kind(name).is_some()
}

/// Every name taken, for error messages.
pub(crate) fn known() -> Vec<&'static str> {
    SERVER.iter().chain(BLOCK_CACHE).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_blockcache::BlockCacheConfig;
    use cairn_region::ServerConfig;

    /// The lists follow what the crates read: a name they read refuses a malformed value
    /// (names taking any string, and HBase's names cairn accepts and ignores, excepted).
    #[test]
    fn every_listed_name_is_read_by_its_crate() {
        let free_form = [
            "hbase.wal.dir",
            "hbase.regionserver.thread.compaction.throttle",
            "hbase.hstore.blockingWaitTime",
            "hbase.bucketcache.persistent.path",
            "cairn.blockcache.verify.memory.hits",
        ];
        for name in SERVER.iter().filter(|n| !free_form.contains(n)) {
            let mut c = ServerConfig::new("");
            assert!(c.set_property(name, "not-a-value").is_err(), "{name}");
        }
        for name in BLOCK_CACHE.iter().filter(|n| !free_form.contains(n)) {
            let r = BlockCacheConfig::from_properties([(*name, "not-a-value")]);
            assert!(r.is_err(), "{name}");
        }
        assert_eq!(
            kind("hbase.hstore.compaction.min"),
            Some(PropertyKind::Server)
        );
        assert_eq!(
            kind("hfile.block.cache.size"),
            Some(PropertyKind::BlockCache)
        );
        assert_eq!(
            kind("hbase.regionserver.region.split.policy"),
            Some(PropertyKind::Server)
        );
        assert_eq!(kind("hbase.rootdir"), Some(PropertyKind::RootDir));
        assert_eq!(kind("hbase.hstore.compaction.minn"), None);
    }
}
