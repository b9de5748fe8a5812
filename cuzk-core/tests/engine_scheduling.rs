//! Scheduling: priority order and FIFO within a priority, the batch
//! collector's flush rules, cross-job pipelining, and dispatch beside a
//! slow SRS load.

mod common;

use common::*;
use cuzk_core::engine::{BuiltinJob, Engine, JobId, JobOutcome, PartitionedCircuit, Priority, ProofRequest, ShutdownMode};
use cuzk_core::groth16::{prepare_verifying_key, verify_proof, Proof};
use cuzk_core::Fr;
use std::time::{Duration, Instant};

/// Which job each proved circuit belonged to, by its public inputs.
fn proved_order(backend: &TestBackend, jobs: &[(BuiltinJob, JobId)]) -> Vec<JobId> {
    let firsts: Vec<(Vec<Fr>, JobId)> = jobs.iter().flat_map(|(j, id)| (0..j.partitions).map(move |p| (j.public_inputs(p), *id))).collect();
    backend.proved.lock().unwrap().iter().map(|x| firsts.iter().find(|(f, _)| f == x).unwrap().1).collect()
}

#[test]
fn priority_order_then_fifo() {
    let backend = TestBackend::new(true);
    let mut cfg = config(1, 1);
    // One queue order: no workers beside it for urgent jobs (which would
    // prove the critical and high jobs' partitions side by side).
    (cfg.synthesis.urgent_workers, cfg.gpus.urgent_workers_per_device) = (0, 0);
    let engine = Engine::start_with_backend(cfg, backend.clone()).unwrap();
    engine.pause_dispatch();
    let plan = [Priority::Low, Priority::Normal, Priority::Critical, Priority::Normal, Priority::High, Priority::Low];
    let jobs: Vec<_> = plan
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let job = builtin("mimc:1", 2, 1000 * i as u64);
            (job, engine.submit(ProofRequest::builtin(job).with_priority(*p)).unwrap())
        })
        .collect();
    assert_eq!(engine.queue_position(jobs[2].1), Some(1));
    assert_eq!(engine.queue_position(jobs[5].1), Some(6));
    engine.resume_dispatch();
    for (job, id) in &jobs {
        verify(&engine, job, &expect_completed(engine.await_job(*id, WAIT).unwrap()));
    }
    let order = proved_order(&backend, &jobs);
    let want: Vec<JobId> = [2, 2, 4, 4, 1, 1, 3, 3, 0, 0, 5, 5].iter().map(|&i| jobs[i].1).collect();
    assert_eq!(order, want, "critical, high, normal (FIFO), low (FIFO); partitions of a job together");
}

#[test]
fn batch_collects_same_circuit_and_flushes_on_other_circuit() {
    let backend = TestBackend::new(true);
    let mut cfg = config(1, 1);
    cfg.scheduler.max_batch_size = 3;
    cfg.scheduler.max_batch_wait_ms = 60_000;
    let engine = Engine::start_with_backend(cfg, backend.clone()).unwrap();
    engine.pause_dispatch();
    let shapes = ["synthetic:64:2", "synthetic:64:2", "synthetic:64:2", "synthetic:64:2", "synthetic:128:2", "synthetic:64:2"];
    let jobs: Vec<_> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let job = builtin(s, 1, 50 + i as u64);
            (job, engine.submit(ProofRequest::builtin(job)).unwrap())
        })
        .collect();
    engine.resume_dispatch();
    // Batches: [0 1 2] full; [3] flushed by the other circuit next;
    // [4]; [5] flushed by shutdown (not after the 60 s wait).
    let t = Instant::now();
    for (job, id) in &jobs[..5] {
        verify(&engine, job, &expect_completed(engine.await_job(*id, WAIT).unwrap()));
    }
    engine.shutdown(ShutdownMode::Drain);
    verify(&engine, &jobs[5].0, &expect_completed(engine.await_job(jobs[5].1, Some(Duration::ZERO)).unwrap()));
    assert!(t.elapsed() < Duration::from_secs(30), "shutdown flushed the partial batch");
    assert_eq!(*backend.batch_sizes.lock().unwrap(), vec![3, 1, 1, 1]);
}

#[test]
fn partial_batch_waits_max_batch_wait() {
    let backend = TestBackend::new(true);
    let mut cfg = config(1, 1);
    cfg.scheduler.max_batch_size = 4;
    // The second job comes once the collector holds the first (taken off
    // the queue, waiting for more): the wait is long, so that a loaded
    // machine stalling between the two does not flush the first alone.
    let wait = Duration::from_millis(1500);
    cfg.scheduler.max_batch_wait_ms = wait.as_millis() as u64;
    let engine = Engine::start_with_backend(cfg, backend.clone()).unwrap();
    let job = builtin("synthetic:64:2", 1, 1);
    let t = Instant::now();
    let first = engine.submit(ProofRequest::builtin(job)).unwrap();
    while engine.queue_position(first).is_some() {
        assert!(t.elapsed() < Duration::from_secs(60), "the collector never took the first job");
        std::thread::sleep(Duration::from_millis(1));
    }
    let second = engine.submit(ProofRequest::builtin(builtin("synthetic:64:2", 1, 2))).unwrap();
    expect_completed(engine.await_job(first, WAIT).unwrap());
    expect_completed(engine.await_job(second, WAIT).unwrap());
    assert!(t.elapsed() >= wait, "the partial batch waited for more jobs");
    assert_eq!(*backend.batch_sizes.lock().unwrap(), vec![2]);
}

