//! The engine's status snapshot (what `GET /status` and GetStatus report)
//! and its Prometheus text rendering (GetMetrics, `GET /metrics`).

use super::interlock::VramUsage;
use super::job::Phase;
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
    /// Kept for urgent jobs' partitions only.
    pub urgent_only: bool,
    pub busy: bool,
    /// When it took up its current partition.
    #[serde(skip)]
    pub since: Option<std::time::Instant>,
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

/// Where one partition of a job is.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PartitionPhase {
    #[default]
    Pending,
    Synthesizing,
    /// Synthesized, waiting for a prover.
    SynthDone,
    Proving,
    Done,
    Failed,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct PartitionView {
    pub phase: PartitionPhase,
    /// Its synthesis time (so far, while synthesizing).
    pub synth_ms: Option<u64>,
    /// Its prover time (so far, while proving).
    pub gpu_ms: Option<u64>,
}

/// A live job, or one that ended within [`RECENT_JOBS`].
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct JobView {
    pub id: JobId,
    pub request_id: Option<String>,
    pub kind: ProofKind,
    pub phase: Phase,
    /// Since submission.
    pub age_ms: u64,
    pub finished_ms_ago: Option<u64>,
    pub partitions: Vec<PartitionView>,
}

/// How long status keeps showing a finished job (dashboards polling every
/// few seconds see it end).
pub const RECENT_JOBS: std::time::Duration = std::time::Duration::from_secs(30);

/// Finished jobs of one proof kind.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct KindStatus {
    pub kind: ProofKind,
    pub completed: u64,
    pub failed: u64,
    /// The completed jobs' times from submission to proof, summed.
    pub completed_ms: u64,
}

/// A circuit's pre-compiled constraint system held in memory.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct PceStatus {
    pub circuit_id: String,
    pub size_bytes: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct EngineStatus {
    pub backend: String,
    pub uptime_seconds: u64,
    pub queues: Vec<QueueStatus>,
    pub workers: Vec<WorkerStatus>,
    pub devices: Vec<DeviceStatus>,
    pub srs: Vec<SrsEntryStatus>,
    pub pce: Vec<PceStatus>,
    pub memory: MemoryUsage,
    /// Live jobs and those finished within [`RECENT_JOBS`], oldest first.
    pub jobs: Vec<JobView>,
    pub by_kind: Vec<KindStatus>,
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
        let per_kind =
            |f: fn(&QueueStatus) -> usize| self.queues.iter().map(|q| (format!("{{kind=\"{}\"}}", q.kind), f(q) as f64)).collect();
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
        let srs_peak = one(self.memory.srs_peak_bytes as f64);
        metric("cuzk_memory_srs_peak_bytes", "gauge", "Most host memory SRS entries (and their loads) ever held at once.", srs_peak);
        // GPUs only: the CPU backend's device has no memory to report.
        let vram = |f: fn(&VramUsage) -> u64| {
            let gpus = self.devices.iter().filter(|d| d.vram.budget().is_some());
            gpus.map(|d| (format!("{{gpu=\"{}\"}}", d.ordinal), f(&d.vram) as f64)).collect()
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
        // As the existing daemon counted them: the configured workers.
        let provers = self.workers.iter().filter(|w| w.role == WorkerRole::Prover && !w.urgent_only).count();
        metric("cuzk_gpu_workers", "gauge", "Prover workers.", one(provers as f64));
        let by_kind = |f: fn(&KindStatus) -> f64| {
            self.by_kind.iter().map(|k| (format!("{{proof_kind=\"{}\"}}", k.kind.compat_label()), f(k))).collect()
        };
        metric("cuzk_proofs_completed", "counter", "Per proof-kind completions.", by_kind(|k| k.completed as f64));
        metric("cuzk_proofs_failed", "counter", "Per proof-kind failures.", by_kind(|k| k.failed as f64));
        // A summary without quantiles: count and sum of the completed jobs'
        // times from submission to proof, per kind, since start.
        let _ = writeln!(out, "# HELP cuzk_proof_duration_seconds Proof duration.\n# TYPE cuzk_proof_duration_seconds summary");
        for k in &self.by_kind {
            let label = k.kind.compat_label();
            let _ = writeln!(out, "cuzk_proof_duration_seconds_count{{proof_kind=\"{label}\"}} {}", k.completed);
            let _ = writeln!(out, "cuzk_proof_duration_seconds_sum{{proof_kind=\"{label}\"}} {:.3}", k.completed_ms as f64 / 1000.0);
        }
        out
    }
}
