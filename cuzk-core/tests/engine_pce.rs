//! The engine with `[synthesis] pce` on and off: the same jobs give the
//! same proof bytes (a backend with fixed r, s per partition makes the
//! proofs comparable), and the PCE is kept as `<param_cache>/<id>.pce`.

mod common;

use common::*;
use cuzk_core::engine::{BuiltinJob, Engine, PartitionedCircuit, ProofRequest, ProveInput, ProverBackend, ProverError, ShutdownMode};
use cuzk_core::groth16::{prove_synthesized_deterministic, Proof};
use cuzk_core::Fr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The CPU prover with r = 7 + k, s = 11 + k for the k-th assignment of a
/// batch. With `abc_on_device` it says it computes a, b, c itself from the
/// circuit's PCE (as a GPU with the matrices resident does): the engine then
/// synthesizes witness-only partitions and reserves their witness only,
/// holding the lease on `matrices` until they are proved. With
/// `h_term_on_device` it says it computes the H term on the device (as a
/// GPU with room for the H buffers does, the matrices not resident): the
/// engine then reserves a partition synthesized through the PCE at what it
/// holds, without the H term's working copies of a, b, c.
#[derive(Default)]
struct FixedRandomness {
    abc_on_device: bool,
    h_term_on_device: bool,
    /// What the leases hold: its count is 1 + the leases alive.
    matrices: Arc<()>,
    /// Witness-only partitions proved: all of them, and those proved while
    /// no lease was alive.
    witness_only_proved: AtomicUsize,
    proved_unleased: AtomicUsize,
}

impl ProverBackend for FixedRandomness {
    type Staged = ();
    type Computed = Vec<Proof>;
    fn name(&self) -> &str {
        "cpu-fixed-randomness"
    }
    fn devices(&self) -> Vec<cuzk_core::engine::DeviceInfo> {
        ProverBackend::devices(&cuzk_core::engine::CpuBackend)
    }
    fn vram_needed(&self, _: u32, _: &ProveInput<'_>) -> u64 {
        0
    }
    fn prestage(&self, _: u32, _: &ProveInput<'_>) -> Result<(), ProverError> {
        Ok(())
    }
    fn compute(&self, _: u32, _: (), input: &ProveInput<'_>) -> Result<Vec<Proof>, ProverError> {
        if input.witness_only() {
            self.witness_only_proved.fetch_add(1, Ordering::SeqCst);
            if Arc::strong_count(&self.matrices) < 2 {
                self.proved_unleased.fetch_add(1, Ordering::SeqCst);
            }
        }
        let rs: Vec<(Fr, Fr)> = (0..input.assignments.len() as u64).map(|k| (Fr::from(7 + k), Fr::from(11 + k))).collect();
        let points = input.srs.host_points()?;
        Ok(prove_synthesized_deterministic(&points, &input.with_abc()?, &rs)?)
    }
    fn compute_fallback(&self, d: u32, _: u64, input: &ProveInput<'_>) -> Result<Vec<Proof>, ProverError> {
        self.compute(d, (), input)
    }
    fn epilogue(&self, _: u32, computed: Vec<Proof>) -> Result<Vec<Proof>, ProverError> {
        Ok(computed)
    }
    fn abc_on_device(
        &self,
        _: &Arc<cuzk_core::pce::Pce>,
        _: &cuzk_core::engine::srs_handle::SrsHandle,
        _: &[Arc<cuzk_core::engine::interlock::DeviceLocks>],
    ) -> Option<cuzk_core::engine::MatricesLease> {
        let held: Arc<dyn std::any::Any + Send + Sync> = self.matrices.clone();
        self.abc_on_device.then(|| cuzk_core::engine::MatricesLease::holding(vec![held]))
    }
    fn h_term_on_device(&self, _: &cuzk_core::engine::srs_handle::SrsHandle, _: &[Arc<cuzk_core::engine::interlock::DeviceLocks>]) -> bool {
        self.h_term_on_device
    }
}

