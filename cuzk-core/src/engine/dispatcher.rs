//! The synthesis dispatcher threads: each takes a synthesis permit, collects
//! the next batch from the scheduler, leases its SRS and queues one
//! synthesis unit per partition index.
//!
//! Holding a permit per batch in synthesis is what bounds
//! `synthesis_concurrency`; the permit comes back when the batch is
//! synthesized, so the next batch's synthesis overlaps this one's proving
//! (cross-job pipelining), or when it is proved if pipelining is off.
//!
//! A batch whose SRS is not resident gives its permit back and is parked
//! ([`super::parked`]) while a thread of its own loads the SRS. The
//! dispatcher goes on with the jobs of resident circuits queued behind
//! (they start beside the load when they fit next to its reserved size);
//! jobs of the loading circuit, and any job that would load an SRS, keep
//! their place in the queue. Once loaded, the batch takes the
//! dispatcher's next permit before any new batch, also while the
//! dispatcher waits holding one (the batch it holds may be waiting for
//! the loaded one to finish).
//!
//! Two lanes ([`Lane`]): the main dispatcher takes any job; the urgent one
//! takes only urgent jobs, with permits of its own, so a WinningPoSt never
//! waits for a PoRep batch (minutes of synthesis) to give its permit back.

use super::inflight::InflightGuard;
use super::job::Job;
use super::memory::partition_bytes_estimate;
use super::parked::{Loaded, Parked};
use super::pipeline::{BatchCtx, Member, Permit, Permits, SynthUnit};
use super::request::Priority;
use super::scheduler::Take;
use super::shared::{panic_message, Shared};
use super::srs_handle::{host_points_needed, Reread};
use super::srs_manager::{SrsError, SrsLease, SrsLoader};
use super::srs_stream::ToDevices;
use super::timeline::Event;
use crate::failure::ErrorKind;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which jobs a dispatcher takes and whose permits it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// Any job, most urgent first; `pipeline.synthesis_concurrency` batches.
    Main,
    /// Urgent jobs only ([`Priority::is_urgent`]);
    /// `pipeline.urgent_synthesis_concurrency` batches. Runs when
    /// `synthesis.urgent_workers` > 0.
    Urgent,
}

/// How often a dispatcher waiting for room or for a hold to end looks for
/// loaded batches to give its permit to.
const RECHECK: Duration = Duration::from_millis(50);

pub fn run(sh: Arc<Shared>, lane: Lane) {
    let c = &sh.config;
    log::info!(
        "synthesis dispatcher started lane={lane:?} max_batch_size={} max_batch_wait_ms={} slot_size={} synthesis_concurrency={} urgent_synthesis_concurrency={} partition_workers={} urgent_workers={}",
        c.scheduler.max_batch_size,
        c.scheduler.max_batch_wait_ms,
        c.pipeline.slot_size,
        c.synthesis_concurrency_for(sh.devices.len()),
        c.pipeline.urgent_synthesis_concurrency,
        c.partition_workers(),
        c.synthesis.urgent_workers
    );
    let d = Dispatcher { sh: sh.clone(), lane, parked: Arc::default() };
    // The permit held while the scheduler collects a batch (a loaded batch
    // may take it meanwhile: `serve`).
    let held = RefCell::new(None);
    let take = Take {
        min: match lane {
            Lane::Main => Priority::Low,
            Lane::Urgent => Priority::High,
        },
        loading: &|id| d.parked.is_loading(id),
        resident: &|id| sh.srs.resident(id).is_some(),
        loaded: &|| d.parked.any_loaded(),
        serve: &|| d.let_loaded_go_first(&mut held.borrow_mut()),
    };
    loop {
        *held.borrow_mut() = Some(d.permit());
        let batch = sh.scheduler.next_batch(&take);
        let permit = held.borrow_mut().take().expect("the dispatcher holds a permit");
        let Some(mut batch) = batch else { break };
        batch.retain(|j| !j.is_finished());
        if batch.is_empty() {
            continue;
        }
        let jobs = batch.clone();
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| d.dispatch(batch, permit))) {
            let msg = format!("dispatcher panicked: {}", panic_message(&*p));
            jobs.iter().for_each(|j| j.fail(ErrorKind::Internal, msg.clone()));
        }
    }
    // Batches still loading their SRS go on once loaded (drain), or end
    // at once when their jobs were cancelled.
    while d.parked.wait_loaded() {
        // (The permit goes back if that batch's jobs have ended.)
        d.start_loaded(d.permits().acquire());
    }
    log::info!("synthesis dispatcher stopped lane={lane:?}");
}

