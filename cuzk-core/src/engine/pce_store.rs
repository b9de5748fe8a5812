//! The engine's pre-compiled constraint systems, one per circuit id: loaded
//! from `<param_cache>/<circuit-id>.pce` or recorded from the first
//! partition synthesized (which is then witnessed in the same pass), kept
//! for the engine's life and counted in the memory budget.
//!
//! A file is loaded only into memory reserved for it first (its size, from
//! the budget), and that is reserved before the first partition's own
//! memory ([`PceStore::prepare`]): partitions reserving classic memory at
//! once (three of 28 GiB beside a 32 GiB SRS fill a 116 GiB budget) would
//! otherwise leave it no room, and every partition of the engine's life
//! would go classic. While one worker loads a circuit's PCE, the others
//! wait for it: a load takes a fraction of a classic synthesis and none of
//! its memory. While one records it, they wait too where the circuit
//! records on every core ([`PartitionedCircuit::records_on_threads`]: a
//! fraction of a classic synthesis), else (a recording about as long as a
//! classic synthesis) they synthesize classically. Waiting happens before
//! a partition reserves memory (a recording worth waiting for is claimed
//! there too), so it then reserves for its witness only where a, b, c go
//! to the device. A PCE the budget
//! has no room for now is not kept, and a later partition loads it from
//! its file once there is room. A file that is stale or corrupt is rebuilt
//! with a warning. A circuit whose witness does not fit its PCE fails that
//! partition (never a wrong proof), and the PCE is dropped so the next
//! partition records it again. So does a loaded file that the first
//! witness it serves does not satisfy (recorded from another revision of
//! the circuit with the same shape); no other partition uses it meanwhile.
//!
//! Where the backend computes a, b, c on the device from the circuit's
//! resident matrices (asked before synthesis: `Backend::abc_on_device`),
//! a partition is synthesized witness-only and carries no a, b, c
//! ([`SynthPath::Witness`]); the CPU SpMV runs otherwise.

use crate::partitioned::PartitionedCircuit;
use super::memory::{MemoryBudget, Purpose, Reservation};
use super::status::PceStatus;
use crate::cs::ProvingAssignment;
use crate::pce::{file, Pce, PceError, Shape};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

enum Entry {
    /// A synthesis unit claimed its first use ([`PceStore::prepare`]): the
    /// first partition synthesized loads the file into the memory reserved
    /// for it, or records it where the circuit records on every core (the
    /// others wait).
    Claimed(FirstUse),
    /// A worker is recording it (the others wait, or synthesize
    /// classically where the circuit records on one thread).
    Recording,
    /// A worker is loading its file into memory reserved for it (the
    /// others wait).
    Loading,
    Ready { pce: Arc<Pce>, memory: Reservation },
    /// Not kept for good (too large for a PCE, or recorded with no room
    /// and no file to load it from later): classic synthesis, the reason
    /// logged once.
    Unavailable,
}

/// What a partition does when its circuit's PCE is not held.
enum FirstUse {
    /// Load the file into this reservation.
    Load(Reservation),
    /// Record it (no file).
    Record,
    /// Synthesize classically: the file does not fit the budget now.
    NoRoom(u64),
}

pub struct PceStore {
    dir: PathBuf,
    memory: Arc<MemoryBudget>,
    entries: Mutex<HashMap<String, Entry>>,
    /// Signalled whenever an entry stops loading or recording.
    loaded: Condvar,
    /// Circuits whose file was refused and could not be removed: recorded
    /// instead, until this store writes the file anew.
    refused: Mutex<HashSet<String>>,
}

/// How one partition was synthesized (for the log).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SynthPath {
    /// Witness-only synthesis and the SpMV of a PCE held already.
    Pce,
    /// Witness-only synthesis against a PCE held already, a, b, c left to
    /// the device that proves it.
    Witness,
    /// Recorded the circuit's PCE with this partition.
    Recorded,
    /// Loaded the circuit's PCE from its file for this partition.
    Loaded,
    Classic,
}

