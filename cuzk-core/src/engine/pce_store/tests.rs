//! The PCE store's decisions: record, load, rebuild, wait, refuse, and
//! their memory reservations, on the CPU backend.

use super::*;
use crate::engine::BuiltinJob;

fn store(dir: &Path, budget: u64) -> PceStore {
    PceStore::new(dir, MemoryBudget::new(budget))
}

#[test]
fn recorded_then_used_then_loaded_each_equal_to_classic() {
    let dir = tempfile::tempdir().unwrap();
    let job = BuiltinJob::new("synthetic:3000:4".parse().unwrap(), 4, 9);
    let s = store(dir.path(), 1 << 30);
    let mut paths = Vec::new();
    for p in 0..3 {
        let (pa, path) = s.synthesize(&job, p, None, 1).unwrap();
        assert!(pa == job.synthesize(p).unwrap(), "partition {p} ({path:?}) differs from classic synthesis");
        paths.push(path);
    }
    assert_eq!(paths, [SynthPath::Recorded, SynthPath::Pce, SynthPath::Pce]);
    assert!(s.memory.usage().pce_bytes > 0, "the PCE is counted in the memory budget");
    let file = PceStore::path_of(dir.path(), &job.circuit_id());
    assert!(file.exists());
    // A new engine loads the file.
    let s2 = store(dir.path(), 1 << 30);
    let (pa, path) = s2.synthesize(&job, 3, None, 1).unwrap();
    assert_eq!(path, SynthPath::Loaded);
    assert!(pa == job.synthesize(3).unwrap());
}

#[test]
fn corrupt_or_foreign_file_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let (job, file) = with_corrupt_file(dir.path());
    let (pa, path) = store(dir.path(), 1 << 30).synthesize(&job, 0, None, 1).unwrap();
    assert_eq!(path, SynthPath::Recorded);
    assert!(pa == job.synthesize(0).unwrap());
    assert!(crate::pce::file::read(&file).is_ok(), "the rebuilt file is valid");
    // Another circuit's R1CS under this id, same file name: refused,
    // never a wrong proof; the next partition records it anew.
    let other =
        crate::pce::record(&job.circuit_id(), crate::circuits::CircuitSpec::Synthetic { constraints: 2000, inputs: 3 }.blank()).unwrap();
    crate::pce::file::write(&other, &file).unwrap();
    let s = store(dir.path(), 1 << 30);
    let err = s.synthesize(&job, 0, None, 1).unwrap_err();
    assert!(err.message.contains("does not match its PCE"), "{err}");
    let (pa, path) = s.synthesize(&job, 1, None, 1).unwrap();
    assert_eq!(path, SynthPath::Recorded);
    assert!(pa == job.synthesize(1).unwrap());
}

/// A refused file that cannot be removed (a read-only param cache) is
/// not loaded again: the circuit's next partition records it, and the
/// file written then is loaded as any other.
#[test]
fn a_refused_file_that_cannot_be_removed_is_not_loaded_again() {
    let dir = tempfile::tempdir().unwrap();
    let job = BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 3, 1);
    let id = job.circuit_id();
    let file = PceStore::path_of(dir.path(), &id);
    let other = crate::pce::record(&id, crate::circuits::CircuitSpec::Synthetic { constraints: 2000, inputs: 3 }.blank()).unwrap();
    crate::pce::file::write(&other, &file).unwrap();
    let s = store(dir.path(), 1 << 30);
    // A directory: no one removes it as a file, root included.
    let undeletable = dir.path().join("undeletable.pce");
    std::fs::create_dir(&undeletable).unwrap();
    let err = s.refuse_file(&id, &undeletable, PceError::Checksum);
    assert!(err.message.contains("could not be removed"), "{err}");
    let (pa, path) = s.synthesize(&job, 0, None, 1).unwrap();
    assert_eq!(path, SynthPath::Recorded, "the refused file is not loaded");
    assert!(pa == job.synthesize(0).unwrap());
    assert!(crate::pce::file::read(&file).unwrap() == *s.ready(&id).unwrap(), "written anew");
    assert_eq!(store(dir.path(), 1 << 30).synthesize(&job, 1, None, 1).unwrap().1, SynthPath::Loaded);
    s.evict(&id);
    assert_eq!(s.synthesize(&job, 2, None, 1).unwrap().1, SynthPath::Loaded, "loaded again once written anew");
}

