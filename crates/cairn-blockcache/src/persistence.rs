//! Persistence of the file engine: the cache file's own header and the block map.
//!
//! The cache file starts with 4 KiB holding a magic, a random identity, the capacity and the
//! size classes, with a CRC32C. The map file holds that identity, the capacity and every
//! published slot (key, offset, length, priority), with a CRC32C over all of it; it is written
//! to a temporary file, synced and renamed, so a crash mid-persist leaves the previous map.
//!
//! On start a map is used only if its checksum holds and it names this cache file; each entry is
//! then checked against the slot header in the cache file (magic, key, length) before it is
//! published, and every block read from the file is verified against its slot checksum. So a
//! stale map (slots reused after the last persist), a torn slot or a damaged file costs cache
//! hits, never a wrong block (HBase had bugs here: HBASE-22890, HBASE-28004).

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

use cairn_checksum::{ChecksumType, DataChecksum};

use crate::bucket::{BucketCacheConfig, Inner, FILE_HEADER_LEN, SLOT_HEADER};
use crate::engine::FileArena;
use crate::key::{BlockCacheKey, BlockPriority};

const FILE_MAGIC: &[u8; 8] = b"CAIRNBC1";
const MAP_MAGIC: &[u8; 8] = b"CAIRNBM1";
const VERSION: u32 = 1;

fn crc32c(bytes: &[u8]) -> u32 {
    DataChecksum::new(ChecksumType::Crc32C, u32::MAX)
        .expect("valid")
        .checksum(bytes)
}

fn random_u128() -> u128 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    h.write_u32(std::process::id());
    let a = h.finish();
    let mut h2 = std::collections::hash_map::RandomState::new().build_hasher();
    h2.write_u64(a);
    ((a as u128) << 64) | h2.finish() as u128
}

fn file_header(uuid: u128, config: &BucketCacheConfig) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(FILE_MAGIC);
    h.extend_from_slice(&VERSION.to_be_bytes());
    h.extend_from_slice(&uuid.to_be_bytes());
    h.extend_from_slice(&config.capacity.to_be_bytes());
    h.extend_from_slice(&(config.size_classes.len() as u32).to_be_bytes());
    for c in &config.size_classes {
        h.extend_from_slice(&c.to_be_bytes());
    }
    let c = crc32c(&h);
    h.extend_from_slice(&c.to_be_bytes());
    h
}

/// Reads the cache file's identity if its header is intact and matches the configuration;
/// otherwise writes a new header with a new identity (which no old map can match).
pub(crate) fn open_cache_file(arena: &FileArena, config: &BucketCacheConfig) -> io::Result<u128> {
    let existing = arena.read(0, FILE_HEADER_LEN as usize)?;
    let uuid = u128::from_be_bytes(existing[12..28].try_into().expect("16 bytes"));
    let expected = file_header(uuid, config);
    if existing[..expected.len()] == expected[..] {
        return Ok(uuid);
    }
    let uuid = random_u128();
    let mut h = file_header(uuid, config);
    h.resize(FILE_HEADER_LEN as usize, 0);
    arena.write(0, &h)?;
    arena.sync()?;
    Ok(uuid)
}

/// Writes the map atomically (temporary file, sync, rename).
pub(crate) fn write_map(inner: &Inner, path: &Path) -> io::Result<()> {
    let entries = inner.table.entries();
    let mut m = Vec::with_capacity(48 + entries.len() * 29);
    m.extend_from_slice(MAP_MAGIC);
    m.extend_from_slice(&VERSION.to_be_bytes());
    m.extend_from_slice(&inner.uuid.to_be_bytes());
    m.extend_from_slice(&inner.config().capacity.to_be_bytes());
    m.extend_from_slice(&(entries.len() as u64).to_be_bytes());
    for (key, slot) in &entries {
        m.extend_from_slice(&key.file.to_be_bytes());
        m.extend_from_slice(&key.offset.to_be_bytes());
        m.extend_from_slice(&slot.offset.to_be_bytes());
        m.extend_from_slice(&slot.len.to_be_bytes());
        m.push(slot.priority() as u8);
    }
    drop(entries);
    let c = crc32c(&m);
    m.extend_from_slice(&c.to_be_bytes());
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    {
        let mut f = File::create(&tmp)?;
        f.write_all(&m)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// What a restore did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RestoreReport {
    /// Blocks published again.
    pub restored: u64,
    /// Entries whose slot no longer holds their block.
    pub dropped: u64,
    /// The map was missing, damaged or for another cache file: started empty.
    pub discarded_map: bool,
}

/// Publishes the blocks a persisted map names, after checking the map and each slot.
pub(crate) fn restore(inner: &Inner, arena: &FileArena, path: &Path) -> RestoreReport {
    let mut report = RestoreReport::default();
    let Ok(m) = fs::read(path) else {
        return report;
    };
    let parsed = parse_map(&m, inner.uuid, inner.config().capacity);
    let Some(entries) = parsed else {
        report.discarded_map = true;
        return report;
    };
    for (key, offset, len, priority) in entries {
        let ok = offset >= FILE_HEADER_LEN
            && offset + len as u64 <= arena.len()
            && (len as usize) >= SLOT_HEADER
            && arena
                .read(offset, SLOT_HEADER)
                .is_ok_and(|h| inner.check_slot_header(&h, &key, len))
            && inner.claim_and_publish(key, offset, len, priority);
        if ok {
            report.restored += 1;
        } else {
            report.dropped += 1;
        }
    }
    report
}

type MapEntry = (BlockCacheKey, u64, u32, BlockPriority);

fn parse_map(m: &[u8], uuid: u128, capacity: u64) -> Option<Vec<MapEntry>> {
    if m.len() < 48 || &m[..8] != MAP_MAGIC {
        return None;
    }
    let (body, stored) = m.split_at(m.len() - 4);
    if crc32c(body) != u32::from_be_bytes(stored.try_into().ok()?) {
        return None;
    }
    let version = u32::from_be_bytes(body[8..12].try_into().ok()?);
    let map_uuid = u128::from_be_bytes(body[12..28].try_into().ok()?);
    let map_capacity = u64::from_be_bytes(body[28..36].try_into().ok()?);
    let count = u64::from_be_bytes(body[36..44].try_into().ok()?) as usize;
    if version != VERSION
        || map_uuid != uuid
        || map_capacity != capacity
        || body.len() != 44 + count.checked_mul(29)?
    {
        return None;
    }
    Some(
        body[44..]
            .chunks_exact(29)
            .map(|e| {
                (
                    BlockCacheKey {
                        file: u64::from_be_bytes(e[..8].try_into().expect("8")),
                        offset: u64::from_be_bytes(e[8..16].try_into().expect("8")),
                    },
                    u64::from_be_bytes(e[16..24].try_into().expect("8")),
                    u32::from_be_bytes(e[24..28].try_into().expect("4")),
                    BlockPriority::from_u8(e[28]),
                )
            })
            .collect(),
    )
}
