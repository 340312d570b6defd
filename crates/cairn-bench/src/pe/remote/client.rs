//! One PE client over HBase's native RPC: PE's per-row loop (`TestBase.testTimed`) and each
//! test's `testRow`, sent as HBase's client sends them — a `Get` per randomRead (a `Multi` of
//! `--multiGet` gets, one per server), puts buffered as `BufferedMutator` buffers them and
//! flushed as one `Multi` per server (`--autoFlush=true`: a `Mutate` each, or a `Multi` of
//! `--multiPut`), scans opened on the region holding their start row and continued region by
//! region. Cells travel in KeyValueCodec cell blocks. Requests and buffers are reused between
//! rows, so a row costs the client little next to the server.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use cairn_cell::{CellType, LATEST_TIMESTAMP};
use cairn_rpc::client::ClientError;
use cairn_rpc::pb;
use indicatif::ProgressBar;
use prost::Message;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::links::{Links, SharedPool};
use super::locator::{Locator, Regions};
use super::scan::RemoteScan;
use crate::pe::client::{
    below, cell_heap_size, fill_data, timed_rows, ClientResult, RowTest, PUT_OVERHEAD,
};
use crate::pe::command::PeCommand;
use crate::pe::keys::{FAMILY_NAME_BASE, ROW_LENGTH};
use crate::pe::options::Settings;

/// Attempts of a request whose region is not where the cache says (HBase's
/// `hbase.client.retries.number`, 15).
const RETRIES: usize = 15;
/// HBase's `hbase.client.pause` (100 ms) times its `RETRY_BACKOFF` table.
const BACKOFF_MS: [u64; 13] = [
    100, 200, 300, 500, 1000, 2000, 4000, 10000, 10000, 10000, 10000, 20000, 20000,
];
/// Exceptions after which HBase's client looks the region up again and retries (their
/// simple names; the server sends the full class names).
const RELOCATE: [&str; 7] = [
    "NotServingRegionException",
    "RegionMovedException",
    "RegionOpeningException",
    "RegionServerStoppedException",
    // A scanner lost: opened again where it stopped.
    "UnknownScannerException",
    "OutOfOrderScannerNextException",
    "ScannerResetException",
];
/// Exceptions after which HBase's client waits and retries the same server.
const WAIT: [&str; 5] = [
    "RegionTooBusyException",
    "ServerNotRunningYetException",
    "CallQueueTooBigException",
    "RetryImmediatelyException",
    "PleaseHoldException",
];

/// Shared by every client of a run.
pub(crate) struct Shared<'a> {
    pub locator: &'a Locator,
    pub settings: &'a Settings,
    pub abort: &'a AtomicBool,
    pub bar: &'a ProgressBar,
    /// Every client and the thread that times them meet here twice (see `run_clients`).
    pub gate: &'a Barrier,
    /// The shared connections of `--oneCon`.
    pub pool: Option<&'a SharedPool>,
}

/// What a failed request calls for.
pub(super) enum Failure {
    /// Look the regions up again, then retry.
    Relocate(String),
    /// Wait, then retry (the region is busy).
    Busy(String),
    /// Give up.
    Fatal(anyhow::Error),
}

fn simple_name(class: &str) -> &str {
    class.rsplit('.').next().unwrap_or(class)
}

fn classify_class(class: &str, message: &str, what: &str) -> Failure {
    let short = simple_name(class);
    let first_line = message.lines().next().unwrap_or("");
    if RELOCATE.contains(&short) {
        Failure::Relocate(format!("{what}: {short}: {first_line}"))
    } else if WAIT.contains(&short) {
        Failure::Busy(format!("{what}: {short}: {first_line}"))
    } else {
        Failure::Fatal(anyhow::anyhow!("{what}: {class}: {first_line}"))
    }
}

