//! The engine releases an SRS's host points once every device keeps a
//! copy of its own (as GPUs with the SRS resident in VRAM do), and reads
//! them again from their file, within the memory budget, when a path needs
//! them in host memory (a device that lost its copy). Points generated in
//! memory, which cannot be read again, stay. Where every device will keep
//! a copy, a file's SRS loads straight into the copies, a slice at a time,
//! and never whole into host memory; where the circuit's matrices would
//! take the room on a device (kept there by its first partition, before
//! the SRS), it loads whole, as before, and the matrices keep the room.

mod common;

use common::*;
use cuzk_core::config::ByteSize;
use cuzk_core::engine::interlock::DeviceLocks;
use cuzk_core::engine::srs_handle::{every_device_would_hold, SrsHandle};
use cuzk_core::engine::{
    BuiltinJob, CpuBackend, DeviceInfo, Engine, JobOutcome, MatricesLease, PartitionedCircuit, PceAtLoad, ProofRequest, ProveInput,
    ProverBackend, ProverError, ResidentLoad, ShutdownMode,
};
use cuzk_core::failure::ErrorKind;
use cuzk_core::groth16::{prepare_verifying_key, prove_synthesized_until, verify_proof, Proof};
use cuzk_core::pce::Pce;
use cuzk_core::srs::{stream_host_bytes, KeyShape, Parameters, PointSlice, ReadOptions, Section, SlicePoints, VerifyingKey};
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
    /// Whether it loads an SRS straight to the devices where they all
    /// have room (else the engine loads it into host memory, and
    /// `keep_resident` copies it from there).
    streams: bool,
    copies: Mutex<Vec<(u32, Weak<SrsHandle>, Arc<Parameters>)>>,
    /// Where it keeps a circuit's matrices on its devices, as a GPU does
    /// (`abc_on_device`, asked by the first partition before
    /// `keep_resident`): the devices with room for a copy beside the
    /// matrices too (`room` says beside a working set alone). The
    /// matrices fit every device without the SRS. None: it keeps none.
    beside_matrices: Option<Vec<bool>>,
    /// The devices keeping a PCE's matrices.
    matrices: Mutex<Vec<(u32, Weak<Pce>)>>,
    /// What each load straight to the devices was told of the circuit's
    /// PCE.
    told: Mutex<Vec<String>>,
    /// Loads straight to the devices: begun, finished, and the most
    /// points one slice held.
    loads_begun: AtomicUsize,
    loads_finished: AtomicUsize,
    slices: AtomicUsize,
    largest_slice: AtomicUsize,
    /// Proofs made from the host points, and those of them that found the
    /// points released (to be read again by the call itself).
    from_host: AtomicUsize,
    read_by_prove: AtomicUsize,
}

impl DeviceCopies {
    fn new(room: Vec<bool>) -> Arc<Self> {
        Self::with(room, false)
    }

    /// [`Self::new`], loading straight to the devices.
    fn streaming(room: Vec<bool>) -> Arc<Self> {
        Self::with(room, true)
    }

    /// [`Self::streaming`], keeping the circuit's matrices on its devices
    /// (those of `beside_matrices` with room for a copy of the SRS beside
    /// them).
    fn with_matrices(room: Vec<bool>, beside_matrices: Vec<bool>) -> Arc<Self> {
        let mut backend = Self::new_with(room, true);
        backend.beside_matrices = Some(beside_matrices);
        Arc::new(backend)
    }

    fn with(room: Vec<bool>, streams: bool) -> Arc<Self> {
        Arc::new(Self::new_with(room, streams))
    }

    fn new_with(room: Vec<bool>, streams: bool) -> Self {
        let devices = room.len() as u32;
        DeviceCopies {
            devices,
            room,
            keep: AtomicBool::new(true),
            streams,
            copies: Mutex::default(),
            beside_matrices: None,
            matrices: Mutex::default(),
            told: Mutex::default(),
            loads_begun: AtomicUsize::new(0),
            loads_finished: AtomicUsize::new(0),
            slices: AtomicUsize::new(0),
            largest_slice: AtomicUsize::new(0),
            from_host: AtomicUsize::new(0),
            read_by_prove: AtomicUsize::new(0),
        }
    }

