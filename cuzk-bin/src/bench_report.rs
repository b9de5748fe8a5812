//! The existing cuzk-bench's result lines, as it prints them (its
//! `print_result`, batch and status output in curio's
//! extern/cuzk/cuzk-bench/src/main.rs), so scripts that parse them run
//! unchanged against `cuzk-bench`. `cuzk single|batch|status` keep their
//! own lines; the proofs are made the same way (`cmd::single`,
//! `cmd::batch`).

use crate::cmd::batch::Done;
use cuzk_bin::proto as pb;
use std::fmt::Write;
use std::time::Duration;

/// The existing tool's status names (its `status_label`).
fn status_label(status: i32) -> &'static str {
    match status {
        1 => "COMPLETED",
        2 => "FAILED",
        3 => "CANCELLED",
        4 => "TIMEOUT",
        _ => "UNKNOWN",
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(2 * bytes.len()), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// `single`: the proof's result block. A proof that failed is reported
/// here, not as an error: the existing tool exits 0 for it.
pub fn proof_result(r: &pb::AwaitProofResponse, wall: Duration) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n=== Proof Result ===");
    let _ = writeln!(out, "status:    {}", status_label(r.status));
    let _ = writeln!(out, "job_id:    {}", r.job_id);
    if r.status == 1 {
        let _ = writeln!(
            out,
            "timings:   total={} ms (queue={} ms, srs={} ms, synth={} ms, gpu={} ms)",
            r.total_ms, r.queue_wait_ms, r.srs_load_ms, r.synthesis_ms, r.gpu_compute_ms
        );
        let _ = writeln!(out, "wall time: {} ms", wall.as_millis());
        // Whole up to 256 bytes (a PoSt proof), else the first 128 and "...".
        let shown = if r.proof.len() <= 256 { hex(&r.proof) } else { format!("{}...", hex(&r.proof[..128])) };
        let _ = writeln!(out, "proof:     {} bytes (hex: {shown})", r.proof.len());
    } else {
        let _ = writeln!(out, "error:     {}", r.error_message);
    }
    out
}

/// `batch`: the header before the proofs.
pub fn batch_header(proof_type: &str, count: u64, concurrency: u64) -> String {
    format!("=== Batch Benchmark ===\nproof type:  {proof_type}\ncount:       {count}\nconcurrency: {concurrency}\n")
}

/// `batch`: a line per proof, then the summary. Failed proofs count as
/// failed (exit 0, as the existing tool). A call that failed ends the
/// lines there and is returned as the command's error (exit 1: the
/// existing tool stopped at it).
pub fn batch_result(results: &[Done], count: u64, wall_s: f64) -> (String, Option<String>) {
    let mut out = String::from("\n");
    let mut completed: Vec<(f64, f64)> = Vec::new();
    for d in results {
        let r = match &d.resp {
            Ok(r) => r,
            Err(e) => return (out, Some(format!("Prove RPC failed: {e}"))),
        };
        let line = format!("{} — {:.1}s (prove={} ms, queue={} ms)", status_label(r.status), d.wall_s, r.gpu_compute_ms, r.queue_wait_ms);
        let _ = writeln!(out, "  [{}/{count}] {line}", d.index + 1);
        if r.status == 1 {
            completed.push((d.wall_s, r.gpu_compute_ms as f64 / 1000.0));
        }
    }
    let _ = writeln!(out, "\n=== Batch Summary ===");
    let _ = writeln!(out, "total time:    {wall_s:.1}s");
    let _ = writeln!(out, "completed:     {}", completed.len());
    let _ = writeln!(out, "failed:        {}", results.len() - completed.len());
    if !completed.is_empty() {
        let stats = |f: fn(&(f64, f64)) -> f64| {
            let v: Vec<f64> = completed.iter().map(f).collect();
            let avg = v.iter().sum::<f64>() / v.len() as f64;
            let min = v.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            format!("avg={avg:.1}s min={min:.1}s max={max:.1}s")
        };
        let n = completed.len() as f64;
        let _ = writeln!(out, "wall time:     {}", stats(|p| p.0));
        let _ = writeln!(out, "prove time:    {}", stats(|p| p.1));
        let _ = writeln!(out, "throughput:    {:.3} proofs/min ({:.1}s/proof)", n / wall_s * 60.0, wall_s / n);
    }
    (out, None)
}