#[test]
fn synthesis_of_next_job_overlaps_proving() {
    let backend = TestBackend::new(false);
    let dir = tempfile::tempdir().unwrap();
    let timeline = dir.path().join("timeline.jsonl");
    let mut cfg = config(1, 1);
    cfg.logging.timeline = timeline.to_str().unwrap().into();
    let engine = Engine::start_with_backend(cfg, backend.clone()).unwrap();
    let a = engine.submit(ProofRequest::builtin(builtin("synthetic:64:2", 1, 1))).unwrap();
    let b = engine.submit(ProofRequest::builtin(builtin("synthetic:64:2", 1, 2))).unwrap();
    backend.wait_entered(1);
    // While job a is held in compute, job b gets synthesized.
    let t = Instant::now();
    while !std::fs::read_to_string(&timeline).unwrap().contains(&format!("\"ev\":\"synth_end\",\"job\":\"{b}\"")) {
        assert!(t.elapsed() < Duration::from_secs(60), "job b was not synthesized while job a was proving");
        std::thread::sleep(Duration::from_millis(5));
    }
    backend.open();
    expect_completed(engine.await_job(a, WAIT).unwrap());
    expect_completed(engine.await_job(b, WAIT).unwrap());
    engine.shutdown(ShutdownMode::Drain);
    let report = cuzk_core::engine::timeline_stats::analyze(std::io::BufReader::new(std::fs::File::open(&timeline).unwrap())).unwrap();
    assert_eq!(report.synth_count, 2);
    assert_eq!(report.workers.len(), 1);
    assert_eq!(report.workers[0].proofs, 2);
    assert!(report.gpus[0].busy_fraction > 0.0 && report.gpus[0].busy_fraction <= 1.0);
}

#[test]
fn without_pipelining_next_job_waits_for_proving() {
    let backend = TestBackend::new(false);
    let mut cfg = config(2, 1);
    cfg.pipeline.enabled = false;
    let engine = Engine::start_with_backend(cfg, backend.clone()).unwrap();
    let a = engine.submit(ProofRequest::builtin(builtin("synthetic:64:2", 1, 1))).unwrap();
    let b = engine.submit(ProofRequest::builtin(builtin("synthetic:64:2", 1, 2))).unwrap();
    backend.wait_entered(1);
    // A bounded wait, not an event: a dispatcher holding job b back (for
    // a synthesis permit) shows nothing outside the engine to wait for.
    // It cannot fail falsely: a loaded machine only dispatches b later.
    std::thread::sleep(Duration::from_millis(200));
    let st = engine.status();
    let q = &st.queues.iter().find(|q| q.kind == cuzk_core::engine::ProofKind::Builtin).unwrap();
    assert_eq!((q.pending, q.in_progress), (1, 1), "job b stays queued while job a is proved");
    backend.open();
    expect_completed(engine.await_job(a, WAIT).unwrap());
    expect_completed(engine.await_job(b, WAIT).unwrap());
}

#[test]
fn a_slow_srs_load_does_not_hold_up_a_resident_circuit() {
    // One batch in synthesis at a time: the loading batch must not keep
    // the permit.
    let engine = Engine::start_with_backend(config(1, 1), TestBackend::new(true)).unwrap();
    let resident = builtin("mimc:1", 2, 11);
    engine.preload_srs(&resident.circuit_id()).unwrap();
    let slow_srs = SlowSrs::new(builtin("synthetic:64:2", 2, 12));
    let slow = engine.submit(ProofRequest::custom(slow_srs.clone())).unwrap();
    slow_srs.wait_loading();
    // Jobs of the resident circuit finish while the slow load still waits
    // at its gate.
    let ids: Vec<_> = (0..2).map(|_| engine.submit(ProofRequest::builtin(resident))).collect::<Result<_, _>>().unwrap();
    let outcome = engine.await_job(ids[1], Some(Duration::from_secs(30))).unwrap();
    if !matches!(outcome, JobOutcome::Completed(_)) {
        slow_srs.open();
        panic!("the resident circuit's job waited for the other circuit's SRS load: {outcome:?}");
    }
    assert_eq!(engine.await_job(slow, Some(Duration::ZERO)).unwrap(), JobOutcome::Timeout, "the slow load is still under way");
    slow_srs.open();
    let out = expect_completed(engine.await_job(slow, WAIT).unwrap());
    let params = engine.parameters("slow-srs").unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    for (p, proof) in Proof::many_from_bytes(&out.proof).unwrap().iter().enumerate() {
        assert!(verify_proof(&pvk, proof, &slow_srs.job.public_inputs(p)).unwrap());
    }
    for id in ids {
        verify(&engine, &resident, &expect_completed(engine.await_job(id, WAIT).unwrap()));
    }
    let st = engine.status();
    assert_eq!((st.memory.partition_bytes, st.memory.srs_bytes), (0, st.srs.iter().map(|e| e.size_bytes).sum()));
    engine.shutdown(ShutdownMode::Drain);
}