    /// Whether `device` keeps `pce`'s matrices.
    fn holds_matrices(&self, device: u32, pce: &Pce) -> bool {
        self.matrices.lock().unwrap().iter().any(|(d, p)| *d == device && std::ptr::eq(p.as_ptr(), pce))
    }

    /// Whether `device` has room for a copy of the SRS, beside the
    /// matrices where it keeps them.
    fn room_for_srs(&self, device: u32, beside_matrices: bool) -> bool {
        match &self.beside_matrices {
            Some(beside) if beside_matrices => beside[device as usize],
            _ => self.room[device as usize],
        }
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

    /// A copy of the host points (read again first, where released), where
    /// there is room beside the matrices the device keeps.
    fn keep_resident(&self, device: u32, input: &ProveInput<'_>) -> Result<(), ProverError> {
        let beside_matrices = input.pce.is_some_and(|p| self.holds_matrices(device, p));
        if !self.keep.load(Ordering::SeqCst) || !self.room_for_srs(device, beside_matrices) || self.copy(device, input.srs).is_some() {
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

    /// The matrices on every device in service: placed before the SRS
    /// (they fit without it), else beside it where there is room.
    fn abc_on_device(&self, pce: &Arc<Pce>, srs: &SrsHandle, devices: &[Arc<DeviceLocks>]) -> Option<MatricesLease> {
        let beside = self.beside_matrices.as_ref()?;
        for d in devices.iter().filter(|d| d.in_service()).map(|d| d.ordinal) {
            if !self.holds_matrices(d, pce) {
                if self.copy(d, srs).is_some() && !beside[d as usize] {
                    return None;
                }
                self.matrices.lock().unwrap().push((d, Arc::downgrade(pce)));
            }
        }
        Some(MatricesLease::holding(vec![pce.clone()]))
    }

    /// Where every device has room (beside the circuit's matrices where
    /// it keeps them, their place decided first; none where their size is
    /// not known yet): copies built from the slices as the file is read.
    fn resident_load(&self, shape: &dyn KeyShape, pce: &PceAtLoad, devices: &[Arc<DeviceLocks>]) -> Option<Box<dyn ResidentLoad + '_>> {
        self.told.lock().unwrap().push(match pce {
            PceAtLoad::None => "none".into(),
            PceAtLoad::Held(p) => format!("held {:?}", p.sizes()),
            PceAtLoad::File(sizes) => format!("file {sizes:?}"),
            PceAtLoad::Unknown => "unknown".into(),
        });
        if self.beside_matrices.is_some() && matches!(pce, PceAtLoad::Unknown) {
            return None;
        }
        let beside_matrices = !matches!(pce, PceAtLoad::None);
        if !self.streams
            || !self.keep.load(Ordering::SeqCst)
            || !every_device_would_hold(devices, |d| self.room_for_srs(d, beside_matrices))
        {
            return None;
        }
        self.loads_begun.fetch_add(1, Ordering::SeqCst);
        let vk = shape.vk().clone();
        let params = Parameters { host_pin: Default::default(), vk, h: vec![], l: vec![], a: vec![], b_g1: vec![], b_g2: vec![] };
        let devices = devices.iter().filter(|d| d.serving()).map(|d| d.ordinal).collect();
        Some(Box::new(Filling { backend: self, devices, params }))
    }
}

/// A load straight to [`DeviceCopies`]' devices: one copy, filled in order.
struct Filling<'a> {
    backend: &'a DeviceCopies,
    devices: Vec<u32>,
    params: Parameters,
}

impl ResidentLoad for Filling<'_> {
    fn fill(&mut self, slice: &PointSlice<'_>) -> Result<(), ProverError> {
        let p = &mut self.params;
        let at = match (slice.section, slice.points) {
            (Section::H, SlicePoints::G1(s)) => extend(&mut p.h, s),
            (Section::L, SlicePoints::G1(s)) => extend(&mut p.l, s),
            (Section::A, SlicePoints::G1(s)) => extend(&mut p.a, s),
            (Section::BG1, SlicePoints::G1(s)) => extend(&mut p.b_g1, s),
            (Section::BG2, SlicePoints::G2(s)) => extend(&mut p.b_g2, s),
            (section, _) => return Err(ProverError::Internal(format!("points of the wrong group for {section:?}"))),
        };
        if at != slice.first {
            return Err(ProverError::Internal(format!("{:?} slice at {} after {at} points", slice.section, slice.first)));
        }
        self.backend.slices.fetch_add(1, Ordering::SeqCst);
        self.backend.largest_slice.fetch_max(slice.len(), Ordering::SeqCst);
        Ok(())
    }

