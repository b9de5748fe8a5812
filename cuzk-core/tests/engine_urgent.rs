//! Urgent jobs (priority high and critical: the PoSt kinds) beside long
//! normal partitions: an urgent job starts at once while every partition
//! worker and the synthesis permit are held by slow partitions, or after
//! the batches in flight when its SRS must be loaded; normal work still
//! completes beside a stream of urgent jobs, and cancel works for both.

mod common;

use common::*;
use cuzk_core::cs::ProvingAssignment;
use cuzk_core::engine::niceness;
use cuzk_core::engine::{AnyCircuit, BuiltinJob, Engine, JobId, JobOutcome, PartitionedCircuit, Priority, ProofRequest, WorkerRole};
use cuzk_core::srs::Parameters;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A built-in circuit whose every partition takes `delay` longer to
/// synthesize: a stand-in for a PoRep partition (a minute on one thread).
/// With `niceness`, each synthesis notes the niceness of its thread and of
/// a thread it starts.
struct Slow {
    job: BuiltinJob,
    delay: Duration,
    niceness: Option<Arc<Mutex<Vec<(i32, i32)>>>>,
}

impl PartitionedCircuit for Slow {
    fn circuit_id(&self) -> String {
        self.job.circuit_id()
    }
    fn partitions(&self) -> usize {
        self.job.partitions
    }
    fn circuit(&self, partition: usize) -> Result<Box<dyn AnyCircuit>, String> {
        self.job.circuit(partition)
    }
    fn synthesize(&self, partition: usize) -> Result<ProvingAssignment, String> {
        if let Some(seen) = &self.niceness {
            let started = std::thread::spawn(|| niceness::this_thread().unwrap()).join().unwrap();
            seen.lock().unwrap().push((niceness::this_thread().unwrap(), started));
        }
        std::thread::sleep(self.delay);
        self.job.synthesize(partition)
    }
    fn load_params(&self, param_cache: &Path) -> Result<Parameters, String> {
        self.job.load_params(param_cache)
    }
}

const SLOW: Duration = Duration::from_secs(4);

fn slow(job: BuiltinJob) -> ProofRequest {
    ProofRequest::custom(Arc::new(Slow { job, delay: SLOW, niceness: None }))
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

/// A slow job of 4 partitions (both partition workers busy for two rounds,
/// the only synthesis permit held the while) and another queued behind it;
/// the urgent job's SRS preloaded, as a storage provider's is.
fn busy_engine(urgent_workers: usize) -> (Engine, Vec<(BuiltinJob, JobId)>, BuiltinJob) {
    let engine = engine(urgent_workers);
    let urgent = builtin("mimc:1", 1, 7);
    engine.preload_srs(&urgent.circuit_id()).unwrap();
    let slow_jobs: Vec<_> = (0..2)
        .map(|i| {
            let job = builtin("synthetic:64:2", 4, 100 * i);
            (job, engine.submit(slow(job)).unwrap())
        })
        .collect();
    wait_busy_partition_workers(&engine, 2);
    (engine, slow_jobs, urgent)
}

#[test]
fn urgent_job_does_not_wait_for_long_partitions() {
    let (engine, slow_jobs, urgent) = busy_engine(2);
    for p in [Priority::Critical, Priority::High] {
        let id = engine.submit(ProofRequest::builtin(urgent).with_priority(p)).unwrap();
        let out = expect_completed(engine.await_job(id, WAIT).unwrap());
        verify(&engine, &urgent, &out);
        let t = out.timings;
        // Queue wait and synthesis start do not include a slow partition
        // (4 s); the whole job is milliseconds of work.
        assert!(t.queue_wait_ms + t.srs_load_ms < 1000, "{p:?}: urgent job waited to start: {t:?}");
        assert!(t.total_ms < 2000, "{p:?}: urgent job took {t:?}");
    }
    for (job, id) in &slow_jobs {
        verify(&engine, job, &expect_completed(engine.await_job(*id, WAIT).unwrap()));
    }
}

/// The control: without workers kept for urgent jobs the same job waits
/// for the slow batch's partitions (its permit and a worker).
#[test]
fn without_urgent_workers_urgent_job_waits_for_long_partitions() {
    let (engine, slow_jobs, urgent) = busy_engine(0);
    let id = engine.submit(ProofRequest::builtin(urgent).with_priority(Priority::Critical)).unwrap();
    let t = expect_completed(engine.await_job(id, WAIT).unwrap()).timings;
    assert!(t.queue_wait_ms >= SLOW.as_millis() as u64 / 2, "urgent job did not wait: {t:?}");
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
            (job, engine.submit(ProofRequest::custom(Arc::new(Slow { job, delay, niceness: None }))).unwrap())
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
    cfg.pipeline.synthesis_concurrency = 2;
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
    let (engine, slow_jobs, urgent) = busy_engine(2);
    // An urgent job cancelled while it synthesizes on an urgent worker.
    let slow_urgent = builtin("mimc:1", 1, 5);
    let a = engine.submit(slow(slow_urgent).with_priority(Priority::Critical)).unwrap();
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
    // The other urgent worker still takes urgent work at once.
    let id = engine.submit(ProofRequest::builtin(urgent).with_priority(Priority::Critical)).unwrap();
    let out = expect_completed(engine.await_job(id, WAIT).unwrap());
    verify(&engine, &urgent, &out);
    assert!(out.timings.total_ms < 2000, "urgent job after cancels took {:?}", out.timings);
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
    let normal = Slow { job: builtin("synthetic:64:2", 2, 500), delay: SLOW, niceness: Some(normal_seen.clone()) };
    let normal = engine.submit(ProofRequest::custom(Arc::new(normal))).unwrap();
    wait_busy_partition_workers(&engine, 2);
    let notes = Slow { job: urgent, delay: Duration::ZERO, niceness: Some(urgent_seen.clone()) };
    let urgent = engine.submit(ProofRequest::custom(Arc::new(notes)).with_priority(Priority::Critical)).unwrap();
    expect_completed(engine.await_job(urgent, WAIT).unwrap());
    expect_completed(engine.await_job(normal, WAIT).unwrap());
    let nicer = (base + 4).min(19);
    assert_eq!(*normal_seen.lock().unwrap(), vec![(nicer, nicer); 2], "partition workers and their threads, daemon at {base}");
    assert_eq!(*urgent_seen.lock().unwrap(), vec![(base, base)], "the urgent-only worker (both partition workers were busy)");
}
