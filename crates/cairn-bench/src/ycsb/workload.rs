//! YCSB's `CoreWorkload` with its HBase binding (`HBaseClient2`), embedded: each client thread
//! draws operations and keys from YCSB's generators and runs them as gets, puts and scans on
//! the `RegionServer`, measuring each call as YCSB's `DBWrapper` does.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cairn_region::{Durability, Get, Put, RegionServer, Scan, TableName};
use rand::rngs::SmallRng;
use rand::Rng;

use super::generator::{fnvhash64, AckCounter, Counter, ScrambledZipfian, SkewedLatest, Zipfian};
use super::measure::{Measurements, Status};
use crate::store::busy_retry;

/// The core workload's operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

/// `requestdistribution`.
#[derive(Clone, Debug)]
pub enum KeyChooser {
    /// `UniformLongGenerator(lb, ub)`.
    Uniform { lb: u64, ub: u64 },
    /// `ScrambledZipfianGenerator`.
    Zipfian(ScrambledZipfian),
    /// `SkewedLatestGenerator` over the insert counter.
    Latest(SkewedLatest),
}

/// `fieldlengthdistribution`.
#[derive(Clone, Debug)]
pub enum FieldLength {
    Constant(u64),
    Uniform { min: u64, max: u64 },
    Zipfian(Zipfian),
}

/// `scanlengthdistribution`.
#[derive(Clone, Debug)]
pub enum ScanLength {
    Uniform { min: u64, max: u64 },
    Zipfian(Zipfian),
}

/// The workload as `CoreWorkload.init` sets it up.
pub struct Workload {
    pub table: TableName,
    pub family: Vec<u8>,
    pub field_names: Vec<Vec<u8>>,
    pub field_length: FieldLength,
    pub read_all_fields: bool,
    pub read_all_fields_by_name: bool,
    pub write_all_fields: bool,
    pub ordered_inserts: bool,
    pub zero_padding: usize,
    /// `DiscreteGenerator` weights (positive ones only, in YCSB's order).
    pub ops: Vec<(f64, Op)>,
    pub key_chooser: KeyChooser,
    pub scan_length: ScanLength,
    /// The load phase's key sequence (`CounterGenerator(insertstart)`).
    pub key_sequence: Counter,
    /// The run phase's insert keys (`AcknowledgedCounterGenerator(recordcount)`).
    pub insert_sequence: AckCounter,
    /// `durability`: `None` is `USE_DEFAULT`.
    pub durability: Option<Durability>,
}

impl Workload {
    /// `CoreWorkload.buildKeyName`.
    pub fn key(&self, keynum: u64) -> Vec<u8> {
        let n = if self.ordered_inserts {
            keynum as i64
        } else {
            fnvhash64(keynum as i64)
        };
        let v = n.to_string();
        let mut k = String::with_capacity(4 + self.zero_padding.max(v.len()));
        k.push_str("user");
        for _ in v.len()..self.zero_padding {
            k.push('0');
        }
        k.push_str(&v);
        k.into_bytes()
    }
}

/// What the client threads share.
pub struct Shared<'a> {
    pub server: &'a RegionServer,
    pub workload: &'a Workload,
    /// True for the run phase (`dotransactions`).
    pub transactions: bool,
    /// Operations per second per thread (0 = unthrottled).
    pub target_per_thread: f64,
    pub stop: &'a AtomicBool,
    /// Stop after this long (`maxexecutiontime`).
    pub max_time: Option<Duration>,
}

/// One client thread's live counters and measurements (read by the status thread).
pub struct ThreadSlot {
    pub ops_done: AtomicU64,
    pub ops_todo: u64,
    pub measurements: Mutex<Measurements>,
    pub busy_waits: AtomicU64,
    pub errors: AtomicU64,
    pub first_error: Mutex<Option<String>>,
}

impl ThreadSlot {
    pub fn new(ops_todo: u64) -> ThreadSlot {
        ThreadSlot {
            ops_done: AtomicU64::new(0),
            ops_todo,
            measurements: Mutex::new(Measurements::default()),
            busy_waits: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            first_error: Mutex::new(None),
        }
    }
}

struct Client<'a> {
    sh: &'a Shared<'a>,
    slot: &'a ThreadSlot,
    rng: SmallRng,
    keys: KeyChooser,
    field_length: FieldLength,
    scan_length: ScanLength,
    busy: u64,
}

fn micros(since: Instant) -> u64 {
    since.elapsed().as_micros() as u64
}

