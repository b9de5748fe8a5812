//! Urgent jobs (priority high and critical: the PoSt kinds) beside long
//! normal partitions: an urgent job starts at once while every partition
//! worker and the synthesis permit are held by slow partitions, or after
//! the batches in flight when its SRS must be loaded; normal work still
//! completes beside a stream of urgent jobs, and cancel works for both.
//! An urgent partition whose working set fits the device's urgent VRAM
//! reserve computes beside a normal partition holding the compute lock;
//! one that does not waits for it.

mod common;

use common::*;
use cuzk_core::config::ByteSize;
use cuzk_core::cs::ProvingAssignment;
use cuzk_core::engine::niceness;
use cuzk_core::engine::{
    AnyCircuit, BuiltinJob, Engine, JobId, JobOutcome, PartitionedCircuit, Priority, ProofRequest, ShutdownMode, WorkerRole,
};
use cuzk_core::srs::Parameters;
use cuzk_core::Fr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A built-in circuit whose every partition takes `delay` longer to
/// synthesize, or with a `gate`, waits there until it opens: a stand-in for
/// a PoRep partition (a minute on one thread). With `niceness`, each
/// synthesis notes the niceness of its thread and of a thread it starts.
struct Slow {
    job: BuiltinJob,
    delay: Duration,
    niceness: Option<Arc<Mutex<Vec<(i32, i32)>>>>,
    gate: Option<Gate>,
}

/// Where slow partitions wait instead of sleeping: while it is closed they
/// cannot end, so a job that completes meanwhile did not wait for them, and
/// one that does not complete waits for them, however fast or loaded the
/// machine (a fixed delay with a time limit on the other job is neither).
#[derive(Clone, Default)]
struct Gate(Arc<(Mutex<bool>, std::sync::Condvar)>);

impl Gate {
    fn open(&self) {
        *self.0 .0.lock().unwrap() = true;
        self.0 .1.notify_all();
    }
    fn wait(&self) {
        let (open, cv) = &*self.0;
        let (guard, waited) = cv.wait_timeout_while(open.lock().unwrap(), WAIT.unwrap(), |open| !*open).unwrap();
        drop(guard);
        assert!(!waited.timed_out(), "the gate was never opened");
    }
}

/// Opens its gate when dropped, a failed test's too: the engine's workers
/// held there must end for the engine to shut down.
struct OpenOnDrop(Gate);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

impl PartitionedCircuit for Slow {
    fn circuit_id(&self) -> String {
        self.job.circuit_id()
    }
    fn partitions(&self) -> usize {
        self.job.partitions
    }
    fn circuit(&self, partition: usize) -> Result<Box<dyn AnyCircuit>, cuzk_core::failure::CircuitError> {
        self.job.circuit(partition)
    }
    fn synthesize(&self, partition: usize) -> Result<ProvingAssignment, cuzk_core::failure::CircuitError> {
        if let Some(seen) = &self.niceness {
            let started = std::thread::spawn(|| niceness::this_thread().unwrap()).join().unwrap();
            seen.lock().unwrap().push((niceness::this_thread().unwrap(), started));
        }
        match &self.gate {
            Some(gate) => gate.wait(),
            None => std::thread::sleep(self.delay),
        }
        self.job.synthesize(partition)
    }
    fn load_params(&self, param_cache: &Path) -> Result<Parameters, cuzk_core::failure::CircuitError> {
        self.job.load_params(param_cache)
    }
}

const SLOW: Duration = Duration::from_secs(4);

/// `job`'s partitions held at `gate`.
fn slow(job: BuiltinJob, gate: &Gate) -> ProofRequest {
    ProofRequest::custom(Arc::new(Slow { job, delay: SLOW, niceness: None, gate: Some(gate.clone()) }))
}

/// Two partition workers, one batch in synthesis at a time, classic
/// synthesis (the slow circuit sleeps there).
fn engine(urgent_workers: usize) -> Engine {
    let mut cfg = config(2, 1);
    cfg.synthesis.pce = false;
    cfg.synthesis.urgent_workers = urgent_workers;
    Engine::start_with_backend(cfg, TestBackend::new(true)).unwrap()
}

