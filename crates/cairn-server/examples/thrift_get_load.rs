//! A light Thrift1 load generator for the server-scaling benchmark: random `getRow` calls over
//! several connections, each connection keeping `--depth` requests in flight (sent in one
//! write, answered in order), every answer checked (a reply to that request holding one row,
//! the row asked for, with a value). A Python client costs more CPU per get than the server
//! does, so on a small machine it measures the client. This one writes its calls and walks the
//! answers by hand, without building Thrift structs, at about a tenth of the server's CPU per
//! get, so on a machine whose CPUs it shares with the server what it measures is the server.
//!
//!   cargo run --release -p cairn-server --example thrift_get_load -- --port 9090 \
//!       --rows 20000 --connections 4 --depth 16 --seconds 10
//!
//! Prints one JSON object: gets per second, the client's own CPU seconds, and with
//! `--pids P1,P2` the gets per second of those (server) processes' CPU time. Expects the table
//! `bench_thrift` with rows `user%010d` (bench/thrift/happybase_bench.py load).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

fn key(i: u64) -> [u8; 14] {
    let mut k = *b"user0000000000";
    let mut v = i;
    for b in k[4..].iter_mut().rev() {
        *b = b'0' + (v % 10) as u8;
        v /= 10;
    }
    k
}

// Thrift binary protocol (strict) facts used below.
const VERSION_1: u32 = 0x8001_0000;
const CALL: u32 = 1;
const REPLY: u32 = 2;
const T_STOP: u8 = 0;
const T_BOOL: u8 = 2;
const T_BYTE: u8 = 3;
const T_DOUBLE: u8 = 4;
const T_I16: u8 = 6;
const T_I32: u8 = 8;
const T_I64: u8 = 10;
const T_STRING: u8 = 11;
const T_STRUCT: u8 = 12;
const T_MAP: u8 = 13;
const T_SET: u8 = 14;
const T_LIST: u8 = 15;

/// Appends one `getRow(tableName, row, attributes = {})` call. Written by hand, not through the
/// Thrift library, so that the client's CPU per get stays a small part of the server's.
fn write_get_row(out: &mut Vec<u8>, seq: i32, table: &[u8], row: &[u8]) {
    out.extend_from_slice(&(VERSION_1 | CALL).to_be_bytes());
    put_string(out, b"getRow");
    out.extend_from_slice(&seq.to_be_bytes());
    for (id, bytes) in [(1i16, table), (2, row)] {
        out.push(T_STRING);
        out.extend_from_slice(&id.to_be_bytes());
        put_string(out, bytes);
    }
    out.push(T_MAP);
    out.extend_from_slice(&3i16.to_be_bytes());
    out.extend_from_slice(&[T_STRING, T_STRING, 0, 0, 0, 0]);
    out.push(T_STOP);
}

fn put_string(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as i32).to_be_bytes());
    out.extend_from_slice(b);
}

/// Why an answer could not be taken from the bytes received so far.
enum Short {
    /// The answer goes on past what has arrived.
    NeedMore,
    /// The answer is not a `getRow` reply holding the row asked for with a value.
    Bad(String),
}

/// A cursor over received bytes; running off the end means the answer has not fully arrived.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Short> {
        let end = self.at.checked_add(n).ok_or(Short::NeedMore)?;
        let s = self.b.get(self.at..end).ok_or(Short::NeedMore)?;
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, Short> {
        Ok(self.take(1)?[0])
    }
    fn i16(&mut self) -> Result<i16, Short> {
        Ok(i16::from_be_bytes(
            self.take(2)?.try_into().unwrap_or_default(),
        ))
    }
    fn i32(&mut self) -> Result<i32, Short> {
        Ok(i32::from_be_bytes(
            self.take(4)?.try_into().unwrap_or_default(),
        ))
    }
    fn len(&mut self) -> Result<usize, Short> {
        usize::try_from(self.i32()?).map_err(|_| Short::Bad("negative length".into()))
    }
    fn string(&mut self) -> Result<&'a [u8], Short> {
        let n = self.len()?;
        self.take(n)
    }
    /// Skips one value of type `t`.
    fn skip(&mut self, t: u8, depth: u32) -> Result<(), Short> {
        if depth > 16 {
            return Err(Short::Bad("values nested too deep".into()));
        }
        match t {
            T_BOOL | T_BYTE => self.take(1).map(drop),
            T_I16 => self.take(2).map(drop),
            T_I32 => self.take(4).map(drop),
            T_DOUBLE | T_I64 => self.take(8).map(drop),
            T_STRING => self.string().map(drop),
            T_STRUCT => loop {
                let ft = self.u8()?;
                if ft == T_STOP {
                    return Ok(());
                }
                self.i16()?;
                self.skip(ft, depth + 1)?;
            },
            T_MAP => {
                let (kt, vt, n) = (self.u8()?, self.u8()?, self.len()?);
                for _ in 0..n {
                    self.skip(kt, depth + 1)?;
                    self.skip(vt, depth + 1)?;
                }
                Ok(())
            }
            T_SET | T_LIST => {
                let (et, n) = (self.u8()?, self.len()?);
                for _ in 0..n {
                    self.skip(et, depth + 1)?;
                }
                Ok(())
            }
            other => Err(Short::Bad(format!("unknown Thrift type {other}"))),
        }
    }
}

