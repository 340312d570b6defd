//! PE's `checkTable` over RPC: the table's state and the `MasterService` calls that create,
//! disable and delete it, each waited for as HBase's `Admin` waits (the procedure's result,
//! then the regions in meta).

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use cairn_region::TableDescriptor;
use cairn_rpc::client::ClientError;
use cairn_rpc::pb;

use super::conn::Conn;
use super::locator;

/// How long a table procedure may take.
const PROCEDURE_WAIT: Duration = Duration::from_secs(120);

/// HBase's exception for a table that does not exist.
const TABLE_NOT_FOUND: &str = "org.apache.hadoop.hbase.TableNotFoundException";

/// A `TableName` message.
pub(crate) fn table_pb(t: &cairn_region::TableName) -> pb::TableName {
    pb::TableName {
        namespace: t.namespace.as_bytes().to_vec(),
        qualifier: t.qualifier.as_bytes().to_vec(),
    }
}

/// The table's schema as `CreateTable` takes it: each family's attributes by HBase's names,
/// the table's values (`SPLIT_POLICY`, …).
pub(crate) fn schema(d: &TableDescriptor) -> pb::TableSchema {
    let pair = |k: &str, v: &str| pb::BytesBytesPair {
        first: k.as_bytes().to_vec(),
        second: v.as_bytes().to_vec(),
    };
    pb::TableSchema {
        table_name: Some(table_pb(&d.name)),
        attributes: d.values.iter().map(|(k, v)| pair(k, v)).collect(),
        column_families: d
            .families
            .iter()
            .map(|f| pb::ColumnFamilySchema {
                name: f.name.clone(),
                attributes: f.attributes().iter().map(|(k, v)| pair(k, v)).collect(),
                configuration: Vec::new(),
            })
            .collect(),
        configuration: Vec::new(),
    }
}

/// The master's `MasterService`.
pub(crate) struct Master {
    conn: Conn,
}

impl Master {
    /// Connects to the master at `addr`.
    pub fn connect(addr: &str) -> Result<Master> {
        Ok(Master {
            conn: Conn::open(addr, "MasterService")?,
        })
    }

    /// `Some(enabled)` for an existing table, `None` for a missing one.
    pub fn table_state(&mut self, table: &pb::TableName) -> Result<Option<bool>> {
        let req = pb::GetTableStateRequest {
            table_name: table.clone(),
        };
        match self
            .conn
            .call::<pb::GetTableStateResponse>("GetTableState", &req, &[])
        {
            Ok(r) => Ok(Some(
                r.message.table_state.state == pb::table_state::State::Enabled as i32,
            )),
            Err(ClientError::Remote { class, .. }) if class == TABLE_NOT_FOUND => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Waits until the master's procedure `proc_id` has finished; its failure is an error.
    fn wait_procedure(&mut self, what: &str, proc_id: Option<u64>) -> Result<()> {
        let Some(proc_id) = proc_id else {
            return Ok(());
        };
        use pb::get_procedure_result_response::State;
        let deadline = Instant::now() + PROCEDURE_WAIT;
        loop {
            let r = self
                .conn
                .call::<pb::GetProcedureResultResponse>(
                    "getProcedureResult",
                    &pb::GetProcedureResultRequest { proc_id },
                    &[],
                )?
                .message;
            if let Some(e) = r.exception {
                bail!("{what}: procedure {proc_id} failed: {e:?}");
            }
            // NOT_FOUND: finished so long ago that the master forgot it, or never kept.
            if r.state != State::Running as i32 {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("{what}: procedure {proc_id} still running after {PROCEDURE_WAIT:?}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Disables (when enabled) and deletes the table.
    pub fn drop_table(&mut self, table: &pb::TableName, enabled: bool) -> Result<()> {
        let name = String::from_utf8_lossy(&locator::meta_name(table)).into_owned();
        if enabled {
            let r = self.conn.call::<pb::DisableTableResponse>(
                "DisableTable",
                &pb::DisableTableRequest {
                    table_name: table.clone(),
                    ..Default::default()
                },
                &[],
            )?;
            let id = r.message.proc_id;
            self.wait_procedure(&format!("disabling {name}"), id)?;
        }
        let r = self.conn.call::<pb::DeleteTableResponse>(
            "DeleteTable",
            &pb::DeleteTableRequest {
                table_name: table.clone(),
                ..Default::default()
            },
            &[],
        )?;
        let id = r.message.proc_id;
        self.wait_procedure(&format!("deleting {name}"), id)
    }

    /// Enables a disabled table.
    pub fn enable_table(&mut self, table: &pb::TableName) -> Result<()> {
        let r = self.conn.call::<pb::EnableTableResponse>(
            "EnableTable",
            &pb::EnableTableRequest {
                table_name: table.clone(),
                ..Default::default()
            },
            &[],
        )?;
        let id = r.message.proc_id;
        self.wait_procedure("enabling the table", id)
    }

    /// Creates the table with `splits` and waits until meta shows all its regions assigned.
    pub fn create_table(
        &mut self,
        d: &TableDescriptor,
        splits: &[Vec<u8>],
        meta_addr: &str,
    ) -> Result<usize> {
        let req = pb::CreateTableRequest {
            table_schema: schema(d),
            split_keys: splits.to_vec(),
            nonce_group: None,
            nonce: None,
        };
        let r = self
            .conn
            .call::<pb::CreateTableResponse>("CreateTable", &req, &[])
            .with_context(|| format!("creating table {}", d.name))?;
        let id = r.message.proc_id;
        self.wait_procedure(&format!("creating {}", d.name), id)?;
        let table = table_pb(&d.name);
        let deadline = Instant::now() + PROCEDURE_WAIT;
        loop {
            match locator::load(meta_addr, &table) {
                Ok(r) if r.list.len() == splits.len() + 1 => return Ok(r.list.len()),
                Ok(_) | Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                Ok(r) => bail!(
                    "created {} with {} regions, meta shows {}",
                    d.name,
                    splits.len() + 1,
                    r.list.len()
                ),
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_region::{ColumnFamilyDescriptor, TableName};

    #[test]
    fn the_schema_names_families_and_attributes_as_hbase_does() {
        let d = TableDescriptor::new(TableName::parse("TestTable").unwrap())
            .with_family(ColumnFamilyDescriptor::new("info0"))
            .with_value("SPLIT_POLICY", "X");
        let s = schema(&d);
        assert_eq!(s.table_name.unwrap().qualifier, b"TestTable");
        assert_eq!(s.column_families[0].name, b"info0");
        let attr = |k: &str| {
            s.column_families[0]
                .attributes
                .iter()
                .find(|p| p.first == k.as_bytes())
                .map(|p| String::from_utf8_lossy(&p.second).into_owned())
        };
        assert_eq!(attr("BLOOMFILTER").as_deref(), Some("ROW"));
        assert_eq!(attr("VERSIONS").as_deref(), Some("1"));
        assert_eq!(s.attributes[0].first, b"SPLIT_POLICY");
    }
}
