//! The proving engine: a long-running set of threads that takes proof
//! requests and returns proofs.
//!
//! request → [`scheduler`] (priority queue, batch collector) →
//! [`dispatcher`] (SRS lease, one unit per partition) → [`synthesis`]
//! workers (memory budget) → bounded queue → [`prover_worker`]s
//! ([`interlock`] and a [`backend`]) → proof assembly in [`job`].
//!
//! Plain OS threads, crossbeam channels and `std::sync`; no async runtime.

pub mod backend;
pub mod batch;
pub mod builtin;
mod dispatcher;
#[cfg(feature = "cuda")]
pub mod gpu_backend;
mod inflight;
pub mod interlock;
pub mod job;
mod job_table;
pub mod logging;
pub mod memory;
pub mod niceness;
pub mod outcome;
mod parked;
pub mod pce_store;
mod pipeline;
pub mod plan_report;
mod prover_error;
mod prover_worker;
pub mod request;
pub mod scheduler;
mod shared;
pub mod srs_handle;
pub mod srs_manager;
pub mod srs_stream;
mod start;
pub mod status;
mod synthesis;
mod synthesis_cores;
pub mod timeline;
pub mod timeline_stats;
pub mod work_queue;

pub use backend::{
    default_backend, Backend, CpuBackend, DeviceInfo, InterlockTrace, MatricesLease, PceAtLoad, ProveInput, ProverBackend, ProverError,
    ResidentLoad, StageAhead,
};
pub use builtin::{AnyCircuit, BuiltinJob, BuiltinSource, PartitionedCircuit};
pub use job::Phase;
pub use outcome::{EngineError, JobOutcome, JobTimings, ProofOutput};
pub use request::{JobId, PayloadDigest, Priority, ProofKind, ProofRequest, ProofWork};
pub use status::{EngineStatus, JobView, KindStatus, PartitionPhase, PartitionView, PceStatus, QueueStatus, WorkerRole, WorkerStatus};

