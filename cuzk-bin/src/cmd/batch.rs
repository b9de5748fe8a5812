//! `cuzk batch -c N -j J`: N proofs through the daemon, J at a time (one
//! client thread each), with a progress bar; reports, in the existing bench
//! tool's summary lines, wall time, per-proof latency and prove time
//! min/avg/max and proofs per minute. `cuzk-bench batch` makes the proofs
//! the same way and reports them in the existing tool's lines
//! (`crate::bench_report`).

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

/// One proof of a batch: its index, the call's wall time, the response
/// (or why the call failed).
pub struct Done {
    pub index: u64,
    pub wall_s: f64,
    pub resp: Result<pb::AwaitProofResponse, String>,
}

impl Done {
    pub fn completed(&self) -> Option<&pb::AwaitProofResponse> {
        self.resp.as_ref().ok().filter(|r| r.status == pb::await_proof_response::Status::Completed as i32)
    }
}

/// The batch's proofs, by index, and its wall seconds; the completed ones
/// are checked against --vk when given. `started` is called once the
/// requests are built, before the first call.
pub fn prove_all(conn: &Conn, a: &Args, started: impl FnOnce()) -> Result<(Vec<Done>, f64)> {
    if a.count == 0 || a.concurrency == 0 {
        bail!("-c and -j must be at least 1");
    }
    let verifier = a.proof.verifier()?;
    let requests = (0..a.count)
        .map(|i| a.proof.request(i, format!("batch-{}-{}-{i}", std::process::id(), super::single::now_ms())))
        .collect::<Result<Vec<_>>>()?;
    started();
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
    if let Some(v) = &verifier {
        for d in &results {
            if let Some(r) = d.completed() {
                v.check(d.index, &r.proof).with_context(|| format!("proof {} ({})", d.index, r.job_id))?;
            }
        }
    }
    Ok((results, wall))
}

pub fn run(conn: &Conn, a: Args) -> Result<()> {
    let header = || println!("batch: {} × {} proofs, {} at a time, daemon {}", a.count, a.proof.proof_type, a.concurrency, conn.addr);
    let (results, wall) = prove_all(conn, &a, header)?;

    // Per proof: wall seconds and the daemon's prove (GPU compute) seconds.
    let mut ok: Vec<(f64, f64)> = Vec::new();
    let mut failures = 0;
    for d in &results {
        match (&d.resp, d.completed()) {
            (_, Some(r)) => ok.push((d.wall_s, r.gpu_compute_ms as f64 / 1000.0)),
            (Ok(r), None) => {
                failures += 1;
                println!("  proof {} ({}): {} {}", d.index, r.job_id, status_name(r.status), r.error_message);
            }
            (Err(e), None) => {
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
            format!(
                "avg={avg:.3}s min={:.3}s max={:.3}s",
                v.iter().cloned().fold(f64::INFINITY, f64::min),
                v.iter().cloned().fold(0.0, f64::max)
            )
        };
        println!("wall time:     {}", stats(|p| p.0));
        println!("prove time:    {}", stats(|p| p.1));
        println!("throughput:    {:.3} proofs/min ({:.1}s/proof)", ok.len() as f64 / wall * 60.0, wall / ok.len() as f64);
    }
    if a.proof.vk.is_some() {
        println!("all {} proofs verified against the vk", ok.len());
    }
    if failures > 0 {
        bail!("{failures} of {} proofs failed", a.count);
    }
    Ok(())
}
