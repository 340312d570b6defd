//! The region server's status page (HBase's `/rs-status` on the info port): plain, small
//! HTML rendered from a [`ServerStatus`], a snapshot of values, so any server that can fill
//! one in (`cairn serve`, a region server process) shows the same page.

use std::fmt::Write as _;
use std::time::Duration;

/// Everything the status page shows, read at one moment.
#[derive(Clone, Debug, Default)]
pub struct ServerStatus {
    /// HBase's server name (`host,port,startcode`), or the address when there is no RPC.
    pub server_name: String,
    /// The release.
    pub version: String,
    /// The commit the binary was built from.
    pub commit: String,
    /// Seconds since the Unix epoch at start.
    pub start_time_secs: u64,
    /// Time since start.
    pub uptime: Duration,
    /// What listens where (`thrift`, `hbase rpc`, `info`, `http`), as bound.
    pub listeners: Vec<(String, String)>,
    /// Every table, its regions in key order.
    pub tables: Vec<TableStatus>,
    /// Bytes in every memstore (`globalMemStoreSize`).
    pub memstore_size: u64,
    /// The server-wide memstore bound (`globalMemStoreLimit`), if there is one.
    pub memstore_limit: Option<u64>,
    /// The block cache, if there is one.
    pub block_cache: Option<BlockCacheStatus>,
    /// The WAL's files, oldest first.
    pub wal_files: Vec<WalFileStatus>,
    /// Recent calls past the slow or large limits, newest first.
    pub slow_calls: Vec<crate::slow_log::SlowCall>,
}

/// One table.
#[derive(Clone, Debug, Default)]
pub struct TableStatus {
    /// `namespace:qualifier` (`default:` left out, as HBase prints it).
    pub name: String,
    /// Whether it takes requests.
    pub enabled: bool,
    /// Its regions.
    pub regions: Vec<RegionStatus>,
}

/// One region.
#[derive(Clone, Debug, Default)]
pub struct RegionStatus {
    /// The encoded name (32 hex digits).
    pub encoded_name: String,
    /// First row, as HBase's `Bytes.toStringBinary` prints it (empty: the table's start).
    pub start_key: String,
    /// Row the next region starts at (empty: the table's end).
    pub end_key: String,
    /// Reads served (`readRequestCount`).
    pub read_requests: u64,
    /// Writes served (`writeRequestCount`).
    pub write_requests: u64,
    /// Bytes in its memstores.
    pub memstore_size: u64,
    /// Its stores, one per column family.
    pub stores: Vec<StoreStatus>,
}

/// One store (a column family of a region).
#[derive(Clone, Debug, Default)]
pub struct StoreStatus {
    /// The family name.
    pub family: String,
    /// Store files.
    pub store_files: u64,
    /// Bytes in them.
    pub size: u64,
}

/// The block cache.
#[derive(Clone, Debug, Default)]
pub struct BlockCacheStatus {
    /// Lookups that found their block.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
    /// Blocks evicted.
    pub evictions: u64,
    /// Blocks cached.
    pub blocks: u64,
    /// Bytes cached.
    pub size: u64,
    /// Bytes it may hold.
    pub capacity: u64,
}

/// One WAL file.
#[derive(Clone, Debug, Default)]
pub struct WalFileStatus {
    /// The file's path.
    pub path: String,
    /// Bytes written.
    pub size: u64,
    /// Whether it is the one being appended to.
    pub active: bool,
}

