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
//! A direct write returns only when the device has the bytes, so full buffers are handed to
//! the file's own write thread (started at the first full buffer, ended when the file is
//! closed) while the caller fills the next one: the flush's CPU work and the device's writes
//! overlap, as they do with buffered writes and kernel write-back. One thread per file, not
//! per buffer: a flush that spawned a thread per 1 MiB spent more time waiting for thread
//! starts (each maps a stack, which waits for the process's mmap lock behind page faults
//! elsewhere) than for the device.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::FsOutput;

/// Alignment of buffer addresses, offsets and lengths for `O_DIRECT`.
pub(crate) const ALIGN: usize = 4096;
/// Bytes gathered before a write: large enough that a store file is a few dozen writes.
const BUFFER: usize = 1 << 20;
/// Full buffers queued for the write thread before the caller waits: one being written and
/// one ready, so a short stall of the device does not stall the caller at once.
const IN_FLIGHT: usize = 2;

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

/// A full buffer for the write thread, and where it goes in the file.
type Job = (AlignedBuf, u64);
/// A written buffer handed back for reuse, with the write's result.
type Done = (AlignedBuf, io::Result<()>);

/// The file's write thread and its two queues.
struct WriteThread {
    jobs: Option<SyncSender<Job>>,
    done: Receiver<Done>,
    handle: Option<JoinHandle<()>>,
}

impl WriteThread {
    fn spawn(file: Arc<File>) -> io::Result<WriteThread> {
        let (jobs, job_rx) = mpsc::sync_channel::<Job>(IN_FLIGHT);
        let (done_tx, done) = mpsc::sync_channel::<Done>(IN_FLIGHT + 1);
        let handle = std::thread::Builder::new()
            .name("cairn-direct-io".into())
            .spawn(move || {
                for (buf, offset) in job_rx {
                    let result = write_aligned(&file, &buf.bytes()[..BUFFER], offset);
                    if done_tx.send((buf, result)).is_err() {
                        return;
                    }
                }
            })?;
        Ok(WriteThread {
            jobs: Some(jobs),
            done,
            handle: Some(handle),
        })
    }
}

impl Drop for WriteThread {
    fn drop(&mut self) {
        // Closing the job queue ends the thread once it has written what it holds.
        self.jobs = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A local file being written with direct I/O.
pub(crate) struct DirectOutput {
    file: Arc<File>,
    /// The buffer being filled. Its first `pending` bytes belong at `offset..` in the file.
    buf: AlignedBuf,
    pending: usize,
    /// File offset of `buf`'s first byte: always a multiple of [`ALIGN`].
    offset: u64,
    /// Started at the first full buffer, so small files never start one.
    writer: Option<WriteThread>,
    /// Buffers queued or being written.
    in_flight: usize,
    /// Buffers no write holds.
    spare: Vec<AlignedBuf>,
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
            writer: None,
            in_flight: 0,
            spare: Vec::new(),
        }))
    }

    /// Waits for one queued write and reports its result.
    fn settle_one(&mut self) -> io::Result<()> {
        let Some(w) = &self.writer else {
            self.in_flight = 0;
            return Ok(());
        };
        match w.done.recv() {
            Ok((buf, result)) => {
                self.in_flight -= 1;
                self.spare.push(buf);
                result
            }
            // The thread only ends early by panicking; nothing more will come back.
            Err(_) => {
                self.in_flight = 0;
                Err(io::Error::other("the direct-I/O write thread stopped"))
            }
        }
    }

    /// Waits for every queued write; the first failure is reported after all are back.
    fn settle(&mut self) -> io::Result<()> {
        let mut first = Ok(());
        while self.in_flight > 0 {
            let r = self.settle_one();
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    /// Queues the full buffer for the write thread and starts filling another one.
    fn write_full(&mut self) -> io::Result<()> {
        if self.in_flight >= IN_FLIGHT {
            self.settle_one()?;
        }
        if self.writer.is_none() {
            self.writer = Some(WriteThread::spawn(Arc::clone(&self.file))?);
        }
        let next = self.spare.pop().unwrap_or_else(AlignedBuf::new);
        let full = std::mem::replace(&mut self.buf, next);
        let jobs = self.writer.as_ref().and_then(|w| w.jobs.as_ref());
        // A failed send drops the buffer and the bytes in it, so it fails the write: the file
        // is incomplete and its writer (a flush or compaction) abandons it.
        jobs.expect("the job queue is open until drop")
            .send((full, self.offset))
            .map_err(|_| io::Error::other("the direct-I/O write thread stopped"))?;
        self.in_flight += 1;
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
    /// An output dropped without `close` (an abandoned file) still waits for its writes in
    /// flight, so nothing writes to the file after its owner is gone.
    fn drop(&mut self) {
        let _ = self.settle();
        self.writer = None;
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
    fn a_dropped_output_has_finished_its_queued_writes() {
        if !supported() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut out = open(dir.path());
        out.write_all(&vec![3u8; (IN_FLIGHT + 2) * BUFFER + 100])
            .unwrap();
        drop(out);
        // Every full buffer reached the file before drop returned; the partial tail, never
        // flushed, did not.
        let got = std::fs::read(dir.path().join("f")).unwrap();
        assert_eq!(got.len(), (IN_FLIGHT + 2) * BUFFER);
        assert!(got.iter().all(|&b| b == 3));
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
