//! Helpers for the engine tests: small configs, proof verification, and a
//! test backend that can hold, fail or panic chosen partitions.
#![allow(dead_code)]

pub mod rss;

use cuzk_core::config::{ByteSize, Config, TotalBudget};
use cuzk_core::cs::ProvingAssignment;
use cuzk_core::engine::{
    AnyCircuit, BuiltinJob, CpuBackend, DeviceInfo, Engine, JobOutcome, PartitionedCircuit, ProofOutput, ProveInput, ProverBackend,
    ProverError,
};
use cuzk_core::failure::CircuitError;
use cuzk_core::groth16::{prepare_verifying_key, verify_proof, Proof};
use cuzk_core::srs::Parameters;
use cuzk_core::Fr;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

pub const WAIT: Option<Duration> = Some(Duration::from_secs(120));

/// A small engine config: explicit memory budget, short batch wait.
pub fn config(partition_workers: usize, gpu_workers: usize) -> Config {
    let mut c = Config::default();
    c.memory.total_budget = TotalBudget::Bytes(1 << 30);
    c.memory.safety_margin = ByteSize(0);
    c.synthesis.partition_workers = partition_workers;
    c.gpus.gpu_workers_per_device = gpu_workers;
    c.scheduler.max_batch_wait_ms = 50;
    // The scheduling tests check strict FIFO across circuits.
    c.scheduler.sort_by_type = false;
    c.srs.param_cache = "/nonexistent-cuzk-test-params".into();
    c
}

pub fn builtin(spec: &str, partitions: usize, seed: u64) -> BuiltinJob {
    BuiltinJob::new(spec.parse().unwrap(), partitions, seed)
}

/// Checks every partition proof of a completed builtin job.
pub fn verify(engine: &Engine, job: &BuiltinJob, out: &ProofOutput) {
    use cuzk_core::engine::PartitionedCircuit;
    let params = engine.parameters(&job.circuit_id()).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    let proofs = Proof::many_from_bytes(&out.proof).unwrap();
    assert_eq!(proofs.len(), job.partitions);
    for (p, proof) in proofs.iter().enumerate() {
        assert!(verify_proof(&pvk, proof, &job.public_inputs(p)).unwrap(), "partition {p} of {job:?} does not verify");
    }
}

