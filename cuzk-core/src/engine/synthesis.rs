//! Synthesis workers (`partition_workers` threads): take the most urgent
//! synthesis unit, reserve host memory for it (waiting while the budget is
//! full), synthesize each live job's partition (witness-only + the
//! circuit's PCE when `[synthesis] pce` is on, see [`super::pce_store`]),
//! and queue the result for the prover workers (bounded by
//! `synthesis_lookahead`).
//!
//! Before reserving, the unit asks the backend whether it will compute the
//! partitions' a, b, c on the device from the circuit's resident matrices
//! (`Backend::abc_on_device`, with the circuit's PCE held): then they are
//! synthesized witness-only, the CPU SpMV skipped, and the reservation
//! counts their witness only (~4 GiB of a 2^27 partition's ~17 GiB); the
//! unit holds the backend's lease on those matrices until it is proved.
//! Else, with the PCE held and the H term on the device
//! (`Backend::h_term_on_device`: a small card's regime, the matrices not
//! resident), the reservation counts what the partition holds, its
//! witness and a, b, c from the CPU SpMV, without the working copies an H
//! term on the host would make (~16 GiB of a 2^27 partition's ~28 GiB). A
//! unit still waiting for room when the circuit's PCE becomes ready asks
//! again. Before reserving, a unit whose circuit's PCE is being loaded,
//! confirmed, or recorded on every core, waits for it; on the circuit's
//! first use it claims it ([`super::pce_store::PceStore::prepare`]): it
//! loads the file itself, into memory reserved for it, and reserves its
//! partitions for that PCE as for one held (witness-only where a, b, c go
//! to the device), its first partition confirming the file against its
//! witness ([`super::pce_store::PceStore::confirm`]: path `pce-loaded`);
//! a file refused so fails that partition, and the unit's other
//! partitions reserve again without it. A unit whose partitions could
//! never fit beside the SRS and the PCE it loaded gives the PCE back and
//! reserves without it. With no file, it claims the recording where that
//! runs on every core.
//!
//! A partition that fails or panics fails its own job; the unit goes on
//! with the other jobs' partitions.
//!
//! A unit's witness-only syntheses may run on the cores other syntheses
//! leave free ([`super::synthesis_cores`]).
//!
//! `synthesis.urgent_workers` more threads take urgent units only, so an
//! urgent partition starts at once even while every partition worker is
//! busy with a long one; urgent units also reserve memory ahead of others
//! (and may use `memory.urgent_reserve`) and pass a full prover queue.
//! Partition workers run `synthesis.nice` nicer than the daemon, the
//! urgent-only ones at its niceness ([`super::niceness`]); an urgent unit
//! that a partition worker takes runs at that worker's.

use super::memory::{Purpose, ReserveError};
use super::pce_store::SynthPath;
use super::pipeline::{Member, ProveUnit, SynthUnit};
use super::plan_report::{CircuitReport, PartitionReservation, Pipeline, SrsHost};
use super::shared::{panic_message, Shared};
use super::srs_handle::every_device_would_hold;
use super::srs_manager::SrsLease;
use super::status::PartitionPhase;
use super::timeline::Event;
use crate::failure::ErrorKind;
use crate::pce::Pce;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

/// A synthesis worker in status slot `worker_id`; `urgent_only`: one of
/// the workers kept for urgent units.
pub fn run(sh: Arc<Shared>, worker_id: usize, urgent_only: bool) {
    let by = if urgent_only { 0 } else { sh.config.synthesis.nice };
    let nice = match super::niceness::lower_this_thread(by) {
        Ok(nice) => nice.to_string(),
        Err(e) => {
            log::warn!("synthesis worker {worker_id} keeps the daemon's priority: cannot make it {by} nicer ({e})");
            "unchanged".into()
        }
    };
    log::info!("pipeline synthesis worker started worker_id={worker_id} urgent_only={urgent_only} nice={nice}");
    while let Some(unit) = sh.synth_queue.pop_if(|u| !urgent_only || u.urgent()) {
        process(&sh, worker_id, unit);
        sh.set_worker(worker_id, |w| {
            w.busy = false;
            w.since = None;
            w.job = None;
            w.partition = None;
            w.kind = None;
        });
    }
    log::info!("pipeline synthesis worker stopped worker_id={worker_id}");
}

