//! A light Thrift1 load generator for the server-scaling benchmark: random `getRow` calls over
//! several connections, each connection keeping `--depth` requests in flight (sent in one
//! write, answered in order), every answer decoded and checked (the row asked for, with a
//! value). A Python client costs more CPU per get than the server does, so on a small machine
//! it measures the client; this one costs a small part of the server's CPU per get, so what it
//! measures is the server.
//!
//!   cargo run --release -p cairn-server --example thrift_get_load -- --port 9090 \
//!       --rows 20000 --connections 4 --depth 16 --seconds 10
//!
//! Prints one JSON object: gets per second, the client's own CPU seconds, and with
//! `--pids P1,P2` the gets per second of those (server) processes' CPU time. Expects the table
//! `bench_thrift` with rows `user%010d` (bench/thrift/happybase_bench.py load).

use std::io::{BufReader, BufWriter};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_thrift::hbase::TRowResult;
use cairn_thrift::thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TFieldIdentifier, TInputProtocol, TMapIdentifier,
    TMessageIdentifier, TMessageType, TOutputProtocol, TSerializable, TStructIdentifier, TType,
};

struct Args {
    host: String,
    port: u16,
    table: String,
    rows: u64,
    connections: usize,
    depth: usize,
    seconds: f64,
    pids: Vec<u32>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        host: "127.0.0.1".into(),
        port: 9090,
        table: "bench_thrift".into(),
        rows: 20_000,
        connections: 4,
        depth: 16,
        seconds: 10.0,
        pids: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {v}: {e}");
        match flag.as_str() {
            "--host" => a.host = v,
            "--port" => a.port = v.parse().map_err(|e| bad(&e))?,
            "--table" => a.table = v,
            "--rows" => a.rows = v.parse().map_err(|e| bad(&e))?,
            "--connections" => a.connections = v.parse().map_err(|e| bad(&e))?,
            "--depth" => a.depth = v.parse().map_err(|e| bad(&e))?,
            "--seconds" => a.seconds = v.parse().map_err(|e| bad(&e))?,
            "--pids" => {
                a.pids = v
                    .split(',')
                    .map(|p| p.parse().map_err(|e| bad(&e)))
                    .collect::<Result<_, _>>()?
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if a.rows == 0 || a.connections == 0 || a.depth == 0 {
        return Err("--rows, --connections and --depth must be positive".into());
    }
    Ok(a)
}

fn key(i: u64) -> Vec<u8> {
    format!("user{i:010}").into_bytes()
}

fn write_get_row(
    o: &mut dyn TOutputProtocol,
    seq: i32,
    table: &[u8],
    row: &[u8],
) -> cairn_thrift::thrift::Result<()> {
    o.write_message_begin(&TMessageIdentifier::new("getRow", TMessageType::Call, seq))?;
    o.write_struct_begin(&TStructIdentifier::new("getRow_args"))?;
    o.write_field_begin(&TFieldIdentifier::new("tableName", TType::String, 1))?;
    o.write_bytes(table)?;
    o.write_field_end()?;
    o.write_field_begin(&TFieldIdentifier::new("row", TType::String, 2))?;
    o.write_bytes(row)?;
    o.write_field_end()?;
    o.write_field_begin(&TFieldIdentifier::new("attributes", TType::Map, 3))?;
    o.write_map_begin(&TMapIdentifier::new(TType::String, TType::String, 0))?;
    o.write_map_end()?;
    o.write_field_end()?;
    o.write_field_stop()?;
    o.write_struct_end()?;
    o.write_message_end()
}

/// Reads one `getRow` answer: the rows it returned, or an error for an exception.
fn read_get_row(i: &mut dyn TInputProtocol, seq: i32) -> Result<Vec<TRowResult>, String> {
    let m = i.read_message_begin().map_err(|e| e.to_string())?;
    if m.message_type != TMessageType::Reply || m.sequence_number != seq {
        return Err(format!("unexpected message {m:?} for request {seq}"));
    }
    let mut rows = None;
    i.read_struct_begin().map_err(|e| e.to_string())?;
    loop {
        let f = i.read_field_begin().map_err(|e| e.to_string())?;
        match (f.field_type, f.id) {
            (TType::Stop, _) => break,
            (TType::List, Some(0)) => {
                let l = i.read_list_begin().map_err(|e| e.to_string())?;
                let mut v = Vec::with_capacity(l.size as usize);
                for _ in 0..l.size {
                    v.push(TRowResult::read_from_in_protocol(i).map_err(|e| e.to_string())?);
                }
                i.read_list_end().map_err(|e| e.to_string())?;
                rows = Some(v);
            }
            (_, id) => {
                return Err(format!(
                    "request {seq} answered with field {id:?}: an error"
                ))
            }
        }
        i.read_field_end().map_err(|e| e.to_string())?;
    }
    i.read_struct_end().map_err(|e| e.to_string())?;
    i.read_message_end().map_err(|e| e.to_string())?;
    rows.ok_or_else(|| format!("request {seq} answered without rows"))
}

fn connection(a: &Args, seed: u64, stop: &AtomicBool, done: &AtomicU64) -> Result<(), String> {
    let stream = TcpStream::connect((a.host.as_str(), a.port)).map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let read_half = stream.try_clone().map_err(|e| e.to_string())?;
    let mut o = TBinaryOutputProtocol::new(BufWriter::with_capacity(64 * 1024, stream), true);
    let mut i = TBinaryInputProtocol::new(BufReader::with_capacity(64 * 1024, read_half), true);
    // xorshift: the keys need only be spread, not unpredictable.
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next_row = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % a.rows
    };
    let mut seq = 0i32;
    let mut asked = Vec::with_capacity(a.depth);
    while !stop.load(Ordering::Relaxed) {
        asked.clear();
        for _ in 0..a.depth {
            seq = seq.wrapping_add(1);
            let row = key(next_row());
            write_get_row(&mut o, seq, a.table.as_bytes(), &row).map_err(|e| e.to_string())?;
            asked.push((seq, row));
        }
        o.flush().map_err(|e| e.to_string())?;
        for (s, row) in &asked {
            let got = read_get_row(&mut i, *s)?;
            let ok = got.len() == 1
                && got[0].row.as_deref() == Some(row.as_slice())
                && got[0]
                    .columns
                    .as_ref()
                    .is_some_and(|c| c.values().any(|cell| cell.value.is_some()));
            if !ok {
                return Err(format!(
                    "getRow {} answered {} rows, not the row with its value",
                    String::from_utf8_lossy(row),
                    got.len()
                ));
            }
        }
        done.fetch_add(a.depth as u64, Ordering::Relaxed);
    }
    Ok(())
}

fn cpu_seconds() -> f64 {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage writes a whole rusage into the pointer it is given, which points at
    // enough space for one; it is read only after the call reports success.
    let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr()) } == 0;
    if !ok {
        return f64::NAN;
    }
    // SAFETY: initialised by the successful call above.
    let u = unsafe { u.assume_init() };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// CPU seconds (user + system) the processes `pids` have used so far.