pub(super) fn classify(e: ClientError, what: &str) -> Failure {
    match e {
        ClientError::Remote { class, message, .. } => classify_class(&class, &message, what),
        // A server gone or restarting: its regions are elsewhere, or will be.
        ClientError::Io { .. } => Failure::Relocate(format!("{what}: {e}")),
        ClientError::Decode { .. } => Failure::Fatal(anyhow::anyhow!("{what}: {e}")),
    }
}

/// PE's `format(int)` into a fixed buffer (no allocation).
fn fill_row(mut n: u64, row: &mut [u8; ROW_LENGTH]) {
    row.fill(b'0');
    for d in row.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
}

pub(super) fn region_spec(name: &[u8]) -> pb::RegionSpecifier {
    pb::RegionSpecifier {
        r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
        value: name.to_vec(),
    }
}

/// HBase's `FilterAllFilter`, as its client serializes it.
pub(super) fn filter_all() -> pb::Filter {
    pb::Filter {
        name: "org.apache.hadoop.hbase.filter.FilterAllFilter".into(),
        serialized_filter: Some(pb::FilterAllFilter {}.encode_to_vec()),
    }
}

/// Whether a result has cells (with a cell block they are counted, not carried).
fn found(r: Option<&pb::Result>) -> bool {
    r.is_some_and(|r| r.associated_cell_count.unwrap_or(0) > 0 || !r.cell.is_empty())
}

/// A put waiting in the write buffer: its row and where its cells are in the cell buffer.
struct PendingPut {
    row: [u8; ROW_LENGTH],
    cells: Range<usize>,
    count: u32,
}

/// One operation of a `Multi`.
#[derive(Clone, Copy)]
enum Op {
    /// A get of this buffered row (an index into `Client::gets`).
    Get(usize),
    /// A buffered put (an index into `Client::puts`).
    Put(usize),
}

pub(super) struct Client<'a> {
    sh: &'a Shared<'a>,
    pub(super) links: Links<'a>,
    pub(super) regions: Arc<Regions>,
    rng: SmallRng,
    families: Vec<Vec<u8>>,
    qualifiers: Vec<Vec<u8>>,
    /// The columns a get or scan names (`--addColumns`).
    pub(super) columns: Vec<pb::Column>,
    durability: i32,
    /// A single get, kept between rows.
    get_req: pb::GetRequest,
    row: [u8; ROW_LENGTH],
    /// Rows of the `--multiGet` batch being filled.
    gets: Vec<[u8; ROW_LENGTH]>,
    /// Buffered puts and their cells.
    puts: Vec<PendingPut>,
    put_cells: Vec<u8>,
    buffered_bytes: usize,
    /// A cell block being assembled for one request.
    block: Vec<u8>,
    scanner: Option<RemoteScan>,
    result: ClientResult,
}

/// Runs client `index` to the end of its range (or until another client failed). It passes
/// `sh.gate` twice whatever happens, so the others never wait for it forever.
pub(crate) fn run(sh: &Shared<'_>, index: usize) -> Result<ClientResult> {
    let client = setup(sh, index);
    sh.gate.wait();
    sh.gate.wait();
    timed(client?, index)
}

fn setup<'a>(sh: &'a Shared<'a>, index: usize) -> Result<Client<'a>> {
    let s = sh.settings;
    let first = s.start_row + index as u64 * s.rows;
    let families: Vec<Vec<u8>> = (0..s.families)
        .map(|f| format!("{FAMILY_NAME_BASE}{f}").into_bytes())
        .collect();
    let qualifiers: Vec<Vec<u8>> = (0..s.columns).map(|c| c.to_string().into_bytes()).collect();
    let columns = if s.add_columns {
        families
            .iter()
            .map(|f| pb::Column {
                family: f.clone(),
                qualifier: qualifiers.clone(),
            })
            .collect()
    } else {
        Vec::new()
    };
    use pb::mutation_proto::Durability;
    let get_req = pb::GetRequest {
        region: region_spec(b""),
        get: pb::Get {
            row: Vec::with_capacity(ROW_LENGTH),
            column: columns.clone(),
            filter: s.filter_all.then(filter_all),
            cache_blocks: Some(s.cache_blocks),
            ..Default::default()
        },
    };
    Ok(Client {
        sh,
        links: Links::new(sh.pool),
        regions: sh.locator.regions(),
        rng: SmallRng::from_os_rng(),
        families,
        qualifiers,
        columns,
        durability: if s.write_to_wal {
            Durability::SyncWal as i32
        } else {
            Durability::SkipWal as i32
        },
        get_req,
        row: [b'0'; ROW_LENGTH],
        gets: Vec::new(),
        puts: Vec::new(),
        put_cells: Vec::new(),
        buffered_bytes: 0,
        block: Vec::new(),
        scanner: None,
        result: ClientResult::new(index, first, s.rows),
    })
}