/// What an SRS's load is told of its circuit's PCE: unknown before the
/// first partition records it, its file's sizes once the file is
/// written, the PCE itself once held; unknown where the file will be
/// recorded anew (its header bad, another circuit's, or refused), none
/// where the circuit will have none.
#[test]
fn an_srs_load_is_told_what_is_known_of_the_circuits_pce() {
    let dir = tempfile::tempdir().unwrap();
    let job = BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 3, 1);
    let id = job.circuit_id();
    let s = store(dir.path(), 1 << 30);
    assert!(matches!(s.at_load(&id), PceAtLoad::Unknown), "no file: recorded by the first partition");
    s.synthesize(&job, 0, None, 1).unwrap();
    let held = s.ready(&id).unwrap();
    assert!(matches!(s.at_load(&id), PceAtLoad::Held(p) if Arc::ptr_eq(&p, &held)));
    // A new engine: the file's header, the sizes of the PCE it holds.
    let fresh = store(dir.path(), 1 << 30);
    match fresh.at_load(&id) {
        PceAtLoad::File(sizes) => assert_eq!(sizes, held.sizes()),
        other => panic!("expected the file's sizes, got {other:?}"),
    }
    fresh.refused.lock().unwrap().insert(id.clone());
    assert!(matches!(fresh.at_load(&id), PceAtLoad::Unknown), "a refused file is not loaded");
    let file = PceStore::path_of(dir.path(), &id);
    let other =
        crate::pce::record("another-circuit", crate::circuits::CircuitSpec::Synthetic { constraints: 2000, inputs: 2 }.blank()).unwrap();
    crate::pce::file::write(&other, &file).unwrap();
    assert!(matches!(store(dir.path(), 1 << 30).at_load(&id), PceAtLoad::Unknown), "another circuit's file");
    with_corrupt_file(dir.path());
    assert!(matches!(store(dir.path(), 1 << 30).at_load(&id), PceAtLoad::Unknown), "a bad header");
    // No room to keep it and no file to save it to: none, classic from then on.
    let nowhere = store(&dir.path().join("missing"), 1000);
    nowhere.synthesize(&job, 0, None, 1).unwrap();
    assert!(matches!(nowhere.at_load(&id), PceAtLoad::None));
}

#[test]
fn no_room_in_the_budget_means_classic_synthesis() {
    let dir = tempfile::tempdir().unwrap();
    let job = BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 3, 1);
    let s = store(dir.path(), 1000);
    let (pa, _) = s.synthesize(&job, 0, None, 1).unwrap();
    assert!(pa == job.synthesize(0).unwrap());
    let (pa, path) = s.synthesize(&job, 1, None, 1).unwrap();
    assert_eq!(path, SynthPath::Classic);
    assert!(pa == job.synthesize(1).unwrap());
    assert_eq!(s.memory.usage().pce_bytes, 0);
}

#[test]
fn a_pce_without_room_is_loaded_from_its_file_once_there_is_room() {
    let dir = tempfile::tempdir().unwrap();
    let job = BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 4, 1);
    let s = store(dir.path(), 1 << 30);
    // Classic partitions hold nearly all of the budget.
    let held = s.memory.try_reserve((1 << 30) - 1000, Purpose::Partition).unwrap();
    let (pa, path) = s.synthesize(&job, 0, None, 1).unwrap();
    assert_eq!(path, SynthPath::Recorded);
    assert!(pa == job.synthesize(0).unwrap());
    assert!(s.ready(&job.circuit_id()).is_none(), "not kept without room");
    // No room to load the saved file either: classic, nothing loaded.
    assert_eq!(s.synthesize(&job, 1, None, 1).unwrap().1, SynthPath::Classic);
    assert_eq!(s.memory.usage().pce_bytes, 0);
    drop(held);
    let (pa, path) = s.synthesize(&job, 2, None, 1).unwrap();
    assert_eq!(path, SynthPath::Loaded);
    assert!(pa == job.synthesize(2).unwrap());
    let pce = s.ready(&job.circuit_id()).expect("kept once there is room");
    assert_eq!(s.memory.usage().pce_bytes, pce.bytes(), "reserved at the file's size, then at the PCE's own");
}

