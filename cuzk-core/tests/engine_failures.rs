//! Faults stay inside their job: prover errors and panics, out of device
//! memory (computed again once, then failed), out of host memory (proved
//! again once the budget frees some), a lost device (out of
//! service, its work to another; the last stays, or its work goes to the
//! CPU with `gpus.cpu_fallback`), synthesis
//! errors and panics, SRS load failures, and partitions too large for the
//! memory budget. Each failed job says its kind of failure. The engine
//! keeps serving afterwards.

mod common;

use common::*;
use cuzk_core::engine::{
    AnyCircuit, BuiltinJob, Engine, EngineStatus, JobOutcome, PartitionPhase, PartitionedCircuit, ProofKind, ProofRequest, ShutdownMode,
};
use cuzk_core::failure::{CircuitError, ErrorKind};
use cuzk_core::srs::Parameters;
use std::path::Path;
use std::sync::Arc;

/// The message of a job that failed with `kind`.
fn failed(outcome: JobOutcome, kind: ErrorKind) -> String {
    match outcome {
        JobOutcome::Failed { kind: k, message, .. } => {
            assert_eq!(k, kind, "{message}");
            message
        }
        o => panic!("expected a failed job, got {o:?}"),
    }
}

/// After the faults: a fresh job (`seed`) still proves, the engine counts
/// `(failed, completed)` jobs, and no VRAM reservation is left behind.
fn still_serving(engine: &Engine, seed: u64, counts: (u64, u64)) -> EngineStatus {
    let later = builtin("synthetic:64:2", 1, seed);
    verify(engine, &later, &expect_completed(engine.prove(ProofRequest::builtin(later), WAIT).unwrap().1));
    let st = engine.status();
    assert_eq!((st.jobs_failed, st.jobs_completed), counts);
    assert!(st.devices.iter().all(|d| d.vram.used_bytes == 0), "VRAM reservations released");
    st
}

#[test]
fn prover_error_and_panic_fail_only_their_job() {
    let backend = TestBackend::new(true);
    let engine = Engine::start_with_backend(config(2, 2), backend.clone()).unwrap();
    // MiMC's public input is a full field element: no two seeds share it.
    let bad_err = builtin("mimc:1", 3, 100);
    let bad_panic = builtin("mimc:1", 2, 200);
    backend.fault(bad_err.public_inputs(1), Fault::Error);
    backend.fault(bad_panic.public_inputs(0), Fault::Panic);
    let good: Vec<_> = (0..4).map(|i| builtin("mimc:1", 2, 1000 + 10 * i)).collect();
    let e = engine.submit(ProofRequest::builtin(bad_err)).unwrap();
    let p = engine.submit(ProofRequest::builtin(bad_panic)).unwrap();
    let ids: Vec<_> = good.iter().map(|j| engine.submit(ProofRequest::builtin(*j)).unwrap()).collect();
    let m = failed(engine.await_job(e, WAIT).unwrap(), ErrorKind::Internal);
    assert!(m.contains("partition 1") && m.contains("injected prover error"), "{m}");
    let m = failed(engine.await_job(p, WAIT).unwrap(), ErrorKind::Internal);
    assert!(m.contains("prover panicked") && m.contains("injected prover panic"), "{m}");
    for (j, id) in good.iter().zip(ids) {
        verify(&engine, j, &expect_completed(engine.await_job(id, WAIT).unwrap()));
    }
    let st = still_serving(&engine, 5, (2, 5));
    let k = st.by_kind.iter().find(|k| k.kind == ProofKind::Builtin).unwrap();
    assert_eq!((k.completed, k.failed), (5, 2));
    let view = st.jobs.iter().find(|j| j.id == e).expect("failed just now: still in status");
    assert_eq!(view.partitions[1].phase, PartitionPhase::Failed, "{view:?}");
    engine.shutdown(ShutdownMode::Drain);
}

