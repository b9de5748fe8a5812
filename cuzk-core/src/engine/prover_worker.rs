//! Prover workers (`gpu_workers_per_device` threads per device, and
//! `urgent_workers_per_device` more that take urgent units only): take the most urgent
//! synthesized unit and prove it through the interlock. Every device's
//! workers take from one queue, so partitions spread over the devices as
//! they free; a worker whose device already holds a unit leaves the next
//! to an idle device while there is one ([`takes_next`]): taken, it would
//! wait for its device's running prove while the other device idles.
//!
//! - pre-stage path: under `mem_mtx` reserve VRAM and pre-stage, then
//!   under `compute_mtx` compute (an urgent unit takes either lock before
//!   the normal ones waiting for it);
//! - urgent beside path: an urgent unit whose whole working set fits an
//!   urgent reservation (which may take the device's urgent VRAM reserve,
//!   `gpus.urgent_vram_reserve`), and is no larger than that reserve, is
//!   pre-staged as above, then computes
//!   without `compute_mtx`, beside whatever holds it, within that
//!   reservation alone (it borrows nothing: `compute_beside`); urgent
//!   units computing so take the device's urgent lane, one at a time. A
//!   WinningPoSt thus waits for neither a PoRep partition's kernels nor its
//!   fallback grant, which never takes the reserve;
//! - fallback path (the reservation does not fit): under `compute_mtx`
//!   reserve what is free (never the urgent reserve) and compute within
//!   it; an urgent unit too, which then waits for the kernel running;
//! - epilogue with no lock; proofs go to their jobs by partition.
//!
//! A pre-stage or compute that runs out of device memory (the card had
//! less free than the budget said) is computed again, once, on the
//! fallback path within what is free, under `compute_mtx` (an urgent unit
//! that computed beside leaves its lane and takes the lock). A lost device
//! leaves service where another remains (its workers stop, the unit goes
//! back to the queue for the others); the last one's workers prove on the
//! CPU from then on where `gpus.cpu_fallback` is on, else its units fail.
//! A fault that leaves the device unusable (a sticky CUDA error) is a loss
//! for every call on it, the urgent one beside and the one holding the
//! compute lock alike; any other error fails its own call only. A prove
//! that found no
//! room in the host budget for what it allocates beyond the unit's own
//! reservation (a, b, c computed on the host when the circuit's matrices
//! left the device) is proved again each time the budget frees memory, for
//! up to [`HOST_MEMORY_PATIENCE`]: that room is transient, held by the
//! partitions ahead of it. Other errors and panics fail the unit's jobs,
//! never the worker.

use super::backend::{Backend, CpuBackend, InterlockTrace, ProveInput, ProverBackend, ProverError, StageAhead};
use super::interlock::{after_loss, AfterLoss, DeviceLocks, Service, UrgentFirstGuard, VramBudget, VramReservation};
use super::pipeline::{Member, ProveUnit};
use super::shared::{panic_message, Shared};
use super::srs_handle::release_where_every_device_holds;
use super::status::PartitionPhase;
use super::timeline::Event;
use crate::config::format_size;
use crate::failure::ErrorKind;
use crate::groth16::{Proof, StopCheck};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

pub struct ProverWorker {
    pub slot: usize,
    pub worker_id: usize,
    pub sub_id: usize,
    pub device: Arc<DeviceLocks>,
    /// Kept for urgent units: an urgent partition never waits for a
    /// normal one to be proved to find a worker.
    pub urgent_only: bool,
}

pub fn run(sh: Arc<Shared>, w: ProverWorker) {
    log::info!(
        "pipeline GPU worker started worker_id={} gpu={} sub_id={} urgent_only={}",
        w.worker_id,
        w.device.ordinal,
        w.sub_id,
        w.urgent_only
    );
    let wanted = |u: &ProveUnit| (!w.urgent_only || u.urgent()) && takes_next(&sh.devices, &w.device);
    while let Some(unit) = sh.gpu_queue.pop_if_then(wanted, |_| w.device.hold_unit()) {
        let _held = HeldUnit { sh: &sh, device: &w.device };
        if !w.device.serving() {
            // Taken out while this worker waited: the unit is another's.
            requeue(&sh, unit);
            break;
        }
        process(&sh, &w, unit);
        sh.set_worker(w.slot, |s| {
            s.busy = false;
            s.since = None;
            s.job = None;
            s.partition = None;
            s.kind = None;
        });
        if !w.device.serving() {
            break;
        }
    }
    log::info!("pipeline GPU worker stopped worker_id={} gpu={} sub_id={}", w.worker_id, w.device.ordinal, w.sub_id);
}

