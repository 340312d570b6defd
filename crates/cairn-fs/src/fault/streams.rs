//! What the fault layer hands out: outputs that hold written bytes until a flush, sync or
//! close (so a simulated crash can drop them) and sources whose reads rules can fail.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;

use super::{Fault, FaultFileSystem, FaultOp};
use crate::{FsOutput, RawSource};

/// An output through the fault layer: bytes wait in `pending` until a flush, sync or close.
pub(super) struct FaultOutput {
    pub(super) fs: Arc<FaultFileSystem>,
    pub(super) path: PathBuf,
    pub(super) inner: Option<Box<dyn FsOutput>>,
    pub(super) pending: Vec<u8>,
    pub(super) epoch: u64,
}

impl FaultOutput {
    fn alive(&self) -> io::Result<()> {
        if self.epoch != self.fs.epoch.load(Ordering::SeqCst) {
            return Err(io::Error::other(format!(
                "{}: written before a simulated crash",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// Hands the pending bytes to the inner output and flushes it.
    fn push(&mut self) -> io::Result<()> {
        let inner = self
            .inner
            .as_mut()
            .ok_or_else(|| io::Error::other("output closed"))?;
        if !self.pending.is_empty() {
            inner.write_all(&self.pending)?;
            let n = self.pending.len() as u64;
            self.pending.clear();
            if let Some(t) = self.fs.lock().files.get_mut(&self.path) {
                t.written += n;
            }
        }
        inner.hflush()
    }
}

impl Write for FaultOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let fs = self.fs.clone();
        let _gate = fs.gate();
        self.alive()?;
        if buf.is_empty() {
            return Ok(0);
        }
        match self.fs.check(FaultOp::Write, &self.path) {
            Ok(()) => {
                self.pending.extend_from_slice(buf);
                Ok(buf.len())
            }
            Err((Fault::ShortWrite, _)) => {
                let n = buf.len().div_ceil(2);
                self.pending.extend_from_slice(&buf[..n]);
                Ok(n)
            }
            Err((Fault::PartialWrite, e)) => {
                self.pending.extend_from_slice(&buf[..buf.len() / 2]);
                Err(e)
            }
            Err((_, e)) => Err(e),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl FsOutput for FaultOutput {
    fn hflush(&mut self) -> io::Result<()> {
        let fs = self.fs.clone();
        let _gate = fs.gate();
        self.alive()?;
        self.fs
            .check(FaultOp::Hflush, &self.path)
            .map_err(|(_, e)| e)?;
        self.push()?;
        let mut s = self.fs.lock();
        let survives = s
            .hflush_survives
            .as_deref()
            .is_some_and(|part| self.path.to_string_lossy().contains(part));
        if survives {
            if let Some(t) = s.files.get_mut(&self.path) {
                t.synced = t.written;
            }
        }
        Ok(())
    }

    fn hsync(&mut self) -> io::Result<()> {
        let fs = self.fs.clone();
        let _gate = fs.gate();
        self.alive()?;
        if let Err((_, e)) = self.fs.check(FaultOp::Hsync, &self.path) {
            // Like Linux after a failed fsync: the dirty bytes reach the file (readers see
            // them) but will not survive a crash, and a later fsync does not bring them back.
            if self.push().is_ok() {
                let mut s = self.fs.lock();
                if let Some(t) = s.files.get_mut(&self.path) {
                    if t.written > t.synced {
                        let r = t.synced..t.written;
                        t.lost.push(r);
                        t.synced = t.written;
                    }
                }
            }
            return Err(e);
        }
        self.push()?;
        self.inner
            .as_mut()
            .ok_or_else(|| io::Error::other("output closed"))?
            .hsync()?;
        if let Some(t) = self.fs.lock().files.get_mut(&self.path) {
            t.synced = t.written;
        }
        Ok(())
    }

    fn close(mut self: Box<Self>) -> io::Result<()> {
        let fs = self.fs.clone();
        let _gate = fs.gate();
        self.alive()?;
        self.fs
            .check(FaultOp::Hflush, &self.path)
            .map_err(|(_, e)| e)?;
        self.push()?;
        match self.inner.take() {
            Some(inner) => inner.close(),
            None => Ok(()),
        }
    }
}

/// Reads through the fault layer: `FaultOp::Read` rules fail them.
pub(super) struct FaultSource {
    pub(super) fs: Arc<FaultFileSystem>,
    pub(super) path: PathBuf,
    pub(super) inner: Arc<dyn RawSource>,
}

impl RawSource for FaultSource {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        self.fs
            .check(FaultOp::Read, &self.path)
            .map_err(|(_, e)| e)?;
        self.inner.read_at(offset, len)
    }
}