/// Reads one `getRow` answer from the front of `b` and checks it: a reply to request `seq`
/// holding exactly one row, the one asked for, with at least one cell that has a value.
/// Returns how many bytes the answer took.
fn check_get_row(b: &[u8], seq: i32, row: &[u8]) -> Result<usize, Short> {
    let bad = |what: &str| {
        Short::Bad(format!(
            "getRow {} (request {seq}): {what}",
            String::from_utf8_lossy(row)
        ))
    };
    let mut c = Cursor { b, at: 0 };
    let head = c.i32()? as u32;
    let name = c.string()?;
    let got_seq = c.i32()?;
    if head != VERSION_1 | REPLY || name != b"getRow" || got_seq != seq {
        return Err(bad(&format!(
            "answered by message {:#x} {} #{got_seq}",
            head,
            String::from_utf8_lossy(name)
        )));
    }
    let mut rows = None;
    loop {
        let ft = c.u8()?;
        if ft == T_STOP {
            break;
        }
        let id = c.i16()?;
        if (ft, id) != (T_LIST, 0) {
            return Err(bad(&format!("answered with field {id}: an error")));
        }
        let (et, n) = (c.u8()?, c.len()?);
        if et != T_STRUCT || n != 1 {
            return Err(bad(&format!("{n} rows in the answer, not 1")));
        }
        let (mut got_row, mut has_value) = (None, false);
        loop {
            let ft = c.u8()?;
            if ft == T_STOP {
                break;
            }
            match (ft, c.i16()?) {
                (T_STRING, 1) => got_row = Some(c.string()?),
                (T_MAP, 2) => {
                    let (kt, vt, n) = (c.u8()?, c.u8()?, c.len()?);
                    if (kt, vt) != (T_STRING, T_STRUCT) {
                        return Err(bad("columns are not a map of names to cells"));
                    }
                    for _ in 0..n {
                        c.string()?;
                        loop {
                            let ft = c.u8()?;
                            if ft == T_STOP {
                                break;
                            }
                            match (ft, c.i16()?) {
                                (T_STRING, 1) => has_value |= !c.string()?.is_empty(),
                                (t, _) => c.skip(t, 0)?,
                            }
                        }
                    }
                }
                (t, _) => c.skip(t, 0)?,
            }
        }
        if got_row != Some(row) || !has_value {
            return Err(bad("answered with another row or no value"));
        }
        rows = Some(());
    }
    rows.ok_or_else(|| bad("answered without rows"))?;
    Ok(c.at)
}

