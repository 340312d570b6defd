//! The open connections of one port (native RPC or Thrift): how many may be open at once,
//! which to close to make room for a new one, and what each connection's thread costs while
//! it waits.
//!
//! Each connection has a thread of its own. At the cap, a new connection does not wait for a
//! slot: the connection that has been quiet longest among those with nothing in flight is
//! closed to make room (connections still in their handshake, preamble or first request go
//! first), so sockets that connect and say nothing cannot lock clients out. Only when every
//! connection has a call in flight is the new one refused. A connection's thread reserves a
//! small stack and allocates nothing until the peer's first byte arrives, so a silent socket
//! costs its stack's touched pages and the kernel's share, not the allocator's per-thread
//! heap.

use std::collections::HashMap;
use std::io::{self, Read};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Stack of a connection's thread. Calls run on it (every Thrift call; the native RPC's
/// single-row gets and mutations), so it must hold the deepest read or write path, yet a
/// thread per connection makes its size the price of an idle connection in address space.
/// Only the pages a thread touches become resident.
pub const CONNECTION_STACK: usize = 512 << 10;

/// What one connection is doing, as its port's [`Registry`] sees it: when its peer last sent
/// bytes, whether a call is in flight, and whether it got past its opening (TLS handshake,
/// preamble and connection header; for Thrift, a first whole request).
#[derive(Debug)]
pub struct Activity {
    epoch: Instant,
    /// Milliseconds since `epoch` at the last bytes received.
    last: AtomicU64,
    /// Calls read and not yet answered.
    in_flight: AtomicUsize,
    established: AtomicBool,
}

impl Activity {
    fn new(epoch: Instant) -> Activity {
        let a = Activity {
            epoch,
            last: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            established: AtomicBool::new(false),
        };
        a.touch();
        a
    }

    /// Bytes arrived now.
    pub fn touch(&self) {
        let ms = self.epoch.elapsed().as_millis() as u64;
        self.last.store(ms, Ordering::Relaxed);
    }

    /// How long since bytes last arrived.
    pub fn quiet_for(&self) -> Duration {
        let now = self.epoch.elapsed().as_millis() as u64;
        Duration::from_millis(now.saturating_sub(self.last.load(Ordering::Relaxed)))
    }

    /// A call was read (or a Thrift request began): the connection must not be closed as
    /// idle until [`Activity::call_done`] says it was answered.
    pub fn call_started(&self) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
    }

    /// A call was answered (or failed to be).
    pub fn call_done(&self) {
        let _ = self
            .in_flight
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }

    /// Nothing is in flight any more (Thrift: the last answer went out).
    pub fn all_done(&self) {
        self.in_flight.store(0, Ordering::Release);
    }

    /// Calls in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// The opening is over: from now on the connection is an ordinary client's.
    pub fn set_established(&self) {
        self.established.store(true, Ordering::Release);
    }

    /// Whether the opening is over.
    pub fn established(&self) -> bool {
        self.established.load(Ordering::Acquire)
    }
}

struct Entry {
    socket: TcpStream,
    activity: Arc<Activity>,
}

/// The connections of one port.
pub struct Registry {
    conns: Mutex<HashMap<u64, Entry>>,
    next_id: AtomicU64,
    epoch: Instant,
    max: usize,
    evicted: AtomicU64,
}

/// A connection's place in its [`Registry`]: its id and what it is doing.
#[derive(Clone, Debug)]
pub struct Admitted {
    /// Its id in the registry, for [`Registry::remove`].
    pub id: u64,
    /// What it is doing.
    pub activity: Arc<Activity>,
}

impl Registry {
    /// A registry that holds at most `max` connections (at least one).
    pub fn new(max: usize) -> Registry {
        Registry {
            conns: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            epoch: Instant::now(),
            max: max.max(1),
            evicted: AtomicU64::new(0),
        }
    }