struct Dispatcher {
    sh: Arc<Shared>,
    lane: Lane,
    parked: Arc<Parked>,
}

impl Dispatcher {
    fn permits(&self) -> &Permits {
        match self.lane {
            Lane::Main => &self.sh.permits,
            Lane::Urgent => &self.sh.urgent_permits,
        }
    }

    /// The next permit not taken by a loaded batch.
    fn permit(&self) -> Permit {
        loop {
            let permit = self.permits().acquire();
            if let Some(permit) = self.start_loaded(permit) {
                return permit;
            }
        }
    }

    /// Starts the oldest loaded batch with `permit`, or gives the permit
    /// back when none waits.
    fn start_loaded(&self, permit: Permit) -> Option<Permit> {
        loop {
            let Some(Loaded { jobs, lease, inflight }) = self.parked.take_loaded() else { return Some(permit) };
            if jobs.iter().all(|j| j.is_finished()) {
                continue;
            }
            self.queue_units(&jobs, lease, inflight, permit);
            return None;
        }
    }

    /// While the dispatcher waits holding a permit, a loaded batch takes
    /// it, and the dispatcher the next one.
    fn let_loaded_go_first(&self, permit: &mut Option<Permit>) {
        if self.parked.any_loaded() {
            let held = permit.take().expect("the dispatcher holds a permit");
            *permit = Some(self.start_loaded(held).unwrap_or_else(|| self.permit()));
        }
    }

    fn dispatch(&self, jobs: Vec<Arc<Job>>, permit: Permit) {
        let sh = &self.sh;
        let circuit_id = jobs[0].circuit_id.clone();
        for j in &jobs {
            j.mark_running();
            sh.timeline.record(Event::new("job_dispatched", j.id));
        }
        log::info!(
            "batch dispatched circuit_id={circuit_id} kind={} jobs={} ids={}",
            jobs[0].kind,
            jobs.len(),
            jobs.iter().map(|j| j.id.to_string()).collect::<Vec<_>>().join(",")
        );
        let t = Instant::now();
        let abandon = || jobs.iter().all(|j| j.is_finished());
        let mut permit = Some(permit);
        if self.lane == Lane::Main {
            while sh.inflight.held() && !abandon() {
                self.let_loaded_go_first(&mut permit);
                sh.inflight.wait(RECHECK);
            }
        }
        self.wait_for_room_beside_other_circuits(&circuit_id, &abandon, &mut permit);
        if abandon() {
            return;
        }
        let inflight = sh.inflight.enter(&circuit_id);
        match sh.srs.lease_resident(&circuit_id) {
            Some(lease) if !host_points_needed(&lease.handle, sh.backend.as_ref(), &sh.devices) => {
                self.queue_units(&jobs, lease, inflight, permit.expect("the dispatcher holds a permit"))
            }
            // Not loaded, or its host points released and needed again:
            // read on a thread of its own.
            _ => {
                drop(permit);
                self.park(jobs, inflight, t);
            }
        }
    }

