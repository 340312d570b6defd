//! # cairn (the command line)
//!
//! The `cairn` binary: one subcommand per tool HBase users know, taking HBase's own spellings
//! of their options. It owns argument parsing, output and exit codes; the work itself lives in
//! the library crates (`cairn-bench` for `pe` and `ycsb`).
//!
//! Exit codes: 0 success, 1 corruption found or an operation failed, 2 bad usage.

mod checksum;
mod compact;
mod completebulkload;
mod completions;
mod define;
mod hbase_args;
mod hfile;
mod importtsv;
mod log_control;
mod pe;
mod regions;
mod regionserver;
mod serve;
mod site;
mod wal;
mod ycsb;

use std::process::ExitCode;

// glibc's malloc makes writers wait tens of milliseconds while a flush frees a memstore of
// millions of cells from another thread; mimalloc frees across threads without that.
/// `mi_option_purge_delay` in mimalloc v3's `mi_option_e` (libmimalloc-sys does not name it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

/// The optional features of this build, as `--version` names them.
#[cfg(feature = "hdfs")]
macro_rules! features {
    () => {
        "hdfs"
    };
}
#[cfg(not(feature = "hdfs"))]
macro_rules! features {
    () => {
        "none"
    };
}

/// The optional features of this build, for `cairn_build_info`.
pub(crate) const FEATURES: &str = features!();

/// What `cairn --version` says: the release, the commit it was built from (build.rs) and the
/// optional features built in, so a bug report names exactly the binary.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("CAIRN_COMMIT"),
    "; features: ",
    features!(),
    ")"
);

/// cairn: an HBase-compatible storage engine.
#[derive(Parser)]
#[command(name = "cairn", version = VERSION, about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Chunked checksums of files: compute, verify, HDFS-compatible file checksums, demo.
    #[command(subcommand)]
    Checksum(checksum::ChecksumCommand),
    /// Inspect and verify HFiles (HBase's `hbase hfile`): -v verbose (and verify), -k row order,
    /// -m meta, -p print cells, -e print keys, -s stats, -b block index, -h block headers.
    Hfile(hfile::HFileArgs),
    /// Offline compaction of a table, region or family directory (HBase's CompactionTool:
    /// -major, -compactOnce, -D hbase.compactiontool.delete=…).
    Compact(compact::CompactArgs),
    /// HBase's BulkLoadHFilesTool (`hbase completebulkload`) on an embedded store:
    /// `cairn completebulkload [-D k=v]... --data ROOT DIR TABLE` loads `DIR/<family>/<hfile>`
    /// into the table's regions at once, splitting files that span region boundaries.
    #[command(name = "completebulkload")]
    CompleteBulkLoad(completebulkload::CompleteBulkLoadArgs),
    /// HBase's PerformanceEvaluation (`hbase pe`) on an embedded store: `cairn pe [options]
    /// <command> <nclients>`, e.g. `cairn pe --rows=100000 randomRead 2`.
    Pe(Box<pe::PeArgs>),
    /// YCSB's core workloads (A-F) on an embedded store, printing YCSB's output:
    /// `cairn ycsb load|run|all -P workloada [-p name=value]... [-threads N] [-target N] [-s]`.
    Ycsb(ycsb::YcsbArgs),
    /// A region server on an embedded store: HBase's native RPC (HBase's Java client, shell and
    /// tools), Thrift1 (happybase), and /metrics, /jmx and /health over HTTP:
    /// `cairn serve [--data DIR] [-p PORT]`.
    Serve(serve::ServeArgs),
    /// A region server of an HBase cluster (HBase's `hbase regionserver start`): joins the
    /// master found through hbase.zookeeper.quorum and holds the regions it assigns:
    /// `cairn regionserver start --conf DIR [-D name=value]...`.
    Regionserver(regionserver::RegionServerArgs),
    /// The regions of an embedded store's tables (the shell's `list_regions`):
    /// `cairn regions --data DIR [TABLE]`.
    Regions(regions::RegionsArgs),
    /// Splits a table's regions or one region of an embedded store (the shell's `split`):
    /// `cairn split --data DIR TABLE|REGION [SPLIT_ROW]`.
    Split(regions::SplitArgs),
    /// Merges two adjacent regions of an embedded store (the shell's `merge_region`):
    /// `cairn merge --data DIR REGION REGION`.
    Merge(regions::MergeArgs),
    /// Print WAL files, HBase's or cairn's (HBase's `hbase wal` / WALPrettyPrinter): `cairn wal
    /// [-p] [-j] [-k] [-r REGION] [-s SEQ] [-t TABLES] [-w ROW] [-f PREFIX] [-g POS] FILE...`.
    Wal(wal::WalArgs),
    /// HBase's ImportTsv with bulk output, without MapReduce: TSV lines to HFiles split at the
    /// table's region boundaries, for completebulkload: `cairn importtsv
    /// -Dimporttsv.columns=HBASE_ROW_KEY,f:a -Dimporttsv.bulk.output=DIR TABLE INPUT`.
    Importtsv(importtsv::ImportTsvArgs),
    /// Shell completions for bash, zsh, fish, elvish or PowerShell on stdout:
    /// `cairn completions bash > /etc/bash_completion.d/cairn`.
    Completions(completions::CompletionsArgs),
    /// Man pages (roff), one for cairn and one per subcommand: `cairn man --out DIR`.
    Man(completions::ManArgs),
}

