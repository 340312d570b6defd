//! What a root directory knows of the cluster it belongs to: its id (HBase's `hbase.id`
//! file) and its namespaces (the directories under `data/`, HBase's layout).

use super::*;

/// HBase's cluster id file under the root directory.
pub const CLUSTER_ID_FILE: &str = "hbase.id";

mod pb {
    /// `hbase.pb.ClusterId`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ClusterId {
        /// A UUID, as text.
        #[prost(string, required, tag = "1")]
        pub cluster_id: String,
    }
}

/// A random version-4 UUID in its text form, as HBase's `ClusterId` makes one.
fn new_uuid() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// A namespace name HBase accepts: letters, digits and `_`, not starting with `.` or `-`.
/// A namespace name HBase takes, as one directory under `<root>/data`.
fn namespace_dir(root: &Path, name: &str) -> Result<PathBuf> {
    crate::names::check_namespace(name.as_bytes())?;
    crate::names::child(&layout::data_dir(root), name)
}

impl RegionServer {
    /// The cluster id: read from `<root>/hbase.id` (`PBUF` + `ClusterId`, as HBase writes it),
    /// or made and written there the first time.
    pub fn cluster_id(&self) -> Result<String> {
        use prost::Message;
        let fs = self.config.fs();
        let path = self.config.root.join(CLUSTER_ID_FILE);
        if fs.exists(&path).map_err(|e| RegionError::io(&path, e))? {
            let bytes = fs.read(&path).map_err(|e| RegionError::io(&path, e))?;
            let body = bytes
                .strip_prefix(b"PBUF")
                .ok_or_else(|| RegionError::Corrupt {
                    path: path.display().to_string(),
                    reason: "does not start with PBUF".into(),
                })?;
            let id = pb::ClusterId::decode(body).map_err(|e| RegionError::Corrupt {
                path: path.display().to_string(),
                reason: format!("ClusterId does not parse: {e}"),
            })?;
            return Ok(id.cluster_id);
        }
        let id = new_uuid();
        let mut bytes = b"PBUF".to_vec();
        pb::ClusterId {
            cluster_id: id.clone(),
        }
        .encode(&mut bytes)
        .expect("a Vec grows as needed");
        layout::write_atomically(&**fs, &path, &bytes)?;
        Ok(id)
    }

    /// The namespaces: the directories under `<root>/data`, and those of the tables.
    pub fn namespaces(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .config
            .fs()
            .list(&layout::data_dir(&self.config.root))
            .unwrap_or_default()
            .into_iter()
            .filter(|s| s.is_dir)
            .filter_map(|s| s.path.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        for t in self.table_names() {
            if !out.contains(&t.namespace) {
                out.push(t.namespace);
            }
        }
        out.sort();
        out
    }

    /// Creates a namespace (its directory under `<root>/data`).
    pub fn create_namespace(&self, name: &str) -> Result<()> {
        let dir = namespace_dir(&self.config.root, name)?;
        self.config
            .fs()
            .mkdirs_durable(&dir)
            .map_err(|e| RegionError::io(&dir, e))
    }

    /// Deletes an empty namespace's directory; a namespace with tables is refused.
    pub fn delete_namespace(&self, name: &str) -> Result<()> {
        let dir = namespace_dir(&self.config.root, name)?;
        if self.table_names().iter().any(|t| t.namespace == name) {
            return Err(RegionError::InvalidArgument(format!(
                "namespace {name} still has tables"
            )));
        }
        self.config
            .fs()
            .delete(&dir)
            .map(|_| ())
            .map_err(|e| RegionError::io(&dir, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_id_is_made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let rs = RegionServer::open(ServerConfig::new(dir.path())).unwrap();
        let id = rs.cluster_id().unwrap();
        assert_eq!(id.len(), 36);
        assert_eq!(rs.cluster_id().unwrap(), id);
        rs.close().unwrap();
        drop(rs);
        let bytes = std::fs::read(dir.path().join(CLUSTER_ID_FILE)).unwrap();
        assert!(bytes.starts_with(b"PBUF"));
        let rs = RegionServer::open(ServerConfig::new(dir.path())).unwrap();
        assert_eq!(rs.cluster_id().unwrap(), id, "read back after a restart");
    }

    #[test]
    fn namespaces_are_directories() {
        let dir = tempfile::tempdir().unwrap();
        let rs = RegionServer::open(ServerConfig::new(dir.path())).unwrap();
        rs.create_namespace("ns1").unwrap();
        assert!(rs.namespaces().contains(&"ns1".to_string()));
        assert!(rs.create_namespace("bad/name").is_err());
        rs.delete_namespace("ns1").unwrap();
        assert!(!rs.namespaces().contains(&"ns1".to_string()));
    }
}