/// `ClientThread.run`: `ops` operations (0 = until stopped), throttled to the target.
pub fn run_thread(sh: &Shared<'_>, slot: &ThreadSlot, rng: SmallRng, ops: u64) {
    let w = sh.workload;
    let mut c = Client {
        sh,
        slot,
        rng,
        keys: w.key_chooser.clone(),
        field_length: w.field_length.clone(),
        scan_length: w.scan_length.clone(),
        busy: 0,
    };
    let tick = if sh.target_per_thread > 0.0 {
        Some(Duration::from_secs_f64(1.0 / sh.target_per_thread))
    } else {
        None
    };
    // YCSB spreads the threads' first operations over one tick when the target is low.
    if let Some(t) = tick {
        if t >= Duration::from_millis(1) {
            let delay = c.rng.random_range(0..t.as_nanos() as u64);
            std::thread::sleep(Duration::from_nanos(delay));
        }
    }
    let started = Instant::now();
    let mut done = 0u64;
    while (ops == 0 || done < ops) && !sh.stop.load(Ordering::Relaxed) {
        let ok = if sh.transactions {
            c.transaction();
            true
        } else {
            c.insert_for_load()
        };
        if !ok {
            break;
        }
        done += 1;
        slot.ops_done.store(done, Ordering::Relaxed);
        if let Some(t) = tick {
            let deadline = started + t * done as u32;
            let now = Instant::now();
            if deadline > now {
                std::thread::sleep(deadline - now);
            }
        }
        if let Some(max) = sh.max_time {
            if done.is_multiple_of(64) && started.elapsed() >= max {
                sh.stop.store(true, Ordering::Relaxed);
            }
        }
    }
    // DBWrapper.cleanup: measured under CLEANUP (the embedded binding has nothing to close).
    let t = Instant::now();
    let us = micros(t);
    slot.measurements
        .lock()
        .expect("measurements lock")
        .measure("CLEANUP", us);
    slot.busy_waits.fetch_add(c.busy, Ordering::Relaxed);
}