/// Whether a worker of `device` takes the next unit: where its device
/// holds none, or every other device in service holds one too (then the
/// unit is pre-staged beside the running prove, as on one device). A
/// device out of service takes it only to give it back.
fn takes_next(devices: &[Arc<DeviceLocks>], device: &DeviceLocks) -> bool {
    !device.serving()
        || device.units_held() == 0
        || devices.iter().filter(|d| d.ordinal != device.ordinal && d.serving()).all(|d| d.units_held() > 0)
}

/// A unit a worker took, counted on its device until dropped; the workers
/// waiting for the queue then weigh the devices again.
struct HeldUnit<'a> {
    sh: &'a Shared,
    device: &'a DeviceLocks,
}

impl Drop for HeldUnit<'_> {
    fn drop(&mut self) {
        self.device.release_unit();
        self.sh.gpu_queue.recheck();
    }
}

/// `unit` back in the queue for the devices in service (a closed queue,
/// at shutdown: its jobs fail).
fn requeue(sh: &Shared, unit: ProveUnit) {
    for m in &unit.members {
        m.job.partition_enters(m.partition, PartitionPhase::SynthDone);
    }
    let queued = if unit.urgent() { sh.gpu_queue.push_past_capacity(unit) } else { sh.gpu_queue.push(unit) };
    if let Err(unit) = queued {
        unit.members.iter().for_each(|m| m.job.fail(ErrorKind::Unavailable, format!("partition {}: engine shutting down", m.partition)));
    }
}