    fn finish(self: Box<Self>, srs: &Arc<SrsHandle>) {
        self.backend.loads_finished.fetch_add(1, Ordering::SeqCst);
        let copy = Arc::new(self.params);
        let mut copies = self.backend.copies.lock().unwrap();
        copies.extend(self.devices.iter().map(|&d| (d, Arc::downgrade(srs), copy.clone())));
    }
}

/// Appends `points` to `v`; where they go.
fn extend<T: Clone>(v: &mut Vec<T>, points: &[T]) -> usize {
    v.extend_from_slice(points);
    v.len() - points.len()
}

/// A job's proofs checked against `vk` (not the engine's parameters: those
/// would be read again into host memory).
fn prove_and_verify(engine: &Engine, job: &BuiltinJob, vk: &VerifyingKey) {
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
    engine_slicing(backend, dir, ByteSize(256 << 20))
}

/// [`engine_with`], loading straight to the devices in slices of `slice`.
fn engine_slicing(backend: Arc<DeviceCopies>, dir: &std::path::Path, slice: ByteSize) -> Engine {
    engine_pce(backend, dir, slice, true)
}

/// [`engine_slicing`], keeping PCEs (`synthesis.pce`) or not.
fn engine_pce(backend: Arc<DeviceCopies>, dir: &std::path::Path, slice: ByteSize, pce: bool) -> Engine {
    let mut c = config(2, 1);
    c.srs.param_cache = dir.to_path_buf();
    c.srs.stream_slice = slice;
    c.synthesis.pce = pce;
    Engine::start_with_backend(c, backend).unwrap()
}

/// A job's circuit with its parameters written to `dir`.
fn params_in(dir: &std::path::Path, job: &BuiltinJob) -> Parameters {
    let params = cuzk_core::groth16::generate_random_parameters(job.spec.blank(), &mut rand_core::OsRng).unwrap();
    params.write_file(&dir.join(format!("{}.params", job.circuit_id()))).unwrap();
    params
}

#[test]
fn where_every_device_keeps_a_copy_the_srs_loads_straight_to_them_a_slice_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let job = |seed| builtin("synthetic:2048:3", 3, seed);
    let params = params_in(dir.path(), &job(1));
    let size = params.size_bytes() as u64;
    let slice = 4096;
    assert!(stream_host_bytes(slice) * 10 < size, "slices well under the SRS");
    let backend = DeviceCopies::streaming(vec![true, true]);
    let engine = engine_slicing(backend.clone(), dir.path(), ByteSize(slice as u64));

    prove_and_verify(&engine, &job(1), &params.vk);
    assert_eq!((backend.loads_begun.load(Ordering::SeqCst), backend.loads_finished.load(Ordering::SeqCst)), (1, 1));
    assert!(backend.slices.load(Ordering::SeqCst) > 10, "read in slices");
    assert!(backend.largest_slice.load(Ordering::SeqCst) * 96 <= slice);
    {
        let copies = backend.copies.lock().unwrap();
        assert_eq!(copies.iter().map(|(d, _, _)| *d).collect::<Vec<_>>(), [0, 1]);
        assert!(copies.iter().all(|(_, _, copy)| **copy == params), "each device holds the file's points");
    }
    // Its host points were never in host memory, nor reserved whole.
    let memory = engine.memory();
    assert!(memory.srs_peak_bytes > 0 && memory.srs_peak_bytes <= stream_host_bytes(slice), "{memory:?}");
    assert_eq!(srs_host_bytes(&engine), (0, 0));
    assert_eq!(engine.status().srs[0].size_bytes, size);
    assert_eq!(backend.from_host.load(Ordering::SeqCst), 0);

    // A device loses its copy: the points are read again from the file,
    // into the budget, as after a release.
    backend.lose_copies();
    prove_and_verify(&engine, &job(2), &params.vk);
    assert_eq!(backend.from_host.load(Ordering::SeqCst), 3);
    assert_eq!(srs_host_bytes(&engine), (size, size));
    assert_eq!(**engine.parameters(&job(1).circuit_id()).unwrap(), params);
    assert_eq!(backend.loads_begun.load(Ordering::SeqCst), 1, "loaded once");
    engine.shutdown(ShutdownMode::Drain);
}

