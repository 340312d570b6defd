//! Point reads: `get`, `getVer`, `getVerTs` (one column's cells) and the `getRow…` /
//! `getRows…` family (whole rows, at most `max_rows_per_call` in one call). A row that is not
//! there is an empty list, as in HBase.

use std::sync::atomic::Ordering;

use cairn_region::{Get, TimeRange};
use cairn_thrift::hbase::{TCell, TRowResult, Text};

use super::conversions::{add_columns_get, parse_column, row_result, table_name, tcell};
use super::errors::{io, io_error};
use super::{HandlerCore, TResult};

impl HandlerCore {
    /// Up to `n` versions of one column (`family` alone: the family's cells), in `tr`.
    pub(super) fn get_cells(
        &self,
        table: &[u8],
        row: &[u8],
        column: &[u8],
        n: u32,
        tr: Option<TimeRange>,
    ) -> TResult<Vec<TCell>> {
        let t = table_name(table).map_err(io_error)?;
        let (f, q) = parse_column(column);
        let mut get = Get::new(row).versions(n);
        get = match q {
            None => get.family(f),
            Some(q) => get.column(f, q),
        };
        if let Some(tr) = tr {
            get = get.time_range(tr);
        }
        let cells = self.rs.get(&t, get).map_err(io)?;
        self.metrics
            .cells_returned
            .fetch_add(cells.len() as u64, Ordering::Relaxed);
        Ok(cells.iter().map(tcell).collect())
    }

    /// The rows that are there among `rows`, with `columns` (all when empty), in `tr`.
    pub(super) fn get_rows(
        &self,
        table: &[u8],
        rows: Vec<Text>,
        columns: &[Text],
        tr: Option<TimeRange>,
    ) -> TResult<Vec<TRowResult>> {
        let t = table_name(table).map_err(io_error)?;
        if rows.len() > self.config.max_rows_per_call {
            return Err(io_error(format!(
                "{} rows asked in one call; the limit is {}",
                rows.len(),
                self.config.max_rows_per_call
            )));
        }
        let gets: Vec<Get> = rows
            .into_iter()
            .map(|r| {
                let mut g = add_columns_get(Get::new(r), columns);
                if let Some(tr) = tr {
                    g = g.time_range(tr);
                }
                g
            })
            .collect();
        let results = if gets.len() == 1 {
            let g = gets.into_iter().next().expect("one get");
            vec![self.rs.get(&t, g).map_err(io)?]
        } else {
            self.rs.get_many(&t, gets).map_err(io)?
        };
        let out: Vec<TRowResult> = results
            .iter()
            .filter_map(|cells| row_result(cells, false))
            .collect();
        self.count_rows(&out);
        Ok(out)
    }
}
