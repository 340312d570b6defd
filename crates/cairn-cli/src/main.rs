//! # cairn (the command line)
//!
//! The `cairn` binary: one subcommand per tool HBase users know. It owns argument parsing,
//! progress display and exit codes; the work itself lives in the library crates.
//!
//! Exit codes: 0 success, 1 corruption found or an operation failed, 2 bad usage.

mod checksum;
mod progress;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// cairn: an HBase-compatible storage engine.
#[derive(Parser)]
#[command(name = "cairn", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Chunked checksums of files: compute, verify, HDFS-compatible file checksums, demo.
    #[command(subcommand)]
    Checksum(checksum::ChecksumCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Checksum(c) => checksum::run(c),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cairn: error: {e:#}");
            ExitCode::from(1)
        }
    }
}
