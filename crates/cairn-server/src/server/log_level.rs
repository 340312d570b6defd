//! `/logLevel`: the log filter, shown and changed while the server runs, in the shape of
//! HBase's `LogLevel` servlet (`/logLevel?log=<logger>&level=<LEVEL>`). The logger is a
//! tracing target (`cairn_server::rpc`, `cairn_region`); HBase's level names are taken.
//! The filter itself belongs to whoever set up logging; the server gets it as a value.

use super::status_page::escape;

/// The process's log filter, as the binary that set up logging exposes it.
pub trait LogLevel: Send + Sync + std::fmt::Debug {
    /// The filter now, as directives (`info,cairn_server=debug`).
    fn filter(&self) -> String;
    /// Replaces the filter with `directives` (checked by [`directive`] and the caller's
    /// parser); returns the filter now in force.
    fn set_filter(&self, directives: &str) -> Result<String, LogLevelError>;
}

/// Why a `/logLevel` change was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LogLevelError {
    /// A logger name that is not a tracing target (letters, digits, `_`, `:`, `.`, `-`).
    #[error("log {0:?}: not a logger name (letters, digits, '_', ':', '.', '-'; at most 200)")]
    BadLogger(String),
    /// A level that is none of HBase's (ALL, TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF).
    #[error("level {0:?}: not one of ALL, TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF")]
    BadLevel(String),
    /// The new filter did not parse.
    #[error("filter {0:?} refused: {1}")]
    Refused(String, String),
}

/// Longest logger name taken.
const MAX_LOGGER: usize = 200;

/// The tracing level of HBase's (log4j's) level name `level`.
fn tracing_level(level: &str) -> Option<&'static str> {
    Some(match level.to_ascii_uppercase().as_str() {
        "ALL" | "TRACE" => "trace",
        "DEBUG" => "debug",
        "INFO" => "info",
        "WARN" => "warn",
        "ERROR" | "FATAL" => "error",
        "OFF" => "off",
        _ => return None,
    })
}

/// The filter `current` with logger `log` set to `level`: a directive for the same target is
/// replaced, the others kept. A name with a `,`, `=` or `[` would smuggle in directives of its
/// own, so only plain target characters are taken.
pub fn directive(current: &str, log: &str, level: &str) -> Result<String, LogLevelError> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '.' | '-');
    if log.is_empty() || log.len() > MAX_LOGGER || !log.chars().all(plain) {
        return Err(LogLevelError::BadLogger(log.to_string()));
    }
    let level = tracing_level(level).ok_or_else(|| LogLevelError::BadLevel(level.to_string()))?;
    let mut parts: Vec<String> = current
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .filter(|d| d.split_once('=').is_none_or(|(t, _)| t != log))
        .map(str::to_string)
        .collect();
    parts.push(format!("{log}={level}"));
    Ok(parts.join(","))
}

/// The page: the filter, a form to change one logger, and what a change did.
pub fn page(control: Option<&dyn LogLevel>, query: &[(String, String)]) -> (u16, String) {
    let get = |k: &str| query.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let mut body = String::from("<h1>Log level</h1>\n");
    let mut status = 200;
    let Some(control) = control else {
        body.push_str("<p>This server's log filter cannot be changed at run time.</p>\n");
        return (200, super::status_page::document("Log level", &body));
    };
    match (get("log"), get("level")) {
        (Some(log), Some(level)) => {
            let changed =
                directive(&control.filter(), log, level).and_then(|d| control.set_filter(&d));
            match changed {
                Ok(now) => {
                    tracing::info!("log level of {log} set to {level} through /logLevel");
                    body.push_str(&format!(
                        "<p>Submitted Log Name: <b>{}</b><br>Submitted Level: <b>{}</b><br>\
                         Setting Level to {} ... Effective filter: <code>{}</code></p>\n",
                        escape(log),
                        escape(level),
                        escape(level),
                        escape(&now)
                    ));
                }
                Err(e) => {
                    status = 400;
                    body.push_str(&format!("<p>Refused: {}</p>\n", escape(&e.to_string())));
                }
            }
        }
        (Some(log), None) => body.push_str(&format!(
            "<p>Submitted Log Name: <b>{}</b><br>Effective filter: <code>{}</code></p>\n",
            escape(log),
            escape(&control.filter())
        )),
        _ => {}
    }
    body.push_str(&format!(
        "<p>Filter now: <code id=\"filter\">{}</code></p>\n\
         <form action=\"/logLevel\" method=\"get\">Log: <input name=\"log\" size=\"40\"> \
         Level: <input name=\"level\" size=\"8\" value=\"DEBUG\"> \
         <input type=\"submit\" value=\"Set Log Level\"></form>\n",
        escape(&control.filter())
    ));
    (status, super::status_page::document("Log level", &body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default)]
    struct Fake(parking_lot::Mutex<String>);
    impl LogLevel for Fake {
        fn filter(&self) -> String {
            self.0.lock().clone()
        }
        fn set_filter(&self, d: &str) -> Result<String, LogLevelError> {
            *self.0.lock() = d.to_string();
            Ok(d.to_string())
        }
    }

    #[test]
    fn a_logger_is_set_and_replaced() {
        assert_eq!(
            directive("info,hdfs_native=warn", "cairn_server::rpc", "DEBUG").unwrap(),
            "info,hdfs_native=warn,cairn_server::rpc=debug"
        );
        assert_eq!(
            directive("info,cairn_region=debug", "cairn_region", "fatal").unwrap(),
            "info,cairn_region=error"
        );
        assert_eq!(
            directive("info", "x,y=trace", "INFO"),
            Err(LogLevelError::BadLogger("x,y=trace".into()))
        );
        assert_eq!(
            directive("info", "x", "LOUD"),
            Err(LogLevelError::BadLevel("LOUD".into()))
        );
        assert!(directive("info", &"a".repeat(201), "INFO").is_err());
    }

    #[test]
    fn the_page_sets_and_shows() {
        let f = Fake(parking_lot::Mutex::new("info".into()));
        let q = |a: &str, b: &str| {
            vec![
                ("log".to_string(), a.to_string()),
                ("level".to_string(), b.to_string()),
            ]
        };
        let (s, html) = page(Some(&f), &q("cairn_wal", "TRACE"));
        assert_eq!(s, 200);
        assert_eq!(f.filter(), "info,cairn_wal=trace");
        assert!(html.contains("info,cairn_wal=trace"), "{html}");
        let (s, html) = page(Some(&f), &q("<b>", "INFO"));
        assert_eq!(s, 400);
        assert!(
            html.contains("&lt;b&gt;") && !html.contains("<b><"),
            "{html}"
        );
        assert_eq!(f.filter(), "info,cairn_wal=trace");
        let (s, _) = page(None, &q("x", "INFO"));
        assert_eq!(s, 200);
    }
}
