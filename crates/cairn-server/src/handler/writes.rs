//! Writes: `mutateRow…` (a row's deletes, then its puts), `deleteAll…`, increments and
//! `checkAndPut`.

use std::sync::atomic::Ordering;

use cairn_cell::LATEST_TIMESTAMP;
use cairn_region::{Delete, Increment};
use cairn_thrift::hbase::{BatchMutation, Mutation, TIncrement};

use super::conversions::{
    batches, counter_value, parse_column, row_mutations, table_name, RowMutations,
};
use super::errors::{illegal, io, io_error, io_or_illegal, message};
use super::{HandlerCore, TResult};

impl HandlerCore {
    /// Each row's mutations at `ts`: all the deletes, then all the puts.
    pub(super) fn apply_rows(
        &self,
        table: &[u8],
        batches: &[RowMutations<'_>],
        ts: i64,
    ) -> TResult<()> {
        let t = table_name(table).map_err(io_error)?;
        let mut puts = Vec::new();
        let mut deletes = Vec::new();
        for (row, muts) in batches {
            let (p, d) = row_mutations(row, muts, ts).map_err(illegal)?;
            puts.extend(p);
            deletes.extend(d);
        }
        for d in &deletes {
            self.rs.delete(&t, d).map_err(io_or_illegal)?;
        }
        if puts.len() == 1 {
            self.rs.put(&t, &puts[0]).map_err(io_or_illegal)?;
        } else if !puts.is_empty() {
            self.rs.put_many(&t, &puts).map_err(io_or_illegal)?;
        }
        self.metrics
            .rows_mutated
            .fetch_add(batches.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// `mutateRows` / `mutateRowsTs`.
    pub(super) fn mutate_batches(
        &self,
        table: &[u8],
        row_batches: &[BatchMutation],
        ts: i64,
    ) -> TResult<()> {
        let batches = batches(row_batches).map_err(illegal)?;
        self.apply_rows(table, &batches, ts)
    }

    pub(super) fn delete(&self, table: &[u8], delete: Delete) -> TResult<()> {
        let t = table_name(table).map_err(io_error)?;
        if delete.row.is_empty() {
            return Err(io_error("row is missing (empty row keys are not allowed)"));
        }
        self.rs.delete(&t, &delete).map_err(io)
    }

    /// `deleteAll` / `deleteAllTs`: a column's versions (a family's, for `family` alone) at or
    /// before `ts` (the latest for `None`).
    pub(super) fn delete_column(
        &self,
        table: &[u8],
        row: &[u8],
        column: &[u8],
        ts: Option<i64>,
    ) -> TResult<()> {
        let d = match ts {
            None => Delete::new(row),
            Some(ts) => Delete::with_timestamp(row, ts),
        };
        let d = match parse_column(column) {
            (f, None) => d.family(f),
            (f, Some(q)) => d.columns(f, q),
        };
        self.delete(table, d)
    }

    /// One increment; the counter's new value.
    pub(super) fn increment_one(&self, inc: &TIncrement) -> TResult<i64> {
        let t = table_name(inc.table.as_deref().unwrap_or_default()).map_err(illegal)?;
        let row = inc.row.as_deref().unwrap_or_default();
        if row.is_empty() {
            return Err(illegal("TIncrement.row is missing"));
        }
        let column = inc
            .column
            .as_deref()
            .ok_or_else(|| illegal("TIncrement.column is missing"))?;
        let (f, q) = parse_column(column);
        let cells = self
            .rs
            .increment(
                &t,
                &Increment::new(row).add(f, q.unwrap_or_default(), inc.ammount.unwrap_or(0)),
            )
            .map_err(io_or_illegal)?;
        let kv = cells
            .first()
            .ok_or_else(|| io_error("increment returned no cell"))?;
        counter_value(kv).map_err(io_error)
    }

    /// `incrementRows`: in order, stopping at the first that fails (named by its index).
    pub(super) fn increment_rows(&self, increments: &[TIncrement]) -> TResult<()> {
        for (i, inc) in increments.iter().enumerate() {
            self.increment_one(inc)
                .map_err(|e| io_error(format!("increments[{i}]: {}", message(&e))))?;
        }
        Ok(())
    }

    /// `checkAndPut`: `mput` applied if `column` holds `value` (is absent, for an empty
    /// `value`); whether it was.
    pub(super) fn check_and_put(
        &self,
        table: &[u8],
        row: &[u8],
        column: &[u8],
        value: &[u8],
        mput: &Mutation,
    ) -> TResult<bool> {
        let t = table_name(table).map_err(illegal)?;
        if row.is_empty() {
            return Err(illegal("row is missing (empty row keys are not allowed)"));
        }
        let (f, q) = parse_column(column);
        if f.is_empty() {
            return Err(illegal("column is missing"));
        }
        let (put, delete) = row_mutations(row, std::slice::from_ref(mput), LATEST_TIMESTAMP)
            .map_err(|e| illegal(format!("mput: {e}")))?;
        if delete.is_some() {
            return Err(illegal("mput must be a put (isDelete = false)"));
        }
        let put = put.ok_or_else(|| illegal("mput is missing"))?;
        let expected = (!value.is_empty()).then_some(value);
        self.rs
            .check_and_put(&t, &f, &q.unwrap_or_default(), expected, &put)
            .map_err(io_or_illegal)
    }
}
