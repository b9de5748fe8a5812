//! The engine releases an SRS's host points once every device keeps a
//! copy of its own (as GPUs with the SRS resident in VRAM do), and reads
//! them again from their file, within the memory budget, when a path needs
//! them in host memory (a device that lost its copy). Points generated in
//! memory, which cannot be read again, stay.

mod common;

use common::*;
use cuzk_core::engine::srs_handle::SrsHandle;
use cuzk_core::engine::{
    CpuBackend, DeviceInfo, Engine, PartitionedCircuit, ProofRequest, ProveInput, ProverBackend, ProverError, ShutdownMode,
};
use cuzk_core::groth16::{prepare_verifying_key, prove_synthesized_until, verify_proof, Proof};
use cuzk_core::srs::{Parameters, VerifyingKey};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// A CPU prover standing in for GPUs that keep an SRS resident: where
/// `keep` is on, `keep_resident` makes each device (those with `room`) a
/// copy of the points (in memory outside the engine's budget, as VRAM is),
/// and its proofs use that copy; the others prove from the host points.
struct DeviceCopies {
    devices: u32,
    /// Devices with room for a copy.
    room: Vec<bool>,
    keep: AtomicBool,
    copies: Mutex<Vec<(u32, Weak<SrsHandle>, Arc<Parameters>)>>,
    /// Proofs made from the host points, and those of them that found the
    /// points released (to be read again by the call itself).
    from_host: AtomicUsize,
    read_by_prove: AtomicUsize,
}

impl DeviceCopies {
    fn new(room: Vec<bool>) -> Arc<Self> {
        let devices = room.len() as u32;
        Arc::new(DeviceCopies {
            devices,
            room,
            keep: AtomicBool::new(true),
            copies: Mutex::default(),
            from_host: AtomicUsize::new(0),
            read_by_prove: AtomicUsize::new(0),
        })
    }

    fn copy(&self, device: u32, srs: &SrsHandle) -> Option<Arc<Parameters>> {
        let copies = self.copies.lock().unwrap();
        copies.iter().find(|(d, h, _)| *d == device && std::ptr::eq(h.as_ptr(), srs)).map(|(_, _, p)| p.clone())
    }

    /// The devices lose their copies (evicted for another SRS, say) and
    /// make none until `keep_again`.
    fn lose_copies(&self) {
        self.keep.store(false, Ordering::SeqCst);
        self.copies.lock().unwrap().clear();
    }

    fn keep_again(&self) {
        self.keep.store(true, Ordering::SeqCst);
    }
}

impl ProverBackend for DeviceCopies {
    type Staged = ();
    type Computed = Vec<Proof>;

    fn name(&self) -> &str {
        "device-copies"
    }

    fn devices(&self) -> Vec<DeviceInfo> {
        (0..self.devices).map(|ordinal| DeviceInfo { ordinal, name: "copies".into(), vram_bytes: u64::MAX }).collect()
    }

    /// A copy of the host points (read again first, where released).
    fn keep_resident(&self, device: u32, input: &ProveInput<'_>) -> Result<(), ProverError> {
        if !self.keep.load(Ordering::SeqCst) || !self.room[device as usize] || self.copy(device, input.srs).is_some() {
            return Ok(());
        }
        let points = input.srs.host_points()?;
        let copy = Arc::new(Parameters::clone(&points));
        self.copies.lock().unwrap().push((device, Arc::downgrade(input.srs), copy));
        Ok(())
    }

    fn vram_needed(&self, _: u32, _: &ProveInput<'_>) -> u64 {
        0
    }

    fn prestage(&self, _: u32, _: &ProveInput<'_>) -> Result<(), ProverError> {
        Ok(())
    }

    fn compute(&self, device: u32, _: (), input: &ProveInput<'_>) -> Result<Vec<Proof>, ProverError> {
        match self.copy(device, input.srs) {
            Some(copy) => Ok(prove_synthesized_until(&copy, &input.with_abc()?, input.stop)?),
            None => {
                self.from_host.fetch_add(1, Ordering::SeqCst);
                if !input.srs.state().in_memory {
                    self.read_by_prove.fetch_add(1, Ordering::SeqCst);
                }
                CpuBackend.compute(device, (), input)
            }
        }
    }

    fn compute_fallback(&self, device: u32, _: u64, input: &ProveInput<'_>) -> Result<Vec<Proof>, ProverError> {
        self.compute(device, (), input)
    }

    fn epilogue(&self, _: u32, computed: Vec<Proof>) -> Result<Vec<Proof>, ProverError> {
        Ok(computed)
    }

    fn holds_points(&self, device: u32, srs: &SrsHandle) -> bool {
        self.copy(device, srs).is_some()
    }
}

