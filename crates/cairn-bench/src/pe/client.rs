//! One PE client: the per-row loop of HBase's `TestBase.testTimed` and each test's `testRow`,
//! against the embedded region server.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use cairn_cell::KeyValue;
use cairn_filter::{
    Comparator, CompareOp, Filter, FilterList, Operator, PageFilter, SingleColumnValueFilter,
    WhileMatchFilter,
};
use cairn_region::{Durability, Get, Increment, Put, RegionServer, Scan, TableName, TableScanner};
use hdrhistogram::Histogram;
use indicatif::ProgressBar;
use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};

use super::command::PeCommand;
use super::keys::{format_row, FAMILY_NAME_BASE};
use super::options::Settings;
use crate::store::busy_retry;
use cairn_filter::FilterAllFilter;

/// What one client did.
pub(crate) struct ClientResult {
    pub index: usize,
    /// First row of the client's range (PE's `startRow`).
    pub offset: u64,
    /// Rows the client stepped over (PE's `perClientRunRows`).
    pub rows: u64,
    /// `testRow` calls made (fewer than `rows` with `--sampleRate` < 1).
    pub ops: u64,
    pub elapsed: Duration,
    /// Per-request latency in microseconds (one entry per batch with `--multiGet` /
    /// `--multiPut`; with `--autoFlush=false`, one per buffered put, as PE times each
    /// `BufferedMutator.mutate`).
    pub latency: Histogram<u64>,
    /// Rows read back (gets that found the row, rows scans returned).
    pub rows_returned: u64,
    /// Reads that came back empty.
    pub misses: u64,
    /// Waits on `RegionTooBusy`.
    pub busy_waits: u64,
    /// Region lookups again after a server said a region was not where the cache put it
    /// (runs against a cluster only).
    pub relocations: u64,
    /// Check-and-put calls that did not apply; append retries.
    pub cas_failures: u64,
    /// Requests that took at least `--latencyThreshold` ms (PE's
    /// `numOfReplyOverLatencyThreshold`).
    pub over_threshold: u64,
}

impl ClientResult {
    /// Nothing counted yet for client `index`, whose rows start at `offset`.
    pub(crate) fn new(index: usize, offset: u64, rows: u64) -> ClientResult {
        ClientResult {
            index,
            offset,
            rows,
            ops: 0,
            elapsed: Duration::ZERO,
            latency: Histogram::new(3).expect("3 significant digits is valid"),
            rows_returned: 0,
            misses: 0,
            busy_waits: 0,
            relocations: 0,
            cas_failures: 0,
            over_threshold: 0,
        }
    }
}

/// Shared by every client of a run.
pub(crate) struct Shared<'a> {
    pub server: &'a Arc<RegionServer>,
    pub table: &'a TableName,
    pub settings: &'a Settings,
    pub abort: &'a AtomicBool,
    pub bar: &'a ProgressBar,
    /// Every client and the thread that times them meet here twice: when all are ready, and to
    /// start together (see `run_clients`).
    pub gate: &'a Barrier,
    /// Make one untimed read before the gate (`--warmCache`).
    pub warm: bool,
}

/// PE's `random.nextInt(Integer.MAX_VALUE) % n`: uniform enough in `0..n` for `n` up to PE's
/// key space of 2^31 - 1 rows (`n` > 0).
pub(crate) fn below(rng: &mut SmallRng, n: u64) -> u64 {
    rng.random_range(0..i32::MAX as u64) % n
}

/// PE's `generateData`: runs of eight equal random capital letters, the tail one letter.
///
/// One 64-bit draw yields 13 letters (26^13 < 2^64): each letter is the integer part of the
/// draw, read as a fraction, times 26, and the fractional part goes on to the next. That is
/// a multiply per letter where a draw below 26 cost a draw and two reductions, ~10% of a
/// one-writer put run's CPU at 1 KiB values.
pub(crate) fn generate_data(rng: &mut impl RngCore, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    fill_data(rng, &mut b);
    b
}

/// [`generate_data`] into `b` (its whole length), for callers that reuse a buffer.
pub(crate) fn fill_data(rng: &mut impl RngCore, b: &mut [u8]) {
    let len = b.len();
    let (mut x, mut left) = (0u64, 0u32);
    let mut letter = || {
        if left == 0 {
            x = rng.next_u64();
            left = 13;
        }
        left -= 1;
        let m = u128::from(x) * 26;
        x = m as u64;
        b'A' + (m >> 64) as u8
    };
    let mut i = 0;
    while i + 8 < len {
        b[i..i + 8].fill(letter());
        i += 8;
    }
    b[i..].fill(letter());
}

