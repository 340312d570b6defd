//! `cairn checksum`: chunked checksums of files, in HDFS's block metadata format, and the
//! whole-file checksums `hdfs dfs -checksum` prints.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use cairn_checksum::hdfs::{
    BlockMetadataHeader, CombineMode, FileChecksumOptions, FileChecksummer, META_HEADER_LEN,
};
use cairn_checksum::{
    ChecksumError, ChecksumMismatch, ChecksumType, ChecksumWriter, DataChecksum, Implementation,
};
use clap::Subcommand;

use cairn_bench::progress;
// Sizes as Hadoop configuration writes them: `128m` and `128MiB` are both 128 × 2^20 (the one
// size parser of every `cairn` tool).
use cairn_bench::units::parse_bytes;

/// Data is read in pieces of about this size.
const READ_BYTES: usize = 4 << 20;

#[derive(Subcommand)]
pub enum ChecksumCommand {
    /// Write the chunked checksums of FILE to a sums file in HDFS's block metadata (.meta)
    /// format: a 7-byte header, then one big-endian checksum per chunk.
    Compute {
        /// The file to checksum.
        file: PathBuf,
        /// NULL, CRC32 or CRC32C (any case).
        #[arg(short = 't', long = "type", default_value = "CRC32C")]
        checksum_type: ChecksumType,
        /// Bytes per checksum (HDFS's default 512; HBase's HFile default 16384).
        #[arg(short = 'b', long, default_value_t = 512)]
        bytes_per_checksum: u32,
        /// Where to write the sums (default: FILE.meta).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Verify FILE against a sums file written by `compute` or by an HDFS DataNode (its
    /// blk_*.meta); exits 1 if any chunk is corrupt.
    Verify {
        /// The data file.
        file: PathBuf,
        /// The sums file (default: FILE.meta).
        #[arg(short, long)]
        meta: Option<PathBuf>,
        /// Report every corrupt chunk instead of stopping at the first.
        #[arg(long)]
        all: bool,
    },
    /// Print HDFS whole-file checksums, in the form `hdfs dfs -checksum` prints, so local
    /// files can be compared with their copies on HDFS.
    Hdfs {
        /// Files to checksum.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// HDFS block size the copy was written with (dfs.blocksize), e.g. 128m, 256MiB.
        #[arg(long, default_value = "128MiB", value_parser = parse_bytes)]
        block_size: u64,
        /// dfs.bytes-per-checksum.
        #[arg(long, default_value_t = 512)]
        bytes_per_crc: u32,
        /// dfs.checksum.type: CRC32 or CRC32C.
        #[arg(long, default_value = "CRC32C")]
        crc_type: ChecksumType,
        /// dfs.checksum.combine.mode: MD5MD5CRC or COMPOSITE_CRC.
        #[arg(long, default_value = "MD5MD5CRC")]
        combine_mode: CombineMode,
    },
    /// Generate a file, checksum and verify it, flip one bit and show that it is caught, and
    /// print its HDFS file checksums: everything above, on local disk, in one command.
    Demo {
        /// Size of the generated file, e.g. 256MiB, 1g.
        #[arg(long, default_value = "256MiB", value_parser = parse_bytes)]
        size: u64,
        /// NULL, CRC32 or CRC32C.
        #[arg(short = 't', long = "type", default_value = "CRC32C")]
        checksum_type: ChecksumType,
        /// Bytes per checksum.
        #[arg(short = 'b', long, default_value_t = 512)]
        bytes_per_checksum: u32,
        /// Directory for the files (default: a temporary directory, removed afterwards).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

pub fn run(command: ChecksumCommand) -> Result<ExitCode> {
    match command {
        ChecksumCommand::Compute {
            file,
            checksum_type,
            bytes_per_checksum,
            output,
        } => {
            let dc = DataChecksum::new(checksum_type, bytes_per_checksum)?;
            let meta = output.unwrap_or_else(|| default_meta_path(&file));
            let report = compute(&file, &meta, dc)?;
            println!(
                "{}: {} {} checksums of {} bytes each, written to {} ({})",
                file.display(),
                report.chunks,
                checksum_type,
                bytes_per_checksum,
                meta.display(),
                rate(report.bytes, report.seconds),
            );
            Ok(ExitCode::SUCCESS)
        }
        ChecksumCommand::Verify { file, meta, all } => {
            let meta = meta.unwrap_or_else(|| default_meta_path(&file));
            let report = verify(&file, &meta, all)?;
            Ok(print_verify_report(&file, &report))
        }
        ChecksumCommand::Hdfs {
            files,
            block_size,
            bytes_per_crc,
            crc_type,
            combine_mode,
        } => {
            let options = FileChecksumOptions {
                block_size,
                bytes_per_crc,
                crc_type,
                combine_mode,
            };
            FileChecksummer::new(options)?;
            let mut code = ExitCode::SUCCESS;
            for file in &files {
                match hdfs_checksum(file, options) {
                    Ok(line) => println!("{}\t{line}", file.display()),
                    Err(e) => {
                        eprintln!("cairn: error: {e:#}");
                        code = ExitCode::from(1);
                    }
                }
            }
            Ok(code)
        }
        ChecksumCommand::Demo {
            size,
            checksum_type,
            bytes_per_checksum,
            dir,
        } => demo(
            size,
            DataChecksum::new(checksum_type, bytes_per_checksum)?,
            dir,
        ),
    }
}

fn default_meta_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".meta");
    PathBuf::from(name)
}

fn open(path: &Path) -> Result<(File, u64)> {
    let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let meta = f
        .metadata()
        .with_context(|| format!("cannot stat {}", path.display()))?;
    if meta.is_dir() {
        bail!("{} is a directory, not a file", path.display());
    }
    Ok((f, meta.len()))
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Calls `f` with successive pieces of the file, showing progress for long files.
fn for_each_piece(path: &Path, what: &str, mut f: impl FnMut(&[u8]) -> Result<()>) -> Result<u64> {
    let (mut file, len) = open(path)?;
    let bar = progress::bytes(what, len);
    let mut buf = vec![0u8; READ_BYTES];
    let mut total = 0u64;
    loop {
        let n = read_full(&mut file, &mut buf)
            .with_context(|| format!("cannot read {} at byte {total}", path.display()))?;
        if n == 0 {
            break;
        }
        f(&buf[..n])?;
        total += n as u64;
        bar.inc(n as u64);
    }
    bar.finish_and_clear();
    Ok(total)
}

struct ComputeReport {
    bytes: u64,
    chunks: usize,
    seconds: f64,
}

fn compute(file: &Path, meta: &Path, dc: DataChecksum) -> Result<ComputeReport> {
    let start = Instant::now();
    let out = File::create(meta).with_context(|| format!("cannot create {}", meta.display()))?;
    let mut out = BufWriter::new(out);
    let header = BlockMetadataHeader::new(dc.checksum_type(), dc.bytes_per_checksum());
    out.write_all(&header.encode())
        .with_context(|| format!("cannot write {}", meta.display()))?;
    let mut writer = ChecksumWriter::new(io::sink(), out, dc);
    let bytes = for_each_piece(file, "checksumming", |piece| {
        writer
            .write_all(piece)
            .with_context(|| format!("cannot write {}", meta.display()))
    })?;
    let (_, out) = writer
        .finish()
        .with_context(|| format!("cannot write {}", meta.display()))?;
    out.into_inner()
        .map_err(|e| e.into_error())
        .and_then(|f| f.sync_all())
        .with_context(|| format!("cannot write {}", meta.display()))?;
    Ok(ComputeReport {
        bytes,
        chunks: dc.chunk_count(bytes as usize),
        seconds: start.elapsed().as_secs_f64(),
    })
}

struct VerifyReport {
    checksum: DataChecksum,
    bytes: u64,
    /// Every corrupt chunk found (only the first unless `all`), with file-wide chunk indexes.
    corrupt: Vec<ChecksumMismatch>,
    /// Set when the sums file and the data disagree in length.
    length_problem: Option<String>,
    seconds: f64,
}

/// Checks successive pieces of a file against the checksums that follow in its sums file.
struct Verifier<'a> {
    checksum: DataChecksum,
    meta: &'a Path,
    sums_file: File,
    sums: Vec<u8>,
    /// File offset of the next piece.
    offset: u64,
    all: bool,
    corrupt: Vec<ChecksumMismatch>,
}

impl Verifier<'_> {
    fn done(&self) -> bool {
        !self.all && !self.corrupt.is_empty()
    }