/// `job`, except that partition `bad`'s witness fails (a request whose
/// inputs do not satisfy the circuit), and recording on every core as
/// far as the store can tell where `on_threads`.
struct Variant {
    job: BuiltinJob,
    bad: Option<usize>,
    on_threads: bool,
}

struct Unsatisfiable;

impl bellpepper_core::Circuit<blstrs::Scalar> for Unsatisfiable {
    fn synthesize<CS: bellpepper_core::ConstraintSystem<blstrs::Scalar>>(self, _: &mut CS) -> Result<(), bellpepper_core::SynthesisError> {
        Err(bellpepper_core::SynthesisError::Unsatisfiable)
    }
}

impl PartitionedCircuit for Variant {
    fn circuit_id(&self) -> String {
        self.job.circuit_id()
    }
    fn partitions(&self) -> usize {
        self.job.partitions()
    }
    fn circuit(&self, partition: usize) -> Result<Box<dyn crate::partitioned::AnyCircuit>, crate::failure::CircuitError> {
        if Some(partition) == self.bad {
            return Ok(Box::new(Unsatisfiable));
        }
        self.job.circuit(partition)
    }
    fn load_params(&self, param_cache: &Path) -> Result<crate::srs::Parameters, crate::failure::CircuitError> {
        self.job.load_params(param_cache)
    }
    fn records_on_threads(&self) -> bool {
        self.on_threads
    }
}

#[test]
fn a_bad_request_keeps_the_pce_file() {
    let dir = tempfile::tempdir().unwrap();
    let job = BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 3, 1);
    store(dir.path(), 1 << 30).synthesize(&job, 0, None, 1).unwrap();
    let file = PceStore::path_of(dir.path(), &job.circuit_id());
    assert!(file.exists());
    // A new engine's first partition loads the file, and its witness fails.
    let s = store(dir.path(), 1 << 30);
    let bad = Variant { job, bad: Some(1), on_threads: false };
    assert!(s.synthesize(&bad, 1, None, 1).is_err());
    assert!(file.exists(), "a request's own failure is no reason to rebuild the PCE");
    assert_eq!(s.synthesize(&bad, 2, None, 1).unwrap().1, SynthPath::Loaded);
}

/// Waits until `n` callers wait on `s` for a PCE being loaded or
/// recorded: the point a test asserts from.
fn wait_blocked(s: &PceStore, n: usize) {
    let t = std::time::Instant::now();
    while s.waiting.load(std::sync::atomic::Ordering::SeqCst) < n {
        assert!(t.elapsed() < std::time::Duration::from_secs(60), "never {n} waiting for the PCE");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// While a circuit's PCE is in `building`, a partition of `circuit`
/// (and a unit about to reserve memory for one) waits, then goes
/// through the PCE once it is ready.
fn waits_while(building: Entry, circuit: &dyn PartitionedCircuit) {
    let dir = tempfile::tempdir().unwrap();
    let id = circuit.circuit_id();
    let s = store(dir.path(), 1 << 30);
    s.synthesize(circuit, 0, None, 1).unwrap();
    let pce = s.ready(&id).unwrap();
    let memory = s.memory.try_reserve(pce.bytes(), Purpose::Pce).unwrap();
    s.set(&id, building);
    std::thread::scope(|scope| {
        let reserving = scope.spawn(|| drop(s.prepare(circuit)));
        let waiting = scope.spawn(|| s.synthesize(circuit, 1, None, 1));
        wait_blocked(&s, 2);
        assert!(!reserving.is_finished() && !waiting.is_finished(), "a partition waits while its PCE is built");
        s.set(&id, Entry::Ready { pce: pce.clone(), memory });
        reserving.join().unwrap();
        let (pa, path) = waiting.join().unwrap().unwrap();
        assert_eq!(path, SynthPath::Pce, "then goes through the PCE");
        assert!(pa == circuit.synthesize(1).unwrap());
    });
}

#[test]
fn partitions_wait_for_a_pce_being_loaded() {
    waits_while(Entry::Loading, &BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 3, 1));
}

#[test]
fn partitions_wait_for_a_pce_recorded_on_every_core() {
    let job = BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 3, 1);
    waits_while(Entry::Recording, &Variant { job, bad: None, on_threads: true });
}