impl SynthPath {
    pub fn as_str(self) -> &'static str {
        match self {
            SynthPath::Pce => "pce",
            SynthPath::Witness => "pce-witness",
            SynthPath::Recorded => "pce-recorded",
            SynthPath::Loaded => "pce-loaded",
            SynthPath::Classic => "classic",
        }
    }
}

/// Ends a worker's claim to build a circuit's PCE if it did not finish
/// (the next partition of that circuit claims it again).
struct Claim<'a> {
    store: &'a PceStore,
    id: &'a str,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        let mut entries = self.store.lock();
        if matches!(entries.get(self.id), Some(Entry::Recording | Entry::Loading)) {
            entries.remove(self.id);
            self.store.loaded.notify_all();
        }
    }
}

/// A synthesis unit's claim to its circuit's first use
/// ([`PceStore::prepare`]): ended, if no partition took it, when the unit
/// is done (its jobs abandoned, say).
pub struct Prepared<'a> {
    store: &'a PceStore,
    id: String,
}

impl Drop for Prepared<'_> {
    fn drop(&mut self) {
        let mut entries = self.store.lock();
        if matches!(entries.get(&self.id), Some(Entry::Claimed(_))) {
            entries.remove(&self.id);
            self.store.loaded.notify_all();
        }
    }
}