    /// Verifies the next piece: whole chunks, except at the end of the file.
    fn check(&mut self, data: &[u8]) -> Result<()> {
        let dc = self.checksum;
        let bpc = dc.bytes_per_checksum() as usize;
        self.sums.resize(dc.sums_len(data.len()), 0);
        let got = read_full(&mut self.sums_file, &mut self.sums)
            .with_context(|| format!("cannot read {}", self.meta.display()))?;
        // Chunks past the end of a short sums file are reported by the length check.
        let covered = match dc.checksum_size() {
            0 => data.len(),
            size => (got / size * bpc).min(data.len()),
        };
        let first_chunk = (self.offset / bpc as u64) as usize;
        let mut from = 0usize;
        while from * bpc < covered && !self.done() {
            let d = &data[from * bpc..covered];
            let s = &self.sums[dc.sums_len(from * bpc)..dc.sums_len(covered)];
            match dc.verify_chunked(d, s, self.offset + (from * bpc) as u64) {
                Ok(()) => break,
                Err(ChecksumError::Mismatch(mut m)) => {
                    let local = from + m.chunk_index;
                    m.chunk_index = first_chunk + local;
                    self.corrupt.push(m);
                    from = local + 1;
                }
                Err(e) => return Err(e.into()),
            }
        }
        self.offset += data.len() as u64;
        Ok(())
    }
}

