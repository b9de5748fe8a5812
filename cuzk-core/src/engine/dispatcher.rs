//! The synthesis dispatcher threads: each takes a synthesis permit, collects
//! the next batch from the scheduler, leases its SRS (loading it on first
//! use) and queues one synthesis unit per partition index.
//!
//! Holding a permit per batch in synthesis is what bounds
//! `synthesis_concurrency`; the permit comes back when the batch is
//! synthesized, so the next batch's synthesis overlaps this one's proving
//! (cross-job pipelining), or when it is proved if pipelining is off.
//!
//! Two lanes ([`Lane`]): the main dispatcher takes any job; the urgent one
//! takes only urgent jobs, with permits of its own, so a WinningPoSt never
//! waits for a PoRep batch (minutes of synthesis) to give its permit back,
//! nor for the main dispatcher's SRS loads.

use super::memory::partition_bytes_estimate;
use super::job::Job;
use super::pipeline::{BatchCtx, Member, Permit, SynthUnit};
use super::request::Priority;
use super::shared::{panic_message, Shared};
use super::srs_manager::SrsLoader;
use super::timeline::Event;
use std::cmp::Reverse;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

/// Which jobs a dispatcher takes and whose permits it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// Any job, most urgent first; `pipeline.synthesis_concurrency` batches.
    Main,
    /// Urgent jobs only ([`Priority::is_urgent`]); `synthesis.urgent_workers`
    /// batches.
    Urgent,
}

pub fn run(sh: Arc<Shared>, lane: Lane) {
    let c = &sh.config;
    log::info!(
        "synthesis dispatcher started lane={lane:?} max_batch_size={} max_batch_wait_ms={} slot_size={} synthesis_concurrency={} partition_workers={} urgent_workers={}",
        c.scheduler.max_batch_size,
        c.scheduler.max_batch_wait_ms,
        c.pipeline.slot_size,
        c.pipeline.synthesis_concurrency,
        c.partition_workers(),
        c.synthesis.urgent_workers
    );
    let (permits, min) = match lane {
        Lane::Main => (&sh.permits, Priority::Low),
        Lane::Urgent => (&sh.urgent_permits, Priority::High),
    };
    loop {
        let permit = permits.acquire();
        let Some(mut batch) = sh.scheduler.next_batch(min) else { break };
        batch.retain(|j| !j.is_finished());
        if batch.is_empty() {
            continue;
        }
        let jobs = batch.clone();
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| dispatch(&sh, batch, permit, lane))) {
            let msg = format!("dispatcher panicked: {}", panic_message(&*p));
            jobs.iter().for_each(|j| j.fail(msg.clone()));
        }
    }
    log::info!("synthesis dispatcher stopped lane={lane:?}");
}

fn dispatch(sh: &Arc<Shared>, jobs: Vec<Arc<Job>>, permit: Permit, lane: Lane) {
    let circuit = jobs[0].circuit.clone();
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
    if lane == Lane::Main {
        sh.inflight.wait_while_held(&abandon);
    }
    wait_for_room_beside_other_circuits(sh, &circuit_id, lane, &abandon);
    let inflight = sh.inflight.enter(&circuit_id);
    let param_cache = sh.config.srs.param_cache.clone();
    let load_circuit = circuit.clone();
    let size_hint = circuit.srs_size_hint(&param_cache);
    let loader = SrsLoader { size_hint, load: Box::new(move || load_circuit.load_params(&param_cache)) };
    let lease = match sh.srs.acquire(&circuit_id, loader, &abandon) {
        Ok((lease, _)) => lease,
        Err(e) => {
            jobs.iter().for_each(|j| j.fail(e.clone()));
            return;
        }
    };
    jobs.iter().for_each(|j| j.add_srs_wait(t.elapsed()));
    let partition_bytes = partition_bytes_estimate(&lease.params);
    let units = jobs.iter().map(|j| j.partitions).max().unwrap_or(0);
    let batch = BatchCtx::new(lease, inflight, partition_bytes, units, permit, sh.config.pipeline.enabled);
    let lead = &jobs[0];
    for p in 0..units {
        let members = jobs
            .iter()
            .filter(|j| j.partitions > p)
            .map(|j| Member { job: j.clone(), circuit: j.circuit.clone(), partition: p })
            .collect();
        let unit = SynthUnit::new((Reverse(lead.priority), lead.seq, p), members, &batch);
        // The synthesis queue is unbounded and closes only after this
        // thread has stopped, so the push cannot fail.
        let _ = sh.synth_queue.push(unit);
    }
}

/// Waits until a batch of `circuit_id` can run beside the batches in
/// flight: at once if they are all of the same circuit or there are none;
/// otherwise only if its SRS is resident and it plus one partition fit
/// next to the SRS entries those batches pin. Loading a new SRS waits
/// for the other circuits' batches to finish: two pinned SRS entries can
/// starve each other's partitions of memory for good. An urgent batch
/// that waits so holds the main lane's next batches back meanwhile (else
/// a stream of them would keep other circuits in flight for good).
fn wait_for_room_beside_other_circuits(sh: &Shared, circuit_id: &str, lane: Lane, abandon: &dyn Fn() -> bool) {
    let budget = sh.memory.usage().budget_bytes;
    let mut logged = false;
    let mut _hold = None;
    while sh.inflight.others(circuit_id) > 0 && !abandon() {
        if let Some((bytes, params)) = sh.srs.resident(circuit_id) {
            if sh.srs.in_use_bytes_except(circuit_id) + bytes + partition_bytes_estimate(&params) <= budget {
                return;
            }
        }
        if !logged {
            log::info!("batch waits for other circuits' batches to finish circuit_id={circuit_id} lane={lane:?} reason=memory_budget");
            logged = true;
            if lane == Lane::Urgent {
                _hold = Some(sh.inflight.hold_new_batches());
            }
        }
        sh.inflight.wait(std::time::Duration::from_millis(50));
    }
}
