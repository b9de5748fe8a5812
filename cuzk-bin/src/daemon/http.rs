//! The HTTP status server on `[daemon] status_listen`: `GET /status` (JSON)
//! and `GET /metrics` (Prometheus text).
//!
//! Anyone who can reach the port may connect, so a client must not cost
//! the daemon threads or memory, nor shut out other clients. One thread
//! accepts connections and reads their request heads, all at once through
//! poll(2): an idle or slow connection costs a socket and its few bytes
//! of head, never a thread. At most [`MAX_PENDING`] connections are read
//! at once; the next one closes the oldest, so a flood of idle connections
//! cannot keep a real request out (it sends its head at once and is
//! served while the flood waits). A head must arrive whole within
//! [`REQUEST_DEADLINE`] of its connection's accept and fit in
//! [`MAX_HEAD`] bytes. Complete heads go to a fixed pool of [`WORKERS`]
//! through a queue of [`QUEUE`] (a request that finds it full is answered
//! 503); every reply closes its connection.

use crossbeam::channel::{bounded, Receiver, Sender, TrySendError};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub const WORKERS: usize = 4;
pub const QUEUE: usize = 64;
/// Connections whose heads are being read at once (below the 1024
/// descriptors a process gets by default, beside gRPC's).
pub const MAX_PENDING: usize = 512;
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(5);
pub const MAX_HEAD: usize = 8 << 10;
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// The answer to a request that finds every worker busy and the queue
/// full.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\nConnection: close\r\n\r\n";
/// How often the reading thread looks at the stop flag when nothing
/// happens.
const TICK: Duration = Duration::from_millis(200);

/// What the server answers with; called per request.
pub struct Pages {
    pub status: Box<dyn Fn() -> String + Send + Sync>,
    pub metrics: Box<dyn Fn() -> String + Send + Sync>,
}

pub struct StatusServer {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    pub addr: SocketAddr,
}

impl StatusServer {
    pub fn start(addr: &str, pages: Pages) -> Result<Self, String> {
        let listener = TcpListener::bind(addr).map_err(|e| format!("cannot serve HTTP status on {addr:?}: {e}"))?;
        let bound = listener.local_addr().map_err(|e| format!("status_listen {addr:?}: {e}"))?;
        listener.set_nonblocking(true).map_err(|e| format!("status_listen {addr:?}: {e}"))?;
        let (tx, rx) = bounded::<Arrived>(QUEUE);
        let (pages, stop) = (Arc::new(pages), Arc::new(AtomicBool::new(false)));
        let mut threads = Vec::with_capacity(WORKERS + 1);
        for i in 0..WORKERS {
            let (rx, pages) = (rx.clone(), pages.clone());
            threads.push(spawn(format!("cuzk-http-{i}"), move || work(&rx, &pages))?);
        }
        let flag = stop.clone();
        threads.push(spawn("cuzk-http-accept".into(), move || read_heads(&listener, &tx, &flag))?);
        log::info!("status HTTP listening on http://{bound} (GET /status, GET /metrics)");
        Ok(Self { stop, threads, addr: bound })
    }

