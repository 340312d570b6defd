//! `cairn hfile`: HBase's `hbase hfile` (HFilePrettyPrinter) for HBase's files and cairn's, with
//! its options (`-v`, `-p`, `-e`, `-m`, `-b`, `-h`, `-k`, `-s`, `-f FILE`, files) meaning what
//! they mean there; `-h` is HBase's block headers, so help is `--help` only.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use cairn_bench::progress;
use cairn_cell::{Escaped, KeyRef};
use cairn_hfile::file_info::keys;
use cairn_hfile::{checksum_failures, HFileReader, ReaderOptions};
use clap::{ArgAction, ArgGroup, Args};
use hdrhistogram::Histogram;

#[derive(Args)]
#[command(disable_help_flag = true)]
#[command(group(ArgGroup::new("input").required(true).multiple(true).args(["files", "more_files"])))]
pub struct HFileArgs {
    /// HFile to read (more may follow, with -f again or as arguments).
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    files: Vec<PathBuf>,
    /// HFiles to read.
    #[arg(value_name = "FILES")]
    more_files: Vec<PathBuf>,
    /// Verbose: "Scanning -> FILE" before each file, every cell read and counted
    /// ("Scanned kv count -> N"), and (cairn's) every block's checksums verified.
    #[arg(short = 'v', long = "verbose")]
    verbose: bool,
    /// Verify every block's checksums (without -v's scan).
    #[arg(long = "verify")]
    verify: bool,
    /// Row order check: report cells out of HBase's order (exit 1 if any).
    #[arg(short = 'k', long = "checkrow")]
    check_order: bool,
    /// Print the trailer, file info, index and Bloom filter metadata.
    #[arg(short = 'm', long = "printmeta")]
    meta: bool,
    /// Print every cell: key and value.
    #[arg(short = 'p', long = "printkv")]
    print: bool,
    /// Print every cell's key.
    #[arg(short = 'e', long = "printkey")]
    print_key: bool,
    /// Print key, value and row size distributions.
    #[arg(short = 's', long = "stats")]
    stats: bool,
    /// Print the data block index (its root level: each entry's key, offset and size).
    #[arg(short = 'b', long = "printblocks")]
    block_index: bool,
    /// Print every block's header.
    #[arg(short = 'h', long = "printblockheaders")]
    block_headers: bool,
    /// Read without verifying inline checksums (HBase's hbase.regionserver.checksum.verify=false).
    #[arg(long)]
    no_checksum_verify: bool,
    /// Print help (-h is HBase's block headers).
    #[arg(long, action = ArgAction::Help)]
    help: Option<bool>,
}

pub fn run(args: HFileArgs) -> Result<ExitCode> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut code = ExitCode::SUCCESS;
    let mut count = 0;
    for file in args.files.iter().chain(&args.more_files) {
        if args.verbose {
            writeln!(out, "Scanning -> {}", file.display())?;
        }
        match one(file, &args, &mut out) {
            Ok(cells) => count += cells,
            Err(e) => {
                if crate::is_broken_pipe(&e) {
                    return Err(e);
                }
                writeln!(out, "{}: ERROR: {e:#}", file.display())?;
                code = ExitCode::from(1);
            }
        }
    }
    if args.verbose || args.print || args.print_key {
        writeln!(out, "Scanned kv count -> {count}")?;
    }
    out.flush()?;
    Ok(code)
}

/// One file's output; returns the cells scanned.
fn one(file: &PathBuf, args: &HFileArgs, out: &mut impl Write) -> Result<u64> {
    let options = ReaderOptions {
        verify_checksums: !args.no_checksum_verify,
        ..Default::default()
    };
    let r = HFileReader::open(file, options)
        .with_context(|| format!("cannot open {} as an HFile", file.display()))?;
    if args.meta {
        print_meta(&r, out)?;
    }
    if args.block_index {
        print_block_index(&r, out)?;
    }
    let verify = args.verify || args.verbose;
    if args.block_headers {
        writeln!(out, "Block Headers:")?;
    }
    if args.block_headers || verify {
        let before = checksum_failures();
        let bar = progress::bytes("verifying", r.file_len());
        let mut write_error = None;
        let count = r.verify_all_blocks(|b| {
            bar.set_position(b.next_offset());
            if args.block_headers && write_error.is_none() {
                let h = b.header();
                let written = writeln!(
                    out,
                    "block offset={} type={} onDiskSizeWithHeader={} uncompressedSizeWithoutHeader={} prevBlockOffset={} checksum={} bytesPerChecksum={} onDiskDataSizeWithHeader={}",
                    b.offset(),
                    h.block_type,
                    b.on_disk_size(),
                    h.uncompressed_size_without_header,
                    h.prev_block_offset,
                    h.checksum_type,
                    h.bytes_per_checksum,
                    h.on_disk_data_size_with_header
                );
                write_error = written.err();
            }
        });
        bar.finish_and_clear();
        if let Some(e) = write_error {
            return Err(e.into());
        }
        let count = count?;
        if verify {
            writeln!(
                out,
                "{}: verified {count} blocks ({} checksum failures)",
                file.display(),
                checksum_failures() - before
            )?;
        }
    }
    if args.verbose || args.print || args.print_key || args.check_order || args.stats {
        return scan(&r, args, out);
    }
    Ok(0)
}

