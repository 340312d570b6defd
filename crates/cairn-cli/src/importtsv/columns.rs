//! `importtsv.columns`: what each field of a line is, with ImportTsv's checks and messages.

use std::collections::BTreeSet;

/// The row key field (`TsvParser.ROWKEY_COLUMN_SPEC`).
pub const ROW_KEY: &str = "HBASE_ROW_KEY";
/// The timestamp field (`TsvParser.TIMESTAMPKEY_COLUMN_SPEC`).
pub const TS_KEY: &str = "HBASE_TS_KEY";
/// The Put attributes field: required on a line when configured, not written to HFiles.
pub const ATTRIBUTES_KEY: &str = "HBASE_ATTRIBUTES_KEY";
/// Fields cairn refuses rather than silently drop: they become cell tags in HBase.
const UNSUPPORTED: &[&str] = &["HBASE_CELL_VISIBILITY", "HBASE_CELL_TTL"];

/// What one field of a line holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Column {
    /// The row key.
    RowKey,
    /// The cells' timestamp (ms), instead of `importtsv.timestamp`.
    Timestamp,
    /// Put attributes (`k=>v,...`): checked for presence only.
    Attributes,
    /// A cell's value for this family and qualifier (empty for a bare family).
    Cell {
        /// Family name bytes.
        family: Vec<u8>,
        /// Qualifier bytes.
        qualifier: Vec<u8>,
    },
}

/// The parsed `importtsv.columns`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Columns {
    /// One entry per field, in line order.
    pub fields: Vec<Column>,
    /// Index of the row key field.
    pub row_key: usize,
    /// Index of the timestamp field, if any.
    pub timestamp: Option<usize>,
    /// Index of the attributes field, if any.
    pub attributes: Option<usize>,
}

impl Columns {
    /// Parses the comma-separated spec (entries trimmed), with ImportTsv's messages for a
    /// spec it refuses.
    pub fn parse(spec: Option<&str>) -> Result<Columns, String> {
        let Some(spec) = spec else {
            return Err("No columns specified. Please specify with -Dimporttsv.columns=...".into());
        };
        let names: Vec<&str> = spec.split(',').map(str::trim).collect();
        let count = |s: &str| names.iter().filter(|n| **n == s).count();
        let (rows, stamps, attrs) = (count(ROW_KEY), count(TS_KEY), count(ATTRIBUTES_KEY));
        if rows != 1 {
            return Err(format!("Must specify exactly one column as {ROW_KEY}"));
        }
        if stamps > 1 {
            return Err(format!("Must specify at most one column as {TS_KEY}"));
        }
        if attrs > 1 {
            return Err(format!(
                "Must specify at most one column as {ATTRIBUTES_KEY}"
            ));
        }
        if names.len() - (rows + stamps + attrs) < 1 {
            return Err(
                "One or more columns in addition to the row key and timestamp(optional) are required"
                    .into(),
            );
        }
        let mut fields = Vec::with_capacity(names.len());
        let (mut row_key, mut timestamp, mut attributes) = (0, None, None);
        for (i, name) in names.iter().enumerate() {
            fields.push(match *name {
                ROW_KEY => {
                    row_key = i;
                    Column::RowKey
                }
                TS_KEY => {
                    timestamp = Some(i);
                    Column::Timestamp
                }
                ATTRIBUTES_KEY => {
                    attributes = Some(i);
                    Column::Attributes
                }
                n if UNSUPPORTED.contains(&n) => {
                    return Err(format!(
                        "{n} is not supported by cairn importtsv (HBase turns it into cell tags)"
                    ))
                }
                n => {
                    let (family, qualifier) = n.split_once(':').unwrap_or((n, ""));
                    check_family(family)?;
                    Column::Cell {
                        family: family.as_bytes().to_vec(),
                        qualifier: qualifier.as_bytes().to_vec(),
                    }
                }
            });
        }
        Ok(Columns {
            fields,
            row_key,
            timestamp,
            attributes,
        })
    }

    /// The distinct families the spec writes, sorted.
    pub fn families(&self) -> BTreeSet<Vec<u8>> {
        self.fields
            .iter()
            .filter_map(|c| match c {
                Column::Cell { family, .. } => Some(family.clone()),
                _ => None,
            })
            .collect()
    }
}

/// HBase's family name rules ([`cairn_region::names::check_family`]): the name becomes a
/// directory of the output.
fn check_family(f: &str) -> Result<(), String> {
    cairn_region::names::check_family(f.as_bytes()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specials_families_and_qualifiers() {
        let c = Columns::parse(Some("a:x, HBASE_ROW_KEY ,b,HBASE_TS_KEY,a:y:z")).unwrap();
        assert_eq!(c.row_key, 1);
        assert_eq!(c.timestamp, Some(3));
        assert_eq!(
            c.fields[2],
            Column::Cell {
                family: b"b".to_vec(),
                qualifier: vec![]
            }
        );
        // Split on the first ':' only.
        assert_eq!(
            c.fields[4],
            Column::Cell {
                family: b"a".to_vec(),
                qualifier: b"y:z".to_vec()
            }
        );
        assert_eq!(c.families().len(), 2);
    }

    #[test]
    fn refuses_with_importtsv_messages() {
        let err = |s: Option<&str>| Columns::parse(s).unwrap_err();
        assert!(err(None).starts_with("No columns specified"));
        assert_eq!(
            err(Some("a:b")),
            "Must specify exactly one column as HBASE_ROW_KEY"
        );
        assert_eq!(
            err(Some("HBASE_ROW_KEY,HBASE_ROW_KEY,a")),
            "Must specify exactly one column as HBASE_ROW_KEY"
        );
        assert_eq!(
            err(Some("HBASE_ROW_KEY,HBASE_TS_KEY,HBASE_TS_KEY,a")),
            "Must specify at most one column as HBASE_TS_KEY"
        );
        assert!(err(Some("HBASE_ROW_KEY,HBASE_TS_KEY")).starts_with("One or more columns"));
        assert!(err(Some("HBASE_ROW_KEY,HBASE_CELL_TTL,a")).contains("not supported"));
        assert!(err(Some("HBASE_ROW_KEY,:q")).contains("can not be empty"));
        // Names that would leave the output directory, as HBase refuses them.
        assert!(err(Some("HBASE_ROW_KEY,../x:q")).contains("cannot start with a period"));
        assert!(err(Some("HBASE_ROW_KEY,a/b:q")).starts_with("Illegal character <47>"));
        assert!(err(Some("HBASE_ROW_KEY,a\\b")).starts_with("Illegal character <92>"));
        assert!(err(Some("HBASE_ROW_KEY,recovered.edits")).contains("recovered.edits"));
    }
}