/// Waits until `n` of the partition workers (not the urgent-only ones)
/// are busy.
fn wait_busy_partition_workers(engine: &Engine, n: usize) {
    let t = Instant::now();
    loop {
        let st = engine.status();
        let busy = st.workers.iter().filter(|w| w.role == WorkerRole::Synthesis && !w.urgent_only && w.busy).count();
        if busy >= n {
            return;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "the slow partitions never occupied {n} workers");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A slow job of 4 partitions (both partition workers held at the gate,
/// the only synthesis permit held the while) and another queued behind it;
/// the urgent job's SRS preloaded, as a storage provider's is. The gate
/// (opened when the guard drops) is the last of the four: it drops first.
fn busy_engine(urgent_workers: usize) -> (Engine, Vec<(BuiltinJob, JobId)>, BuiltinJob, OpenOnDrop) {
    let engine = engine(urgent_workers);
    let urgent = builtin("mimc:1", 1, 7);
    engine.preload_srs(&urgent.circuit_id()).unwrap();
    let gate = Gate::default();
    let slow_jobs: Vec<_> = (0..2)
        .map(|i| {
            let job = builtin("synthetic:64:2", 4, 100 * i);
            (job, engine.submit(slow(job, &gate)).unwrap())
        })
        .collect();
    wait_busy_partition_workers(&engine, 2);
    (engine, slow_jobs, urgent, OpenOnDrop(gate))
}

/// None of `jobs` has ended (their partitions are held at the gate).
fn none_ended(engine: &Engine, jobs: &[(BuiltinJob, JobId)]) {
    for (_, id) in jobs {
        assert_eq!(engine.await_job(*id, Some(Duration::ZERO)).unwrap(), JobOutcome::Timeout);
    }
}

/// The urgent job completes while the slow partitions are held at their
/// gate, every worker and the permit with them: it waited for none of them.
#[test]
fn urgent_job_does_not_wait_for_long_partitions() {
    let (engine, slow_jobs, urgent, gate) = busy_engine(2);
    for p in [Priority::Critical, Priority::High] {
        let id = engine.submit(ProofRequest::builtin(urgent).with_priority(p)).unwrap();
        let out = expect_completed(engine.await_job(id, WAIT).unwrap());
        verify(&engine, &urgent, &out);
        eprintln!("{p:?}: urgent job beside held partitions: {:?}", out.timings);
        none_ended(&engine, &slow_jobs);
    }
    gate.0.open();
    for (job, id) in &slow_jobs {
        verify(&engine, job, &expect_completed(engine.await_job(*id, WAIT).unwrap()));
    }
}

/// The control: without workers kept for urgent jobs the same job waits
/// for the slow batch's partitions (its permit and a worker): it does not
/// end while they are held, and ends once they are let go.
#[test]
fn without_urgent_workers_urgent_job_waits_for_long_partitions() {
    let (engine, slow_jobs, urgent, gate) = busy_engine(0);
    let id = engine.submit(ProofRequest::builtin(urgent).with_priority(Priority::Critical)).unwrap();
    // However long this waits, the job cannot end while the gate is shut;
    // half a second gives a wrong dispatch the time to show.
    assert_eq!(engine.await_job(id, Some(Duration::from_millis(500))).unwrap(), JobOutcome::Timeout, "the urgent job did not wait");
    none_ended(&engine, &slow_jobs);
    gate.0.open();
    expect_completed(engine.await_job(id, WAIT).unwrap());
    for (_, id) in &slow_jobs {
        expect_completed(engine.await_job(*id, WAIT).unwrap());
    }
}

/// An urgent job whose SRS is not resident waits for the batches of
/// other circuits in flight to finish before loading it, but not for a
/// stream of them: the main dispatcher holds its next batches back.
#[test]
fn urgent_job_loading_its_srs_waits_for_the_batches_in_flight_not_the_stream() {
    let engine = engine(2);
    let delay = Duration::from_millis(1500);
    // One batch in synthesis at a time: the stream lasts 6 x 1.5 s.
    let stream: Vec<_> = (0..6)
        .map(|i| {
            let job = builtin("synthetic:64:2", 1, 300 + i);
            (job, engine.submit(ProofRequest::custom(Arc::new(Slow { job, delay, niceness: None, gate: None }))).unwrap())
        })
        .collect();
    wait_busy_partition_workers(&engine, 1);
    let urgent = builtin("mimc:1", 1, 9);
    let id = engine.submit(ProofRequest::builtin(urgent).with_priority(Priority::Critical)).unwrap();
    let out = expect_completed(engine.await_job(id, WAIT).unwrap());
    verify(&engine, &urgent, &out);
    // At most two slow batches in flight when it came (one synthesizing,
    // one dispatched as it arrived).
    assert!(out.timings.total_ms < 4500, "urgent job waited for the stream: {:?}", out.timings);
    for (job, id) in &stream {
        verify(&engine, job, &expect_completed(engine.await_job(*id, WAIT).unwrap()));
    }
}

#[test]
fn normal_jobs_complete_beside_a_stream_of_urgent_jobs() {
    let mut cfg = config(1, 1);
    cfg.synthesis.urgent_workers = 2;
    cfg.pipeline.synthesis_concurrency = Some(2);
    let engine = Engine::start_with_backend(cfg, TestBackend::new(true)).unwrap();
    let mut jobs = Vec::new();
    for i in 0..12u64 {
        let (spec, priority) = match i % 3 {
            0 => ("synthetic:64:2", Priority::Normal),
            1 => ("mimc:1", Priority::Critical),
            _ => ("mimc:2", Priority::High),
        };
        let job = builtin(spec, 2, 10 * i);
        jobs.push((job, engine.submit(ProofRequest::builtin(job).with_priority(priority)).unwrap()));
    }
    for (job, id) in &jobs {
        verify(&engine, job, &expect_completed(engine.await_job(*id, WAIT).unwrap()));
    }
    let st = engine.status();
    assert_eq!((st.jobs_completed, st.memory.partition_bytes), (12, 0));
}

#[test]
fn cancel_works_for_urgent_and_normal_jobs() {
    let (engine, slow_jobs, urgent, gate) = busy_engine(2);
    // An urgent job cancelled while it synthesizes on an urgent worker.
    let slow_urgent = builtin("mimc:1", 1, 5);
    let a = engine.submit(slow(slow_urgent, &gate.0).with_priority(Priority::Critical)).unwrap();
    let t = Instant::now();
    while !engine.status().workers.iter().any(|w| w.urgent_only && w.busy) {
        assert!(t.elapsed() < Duration::from_secs(60), "the urgent job never reached an urgent worker");
        std::thread::sleep(Duration::from_millis(10));
    }
    let r = engine.cancel(a).unwrap();
    assert!(r.cancelled && r.was_running);
    assert!(matches!(engine.await_job(a, Some(Duration::ZERO)).unwrap(), JobOutcome::Cancelled { .. }));
    // The slow jobs: one running, one queued.
    for (_, id) in &slow_jobs {
        assert!(engine.cancel(*id).unwrap().cancelled);
        assert!(matches!(engine.await_job(*id, Some(Duration::ZERO)).unwrap(), JobOutcome::Cancelled { .. }));
    }
    // The other urgent worker still takes urgent work, while the cancelled
    // partitions' synthesis (the urgent one's worker among them) is still
    // held at the gate: nothing it proves waits for them.
    let id = engine.submit(ProofRequest::builtin(urgent).with_priority(Priority::Critical)).unwrap();
    let out = expect_completed(engine.await_job(id, WAIT).unwrap());
    verify(&engine, &urgent, &out);
    assert!(engine.status().workers.iter().any(|w| w.urgent_only && w.busy), "the cancelled urgent partition let its worker go");
    assert_eq!(engine.status().jobs_cancelled, 3);
}

/// Partition workers, and the threads their synthesis starts, run
/// `synthesis.nice` nicer than the daemon, so that bulk synthesis on every
/// core yields the CPU to the prover workers' host steps between kernels;
/// the urgent-only workers keep the daemon's niceness.
#[test]
fn partition_workers_run_nicer_than_urgent_workers() {
    let mut cfg = config(2, 1);
    cfg.synthesis.pce = false;
    cfg.synthesis.urgent_workers = 1;
    cfg.synthesis.nice = 4;
    let engine = Engine::start_with_backend(cfg, TestBackend::new(true)).unwrap();
    let base = niceness::this_thread().unwrap();
    let urgent = builtin("mimc:1", 1, 11);
    engine.preload_srs(&urgent.circuit_id()).unwrap();
    let (normal_seen, urgent_seen) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(Vec::new())));
    let normal = Slow { job: builtin("synthetic:64:2", 2, 500), delay: SLOW, niceness: Some(normal_seen.clone()), gate: None };
    let normal = engine.submit(ProofRequest::custom(Arc::new(normal))).unwrap();
    wait_busy_partition_workers(&engine, 2);
    let notes = Slow { job: urgent, delay: Duration::ZERO, niceness: Some(urgent_seen.clone()), gate: None };
    let urgent = engine.submit(ProofRequest::custom(Arc::new(notes)).with_priority(Priority::Critical)).unwrap();
    expect_completed(engine.await_job(urgent, WAIT).unwrap());
    expect_completed(engine.await_job(normal, WAIT).unwrap());
    let nicer = (base + 4).min(19);
    assert_eq!(*normal_seen.lock().unwrap(), vec![(nicer, nicer); 2], "partition workers and their threads, daemon at {base}");
    assert_eq!(*urgent_seen.lock().unwrap(), vec![(base, base)], "the urgent-only worker (both partition workers were busy)");
}

/// The fake card of the tests below: a VRAM budget of 256 KiB. The normal
/// partition (synthetic:4096, a, b, c and H of 4096 constraints or more:
/// 512 KiB or more) never fits it, so it computes on the fallback, granted
/// all that is free to normal work; the urgent one (synthetic:64, at most
/// 16 KiB) fits the urgent reserve (an eighth of the budget at most: 32
/// KiB) and nothing else.
const CARD: u64 = 256 << 10;

/// Lets the held partition's compute go on when dropped, a failed test's
/// too: the engine's worker held there must end for it to shut down.
struct ReleaseOnDrop(Arc<TestBackend>, Vec<Fr>);

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        self.0.release(&self.1);
    }
}

