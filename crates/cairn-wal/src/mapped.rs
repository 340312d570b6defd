//! A WAL file preallocated to its full size and mapped `MAP_SHARED`: appends are copies into
//! the mapping, with no system call. A store into a shared file mapping is in the page cache
//! (the file's own pages) the moment it completes, so it survives the death of the process;
//! `fdatasync` of the file puts it on stable storage.
//!
//! Every entry is followed by the end marker ([`file::END_MARKER`]) that tells HBase's reader
//! and cairn's where the entries end. An entry replaces the marker before it: its bytes from
//! the ninth on are copied first, then the next marker after it, and last its first eight
//! bytes in one store, so that a process killed at any instruction leaves the file ending in
//! whole entries and a marker.
//!
//! This module holds the only `unsafe` of the crate: the copies into the mapping and the call
//! to `posix_fallocate`. Everything else goes through memmap2's safe `MmapRaw` API.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::{MmapOptions, MmapRaw};

use crate::file::{self, CairnFileInfo, END_MARKER, TRAILER};
use crate::WalError;

/// A new file has this much of its start prefaulted before it becomes active.
pub(crate) const PREFAULT_FIRST: u64 = 4 << 20;
/// Bytes past the last entry the writer keeps for the end marker, and the trailer that
/// replaces it when the file is sealed.
pub(crate) const TAIL: u64 = END_MARKER.len() as u64;

/// Where one server's local WAL files go.
#[derive(Clone, Debug)]
pub(crate) struct Paths {
    /// `<root>/WALs/<server>`: the published files.
    pub(crate) dir: PathBuf,
    /// `<root>/.cairn-wal/<server>`: the file being prepared, the files kept for reuse.
    pub(crate) spare: PathBuf,
    /// `<root>/oldWALs`.
    pub(crate) archive: PathBuf,
    /// The server's URL-encoded name: every file name starts with it.
    pub(crate) prefix: String,
}

impl Paths {
    pub(crate) fn new(loc: &crate::WalLocation) -> Paths {
        Paths {
            dir: loc.dir(),
            spare: loc.spare_dir(),
            archive: loc.archive_dir(),
            prefix: loc.server.file_prefix(),
        }
    }

    /// The published file number `id`.
    pub(crate) fn file(&self, id: u64) -> PathBuf {
        self.dir.join(format!("{}.{id}", self.prefix))
    }

    /// The name file `id` has while it is prepared, until it becomes the active one.
    pub(crate) fn tmp(&self, id: u64) -> PathBuf {
        self.spare.join(format!("{}.{id}.tmp", self.prefix))
    }

    /// The name a fully flushed file has while it waits to be reused.
    pub(crate) fn free(&self, old_id: u64) -> PathBuf {
        self.spare.join(format!("{}.{old_id}.free", self.prefix))
    }

    /// Whether `name` in the spare directory is one of this server's, and which kind.
    pub(crate) fn spare_kind(&self, name: &str) -> Option<&'static str> {
        let rest = name.strip_prefix(&self.prefix)?.strip_prefix('.')?;
        let (digits, kind) = rest.rsplit_once('.')?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        match kind {
            "tmp" => Some("tmp"),
            "free" => Some("free"),
            _ => None,
        }
    }
}

/// The paths of a WAL of `localhost,16020,1` under `root`, directories created, for tests.
#[cfg(test)]
pub(crate) fn test_paths(root: &Path) -> Paths {
    let p = Paths::new(&crate::WalLocation::new(
        root,
        crate::ServerName::parse("localhost,16020,1").expect("a server name"),
    ));
    fs::create_dir_all(&p.dir).expect("WAL directory");
    fs::create_dir_all(&p.spare).expect("spare directory");
    p
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

/// The steps of [`Segment::seal`], in the order it takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SealStep {
    /// The file cut right after the end marker.
    Cut,
    /// The trailer over the marker, in one store.
    Trailer,
    /// The pages unmapped and the file fdatasync'ed.
    Sync,
}

impl SealStep {
    const ALL: [SealStep; 3] = [SealStep::Cut, SealStep::Trailer, SealStep::Sync];
}

/// One mapped WAL file. Not `Clone`: the owner of the `Segment` is the only writer of the
/// mapping (`write_at` takes `&mut self`); others may hold the file (to fdatasync it) or the
/// mapping (to prefault it), neither of which touches the bytes.
pub(crate) struct Segment {
    id: u64,
    file: Arc<File>,
    map: Arc<MmapRaw>,
    /// Bytes of the mapping that may be written: the file is at least this long.
    capacity: u64,
    /// For a recycled file, what its entries' checksums are XORed with; 0 otherwise.
    crc_mask: u32,
    /// Bytes of the header: where the first entry goes.
    header_len: u64,
}