fn process(sh: &Shared, w: &ProverWorker, unit: ProveUnit) {
    let urgent = unit.urgent();
    let ProveUnit { order, members, assignments, pce, matrices, synth_times, memory, h_copies_counted, prove_ticket } = unit;
    if members.iter().all(|m| m.job.is_finished()) {
        return;
    }
    let (first_job, partition) = (members[0].job.clone(), members[0].partition);
    sh.set_worker(w.slot, |s| {
        s.busy = true;
        s.since = Some(Instant::now());
        s.job = Some(first_job.id);
        s.partition = Some(partition);
        s.kind = Some(first_job.kind);
    });
    for m in &members {
        m.job.partition_enters(m.partition, PartitionPhase::Proving);
    }
    let event = |ev| Event::new(ev, first_job.id).partition(partition).worker(w.worker_id).gpu(w.device.ordinal);
    sh.timeline.record(event("gpu_picked"));
    // Nobody wants the proofs once every job of the unit has ended: the
    // backend stops at its next boundary (a cancel or a shutdown then
    // waits for one MSM, not for the whole prove).
    let unwanted = || members.iter().all(|m| m.job.is_finished());
    let input = ProveInput {
        srs: &prove_ticket.batch.srs.handle,
        assignments: &assignments,
        vram: &w.device.vram,
        pce: pce.as_ref(),
        host_memory: Some(&sh.memory),
        h_copies_counted,
        stop: StopCheck::new(&unwanted),
    };
    let gpu_event = |ev: &'static str, path: Option<&'static str>| {
        let e = event(ev);
        sh.timeline.record(match path {
            Some(p) => e.path(p),
            None => e,
        });
    };
    let backend: &dyn Backend = match w.device.service() {
        Service::OnCpu => &CpuBackend,
        _ => sh.backend.as_ref(),
    };
    let t = Instant::now();
    let mut host_memory_deadline = None;
    let result = loop {
        let seen = sh.memory.releases();
        let result = catch_unwind(AssertUnwindSafe(|| backend.prove_interlocked(&w.device, &input, urgent, &gpu_event)));
        if let Ok(Err(ProverError::OutOfHostMemory(why))) = &result {
            let deadline = *host_memory_deadline.get_or_insert_with(|| Instant::now() + HOST_MEMORY_PATIENCE);
            log::warn!(
                "partition waits for host memory job={} partition={partition} worker_id={} gpu={} reason=\"{why}\": proved again once the budget frees some",
                first_job.id, w.worker_id, w.device.ordinal
            );
            if host_memory_freed(sh, &members, seen, deadline) {
                continue;
            }
        }
        break result;
    };
    let wall = t.elapsed();
    let mut lost_last = false;
    if let Ok(Err(ProverError::DeviceLost(why))) = &result {
        let gpu = w.device.ordinal;
        match after_loss(&sh.devices, &w.device, sh.config.gpus.cpu_fallback) {
            AfterLoss::ToOthers => log::error!("gpu={gpu} taken out of service: {why}; its work goes to the other devices"),
            AfterLoss::ToCpu => log::error!("gpu={gpu} lost: {why}; the last GPU in service: its work goes to the CPU (gpus.cpu_fallback)"),
            AfterLoss::Stays => lost_last = true,
        }
        if !lost_last {
            requeue(sh, ProveUnit { order, members, assignments, pce, matrices, synth_times, memory, h_copies_counted, prove_ticket });
            return;
        }
    }
    // Once every device keeps the SRS's points of its own (a GPU's resident
    // copy, made for this unit), its host points go back to the budget.
    release_where_every_device_holds(&prove_ticket.batch.srs.handle, sh.backend.as_ref(), &sh.devices);
    // The unit's host memory is freed before its reservation goes back to
    // the budget, which then never counts as free what is still in use.
    drop(assignments);
    drop((memory, matrices));
    // The batch's SRS lease and permit go before the results are published:
    // a client that sees its job complete may evict that SRS at once (it
    // is refused while a batch holds it).
    drop(prove_ticket);
    sh.set_worker(w.slot, |s| s.done += 1);
    match result {
        Ok(Ok((proofs, trace))) if proofs.len() == members.len() => {
            let gpu_time = trace.prestage + trace.kernel + trace.epilogue;
            for ((m, proof), synth) in members.iter().zip(&proofs).zip(&synth_times) {
                log::info!(
                    "partition proved job={} partition={} worker_id={} gpu={} path={} mem_wait_ms={} prestage_ms={} compute_wait_ms={} kernel_ms={} epilogue_ms={} synth_ms={} gpu_ms={}",
                    m.job.id, m.partition, w.worker_id, w.device.ordinal, trace.path, trace.mem_wait.as_millis(),
                    trace.prestage.as_millis(), trace.compute_wait.as_millis(), trace.kernel.as_millis(),
                    trace.epilogue.as_millis(), synth.as_millis(), gpu_time.as_millis()
                );
                m.job.add_gpu(m.partition, gpu_time);
                m.job.record_partition(m.partition, proof.to_bytes().to_vec());
            }
        }
        Ok(Err(ProverError::Stopped)) => {
            log::info!(
                "prove stopped early job={} partition={partition} worker_id={} gpu={} after_ms={}: its jobs have ended",
                first_job.id,
                w.worker_id,
                w.device.ordinal,
                wall.as_millis()
            );
        }
        failed => {
            let (kind, msg) = match failed {
                Ok(Ok((proofs, _))) => {
                    (ErrorKind::Internal, format!("prover returned {} proofs for {} circuits", proofs.len(), members.len()))
                }
                Ok(Err(e)) if lost_last => {
                    (e.kind(), format!("prover error: {e} (the last GPU in service; gpus.cpu_fallback = true proves on the CPU then)"))
                }
                Ok(Err(e @ ProverError::OutOfHostMemory(_))) if host_memory_deadline.is_some() => {
                    (e.kind(), format!("prover error: {e} (none came free within {} s)", HOST_MEMORY_PATIENCE.as_secs()))
                }
                Ok(Err(e)) => (e.kind(), format!("prover error: {e}")),
                Err(p) => (ErrorKind::Internal, format!("prover panicked: {}", panic_message(&*p))),
            };
            // A failed prove is charged its whole wall time (no trace came back).
            for m in &members {
                m.job.add_gpu(m.partition, wall);
                m.job.fail_partition(m.partition, kind, format!("partition {}: {msg}", m.partition));
            }
        }
    }
}

/// How long, in all, a unit whose prove found no host memory for it waits
/// for the budget to free some before its jobs fail.
const HOST_MEMORY_PATIENCE: Duration = Duration::from_secs(120);