/// Log lines (the libraries' `tracing` events, and `log` records of dependencies such as
/// hdfs-native, bridged) go to stderr with timestamps and levels, filtered by `RUST_LOG`
/// (`RUST_LOG=debug`, `RUST_LOG=cairn_fs=debug,info`); the default shows info and above.
/// The filter can be changed while running (`cairn serve`'s `/logLevel`) through the
/// returned control.
fn init_logging() -> log_control::LogControl {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,hdfs_native=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour only for a person at a terminal: a log file or a pipe gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter_reloading();
    let control = log_control::LogControl::new(builder.reload_handle());
    let _ = builder.try_init();
    control
}

/// How long memory the allocator finds free is kept before it goes back to the system.
const PURGE_DELAY_MS: std::ffi::c_long = 1000;

fn main() -> ExitCode {
    // 2 MiB pages for the allocator's memory: a fresh 128 MiB memstore otherwise takes a page
    // fault (and a zeroed 4 KiB page) every few puts. Memory freed (a flushed memstore, a
    // finished compaction's buffers, a thread's heap) is given back after a second unless it
    // is reused by then: the next memstore reuses a flushed one's memory at once, while memory
    // kept for good made the soak's resident set grow past the cache and memstore bounds
    // (bench/results/2026-11-26-soak-*). mimalloc's own MIMALLOC_LARGE_OS_PAGES and
    // MIMALLOC_PURGE_DELAY variables, when set, win.
    // SAFETY: sets process-wide allocator options; no pointers are involved.
    unsafe {
        if std::env::var_os("MIMALLOC_LARGE_OS_PAGES").is_none() {
            libmimalloc_sys::mi_option_set_enabled(libmimalloc_sys::mi_option_large_os_pages, true);
        }
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS);
        }
    };
    let log_control = init_logging();
    let cli = Cli::parse_from(hbase_args::long_forms(std::env::args_os()));
    let result = match cli.command {
        Command::Checksum(c) => checksum::run(c),
        Command::Hfile(a) => hfile::run(a),
        Command::Compact(a) => compact::run(a),
        Command::CompleteBulkLoad(a) => completebulkload::run(a),
        Command::Pe(a) => pe::run(*a),
        Command::Ycsb(a) => ycsb::run(a),
        Command::Serve(a) => serve::run(a, log_control),
        Command::Regionserver(a) => regionserver::run(a, log_control),
        Command::Regions(a) => regions::run_regions(a),
        Command::Split(a) => regions::run_split(a),
        Command::Merge(a) => regions::run_merge(a),
        Command::Completions(a) => completions::run_completions(a),
        Command::Man(a) => completions::run_man(a),
        Command::Importtsv(a) => importtsv::run(a),
        Command::Wal(a) => wal::run(a),
    };
    match result {
        Ok(code) => code,
        // The reader of our output went away (`cairn hfile -p | head`): not an error.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cairn: error: {}", report(&e));
            ExitCode::from(1)
        }
    }
}

/// `e` and its causes, each said once: a cause whose text its parent's message already
/// includes (cairn's errors name their cause in their own message) is not repeated.
pub(crate) fn report(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// Reports bad usage found after clap's parsing (an option value a tool refuses) as clap
/// reports its own: on stderr, exit code 2.
pub(crate) fn usage_error(tool: &str, e: &anyhow::Error) -> ExitCode {
    eprintln!("cairn {tool}: error: {}", report(e));
    ExitCode::from(2)
}

/// True when `e` comes from writing to a closed pipe.
pub(crate) fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_already_in_its_parents_message_is_said_once() {
        let io = cairn_region::RegionError::Io {
            path: "/d/WALs/wal.1.tmp".into(),
            source: std::io::Error::from_raw_os_error(28),
        };
        let e = anyhow::Error::new(io).context("opening /d");
        let text = report(&e);
        assert_eq!(text.matches("No space left on device").count(), 1, "{text}");
        assert!(
            text.starts_with("opening /d: /d/WALs/wal.1.tmp: No space"),
            "{text}"
        );
        // A cause the parent does not name is still said.
        let e = anyhow::Error::new(std::io::Error::other("disk on fire")).context("flushing");
        assert_eq!(report(&e), "flushing: disk on fire");
    }
}
