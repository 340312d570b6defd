//! A segment file preallocated to its full size and mapped `MAP_SHARED`: appends are copies
//! into the mapping, with no system call. A store into a shared file mapping is in the page
//! cache (the file's own pages) the moment it completes, so it survives the death of the
//! process; `fdatasync` of the file puts it on stable storage.
//!
//! This module holds the only `unsafe` of the crate: the copy into the mapping and the call to
//! `posix_fallocate`. Everything else goes through memmap2's safe `MmapRaw` API.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::{MmapOptions, MmapRaw};

use crate::segment::{self, HEADER_LEN};
use crate::WalError;

/// A new segment has this much of its start prefaulted before it becomes active.
pub(crate) const PREFAULT_FIRST: u64 = 4 << 20;

/// The name a fully flushed segment's file has while it waits to be recycled.
pub(crate) fn free_path(dir: &Path, old_id: u64) -> PathBuf {
    dir.join(format!("{}.free", segment::segment_file_name(old_id)))
}

/// The temporary name a segment has until it becomes the active one.
pub(crate) fn tmp_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{}.tmp", segment::segment_file_name(id)))
}

/// An error constructor that copies the path only if it is called (i.e. on the error path).
pub(crate) fn io_err<'a>(
    op: &'static str,
    path: &'a Path,
    offset: u64,
) -> impl FnOnce(io::Error) -> WalError + 'a {
    move |source| WalError::Io {
        op,
        path: path.to_path_buf(),
        offset,
        source,
    }
}

/// One mapped segment file. Not `Clone`: the owner of the `Segment` is the only writer of the
/// mapping (`write_at` takes `&mut self`); others may hold the file (to fdatasync it) or the
/// mapping (to prefault it), neither of which touches the bytes.
pub(crate) struct Segment {
    id: u64,
    file: Arc<File>,
    map: Arc<MmapRaw>,
    /// Bytes of the mapping that may be written: the file is at least this long.
    capacity: u64,
    /// For a recycled segment, what its record checksums are XORed with; 0 otherwise.
    crc_mask: u32,
}

impl Segment {
    /// Creates segment `id` under its temporary name ([`tmp_path`]): writes the header,
    /// preallocates the file to `capacity` bytes (real blocks, so later stores into the mapping
    /// cannot fail for lack of space), fdatasyncs it, maps it and prefaults its start. The
    /// caller renames it into place with [`publish`] when it becomes the active segment.
    pub(crate) fn prepare(dir: &Path, id: u64, capacity: u64) -> Result<Segment, WalError> {
        let tmp = tmp_path(dir, id);
        // A file left by a failure (a disk too full to preallocate it) would hold on to the
        // space it got; removed, it gives it back for the next try.
        Segment::prepare_at(&tmp, id, capacity).inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
    }

    fn prepare_at(tmp: &Path, id: u64, capacity: u64) -> Result<Segment, WalError> {
        let capacity = capacity.max(HEADER_LEN as u64);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(tmp)
            .map_err(io_err("create", tmp, 0))?;
        file.write_all(&segment::encode_header(id))
            .map_err(io_err("write header of", tmp, 0))?;
        preallocate(&file, capacity).map_err(io_err("preallocate", tmp, 0))?;
        file.sync_all().map_err(io_err("fsync", tmp, 0))?;
        let seg =
            Segment::map_file(id, Arc::new(file), capacity, 0).map_err(io_err("map", tmp, 0))?;
        seg.populate(0, PREFAULT_FIRST);
        Ok(seg)
    }

