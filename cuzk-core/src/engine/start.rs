//! Engine start-up (resolving the config into budgets, devices and
//! threads) and the read-side helpers behind status and SRS requests.
//!
//! Several devices share one engine:
//! - One host copy of each SRS serves every device: the engine has one SRS
//!   manager, a batch leases its SRS once, and every partition of it
//!   carries that same `Arc<SrsHandle>` to whichever device proves it;
//!   the host budget counts its points once, and they are page-locked
//!   once, portable to every device (`gpu_srs::pin_host_points`). Each GPU
//!   keeps its own resident copy in its own VRAM where that holds it
//!   (`gpu_backend`); once every device in service has one, the host
//!   points are released (`srs_handle`), and read again for a device
//!   without one. Where every device will keep one, the SRS loads
//!   straight to them from its file, a slice at a time, its host points
//!   released from the start (`srs_stream`).
//!   The PCE store is one as well.
//! - Each device has its own [`DeviceLocks`]: its interlock and a VRAM
//!   budget of its own (the backend's figure for that device, capped by
//!   `gpus.vram_limit`); its workers reserve in it and the GPU backend
//!   plans each call within it and what that device keeps resident. What
//!   is decided for all devices at once is only what synthesis must know
//!   before a device is chosen: whether partitions go witness-only
//!   (`Backend::abc_on_device`: the matrices on every device in service)
//!   and whether the H term has room on the device (every device).
//! - One queue of synthesized partitions feeds every device's workers,
//!   busy devices leaving the next to idle ones (`prover_worker`); one
//!   batch in synthesis per device unless the config says otherwise
//!   ([`Config::synthesis_concurrency_for`]); partition workers, one per
//!   synthesis thread (all CPUs by default), whatever the device count.

use super::backend::Backend;
use super::batch::BatchRules;
use super::builtin::BuiltinSource;
use super::dispatcher::{self, Lane};
use super::interlock::{DeviceLocks, Service};
use super::job::Phase;
use super::job_table::JobTable;
use super::memory::{resolve_budget, MemoryBudget};
use super::pce_store::PceStore;
use super::pipeline::Permits;
use super::plan_report::{self, DeviceSummary, Pipeline, StartReport};
use super::prover_worker::{self, ProverWorker};
use super::request::ProofKind;
use super::scheduler::Scheduler;
use super::shared::Shared;
use super::srs_handle::Reread;
use super::srs_manager::{SrsLease, SrsLoader, SrsManager};
use super::srs_stream::ToDevices;
use super::status::{DeviceStatus, EngineStatus, KindStatus, QueueStatus, WorkerRole, WorkerStatus, RECENT_JOBS};
use super::synthesis_cores::SynthesisCores;
use super::timeline::Timeline;
use super::work_queue::WorkQueue;
use super::{synthesis, Engine, EngineError, Threads};
use crate::circuit_source::CircuitSource;
use crate::client_text::clipped;
use crate::config::{format_size, Config};
use crate::failure::CircuitError;
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