    /// Stops accepting, lets the workers finish what they hold, joins them
    /// (the reading thread sees the flag within [`TICK`]).
    pub fn stop(self) {
        self.stop.store(true, Ordering::Release);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

fn spawn(name: String, f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>, String> {
    std::thread::Builder::new().name(name).spawn(f).map_err(|e| format!("cannot start an HTTP thread: {e}"))
}

/// A connection and what was read of its request.
type Arrived = (TcpStream, Result<String, Refused>);

/// A connection whose head is being read.
struct Pending {
    conn: TcpStream,
    accepted: Instant,
    buf: Vec<u8>,
}

impl Pending {
    /// Reads what has arrived; the head (or why there is none) once that
    /// is known, None while more is to come.
    fn read_more(&mut self) -> Option<Result<String, Refused>> {
        let mut chunk = [0u8; 1024];
        loop {
            match self.conn.read(&mut chunk) {
                Ok(0) => return Some(Err(if self.buf.is_empty() { Refused::Gone } else { Refused::Malformed })),
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    if let Some(head) = head_of(&self.buf) {
                        return Some(Ok(head));
                    }
                    if self.buf.len() > MAX_HEAD {
                        return Some(Err(Refused::TooLarge));
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return None,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Some(Err(Refused::Gone)),
            }
        }
    }
}

/// The request line and headers, when `buf` holds them whole.
fn head_of(buf: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(buf);
    let end = text.find("\r\n\r\n").or_else(|| text.find("\n\n"))?;
    Some(text[..end].to_string())
}

/// The accepting and reading thread: accepts connections, reads their
/// heads as they arrive, hands complete ones to the workers, closes those
/// past their deadline.
fn read_heads(listener: &TcpListener, queue: &Sender<Arrived>, stop: &AtomicBool) {
    let mut pending: Vec<Pending> = Vec::new();
    let mut fds: Vec<libc::pollfd> = Vec::new();
    while !stop.load(Ordering::Acquire) {
        let now = Instant::now();
        // Past their deadline: closed without a word (they went quiet).
        pending.retain(|p| now < p.accepted + REQUEST_DEADLINE);
        let next_deadline = pending.iter().map(|p| p.accepted + REQUEST_DEADLINE).min();
        let wait = next_deadline.map_or(TICK, |d| d.saturating_duration_since(now).min(TICK));
        fds.clear();
        fds.push(libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 });
        fds.extend(pending.iter().map(|p| libc::pollfd { fd: p.conn.as_raw_fd(), events: libc::POLLIN, revents: 0 }));
        // SAFETY: `fds` is a valid array of pollfd of the given length.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait.as_millis().max(1) as i32) };
        if ready < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != ErrorKind::Interrupted {
                log::debug!("status HTTP poll: {e}");
                std::thread::sleep(Duration::from_millis(20));
            }
            continue;
        }
        // Backwards, so a removed connection moves only ones already seen.
        for i in (0..pending.len()).rev() {
            if fds[i + 1].revents == 0 {
                continue;
            }
            let Some(read) = pending[i].read_more() else { continue };
            let p = pending.swap_remove(i);
            // Nothing to answer a client that went away: closed here, not
            // queued (a flood closing at once would fill the workers' queue).
            if matches!(read, Err(Refused::Gone)) {
                continue;
            }
            if let Err(TrySendError::Full((mut c, _))) = queue.try_send((p.conn, read)) {
                log::debug!("status HTTP: {QUEUE} requests waiting for a worker; answered 503 {:?}", c.peer_addr());
                // A few bytes into an empty send buffer: does not block.
                let _ = c.write_all(BUSY);
            }
        }
        if fds[0].revents != 0 {
            accept_ready(listener, &mut pending);
        }
    }
}

/// Accepts every connection waiting; at [`MAX_PENDING`] each new one
/// closes the oldest being read.
fn accept_ready(listener: &TcpListener, pending: &mut Vec<Pending>) {
    loop {
        match listener.accept() {
            Ok((conn, _)) => {
                if conn.set_nonblocking(true).is_err() {
                    continue;
                }
                if pending.len() >= MAX_PENDING {
                    let oldest = (0..pending.len()).min_by_key(|&i| pending[i].accepted).expect("pending is full");
                    let p = pending.swap_remove(oldest);
                    log::debug!("status HTTP: {MAX_PENDING} connections being read; closed the oldest {:?}", p.conn.peer_addr());
                }
                pending.push(Pending { conn, accepted: Instant::now(), buf: Vec::new() });
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // Out of descriptors and the like: back off instead of spinning.
            Err(e) => {
                log::debug!("status HTTP accept: {e}");
                std::thread::sleep(Duration::from_millis(20));
                return;
            }
        }
    }
}

fn work(queue: &Receiver<Arrived>, pages: &Pages) {
    for (mut conn, read) in queue {
        let reply = match read {
            Ok(head) => route(&head, pages),
            Err(Refused::TooLarge) => (431, format!("request head over {MAX_HEAD} bytes\n"), "text/plain"),
            Err(Refused::Malformed) => (400, "not an HTTP request\n".to_string(), "text/plain"),
            // Nothing useful to say to a client that went quiet or away.
            Err(Refused::Gone) => continue,
        };
        if conn.set_nonblocking(false).is_err() {
            continue;
        }
        let _ = conn.set_write_timeout(Some(WRITE_TIMEOUT));
        let refused = reply.0 != 200 && reply.0 != 404;
        if let Err(e) = respond(&mut conn, reply) {
            log::debug!("status HTTP reply failed: {e}");
        } else if refused {
            linger(&mut conn);
        }
    }
}

/// After refusing a request that may still be arriving: reads (a bounded
/// amount, briefly) what the client sends before closing, so the close
/// does not reset the connection before the client has read the reply.
fn linger(conn: &mut TcpStream) {
    let _ = conn.shutdown(std::net::Shutdown::Write);
    let _ = conn.set_read_timeout(Some(Duration::from_secs(1)));
    let mut chunk = [0u8; 4096];
    for _ in 0..16 {
        if !matches!(conn.read(&mut chunk), Ok(n) if n > 0) {
            return;
        }
    }
}

enum Refused {
    TooLarge,
    Malformed,
    Gone,
}

fn route(head: &str, pages: &Pages) -> (u16, String, &'static str) {
    let mut words = head.lines().next().unwrap_or("").split_whitespace();
    let (Some(method), Some(target)) = (words.next(), words.next()) else {
        return (400, "not an HTTP request\n".to_string(), "text/plain");
    };
    let path = target.split('?').next().unwrap_or("");
    let page = |f: &(dyn Fn() -> String + Send + Sync), ctype| match catch_unwind(AssertUnwindSafe(f)) {
        Ok(body) => (200, body, ctype),
        Err(_) => (500, "the status page failed inside the daemon\n".to_string(), "text/plain"),
    };
    match (method, path) {
        ("GET", "/status") => page(&*pages.status, "application/json"),
        ("GET", "/metrics") => page(&*pages.metrics, "text/plain; version=0.0.4"),
        ("GET", _) => (404, format!("no page {}; try /status or /metrics\n", path.escape_debug()), "text/plain"),
        (m, _) => (405, format!("method {} not allowed; only GET\n", m.escape_debug()), "text/plain"),
    }
}

fn respond(conn: &mut TcpStream, (code, body, ctype): (u16, String, &str)) -> std::io::Result<()> {
    let reason = match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        _ => "Internal Server Error",
    };
    // Any origin may read the pages: browser dashboards fetch them from
    // pages served elsewhere (as with the existing daemon).
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes())?;
    conn.write_all(body.as_bytes())?;
    conn.flush()
}
