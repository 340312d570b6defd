//! `ClientService` bulk load: `PrepareBulkLoad`, `BulkLoadHFile` and `CleanupBulkLoad`, a
//! thin translation over the region store's bulk load (HBase's `RSRpcServices` and
//! `SecureBulkLoadManager`).

use std::path::PathBuf;

use cairn_region::server::fs_path;
use cairn_region::RegionError;
use cairn_rpc::pb;

use super::errors::RpcError;
use super::master::table_name;
use super::meta;
use super::Services;

/// A bulk-load failure as HBase reports it: the region store's refusals of the request
/// itself (`No such column family <f>`, a file with no cells) as `DoNotRetryIOException`
/// with HBase's message, everything else as the usual mapping.
fn bulk_load_error(e: RegionError) -> RpcError {
    match e {
        RegionError::InvalidArgument(m) => RpcError::bad_request(m),
        e => e.into(),
    }
}

/// The user a staging directory is named after: the server's (cairn does not carry the
/// connection's user to its calls).
fn staging_user() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty() && !u.contains('/'))
        .unwrap_or_else(|| "cairn".to_string())
}

impl Services {
    /// `PrepareBulkLoad`: a fresh staging directory; its path is the bulk token.
    pub fn prepare_bulk_load(
        &self,
        req: &pb::PrepareBulkLoadRequest,
    ) -> Result<pb::PrepareBulkLoadResponse, RpcError> {
        let table = table_name(&req.table_name)?;
        let dir = self.rs.prepare_bulk_load(&table, &staging_user())?;
        Ok(pb::PrepareBulkLoadResponse {
            bulk_token: dir.display().to_string(),
        })
    }

    /// `CleanupBulkLoad`: removes the staging directory.
    pub fn cleanup_bulk_load(
        &self,
        req: &pb::CleanupBulkLoadRequest,
    ) -> Result<pb::CleanupBulkLoadResponse, RpcError> {
        self.rs
            .cleanup_bulk_load(&fs_path(&req.bulk_token))
            .map_err(bulk_load_error)?;
        Ok(pb::CleanupBulkLoadResponse {})
    }