#[test]
fn proofs_with_and_without_pce_are_identical() {
    let dir = tempfile::tempdir().unwrap();
    let job = builtin("synthetic:2048:4", 3, 5);
    let pce_file = dir.path().join(format!("{}.pce", job.circuit_id()));
    // One SRS for every run (the engine would make a random one each time).
    let params = cuzk_core::groth16::generate_random_parameters(job.spec.blank(), &mut rand_core::OsRng).unwrap();
    params.write_file(&dir.path().join(format!("{}.params", job.circuit_id()))).unwrap();
    let mut outputs = Vec::new();
    for pce in [false, true, true] {
        let mut c = config(2, 1);
        c.srs.param_cache = dir.path().to_path_buf();
        c.synthesis.pce = pce;
        let engine = Engine::start_with_backend(c, Arc::new(FixedRandomness::default())).unwrap();
        let out = expect_completed(engine.prove(ProofRequest::builtin(job), WAIT).unwrap().1);
        verify(&engine, &job, &out);
        assert_eq!(pce_file.exists(), pce, "pce = {pce}: the .pce file");
        assert_eq!(engine.memory().pce_bytes > 0, pce, "pce = {pce}: the PCE in the memory budget");
        outputs.push(out.proof);
        engine.shutdown(ShutdownMode::Drain);
    }
    assert!(outputs[1] == outputs[0], "recorded PCE: proofs differ from classic synthesis");
    assert!(outputs[2] == outputs[0], "PCE loaded from its file: proofs differ from classic synthesis");
}

/// A `.pce` file recorded from another revision of the circuit with the
/// same shape (one constraint's C negated: every count, the input order and
/// the checksum valid) is refused by the first witness it serves, with a,
/// b, c from the CPU SpMV or witness-only (a, b, c left to the device,
/// checked row by row). That job fails naming the constraint, where it
/// would have returned proofs that do not verify; the circuit is recorded
/// again, and the next job's proofs verify.
#[test]
fn a_stale_pce_file_of_the_same_shape_fails_one_job_and_is_recorded_again() {
    for abc_on_device in [false, true] {
        a_stale_pce_file_fails_one_job(|| FixedRandomness { abc_on_device, ..Default::default() });
    }
}

/// Writes `job`'s SRS and, as its `.pce` file, its PCE with one
/// constraint changed that no partition of `job` satisfies; returns the
/// current PCE and that constraint.
fn write_stale_pce_file(dir: &std::path::Path, job: &BuiltinJob) -> (cuzk_core::pce::Pce, usize) {
    use cuzk_core::pce::{file, record, Pce};
    let params = cuzk_core::groth16::generate_random_parameters(job.spec.blank(), &mut rand_core::OsRng).unwrap();
    params.write_file(&dir.join(format!("{}.params", job.circuit_id()))).unwrap();
    let current = record(&job.circuit_id(), job.spec.blank()).unwrap();
    // A constraint whose c is not 0 in any partition: negated, unsatisfied.
    let classic: Vec<_> = (0..job.partitions).map(|p| job.synthesize(p).unwrap()).collect();
    let row = (0..current.num_constraints()).find(|&r| classic.iter().all(|pa| pa.c[r] != Fr::from(0u64))).unwrap();
    let (mut coeffs, mut c) = (current.coeffs.clone(), current.c.clone());
    for k in c.row_ptr[row] as usize..c.row_ptr[row + 1] as usize {
        let negated = -coeffs[c.coeff_idx[k] as usize];
        c.coeff_idx[k] = coeffs.iter().position(|x| *x == negated).unwrap_or_else(|| {
            coeffs.push(negated);
            coeffs.len() - 1
        }) as u32;
    }
    let stale = Pce::from_parts(current.circuit_id.clone(), current.shape, coeffs, current.a.clone(), current.b.clone(), c).unwrap();
    file::write(&stale, &dir.join(format!("{}.pce", job.circuit_id()))).unwrap();
    (current, row)
}

