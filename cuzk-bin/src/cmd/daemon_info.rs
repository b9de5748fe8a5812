//! `cuzk status`, `cuzk preload`, `cuzk metrics`: the daemon's state.

use super::proof_request::Conn;
use anyhow::Result;
use cuzk_bin::client::describe;
use cuzk_bin::proto as pb;

#[derive(clap::Args)]
pub struct PreloadArgs {
    /// SRS to load: porep-32g, porep-64g, wpost-32g, winning-32g, snap-32g, snap-64g, a full
    /// circuit id, or builtin-<circuit> (e.g. builtin-synthetic-4096-8).
    #[arg(short = 'c', long = "circuit-id")]
    pub circuit_id: String,
}

fn rpc_err(what: &str) -> impl Fn(grpcio::Error) -> anyhow::Error + '_ {
    move |e| anyhow::anyhow!("{what} failed: {}", describe(&e))
}

pub fn status(conn: &Conn) -> Result<()> {
    let s = conn.client()?.get_status(&pb::GetStatusRequest {}).map_err(rpc_err("GetStatus"))?;
    println!("uptime            {} s", s.uptime_seconds);
    println!("proofs completed  {}", s.total_proofs_completed);
    println!("proofs failed     {}", s.total_proofs_failed);
    println!("memory            {} / {} MiB", s.pinned_memory_bytes >> 20, s.pinned_memory_limit_bytes >> 20);
    println!("devices:");
    for g in &s.gpus {
        let job = if g.current_job_id.is_empty() {
            "idle".to_string()
        } else {
            format!("proving {} ({})", g.current_job_id, g.current_proof_kind)
        };
        println!("  [{}] {}: {} / {} MiB free, {job}", g.ordinal, g.name, g.vram_free_bytes >> 20, g.vram_total_bytes >> 20);
    }
    println!("SRS:");
    for e in &s.loaded_srs {
        let tier = pb::srs_status::Tier::from_i32(e.tier).map_or("?", |t| t.as_str_name());
        println!("  {} {tier} {:.1} MiB refs={}", e.circuit_id, e.size_bytes as f64 / 1048576.0, e.ref_count);
    }
    println!("queues:");
    for q in &s.queues {
        println!("  {:<22} pending {:>4}  in progress {:>4}", q.proof_kind, q.pending, q.in_progress);
    }
    Ok(())
}

pub fn preload(conn: &Conn, a: PreloadArgs) -> Result<()> {
    let r = conn.client()?.preload_srs(&pb::PreloadSrsRequest { circuit_id: a.circuit_id.clone() }).map_err(rpc_err("PreloadSRS"))?;
    if r.already_loaded {
        println!("{} already loaded", a.circuit_id);
    } else {
        println!("{} loaded in {} ms", a.circuit_id, r.load_time_ms);
    }
    Ok(())
}

pub fn metrics(conn: &Conn) -> Result<()> {
    let r = conn.client()?.get_metrics(&pb::GetMetricsRequest {}).map_err(rpc_err("GetMetrics"))?;
    print!("{}", r.prometheus_text);
    Ok(())
}