    /// [`Segment::prepare`] in the file of a fully flushed older segment, waiting at `free`
    /// ([`free_path`]): its pages are likely still in the page cache, so writing them needs no
    /// fresh memory. The file is renamed to the temporary name and that rename made durable
    /// before anything in it changes, so no crash leaves new bytes under the old segment's
    /// name. The header is rewritten as a recycled one; the old records stay behind it.
    pub(crate) fn prepare_recycled(
        dir: &Path,
        id: u64,
        capacity: u64,
        free: &Path,
    ) -> Result<Segment, WalError> {
        let tmp = tmp_path(dir, id);
        let capacity = capacity.max(HEADER_LEN as u64);
        fs::rename(free, &tmp).map_err(io_err("rename for recycling", free, 0))?;
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io_err("fsync directory", dir, 0))?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&tmp)
            .map_err(io_err("open", &tmp, 0))?;
        {
            use std::os::unix::fs::FileExt;
            file.write_all_at(&segment::encode_recycled_header(id), 0)
                .map_err(io_err("write header of", &tmp, 0))?;
        }
        // A segment that grew for a huge record goes back to the usual size.
        if file.metadata().map_err(io_err("stat", &tmp, 0))?.len() > capacity {
            file.set_len(capacity)
                .map_err(io_err("truncate", &tmp, capacity))?;
        }
        preallocate(&file, capacity).map_err(io_err("preallocate", &tmp, 0))?;
        file.sync_all().map_err(io_err("fsync", &tmp, 0))?;
        let mask = segment::record_crc_mask(id);
        let seg = Segment::map_file(id, Arc::new(file), capacity, mask)
            .map_err(io_err("map", &tmp, 0))?;
        seg.populate(0, PREFAULT_FIRST);
        Ok(seg)
    }

    fn map_file(id: u64, file: Arc<File>, capacity: u64, crc_mask: u32) -> io::Result<Segment> {
        let len = usize::try_from(capacity)
            .map_err(|_| io::Error::other("segment larger than the address space"))?;
        let map = MmapOptions::new().len(len).map_raw(&*file)?;
        Ok(Segment {
            id,
            file,
            map: Arc::new(map),
            capacity,
            crc_mask,
        })
    }

    /// The same file preallocated to `capacity` bytes and mapped anew (for a record larger
    /// than a whole segment). What was written stays.
    pub(crate) fn grow(&self, capacity: u64) -> io::Result<Segment> {
        preallocate(&self.file, capacity)?;
        Segment::map_file(self.id, Arc::clone(&self.file), capacity, self.crc_mask)
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Copies an encoded record (its checksum not yet masked) into the mapping at `offset`.
    /// In a recycled segment the checksum is masked first, and the frame after the record is
    /// zeroed before the record is written: whatever moment a crash stops this, replay finds
    /// either the record whole or a torn record or a zero frame at `offset`, never an old
    /// segment's bytes.
    ///
    /// # Panics
    /// If the record does not fit inside the capacity (the caller checks first).
    pub(crate) fn write_record(&mut self, offset: u64, record: &mut [u8]) {
        if self.crc_mask != 0 {
            segment::mask_record_crc(record, self.crc_mask);
            let end = offset + record.len() as u64;
            if end + segment::FRAME_LEN as u64 <= self.capacity {
                self.write_at(end, &[0; segment::FRAME_LEN]);
            }
        }
        self.write_at(offset, record);
    }

    pub(crate) fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The file, for fdatasync.
    pub(crate) fn file(&self) -> &Arc<File> {
        &self.file
    }

    /// The mapping, for prefaulting from another thread ([`populate`]).
    pub(crate) fn map(&self) -> &Arc<MmapRaw> {
        &self.map
    }

    /// Prefaults `[offset, offset + len)` (clipped to the capacity) for writing.
    pub(crate) fn populate(&self, offset: u64, len: u64) {
        populate(&self.map, self.capacity, offset, len);
    }

    /// Copies `bytes` into the mapping at `offset`.
    ///
    /// # Panics
    /// If the range is not inside the capacity: a bug in the caller, which checks first.
    pub(crate) fn write_at(&mut self, offset: u64, bytes: &[u8]) {
        let end = offset.checked_add(bytes.len() as u64);
        assert!(
            end.is_some_and(|end| end <= self.capacity),
            "write of {} bytes at {offset} past the segment capacity {}",
            bytes.len(),
            self.capacity
        );
        // SAFETY: the destination `[offset, offset + len)` lies inside the mapping, which is
        // `capacity` bytes long (checked above; `capacity` never exceeds the mapped length).
        // Every page of it is backed by the file: the file was extended to at least `capacity`
        // before it was mapped, and nothing shrinks it while this `Segment` can write: the only
        // truncation is `seal`, which first lowers `capacity` to the truncated length. No other
        // cairn process truncates it either: the WAL holds an exclusive lock on its directory
        // for as long as it is open (replay, which truncates zero tails, runs under that lock),
        // and nothing else in cairn touches segment files. No data race: writing needs
        // `&mut self` and `Segment` is not `Clone`, so this is the only writer; other holders
        // of the mapping only call madvise on it, which does not access the bytes from Rust.
        // `bytes` is a Rust slice, so it cannot overlap the mapping's unaliased destination.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.map.as_mut_ptr().add(offset as usize),
                bytes.len(),
            );
        }
    }

    /// Truncates the file to the `len` bytes written (a sealed segment holds no zero tail) and
    /// fdatasyncs it. The segment can no longer be written past `len`.
    ///
    /// The written pages are unmapped first. Writing back a page that is still mapped makes
    /// the kernel write-protect it in the page table and flush that entry from every CPU the
    /// process runs on, one inter-processor interrupt per page: for a 128 MiB segment that was
    /// ~15% of all CPU of a one-writer put benchmark, and it stalled the writer on the other
    /// core. Unmapped first, the whole range leaves the TLBs in one batched flush.
    pub(crate) fn seal(&mut self, len: u64) -> io::Result<()> {
        self.capacity = self.capacity.min(len);
        self.unmap_pages();
        self.file.set_len(len)?;
        self.file.sync_data()
    }

    /// Drops the page table entries of the whole mapping, best effort. The bytes stay: the
    /// file's pages (dirty or not) remain in the page cache, and a later access would fault
    /// them back in from it.
    fn unmap_pages(&self) {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: `MADV_DONTNEED` discards the contents of *private* mappings; this one is
            // `MAP_SHARED` over a file (`map_raw` of a `File`, see `map_file`), for which it
            // only zaps page table entries: the kernel moves each entry's dirty bit to the
            // page-cache page, so no written byte is lost, and any later access re-faults the
            // page from the page cache. No reference into the mapping outlives this call (the
            // writer copies through `write_at`, which needs `&mut self`, and other holders only
            // call madvise). The range is the whole mapping, so it is in bounds.
            let _ = unsafe {
                self.map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    0,
                    self.map.len(),
                )
            };
        }
    }
}

