//! The engine's status snapshot (what `GET /status` and GetStatus report)
//! and its Prometheus text rendering (GetMetrics, `GET /metrics`).

use super::interlock::VramUsage;
use super::memory::MemoryUsage;
use super::request::{JobId, ProofKind};
use super::srs_manager::SrsEntryStatus;
use serde::Serialize;
use std::fmt::Write;

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct QueueStatus {
    pub kind: ProofKind,
    /// Jobs waiting for dispatch.
    pub pending: usize,
    /// Jobs dispatched and not yet finished.
    pub in_progress: usize,
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub enum WorkerRole {
    Synthesis,
    Prover,
}

/// One pipeline worker thread.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct WorkerStatus {
    pub role: WorkerRole,
    pub worker_id: usize,
    /// Device ordinal (prover workers).
    pub gpu: Option<u32>,
    /// Index among the device's workers (prover workers).
    pub sub_id: Option<usize>,
    pub busy: bool,
    pub job: Option<JobId>,
    pub partition: Option<usize>,
    pub kind: Option<ProofKind>,
    /// Partitions this worker has finished.
    pub done: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DeviceStatus {
    pub ordinal: u32,
    pub name: String,
    pub vram: VramUsage,
    /// False once the device was lost (a CUDA error that leaves it
    /// unusable) while another remained, or as the last with
    /// `gpus.cpu_fallback` on.
    pub in_service: bool,
    /// Its workers prove on the CPU: it was the last GPU in service when
    /// it was lost, and `gpus.cpu_fallback` is on.
    pub on_cpu: bool,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct EngineStatus {
    pub backend: String,
    pub uptime_seconds: u64,
    pub queues: Vec<QueueStatus>,
    pub workers: Vec<WorkerStatus>,
    pub devices: Vec<DeviceStatus>,
    pub srs: Vec<SrsEntryStatus>,
    pub memory: MemoryUsage,
    pub jobs_completed: u64,
    pub jobs_failed: u64,
    pub jobs_cancelled: u64,
    pub partitions_proved: u64,
}

impl EngineStatus {
    /// Prometheus text exposition format (version 0.0.4).
    pub fn prometheus(&self) -> String {
        let mut out = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, rows: Vec<(String, f64)>| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for (labels, v) in rows {
                let _ = writeln!(out, "{name}{labels} {v}");
            }
        };
        let one = |v: f64| vec![(String::new(), v)];
        metric("cuzk_uptime_seconds", "gauge", "Seconds since the engine started.", one(self.uptime_seconds as f64));
        metric("cuzk_jobs_completed_total", "counter", "Jobs that produced a proof.", one(self.jobs_completed as f64));
        metric("cuzk_jobs_failed_total", "counter", "Jobs that failed.", one(self.jobs_failed as f64));
        metric("cuzk_jobs_cancelled_total", "counter", "Jobs cancelled.", one(self.jobs_cancelled as f64));
        metric("cuzk_partitions_proved_total", "counter", "Partition proofs made.", one(self.partitions_proved as f64));
        let per_kind = |f: fn(&QueueStatus) -> usize| {
            self.queues.iter().map(|q| (format!("{{kind=\"{}\"}}", q.kind), f(q) as f64)).collect()
        };
        metric("cuzk_queue_pending", "gauge", "Jobs waiting for dispatch, by proof kind.", per_kind(|q| q.pending));
        metric("cuzk_queue_in_progress", "gauge", "Jobs being proved, by proof kind.", per_kind(|q| q.in_progress));
        let busy = self
            .workers
            .iter()
            .map(|w| (format!("{{role=\"{:?}\",worker_id=\"{}\"}}", w.role, w.worker_id).to_lowercase(), w.busy as u8 as f64))
            .collect();
        metric("cuzk_worker_busy", "gauge", "1 while the worker is working on a partition.", busy);
        metric("cuzk_memory_budget_bytes", "gauge", "Host memory budget.", one(self.memory.budget_bytes as f64));
        metric("cuzk_memory_used_bytes", "gauge", "Host memory reserved (SRS and partitions).", one(self.memory.used_bytes as f64));
        metric("cuzk_memory_peak_bytes", "gauge", "Most host memory ever reserved at once.", one(self.memory.peak_bytes as f64));
        metric("cuzk_memory_srs_bytes", "gauge", "Host memory held by resident SRS entries.", one(self.memory.srs_bytes as f64));
        let vram = |f: fn(&VramUsage) -> u64| {
            self.devices.iter().map(|d| (format!("{{gpu=\"{}\"}}", d.ordinal), f(&d.vram) as f64)).collect()
        };
        metric("cuzk_vram_budget_bytes", "gauge", "Device memory budget tracked per device.", vram(|v| v.total_bytes));
        metric("cuzk_vram_used_bytes", "gauge", "Device memory reserved per device.", vram(|v| v.used_bytes));
        let srs = self.srs.iter().map(|s| (format!("{{circuit_id=\"{}\"}}", s.circuit_id), s.size_bytes as f64)).collect();
        metric("cuzk_srs_resident_bytes", "gauge", "Resident SRS entries and their size.", srs);
        // The existing daemon's names, for its dashboards (same meanings).
        let sum = |f: fn(&QueueStatus) -> usize| one(self.queues.iter().map(f).sum::<usize>() as f64);
        metric("cuzk_proofs_completed_total", "counter", "Total proofs completed.", one(self.jobs_completed as f64));
        metric("cuzk_proofs_failed_total", "counter", "Total proofs failed.", one(self.jobs_failed as f64));
        metric("cuzk_queue_depth", "gauge", "Jobs waiting for dispatch.", sum(|q| q.pending));
        metric("cuzk_running_jobs", "gauge", "Jobs being proved.", sum(|q| q.in_progress));
        let provers = self.workers.iter().filter(|w| w.role == WorkerRole::Prover).count();
        metric("cuzk_gpu_workers", "gauge", "Prover workers.", one(provers as f64));
        out
    }
}