struct Client<'a> {
    sh: &'a Shared<'a>,
    rng: SmallRng,
    families: Vec<Vec<u8>>,
    qualifiers: Vec<Vec<u8>>,
    /// The CAS tests' qualifier: the test's class name, as PE's `CASTableTest`.
    cas_qualifier: Vec<u8>,
    durability: Durability,
    gets: Vec<Get>,
    puts: Vec<Put>,
    /// Estimated heap size of `puts` when buffering (`--autoFlush=false`).
    buffered_bytes: usize,
    scanner: Option<TableScanner>,
    result: ClientResult,
}

/// Untimed requests of a warmed-up reader. After one 100-row multi-get, 75 new threads still
/// faulted in ~90 of their allocator's 2 MiB pages during the timed part (up to 0.2 s of system
/// CPU); after three, none showed.
const WARM_UP_REQUESTS: usize = 3;

/// Runs client `index` to the end of its range (or until another client failed), with its
/// own random numbers seeded from the operating system's.
///
/// The client passes `sh.gate` twice whatever happens (an error is returned after), so the
/// others never wait for it forever. With `sh.warm`, a read-only command first makes
/// [`WARM_UP_REQUESTS`] untimed reads of random rows (multi-gets of `--multiGet` rows, or
/// gets): a new thread's first reads fault in the allocator's pages for that thread (with
/// cairn's 2 MiB pages, most of a 75-thread run's system CPU), which a long-running server's
/// threads paid long ago.
pub(crate) fn run(sh: &Shared<'_>, index: usize) -> Result<ClientResult> {
    let client = setup(sh, index);
    let warmed = match client {
        Ok(mut c) if sh.warm && sh.settings.command.is_read() => c.warm_up().map(|()| c),
        other => other,
    };
    sh.gate.wait();
    sh.gate.wait();
    timed(warmed?, index)
}

fn setup<'a>(sh: &'a Shared<'a>, index: usize) -> Result<Client<'a>> {
    let s = sh.settings;
    // CASTableTest: every client works the same rows, so operations overlap.
    let first = if s.command.is_cas() {
        0
    } else {
        s.start_row + index as u64 * s.rows
    };
    Ok(Client {
        sh,
        rng: SmallRng::from_os_rng(),
        families: (0..s.families)
            .map(|f| format!("{FAMILY_NAME_BASE}{f}").into_bytes())
            .collect(),
        qualifiers: (0..s.columns).map(|c| c.to_string().into_bytes()).collect(),
        cas_qualifier: s.command.class_name().as_bytes().to_vec(),
        durability: if s.write_to_wal {
            Durability::SyncWal
        } else {
            Durability::SkipWal
        },
        gets: Vec::new(),
        puts: Vec::new(),
        buffered_bytes: 0,
        scanner: None,
        result: ClientResult::new(index, first, s.rows),
    })
}

/// The timed loop of a client set up by [`setup`]: rows `offset..offset + rows`.
fn timed(mut c: Client<'_>, index: usize) -> Result<ClientResult> {
    let sh = c.sh;
    let started = Instant::now();
    timed_rows(&mut c, sh.settings, sh.bar, sh.abort, index)?;
    // PE's testTakedown: a partial multi-get batch is still sent (its time counts toward the
    // client's, not toward the latency histogram).
    c.flush_batches()?;
    c.result.elapsed = started.elapsed();
    Ok(c.result)
}

/// A client the timed loop drives, embedded or over RPC.
pub(crate) trait RowTest {
    /// Runs PE's test for row `i`; whether a request went out (a batch counts when sent).
    fn test_row(&mut self, i: u64) -> Result<bool>;
    /// Where its counts go.
    fn result(&mut self) -> &mut ClientResult;
}

impl RowTest for Client<'_> {
    fn test_row(&mut self, i: u64) -> Result<bool> {
        Client::test_row(self, i)
    }
    fn result(&mut self) -> &mut ClientResult {
        &mut self.result
    }
}

