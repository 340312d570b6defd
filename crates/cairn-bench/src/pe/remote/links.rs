//! A client thread's connections to the servers: its own, one per server (PE's default: each
//! client thread has its own HBase `Connection`), or with `--oneCon` one per server shared by
//! every client thread, calls multiplexed on it by call id as HBase's Netty connection does.

use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};

use cairn_rpc::client::ClientError;
use cairn_rpc::wire;
use prost::Message;

use super::conn::{decode_answer, CallBuffer, Conn, Reply};

/// The service every data call goes to.
const CLIENT_SERVICE: &str = "ClientService";

type Waiters = Mutex<HashMap<u32, SyncSender<std::io::Result<Vec<u8>>>>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Whatever a panicking holder left is whole (a map, a socket): keep using it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One connection shared by many threads: calls are written whole under a lock, answers read
/// by a thread of its own and handed to the caller waiting for that call id.
pub(crate) struct Mux {
    addr: String,
    writer: Mutex<(TcpStream, CallBuffer)>,
    waiters: Arc<Waiters>,
    next_id: AtomicU32,
}

impl Mux {
    fn open(addr: &str) -> Result<Mux, ClientError> {
        // The handshake is the one a private connection makes; then the stream changes hands.
        let conn = Conn::open(addr, CLIENT_SERVICE)?;
        let (writer, reader) = conn.into_parts();
        let waiters: Arc<Waiters> = Arc::default();
        let w = waiters.clone();
        let name = addr.to_string();
        std::thread::Builder::new()
            .name(format!("pe-rpc-reader-{addr}"))
            .spawn(move || read_answers(reader, &w, &name))
            .map_err(|e| ClientError::Io {
                what: "starting the reader of",
                addr: addr.to_string(),
                source: e,
            })?;
        Ok(Mux {
            addr: addr.to_string(),
            writer: Mutex::new((writer, CallBuffer::default())),
            waiters,
            next_id: AtomicU32::new(1),
        })
    }

    fn call(
        &self,
        method: &str,
        param: &impl Message,
        cells: &[u8],
    ) -> Result<(u32, Vec<u8>), ClientError> {
        let io = |what, source| ClientError::Io {
            what,
            addr: self.addr.clone(),
            source,
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed).max(1);
        let (tx, rx) = sync_channel(1);
        lock(&self.waiters).insert(id, tx);
        {
            let mut w = lock(&self.writer);
            let (stream, call) = &mut *w;
            let frame = call.encode(id, method, param, cells);
            if let Err(e) = stream.write_all(frame) {
                lock(&self.waiters).remove(&id);
                return Err(io("sending a call to", e));
            }
        }
        match rx.recv() {
            Ok(Ok(frame)) => Ok((id, frame)),
            Ok(Err(e)) => Err(io("reading an answer from", e)),
            Err(_) => Err(io(
                "reading an answer from",
                std::io::ErrorKind::ConnectionAborted.into(),
            )),
        }
    }
}

impl Drop for Mux {
    fn drop(&mut self) {
        // The reader thread holds the socket too: shutting it down ends that thread's read.
        let _ = lock(&self.writer).0.shutdown(std::net::Shutdown::Both);
    }
}

/// The reader thread: each answer to its caller; at a broken stream every waiting caller
/// gets the error (and later callers find the map's senders gone).
fn read_answers(mut reader: BufReader<TcpStream>, waiters: &Waiters, addr: &str) {
    let fail = |e: std::io::Error| {
        for (_, tx) in lock(waiters).drain() {
            let _ = tx.send(Err(std::io::Error::new(e.kind(), e.to_string())));
        }
    };
    loop {
        let mut len = [0u8; 4];
        if let Err(e) = reader.read_exact(&mut len) {
            return fail(e);
        }
        let len = match wire::frame_len(len, "response", i32::MAX as usize) {
            Ok(n) => n,
            Err(e) => {
                return fail(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{addr}: {e}"),
                ))
            }
        };
        let mut frame = Vec::new();
        match (&mut reader).take(len as u64).read_to_end(&mut frame) {
            Ok(n) if n == len => {}
            Ok(_) => return fail(std::io::ErrorKind::UnexpectedEof.into()),
            Err(e) => return fail(e),
        }
        // The call id is the response header's first field; decoding it twice (here and by
        // the caller) is cheaper than handing a decoded header across.
        let mut b = frame.as_slice();
        let id = cairn_rpc::pb::ResponseHeader::decode_length_delimited(&mut b)
            .ok()
            .and_then(|h| h.call_id);
        let tx = id.and_then(|id| lock(waiters).remove(&id));
        match tx {
            Some(tx) => {
                let _ = tx.send(Ok(frame));
            }
            None => {
                return fail(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{addr}: an answer to call {id:?}, which nobody made"),
                ))
            }
        }
    }
}

/// The `--oneCon` connections of a run, one per server, opened on first use.
#[derive(Default)]
pub(crate) struct SharedPool {
    muxes: Mutex<HashMap<String, Arc<Mux>>>,
}

impl SharedPool {
    fn get(&self, addr: &str) -> Result<Arc<Mux>, ClientError> {
        let mut m = lock(&self.muxes);
        if let Some(x) = m.get(addr) {
            return Ok(x.clone());
        }
        let x = Arc::new(Mux::open(addr)?);
        m.insert(addr.to_string(), x.clone());
        Ok(x)
    }

    fn forget(&self, addr: &str) {
        lock(&self.muxes).remove(addr);
    }
}

/// One client thread's way to the servers.
pub(crate) struct Links<'a> {
    own: HashMap<String, Conn>,
    shared: Option<&'a SharedPool>,
    /// The last answer of a shared connection, kept so its cells can be borrowed.
    answer: Vec<u8>,
}

impl<'a> Links<'a> {
    /// Private connections, or the run's shared ones.
    pub fn new(shared: Option<&'a SharedPool>) -> Links<'a> {
        Links {
            own: HashMap::new(),
            shared,
            answer: Vec::new(),
        }
    }

    /// Calls `method` of `ClientService` on the server at `addr`. A connection that failed
    /// is dropped, so the next call opens a new one.
    pub fn call<R: Message + Default>(
        &mut self,
        addr: &str,
        method: &str,
        param: &impl Message,
        cells: &[u8],
    ) -> Result<Reply<'_, R>, ClientError> {
        if let Some(pool) = self.shared {
            let mux = pool.get(addr)?;
            let (id, frame) = mux.call(method, param, cells).inspect_err(|_| {
                pool.forget(addr);
            })?;
            self.answer = frame;
            let (message, at) = decode_answer(&self.answer, id, method, addr)?;
            return Ok(Reply {
                message,
                cells: &self.answer[at],
            });
        }
        if !self.own.contains_key(addr) {
            let c = Conn::open(addr, CLIENT_SERVICE)?;
            self.own.insert(addr.to_string(), c);
        }
        let conn = self.own.get_mut(addr).expect("inserted above");
        match conn.call_raw::<R>(method, param, cells) {
            Ok((message, at)) => {
                let conn = &self.own[addr];
                Ok(Reply {
                    message,
                    cells: &conn.answer()[at],
                })
            }
            Err(e) => {
                if matches!(e, ClientError::Io { .. }) {
                    self.own.remove(addr);
                }
                Err(e)
            }
        }
    }
}