/// HBase's `-b`: the data block index reader's listing (its root level).
fn print_block_index(r: &HFileReader, out: &mut impl Write) -> Result<()> {
    let index = r.data_index();
    writeln!(out, "Block Index:")?;
    writeln!(out, "size={}", index.len())?;
    for i in 0..index.len() {
        let (key, offset, size) = index.entry(i);
        let key = KeyRef::parse(key)
            .map(|k| k.to_string())
            .unwrap_or_else(|_| Escaped(key).to_string());
        writeln!(out, "key={key}\n  offset={offset}, dataSize={size}")?;
    }
    Ok(())
}

fn print_meta(r: &HFileReader, out: &mut impl Write) -> Result<()> {
    let t = r.trailer();
    let info = r.file_info();
    let key = |k: Option<&[u8]>| {
        k.and_then(|k| KeyRef::parse(k).ok())
            .map(|k| k.to_string())
            .unwrap_or_else(|| "none".into())
    };
    writeln!(
        out,
        "reader={}, compression={}, firstKey={}, lastKey={}, avgKeyLen={}, avgValueLen={}, entries={}, length={}",
        r.path(),
        t.compression.name().to_ascii_lowercase(),
        key(r.first_key()),
        key(r.last_key()),
        info.get_i32(keys::AVG_KEY_LEN).unwrap_or(0),
        info.get_i32(keys::AVG_VALUE_LEN).unwrap_or(0),
        t.entry_count,
        r.file_len()
    )?;
    let off = |o: Option<u64>| o.map_or("-1".to_string(), |v| v.to_string());
    writeln!(out, "Trailer:")?;
    writeln!(
        out,
        "    fileinfoOffset={}, loadOnOpenDataOffset={}, dataIndexCount={}, metaIndexCount={}, totalUncomressedBytes={}, entryCount={}, compressionCodec={}, uncompressedDataIndexSize={}, numDataIndexLevels={}, firstDataBlockOffset={}, lastDataBlockOffset={}, comparatorClassName={}, encryptionKey=NONE, majorVersion=3, minorVersion={}",
        t.file_info_offset,
        t.load_on_open_data_offset,
        t.data_index_count,
        t.meta_index_count,
        t.total_uncompressed_bytes,
        t.entry_count,
        t.compression,
        t.uncompressed_data_index_size,
        t.num_data_index_levels,
        off(t.first_data_block_offset),
        off(t.last_data_block_offset),
        t.comparator_class_name,
        t.minor_version
    )?;
    writeln!(out, "Fileinfo:")?;
    for (k, v) in info.iter() {
        writeln!(out, "    {} = {}", Escaped(k), show_info_value(k, v))?;
    }
    writeln!(out, "Mid-key: {}", key(r.mid_key()?.as_deref()))?;
    writeln!(out, "Load-on-open blocks:")?;
    for b in r.load_on_open_blocks() {
        writeln!(
            out,
            "    {} at {}: {} bytes on disk, {} uncompressed",
            b.block_type, b.offset, b.on_disk_size, b.uncompressed_size
        )?;
    }
    writeln!(
        out,
        "Data index: {} root entries, {} levels, {} bytes of keys",
        r.data_index().len(),
        t.num_data_index_levels,
        r.data_index().heap_size()
    )?;
    match r.general_bloom() {
        Some(b) => writeln!(
        out,
            "Bloom filter:\n    BloomType: {}\n    Hash type: {:?}\n    Hash count: {}\n    Keys: {} (max {})\n    Chunks: {}\n    Total size: {} bytes",
            r.bloom_type(),
            b.hash_type,
            b.hash_count,
            b.key_count,
            b.max_keys,
            b.chunk_count(),
            b.total_byte_size
        )?,
        None => writeln!(out, "Bloom filter:\n    Not present")?,
    }
    match r.delete_family_bloom() {
        Some(b) => writeln!(
            out,
            "Delete Family Bloom filter:\n    Keys: {}\n    Chunks: {}\n    Total size: {} bytes",
            b.key_count,
            b.chunk_count(),
            b.total_byte_size
        )?,
        None => writeln!(out, "Delete Family Bloom filter:\n    Not present")?,
    }
    Ok(())
}

