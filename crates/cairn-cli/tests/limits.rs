//! `cairn serve`'s resource limits against hostile sockets, with real clients:
//!
//! - thousands of idle sockets (and half-sent openings) on each port do not lock new clients
//!   out: HBase 2.6.1's Java client and happybase 1.3.0, connecting afresh, are served within
//!   a second;
//! - a frame header announcing 2 GiB, or 200 MiB within the limits and then sent slowly, costs
//!   the server no memory before the bytes arrive (its VmRSS barely moves), on both ports,
//!   while other clients are served;
//! - a Thrift list header claiming 2^31 - 1 elements, with a request budget that lets the
//!   count through, is survived.
//!
//! The Java client needs the interop jars (`mvn -f interop/hbase/pom.xml package`; skipped
//! without them unless `CAIRN_REQUIRE_HBASE_INTEROP=1`), happybase the project's venv (skipped
//! without it unless `CAIRN_REQUIRE_TLS_CLIENTS=1`).

#[path = "../../cairn-hfile/tests/support/hbase.rs"]
#[allow(dead_code)] // its `java` waits for a program's end; this test drives one line by line
mod hbase;
#[path = "support/python.rs"]
mod python;
#[path = "support/serve.rs"]
mod serve;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serve::Server;

/// Idle sockets held on each port, and of those how many send half an opening.
const IDLE: usize = 2000;
const HALF: usize = 100;

/// A client program driven line by line: it prints `READY`, waits for a line on its stdin,
/// then prints `SERVED <ms>` or `FAILED ...`.
struct Driven {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    output: Arc<Mutex<String>>,
}

impl Drop for Driven {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driven {
    fn spawn(mut cmd: Command) -> Driven {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the client");
        let stdin = child.stdin.take().unwrap();
        let output = Arc::new(Mutex::new(String::new()));
        let (tx, lines) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        let sink = output.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                sink.lock().unwrap().push_str(&format!("{line}\n"));
                let _ = tx.send(line);
            }
        });
        let mut err = child.stderr.take().unwrap();
        let sink = output.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            sink.lock().unwrap().push_str(&serve::tail(&s, 30));
        });
        Driven {
            child,
            stdin,
            lines,
            output,
        }
    }

    /// The first line starting with one of `prefixes`, within `timeout`.
    fn line(&self, prefixes: &[&str], timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if prefixes.iter().any(|p| l.starts_with(p)) => return l,
                Ok(_) => {}
                Err(e) => panic!(
                    "no {prefixes:?} line ({e}); the client said:\n{}",
                    self.output.lock().unwrap()
                ),
            }
        }
    }

    /// Tells the client to go on and returns how long its fresh connection took to serve.
    fn served_ms(&mut self) -> u64 {
        self.stdin.write_all(b"go\n").unwrap();
        self.stdin.flush().unwrap();
        let l = self.line(&["SERVED", "FAILED"], Duration::from_secs(120));
        match l.strip_prefix("SERVED ") {
            Some(ms) => ms.trim().parse().unwrap(),
            None => panic!("{l}\n{}", self.output.lock().unwrap()),
        }
    }
}

/// `getTableNames` over a fresh plaintext connection (binary protocol, buffered transport);
/// panics unless the server answers it.
fn thrift_get_table_names(addr: &str) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut call = vec![0x80, 0x01, 0x00, 0x01];
    call.extend_from_slice(&13u32.to_be_bytes());
    call.extend_from_slice(b"getTableNames");
    call.extend_from_slice(&7u32.to_be_bytes());
    call.push(0);
    s.write_all(&call).unwrap();
    let mut reply = [0u8; 4];
    s.read_exact(&mut reply).expect("a thrift reply");
    assert_eq!(reply, [0x80, 0x01, 0x00, 0x02]);
}

/// The connection registry's preamble over a fresh connection: the server answers it with
/// the cluster id.
fn rpc_registry(addr: &str) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(b"Regist").unwrap();
    let mut len = [0u8; 4];
    s.read_exact(&mut len).expect("a registry answer");
    assert!(u32::from_be_bytes(len) > 0);
}