impl Engine {
    /// Starts the engine's threads over the given backend, knowing the
    /// circuit ids of `sources` beside the built-in ones (the engine
    /// defines no other circuit family: see [`crate::circuit_source`]).
    pub fn start_with(config: Config, backend: Arc<dyn Backend>, sources: Vec<Arc<dyn CircuitSource>>) -> Result<Engine, EngineError> {
        config.validate().map_err(|e| EngineError::Start(e.to_string()))?;
        let budget = resolve_budget(&config.memory).map_err(EngineError::Start)?;
        if config.gpus.gpu_threads > 0 {
            crate::par::set_threads(config.gpus.gpu_threads);
        }
        let devices = select_devices(&config, backend.as_ref())?;
        let timeline_path = std::env::var_os("CUZK_TIMELINE")
            .map(PathBuf::from)
            .or_else(|| (!config.logging.timeline.is_empty()).then(|| PathBuf::from(&config.logging.timeline)));
        let timeline = Timeline::open(timeline_path.as_deref())
            .map_err(|e| EngineError::Start(format!("cannot open timeline {}: {e}", timeline_path.as_ref().unwrap().display())))?;
        let partition_workers = config.partition_workers();
        let synthesis_concurrency = config.synthesis_concurrency_for(devices.len());
        let urgent_synth = config.synthesis.urgent_workers;
        let synth_workers = partition_workers + urgent_synth;
        // Per device: gpu_workers_per_device, then those for urgent units only.
        let normal_per_device = config.gpus.gpu_workers_per_device;
        let per_device = normal_per_device + config.gpus.urgent_workers_per_device;
        let urgent_prover = move |sub: usize| sub >= normal_per_device;
        let memory = MemoryBudget::with_urgent_reserve(budget, config.memory.urgent_reserve.0);
        let mut workers: Vec<Mutex<WorkerStatus>> =
            (0..synth_workers).map(|i| Mutex::new(worker(WorkerRole::Synthesis, i, None, None, i >= partition_workers))).collect();
        for (d, dev) in devices.iter().enumerate() {
            for sub in 0..per_device {
                workers.push(Mutex::new(worker(
                    WorkerRole::Prover,
                    d * per_device + sub,
                    Some(dev.ordinal),
                    Some(sub),
                    urgent_prover(sub),
                )));
            }
        }
        log::info!(
            "engine started backend={} devices={} gpu_workers_per_device={} urgent_workers_per_device={} partition_workers={} urgent_workers={} synthesis_concurrency={synthesis_concurrency} ({}) memory_budget={} urgent_reserve={} timeline={}",
            backend.name(),
            devices.len(),
            config.gpus.gpu_workers_per_device,
            config.gpus.urgent_workers_per_device,
            partition_workers,
            urgent_synth,
            if config.pipeline.synthesis_concurrency.is_some() { "pipeline.synthesis_concurrency" } else { "one per device" },
            format_size(budget),
            format_size(config.memory.urgent_reserve.0),
            timeline_path.as_ref().map_or("off".to_string(), |p| p.display().to_string())
        );
        let report = StartReport {
            backend: backend.name().to_string(),
            budget,
            budget_source: plan_report::budget_source(&config.memory, budget),
            urgent_reserve: memory.urgent_reserve(),
            devices: devices
                .iter()
                .map(|d| DeviceSummary {
                    ordinal: d.ordinal,
                    name: d.name.clone(),
                    // The CPU's stand-in device has none (unlimited,
                    // unless `gpus.vram_limit` caps it for tests).
                    vram_budget: Some(d.vram.usage().total_bytes).filter(|&v| backend.name() != "cpu" && v != u64::MAX),
                    urgent_vram_reserve: d.vram.urgent_reserve(),
                })
                .collect(),
            pipeline: Pipeline::of(&config, devices.len()),
        };
        report.lines().iter().for_each(|l| log::info!("{l}"));
        let rules = BatchRules {
            max_batch_size: config.scheduler.max_batch_size,
            max_wait: Duration::from_millis(config.scheduler.max_batch_wait_ms),
        };
        let shared = Arc::new(Shared {
            started: Instant::now(),
            accepting: AtomicBool::new(true),
            jobs: JobTable::default(),
            counters: Arc::default(),
            scheduler: Scheduler::new(rules, config.scheduler.sort_by_type),
            permits: Permits::new(synthesis_concurrency),
            urgent_permits: Permits::new(config.pipeline.urgent_synthesis_concurrency),
            synth_queue: WorkQueue::new(0),
            synthesis_cores: SynthesisCores::new(config.synthesis_threads()),
            gpu_queue: WorkQueue::new(config.gpu_queue_capacity()),
            srs: SrsManager::new(memory.clone(), config.memory.eviction_min_idle.0),
            inflight: Arc::default(),
            pce: config.synthesis.pce.then(|| PceStore::new(&config.srs.param_cache, memory.clone())),
            memory,
            backend,
            sources: std::iter::once(Arc::new(BuiltinSource) as Arc<dyn CircuitSource>).chain(sources).collect(),
            devices: devices.clone(),
            timeline,
            plans: Default::default(),
            workers,
            config,
        });
        let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name.clone())
                .spawn(f)
                .map_err(|e| EngineError::Start(format!("cannot spawn thread {name}: {e}")))
        };
        let mut threads = Threads::default();
        let sh = shared.clone();
        threads.dispatcher.push(spawn("cuzk-dispatcher".into(), Box::new(move || dispatcher::run(sh, Lane::Main)))?);
        if urgent_synth > 0 {
            let sh = shared.clone();
            threads.dispatcher.push(spawn("cuzk-dispatcher-urgent".into(), Box::new(move || dispatcher::run(sh, Lane::Urgent)))?);
        }
        for i in 0..synth_workers {
            let sh = shared.clone();
            let urgent_only = i >= partition_workers;
            threads.synthesis.push(spawn(format!("cuzk-synth-{i}"), Box::new(move || synthesis::run(sh, i, urgent_only)))?);
        }
        for (d, dev) in devices.into_iter().enumerate() {
            for sub_id in 0..per_device {
                let worker_id = d * per_device + sub_id;
                let urgent_only = urgent_prover(sub_id);
                let w = ProverWorker { slot: synth_workers + worker_id, worker_id, sub_id, device: dev.clone(), urgent_only };
                let sh = shared.clone();
                threads.provers.push(spawn(format!("cuzk-prover-{worker_id}"), Box::new(move || prover_worker::run(sh, w)))?);
            }
        }
        Ok(Engine { shared, threads: Mutex::new(Some(threads)) })
    }
}