/// A compute that runs out of device memory is computed again, once, on
/// the fallback path: the job completes. One that runs out there too
/// fails its job alone, saying why; the engine keeps serving and holds no
/// VRAM afterwards.
#[test]
fn out_of_memory_is_computed_again_once_within_what_is_free() {
    let backend = TestBackend::new(true);
    let engine = Engine::start_with_backend(config(2, 1), backend.clone()).unwrap();
    let once = builtin("mimc:1", 2, 300);
    let always = builtin("mimc:1", 1, 400);
    backend.fault(once.public_inputs(1), Fault::OutOfMemoryOnce);
    backend.fault(always.public_inputs(0), Fault::OutOfMemory);
    let o = engine.submit(ProofRequest::builtin(once)).unwrap();
    let a = engine.submit(ProofRequest::builtin(always)).unwrap();
    verify(&engine, &once, &expect_completed(engine.await_job(o, WAIT).unwrap()));
    let retried = backend.times_proved(&once.public_inputs(1));
    assert_eq!(retried, 2, "the partition that ran out of memory was computed again once");
    let m = failed(engine.await_job(a, WAIT).unwrap(), ErrorKind::ResourceExhausted);
    assert!(m.contains("out of device memory") && m.contains("injected out of memory"), "{m}");
    still_serving(&engine, 6, (1, 2));
    engine.shutdown(ShutdownMode::Drain);
}

/// A prove that finds no room in the host budget for what it allocates
/// beyond its reservation (a, b, c computed on the host while the matrices
/// are off the device) is proved again once the budget frees memory, here
/// when a later job's partition is proved: both jobs complete.
#[test]
fn out_of_host_memory_is_proved_again_once_memory_frees() {
    let backend = TestBackend::new(true);
    let engine = Engine::start_with_backend(config(2, 2), backend.clone()).unwrap();
    let waits = builtin("mimc:1", 1, 800);
    backend.fault(waits.public_inputs(0), Fault::OutOfHostMemoryOnce);
    let w = engine.submit(ProofRequest::builtin(waits)).unwrap();
    backend.wait_proved(&waits.public_inputs(0), 1);
    let frees = builtin("mimc:1", 1, 810);
    let f = engine.submit(ProofRequest::builtin(frees)).unwrap();
    verify(&engine, &frees, &expect_completed(engine.await_job(f, WAIT).unwrap()));
    verify(&engine, &waits, &expect_completed(engine.await_job(w, WAIT).unwrap()));
    let tries = backend.times_proved(&waits.public_inputs(0));
    assert_eq!(tries, 2, "proved again after the failed try");
    still_serving(&engine, 9, (0, 3));
    engine.shutdown(ShutdownMode::Drain);
}

/// A device failure takes that device out of service while another
/// remains: its unit is proved on the other, nothing fails, and the status
/// says which device left.
#[test]
fn a_failed_device_leaves_service_and_its_work_goes_to_the_other() {
    let backend = TestBackend::with_devices(false, 2);
    backend.lose_device(0, false);
    let engine = Engine::start_with_backend(config(2, 1), backend.clone()).unwrap();
    let jobs: Vec<_> = (0..2).map(|i| builtin("mimc:1", 1, 500 + 10 * i)).collect();
    let ids: Vec<_> = jobs.iter().map(|j| engine.submit(ProofRequest::builtin(*j)).unwrap()).collect();
    // Each device's worker holds one unit in compute: device 0's is lost.
    backend.wait_entered(2);
    backend.open();
    for (j, id) in jobs.iter().zip(ids) {
        verify(&engine, j, &expect_completed(engine.await_job(id, WAIT).unwrap()));
    }
    let st = still_serving(&engine, 7, (0, 3));
    let in_service: Vec<bool> = st.devices.iter().map(|d| d.in_service).collect();
    assert_eq!(in_service, vec![false, true]);
    engine.shutdown(ShutdownMode::Drain);
}