    /// Registers a new connection. At the cap, the quietest connection with nothing in
    /// flight is shut down first (one still in its opening before any established one);
    /// `None` when every connection has a call in flight, and the new one should be refused.
    pub fn admit(&self, socket: &TcpStream) -> Option<Admitted> {
        let registered = socket.try_clone().ok()?;
        let mut conns = self.conns.lock();
        if conns.len() >= self.max {
            let victim = conns
                .iter()
                .filter(|(_, e)| e.activity.in_flight() == 0)
                .min_by_key(|(_, e)| {
                    (
                        e.activity.established(),
                        e.activity.last.load(Ordering::Relaxed),
                    )
                })
                .map(|(id, _)| *id)?;
            if let Some(e) = conns.remove(&victim) {
                // Its thread sees the end of its stream and leaves; removing it again then
                // is a no-op.
                let _ = e.socket.shutdown(Shutdown::Both);
                self.evicted.fetch_add(1, Ordering::Relaxed);
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let activity = Arc::new(Activity::new(self.epoch));
        conns.insert(
            id,
            Entry {
                socket: registered,
                activity: activity.clone(),
            },
        );
        Some(Admitted { id, activity })
    }

    /// Forgets a connection (its thread is ending).
    pub fn remove(&self, id: u64) {
        self.conns.lock().remove(&id);
    }

    /// Connections open now.
    pub fn len(&self) -> usize {
        self.conns.lock().len()
    }

    /// Whether no connection is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Connections closed to make room for new ones so far.
    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }

    /// Shuts every connection's socket down (`how`), for a stop.
    pub fn shutdown_all(&self, how: Shutdown) {
        for e in self.conns.lock().values() {
            let _ = e.socket.shutdown(how);
        }
    }
}

/// Reads through to `inner`, noting on `activity` whenever bytes arrive.
pub struct Tracked<R> {
    inner: R,
    activity: Arc<Activity>,
}

impl<R> Tracked<R> {
    /// Tracks `inner`'s reads on `activity`.
    pub fn new(inner: R, activity: Arc<Activity>) -> Tracked<R> {
        Tracked { inner, activity }
    }

    /// The wrapped reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The wrapped reader, to write to it.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }
}

impl<R: Read> Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n > 0 {
            self.activity.touch();
        }
        Ok(n)
    }
}

/// Whether a read failed because its socket timeout ran out.
pub fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Waits until `socket` has a byte to read (`Ok(true)`), its peer closed it (`Ok(false)`), or
/// `timeout` passes (an error). Nothing is allocated: a connection that never speaks costs
/// its thread nothing more.
pub fn wait_for_bytes(socket: &TcpStream, timeout: Option<Duration>) -> io::Result<bool> {
    socket.set_read_timeout(timeout.filter(|t| !t.is_zero()))?;
    let mut first = [0u8; 1];
    loop {
        match socket.peek(&mut first) {
            Ok(n) => return Ok(n > 0),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// A reader whose every read must end by `deadline`: a peer that trickles its opening a byte
/// at a time gets no more time in total than one that sends nothing.
pub struct Deadline<'a, R> {
    inner: R,
    socket: &'a TcpStream,
    deadline: Instant,
}

impl<'a, R> Deadline<'a, R> {
    /// Reads of `inner` (whose socket is `socket`) until `deadline`.
    pub fn new(inner: R, socket: &'a TcpStream, deadline: Instant) -> Deadline<'a, R> {
        Deadline {
            inner,
            socket,
            deadline,
        }
    }

    /// The wrapped reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The wrapped reader, to write to it.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The wrapped reader, the deadline over.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: Read> Read for Deadline<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the connection's opening took too long",
            ));
        }
        self.socket.set_read_timeout(Some(left))?;
        self.inner.read(buf)
    }
}

/// Connections the kernel may hold ready for `accept` (capped by `net.core.somaxconn`). Rust's
/// standard listener asks for 128: a burst of new clients (a reconnect storm, or sockets
/// opened by the thousand) overflowed it, and each dropped SYN cost its client a second's
/// retransmission wait. HBase's Netty server asks for the system's maximum too.
const LISTEN_BACKLOG: libc::c_int = 4096;

