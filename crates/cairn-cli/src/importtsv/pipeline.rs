//! The import itself: every line of every input file through the parser into the sorter
//! (bad lines counted and the first few reported, as ImportTsv's mapper reports them), then
//! the sorted cells, the first of equal ones only, into the bulk output.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use cairn_cell::{write_key, CellType, KeyRef};

use super::bulk_output::{BulkOutput, WrittenFile};
use super::external_sort::ExternalSorter;
use super::input;
use super::options::{Options, BAD_LINES_SHOWN};
use super::parser::LineParser;

/// What a run counted.
#[derive(Default)]
pub struct Counts {
    /// Lines read.
    pub lines: u64,
    /// Lines that did not fit the columns.
    pub bad_lines: u64,
    /// Bytes of input read.
    pub input_bytes: u64,
    /// Cells the good lines made.
    pub cells_in: u64,
    /// Cells dropped because an earlier line made a cell with the same key.
    pub duplicates: u64,
    /// Distinct rows written.
    pub rows: u64,
    /// Cells written.
    pub cells: u64,
}

/// What a run did.
pub struct Outcome {
    /// Its counts.
    pub counts: Counts,
    /// The files it wrote.
    pub files: Vec<WrittenFile>,
    /// Sorted runs spilled to disk.
    pub runs: usize,
    /// Bytes spilled.
    pub spilled: u64,
    /// Seconds from `started` until all input was read (and all but the last run sorted).
    pub read_secs: f64,
}

/// Reads `files` through `parser` into `sorter`, then writes the sorted cells to `output`
/// (none in a dry run: the cells are sorted and counted only).
pub fn import(
    files: &[(PathBuf, u64)],
    mut parser: LineParser,
    o: &Options,
    mut sorter: ExternalSorter,
    mut output: Option<BulkOutput>,
    started: Instant,
) -> Result<Outcome> {
    let total: u64 = files.iter().map(|(_, n)| *n).sum();
    let bar = cairn_bench::progress::bytes("reading", total);
    let mut c = Counts::default();
    let mut key = Vec::new();
    let mut input_bytes = 0u64;
    for (path, _) in files {
        input::for_each_line(
            path,
            |pos, line| {
                c.lines += 1;
                let parsed = parser.parse(line, |row, ts, cells| -> Result<u64> {
                    let mut n = 0;
                    for cell in cells {
                        write_key(
                            &mut key,
                            row,
                            cell.family,
                            cell.qualifier,
                            ts,
                            CellType::Put.code(),
                        )?;
                        sorter.push(&key, cell.value)?;
                        n += 1;
                    }
                    Ok(n)
                });
                match parsed {
                    Ok(n) => c.cells_in += n?,
                    Err(msg) => {
                        let place = format!("{} line {}", path.display(), pos.number);
                        if !o.skip_bad_lines {
                            anyhow::bail!("{place}: Bad line at offset: {}: {msg}", pos.offset);
                        }
                        c.bad_lines += 1;
                        if c.bad_lines as usize <= BAD_LINES_SHOWN || o.log_bad_lines {
                            bar.suspend(|| {
                                if o.log_bad_lines {
                                    eprintln!("{}", String::from_utf8_lossy(line));
                                }
                                eprintln!("Bad line at offset: {} ({place}):\n{msg}", pos.offset)
                            });
                        }
                    }
                }
                Ok(())
            },
            |n| {
                input_bytes += n;
                bar.inc(n);
            },
        )?;
    }
    c.input_bytes = input_bytes;
    bar.finish_and_clear();
    let runs = sorter.runs();
    let spilled = sorter.spilled_bytes();
    let read_secs = started.elapsed().as_secs_f64();

    // Equal keys: the first pushed wins, as HBase's PutSortReducer keeps the first of equal
    // cells (its TreeSet ignores later ones).
    let mut prev_key: Vec<u8> = Vec::new();
    let mut prev_row: Vec<u8> = Vec::new();
    let mut first = true;
    sorter.finish(|k, v| {
        if !first && k == prev_key.as_slice() {
            c.duplicates += 1;
            return Ok(());
        }
        let row = KeyRef::from_valid(k).row();
        if first || row != prev_row.as_slice() {
            c.rows += 1;
            prev_row.clear();
            prev_row.extend_from_slice(row);
        }
        first = false;
        prev_key.clear();
        prev_key.extend_from_slice(k);
        c.cells += 1;
        match output.as_mut() {
            Some(output) => output.append(k, v),
            None => Ok(()),
        }
    })?;
    let files = match output {
        Some(output) => output.finish()?,
        None => Vec::new(),
    };
    Ok(Outcome {
        counts: c,
        files,
        runs,
        spilled,
        read_secs,
    })
}