/// An engine on [`CARD`] with `urgent_vram_reserve`, its timeline at
/// `timeline`, the urgent circuit's SRS preloaded, and a normal job of one
/// partition held in its compute (the compute lock and all the normal VRAM
/// with it) until the guard drops.
fn card_with_a_held_partition(
    urgent_vram_reserve: u64,
    timeline: &Path,
) -> (Engine, Arc<TestBackend>, (BuiltinJob, JobId), BuiltinJob, ReleaseOnDrop) {
    let mut cfg = config(2, 2);
    cfg.gpus.vram_limit = ByteSize(CARD);
    cfg.gpus.urgent_vram_reserve = ByteSize(urgent_vram_reserve);
    cfg.logging.timeline = timeline.display().to_string();
    let backend = TestBackend::new(true);
    let engine = Engine::start_with_backend(cfg, backend.clone()).unwrap();
    let urgent = builtin("synthetic:64:2", 1, 21);
    engine.preload_srs(&urgent.circuit_id()).unwrap();
    let normal = builtin("synthetic:4096:2", 1, 22);
    backend.hold(normal.public_inputs(0));
    let held = ReleaseOnDrop(backend.clone(), normal.public_inputs(0));
    let id = engine.submit(ProofRequest::builtin(normal)).unwrap();
    backend.wait_held(1);
    (engine, backend, (normal, id), urgent, held)
}

