//! Where the bucket cache keeps its bytes: anonymous memory outside the allocator (the
//! "offheap" engine) or a file (the "file" engine, for SSDs).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use memmap2::{MmapMut, MmapOptions};

/// The storage behind a bucket cache.
pub(crate) enum Engine {
    /// One anonymous mapping, optionally backed by huge pages.
    OffHeap(OffHeapArena),
    /// A file read and written with positional I/O.
    File(FileArena),
}

/// Anonymous memory.
pub(crate) struct OffHeapArena {
    /// Keeps the mapping alive; all access goes through `base`.
    _map: MmapMut,
    base: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value. The bucket cache's slot protocol
// (slot.rs) guarantees that the bytes of a slot are written only while no reader can reach the
// slot (allocated, not yet published), and read only while a reader holds the slot's reference,
// which keeps it from being freed and rewritten; so no byte is written and read concurrently.
unsafe impl Send for OffHeapArena {}
// SAFETY: as above.
unsafe impl Sync for OffHeapArena {}

impl OffHeapArena {
    pub(crate) fn new(len: u64, huge_pages: bool) -> io::Result<OffHeapArena> {
        let mut opts = MmapOptions::new();
        opts.len(len as usize);
        if huge_pages {
            opts.huge(None);
        }
        let mut map = opts.map_anon()?;
        if !huge_pages {
            // Ask for transparent huge pages: cache hits land anywhere in a region of gigabytes,
            // and with 4 KiB pages most of them would also miss the TLB. Only a hint: the
            // kernel may decline, and that is fine.
            let _ = map.advise(memmap2::Advice::HugePage);
        }
        let base = map.as_mut_ptr();
        Ok(OffHeapArena {
            _map: map,
            base,
            len: len as usize,
        })
    }

    /// Copies `data` into the region at `offset`.
    ///
    /// Callers own `[offset, offset + data.len())` exclusively: an allocated slot no reader can
    /// reach yet.
    pub(crate) fn write(&self, offset: u64, data: &[u8]) {
        let start = offset as usize;
        assert!(
            start
                .checked_add(data.len())
                .is_some_and(|end| end <= self.len),
            "write inside the arena"
        );
        // SAFETY: in bounds (asserted); `base` comes from the live mapping via `as_mut_ptr`;
        // exclusive access to the range as documented above.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.base.add(start), data.len()) }
    }

    /// Asks the CPU to start loading `lines` cache lines at `offset` (a hint: no access, no
    /// effect on correctness).
    #[inline]
    pub(crate) fn prefetch(&self, offset: u64, lines: usize) {
        #[cfg(target_arch = "x86_64")]
        for i in 0..lines {
            let at = offset as usize + i * 64;
            if at < self.len {
                // SAFETY: SSE is part of the x86-64 baseline, so the instruction exists; a
                // prefetch only hints the cache (it cannot fault or change memory), and the
                // address lies inside the mapping (checked above).
                unsafe {
                    core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                        self.base.wrapping_add(at) as *const i8,
                    )
                };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (offset, lines);
    }

    /// The bytes at `[offset, offset + len)`.
    ///
    /// Callers hold the reference of the slot containing the range for as long as they use the
    /// returned slice (the slot is then neither freed nor rewritten), and the arena outlives it.
    pub(crate) fn slice(&self, offset: u64, len: usize) -> &[u8] {
        let start = offset as usize;
        assert!(
            start.checked_add(len).is_some_and(|end| end <= self.len),
            "read inside the arena"
        );
        // SAFETY: in bounds (asserted); no concurrent writer to a published, referenced slot
        // (see the Sync impl); the mapping lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.base.add(start), len) }
    }
}

/// A cache file.
pub(crate) struct FileArena {
    file: File,
    len: u64,
}

impl FileArena {
    /// Opens or creates the cache file, sized to `len`.
    pub(crate) fn open(path: &Path, len: u64) -> io::Result<FileArena> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        if file.metadata()?.len() != len {
            file.set_len(len)?;
        }
        Ok(FileArena { file, len })
    }

    pub(crate) fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.file.write_all_at(data, offset)
    }

    pub(crate) fn read(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        self.file.read_exact_at(&mut buf, offset)?;
        Ok(buf)
    }

    pub(crate) fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    pub(crate) fn len(&self) -> u64 {
        self.len
    }
}
