//! Hadoop's XML configuration format: `<configuration>` holding `<property>` elements, each
//! with `<name>`, `<value>` and optionally `<final>true</final>` (or, as Hadoop 3 also reads,
//! the same as attributes), and `<xi:include href="...">` of another file (relative to the
//! including one), whose `<xi:fallback>` makes a missing file acceptable.

use std::path::{Path, PathBuf};

use crate::ConfError;

/// XInclude's namespace.
const XINCLUDE: &str = "http://www.w3.org/2001/XInclude";
/// Includes nested deeper than this are refused (a file including itself).
const MAX_INCLUDE_DEPTH: usize = 16;

/// One `<property>` as written.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Property {
    pub name: String,
    pub value: String,
    pub is_final: bool,
}

/// The properties of the file at `path`, includes expanded in place.
pub(crate) fn read_resource(path: &Path) -> Result<Vec<Property>, ConfError> {
    read_nested(path, &mut Vec::new())
}

fn read_nested(path: &Path, stack: &mut Vec<PathBuf>) -> Result<Vec<Property>, ConfError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_resource(&text, path, stack)
}

/// The properties of XML `text` read from `path` (which includes are relative to).
pub(crate) fn parse_resource(
    text: &str,
    path: &Path,
    stack: &mut Vec<PathBuf>,
) -> Result<Vec<Property>, ConfError> {
    let format = |message: String| ConfError::Format {
        path: path.to_path_buf(),
        message,
    };
    if stack.len() >= MAX_INCLUDE_DEPTH || stack.iter().any(|p| p == path) {
        return Err(format(
            "includes itself, directly or through other files".into(),
        ));
    }
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, options)
        .map_err(|e| format(format!("not well-formed XML: {e}")))?;
    let root = doc.root_element();
    if root.tag_name().name() != "configuration" {
        return Err(format(format!(
            "line {}: the top-level element is <{}>, not <configuration>",
            doc.text_pos_at(root.range().start).row,
            root.tag_name().name()
        )));
    }
    stack.push(path.to_path_buf());
    let mut out = Vec::new();
    let result = collect(&doc, root, path, stack, &mut out);
    stack.pop();
    result.map(|()| out)
}

fn collect(
    doc: &roxmltree::Document<'_>,
    parent: roxmltree::Node<'_, '_>,
    path: &Path,
    stack: &mut Vec<PathBuf>,
    out: &mut Vec<Property>,
) -> Result<(), ConfError> {
    let line = |n: roxmltree::Node<'_, '_>| doc.text_pos_at(n.range().start).row;
    for node in parent.children().filter(|n| n.is_element()) {
        let tag = node.tag_name();
        match (tag.namespace(), tag.name()) {
            (_, "property") => {
                if let Some(p) = property(node) {
                    out.push(p);
                }
            }
            // Hadoop reads properties inside nested <configuration> elements too.
            (_, "configuration") => collect(doc, node, path, stack, out)?,
            (Some(XINCLUDE), "include") => {
                let href = node.attribute("href").ok_or_else(|| ConfError::Format {
                    path: path.to_path_buf(),
                    message: format!("line {}: <xi:include> without href", line(node)),
                })?;
                let target = path.parent().unwrap_or(Path::new(".")).join(href);
                let has_fallback = node
                    .children()
                    .any(|c| c.is_element() && c.tag_name().name() == "fallback");
                if !target.exists() && has_fallback {
                    continue;
                }
                out.extend(read_nested(&target, stack)?);
            }
            _ => {}
        }
    }
    Ok(())
}

