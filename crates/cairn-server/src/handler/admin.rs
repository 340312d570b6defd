//! Tables: create, delete, enable and disable them, list them, their families and regions,
//! and compaction requests by table or region name.

use std::collections::BTreeMap;

use cairn_region::TableDescriptor;
use cairn_thrift::hbase::{ColumnDescriptor, TRegionInfo, Text};

use super::conversions::{column_descriptor, family_from_thrift, table_name};
use super::errors::{create_table_error, illegal, io, io_error};
use super::{HandlerCore, TResult};

impl HandlerCore {
    pub(super) fn enable_table(&self, name: &[u8]) -> TResult<()> {
        let t = table_name(name).map_err(io_error)?;
        self.rs.enable_table(&t).map_err(io)
    }

    pub(super) fn disable_table(&self, name: &[u8]) -> TResult<()> {
        let t = table_name(name).map_err(io_error)?;
        self.rs.disable_table(&t).map_err(io)
    }

    pub(super) fn is_table_enabled(&self, name: &[u8]) -> TResult<bool> {
        let t = table_name(name).map_err(io_error)?;
        self.rs.is_table_enabled(&t).map_err(io)
    }

    pub(super) fn table_names(&self) -> Vec<Text> {
        self.rs
            .table_names()
            .iter()
            .map(|t| t.to_string().into_bytes())
            .collect()
    }

    /// Every table and whether it is enabled (a table dropped meanwhile is left out).
    pub(super) fn table_names_enabled(&self) -> BTreeMap<Text, bool> {
        let mut out = BTreeMap::new();
        for t in self.rs.table_names() {
            if let Ok(enabled) = self.rs.is_table_enabled(&t) {
                out.insert(t.to_string().into_bytes(), enabled);
            }
        }
        out
    }

    /// The table's families by `family:` name.
    pub(super) fn column_descriptors(
        &self,
        name: &[u8],
    ) -> TResult<BTreeMap<Text, ColumnDescriptor>> {
        let t = table_name(name).map_err(io_error)?;
        let table = self.rs.table(&t).map_err(io)?;
        Ok(table
            .descriptor
            .families
            .iter()
            .map(|f| {
                let d = column_descriptor(f);
                (d.name.clone().unwrap_or_default(), d)
            })
            .collect())
    }

    /// The table's regions, each on this server: the live routing table, so a split's
    /// daughters (or a merge's child) show as soon as they serve, and its parents no more.
    pub(super) fn table_regions(&self, name: &[u8]) -> TResult<Vec<TRegionInfo>> {
        let t = table_name(name).map_err(io_error)?;
        let table = self.rs.table(&t).map_err(io)?;
        Ok(table
            .regions
            .iter()
            .map(|r| TRegionInfo {
                start_key: Some(r.info.start_key.clone()),
                end_key: Some(r.info.end_key.clone()),
                id: Some(r.info.region_id as i64),
                // The name's bytes as they are: a binary start key stays whole.
                name: Some(r.info.region_name_bytes()),
                version: Some(1),
                server_name: Some(self.config.server_name.clone().into_bytes()),
                port: Some(self.config.port),
            })
            .collect())
    }

    pub(super) fn create_table(
        &self,
        name: &[u8],
        column_families: &[ColumnDescriptor],
    ) -> TResult<()> {
        let t = table_name(name).map_err(illegal)?;
        if column_families.is_empty() {
            return Err(illegal(format!(
                "table {t}: columnFamilies is empty; a table needs at least one family"
            )));
        }
        let mut desc = TableDescriptor::new(t.clone());
        for (i, c) in column_families.iter().enumerate() {
            desc = desc.with_family(family_from_thrift(i, c).map_err(illegal)?);
        }
        self.rs.create_table(desc, &[]).map_err(create_table_error)
    }

    pub(super) fn delete_table(&self, name: &[u8]) -> TResult<()> {
        let t = table_name(name).map_err(io_error)?;
        self.rs.delete_table(&t).map_err(io)
    }

    /// Asks for a compaction of a table, or of the table of a region (`table,startKey,id.
    /// encoded.` or the encoded name alone).
    pub(super) fn compact(&self, name: &[u8], major: bool) -> TResult<()> {
        if let Ok(t) = table_name(name) {
            if self.rs.table(&t).is_ok() {
                return self.rs.request_compaction(&t, major).map_err(io);
            }
        }
        let wanted = String::from_utf8_lossy(name);
        for t in self.rs.table_names() {
            let Ok(table) = self.rs.table(&t) else {
                continue;
            };
            for r in &table.regions {
                if r.info.region_name() == wanted || r.info.encoded_name == wanted {
                    return self.rs.request_compaction(&t, major).map_err(io);
                }
            }
        }
        Err(io_error(format!("no table or region named {wanted:?}")))
    }
}