/// Each proved partition's path through the interlock, by job, as the
/// timeline's gpu_end events say (read once the engine has shut down), is
/// `want`'s.
fn assert_gpu_paths(timeline: &Path, want: &[(JobId, &str)]) {
    let text = std::fs::read_to_string(timeline).unwrap();
    let mut paths: Vec<(String, String)> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["ev"] == "gpu_end")
        .map(|v| (v["job"].as_str().unwrap().to_string(), v["path"].as_str().unwrap().to_string()))
        .collect();
    let mut want: Vec<(String, String)> = want.iter().map(|(id, p)| (id.to_string(), p.to_string())).collect();
    paths.sort();
    want.sort();
    assert_eq!(paths, want, "{text}");
}

/// Lets the held partition's compute go on, then both jobs complete with
/// valid proofs, the urgent one first awaited.
fn let_go_and_verify(engine: &Engine, held: ReleaseOnDrop, urgent: (&BuiltinJob, JobId), normal: (&BuiltinJob, JobId)) {
    drop(held);
    for (job, id) in [urgent, normal] {
        verify(engine, job, &expect_completed(engine.await_job(id, WAIT).unwrap()));
    }
}

/// The WinningPoSt beside a PoRep partition: the urgent partition
/// completes while the normal one holds the compute lock (its compute held
/// by the backend) and all the VRAM a normal grant may take.
#[test]
fn urgent_partition_computes_beside_a_partition_holding_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let timeline = dir.path().join("timeline.jsonl");
    let (engine, backend, (normal, normal_id), urgent, held) = card_with_a_held_partition(1 << 30, &timeline);
    let id = engine.submit(ProofRequest::builtin(urgent).with_priority(Priority::Critical)).unwrap();
    let out = expect_completed(engine.await_job(id, WAIT).unwrap());
    verify(&engine, &urgent, &out);
    assert_eq!(backend.holding(), 1, "the normal partition still computes");
    none_ended(&engine, &[(normal, normal_id)]);
    drop(held);
    verify(&engine, &normal, &expect_completed(engine.await_job(normal_id, WAIT).unwrap()));
    let st = engine.status();
    assert_eq!((st.devices[0].vram.total_bytes, st.devices[0].vram.used_bytes), (CARD, 0));
    engine.shutdown(ShutdownMode::Drain);
    assert_gpu_paths(&timeline, &[(normal_id, "fallback"), (id, "urgent_beside")]);
    // The urgent partition's device work ran as the backend's urgent work
    // (on a GPU: its streams at the greatest priority), the normal one's not.
    assert_eq!(backend.ran_as_urgent(&urgent.public_inputs(0)), [true]);
    assert_eq!(backend.ran_as_urgent(&normal.public_inputs(0)), [false]);
}