/// A `<property>`'s name, value and finality; `None` without a name or a value (Hadoop
/// skips those).
fn property(node: roxmltree::Node<'_, '_>) -> Option<Property> {
    let mut name = node.attribute("name").map(str::to_string);
    let mut value = node.attribute("value").map(str::to_string);
    let mut is_final = node.attribute("final") == Some("true");
    for child in node.children().filter(|n| n.is_element()) {
        let text: String = child
            .descendants()
            .filter(|d| d.is_text())
            .filter_map(|d| d.text())
            .collect();
        match child.tag_name().name() {
            "name" => name = Some(text),
            "value" => value = Some(text),
            "final" => is_final = text == "true",
            _ => {}
        }
    }
    Some(Property {
        name: name?.trim().to_string(),
        value: value?,
        is_final,
    })
    .filter(|p| !p.name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse(text: &str) -> Result<Vec<Property>, ConfError> {
        parse_resource(text, Path::new("/conf/hbase-site.xml"), &mut Vec::new())
    }

    fn p(name: &str, value: &str, is_final: bool) -> Property {
        Property {
            name: name.into(),
            value: value.into(),
            is_final,
        }
    }

    #[test]
    fn both_forms_names_trimmed_values_kept() {
        let got = parse(
            r#"<?xml version="1.0"?>
<!DOCTYPE configuration>
<configuration>
  <!-- a comment -->
  <property>
    <name> hbase.rootdir </name>
    <value> file:///data </value>
    <description>where</description>
    <final>true</final>
  </property>
  <property name="short" value="form" final="true"/>
  <property><name>novalue</name></property>
  <property><value>noname</value></property>
  <property><name>empty</name><value></value></property>
  <property><name>cdata</name><value><![CDATA[a<b]]></value></property>
  <property><name>entity</name><value>a&amp;b</value><final>TRUE</final></property>
  <configuration><property><name>nested</name><value>n</value></property></configuration>
</configuration>"#,
        )
        .unwrap();
        assert_eq!(
            got,
            [
                p("hbase.rootdir", " file:///data ", true),
                p("short", "form", true),
                p("empty", "", false),
                p("cdata", "a<b", false),
                p("entity", "a&b", false),
                p("nested", "n", false),
            ]
        );
    }

    #[test]
    fn bad_files_are_named_with_what_is_wrong() {
        let e = parse("<configuration><property>").unwrap_err().to_string();
        assert!(
            e.starts_with("/conf/hbase-site.xml: not well-formed XML"),
            "{e}"
        );
        let e = parse("\n<conf/>").unwrap_err().to_string();
        assert!(e.contains("line 2: the top-level element is <conf>"), "{e}");
    }

    #[test]
    fn includes_relative_with_fallback_and_no_loops() {
        let dir = tempfile::tempdir().unwrap();
        let inc = r#"<configuration xmlns:xi="http://www.w3.org/2001/XInclude">
  <property><name>before</name><value>1</value></property>
  <xi:include href="more.xml"/>
  <xi:include href="missing.xml"><xi:fallback/></xi:include>
</configuration>"#;
        std::fs::write(dir.path().join("site.xml"), inc).unwrap();
        std::fs::write(
            dir.path().join("more.xml"),
            "<configuration><property><name>inc</name><value>2</value></property></configuration>",
        )
        .unwrap();
        let got = read_resource(&dir.path().join("site.xml")).unwrap();
        assert_eq!(got, [p("before", "1", false), p("inc", "2", false)]);
        // Without a fallback a missing include is an error naming it.
        std::fs::write(
            dir.path().join("bad.xml"),
            r#"<configuration xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="gone.xml"/></configuration>"#,
        )
        .unwrap();
        let e = read_resource(&dir.path().join("bad.xml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("gone.xml"), "{e}");
        std::fs::write(
            dir.path().join("self.xml"),
            r#"<configuration xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="self.xml"/></configuration>"#,
        )
        .unwrap();
        let e = read_resource(&dir.path().join("self.xml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("includes itself"), "{e}");
    }

    proptest! {
        #[test]
        fn any_text_is_an_error_or_properties_never_a_panic(s in "\\PC{0,200}") {
            let _ = parse(&s);
        }

        #[test]
        fn written_properties_read_back(
            props in proptest::collection::vec(("[a-z.]{1,12}", "[ -~]{0,20}", any::<bool>()), 0..8)
        ) {
            let mut xml = String::from("<configuration>");
            for (n, v, f) in &props {
                let esc = v.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
                xml.push_str(&format!(
                    "<property><name>{n}</name><value>{esc}</value><final>{f}</final></property>"
                ));
            }
            xml.push_str("</configuration>");
            let got = parse(&xml).unwrap();
            let want: Vec<Property> = props.iter().map(|(n, v, f)| p(n, v, *f)).collect();
            prop_assert_eq!(got, want);
        }
    }
}
