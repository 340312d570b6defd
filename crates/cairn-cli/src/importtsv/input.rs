//! The input: a file, or the files of a directory (as Hadoop's `TextInputFormat` lists them:
//! names starting with `_` or `.` are hidden), read line by line with each line's byte
//! offset and number. Lines end at `\n`, `\r\n` or a lone `\r`, as Hadoop's `LineReader`
//! ends them.

use std::fs::File;
use std::io::{BufRead, BufReader};
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
    let mut r = BufReader::with_capacity(1 << 20, file);
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
        if n == 0 {
            return Ok(());
        }
        progress(n as u64);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(bytes: &[u8]) -> Vec<(u64, u64, Vec<u8>)> {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(tmp.path(), bytes).unwrap();
        let mut out = Vec::new();
        let mut read = 0;
        for_each_line(
            tmp.path(),
            |p, l| {
                out.push((p.offset, p.number, l.to_vec()));
                Ok(())
            },
            |n| read += n,
        )
        .unwrap();
        assert_eq!(read, bytes.len() as u64);
        out
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