/// The timed loop: rows `offset..offset + rows`, as the embedded client runs them.
fn timed(mut c: Client<'_>, index: usize) -> Result<ClientResult> {
    let sh = c.sh;
    let started = Instant::now();
    timed_rows(&mut c, sh.settings, sh.bar, sh.abort, index)?;
    // PE's testTakedown: a partial batch is still sent, the write buffer flushed.
    c.flush_gets()?;
    c.flush_puts()?;
    if let Some(scan) = c.scanner.take() {
        c.close_scan(scan);
    }
    c.result.elapsed = started.elapsed();
    Ok(c.result)
}

impl RowTest for Client<'_> {
    fn test_row(&mut self, i: u64) -> Result<bool> {
        Client::test_row(self, i)
    }
    fn result(&mut self) -> &mut ClientResult {
        &mut self.result
    }
}

impl Client<'_> {
    pub(super) fn settings(&self) -> &Settings {
        self.sh.settings
    }

    fn random_row_number(&mut self) -> u64 {
        let total = self.settings().total_rows;
        below(&mut self.rng, total)
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

    /// Handles a failed attempt `attempt` (from 0): looks the regions up again or waits, or
    /// gives up with the error.
    pub(super) fn recover(&mut self, f: Failure, attempt: usize) -> Result<()> {
        let reason = match f {
            Failure::Fatal(e) => return Err(e),
            Failure::Relocate(r) => {
                // A region that moved is found at once; a server that is down needs time.
                if attempt > 0 {
                    std::thread::sleep(Duration::from_millis(BACKOFF_MS[attempt.min(12)]));
                }
                self.regions = self.sh.locator.refresh(&self.regions)?;
                self.result.relocations += 1;
                r
            }
            Failure::Busy(r) => {
                self.result.busy_waits += 1;
                std::thread::sleep(Duration::from_millis(BACKOFF_MS[attempt.min(12)]));
                r
            }
        };
        if attempt + 1 >= RETRIES {
            bail!("giving up after {RETRIES} attempts: {reason}");
        }
        Ok(())
    }

    /// One `testRow`: true when a request went out (false while a batch fills).
    fn test_row(&mut self, i: u64) -> Result<bool> {
        let command = self.settings().command;
        match command {
            PeCommand::SequentialWrite | PeCommand::RandomWrite => {
                let n = if command == PeCommand::RandomWrite {
                    self.random_row_number()
                } else {
                    i
                };
                self.buffer_put(n);
                let (auto_flush, multi) = (self.settings().auto_flush, self.settings().multi_put);
                if !auto_flush {
                    if self.buffered_bytes >= self.settings().buffer_size {
                        self.flush_puts()?;
                    }
                } else if multi > 0 {
                    if self.puts.len() < multi {
                        return Ok(false);
                    }
                    self.flush_puts()?;
                } else {
                    self.mutate_one()?;
                }
            }
            PeCommand::SequentialRead => {
                fill_row(i, &mut self.row);
                let f = self.get_one()?;
                self.count(f);
            }
            PeCommand::RandomRead => {
                let sleep = self.settings().random_sleep_ms;
                if sleep > 0 {
                    std::thread::sleep(Duration::from_millis(self.rng.random_range(0..sleep)));
                }
                let n = self.random_row_number();
                let multi = self.settings().multi_get;
                if multi > 0 {
                    let mut row = [0u8; ROW_LENGTH];
                    fill_row(n, &mut row);
                    self.gets.push(row);
                    if self.gets.len() < multi {
                        return Ok(false);
                    }
                    self.flush_gets()?;
                } else {
                    fill_row(n, &mut self.row);
                    let f = self.get_one()?;
                    self.count(f);
                }
            }
            PeCommand::Scan => {
                if self.scanner.is_none() {
                    let mut start = [0u8; ROW_LENGTH];
                    fill_row(self.result.offset, &mut start);
                    self.scanner = Some(self.new_scan(&start, b""));
                }
                let mut scan = self.scanner.take().expect("opened above");
                let next = self.scan_next_row(&mut scan);
                self.scanner = Some(scan);
                if next? {
                    self.result.rows_returned += 1;
                }
            }
            PeCommand::ScanRange10
            | PeCommand::ScanRange100
            | PeCommand::ScanRange1000
            | PeCommand::ScanRange10000 => {
                let start = self.random_row_number();
                let (mut from, mut to) = ([0u8; ROW_LENGTH], [0u8; ROW_LENGTH]);
                fill_row(start, &mut from);
                fill_row(start + command.scan_range(), &mut to);
                self.result.rows_returned += self.scan_range(&from, &to)?;
            }
            other => bail!("{other} is not run over RPC (embedded runs only)"),
        }
        Ok(true)
    }

    fn count(&mut self, found: bool) {
        if found {
            self.result.rows_returned += 1;
        } else {
            self.result.misses += 1;
        }
    }

    /// A `Get` of `self.row`, retried where HBase's client retries.
    fn get_one(&mut self) -> Result<bool> {
        for attempt in 0.. {
            let regions = self.regions.clone();
            let r = &regions.list[regions.locate(&self.row)];
            self.get_req.region.value.clear();
            self.get_req.region.value.extend_from_slice(&r.name);
            self.get_req.get.row.clear();
            self.get_req.get.row.extend_from_slice(&self.row);
            match self
                .links
                .call::<pb::GetResponse>(&r.addr, "Get", &self.get_req, &[])
            {
                Ok(reply) => return Ok(found(reply.message.result.as_ref())),
                Err(e) => self.recover(classify(e, "Get"), attempt)?,
            }
        }
        unreachable!("the attempts end in an answer or an error")
    }

    /// Appends a put of row `n` to the write buffer, its cells encoded as the KeyValueCodec
    /// encodes them (latest timestamp: the server stamps them) and its values generated in
    /// place.
    fn buffer_put(&mut self, n: u64) {
        let mut row = [0u8; ROW_LENGTH];
        fill_row(n, &mut row);
        let from = self.put_cells.len();
        let mut heap = PUT_OVERHEAD;
        let mut count = 0;
        for fi in 0..self.families.len() {
            for qi in 0..self.qualifiers.len() {
                let vlen = self.value_len();
                let (f, q) = (&self.families[fi], &self.qualifiers[qi]);
                let klen = 2 + ROW_LENGTH + 1 + f.len() + q.len() + 8 + 1;
                let b = &mut self.put_cells;
                b.extend_from_slice(&((8 + klen + vlen) as u32).to_be_bytes());
                b.extend_from_slice(&(klen as u32).to_be_bytes());
                b.extend_from_slice(&(vlen as u32).to_be_bytes());
                b.extend_from_slice(&(ROW_LENGTH as u16).to_be_bytes());
                b.extend_from_slice(&row);
                b.push(f.len() as u8);
                b.extend_from_slice(f);
                b.extend_from_slice(q);
                b.extend_from_slice(&LATEST_TIMESTAMP.to_be_bytes());
                b.push(CellType::Put.code());
                let at = b.len();
                b.resize(at + vlen, 0);
                fill_data(&mut self.rng, &mut b[at..]);
                heap += cell_heap_size(ROW_LENGTH, f.len(), q.len(), vlen);
                count += 1;
            }
        }
        self.buffered_bytes += heap;
        self.puts.push(PendingPut {
            row,
            cells: from..self.put_cells.len(),
            count,
        });
    }

    fn mutation(&self, p: &PendingPut) -> pb::MutationProto {
        pb::MutationProto {
            row: Some(p.row.to_vec()),
            mutate_type: Some(pb::mutation_proto::MutationType::Put as i32),
            durability: Some(self.durability),
            associated_cell_count: Some(p.count as i32),
            timestamp: Some(LATEST_TIMESTAMP as u64),
            ..Default::default()
        }
    }

    /// The one buffered put as a `Mutate` (`--autoFlush=true`).
    fn mutate_one(&mut self) -> Result<()> {
        let p = self.puts.pop().expect("buffered just now");
        let mut req = pb::MutateRequest {
            region: region_spec(b""),
            mutation: self.mutation(&p),
            condition: None,
            nonce_group: None,
        };
        for attempt in 0.. {
            let regions = self.regions.clone();
            let r = &regions.list[regions.locate(&p.row)];
            req.region.value.clear();
            req.region.value.extend_from_slice(&r.name);
            let cells = &self.put_cells[p.cells.clone()];
            match self
                .links
                .call::<pb::MutateResponse>(&r.addr, "Mutate", &req, cells)
            {
                Ok(_) => break,
                Err(e) => self.recover(classify(e, "Mutate"), attempt)?,
            }
        }
        self.put_cells.clear();
        self.buffered_bytes = 0;
        Ok(())
    }

    /// Sends the `--multiGet` batch.
    fn flush_gets(&mut self) -> Result<()> {
        if self.gets.is_empty() {
            return Ok(());
        }
        let ops: Vec<Op> = (0..self.gets.len()).map(Op::Get).collect();
        let found = self.multi(&ops)?;
        for f in found {
            self.count(f);
        }
        self.gets.clear();
        Ok(())
    }

    /// Sends the write buffer (BufferedMutator's flush).
    fn flush_puts(&mut self) -> Result<()> {
        if self.puts.is_empty() {
            return Ok(());
        }
        let ops: Vec<Op> = (0..self.puts.len()).map(Op::Put).collect();
        self.multi(&ops)?;
        self.puts.clear();
        self.put_cells.clear();
        self.buffered_bytes = 0;
        Ok(())
    }

    fn op_row(&self, op: Op) -> &[u8] {
        match op {
            Op::Get(i) => &self.gets[i],
            Op::Put(i) => &self.puts[i].row,
        }
    }

    /// `ops` as one `Multi` per server (a `RegionAction` per region), retrying the ones that
    /// failed where HBase's client would; whether each get found its row (true for puts).
    fn multi(&mut self, ops: &[Op]) -> Result<Vec<bool>> {
        let mut done: Vec<Option<bool>> = vec![None; ops.len()];
        for attempt in 0.. {
            let regions = self.regions.clone();
            // server -> region -> positions in `ops`
            let mut plan: BTreeMap<&str, BTreeMap<usize, Vec<usize>>> = BTreeMap::new();
            for (k, op) in ops.iter().enumerate() {
                if done[k].is_none() {
                    let ri = regions.locate(self.op_row(*op));
                    plan.entry(regions.list[ri].addr.as_str())
                        .or_default()
                        .entry(ri)
                        .or_default()
                        .push(k);
                }
            }
            if plan.is_empty() {
                break;
            }
            let mut failure: Option<Failure> = None;
            let mut note = |f: Failure| {
                // The gravest failure decides: give up, else look up, else wait.
                let rank = |f: &Failure| match f {
                    Failure::Fatal(_) => 2,
                    Failure::Relocate(_) => 1,
                    Failure::Busy(_) => 0,
                };
                if failure.as_ref().is_none_or(|old| rank(&f) > rank(old)) {
                    failure = Some(f);
                }
            };
            for (addr, by_region) in &plan {
                self.block.clear();
                let mut req = pb::MultiRequest::default();
                for (&ri, ks) in by_region {
                    let mut action = pb::RegionAction {
                        region: region_spec(&regions.list[ri].name),
                        ..Default::default()
                    };
                    for &k in ks {
                        let mut a = pb::Action {
                            index: Some(k as u32),
                            ..Default::default()
                        };
                        match ops[k] {
                            Op::Get(g) => {
                                let mut get = self.get_req.get.clone();
                                get.row.clear();
                                get.row.extend_from_slice(&self.gets[g]);
                                a.get = Some(get);
                            }
                            Op::Put(p) => {
                                let put = &self.puts[p];
                                a.mutation = Some(self.mutation(put));
                                self.block
                                    .extend_from_slice(&self.put_cells[put.cells.clone()]);
                            }
                        }
                        action.action.push(a);
                    }
                    req.region_action.push(action);
                }
                let block = std::mem::take(&mut self.block);
                let answer = self
                    .links
                    .call::<pb::MultiResponse>(addr, "Multi", &req, &block);
                self.block = block;
                let m = match answer {
                    Ok(reply) => reply.message,
                    Err(e) => {
                        note(classify(e, "Multi"));
                        continue;
                    }
                };
                if m.region_action_result.len() != by_region.len() {
                    bail!(
                        "Multi on {addr}: {} region results for {} region actions",
                        m.region_action_result.len(),
                        by_region.len()
                    );
                }
                for (rar, ks) in m.region_action_result.iter().zip(by_region.values()) {
                    if let Some(e) = &rar.exception {
                        note(classify_class(
                            &e.name,
                            &String::from_utf8_lossy(e.value.as_deref().unwrap_or_default()),
                            "Multi",
                        ));
                        continue;
                    }
                    for roe in &rar.result_or_exception {
                        let k = roe.index.unwrap_or(u32::MAX) as usize;
                        if !ks.contains(&k) {
                            bail!("Multi on {addr}: a result for action {k}, not in the request");
                        }
                        if let Some(e) = &roe.exception {
                            note(classify_class(
                                &e.name,
                                &String::from_utf8_lossy(e.value.as_deref().unwrap_or_default()),
                                "Multi",
                            ));
                            continue;
                        }
                        done[k] = Some(match ops[k] {
                            Op::Get(_) => found(roe.result.as_ref()),
                            Op::Put(_) => true,
                        });
                    }
                }
            }
            match failure {
                None if done.iter().all(Option::is_some) => break,
                None => bail!("Multi: the server left some actions without a result"),
                Some(f) => self.recover(f, attempt)?,
            }
        }
        Ok(done.into_iter().map(|d| d.unwrap_or(false)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pe::keys::format_row;

    #[test]
    fn rows_are_pe_keys_without_allocating() {
        let mut row = [0u8; ROW_LENGTH];
        for n in [0, 7, 1234, i32::MAX as u64] {
            fill_row(n, &mut row);
            assert_eq!(row.to_vec(), format_row(n), "{n}");
        }
        // A shorter number after a longer one leaves no digits behind.
        fill_row(99_999, &mut row);
        fill_row(5, &mut row);
        assert_eq!(row.to_vec(), format_row(5));
    }

    #[test]
    fn failures_are_sorted_as_hbases_client_sorts_them() {
        let c = |class: &str| classify_class(class, "line one\nat …", "Get");
        assert!(matches!(
            c("org.apache.hadoop.hbase.NotServingRegionException"),
            Failure::Relocate(_)
        ));
        assert!(matches!(
            c("org.apache.hadoop.hbase.exceptions.RegionMovedException"),
            Failure::Relocate(_)
        ));
        assert!(matches!(
            c("org.apache.hadoop.hbase.RegionTooBusyException"),
            Failure::Busy(_)
        ));
        match c("org.apache.hadoop.hbase.DoNotRetryIOException") {
            Failure::Fatal(e) => assert!(e.to_string().contains("line one"), "{e}"),
            _ => panic!("not fatal"),
        }
    }
}