/// A recording about as long as a classic synthesis is not waited for.
#[test]
fn partitions_synthesize_classically_beside_a_recording_on_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let job = BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 3, 1);
    let s = store(dir.path(), 1 << 30);
    s.set(&job.circuit_id(), Entry::Recording);
    assert!(s.prepare(&job).is_none());
    let (pa, path) = s.synthesize(&job, 1, None, 1).unwrap();
    assert_eq!(path, SynthPath::Classic);
    assert!(pa == job.synthesize(1).unwrap());
}

/// A unit loads its circuit's PCE file on first use, into memory
/// reserved for it before its partitions' own (none where the file does
/// not fit the budget now); the other units wait for it while it is
/// confirmed, and a hold no partition confirmed ends with its unit.
#[test]
fn the_pce_file_is_loaded_before_the_partitions_reserve() {
    let dir = tempfile::tempdir().unwrap();
    let job = BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 3, 1);
    store(dir.path(), 1 << 30).synthesize(&job, 0, None, 1).unwrap();
    let file_bytes = std::fs::metadata(PceStore::path_of(dir.path(), &job.circuit_id())).unwrap().len();
    assert!(store(dir.path(), file_bytes - 1).prepare(&job).is_none(), "no room for the file");
    let s = store(dir.path(), 1 << 30);
    let held = s.prepare(&job).expect("loaded on first use");
    let pce = held.loaded().expect("the loaded PCE, handed to the unit").clone();
    assert_eq!(s.memory.usage().pce_bytes, pce.bytes());
    assert!(s.ready(&job.circuit_id()).is_none(), "not held before it is confirmed");
    drop(held);
    assert_eq!(s.memory.usage().pce_bytes, 0, "a hold no partition confirmed ends with its unit");
    let held = s.prepare(&job).unwrap();
    let pce = held.loaded().unwrap().clone();
    std::thread::scope(|scope| {
        let other = scope.spawn(|| s.prepare(&job).is_none());
        wait_blocked(&s, 1);
        assert!(!other.is_finished(), "another unit waits for the confirmation");
        // A partition reserved already goes on classically (it may hold
        // memory the confirming unit waits for).
        assert_eq!(s.synthesize(&job, 2, None, 1).unwrap().1, SynthPath::Classic);
        let (pa, path) = s.confirm(&job, 1, &pce, false, 1).unwrap();
        assert_eq!(path, SynthPath::Loaded);
        assert!(pa == job.synthesize(1).unwrap());
        assert!(other.join().unwrap(), "then finds it held");
    });
    drop(held);
    assert!(Arc::ptr_eq(&s.ready(&job.circuit_id()).expect("held once confirmed"), &pce));
    assert_eq!(s.memory.usage().pce_bytes, pce.bytes());
}

/// A file that cannot be read, loaded by a unit on first use: the unit
/// gets no PCE, reserves classically, and its first partition records it
/// anew (with a warning), the memory reserved for the file freed.
#[test]
fn a_corrupt_file_loaded_before_reserving_is_recorded_anew() {
    let dir = tempfile::tempdir().unwrap();
    let (job, file) = with_corrupt_file(dir.path());
    let s = store(dir.path(), 1 << 30);
    let held = s.prepare(&job).expect("claimed");
    assert!(held.loaded().is_none(), "nothing loaded");
    assert_eq!(s.memory.usage().pce_bytes, 0);
    let (pa, path) = s.synthesize(&job, 1, None, 1).unwrap();
    assert_eq!(path, SynthPath::Recorded);
    assert!(pa == job.synthesize(1).unwrap());
    drop(held);
    assert!(crate::pce::file::read(&file).unwrap() == *s.ready(&job.circuit_id()).unwrap(), "written anew");
}