    /// Loads the batch's SRS on a thread of its own, then lists the batch
    /// as loaded (failing its jobs if the load fails).
    fn park(&self, jobs: Vec<Arc<Job>>, inflight: InflightGuard, t: Instant) {
        let sh = self.sh.clone();
        let parked = self.parked.clone();
        let circuit_id = jobs[0].circuit_id.clone();
        log::info!("batch parked while its srs loads circuit_id={circuit_id} lane={:?}", self.lane);
        jobs.iter().for_each(|j| j.srs_wait_starts(t));
        let loading = parked.loading(&circuit_id);
        let load_jobs = jobs.clone();
        let spawned = std::thread::Builder::new().name("cuzk-srs-load".into()).spawn(move || {
            let circuit = jobs[0].circuit.clone();
            let param_cache = sh.config.srs.param_cache.clone();
            let size_hint = circuit.srs_size_hint(&param_cache);
            let reread = circuit.params_from_file(&param_cache).then(|| {
                let (circuit, param_cache) = (circuit.clone(), param_cache.clone());
                Arc::new(move || circuit.load_params(&param_cache)) as Reread
            });
            let to_devices = circuit.params_file(&param_cache).map(|file| ToDevices::of_engine(&sh, &circuit_id, file));
            let loader = SrsLoader { size_hint, load: Box::new(move || circuit.load_params(&param_cache)), reread, to_devices };
            let abandon = || jobs.iter().all(|j| j.is_finished());
            let leased = || {
                let (lease, _) = sh.srs.acquire(&circuit_id, loader, &abandon)?;
                // Host points released where a device in service has no
                // copy of its own: read again before any partition takes
                // the room.
                if host_points_needed(&lease.handle, sh.backend.as_ref(), &sh.devices) {
                    sh.srs.read_host_points(&lease.handle, &abandon)?;
                }
                Ok::<_, SrsError>(lease)
            };
            let loaded = match catch_unwind(AssertUnwindSafe(leased)) {
                Ok(Ok(lease)) => {
                    jobs.iter().for_each(|j| j.add_srs_wait(t.elapsed()));
                    Some(Loaded { jobs, lease, inflight })
                }
                Ok(Err(e)) => {
                    let (kind, msg) = (e.kind(), e.to_string());
                    jobs.iter().for_each(|j| j.fail(kind, msg.clone()));
                    None
                }
                Err(p) => {
                    let msg = format!("SRS load of {circuit_id} panicked: {}", panic_message(&*p));
                    jobs.iter().for_each(|j| j.fail(ErrorKind::Internal, msg.clone()));
                    None
                }
            };
            // The dispatcher starts the loaded batch, or takes the jobs of
            // this circuit it left queued.
            loading.finish(loaded);
            sh.scheduler.wake();
        });
        if let Err(e) = spawned {
            let msg = format!("cannot start a thread to load the SRS: {e}");
            load_jobs.iter().for_each(|j| j.fail(ErrorKind::ResourceExhausted, msg.clone()));
        }
    }

    /// Queues one synthesis unit per partition index of the batch.
    fn queue_units(&self, jobs: &[Arc<Job>], lease: SrsLease, inflight: InflightGuard, permit: Permit) {
        let partition_bytes = partition_bytes_estimate(&*lease.handle);
        let units = jobs.iter().map(|j| j.partitions).max().unwrap_or(0);
        let batch = BatchCtx::new(lease, inflight, partition_bytes, units, permit, self.sh.config.pipeline.enabled);
        let lead = &jobs[0];
        for p in 0..units {
            let members = jobs
                .iter()
                .filter(|j| j.partitions > p)
                .map(|j| Member { job: j.clone(), circuit: j.circuit.clone(), partition: p })
                .collect();
            let unit = SynthUnit::new((Reverse(lead.priority), lead.seq, p), members, &batch);
            // The synthesis queue is unbounded and closes only after the
            // dispatchers have stopped, so the push cannot fail.
            let _ = self.sh.synth_queue.push(unit);
        }
    }

    /// Waits until a batch of `circuit_id` can run beside the batches in
    /// flight: at once if they are all of the same circuit or there are
    /// none; otherwise only if its SRS is resident and it plus one
    /// partition fit next to the SRS of the other circuits in flight
    /// (resident, or the size reserved by their load; a load that has not
    /// reserved its size yet counts as not fitting). Loading a new SRS
    /// waits for the other circuits' batches to finish: two pinned SRS
    /// entries can starve each other's partitions of memory for good. An
    /// urgent batch that waits so holds the main lane's next batches back
    /// meanwhile (else a stream of them would keep other circuits in
    /// flight for good).
    fn wait_for_room_beside_other_circuits(&self, circuit_id: &str, abandon: &dyn Fn() -> bool, permit: &mut Option<Permit>) {
        let sh = &self.sh;
        let budget = sh.memory.usage().budget_bytes;
        let mut logged = false;
        let mut _hold = None;
        loop {
            let others = sh.inflight.other_circuits(circuit_id);
            if others.is_empty() || abandon() {
                return;
            }
            let others_bytes: Option<u64> = others.iter().map(|c| sh.srs.bytes_held_or_reserved(c)).sum();
            if let (Some((bytes, srs)), Some(others_bytes)) = (sh.srs.resident(circuit_id), others_bytes) {
                if others_bytes + bytes + partition_bytes_estimate(&*srs) <= budget {
                    return;
                }
            }
            if !logged {
                log::info!(
                    "batch waits for other circuits' batches to finish circuit_id={circuit_id} lane={:?} reason=memory_budget",
                    self.lane
                );
                logged = true;
                if self.lane == Lane::Urgent {
                    _hold = Some(sh.inflight.hold_new_batches());
                }
            }
            self.let_loaded_go_first(permit);
            sh.inflight.wait(RECHECK);
        }
    }
}
