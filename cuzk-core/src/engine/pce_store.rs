//! The engine's pre-compiled constraint systems, one per circuit id: loaded
//! from `<param_cache>/<circuit-id>.pce` or recorded from the first
//! partition synthesized (which is then witnessed in the same pass), kept
//! for the engine's life and counted in the memory budget.
//!
//! A file is loaded only into memory reserved for it first (its size, from
//! the budget), and a circuit's first use loads it before any of its
//! partitions reserves memory ([`PceStore::prepare`], in the synthesis
//! unit that claims it): partitions reserving classic memory at once
//! (three of 28 GiB beside a 32 GiB SRS fill a 116 GiB budget) would
//! otherwise leave it no room, and every partition of the engine's life
//! would go classic. That unit then reserves its partitions for the PCE as
//! for one held (witness-only where the backend computes a, b, c on the
//! device: a 32 GiB PoRep's first partition needs ~4 GiB beside the SRS
//! and the PCE, not the classic 28 GiB that a 64 GiB budget has no room
//! for), and its first partition confirms the file against its witness
//! before any partition goes on through it ([`PceStore::confirm`]): its
//! shape, then every constraint satisfied (row by row from the witness,
//! a, b, c never held, where the partition is witness-only): a file
//! recorded from another revision of the circuit with the same shape
//! passes every other check, and would give proofs that do not verify.
//! Refused, the file is removed, that partition fails, the unit's other
//! partitions reserve again without it, and the circuit's next partition
//! records it; a confirmation that panics, or a unit that ends before
//! confirming it, drops it (the next unit loads it again). Meanwhile the
//! other units wait before reserving; partitions that reserved already
//! (classic, the file having had no room then) go on classically rather
//! than wait, since they may hold the memory the confirming unit waits
//! for. A load takes a fraction of a classic synthesis and none of its
//! memory. While one worker records a circuit's PCE, the others wait too
//! where the circuit records on every core
//! ([`PartitionedCircuit::records_on_threads`]: a fraction of a classic
//! synthesis), else (a recording about as long as a classic synthesis)
//! they synthesize classically; a recording worth waiting for is claimed
//! before reserving too. A PCE the budget has no room for now is not kept,
//! and a later partition loads it from its file once there is room (a
//! partition reserved at the classic size loads and confirms it with its
//! a, b, c held). A file that is corrupt (or names another circuit) is
//! rebuilt with a warning. A circuit whose witness does not fit its PCE
//! fails that partition (never a wrong proof), and the PCE is dropped so
//! the next partition records it again.
//!
//! Where the backend computes a, b, c on the device from the circuit's
//! resident matrices (asked before synthesis: `Backend::abc_on_device`),
//! a partition is synthesized witness-only and carries no a, b, c
//! ([`SynthPath::Witness`]); the CPU SpMV runs otherwise.

use super::backend::PceAtLoad;
use super::memory::{MemoryBudget, Purpose, Reservation};
use super::status::PceStatus;
use crate::cs::ProvingAssignment;
use crate::failure::CircuitError;
use crate::partitioned::PartitionedCircuit;
use crate::pce::{file, Pce, PceError, Shape};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

enum Entry {
    /// A synthesis unit claimed its recording ([`PceStore::prepare`]): the
    /// first partition synthesized records it (the others wait where the
    /// circuit records on every core).
    Claimed,
    /// A worker is recording it (the others wait, or synthesize
    /// classically where the circuit records on one thread).
    Recording,
    /// A worker is loading its file into memory reserved for it (the
    /// others wait).
    Loading,
    /// Loaded from its file by a synthesis unit ([`PceStore::prepare`])
    /// that reserved its partitions for it, not yet confirmed against a
    /// witness: that unit's first partition confirms it
    /// ([`PceStore::confirm`]). Units about to reserve wait; partitions
    /// reserved already go on classically (they hold memory the
    /// confirming unit may be waiting for).
    Confirming {
        pce: Arc<Pce>,
        memory: Reservation,
    },
    Ready {
        pce: Arc<Pce>,
        memory: Reservation,
    },
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
    /// Callers waiting on `loaded` (tests wait for them instead of
    /// sleeping).
    waiting: AtomicUsize,
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
/// ([`PceStore::prepare`]): ended, if no partition took it (or its loaded
/// PCE was not confirmed), when the unit is done (its jobs abandoned,
/// say).
pub struct Prepared<'a> {
    store: &'a PceStore,
    id: String,
    loaded: Option<Arc<Pce>>,
}

