//! # cairn-conf
//!
//! HBase's configuration as HBase reads it: Hadoop's XML configuration files (`core-site.xml`,
//! then `hbase-site.xml`, from `--conf DIR` or `HBASE_CONF_DIR`), then `-D name=value` from the
//! command line, with Hadoop's rules: a later file overrides an earlier one unless the earlier
//! marked the property `final`; `-D` overrides everything (as Hadoop's `Configuration.set`
//! does); values expand `${name}` from Java's system properties cairn knows
//! (`user.name`, `user.home`, `user.dir`, `java.io.tmpdir`), then `${env.NAME}` from the
//! environment (with `${env.NAME:-default}` and `${env.NAME-default}`), then other properties.
//!
//! **Owns:** reading the files (a bad file is an error naming it, the element and the line),
//! where each value came from, and expansion. **Does not own:** what a property means (each
//! crate that reads one parses its value and knows its default), nor which properties exist
//! (a tool checks the names it reads; see [`Configuration::unread`]).

#![warn(missing_docs)]

mod expand;
mod xml;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use expand::MAX_SUBSTITUTIONS;

/// What went wrong reading configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file is not Hadoop's configuration XML.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line.
        message: String,
    },
    /// A value's `${...}` references go deeper than Hadoop allows.
    #[error("Variable substitution depth too large: {MAX_SUBSTITUTIONS} {expr} (property {name})")]
    Depth {
        /// The property.
        name: String,
        /// Its raw value.
        expr: String,
    },
    /// A `-D` argument is not `name=value`.
    #[error("-D {0}: expected NAME=VALUE")]
    Define(String),
    /// A `-D` argument's name is empty.
    #[error("-D {0}: the name is empty")]
    EmptyName(String),
}

/// One property's value and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The raw value, before expansion.
    pub value: String,
    /// The file (or "-D") that set it last.
    pub source: String,
}

/// Properties from files and the command line, in Hadoop's precedence.
#[derive(Clone, Debug, Default)]
pub struct Configuration {
    props: BTreeMap<String, Entry>,
    finals: BTreeSet<String>,
    /// Files read, in order.
    files: Vec<PathBuf>,
    /// Attempts to override a final property, said once each by the caller.
    warnings: Vec<String>,
}

/// The files HBase reads from its configuration directory, in order.
pub const SITE_FILES: [&str; 2] = ["core-site.xml", "hbase-site.xml"];

impl Configuration {
    /// No properties.
    pub fn new() -> Configuration {
        Configuration::default()
    }

    /// The configuration directory: `--conf DIR` if given, else `HBASE_CONF_DIR` if set.
    pub fn conf_dir(explicit: Option<&Path>) -> Option<PathBuf> {
        explicit
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("HBASE_CONF_DIR").map(PathBuf::from))
    }

    /// Reads `core-site.xml` and `hbase-site.xml` of `dir` (those that exist), as HBase's
    /// `HBaseConfiguration.create()` adds them. A directory that does not exist is an error:
    /// the operator named it.
    pub fn load_dir(&mut self, dir: &Path) -> Result<(), ConfError> {
        if !dir.is_dir() {
            return Err(ConfError::Io {
                path: dir.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "configuration directory not found",
                ),
            });
        }
        for name in SITE_FILES {
            let path = dir.join(name);
            if path.is_file() {
                self.add_file(&path)?;
            }
        }
        Ok(())
    }

    /// Adds one XML resource: its properties override earlier ones except final ones.
    pub fn add_file(&mut self, path: &Path) -> Result<(), ConfError> {
        let properties = xml::read_resource(path)?;
        let source = path.display().to_string();
        for p in properties {
            self.load(p, &source);
        }
        self.files.push(path.to_path_buf());
        Ok(())
    }

    /// Adds properties from XML text (`source` names it in messages and [`Entry::source`]).
    pub fn add_xml(&mut self, text: &str, source: &str) -> Result<(), ConfError> {
        let properties = xml::parse_resource(text, Path::new(source), &mut Vec::new())?;
        for p in properties {
            self.load(p, source);
        }
        Ok(())
    }

    /// Hadoop's `loadProperty`: a final property keeps its value; a property marked final
    /// becomes final after it is set.
    fn load(&mut self, p: xml::Property, source: &str) {
        if self.finals.contains(&p.name) {
            if self.props.get(&p.name).map(|e| &e.value) != Some(&p.value) {
                self.warnings.push(format!(
                    "{source}: an attempt to override final parameter: {}; ignoring",
                    p.name
                ));
            }
        } else {
            self.props.insert(
                p.name.clone(),
                Entry {
                    value: p.value,
                    source: source.to_string(),
                },
            );
        }
        if p.is_final {
            self.finals.insert(p.name);
        }
    }

    /// Sets a property from the command line: it wins over every file, final or not, as
    /// Hadoop's `set` does.
    pub fn set(&mut self, name: &str, value: &str) {
        self.props.insert(
            name.trim().to_string(),
            Entry {
                value: value.to_string(),
                source: "-D".to_string(),
            },
        );
    }

    /// Sets `-D name=value` arguments in order.
    pub fn set_defines<S: AsRef<str>>(&mut self, defines: &[S]) -> Result<(), ConfError> {
        for d in defines {
            let (name, value) = split_define(d.as_ref())?;
            self.set(name, value);
        }
        Ok(())
    }

    /// A property's value with `${...}` expanded; `None` when it is not set.
    pub fn get(&self, name: &str) -> Result<Option<String>, ConfError> {
        match self.props.get(name.trim()) {
            None => Ok(None),
            Some(e) => expand::substitute(&e.value, |var| self.get_raw(var))
                .map(Some)
                .map_err(|()| ConfError::Depth {
                    name: name.to_string(),
                    expr: e.value.clone(),
                }),
        }
    }

    /// A property's value as written, without expansion.
    pub fn get_raw(&self, name: &str) -> Option<&str> {
        self.props.get(name.trim()).map(|e| e.value.as_str())
    }

    /// A property's value and where it came from.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.props.get(name.trim())
    }

    /// Every property, expanded, in name order (what HBase's `/conf` page lists). A value
    /// whose expansion fails is given raw.
    pub fn iter(&self) -> impl Iterator<Item = (&str, String, &Entry)> + '_ {
        self.props.iter().map(|(k, e)| {
            let v = self
                .get(k)
                .ok()
                .flatten()
                .unwrap_or_else(|| e.value.clone());
            (k.as_str(), v, e)
        })
    }

    /// Whether `name` was made final by a file.
    pub fn is_final(&self, name: &str) -> bool {
        self.finals.contains(name.trim())
    }

    /// The files read, in order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Messages about ignored overrides of final properties.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The properties set on the command line (`-D`) whose names `known` does not accept:
    /// a tool warns about these once. (Files carry many properties of HBase's other daemons
    /// and of Hadoop; only what the user typed for this tool is suspicious.)
    pub fn unread(&self, known: impl Fn(&str) -> bool) -> Vec<String> {
        self.props
            .iter()
            .filter(|(k, e)| e.source == "-D" && !known(k))
            .map(|(k, _)| k.clone())
            .collect()
    }
}