impl Client<'_> {
    fn record(&self, f: impl FnOnce(&mut Measurements)) {
        f(&mut self.slot.measurements.lock().expect("measurements lock"));
    }

    fn note_error(&self, e: &cairn_region::RegionError) {
        self.slot.errors.fetch_add(1, Ordering::Relaxed);
        let mut first = self.slot.first_error.lock().expect("error lock");
        if first.is_none() {
            *first = Some(e.to_string());
        }
    }

    /// `DiscreteGenerator.nextValue`.
    fn choose_op(&mut self) -> Op {
        let ops = &self.sh.workload.ops;
        let sum: f64 = ops.iter().map(|(w, _)| w).sum();
        let mut val: f64 = self.rng.random();
        for &(w, op) in ops {
            let pw = w / sum;
            if val < pw {
                return op;
            }
            val -= pw;
        }
        ops.last().expect("at least one operation").1
    }

    /// `CoreWorkload.nextKeynum`: a key the run may touch (at most the last acknowledged
    /// insert).
    fn next_keynum(&mut self) -> u64 {
        let w = self.sh.workload;
        loop {
            let last = w.insert_sequence.last();
            let k = match &mut self.keys {
                KeyChooser::Uniform { lb, ub } => self.rng.random_range(*lb..=*ub),
                KeyChooser::Zipfian(z) => z.next(&mut self.rng),
                KeyChooser::Latest(l) => l.next(last.max(0) as u64, &mut self.rng),
            };
            if (k as i64) <= last {
                return k;
            }
        }
    }

    fn next_field_length(&mut self) -> usize {
        (match &mut self.field_length {
            FieldLength::Constant(n) => *n,
            FieldLength::Uniform { min, max } => self.rng.random_range(*min..=*max),
            FieldLength::Zipfian(z) => z.next(&mut self.rng),
        }) as usize
    }

    /// `RandomByteIterator`: printable bytes, six from each random int.
    fn random_value(&mut self) -> Vec<u8> {
        let len = self.next_field_length();
        let mut v = vec![0u8; len];
        for chunk in v.chunks_mut(6) {
            let b: i32 = self.rng.random();
            let parts = [
                b & 31,
                (b >> 5) & 63,
                (b >> 10) & 95,
                (b >> 15) & 31,
                (b >> 20) & 63,
                (b >> 25) & 95,
            ];
            for (dst, p) in chunk.iter_mut().zip(parts) {
                *dst = b' ' + p as u8;
            }
        }
        v
    }

    fn random_field(&mut self) -> usize {
        let n = self.sh.workload.field_names.len();
        self.rng.random_range(0..n)
    }

    /// The fields a read or scan asks for: `None` = the whole family.
    fn read_fields(&mut self) -> Option<Vec<usize>> {
        let w = self.sh.workload;
        if !w.read_all_fields {
            Some(vec![self.random_field()])
        } else if w.read_all_fields_by_name {
            Some((0..w.field_names.len()).collect())
        } else {
            None
        }
    }

    /// `buildValues` (every field) or `buildSingleValue` (one random field).
    fn values(&mut self, all: bool) -> Vec<(usize, Vec<u8>)> {
        if all {
            (0..self.sh.workload.field_names.len())
                .map(|i| (i, self.random_value()))
                .collect()
        } else {
            let f = self.random_field();
            vec![(f, self.random_value())]
        }
    }

    /// `HBaseClient2.read`.
    fn db_read(&mut self, key: &[u8], fields: Option<&[usize]>) -> Status {
        let w = self.sh.workload;
        let mut g = Get::new(key);
        match fields {
            None => g = g.family(&w.family),
            Some(fs) => {
                for &f in fs {
                    g = g.column(&w.family, &w.field_names[f]);
                }
            }
        }
        let t = Instant::now();
        let status = match self.sh.server.get(&w.table, g) {
            Ok(cells) if cells.is_empty() => Status::NotFound,
            Ok(_) => Status::Ok,
            Err(e) => {
                self.note_error(&e);
                Status::Error
            }
        };
        let us = micros(t);
        self.record(|m| m.op("READ", status, us));
        status
    }

    /// `HBaseClient2.update` (also its `insert`), measured under `name`.
    fn db_put(&mut self, name: &str, key: &[u8], values: &[(usize, Vec<u8>)]) -> Status {
        let w = self.sh.workload;
        let mut put = Put::new(key);
        if let Some(d) = w.durability {
            put = put.durability(d);
        }
        for (f, v) in values {
            put = put.add(&w.family, &w.field_names[*f], v);
        }
        let t = Instant::now();
        let server = self.sh.server;
        let status = match busy_retry(&mut self.busy, || server.put(&w.table, &put)) {
            Ok(()) => Status::Ok,
            Err(e) => {
                self.note_error(&e);
                Status::Error
            }
        };
        let us = micros(t);
        self.record(|m| m.op(name, status, us));
        status
    }

    /// `HBaseClient2.scan`: `len` rows from `start` (PageFilter plus a client-side limit in
    /// HBase; a scan limit here).
    fn db_scan(&mut self, start: &[u8], len: usize, fields: Option<&[usize]>) -> Status {
        let w = self.sh.workload;
        let mut scan = Scan::new().range(start, b"");
        match fields {
            None => scan = scan.family(&w.family),
            Some(fs) => {
                for &f in fs {
                    scan = scan.column(&w.family, &w.field_names[f]);
                }
            }
        }
        scan.caching = len.max(1);
        let scan = scan.limit(len);
        let t = Instant::now();
        let status = (|| -> cairn_region::Result<()> {
            let mut s = self.sh.server.scanner(&w.table, scan)?;
            let mut n = 0;
            while n < len && s.next_row()?.is_some() {
                n += 1;
            }
            Ok(())
        })();
        let status = match status {
            Ok(()) => Status::Ok,
            Err(e) => {
                self.note_error(&e);
                Status::Error
            }
        };
        let us = micros(t);
        self.record(|m| m.op("SCAN", status, us));
        status
    }

    /// `CoreWorkload.doInsert` (load phase): false stops the thread, as in YCSB.
    fn insert_for_load(&mut self) -> bool {
        let w = self.sh.workload;
        let keynum = w.key_sequence.next();
        let key = w.key(keynum);
        let values = self.values(true);
        self.db_put("INSERT", &key, &values).is_ok()
    }

    /// `CoreWorkload.doTransaction`.
    fn transaction(&mut self) {
        let w = self.sh.workload;
        match self.choose_op() {
            Op::Read => {
                let key = w.key(self.next_keynum());
                let fields = self.read_fields();
                self.db_read(&key, fields.as_deref());
            }
            Op::Update => {
                let key = w.key(self.next_keynum());
                let values = self.values(w.write_all_fields);
                self.db_put("UPDATE", &key, &values);
            }
            Op::Insert => {
                let keynum = w.insert_sequence.next();
                let key = w.key(keynum);
                let values = self.values(true);
                self.db_put("INSERT", &key, &values);
                w.insert_sequence.acknowledge(keynum);
            }
            Op::Scan => {
                let key = w.key(self.next_keynum());
                let len = match &mut self.scan_length {
                    ScanLength::Uniform { min, max } => self.rng.random_range(*min..=*max),
                    ScanLength::Zipfian(z) => z.next(&mut self.rng),
                } as usize;
                let fields = if w.read_all_fields {
                    None
                } else {
                    Some(vec![self.random_field()])
                };
                self.db_scan(&key, len, fields.as_deref());
            }
            Op::ReadModifyWrite => {
                let key = w.key(self.next_keynum());
                let fields = if w.read_all_fields {
                    None
                } else {
                    Some(vec![self.random_field()])
                };
                let values = self.values(w.write_all_fields);
                let t = Instant::now();
                let mut status = self.db_read(&key, fields.as_deref());
                if status.is_ok() {
                    status = self.db_put("UPDATE", &key, &values);
                }
                let us = micros(t);
                self.record(|m| {
                    m.measure("READ-MODIFY-WRITE", us);
                    m.report_status("READ-MODIFY-WRITE", status);
                });
            }
        }
    }
}

/// The per-thread operation counts YCSB deals out: `opcount / threads`, the first
/// `opcount % threads` threads one more.
pub fn split_ops(opcount: u64, threads: usize) -> Vec<u64> {
    (0..threads as u64)
        .map(|i| opcount / threads as u64 + u64::from(i < opcount % threads as u64))
        .collect()
}
