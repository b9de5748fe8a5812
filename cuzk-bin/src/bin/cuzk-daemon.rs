//! `cuzk-daemon`: the proving daemon (drop-in for the existing one): the
//! gRPC service `cuzk.v1.ProvingEngine` on `[daemon] listen`, the HTTP
//! status server on `[daemon] status_listen`, until SIGINT or SIGTERM.
//! `cuzk` with the same flags and no subcommand runs the same daemon.

use clap::Parser;
use cuzk_bin::daemon::process::{self, DaemonArgs};

#[global_allocator]
static ALLOC: cuzk_core::host_alloc::ChunkedRelease = cuzk_core::host_alloc::ChunkedRelease;

#[derive(Parser)]
#[command(name = "cuzk-daemon", version, about = "cuzk proving daemon (gRPC cuzk.v1.ProvingEngine)")]
struct Cli {
    #[command(flatten)]
    daemon: DaemonArgs,
}

fn main() {
    if let Err(e) = process::run(Cli::parse().daemon) {
        eprintln!("cuzk-daemon: error: {e}");
        std::process::exit(1);
    }
}
