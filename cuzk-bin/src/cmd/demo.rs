//! `cuzk demo`: the whole service on an embedded circuit: setup (cached
//! under a work folder, named as the daemon's param cache expects), an
//! in-process cuzk-daemon on a temporary unix socket, a few proofs through
//! the gRPC API at once, each verified against the .vk, and a timing table.

use crate::cmd;
use crate::cmd::proof_request::{ProofArgs, VanillaArgs, Verifier};
use anyhow::{bail, ensure, Context, Result};
use cuzk_bin::client::{self, describe};
use cuzk_bin::daemon::Daemon;
use cuzk_bin::proto as pb;
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::config::Config;
use cuzk_core::engine::{BuiltinJob, ShutdownMode};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// The embedded circuit.
    #[arg(long, default_value = "synthetic:2^16:8")]
    pub circuit: CircuitSpec,
    /// Proofs to make (submitted at once; the daemon shares the SRS).
    #[arg(long, default_value_t = 4)]
    pub proofs: u64,
    /// Folder for the generated params (the daemon's param cache; reused across runs).
    #[arg(long, default_value = "target/cuzk-demo")]
    pub workdir: PathBuf,
    /// Show the daemon's info logs (by default only warnings, so the table stays readable).
    #[arg(long)]
    pub verbose: bool,
}

pub fn run(a: Args) -> Result<()> {
    ensure!(a.proofs > 0, "--proofs must be at least 1");
    if !a.verbose {
        log::set_max_level(log::LevelFilter::Warn.min(log::max_level()));
    }
    std::fs::create_dir_all(&a.workdir)?;
    let circuit_id = BuiltinJob::circuit_id_of(&a.circuit);
    let params_path = a.workdir.join(format!("{circuit_id}.params"));
    let vk_path = params_path.with_extension("vk");
    let mut rows: Vec<(String, f64)> = Vec::new();
    if !params_path.exists() || !vk_path.exists() {
        let (params, secs) = cmd::setup::generate(&a.circuit)?;
        cmd::setup::write(&params, &params_path, &vk_path)?;
        rows.push(("setup (random toxic waste)".into(), secs));
    }

    let sock_dir = std::env::temp_dir().join(format!("cuzk-demo-{}", std::process::id()));
    let mut config = Config::default();
    config.daemon.listen = format!("unix://{}", sock_dir.join("cuzk.sock").display());
    config.srs.param_cache = a.workdir.canonicalize()?;
    config.daemon.builtin_max_constraints = config.daemon.builtin_max_constraints.max(a.circuit.constraints());
    let t = Instant::now();
    let daemon = Daemon::start(config).map_err(anyhow::Error::msg).context("starting the daemon")?;
    rows.push(("start daemon (engine + gRPC)".into(), t.elapsed().as_secs_f64()));
    let backend = daemon.engine().status().backend;
    println!(
        "cuzk demo: {} × {} through cuzk-daemon at {} ({backend} backend{})",
        a.proofs,
        a.circuit,
        daemon.address(),
        if backend == "cpu" { "; no CUDA device, or CUZK_BACKEND=cpu" } else { "" }
    );
    let result = prove_through(&daemon, &a, &circuit_id, &vk_path, &mut rows);
    daemon.shutdown(ShutdownMode::Cancel);
    let _ = std::fs::remove_dir(&sock_dir);
    let per = result?;

    println!("\n| {:<44} | {:>10} |", "step", "seconds");
    println!("|{:-<46}|{:->12}|", "", "");
    for (what, s) in &rows {
        println!("| {what:<44} | {s:>10.3} |");
    }
    println!("\nper proof (daemon timings, ms): {:>8} {:>8} {:>8} {:>8}", "queue", "synth", "prove", "total");
    for (i, r) in per.iter().enumerate() {
        println!("  {:<2} {:<26} {:>8} {:>8} {:>8} {:>8}", i, r.job_id, r.queue_wait_ms, r.synthesis_ms, r.gpu_compute_ms, r.total_ms);
    }
    println!("\nall {} proofs valid; params in {}", a.proofs, a.workdir.display());
    Ok(())
}

/// Preloads the SRS, proves `a.proofs` at once over gRPC, verifies them.
fn prove_through(
    daemon: &Daemon,
    a: &Args,
    circuit_id: &str,
    vk: &Path,
    rows: &mut Vec<(String, f64)>,
) -> Result<Vec<pb::AwaitProofResponse>> {
    let client = client::connect(daemon.address()).map_err(anyhow::Error::msg)?;
    let t = Instant::now();
    let pre = client
        .preload_srs(&pb::PreloadSrsRequest { circuit_id: circuit_id.into() })
        .map_err(|e| anyhow::anyhow!("PreloadSRS: {}", describe(&e)))?;
    rows.push((format!("PreloadSRS (read + validate {} ms)", pre.load_time_ms), t.elapsed().as_secs_f64()));

    let args = proof_args(a, vk);
    let t = Instant::now();
    let responses: Vec<Result<pb::AwaitProofResponse>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..a.proofs)
            .map(|i| {
                let (client, args) = (&client, &args);
                s.spawn(move || -> Result<pb::AwaitProofResponse> {
                    let submit = args.request(i, format!("demo-{}-{i}", std::process::id()))?;
                    let r =
                        client.prove(&pb::ProveRequest { submit: Some(submit) }).map_err(|e| anyhow::anyhow!("Prove: {}", describe(&e)))?;
                    r.result.context("ProveResponse without a result")
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| bail!("a client thread panicked"))).collect()
    });
    let prove_s = t.elapsed().as_secs_f64();
    rows.push((format!("prove {} via gRPC Prove (all at once)", a.proofs), prove_s));
    rows.push(("  per proof (wall / proofs)".into(), prove_s / a.proofs as f64));

    let verifier: Verifier = args.verifier()?.context("a verifier")?;
    let t = Instant::now();
    let mut out = Vec::new();
    for (i, r) in responses.into_iter().enumerate() {
        let r = r?;
        if r.status != pb::await_proof_response::Status::Completed as i32 {
            bail!("proof {i} ({}) did not complete: {}", r.job_id, r.error_message);
        }
        verifier.check(i as u64, &r.proof).with_context(|| format!("proof {i} ({})", r.job_id))?;
        out.push(r);
    }
    rows.push((format!("verify {} proofs (.vk, public inputs)", a.proofs), t.elapsed().as_secs_f64()));
    Ok(out)
}

fn proof_args(a: &Args, vk: &Path) -> ProofArgs {
    ProofArgs {
        proof_type: "builtin".into(),
        c1: None,
        vanilla_args: VanillaArgs::default(),
        sector_size: 0,
        sector_num: 0,
        miner_id: 0,
        partition: 0,
        priority: None,
        circuit: a.circuit.to_string(),
        partitions: 1,
        seed: 1000,
        vk: Some(vk.to_path_buf()),
    }
}
