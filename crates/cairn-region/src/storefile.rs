//! One immutable store file: an HFile plus what the store needs to know about it
//! (HBase's `HStoreFile`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use cairn_blockcache::{CachedBlockSource, CombinedBlockCache};
use cairn_fs::{FileStatus, FileSystem};
use cairn_hfile::file_info::keys;
use cairn_hfile::{HFileReader, ReaderOptions, WriterOptions};

use crate::descriptor::ColumnFamilyDescriptor;
use crate::error::{RegionError, Result};
use crate::reference::Half;

/// A store file open for reading, with the file info the store and the compaction policy use
/// (HBase's `HStoreFile`). Immutable once written; shared by readers and compactions.
pub struct StoreFile {
    /// Where the file is: `<region>/<family>/<name>`.
    pub path: PathBuf,
    /// The HFile reader, reading blocks through the block cache when the server has one.
    pub reader: Arc<HFileReader>,
    /// `MAX_SEQ_ID_KEY`: every cell in the file has a sequence id at most this.
    pub max_sequence_id: u64,
    /// `MAJOR_COMPACTION_KEY`.
    pub major: bool,
    /// File length in bytes.
    pub size: u64,
    /// `TIMERANGE`: `[min, max]` timestamps, `None` if absent or empty.
    pub time_range: Option<(i64, i64)>,
    /// Modification time (ms) for the major-compaction schedule.
    pub modified_ms: i64,
    /// Selected by a running compaction.
    pub compacting: AtomicBool,
    /// For a reference file (a split daughter's or a merged region's): the half of the
    /// parent's file it covers. `reader` then reads the parent's file.
    pub half: Option<Half>,
    /// Bulk load: `Some(n)` when the name carries HBase's `_SeqId_<n>_` suffix; every cell of
    /// the file then reads with sequence id `n` (see [`bulk_load_sequence_id`]).
    pub bulk_sequence_id: Option<u64>,
    /// Bulk load: readers whose read point is below this skip the file, so a load of several
    /// families becomes visible at one MVCC step (0 for every file opened from disk).
    pub visible_from: u64,
    cache: Option<Arc<CombinedBlockCache>>,
}

impl std::fmt::Debug for StoreFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreFile")
            .field("path", &self.path)
            .field("max_sequence_id", &self.max_sequence_id)
            .field("size", &self.size)
            .finish()
    }
}

impl StoreFile {
    /// Opens the store file `status` names on `fs`. A reference (`<hfile>.<parent>`) opens
    /// the parent region's file it refers to, limited to the half it names.
    pub fn open(
        fs: &dyn FileSystem,
        status: &FileStatus,
        family: &ColumnFamilyDescriptor,
        cache: Option<&Arc<CombinedBlockCache>>,
    ) -> Result<StoreFile> {
        let Some(referred) = crate::reference::referred_path(&status.path) else {
            return Self::open_hfile(fs, status, family, cache);
        };
        let path = status.path.as_path();
        let bytes = fs.read(path).map_err(|e| RegionError::io(path, e))?;
        let half = Half::decode(&bytes, path)?;
        let referred_status = fs.status(&referred).map_err(|e| {
            RegionError::io(
                &referred,
                std::io::Error::new(
                    e.kind(),
                    format!("the file reference {} refers to: {e}", path.display()),
                ),
            )
        })?;
        let mut f = Self::open_hfile(fs, &referred_status, family, cache)?;
        f.path = path.to_path_buf();
        // As HBase estimates a half's size: half the file.
        f.size /= 2;
        f.half = Some(half);
        Ok(f)
    }

    /// Whether this is a reference to a parent region's file.
    pub fn is_reference(&self) -> bool {
        self.half.is_some()
    }

