//! The daemon as a process: the config (file, then flags), logging, start,
//! signals and shutdown. `cuzk-daemon` and `cuzk` without a subcommand
//! (the existing daemon's binary name and command line) both run this.
//!
//! Logs to stdout (as the existing daemon does), and among the log lines
//! prints one line `cuzk-daemon listening on <address>` once the service
//! accepts calls (with the real port when the config says :0).

use super::Daemon;
use cuzk_core::config::{Config, Loaded};
use cuzk_core::engine::{logging, ShutdownMode};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the existing daemon and its systemd unit keep the config.
pub const DEFAULT_CONFIG: &str = "/data/zk/cuzk.toml";

/// The daemon's command line (the existing daemon's flags).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct DaemonArgs {
    /// Config file (TOML) [default: /data/zk/cuzk.toml]. When the file is
    /// missing the daemon runs on the built-in defaults (with a warning
    /// naming it, when it was named), as the existing daemon does.
    #[arg(short = 'c', long = "config")]
    pub config: Option<PathBuf>,
    /// Listen address, overriding [daemon] listen: host:port or unix:///path.
    #[arg(short = 'l', long = "listen")]
    pub listen: Option<String>,
    /// Log filter, overriding [logging] level: a level (error, warn, info,
    /// debug, trace) or directives such as "info,cuzk_core=debug";
    /// RUST_LOG overrides. (Global: `cuzk`'s subcommands take it too.)
    #[arg(long = "log-level", global = true)]
    pub log_level: Option<String>,
}

/// Runs the daemon until SIGINT or SIGTERM and its shutdown.
pub fn run(args: DaemonArgs) -> Result<(), String> {
    let (loaded, note) = load_config(args.config.as_deref())?;
    let mut config = loaded.config;
    if let Some(l) = args.listen {
        config.daemon.listen = l;
    }
    if let Some(level) = args.log_level {
        config.logging.level = level;
    }
    config.validate().map_err(|e| e.to_string())?;
    logging::init(&config.logging)?;
    log::info!("cuzk-daemon starting (version {}, {note})", env!("CARGO_PKG_VERSION"));
    for w in &loaded.warnings {
        log::warn!("{w}");
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    for w in cuzk_core::config::upstream_tuning_notes(&config, cpus) {
        log::warn!("{w}");
    }
    // Built-in circuits prove without it; Filecoin circuits name it when they need it.
    if let Some(problem) = cuzk_core::config::param_cache_problem(&config.srs.param_cache) {
        log::warn!("{problem}: circuits whose parameters are not built in cannot load until it is a folder");
    }
    let mode = if config.daemon.shutdown == "cancel" { ShutdownMode::Cancel } else { ShutdownMode::Drain };
    let timeout = config.daemon.shutdown_timeout.0;
    // Register before starting so an early signal is not lost.
    let mut signals = Signals::new([SIGINT, SIGTERM]).map_err(|e| format!("cannot install signal handlers: {e}"))?;
    let daemon = Arc::new(Daemon::start(config)?);
    log::info!("cuzk-daemon ready, serving on {}", daemon.address());
    // Best effort: nobody may be reading stdout (a closed pipe is no error).
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "cuzk-daemon listening on {}", daemon.address());
    match daemon.status_addr() {
        Some(a) => writeln!(out, "cuzk-daemon status on http://{a}"),
        None => writeln!(out, "cuzk-daemon status off"),
    }
    .ok();
    let _ = out.flush();
    drop(out);

    let first = signals.forever().next().unwrap_or(SIGTERM);
    log::info!(
        "signal {} received: shutting down ({mode:?}, at most {:?} before cancelling); a second signal cancels all jobs",
        signal_name(first),
        timeout
    );
    let d = daemon.clone();
    let (done_tx, done_rx) = crossbeam::channel::bounded::<()>(1);
    let stopper = std::thread::Builder::new()
        .name("cuzk-shutdown".into())
        .spawn(move || {
            d.shutdown(mode);
            let _ = done_tx.send(());
        })
        .map_err(|e| format!("cannot start the shutdown thread: {e}"))?;
    let handle = signals.handle();
    let d = daemon.clone();
    let watcher = std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            log_cancelled(&format!("signal {} during shutdown", signal_name(sig)), &d.cancel_all_jobs());
        }
    });
    // Past the timeout (below systemd's stop timeout, which ends in
    // SIGKILL) the drain gives up: what still runs is cancelled.
    if done_rx.recv_timeout(timeout).is_err() {
        log_cancelled(&format!("drain still running after daemon.shutdown_timeout {timeout:?}"), &daemon.cancel_all_jobs());
    }
    let _ = stopper.join();
    handle.close();
    let _ = watcher.join();
    log::info!("cuzk-daemon stopped");
    Ok(())
}

/// The config with its warnings, and a note saying where it came from:
/// `path` (else [`DEFAULT_CONFIG`]) where it exists, else the built-in
/// defaults (as the daemon reads it; subcommands that write where the
/// daemon reads take it from here too).
///
/// A missing file, even one named with `--config`, means the defaults, as
/// the existing daemon does: under systemd's `Restart=on-failure` a daemon
/// that exits for it would only restart in a loop. A named file that is
/// missing is a warning naming it (likely a typo); a file that exists but
/// cannot be read or parsed stays an error.
pub fn load_config(path: Option<&Path>) -> Result<(Loaded, String), String> {
    let (file, named) = match path {
        Some(p) => (p, true),
        None => (Path::new(DEFAULT_CONFIG), false),
    };
    if !file.exists() {
        let mut warnings = Vec::new();
        if named {
            warnings.push(format!("config file {} does not exist: running on the built-in defaults", file.display()));
        }
        let loaded = Loaded { config: Config::default(), warnings };
        return Ok((loaded, format!("no config file at {}: built-in defaults", file.display())));
    }
    Config::read(file).map(|l| (l, format!("config {}", file.display()))).map_err(|e| e.to_string())
}

fn log_cancelled(why: &str, jobs: &[cuzk_core::engine::JobId]) {
    let ids: Vec<String> = jobs.iter().map(|j| j.to_string()).collect();
    log::warn!("{why}: cancelled {} unfinished job(s) [{}]", ids.len(), ids.join(", "));
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "?",
    }
}