fn process(sh: &Shared, worker_id: usize, unit: SynthUnit) {
    let urgent = unit.urgent();
    let SynthUnit { order, members, synth_ticket, prove_ticket } = unit;
    let members: Vec<Member> = members.into_iter().filter(|m| !m.job.is_finished()).collect();
    if members.is_empty() {
        return;
    }
    // A unit is one partition of each job of one batch: one circuit.
    let circuit_id = members[0].circuit.circuit_id();
    let ready_pce = || sh.pce.as_ref().and_then(|store| store.ready(&circuit_id));
    let srs = &synth_ticket.batch.srs.handle;
    let abandon = || members.iter().all(|m| m.job.is_finished());
    // Its host points, where they are in memory (released where every
    // device keeps a copy).
    let srs_pinned = srs.host_bytes();
    // A PCE being loaded, confirmed, or recorded on every core, is worth
    // waiting for before reserving: this unit then reserves for what it
    // will hold. On the circuit's first use, the unit loads the PCE's file
    // itself and reserves for it as for one held; its first partition
    // confirms it.
    let mut prepared = sh.pce.as_ref().and_then(|store| store.prepare(members[0].circuit.as_ref()));
    let (pce, witness_only, matrices, h_copies_counted, counts, memory) = loop {
        let loaded = prepared.as_ref().and_then(|p| p.loaded().cloned());
        let pce = loaded.clone().or_else(ready_pce);
        let matrices = pce.as_ref().and_then(|p| sh.backend.abc_on_device(p, srs, &sh.devices));
        let witness_only = pce.clone().filter(|_| matrices.is_some());
        let h_on_device = witness_only.is_none() && pce.is_some() && sh.backend.h_term_on_device(srs, &sh.devices);
        let (per_partition, counts) = match (&witness_only, &pce) {
            (Some(p), _) => (p.witness_bytes(), PartitionReservation::WitnessOnly),
            (None, Some(p)) if h_on_device => (p.assignment_bytes(), PartitionReservation::WithAbc),
            _ => (synth_ticket.batch.partition_bytes, PartitionReservation::Whole),
        };
        let h_copies_counted = witness_only.is_none() && !h_on_device;
        let bytes = per_partition * members.len() as u64;
        // While this unit waits for room at the classic size, another
        // worker may finish loading or recording the circuit's PCE (the
        // first partitions of a circuit's first job): then it asks again,
        // for the witness's reservation only, instead of the whole job
        // going through at the classic size a few partitions at a time.
        let pce_missing = pce.is_none() && sh.pce.is_some();
        let pce_arrived = || pce_missing && ready_pce().is_some();
        // The PCE this unit loaded is held while it waits for room.
        let pinned = srs_pinned + loaded.as_ref().map_or(0, |p| p.bytes());
        match sh.memory.reserve(
            bytes,
            pinned,
            Purpose::Partition,
            urgent,
            |need| {
                sh.srs.make_room(need);
            },
            || abandon() || pce_arrived(),
        ) {
            Ok(r) => break (pce, witness_only, matrices, h_copies_counted, counts, r),
            Err(ReserveError::Abandoned) if !abandon() => continue,
            Err(ReserveError::Abandoned) => return,
            Err(e @ ReserveError::TooLarge { .. }) if loaded.is_some() => {
                // Never room for its partitions beside the PCE it loaded:
                // that is given back, and the unit reserves without it.
                log::info!("pce not loaded circuit_id={circuit_id} reason=\"its partitions {e}\" (reserved without it)");
                prepared = None;
            }
            Err(e @ ReserveError::TooLarge { .. }) => {
                for m in &members {
                    m.job.fail(ErrorKind::ResourceExhausted, format!("partition {}: a synthesized partition {e}", m.partition));
                }
                return;
            }
        }
    };
    let reserved_per_partition = memory.bytes() / members.len() as u64;
    if sh.plans.first(&circuit_id, counts) {
        report_plan(sh, &circuit_id, counts, reserved_per_partition, &synth_ticket.batch.srs, pce.as_ref(), witness_only.is_some());
    }
    let at_once = sh.memory.claims_at_once(memory.bytes());
    let cores = sh.synthesis_cores.take(members[0].circuit.witness_parallelism(), sh.synth_queue.len(), at_once);
    let (mut kept, mut assignments, mut synth_times) = (Vec::new(), Vec::new(), Vec::new());
    // The PCE this unit loaded, until one of its partitions confirms it.
    let mut unconfirmed = prepared.as_ref().and_then(|p| p.loaded().cloned());
    let mut restart = None;
    let mut members = members.into_iter();
    while let Some(m) = members.next() {
        if m.job.is_finished() {
            continue;
        }
        let confirms = match (&sh.pce, &unconfirmed) {
            (Some(store), Some(p)) if !store.is_confirming(&circuit_id, p) => {
                // Refused by an earlier partition (whose job failed): the
                // others reserve again, without it.
                restart = Some(std::iter::once(m).chain(members).collect::<Vec<_>>());
                break;
            }
            (Some(_), Some(_)) => true,
            _ => false,
        };
        sh.set_worker(worker_id, |w| {
            w.busy = true;
            w.since = Some(Instant::now());
            w.job = Some(m.job.id);
            w.partition = Some(m.partition);
            w.kind = Some(m.job.kind);
        });
        m.job.partition_enters(m.partition, PartitionPhase::Synthesizing);
        sh.timeline.record(Event::new("synth_start", m.job.id).partition(m.partition).worker(worker_id));
        let t = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| match (&sh.pce, &unconfirmed) {
            (Some(store), Some(p)) if confirms => {
                store.confirm(m.circuit.as_ref(), m.partition, p, witness_only.is_some(), cores.threads())
            }
            (Some(store), _) => store.synthesize(m.circuit.as_ref(), m.partition, witness_only.as_ref(), cores.threads()),
            (None, _) => m.circuit.synthesize(m.partition).map(|pa| (pa, SynthPath::Classic)),
        }));
        if confirms && matches!(result, Ok(Ok(_))) {
            unconfirmed = None;
        }
        let took = t.elapsed();
        m.job.add_synthesis(m.partition, took);
        let end = Event::new("synth_end", m.job.id).partition(m.partition).worker(worker_id);
        sh.timeline.record(match &result {
            Ok(Ok((_, path))) => end.path(path.as_str()),
            _ => end,
        });
        sh.set_worker(worker_id, |w| w.done += 1);
        match result {
            Ok(Ok((a, path))) => {
                log::info!(
                    "partition synthesized job={} partition={} worker_id={worker_id} synth_ms={} constraints={} path={} threads={} reserved_bytes={}",
                    m.job.id,
                    m.partition,
                    took.as_millis(),
                    a.num_constraints(),
                    path.as_str(),
                    cores.threads(),
                    reserved_per_partition
                );
                assignments.push(a);
                synth_times.push(took);
                kept.push(m);
            }
            Ok(Err(e)) => m.job.fail_partition(m.partition, e.kind, format!("partition {}: synthesis failed: {e}", m.partition)),
            Err(p) => m.job.fail_partition(
                m.partition,
                ErrorKind::Internal,
                format!("partition {}: synthesis panicked: {}", m.partition, panic_message(&*p)),
            ),
        }
    }
    if let Some(rest) = restart {
        drop((memory, cores, matrices, prepared));
        return process(sh, worker_id, SynthUnit { order, members: rest, synth_ticket, prove_ticket });
    }
    drop((synth_ticket, cores, prepared));
    if kept.is_empty() {
        return;
    }
    let ids: Vec<_> = kept.iter().map(|m| (m.job.id, m.partition)).collect();
    let unit = ProveUnit { order, members: kept, assignments, pce, matrices, synth_times, memory, h_copies_counted, prove_ticket };
    let queued = if urgent { sh.gpu_queue.push_past_capacity(unit) } else { sh.gpu_queue.push(unit) };
    if let Err(unit) = queued {
        // Only possible if the engine was torn down out of order.
        unit.members.iter().for_each(|m| m.job.fail(ErrorKind::Unavailable, "engine stopped before the partition was proved"));
        return;
    }
    for (job, p) in ids {
        sh.timeline.record(Event::new("gpu_queued", job).partition(p));
    }
}