fn show_info_value(k: &[u8], v: &[u8]) -> String {
    let as_i64 = || v.try_into().ok().map(i64::from_be_bytes);
    let as_i32 = || v.try_into().ok().map(i32::from_be_bytes);
    match k {
        keys::LASTKEY | keys::KEY_OF_BIGGEST_CELL => KeyRef::parse(v)
            .map(|k| k.to_string())
            .unwrap_or_else(|_| Escaped(v).to_string()),
        keys::TIMERANGE if v.len() == 16 => format!(
            "{}....{}",
            i64::from_be_bytes(v[..8].try_into().expect("8")),
            i64::from_be_bytes(v[8..].try_into().expect("8"))
        ),
        keys::AVG_KEY_LEN | keys::AVG_VALUE_LEN | keys::MAX_TAGS_LEN | keys::KEY_VALUE_VERSION => {
            as_i32().map_or_else(|| Escaped(v).to_string(), |n| n.to_string())
        }
        keys::CREATE_TIME_TS
        | keys::LEN_OF_BIGGEST_CELL
        | keys::MAX_MEMSTORE_TS_KEY
        | keys::EARLIEST_PUT_TS
        | keys::DELETE_FAMILY_COUNT
        | keys::MAX_SEQ_ID_KEY => {
            as_i64().map_or_else(|| Escaped(v).to_string(), |n| n.to_string())
        }
        keys::TAGS_COMPRESSED | keys::MAJOR_COMPACTION_KEY if v.len() == 1 => {
            (v[0] != 0).to_string()
        }
        keys::LAST_BLOOM_KEY => KeyRef::parse(v)
            .map(|k| k.to_string())
            .unwrap_or_else(|_| Escaped(v).to_string()),
        _ => Escaped(v).to_string(),
    }
}

fn scan(r: &HFileReader, args: &HFileArgs, out: &mut impl Write) -> Result<u64> {
    let mut s = r.scanner();
    let mut more = s.seek_to_first()?;
    let mut prev: Option<Vec<u8>> = None;
    let mut out_of_order = 0u64;
    let new_hist = || Histogram::<u64>::new(3).expect("3 significant digits");
    let (mut klen, mut vlen, mut row_bytes, mut row_cols) =
        (new_hist(), new_hist(), new_hist(), new_hist());
    let (mut cur_row, mut cur_bytes, mut cur_cols): (Option<Vec<u8>>, u64, u64) = (None, 0, 0);
    let mut cells = 0u64;
    let bar = progress::count("scanning", r.entry_count());
    while more {
        let c = s.cell().expect("positioned");
        cells += 1;
        if cells.is_multiple_of(65536) {
            bar.set_position(cells);
        }
        if args.print_key && !args.print {
            writeln!(
                out,
                "K: {}/vlen={}/seqid={}",
                c.key,
                c.value.len(),
                c.sequence_id
            )?;
        }
        if args.print {
            let tags = if c.tags.is_empty() {
                String::new()
            } else {
                format!(" T[{}]", Escaped(c.tags))
            };
            writeln!(
                out,
                "K: {}/vlen={}/seqid={} V: {}{tags}",
                c.key,
                c.value.len(),
                c.sequence_id,
                Escaped(c.value)
            )?;
        }
        if args.check_order {
            if let Some(p) = &prev {
                if cairn_cell::compare_keys(&KeyRef::parse(p)?, &c.key)
                    == std::cmp::Ordering::Greater
                {
                    out_of_order += 1;
                    writeln!(
                        out,
                        "WARNING, previous key {} is greater than current key {}",
                        KeyRef::parse(p)?,
                        c.key
                    )?;
                }
            }
            prev = Some(c.key.as_bytes().to_vec());
        }
        if args.stats {
            klen.record(c.key.as_bytes().len() as u64)?;
            vlen.record(c.value.len() as u64)?;
            if cur_row.as_deref() != Some(c.row()) {
                if cur_row.is_some() {
                    row_bytes.record(cur_bytes)?;
                    row_cols.record(cur_cols)?;
                }
                cur_row = Some(c.row().to_vec());
                cur_bytes = 0;
                cur_cols = 0;
            }
            cur_bytes += c.serialized_len() as u64;
            cur_cols += 1;
        }
        more = s.next()?;
    }
    bar.finish_and_clear();
    if cur_row.is_some() {
        row_bytes.record(cur_bytes)?;
        row_cols.record(cur_cols)?;
    }
    if args.check_order {
        writeln!(
            out,
            "{}: {cells} cells, {out_of_order} out of order",
            r.path()
        )?;
        if out_of_order > 0 {
            anyhow::bail!("{out_of_order} cells out of order");
        }
    }
    if args.stats {
        writeln!(out, "Stats:")?;
        writeln!(
            out,
            "| metric | count | min | mean | p50 | p95 | p99 | max |"
        )?;
        writeln!(out, "|---|---|---|---|---|---|---|---|")?;
        for (name, h) in [
            ("Key length", &klen),
            ("Val length", &vlen),
            ("Row size (bytes)", &row_bytes),
            ("Row size (columns)", &row_cols),
        ] {
            writeln!(
                out,
                "| {name} | {} | {} | {:.2} | {} | {} | {} | {} |",
                h.len(),
                h.min(),
                h.mean(),
                h.value_at_quantile(0.5),
                h.value_at_quantile(0.95),
                h.value_at_quantile(0.99),
                h.max()
            )?;
        }
    }
    Ok(cells)
}
