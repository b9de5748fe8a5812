//! `cuzk single`: one proof through the daemon (Prove), its timings, and
//! optionally the proof written to a file and checked against a .vk.

use super::proof_request::{status_name, Conn, ProofArgs};
use anyhow::{bail, Context, Result};
use cuzk_bin::client::describe;
use cuzk_bin::proto as pb;
use std::path::PathBuf;
use std::time::Instant;

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

pub fn run(conn: &Conn, a: Args) -> Result<()> {
    let verifier = a.proof.verifier()?;
    let id = a.request_id.clone().unwrap_or_else(|| format!("single-{}-{}", std::process::id(), now_ms()));
    let submit = a.proof.request(0, id)?;
    let client = conn.client()?;
    let t = Instant::now();
    let resp = client.prove(&pb::ProveRequest { submit: Some(submit) }).map_err(|e| anyhow::anyhow!("Prove failed: {}", describe(&e)))?;
    let wall = t.elapsed().as_secs_f64();
    let r = resp.result.context("the daemon's ProveResponse has no result")?;
    // The existing bench tool's result lines (scripts read them).
    println!("status:    {}", status_name(r.status));
    println!("job_id:    {}", r.job_id);
    if r.status != pb::await_proof_response::Status::Completed as i32 {
        println!("error:     {}", r.error_message);
        bail!("proof not made: {}", r.error_message);
    }
    println!(
        "timings:   total={} ms (queue={} ms, srs={} ms, synth={} ms, gpu={} ms)",
        r.total_ms, r.queue_wait_ms, r.srs_load_ms, r.synthesis_ms, r.gpu_compute_ms
    );
    println!("wall time: {} ms", (wall * 1000.0) as u64);
    println!("proof:     {} bytes", r.proof.len());
    if let Some(v) = verifier {
        v.check(0, &r.proof)?;
        println!("verified against the vk: valid");
    }
    if let Some(out) = a.out {
        std::fs::write(&out, &r.proof).with_context(|| format!("writing {}", out.display()))?;
        println!("wrote {}", out.display());
    }
    Ok(())
}

pub fn now_ms() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis())
}
