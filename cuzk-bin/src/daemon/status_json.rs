//! The `GET /status` document. Its top level is the existing cuzk daemon's
//! schema (`uptime_secs`, `memory`, `synthesis`, `pipelines`,
//! `gpu_workers`, `allocations`, `counters`, `buffers`: every field, same
//! meaning, so its dashboards work unchanged); ours sits alongside:
//! `daemon`, `stages` (each worker: job and partition), `queues`, `gpus`,
//! `srs`, `jobs`, and extra fields in `memory` and `counters`. As there,
//! `allocations` names the production circuits by their short ids
//! (`porep-32g`, ...); ours (`srs`) by their full ids.

use cuzk_core::engine::{EngineStatus, JobId, JobView, PartitionPhase, WorkerRole, WorkerStatus};
use serde_json::{json, Map, Value};

pub fn status_json(s: &EngineStatus, listen: &str) -> Value {
    let stage = |role: WorkerRole| -> Vec<Value> { s.workers.iter().filter(|w| w.role == role).map(|w| worker(s, w)).collect() };
    let busy = |role: WorkerRole| s.workers.iter().filter(|w| w.role == role && w.busy).count();
    // The existing daemon's `gpu_workers` lists the configured workers, not
    // the one per GPU kept for urgent jobs (listed in `stages`).
    let configured = |w: &&WorkerStatus| !w.urgent_only;
    let synthesizers = s.workers.iter().filter(|w| w.role == WorkerRole::Synthesis).count();
    let partitions = |phases: &[PartitionPhase]| -> usize {
        s.jobs.iter().filter(|j| j.finished_ms_ago.is_none()).flat_map(|j| &j.partitions).filter(|p| phases.contains(&p.phase)).count()
    };
    // Synthesized partitions keep their assignment (a, b, c and aux) until proved.
    let held = partitions(&[PartitionPhase::SynthDone, PartitionPhase::Proving]);
    let m = &s.memory;
    let srs_idle = |id: &str| s.srs.iter().find(|e| e.circuit_id == id);
    json!({
        "uptime_secs": s.uptime_seconds as f64,
        "memory": {
            "total_bytes": m.budget_bytes,
            "used_bytes": m.used_bytes,
            "available_bytes": m.budget_bytes.saturating_sub(m.used_bytes),
            "budget_bytes": m.budget_bytes,
            "peak_bytes": m.peak_bytes,
            "srs_bytes": m.srs_bytes,
            "srs_peak_bytes": m.srs_peak_bytes,
            "partition_bytes": m.partition_bytes,
            "pce_bytes": m.pce_bytes,
        },
        "synthesis": { "max_concurrent": synthesizers, "active": busy(WorkerRole::Synthesis) },
        "pipelines": s.jobs.iter().map(pipeline).collect::<Vec<_>>(),
        "gpu_workers": s.workers.iter().filter(configured).filter(|w| w.role == WorkerRole::Prover).map(|w| gpu_worker(s, w)).collect::<Vec<_>>(),
        "allocations": {
            "srs": s.srs.iter().map(|e| json!({
                "circuit_id": super::wire::compat_circuit_id(&e.circuit_id),
                "bytes": e.size_bytes,
                "last_used_secs_ago": e.idle_ms as f64 / 1000.0,
                "evictable": e.ref_count == 0,
            })).collect::<Vec<_>>(),
            // A PCE is evicted with its circuit's SRS.
            "pce": s.pce.iter().map(|p| json!({
                "circuit_id": super::wire::compat_circuit_id(&p.circuit_id),
                "bytes": p.size_bytes,
                "last_used_secs_ago": srs_idle(&p.circuit_id).map_or(0.0, |e| e.idle_ms as f64 / 1000.0),
                "evictable": srs_idle(&p.circuit_id).is_none_or(|e| e.ref_count == 0),
            })).collect::<Vec<_>>(),
        },
        "counters": {
            "total_completed": s.jobs_completed,
            "total_failed": s.jobs_failed,
            "completed_by_kind": by_kind(s, |k| k.completed),
            "failed_by_kind": by_kind(s, |k| k.failed),
            "queue_depth": s.queues.iter().map(|q| q.pending).sum::<usize>(),
            "jobs_completed": s.jobs_completed,
            "jobs_failed": s.jobs_failed,
            "jobs_cancelled": s.jobs_cancelled,
            "partitions_proved": s.partitions_proved,
        },
        // The existing daemon's buffer counts; this engine frees a
        // partition's assignment whole after proving (no a/b/c-freed
        // shells, no pending split-prove handles: those stay 0).
        "buffers": {
            "synth_in_flight": partitions(&[PartitionPhase::Synthesizing]),
            "provers_in_flight": held,
            "aux_in_flight": held,
            "shells_in_flight": 0,
            "pending_handles": 0,
        },
        "daemon": {
            "version": env!("CARGO_PKG_VERSION"),
            "listen": listen,
            "backend": s.backend,
            "uptime_seconds": s.uptime_seconds,
        },
        "stages": {
            "synthesis": { "workers": stage(WorkerRole::Synthesis), "busy": busy(WorkerRole::Synthesis) },
            "gpu": { "workers": stage(WorkerRole::Prover), "busy": busy(WorkerRole::Prover) },
        },
        "queues": s.queues.iter().map(|q| json!({"proof_kind": q.kind.name(), "pending": q.pending, "in_progress": q.in_progress})).collect::<Vec<_>>(),
        "gpus": s.devices.iter().map(|d| json!({
            "ordinal": d.ordinal,
            "name": d.name,
            // 0 for the CPU backend's one "device", which has no VRAM.
            "vram_budget_bytes": d.vram.budget().unwrap_or(0),
            "vram_used_bytes": d.vram.used_bytes,
            "vram_peak_bytes": d.vram.peak_bytes,
            "in_service": d.in_service,
            "on_cpu": d.on_cpu,
        })).collect::<Vec<_>>(),
        "srs": s.srs,
        "jobs": s.jobs,
    })
}