/// A `-D NAME=VALUE` argument (Hadoop's `GenericOptionsParser`) split at its first `=`: the
/// name trimmed, the value as given (it may hold `=` itself). Every subcommand splits its
/// `-D`s here.
pub fn split_define(arg: &str) -> Result<(&str, &str), ConfError> {
    let (name, value) = arg
        .split_once('=')
        .ok_or_else(|| ConfError::Define(arg.to_string()))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(ConfError::EmptyName(arg.to_string()));
    }
    Ok((name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CORE: &str = r#"<?xml version="1.0"?>
<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>
<configuration>
  <property><name>a</name><value>core</value><final>true</final></property>
  <property><name>b</name><value>core</value></property>
</configuration>"#;

    const SITE: &str = r#"<configuration>
  <property><name>a</name><value>site</value></property>
  <property><name>b</name><value>site</value></property>
  <property><name>c</name><value>${b}-${a}</value></property>
</configuration>"#;

    #[test]
    fn later_files_override_except_final_and_defines_override_all() {
        let mut c = Configuration::new();
        c.add_xml(CORE, "core-site.xml").unwrap();
        c.add_xml(SITE, "hbase-site.xml").unwrap();
        assert_eq!(c.get("a").unwrap().as_deref(), Some("core"));
        assert_eq!(c.get("b").unwrap().as_deref(), Some("site"));
        assert_eq!(c.get("c").unwrap().as_deref(), Some("site-core"));
        assert!(c.is_final("a"));
        assert_eq!(c.warnings().len(), 1, "{:?}", c.warnings());
        assert!(c.warnings()[0].contains("final parameter: a"));
        c.set_defines(&["a=cli", " b =x=y"]).unwrap();
        assert_eq!(c.get("a").unwrap().as_deref(), Some("cli"));
        assert_eq!(c.get("b").unwrap().as_deref(), Some("x=y"));
        assert_eq!(c.entry("a").unwrap().source, "-D");
        assert!(c.set_defines(&["novalue"]).is_err());
        assert!(c.set_defines(&["=v"]).is_err());
        assert_eq!(c.get("missing").unwrap(), None);
    }

    #[test]
    fn only_unknown_defines_are_unread() {
        let mut c = Configuration::new();
        c.add_xml(SITE, "hbase-site.xml").unwrap();
        c.set_defines(&["hbase.known=1", "hbase.typo=2"]).unwrap();
        assert_eq!(c.unread(|k| k == "hbase.known"), ["hbase.typo"]);
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_it() {
        let mut c = Configuration::new();
        let e = c.load_dir(Path::new("/no/such/conf")).unwrap_err();
        assert!(e.to_string().contains("/no/such/conf"), "{e}");
    }

    #[test]
    fn a_directory_gives_core_then_hbase_site() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("core-site.xml"), CORE).unwrap();
        std::fs::write(dir.path().join("hbase-site.xml"), SITE).unwrap();
        let mut c = Configuration::new();
        c.load_dir(dir.path()).unwrap();
        assert_eq!(c.files().len(), 2);
        assert_eq!(c.get("c").unwrap().as_deref(), Some("site-core"));
        assert!(c.entry("b").unwrap().source.ends_with("hbase-site.xml"));
    }
}
