//! Local files written around the page cache (`O_DIRECT`), for store files that flushes and
//! compactions write once, front to back, and that are read back through cairn's block cache.
//!
//! Why: a buffered write copies every byte into a page-cache page the kernel first has to
//! allocate (and, on a virtual machine whose free memory the host has reclaimed, fault in
//! from the host). In a one-writer put benchmark on a 2-CPU VM that copy was ~60% of the
//! flusher's CPU, and the flusher's CPU is what the writer competes with. With `O_DIRECT` the
//! device reads the bytes straight from this buffer. RocksDB offers the same choice as
//! `use_direct_io_for_flush_and_compaction`.
//!
//! `O_DIRECT` needs the buffer address, the file offset and the length aligned to the
//! device's logical block size; [`ALIGN`] (4 KiB) covers 512-byte and 4 KiB devices. Bytes
//! are gathered in an aligned buffer and written a whole buffer at a time. To make a partial
//! tail visible ([`FsOutput::hflush`], [`FsOutput::close`]) the tail block is written padded
//! with zeros and the file is truncated back to its true length; the next write rewrites that
//! block from its start. Where the filesystem refuses `O_DIRECT` (tmpfs, some FUSE mounts),
//! the file is written buffered instead.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::FsOutput;

/// Alignment of buffer addresses, offsets and lengths for `O_DIRECT`.
pub(crate) const ALIGN: usize = 4096;
/// Bytes gathered before a write: large enough that a store file is a few dozen writes.
const BUFFER: usize = 1 << 20;

/// A local file being written with direct I/O.
pub(crate) struct DirectOutput {
    file: File,
    /// `BUFFER + ALIGN` bytes, of which `[start, start + BUFFER)` is the aligned buffer.
    /// (Over-allocating and slicing keeps the alignment without an unsafe allocation.)
    storage: Vec<u8>,
    start: usize,
    /// Bytes of the buffer in use; they belong at `offset..offset + pending` in the file.
    pending: usize,
    /// File offset of the buffer's first byte: always a multiple of [`ALIGN`].
    offset: u64,
    /// Still writing with `O_DIRECT` (false after a fallback to buffered writes).
    direct: bool,
}

impl DirectOutput {
    /// Creates `path` (replacing a file there) for direct writes, or `Ok(None)` if the
    /// filesystem does not support them.
    pub(crate) fn create(path: &Path) -> io::Result<Option<DirectOutput>> {
        use std::os::unix::fs::OpenOptionsExt;
        let opened = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_DIRECT)
            .open(path);
        let file = match opened {
            Ok(f) => f,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return Ok(None),
            Err(e) => return Err(e),
        };
        let storage = vec![0u8; BUFFER + ALIGN];
        let start = storage.as_ptr().align_offset(ALIGN);
        debug_assert!(start < ALIGN);
        Ok(Some(DirectOutput {
            file,
            storage,
            start,
            pending: 0,
            offset: 0,
            direct: true,
        }))
    }

    fn buffer(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + BUFFER]
    }

    /// Writes the first `len` bytes of the buffer (a multiple of [`ALIGN`]) at `offset`.
    fn write_aligned(&mut self, len: usize) -> io::Result<()> {
        debug_assert_eq!(len % ALIGN, 0);
        let (start, offset) = (self.start, self.offset);
        let result = self
            .file
            .write_all_at(&self.storage[start..start + len], offset);
        match result {
            // A device with a logical block larger than ALIGN, or a filesystem that accepted
            // O_DIRECT at open but not for this write: go on buffered.
            Err(e) if self.direct && e.raw_os_error() == Some(libc::EINVAL) => {
                self.stop_direct()?;
                self.file
                    .write_all_at(&self.storage[start..start + len], offset)
            }
            other => other,
        }
    }

    fn stop_direct(&mut self) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let fd = self.file.as_raw_fd();
        // SAFETY: fcntl on a descriptor `self.file` keeps open for the whole call, with integer
        // arguments only; F_GETFL/F_SETFL change no memory of this process.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        // SAFETY: as above.
        if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_DIRECT) } < 0 {
            return Err(io::Error::last_os_error());
        }
        self.direct = false;
        Ok(())
    }

    /// Writes the full buffer and starts an empty one at the next offset.
    fn write_full(&mut self) -> io::Result<()> {
        self.write_aligned(BUFFER)?;
        self.offset += BUFFER as u64;
        self.pending = 0;
        Ok(())
    }

    /// Puts every byte written so far into the file (a partial tail block padded, then cut
    /// off by truncation) and keeps that partial block in the buffer for the next write.
    fn write_tail(&mut self) -> io::Result<()> {
        let pending = self.pending;
        if pending == 0 {
            return Ok(());
        }
        let padded = pending.next_multiple_of(ALIGN);
        self.buffer()[pending..padded].fill(0);
        self.write_aligned(padded)?;
        let end = self.offset + pending as u64;
        if padded != pending {
            self.file.set_len(end)?;
        }
        let whole = pending / ALIGN * ALIGN;
        let start = self.start;
        self.storage
            .copy_within(start + whole..start + pending, start);
        self.offset += whole as u64;
        self.pending = pending - whole;
        Ok(())
    }
}

