//! The HTTP status server on `[daemon] status_listen`: `GET /status` (JSON)
//! and `GET /metrics` (Prometheus text), served by tiny_http on one thread.

use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::thread::JoinHandle;
use tiny_http::{Header, Method, Response, Server};

/// What the server answers with; called per request.
pub struct Pages {
    pub status: Box<dyn Fn() -> String + Send + Sync>,
    pub metrics: Box<dyn Fn() -> String + Send + Sync>,
}

pub struct StatusServer {
    server: Arc<Server>,
    thread: Option<JoinHandle<()>>,
    pub addr: SocketAddr,
}

impl StatusServer {
    pub fn start(addr: &str, pages: Pages) -> Result<Self, String> {
        let server = Arc::new(Server::http(addr).map_err(|e| format!("cannot serve HTTP status on {addr:?}: {e}"))?);
        let bound = server.server_addr().to_ip().ok_or_else(|| format!("status_listen {addr:?} is not an IP address"))?;
        let s = server.clone();
        let thread = std::thread::Builder::new()
            .name("cuzk-http".into())
            .spawn(move || serve(&s, &pages))
            .map_err(|e| format!("cannot start the HTTP thread: {e}"))?;
        log::info!("status HTTP listening on http://{bound} (GET /status, GET /metrics)");
        Ok(Self { server, thread: Some(thread), addr: bound })
    }

    pub fn stop(mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(server: &Server, pages: &Pages) {
    for req in server.incoming_requests() {
        let path = req.url().split('?').next().unwrap_or("").to_string();
        let page = |f: &(dyn Fn() -> String + Send + Sync), ctype| match catch_unwind(AssertUnwindSafe(f)) {
            Ok(body) => (200, body, ctype),
            Err(_) => (500, "the status page failed inside the daemon\n".to_string(), "text/plain"),
        };
        let (code, body, ctype) = match (req.method(), path.as_str()) {
            (Method::Get, "/status") => page(&*pages.status, "application/json"),
            (Method::Get, "/metrics") => page(&*pages.metrics, "text/plain; version=0.0.4"),
            (Method::Get, _) => (404, format!("no page {path}; try /status or /metrics\n"), "text/plain"),
            (m, _) => (405, format!("method {m} not allowed; only GET\n"), "text/plain"),
        };
        let header = |k: &str, v: &str| Header::from_bytes(k, v).expect("static header");
        // Any origin may read the pages: browser dashboards fetch them
        // from pages served elsewhere (as with the existing daemon).
        let response = Response::from_string(body)
            .with_status_code(code)
            .with_header(header("Content-Type", ctype))
            .with_header(header("Access-Control-Allow-Origin", "*"));
        if let Err(e) = req.respond(response) {
            log::debug!("status HTTP reply failed: {e}");
        }
    }
}