fn a_stale_pce_file_fails_one_job(backend: impl Fn() -> FixedRandomness) {
    let dir = tempfile::tempdir().unwrap();
    let job = builtin("synthetic:2048:4", 3, 5);
    let (current, row) = write_stale_pce_file(dir.path(), &job);
    let pce_file = dir.path().join(format!("{}.pce", job.circuit_id()));
    let mut c = config(2, 1);
    c.srs.param_cache = dir.path().to_path_buf();
    c.synthesis.pce = true;
    let engine = Engine::start_with_backend(c, Arc::new(backend())).unwrap();
    let cuzk_core::engine::JobOutcome::Failed { kind, message, .. } = engine.prove(ProofRequest::builtin(job), WAIT).unwrap().1 else {
        panic!("a job proved through a stale PCE");
    };
    assert_eq!(kind, cuzk_core::failure::ErrorKind::BadParams, "the PCE file is what is refused: {message}");
    assert!(message.contains(&format!("does not satisfy constraint {row}")), "{message}");
    let next = builtin("synthetic:2048:4", 3, 6);
    let out = expect_completed(engine.prove(ProofRequest::builtin(next), WAIT).unwrap().1);
    verify(&engine, &next, &out);
    engine.shutdown(ShutdownMode::Drain);
    assert!(cuzk_core::pce::file::read(&pce_file).unwrap() == current, "the file recorded again");
}

/// Two jobs batched, so that one synthesis unit holds a partition of
/// each, reserved witness-only for the stale `.pce` file it loaded: the
/// partition that confirms it fails its job, and the other job's
/// partition is reserved again without it (recording the circuit) and
/// completes.
#[test]
fn a_stale_pce_file_refused_in_a_batch_fails_one_job_and_the_other_completes() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = [builtin("synthetic:2048:4", 3, 5), builtin("synthetic:2048:4", 3, 6)];
    let (current, row) = write_stale_pce_file(dir.path(), &jobs[0]);
    let mut c = config(1, 1);
    c.srs.param_cache = dir.path().to_path_buf();
    c.synthesis.pce = true;
    c.scheduler.max_batch_size = 2;
    c.scheduler.max_batch_wait_ms = 60_000;
    let engine = Engine::start_with_backend(c, Arc::new(FixedRandomness { abc_on_device: true, ..Default::default() })).unwrap();
    engine.pause_dispatch();
    let ids: Vec<_> = jobs.iter().map(|job| engine.submit(ProofRequest::builtin(*job)).unwrap()).collect();
    engine.resume_dispatch();
    let mut outcomes: Vec<_> = ids.iter().map(|id| Some(engine.await_job(*id, WAIT).unwrap())).collect();
    let failed: Vec<usize> = (0..2).filter(|&i| matches!(outcomes[i], Some(cuzk_core::engine::JobOutcome::Failed { .. }))).collect();
    assert_eq!(failed.len(), 1, "one job fails, through the stale file");
    let Some(cuzk_core::engine::JobOutcome::Failed { kind, message, .. }) = outcomes[failed[0]].take() else { unreachable!() };
    assert_eq!(kind, cuzk_core::failure::ErrorKind::BadParams, "{message}");
    // The constraint chosen fails in every partition of the first job.
    let named = if failed[0] == 0 { format!("does not satisfy constraint {row}") } else { "does not satisfy constraint".into() };
    assert!(message.contains(&named), "{message}");
    let done = 1 - failed[0];
    let out = expect_completed(outcomes[done].take().unwrap());
    verify(&engine, &jobs[done], &out);
    engine.shutdown(ShutdownMode::Drain);
    assert!(cuzk_core::pce::file::read(&dir.path().join(format!("{}.pce", jobs[0].circuit_id()))).unwrap() == current, "recorded again");
}

/// A circuit's first job, its PCE not yet held: the partitions that wait
/// for room at the classic size while the first one loads the PCE are
/// synthesized witness-only once it is ready (under a budget with room for
/// one classic partition only), not one classic-size reservation at a time.
#[test]
fn partitions_waiting_for_room_go_witness_only_once_the_pce_is_ready() {
    let paths = first_job_paths(|srs, pce, classic, _| srs + pce + classic + classic / 2);
    let witness = paths.iter().filter(|p| *p == "pce-witness").count();
    assert_eq!((paths.len(), witness), (6, 5), "one partition loads the PCE, the others go witness-only: {paths:?}");
}

