//! `cuzk`: parameter setup, proving, verification, benchmarks and the demo
//! on built-in circuits and params files; client of a running cuzk-daemon.
//! Without a subcommand it is the daemon, with the existing daemon's
//! command line (`cuzk --config /data/zk/cuzk.toml`), as its systemd unit
//! runs it. Invoked as `cuzk-bench` (the link build/install.sh makes) it
//! takes the existing bench tool's command lines (see `bench_tool`).

mod bench_report;
mod bench_tool;
mod cmd;
mod files;
mod progress;

use clap::{Parser, Subcommand};
use cuzk_bin::daemon::process::{self, DaemonArgs};

#[global_allocator]
static ALLOC: cuzk_core::host_alloc::ChunkedRelease = cuzk_core::host_alloc::ChunkedRelease;

#[derive(Parser)]
#[command(name = "cuzk", version, about = "Groth16 prover for BLS12-381 (Filecoin); without a subcommand, the proving daemon")]
struct Cli {
    /// Daemon flags; --log-level also sets the subcommands' log level.
    #[command(flatten)]
    daemon: DaemonArgs,
    /// Worker threads for CPU work (default: all CPUs).
    #[arg(long, global = true)]
    threads: Option<usize>,
    /// Daemon address of the client subcommands: unix:///path, host:port or http://host:port.
    #[arg(short = 'a', long, global = true, env = "CUZK_ADDR", default_value = "unix:///run/curio/cuzk.sock")]
    addr: String,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Generate parameters (.params and .vk) for a built-in circuit from random toxic waste.
    Setup(cmd::setup::Args),
    /// Prove instances of a built-in circuit with a params file.
    Prove(cmd::prove::Args),
    /// Verify proofs against a .vk (or .params) file and public inputs.
    Verify(cmd::verify::Args),
    /// Pre-compiled constraint systems: build, info, verify.
    #[command(subcommand)]
    Pce(cmd::pce::PceCommand),
    /// Measure setup, proving, NTT and MSM speed.
    #[command(subcommand)]
    Bench(cmd::bench::Bench),
    /// End to end on an embedded circuit: setup, prove, verify, timing table.
    Demo(cmd::demo::Args),
    /// Busy fraction and gap statistics per prover worker and GPU from an engine timeline.
    Timeline(cmd::timeline::Args),
    /// Test parameters for a Filecoin circuit under its production file names.
    #[cfg(feature = "filecoin")]
    FilecoinSetup(cmd::filecoin_setup::Args),
    /// Production-shape Filecoin inputs (valid, deterministic in a seed) without a sealed sector.
    #[cfg(feature = "filecoin")]
    FilecoinWorkload(cmd::filecoin_workload::Args),
    /// Check a proof of a filecoin-workload input with filecoin-proofs' own verifier and a param cache's .vk.
    #[cfg(feature = "filecoin")]
    FilecoinVerify(cmd::filecoin_verify::Args),
    /// Daemon client: one proof through a running cuzk-daemon.
    Single(cmd::single::Args),
    /// Daemon client: N proofs, J at a time; throughput and latency.
    Batch(cmd::batch::Args),
    /// Daemon client: queues, devices, SRS entries, counters.
    Status,
    /// Daemon client: load an SRS before proofs need it.
    Preload(cmd::daemon_info::PreloadArgs),
    /// Daemon client: Prometheus metrics text.
    Metrics,
}

fn main() {
    if bench_tool::invoked_as_bench_tool() {
        bench_tool::main();
    }
    let cli = Cli::parse();
    if let Some(t) = cli.threads {
        cuzk_core::par::set_threads(t);
    }
    if cli.command.is_some() && (cli.daemon.config.is_some() || cli.daemon.listen.is_some()) {
        eprintln!("error: -c/--config and -l/--listen are daemon flags: give them without a subcommand");
        std::process::exit(2);
    }
    let Some(command) = cli.command else {
        if let Err(e) = process::run(cli.daemon) {
            eprintln!("cuzk-daemon: error: {e}");
            std::process::exit(1);
        }
        return;
    };
    init_logging(cli.daemon.log_level.as_deref().unwrap_or("info"));
    let conn = cmd::proof_request::Conn { addr: cli.addr };
    let result = match command {
        Command::Setup(a) => cmd::setup::run(a),
        Command::Prove(a) => cmd::prove::run(a),
        Command::Verify(a) => cmd::verify::run(a),
        Command::Pce(c) => cmd::pce::run(c),
        Command::Bench(b) => cmd::bench::run(b),
        Command::Demo(a) => cmd::demo::run(a),
        Command::Timeline(a) => cmd::timeline::run(a),
        #[cfg(feature = "filecoin")]
        Command::FilecoinSetup(a) => cmd::filecoin_setup::run(a),
        #[cfg(feature = "filecoin")]
        Command::FilecoinWorkload(a) => cmd::filecoin_workload::run(a),
        #[cfg(feature = "filecoin")]
        Command::FilecoinVerify(a) => cmd::filecoin_verify::run(a),
        Command::Single(a) => cmd::single::run(&conn, a),
        Command::Batch(a) => cmd::batch::run(&conn, a),
        Command::Status => cmd::daemon_info::status(&conn),
        Command::Preload(a) => cmd::daemon_info::preload(&conn, a),
        Command::Metrics => cmd::daemon_info::metrics(&conn),
    };
    exit_on_error(result);
}

fn init_logging(filter: &str) {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(filter)).format_timestamp_millis().init();
}

/// Exits with 1 for an invalid proof, 2 for any other error.
fn exit_on_error(result: anyhow::Result<()>) {
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(match e.downcast_ref::<cmd::verify::Invalid>() {
            Some(_) => 1,
            None => 2,
        });
    }
}
