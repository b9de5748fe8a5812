//! `cuzk-bench`: the existing daemon's bench and test tool by its command
//! lines, so operators' scripts run unchanged: global `-a/--addr` (default
//! `http://127.0.0.1:9820`; `unix:///path` and `host:port` too) and
//! `--log-level`, then `single`, `batch`, `status`, `preload`, `metrics`,
//! `gen-vanilla`, `synth-only` with their flags. `cuzk` takes this form
//! when invoked under that name (build/install.sh links it). The proof
//! subcommands are `cuzk`'s own, whose flags include every one of the
//! existing tool's; `single`, `batch` and `status` print the existing
//! tool's result lines (`bench_report`) and every command exits with its
//! codes (0; 1 for an error; 2 for a usage error), so scripts that parse
//! them keep working. Its benchmarks of its own in-process pipeline
//! (`pce-bench`, `pce-pipeline`, `slotted-bench`) say what to use here
//! instead.

use crate::{bench_report, cmd};
use clap::{Parser, Subcommand};
use cuzk_bin::client::describe;
use cuzk_bin::proto as pb;
use std::path::Path;

/// Whether this process was started as `cuzk-bench`.
pub fn invoked_as_bench_tool() -> bool {
    std::env::args_os().next().is_some_and(|a| Path::new(&a).file_name().is_some_and(|n| n == "cuzk-bench"))
}

#[derive(Parser)]
#[command(name = "cuzk-bench", version, about = "cuzk daemon client and benchmarks (the existing cuzk-bench's command lines)")]
struct Cli {
    /// Daemon address: http://host:port, host:port or unix:///path.
    #[arg(short = 'a', long, global = true, default_value = "http://127.0.0.1:9820")]
    addr: String,
    /// Log level or filter directives.
    #[arg(long, global = true, default_value = "info")]
    log_level: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// One proof through the daemon.
    Single(cmd::single::Args),
    /// N proofs through the daemon, J at a time; throughput.
    Batch(cmd::batch::Args),
    /// The daemon's status.
    Status,
    /// Load an SRS before proofs need it.
    Preload(cmd::daemon_info::PreloadArgs),
    /// The daemon's Prometheus metrics.
    Metrics,
    /// PoRep C2 synthesis alone, in this process.
    #[cfg(feature = "filecoin")]
    SynthOnly(cmd::synth_only::Args),
    /// Vanilla proofs (PoSt, SnapDeals) of a sealed sector, for --vanilla.
    #[cfg(feature = "filecoin")]
    #[command(subcommand)]
    GenVanilla(cmd::gen_vanilla::GenVanilla),
    /// (The existing tool's PCE extraction benchmark: see the message.)
    PceBench(Unsupported),
    /// (The existing tool's PCE memory benchmark: see the message.)
    PcePipeline(Unsupported),
    /// (The existing tool's partition-slot benchmark: see the message.)
    SlottedBench(Unsupported),
}

/// A subcommand of the existing tool with no counterpart here: any flags
/// are taken so the message, not a usage error, is what the operator sees.
#[derive(clap::Args)]
struct Unsupported {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    args: Vec<String>,
}

const PCE_BENCH: &str = "pce-bench measured the existing daemon's own PCE extraction. Here: `cuzk pce build|info|verify` \
     (record and check a circuit's R1CS) and `cuzk bench synth|spmv` (synthesis with and without the PCE).";
const PCE_PIPELINE: &str = "pce-pipeline measured the existing daemon's in-process PCE memory use. Here proving memory is \
     the daemon's [memory] budget; measure it through the daemon: `cuzk-bench batch` and `GET /status` (memory).";
const SLOTTED_BENCH: &str = "slotted-bench tried the existing daemon's partition slot sizes in-process. Here the \
     equivalent knob is [synthesis] partition_workers in the daemon's config; compare settings with `cuzk-bench batch`.";

pub fn main() -> ! {
    // Usage errors exit 2 and --help 0, as clap does for the existing tool.
    let cli = Cli::parse();
    crate::init_logging(&cli.log_level);
    let conn = cmd::proof_request::Conn { addr: cli.addr };
    let unsupported = |why: &str| -> anyhow::Result<()> { Err(anyhow::anyhow!("{why}")) };
    let result = match cli.command {
        Command::Single(a) => single(&conn, a),
        Command::Batch(a) => batch(&conn, a),
        Command::Status => status(&conn),
        Command::Preload(a) => cmd::daemon_info::preload(&conn, a),
        Command::Metrics => cmd::daemon_info::metrics(&conn),
        #[cfg(feature = "filecoin")]
        Command::SynthOnly(a) => cmd::synth_only::run(a),
        #[cfg(feature = "filecoin")]
        Command::GenVanilla(c) => cmd::gen_vanilla::run(c),
        Command::PceBench(_) => unsupported(PCE_BENCH),
        Command::PcePipeline(_) => unsupported(PCE_PIPELINE),
        Command::SlottedBench(_) => unsupported(SLOTTED_BENCH),
    };
    // The existing tool's exit: 0, or 1 with "Error: …" on stderr (what
    // its main returning an error printed). A proof that was not made is
    // a result it reports, not an error.
    if let Err(e) = result {
        eprintln!("Error: {e:?}");
        std::process::exit(1);
    }
    std::process::exit(0)
}

/// One proof, reported in the existing tool's result block.
fn single(conn: &cmd::proof_request::Conn, a: cmd::single::Args) -> anyhow::Result<()> {
    let p = cmd::single::prove(conn, &a)?;
    print!("{}", bench_report::proof_result(&p.r, p.wall));
    if p.completed() {
        p.finish(&a)?;
    }
    Ok(())
}

/// N proofs, reported in the existing tool's batch lines.
fn batch(conn: &cmd::proof_request::Conn, a: cmd::batch::Args) -> anyhow::Result<()> {
    let header = || print!("{}", bench_report::batch_header(&a.proof.proof_type, a.count, a.concurrency));
    let (results, wall) = cmd::batch::prove_all(conn, &a, header)?;
    let (text, error) = bench_report::batch_result(&results, a.count, wall);
    print!("{text}");
    error.map_or(Ok(()), |e| Err(anyhow::anyhow!(e)))
}

fn status(conn: &cmd::proof_request::Conn) -> anyhow::Result<()> {
    let s = conn.client()?.get_status(&pb::GetStatusRequest {}).map_err(|e| anyhow::anyhow!("GetStatus RPC failed: {}", describe(&e)))?;
    print!("{}", bench_report::status(&s));
    Ok(())
}