/// A job whose PCE file in `dir` is corrupt (a valid magic, then
/// garbage), and that file's path.
fn with_corrupt_file(dir: &Path) -> (BuiltinJob, PathBuf) {
    let job = BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 2, 1);
    let file = PceStore::path_of(dir, &job.circuit_id());
    std::fs::write(&file, b"CUZKPCE\0garbage").unwrap();
    (job, file)
}

/// A new store on `dir`, where `job`'s PCE was written to its file by an
/// engine before.
fn loaded(dir: &Path, job: &BuiltinJob) -> PceStore {
    store(dir, 1 << 30).synthesize(job, 0, None, 1).unwrap();
    store(dir, 1 << 30)
}

/// A first partition confirms its unit's loaded PCE witness-only: its
/// witness and densities (a, b, c never held), checked against every
/// constraint; the PCE is held then.
#[test]
fn a_loaded_pce_is_confirmed_by_a_witness_only_partition() {
    let dir = tempfile::tempdir().unwrap();
    let job = BuiltinJob::new("synthetic:3000:4".parse().unwrap(), 3, 5);
    let s = loaded(dir.path(), &job);
    let held = s.prepare(&job).unwrap();
    let pce = held.loaded().unwrap().clone();
    let (pa, path) = s.confirm(&job, 2, &pce, true, 1).unwrap();
    assert_eq!(path, SynthPath::Loaded);
    assert!(pa.abc_deferred() && pa.a.is_empty() && pa.b.is_empty() && pa.c.is_empty());
    let classic = job.synthesize(2).unwrap();
    assert!(pa.input_assignment == classic.input_assignment && pa.aux_assignment == classic.aux_assignment);
    assert!(pa.a_aux_density == classic.a_aux_density && pa.b_aux_density == classic.b_aux_density);
    assert!(!s.is_confirming(&job.circuit_id(), &pce));
    drop(held);
    assert!(Arc::ptr_eq(&s.ready(&job.circuit_id()).unwrap(), &pce));
    // Witness-only partitions go on through it.
    assert_eq!(s.synthesize(&job, 1, Some(&pce), 1).unwrap().1, SynthPath::Witness);
}

/// `pce` with one constraint changed (its C doubled) where partition
/// `partition` of `job` has a nonzero c: every count, the input order and
/// a file's checksum valid, unsatisfied by that partition's witness.
fn stale(pce: &Pce, job: &BuiltinJob, partition: usize) -> (Pce, usize) {
    let classic = job.synthesize(partition).unwrap();
    let row = (0..pce.num_constraints()).rev().find(|&r| classic.c[r] != blstrs::Scalar::from(0u64)).unwrap();
    let (mut coeffs, mut c) = (pce.coeffs.clone(), pce.c.clone());
    for k in c.row_ptr[row] as usize..c.row_ptr[row + 1] as usize {
        coeffs.push(ff::Field::double(&coeffs[c.coeff_idx[k] as usize]));
        c.coeff_idx[k] = (coeffs.len() - 1) as u32;
    }
    (Pce::from_parts(pce.circuit_id.clone(), pce.shape, coeffs, pce.a.clone(), pce.b.clone(), c).unwrap(), row)
}

