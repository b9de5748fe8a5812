//! `cuzk-daemon`: the proving daemon (drop-in for the existing one): the
//! gRPC service `cuzk.v1.ProvingEngine` on `[daemon] listen`, the HTTP
//! status server on `[daemon] status_listen`, until SIGINT or SIGTERM.
//!
//! Prints one line `cuzk-daemon listening on <address>` on stdout once the
//! service accepts calls (with the real port when the config says :0).

use clap::Parser;
use cuzk_bin::daemon::Daemon;
use cuzk_core::config::Config;
use cuzk_core::engine::{logging, ShutdownMode};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

const DEFAULT_CONFIG: &str = "/data/zk/cuzk.toml";

#[derive(Parser)]
#[command(name = "cuzk-daemon", version, about = "cuzk proving daemon (gRPC cuzk.v1.ProvingEngine)")]
struct Args {
    /// Config file (TOML). A missing default file means built-in defaults.
    #[arg(short = 'c', long = "config")]
    config: Option<PathBuf>,
    /// Listen address, overriding [daemon] listen: host:port or unix:///path.
    #[arg(short = 'l', long = "listen")]
    listen: Option<String>,
    /// Log level, overriding [logging] level (error, warn, info, debug, trace).
    #[arg(long = "log-level")]
    log_level: Option<String>,
}

fn main() {
    if let Err(e) = run(Args::parse()) {
        eprintln!("cuzk-daemon: error: {e}");
        std::process::exit(1);
    }
}

fn run(args: Args) -> Result<(), String> {
    let (mut config, note) = load_config(args.config.as_deref())?;
    if let Some(l) = args.listen {
        config.daemon.listen = l;
    }
    if let Some(level) = args.log_level {
        config.logging.level = level;
    }
    config.validate().map_err(|e| e.to_string())?;
    logging::init(&config.logging)?;
    log::info!("cuzk-daemon {} starting: {note}", env!("CARGO_PKG_VERSION"));
    let mode = if config.daemon.shutdown == "cancel" { ShutdownMode::Cancel } else { ShutdownMode::Drain };
    // Register before starting so an early signal is not lost.
    let mut signals = Signals::new([SIGINT, SIGTERM]).map_err(|e| format!("cannot install signal handlers: {e}"))?;
    let daemon = Arc::new(Daemon::start(config)?);
    // Best effort: nobody may be reading stdout (a closed pipe is no error).
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "cuzk-daemon listening on {}", daemon.address());
    if let Some(a) = daemon.status_addr() {
        let _ = writeln!(out, "cuzk-daemon status on http://{a}");
    }
    let _ = out.flush();
    drop(out);

    let first = signals.forever().next().unwrap_or(SIGTERM);
    log::info!("signal {} received: shutting down ({mode:?}); a second signal cancels all jobs", signal_name(first));
    let d = daemon.clone();
    let stopper = std::thread::Builder::new()
        .name("cuzk-shutdown".into())
        .spawn(move || d.shutdown(mode))
        .map_err(|e| format!("cannot start the shutdown thread: {e}"))?;
    let handle = signals.handle();
    let d = daemon.clone();
    let watcher = std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            let n = d.cancel_all_jobs();
            log::warn!("signal {} during shutdown: cancelled {n} unfinished job(s)", signal_name(sig));
        }
    });
    let _ = stopper.join();
    handle.close();
    let _ = watcher.join();
    Ok(())
}

/// The config, and a note saying where it came from.
fn load_config(path: Option<&std::path::Path>) -> Result<(Config, String), String> {
    match path {
        Some(p) => Config::from_file(p).map(|c| (c, format!("config {}", p.display()))).map_err(|e| e.to_string()),
        None if !std::path::Path::new(DEFAULT_CONFIG).exists() => {
            eprintln!("cuzk-daemon: no config file at {DEFAULT_CONFIG}: running with built-in defaults");
            Ok((Config::default(), format!("no {DEFAULT_CONFIG}, built-in defaults")))
        }
        None => Config::from_file(DEFAULT_CONFIG.as_ref()).map(|c| (c, format!("config {DEFAULT_CONFIG}"))).map_err(|e| e.to_string()),
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "?",
    }
}