/// PE's timed loop over the client's rows `offset..offset + rows`, `--cycles` times, every
/// `1 / --sampleRate`th row: each row's latency past `--measureAfter` recorded, and
/// `--latencyThreshold` counted; the progress bar advanced and `abort` heeded every 1,024
/// rows. The caller sends what is still batched and sets the elapsed time.
pub(crate) fn timed_rows(
    c: &mut impl RowTest,
    s: &Settings,
    bar: &ProgressBar,
    abort: &AtomicBool,
    index: usize,
) -> Result<()> {
    let first = c.result().offset;
    let last = first + s.rows;
    // PE: `everyN = (int) (totalRows / (totalRows * sampleRate))`.
    let every_n = ((1.0 / s.sample_rate) as u64).max(1);
    let mut since_tick = 0u64;
    let threshold_us = s.latency_threshold_ms.saturating_mul(1000);
    'cycles: for _ in 0..s.cycles {
        for i in first..last {
            if i % every_n != 0 {
                continue;
            }
            let t = Instant::now();
            let sent = c
                .test_row(i)
                .with_context(|| format!("client {index}, row {i}"))?;
            let r = c.result();
            // PE measures rows past `--measureAfter` of the client's range only (by default
            // all but the first), and a batch only when it is sent.
            if sent && i - first > s.measure_after {
                let us = t.elapsed().as_micros().max(1) as u64;
                // `record` grows the auto-resizing histogram; `saturating_record` alone would
                // clamp every latency past its initial range (2047 us).
                if r.latency.record(us).is_err() {
                    r.latency.saturating_record(us);
                }
                if threshold_us > 0 && us >= threshold_us {
                    r.over_threshold += 1;
                }
            }
            r.ops += 1;
            since_tick += 1;
            if since_tick == 1024 {
                bar.inc(since_tick);
                since_tick = 0;
                if abort.load(Ordering::Relaxed) {
                    break 'cycles;
                }
            }
        }
    }
    bar.inc(since_tick);
    Ok(())
}

