//! `cuzk single`: one proof through the daemon (Prove), its timings, and
//! optionally the proof written to a file and checked against a .vk.
//! `cuzk-bench single` makes it the same way and reports it in the existing
//! tool's lines (`crate::bench_report`).

use super::proof_request::{status_name, Conn, ProofArgs, Verifier};
use anyhow::{bail, Context, Result};
use cuzk_bin::client::describe;
use cuzk_bin::proto as pb;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub proof: ProofArgs,
    /// Write the proof bytes here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Idempotency key (default: a fresh one).
    #[arg(long)]
    pub request_id: Option<String>,
}

/// A proof asked of the daemon: its response and the call's wall time.
pub struct Proved {
    pub r: pb::AwaitProofResponse,
    pub wall: Duration,
    verifier: Option<Verifier>,
}

/// Asks the daemon for the proof `a` describes (Prove); the --vk is read
/// first, so a bad one fails before the proof is made.
pub fn prove(conn: &Conn, a: &Args) -> Result<Proved> {
    let verifier = a.proof.verifier()?;
    let id = a.request_id.clone().unwrap_or_else(|| format!("single-{}-{}", std::process::id(), now_ms()));
    let submit = a.proof.request(0, id)?;
    let client = conn.client()?;
    let t = Instant::now();
    let resp = client.prove(&pb::ProveRequest { submit: Some(submit) }).map_err(|e| anyhow::anyhow!("Prove failed: {}", describe(&e)))?;
    let wall = t.elapsed();
    let r = resp.result.context("the daemon's ProveResponse has no result")?;
    Ok(Proved { r, wall, verifier })
}

impl Proved {
    pub fn completed(&self) -> bool {
        self.r.status == pb::await_proof_response::Status::Completed as i32
    }

    /// A made proof: checked against --vk, written to --out.
    pub fn finish(&self, a: &Args) -> Result<()> {
        if let Some(v) = &self.verifier {
            v.check(0, &self.r.proof)?;
            println!("verified against the vk: valid");
        }
        if let Some(out) = &a.out {
            std::fs::write(out, &self.r.proof).with_context(|| format!("writing {}", out.display()))?;
            println!("wrote {}", out.display());
        }
        Ok(())
    }
}

pub fn run(conn: &Conn, a: Args) -> Result<()> {
    let p = prove(conn, &a)?;
    let r = &p.r;
    println!("status:    {}", status_name(r.status));
    println!("job_id:    {}", r.job_id);
    if !p.completed() {
        println!("error:     {}", r.error_message);
        bail!("proof not made: {}", r.error_message);
    }
    println!(
        "timings:   total={} ms (queue={} ms, srs={} ms, synth={} ms, gpu={} ms)",
        r.total_ms, r.queue_wait_ms, r.srs_load_ms, r.synthesis_ms, r.gpu_compute_ms
    );
    println!("wall time: {} ms", p.wall.as_millis());
    println!("proof:     {} bytes", r.proof.len());
    p.finish(&a)
}

pub fn now_ms() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis())
}
