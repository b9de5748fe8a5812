//! The daemon: the engine behind the gRPC service `cuzk.v1.ProvingEngine`
//! on a TCP or unix socket, and the HTTP status server. Run as a process
//! by `process` (`cuzk-daemon`, `cuzk` without a subcommand) and
//! in-process by `cuzk demo`.
//!
//! Shutdown: stop taking jobs, drain or cancel the engine's jobs, let the
//! waiting calls answer, stop the servers, remove the socket file.

pub mod blocking_pool;
pub mod http;
pub mod listen;
pub mod methods;
pub mod process;
pub mod rpc_metrics;
pub mod service;
pub mod status_json;
pub mod wire;

use crate::proto::MAX_MESSAGE_BYTES;
use cuzk_core::config::Config;
use cuzk_core::engine::{Engine, ShutdownMode};
use grpcio::{ChannelBuilder, EnvBuilder, ServerBuilder, ServerCredentials};
use listen::ListenAddr;
use rpc_metrics::RpcMetrics;
use service::ProvingService;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long shutdown waits for calls to finish answering before it
/// cancels them.
const CALL_GRACE: Duration = Duration::from_secs(10);

pub struct Daemon {
    engine: Arc<Engine>,
    service: ProvingService,
    server: Mutex<Option<grpcio::Server>>,
    http: Mutex<Option<http::StatusServer>>,
    listen: ListenAddr,
    /// The address clients use (the real port when the config said :0).
    address: String,
    status_addr: Option<std::net::SocketAddr>,
}

impl Daemon {
    /// Starts the engine and both servers per `config`.
    pub fn start(config: Config) -> Result<Daemon, String> {
        let listen = ListenAddr::parse(&config.daemon.listen)?;
        let status_listen = config.daemon.status_listen.trim().to_string();
        let socket_mode = config.daemon.socket_mode.0;
        let (builtin_max_constraints, max_waiting_calls) = (config.daemon.builtin_max_constraints, config.daemon.max_waiting_calls);
        listen.prepare()?;
        let engine = Arc::new(Engine::start(config).map_err(|e| e.to_string())?);
        let metrics = Arc::new(RpcMetrics::default());
        let service = ProvingService::new(engine.clone(), metrics.clone(), builtin_max_constraints, max_waiting_calls);

        let env = Arc::new(EnvBuilder::new().name_prefix("cuzk-grpc").build());
        // gRPC sets SO_REUSEPORT on its listening sockets by default: a
        // second daemon on the same TCP port would then start and take half
        // the connections. Without it, its bind fails as it should.
        let args = ChannelBuilder::new(env.clone())
            .max_receive_message_len(methods::RECEIVE_CEILING_BYTES as i32)
            .max_send_message_len(MAX_MESSAGE_BYTES as i32)
            .raw_cfg_int(std::ffi::CString::new("grpc.so_reuseport").expect("no NUL in the key"), 0)
            .build_args();
        let mut server = ServerBuilder::new(env)
            .channel_args(args)
            .register_service(methods::proving_engine(service.clone()))
            .build()
            .map_err(|e| format!("cannot build the gRPC server: {e}"))?;
        let port = with_private_umask(|| server.add_listening_port(listen.grpc_target(), ServerCredentials::insecure()))
            .map_err(|e| listen.bind_failure(&e))?;
        listen.set_mode(socket_mode)?;
        server.start();
        let address = match &listen {
            ListenAddr::Tcp(hp) => format!("{}:{port}", hp.rsplit_once(':').map_or(hp.as_str(), |(h, _)| h)),
            ListenAddr::Unix(_) => listen.to_string(),
        };
        log::info!("gRPC cuzk.v1.ProvingEngine listening on {address}");

        let http = if status_listen.is_empty() {
            None
        } else {
            let (e1, e2, l) = (engine.clone(), engine.clone(), address.clone());
            let pages = http::Pages {
                status: Box::new(move || status_json::status_json(&e1.status(), &l).to_string()),
                metrics: Box::new(move || e2.metrics() + &metrics.prometheus()),
            };
            // Status pages are for people and dashboards: without them the
            // daemon still proves (as the existing daemon does).
            match http::StatusServer::start(&status_listen, pages) {
                Ok(s) => Some(s),
                Err(e) => {
                    log::error!("{e}; the daemon serves gRPC without GET /status and GET /metrics");
                    None
                }
            }
        };
        let status_addr = http.as_ref().map(|h| h.addr);
        Ok(Daemon { engine, service, server: Mutex::new(Some(server)), http: Mutex::new(http), listen, address, status_addr })
    }

    /// `host:port` or `unix:///path`, as clients connect to it.
    pub fn address(&self) -> &str {
        &self.address
    }

    pub fn status_addr(&self) -> Option<std::net::SocketAddr> {
        self.status_addr
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Cancels every unfinished job (a second signal during a drain, or
    /// a drain past its timeout); returns the ones cancelled.
    pub fn cancel_all_jobs(&self) -> Vec<cuzk_core::engine::JobId> {
        self.service.cancel_all()
    }

    /// Stops the daemon; `Drain` proves what was submitted first. Calls
    /// waiting for jobs get their answers before the servers stop.
    pub fn shutdown(&self, mode: ShutdownMode) {
        log::info!("daemon shutting down mode={mode:?}");
        self.engine.shutdown(mode);
        if let Some(mut server) = self.server.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let (tx, rx) = crossbeam::channel::bounded(1);
            let done = server.shutdown();
            let _ = std::thread::Builder::new().name("cuzk-grpc-stop".into()).spawn(move || {
                let _ = tx.send(futures::executor::block_on(done));
            });
            if rx.recv_timeout(CALL_GRACE).is_err() {
                log::warn!("gRPC calls still open after {CALL_GRACE:?}; cancelling them");
                server.cancel_all_calls();
                let _ = rx.recv_timeout(CALL_GRACE);
            }
        }
        if let Some(http) = self.http.lock().unwrap_or_else(|e| e.into_inner()).take() {
            http.stop();
        }
        self.listen.cleanup();
    }
}

/// Binds with umask 0177 so a unix socket is owner-only until its mode is
/// set (never more open than configured, not even between bind and chmod).
fn with_private_umask<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: umask only swaps the process file-creation mask.
    let old = unsafe { libc::umask(0o177) };
    let out = f();
    unsafe { libc::umask(old) };
    out
}