impl PceStore {
    pub fn new(param_cache: &Path, memory: Arc<MemoryBudget>) -> Self {
        Self {
            dir: param_cache.to_path_buf(),
            memory,
            entries: Mutex::new(HashMap::new()),
            loaded: Condvar::new(),
            refused: Mutex::new(HashSet::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The file a circuit's PCE is kept in.
    pub fn path_of(param_cache: &Path, circuit_id: &str) -> PathBuf {
        param_cache.join(format!("{circuit_id}.pce"))
    }

    fn set(&self, id: &str, e: Entry) {
        self.lock().insert(id.to_string(), e);
        self.loaded.notify_all();
    }

    fn forget(&self, id: &str) {
        self.lock().remove(id);
        self.loaded.notify_all();
    }

    /// The PCEs held in memory.
    pub fn resident(&self) -> Vec<PceStatus> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<PceStatus> = entries
            .iter()
            .filter_map(|(id, e)| match e {
                Entry::Ready { memory, .. } => Some(PceStatus { circuit_id: id.clone(), size_bytes: memory.bytes() }),
                _ => None,
            })
            .collect();
        out.sort_by(|a, b| a.circuit_id.cmp(&b.circuit_id));
        out
    }

    /// Drops a circuit's PCE (with its SRS); returns the bytes freed.
    pub fn evict(&self, circuit_id: &str) -> u64 {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        match entries.get(circuit_id) {
            Some(Entry::Ready { memory, .. }) => {
                let bytes = memory.bytes();
                entries.remove(circuit_id);
                log::info!("pce evicted circuit_id={circuit_id} size_bytes={bytes}");
                bytes
            }
            Some(Entry::Unavailable) => {
                entries.remove(circuit_id);
                0
            }
            _ => 0,
        }
    }

    /// The circuit's PCE, where one is held.
    pub fn ready(&self, circuit_id: &str) -> Option<Arc<Pce>> {
        match self.entries.lock().unwrap_or_else(|e| e.into_inner()).get(circuit_id) {
            Some(Entry::Ready { pce, .. }) => Some(pce.clone()),
            _ => None,
        }
    }

    /// Called by a synthesis unit before it reserves its partitions'
    /// memory (`partitions_bytes`): waits while `circuit`'s PCE is being
    /// loaded (or recorded on every core) and, on its first use, claims it
    /// for the unit's first partition (the hold returned ends the claim if
    /// no partition took it): the memory for its file reserved now, only
    /// where the partitions fit beside it (a unit holding it must not wait
    /// for room that only it could give); with no file, the recording
    /// where the circuit records on every core, so that no other unit
    /// reserves classic memory meanwhile.
    pub fn prepare(&self, circuit: &dyn PartitionedCircuit, partitions_bytes: u64) -> Option<Prepared<'_>> {
        let id = circuit.circuit_id();
        let mut entries = self.lock();
        while Self::waits_for(entries.get(&id), circuit) {
            entries = self.loaded.wait(entries).unwrap_or_else(|e| e.into_inner());
        }
        if entries.contains_key(&id) {
            return None;
        }
        // No room for the file, or a recording not worth waiting for: left
        // to the partition.
        let first = match self.first_use(&id, partitions_bytes) {
            FirstUse::Record if circuit.records_on_threads() => FirstUse::Record,
            load @ FirstUse::Load(_) => load,
            _ => return None,
        };
        entries.insert(id.clone(), Entry::Claimed(first));
        Some(Prepared { store: self, id })
    }

    /// Whether a partition of `circuit` waits while its PCE is in `entry`.
    fn waits_for(entry: Option<&Entry>, circuit: &dyn PartitionedCircuit) -> bool {
        match entry {
            Some(Entry::Loading | Entry::Claimed(FirstUse::Load(_))) => true,
            Some(Entry::Recording | Entry::Claimed(_)) => circuit.records_on_threads(),
            _ => false,
        }
    }

    /// Synthesizes one partition of `circuit` through its PCE when there
    /// is one (recording it on first use), else classically; then the
    /// circuit's own check of the assignment. With `witness_only` (the
    /// circuit's PCE, from [`PceStore::ready`]), witness-only synthesis
    /// against it and no a, b, c. A witness is generated on up to
    /// `threads` threads where the circuit allows it.
    pub fn synthesize(
        &self,
        circuit: &dyn PartitionedCircuit,
        partition: usize,
        witness_only: Option<&Arc<Pce>>,
        threads: usize,
    ) -> Result<(ProvingAssignment, SynthPath), String> {
        let id = circuit.circuit_id();
        if let Some(pce) = witness_only {
            let witness = circuit.circuit_on_threads(partition, threads)?.witness(pce.empty_witness()).map_err(|e| e.to_string())?;
            let pa = pce.witness_assignment(witness).map_err(|e| self.dropped(&id, e))?;
            circuit.check_assignment(partition, &pa)?;
            return Ok((pa, SynthPath::Witness));
        }
        let claim = {
            let mut entries = self.lock();
            loop {
                match entries.get(&id) {
                    Some(Entry::Ready { pce, .. }) => break Some(pce.clone()),
                    None | Some(Entry::Claimed(_)) => {
                        let first = match entries.remove(&id) {
                            Some(Entry::Claimed(first)) => first,
                            _ => self.first_use(&id, 0),
                        };
                        if let FirstUse::NoRoom(bytes) = first {
                            log::info!("pce not loaded circuit_id={id} bytes={bytes} reason=\"no room in the memory budget now\" (classic synthesis)");
                            break None;
                        }
                        let state = if matches!(first, FirstUse::Load(_)) { Entry::Loading } else { Entry::Recording };
                        entries.insert(id.clone(), state);
                        drop(entries);
                        // Whatever happens (an error, a panic), the claim ends.
                        let _claim = Claim { store: self, id: &id };
                        let (pa, path) = self.build(circuit, partition, &id, first, threads)?;
                        circuit.check_assignment(partition, &pa)?;
                        return Ok((pa, path));
                    }
                    e if Self::waits_for(e, circuit) => entries = self.loaded.wait(entries).unwrap_or_else(|e| e.into_inner()),
                    Some(_) => break None,
                }
            }
        };
        let pa = match claim {
            Some(pce) => {
                let witness = circuit.circuit_on_threads(partition, threads)?.witness(pce.empty_witness()).map_err(|e| e.to_string())?;
                (pce.assignment(witness).map_err(|e| self.dropped(&id, e))?, SynthPath::Pce)
            }
            None => (circuit.circuit(partition)?.classic().map_err(|e| e.to_string())?, SynthPath::Classic),
        };
        circuit.check_assignment(partition, &pa.0)?;
        Ok(pa)
    }

    /// A witness that does not fit the circuit's PCE: recorded from another
    /// circuit than this one, so it is dropped to be recorded anew next
    /// time. Returns the partition's error.
    fn dropped(&self, id: &str, e: PceError) -> String {
        self.forget(id);
        log::warn!("pce dropped circuit_id={id} reason=\"{e}\"");
        e.to_string()
    }

    /// Whether a circuit's first use loads its file (the memory for it
    /// reserved now: its size, which the loaded PCE's is within a few
    /// percent of; where `beside` more bytes fit too) or records it.
    fn first_use(&self, id: &str, beside: u64) -> FirstUse {
        if self.refused.lock().unwrap_or_else(|e| e.into_inner()).contains(id) {
            return FirstUse::Record;
        }
        match std::fs::metadata(Self::path_of(&self.dir, id)) {
            Ok(m) if m.is_file() => match self.memory.try_reserve(m.len() + beside, Purpose::Pce) {
                Some(mut r) => {
                    r.resize(m.len());
                    FirstUse::Load(r)
                }
                None => FirstUse::NoRoom(m.len()),
            },
            _ => FirstUse::Record,
        }
    }

    /// First use of a circuit id: load its file into `first`'s
    /// reservation, or record it from this partition's circuit (witnessing
    /// it in the same pass).
    fn build(
        &self,
        circuit: &dyn PartitionedCircuit,
        partition: usize,
        id: &str,
        first: FirstUse,
        threads: usize,
    ) -> Result<(ProvingAssignment, SynthPath), String> {
        let path = Self::path_of(&self.dir, id);
        let FirstUse::Load(mut memory) = first else { return self.record(circuit, partition, id) };
        let loaded = match file::read(&path) {
            Ok(p) if p.circuit_id == id => Some(p),
            Ok(p) => {
                log::warn!("pce rebuild circuit_id={id} file={} reason=\"the file holds circuit {:?}\"", path.display(), p.circuit_id);
                None
            }
            Err(PceError::Io { error, .. }) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                log::warn!("pce rebuild circuit_id={id} file={} reason=\"{e}\"", path.display());
                None
            }
        };
        let Some(pce) = loaded else {
            // Waiting partitions go on as for any recording.
            drop(memory);
            self.set(id, Entry::Recording);
            return self.record(circuit, partition, id);
        };
        // A circuit that fails to give its witness (a bad request) says
        // nothing about the file; one whose witness does not fit it does.
        let witness = circuit.circuit_on_threads(partition, threads)?.witness(pce.empty_witness()).map_err(|e| e.to_string())?;
        if let Err(e) = pce.check_shape(&Shape::of_witness(&witness)) {
            return Err(self.refuse_file(id, &path, e));
        }
        // Confirmed against a real witness before any partition goes on
        // through it: a file recorded from another revision of the circuit
        // with the same shape passes every check above and would give
        // proofs that do not verify. A request that does not satisfy its
        // circuit fails here too, and costs a recording.
        let pa = pce.assignment(witness).map_err(|e| e.to_string())?;
        if let Err(e) = pce.check_satisfied(&pa) {
            return Err(self.refuse_file(id, &path, e));
        }
        if memory.resize(pce.bytes()) {
            self.set(id, Entry::Ready { pce: Arc::new(pce), memory });
        } else {
            log::warn!("pce not kept circuit_id={id} bytes={} reason=\"the memory budget is full\" (loaded again later)", pce.bytes());
            self.forget(id);
        }
        Ok((pa, SynthPath::Loaded))
    }