    fn open_hfile(
        fs: &dyn FileSystem,
        status: &FileStatus,
        family: &ColumnFamilyDescriptor,
        cache: Option<&Arc<CombinedBlockCache>>,
    ) -> Result<StoreFile> {
        let path = status.path.as_path();
        let name = path.display().to_string();
        // Blocks carry their own checksums: the filesystem's are read only when one fails.
        let raw = fs
            .open_no_checksum(path)
            .map_err(|e| RegionError::io(path, e))?;
        let reader = HFileReader::open_source(name.as_str().into(), raw, ReaderOptions::default())?;
        let reader = match cache {
            Some(c) => {
                let c = c.clone();
                let cache_on_read = family.block_cache_enabled;
                let in_memory = family.in_memory;
                reader.with_block_source(move |f| {
                    Arc::new(
                        CachedBlockSource::new(c, &name, f)
                            .cache_on_read(cache_on_read)
                            .in_memory(in_memory),
                    )
                })
            }
            None => reader,
        };
        let info = reader.file_info();
        let max_sequence_id = info
            .get_i64(keys::MAX_SEQ_ID_KEY)
            .or_else(|| info.get_i64(keys::MAX_MEMSTORE_TS_KEY))
            .unwrap_or(0)
            .max(0) as u64;
        let bulk_sequence_id = bulk_load_sequence_id(path);
        let max_sequence_id = bulk_sequence_id.unwrap_or(max_sequence_id);
        let major = info
            .get(keys::MAJOR_COMPACTION_KEY)
            // Bytes.toBoolean: any non-zero byte (HBase writes 0xff).
            .is_some_and(|v| v.first().is_some_and(|&b| b != 0));
        let time_range = info.get(keys::TIMERANGE).and_then(parse_time_range);
        let modified_ms = status.modified_ms;
        Ok(StoreFile {
            path: path.to_path_buf(),
            size: reader.file_len(),
            reader: Arc::new(reader),
            max_sequence_id,
            major,
            time_range,
            modified_ms,
            compacting: AtomicBool::new(false),
            half: None,
            bulk_sequence_id,
            visible_from: 0,
            cache: cache.cloned(),
        })
    }

    /// The file name (32 hex digits for files cairn or HBase wrote): what a compaction's
    /// `COMPACTION_EVENT_KEY` lists.
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Whether a running compaction has selected the file (so no other may).
    pub fn is_compacting(&self) -> bool {
        self.compacting.load(Ordering::Acquire)
    }

    /// Forgets the file's cached blocks (after it was compacted away). A reference's blocks
    /// are its parent file's, which the other half may still read: they stay.
    pub fn evict_cached_blocks(&self) {
        if self.half.is_some() {
            return;
        }
        if let Some(c) = &self.cache {
            c.evict_file(cairn_blockcache::file_id(&self.path.display().to_string()));
        }
    }
}

// ---- Bulk load (HBase's `StoreFileInfo` sequence-id helpers) ----

/// The marker HBase puts in a bulk-loaded file's name before its sequence id
/// (`StoreFileInfo.SEQ_ID_MARKER`).
pub const SEQ_ID_MARKER: &str = "_SeqId_";

/// `_SeqId_<n>_`: the name suffix a bulk load with sequence id `n` gives a file.
pub fn format_bulkload_seq_id(n: u64) -> String {
    format!("{SEQ_ID_MARKER}{n}_")
}

/// The sequence id in a bulk-loaded file's name (`<hex>_SeqId_<n>_`), as HBase's
/// `HStoreFile.open` takes it: such a file's cells all read with that id, so a put made
/// after the load (higher id) wins over a loaded cell with the same timestamp.
pub fn bulk_load_sequence_id(path: &std::path::Path) -> Option<u64> {
    let name = path.file_name()?.to_str()?;
    let rest = &name[name.find(SEQ_ID_MARKER)? + SEQ_ID_MARKER.len()..];
    rest[..rest.find('_')?].parse().ok()
}

/// HBase's `TimeRangeTracker` message (HBase.proto): a store file's `[from, to]` timestamps.
#[derive(Clone, PartialEq, prost::Message)]
struct TimeRangeTracker {
    #[prost(uint64, optional, tag = "1")]
    from: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    to: Option<u64>,
}