/// Under a budget with room for two classic partitions and not for the
/// PCE beside them, the PCE's memory is reserved before the partitions'
/// own, so the first loads it and the others go witness-only (partitions
/// reserving first left it no room, and every one went classic).
#[test]
fn the_pce_file_is_reserved_before_the_partitions_fill_the_budget() {
    let paths = first_job_paths(|srs, pce, classic, _| srs + 2 * classic + pce / 2);
    let witness = paths.iter().filter(|p| *p == "pce-witness").count();
    assert_eq!((paths.len(), witness), (6, 5), "one partition loads the PCE, the others go witness-only: {paths:?}");
}

/// A circuit's first job, its `.pce` file written by an earlier engine,
/// under a budget with room for the SRS, the PCE and a witness-only
/// partition but not for a classic partition beside the SRS (32 GiB PoRep
/// at 64 GiB: 44 + 7 + 4 GiB, where a classic partition is 28): the first
/// partition loads the file before reserving, is reserved witness-only
/// and confirms it; the others go witness-only; the job completes.
#[test]
fn a_first_job_through_a_pce_file_needs_no_room_for_a_classic_partition() {
    let paths = first_job_paths(|srs, pce, classic, witness| {
        let budget = srs + pce + witness + witness / 2;
        assert!(budget < srs + classic, "a classic partition must not fit: srs {srs} pce {pce} classic {classic} witness {witness}");
        budget
    });
    let loaded = paths.iter().filter(|p| *p == "pce-loaded").count();
    let witness = paths.iter().filter(|p| *p == "pce-witness").count();
    assert_eq!(
        (paths.len(), loaded, witness),
        (6, 1, 5),
        "one partition loads and confirms the PCE, the others go witness-only: {paths:?}"
    );
}

/// With the H term on the device and the matrices not, a partition
/// synthesized through the PCE (a, b, c from the CPU SpMV) is reserved at
/// what it holds, without the H term's working copies of a, b, c: under a
/// budget with room for one classic partition beside the SRS and the PCE,
/// several are in flight at once once the PCE is loaded, where with the H
/// term on the host they go one at a time.
#[test]
fn partitions_with_the_h_term_on_the_device_are_reserved_without_its_copies() {
    let budget = |srs, pce, classic, _| srs + pce + classic + classic / 2;
    let in_flight = |h_term_on_device| {
        let events = first_job_timeline(|| FixedRandomness { h_term_on_device, ..Default::default() }, budget);
        let paths: Vec<_> = events.iter().filter(|v| v["ev"] == "synth_end").map(|v| v["path"].as_str().unwrap_or("")).collect();
        let spmv = paths.iter().filter(|p| **p == "pce").count();
        assert_eq!((paths.len(), spmv), (6, 5), "one partition loads the PCE, the others go through the CPU SpMV: {paths:?}");
        let order: Vec<String> = events
            .iter()
            .filter(|v| v["ev"] == "synth_start" || v["ev"] == "gpu_end")
            .map(|v| format!("{}:{}", v["ev"].as_str().unwrap_or(""), v["partition"]))
            .collect();
        (most_partitions_in_flight(&events), order)
    };
    let (most, order) = in_flight(false);
    assert_eq!(most, 1, "the H term on the host: one classic partition at a time: {order:?}");
    let (most, order) = in_flight(true);
    assert!(
        most >= 2,
        "the H term on the device: partitions after the PCE's load reserved at what they hold, yet {most} in flight at most: {order:?}"
    );
}

/// The most partitions between their `synth_start` and `gpu_end` at once.
fn most_partitions_in_flight(events: &[serde_json::Value]) -> usize {
    let (mut now, mut most) = (0usize, 0);
    for v in events {
        if v["ev"] == "synth_start" {
            now += 1;
            most = most.max(now);
        } else if v["ev"] == "gpu_end" {
            now -= 1;
        }
    }
    most
}