impl Client<'_> {
    fn settings(&self) -> &Settings {
        self.sh.settings
    }

    /// Untimed reads of random rows, counted nowhere (see [`run`]).
    fn warm_up(&mut self) -> Result<()> {
        let (server, table) = (self.sh.server, self.sh.table);
        for _ in 0..WARM_UP_REQUESTS {
            let gets: Vec<Get> = (0..self.settings().multi_get.max(1))
                .map(|_| {
                    let row = self.random_row();
                    self.add_columns_get(Get::new(row))
                })
                .collect();
            server.get_many(table, gets).context("warm-up read")?;
        }
        Ok(())
    }

    fn random_row(&mut self) -> Vec<u8> {
        let total = self.settings().total_rows;
        format_row(below(&mut self.rng, total))
    }

    fn value_len(&mut self) -> usize {
        let s = self.sh.settings;
        if let Some(z) = &s.value_zipf {
            return z.sample(&mut self.rng) as usize;
        }
        if s.value_random {
            let n = s.value_size as u64;
            if n == 0 {
                0
            } else {
                below(&mut self.rng, n) as usize
            }
        } else {
            s.value_size
        }
    }

    fn add_columns_get(&self, mut g: Get) -> Get {
        if self.settings().add_columns {
            for f in &self.families {
                for q in &self.qualifiers {
                    g = g.column(f, q);
                }
            }
        }
        if self.settings().filter_all {
            g = g.filter(Box::new(FilterAllFilter));
        }
        g.options.cache_blocks = self.settings().cache_blocks;
        g
    }

    fn add_columns_scan(&self, mut s: Scan) -> Scan {
        if self.settings().add_columns {
            for f in &self.families {
                for q in &self.qualifiers {
                    s = s.column(f, q);
                }
            }
        }
        s.caching = self.settings().caching;
        s.options.cache_blocks = self.settings().cache_blocks;
        s
    }

    fn count_read(&mut self, row: &[KeyValue]) {
        if row.is_empty() {
            self.result.misses += 1;
        } else {
            self.result.rows_returned += 1;
        }
    }

    /// One `testRow`: true when a request went out (false while a batch fills).
    fn test_row(&mut self, i: u64) -> Result<bool> {
        let sh = self.sh;
        let (server, table) = (sh.server, sh.table);
        match self.settings().command {
            PeCommand::SequentialWrite | PeCommand::RandomWrite => {
                let row = if self.settings().command == PeCommand::RandomWrite {
                    self.random_row()
                } else {
                    format_row(i)
                };
                let mut put = Put::new(&row).durability(self.durability);
                for fi in 0..self.families.len() {
                    for qi in 0..self.qualifiers.len() {
                        let len = self.value_len();
                        let v = generate_data(&mut self.rng, len);
                        put = put.add(&self.families[fi], &self.qualifiers[qi], v);
                    }
                }
                let multi = self.settings().multi_put;
                if !self.settings().auto_flush {
                    self.buffered_bytes += put_heap_size(&put);
                    self.puts.push(put);
                    if self.buffered_bytes >= self.settings().buffer_size {
                        self.flush_puts()?;
                    }
                } else if multi > 0 {
                    self.puts.push(put);
                    if self.puts.len() < multi {
                        return Ok(false);
                    }
                    self.flush_puts()?;
                } else {
                    busy_retry(&mut self.result.busy_waits, || server.put(table, &put))?;
                }
            }
            PeCommand::SequentialRead => {
                let g = self.add_columns_get(Get::new(format_row(i)));
                let r = server.get(table, g)?;
                self.count_read(&r);
            }
            PeCommand::RandomRead => {
                let sleep = self.settings().random_sleep_ms;
                if sleep > 0 {
                    // PE: `Thread.sleep(nextInt(randomSleep))` before the get, inside its time.
                    std::thread::sleep(Duration::from_millis(self.rng.random_range(0..sleep)));
                }
                let row = self.random_row();
                let g = self.add_columns_get(Get::new(row));
                let multi = self.settings().multi_get;
                if multi > 0 {
                    self.gets.push(g);
                    if self.gets.len() < multi {
                        return Ok(false);
                    }
                    let gets = std::mem::take(&mut self.gets);
                    for r in server.get_many(table, gets)? {
                        self.count_read(&r);
                    }
                } else {
                    let r = server.get(table, g)?;
                    self.count_read(&r);
                }
            }
            PeCommand::Scan => {
                if self.scanner.is_none() {
                    let scan = Scan::new().range(format_row(self.result.offset), b"");
                    let mut scan = self.add_columns_scan(scan);
                    if self.settings().filter_all {
                        scan = scan.filter(Box::new(FilterAllFilter));
                    }
                    self.scanner = Some(server.scanner(table, scan)?);
                }
                let next = self.scanner.as_mut().expect("opened above").next_row()?;
                if next.is_some() {
                    self.result.rows_returned += 1;
                }
            }
            PeCommand::RandomSeekScan => {
                let scan = Scan::new().range(self.random_row(), b"");
                let mut scan = self.add_columns_scan(scan);
                let mut list: Vec<Box<dyn Filter>> = Vec::new();
                if self.settings().filter_all {
                    list.push(Box::new(FilterAllFilter));
                }
                list.push(Box::new(WhileMatchFilter::new(Box::new(
                    PageFilter::new(120).expect("positive page size"),
                ))));
                scan = scan.filter(Box::new(FilterList::new(Operator::MustPassAll, list)));
                self.drain(server.scanner(table, scan)?)?;
            }
            PeCommand::ScanRange10
            | PeCommand::ScanRange100
            | PeCommand::ScanRange1000
            | PeCommand::ScanRange10000 => {
                let range = self.settings().command.scan_range();
                let total = self.settings().total_rows;
                let start = below(&mut self.rng, total);
                let scan = Scan::new().range(format_row(start), format_row(start + range));
                let mut scan = self.add_columns_scan(scan);
                if self.settings().filter_all {
                    scan = scan.filter(Box::new(FilterAllFilter));
                }
                self.drain(server.scanner(table, scan)?)?;
            }
            PeCommand::FilterScan => {
                let len = self.value_len();
                let value = generate_data(&mut self.rng, len);
                let mut list: Vec<Box<dyn Filter>> = vec![Box::new(
                    SingleColumnValueFilter::new(
                        self.families[0].clone(),
                        self.qualifiers[0].clone(),
                        CompareOp::Equal,
                        Comparator::binary(value),
                    )
                    .expect("EQUAL is a valid operator"),
                )];
                if self.settings().filter_all {
                    list.push(Box::new(FilterAllFilter));
                }
                let mut scan = Scan::new();
                for q in &self.qualifiers {
                    scan = scan.column(&self.families[0], q);
                }
                scan.caching = self.settings().caching;
                scan.options.cache_blocks = self.settings().cache_blocks;
                let scan = scan.filter(Box::new(FilterList::new(Operator::MustPassAll, list)));
                self.drain(server.scanner(table, scan)?)?;
            }
            PeCommand::Increment => {
                let mut inc = Increment::new(format_row(i));
                for f in &self.families {
                    inc = inc.add(f, &self.cas_qualifier, 1);
                }
                busy_retry(&mut self.result.busy_waits, || {
                    server.increment(table, &inc)
                })?;
            }
            PeCommand::Append => {
                // cairn-region has no Append: read the value and check-and-put it with the
                // row key appended, again if another client got there first.
                let row = format_row(i);
                for fi in 0..self.families.len() {
                    let f = self.families[fi].clone();
                    let q = self.cas_qualifier.clone();
                    loop {
                        let cur = server.get(table, Get::new(&row).column(&f, &q))?;
                        let old = cur.first().map(|c| c.as_cell().value.to_vec());
                        let mut new = old.clone().unwrap_or_default();
                        new.extend_from_slice(&row);
                        let put = Put::new(&row).add(&f, &q, &new);
                        let done = busy_retry(&mut self.result.busy_waits, || {
                            server.check_and_put(table, &f, &q, old.as_deref(), &put)
                        })?;
                        if done {
                            break;
                        }
                        self.result.cas_failures += 1;
                    }
                }
            }
            PeCommand::CheckAndPut => {
                // Put a known value, then check-and-put on it (PE's CheckAndPutTest).
                let row = format_row(i);
                let f = self.families[0].clone();
                let q = self.cas_qualifier.clone();
                let put = Put::new(&row).add(&f, &q, &row);
                busy_retry(&mut self.result.busy_waits, || server.put(table, &put))?;
                let ok = busy_retry(&mut self.result.busy_waits, || {
                    server.check_and_put(table, &f, &q, Some(&row), &put)
                })?;
                if !ok {
                    self.result.cas_failures += 1;
                }
            }
        }
        Ok(true)
    }

    fn drain(&mut self, mut scanner: TableScanner) -> Result<()> {
        while scanner.next_row()?.is_some() {
            self.result.rows_returned += 1;
        }
        Ok(())
    }

    fn flush_batches(&mut self) -> Result<()> {
        let (server, table) = (self.sh.server, self.sh.table);
        if !self.gets.is_empty() {
            let gets = std::mem::take(&mut self.gets);
            for r in server.get_many(table, gets)? {
                self.count_read(&r);
            }
        }
        self.flush_puts()
    }

    /// Sends the buffered puts in one `put_many` (BufferedMutator's flush).
    fn flush_puts(&mut self) -> Result<()> {
        if self.puts.is_empty() {
            return Ok(());
        }
        let (server, table) = (self.sh.server, self.sh.table);
        let puts = std::mem::take(&mut self.puts);
        self.buffered_bytes = 0;
        busy_retry(&mut self.result.busy_waits, || {
            server.put_many(table, &puts)
        })?;
        Ok(())
    }
}