/// `s` safe inside HTML text and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole page: `title` and `body` (already HTML), with the links every page has.
pub fn document(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title>\n\
         <style>body{{font-family:sans-serif;margin:1em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #bbb;padding:2px 6px;text-align:left}}\
         td.n{{text-align:right}}</style></head>\n<body>\n\
         <p><a href=\"/rs-status\">Status</a> | <a href=\"/conf\">Configuration</a> | \
         <a href=\"/stacks\">Threads</a> | <a href=\"/logLevel\">Log level</a> | \
         <a href=\"/metrics\">Metrics</a> | <a href=\"/jmx\">JMX</a> | \
         <a href=\"/health\">Health</a></p>\n{body}</body></html>\n",
        escape(title)
    )
}

/// Bytes as HBase's UI prints sizes (`1.5 MB`).
fn size(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn duration(d: Duration) -> String {
    let s = d.as_secs();
    format!(
        "{}d {}h {}m {}s",
        s / 86400,
        s / 3600 % 24,
        s / 60 % 60,
        s % 60
    )
}

/// The status page.
pub fn render(st: &ServerStatus) -> String {
    let mut b = String::new();
    let _ = writeln!(b, "<h1>RegionServer {}</h1>", escape(&st.server_name));
    let _ = writeln!(
        b,
        "<table id=\"server\"><tr><th>Version</th><td>cairn {} (commit {})</td></tr>\
         <tr><th>Started</th><td>{}</td></tr>\
         <tr><th>Uptime</th><td>{}</td></tr>",
        escape(&st.version),
        escape(&st.commit),
        chrono::DateTime::from_timestamp(st.start_time_secs as i64, 0).map_or_else(
            || st.start_time_secs.to_string(),
            |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
        ),
        duration(st.uptime)
    );
    for (what, addr) in &st.listeners {
        let _ = write!(
            b,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(what),
            escape(addr)
        );
    }
    let _ = writeln!(
        b,
        "<tr><th>Memstore</th><td>{}{}</td></tr></table>",
        size(st.memstore_size),
        st.memstore_limit
            .map(|l| format!(" of {}", size(l)))
            .unwrap_or_default()
    );

    let regions: usize = st.tables.iter().map(|t| t.regions.len()).sum();
    let _ = writeln!(
        b,
        "<h2>Regions</h2>\n<p>{} tables, {regions} regions.</p>\n<table id=\"regions\">\
         <tr><th>Table</th><th>Region</th><th>Start key</th><th>End key</th>\
         <th>Read requests</th><th>Write requests</th><th>Memstore</th>\
         <th>Store files</th><th>Store file size</th></tr>",
        st.tables.len()
    );
    for t in &st.tables {
        for r in &t.regions {
            let files: u64 = r.stores.iter().map(|s| s.store_files).sum();
            let bytes: u64 = r.stores.iter().map(|s| s.size).sum();
            let per_family: Vec<String> = r
                .stores
                .iter()
                .map(|s| format!("{}: {}", escape(&s.family), s.store_files))
                .collect();
            let _ = writeln!(
                b,
                "<tr><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\" title=\"{}\">{}</td>\
                 <td class=\"n\">{}</td></tr>",
                escape(&t.name),
                if t.enabled { "" } else { " (disabled)" },
                escape(&r.encoded_name),
                escape(&r.start_key),
                escape(&r.end_key),
                r.read_requests,
                r.write_requests,
                size(r.memstore_size),
                per_family.join(", "),
                files,
                size(bytes)
            );
        }
    }
    b.push_str("</table>\n");

    b.push_str("<h2>Block cache</h2>\n");
    match &st.block_cache {
        Some(c) => {
            let lookups = c.hits + c.misses;
            let ratio = if lookups == 0 {
                "-".to_string()
            } else {
                format!("{:.1}%", c.hits as f64 * 100.0 / lookups as f64)
            };
            let _ = writeln!(
                b,
                "<table id=\"blockcache\"><tr><th>Size</th><td>{} of {}</td></tr>\
                 <tr><th>Blocks</th><td>{}</td></tr><tr><th>Hits</th><td>{}</td></tr>\
                 <tr><th>Misses</th><td>{}</td></tr><tr><th>Hit ratio</th><td>{ratio}</td></tr>\
                 <tr><th>Evictions</th><td>{}</td></tr></table>",
                size(c.size),
                size(c.capacity),
                c.blocks,
                c.hits,
                c.misses,
                c.evictions
            );
        }
        None => b.push_str("<p>No block cache.</p>\n"),
    }

    let _ = writeln!(
        b,
        "<h2>WAL</h2>\n<table id=\"wal\"><tr><th>File</th><th>Size</th><th></th></tr>"
    );
    for w in &st.wal_files {
        let _ = writeln!(
            b,
            "<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            escape(&w.path),
            size(w.size),
            if w.active { "active" } else { "" }
        );
    }
    b.push_str("</table>\n");
    slow_calls(&mut b, &st.slow_calls);
    document(&format!("RegionServer {}", st.server_name), &b)
}

/// The recent slow and large calls (HBase's `hbase.ipc.warn.response.time` and `.size`).
fn slow_calls(b: &mut String, calls: &[crate::slow_log::SlowCall]) {
    b.push_str("<h2>Slow operations</h2>\n");
    if calls.is_empty() {
        b.push_str("<p id=\"slow-none\">No call has passed the slow or large limits.</p>\n");
        return;
    }
    let _ = writeln!(
        b,
        "<table id=\"slow\"><tr><th>Started</th><th>Protocol</th><th>Method</th>\
         <th>Request</th><th>Client</th><th>Processing</th><th>Queued</th>\
         <th>Response</th><th>Why</th></tr>"
    );
    for c in calls {
        let started = chrono::DateTime::<chrono::Utc>::from(c.start)
            .format("%Y-%m-%d %H:%M:%S%.3f UTC")
            .to_string();
        let _ = writeln!(
            b,
            "<tr><td>{started}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"n\">{} ms</td><td class=\"n\">{} ms</td><td class=\"n\">{}</td>\
             <td>{}</td></tr>",
            escape(c.protocol),
            escape(&c.method),
            escape(&c.param),
            escape(&c.client),
            c.processing.as_millis(),
            c.queue.as_millis(),
            size(c.response_size),
            c.kind.tag()
        );
    }
    b.push_str("</table>\n");
}

/// A row key as HBase's `Bytes.toStringBinary` prints it: printable ASCII as is, every other
/// byte as `\xHH`.
pub fn key_string(key: &[u8]) -> String {
    let mut s = String::with_capacity(key.len());
    for &b in key {
        if (b' '..=b'~').contains(&b) && b != b'\\' {
            s.push(b as char);
        } else {
            let _ = write!(s, "\\x{b:02X}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_lists_regions_and_escapes_names() {
        let st = ServerStatus {
            server_name: "h,16020,1".into(),
            version: "0.1.0".into(),
            commit: "abc".into(),
            tables: vec![TableStatus {
                name: "t<script>".into(),
                enabled: true,
                regions: vec![RegionStatus {
                    encoded_name: "0123abcd".into(),
                    start_key: "m".into(),
                    read_requests: 7,
                    stores: vec![StoreStatus {
                        family: "f".into(),
                        store_files: 2,
                        size: 3 << 20,
                    }],
                    ..Default::default()
                }],
            }],
            block_cache: Some(BlockCacheStatus {
                hits: 3,
                misses: 1,
                ..Default::default()
            }),
            ..Default::default()
        };
        let html = render(&st);
        assert!(
            html.contains("t&lt;script&gt;") && !html.contains("<script>"),
            "{html}"
        );
        assert!(html.contains("<td>0123abcd</td><td>m</td>"), "{html}");
        assert!(html.contains("3.0 MB") && html.contains("75.0%"), "{html}");
        assert!(html.contains("1 tables, 1 regions"), "{html}");
    }

    #[test]
    fn slow_calls_are_listed_newest_first_and_escaped() {
        let call = |method: &str, ms: u64| crate::slow_log::SlowCall {
            kind: crate::slow_log::SlowKind::TooSlow,
            start: std::time::SystemTime::UNIX_EPOCH,
            protocol: "HBase RPC",
            method: method.into(),
            param: "region= t,,1.x., row=<b>".into(),
            client: "10.0.0.1:4000".into(),
            processing: Duration::from_millis(ms),
            queue: Duration::from_millis(3),
            response_size: 2048,
        };
        let html = render(&ServerStatus::default());
        assert!(html.contains("id=\"slow-none\""), "{html}");
        let st = ServerStatus {
            slow_calls: vec![call("Multi", 12_000), call("Get", 11_000)],
            ..Default::default()
        };
        let html = render(&st);
        let (multi, get) = (html.find("<td>Multi</td>"), html.find("<td>Get</td>"));
        assert!(multi.is_some() && multi < get, "{html}");
        assert!(
            html.contains("row=&lt;b&gt;") && !html.contains("<b>"),
            "{html}"
        );
        assert!(
            html.contains("12000 ms") && html.contains("10.0.0.1:4000"),
            "{html}"
        );
        assert!(
            html.contains("TooSlow") && !html.contains("slow-none"),
            "{html}"
        );
    }

    #[test]
    fn keys_print_as_hbase_prints_them() {
        assert_eq!(key_string(b"row\x00\xff\\"), "row\\x00\\xFF\\x5C");
        assert_eq!(size(1536), "1.5 KB");
        assert_eq!(duration(Duration::from_secs(90061)), "1d 1h 1m 1s");
    }
}