/// The control: with no urgent VRAM reserve the normal partition's
/// fallback grant leaves the urgent one no room, and it waits for the
/// compute lock as before: it does not end while the normal partition
/// computes, and ends, on the fallback, once it is let go.
#[test]
fn urgent_partition_without_room_in_the_reserve_waits_for_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let timeline = dir.path().join("timeline.jsonl");
    let (engine, _backend, (normal, normal_id), urgent, held) = card_with_a_held_partition(0, &timeline);
    let id = engine.submit(ProofRequest::builtin(urgent).with_priority(Priority::Critical)).unwrap();
    // However long this waits, the job cannot end while the compute is
    // held; half a second gives a wrong path the time to show.
    assert_eq!(engine.await_job(id, Some(Duration::from_millis(500))).unwrap(), JobOutcome::Timeout, "the urgent job did not wait");
    let_go_and_verify(&engine, held, (&urgent, id), (&normal, normal_id));
    engine.shutdown(ShutdownMode::Drain);
    assert_gpu_paths(&timeline, &[(normal_id, "fallback"), (id, "fallback")]);
}

/// An urgent partition that runs out of device memory computing beside
/// (the card had less free than the budget said) is computed again on the
/// fallback, under the compute lock: after the normal partition holding
/// it, and once only.
#[test]
fn urgent_partition_out_of_memory_beside_computes_again_under_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let timeline = dir.path().join("timeline.jsonl");
    let (engine, backend, (normal, normal_id), urgent, held) = card_with_a_held_partition(1 << 30, &timeline);
    backend.fault(urgent.public_inputs(0), Fault::OutOfMemoryOnce);
    let id = engine.submit(ProofRequest::builtin(urgent).with_priority(Priority::Critical)).unwrap();
    backend.wait_proved(&urgent.public_inputs(0), 1);
    assert_eq!(engine.await_job(id, Some(Duration::from_millis(500))).unwrap(), JobOutcome::Timeout, "the fallback did not wait");
    let_go_and_verify(&engine, held, (&urgent, id), (&normal, normal_id));
    assert_eq!(backend.times_proved(&urgent.public_inputs(0)), 2);
    engine.shutdown(ShutdownMode::Drain);
    assert_gpu_paths(&timeline, &[(normal_id, "fallback"), (id, "urgent_beside_then_fallback")]);
}

/// An urgent partition larger than the urgent reserve (a WindowPoSt on a
/// big card) computes under the compute lock, not beside it, even where
/// its whole working set is reserved: the beside path is for the small
/// urgent work the reserve is sized for.
#[test]
fn urgent_partition_larger_than_the_reserve_computes_under_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let timeline = dir.path().join("timeline.jsonl");
    let mut cfg = config(2, 2);
    cfg.gpus.vram_limit = ByteSize(CARD);
    // Below the urgent partition's a, b and c alone (3 x 64 x 32 bytes).
    cfg.gpus.urgent_vram_reserve = ByteSize(1 << 10);
    cfg.logging.timeline = timeline.display().to_string();
    let engine = Engine::start_with_backend(cfg, TestBackend::new(true)).unwrap();
    let urgent = builtin("synthetic:64:2", 1, 23);
    let id = engine.submit(ProofRequest::builtin(urgent).with_priority(Priority::Critical)).unwrap();
    verify(&engine, &urgent, &expect_completed(engine.await_job(id, WAIT).unwrap()));
    engine.shutdown(ShutdownMode::Drain);
    assert_gpu_paths(&timeline, &[(id, "prestaged")]);
}