/// After a prove that found no host memory: true once the budget frees
/// some after the mark `seen` (the unit is then proved again); false at
/// `deadline` or when the unit's jobs have ended meanwhile.
fn host_memory_freed(sh: &Shared, members: &[Member], seen: u64, deadline: Instant) -> bool {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || members.iter().all(|m| m.job.is_finished()) {
            return false;
        }
        if sh.memory.wait_release(seen, left.min(Duration::from_secs(1))) {
            return true;
        }
    }
}

/// The fallback's grant under the compute lock, from `vram`: whatever of
/// a working set of `need` bytes is free beyond `held` (a part staged
/// ahead). Where the backend stages ahead (`ahead`), the next call's part
/// is left room beside it, unless that takes this grant below full speed
/// (`ahead.min_grant`): that upload then leaves the compute lock too.
pub(super) fn fallback_grant(vram: &Arc<VramBudget>, need: u64, held: u64, ahead: Option<StageAhead>) -> VramReservation {
    let want = need.saturating_sub(held);
    let want = match ahead {
        Some(a) => {
            let room = vram.free().saturating_sub(a.bytes);
            if room.saturating_add(held) >= a.min_grant {
                want.min(room)
            } else {
                want
            }
        }
        None => want,
    };
    vram.reserve_up_to(want)
}