/// HBase writes `TIMERANGE` as two big-endian longs (older writers) or `PBUF` +
/// [`TimeRangeTracker`].
fn parse_time_range(v: &[u8]) -> Option<(i64, i64)> {
    let (lo, hi) = if let Some(body) = v.strip_prefix(b"PBUF") {
        let t = <TimeRangeTracker as prost::Message>::decode(body).ok()?;
        (t.from? as i64, t.to? as i64)
    } else if v.len() == 16 {
        (
            i64::from_be_bytes(v[..8].try_into().ok()?),
            i64::from_be_bytes(v[8..].try_into().ok()?),
        )
    } else {
        return None;
    };
    (lo <= hi).then_some((lo, hi))
}

/// Writer options for a family's store files.
pub fn writer_options(family: &ColumnFamilyDescriptor, include_tags: bool) -> WriterOptions {
    WriterOptions {
        block_size: family.block_size,
        checksum_type: family.checksum_type,
        bytes_per_checksum: family.bytes_per_checksum,
        compression: family.compression,
        bloom_type: family.bloom_type,
        include_tags,
        include_mvcc: true,
        data_block_encoding: family.data_block_encoding,
        compress_tags: family.compress_tags,
        ..WriterOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_major_compaction_flag_reads_as_hbases_bytes_to_boolean() {
        let dir = tempfile::tempdir().unwrap();
        let fs = cairn_fs::LocalFileSystem;
        for (byte, major) in [(0xffu8, true), (1, true), (0, false)] {
            let path = dir.path().join(format!("f{byte}"));
            let out = std::fs::File::create(&path).unwrap();
            let mut w = cairn_hfile::HFileWriter::new(
                out,
                path.display().to_string(),
                WriterOptions::default(),
            )
            .unwrap();
            let kv = cairn_cell::KeyValue::put(b"r", b"f", b"q", 1, b"v").unwrap();
            w.append(&kv.as_cell()).unwrap();
            w.append_file_info(keys::MAJOR_COMPACTION_KEY, &[byte])
                .unwrap();
            w.finish().unwrap();
            let status = fs.status(&path).unwrap();
            let f = StoreFile::open(&fs, &status, &ColumnFamilyDescriptor::new("f"), None).unwrap();
            assert_eq!(f.major, major, "MAJOR_COMPACTION_KEY {byte:#x}");
        }
    }

    #[test]
    fn bulk_load_sequence_ids_come_from_the_name() {
        let p = |s: &str| bulk_load_sequence_id(std::path::Path::new(s));
        let name = format!("0123abcd{}", format_bulkload_seq_id(42));
        assert_eq!(name, "0123abcd_SeqId_42_");
        assert_eq!(p(&format!("/r/f/{name}")), Some(42));
        assert_eq!(p("/r/f/0123abcd"), None);
        assert_eq!(p("/r/f/0123abcd_SeqId_"), None, "no closing underscore");
        assert_eq!(p("/r/f/0123abcd_SeqId_x_"), None);
        assert_eq!(p("/r/f/0123abcd_SeqId_0_"), Some(0));
    }

    #[test]
    fn time_ranges_in_both_encodings() {
        let mut raw = 5i64.to_be_bytes().to_vec();
        raw.extend_from_slice(&9i64.to_be_bytes());
        assert_eq!(parse_time_range(&raw), Some((5, 9)));
        assert_eq!(parse_time_range(b"PBUF\x08\x05\x10\x09"), Some((5, 9)));
        let tracker = TimeRangeTracker {
            from: Some(1_700_000_000_000),
            to: Some(1_800_000_000_000),
        };
        let mut pb = b"PBUF".to_vec();
        pb.extend(prost::Message::encode_to_vec(&tracker));
        assert_eq!(
            parse_time_range(&pb),
            Some((1_700_000_000_000, 1_800_000_000_000))
        );
        assert_eq!(parse_time_range(b"PBUF\x10\x09"), None, "no from");
        assert_eq!(
            parse_time_range(b"PBUF\x08\x09\x10\x05"),
            None,
            "from after to"
        );
        assert_eq!(parse_time_range(b"PBUF\x08"), None);
        assert_eq!(parse_time_range(b"xx"), None);
    }
}
