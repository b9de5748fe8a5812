//! Cancellation of queued and running jobs, and shutdown in both modes.

mod common;

use common::*;
use cuzk_core::engine::{Engine, JobOutcome, ProofRequest, ShutdownMode};
use std::time::{Duration, Instant};

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
    assert_eq!(engine.await_job(b, Some(Duration::ZERO)).unwrap(), JobOutcome::Cancelled);
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
    let t = Instant::now();
    let r = engine.cancel(big).unwrap();
    assert!(r.cancelled && r.was_running);
    assert_eq!(engine.await_job(big, Some(Duration::ZERO)).unwrap(), JobOutcome::Cancelled);
    assert!(t.elapsed() < Duration::from_secs(1), "cancel reports at once");
    backend.open();
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

#[test]
fn shutdown_cancel_ends_every_job_and_joins() {
    let backend = TestBackend::new(false);
    let engine = Engine::start_with_backend(config(2, 2), backend.clone()).unwrap();
    let ids: Vec<_> = (0..8).map(|i| engine.submit(ProofRequest::builtin(builtin("synthetic:64:2", 2, i))).unwrap()).collect();
    backend.wait_entered(1);
    // The held compute call must be let go for the workers to be joinable.
    let b = backend.clone();
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        b.open();
    });
    engine.shutdown(ShutdownMode::Cancel);
    opener.join().unwrap();
    for id in ids {
        assert_eq!(engine.await_job(id, Some(Duration::ZERO)).unwrap(), JobOutcome::Cancelled);
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
