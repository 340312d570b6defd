//! The input: a file, or the files of a directory (as Hadoop's `TextInputFormat` lists them:
//! names starting with `_` or `.` are hidden), read line by line with each line's byte
//! offset and number. Lines end at `\n`, `\r\n` or a lone `\r`, as Hadoop's `LineReader`
//! ends them. Files named `*.gz` (gzip) and `*.deflate` (zlib) are decompressed as Hadoop's
//! codecs for those suffixes do; offsets are then in the decompressed text.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The files to read, in name order, with their sizes.
pub fn input_files(input: &Path) -> Result<Vec<(PathBuf, u64)>> {
    let meta = std::fs::metadata(input).with_context(|| format!("input {}", input.display()))?;
    if meta.is_file() {
        return Ok(vec![(input.to_path_buf(), meta.len())]);
    }
    let mut files = Vec::new();
    for e in std::fs::read_dir(input).with_context(|| format!("listing {}", input.display()))? {
        let e = e.with_context(|| format!("listing {}", input.display()))?;
        let name = e.file_name();
        let hidden = name.to_string_lossy().starts_with(['_', '.']);
        if hidden {
            continue;
        }
        let path = e.path();
        let m = std::fs::metadata(&path).with_context(|| format!("input {}", path.display()))?;
        if m.is_dir() {
            bail!(
                "input {}: is a directory (importtsv reads the files directly in {})",
                path.display(),
                input.display()
            );
        }
        files.push((path, m.len()));
    }
    files.sort();
    if files.is_empty() {
        bail!("input {}: no files to read", input.display());
    }
    Ok(files)
}

/// Where a line starts in its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinePos {
    /// Byte offset of the line's first byte (Hadoop's map input key).
    pub offset: u64,
    /// 1-based line number.
    pub number: u64,
}

/// Calls `each(pos, line)` for every line of `path`, and `progress(bytes)` as the file is
/// read. The line excludes its terminator.
pub fn for_each_line(
    path: &Path,
    mut each: impl FnMut(LinePos, &[u8]) -> Result<()>,
    mut progress: impl FnMut(u64),
) -> Result<()> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    // Progress counts the file's own bytes, compressed or not: the bar's total is file sizes.
    let read = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let counted = Counting {
        inner: file,
        read: read.clone(),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let decoded: Box<dyn Read> = match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("gz") => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(counted))),
        Some("deflate") => Box::new(flate2::read::ZlibDecoder::new(BufReader::new(counted))),
        Some(ext @ ("bz2" | "snappy" | "lz4" | "zst" | "lzo")) => bail!(
            "{}: compressed with .{ext}; cairn importtsv reads plain text, .gz and .deflate",
            path.display()
        ),
        _ => Box::new(counted),
    };
    let mut r = BufReader::with_capacity(1 << 20, decoded);
    let mut reported = 0u64;
    let mut buf = Vec::with_capacity(4096);
    let mut pos = LinePos {
        offset: 0,
        number: 1,
    };
    loop {
        buf.clear();
        let n = r
            .read_until(b'\n', &mut buf)
            .with_context(|| format!("reading {} at offset {}", path.display(), pos.offset))?;
        progress(read.get() - reported);
        reported = read.get();
        if n == 0 {
            return Ok(());
        }
        let mut body = buf.strip_suffix(b"\n").unwrap_or(&buf);
        body = body.strip_suffix(b"\r").unwrap_or(body);
        // A lone '\r' inside ends a line too.
        let mut start = 0;
        for piece in body.split(|b| *b == b'\r') {
            each(
                LinePos {
                    offset: pos.offset + start as u64,
                    number: pos.number,
                },
                piece,
            )?;
            start += piece.len() + 1;
            pos.number += 1;
        }
        pos.offset += n as u64;
    }
}

/// A reader that counts the bytes read through it.
struct Counting<R> {
    inner: R,
    read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(bytes: &[u8]) -> Vec<(u64, u64, Vec<u8>)> {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(tmp.path(), bytes).unwrap();
        lines_of(tmp.path(), bytes.len() as u64)
    }

    fn lines_of(path: &Path, len: u64) -> Vec<(u64, u64, Vec<u8>)> {
        let mut out = Vec::new();
        let mut read = 0;
        for_each_line(
            path,
            |p, l| {
                out.push((p.offset, p.number, l.to_vec()));
                Ok(())
            },
            |n| read += n,
        )
        .unwrap();
        assert_eq!(read, len);
        out
    }

    #[test]
    fn gzip_and_deflate_files_are_read_as_their_text() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let text = b"ab\ncd\r\nlast";
        let want = lines(text);
        // Two gzip members, as `cat a.gz b.gz` makes: both are read, as Hadoop reads them.
        let gz = dir.path().join("in.tsv.gz");
        let mut bytes = Vec::new();
        for part in [&text[..4], &text[4..]] {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(part).unwrap();
            bytes.extend(e.finish().unwrap());
        }
        std::fs::write(&gz, &bytes).unwrap();
        assert_eq!(lines_of(&gz, bytes.len() as u64), want);
        let z = dir.path().join("in.deflate");
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(text).unwrap();
        let bytes = e.finish().unwrap();
        std::fs::write(&z, &bytes).unwrap();
        assert_eq!(lines_of(&z, bytes.len() as u64), want);
        // A name says gzip, the bytes are not: an error naming the file, not a panic.
        std::fs::write(&gz, b"not gzip").unwrap();
        let err = for_each_line(&gz, |_, _| Ok(()), |_| {}).unwrap_err();
        assert!(format!("{err:#}").contains("in.tsv.gz"), "{err:#}");
        let bz = dir.path().join("in.bz2");
        std::fs::write(&bz, b"x").unwrap();
        let err = for_each_line(&bz, |_, _| Ok(()), |_| {}).unwrap_err();
        assert!(err.to_string().contains(".bz2"), "{err}");
    }

    #[test]
    fn offsets_and_numbers_for_every_line_ending() {
        assert_eq!(
            lines(b"ab\ncd\r\n\nef\rg\nlast"),
            [
                (0, 1, b"ab".to_vec()),
                (3, 2, b"cd".to_vec()),
                (7, 3, b"".to_vec()),
                (8, 4, b"ef".to_vec()),
                (11, 5, b"g".to_vec()),
                (13, 6, b"last".to_vec()),
            ]
        );
        // A final terminator does not make an extra empty line.
        assert_eq!(lines(b"a\n"), [(0, 1, b"a".to_vec())]);
        assert!(lines(b"").is_empty());
    }

    #[test]
    fn a_directory_lists_its_visible_files_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.tsv", "a.tsv", "_SUCCESS", ".crc"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        let files = input_files(dir.path()).unwrap();
        let names: Vec<_> = files
            .iter()
            .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.tsv", "b.tsv"]);
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert!(input_files(dir.path()).is_err());
    }
}