fn process_cpu_seconds(pids: &[u32]) -> Result<f64, String> {
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let mut total = 0.0;
    for pid in pids {
        let path = format!("/proc/{pid}/stat");
        let stat = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        // Fields after the command name (which may hold spaces) end at its last ')'.
        let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let f: Vec<&str> = after.split_whitespace().collect();
        let field = |i: usize| -> Result<f64, String> {
            f.get(i)
                .and_then(|v| v.parse::<f64>().ok())
                .ok_or_else(|| format!("{path}: no CPU time field"))
        };
        total += (field(11)? + field(12)?) / ticks;
    }
    Ok(total)
}

fn main() {
    let a = match parse_args() {
        Ok(a) => Arc::new(a),
        Err(e) => {
            eprintln!("thrift_get_load: {e}");
            std::process::exit(2);
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..a.connections)
        .map(|c| {
            let (a, stop, done) = (a.clone(), stop.clone(), done.clone());
            std::thread::spawn(move || connection(&a, c as u64 + 1, &stop, &done))
        })
        .collect();
    // Connections open and the first batches go out before the clock starts.
    std::thread::sleep(Duration::from_millis(500));
    let server_cpu = || process_cpu_seconds(&a.pids);
    let fail = |e: String| -> ! {
        eprintln!("thrift_get_load: {e}");
        std::process::exit(1)
    };
    let server0 = server_cpu().unwrap_or_else(|e| fail(e));
    let (start, cpu0, gets0) = (Instant::now(), cpu_seconds(), done.load(Ordering::Relaxed));
    std::thread::sleep(Duration::from_secs_f64(a.seconds));
    let (took, cpu, gets) = (
        start.elapsed().as_secs_f64(),
        cpu_seconds() - cpu0,
        done.load(Ordering::Relaxed) - gets0,
    );
    let server = server_cpu().unwrap_or_else(|e| fail(e)) - server0;
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        match w.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => fail(e),
            Err(_) => fail("a connection's thread panicked".into()),
        }
    }
    let per_server_cpu = if a.pids.is_empty() || server <= 0.0 {
        "null".to_string()
    } else {
        format!("{:.0}", gets as f64 / server)
    };
    println!(
        "{{\"pipelined_gets\": {:.0}, \"pipelined_gets_per_server_cpu_s\": {per_server_cpu}, \"client_cpu_s\": {:.3}, \"server_cpu_s\": {:.3}, \"seconds\": {:.3}, \"connections\": {}, \"depth\": {}}}",
        gets as f64 / took,
        cpu,
        server,
        took,
        a.connections,
        a.depth
    );
}