/// Binds a listening socket with a backlog for bursts of connections.
pub fn bind(addr: &str) -> io::Result<TcpListener> {
    use std::os::fd::AsRawFd;
    let listener = TcpListener::bind(addr)?;
    // SAFETY: the descriptor belongs to `listener`, open for the call; listening again on a
    // listening socket only changes its backlog.
    if unsafe { libc::listen(listener.as_raw_fd(), LISTEN_BACKLOG) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(listener)
}

/// Ends a listener's accept loop whose stop flag is already set: the loop is blocked in
/// `accept`, so a connection to `addr` wakes it to see the flag; then waits for its thread.
pub fn stop_acceptor(addr: std::net::SocketAddr, acceptor: Option<std::thread::JoinHandle<()>>) {
    let _ = TcpStream::connect_timeout(&addr, Duration::from_secs(1));
    if let Some(a) = acceptor {
        let _ = a.join();
    }
}

/// How long a stopping listener waits for its connections' threads to end.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// Waits until `drained()` says every connection's thread has ended, at most
/// [`DRAIN_TIMEOUT`] (a thread stuck in a call does not hold up the stop for ever).
pub fn wait_drained(drained: impl Fn() -> bool) {
    let deadline = Instant::now() + DRAIN_TIMEOUT;
    while !drained() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Raises the process's soft limit on open files to its hard limit, as servers do at start:
/// every connection is a descriptor, and a default soft limit of 1024 would refuse clients
/// long before the connection caps. Returns the limit before and after, and logs a change or
/// a failure.
pub fn raise_open_files_limit() -> io::Result<(libc::rlim_t, libc::rlim_t)> {
    let r = raise_nofile();
    match &r {
        Ok((before, after)) if after > before => {
            tracing::info!("open files limit raised from {before} to {after}")
        }
        Ok(_) => {}
        Err(e) => tracing::warn!("could not raise the open files limit: {e}"),
    }
    r
}

fn raise_nofile() -> io::Result<(libc::rlim_t, libc::rlim_t)> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid rlimit for the call to fill in.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let before = lim.rlim_cur;
    if lim.rlim_cur < lim.rlim_max {
        lim.rlim_cur = lim.rlim_max;
        // SAFETY: `lim` is a valid rlimit; raising the soft limit up to the hard one needs no
        // privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok((before, lim.rlim_cur))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    fn pair(l: &TcpListener) -> (TcpStream, TcpStream) {
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        (c, s)
    }

    #[test]
    fn at_the_cap_the_quietest_idle_connection_makes_room() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let r = Registry::new(3);
        let (c1, s1) = pair(&l);
        let (c2, s2) = pair(&l);
        let (c3, s3) = pair(&l);
        let a1 = r.admit(&s1).unwrap();
        let a2 = r.admit(&s2).unwrap();
        let a3 = r.admit(&s3).unwrap();
        for a in [&a1, &a2, &a3] {
            a.activity.set_established();
        }
        // 1 is the quietest but has a call in flight; 2 is quieter than 3.
        a1.activity.last.store(0, Ordering::Relaxed);
        a1.activity.call_started();
        a2.activity.last.store(5, Ordering::Relaxed);
        a3.activity.last.store(10, Ordering::Relaxed);
        let (c4, s4) = pair(&l);
        let a4 = r.admit(&s4).expect("room is made");
        assert_eq!(r.len(), 3);
        assert_eq!(r.evicted(), 1);
        // 2 was shut down: its peer sees the end of the stream.
        let mut b = [0u8; 1];
        c2.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        assert_eq!((&c2).read(&mut b).unwrap(), 0);
        // A connection still in its opening goes before established ones, however recent.
        let (_c5, s5) = pair(&l);
        a4.activity.touch();
        let _a5 = r.admit(&s5).unwrap();
        c4.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        assert_eq!(
            (&c4).read(&mut b).unwrap(),
            0,
            "4 had not finished its opening"
        );
        // With every connection busy, nothing makes room.
        a3.activity.call_started();
        let r2 = Registry::new(1);
        let b1 = r2.admit(&s1).unwrap();
        b1.activity.call_started();
        assert!(r2.admit(&s3).is_none());
        b1.activity.call_done();
        assert!(r2.admit(&s3).is_some());
        r.remove(a1.id);
        assert_eq!(r.len(), 2);
        drop((c1, c3));
    }

    #[test]
    fn a_trickled_opening_ends_at_its_deadline() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let (mut c, s) = pair(&l);
        let writer = std::thread::spawn(move || {
            for _ in 0..20 {
                if c.write_all(b"H").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let started = Instant::now();
        let mut d = Deadline::new(&s, &s, Instant::now() + Duration::from_millis(300));
        let mut buf = [0u8; 64];
        let err = loop {
            match d.read(&mut buf) {
                Ok(0) => panic!("closed"),
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        assert!(timed_out(&err), "{err}");
        let took = started.elapsed();
        assert!(took < Duration::from_millis(900), "{took:?}");
        writer.join().unwrap();
    }

    #[test]
    fn waiting_for_bytes_sees_data_a_close_and_a_timeout() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let (mut c, s) = pair(&l);
        let e = wait_for_bytes(&s, Some(Duration::from_millis(50))).unwrap_err();
        assert!(timed_out(&e), "{e}");
        c.write_all(b"x").unwrap();
        assert!(wait_for_bytes(&s, Some(Duration::from_secs(5))).unwrap());
        let mut b = [0u8; 1];
        (&s).read_exact(&mut b).unwrap();
        drop(c);
        assert!(!wait_for_bytes(&s, Some(Duration::from_secs(5))).unwrap());
    }
}