fn worker(role: WorkerRole, worker_id: usize, gpu: Option<u32>, sub_id: Option<usize>, urgent_only: bool) -> WorkerStatus {
    WorkerStatus { role, worker_id, gpu, sub_id, urgent_only, busy: false, since: None, job: None, partition: None, kind: None, done: 0 }
}

/// The backend's devices narrowed to `gpus.devices`, with VRAM capped by
/// `gpus.vram_limit`, the last `gpus.urgent_vram_reserve` of it kept for
/// urgent work.
fn select_devices(config: &Config, backend: &dyn Backend) -> Result<Vec<Arc<DeviceLocks>>, EngineError> {
    let found = backend.devices();
    if found.is_empty() {
        return Err(EngineError::Start(format!("backend {} has no devices", backend.name())));
    }
    let wanted = &config.gpus.devices;
    if backend.name() != "cpu" {
        if let Some(missing) = wanted.iter().find(|o| !found.iter().any(|d| d.ordinal == **o)) {
            let have: Vec<String> = found.iter().map(|d| d.ordinal.to_string()).collect();
            return Err(EngineError::Start(format!("gpus.devices lists GPU {missing}, but the GPUs found are [{}]", have.join(", "))));
        }
    } else if !wanted.is_empty() {
        log::warn!("gpus.devices is ignored: no GPU backend, proving on the CPU");
    }
    let limit = config.gpus.vram_limit.0;
    Ok(found
        .into_iter()
        .filter(|d| backend.name() == "cpu" || wanted.is_empty() || wanted.contains(&d.ordinal))
        .map(|d| {
            let vram = if limit > 0 { d.vram_bytes.min(limit) } else { d.vram_bytes };
            DeviceLocks::with_urgent_vram_reserve(d.ordinal, d.name, vram, config.gpus.urgent_vram_reserve.0)
        })
        .collect())
}