/// How the 6 partitions of a circuit's first job were synthesized (the
/// timeline's `path`s) under the budget `budget(srs, pce, classic)` gives
/// from the SRS's and the PCE's bytes and a classic partition's estimate,
/// the PCE's file written by an earlier engine; the proof is checked.
fn first_job_paths(budget: impl FnOnce(u64, u64, u64, u64) -> u64) -> Vec<String> {
    first_job_timeline(|| FixedRandomness { abc_on_device: true, ..Default::default() }, budget)
        .into_iter()
        .filter(|v| v["ev"] == "synth_end")
        .map(|v| v["path"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The timeline of a circuit's first job of 6 partitions, proved by
/// `backend()` under the budget `budget(srs, pce, classic, witness)` gives
/// from the SRS's and the PCE's bytes, a classic partition's estimate and
/// a witness-only partition's bytes, the PCE's file written by an earlier
/// engine; the proof is checked.
fn first_job_timeline(backend: impl Fn() -> FixedRandomness, budget: impl FnOnce(u64, u64, u64, u64) -> u64) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let job = builtin("synthetic:32768:4", 6, 9);
    let params = cuzk_core::groth16::generate_random_parameters(job.spec.blank(), &mut rand_core::OsRng).unwrap();
    params.write_file(&dir.path().join(format!("{}.params", job.circuit_id()))).unwrap();
    let classic = cuzk_core::engine::memory::partition_bytes_estimate(&params);
    // A first engine with room for everything: the PCE file, the sizes.
    let mut c = config(4, 1);
    c.srs.param_cache = dir.path().to_path_buf();
    c.synthesis.pce = true;
    c.memory.total_budget = cuzk_core::config::TotalBudget::Bytes(8 << 30);
    let engine = Engine::start_with_backend(c.clone(), Arc::new(backend())).unwrap();
    let first = expect_completed(engine.prove(ProofRequest::builtin(job), WAIT).unwrap().1);
    let used = engine.memory();
    engine.shutdown(ShutdownMode::Drain);
    assert!(used.pce_bytes > 0 && used.srs_bytes > 0, "{used:?}");
    let timeline = dir.path().join("timeline.jsonl");
    let pce_file = dir.path().join(format!("{}.pce", job.circuit_id()));
    let witness = cuzk_core::pce::file::read(&pce_file).unwrap().witness_bytes();
    c.memory.total_budget = cuzk_core::config::TotalBudget::Bytes(budget(used.srs_bytes, used.pce_bytes, classic, witness));
    // All of it for the job's partitions (the reserve would be most of it).
    c.memory.urgent_reserve = cuzk_core::config::ByteSize(0);
    c.logging.timeline = timeline.display().to_string();
    let engine = Engine::start_with_backend(c, Arc::new(backend())).unwrap();
    let out = expect_completed(engine.prove(ProofRequest::builtin(job), WAIT).unwrap().1);
    verify(&engine, &job, &out);
    assert!(out.proof == first.proof, "the same job, the same r and s: the same proofs");
    engine.shutdown(ShutdownMode::Drain);
    std::fs::read_to_string(&timeline).unwrap().lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()).collect()
}

/// Witness-only partitions are proved with the backend's lease on the
/// circuit's matrices held (a GPU backend then evicts none of them to make
/// room for an SRS), and every lease is gone once the job is done.
#[test]
fn witness_only_partitions_hold_the_matrices_until_proved() {
    let dir = tempfile::tempdir().unwrap();
    let job = builtin("synthetic:2048:4", 5, 13);
    let mut c = config(3, 1);
    c.srs.param_cache = dir.path().to_path_buf();
    c.synthesis.pce = true;
    let backend = Arc::new(FixedRandomness { abc_on_device: true, ..Default::default() });
    let engine = Engine::start_with_backend(c, backend.clone()).unwrap();
    for _ in 0..2 {
        let out = expect_completed(engine.prove(ProofRequest::builtin(job), WAIT).unwrap().1);
        verify(&engine, &job, &out);
    }
    engine.shutdown(ShutdownMode::Drain);
    let proved = backend.witness_only_proved.load(Ordering::SeqCst);
    assert!(proved >= 5, "the second job's 5 partitions at least go witness-only: {proved}");
    assert_eq!(backend.proved_unleased.load(Ordering::SeqCst), 0, "a witness-only partition proved with no lease held");
    assert_eq!(Arc::strong_count(&backend.matrices), 1, "a lease outlived its partition");
}
