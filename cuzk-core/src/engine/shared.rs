//! State shared by the engine's threads and its API.

use super::backend::Backend;
use super::interlock::DeviceLocks;
use super::job::JobCounters;
use super::job_table::JobTable;
use super::memory::MemoryBudget;
use super::pipeline::{Permits, ProveUnit, SynthUnit};
use super::scheduler::Scheduler;
use super::srs_manager::SrsManager;
use super::status::WorkerStatus;
use super::timeline::Timeline;
use crate::circuit_source::CircuitSource;
use crate::config::Config;
use std::any::Any;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub struct Shared {
    pub config: Config,
    pub started: Instant,
    pub accepting: AtomicBool,
    pub jobs: JobTable,
    pub counters: Arc<JobCounters>,
    pub scheduler: Scheduler,
    pub permits: Permits,
    /// The urgent dispatcher's (`pipeline.urgent_synthesis_concurrency`).
    pub urgent_permits: Permits,
    pub synth_queue: super::work_queue::WorkQueue<SynthUnit>,
    /// The cores synthesis shares out (`synthesis.threads`).
    pub synthesis_cores: super::synthesis_cores::SynthesisCores,
    pub gpu_queue: super::work_queue::WorkQueue<ProveUnit>,
    pub memory: Arc<MemoryBudget>,
    pub srs: Arc<SrsManager>,
    /// Per circuit id, its PCE (`[synthesis] pce`); None = classic synthesis.
    pub pce: Option<super::pce_store::PceStore>,
    pub inflight: Arc<super::inflight::InflightBatches>,
    pub backend: Arc<dyn Backend>,
    /// The circuit families known by id: the built-in one first, then
    /// those the engine was started with.
    pub sources: Vec<Arc<dyn CircuitSource>>,
    pub devices: Vec<Arc<DeviceLocks>>,
    pub timeline: Timeline,
    /// The circuits whose plan has been logged ([`super::plan_report`]).
    pub plans: super::plan_report::PlanLog,
    /// Synthesis workers first (the urgent-only ones last), then prover
    /// workers.
    pub workers: Vec<Mutex<WorkerStatus>>,
}

impl Shared {
    pub fn set_worker(&self, slot: usize, f: impl FnOnce(&mut WorkerStatus)) {
        f(&mut self.workers[slot].lock().unwrap_or_else(|e| e.into_inner()));
    }
}

/// The message of a caught panic.
pub fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".into()
    }
}
