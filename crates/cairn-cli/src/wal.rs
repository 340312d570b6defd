//! `cairn wal FILE...`: HBase's `hbase wal` (`WALPrettyPrinter`) for WAL files of HBase's and
//! cairn's alike (they share HBase's format): the same options (`-p` values, `-j` JSON, `-k`
//! row keys only, `-r` region, `-s` sequence id, `-t` tables, `-w` row, `-f` row prefix, `-g`
//! position) and, as text, the same lines HBase prints: `Sequence=…, table=…, region=…, at
//! write timestamp=…`, a `row=…, column=…, timestamp=…, type=…` line per cell (its tags and,
//! with `-p`, its value below), the JVM heap sizes HBase reports (`cell total size sum`, `edit
//! heap size`, computed as a 64-bit JVM with compressed references counts them) and the
//! position after the entry. Write timestamps are shown in UTC.
//!
//! Where HBase's tool stops with an `EOFException` at the end of a WAL that was never closed,
//! this one says on stderr how the file ended and goes on; a torn or damaged entry is named
//! with its file and offset, and makes the exit code 1. `-j` prints one valid JSON array per
//! file (HBase's interleaves text lines with it).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use cairn_cell::Escaped;
use cairn_wal::file::{self, FileScan, CELL_CODEC, HBASE_WRITER_CLASSES};
use cairn_wal::{names, WalEdit};
use clap::Args;
use serde_json::{json, Value};

/// `cairn wal` (HBase's `hbase wal`, `WALPrettyPrinter`).
#[derive(Args, Debug)]
pub struct WalArgs {
    /// WAL files (HBase's or cairn's: the same format), or directories of them.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print values.
    #[arg(short = 'p', long = "printvals")]
    pub printvals: bool,
    /// Output JSON.
    #[arg(short = 'j', long = "json")]
    pub json: bool,
    /// Print only row keys.
    #[arg(short = 'k', long = "outputOnlyRowKey")]
    pub only_row_key: bool,
    /// Region to filter by. Pass encoded region name; e.g. '9192caead6a5a20acb4454ffbc79fa14'.
    #[arg(short = 'r', long = "region")]
    pub region: Option<String>,
    /// Sequence to filter by. Pass sequence number.
    #[arg(short = 's', long = "sequence")]
    pub sequence: Option<u64>,
    /// Table names (comma separated) to filter by; eg: test1,test2,test3.
    #[arg(short = 't', long = "tables")]
    pub tables: Option<String>,
    /// Row to filter by. Pass row name.
    #[arg(short = 'w', long = "row")]
    pub row: Option<String>,
    /// Row prefix to filter by.
    #[arg(short = 'f', long = "rowPrefix")]
    pub row_prefix: Option<String>,
    /// Position to seek to in the file: entries starting before it are not printed.
    #[arg(short = 'g', long = "goto")]
    pub position: Option<u64>,
    /// HBase's configuration directory (as `hbase wal` reads hbase-site.xml): checked and read
    /// as every subcommand reads it [default: $HBASE_CONF_DIR].
    #[arg(long = "conf", value_name = "DIR")]
    pub conf: Option<PathBuf>,
    /// A property, as other subcommands take them: `cairn wal` reads none (the WAL's own
    /// header says how it is written), so each is warned about.
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    pub properties: Vec<String>,
}

/// A `KeyValue`'s `heapSize()` on a 64-bit JVM with compressed references: the object (32
/// bytes) and its backing array (16 bytes of header and the cell), each 8-byte aligned.
fn cell_heap_size(serialized: usize) -> u64 {
    32 + (16 + serialized as u64).div_ceil(8) * 8
}

/// `WALEdit.heapSize()`: its `ArrayList` and its cells.
const EDIT_HEAP_OVERHEAD: u64 = 40;

/// Java's `new Date(ms).toString()` in UTC: `Tue Nov 14 22:13:20 UTC 2023`.
fn java_date(ms: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} UTC {}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        year
    )
}

/// Java's `String.hashCode` of `s` (what HBase's `TableName.hashCode` is).
fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The tags of a cell as HBase lists them: `type:value` each.
fn tags(section: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 3 <= section.len() {
        let len = u16::from_be_bytes([section[at], section[at + 1]]) as usize;
        if len == 0 || at + 2 + len > section.len() {
            out.push(format!("<malformed tags: {}>", Escaped(&section[at..])));
            break;
        }
        let t = section[at + 2];
        let value = &section[at + 3..at + 2 + len];
        out.push(format!("{t}:{}", Escaped(value)));
        at += 2 + len;
    }
    out
}