pub fn status(sh: &Shared) -> EngineStatus {
    let mut queues: Vec<QueueStatus> = ProofKind::ALL.iter().map(|&kind| QueueStatus { kind, pending: 0, in_progress: 0 }).collect();
    for job in sh.jobs.live() {
        let q = queues.iter_mut().find(|q| q.kind == job.kind).unwrap();
        match job.phase() {
            Phase::Queued => q.pending += 1,
            Phase::Running => q.in_progress += 1,
            Phase::Finished => {}
        }
    }
    let c = &sh.counters;
    EngineStatus {
        backend: sh.backend.name().to_string(),
        uptime_seconds: sh.started.elapsed().as_secs(),
        queues,
        workers: sh.workers.iter().map(|w| w.lock().unwrap_or_else(|e| e.into_inner()).clone()).collect(),
        devices: sh
            .devices
            .iter()
            .map(|d| DeviceStatus {
                ordinal: d.ordinal,
                name: d.name.clone(),
                vram: d.vram.usage(),
                in_service: d.in_service(),
                on_cpu: d.service() == Service::OnCpu,
            })
            .collect(),
        srs: sh.srs.entries(),
        pce: sh.pce.as_ref().map_or_else(Vec::new, |p| p.resident()),
        memory: sh.memory.usage(),
        jobs: {
            let now = Instant::now();
            sh.jobs.recent(RECENT_JOBS).iter().map(|j| j.view(now)).collect()
        },
        by_kind: ProofKind::ALL
            .iter()
            .map(|&kind| {
                let k = &c.by_kind[kind.index()];
                let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
                KindStatus { kind, completed: n(&k.completed), failed: n(&k.failed), completed_ms: n(&k.completed_ms) }
            })
            .collect(),
        jobs_completed: c.completed.load(Ordering::Relaxed),
        jobs_failed: c.failed.load(Ordering::Relaxed),
        jobs_cancelled: c.cancelled.load(Ordering::Relaxed),
        partitions_proved: c.partitions_proved.load(Ordering::Relaxed),
    }
}

/// The id the SRS manager keys a circuit id by: the resolution of the
/// first source that knows it, else the id unchanged.
pub fn resolve<'a>(sh: &Shared, circuit_id: &'a str) -> Cow<'a, str> {
    sh.sources.iter().find_map(|s| s.resolve(circuit_id)).map_or(Cow::Borrowed(circuit_id), Cow::Owned)
}

/// A lease on a circuit's SRS by (resolved) id: a resident entry, or the
/// parameters of a source's id. The bool says whether this call loaded it.
pub fn lease(sh: &Shared, circuit_id: &str) -> Result<(SrsLease, bool), EngineError> {
    let id = circuit_id.to_string();
    let loader = match sh.sources.iter().find(|s| s.resolve(circuit_id).is_some()) {
        Some(source) => {
            let (source, srs) = (source.clone(), sh.config.srs.clone());
            let reread = source.params_from_file(circuit_id, &srs).then(|| {
                let (source, srs, id) = (source.clone(), srs.clone(), id.clone());
                Arc::new(move || source.load_params(&id, &srs)) as Reread
            });
            let to_devices = source.params_file(circuit_id, &srs).map(|file| ToDevices::of_engine(sh, circuit_id, file));
            SrsLoader {
                size_hint: source.srs_size_hint(circuit_id, &srs),
                load: Box::new(move || source.load_params(&id, &srs)),
                reread,
                to_devices,
            }
        }
        None => {
            let forms: Vec<&str> = sh.sources.iter().map(|s| s.id_forms()).collect();
            // No parameters the engine knows of: as good as a missing file.
            let message = format!("unknown circuit id {:?}: not resident, and not {}", clipped(&id), forms.join(" or "));
            SrsLoader {
                size_hint: None,
                load: Box::new(move || Err(CircuitError::missing_params(message))),
                reread: None,
                to_devices: None,
            }
        }
    };
    sh.srs.acquire(circuit_id, loader, &|| false).map_err(|e| EngineError::srs(circuit_id, e))
}