    /// A loaded file that a witness does not fit or satisfy (a stale file):
    /// removed, so that the circuit's next partition records it. Where it
    /// cannot be removed (a read-only param cache), this store loads it no
    /// more until it has written the file anew. Returns the partition's
    /// error.
    fn refuse_file(&self, id: &str, path: &Path, e: PceError) -> String {
        log::warn!("pce rebuild circuit_id={id} file={} reason=\"{e}\"", path.display());
        match std::fs::remove_file(path) {
            Ok(()) => format!("{e}; its file is removed, and the circuit's next partition records it again"),
            Err(error) => {
                log::warn!("pce file not removed circuit_id={id} file={} reason=\"{error}\" (not loaded again)", path.display());
                self.refused.lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_string());
                format!("{e}; its file {} could not be removed ({error}), and the circuit's next partition records it again", path.display())
            }
        }
    }

    /// Records the circuit's PCE from this partition's circuit, witnessing
    /// it in the same pass, and saves it beside the params.
    fn record(&self, circuit: &dyn PartitionedCircuit, partition: usize, id: &str) -> Result<(ProvingAssignment, SynthPath), String> {
        let path = Self::path_of(&self.dir, id);
        let t = std::time::Instant::now();
        let (pce, witness) = match circuit.circuit(partition)?.record(id) {
            Ok(recorded) => recorded,
            Err(e @ PceError::TooLarge(_)) => {
                // Every later partition would fail the same way.
                self.set(id, Entry::Unavailable);
                log::warn!("pce unavailable circuit_id={id} reason=\"{e}\"");
                return Err(e.to_string());
            }
            // This instance's witness failed: the next partition records.
            Err(e) => return Err(e.to_string()),
        };
        log::info!("pce recorded circuit_id={id} constraints={} ms={}", pce.num_constraints(), t.elapsed().as_millis());
        let saved = match file::write(&pce, &path) {
            Ok(()) => {
                self.refused.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
                true
            }
            Err(e) => {
                log::warn!("pce not saved circuit_id={id} reason=\"{e}\"");
                false
            }
        };
        let pa = pce.assignment(witness).map_err(|e| e.to_string());
        match self.memory.try_reserve(pce.bytes(), Purpose::Pce) {
            Some(r) => self.set(id, Entry::Ready { pce: Arc::new(pce), memory: r }),
            None if saved => {
                log::warn!("pce not kept circuit_id={id} bytes={} reason=\"the memory budget is full\" (loaded from its file later)", pce.bytes());
                self.forget(id);
            }
            None => {
                log::warn!("pce not kept circuit_id={id} bytes={} reason=\"the memory budget is full\"", pce.bytes());
                self.set(id, Entry::Unavailable);
            }
        }
        pa.map(|pa| (pa, SynthPath::Recorded))
    }
}

