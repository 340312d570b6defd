//! PE's `checkTable`, embedded: the table created (or recreated for `--presplit`), and a missing
//! or empty table loaded before a read command.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use cairn_region::{RegionServer, Scan, TableName};

use super::command::PeCommand;
use super::keys::split_keys;
use super::options::Plan;

fn table_is_empty(server: &RegionServer, table: &TableName) -> Result<bool> {
    let mut s = server.scanner(table, Scan::new().limit(1))?;
    Ok(s.next_row()?.is_none())
}

/// Creates (or, with --presplit on a write command, recreates) the table; for read commands
/// loads a missing or empty table first. Returns notes for the report.
pub(crate) fn prepare_table(server: &Arc<RegionServer>, p: &Plan) -> Result<Vec<String>> {
    let s = &p.settings;
    let mut notes = Vec::new();
    let exists = server.table(&p.table).is_ok();
    let splits = split_keys(p.presplit, s.total_rows);
    let mut say = |n: String| {
        eprintln!("cairn pe: {n}");
        notes.push(n);
    };
    if exists && p.presplit > 0 && !s.command.is_read() {
        say(format!(
            "--presplit={}: dropping and recreating table {}",
            p.presplit, p.table
        ));
        if server.is_table_enabled(&p.table)? {
            server.disable_table(&p.table)?;
        }
        server.delete_table(&p.table)?;
    }
    if server.table(&p.table).is_err() {
        server
            .create_table(p.descriptor.clone(), &splits)
            .with_context(|| format!("creating table {}", p.table))?;
        say(format!(
            "created table {} ({} region{})",
            p.table,
            splits.len() + 1,
            if splits.is_empty() { "" } else { "s" }
        ));
    } else if !server.is_table_enabled(&p.table)? {
        server.enable_table(&p.table)?;
    }
    if s.command.is_read() && table_is_empty(server, &p.table)? {
        let mut load = s.clone();
        load.command = PeCommand::SequentialWrite;
        load.sample_rate = 1.0;
        load.multi_put = 0;
        // The whole key space: with --size, random reads may range past rows x clients.
        load.rows = s.total_rows.div_ceil(s.clients as u64).max(s.rows);
        // Loads go through the write buffer, as a user's PE sequentialWrite would by default.
        load.auto_flush = false;
        let loaded = load.rows * s.clients as u64;
        say(format!(
            "table {} is empty: loading {loaded} rows with sequentialWrite ({} x {}) first, not \
             timed, then flushing",
            p.table, s.clients, load.rows
        ));
        let bar = crate::progress::count("loading", loaded);
        let t = Instant::now();
        super::run_clients(server, &p.table, &load, &bar, false).context("loading the table")?;
        server.flush_table(&p.table)?;
        bar.finish_and_clear();
        say(format!(
            "loaded {loaded} rows in {:.3} s",
            t.elapsed().as_secs_f64()
        ));
    }
    Ok(notes)
}