impl Prepared<'_> {
    /// The PCE loaded from its file for this unit, to reserve its
    /// partitions for and to confirm with the first of them
    /// ([`PceStore::confirm`]); `None` where it records it.
    pub fn loaded(&self) -> Option<&Arc<Pce>> {
        self.loaded.as_ref()
    }
}

impl Drop for Prepared<'_> {
    fn drop(&mut self) {
        let mut entries = self.store.lock();
        let unconfirmed = match entries.get(&self.id) {
            Some(Entry::Claimed) => true,
            Some(Entry::Confirming { pce, .. }) => self.loaded.as_ref().is_some_and(|l| Arc::ptr_eq(l, pce)),
            _ => false,
        };
        if unconfirmed {
            entries.remove(&self.id);
            self.store.loaded.notify_all();
        }
    }
}

/// Ends a confirmation that panicked: the PCE dropped with its memory,
/// the waiting units woken (the next one loads it again).
struct Confirmation<'a> {
    store: &'a PceStore,
    id: &'a str,
    pce: &'a Arc<Pce>,
}

impl Drop for Confirmation<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.store.unconfirmed(self.id, self.pce);
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
            waiting: AtomicUsize::new(0),
            refused: Mutex::new(HashSet::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits, counted in `waiting`, for an entry to stop loading or
    /// recording.
    fn wait_loaded<'a>(&'a self, entries: MutexGuard<'a, HashMap<String, Entry>>) -> MutexGuard<'a, HashMap<String, Entry>> {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let entries = self.loaded.wait(entries).unwrap_or_else(|e| e.into_inner());
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        entries
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

    /// What is known now of `circuit_id`'s PCE, for its SRS's load
    /// ([`PceAtLoad`]): held (or being confirmed), its file's sizes where
    /// the circuit's first use will load that file (its header checked:
    /// this circuit's PCE, of this version and length), none where the
    /// circuit has none, else unknown: recorded by its first partition (no
    /// file, a file refused or whose header is bad) or being recorded now.
    /// A file whose header passes and whose body then fails its checksum
    /// is recorded anew: the same circuit, so the same sizes.
    pub fn at_load(&self, circuit_id: &str) -> PceAtLoad {
        match self.lock().get(circuit_id) {
            Some(Entry::Ready { pce, .. } | Entry::Confirming { pce, .. }) => return PceAtLoad::Held(pce.clone()),
            Some(Entry::Unavailable) => return PceAtLoad::None,
            Some(Entry::Claimed | Entry::Recording) => return PceAtLoad::Unknown,
            Some(Entry::Loading) | None => {}
        }
        if self.refused.lock().unwrap_or_else(|e| e.into_inner()).contains(circuit_id) {
            return PceAtLoad::Unknown;
        }
        match file::read_sizes(&Self::path_of(&self.dir, circuit_id), circuit_id) {
            Ok(sizes) => PceAtLoad::File(sizes),
            Err(_) => PceAtLoad::Unknown,
        }
    }

    /// Called by a synthesis unit before it reserves its partitions'
    /// memory: waits while `circuit`'s PCE is being loaded, confirmed (or
    /// recorded on every core) and, on its first use, claims it for the
    /// unit (the hold returned ends the claim if no partition took it).
    /// Where its file fits the budget now, it is loaded here, into memory
    /// reserved for it, and handed to the unit ([`Prepared::loaded`]), so
    /// that the unit reserves its partitions for it (witness-only where
    /// the backend computes a, b, c on the device) as for a PCE held;
    /// its first partition confirms it ([`PceStore::confirm`]) before any
    /// partition goes on through it, and the other units wait until then.
    /// A file that cannot be read (or names another circuit) is recorded
    /// anew, with a warning, by the first partition that takes the claim.
    /// With no file, the recording is claimed where the circuit records on
    /// every core, so that no other unit reserves classic memory
    /// meanwhile.
    pub fn prepare(&self, circuit: &dyn PartitionedCircuit) -> Option<Prepared<'_>> {
        let id = circuit.circuit_id();
        let mut entries = self.lock();
        while Self::waits_for(entries.get(&id), circuit) || matches!(entries.get(&id), Some(Entry::Confirming { .. })) {
            entries = self.wait_loaded(entries);
        }
        if entries.contains_key(&id) {
            return None;
        }
        // No room for the file, or a recording not worth waiting for: left
        // to the partition.
        let memory = match self.first_use(&id) {
            FirstUse::Record if circuit.records_on_threads() => {
                entries.insert(id.clone(), Entry::Claimed);
                return Some(Prepared { store: self, id, loaded: None });
            }
            FirstUse::Load(memory) => memory,
            _ => return None,
        };
        entries.insert(id.clone(), Entry::Loading);
        drop(entries);
        // Whatever happens (a panic), the load ends.
        let _claim = Claim { store: self, id: &id };
        let t = std::time::Instant::now();
        let Some(pce) = self.read_file(&id) else {
            // Recorded anew by the first partition that takes the claim.
            drop(memory);
            self.set(&id, Entry::Claimed);
            return Some(Prepared { store: self, id: id.clone(), loaded: None });
        };
        log::info!("pce loaded circuit_id={id} bytes={} ms={} (confirmed by the first partition)", pce.bytes(), t.elapsed().as_millis());
        self.confirming(&id, pce, memory).map(|pce| Prepared { store: self, id: id.clone(), loaded: Some(pce) })
    }

    /// A PCE just loaded from its file into `memory` (reserved at the
    /// file's size), kept to be confirmed where the budget holds it.
    fn confirming(&self, id: &str, pce: Pce, mut memory: Reservation) -> Option<Arc<Pce>> {
        if !memory.resize(pce.bytes()) {
            log::warn!("pce not kept circuit_id={id} bytes={} reason=\"the memory budget is full\" (loaded again later)", pce.bytes());
            self.forget(id);
            return None;
        }
        let pce = Arc::new(pce);
        self.set(id, Entry::Confirming { pce: pce.clone(), memory });
        Some(pce)
    }

    /// Confirms `pce`, loaded from its file by this partition's unit
    /// ([`Prepared::loaded`]), against this partition's witness before
    /// any partition goes on through it: its shape, then every constraint
    /// satisfied (a file recorded from another revision of the circuit
    /// with the same shape passes every other check and would give proofs
    /// that do not verify). With `witness_only`, the partition is
    /// synthesized witness-only (its a, b, c left to the device) and
    /// checked row by row from its witness, a, b, c never held; else with
    /// a, b, c from the CPU SpMV, checked. Confirmed, the PCE is held and
    /// the waiting units go on; refused, its file is removed (the
    /// partition fails, and the circuit's next partition records it). A
    /// circuit that fails to give its witness (a bad request) says nothing
    /// about the file: the unit's next partition confirms it.
    pub fn confirm(
        &self,
        circuit: &dyn PartitionedCircuit,
        partition: usize,
        pce: &Arc<Pce>,
        witness_only: bool,
        threads: usize,
    ) -> Result<(ProvingAssignment, SynthPath), CircuitError> {
        let id = circuit.circuit_id();
        if !self.is_confirming(&id, pce) {
            return Err(CircuitError::internal(format!("the PCE of circuit {id:?} is not being confirmed")));
        }
        let _panic = Confirmation { store: self, id: &id, pce };
        let path = Self::path_of(&self.dir, &id);
        let witness = circuit.circuit_on_threads(partition, threads)?.witness(pce.empty_witness())?;
        if let Err(e) = pce.check_shape(&Shape::of_witness(&witness)) {
            return Err(self.refuse_loaded(&id, pce, &path, e));
        }
        let pa = if witness_only { pce.witness_assignment(witness)? } else { pce.assignment(witness)? };
        // A request that does not satisfy its circuit fails here too, and
        // costs a recording.
        let t = std::time::Instant::now();
        if let Err(e) = pce.check_satisfied(&pa) {
            return Err(self.refuse_loaded(&id, pce, &path, e));
        }
        log::info!("pce confirmed circuit_id={id} partition={partition} witness_only={witness_only} check_ms={}", t.elapsed().as_millis());
        {
            let mut entries = self.lock();
            if let Some(Entry::Confirming { memory, .. }) = entries.remove(&id) {
                entries.insert(id.clone(), Entry::Ready { pce: pce.clone(), memory });
            }
            self.loaded.notify_all();
        }
        circuit.check_assignment(partition, &pa)?;
        Ok((pa, SynthPath::Loaded))
    }

    /// Whether `pce` is the circuit's PCE being confirmed: else, where a
    /// unit loaded it and none of its partitions confirmed it, it was
    /// refused (or its confirmation ended) and no partition may go
    /// through it.
    pub fn is_confirming(&self, id: &str, pce: &Arc<Pce>) -> bool {
        matches!(self.lock().get(id), Some(Entry::Confirming { pce: p, .. }) if Arc::ptr_eq(p, pce))
    }

    /// Drops `pce` if it is the circuit's PCE being confirmed, and wakes
    /// the waiting units.
    fn unconfirmed(&self, id: &str, pce: &Arc<Pce>) {
        let mut entries = self.lock();
        if matches!(entries.get(id), Some(Entry::Confirming { pce: p, .. }) if Arc::ptr_eq(p, pce)) {
            entries.remove(id);
        }
        self.loaded.notify_all();
    }

    /// A loaded PCE that its first witness does not fit or satisfy: its
    /// file refused ([`Self::refuse_file`]) before the waiting units wake,
    /// so that none loads it again.
    fn refuse_loaded(&self, id: &str, pce: &Arc<Pce>, path: &Path, e: PceError) -> CircuitError {
        let err = self.refuse_file(id, path, e);
        self.unconfirmed(id, pce);
        err
    }

    /// Whether a partition of `circuit` waits while its PCE is in `entry`.
    fn waits_for(entry: Option<&Entry>, circuit: &dyn PartitionedCircuit) -> bool {
        match entry {
            Some(Entry::Loading) => true,
            Some(Entry::Recording | Entry::Claimed) => circuit.records_on_threads(),
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
    ) -> Result<(ProvingAssignment, SynthPath), CircuitError> {
        let id = circuit.circuit_id();
        if let Some(pce) = witness_only {
            let witness = circuit.circuit_on_threads(partition, threads)?.witness(pce.empty_witness())?;
            let pa = pce.witness_assignment(witness).map_err(|e| self.dropped(&id, e))?;
            circuit.check_assignment(partition, &pa)?;
            return Ok((pa, SynthPath::Witness));
        }
        let claim = {
            let mut entries = self.lock();
            loop {
                match entries.get(&id) {
                    Some(Entry::Ready { pce, .. }) => break Some(pce.clone()),
                    None | Some(Entry::Claimed) => {
                        let first = match entries.remove(&id) {
                            Some(Entry::Claimed) => FirstUse::Record,
                            _ => self.first_use(&id),
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
                    e if Self::waits_for(e, circuit) => entries = self.wait_loaded(entries),
                    Some(_) => break None,
                }
            }
        };
        let pa = match claim {
            Some(pce) => {
                let witness = circuit.circuit_on_threads(partition, threads)?.witness(pce.empty_witness())?;
                (pce.assignment(witness).map_err(|e| self.dropped(&id, e))?, SynthPath::Pce)
            }
            None => (circuit.circuit(partition)?.classic()?, SynthPath::Classic),
        };
        circuit.check_assignment(partition, &pa.0)?;
        Ok(pa)
    }

    /// A witness that does not fit the circuit's PCE: recorded from another
    /// circuit than this one, so it is dropped to be recorded anew next
    /// time. Returns the partition's error.
    fn dropped(&self, id: &str, e: PceError) -> CircuitError {
        self.forget(id);
        log::warn!("pce dropped circuit_id={id} reason=\"{e}\"");
        e.into()
    }

    /// Whether a circuit's first use loads its file (the memory for it
    /// reserved now: its size, which the loaded PCE's is within a few
    /// percent of) or records it.
    fn first_use(&self, id: &str) -> FirstUse {
        if self.refused.lock().unwrap_or_else(|e| e.into_inner()).contains(id) {
            return FirstUse::Record;
        }
        match std::fs::metadata(Self::path_of(&self.dir, id)) {
            Ok(m) if m.is_file() => match self.memory.try_reserve(m.len(), Purpose::Pce) {
                Some(r) => FirstUse::Load(r),
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
    ) -> Result<(ProvingAssignment, SynthPath), CircuitError> {
        let path = Self::path_of(&self.dir, id);
        let FirstUse::Load(mut memory) = first else { return self.record(circuit, partition, id) };
        let Some(pce) = self.read_file(id) else {
            // Waiting partitions go on as for any recording.
            drop(memory);
            self.set(id, Entry::Recording);
            return self.record(circuit, partition, id);
        };
        // A circuit that fails to give its witness (a bad request) says
        // nothing about the file; one whose witness does not fit it does.
        let witness = circuit.circuit_on_threads(partition, threads)?.witness(pce.empty_witness())?;
        if let Err(e) = pce.check_shape(&Shape::of_witness(&witness)) {
            return Err(self.refuse_file(id, &path, e));
        }
        // Confirmed against a real witness before any partition goes on
        // through it: a file recorded from another revision of the circuit
        // with the same shape passes every check above and would give
        // proofs that do not verify. A request that does not satisfy its
        // circuit fails here too, and costs a recording.
        let pa = pce.assignment(witness)?;
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

    /// The circuit's PCE read from its file; `None` (with a warning where
    /// the file is there) where it is to be recorded anew.
    fn read_file(&self, id: &str) -> Option<Pce> {
        let path = Self::path_of(&self.dir, id);
        match file::read(&path) {
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
        }
    }

    /// A loaded file that a witness does not fit or satisfy (a stale file):
    /// removed, so that the circuit's next partition records it. Where it
    /// cannot be removed (a read-only param cache), this store loads it no
    /// more until it has written the file anew. Returns the partition's
    /// error: unusable parameters (the file is what was refused; a request
    /// that does not satisfy its circuit, which fails here too, cannot be
    /// told from a stale file of the same shape).
    fn refuse_file(&self, id: &str, path: &Path, e: PceError) -> CircuitError {
        log::warn!("pce rebuild circuit_id={id} file={} reason=\"{e}\"", path.display());
        let message = match std::fs::remove_file(path) {
            Ok(()) => format!("{e}; its file is removed, and the circuit's next partition records it again"),
            Err(error) => {
                log::warn!("pce file not removed circuit_id={id} file={} reason=\"{error}\" (not loaded again)", path.display());
                self.refused.lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_string());
                format!(
                    "{e}; its file {} could not be removed ({error}), and the circuit's next partition records it again",
                    path.display()
                )
            }
        };
        CircuitError::bad_params(message)
    }

    /// Records the circuit's PCE from this partition's circuit, witnessing
    /// it in the same pass, and saves it beside the params.
    fn record(&self, circuit: &dyn PartitionedCircuit, partition: usize, id: &str) -> Result<(ProvingAssignment, SynthPath), CircuitError> {
        let path = Self::path_of(&self.dir, id);
        let t = std::time::Instant::now();
        let (pce, witness) = match circuit.circuit(partition)?.record(id) {
            Ok(recorded) => recorded,
            Err(e @ PceError::TooLarge(_)) => {
                // Every later partition would fail the same way.
                self.set(id, Entry::Unavailable);
                log::warn!("pce unavailable circuit_id={id} reason=\"{e}\"");
                return Err(e.into());
            }
            // This instance's witness failed: the next partition records.
            Err(e) => return Err(e.into()),
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
        let pa = pce.assignment(witness).map_err(CircuitError::from);
        match self.memory.try_reserve(pce.bytes(), Purpose::Pce) {
            Some(r) => self.set(id, Entry::Ready { pce: Arc::new(pce), memory: r }),
            None if saved => {
                log::warn!(
                    "pce not kept circuit_id={id} bytes={} reason=\"the memory budget is full\" (loaded from its file later)",
                    pce.bytes()
                );
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
mod tests;