/// The last device in service stays in it (no `gpus.cpu_fallback`): a
/// device lost there fails its job, saying so, and the next job is proved.
#[test]
fn the_last_device_stays_in_service() {
    let backend = TestBackend::new(true);
    backend.lose_device(0, true);
    let engine = Engine::start_with_backend(config(2, 1), backend.clone()).unwrap();
    let lost = builtin("mimc:1", 1, 600);
    let m = failed(engine.prove(ProofRequest::builtin(lost), WAIT).unwrap().1, ErrorKind::Unavailable);
    assert!(m.contains("device lost") && m.contains("injected device failure") && m.contains("gpus.cpu_fallback"), "{m}");
    let later = builtin("mimc:1", 1, 610);
    verify(&engine, &later, &expect_completed(engine.prove(ProofRequest::builtin(later), WAIT).unwrap().1));
    assert!(engine.status().devices[0].in_service);
    engine.shutdown(ShutdownMode::Drain);
}

/// With `gpus.cpu_fallback`, the last device lost moves to the CPU: its
/// unit and every later one are proved there, nothing fails, and the
/// status says so.
#[test]
fn the_last_device_lost_proves_on_the_cpu_when_configured() {
    let backend = TestBackend::new(true);
    backend.lose_device(0, false);
    let mut c = config(2, 2);
    c.gpus.cpu_fallback = true;
    let engine = Engine::start_with_backend(c, backend.clone()).unwrap();
    let jobs: Vec<_> = (0..3).map(|i| builtin("mimc:1", 2, 700 + 10 * i)).collect();
    let ids: Vec<_> = jobs.iter().map(|j| engine.submit(ProofRequest::builtin(*j)).unwrap()).collect();
    for (j, id) in jobs.iter().zip(ids) {
        verify(&engine, j, &expect_completed(engine.await_job(id, WAIT).unwrap()));
    }
    let st = still_serving(&engine, 8, (0, 4));
    assert!(!st.devices[0].in_service && st.devices[0].on_cpu, "{:?}", st.devices);
    assert!(backend.proved.lock().unwrap().is_empty(), "the lost device proved nothing");
    engine.shutdown(ShutdownMode::Drain);
}

/// A circuit whose partitions or SRS fail on demand.
struct Faulty {
    inner: BuiltinJob,
    synth_error: Option<usize>,
    synth_panic: Option<usize>,
    srs_error: bool,
    id: &'static str,
}

impl PartitionedCircuit for Faulty {
    fn circuit_id(&self) -> String {
        self.id.into()
    }
    fn partitions(&self) -> usize {
        self.inner.partitions
    }
    fn circuit(&self, p: usize) -> Result<Box<dyn AnyCircuit>, CircuitError> {
        if self.synth_error == Some(p) {
            return Err(CircuitError::bad_input("witness file is corrupt"));
        }
        if self.synth_panic == Some(p) {
            panic!("synthesis bug");
        }
        self.inner.circuit(p)
    }
    fn load_params(&self, cache: &Path) -> Result<Parameters, CircuitError> {
        if self.srs_error {
            return Err(CircuitError::bad_params("v28 file truncated"));
        }
        self.inner.load_params(cache)
    }
}