#[test]
fn a_bad_point_found_mid_load_fails_it_as_a_whole_read_does_and_frees_the_copies() {
    let dir = tempfile::tempdir().unwrap();
    let job = builtin("synthetic:2048:3", 2, 1);
    params_in(dir.path(), &job);
    let path = dir.path().join(format!("{}.params", job.circuit_id()));
    // The last B_G2 point off the curve: found after every other slice.
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let whole = Parameters::read_file(&path, ReadOptions::default()).err().unwrap();
    let backend = DeviceCopies::streaming(vec![true, true]);
    let engine = engine_slicing(backend.clone(), dir.path(), ByteSize(4096));
    let outcome = engine.prove(ProofRequest::builtin(job), WAIT).unwrap().1;
    match outcome {
        JobOutcome::Failed { kind, message, .. } => {
            assert_eq!(kind, ErrorKind::BadParams);
            assert!(message.contains(&whole.to_string()) && message.contains(&path.display().to_string()), "{message}");
        }
        other => panic!("expected the load to fail, got {other:?}"),
    }
    assert_eq!((backend.loads_begun.load(Ordering::SeqCst), backend.loads_finished.load(Ordering::SeqCst)), (1, 0));
    assert!(backend.slices.load(Ordering::SeqCst) > 10);
    assert!(backend.copies.lock().unwrap().is_empty(), "no device keeps a partial copy");
    assert!(engine.status().srs.is_empty());
    assert_eq!(engine.memory().srs_bytes, 0, "the slices' memory went back");
    engine.shutdown(ShutdownMode::Drain);
}

#[test]
fn where_a_device_will_not_keep_a_copy_the_srs_loads_whole_into_host_memory() {
    let dir = tempfile::tempdir().unwrap();
    let job = builtin("synthetic:2048:3", 2, 1);
    let params = params_in(dir.path(), &job);
    let size = params.size_bytes() as u64;
    // Device 1 has no room (a 16 GiB card).
    let backend = DeviceCopies::streaming(vec![true, false]);
    let engine = engine_slicing(backend.clone(), dir.path(), ByteSize(4096));
    prove_and_verify(&engine, &job, &params.vk);
    assert_eq!(backend.loads_begun.load(Ordering::SeqCst), 0);
    assert_eq!(srs_host_bytes(&engine), (size, size));
    assert!(engine.memory().srs_peak_bytes >= size, "loaded whole: {:?}", engine.memory());
    engine.shutdown(ShutdownMode::Drain);
}