/// A stale file of the circuit's shape, loaded by a unit, is refused by
/// the partition that confirms it, witness-only or with a, b, c: that
/// partition fails naming the constraint, the file is removed, its memory
/// freed, the waiting units go on, and the next partition records the PCE.
#[test]
fn a_stale_loaded_file_is_refused_by_the_partition_that_confirms_it() {
    for witness_only in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let job = BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 3, 1);
        let id = job.circuit_id();
        let s = loaded(dir.path(), &job);
        let file = PceStore::path_of(dir.path(), &id);
        let (stale, row) = stale(&crate::pce::file::read(&file).unwrap(), &job, 1);
        crate::pce::file::write(&stale, &file).unwrap();
        let held = s.prepare(&job).unwrap();
        let pce = held.loaded().unwrap().clone();
        std::thread::scope(|scope| {
            let other = scope.spawn(|| s.prepare(&job).is_none());
            wait_blocked(&s, 1);
            let err = s.confirm(&job, 1, &pce, witness_only, 1).unwrap_err();
            assert_eq!(err.kind, crate::failure::ErrorKind::BadParams, "{err}");
            assert!(err.message.contains(&format!("does not satisfy constraint {row}")), "witness_only={witness_only}: {err}");
            assert!(other.join().unwrap(), "the waiting unit goes on (no file to load)");
        });
        assert!(!file.exists(), "the stale file is removed");
        assert!(!s.is_confirming(&id, &pce) && s.ready(&id).is_none());
        assert_eq!(s.memory.usage().pce_bytes, 0);
        drop(held);
        let (pa, path) = s.synthesize(&job, 2, None, 1).unwrap();
        assert_eq!(path, SynthPath::Recorded);
        assert!(pa == job.synthesize(2).unwrap());
    }
}

struct Panics;

impl bellpepper_core::Circuit<blstrs::Scalar> for Panics {
    fn synthesize<CS: bellpepper_core::ConstraintSystem<blstrs::Scalar>>(self, _: &mut CS) -> Result<(), bellpepper_core::SynthesisError> {
        panic!("a circuit that panics");
    }
}

/// `job`, except that partition `panics` panics in synthesis.
struct Panicking {
    job: BuiltinJob,
    panics: usize,
}

impl PartitionedCircuit for Panicking {
    fn circuit_id(&self) -> String {
        self.job.circuit_id()
    }
    fn partitions(&self) -> usize {
        self.job.partitions()
    }
    fn circuit(&self, partition: usize) -> Result<Box<dyn crate::partitioned::AnyCircuit>, crate::failure::CircuitError> {
        if partition == self.panics {
            return Ok(Box::new(Panics));
        }
        self.job.circuit(partition)
    }
    fn load_params(&self, param_cache: &Path) -> Result<crate::srs::Parameters, crate::failure::CircuitError> {
        self.job.load_params(param_cache)
    }
}

/// A request whose witness fails says nothing about the file: the PCE
/// stays to be confirmed by the unit's next partition. A confirmation
/// that panics ends: its memory freed, the waiting units woken (the next
/// loads the file again).
#[test]
fn a_failed_witness_leaves_the_pce_to_confirm_and_a_panic_ends_the_confirmation() {
    let dir = tempfile::tempdir().unwrap();
    let job = BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 4, 1);
    let id = job.circuit_id();
    let s = loaded(dir.path(), &job);
    let held = s.prepare(&job).unwrap();
    let pce = held.loaded().unwrap().clone();
    let bad = Variant { job: BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 4, 1), bad: Some(1), on_threads: false };
    assert!(s.confirm(&bad, 1, &pce, true, 1).is_err());
    assert!(s.is_confirming(&id, &pce), "still to confirm");
    assert!(PceStore::path_of(dir.path(), &id).exists());
    assert_eq!(s.confirm(&bad, 2, &pce, true, 1).unwrap().1, SynthPath::Loaded);
    drop(held);
    s.evict(&id);
    let held = s.prepare(&job).unwrap();
    let pce = held.loaded().unwrap().clone();
    let panicking = Panicking { job: BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 4, 1), panics: 3 };
    std::thread::scope(|scope| {
        let other = scope.spawn(|| s.prepare(&job).map(|p| p.loaded().is_some()));
        wait_blocked(&s, 1);
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.confirm(&panicking, 3, &pce, true, 1)));
        assert!(panicked.is_err());
        assert!(!s.is_confirming(&id, &pce), "a confirmation that panicked ends");
        assert_eq!(other.join().unwrap(), Some(true), "the waiting unit loads the file again");
    });
    assert!(s.confirm(&job, 0, &pce, true, 1).unwrap_err().message.contains("not being confirmed"));
    drop(held);
}