/// Roughly HBase's `Put.heapSize()`, which BufferedMutator sums against its write buffer: each
/// cell as a KeyValue (its serialized length plus object overhead), plus the Put's own.
fn put_heap_size(put: &Put) -> usize {
    PUT_OVERHEAD
        + put
            .cells
            .iter()
            .map(|(f, q, _, v)| cell_heap_size(put.row.len(), f.len(), q.len(), v.len()))
            .sum::<usize>()
}

/// A Put's own share of [`put_heap_size`].
pub(crate) const PUT_OVERHEAD: usize = 96;

/// One cell's share of [`put_heap_size`], from its parts' lengths.
pub(crate) fn cell_heap_size(row: usize, family: usize, qualifier: usize, value: usize) -> usize {
    const CELL_OVERHEAD: usize = 64;
    CELL_OVERHEAD + KEY_VALUE_FIXED + row + family + qualifier + value
}

/// KeyValue's fixed bytes: key and value lengths, row length, family length, timestamp, type.
const KEY_VALUE_FIXED: usize = 4 + 4 + 2 + 1 + 8 + 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_values_are_runs_of_capitals() {
        let mut r = SmallRng::seed_from_u64(7);
        for len in [0, 1, 7, 8, 9, 16, 100] {
            let v = generate_data(&mut r, len);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|b| b.is_ascii_uppercase()));
        }
        let v = generate_data(&mut r, 17);
        assert!(v[..8].iter().all(|&b| b == v[0]));
        assert!(v[8..16].iter().all(|&b| b == v[8]));
        // Every letter comes up, about equally often (26,000 runs: ~1,000 each).
        let mut counts = [0u32; 26];
        for _ in 0..1000 {
            for run in generate_data(&mut r, 26 * 8).chunks(8) {
                counts[usize::from(run[0] - b'A')] += 1;
            }
        }
        assert!(
            counts.iter().all(|&c| (800..1200).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn random_rows_stay_in_range() {
        let mut r = SmallRng::seed_from_u64(1);
        assert!((0..10_000).all(|_| below(&mut r, 13) < 13));
    }
}
