//! `cuzk batch -c N -j J`: N proofs through the daemon, J at a time (one
//! client thread each), with a progress bar; reports, in the existing bench
//! tool's summary lines, wall time, per-proof latency and prove time
//! min/avg/max and proofs per minute.

use super::proof_request::{status_name, Conn, ProofArgs};
use crate::progress;
use anyhow::{bail, Context, Result};
use cuzk_bin::client::describe;
use cuzk_bin::proto as pb;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub proof: ProofArgs,
    /// Proofs to make.
    #[arg(short = 'c', long = "count", default_value_t = 3)]
    pub count: u64,
    /// Proofs in flight at once.
    #[arg(short = 'j', long = "concurrency", default_value_t = 1)]
    pub concurrency: u64,
}

struct Done {
    index: u64,
    wall_s: f64,
    resp: Result<pb::AwaitProofResponse, String>,
}

pub fn run(conn: &Conn, a: Args) -> Result<()> {
    if a.count == 0 || a.concurrency == 0 {
        bail!("-c and -j must be at least 1");
    }
    let verifier = a.proof.verifier()?;
    let requests = (0..a.count).map(|i| a.proof.request(i, format!("batch-{}-{}-{i}", std::process::id(), super::single::now_ms()))).collect::<Result<Vec<_>>>()?;
    println!("batch: {} × {} proofs, {} at a time, daemon {}", a.count, a.proof.proof_type, a.concurrency, conn.addr);
    let client = conn.client()?;
    let next = AtomicU64::new(0);
    let results = Mutex::new(Vec::new());
    let pb_bar = progress::bar(a.count, "proofs");
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..a.concurrency.min(a.count) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= a.count {
                    break;
                }
                let t = Instant::now();
                let req = pb::ProveRequest { submit: Some(requests[i as usize].clone()) };
                let resp = client
                    .prove(&req)
                    .map_err(|e| describe(&e))
                    .and_then(|r| r.result.ok_or_else(|| "ProveResponse without a result".to_string()));
                results.lock().unwrap().push(Done { index: i, wall_s: t.elapsed().as_secs_f64(), resp });
                pb_bar.inc(1);
            });
        }
    });
    pb_bar.finish_and_clear();
    let wall = start.elapsed().as_secs_f64();
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|d| d.index);

    // Per proof: wall seconds and the daemon's prove (GPU compute) seconds.
    let mut ok: Vec<(f64, f64)> = Vec::new();
    let mut failures = 0;
    for d in &results {
        match &d.resp {
            Ok(r) if r.status == pb::await_proof_response::Status::Completed as i32 => {
                if let Some(v) = &verifier {
                    v.check(d.index, &r.proof).with_context(|| format!("proof {} ({})", d.index, r.job_id))?;
                }
                ok.push((d.wall_s, r.gpu_compute_ms as f64 / 1000.0));
            }
            Ok(r) => {
                failures += 1;
                println!("  proof {} ({}): {} {}", d.index, r.job_id, status_name(r.status), r.error_message);
            }
            Err(e) => {
                failures += 1;
                println!("  proof {}: call failed: {e}", d.index);
            }
        }
    }
    // The existing bench tool's summary lines (scripts read them).
    println!("\n=== Batch Summary ===");
    println!("total time:    {wall:.1}s");
    println!("completed:     {}", ok.len());
    println!("failed:        {failures}");
    if !ok.is_empty() {
        let stats = |f: fn(&(f64, f64)) -> f64| {
            let v: Vec<f64> = ok.iter().map(f).collect();
            let avg = v.iter().sum::<f64>() / v.len() as f64;
            format!("avg={avg:.3}s min={:.3}s max={:.3}s", v.iter().cloned().fold(f64::INFINITY, f64::min), v.iter().cloned().fold(0.0, f64::max))
        };
        println!("wall time:     {}", stats(|p| p.0));
        println!("prove time:    {}", stats(|p| p.1));
        println!("throughput:    {:.3} proofs/min ({:.1}s/proof)", ok.len() as f64 / wall * 60.0, wall / ok.len() as f64);
    }
    if verifier.is_some() {
        println!("all {} proofs verified against the vk", ok.len());
    }
    if failures > 0 {
        bail!("{failures} of {} proofs failed", a.count);
    }
    Ok(())
}