/// With no file, a circuit that records on every core has its first
/// use claimed by a unit before it reserves memory: the other units
/// wait, and its first partition records; one that records on one
/// thread is left to its partitions.
#[test]
fn a_recording_on_every_core_is_claimed_before_the_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let job = BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 3, 1);
    let s = store(dir.path(), 1 << 30);
    assert!(s.prepare(&job).is_none(), "a recording on one thread is not claimed");
    let circuit = Variant { job, bad: None, on_threads: true };
    let held = s.prepare(&circuit).expect("claimed on first use");
    assert!(held.loaded().is_none());
    std::thread::scope(|scope| {
        let other = scope.spawn(|| s.prepare(&circuit).is_none());
        wait_blocked(&s, 1);
        assert!(!other.is_finished(), "another unit waits for the recording");
        let (pa, path) = s.synthesize(&circuit, 1, None, 1).unwrap();
        assert_eq!(path, SynthPath::Recorded);
        assert!(pa == circuit.synthesize(1).unwrap());
        assert!(other.join().unwrap(), "then finds it held");
    });
    drop(held);
    assert!(s.ready(&circuit.circuit_id()).is_some());
}

/// Witness-only synthesis against a held PCE: the witness and
/// densities of classic synthesis, no a, b, c (the CPU SpMV skipped),
/// a, b, c equal to classic once computed; the CPU backend never asks
/// for it (it computes a, b, c itself), and completes such partitions
/// where it is handed them.
#[test]
fn witness_only_partitions_carry_no_abc() {
    use crate::engine::backend::{CpuBackend, ProveInput, ProverBackend};
    use crate::engine::interlock::{DeviceLocks, VramBudget};
    let dir = tempfile::tempdir().unwrap();
    let job = BuiltinJob::new("synthetic:3000:4".parse().unwrap(), 3, 5);
    let s = store(dir.path(), 1 << 30);
    assert!(s.ready(&job.circuit_id()).is_none());
    s.synthesize(&job, 0, None, 1).unwrap();
    let pce = s.ready(&job.circuit_id()).expect("recorded by the first partition");
    let params = crate::groth16::generate_random_parameters(job.spec.blank(), &mut rand::thread_rng()).unwrap();
    let srs = crate::engine::srs_handle::SrsHandle::in_memory("test", params);
    let devices = [DeviceLocks::new(0, "cpu".into(), u64::MAX)];
    assert!(ProverBackend::abc_on_device(&CpuBackend, &pce, &srs, &devices).is_none());
    let (pa, path) = s.synthesize(&job, 1, Some(&pce), 1).unwrap();
    assert_eq!(path, SynthPath::Witness);
    assert!(pa.abc_deferred() && pa.a.is_empty() && pa.b.is_empty() && pa.c.is_empty());
    let classic = job.synthesize(1).unwrap();
    assert_eq!(pa.num_constraints(), classic.num_constraints());
    assert!(pa.input_assignment == classic.input_assignment && pa.aux_assignment == classic.aux_assignment);
    assert!(pa.a_aux_density == classic.a_aux_density && pa.b_aux_density == classic.b_aux_density);
    let vram = VramBudget::new(u64::MAX);
    let assignments = [pa];
    let input = ProveInput {
        srs: &srs,
        assignments: &assignments,
        vram: &vram,
        pce: Some(&pce),
        host_memory: None,
        h_copies_counted: true,
        stop: crate::groth16::StopCheck::NEVER,
    };
    assert!(input.with_abc().unwrap()[0] == classic);
    let proofs = CpuBackend.compute(0, (), &input).unwrap();
    let pvk = crate::groth16::prepare_verifying_key(crate::srs::KeyShape::vk(&*srs));
    assert!(crate::groth16::verify_proof(&pvk, &proofs[0], &job.public_inputs(1)).unwrap());
    // Without its PCE, a clear error.
    let input = ProveInput { pce: None, ..input };
    assert!(CpuBackend.compute(0, (), &input).unwrap_err().to_string().contains("without their PCE"));
}
