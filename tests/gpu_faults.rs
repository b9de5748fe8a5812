//! Faults injected into the CUDA layer (cuzk-sys's `testing` hook) while
//! the engine proves on a real GPU:
//!
//! - out of device memory at each allocation of a prove in turn (a
//!   witness-only partition: a, b, c by the SpMV on the device): the unit
//!   is computed again on the fallback path and the job completes with
//!   the CPU prover's bytes;
//! - a recoverable kernel error (bad launch configuration) at launches
//!   spread over a prove: that job fails with a message naming the error,
//!   the device stays in service and the next job proves;
//! - a sticky error (illegal address: the context is lost) on the only
//!   GPU: the job fails saying the device is lost, the engine keeps
//!   serving.
//!
//! After each, device free memory and the host memory native/ keeps
//! page-locked are what they were before. Skipped, visibly, without a GPU.
//! One test: the hook is process-wide and every case shares one engine.

use cuzk_core::circuits::CircuitSpec;
use cuzk_core::config::{Config, TotalBudget};
use cuzk_core::engine::gpu_backend::GpuBackend;
use cuzk_core::engine::{BuiltinJob, Engine, JobOutcome, PartitionedCircuit, ProofRequest, ShutdownMode};
use cuzk_core::groth16::{self, Proof};
use cuzk_core::Fr;
use cuzk_sys::test_faults::{self, cuda, FaultSite};
use ff::Field;
use std::sync::Arc;
use std::time::Duration;

const WAIT: Option<Duration> = Some(Duration::from_secs(300));
const SPEC: &str = "synthetic:5001:3";

struct Rig {
    engine: Engine,
    r: Fr,
    s: Fr,
    seed: u64,
}

impl Rig {
    /// A fresh one-partition job, proved.
    fn prove(&mut self) -> (BuiltinJob, JobOutcome) {
        self.seed += 1;
        let job = BuiltinJob::new(SPEC.parse().unwrap(), 1, self.seed);
        let (_, out) = self.engine.prove(ProofRequest::builtin(job), WAIT).unwrap();
        (job, out)
    }

    /// `job`'s proofs from the CPU prover with the engine's r and s.
    fn cpu_bytes(&self, job: &BuiltinJob) -> Vec<Vec<u8>> {
        let params = self.engine.parameters(&job.circuit_id()).unwrap();
        let spec: CircuitSpec = job.spec;
        (0..job.partitions)
            .map(|p| {
                let pa = cuzk_core::cs::synthesize(spec.instance(job.seed + p as u64)).unwrap();
                groth16::prove_synthesized_deterministic(&params, &[pa], &[(self.r, self.s)]).unwrap()[0].to_bytes().to_vec()
            })
            .collect()
    }

    fn expect_cpu_bytes(&self, job: &BuiltinJob, out: JobOutcome, case: &str) {
        let JobOutcome::Completed(out) = out else { panic!("{case}: {out:?}") };
        let got: Vec<_> = Proof::many_from_bytes(&out.proof).unwrap().iter().map(|p| p.to_bytes().to_vec()).collect();
        assert_eq!(got, self.cpu_bytes(job), "{case}: the GPU proof differs from the CPU prover's");
    }

    fn in_service(&self) -> bool {
        self.engine.status().devices[0].in_service
    }
}

/// (device free bytes, host bytes native/ keeps page-locked).
fn memory() -> (u64, u64) {
    (cuzk_sys::free_memory(0).unwrap(), test_faults::pinned_bytes().unwrap())
}

/// Arms `cuda_error` at the `nth` event of `site`, proves a job, disarms;
/// whether the fault was reached, and the job.
fn prove_with_fault(rig: &mut Rig, site: FaultSite, nth: u64, cuda_error: i32) -> (bool, BuiltinJob, JobOutcome) {
    let before = test_faults::injected(site).unwrap();
    test_faults::inject(site, nth, cuda_error).unwrap();
    let (job, out) = rig.prove();
    test_faults::disarm(site).unwrap();
    (test_faults::injected(site).unwrap() > before, job, out)
}

fn failure(out: JobOutcome, case: &str) -> String {
    match out {
        JobOutcome::Failed { message, .. } => message,
        o => panic!("{case}: expected a failed job, got {o:?}"),
    }
}

