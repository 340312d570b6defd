// Shared by several test files, each using a part of it.
#![allow(dead_code)]
//! The Python with happybase that tests drive: the project's venv (`target/venv`, which
//! scripts/test.sh makes) or `$CAIRN_PYTHON`. Without it a test skips, unless
//! `CAIRN_REQUIRE_TLS_CLIENTS=1` (set by scripts/test.sh) makes that a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The python, or `None` (skip) when there is none with happybase.
pub fn happybase_python() -> Option<PathBuf> {
    let p = std::env::var_os("CAIRN_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/venv/bin/python")
        });
    let ok = Command::new(&p)
        .args(["-c", "import happybase, thriftpy2"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CAIRN_REQUIRE_TLS_CLIENTS").is_none(),
            "no python with happybase at {} (set CAIRN_PYTHON)",
            p.display()
        );
        eprintln!("skipped: no python with happybase at {}", p.display());
        return None;
    }
    Some(p)
}