fn verify(file: &Path, meta: &Path, all: bool) -> Result<VerifyReport> {
    let start = Instant::now();
    let (_, data_len) = open(file)?;
    let (mut sums_file, sums_len) = open(meta)?;
    let mut header = [0u8; META_HEADER_LEN];
    let n = read_full(&mut sums_file, &mut header)
        .with_context(|| format!("cannot read {}", meta.display()))?;
    let header = BlockMetadataHeader::decode(&header[..n])
        .with_context(|| format!("{} is not a checksum file", meta.display()))?;
    let dc = header
        .data_checksum()
        .with_context(|| format!("{}: header at offset 0", meta.display()))?;
    let stored = sums_len - n as u64;
    let needed = dc.sums_len(data_len as usize) as u64;
    let length_problem = (stored != needed && dc.checksum_size() > 0).then(|| {
        format!(
            "{} holds {} checksums but {} ({} bytes) needs {}: one of the two is truncated or \
             they do not belong together",
            meta.display(),
            stored / 4,
            file.display(),
            data_len,
            needed / 4
        )
    });
    let bpc = dc.bytes_per_checksum() as usize;
    let batch = (READ_BYTES / bpc).max(1) * bpc;
    let mut v = Verifier {
        checksum: dc,
        meta,
        sums_file,
        sums: Vec::new(),
        offset: 0,
        all,
        corrupt: Vec::new(),
    };
    // Pieces arrive in read-sized slices; keep whole chunks together so each checksum meets
    // its chunk.
    let mut pending: Vec<u8> = Vec::with_capacity(batch + READ_BYTES);
    let bytes = for_each_piece(file, "verifying", |piece| {
        if v.done() {
            return Ok(());
        }
        pending.extend_from_slice(piece);
        if pending.len() >= batch {
            let whole = pending.len() / bpc * bpc;
            v.check(&pending[..whole])?;
            pending.drain(..whole);
        }
        Ok(())
    })?;
    if !pending.is_empty() && !v.done() {
        v.check(&pending)?;
    }
    Ok(VerifyReport {
        checksum: dc,
        bytes,
        corrupt: v.corrupt,
        length_problem,
        seconds: start.elapsed().as_secs_f64(),
    })
}

fn print_verify_report(file: &Path, r: &VerifyReport) -> ExitCode {
    for e in &r.corrupt {
        println!("{}: {e}", file.display());
    }
    if let Some(p) = &r.length_problem {
        println!("{}: {p}", file.display());
    }
    if r.corrupt.is_empty() && r.length_problem.is_none() {
        println!(
            "{}: OK, {} chunks verified ({}, {} bytes per checksum, {})",
            file.display(),
            r.checksum.chunk_count(r.bytes as usize),
            r.checksum.checksum_type(),
            r.checksum.bytes_per_checksum(),
            rate(r.bytes, r.seconds),
        );
        ExitCode::SUCCESS
    } else {
        println!("{}: CORRUPT", file.display());
        ExitCode::from(1)
    }
}

fn hdfs_checksum(file: &Path, options: FileChecksumOptions) -> Result<String> {
    let mut c = FileChecksummer::new(options)?;
    for_each_piece(file, "hdfs checksum", |piece| {
        c.update(piece);
        Ok(())
    })?;
    Ok(c.finish().to_string())
}

