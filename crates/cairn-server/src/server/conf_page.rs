//! `/conf`: the configuration in force, as HBase's `ConfServlet` prints it (Hadoop's XML
//! configuration: `<property><name>…</name><value>…</value><final>…</final>
//! <source>…</source></property>`), every property that was set (the last value of each)
//! and the addresses the server was given.

use crate::config::Config;

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 has no way to write other control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Whether `key` holds a secret, after Hadoop's `hadoop.security.sensitive-config-keys`
/// defaults (passwords, secrets, credentials, tokens, cloud account keys): its value is
/// shown as `******`, as HBase's `/conf` shows it.
fn sensitive(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["secret", "password", ".pass", "credential", "token"]
        .iter()
        .any(|end| k.ends_with(end))
        || ["secret.key", "secretkey", "account.key"]
            .iter()
            .any(|part| k.contains(part))
}

/// The properties of `config`, each once (the last value given wins, as it does in force),
/// sorted by name.
pub fn properties(config: &Config) -> Vec<(String, String)> {
    let mut map = std::collections::BTreeMap::new();
    map.insert(
        "hbase.rootdir".to_string(),
        config.data_dir.display().to_string(),
    );
    for (k, v) in &config.properties {
        let v = if sensitive(k) {
            "******".to_string()
        } else {
            v.clone()
        };
        map.insert(k.clone(), v);
    }
    map.into_iter().collect()
}

/// The XML document.
pub fn page(config: &Config) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?><configuration>\n",
    );
    for (k, v) in properties(config) {
        s.push_str(&format!(
            "<property><name>{}</name><value>{}</value><final>false</final><source>cairn</source></property>\n",
            xml_escape(&k),
            xml_escape(&v)
        ));
    }
    s.push_str("</configuration>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_value_wins_and_text_is_escaped() {
        let mut c = Config::default();
        c.set("hbase.client.scanner.timeout.period", "1000")
            .unwrap();
        c.set("hbase.client.scanner.timeout.period", "2000")
            .unwrap();
        c.set("x.y", "a<b&\"c\"\u{1}").unwrap();
        c.set("hbase.ssl.keystore.password", "hunter2").unwrap();
        let xml = page(&c);
        assert!(
            xml.contains(
                "<property><name>hbase.client.scanner.timeout.period</name><value>2000</value>"
            ),
            "{xml}"
        );
        assert!(!xml.contains("<value>1000</value>"), "{xml}");
        assert!(
            xml.contains("<value>a&lt;b&amp;&quot;c&quot;\u{FFFD}</value>"),
            "{xml}"
        );
        assert!(xml.contains("<name>hbase.rootdir</name>"), "{xml}");
        assert!(
            !xml.contains("hunter2") && xml.contains("<value>******</value>"),
            "{xml}"
        );
        roxmltree_free_check(&xml);
    }

    /// Well-formed enough: every opened property closes.
    fn roxmltree_free_check(xml: &str) {
        assert_eq!(
            xml.matches("<property>").count(),
            xml.matches("</property>").count()
        );
    }
}
