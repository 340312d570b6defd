//! Sizes in binary units, both ways: the one parser every size option of the `cairn` tools
//! goes through, and the form reports print.

use anyhow::{Context, Result};

/// A size option's value in bytes: a plain number of bytes, or a number with a binary unit
/// (`1K` = `1KiB` = `1KB` = 1024, `512m`, `1.5GiB`), as Hadoop's and HBase's size settings
/// read them. Every size option of the `cairn` tools is read by this function.
pub fn parse_bytes(s: &str) -> std::result::Result<u64, String> {
    parse_size::Config::new()
        .with_binary()
        .parse_size(s.trim())
        .map_err(|e| format!("{s:?} is not a size ({e}); try 4096, 64K, 512MiB or 1GiB"))
}

/// [`parse_bytes`], with `what` (the option, `--blockCacheSize`) named in the error.
pub fn parse_size(what: &str, s: &str) -> Result<u64> {
    parse_bytes(s)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("{what}={s}"))
}

/// Bytes in binary units for reports (`1.5 MiB`).
pub fn human(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary() {
        assert_eq!(parse_size("x", "4096").unwrap(), 4096);
        assert_eq!(parse_size("x", "1K").unwrap(), 1024);
        assert_eq!(parse_size("x", "1KB").unwrap(), 1024);
        assert_eq!(parse_size("x", "64k").unwrap(), 64 << 10);
        assert_eq!(parse_size("x", "512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_size("x", "128m").unwrap(), 128 << 20);
        assert_eq!(parse_size("x", "1GB").unwrap(), 1 << 30);
        assert_eq!(parse_size("x", "1.5GiB").unwrap(), 3 << 29);
        let e = parse_size("--blockCacheSize", "lots").unwrap_err();
        assert!(format!("{e:#}").starts_with("--blockCacheSize=lots: \"lots\" is not a size"));
    }

    #[test]
    fn reports_read_in_binary_units() {
        assert_eq!(human(10), "10 B");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(3 << 30), "3.0 GiB");
    }
}
