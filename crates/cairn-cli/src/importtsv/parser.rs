//! One line of input to cells, as ImportTsv's `TsvParser` and `TsvImporterMapper` read it:
//! fields split on a single separator byte, no quoting or escaping; a line that does not fit
//! the columns is a bad line with HBase's message.

use cairn_cell::LATEST_TIMESTAMP;

use super::columns::{Column, Columns};

/// HBase's longest row (`Short.MAX_VALUE`).
const MAX_ROW_LEN: usize = i16::MAX as usize;

/// Turns lines into cells.
pub struct LineParser {
    columns: Columns,
    separator: u8,
    /// `importtsv.timestamp`: the cells' timestamp when the line has none.
    default_ts: i64,
    /// `importtsv.skip.empty.columns`.
    skip_empty: bool,
    /// What cells with `LATEST_TIMESTAMP` get (HFileOutputFormat2's writer time).
    now_ms: i64,
    offsets: Vec<usize>,
}

/// One cell of a parsed line: borrowed from the line and the column spec.
pub struct LineCell<'a> {
    /// The family.
    pub family: &'a [u8],
    /// The qualifier.
    pub qualifier: &'a [u8],
    /// The value.
    pub value: &'a [u8],
}

impl LineParser {
    /// A parser for `columns`, splitting on `separator`.
    pub fn new(
        columns: Columns,
        separator: u8,
        default_ts: i64,
        skip_empty: bool,
        now_ms: i64,
    ) -> LineParser {
        LineParser {
            columns,
            separator,
            default_ts,
            skip_empty,
            now_ms,
            offsets: Vec::new(),
        }
    }

    /// Parses `line` (without its line terminator) and hands `(row, ts, cells)` to `emit`;
    /// a bad line gives HBase's message instead.
    pub fn parse<'l, R>(
        &mut self,
        line: &'l [u8],
        emit: impl FnOnce(&'l [u8], i64, &mut dyn Iterator<Item = LineCell<'_>>) -> R,
    ) -> Result<R, String> {
        // Field i spans offsets[i-1]+1 .. offsets[i] (the first from 0).
        self.offsets.clear();
        self.offsets.extend(
            line.iter()
                .enumerate()
                .filter(|(_, b)| **b == self.separator)
                .map(|(i, _)| i),
        );
        if self.offsets.is_empty() {
            return Err("No delimiter".into());
        }
        self.offsets.push(line.len());
        let n = self.offsets.len();
        let c = &self.columns;
        if n > c.fields.len() {
            return Err("Excessive columns".into());
        }
        if n <= c.row_key {
            return Err("No row key".into());
        }
        if c.timestamp.is_some_and(|t| n <= t) {
            return Err("No timestamp".into());
        }
        if c.attributes.is_some_and(|a| n <= a) {
            return Err("No attributes specified".into());
        }
        let offsets = &self.offsets;
        let field = |i: usize| {
            let start = if i == 0 { 0 } else { offsets[i - 1] + 1 };
            &line[start..offsets[i]]
        };
        let row = field(c.row_key);
        // What HBase's Put refuses (an IllegalArgumentException, counted as a bad line).
        if row.is_empty() {
            return Err("Row length is 0".into());
        }
        if row.len() > MAX_ROW_LEN {
            return Err(format!("Row length {} is > {MAX_ROW_LEN}", row.len()));
        }
        let mut ts = match c.timestamp {
            None => self.default_ts,
            Some(t) => {
                let s = String::from_utf8_lossy(field(t));
                parse_java_long(&s).ok_or_else(|| format!("Invalid timestamp {s}"))?
            }
        };
        if ts == LATEST_TIMESTAMP {
            ts = self.now_ms;
        }
        let skip_empty = self.skip_empty;
        let mut cells = c.fields[..n]
            .iter()
            .enumerate()
            .filter_map(|(i, col)| match col {
                Column::Cell { family, qualifier } => {
                    let value = field(i);
                    (!(skip_empty && value.is_empty())).then_some(LineCell {
                        family,
                        qualifier,
                        value,
                    })
                }
                _ => None,
            });
        Ok(emit(row, ts, &mut cells))
    }
}