/// A device with room for the SRS beside a working set but not beside
/// the circuit's matrices too (a 64 GB card with a 32 GiB PoRep's PCE):
/// the circuit's first partition keeps the matrices there, before the
/// SRS, and the SRS is then kept in host memory (as before loads went
/// straight to the devices). The SRS's load is told the PCE as the engine
/// knows it (not yet, then its `.pce` file's sizes), loads whole, and the
/// matrices keep the room; with room for all three, or no PCE, it loads
/// straight to the device.
#[test]
fn where_the_matrices_would_take_the_room_the_srs_loads_whole_and_they_keep_it() {
    let dir = tempfile::tempdir().unwrap();
    let job = |seed| builtin("synthetic:2048:3", 3, seed);
    let id = job(1).circuit_id();
    let params = params_in(dir.path(), &job(1));
    let size = params.size_bytes() as u64;
    let slice = ByteSize(4096);
    // A load whole, and what the device keeps after a job.
    let whole = |backend: &DeviceCopies, engine: &Engine| {
        assert_eq!(backend.loads_begun.load(Ordering::SeqCst), 0, "loaded whole");
        assert!(engine.memory().srs_peak_bytes >= size, "{:?}", engine.memory());
        assert_eq!(srs_host_bytes(engine), (size, size), "the host points kept");
        assert!(backend.copies.lock().unwrap().is_empty(), "no copy of the SRS beside the matrices");
        assert_eq!(backend.from_host.load(Ordering::SeqCst), 3);
    };
    let holds_matrices = |backend: &DeviceCopies| {
        let matrices = backend.matrices.lock().unwrap();
        assert_eq!(matrices.iter().map(|(d, p)| (*d, p.strong_count() > 0)).collect::<Vec<_>>(), [(0, true)]);
    };

    // No `.pce` file yet: its size is known once the first partition has
    // recorded it, so the load is whole (where the SRS then goes depends
    // on which partition reaches the device first, as before).
    let backend = DeviceCopies::with_matrices(vec![true], vec![false]);
    let engine = engine_pce(backend.clone(), dir.path(), slice, true);
    prove_and_verify(&engine, &job(1), &params.vk);
    assert_eq!(*backend.told.lock().unwrap(), ["unknown"]);
    assert_eq!(backend.loads_begun.load(Ordering::SeqCst), 0, "loaded whole");
    assert!(engine.memory().srs_peak_bytes >= size, "{:?}", engine.memory());
    engine.shutdown(ShutdownMode::Drain);
    let pce = cuzk_core::pce::file::read(&dir.path().join(format!("{id}.pce"))).unwrap();

    // The file's sizes: the matrices counted, still whole.
    let backend = DeviceCopies::with_matrices(vec![true], vec![false]);
    let engine = engine_pce(backend.clone(), dir.path(), slice, true);
    prove_and_verify(&engine, &job(2), &params.vk);
    assert_eq!(*backend.told.lock().unwrap(), [format!("file {:?}", pce.sizes())]);
    whole(&backend, &engine);
    holds_matrices(&backend);
    engine.shutdown(ShutdownMode::Drain);

    // Room beside the matrices too: straight to the device, the matrices
    // beside the copy.
    let backend = DeviceCopies::with_matrices(vec![true], vec![true]);
    let engine = engine_pce(backend.clone(), dir.path(), slice, true);
    prove_and_verify(&engine, &job(3), &params.vk);
    assert_eq!((backend.loads_begun.load(Ordering::SeqCst), backend.loads_finished.load(Ordering::SeqCst)), (1, 1));
    assert_eq!(srs_host_bytes(&engine), (0, 0));
    assert_eq!(backend.from_host.load(Ordering::SeqCst), 0);
    holds_matrices(&backend);
    engine.shutdown(ShutdownMode::Drain);

    // No PCEs: nothing takes the room, straight to the device.
    let backend = DeviceCopies::with_matrices(vec![true], vec![false]);
    let engine = engine_pce(backend.clone(), dir.path(), slice, false);
    prove_and_verify(&engine, &job(4), &params.vk);
    assert_eq!(*backend.told.lock().unwrap(), ["none"]);
    assert_eq!(backend.loads_begun.load(Ordering::SeqCst), 1);
    assert_eq!(srs_host_bytes(&engine), (0, 0));
    assert!(backend.matrices.lock().unwrap().is_empty());
    engine.shutdown(ShutdownMode::Drain);
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