impl Write for DirectOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = buf.len().min(BUFFER - self.pending);
        let at = self.pending;
        self.buffer()[at..at + n].copy_from_slice(&buf[..n]);
        self.pending += n;
        if self.pending == BUFFER {
            self.write_full()?;
        }
        Ok(n)
    }

    /// Does not write a partial block (that would cost a rewrite of it on the next write):
    /// [`FsOutput::hflush`] does.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl FsOutput for DirectOutput {
    fn hflush(&mut self) -> io::Result<()> {
        self.write_tail()
    }

    fn hsync(&mut self) -> io::Result<()> {
        self.write_tail()?;
        // O_DIRECT bypasses the page cache, not the device's write cache or the metadata.
        self.file.sync_all()
    }

    fn close(mut self: Box<Self>) -> io::Result<()> {
        self.write_tail()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn open(dir: &Path) -> Box<DirectOutput> {
        Box::new(
            DirectOutput::create(&dir.join("f"))
                .unwrap()
                .expect("the test directory supports O_DIRECT"),
        )
    }

    fn supported() -> bool {
        let dir = tempfile::tempdir().unwrap();
        DirectOutput::create(&dir.path().join("probe"))
            .unwrap()
            .is_some()
    }

    #[derive(Clone, Debug)]
    enum Op {
        Write(Vec<u8>),
        Hflush,
        Hsync,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0usize..3 * BUFFER / 2, any::<u8>())
                .prop_map(|(n, b)| Op::Write((0..n).map(|i| b.wrapping_add(i as u8)).collect())),
            2 => (0usize..9000, any::<u8>())
                .prop_map(|(n, b)| Op::Write(vec![b; n])),
            1 => Just(Op::Hflush),
            1 => Just(Op::Hsync),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Whatever the mix of write sizes and flushes, the file holds exactly the bytes
        /// written, after every hflush and at close.
        #[test]
        fn file_holds_exactly_what_was_written(ops in proptest::collection::vec(op(), 0..12)) {
            let dir = tempfile::tempdir().unwrap();
            let Some(out) = DirectOutput::create(&dir.path().join("f")).unwrap() else {
                return Ok(()); // no O_DIRECT here: LocalFileSystem writes buffered instead
            };
            let mut out = Box::new(out);
            let mut expected = Vec::new();
            for op in ops {
                match op {
                    Op::Write(bytes) => {
                        out.write_all(&bytes).unwrap();
                        expected.extend_from_slice(&bytes);
                    }
                    Op::Hflush | Op::Hsync => {
                        if matches!(op, Op::Hflush) { out.hflush().unwrap() } else { out.hsync().unwrap() }
                        let got = std::fs::read(dir.path().join("f")).unwrap();
                        prop_assert!(got == expected, "after a flush: {} bytes, expected {}", got.len(), expected.len());
                    }
                }
            }
            out.close().unwrap();
            let got = std::fs::read(dir.path().join("f")).unwrap();
            prop_assert!(got == expected, "at close: {} bytes, expected {}", got.len(), expected.len());
        }
    }

    #[test]
    fn writes_really_are_direct_where_supported() {
        if !supported() {
            eprintln!("skipped: the temporary directory's filesystem refuses O_DIRECT");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut out = open(dir.path());
        out.write_all(&vec![7u8; BUFFER + 10]).unwrap();
        assert!(out.direct, "an aligned write fell back to buffered");
        assert_eq!(out.offset, BUFFER as u64);
        out.close().unwrap();
        assert_eq!(
            std::fs::metadata(dir.path().join("f")).unwrap().len(),
            BUFFER as u64 + 10
        );
    }

    #[test]
    fn fallback_to_buffered_keeps_writing() {
        if !supported() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut out = open(dir.path());
        out.write_all(b"before").unwrap();
        out.hflush().unwrap();
        out.stop_direct().unwrap();
        out.write_all(b" after").unwrap();
        out.close().unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("f")).unwrap(),
            b"before after"
        );
    }
}