#[test]
fn cuda_faults_stay_in_their_job_and_leak_nothing() {
    // Every kernel module loaded at the first CUDA call (test_device's),
    // so that the first use of a kernel (on the fallback path, say) does
    // not read as a leak.
    std::env::set_var("CUDA_MODULE_LOADING", "EAGER");
    if cuzk_sys::test_device("cuda_faults_stay_in_their_job_and_leak_nothing").is_none() {
        return;
    }
    let seed = cuzk_sys::test_seed("gpu_faults");
    let mut rng = <rand_chacha::ChaCha20Rng as rand::SeedableRng>::seed_from_u64(seed);
    let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let backend = Arc::new(GpuBackend::new().unwrap().with_fixed_randomness(r, s));
    let mut config = Config::default();
    config.memory.total_budget = TotalBudget::Bytes(8 << 30);
    config.synthesis.partition_workers = 2;
    config.gpus.gpu_workers_per_device = 1;
    config.scheduler.max_batch_wait_ms = 1;
    config.srs.param_cache = "/nonexistent-cuzk-test-params".into();
    let mut rig = Rig { engine: Engine::start_with_backend(config, backend).unwrap(), r, s, seed };

    // Warm up both paths (SRS resident, upload slots pinned, the circuit's
    // PCE recorded and its matrices resident, so that from the second job
    // on partitions are synthesized witness-only and their a, b, c
    // computed on the device; the fallback's buffers once), then the
    // memory every case must come back to.
    let (job, out) = rig.prove();
    rig.expect_cpu_bytes(&job, out, "warm-up");
    let (job, out) = rig.prove();
    rig.expect_cpu_bytes(&job, out, "warm-up with the matrices resident");
    let (hit, job, out) = prove_with_fault(&mut rig, FaultSite::DeviceAlloc, 0, cuda::MEMORY_ALLOCATION);
    assert!(hit, "a prove allocates device memory");
    rig.expect_cpu_bytes(&job, out, "warm-up of the fallback");
    let baseline = memory();
    println!("baseline: device free {} B, pinned {} B", baseline.0, baseline.1);

    // Out of memory at each allocation of a prove in turn, until a prove
    // passes the armed count without reaching it.
    let mut allocations = 0;
    loop {
        let case = format!("out of memory at allocation {allocations}");
        let (hit, job, out) = prove_with_fault(&mut rig, FaultSite::DeviceAlloc, allocations, cuda::MEMORY_ALLOCATION);
        rig.expect_cpu_bytes(&job, out, &case);
        assert_eq!(memory(), baseline, "{case}: memory not back to the baseline");
        if !hit {
            break;
        }
        allocations += 1;
        assert!(allocations < 500, "no end to a prove's allocations");
    }
    println!("out of memory at each of {allocations} allocations: all completed on the fallback, CPU bytes, no leak");

    // A bad launch at launches spread over a prove: the job fails naming
    // it, the device serves on.
    let mut failed = 0;
    for nth in (0..).map(|i: u64| i * i) {
        let case = format!("invalid configuration at launch {nth}");
        let (hit, job, out) = prove_with_fault(&mut rig, FaultSite::Launch, nth, cuda::INVALID_CONFIGURATION);
        assert_eq!(memory(), baseline, "{case}: memory not back to the baseline");
        if !hit {
            rig.expect_cpu_bytes(&job, out, &case);
            break;
        }
        let m = failure(out, &case);
        assert!(
            m.contains("cudaErrorInvalidConfiguration") && m.contains("kernel launch") && m.contains("device call failed"),
            "{case}: {m}"
        );
        assert!(rig.in_service(), "{case}: a recoverable error took the device out of service");
        failed += 1;
        assert!(nth < 1 << 20, "no end to a prove's launches");
    }
    println!("invalid configuration at {failed} launches: each failed its job alone, no leak");

    // An illegal address (sticky: the context is lost) on the only GPU.
    let case = "illegal address";
    let (hit, _, out) = prove_with_fault(&mut rig, FaultSite::Launch, 0, cuda::ILLEGAL_ADDRESS);
    assert!(hit, "{case}: not reached");
    let m = failure(out, case);
    assert!(m.contains("device lost") && m.contains("cudaErrorIllegalAddress"), "{case}: {m}");
    assert_eq!(memory(), baseline, "{case}: memory not back to the baseline");
    let (job, out) = rig.prove();
    rig.expect_cpu_bytes(&job, out, "after an illegal address");
    println!("illegal address on the only GPU: its job failed (device lost), the next proved");

    let st = rig.engine.status();
    assert_eq!((st.jobs_failed, st.jobs_completed), (failed + 1, allocations + 6));
    rig.engine.shutdown(ShutdownMode::Drain);
}