/// `status`: the daemon's status block.
pub fn status(s: &pb::GetStatusResponse) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "=== cuzk daemon status ===");
    let _ = writeln!(out, "uptime:           {}s", s.uptime_seconds);
    let _ = writeln!(out, "proofs completed: {}", s.total_proofs_completed);
    let _ = writeln!(out, "proofs failed:    {}", s.total_proofs_failed);
    let _ = writeln!(out, "pinned memory:    {} / {} bytes", s.pinned_memory_bytes, s.pinned_memory_limit_bytes);
    if !s.gpus.is_empty() {
        let _ = writeln!(out, "\nGPUs:");
        for g in &s.gpus {
            let job = if g.current_job_id.is_empty() {
                "idle".to_string()
            } else {
                let short: String = g.current_job_id.chars().take(8).collect();
                format!("proving {} ({short})", g.current_proof_kind)
            };
            let (free, total) = (g.vram_free_bytes / (1024 * 1024), g.vram_total_bytes / (1024 * 1024));
            let _ = writeln!(out, "  [{}] {} — {free} MiB / {total} MiB VRAM — {job}", g.ordinal, g.name);
        }
    }
    if !s.loaded_srs.is_empty() {
        let _ = writeln!(out, "\nLoaded SRS:");
        for e in &s.loaded_srs {
            let _ = writeln!(out, "  {} (tier={}, size={} bytes, refs={})", e.circuit_id, e.tier, e.size_bytes, e.ref_count);
        }
    }
    if !s.queues.is_empty() {
        let _ = writeln!(out, "\nQueues:");
        for q in &s.queues {
            let _ = writeln!(out, "  {}: pending={}, in_progress={}", q.proof_kind, q.pending, q.in_progress);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(status: i32, proof: Vec<u8>) -> pb::AwaitProofResponse {
        pb::AwaitProofResponse {
            job_id: "j-1".into(),
            status,
            proof,
            error_message: "no luck".into(),
            total_ms: 9,
            queue_wait_ms: 1,
            srs_load_ms: 2,
            synthesis_ms: 3,
            gpu_compute_ms: 4,
            error_code: 0,
        }
    }

    /// The existing tool's lines, byte for byte.
    #[test]
    fn proof_result_lines() {
        let text = proof_result(&resp(1, vec![0xab; 3]), Duration::from_millis(1234));
        let want = "\n=== Proof Result ===\nstatus:    COMPLETED\njob_id:    j-1\n\
                    timings:   total=9 ms (queue=1 ms, srs=2 ms, synth=3 ms, gpu=4 ms)\n\
                    wall time: 1234 ms\nproof:     3 bytes (hex: ababab)\n";
        assert_eq!(text, want);
        let long = proof_result(&resp(1, (0..=255).chain(0..=255).map(|b| b as u8).collect()), Duration::ZERO);
        let first: String = (0..128u8).map(|b| format!("{b:02x}")).collect();
        assert!(long.contains(&format!("proof:     512 bytes (hex: {first}...)\n")), "{long}");
        let whole = proof_result(&resp(1, vec![1; 256]), Duration::ZERO);
        assert!(whole.contains(&format!("(hex: {})\n", "01".repeat(256))), "{whole}");
        assert_eq!(
            proof_result(&resp(2, vec![]), Duration::ZERO),
            "\n=== Proof Result ===\nstatus:    FAILED\njob_id:    j-1\nerror:     no luck\n"
        );
    }

    #[test]
    fn batch_lines_and_a_failed_call() {
        let done = |index, status| Done { index, wall_s: 2.34, resp: Ok(resp(status, vec![])) };
        let (text, error) = batch_result(&[done(0, 1), done(1, 2)], 2, 5.0);
        assert_eq!(error, None);
        for want in [
            "  [1/2] COMPLETED — 2.3s (prove=4 ms, queue=1 ms)\n",
            "  [2/2] FAILED — 2.3s (prove=4 ms, queue=1 ms)\n",
            "\n=== Batch Summary ===\ntotal time:    5.0s\ncompleted:     1\nfailed:        1\n",
            "wall time:     avg=2.3s min=2.3s max=2.3s\nprove time:    avg=0.0s min=0.0s max=0.0s\n",
            "throughput:    12.000 proofs/min (5.0s/proof)\n",
        ] {
            assert!(text.contains(want), "{want:?} not in:\n{text}");
        }
        let failed_call = Done { index: 1, wall_s: 0.1, resp: Err("unavailable".into()) };
        let (text, error) = batch_result(&[done(0, 1), failed_call], 2, 1.0);
        assert!(text.contains("[1/2] COMPLETED") && !text.contains("Summary"), "{text}");
        assert_eq!(error.as_deref(), Some("Prove RPC failed: unavailable"));
    }
}