impl Segment {
    /// Creates file `id` under its temporary name ([`Paths::tmp`]): writes the header and the
    /// end marker after it, preallocates the file to `capacity` bytes (real blocks, so later
    /// stores into the mapping cannot fail for lack of space), fdatasyncs it, maps it and
    /// prefaults its start. The caller renames it into place with [`publish`] when it
    /// becomes the active file.
    pub(crate) fn prepare(paths: &Paths, id: u64, capacity: u64) -> Result<Segment, WalError> {
        let tmp = paths.tmp(id);
        // A file left by a failure (a disk too full to preallocate it) would hold on to the
        // space it got; removed, it gives it back for the next try.
        Segment::prepare_at(&tmp, id, capacity).inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
    }

    fn prepare_at(tmp: &Path, id: u64, capacity: u64) -> Result<Segment, WalError> {
        let header = file::encode_header(CairnFileInfo {
            number: id,
            recycled: false,
        });
        let capacity = capacity.max(header.len() as u64 + TAIL);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(tmp)
            .map_err(io_err("create", tmp, 0))?;
        file.write_all(&header)
            .and_then(|()| file.write_all(&END_MARKER))
            .map_err(io_err("write header of", tmp, 0))?;
        preallocate(&file, capacity).map_err(io_err("preallocate", tmp, 0))?;
        file.sync_all().map_err(io_err("fsync", tmp, 0))?;
        let seg = Segment::map_file(id, Arc::new(file), capacity, 0, header.len() as u64)
            .map_err(io_err("map", tmp, 0))?;
        seg.populate(0, PREFAULT_FIRST);
        Ok(seg)
    }