/// Java's `Long.parseLong`: an optional sign and ASCII digits, nothing else, in range.
pub fn parse_java_long(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    type Parsed = (Vec<u8>, i64, Vec<(String, Vec<u8>)>);

    fn parse(spec: &str, skip_empty: bool, line: &[u8]) -> Result<Parsed, String> {
        let mut p = LineParser::new(
            Columns::parse(Some(spec)).unwrap(),
            b'\t',
            77,
            skip_empty,
            999,
        );
        p.parse(line, |row, ts, cells| {
            let cells = cells
                .map(|c| {
                    (
                        format!(
                            "{}:{}",
                            String::from_utf8_lossy(c.family),
                            String::from_utf8_lossy(c.qualifier)
                        ),
                        c.value.to_vec(),
                    )
                })
                .collect();
            (row.to_vec(), ts, cells)
        })
    }

    #[test]
    fn splits_fields_and_maps_them_to_cells() {
        let (row, ts, cells) = parse("HBASE_ROW_KEY,f:a,g", false, b"r1\tv\t").unwrap();
        assert_eq!((row.as_slice(), ts), (&b"r1"[..], 77));
        assert_eq!(
            cells,
            [
                ("f:a".to_string(), b"v".to_vec()),
                ("g:".to_string(), vec![])
            ]
        );
        // Fewer fields than columns is fine; empty fields are skipped when asked.
        let (_, _, cells) = parse("HBASE_ROW_KEY,f:a,g", true, b"r1\t\t").unwrap();
        assert!(cells.is_empty());
        let (_, _, cells) = parse("f:a,HBASE_ROW_KEY,g", false, b"v\tr").unwrap();
        assert_eq!(cells.len(), 1);
    }

    #[test]
    fn timestamps_come_from_their_field() {
        let spec = "HBASE_ROW_KEY,HBASE_TS_KEY,f:a";
        assert_eq!(parse(spec, false, b"r\t-5\tv").unwrap().1, -5);
        assert_eq!(parse(spec, false, b"r\t+12\tv").unwrap().1, 12);
        // LATEST_TIMESTAMP becomes the writer's time, as HFileOutputFormat2 does.
        let latest = i64::MAX.to_string();
        let line = format!("r\t{latest}\tv");
        assert_eq!(parse(spec, false, line.as_bytes()).unwrap().1, 999);
        assert_eq!(
            parse(spec, false, b"r\t12x\tv").unwrap_err(),
            "Invalid timestamp 12x"
        );
        assert_eq!(
            parse(spec, false, b"r\t\tv").unwrap_err(),
            "Invalid timestamp "
        );
        assert_eq!(
            parse(spec, false, b"r\t99999999999999999999\tv").unwrap_err(),
            "Invalid timestamp 99999999999999999999"
        );
    }

    #[test]
    fn bad_lines_get_hbase_messages() {
        let err = |spec: &str, line: &[u8]| parse(spec, false, line).unwrap_err();
        assert_eq!(err("HBASE_ROW_KEY,f:a", b"no-separator"), "No delimiter");
        assert_eq!(err("HBASE_ROW_KEY,f:a", b""), "No delimiter");
        assert_eq!(
            err("HBASE_ROW_KEY,f:a", b"r\tv\textra"),
            "Excessive columns"
        );
        assert_eq!(err("f:a,f:b,HBASE_ROW_KEY", b"v\tw"), "No row key");
        assert_eq!(
            err("HBASE_ROW_KEY,f:a,HBASE_TS_KEY", b"r\tv"),
            "No timestamp"
        );
        assert_eq!(err("HBASE_ROW_KEY,f:a", b"\tv"), "Row length is 0");
        let long = [b'x'; 40000];
        let mut line = long.to_vec();
        line.extend_from_slice(b"\tv");
        assert_eq!(
            err("HBASE_ROW_KEY,f:a", &line),
            "Row length 40000 is > 32767"
        );
    }
}
