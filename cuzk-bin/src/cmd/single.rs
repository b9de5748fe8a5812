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
    pub conn: Conn,
    #[command(flatten)]
    pub proof: ProofArgs,
    /// Write the proof bytes here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Idempotency key (default: a fresh one).
    #[arg(long)]
    pub request_id: Option<String>,
}

pub fn run(a: Args) -> Result<()> {
    let verifier = a.proof.verifier()?;
    let id = a.request_id.clone().unwrap_or_else(|| format!("single-{}-{}", std::process::id(), now_ms()));
    let submit = a.proof.request(0, id)?;
    let client = a.conn.client()?;
    let t = Instant::now();
    let resp = client.prove(&pb::ProveRequest { submit: Some(submit) }).map_err(|e| anyhow::anyhow!("Prove failed: {}", describe(&e)))?;
    let wall = t.elapsed().as_secs_f64();
    let r = resp.result.context("the daemon's ProveResponse has no result")?;
    println!("{} {}: {:.3} s wall", r.job_id, status_name(r.status), wall);
    println!(
        "  queue_wait {} ms, srs_load {} ms, synthesis {} ms, gpu_compute {} ms, total {} ms",
        r.queue_wait_ms, r.srs_load_ms, r.synthesis_ms, r.gpu_compute_ms, r.total_ms
    );
    if r.status != pb::await_proof_response::Status::Completed as i32 {
        bail!("proof not made: {}", r.error_message);
    }
    println!("  proof: {} bytes", r.proof.len());
    if let Some(v) = verifier {
        v.check(0, &r.proof)?;
        println!("  verified against the vk: valid");
    }
    if let Some(out) = a.out {
        std::fs::write(&out, &r.proof).with_context(|| format!("writing {}", out.display()))?;
        println!("  wrote {}", out.display());
    }
    Ok(())
}

pub fn now_ms() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis())
}