    /// [`Segment::prepare`] in the file of a fully flushed older WAL file, waiting at `free`
    /// ([`Paths::free`]): its pages are likely still in the page cache, so writing them needs
    /// no fresh memory. The file is renamed to the temporary name and that rename made
    /// durable before anything in it changes, so no crash leaves new bytes under the old
    /// file's name. The header is rewritten as a recycled one, with the end marker after it;
    /// the old entries stay behind it.
    pub(crate) fn prepare_recycled(
        paths: &Paths,
        id: u64,
        capacity: u64,
        free: &Path,
    ) -> Result<Segment, WalError> {
        let tmp = paths.tmp(id);
        let header = file::encode_header(CairnFileInfo {
            number: id,
            recycled: true,
        });
        let capacity = capacity.max(header.len() as u64 + TAIL);
        fs::rename(free, &tmp).map_err(io_err("rename for recycling", free, 0))?;
        File::open(&paths.spare)
            .and_then(|d| d.sync_all())
            .map_err(io_err("fsync directory", &paths.spare, 0))?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&tmp)
            .map_err(io_err("open", &tmp, 0))?;
        {
            use std::os::unix::fs::FileExt;
            let mut head = header.clone();
            head.extend_from_slice(&END_MARKER);
            file.write_all_at(&head, 0)
                .map_err(io_err("write header of", &tmp, 0))?;
        }
        // A file that grew for a huge entry goes back to the usual size.
        if file.metadata().map_err(io_err("stat", &tmp, 0))?.len() > capacity {
            file.set_len(capacity)
                .map_err(io_err("truncate", &tmp, capacity))?;
        }
        preallocate(&file, capacity).map_err(io_err("preallocate", &tmp, 0))?;
        file.sync_all().map_err(io_err("fsync", &tmp, 0))?;
        let mask = file::crc_mask(id);
        let seg = Segment::map_file(id, Arc::new(file), capacity, mask, header.len() as u64)
            .map_err(io_err("map", &tmp, 0))?;
        seg.populate(0, PREFAULT_FIRST);
        Ok(seg)
    }

    fn map_file(
        id: u64,
        file: Arc<File>,
        capacity: u64,
        crc_mask: u32,
        header_len: u64,
    ) -> io::Result<Segment> {
        let len = usize::try_from(capacity)
            .map_err(|_| io::Error::other("file larger than the address space"))?;
        let map = MmapOptions::new().len(len).map_raw(&*file)?;
        Ok(Segment {
            id,
            file,
            map: Arc::new(map),
            capacity,
            crc_mask,
            header_len,
        })
    }

    /// The same file preallocated to `capacity` bytes and mapped anew (for an entry larger
    /// than a whole file). What was written stays.
    pub(crate) fn grow(&self, capacity: u64) -> io::Result<Segment> {
        preallocate(&self.file, capacity)?;
        Segment::map_file(
            self.id,
            Arc::clone(&self.file),
            capacity,
            self.crc_mask,
            self.header_len,
        )
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Bytes of the header: where the first entry goes.
    pub(crate) fn header_len(&self) -> u64 {
        self.header_len
    }

    /// Copies an encoded entry (its checksum, at `crc_at`, not yet masked) into the mapping at
    /// `offset`, where the end marker is, and puts the marker after it. In a recycled file the
    /// checksum is masked first. The entry's bytes from the ninth on go first, then the
    /// marker after the entry, and last the entry's first eight bytes, in one store: whatever
    /// moment a crash of the process stops this, the file holds either the old marker at
    /// `offset` or the whole entry and the marker after it.
    ///
    /// # Panics
    /// If the entry and the marker after it do not fit inside the capacity (the caller
    /// checks first), or the entry is shorter than eight bytes (none is: a `WALKey` alone
    /// takes more).
    pub(crate) fn write_entry(&mut self, offset: u64, entry: &mut [u8], crc_at: usize) {
        assert!(entry.len() >= 8, "an entry of {} bytes", entry.len());
        if self.crc_mask != 0 {
            crate::entry::mask_crc(entry, crc_at, self.crc_mask);
        }
        let end = offset + entry.len() as u64;
        self.write_at(offset + 8, &entry[8..]);
        self.write_at(end, &END_MARKER);
        let first = u64::from_ne_bytes(entry[..8].try_into().expect("eight bytes"));
        self.store_u64(offset, first);
    }

    /// Stores eight bytes at `offset` with one store instruction, after every earlier write
    /// to the mapping: a process killed around it leaves either all eight or none.
    fn store_u64(&mut self, offset: u64, value: u64) {
        let end = offset.checked_add(8);
        assert!(
            end.is_some_and(|end| end <= self.capacity),
            "store at {offset} past the file capacity {}",
            self.capacity
        );
        // Keeps the compiler from moving the earlier copies after this store; the CPU keeps
        // stores in order (x86-64's TSO; a killed process loses no retired store on any CPU).
        std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
        // SAFETY: `[offset, offset + 8)` lies inside the mapping (checked above; see
        // `write_at` for why every page of it is backed by the file and why this is the only
        // writer). `write_unaligned` has no alignment requirement, and a u64 store is one
        // instruction on the 64-bit targets cairn builds for.
        unsafe {
            (self.map.as_mut_ptr().add(offset as usize) as *mut u64).write_unaligned(value);
        }
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
        // before it was mapped, and nothing shrinks it below `capacity` while this `Segment`
        // can write: the only truncation is `seal`, which first lowers `capacity` to the new
        // length (and to 0 once the file is sealed). No other cairn process
        // truncates it either: the WAL holds an exclusive lock on its directory for as long
        // as it is open (replay, which seals files a crash left open, runs under that lock,
        // and leaves directories other processes hold alone), and nothing else in cairn
        // touches WAL files. No data race: writing needs
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

    /// Writes HBase's trailer over the end marker at `len` (the bytes written), truncates the
    /// file after it (a sealed file holds no unused tail) and fdatasyncs it: the file is
    /// closed as HBase closes its WALs. The file can no longer be written.
    ///
    /// The file is cut first, right after the marker, and the trailer then replaces the
    /// marker in one store: a process killed at any point leaves a file that ends at the
    /// marker (which HBase's reader takes as the end of a WAL whose writer died) or at the
    /// trailer. Written the other way round, a kill between the two left a trailer in the
    /// middle of the preallocated file, where neither reader finds an end.
    ///
    /// The written pages are unmapped before the fdatasync. Writing back a page that is still
    /// mapped makes the kernel write-protect it in the page table and flush that entry from
    /// every CPU the process runs on, one inter-processor interrupt per page: for a 128 MiB
    /// segment that was ~15% of all CPU of a one-writer put benchmark, and it stalled the
    /// writer on the other core. Unmapped first, the whole range leaves the TLBs in one
    /// batched flush.
    pub(crate) fn seal(&mut self, len: u64) -> io::Result<()> {
        for step in SealStep::ALL {
            self.seal_step(len, step)?;
        }
        Ok(())
    }

    /// One step of [`Segment::seal`]; a process killed after any of them leaves a file both
    /// readers end cleanly (the `seal` tests stop after each).
    fn seal_step(&mut self, len: u64, step: SealStep) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        match step {
            SealStep::Cut if len + TAIL <= self.capacity => {
                // Nothing past the marker may be written from here on: the file ends there.
                self.capacity = len + TAIL;
                self.file.set_len(len + TAIL)
            }
            // Only a file whose mapping is already cut (a seal that failed after truncating,
            // or one sealed before) gets here: the trailer goes through the file instead.
            SealStep::Cut => self
                .file
                .write_all_at(&TRAILER, len)
                .and_then(|()| self.file.set_len(len + TAIL)),
            SealStep::Trailer => {
                if len + TAIL <= self.capacity {
                    self.store_u64(len, u64::from_ne_bytes(TRAILER));
                }
                Ok(())
            }
            SealStep::Sync => {
                self.capacity = 0;
                self.unmap_pages();
                self.file.sync_data()
            }
        }
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

/// Renames file `id` from its temporary name into the WAL directory (without syncing the
/// directory).
pub(crate) fn publish(paths: &Paths, id: u64) -> Result<(), WalError> {
    let tmp = paths.tmp(id);
    std::fs::rename(&tmp, paths.file(id)).map_err(io_err("rename into the WAL directory", &tmp, 0))
}

/// Seals a file replay found unsealed (its writer died): the file cut at `end`, HBase's
/// trailer appended, fdatasync'ed. Cut first, so that a crash in between leaves a file that
/// ends at an entry boundary (or in a trailer cut short), which both readers take as a
/// clean end, never a trailer with old bytes after it.
pub(crate) fn seal_file(path: &Path, end: u64) -> Result<(), WalError> {
    use std::os::unix::fs::FileExt;
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io_err("open", path, 0))?;
    file.set_len(end)
        .and_then(|()| file.write_all_at(&TRAILER, end))
        .and_then(|()| file.sync_data())
        .map_err(io_err("seal (trailer, truncate, fdatasync)", path, end))
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
    use crate::file::scan_file;
    use crate::WalEdit;

    fn entry(seq: u64) -> (Vec<u8>, usize) {
        let e = WalEdit::new(
            b"region".to_vec(),
            b"t".to_vec(),
            seq,
            1,
            vec![cairn_cell::KeyValue::put(b"row", b"f", b"q", 1, b"v").unwrap()],
        );
        let mut out = Vec::new();
        let enc = crate::entry::encode_entry(&e, &mut out).unwrap();
        (out, enc.crc_at)
    }

    fn seqs(path: &Path) -> (Vec<u64>, crate::file::FileScan) {
        let mut v = Vec::new();
        let scan = scan_file(path, |_, e| {
            v.push(e.sequence_id);
            Ok(())
        })
        .unwrap();
        (v, scan)
    }

    #[test]
    fn prepare_write_grow_seal_publish() {
        let dir = tempfile::tempdir().unwrap();
        let paths = test_paths(dir.path());
        let mut seg = Segment::prepare(&paths, 5, 8192).unwrap();
        let tmp = paths.tmp(5);
        assert_eq!(std::fs::metadata(&tmp).unwrap().len(), 8192);
        assert_eq!(seg.capacity(), 8192);
        // Readable at once, and at every step: header and marker, then entries and marker.
        let (v, scan) = seqs(&tmp);
        assert!(v.is_empty() && scan.marker && scan.dropped.is_none());
        let mut at = seg.header_len();
        for s in 1..=2 {
            let (mut e, crc_at) = entry(s);
            seg.write_entry(at, &mut e, crc_at);
            at += e.len() as u64;
            let (v, scan) = seqs(&tmp);
            assert_eq!(v, (1..=s).collect::<Vec<_>>());
            assert!(scan.marker && scan.dropped.is_none(), "{scan:?}");
        }

        let mut seg = seg.grow(20_000).unwrap();
        assert_eq!(seg.capacity(), 20_000);
        seg.populate(0, u64::MAX);
        publish(&paths, 5).unwrap();
        let path = paths.file(5);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 20_000);
        assert_eq!(seqs(&path).0, [1, 2]);

        seg.seal(at).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), at + TAIL);
        // Unmapping the pages before writing them back lost none of the mapped stores, and
        // the trailer closes the file.
        let (v, scan) = seqs(&path);
        assert_eq!(v, [1, 2]);
        assert!(scan.trailer && scan.dropped.is_none());
        // Prefaulting a range the truncation removed is harmless.
        populate(seg.map(), 20_000, 0, 20_000);
    }

    /// A process killed in the middle of a seal (at a roll) leaves a file that ends cleanly
    /// for cairn's reader, at the marker or the trailer, never a drop; the marker is also
    /// what HBase's reader takes as the end of a WAL whose writer died.
    #[test]
    fn a_seal_stopped_after_any_step_leaves_a_clean_end() {
        for fresh in [true, false] {
            for stop in 0..=SealStep::ALL.len() {
                let dir = tempfile::tempdir().unwrap();
                let paths = test_paths(dir.path());
                let mut seg = Segment::prepare(&paths, 1, 8192).unwrap();
                if !fresh {
                    // Old bytes past the end, as in a recycled file.
                    seg.write_at(4000, &[0x5A; 1000]);
                }
                let mut at = seg.header_len();
                for s in 1..=3 {
                    let (mut e, crc_at) = entry(s);
                    seg.write_entry(at, &mut e, crc_at);
                    at += e.len() as u64;
                }
                for step in &SealStep::ALL[..stop] {
                    seg.seal_step(at, *step).unwrap();
                }
                let (v, scan) = seqs(&paths.tmp(1));
                assert_eq!(v, [1, 2, 3], "stopped after {stop} steps");
                assert!(scan.dropped.is_none(), "stopped after {stop}: {scan:?}");
                assert!(
                    scan.marker || scan.trailer,
                    "stopped after {stop}: {scan:?}"
                );
                let bytes = std::fs::read(paths.tmp(1)).unwrap();
                let tail = &bytes[at as usize..at as usize + 8];
                assert!(tail == END_MARKER || tail == TRAILER, "{tail:?}");
            }
        }
    }

    #[test]
    fn a_recycled_file_reads_only_its_own_entries() {
        let dir = tempfile::tempdir().unwrap();
        let paths = test_paths(dir.path());
        let mut old = Segment::prepare(&paths, 1, 8192).unwrap();
        let mut at = old.header_len();
        for s in 1..=5 {
            let (mut e, crc_at) = entry(s);
            old.write_entry(at, &mut e, crc_at);
            at += e.len() as u64;
        }
        publish(&paths, 1).unwrap();
        old.seal(at).unwrap();
        std::fs::rename(paths.file(1), paths.free(1)).unwrap();
        let mut seg = Segment::prepare_recycled(&paths, 2, 8192, &paths.free(1)).unwrap();
        assert!(!paths.free(1).exists());
        let (v, scan) = seqs(&paths.tmp(2));
        assert!(v.is_empty() && scan.marker, "{scan:?}");
        let (mut e, crc_at) = entry(9);
        let h = seg.header_len();
        seg.write_entry(h, &mut e, crc_at);
        let (v, scan) = seqs(&paths.tmp(2));
        assert_eq!(v, [9]);
        assert!(scan.header.unwrap().cairn.unwrap().recycled);
    }

    #[test]
    fn seal_file_closes_what_a_crash_left_open() {
        let dir = tempfile::tempdir().unwrap();
        let paths = test_paths(dir.path());
        let mut seg = Segment::prepare(&paths, 3, 8192).unwrap();
        let (mut e, crc_at) = entry(1);
        let h = seg.header_len();
        seg.write_entry(h, &mut e, crc_at);
        drop(seg);
        seal_file(&paths.tmp(3), h + e.len() as u64).unwrap();
        let (v, scan) = seqs(&paths.tmp(3));
        assert_eq!(v, [1]);
        assert!(scan.trailer);
        assert_eq!(scan.len, h + e.len() as u64 + TAIL);
        assert_eq!(
            paths.spare_kind(&format!("{}.3.tmp", paths.prefix)),
            Some("tmp")
        );
        assert_eq!(
            paths.spare_kind(&format!("{}.3.free", paths.prefix)),
            Some("free")
        );
        assert_eq!(paths.spare_kind("other%2C1%2C1.3.free"), None);
        assert_eq!(paths.spare_kind(&format!("{}.x.free", paths.prefix)), None);
    }

    #[test]
    #[should_panic(expected = "past the segment capacity")]
    fn write_past_capacity_panics_instead_of_faulting() {
        let dir = tempfile::tempdir().unwrap();
        let paths = test_paths(dir.path());
        let mut seg = Segment::prepare(&paths, 1, 4096).unwrap();
        seg.seal(100).unwrap();
        seg.write_at(98, b"abc");
    }
}
