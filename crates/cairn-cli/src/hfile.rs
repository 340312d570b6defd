//! `cairn hfile`: HBase's `hbase hfile` (HFilePrettyPrinter) for HBase's files and cairn's, with
//! its options (`-v`, `-p`, `-e`, `-m`, `-b`, `-h`, `-k`, `-a`, `-s`, `-d`, `-i`, `-w ROW`,
//! `-f FILE`, `-r REGION`, files) meaning what they mean there; `-h` is HBase's block headers,
//! so help is `--help` only. HBase finds `-r`'s region and `-i`'s MOB files under
//! `hbase.rootdir`; cairn under `--data`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use cairn_bench::progress;
use cairn_cell::{first_on_row, Escaped, KeyRef};
use cairn_hfile::file_info::keys;
use cairn_hfile::{checksum_failures, HFileReader, ReaderOptions};
use clap::{ArgAction, ArgGroup, Args};
use hdrhistogram::Histogram;

#[derive(Args)]
#[command(disable_help_flag = true)]
#[command(group(ArgGroup::new("input").required(true).multiple(true).args(["files", "more_files", "region"])))]
pub struct HFileArgs {
    /// HFile to read (more may follow, with -f again or as arguments).
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    files: Vec<PathBuf>,
    /// HFiles to read.
    #[arg(value_name = "FILES")]
    more_files: Vec<PathBuf>,
    /// Read every store file of this region, by its full name (`t1,row,1700000000000.<encoded>.`,
    /// as the shell and the UI print it), under `--data`.
    #[arg(short = 'r', long = "region", value_name = "REGION")]
    region: Option<String>,
    /// The root directory (HBase's `hbase.rootdir`) that `-r` and `-i` look under.
    #[arg(long = "data", value_name = "ROOT")]
    data: Option<PathBuf>,
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
    /// Family check: report cells whose family is not in the file's path, or differs from the
    /// previous cell's (exit 1 if any).
    #[arg(short = 'a', long = "checkfamily")]
    check_family: bool,
    /// Seek to this row (`Bytes.toStringBinary` form: `\xNN` escapes) and read its cells only.
    #[arg(short = 'w', long = "seekToRow", value_name = "ROW", value_parser = nonempty_row)]
    seek_to_row: Option<String>,
    /// Report MOB reference cells whose MOB file is missing (exit 1 if any); needs `--data`.
    #[arg(short = 'i', long = "checkMobIntegrity")]
    check_mob: bool,
    /// Print key, value and row size distributions.
    #[arg(short = 's', long = "stats")]
    stats: bool,
    /// -s with counts by size range (HBase's ranges: ≤ 1, 3, 10, 50, 100, 500, 1,000, ...).
    #[arg(short = 'd', long = "details")]
    details: bool,
    /// Print the data block index (its root level: each entry's key, offset and size).
    #[arg(short = 'b', long = "printblocks")]
    block_index: bool,
    /// Print every block's header.
    #[arg(short = 'h', long = "printblockheaders")]
    block_headers: bool,
    /// Read without verifying inline checksums (HBase's hbase.regionserver.checksum.verify=false).
    #[arg(long)]
    no_checksum_verify: bool,
    /// An HBase property: hbase.rootdir (as --data) or hbase.regionserver.checksum.verify
    /// (false: as --no-checksum-verify); after --conf's files. Other names are warned about.
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    properties: Vec<String>,
    /// HBase's configuration directory: its core-site.xml and hbase-site.xml give properties
    /// as -D does, before the -Ds [default: $HBASE_CONF_DIR].
    #[arg(long = "conf", value_name = "DIR")]
    conf: Option<PathBuf>,
    /// Print help (-h is HBase's block headers).
    #[arg(long, action = ArgAction::Help)]
    help: Option<bool>,
}

/// The properties `cairn hfile` reads, as HFilePrettyPrinter does.
const PROPERTIES: &[&str] = &["hbase.rootdir", "hbase.regionserver.checksum.verify"];

fn reads(name: &str) -> bool {
    PROPERTIES.contains(&name)
}