use crate::circuit_source::BuildContext;
use crate::client_text::clipped;
use crate::failure::ErrorKind;
use job::{Job, JobSpec};
use shared::Shared;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// What shutdown does with jobs not yet finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownMode {
    /// Prove everything already submitted, then stop.
    Drain,
    /// Cancel queued and running jobs, then stop.
    Cancel,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CancelResult {
    /// The job had been dispatched (synthesis or proving had begun).
    pub was_running: bool,
    /// False if the job had already finished (nothing to cancel).
    pub cancelled: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreloadResult {
    pub already_loaded: bool,
    pub load_time_ms: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvictResult {
    pub was_loaded: bool,
    pub freed_bytes: u64,
}

/// Threads by stage, joined in pipeline order at shutdown.
#[derive(Default)]
struct Threads {
    dispatcher: Vec<JoinHandle<()>>,
    synthesis: Vec<JoinHandle<()>>,
    provers: Vec<JoinHandle<()>>,
}

pub struct Engine {
    shared: Arc<Shared>,
    threads: Mutex<Option<Threads>>,
}

impl Engine {
    /// Starts the engine on the GPUs where the build and machine have them
    /// ([`default_backend`]), else on the CPU, knowing the circuit ids of
    /// [`crate::standard_sources`] beside the built-in ones.
    pub fn start(config: crate::config::Config) -> Result<Engine, EngineError> {
        Self::start_with_backend(config, default_backend())
    }

    /// [`Self::start`] over the given backend.
    pub fn start_with_backend(config: crate::config::Config, backend: Arc<dyn Backend>) -> Result<Engine, EngineError> {
        Self::start_with(config, backend, crate::standard_sources())
    }

    /// Submits a job; returns at once. A request id already used by a
    /// queued or running job returns that job's id.
    pub fn submit(&self, req: ProofRequest) -> Result<JobId, EngineError> {
        let sh = &self.shared;
        if !sh.accepting.load(Ordering::Acquire) {
            return Err(EngineError::ShuttingDown);
        }
        // A resubmission of a live job is answered before its request is
        // decoded again (for a 32 GiB PoRep, seconds of JSON and hashing).
        if let Some(job) =
            req.request_id.as_deref().filter(|r| !r.is_empty()).and_then(|r| sh.jobs.live_by_request(r)).and_then(|id| sh.jobs.get(id))
        {
            return resubmitted(&job, &req);
        }
        let spec = job_spec(sh, &req)?;
        let request_id = spec.request_id.clone();
        let (job, new) = sh.jobs.insert_or_existing(request_id.as_deref(), |id, seq| {
            Arc::new(Job::new(id, seq, spec, sh.counters.clone(), sh.jobs.finish_sender()))
        });
        if !new {
            return resubmitted(&job, &req);
        }
        log::info!(
            "job submitted job={} kind={} priority={:?} partitions={} circuit_id={} request_id={:?}",
            job.id,
            job.kind,
            job.priority,
            job.partitions,
            job.circuit_id,
            job.request_id.as_deref().map(clipped)
        );
        sh.timeline.record(timeline::Event::new("job_submitted", job.id));
        if !sh.scheduler.push(job.clone()) {
            // Shutdown began between the check above and here.
            log::info!("job refused job={} kind={} (the engine is shutting down)", job.id, job.kind);
            job.refuse();
            return Err(EngineError::ShuttingDown);
        }
        Ok(job.id)
    }

    /// Waits for a job to end; `None` waits forever. `Timeout` leaves the
    /// job running.
    pub fn await_job(&self, id: JobId, timeout: Option<Duration>) -> Result<JobOutcome, EngineError> {
        let job = self.shared.jobs.get(id).ok_or(EngineError::UnknownJob(id))?;
        Ok(job.wait(timeout))
    }

    /// Submit and await.
    pub fn prove(&self, req: ProofRequest, timeout: Option<Duration>) -> Result<(JobId, JobOutcome), EngineError> {
        let id = self.submit(req)?;
        Ok((id, self.await_job(id, timeout)?))
    }

    /// The job last submitted with `request_id` (matched exactly), live or
    /// finished and still kept.
    pub fn job_by_request(&self, request_id: &str) -> Option<JobId> {
        self.shared.jobs.by_request(request_id)
    }

    /// Cancels a queued job at once, or a running one: it reports
    /// Cancelled now and its work stops at the next partition boundary.
    pub fn cancel(&self, id: JobId) -> Result<CancelResult, EngineError> {
        let job = self.shared.jobs.get(id).ok_or(EngineError::UnknownJob(id))?;
        let queued = self.shared.scheduler.remove(&job);
        Ok(match job.cancel() {
            None => CancelResult { was_running: false, cancelled: false },
            Some(phase) => CancelResult { was_running: !queued && phase == Phase::Running, cancelled: true },
        })
    }

    /// 1-based place of a queued job in dispatch order; None once dispatched.
    pub fn queue_position(&self, id: JobId) -> Option<usize> {
        let job = self.shared.jobs.get(id)?;
        self.shared.scheduler.position(&job)
    }

    /// Holds dispatching: queued jobs wait (in-flight work goes on) until
    /// [`Self::resume_dispatch`]. Shutdown resumes.
    pub fn pause_dispatch(&self) {
        self.shared.scheduler.pause();
    }

    pub fn resume_dispatch(&self) {
        self.shared.scheduler.resume();
    }

    pub fn status(&self) -> EngineStatus {
        start::status(&self.shared)
    }

    /// Prometheus text of [`Self::status`].
    pub fn metrics(&self) -> String {
        self.status().prometheus()
    }

    /// Peak and current host-memory accounting.
    pub fn memory(&self) -> memory::MemoryUsage {
        self.shared.memory.usage()
    }

    /// The parameters of a circuit id, loading them if needed (ids of the
    /// built-in circuits and of the engine's sources can be loaded; others
    /// only once a job has loaded them). An id may be given in any spelling
    /// its source accepts (a Filecoin id with its file prefix `v28-<id>`).
    /// Their host points are read again where they were released.
    pub fn parameters(&self, circuit_id: &str) -> Result<Arc<srs_handle::HostPoints>, EngineError> {
        let id = start::resolve(&self.shared, circuit_id);
        let (lease, _) = start::lease(&self.shared, &id)?;
        lease.handle.host_points().map_err(|e| EngineError::Srs { circuit_id: id.into_owned(), kind: e.kind(), message: e.to_string() })
    }

    pub fn preload_srs(&self, circuit_id: &str) -> Result<PreloadResult, EngineError> {
        let t = std::time::Instant::now();
        let (_, loaded) = start::lease(&self.shared, &start::resolve(&self.shared, circuit_id))?;
        Ok(PreloadResult { already_loaded: !loaded, load_time_ms: if loaded { t.elapsed().as_millis() as u64 } else { 0 } })
    }

    pub fn evict_srs(&self, circuit_id: &str) -> Result<EvictResult, EngineError> {
        let circuit_id = &*start::resolve(&self.shared, circuit_id);
        match self.shared.srs.evict(circuit_id) {
            Ok(freed) => {
                // The circuit's PCE goes with its SRS (recorded or loaded again at its next proof).
                let pce = self.shared.pce.as_ref().map_or(0, |p| p.evict(circuit_id));
                Ok(EvictResult { was_loaded: freed.is_some(), freed_bytes: freed.unwrap_or(0) + pce })
            }
            Err(e) => Err(EngineError::srs(circuit_id, e)),
        }
    }

    /// Stops taking jobs, drains or cancels the ones in flight, and joins
    /// every thread. Later calls do nothing.
    pub fn shutdown(&self, mode: ShutdownMode) {
        let Some(threads) = self.threads.lock().unwrap().take() else { return };
        let sh = &self.shared;
        sh.accepting.store(false, Ordering::Release);
        log::info!("engine shutting down mode={mode:?}");
        if mode == ShutdownMode::Cancel {
            for job in sh.jobs.live() {
                sh.scheduler.remove(&job);
                job.cancel();
            }
        }
        sh.scheduler.close();
        threads.dispatcher.into_iter().for_each(join);
        sh.synth_queue.close();
        threads.synthesis.into_iter().for_each(join);
        sh.gpu_queue.close();
        threads.provers.into_iter().for_each(join);
        for job in sh.jobs.live() {
            // Nothing is left to finish them (e.g. dropped at a closed queue).
            job.fail(ErrorKind::Unavailable, "engine shut down before the job finished");
        }
        log::info!("engine stopped");
    }
}

fn join(h: JoinHandle<()>) {
    let name = h.thread().name().unwrap_or("?").to_string();
    if h.join().is_err() {
        log::error!("engine thread {name} panicked outside a job");
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shutdown(ShutdownMode::Cancel);
    }
}

/// Checks a request and describes its job. A [`ProofWork::Request`] is
/// decoded and its circuits built here (bad input fails the submission,
/// naming what is wrong).
/// A request whose request_id names the live `job`: that job where the
/// request is the same, else a conflict naming it.
fn resubmitted(job: &Job, req: &ProofRequest) -> Result<JobId, EngineError> {
    let request_id = req.request_id.clone().unwrap_or_default();
    if job.conflicts_with(req.payload_digest) {
        log::warn!(
            "job request_id conflict job={} request_id={:?}: another request under a live job's id, refused",
            job.id,
            clipped(&request_id)
        );
        return Err(EngineError::RequestIdConflict { request_id, job: job.id });
    }
    log::info!("job resubmitted job={} request_id={:?}", job.id, clipped(&request_id));
    Ok(job.id)
}

fn job_spec(sh: &Shared, req: &ProofRequest) -> Result<JobSpec, EngineError> {
    let bad = |m: String| Err(EngineError::BadRequest(m));
    let circuit: Arc<dyn PartitionedCircuit> = match &req.work {
        ProofWork::Request(r) => {
            let resident = |id: &str| sh.srs.resident(id).is_some();
            r.build(&BuildContext { srs: &sh.config.srs, resident: &resident })?
        }
        ProofWork::Builtin(b) => Arc::new(*b),
        ProofWork::Custom(c) => c.clone(),
    };
    let (circuit_id, partitions) = (circuit.circuit_id(), circuit.partitions());
    if partitions == 0 {
        return bad("a job needs at least one partition".into());
    }
    // An empty id (the protobuf default) means no idempotency key.
    let request_id = req.request_id.clone().filter(|r| !r.is_empty());
    Ok(JobSpec {
        kind: req.kind(),
        priority: req.priority(),
        circuit_id,
        partitions,
        request_id,
        payload_digest: req.payload_digest,
        circuit,
    })
}
