//! The properties importtsv reads (`-D NAME=VALUE`, or HBase's configuration directory), with
//! ImportTsv's names and defaults.

use anyhow::{bail, Result};
use cairn_hfile::encoding::DataBlockEncoding;
use cairn_hfile::Compression;

use super::columns::Columns;
use super::parser::parse_java_long;
use crate::site::Property;

/// `hbase.hregion.max.filesize`: HFileOutputFormat2 rolls a file past this at a row boundary.
const DEFAULT_MAX_FILE_SIZE: u64 = 10 * 1024 * 1024 * 1024;

/// Bad lines printed as they are found; the rest are only counted.
pub const BAD_LINES_SHOWN: usize = 10;

/// Everything the properties say.
#[derive(Debug)]
pub struct Options {
    /// `importtsv.columns`.
    pub columns: Columns,
    /// `importtsv.separator` (one byte; tab).
    pub separator: u8,
    /// `importtsv.bulk.output`.
    pub bulk_output: String,
    /// `importtsv.timestamp` (default: now, in ms).
    pub timestamp: i64,
    /// `importtsv.skip.bad.lines` (true).
    pub skip_bad_lines: bool,
    /// `importtsv.log.bad.lines` (false): print bad lines themselves too.
    pub log_bad_lines: bool,
    /// `importtsv.skip.empty.columns` (false).
    pub skip_empty_columns: bool,
    /// `no.strict` (false): families the table lacks are written with default settings
    /// instead of refused.
    pub no_strict: bool,
    /// `importtsv.dry.run` (false): every line parsed, sorted and counted, nothing written
    /// (ImportTsv's NullOutputFormat); `importtsv.bulk.output` may then be left out.
    pub dry_run: bool,
    /// `hbase.mapreduce.hfileoutputformat.compression`: overrides every family's.
    pub compression: Option<Compression>,
    /// `hbase.mapreduce.hfileoutputformat.datablock.encoding`: overrides every family's.
    pub encoding: Option<DataBlockEncoding>,
    /// `hbase.hregion.max.filesize`.
    pub max_file_size: u64,
}

/// Every name [`Options::parse`] reads.
pub const KNOWN: &[&str] = &[
    "importtsv.columns",
    "importtsv.separator",
    "importtsv.bulk.output",
    "importtsv.timestamp",
    "importtsv.skip.bad.lines",
    "importtsv.log.bad.lines",
    "importtsv.skip.empty.columns",
    "no.strict",
    "importtsv.dry.run",
    "importtsv.mapper.class",
    "hbase.mapreduce.hfileoutputformat.compression",
    "hbase.mapreduce.hfileoutputformat.datablock.encoding",
    "hbase.hregion.max.filesize",
];

/// Whether importtsv reads `name`.
pub fn reads(name: &str) -> bool {
    KNOWN.contains(&name)
}

/// Hadoop's `Configuration.getBoolean` spellings.
fn boolean(p: &Property) -> Result<bool> {
    match p.value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => bail!("{}: expected true or false", p.origin()),
    }
}

