//! Cancellation of queued and running jobs, and shutdown in both modes.

mod common;

use common::*;
use cuzk_core::engine::{Engine, JobOutcome, ProofRequest, ShutdownMode};
use std::time::Duration;

#[test]
fn cancel_queued_job() {
    let backend = TestBackend::new(true);
    let engine = Engine::start_with_backend(config(1, 1), backend.clone()).unwrap();
    engine.pause_dispatch();
    let keep = builtin("synthetic:64:2", 1, 1);
    let a = engine.submit(ProofRequest::builtin(keep)).unwrap();
    let b = engine.submit(ProofRequest::builtin(builtin("synthetic:64:2", 3, 2))).unwrap();
    let r = engine.cancel(b).unwrap();
    assert!(r.cancelled && !r.was_running);
    assert!(matches!(engine.await_job(b, Some(Duration::ZERO)).unwrap(), JobOutcome::Cancelled { .. }));
    assert!(!engine.cancel(b).unwrap().cancelled, "a finished job cannot be cancelled again");
    engine.resume_dispatch();
    verify(&engine, &keep, &expect_completed(engine.await_job(a, WAIT).unwrap()));
    engine.shutdown(ShutdownMode::Drain);
    assert_eq!(backend.proved.lock().unwrap().len(), 1, "nothing of the cancelled job was proved");
    assert_eq!(engine.status().jobs_cancelled, 1);
}

#[test]
fn cancel_running_job_stops_at_partition_boundary() {
    let backend = TestBackend::new(false);
    let engine = Engine::start_with_backend(config(1, 1), backend.clone()).unwrap();
    let big = engine.submit(ProofRequest::builtin(builtin("synthetic:64:2", 6, 10))).unwrap();
    let after = builtin("synthetic:64:2", 1, 99);
    let next = engine.submit(ProofRequest::builtin(after)).unwrap();
    backend.wait_entered(1);
    // The partition in compute stays held at the gate until the cancel has
    // returned with the job ended: a cancel that waited for it would not
    // return at all (the bound only keeps that from hanging the test).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(|| tx.send(engine.cancel(big).unwrap()).unwrap());
        let reported = rx.recv_timeout(Duration::from_secs(60));
        let ended = engine.await_job(big, Some(Duration::ZERO)).unwrap();
        backend.open();
        let r = reported.expect("cancel waited for the partition in compute");
        assert!(r.cancelled && r.was_running);
        assert!(matches!(ended, JobOutcome::Cancelled { .. }), "{ended:?}");
    });
    verify(&engine, &after, &expect_completed(engine.await_job(next, WAIT).unwrap()));
    engine.shutdown(ShutdownMode::Drain);
    // The partition in compute finishes; at most the one already queued
    // behind it (lookahead 1) is also picked up, the rest never start.
    let proved = backend.proved.lock().unwrap().len();
    assert!(proved <= 3, "{proved} circuits proved after cancelling a 6-partition job");
    let st = engine.status();
    assert_eq!((st.jobs_cancelled, st.jobs_completed), (1, 1));
    assert_eq!(st.memory.partition_bytes, 0);
}

fn cancelled_timings(engine: &Engine, id: cuzk_core::engine::JobId) -> cuzk_core::engine::JobTimings {
    match engine.await_job(id, Some(Duration::ZERO)).unwrap() {
        JobOutcome::Cancelled { timings } => timings,
        other => panic!("expected {id} cancelled, got {other:?}"),
    }
}

/// A cancelled job reports the time it spent up to the cancel, in the
/// stage it was in: on the prover, and loading its SRS.
#[test]
fn cancelled_jobs_report_the_time_they_spent() {
    const HELD: Duration = Duration::from_millis(300);
    let backend = TestBackend::new(false);
    let engine = Engine::start_with_backend(config(1, 1), backend.clone()).unwrap();
    let proving = engine.submit(ProofRequest::builtin(builtin("synthetic:64:2", 1, 1))).unwrap();
    backend.wait_entered(1);
    std::thread::sleep(HELD);
    assert!(engine.cancel(proving).unwrap().cancelled);
    let t = cancelled_timings(&engine, proving);
    assert!(t.gpu_compute_ms >= HELD.as_millis() as u64, "{t:?}");
    assert!(t.total_ms >= t.queue_wait_ms + t.srs_load_ms + t.gpu_compute_ms, "{t:?}");
    backend.open();

    // A circuit whose SRS load waits at a gate: still loading when the
    // cancel comes, however fast the machine makes SRSs.
    let slow_srs = SlowSrs::new(builtin("synthetic:64:2", 1, 2));
    let loading = engine.submit(ProofRequest::custom(slow_srs.clone())).unwrap();
    slow_srs.wait_loading();
    std::thread::sleep(HELD);
    assert!(engine.cancel(loading).unwrap().cancelled);
    let t = cancelled_timings(&engine, loading);
    assert!(t.srs_load_ms >= HELD.as_millis() as u64, "{t:?}");
    assert!(t.total_ms >= t.queue_wait_ms + t.srs_load_ms, "{t:?}");
    slow_srs.open();
    engine.shutdown(ShutdownMode::Cancel);
}

#[test]
fn shutdown_cancel_ends_every_job_and_joins() {
    let backend = TestBackend::new(false);
    let engine = Engine::start_with_backend(config(2, 2), backend.clone()).unwrap();
    let ids: Vec<_> = (0..8).map(|i| engine.submit(ProofRequest::builtin(builtin("synthetic:64:2", 2, i))).unwrap()).collect();
    backend.wait_entered(1);
    std::thread::scope(|scope| {
        // The held compute call must be let go for the workers to be
        // joinable: once shutdown has ended every job (none can complete
        // before, their first partition held at the gate).
        scope.spawn(|| {
            let outcomes: Vec<_> = ids.iter().map(|&id| engine.await_job(id, WAIT).unwrap()).collect();
            backend.open();
            for (id, outcome) in ids.iter().zip(outcomes) {
                assert!(matches!(outcome, JobOutcome::Cancelled { .. }), "{id}: {outcome:?}");
            }
        });
        engine.shutdown(ShutdownMode::Cancel);
    });
    for &id in &ids {
        assert!(matches!(engine.await_job(id, Some(Duration::ZERO)).unwrap(), JobOutcome::Cancelled { .. }));
    }
    assert!(engine.status().workers.iter().all(|w| !w.busy));
}

#[test]
fn shutdown_drain_finishes_every_job() {
    let engine = Engine::start(config(2, 2)).unwrap();
    let jobs: Vec<_> = (0..6)
        .map(|i| {
            let j = builtin("synthetic:128:2", 1 + i % 2, i as u64);
            (j, engine.submit(ProofRequest::builtin(j)).unwrap())
        })
        .collect();
    engine.shutdown(ShutdownMode::Drain);
    for (job, id) in jobs {
        verify(&engine, &job, &expect_completed(engine.await_job(id, Some(Duration::ZERO)).unwrap()));
    }
    engine.shutdown(ShutdownMode::Drain); // a second call is a no-op
}

#[test]
fn drop_shuts_down() {
    let engine = Engine::start(config(1, 1)).unwrap();
    engine.submit(ProofRequest::builtin(builtin("synthetic:64:2", 4, 1))).unwrap();
    drop(engine); // joins its threads (cancel mode); the test would hang otherwise
}
