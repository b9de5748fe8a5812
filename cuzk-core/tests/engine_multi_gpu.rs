//! Several devices (issue 54 item 2), no GPU needed: a fake backend with N
//! devices whose prove takes a fixed time, jobs whose synthesis takes a
//! fixed time. What happened is read back from the engine's timeline
//! (each partition's synth_end, and on which device it was gpu_picked,
//! gpu_start and gpu_end), and checked:
//!
//! - the partitions of several jobs spread over every device;
//! - no device sits idle (no partition in hand) while a synthesized
//!   partition waits for a prover;
//! - a device busy with a partition does not take another while some
//!   other device sits idle: there it would wait for the running prove.
//!
//! A partition taken by a device's pre-staging worker (the second of
//! `gpu_workers_per_device`) while every device was busy waits for that
//! device's running prove, even where another device frees first: it is
//! staged there. That wait is the pipeline's, and not checked here.

mod common;

use common::*;
use cuzk_core::engine::{
    AnyCircuit, BuiltinJob, DeviceInfo, Engine, JobId, PartitionedCircuit, ProofRequest, ProveInput, ProverBackend, ProverError,
    ShutdownMode,
};
use cuzk_core::failure::CircuitError;
use cuzk_core::groth16::Proof;
use cuzk_core::srs::Parameters;
use group::prime::PrimeCurveAffine;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `devices` devices whose every prove takes `prove` (the time a GPU would
/// spend) and gives placeholder proofs; counts the partitions each proved.
struct FakeGpus {
    devices: u32,
    prove: Duration,
    proved: Mutex<HashMap<u32, usize>>,
}

impl FakeGpus {
    fn new(devices: u32, prove: Duration) -> Arc<Self> {
        Arc::new(FakeGpus { devices, prove, proved: Mutex::default() })
    }

    fn prove(&self, device: u32, input: &ProveInput<'_>) -> Result<usize, ProverError> {
        assert!(device < self.devices, "a prove on device {device}, which the backend does not have");
        // A fixed time of work standing in for the kernels; nothing waits
        // on it to synchronize.
        std::thread::sleep(self.prove);
        *self.proved.lock().unwrap().entry(device).or_default() += input.assignments.len();
        Ok(input.assignments.len())
    }
}

impl ProverBackend for FakeGpus {
    type Staged = ();
    type Computed = usize;
    fn name(&self) -> &str {
        "fake-gpus"
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        (0..self.devices).map(|ordinal| DeviceInfo { ordinal, name: format!("fake-{ordinal}"), vram_bytes: 1 << 40 }).collect()
    }
    fn vram_needed(&self, _device: u32, _input: &ProveInput<'_>) -> u64 {
        1 << 30
    }
    fn prestage(&self, _device: u32, _input: &ProveInput<'_>) -> Result<(), ProverError> {
        Ok(())
    }
    fn compute(&self, device: u32, _staged: (), input: &ProveInput<'_>) -> Result<usize, ProverError> {
        self.prove(device, input)
    }
    fn compute_fallback(&self, device: u32, _granted: u64, input: &ProveInput<'_>) -> Result<usize, ProverError> {
        self.prove(device, input)
    }
    fn epilogue(&self, _device: u32, circuits: usize) -> Result<Vec<Proof>, ProverError> {
        let placeholder = Proof { a: PrimeCurveAffine::identity(), b: PrimeCurveAffine::identity(), c: PrimeCurveAffine::identity() };
        Ok(vec![placeholder; circuits])
    }
}

/// A built-in job whose every partition takes `synth` more to synthesize
/// (a fixed time of work, like a 32 GiB partition's seconds).
struct SlowSynthesis {
    job: BuiltinJob,
    synth: Duration,
}

impl PartitionedCircuit for SlowSynthesis {
    fn circuit_id(&self) -> String {
        self.job.circuit_id()
    }
    fn partitions(&self) -> usize {
        self.job.partitions
    }
    fn circuit(&self, partition: usize) -> Result<Box<dyn AnyCircuit>, CircuitError> {
        std::thread::sleep(self.synth);
        self.job.circuit(partition)
    }
    fn load_params(&self, param_cache: &Path) -> Result<Parameters, CircuitError> {
        self.job.load_params(param_cache)
    }
}

/// One partition's way through the engine, in µs of the timeline's clock.
#[derive(Debug, Clone, Copy)]
struct Unit {
    ready: u64,
    picked: u64,
    end: u64,
    gpu: u32,
}

/// How long a device may seem idle beside a waiting partition: a worker's
/// way from its last prove back to the queue, and from the queue to the
/// timeline, on a test host whose cores other builds share. Well below
/// the fake prove time.
const SLACK_US: u64 = 100_000;

/// One engine at a time: the checks measure waits in milliseconds, which
/// two engines sharing a small host's cores would stretch.
static ALONE: Mutex<()> = Mutex::new(());

struct Run {
    units: Vec<Unit>,
    devices: u32,
    /// Partitions proved per device, as the backend counted them.
    proved: HashMap<u32, usize>,
    /// (job, device) of every partition.
    placed: Vec<(String, u32)>,
}

/// `jobs` jobs of `partitions` partitions each through an engine over
/// `devices` fake devices (2 prover workers each), `workers` partition
/// workers, every synthesis taking `synth` and every prove `prove`.
fn run(devices: u32, workers: usize, jobs: usize, partitions: usize, synth: Duration, prove: Duration) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let timeline = dir.path().join("timeline.jsonl");
    let mut cfg = config(workers, 2);
    cfg.synthesis.pce = false;
    cfg.logging.timeline = timeline.display().to_string();
    let backend = FakeGpus::new(devices, prove);
    let engine = Engine::start_with_backend(cfg, backend.clone()).unwrap();
    let first = builtin("mimc:1", partitions, 0);
    engine.preload_srs(&first.circuit_id()).unwrap();
    // Every job queued before the first is dispatched.
    engine.pause_dispatch();
    let ids: Vec<JobId> = (0..jobs)
        .map(|i| {
            let job = builtin("mimc:1", partitions, 100 * i as u64);
            engine.submit(ProofRequest::custom(Arc::new(SlowSynthesis { job, synth }))).unwrap()
        })
        .collect();
    engine.resume_dispatch();
    for id in &ids {
        expect_completed(engine.await_job(*id, WAIT).unwrap());
    }
    engine.shutdown(ShutdownMode::Drain);
    let text = std::fs::read_to_string(&timeline).unwrap();
    let mut by_unit: HashMap<(String, u64), [Option<u64>; 3]> = HashMap::new();
    let mut gpu_of: HashMap<(String, u64), u32> = HashMap::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let slot = match v["ev"].as_str().unwrap() {
            "synth_end" => 0,
            "gpu_picked" => 1,
            "gpu_end" => 2,
            _ => continue,
        };
        let key = (v["job"].as_str().unwrap().to_string(), v["partition"].as_u64().unwrap());
        if slot == 1 {
            gpu_of.insert(key.clone(), v["gpu"].as_u64().unwrap() as u32);
        }
        let t = &mut by_unit.entry(key).or_default()[slot];
        assert!(t.is_none(), "one {} per partition: {line}", v["ev"]);
        *t = Some(v["t_us"].as_u64().unwrap());
    }
    let mut units = Vec::new();
    let mut placed = Vec::new();
    for (key, [ready, picked, end]) in by_unit {
        let (Some(ready), Some(picked), Some(end)) = (ready, picked, end) else { panic!("{key:?} misses an event: {text}") };
        let gpu = gpu_of[&key];
        units.push(Unit { ready, picked, end, gpu });
        placed.push((key.0, gpu));
    }
    assert_eq!(units.len(), jobs * partitions, "every partition proved once");
    let proved = backend.proved.lock().unwrap().clone();
    Run { units, devices, proved, placed }
}

