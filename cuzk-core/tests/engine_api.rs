//! The engine's API end to end on the CPU backend: mixed concurrent jobs,
//! request validation, idempotent request ids, await timeouts, status,
//! metrics, SRS preload/evict, and the circuit sources it is given.

mod common;

use common::*;
use cuzk_core::circuit_source::CircuitSource;
use cuzk_core::config::SrsConfig;
use cuzk_core::engine::job::Phase;
use cuzk_core::engine::{
    BuiltinJob, CpuBackend, Engine, EngineError, JobOutcome, PartitionPhase, PartitionedCircuit, Priority, ProofKind, ProofRequest,
    ShutdownMode,
};
use cuzk_core::failure::{CircuitError, ErrorKind};
use cuzk_core::filecoin::ProofRequest as FilecoinRequest;
use std::sync::Arc;
use std::time::Duration;

#[test]
fn mixed_concurrent_jobs_all_complete_with_valid_proofs() {
    let engine = Arc::new(Engine::start(config(2, 2)).unwrap());
    let shapes = ["synthetic:64:2", "synthetic:256:4", "mimc:2", "synthetic:1024:4"];
    let prios = [Priority::Low, Priority::Normal, Priority::High, Priority::Critical];
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let engine = engine.clone();
            std::thread::spawn(move || {
                (0..4)
                    .map(|i| {
                        let job = builtin(shapes[(t + i) % 4], 1 + (i % 3), (t * 100 + i) as u64);
                        let req = ProofRequest::builtin(job).with_priority(prios[(t * 3 + i) % 4]);
                        (job, engine.submit(req).unwrap())
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let jobs: Vec<_> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    for (job, id) in &jobs {
        let out = expect_completed(engine.await_job(*id, WAIT).unwrap());
        assert_eq!(out.partitions, job.partitions);
        assert!(out.timings.total_ms >= out.timings.queue_wait_ms);
        verify(&engine, job, &out);
    }
    let st = engine.status();
    assert_eq!(st.jobs_completed, 16);
    assert_eq!((st.jobs_failed, st.jobs_cancelled), (0, 0));
    let builtin_kind = st.by_kind.iter().find(|k| k.kind == ProofKind::Builtin).unwrap();
    assert_eq!((builtin_kind.completed, builtin_kind.failed), (16, 0));
    assert_eq!(st.partitions_proved, jobs.iter().map(|(j, _)| j.partitions as u64).sum::<u64>());
    assert_eq!(st.memory.partition_bytes, 0, "every partition reservation is released");
    assert_eq!(st.srs.len(), 4);
    assert!(st.queues.iter().all(|q| q.pending == 0 && q.in_progress == 0));
    engine.shutdown(ShutdownMode::Drain);
}

#[test]
fn filecoin_requests_are_checked_at_submission_and_bad_requests_are_rejected() {
    let engine = Engine::start(config(1, 1)).unwrap();
    for kind in [ProofKind::PorepSealCommit, ProofKind::SnapDealsUpdate, ProofKind::WindowPostPartition, ProofKind::WinningPost] {
        let req = ProofRequest::new(FilecoinRequest::new(kind, 1000));
        let want = match kind {
            ProofKind::WinningPost => Priority::Critical,
            ProofKind::WindowPostPartition => Priority::High,
            _ => Priority::Normal,
        };
        assert_eq!(req.priority(), want, "{kind}'s default priority");
        assert_eq!(req.clone().with_priority(Priority::Low).priority(), Priority::Low);
        // Empty inputs: rejected at once with the reason (the filecoin
        // feature decodes them; without it the feature is named).
        match engine.submit(req) {
            Err(EngineError::BadRequest(m)) if cfg!(feature = "filecoin") => {
                assert!(m.contains("vanilla proof") || m.contains("registered proof") || m.contains("not a"), "{kind}: {m}")
            }
            Err(EngineError::BadRequest(m)) => assert!(m.contains("filecoin") && m.contains(kind.name()), "{m}"),
            other => panic!("{kind}: {other:?}"),
        }
    }
    assert_eq!(ProofRequest::builtin(builtin("synthetic:64:2", 1, 1)).priority(), Priority::Normal);
    let req = ProofRequest::new(FilecoinRequest::new(ProofKind::Builtin, 1000));
    assert!(matches!(engine.submit(req), Err(EngineError::BadRequest(m)) if m.contains("not a Filecoin kind")));
    let zero = ProofRequest::builtin(builtin("synthetic:64:2", 0, 1));
    assert!(matches!(engine.submit(zero), Err(EngineError::BadRequest(m)) if m.contains("at least one partition")));
    let unknown = cuzk_core::engine::JobId(9999);
    assert_eq!(engine.await_job(unknown, WAIT), Err(EngineError::UnknownJob(unknown)));
    assert_eq!(engine.cancel(unknown), Err(EngineError::UnknownJob(unknown)));
    assert_eq!(engine.status().jobs_failed, 0, "rejected requests make no jobs");
}

#[test]
fn request_id_is_an_idempotency_key_while_live() {
    let backend = TestBackend::new(false);
    let engine = Engine::start_with_backend(config(1, 1), backend.clone()).unwrap();
    let job = builtin("synthetic:64:2", 1, 7);
    let a = engine.submit(ProofRequest::builtin(job).with_request_id("porep-1000-1")).unwrap();
    let b = engine.submit(ProofRequest::builtin(job).with_request_id("porep-1000-1")).unwrap();
    let c = engine.submit(ProofRequest::builtin(job).with_request_id("porep-1000-2")).unwrap();
    let d = engine.submit(ProofRequest::builtin(job).with_request_id("")).unwrap();
    let e = engine.submit(ProofRequest::builtin(job).with_request_id("")).unwrap();
    assert_eq!(a, b);
    assert!(a != c && d != e);
    backend.open();
    for id in [a, c, d, e] {
        verify(&engine, &job, &expect_completed(engine.await_job(id, WAIT).unwrap()));
    }
    // Once the first job has finished, the same id starts a new job.
    let f = engine.submit(ProofRequest::builtin(job).with_request_id("porep-1000-1")).unwrap();
    assert_ne!(a, f);
    expect_completed(engine.await_job(f, WAIT).unwrap());
    // A finished job's result can still be awaited.
    expect_completed(engine.await_job(a, Some(Duration::ZERO)).unwrap());
}

#[test]
fn await_times_out_and_the_job_goes_on() {
    let backend = TestBackend::new(false);
    let engine = Engine::start_with_backend(config(1, 1), backend.clone()).unwrap();
    let job = builtin("synthetic:64:2", 2, 3);
    let id = engine.submit(ProofRequest::builtin(job)).unwrap();
    let t = std::time::Instant::now();
    assert_eq!(engine.await_job(id, Some(Duration::from_millis(200))).unwrap(), JobOutcome::Timeout);
    assert!(t.elapsed() >= Duration::from_millis(200));
    backend.wait_entered(1);
    let st = engine.status();
    let q = st.queues.iter().find(|q| q.kind == ProofKind::Builtin).unwrap();
    assert_eq!(q.in_progress, 1);
    assert!(st.workers.iter().any(|w| w.busy && w.job == Some(id) && w.since.is_some()));
    // Status follows each partition: one on the prover (its time so far),
    // none done yet.
    let view = st.jobs.iter().find(|j| j.id == id).unwrap();
    assert_eq!((view.kind, view.phase, view.finished_ms_ago, view.partitions.len()), (ProofKind::Builtin, Phase::Running, None, 2));
    let proving: Vec<_> = view.partitions.iter().filter(|p| p.phase == PartitionPhase::Proving).collect();
    assert_eq!(proving.len(), 1, "{view:?}");
    assert!(proving[0].synth_ms.is_some() && proving[0].gpu_ms.is_some(), "{view:?}");
    assert!(view.partitions.iter().all(|p| p.phase != PartitionPhase::Done), "{view:?}");
    backend.open();
    verify(&engine, &job, &expect_completed(engine.await_job(id, WAIT).unwrap()));
    let st = engine.status();
    let view = st.jobs.iter().find(|j| j.id == id).expect("a finished job stays in status for a while");
    assert!(view.phase == Phase::Finished && view.finished_ms_ago.is_some(), "{view:?}");
    assert!(view.partitions.iter().all(|p| p.phase == PartitionPhase::Done && p.gpu_ms.is_some()), "{view:?}");
    let k = st.by_kind.iter().find(|k| k.kind == ProofKind::Builtin).unwrap();
    assert_eq!((k.completed, k.failed), (1, 0));
    assert!(k.completed_ms >= 200, "the job waited at least 200 ms: {k:?}");
}

#[test]
fn status_metrics_preload_and_evict() {
    let mut cfg = config(1, 2);
    cfg.memory.eviction_min_idle = cuzk_core::config::HumanDuration(Duration::from_secs(3600));
    let engine = Engine::start(cfg).unwrap();
    let spec = "synthetic:256:4".parse().unwrap();
    let id = BuiltinJob::circuit_id_of(&spec);
    let first = engine.preload_srs(&id).unwrap();
    assert!(!first.already_loaded);
    assert!(engine.preload_srs(&id).unwrap().already_loaded);
    let st = engine.status();
    assert_eq!(st.srs.len(), 1);
    assert_eq!((st.srs[0].ref_count, st.srs[0].tier), (0, "warm"));
    assert_eq!(st.memory.srs_bytes, st.srs[0].size_bytes);
    assert_eq!(st.workers.iter().filter(|w| w.role == cuzk_core::engine::WorkerRole::Prover && !w.urgent_only).count(), 2);
    let job = BuiltinJob::new(spec, 1, 5);
    assert_eq!(job.circuit_id(), id);
    let (_, out) = engine.prove(ProofRequest::builtin(job), WAIT).unwrap();
    verify(&engine, &job, &expect_completed(out));
    let metrics = engine.metrics();
    for needle in [
        "cuzk_jobs_completed_total 1",
        "cuzk_queue_pending{kind=\"builtin\"} 0",
        "cuzk_memory_budget_bytes",
        "cuzk_srs_resident_bytes{circuit_id=\"builtin-synthetic-256-4\"}",
    ] {
        assert!(metrics.contains(needle), "metrics lack {needle}:\n{metrics}");
    }
    // The job's result is published before its batch releases the SRS
    // reference: wait for the release (evicting an SRS in use is refused).
    let idle_by = std::time::Instant::now() + Duration::from_secs(10);
    while engine.status().srs.iter().any(|e| e.ref_count > 0) && std::time::Instant::now() < idle_by {
        std::thread::sleep(Duration::from_millis(10));
    }
    let ev = engine.evict_srs(&id).unwrap();
    assert!(ev.was_loaded && ev.freed_bytes > 0);
    assert!(!engine.evict_srs(&id).unwrap().was_loaded);
    while engine.status().memory.used_bytes != 0 && std::time::Instant::now() < idle_by {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(engine.status().memory.used_bytes, 0);
    let unknown = engine.preload_srs("nonsense");
    assert!(
        matches!(&unknown, Err(EngineError::Srs { kind: ErrorKind::MissingParams, message, .. }) if message.contains("unknown circuit id")),
        "{unknown:?}"
    );
    // A Filecoin id (with or without its file prefix) names its file.
    let fil = "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-0123";
    match engine.preload_srs(fil) {
        Err(EngineError::Srs { kind: ErrorKind::MissingParams, message, .. }) if cfg!(feature = "filecoin") => {
            assert!(message.contains("missing parameter file") && message.contains(&format!("{fil}.params")), "{message}")
        }
        Err(EngineError::Srs { kind: ErrorKind::MissingParams, message, .. }) => {
            assert!(message.contains("without its `filecoin` feature"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    engine.shutdown(ShutdownMode::Drain);
    assert_eq!(engine.submit(ProofRequest::builtin(job)), Err(EngineError::ShuttingDown));
}

#[test]
fn srs_is_read_from_param_cache_when_present() {
    let dir = tempfile::tempdir().unwrap();
    let spec: cuzk_core::circuits::CircuitSpec = "synthetic:64:2".parse().unwrap();
    let params = cuzk_core::groth16::generate_random_parameters(spec.blank(), &mut rand_core::OsRng).unwrap();
    params.write_file(&dir.path().join(format!("{}.params", BuiltinJob::circuit_id_of(&spec)))).unwrap();
    let mut cfg = config(1, 1);
    cfg.srs.param_cache = dir.path().into();
    let engine = Engine::start(cfg).unwrap();
    let job = BuiltinJob::new(spec, 2, 11);
    assert_eq!(**engine.parameters(&job.circuit_id()).unwrap(), params);
    let (_, out) = engine.prove(ProofRequest::builtin(job), WAIT).unwrap();
    verify(&engine, &job, &expect_completed(out));
}

/// A family of one circuit id with an alias, given to the engine at start.
struct AliasSource;

impl CircuitSource for AliasSource {
    fn resolve(&self, circuit_id: &str) -> Option<String> {
        matches!(circuit_id, "toy" | "toy-circuit").then(|| "toy-circuit".to_string())
    }
    fn id_forms(&self) -> &str {
        "a toy one (toy)"
    }
    fn load_params(&self, circuit_id: &str, _: &SrsConfig) -> Result<cuzk_core::srs::Parameters, CircuitError> {
        assert_eq!(circuit_id, "toy-circuit", "the engine loads resolved ids");
        let spec: cuzk_core::circuits::CircuitSpec = "synthetic:64:2".parse().unwrap();
        cuzk_core::groth16::generate_random_parameters(spec.blank(), &mut rand_core::OsRng)
            .map_err(|e| CircuitError::internal(e.to_string()))
    }
}

#[test]
fn circuit_ids_come_from_the_sources_the_engine_is_given() {
    let backend = Arc::new(CpuBackend);
    let engine = Engine::start_with(config(1, 1), backend.clone(), vec![Arc::new(AliasSource)]).unwrap();
    let pre = engine.preload_srs("toy").unwrap();
    assert!(!pre.already_loaded);
    assert!(engine.preload_srs("toy-circuit").unwrap().already_loaded, "both spellings name one SRS");
    assert!(engine.status().srs.iter().any(|e| e.circuit_id == "toy-circuit"));
    assert!(engine.evict_srs("toy").unwrap().was_loaded);
    // Without Filecoin's source its ids are unknown, and the error lists
    // the families the engine knows.
    let fil = "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-0123";
    match engine.preload_srs(fil) {
        Err(EngineError::Srs { message, .. }) => {
            assert!(
                message.contains("unknown circuit id") && message.contains("a built-in id") && message.contains("a toy one"),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
    engine.shutdown(ShutdownMode::Drain);
}