#[test]
fn synthesis_and_srs_failures_fail_only_their_job() {
    let engine = Engine::start(config(2, 1)).unwrap();
    let inner = builtin("synthetic:64:2", 3, 1);
    let mk = |synth_error, synth_panic, srs_error, id| Arc::new(Faulty { inner, synth_error, synth_panic, srs_error, id });
    let e = engine.submit(ProofRequest::custom(mk(Some(2), None, false, "faulty-a"))).unwrap();
    let p = engine.submit(ProofRequest::custom(mk(None, Some(0), false, "faulty-a"))).unwrap();
    let s = engine.submit(ProofRequest::custom(mk(None, None, true, "faulty-srs"))).unwrap();
    let ok = engine.submit(ProofRequest::custom(mk(None, None, false, "faulty-a"))).unwrap();
    let m = failed(engine.await_job(e, WAIT).unwrap(), ErrorKind::BadInput);
    assert!(m.contains("partition 2: synthesis failed: witness file is corrupt"), "{m}");
    let m = failed(engine.await_job(p, WAIT).unwrap(), ErrorKind::Internal);
    assert!(m.contains("partition 0: synthesis panicked: synthesis bug"), "{m}");
    let m = failed(engine.await_job(s, WAIT).unwrap(), ErrorKind::BadParams);
    assert!(m.contains("cannot load SRS faulty-srs") && m.contains("truncated"), "{m}");
    let out = expect_completed(engine.await_job(ok, WAIT).unwrap());
    let params = engine.parameters("faulty-a").unwrap();
    let pvk = cuzk_core::groth16::prepare_verifying_key(&params.vk);
    for (i, proof) in cuzk_core::groth16::Proof::many_from_bytes(&out.proof).unwrap().iter().enumerate() {
        assert!(cuzk_core::groth16::verify_proof(&pvk, proof, &inner.public_inputs(i)).unwrap());
    }
    assert_eq!(engine.status().memory.partition_bytes, 0);
    engine.shutdown(ShutdownMode::Drain);
}

/// A circuit whose last partition fails after `delay` of synthesis.
struct SlowFailure {
    inner: BuiltinJob,
    delay: std::time::Duration,
}

impl PartitionedCircuit for SlowFailure {
    fn circuit_id(&self) -> String {
        "slow-failure".into()
    }
    fn partitions(&self) -> usize {
        self.inner.partitions
    }
    fn circuit(&self, p: usize) -> Result<Box<dyn AnyCircuit>, CircuitError> {
        if p + 1 == self.inner.partitions {
            std::thread::sleep(self.delay);
            return Err(CircuitError::bad_input("witness went bad"));
        }
        self.inner.circuit(p)
    }
    fn load_params(&self, cache: &Path) -> Result<Parameters, CircuitError> {
        self.inner.load_params(cache)
    }
}

#[test]
fn a_failed_job_reports_the_time_it_spent() {
    let engine = Engine::start(config(2, 1)).unwrap();
    let delay = std::time::Duration::from_millis(150);
    let job = Arc::new(SlowFailure { inner: builtin("synthetic:64:2", 2, 3), delay });
    let id = engine.submit(ProofRequest::custom(job)).unwrap();
    let JobOutcome::Failed { message, timings: t, .. } = engine.await_job(id, WAIT).unwrap() else { panic!("the job did not fail") };
    assert!(message.contains("partition 1: synthesis failed: witness went bad"), "{message}");
    eprintln!("{t:?}");
    assert!(t.synthesis_ms >= 150, "the failed partition's synthesis time is missing: {t:?}");
    assert!(t.total_ms >= 150 && t.total_ms >= t.queue_wait_ms, "{t:?}");
    engine.shutdown(ShutdownMode::Drain);
}

#[test]
fn partition_larger_than_the_memory_budget_fails_its_job() {
    let mut cfg = config(1, 1);
    // Room for the small circuit's SRS and partitions, not the big one's.
    cfg.memory.total_budget = cuzk_core::config::TotalBudget::Bytes(400 << 10);
    let engine = Engine::start(cfg).unwrap();
    let big = engine.submit(ProofRequest::builtin(builtin("synthetic:1024:4", 1, 1))).unwrap();
    let small = builtin("synthetic:64:2", 2, 2);
    let s = engine.submit(ProofRequest::builtin(small)).unwrap();
    let m = failed(engine.await_job(big, WAIT).unwrap(), ErrorKind::ResourceExhausted);
    assert!(m.contains("memory budget") && m.contains("total_budget"), "{m}");
    verify(&engine, &small, &expect_completed(engine.await_job(s, WAIT).unwrap()));
}