    /// `BulkLoadHFile`: `loaded` false when a file no longer fits the region (the client
    /// splits it and retries); true without loading when the request already passed through
    /// this cluster (replication's loop guard).
    pub fn bulk_load_hfile(
        &self,
        req: &pb::BulkLoadHFileRequest,
    ) -> Result<pb::BulkLoadHFileResponse, RpcError> {
        if req.cluster_ids.contains(&self.cluster_id) {
            return Ok(pb::BulkLoadHFileResponse { loaded: true });
        }
        if meta::is_meta(&req.region) {
            return Err(RpcError::bad_request(
                "hbase:meta is maintained by cairn and takes no bulk loads",
            ));
        }
        let family_paths: Vec<(Vec<u8>, PathBuf)> = req
            .family_path
            .iter()
            .map(|fp| (fp.family.clone(), fs_path(&fp.path)))
            .collect();
        let copy = req.copy_file.unwrap_or(false);
        let loaded = match req.bulk_token.as_deref() {
            Some(token) => {
                self.rs
                    .bulk_load_staged(&fs_path(token), &req.region.value, &family_paths, copy)
            }
            None => self.rs.bulk_load_hfiles(
                &req.region.value,
                &family_paths,
                req.assign_seq_num.unwrap_or(false),
                copy,
            ),
        }
        .map_err(bulk_load_error)?;
        Ok(pb::BulkLoadHFileResponse { loaded })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use cairn_cell::KeyValue;
    use cairn_hfile::{HFileWriter, WriterOptions};
    use cairn_region::{
        ColumnFamilyDescriptor, Get, RegionServer, ServerConfig, TableDescriptor, TableName,
    };

    use super::super::errors::DO_NOT_RETRY;
    use super::super::meta::Location;
    use super::super::scanners::scanners;
    use super::*;

    fn services(root: &std::path::Path) -> (Services, Arc<RegionServer>, TableName) {
        let mut c = ServerConfig::new(root);
        c.background = false;
        c.bulk_load_source_dirs = vec![std::env::temp_dir()];
        let rs = RegionServer::open(c).unwrap();
        let t = TableName::parse("t").unwrap();
        rs.create_table(
            TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f")),
            &[b"m".to_vec()],
        )
        .unwrap();
        let s = Services {
            rs: rs.clone(),
            meta: cairn_region::MetaRegion::new(
                rs.clone(),
                Location {
                    host: "localhost".into(),
                    port: 1,
                    start_code: 1,
                },
            ),
            cluster_id: rs.cluster_id().unwrap(),
            scanners: scanners(Duration::from_secs(60), 10_000, 1),
            procedures: super::super::master::Procedures::default(),
            metrics: Arc::default(),
            max_result_size: 1 << 20,
            min_scan_time_limit: Duration::from_millis(10),
            info_port: None,
            cluster: None,
        };
        (s, rs, t)
    }

    fn hfile(dir: &std::path::Path, name: &str, rows: &[&str]) -> String {
        let path = dir.join(name);
        let out = std::fs::File::create(&path).unwrap();
        let mut w =
            HFileWriter::new(out, path.display().to_string(), WriterOptions::default()).unwrap();
        for r in rows {
            let kv = KeyValue::put(r.as_bytes(), b"f", b"q", 1, b"v").unwrap();
            w.append(&kv.as_cell()).unwrap();
        }
        w.finish().unwrap();
        // As HBase's client sends it: a qualified local path.
        format!("file:{}", path.display())
    }

    fn request(region: Vec<u8>, family: &str, path: String) -> pb::BulkLoadHFileRequest {
        pb::BulkLoadHFileRequest {
            region: pb::RegionSpecifier {
                r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
                value: region,
            },
            family_path: vec![pb::bulk_load_h_file_request::FamilyPath {
                family: family.as_bytes().to_vec(),
                path,
            }],
            assign_seq_num: Some(false),
            fs_token: None,
            bulk_token: None,
            copy_file: None,
            cluster_ids: Vec::new(),
            replicate: None,
        }
    }

    #[test]
    fn bulk_load_calls_answer_as_hbase_does() {
        let root = tempfile::tempdir().unwrap();
        let input = tempfile::tempdir().unwrap();
        let (s, rs, t) = services(root.path());
        let r0 = rs.table(&t).unwrap().regions[0].info.region_name_bytes();
        // A file spanning the boundary: loaded=false, nothing loaded.
        let spans = hfile(input.path(), "a", &["b", "x"]);
        let resp = s.bulk_load_hfile(&request(r0.clone(), "f", spans)).unwrap();
        assert!(!resp.loaded);
        assert!(rs.get(&t, Get::new("b")).unwrap().is_empty());
        // Unknown family: DoNotRetryIOException with HBase's message.
        let fits = hfile(input.path(), "b", &["b", "c"]);
        let e = s
            .bulk_load_hfile(&request(r0.clone(), "nope", fits.clone()))
            .unwrap_err();
        assert_eq!(
            (e.class, e.message.as_str()),
            (DO_NOT_RETRY, "No such column family nope")
        );
        // Already seen by this cluster (replication): loaded=true, not loaded.
        let mut seen = request(r0.clone(), "f", fits.clone());
        seen.cluster_ids = vec!["other".into(), s.cluster_id.clone()];
        assert!(s.bulk_load_hfile(&seen).unwrap().loaded);
        assert!(rs.get(&t, Get::new("b")).unwrap().is_empty());
        // Direct, without an assigned sequence id: HBase's bare name.
        assert!(s.bulk_load_hfile(&request(r0, "f", fits)).unwrap().loaded);
        assert_eq!(rs.get(&t, Get::new("c")).unwrap().len(), 1);
        let names: Vec<String> = rs.table(&t).unwrap().regions[0]
            .store(b"f")
            .unwrap()
            .state()
            .files
            .iter()
            .map(|f| f.name())
            .collect();
        assert!(names.len() == 1 && names[0].len() == 32, "{names:?}");
        // Prepare and clean up a staging directory.
        let token = s
            .prepare_bulk_load(&pb::PrepareBulkLoadRequest {
                table_name: super::super::meta::table_name_pb(&t),
                region: None,
            })
            .unwrap()
            .bulk_token;
        assert!(std::path::Path::new(&token).is_dir());
        s.cleanup_bulk_load(&pb::CleanupBulkLoadRequest {
            bulk_token: token.clone(),
            region: None,
        })
        .unwrap();
        assert!(!std::path::Path::new(&token).exists());
    }
}
