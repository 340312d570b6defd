//! Records the commit the binary is built from, for `cairn --version`.
//!
//! Outside a git checkout (a source tarball) the commit is "unknown". Cargo is told to run
//! this again when HEAD or the branch it names moves, so a new commit is never reported as
//! the old one.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=CAIRN_COMMIT={commit}");
    // The files that change when HEAD moves: HEAD itself, the ref it names and packed-refs
    // (worktrees keep HEAD in their own git dir, refs in the common one).
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]).map(PathBuf::from) {
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
    }
    if let Some(common) =
        git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]).map(PathBuf::from)
    {
        println!(
            "cargo:rerun-if-changed={}",
            common.join("packed-refs").display()
        );
        if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={}", common.join(head_ref).display());
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