/// Logs what the engine plans for `circuit_id`'s partitions
/// ([`super::plan_report`]), the first time a unit reserves for them so:
/// the budget's split beside its SRS (`srs`: its host points released
/// where every device will keep a copy, by the rule the prover workers
/// release them by) and PCE, the partitions in flight, and each device's
/// plan.
fn report_plan(
    sh: &Shared,
    circuit_id: &str,
    reservation: PartitionReservation,
    per_partition: u64,
    srs: &SrsLease,
    pce: Option<&Arc<Pce>>,
    witness_only: bool,
) {
    let devices = sh.backend.device_plans(&srs.handle, pce, witness_only, &sh.devices);
    let in_vram = |ordinal: u32| devices.iter().any(|d| d.ordinal == ordinal && d.keeps_srs_in_vram());
    let srs_host = match (every_device_would_hold(&sh.devices, in_vram), srs.handle.releasable()) {
        (true, true) => SrsHost::Released,
        (true, false) => SrsHost::KeptNoFile,
        (false, _) => SrsHost::Needed,
    };
    let report = CircuitReport {
        circuit_id: circuit_id.to_string(),
        reservation,
        budget: sh.memory.usage().budget_bytes,
        urgent_reserve: sh.memory.urgent_reserve(),
        srs_bytes: srs.handle.bytes(),
        srs_host,
        pce_bytes: pce.map_or(0, |p| p.bytes()),
        per_partition,
        pipeline: Pipeline::of(&sh.config, sh.devices.len()),
        devices,
    };
    report.lines().iter().for_each(|l| log::info!("{l}"));
}
