//! HBase's configuration, read the same way by every subcommand: the configuration directory
//! (`--conf DIR`, else `$HBASE_CONF_DIR`: `core-site.xml`, then `hbase-site.xml`, in Hadoop's
//! format through `cairn-conf`), then the command line's `-D NAME=VALUE`s (Hadoop's
//! `GenericOptionsParser`), which win over the files, final properties included.
//!
//! Each tool passes what it reads (`known`); a `-D` name it does not read is warned about once,
//! in the same words for every tool, and ignored. Properties from the files are not: a site
//! file holds every daemon's properties (the master's, HDFS's, ...), most of them for others.

use std::path::Path;

use anyhow::{Context, Result};
use cairn_conf::Configuration;

/// [`cairn_conf::Entry::source`] of a property set with `-D`.
const DEFINE: &str = "-D";

/// One property as a tool applies it: its value expanded (`${...}`), and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    /// HBase's name.
    pub name: String,
    /// The value, `${...}` expanded as Hadoop's `Configuration.get` does.
    pub value: String,
    /// The file that set it, or `-D`.
    pub source: String,
}

impl Property {
    /// Where the value came from, for an error about it: `-D NAME=VALUE`, or
    /// `FILE: property NAME=VALUE`.
    pub fn origin(&self) -> String {
        if self.source == DEFINE {
            format!("-D {}={}", self.name, self.value)
        } else {
            format!("{}: property {}={}", self.source, self.name, self.value)
        }
    }
}

/// A tool's configuration: the directory's files, then its `-D`s.
#[derive(Debug)]
pub struct Site {
    conf: Configuration,
    /// The `-D` names in command-line order (each at its last occurrence: the value it has).
    defines: Vec<String>,
}

/// The one warning about the names given with `option` (`-D`; ycsb's `-p`) that a tool does
/// not read: the same words for every tool.
pub fn unread_warning(tool: &str, option: &str, names: &[String]) -> String {
    format!(
        "cairn {tool}: ignoring {option} properties cairn {tool} does not read: {}",
        names.join(", ")
    )
}

impl Site {
    /// Reads the configuration directory (`conf_dir`, else `$HBASE_CONF_DIR`; neither: no
    /// files), then `defines` (`NAME=VALUE`). Logs each ignored override of a final property,
    /// and once the `-D` names `known` does not accept. A directory that does not exist, a
    /// file that is not Hadoop's XML, or a malformed `-D` is an error naming it.
    pub fn load<S: AsRef<str>>(
        tool: &str,
        conf_dir: Option<&Path>,
        defines: &[S],
        known: impl Fn(&str) -> bool,
    ) -> Result<Site> {
        let mut conf = Configuration::new();
        if let Some(dir) = Configuration::conf_dir(conf_dir) {
            conf.load_dir(&dir)
                .with_context(|| format!("reading HBase's configuration in {}", dir.display()))?;
        }
        for w in conf.warnings() {
            tracing::warn!("cairn {tool}: {w}");
        }
        let mut names: Vec<String> = Vec::new();
        for d in defines {
            let (name, value) = cairn_conf::split_define(d.as_ref())?;
            conf.set(name, value);
            names.retain(|n| n != name);
            names.push(name.to_string());
        }
        let unread = conf.unread(known);
        if !unread.is_empty() {
            tracing::warn!("{}", unread_warning(tool, DEFINE, &unread));
        }
        Ok(Site {
            conf,
            defines: names,
        })
    }

    /// One property, expanded: `None` when neither a file nor `-D` sets it.
    pub fn get(&self, name: &str) -> Result<Option<Property>> {
        let Some(entry) = self.conf.entry(name) else {
            return Ok(None);
        };
        let value = self
            .conf
            .get(name)?
            .expect("an entry's property has a value");
        Ok(Some(Property {
            name: name.to_string(),
            value,
            source: entry.source.clone(),
        }))
    }

    /// The properties the files set and no `-D` overrides, in name order.
    pub fn file_properties(&self) -> Result<Vec<Property>> {
        let names: Vec<String> = self
            .conf
            .iter()
            .filter(|(_, _, e)| e.source != DEFINE)
            .map(|(k, _, _)| k.to_string())
            .collect();
        self.all(&names)
    }

    /// The `-D` properties, in command-line order (a name given twice at its last place, with
    /// its last value).
    pub fn defines(&self) -> Result<Vec<Property>> {
        self.all(&self.defines)
    }

    /// Every property: the files', then the `-D`s (which win).
    pub fn properties(&self) -> Result<Vec<Property>> {
        let mut all = self.file_properties()?;
        all.extend(self.defines()?);
        Ok(all)
    }

    /// The properties `reads` accepts, files' then `-D`s.
    pub fn read(&self, reads: impl Fn(&str) -> bool) -> Result<Vec<Property>> {
        Ok(self
            .properties()?
            .into_iter()
            .filter(|p| reads(&p.name))
            .collect())
    }

    fn all(&self, names: &[String]) -> Result<Vec<Property>> {
        let mut out = Vec::with_capacity(names.len());
        for n in names {
            out.extend(self.get(n)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(site: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hbase-site.xml"), site).unwrap();
        dir
    }

    #[test]
    fn files_then_defines_with_expansion_and_origins() {
        let dir = dir_with(
            r#"<configuration>
  <property><name>a</name><value>${b}-x</value></property>
  <property><name>b</name><value>file</value></property>
  <property><name>c</name><value>1</value></property>
</configuration>"#,
        );
        let s = Site::load("t", Some(dir.path()), &["c=2", "d=${b}", "c=3"], |_| true).unwrap();
        let files = s.file_properties().unwrap();
        let names: Vec<&str> = files.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(files[0].value, "file-x");
        assert!(files[0]
            .origin()
            .contains("hbase-site.xml: property a=file-x"));
        let defines = s.defines().unwrap();
        let got: Vec<(&str, &str)> = defines
            .iter()
            .map(|p| (p.name.as_str(), p.value.as_str()))
            .collect();
        assert_eq!(got, [("d", "file"), ("c", "3")]);
        assert_eq!(defines[1].origin(), "-D c=3");
        assert_eq!(s.read(|n| n == "c").unwrap().len(), 1);
        assert_eq!(s.get("nothing").unwrap(), None);
    }

    #[test]
    fn no_directory_no_files_and_a_missing_one_is_an_error() {
        let s = Site::load("t", None::<&Path>, &["k=v"], |_| true);
        // $HBASE_CONF_DIR may be set where the tests run: only check without it.
        if std::env::var_os("HBASE_CONF_DIR").is_none() {
            assert_eq!(s.unwrap().properties().unwrap().len(), 1);
        }
        let e = Site::load(
            "t",
            Some(Path::new("/no/such/conf")),
            &[] as &[&str],
            |_| true,
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("/no/such/conf"), "{e:#}");
        let e = Site::load("t", None::<&Path>, &["novalue"], |_| true).unwrap_err();
        assert!(e.to_string().contains("-D novalue"), "{e}");
    }

    #[test]
    fn the_warning_names_the_tool_and_every_name() {
        let w = unread_warning("pe", "-D", &["a.b".into(), "c".into()]);
        assert_eq!(
            w,
            "cairn pe: ignoring -D properties cairn pe does not read: a.b, c"
        );
    }
}