/// Renames segment `id` from its temporary name into place (without syncing the directory).
pub(crate) fn publish(dir: &Path, id: u64) -> Result<(), WalError> {
    let tmp = tmp_path(dir, id);
    std::fs::rename(&tmp, segment::segment_path(dir, id)).map_err(io_err(
        "rename to segment",
        &tmp,
        0,
    ))
}

/// Prefaults `[offset, offset + len)` of a mapping of `capacity` usable bytes for writing,
/// best effort (`MADV_POPULATE_WRITE`, Linux 5.14+; elsewhere the writer takes the faults).
/// Only the page tables change: the bytes are neither read nor written, so this may run
/// concurrently with the segment's writer, and on a mapping whose file was truncated
/// meanwhile (the kernel then reports EFAULT instead of raising SIGBUS).
pub(crate) fn populate(map: &MmapRaw, capacity: u64, offset: u64, len: u64) {
    let end = offset.saturating_add(len).min(capacity);
    if end <= offset {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let _ = map.advise_range(
            memmap2::Advice::PopulateWrite,
            offset as usize,
            (end - offset) as usize,
        );
    }
    #[cfg(not(target_os = "linux"))]
    let _ = map;
}

/// Allocates blocks for the first `len` bytes of `file`, extending it if shorter.
#[cfg(target_os = "linux")]
fn preallocate(file: &File, len: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let len = libc::off_t::try_from(len).map_err(|_| io::Error::other("segment too large"))?;
    // SAFETY: posix_fallocate only reads its integer arguments; the descriptor is valid for the
    // whole call because `file` is borrowed across it.
    match unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) } {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

#[cfg(not(target_os = "linux"))]
fn preallocate(file: &File, len: u64) -> io::Result<()> {
    if file.metadata()?.len() < len {
        file.set_len(len)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepare_write_grow_seal_publish() {
        let dir = tempfile::tempdir().unwrap();
        let mut seg = Segment::prepare(dir.path(), 5, 8192).unwrap();
        let tmp = tmp_path(dir.path(), 5);
        assert_eq!(std::fs::metadata(&tmp).unwrap().len(), 8192);
        assert_eq!(seg.capacity(), 8192);
        seg.write_at(HEADER_LEN as u64, b"hello");
        // In the page cache at once: a plain read of the file sees it.
        let bytes = std::fs::read(&tmp).unwrap();
        assert_eq!(segment::decode_header(&bytes), Ok(5));
        assert_eq!(&bytes[HEADER_LEN..HEADER_LEN + 5], b"hello");
        assert!(bytes[HEADER_LEN + 5..].iter().all(|&b| b == 0));

        let mut seg = seg.grow(20_000).unwrap();
        assert_eq!(seg.capacity(), 20_000);
        seg.write_at(19_995, b"world");
        seg.populate(0, u64::MAX);
        publish(dir.path(), 5).unwrap();
        let path = segment::segment_path(dir.path(), 5);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 20_000);
        assert_eq!(&bytes[HEADER_LEN..HEADER_LEN + 5], b"hello");
        assert_eq!(&bytes[19_995..], b"world");

        seg.seal(HEADER_LEN as u64 + 5).unwrap();
        assert_eq!(seg.capacity(), HEADER_LEN as u64 + 5);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), seg.capacity());
        // Unmapping the pages before writing them back lost none of the mapped stores.
        let sealed = std::fs::read(&path).unwrap();
        assert_eq!(segment::decode_header(&sealed), Ok(5));
        assert_eq!(&sealed[HEADER_LEN..], b"hello");
        // Prefaulting a range the truncation removed is harmless.
        populate(seg.map(), 20_000, 0, 20_000);
    }

    #[test]
    #[should_panic(expected = "past the segment capacity")]
    fn write_past_capacity_panics_instead_of_faulting() {
        let dir = tempfile::tempdir().unwrap();
        let mut seg = Segment::prepare(dir.path(), 1, 4096).unwrap();
        seg.seal(100).unwrap();
        seg.write_at(98, b"abc");
    }
}