/// One cell as `WALPrettyPrinter.toStringMap` has it.
fn cell_map(kv: &cairn_wal::KeyValue, values: bool) -> serde_json::Map<String, Value> {
    let c = kv.as_cell();
    let mut m = serde_json::Map::new();
    m.insert("row".into(), json!(Escaped(c.row()).to_string()));
    let type_name = c.key.cell_type().map_or_else(
        || format!("UNKNOWN({})", c.type_code()),
        |t| t.name().to_string(),
    );
    m.insert("type".into(), json!(type_name));
    m.insert("family".into(), json!(Escaped(c.family()).to_string()));
    m.insert(
        "qualifier".into(),
        json!(Escaped(c.qualifier()).to_string()),
    );
    m.insert("timestamp".into(), json!(c.timestamp().to_string()));
    m.insert("vlen".into(), json!(c.value.len()));
    m.insert(
        "total_size_sum".into(),
        json!(cell_heap_size(c.serialized_len()).to_string()),
    );
    if !c.tags.is_empty() {
        m.insert("tag".into(), json!(tags(c.tags)));
    }
    if values {
        m.insert("value".into(), json!(Escaped(c.value).to_string()));
    }
    m
}

/// `TableName` as HBase's JSON output has it (Gson of the object).
fn table_json(table: &[u8]) -> Value {
    let name = String::from_utf8_lossy(table).into_owned();
    let (ns, q) = match name.split_once(':') {
        Some((ns, q)) => (ns.to_string(), q.to_string()),
        None => ("default".to_string(), name.clone()),
    };
    json!({
        "name": table,
        "nameAsString": name,
        "namespace": ns.as_bytes(),
        "namespaceAsString": ns,
        "qualifier": q.as_bytes(),
        "qualifierAsString": q,
        "systemTable": ns == "hbase",
        "hashCode": java_string_hash(&name),
    })
}

/// What the filters keep of an entry: its cells' maps, `None` when the entry is not shown.
fn select(
    a: &WalArgs,
    e: &WalEdit,
    tables: &[String],
) -> Option<Vec<serde_json::Map<String, Value>>> {
    if a.sequence.is_some_and(|s| s != e.sequence_id) {
        return None;
    }
    if a.region.as_ref().is_some_and(|r| r.as_bytes() != e.region) {
        return None;
    }
    let table = String::from_utf8_lossy(&e.table);
    if !tables.is_empty() && !tables.iter().any(|t| *t == table) {
        return None;
    }
    let actions: Vec<_> = e
        .cells
        .iter()
        .map(|kv| cell_map(kv, a.printvals))
        .filter(|m| {
            let row = m["row"].as_str().unwrap_or_default();
            a.row.as_ref().is_none_or(|r| r == row)
                && a.row_prefix
                    .as_ref()
                    .is_none_or(|p| row.starts_with(p.as_str()))
        })
        .collect();
    // HBase shows no entry whose cells were all filtered away (nor one with none at all).
    (!actions.is_empty()).then_some(actions)
}

