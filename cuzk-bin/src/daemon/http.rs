//! The HTTP status server on `[daemon] status_listen`: `GET /status` (JSON)
//! and `GET /metrics` (Prometheus text).
//!
//! Anyone who can reach the port may connect, so a client must not cost
//! the daemon threads or memory: a fixed pool of [`WORKERS`] serves
//! accepted connections from a queue of [`QUEUE`] (a connection that finds
//! it full is closed at once), a request must arrive whole within
//! [`REQUEST_DEADLINE`] of its connection's accept (time in the queue
//! counts, so idle connections cannot hold the queue for long) and its head
//! fit in [`MAX_HEAD`] bytes, and every reply closes its connection.

use crossbeam::channel::{bounded, Receiver, Sender, TrySendError};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub const WORKERS: usize = 4;
pub const QUEUE: usize = 64;
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(5);
pub const MAX_HEAD: usize = 8 << 10;
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

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
        let (tx, rx) = bounded::<Accepted>(QUEUE);
        let (pages, stop) = (Arc::new(pages), Arc::new(AtomicBool::new(false)));
        let mut threads = Vec::with_capacity(WORKERS + 1);
        for i in 0..WORKERS {
            let (rx, pages) = (rx.clone(), pages.clone());
            threads.push(spawn(format!("cuzk-http-{i}"), move || work(&rx, &pages))?);
        }
        let flag = stop.clone();
        threads.push(spawn("cuzk-http-accept".into(), move || accept(&listener, &tx, &flag))?);
        log::info!("status HTTP listening on http://{bound} (GET /status, GET /metrics)");
        Ok(Self { stop, threads, addr: bound })
    }

    /// Stops accepting, lets the workers finish what they hold, joins them.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Release);
        // The accept loop wakes on a connection: make one. Where that
        // fails the threads are left to end with the process.
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(if wake.is_ipv4() { [127, 0, 0, 1].into() } else { std::net::Ipv6Addr::LOCALHOST.into() });
        }
        if TcpStream::connect_timeout(&wake, Duration::from_secs(1)).is_ok() {
            for t in self.threads {
                let _ = t.join();
            }
        }
    }
}

fn spawn(name: String, f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>, String> {
    std::thread::Builder::new().name(name).spawn(f).map_err(|e| format!("cannot start an HTTP thread: {e}"))
}

/// A connection and the time its request must have arrived by.
type Accepted = (TcpStream, Instant);

fn accept(listener: &TcpListener, queue: &Sender<Accepted>, stop: &AtomicBool) {
    for conn in listener.incoming() {
        if stop.load(Ordering::Acquire) {
            return;
        }
        match conn {
            Ok(c) => {
                if let Err(TrySendError::Full((c, _))) = queue.try_send((c, Instant::now() + REQUEST_DEADLINE)) {
                    log::debug!("status HTTP: {QUEUE} connections waiting; closed {:?}", c.peer_addr());
                }
            }
            // Out of descriptors and the like: back off instead of spinning.
            Err(e) => {
                log::debug!("status HTTP accept: {e}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

fn work(queue: &Receiver<Accepted>, pages: &Pages) {
    for (mut conn, deadline) in queue {
        let reply = match read_head(&mut conn, deadline) {
            Ok(head) => route(&head, pages),
            Err(Refused::TooLarge) => (431, format!("request head over {MAX_HEAD} bytes\n"), "text/plain"),
            Err(Refused::Malformed) => (400, "not an HTTP request\n".to_string(), "text/plain"),
            // Nothing useful to say to a client that went quiet or away.
            Err(Refused::Gone) => continue,
        };
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

/// The request line and headers, read by `deadline`.
fn read_head(conn: &mut TcpStream, deadline: Instant) -> Result<String, Refused> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let text = String::from_utf8_lossy(&buf);
        if let Some(end) = text.find("\r\n\r\n").or_else(|| text.find("\n\n")) {
            return Ok(text[..end].to_string());
        }
        if buf.len() > MAX_HEAD {
            return Err(Refused::TooLarge);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || conn.set_read_timeout(Some(left)).is_err() {
            return Err(Refused::Gone);
        }
        match conn.read(&mut chunk) {
            Ok(0) => return Err(if buf.is_empty() { Refused::Gone } else { Refused::Malformed }),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Err(Refused::Gone),
        }
    }
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