pub fn expect_completed(outcome: JobOutcome) -> ProofOutput {
    match outcome {
        JobOutcome::Completed(p) => p,
        other => panic!("expected a completed job, got {other:?}"),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    Error,
    Panic,
    /// Out of device memory in `compute` (not in `compute_fallback`), once.
    OutOfMemoryOnce,
    /// Out of device memory in every call.
    OutOfMemory,
    /// No room in the host budget (for a, b, c computed on the host), once.
    OutOfHostMemoryOnce,
}

/// CPU proving with hooks: a gate that holds `compute`, a log of the
/// public inputs of every circuit proved (in order) and of batch
/// sizes, and faults for circuits with chosen public inputs.
#[derive(Default)]
pub struct TestBackend {
    gate: Mutex<bool>,
    gate_cv: Condvar,
    pub entered: Mutex<usize>,
    pub proved: Mutex<Vec<Vec<Fr>>>,
    pub batch_sizes: Mutex<Vec<usize>>,
    faults: Mutex<Vec<(Vec<Fr>, Fault)>>,
    /// How many devices it reports (0: one).
    devices: usize,
    /// Devices whose compute fails as a device failure (and whether only
    /// once).
    lost: Mutex<Vec<(u32, bool)>>,
    /// Circuits (by public inputs) whose compute waits until released,
    /// and how many compute calls wait so now.
    held: Mutex<(Vec<Vec<Fr>>, usize)>,
    held_cv: Condvar,
    /// Each compute call's circuits (public inputs) and whether the call
    /// ran as urgent work ([`ProverBackend::as_urgent`]).
    as_urgent: Mutex<Vec<(Vec<Fr>, bool)>>,
}

thread_local! {
    /// Whether this thread runs inside [`ProverBackend::as_urgent`] now.
    static URGENT_WORK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Puts the thread's setting back, after a panic too.
struct RestoreUrgent(bool);

impl Drop for RestoreUrgent {
    fn drop(&mut self) {
        URGENT_WORK.set(self.0);
    }
}

impl TestBackend {
    pub fn new(open: bool) -> Arc<Self> {
        let b = Self::default();
        *b.gate.lock().unwrap() = open;
        Arc::new(b)
    }

    /// `new` with `devices` devices.
    pub fn with_devices(open: bool, devices: usize) -> Arc<Self> {
        let b = Self { devices, ..Self::default() };
        *b.gate.lock().unwrap() = open;
        Arc::new(b)
    }

    /// Every compute on `device` from now on fails as a device failure
    /// (`once`: only the next).
    pub fn lose_device(&self, device: u32, once: bool) {
        self.lost.lock().unwrap().push((device, once));
    }

    pub fn open(&self) {
        *self.gate.lock().unwrap() = true;
        self.gate_cv.notify_all();
    }

    pub fn close(&self) {
        *self.gate.lock().unwrap() = false;
    }

    /// Waits until `n` compute calls have started.
    pub fn wait_entered(&self, n: usize) {
        let t = std::time::Instant::now();
        while *self.entered.lock().unwrap() < n {
            assert!(t.elapsed() < Duration::from_secs(60), "backend never reached {n} compute calls");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// How many compute calls a circuit with `public_inputs` has been given.
    pub fn times_proved(&self, public_inputs: &[Fr]) -> usize {
        self.proved.lock().unwrap().iter().filter(|p| p.as_slice() == public_inputs).count()
    }

    /// Waits until a circuit with `public_inputs` has been given to a
    /// compute call `n` times.
    pub fn wait_proved(&self, public_inputs: &[Fr], n: usize) {
        let t = std::time::Instant::now();
        while self.times_proved(public_inputs) < n {
            assert!(t.elapsed() < Duration::from_secs(60), "that circuit never reached {n} compute calls");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Every compute call of a circuit with `public_inputs` from now on
    /// waits (inside the compute, holding whatever lock the engine holds
    /// for it) until [`TestBackend::release`]; the other circuits' calls
    /// go on.
    pub fn hold(&self, public_inputs: Vec<Fr>) {
        self.held.lock().unwrap().0.push(public_inputs);
    }

    /// Lets the calls held for `public_inputs` go on.
    pub fn release(&self, public_inputs: &[Fr]) {
        self.held.lock().unwrap().0.retain(|p| p.as_slice() != public_inputs);
        self.held_cv.notify_all();
    }

    /// Waits until `n` compute calls are held.
    pub fn wait_held(&self, n: usize) {
        let held = self.held.lock().unwrap();
        let (_held, waited) = self.held_cv.wait_timeout_while(held, Duration::from_secs(60), |(_, holding)| *holding < n).unwrap();
        assert!(!waited.timed_out(), "{n} compute calls were never held");
    }

    /// How many compute calls are held now.
    pub fn holding(&self) -> usize {
        self.held.lock().unwrap().1
    }

    /// Holds the call while any of `a`'s circuits is held.
    fn wait_while_held(&self, a: &[ProvingAssignment]) {
        let is_held = |held: &Vec<Vec<Fr>>| a.iter().any(|pa| held.iter().any(|p| p.as_slice() == &pa.input_assignment[1..]));
        let mut held = self.held.lock().unwrap();
        if !is_held(&held.0) {
            return;
        }
        held.1 += 1;
        self.held_cv.notify_all();
        while is_held(&held.0) {
            held = self.held_cv.wait(held).unwrap();
        }
        held.1 -= 1;
    }

    /// For each compute call given the circuit with `public_inputs`,
    /// whether it ran as urgent work.
    pub fn ran_as_urgent(&self, public_inputs: &[Fr]) -> Vec<bool> {
        self.as_urgent.lock().unwrap().iter().filter(|(p, _)| p.as_slice() == public_inputs).map(|&(_, u)| u).collect()
    }

    pub fn fault(&self, public_inputs: Vec<Fr>, f: Fault) {
        self.faults.lock().unwrap().push((public_inputs, f));
    }

    /// The fault set for any of `a`'s circuits, as the call's result
    /// (`fallback`: the call is `compute_fallback`).
    fn check(&self, a: &[ProvingAssignment], fallback: bool) -> Result<(), ProverError> {
        let oom = || ProverError::OutOfMemory("injected out of memory".into());
        for pa in a {
            let inputs = &pa.input_assignment[1..];
            let mut faults = self.faults.lock().unwrap();
            let Some(at) = faults.iter().position(|(i, _)| i == inputs) else { continue };
            match faults[at].1 {
                Fault::Error => return Err(ProverError::Internal("injected prover error".into())),
                Fault::Panic => {
                    drop(faults);
                    panic!("injected prover panic")
                }
                Fault::OutOfMemoryOnce if !fallback => {
                    faults.remove(at);
                    return Err(oom());
                }
                Fault::OutOfMemoryOnce => {}
                Fault::OutOfMemory => return Err(oom()),
                Fault::OutOfHostMemoryOnce => {
                    faults.remove(at);
                    return Err(ProverError::OutOfHostMemory("injected out of host memory".into()));
                }
            }
        }
        Ok(())
    }

    /// `compute` and `compute_fallback`: the gate, the logs, the faults,
    /// then the CPU.
    fn prove(&self, d: u32, input: &ProveInput<'_>, fallback: bool) -> Result<Vec<Proof>, ProverError> {
        *self.entered.lock().unwrap() += 1;
        let mut open = self.gate.lock().unwrap();
        while !*open {
            open = self.gate_cv.wait(open).unwrap();
        }
        drop(open);
        self.wait_while_held(input.assignments);
        let mut lost = self.lost.lock().unwrap();
        if let Some(at) = lost.iter().position(|&(dev, _)| dev == d) {
            if lost[at].1 {
                lost.remove(at);
            }
            return Err(ProverError::DeviceLost("injected device failure".into()));
        }
        drop(lost);
        self.batch_sizes.lock().unwrap().push(input.assignments.len());
        self.proved.lock().unwrap().extend(input.assignments.iter().map(|a| a.input_assignment[1..].to_vec()));
        let urgent = URGENT_WORK.get();
        self.as_urgent.lock().unwrap().extend(input.assignments.iter().map(|a| (a.input_assignment[1..].to_vec(), urgent)));
        self.check(input.assignments, fallback)?;
        CpuBackend.compute(d, (), input)
    }
}

impl ProverBackend for TestBackend {
    type Staged = ();
    type Computed = Vec<Proof>;
    fn name(&self) -> &str {
        "test"
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        (0..self.devices.max(1) as u32).map(|ordinal| DeviceInfo { ordinal, name: "test".into(), vram_bytes: u64::MAX }).collect()
    }
    fn vram_needed(&self, device: u32, input: &ProveInput<'_>) -> u64 {
        CpuBackend.vram_needed(device, input)
    }
    fn prestage(&self, d: u32, input: &ProveInput<'_>) -> Result<(), ProverError> {
        CpuBackend.prestage(d, input)
    }
    fn compute(&self, d: u32, _staged: (), input: &ProveInput<'_>) -> Result<Vec<Proof>, ProverError> {
        self.prove(d, input, false)
    }
    fn compute_fallback(&self, d: u32, _granted: u64, input: &ProveInput<'_>) -> Result<Vec<Proof>, ProverError> {
        self.prove(d, input, true)
    }
    fn as_urgent<R>(&self, work: impl FnOnce() -> R) -> R {
        let _restore = RestoreUrgent(URGENT_WORK.replace(true));
        work()
    }
    fn epilogue(&self, d: u32, computed: Vec<Proof>) -> Result<Vec<Proof>, ProverError> {
        CpuBackend.epilogue(d, computed)
    }
}

/// A built-in circuit under its own id whose SRS load waits for a gate:
/// a stand-in for a 45 GiB `.params` file (~30 s to load), and a load
/// that is still under way when a test looks, however fast the machine.
pub struct SlowSrs {
    pub job: BuiltinJob,
    /// Whether the load has started, and whether the gate is open.
    gate: (Mutex<(bool, bool)>, Condvar),
}

impl SlowSrs {
    pub fn new(job: BuiltinJob) -> Arc<Self> {
        Arc::new(SlowSrs { job, gate: Default::default() })
    }

    /// Waits until the engine has started the load (at most 60 s).
    pub fn wait_loading(&self) {
        let (m, cv) = &self.gate;
        let (st, _) = cv.wait_timeout_while(m.lock().unwrap(), Duration::from_secs(60), |st| !st.0).unwrap();
        assert!(st.0, "the SRS load never started");
    }

    /// Lets the load go on.
    pub fn open(&self) {
        self.gate.0.lock().unwrap().1 = true;
        self.gate.1.notify_all();
    }
}

impl PartitionedCircuit for SlowSrs {
    fn circuit_id(&self) -> String {
        "slow-srs".into()
    }
    fn partitions(&self) -> usize {
        self.job.partitions
    }
    fn circuit(&self, partition: usize) -> Result<Box<dyn AnyCircuit>, CircuitError> {
        self.job.circuit(partition)
    }
    fn load_params(&self, param_cache: &Path) -> Result<Parameters, CircuitError> {
        let (m, cv) = &self.gate;
        let mut st = m.lock().unwrap();
        st.0 = true;
        cv.notify_all();
        drop(cv.wait_while(st, |st| !st.1).unwrap());
        self.job.load_params(param_cache)
    }
    fn srs_size_hint(&self, _: &Path) -> Option<u64> {
        Some(16 << 20)
    }
}