fn connection(a: &Args, seed: u64, stop: &AtomicBool, done: &AtomicU64) -> Result<(), String> {
    let mut stream = TcpStream::connect((a.host.as_str(), a.port)).map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
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
    let mut out = Vec::with_capacity(64 * 1024);
    let mut inbuf = vec![0u8; 1 << 20];
    let (mut from, mut to) = (0usize, 0usize);
    while !stop.load(Ordering::Relaxed) {
        asked.clear();
        out.clear();
        for _ in 0..a.depth {
            seq = seq.wrapping_add(1);
            let row = key(next_row());
            write_get_row(&mut out, seq, a.table.as_bytes(), &row);
            asked.push((seq, row));
        }
        stream.write_all(&out).map_err(|e| e.to_string())?;
        for (s, row) in &asked {
            loop {
                match check_get_row(&inbuf[from..to], *s, row) {
                    Ok(n) => {
                        from += n;
                        break;
                    }
                    Err(Short::Bad(e)) => return Err(e),
                    Err(Short::NeedMore) => {
                        if from > 0 {
                            inbuf.copy_within(from..to, 0);
                            (from, to) = (0, to - from);
                        }
                        if to == inbuf.len() {
                            let bigger = inbuf.len() * 2;
                            inbuf.resize(bigger, 0);
                        }
                        let n = stream.read(&mut inbuf[to..]).map_err(|e| e.to_string())?;
                        if n == 0 {
                            return Err(format!(
                                "the server closed the connection before answering request {s}"
                            ));
                        }
                        to += n;
                    }
                }
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
    let per_server_cpu =
        (!a.pids.is_empty() && server > 0.0).then(|| (gets as f64 / server).round() as u64);
    // Seconds to the millisecond, as the scripts that read this line print them.
    let ms = |s: f64| (s * 1e3).round() / 1e3;
    let line = serde_json::json!({
        "pipelined_gets": (gets as f64 / took).round() as u64,
        "pipelined_gets_per_server_cpu_s": per_server_cpu,
        "client_cpu_s": ms(cpu),
        "server_cpu_s": ms(server),
        "seconds": ms(took),
        "connections": a.connections,
        "depth": a.depth,
    });
    println!("{line}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_thrift::hbase::{TCell, TRowResult};
    use cairn_thrift::thrift::protocol::{
        TBinaryOutputProtocol, TFieldIdentifier, TListIdentifier, TMessageIdentifier, TMessageType,
        TOutputProtocol, TSerializable, TStructIdentifier, TType,
    };
    use std::collections::BTreeMap;

    /// A `getRow` reply written by the Thrift library, as the server writes it.
    fn reply(seq: i32, rows: &[TRowResult]) -> Vec<u8> {
        let mut o = TBinaryOutputProtocol::new(Vec::new(), true);
        o.write_message_begin(&TMessageIdentifier::new("getRow", TMessageType::Reply, seq))
            .unwrap();
        o.write_struct_begin(&TStructIdentifier::new("getRow_result"))
            .unwrap();
        o.write_field_begin(&TFieldIdentifier::new("success", TType::List, 0))
            .unwrap();
        o.write_list_begin(&TListIdentifier::new(TType::Struct, rows.len() as i32))
            .unwrap();
        for r in rows {
            r.write_to_out_protocol(&mut o).unwrap();
        }
        o.write_list_end().unwrap();
        o.write_field_end().unwrap();
        o.write_field_stop().unwrap();
        o.write_struct_end().unwrap();
        o.write_message_end().unwrap();
        o.transport
    }

    fn row(key: &[u8], value: &[u8]) -> TRowResult {
        let cell = TCell::new(value.to_vec(), 7);
        TRowResult::new(
            key.to_vec(),
            BTreeMap::from([(b"f:q".to_vec(), cell)]),
            None,
        )
    }

    #[test]
    fn keys_are_the_loaders() {
        assert_eq!(&key(0), b"user0000000000");
        assert_eq!(&key(1234567890), b"user1234567890");
    }

    #[test]
    fn a_reply_with_the_row_asked_for_is_taken_whole() {
        let k = key(42);
        let mut b = reply(5, &[row(&k, b"value")]);
        let len = b.len();
        b.extend_from_slice(&reply(6, &[row(&key(43), b"v")]));
        assert!(matches!(check_get_row(&b, 5, &k), Ok(n) if n == len));
        assert!(check_get_row(&b[len..], 6, &key(43)).is_ok());
        // Every cut short of the whole answer asks for more bytes.
        for cut in 0..len {
            assert!(matches!(
                check_get_row(&b[..cut], 5, &k),
                Err(Short::NeedMore)
            ));
        }
    }

    #[test]
    fn wrong_answers_are_errors() {
        let k = key(42);
        let bad = |b: Vec<u8>, seq| matches!(check_get_row(&b, seq, &k), Err(Short::Bad(_)));
        assert!(
            bad(reply(5, &[row(&k, b"value")]), 6),
            "another request's answer"
        );
        assert!(bad(reply(5, &[row(&key(41), b"value")]), 5), "another row");
        assert!(bad(reply(5, &[row(&k, b"")]), 5), "no value");
        assert!(bad(reply(5, &[]), 5), "no row");
        assert!(
            bad(reply(5, &[row(&k, b"v"), row(&k, b"v")]), 5),
            "two rows"
        );
        // An IOError answer: field 1 instead of the rows.
        let mut err = Vec::new();
        put_string(&mut err, b"getRow");
        let mut b = (VERSION_1 | REPLY).to_be_bytes().to_vec();
        b.extend_from_slice(&err);
        b.extend_from_slice(&5i32.to_be_bytes());
        b.extend_from_slice(&[
            T_STRUCT, 0, 1, T_STRING, 0, 1, 0, 0, 0, 1, b'x', T_STOP, T_STOP,
        ]);
        assert!(bad(b, 5), "an IOError");
    }
}