#[test]
fn thousands_of_idle_sockets_do_not_lock_new_clients_out() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let Some(py) = python::happybase_python() else {
        return;
    };
    // The test holds more than four thousand sockets.
    let _ = cairn_server::connections::raise_open_files_limit();
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let rpc = server.addr.clone();
    let thrift = server.printed_addr("thrift on ");
    let mut java = Driven::spawn({
        let mut c = Command::new("java");
        c.args(hbase::JAVA_FLAGS)
            .arg("-cp")
            .arg(&cp)
            .arg("dev.cairn.interop.FreshClient")
            .args(["--bootstrap", &rpc, "--table", "fresh_java"]);
        c
    });
    let (host, port) = thrift.rsplit_once(':').unwrap();
    let mut happybase = Driven::spawn({
        let mut c = Command::new(&py);
        c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/limits/fresh_happybase.py"))
            .args([host, port, "fresh_happybase"]);
        c
    });
    java.line(&["READY"], Duration::from_secs(180));
    happybase.line(&["READY"], Duration::from_secs(60));

    let rss_before = server.rss_kib();
    let mut held = Vec::with_capacity(2 * (IDLE + HALF));
    for (addr, half) in [(&rpc, &b"HBa"[..]), (&thrift, &b"\x80\x01\x00"[..])] {
        for i in 0..IDLE + HALF {
            let mut s = TcpStream::connect(addr.as_str())
                .unwrap_or_else(|e| panic!("socket {i} to {addr}: {e}"));
            if i >= IDLE {
                s.write_all(half).unwrap();
            }
            held.push(s);
        }
    }
    // Let the server take them all in.
    std::thread::sleep(Duration::from_millis(500));
    let rss_held = server.rss_kib();
    let java_ms = java.served_ms();
    let happybase_ms = happybase.served_ms();
    println!(
        "with {} idle sockets per port: Java client served in {java_ms} ms, happybase in {happybase_ms} ms; server RSS {} MiB before them, {} MiB with them",
        IDLE + HALF,
        rss_before >> 10,
        rss_held >> 10
    );

    assert!(
        java_ms < 1000,
        "HBase's Java client took {java_ms} ms\nserver:\n{}",
        server.stderr_tail(20)
    );
    assert!(
        happybase_ms < 1000,
        "happybase took {happybase_ms} ms\nserver:\n{}",
        server.stderr_tail(20)
    );
    drop(held);
}