fn print_text(
    out: &mut impl Write,
    a: &WalArgs,
    e: &WalEdit,
    actions: &[serde_json::Map<String, Value>],
    position: u64,
) -> io::Result<()> {
    if a.only_row_key {
        for m in actions {
            writeln!(out, "row={}", m["row"].as_str().unwrap_or_default())?;
        }
        return Ok(());
    }
    writeln!(
        out,
        "Sequence={}, table={}, region={}, at write timestamp={}",
        e.sequence_id,
        String::from_utf8_lossy(&e.table),
        Escaped(&e.region),
        java_date(e.write_time_ms)
    )?;
    let s = |m: &serde_json::Map<String, Value>, k: &str| {
        m.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    for m in actions {
        writeln!(
            out,
            "row={}, column={}:{}, timestamp={}, type={}",
            s(m, "row"),
            s(m, "family"),
            s(m, "qualifier"),
            s(m, "timestamp"),
            s(m, "type")
        )?;
        if let Some(Value::Array(t)) = m.get("tag") {
            let t: Vec<&str> = t.iter().filter_map(Value::as_str).collect();
            writeln!(out, "    tag: [{}]", t.join(", "))?;
        }
        if m.contains_key("value") {
            writeln!(out, "    value: {}", s(m, "value"))?;
        }
        writeln!(out, "cell total size sum: {}", s(m, "total_size_sum"))?;
    }
    let heap: u64 = EDIT_HEAP_OVERHEAD
        + e.cells
            .iter()
            .map(|kv| cell_heap_size(kv.as_cell().serialized_len()))
            .sum::<u64>();
    writeln!(out, "edit heap size: {heap}")?;
    writeln!(out, "position: {position}")
}

/// The WAL files `p` names: itself, or the WAL files of a directory by number.
fn expand(p: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if !p.is_dir() {
        return Ok(vec![p.to_path_buf()]);
    }
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(p)
        .with_context(|| format!("listing {}", p.display()))?
        .filter_map(|e| {
            let e = e.ok()?;
            let n = names::parse_wal_file_name(e.file_name().to_str()?)?;
            Some((n.number, e.path()))
        })
        .collect();
    files.sort();
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

/// How a file ended, for stderr when it did not end in a trailer.
fn ending(path: &Path, scan: &FileScan) -> Option<String> {
    match (&scan.dropped, scan.trailer) {
        (Some(d), _) => Some(d.to_string()),
        (None, true) => None,
        (None, false) => Some(format!(
            "{}: not closed (no trailer): {} entries, the last ending at offset {}",
            path.display(),
            scan.entries,
            scan.end
        )),
    }
}

/// Runs `cairn wal`.
pub fn run(a: WalArgs) -> anyhow::Result<ExitCode> {
    // The printer reads no property: the files are still checked (a bad one is an error) and
    // an override of a final property or a -D is said, as every subcommand says them.
    crate::site::Site::load("wal", a.conf.as_deref(), &a.properties, |_| false)?;
    let tables: Vec<String> = a
        .tables
        .as_deref()
        .map(|t| {
            t.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut failed = false;
    for given in &a.files {
        for path in expand(given)? {
            if !a.json {
                // What HBase prints before each file: the writers its reader accepts, and
                // the file's cell codec.
                let codec = match file::read_header(&path) {
                    Ok(h) => h.and_then(|h| h.codec).unwrap_or_else(|| CELL_CODEC.into()),
                    Err(e) => {
                        out.flush()?;
                        eprintln!("cairn wal: {e}");
                        failed = true;
                        continue;
                    }
                };
                writeln!(out, "Writer Classes: {}", HBASE_WRITER_CLASSES.join(" "))?;
                writeln!(out, "Cell Codec Class: {codec}")?;
            }
            let mut json_entries = Vec::new();
            // An entry is printed once the next one starts (or the file ends): its position
            // is where the next one starts.
            let mut pending: Option<WalEdit> = None;
            let emit = |out: &mut io::BufWriter<io::StdoutLock>,
                        e: WalEdit,
                        end: u64,
                        json_entries: &mut Vec<Value>|
             -> io::Result<()> {
                let Some(actions) = select(&a, &e, &tables) else {
                    return Ok(());
                };
                if a.json {
                    json_entries.push(json!({
                        "sequence": e.sequence_id.to_string(),
                        "region": Escaped(&e.region).to_string(),
                        "table": table_json(&e.table),
                        "actions": actions,
                    }));
                    return Ok(());
                }
                print_text(out, &a, &e, &actions, end)
            };
            let result = file::scan_file(&path, |offset, edit| {
                if let Some(prev) = pending.take() {
                    emit(&mut out, prev, offset, &mut json_entries)
                        .map_err(cairn_wal::WalError::visitor)?;
                }
                if a.position.is_none_or(|p| offset >= p) {
                    pending = Some(edit);
                }
                Ok(())
            });
            let scan = match result {
                Ok(scan) => scan,
                Err(cairn_wal::WalError::Visitor(e)) => {
                    return Err(anyhow::anyhow!("writing the output: {e}"))
                }
                Err(e) => {
                    out.flush()?;
                    eprintln!("cairn wal: {e}");
                    failed = true;
                    continue;
                }
            };
            if let Some(last) = pending.take() {
                emit(&mut out, last, scan.end, &mut json_entries)?;
            }
            if a.json {
                serde_json::to_writer(&mut out, &Value::Array(json_entries))?;
                writeln!(out)?;
            }
            out.flush()?;
            if let Some(note) = ending(&path, &scan) {
                eprintln!("cairn wal: {note}");
            }
            failed |= scan.dropped.is_some();
        }
    }
    out.flush()?;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_print_as_javas_in_utc() {
        assert_eq!(java_date(1_700_000_000_000), "Tue Nov 14 22:13:20 UTC 2023");
        assert_eq!(java_date(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(java_date(951_782_400_000), "Tue Feb 29 00:00:00 UTC 2000");
        assert_eq!(java_date(-1000), "Wed Dec 31 23:59:59 UTC 1969");
    }

    #[test]
    fn heap_sizes_and_hashes_are_the_jvms() {
        // As HBase 2.6.1 printed them for these cells (43 and 52 serialized bytes).
        assert_eq!(cell_heap_size(43), 96);
        assert_eq!(cell_heap_size(52), 104);
        assert_eq!(java_string_hash("t2"), 3646);
        assert_eq!(java_string_hash("interop:t"), 502_904_823);
        assert_eq!(tags(&[0, 5, 8, 0, 0, 0, 2]), ["8:\\x00\\x00\\x00\\x02"]);
    }
}
