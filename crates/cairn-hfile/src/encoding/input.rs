//! Reading an encoded block: a cursor over its bytes whose errors name the cell and byte they
//! happened at, and HBase's compressed ints (`ByteBufferUtils.readCompressedInt` /
//! `putCompressedInt`, 7 bits per byte, low bits first) both ways.

/// An encoded block's bytes being read, and the cell being decoded (named in errors).
pub(super) struct Input<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
    /// The cell being decoded and the byte it starts at, named in errors. Errors are built
    /// only when they happen: a block has hundreds of cells.
    cell: Option<(usize, usize)>,
}

impl<'a> Input<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Input<'a> {
        Input {
            bytes,
            pos: 0,
            cell: None,
        }
    }

    /// Starts the next cell: it is named in errors from here on.
    pub(super) fn start_cell(&mut self, cell: usize) {
        self.cell = Some((cell, self.pos));
    }

    /// An error message naming the cell being decoded.
    pub(super) fn fail(&self, what: impl std::fmt::Display) -> String {
        match self.cell {
            Some((cell, at)) => format!("cell {cell} (byte {at}): {what}"),
            None => what.to_string(),
        }
    }

    pub(super) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                self.fail(format_args!(
                    "{what} of {n} bytes at byte {} runs past the end ({} bytes)",
                    self.pos,
                    self.bytes.len()
                ))
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub(super) fn byte(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?[0])
    }

    /// HBase's `ByteBufferUtils.readCompressedInt`: 7 bits per byte, low bits first.
    pub(super) fn compressed_int(&mut self, what: &str) -> Result<usize, String> {
        let mut v: u64 = 0;
        for i in 0..5 {
            let b = self.byte(what)?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return usize::try_from(v)
                    .ok()
                    .filter(|&v| v <= i32::MAX as usize)
                    .ok_or_else(|| {
                        self.fail(format_args!("{what} {v} is larger than a Java int"))
                    });
            }
        }
        Err(self.fail(format_args!("{what}: a compressed int longer than 5 bytes")))
    }
}

/// HBase's `ByteBufferUtils.putCompressedInt`: 7 bits per byte, low bits first.
pub(super) fn put_compressed_int(out: &mut Vec<u8>, mut v: usize) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}