/// A job's proofs checked against `vk` (not the engine's parameters: those
/// would be read again into host memory).
fn prove_and_verify(engine: &Engine, job: &cuzk_core::engine::BuiltinJob, vk: &VerifyingKey) {
    let out = expect_completed(engine.prove(ProofRequest::builtin(*job), WAIT).unwrap().1);
    let pvk = prepare_verifying_key(vk);
    let proofs = Proof::many_from_bytes(&out.proof).unwrap();
    assert_eq!(proofs.len(), job.partitions);
    for (p, proof) in proofs.iter().enumerate() {
        assert!(verify_proof(&pvk, proof, &job.public_inputs(p)).unwrap(), "partition {p} does not verify");
    }
}

/// The SRS entry's host bytes, as status reports them, and what the
/// memory budget counts for SRSs.
fn srs_host_bytes(engine: &Engine) -> (u64, u64) {
    let status = engine.status();
    assert_eq!(status.srs.len(), 1, "{:?}", status.srs);
    (status.srs[0].host_bytes, engine.memory().srs_bytes)
}

/// An engine over `backend` with its param cache in `dir` (where a test
/// writes its circuit's parameters, else the engine generates them).
fn engine_with(backend: Arc<DeviceCopies>, dir: &std::path::Path) -> Engine {
    let mut c = config(2, 1);
    c.srs.param_cache = dir.to_path_buf();
    Engine::start_with_backend(c, backend).unwrap()
}

#[test]
fn host_points_go_once_every_device_holds_a_copy_and_are_read_again_when_a_device_loses_it() {
    let dir = tempfile::tempdir().unwrap();
    let job = |seed| builtin("synthetic:2048:3", 3, seed);
    let params = cuzk_core::groth16::generate_random_parameters(job(1).spec.blank(), &mut rand_core::OsRng).unwrap();
    params.write_file(&dir.path().join(format!("{}.params", job(1).circuit_id()))).unwrap();
    let size = params.size_bytes() as u64;
    let backend = DeviceCopies::new(vec![true]);
    let engine = engine_with(backend.clone(), dir.path());

    prove_and_verify(&engine, &job(1), &params.vk);
    assert_eq!(srs_host_bytes(&engine), (0, 0), "the device keeps a copy: the host points are released");
    assert_eq!(engine.status().srs[0].size_bytes, size);
    assert_eq!(backend.from_host.load(Ordering::SeqCst), 0);

    // The device loses its copy: the next batch has the points read again
    // from the file before it starts, within the budget, and they are kept
    // while the device has none.
    backend.lose_copies();
    prove_and_verify(&engine, &job(2), &params.vk);
    assert_eq!(backend.from_host.load(Ordering::SeqCst), 3, "every partition proved from the host points");
    assert_eq!(backend.read_by_prove.load(Ordering::SeqCst), 0, "read before the batch started, not by its partitions");
    assert_eq!(srs_host_bytes(&engine), (size, size), "read again and kept");

    // A copy again (made from the points read again): released again.
    backend.keep_again();
    prove_and_verify(&engine, &job(3), &params.vk);
    assert_eq!(srs_host_bytes(&engine), (0, 0));
    assert_eq!(backend.from_host.load(Ordering::SeqCst), 3);
    assert!(engine.memory().peak_bytes <= engine.memory().budget_bytes);
    engine.shutdown(ShutdownMode::Drain);
}

#[test]
fn a_device_without_a_copy_keeps_the_host_points() {
    let dir = tempfile::tempdir().unwrap();
    let job = builtin("synthetic:2048:3", 4, 1);
    let params = cuzk_core::groth16::generate_random_parameters(job.spec.blank(), &mut rand_core::OsRng).unwrap();
    params.write_file(&dir.path().join(format!("{}.params", job.circuit_id()))).unwrap();
    let size = params.size_bytes() as u64;
    // Device 1 has no room for a copy.
    let backend = DeviceCopies::new(vec![true, false]);
    let engine = engine_with(backend.clone(), dir.path());
    prove_and_verify(&engine, &job, &params.vk);
    assert_eq!(srs_host_bytes(&engine), (size, size), "device 1 proves from the host points");
    assert!(backend.copies.lock().unwrap().iter().all(|(d, _, _)| *d == 0));
    engine.shutdown(ShutdownMode::Drain);
}

#[test]
fn generated_points_are_never_released() {
    // No .params file: the engine generates the SRS in memory.
    let dir = tempfile::tempdir().unwrap();
    let job = builtin("synthetic:2048:3", 2, 1);
    let backend = DeviceCopies::new(vec![true]);
    let engine = engine_with(backend.clone(), dir.path());
    let out = expect_completed(engine.prove(ProofRequest::builtin(job), WAIT).unwrap().1);
    verify(&engine, &job, &out);
    let (host, counted) = srs_host_bytes(&engine);
    assert!(host > 0 && host == counted, "generated points stay in host memory: {host} B, {counted} B counted");
    assert_eq!(backend.copies.lock().unwrap().len(), 1, "the device holds a copy all the same");
    engine.shutdown(ShutdownMode::Drain);
}