/// The id a client knows job `j` by: its request_id, else ours.
fn client_id(j: &JobView) -> String {
    j.request_id.clone().unwrap_or_else(|| j.id.to_string())
}

/// The id a client knows job `id` by (GetStatus and `GET /status`).
pub fn client_job_id(s: &EngineStatus, id: JobId) -> String {
    s.jobs.iter().find(|j| j.id == id).map_or_else(|| id.to_string(), client_id)
}

/// The client's id of the job a worker is on.
fn worker_job(s: &EngineStatus, w: &WorkerStatus) -> Option<String> {
    w.job.map(|id| client_job_id(s, id))
}

/// One job in the existing daemon's `pipelines` form.
fn pipeline(j: &JobView) -> Value {
    let state = |p: PartitionPhase| match p {
        PartitionPhase::Pending => "pending",
        PartitionPhase::Synthesizing => "synthesizing",
        PartitionPhase::SynthDone => "synth_done",
        PartitionPhase::Proving => "gpu",
        PartitionPhase::Done => "done",
        PartitionPhase::Failed => "failed",
    };
    json!({
        "job_id": client_id(j),
        "proof_kind": j.kind.compat_name(),
        "started_secs_ago": j.age_ms as f64 / 1000.0,
        "total_partitions": j.partitions.len(),
        "partitions_done": j.partitions.iter().filter(|p| p.phase == PartitionPhase::Done).count(),
        "partitions": j.partitions.iter().enumerate().map(|(i, p)| json!({
            "index": i,
            "state": state(p.phase),
            "synth_ms": p.synth_ms,
            "gpu_ms": p.gpu_ms,
        })).collect::<Vec<_>>(),
    })
}

/// One prover worker in the existing daemon's `gpu_workers` form.
fn gpu_worker(s: &EngineStatus, w: &WorkerStatus) -> Value {
    json!({
        "worker_id": w.worker_id,
        "gpu_ordinal": w.gpu,
        "state": if w.busy { "proving" } else { "idle" },
        "current_job": worker_job(s, w),
        "current_partition": w.partition,
        "busy_secs": w.since.map(|t| t.elapsed().as_secs_f64()),
    })
}

/// Kind name → count, for every kind with a non-zero count.
fn by_kind(s: &EngineStatus, f: fn(&cuzk_core::engine::KindStatus) -> u64) -> Map<String, Value> {
    s.by_kind.iter().filter(|k| f(k) > 0).map(|k| (k.kind.compat_name().to_string(), json!(f(k)))).collect()
}

/// One worker: idle, or the job and partition it is on.
fn worker(s: &EngineStatus, w: &WorkerStatus) -> Value {
    json!({
        "worker_id": w.worker_id,
        "gpu": w.gpu,
        "sub_id": w.sub_id,
        "urgent_only": w.urgent_only,
        "state": if w.busy { "busy" } else { "idle" },
        "job_id": worker_job(s, w),
        "partition": w.partition,
        "proof_kind": w.kind.map(|k| k.name()),
        "partitions_done": w.done,
    })
}