fn rate(bytes: u64, seconds: f64) -> String {
    format!(
        "{:.2} s, {:.2} GB/s",
        seconds,
        bytes as f64 / seconds.max(1e-9) / 1e9
    )
}

fn demo(size: u64, dc: DataChecksum, dir: Option<PathBuf>) -> Result<ExitCode> {
    let temp;
    let dir = match dir {
        Some(d) => {
            std::fs::create_dir_all(&d)
                .with_context(|| format!("cannot create {}", d.display()))?;
            d
        }
        None => {
            temp = tempfile::tempdir().context("cannot create a temporary directory")?;
            temp.path().to_path_buf()
        }
    };
    let data = dir.join("demo.dat");
    let meta = default_meta_path(&data);
    println!("checksum kernel: {}", Implementation::selected().describe());
    println!(
        "available: {}",
        Implementation::available()
            .iter()
            .map(|i| i.name())
            .collect::<Vec<_>>()
            .join(", ")
    );

    let start = Instant::now();
    write_sample(&data, size)?;
    println!(
        "1. wrote {} bytes of sample data to {} ({})",
        size,
        data.display(),
        rate(size, start.elapsed().as_secs_f64())
    );

    let c = compute(&data, &meta, dc)?;
    println!(
        "2. computed {} {} checksums, {} bytes each -> {} ({})",
        c.chunks,
        dc.checksum_type(),
        dc.bytes_per_checksum(),
        meta.display(),
        rate(c.bytes, c.seconds)
    );

    let v = verify(&data, &meta, false)?;
    if !v.corrupt.is_empty() || v.length_problem.is_some() {
        print_verify_report(&data, &v);
        bail!("freshly written data failed verification");
    }
    println!("3. verified every chunk: OK ({})", rate(v.bytes, v.seconds));

    if size > 0 && dc.checksum_type() != ChecksumType::Null {
        let offset = size / 3 + 5;
        flip_bit(&data, offset, 3)?;
        let v = verify(&data, &meta, true)?;
        flip_bit(&data, offset, 3)?;
        match v.corrupt.as_slice() {
            [e] => println!("4. flipped bit 3 of byte {offset}; verification reports:\n   {e}"),
            other => bail!("a flipped bit at byte {offset} was reported as {other:?}"),
        }
        let v = verify(&data, &meta, false)?;
        if !v.corrupt.is_empty() {
            bail!("data failed verification after the bit was restored");
        }
        println!("5. restored the bit: verifies OK again");
    }

    if dc.checksum_type() != ChecksumType::Null {
        println!(
            "6. HDFS file checksums (as `hdfs dfs -checksum` prints them for a copy written with"
        );
        println!(
            "   dfs.blocksize=128m, dfs.bytes-per-checksum={}):",
            dc.bytes_per_checksum()
        );
        for mode in [CombineMode::Md5Md5Crc, CombineMode::CompositeCrc] {
            let options = FileChecksumOptions {
                bytes_per_crc: dc.bytes_per_checksum(),
                crc_type: dc.checksum_type(),
                combine_mode: mode,
                ..Default::default()
            };
            match hdfs_checksum(&data, options) {
                Ok(line) => println!("   {}\t{line}", data.display()),
                Err(e) => println!("   {}: {e:#}", mode.name()),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `size` bytes from a seeded generator: incompressible, the same on every run of this
/// build.
fn write_sample(path: &Path, size: u64) -> Result<()> {
    let f = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = BufWriter::with_capacity(READ_BYTES, f);
    let bar = progress::bytes("generating", size);
    let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(0x2545_F491_4F6C_DD1D);
    let mut buf = vec![0u8; READ_BYTES];
    let mut left = size;
    while left > 0 {
        let n = (left as usize).min(buf.len());
        rand::RngCore::fill_bytes(&mut rng, &mut buf[..n]);
        out.write_all(&buf[..n])
            .with_context(|| format!("cannot write {}", path.display()))?;
        left -= n as u64;
        bar.inc(n as u64);
    }
    bar.finish_and_clear();
    out.flush()
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

fn flip_bit(path: &Path, offset: u64, bit: u8) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {} for writing", path.display()))?;
    let mut b = [0u8; 1];
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(&mut b)?;
    b[0] ^= 1 << bit;
    f.seek(SeekFrom::Start(offset))?;
    f.write_all(&b)?;
    Ok(())
}
