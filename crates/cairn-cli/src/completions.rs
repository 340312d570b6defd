//! `cairn completions SHELL` and `cairn man --out DIR`: what a package ships beside the binary,
//! generated from the same argument definitions the binary parses (clap's companion crates),
//! so they cannot drift from it.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::CommandFactory;

use crate::Cli;

/// Arguments of `cairn completions`.
#[derive(clap::Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Arguments of `cairn man`.
#[derive(clap::Args)]
pub(crate) struct ManArgs {
    /// Directory to write `cairn.1` and `cairn-<subcommand>.1` into (created if missing).
    #[arg(long)]
    out: PathBuf,
}

pub(crate) fn run_completions(a: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = Cli::command();
    clap_complete::generate(a.shell, &mut cmd, "cairn", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run_man(a: ManArgs) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    // One page per subcommand (`cairn-serve.1`, as git names its pages), and `cairn.1`.
    clap_mangen::generate_to(Cli::command(), &a.out)
        .with_context(|| format!("writing man pages into {}", a.out.display()))?;
    Ok(ExitCode::SUCCESS)
}