impl Run {
    /// The stretches of [from, to) in which `gpu` holds no partition.
    fn idle_within(&self, gpu: u32, from: u64, to: u64) -> Vec<(u64, u64)> {
        let mut held: Vec<(u64, u64)> = self.units.iter().filter(|u| u.gpu == gpu).map(|u| (u.picked, u.end)).collect();
        held.sort();
        let (mut idle, mut at) = (Vec::new(), from);
        for (start, end) in held {
            if start > at && at < to {
                idle.push((at, start.min(to)));
            }
            at = at.max(end);
        }
        if at < to {
            idle.push((at, to));
        }
        idle
    }

    fn check(&self) {
        // Spread: every device proved partitions, and they came from
        // several jobs.
        for d in 0..self.devices {
            assert!(self.proved.get(&d).copied().unwrap_or(0) > 0, "device {d} proved nothing: {:?}", self.proved);
        }
        let jobs_per_device = |d: u32| {
            let mut jobs: Vec<&String> = self.placed.iter().filter(|(_, g)| *g == d).map(|(j, _)| j).collect();
            jobs.dedup();
            jobs.len()
        };
        assert!((0..self.devices).any(|d| jobs_per_device(d) > 1), "no device proved partitions of two jobs: {:?}", self.placed);
        for u in &self.units {
            // No device idle while this partition waited to be taken.
            for d in 0..self.devices {
                for (a, b) in self.idle_within(d, u.ready, u.picked) {
                    assert!(b - a <= SLACK_US, "device {d} idle for {} µs while a synthesized partition waited ({u:?})", b - a);
                }
            }
            // Taken by a busy device only when none was idle around then.
            if self.units.iter().any(|o| o.gpu == u.gpu && o.picked < u.picked && u.picked < o.end) {
                let (from, to) = (u.picked.saturating_sub(SLACK_US), u.picked + SLACK_US);
                for d in (0..self.devices).filter(|&d| d != u.gpu) {
                    let idle = self.idle_within(d, from, to);
                    assert!(
                        !(idle.len() == 1 && idle[0] == (from, to)),
                        "device {} took a partition while busy with another, and device {d} was idle all the while ({u:?})",
                        u.gpu
                    );
                }
            }
        }
    }
}

/// Synthesis slower than the devices: as many partition workers as
/// devices, so partitions come ready in bursts of one per device, and each
/// device is idle half the time. Each partition of a burst goes to a device
/// of its own, none to one busy with another while a device idles.
#[test]
fn partitions_go_to_idle_devices_when_synthesis_is_the_bottleneck() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let (synth, prove) = (Duration::from_millis(500), Duration::from_millis(250));
    run(2, 2, 4, 4, synth, prove).check();
    run(4, 4, 4, 8, synth, prove).check();
}

/// Synthesis faster than the devices: partitions queue, and every device
/// proves back to back.
#[test]
fn every_device_stays_busy_when_the_devices_are_the_bottleneck() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let (synth, prove) = (Duration::from_millis(10), Duration::from_millis(250));
    run(2, 2, 3, 6, synth, prove).check();
    run(4, 2, 3, 8, synth, prove).check();
}