/// What a call takes from the memory lock to the compute lock.
enum Staged<S> {
    /// The whole working set reserved and pre-staged.
    Whole(VramReservation, S),
    /// The part the backend stages ahead, in its own reservation; the
    /// rest is granted under the compute lock.
    Ahead(VramReservation, S, StageAhead),
    /// Nothing staged: the fallback (its trace's path) plans within what
    /// it is granted under the compute lock, leaving the next call room
    /// for what it stages ahead.
    Nothing(&'static str, Option<StageAhead>),
}

/// What a call computes under: the compute lock, or, for an urgent call
/// whose whole working set is reserved and pre-staged, the device's urgent
/// lane, beside whatever holds the compute lock.
enum Computing<'a> {
    Locked { _compute: UrgentFirstGuard<'a> },
    Beside { _lane: MutexGuard<'a, ()> },
}

/// `input` proved on `dev` through its interlock, the state between
/// `backend`'s phases in its own types ([`super::backend::Backend`] for
/// every backend).
pub(super) fn through_interlock<B: ProverBackend>(
    backend: &B,
    dev: &DeviceLocks,
    input: &ProveInput<'_>,
    urgent: bool,
    gpu_event: &dyn Fn(&'static str, Option<&'static str>),
) -> Result<(Vec<Proof>, InterlockTrace), ProverError> {
    let t = Instant::now();
    let mem_guard = dev.lock_mem(urgent);
    let mem_wait = t.elapsed();
    // What the device keeps for the input first (a resident SRS): the
    // working set's size depends on it. Counted as pre-staging time.
    let t = Instant::now();
    backend.keep_resident(dev.ordinal, input)?;
    let kept = t.elapsed();
    let need = backend.vram_needed(dev.ordinal, input);
    // Whatever `fallback_grant` gives, and a plan within it.
    let fallback = |ahead: Option<StageAhead>| {
        let vram = fallback_grant(&dev.vram, need, 0, ahead);
        backend.compute_fallback(dev.ordinal, vram.bytes(), input)
    };
    // Pre-staged where the reservation fits (an urgent one may take the
    // urgent reserve) and the card has the memory; an out-of-memory there
    // leaves the unit to the fallback.
    let reserved = if urgent { dev.vram.try_reserve_urgent(need) } else { dev.vram.try_reserve(need) };
    let (staged, prestage) = match reserved {
        Some(vram) => {
            let t = Instant::now();
            let staged = backend.prestage(dev.ordinal, input);
            let prestage = kept + t.elapsed();
            drop(mem_guard);
            match staged {
                Ok(staged) => (Staged::Whole(vram, staged), prestage),
                Err(ProverError::OutOfMemory(why)) => {
                    log::warn!("gpu={} out of device memory in prestage ({why}); computing within what is free", dev.ordinal);
                    (Staged::Nothing("prestaged_then_fallback", backend.stage_ahead(dev.ordinal, input)), kept)
                }
                Err(e) => return Err(e),
            }
        }
        None => {
            let usage = dev.vram.usage();
            // Its part staged ahead where there is room for that.
            let t = Instant::now();
            let ahead = backend.stage_ahead(dev.ordinal, input);
            let staged = match ahead.and_then(|a| Some((a, dev.vram.try_reserve(a.bytes)?))) {
                Some((a, held)) => match backend.prestage_ahead(dev.ordinal, input) {
                    Ok(staged) => Staged::Ahead(held, staged, a),
                    Err(ProverError::OutOfMemory(why)) => {
                        log::warn!("gpu={} out of device memory staging ahead ({why}); staged within the compute lock", dev.ordinal);
                        Staged::Nothing("fallback", ahead)
                    }
                    Err(e) => return Err(e),
                },
                None => Staged::Nothing("fallback", ahead),
            };
            let prestage = kept + t.elapsed();
            drop(mem_guard);
            log::info!(
                "gpu={} no room to pre-stage{}: needs {}, {} of {} reserved{}; {} within the compute lock instead",
                dev.ordinal,
                if urgent { " (urgent)" } else { "" },
                format_size(need),
                format_size(usage.used_bytes),
                format_size(usage.total_bytes),
                match dev.vram.urgent_reserve() {
                    0 => String::new(),
                    r if urgent => format!(" (its urgent reserve of {} included)", format_size(r)),
                    r => format!(", the last {} kept for urgent work", format_size(r)),
                },
                if matches!(staged, Staged::Ahead(..)) { "its part staged ahead, the rest" } else { "staged" }
            );
            (staged, prestage)
        }
    };
    // An urgent call with its whole working set reserved computes beside
    // the compute lock's holder (a long partition): it waits for the
    // urgent call computing so, if any, only. Only one small enough for
    // the urgent reserve (a WinningPoSt), the work the reserve is sized
    // for: a large one (a WindowPoSt on a big card) would share the GPU's
    // arithmetic with the partition for as long as both run, slowing both,
    // and takes the compute lock first anyway.
    let beside = urgent && need <= dev.vram.urgent_reserve() && matches!(staged, Staged::Whole(..));
    let t = Instant::now();
    let mut computing =
        if beside { Computing::Beside { _lane: dev.lock_urgent_lane() } } else { Computing::Locked { _compute: dev.lock_compute(urgent) } };
    let compute_wait = t.elapsed();
    gpu_event("gpu_start", None);
    let t = Instant::now();
    let (computed, path) = match staged {
        Staged::Whole(vram, staged) => {
            let computed =
                if beside { backend.compute_beside(dev.ordinal, staged, input) } else { backend.compute(dev.ordinal, staged, input) };
            drop(vram);
            // The device had less free than the plan took (another user of
            // the card): planned again within what is free now, once, under
            // the compute lock (the fallback's grant is the free VRAM, which
            // only the compute lock's holder may take).
            match computed {
                Err(ProverError::OutOfMemory(why)) => {
                    log::warn!("gpu={} out of device memory in compute ({why}); computing again within what is free", dev.ordinal);
                    if beside {
                        drop(computing);
                        computing = Computing::Locked { _compute: dev.lock_compute(urgent) };
                    }
                    let path = if beside { "urgent_beside_then_fallback" } else { "prestaged_then_fallback" };
                    (fallback(backend.stage_ahead(dev.ordinal, input)), path)
                }
                computed => (computed, if beside { "urgent_beside" } else { "prestaged" }),
            }
        }
        Staged::Ahead(held, staged, ahead) => {
            let vram = fallback_grant(&dev.vram, need, held.bytes(), Some(ahead));
            match backend.compute_fallback_staged(dev.ordinal, vram.bytes() + held.bytes(), staged, input) {
                Err(ProverError::OutOfMemory(why)) => {
                    log::warn!("gpu={} out of device memory in compute ({why}); computing again within what is free", dev.ordinal);
                    drop((vram, held));
                    (fallback(Some(ahead)), "prestaged_then_fallback")
                }
                computed => (computed, "staged_ahead"),
            }
        }
        Staged::Nothing(path, ahead) => (fallback(ahead), path),
    };
    let kernel = t.elapsed();
    gpu_event("gpu_end", Some(path));
    drop(computing);
    let trace = InterlockTrace { path, mem_wait, prestage, compute_wait, kernel, epilogue: Duration::ZERO };
    let computed = computed?;
    let t = Instant::now();
    let proofs = backend.epilogue(dev.ordinal, computed)?;
    Ok((proofs, InterlockTrace { epilogue: t.elapsed(), ..trace }))
}