#[cfg(test)]
mod tests {
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
        let job = BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 2, 1);
        let file = PceStore::path_of(dir.path(), &job.circuit_id());
        std::fs::write(&file, b"CUZKPCE\0garbage").unwrap();
        let (pa, path) = store(dir.path(), 1 << 30).synthesize(&job, 0, None, 1).unwrap();
        assert_eq!(path, SynthPath::Recorded);
        assert!(pa == job.synthesize(0).unwrap());
        assert!(crate::pce::file::read(&file).is_ok(), "the rebuilt file is valid");
        // Another circuit's R1CS under this id, same file name: refused,
        // never a wrong proof; the next partition records it anew.
        let other = crate::pce::record(&job.circuit_id(), crate::circuits::CircuitSpec::Synthetic { constraints: 2000, inputs: 3 }.blank()).unwrap();
        crate::pce::file::write(&other, &file).unwrap();
        let s = store(dir.path(), 1 << 30);
        let err = s.synthesize(&job, 0, None, 1).unwrap_err();
        assert!(err.contains("does not match its PCE"), "{err}");
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
        assert!(err.contains("could not be removed"), "{err}");
        let (pa, path) = s.synthesize(&job, 0, None, 1).unwrap();
        assert_eq!(path, SynthPath::Recorded, "the refused file is not loaded");
        assert!(pa == job.synthesize(0).unwrap());
        assert!(crate::pce::file::read(&file).unwrap() == *s.ready(&id).unwrap(), "written anew");
        assert_eq!(store(dir.path(), 1 << 30).synthesize(&job, 1, None, 1).unwrap().1, SynthPath::Loaded);
        s.evict(&id);
        assert_eq!(s.synthesize(&job, 2, None, 1).unwrap().1, SynthPath::Loaded, "loaded again once written anew");
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
        fn circuit(&self, partition: usize) -> Result<Box<dyn crate::partitioned::AnyCircuit>, String> {
            if Some(partition) == self.bad {
                return Ok(Box::new(Unsatisfiable));
            }
            self.job.circuit(partition)
        }
        fn load_params(&self, param_cache: &Path) -> Result<crate::srs::Parameters, String> {
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
            let reserving = scope.spawn(|| drop(s.prepare(circuit, 0)));
            let waiting = scope.spawn(|| s.synthesize(circuit, 1, None, 1));
            std::thread::sleep(std::time::Duration::from_millis(200));
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
        assert!(s.prepare(&job, 0).is_none());
        let (pa, path) = s.synthesize(&job, 1, None, 1).unwrap();
        assert_eq!(path, SynthPath::Classic);
        assert!(pa == job.synthesize(1).unwrap());
    }

    /// A unit reserves the memory for its circuit's PCE file before its
    /// partitions' own: the first partition synthesized loads it into that
    /// reservation, and the other units wait for it meanwhile; a hold no
    /// partition took ends with its unit.
    #[test]
    fn the_pce_file_is_reserved_before_the_partitions() {
        let dir = tempfile::tempdir().unwrap();
        let job = BuiltinJob::new("synthetic:2000:2".parse().unwrap(), 3, 1);
        store(dir.path(), 1 << 30).synthesize(&job, 0, None, 1).unwrap();
        let file_bytes = std::fs::metadata(PceStore::path_of(dir.path(), &job.circuit_id())).unwrap().len();
        let s = store(dir.path(), 1 << 30);
        assert!(s.prepare(&job, 1 << 30).is_none(), "no room for the unit's partitions beside it");
        assert_eq!(s.memory.usage().pce_bytes, 0);
        let held = s.prepare(&job, 1000).expect("reserved on first use");
        assert_eq!(s.memory.usage().pce_bytes, file_bytes);
        drop(held);
        assert_eq!(s.memory.usage().pce_bytes, 0, "a hold no partition took ends with its unit");
        let held = s.prepare(&job, 0).unwrap();
        std::thread::scope(|scope| {
            let other = scope.spawn(|| s.prepare(&job, 0).is_none());
            std::thread::sleep(std::time::Duration::from_millis(200));
            assert!(!other.is_finished(), "another unit waits for the file");
            let (pa, path) = s.synthesize(&job, 1, None, 1).unwrap();
            assert_eq!(path, SynthPath::Loaded);
            assert!(pa == job.synthesize(1).unwrap());
            assert!(other.join().unwrap(), "then finds it held");
        });
        drop(held);
        let pce = s.ready(&job.circuit_id()).expect("held once loaded");
        assert_eq!(s.memory.usage().pce_bytes, pce.bytes());
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
        assert!(s.prepare(&job, 0).is_none(), "a recording on one thread is not claimed");
        let circuit = Variant { job, bad: None, on_threads: true };
        let held = s.prepare(&circuit, 0).expect("claimed on first use");
        std::thread::scope(|scope| {
            let other = scope.spawn(|| s.prepare(&circuit, 0).is_none());
            std::thread::sleep(std::time::Duration::from_millis(200));
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
        let devices = [DeviceLocks::new(0, "cpu".into(), u64::MAX)];
        assert!(ProverBackend::abc_on_device(&CpuBackend, &pce, &params, &devices).is_none());
        let (pa, path) = s.synthesize(&job, 1, Some(&pce), 1).unwrap();
        assert_eq!(path, SynthPath::Witness);
        assert!(pa.abc_deferred() && pa.a.is_empty() && pa.b.is_empty() && pa.c.is_empty());
        let classic = job.synthesize(1).unwrap();
        assert_eq!(pa.num_constraints(), classic.num_constraints());
        assert!(pa.input_assignment == classic.input_assignment && pa.aux_assignment == classic.aux_assignment);
        assert!(pa.a_aux_density == classic.a_aux_density && pa.b_aux_density == classic.b_aux_density);
        let params = Arc::new(params);
        let vram = VramBudget::new(u64::MAX);
        let assignments = [pa];
        let input = ProveInput { params: &params, assignments: &assignments, vram: &vram, pce: Some(&pce), host_memory: None, h_copies_counted: true };
        assert!(input.with_abc().unwrap()[0] == classic);
        let proofs = CpuBackend.compute(0, (), &input).unwrap();
        let pvk = crate::groth16::prepare_verifying_key(&params.vk);
        assert!(crate::groth16::verify_proof(&pvk, &proofs[0], &job.public_inputs(1)).unwrap());
        // Without its PCE, a clear error.
        let input = ProveInput { pce: None, ..input };
        assert!(CpuBackend.compute(0, (), &input).unwrap_err().to_string().contains("without their PCE"));
    }
}
