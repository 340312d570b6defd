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
//!
//! A direct write returns only when the device has the bytes, so a full buffer is handed to
//! a short-lived thread to write while the caller fills the other one: the flush's CPU work
//! and the device's write overlap, as they do with buffered writes and kernel write-back.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::FsOutput;

/// Alignment of buffer addresses, offsets and lengths for `O_DIRECT`.
pub(crate) const ALIGN: usize = 4096;
/// Bytes gathered before a write: large enough that a store file is a few dozen writes.
const BUFFER: usize = 1 << 20;

/// A [`BUFFER`]-byte buffer aligned to [`ALIGN`]. Over-allocating a `Vec` and slicing it keeps
/// the alignment without an unsafe allocation.
struct AlignedBuf {
    storage: Vec<u8>,
    start: usize,
}

impl AlignedBuf {
    fn new() -> AlignedBuf {
        let storage = vec![0u8; BUFFER + ALIGN];
        let start = storage.as_ptr().align_offset(ALIGN);
        debug_assert!(start < ALIGN);
        AlignedBuf { storage, start }
    }

    fn bytes(&self) -> &[u8] {
        &self.storage[self.start..self.start + BUFFER]
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + BUFFER]
    }
}

/// A full buffer being written by its own thread; it hands the buffer back for reuse.
type InFlight = JoinHandle<(AlignedBuf, io::Result<()>)>;

/// A local file being written with direct I/O.
pub(crate) struct DirectOutput {
    file: Arc<File>,
    /// The buffer being filled. Its first `pending` bytes belong at `offset..` in the file.
    buf: AlignedBuf,
    pending: usize,
    /// File offset of `buf`'s first byte: always a multiple of [`ALIGN`].
    offset: u64,
    /// The previous buffer, while its write is in flight.
    in_flight: Option<InFlight>,
    /// The second buffer, when no write holds it.
    spare: Option<AlignedBuf>,
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
        Ok(Some(DirectOutput {
            file: Arc::new(file),
            buf: AlignedBuf::new(),
            pending: 0,
            offset: 0,
            in_flight: None,
            spare: None,
        }))
    }

    /// Waits for the write in flight, if any, and reports its result.
    fn settle(&mut self) -> io::Result<()> {
        let Some(handle) = self.in_flight.take() else {
            return Ok(());
        };
        let (buf, result) = handle
            .join()
            .map_err(|_| io::Error::other("a direct-I/O write thread panicked"))?;
        self.spare = Some(buf);
        result
    }

    /// Writes the full buffer from another thread and starts filling the other one.
    fn write_full(&mut self) -> io::Result<()> {
        self.settle()?;
        let next = self.spare.take().unwrap_or_else(AlignedBuf::new);
        let full = std::mem::replace(&mut self.buf, next);
        let (file, offset) = (Arc::clone(&self.file), self.offset);
        // A failed spawn drops the closure and the bytes in it, so it fails the write: the
        // file is incomplete and its writer (a flush or compaction) abandons it.
        let handle = std::thread::Builder::new()
            .name("cairn-direct-io".into())
            .spawn(move || {
                let result = write_aligned(&file, &full.bytes()[..BUFFER], offset);
                (full, result)
            })?;
        self.in_flight = Some(handle);
        self.offset += BUFFER as u64;
        self.pending = 0;
        Ok(())
    }

    /// Puts every byte written so far into the file (a partial tail block padded, then cut
    /// off by truncation) and keeps that partial block in the buffer for the next write.
    fn write_tail(&mut self) -> io::Result<()> {
        self.settle()?;
        let pending = self.pending;
        if pending == 0 {
            return Ok(());
        }
        let padded = pending.next_multiple_of(ALIGN);
        self.buf.bytes_mut()[pending..padded].fill(0);
        write_aligned(&self.file, &self.buf.bytes()[..padded], self.offset)?;
        let end = self.offset + pending as u64;
        if padded != pending {
            self.file.set_len(end)?;
        }
        let whole = pending / ALIGN * ALIGN;
        self.buf.bytes_mut().copy_within(whole..pending, 0);
        self.offset += whole as u64;
        self.pending = pending - whole;
        Ok(())
    }
}

/// Writes `bytes` (a multiple of [`ALIGN`] long, from an aligned address) at `offset`.
fn write_aligned(file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    debug_assert_eq!(bytes.len() % ALIGN, 0);
    match file.write_all_at(bytes, offset) {
        // A device with a logical block larger than ALIGN, or a filesystem that accepted
        // O_DIRECT at open but not for this write: go on buffered.
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            stop_direct(file)?;
            file.write_all_at(bytes, offset)
        }
        other => other,
    }
}

/// Clears `O_DIRECT` on the file's open description: later writes go through the page cache.
fn stop_direct(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor `file` keeps open for the whole call, with integer
    // arguments only; F_GETFL/F_SETFL change no memory of this process.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_DIRECT) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether the file is still written with `O_DIRECT` (tests).
#[cfg(test)]
fn is_direct(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: as in `stop_direct`.
    let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
    flags >= 0 && flags & libc::O_DIRECT != 0
}

impl Write for DirectOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = buf.len().min(BUFFER - self.pending);
        let at = self.pending;
        self.buf.bytes_mut()[at..at + n].copy_from_slice(&buf[..n]);
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

impl Drop for DirectOutput {
    /// An output dropped without `close` (an abandoned file) still waits for its write in
    /// flight, so nothing writes to the file after its owner is gone.
    fn drop(&mut self) {
        let _ = self.settle();
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
        out.write_all(&vec![7u8; 3 * BUFFER + 10]).unwrap();
        out.settle().unwrap();
        assert!(
            is_direct(&out.file),
            "an aligned write fell back to buffered"
        );
        assert_eq!(out.offset, 3 * BUFFER as u64);
        out.close().unwrap();
        let got = std::fs::read(dir.path().join("f")).unwrap();
        assert_eq!(got.len(), 3 * BUFFER + 10);
        assert!(got.iter().all(|&b| b == 7));
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
        stop_direct(&out.file).unwrap();
        assert!(!is_direct(&out.file));
        out.write_all(b" after").unwrap();
        out.close().unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("f")).unwrap(),
            b"before after"
        );
    }
}