/// A silent socket costs the server its connection thread's stack pages, not the allocator's
/// per-thread heap (the thread allocates nothing before the client's first byte; with
/// transparent huge pages a heap costs ~70 KB and more resident).
#[test]
fn silent_sockets_cost_little_memory() {
    let _ = cairn_server::connections::raise_open_files_limit();
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let rpc = server.addr.clone();
    let thrift = server.printed_addr("thrift on ");
    std::thread::sleep(Duration::from_millis(300));
    let before = server.rss_kib();
    let mut held = Vec::new();
    for (addr, n) in [(&rpc, IDLE), (&thrift, 1000)] {
        for _ in 0..n {
            held.push(TcpStream::connect(addr.as_str()).unwrap());
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let after = server.rss_kib();
    let per = (after.saturating_sub(before) << 10) / held.len() as u64;
    println!(
        "server RSS {} MiB before, {} MiB with {} silent sockets: {} KiB each",
        before >> 10,
        after >> 10,
        held.len(),
        per >> 10
    );
    assert!(per < 48 << 10, "{} KiB per silent socket", per >> 10);
    rpc_registry(&rpc);
    thrift_get_table_names(&thrift);
}

/// A server whose Thrift limits let a 200 MiB frame and request through.
fn roomy_server(data: &Path) -> Server {
    Server::start(
        data,
        &[
            "-D",
            "hbase.regionserver.thrift.framed.max_frame_size_in_mb=256",
            "-D",
            "cairn.thrift.max.request.bytes=268435456",
        ],
    )
}

/// Sends `head`, then `trickle` bytes of zeros in 64 KiB pieces over about `over`, on a
/// thread; returns the socket and the thread.
fn announce(
    addr: &str,
    head: Vec<u8>,
    trickle: usize,
    over: Duration,
) -> (TcpStream, std::thread::JoinHandle<()>) {
    let s = TcpStream::connect(addr).unwrap();
    let mut w = s.try_clone().unwrap();
    let t = std::thread::spawn(move || {
        if w.write_all(&head).is_err() {
            return;
        }
        let pieces = trickle.div_ceil(64 << 10).max(1);
        for _ in 0..pieces {
            if w.write_all(&[0u8; 64 << 10]).is_err() {
                return;
            }
            std::thread::sleep(over / pieces as u32);
        }
    });
    (s, t)
}

/// The native RPC preamble and a ClientService connection header.
fn rpc_opening() -> Vec<u8> {
    let mut v = b"HBas\x00\x50".to_vec();
    // ConnectionHeader { service_name: "ClientService" } (field 2, length-delimited).
    let header = [&[0x12u8, 13][..], b"ClientService"].concat();
    v.extend((header.len() as u32).to_be_bytes());
    v.extend(header);
    v
}

/// A strict binary `mutateRow` message header and a first argument (the table name) whose
/// length is `len`: the string's bytes follow on the wire.
fn thrift_mutate_row_with_table_of(len: u32) -> Vec<u8> {
    let mut v = 0x8001_0001u32.to_be_bytes().to_vec();
    v.extend(9u32.to_be_bytes());
    v.extend(b"mutateRow");
    v.extend(1u32.to_be_bytes());
    v.extend([11, 0, 1]);
    v.extend(len.to_be_bytes());
    v
}

#[test]
fn announced_frames_cost_no_memory_before_their_bytes_arrive() {
    let data = tempfile::tempdir().unwrap();
    let server = roomy_server(data.path());
    let rpc = server.addr.clone();
    let thrift = server.printed_addr("thrift on ");
    // Warm the server up with what the test does besides the frames (connections come and
    // go, each thread's allocator heap with them), so what is measured is the frames.
    for _ in 0..30 {
        rpc_registry(&rpc);
        thrift_get_table_names(&thrift);
    }
    std::thread::sleep(Duration::from_millis(1500));
    let before = server.rss_kib();
    const MIB: u32 = 1 << 20;

    // 2 GiB: over every limit, refused as announced.
    let mut rpc_huge = rpc_opening();
    rpc_huge.extend(0x7fff_ffffu32.to_be_bytes());
    let (mut s, t) = announce(&rpc, rpc_huge, 0, Duration::ZERO);
    t.join().unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    assert!(
        String::from_utf8_lossy(&answer).contains("RequestTooBigException"),
        "the RPC port refuses a 2 GiB frame"
    );
    let mut framed_huge = 0x7fff_ffffu32.to_be_bytes().to_vec();
    framed_huge.extend(0x8001_0001u32.to_be_bytes());
    let (mut s, t) = announce(&thrift, framed_huge, 0, Duration::ZERO);
    t.join().unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    assert!(
        s.read(&mut [0u8; 16]).map_or(true, |n| n == 0),
        "the Thrift port closes a 2 GiB frame"
    );

    // 200 MiB, within the limits, of which 1 MiB arrives over two seconds, on each port and
    // transport.
    let mut rpc_big = rpc_opening();
    rpc_big.extend((200 * MIB).to_be_bytes());
    let mut framed_big = (200 * MIB).to_be_bytes().to_vec();
    framed_big.extend(thrift_mutate_row_with_table_of(199 * MIB));
    let slow = [
        announce(&rpc, rpc_big, 1 << 20, Duration::from_secs(2)),
        announce(&thrift, framed_big, 1 << 20, Duration::from_secs(2)),
        announce(
            &thrift,
            thrift_mutate_row_with_table_of(200 * MIB),
            1 << 20,
            Duration::from_secs(2),
        ),
    ];
    // Other clients are served meanwhile.
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(1500) {
        rpc_registry(&rpc);
        thrift_get_table_names(&thrift);
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut held = Vec::new();
    for (s, t) in slow {
        t.join().unwrap();
        held.push(s);
    }
    std::thread::sleep(Duration::from_millis(300));
    let after = server.rss_kib();
    println!(
        "server RSS {} MiB before, {} MiB with 600 MiB announced and 3 MiB sent",
        before >> 10,
        after >> 10
    );
    // 3 MiB received, in buffers grown as they came (a few times that with the allocator's
    // copies and huge pages), and the connections' threads: far from the 600 MiB announced,
    // of which one connection's alone would be 200 MiB.
    assert!(
        after < before + (48 << 10),
        "RSS grew from {before} KiB to {after} KiB for 3 MiB received"
    );
    rpc_registry(&rpc);
    thrift_get_table_names(&thrift);
    drop(held);
}

#[test]
fn a_thrift_list_header_claiming_two_billion_elements_is_survived() {
    let data = tempfile::tempdir().unwrap();
    // A request budget (4 GiB) that lets a count of 2^31 - 1 one-byte elements through.
    let server = Server::start(
        data.path(),
        &["-D", "cairn.thrift.max.request.bytes=4294967296"],
    );
    let thrift = server.printed_addr("thrift on ");
    thrift_get_table_names(&thrift);
    let peak = server.vm_peak_kib();
    // mutateRows(tableName = "t", rowBatches = list<BatchMutation> of 2^31 - 1), then a few
    // elements and the end of the connection.
    let mut v = 0x8001_0001u32.to_be_bytes().to_vec();
    v.extend(10u32.to_be_bytes());
    v.extend(b"mutateRows");
    v.extend(1u32.to_be_bytes());
    v.extend([11, 0, 1]);
    v.extend(1u32.to_be_bytes());
    v.push(b't');
    v.extend([15, 0, 2, 12]);
    v.extend(i32::MAX.to_be_bytes());
    v.extend([0u8; 16]); // sixteen empty BatchMutations
    let mut s = TcpStream::connect(&thrift).unwrap();
    s.write_all(&v).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut sink = Vec::new();
    let _ = s.read_to_end(&mut sink);
    thrift_get_table_names(&thrift);
    assert!(
        !server.stderr.lock().unwrap().contains("memory allocation"),
        "{}",
        server.stderr_tail(10)
    );
    // Reserving the declared count would have taken ~100 GB of address space, touched or not
    // (with the allocator's lazy pages the server may even survive it, until enough such
    // requests exhaust the address space or strict overcommit refuses the first).
    let grew = server.vm_peak_kib().saturating_sub(peak);
    assert!(
        grew < 16 << 20,
        "the server's address space grew by {} GiB",
        grew >> 20
    );
}
