//! The `GET /status` document: the engine's status arranged for people and
//! dashboards: pipeline stages with what each worker is doing (job and
//! partition), GPUs, memory, SRS entries, queues and counters.

use cuzk_core::engine::{EngineStatus, WorkerRole, WorkerStatus};
use serde_json::{json, Value};

pub fn status_json(s: &EngineStatus, listen: &str) -> Value {
    let stage = |role: WorkerRole| -> Vec<Value> { s.workers.iter().filter(|w| w.role == role).map(worker).collect() };
    let busy = |role: WorkerRole| s.workers.iter().filter(|w| w.role == role && w.busy).count();
    json!({
        "daemon": {
            "version": env!("CARGO_PKG_VERSION"),
            "listen": listen,
            "backend": s.backend,
            "uptime_seconds": s.uptime_seconds,
        },
        "pipelines": {
            "synthesis": { "workers": stage(WorkerRole::Synthesis), "busy": busy(WorkerRole::Synthesis) },
            "gpu": { "workers": stage(WorkerRole::Prover), "busy": busy(WorkerRole::Prover) },
        },
        "queues": s.queues.iter().map(|q| json!({"proof_kind": q.kind.name(), "pending": q.pending, "in_progress": q.in_progress})).collect::<Vec<_>>(),
        "gpus": s.devices.iter().map(|d| json!({
            "ordinal": d.ordinal,
            "name": d.name,
            "vram_budget_bytes": d.vram.total_bytes,
            "vram_used_bytes": d.vram.used_bytes,
            "vram_peak_bytes": d.vram.peak_bytes,
            "in_service": d.in_service,
            "on_cpu": d.on_cpu,
        })).collect::<Vec<_>>(),
        "memory": s.memory,
        "srs": s.srs,
        "counters": {
            "jobs_completed": s.jobs_completed,
            "jobs_failed": s.jobs_failed,
            "jobs_cancelled": s.jobs_cancelled,
            "partitions_proved": s.partitions_proved,
        },
    })
}

/// One worker: idle, or the job and partition it is on.
fn worker(w: &WorkerStatus) -> Value {
    json!({
        "worker_id": w.worker_id,
        "gpu": w.gpu,
        "sub_id": w.sub_id,
        "state": if w.busy { "busy" } else { "idle" },
        "job_id": w.job.map(|j| j.to_string()),
        "partition": w.partition,
        "proof_kind": w.kind.map(|k| k.name()),
        "partitions_done": w.done,
    })
}