impl Options {
    /// Reads the properties (names it does not read are skipped); `now_ms` is the default
    /// timestamp. Errors are usage errors.
    pub fn parse(properties: &[Property], now_ms: i64) -> Result<Options> {
        let mut columns = None;
        let mut o = Options {
            columns: Columns {
                fields: Vec::new(),
                row_key: 0,
                timestamp: None,
                attributes: None,
            },
            separator: b'\t',
            bulk_output: String::new(),
            timestamp: now_ms,
            skip_bad_lines: true,
            log_bad_lines: false,
            skip_empty_columns: false,
            no_strict: false,
            dry_run: false,
            compression: None,
            encoding: None,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
        };
        let mut bulk_output = None;
        for p in properties {
            let (k, v) = (p.name.as_str(), p.value.as_str());
            let origin = p.origin();
            match k {
                "importtsv.columns" => columns = Some(v.to_string()),
                "importtsv.separator" => {
                    let [b] = v.as_bytes() else {
                        bail!("TsvParser only supports single-byte separators");
                    };
                    o.separator = *b;
                }
                "importtsv.bulk.output" => bulk_output = Some(v.to_string()),
                "importtsv.timestamp" => {
                    o.timestamp = parse_java_long(v.trim())
                        .ok_or_else(|| anyhow::anyhow!("{origin}: not a timestamp in ms"))?
                }
                "importtsv.skip.bad.lines" => o.skip_bad_lines = boolean(p)?,
                "importtsv.log.bad.lines" => o.log_bad_lines = boolean(p)?,
                "importtsv.skip.empty.columns" => o.skip_empty_columns = boolean(p)?,
                "no.strict" => o.no_strict = boolean(p)?,
                "importtsv.dry.run" => o.dry_run = boolean(p)?,
                "importtsv.mapper.class" => {
                    bail!("{origin}: importtsv.mapper.class is not supported by cairn importtsv")
                }
                "hbase.mapreduce.hfileoutputformat.compression" => {
                    o.compression = Some(
                        v.trim()
                            .parse()
                            .map_err(|_| anyhow::anyhow!("{origin}: unknown compression"))?,
                    )
                }
                "hbase.mapreduce.hfileoutputformat.datablock.encoding" => {
                    o.encoding = Some(
                        DataBlockEncoding::from_name(v.trim().to_ascii_uppercase().as_bytes())
                            .ok_or_else(|| anyhow::anyhow!("{origin}: unknown encoding"))?,
                    )
                }
                "hbase.hregion.max.filesize" => {
                    o.max_file_size = v
                        .trim()
                        .parse()
                        .map_err(|_| anyhow::anyhow!("{origin}: not a size in bytes"))?
                }
                _ => {}
            }
        }
        o.columns = Columns::parse(columns.as_deref()).map_err(anyhow::Error::msg)?;
        let bulk_output = bulk_output.filter(|s| !s.is_empty());
        if o.dry_run {
            o.bulk_output = bulk_output.unwrap_or_default();
            return Ok(o);
        }
        let Some(out) = bulk_output else {
            bail!(
                "cairn importtsv only writes HFiles: set -Dimporttsv.bulk.output=DIR, then load \
                 them with completebulkload (direct puts into a table are not supported)"
            );
        };
        o.bulk_output = out;
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(props: &[&str]) -> Result<Options> {
        let mut all = Vec::new();
        for d in props {
            let (name, value) = crate::define::split(d)?;
            all.push(Property {
                name: name.into(),
                value: value.into(),
                source: "-D".into(),
            });
        }
        Options::parse(&all, 42)
    }

    /// Every listed name is read: a value it cannot take is refused, naming it.
    #[test]
    fn every_listed_name_is_read() {
        let base = [
            "importtsv.columns=HBASE_ROW_KEY,f:a",
            "importtsv.bulk.output=/o",
        ];
        for name in KNOWN
            .iter()
            .filter(|n| !base.iter().any(|b| b.starts_with(*n)))
        {
            // Not a boolean, a byte, a number, a codec or an encoding.
            let bad = format!("{name}=\u{1}\u{1}");
            assert!(parse(&[base[0], base[1], &bad]).is_err(), "{name}");
        }
        // The two in `base` are required.
        assert!(parse(&[base[0]]).is_err());
        assert!(parse(&[base[1]]).is_err());
        assert!(!reads("importtsv.column"));
    }

    #[test]
    fn defaults_and_overrides() {
        let o = parse(&[
            "importtsv.columns=HBASE_ROW_KEY,f:a",
            "importtsv.bulk.output=/o",
        ])
        .unwrap();
        assert_eq!(
            (
                o.separator,
                o.timestamp,
                o.skip_bad_lines,
                o.skip_empty_columns
            ),
            (b'\t', 42, true, false)
        );
        let o = parse(&[
            "importtsv.columns=HBASE_ROW_KEY,f:a",
            "importtsv.bulk.output=/o",
            "importtsv.separator=,",
            "importtsv.timestamp=7",
            "importtsv.skip.bad.lines=false",
            "importtsv.skip.empty.columns=TRUE",
            "mapreduce.job.name=x",
        ])
        .unwrap();
        assert_eq!(o.max_file_size, DEFAULT_MAX_FILE_SIZE);
        assert_eq!(
            (
                o.separator,
                o.timestamp,
                o.skip_bad_lines,
                o.skip_empty_columns
            ),
            (b',', 7, false, true)
        );
    }

    #[test]
    fn refusals() {
        let e = |p: &[&str]| parse(p).unwrap_err().to_string();
        assert!(e(&["importtsv.bulk.output=/o"]).starts_with("No columns specified"));
        assert!(e(&["importtsv.columns=HBASE_ROW_KEY,f"]).contains("importtsv.bulk.output"));
        assert_eq!(
            e(&[
                "importtsv.columns=HBASE_ROW_KEY,f",
                "importtsv.bulk.output=/o",
                "importtsv.separator=ab"
            ]),
            "TsvParser only supports single-byte separators"
        );
        assert!(
            e(&["importtsv.columns=HBASE_ROW_KEY,f", "importtsv.separator=é"])
                .contains("single-byte")
        );
        assert!(e(&["nonsense"]).contains("NAME=VALUE"));
    }

    #[test]
    fn a_dry_run_needs_no_output_directory() {
        let o = parse(&[
            "importtsv.columns=HBASE_ROW_KEY,f",
            "importtsv.dry.run=true",
        ])
        .unwrap();
        assert!(o.dry_run);
        assert!(o.bulk_output.is_empty());
        let o = parse(&[
            "importtsv.columns=HBASE_ROW_KEY,f",
            "importtsv.bulk.output=/o",
            "importtsv.dry.run=false",
        ])
        .unwrap();
        assert!(!o.dry_run);
        assert!(parse(&[
            "importtsv.columns=HBASE_ROW_KEY,f",
            "importtsv.dry.run=maybe"
        ])
        .is_err());
    }
}