/// Applies the configuration's properties to `args`: hbase.rootdir where `--data` is not
/// given, and hbase.regionserver.checksum.verify=false as `--no-checksum-verify`.
fn apply_site(args: &mut HFileArgs) -> Result<()> {
    let site = crate::site::Site::load("hfile", args.conf.as_deref(), &args.properties, reads)?;
    for p in site.read(reads)? {
        match p.name.as_str() {
            "hbase.rootdir" if args.data.is_none() => args.data = Some(local_root(&p)?),
            "hbase.regionserver.checksum.verify" => {
                match p.value.trim().to_ascii_lowercase().as_str() {
                    "true" => {}
                    "false" => args.no_checksum_verify = true,
                    _ => anyhow::bail!("{}: expected true or false", p.origin()),
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// hbase.rootdir as a local directory: a path or `file:` URI (HFiles are read locally).
fn local_root(p: &crate::site::Property) -> Result<PathBuf> {
    let v = p.value.trim();
    let path = v
        .strip_prefix("file://")
        .or_else(|| v.strip_prefix("file:"))
        .unwrap_or(v);
    if path.contains("://") {
        anyhow::bail!(
            "{}: cairn hfile reads local files; give the root with --data",
            p.origin()
        );
    }
    Ok(PathBuf::from(path))
}

pub fn run(mut args: HFileArgs) -> Result<ExitCode> {
    apply_site(&mut args)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut code = ExitCode::SUCCESS;
    let mut count = 0;
    if args.check_mob && args.data.is_none() {
        anyhow::bail!(
            "-i (checkMobIntegrity) looks for MOB files under the root: give --data ROOT"
        );
    }
    let mut files: Vec<PathBuf> = args.files.iter().chain(&args.more_files).cloned().collect();
    if let Some(region) = &args.region {
        let root = args
            .data
            .as_deref()
            .context("-r REGION needs --data ROOT (hbase.rootdir)")?;
        let dir = region_dir(root, region)?;
        let found = store_files(&dir)?;
        if args.verbose {
            writeln!(out, "region dir -> {}", dir.display())?;
            writeln!(out, "Number of region files found -> {}", found.len())?;
            for (i, p) in found.iter().enumerate() {
                writeln!(out, "Found file[{}] -> {}", i + 1, p.display())?;
            }
        }
        files.extend(found);
    }
    for file in &files {
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
    if args.verbose
        || args.print
        || args.print_key
        || args.check_order
        || args.check_family
        || args.check_mob
        || args.stats
        || args.details
    {
        return scan(&r, file, args, out);
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

fn scan(r: &HFileReader, file: &Path, args: &HFileArgs, out: &mut impl Write) -> Result<u64> {
    let mut s = r.scanner();
    let only_row = args.seek_to_row.as_deref().map(Escaped::parse);
    let mut more = match &only_row {
        Some(row) => s.seek(&first_on_row(row)?)?,
        None => s.seek_to_first()?,
    };
    let mut prev: Option<Vec<u8>> = None;
    let mut out_of_order = 0u64;
    let mut family_warnings = 0u64;
    let mut mob = MobCheck::default();
    let path_text = file.to_string_lossy();
    let new_stat = || SizeStat::new(args.details);
    let (mut klen, mut vlen, mut row_bytes, mut row_cols) =
        (new_stat(), new_stat(), new_stat(), new_stat());
    let (mut cur_row, mut cur_bytes, mut cur_cols): (Option<Vec<u8>>, u64, u64) = (None, 0, 0);
    let mut prev_family: Option<Vec<u8>> = None;
    let mut cells = 0u64;
    let stats = args.stats || args.details;
    let bar = progress::count("scanning", r.entry_count());
    while more {
        let c = s.cell().expect("positioned");
        if let Some(row) = &only_row {
            if c.row() != row.as_slice() {
                break;
            }
        }
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
        if args.check_family {
            let family = c.key.family();
            if !path_text.contains(String::from_utf8_lossy(family).as_ref()) {
                family_warnings += 1;
                eprintln!(
                    "WARNING, filename does not match kv family,\n\tfilename -> {}\n\tkeyvalue -> {}",
                    file.display(),
                    c.key
                );
            }
            if prev_family.as_deref().is_some_and(|p| p != family) {
                family_warnings += 1;
                eprintln!(
                    "WARNING, previous kv has different family compared to current key\n\tfilename -> {}\n\tcurrent  -> {}",
                    file.display(),
                    c.key
                );
            }
            prev_family = Some(family.to_vec());
        }
        if args.check_mob {
            let root = args.data.as_deref().expect("checked in run");
            mob.check(root, &c.key, c.tags, c.value)?;
        }
        if stats {
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
    if args.check_family && family_warnings > 0 {
        anyhow::bail!("{family_warnings} family warnings");
    }
    if args.check_mob && mob.missing > 0 {
        anyhow::bail!(
            "{} MOB reference cells point at missing or unreadable MOB files",
            mob.missing
        );
    }
    if stats {
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
        if args.details {
            for (name, h) in [
                ("Key length", &klen),
                ("Val length", &vlen),
                ("Row size (bytes)", &row_bytes),
                ("Row size (columns)", &row_cols),
            ] {
                writeln!(out, "{name} (range <= count):")?;
                for (range, count) in h.range_counts() {
                    writeln!(out, "{range:>17} <= {count}")?;
                }
            }
        }
    }
    Ok(cells)
}

/// `-w`'s value: HBase refuses an empty row ("Invalid row is specified.").
fn nonempty_row(s: &str) -> std::result::Result<String, String> {
    if s.is_empty() {
        Err("Invalid row is specified.".into())
    } else {
        Ok(s.to_string())
    }
}

/// The directory of the region `name` names (`<table>,<start>,<id>.<encoded>.`), as HBase's
/// HFilePrettyPrinter finds it: the table is what precedes the first `,`, the encoded name the
/// 32 hex digits between the last two dots.
fn region_dir(root: &Path, name: &str) -> Result<PathBuf> {
    let bytes = name.as_bytes();
    let table_end = bytes
        .iter()
        .position(|&b| b == b',')
        .with_context(|| format!("-r {name}: not a region name (no ',' after the table)"))?;
    let table = cairn_region::TableName::from_full_name(&bytes[..table_end])
        .with_context(|| format!("-r {name}: the table name"))?;
    let n = bytes.len();
    let encoded = (n >= 34 && bytes[n - 1] == b'.' && bytes[n - 34] == b'.')
        .then(|| &name[n - 33..n - 1])
        .filter(|e| e.bytes().all(|b| b.is_ascii_hexdigit()))
        .with_context(|| {
            format!(
                "-r {name}: the name carries no encoded region name (`<table>,<start>,<id>.<encoded>.`)"
            )
        })?;
    Ok(cairn_region::tools::layout::table_dir(root, &table).join(encoded))
}

/// The files of a region's family directories (HBase's `HFile.getStoreFiles`): every file in
/// every directory of the region that is not cairn's or HBase's own (`.tmp`, `recovered.edits`).
fn store_files(region: &Path) -> Result<Vec<PathBuf>> {
    let listing = |dir: &Path| -> Result<Vec<std::fs::DirEntry>> {
        let mut entries = std::fs::read_dir(dir)
            .with_context(|| format!("listing {}", dir.display()))?
            .collect::<std::io::Result<Vec<_>>>()
            .with_context(|| format!("listing {}", dir.display()))?;
        entries.sort_by_key(|e| e.file_name());
        Ok(entries)
    };
    let mut files = Vec::new();
    for family in listing(region)? {
        let name = family.file_name();
        let name = name.to_string_lossy();
        if !family.file_type()?.is_dir() || name.starts_with('.') || name == "recovered.edits" {
            continue;
        }
        for f in listing(&family.path())? {
            if f.file_type()?.is_file() && !f.file_name().to_string_lossy().starts_with('.') {
                files.push(f.path());
            }
        }
    }
    Ok(files)
}

/// HBase's size ranges for `-d`: a value is counted at the first range at or above it.
const RANGES: [u64; 18] = [
    1,
    3,
    10,
    50,
    100,
    500,
    1_000,
    5_000,
    10_000,
    50_000,
    100_000,
    500_000,
    750_000,
    1_000_000,
    5_000_000,
    10_000_000,
    50_000_000,
    100_000_000,
];

/// One size distribution of `-s`, with `-d`'s counts by range.
struct SizeStat {
    histogram: Histogram<u64>,
    /// Counts per [`RANGES`] entry, and one past them; `None` without `-d`.
    ranges: Option<[u64; RANGES.len() + 1]>,
}

impl SizeStat {
    fn new(details: bool) -> SizeStat {
        SizeStat {
            histogram: Histogram::new(3).expect("3 significant digits"),
            ranges: details.then_some([0; RANGES.len() + 1]),
        }
    }

    fn record(&mut self, v: u64) -> Result<()> {
        self.histogram.record(v)?;
        if let Some(r) = &mut self.ranges {
            r[RANGES.partition_point(|&limit| limit < v)] += 1;
        }
        Ok(())
    }

    /// The ranges as HBase prints them: those with values, each preceded by the empty range
    /// before the first one (for context), and "inf" for values past the last range.
    fn range_counts(&self) -> Vec<(String, u64)> {
        let Some(counts) = &self.ranges else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut seen_any = false;
        for (i, &count) in counts.iter().enumerate() {
            if count == 0 {
                continue;
            }
            let label = |i: usize| RANGES.get(i).map_or("inf".to_string(), |r| r.to_string());
            // (HBase prints values past the last range after its loop, without context.)
            if !seen_any && i > 0 && i < RANGES.len() {
                out.push((label(i - 1), 0));
            }
            seen_any = true;
            out.push((label(i), count));
        }
        out
    }
}

impl std::ops::Deref for SizeStat {
    type Target = Histogram<u64>;
    fn deref(&self) -> &Histogram<u64> {
        &self.histogram
    }
}

/// HBase's MOB reference cells (`MobUtils.isMobReferenceCell`): tag type 5; the table's name
/// in a tag of type 6; the value the referenced value's length (4 bytes) and the MOB file's
/// name.
const MOB_REFERENCE_TAG_TYPE: u8 = 5;
const MOB_TABLE_NAME_TAG_TYPE: u8 = 6;

/// `-i`: MOB files looked up once each, missing ones reported once each.
#[derive(Default)]
struct MobCheck {
    known: std::collections::HashMap<PathBuf, bool>,
    missing: u64,
}

impl MobCheck {
    fn check(&mut self, root: &Path, key: &KeyRef<'_>, tags: &[u8], value: &[u8]) -> Result<()> {
        let tags = parse_tags(tags);
        if !tags.iter().any(|(t, _)| *t == MOB_REFERENCE_TAG_TYPE) {
            return Ok(());
        }
        let Some(table) = tags
            .iter()
            .find(|(t, _)| *t == MOB_TABLE_NAME_TAG_TYPE)
            .and_then(|(_, v)| cairn_region::TableName::from_full_name(v).ok())
        else {
            self.missing += 1;
            eprintln!("ERROR, wrong tag format in mob reference cell {key}");
            return Ok(());
        };
        if value.len() <= 4 {
            self.missing += 1;
            eprintln!("ERROR, wrong value format in mob reference cell {key}");
            return Ok(());
        }
        let file = String::from_utf8_lossy(&value[4..]).to_string();
        let family = String::from_utf8_lossy(key.family()).to_string();
        // The names come from the file being checked: each must be one plain path component,
        // so a crafted cell cannot send the lookup outside the root.
        if cairn_region::names::child(root, &file).is_err()
            || cairn_region::names::child(root, &family).is_err()
        {
            self.missing += 1;
            eprintln!("ERROR, wrong value format in mob reference cell {key}");
            return Ok(());
        }
        // MobUtils.getMobRegionInfo: the table's region starting at ".mob", id 0.
        let mob_region = cairn_region::RegionInfo::new(table.clone(), b".mob", b"", 0).encoded_name;
        let live = root
            .join("mobdir")
            .join("data")
            .join(&table.namespace)
            .join(&table.qualifier)
            .join(&mob_region)
            .join(&family)
            .join(&file);
        let archived = cairn_region::tools::layout::archive_table_dir(root, &table)
            .join(&mob_region)
            .join(&family)
            .join(&file);
        let exists = *self
            .known
            .entry(live.clone())
            .or_insert_with(|| live.is_file() || archived.is_file());
        if !exists {
            self.missing += 1;
            eprintln!("ERROR, the mob file [{file}] is missing referenced by cell {key}");
        }
        Ok(())
    }
}

/// A cell's tags: each a 2-byte big-endian length (of type and value), a type byte and the
/// value. A malformed tail ends the list.
fn parse_tags(mut tags: &[u8]) -> Vec<(u8, &[u8])> {
    let mut out = Vec::new();
    while tags.len() >= 3 {
        let len = u16::from_be_bytes([tags[0], tags[1]]) as usize;
        if len == 0 || tags.len() < 2 + len {
            break;
        }
        out.push((tags[2], &tags[3..2 + len]));
        tags = &tags[2 + len..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct HFile {
        #[command(flatten)]
        a: HFileArgs,
    }

    fn applied(args: &[&str]) -> Result<HFileArgs> {
        let mut a = HFile::try_parse_from(std::iter::once("hfile").chain(args.iter().copied()))
            .unwrap()
            .a;
        apply_site(&mut a).map(|()| a)
    }

    /// Every listed name is read: it changes the arguments, or its bad value is refused.
    #[test]
    fn every_listed_property_is_read() {
        let a = applied(&["-D", "hbase.rootdir=file:///r", "f"]).unwrap();
        assert_eq!(a.data, Some(PathBuf::from("/r")));
        let a = applied(&["-D", "hbase.rootdir=/r", "--data", "/d", "f"]).unwrap();
        assert_eq!(a.data, Some(PathBuf::from("/d")), "--data wins");
        assert!(applied(&["-D", "hbase.rootdir=hdfs://nn/r", "f"]).is_err());
        let a = applied(&["-D", "hbase.regionserver.checksum.verify=false", "f"]).unwrap();
        assert!(a.no_checksum_verify);
        let e = applied(&["-D", "hbase.regionserver.checksum.verify=no", "f"])
            .map(drop)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("-D hbase.regionserver.checksum.verify=no"),
            "{e}"
        );
        assert!(PROPERTIES.iter().all(|p| reads(p)));
    }

    #[test]
    fn ranges_count_as_hbase_buckets_them() {
        let mut s = SizeStat::new(true);
        for v in [7, 10, 11, 200_000_000] {
            s.record(v).unwrap();
        }
        assert_eq!(
            s.range_counts(),
            vec![
                ("3".to_string(), 0),
                ("10".to_string(), 2),
                ("50".to_string(), 1),
                ("inf".to_string(), 1)
            ]
        );
        assert!(SizeStat::new(false).range_counts().is_empty());
    }

    #[test]
    fn region_names_lead_to_their_directories() {
        let root = Path::new("/r");
        let enc = "0123456789abcdef0123456789abcdef";
        let d = region_dir(root, &format!("ns:t,row,1700000000000.{enc}.")).unwrap();
        assert_eq!(d, Path::new("/r/data/ns/t").join(enc));
        let d = region_dir(root, &format!("t,,1.{enc}.")).unwrap();
        assert_eq!(d, Path::new("/r/data/default/t").join(enc));
        assert!(region_dir(root, "hbase:meta,,1").is_err());
        assert!(region_dir(root, "t").is_err());
        assert!(region_dir(root, &format!("../x,,1.{enc}.")).is_err());
    }

    #[test]
    fn tags_parse_and_stop_at_a_torn_tail() {
        let tags = [0, 3, 5, b'a', b'b', 0, 2, 6, b'c', 0, 9, 1];
        assert_eq!(parse_tags(&tags), vec![(5, &b"ab"[..]), (6, &b"c"[..])]);
    }
}
