//! The SRS manager: parameters load on first use and stay resident, each
//! an [`SrsHandle`] whose host points hold a memory reservation (released
//! where every device keeps a copy, and read again when a path needs
//! them: see `srs_handle`; where every device will keep one, loaded
//! straight to them and released from the start: see `srs_stream`). Leases count references; an entry with no
//! lease that has been idle for `eviction_min_idle` may be evicted, least
//! recently used first, when memory runs short: entries whose host points
//! are released are not, as that frees no host memory (only the devices'
//! copies, which a later batch would read the whole file again to rebuild).

use super::memory::{MemoryBudget, Purpose, Reservation, ReserveError};
use super::srs_handle::{HostPoints, HostPointsError, Reread, SrsHandle};
use super::srs_stream::{self, ToDevices};
use crate::client_text::clipped;
use crate::failure::{CircuitError, ErrorKind};
use crate::srs::Parameters;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Entry {
    handle: Arc<SrsHandle>,
    refs: usize,
    last_used: Instant,
}

/// One resident SRS, as status reports it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct SrsEntryStatus {
    pub circuit_id: String,
    pub size_bytes: u64,
    /// Host bytes its points hold now: `size_bytes`, or 0 where they are
    /// released (every device keeps a copy).
    pub host_bytes: u64,
    pub ref_count: usize,
    /// "hot" while a batch uses it, "warm" while resident and idle.
    pub tier: &'static str,
    pub idle_ms: u64,
}

pub struct SrsManager {
    entries: Mutex<HashMap<String, Entry>>,
    /// One lock per circuit id being loaded: an SRS is never loaded twice
    /// at once, and a slow load holds up only callers of the same id.
    loading: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// Bytes reserved before loading ([`SrsLoader::size_hint`]) by the
    /// loads under way, by circuit id.
    reserved: Mutex<HashMap<String, u64>>,
    memory: Arc<MemoryBudget>,
    min_idle: Duration,
}

/// A reference to resident parameters; the entry is not evicted while any
/// lease on it lives.
pub struct SrsLease {
    manager: Arc<SrsManager>,
    circuit_id: String,
    pub handle: Arc<SrsHandle>,
}

impl Drop for SrsLease {
    fn drop(&mut self) {
        if let Some(e) = self.manager.entries.lock().unwrap().get_mut(&self.circuit_id) {
            e.refs -= 1;
            e.last_used = Instant::now();
        }
    }
}

/// What loading the parameters involves, supplied by the job's circuit.
pub struct SrsLoader<'a> {
    /// An upper bound of the size, reserved before loading when known.
    pub size_hint: Option<u64>,
    pub load: Box<dyn FnOnce() -> Result<Parameters, CircuitError> + 'a>,
    /// How to read the parameters again once their host points are
    /// released: where they come from a file. None: they stay in memory
    /// (generated ones: generating again would give another key).
    pub reread: Option<Reread>,
    /// How to load them straight to the devices where every device keeps
    /// them resident (see `srs_stream`); only where `reread` can read
    /// them again. None, or where a device will not keep them: `load`.
    pub to_devices: Option<ToDevices<'a>>,
}

/// Why the SRS manager could not load or evict an SRS.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SrsError {
    /// The loader failed: its error says whether the parameters are
    /// missing, unusable, or something else went wrong.
    #[error("cannot load SRS {}: {error}", clipped(.circuit_id))]
    Load { circuit_id: String, error: CircuitError },
    /// The SRS does not fit the memory budget, even with everything else
    /// evicted.
    #[error("cannot load SRS {}: it {error}", clipped(.circuit_id))]
    TooLarge { circuit_id: String, error: ReserveError },
    /// Every job waiting for the load ended while it waited for memory.
    #[error("no job needs it any more")]
    Abandoned,
    /// Evicting an SRS that batches hold.
    #[error("SRS {} is in use by {batches} batch(es); evict it when idle", clipped(.circuit_id))]
    InUse { circuit_id: String, batches: usize },
}

impl SrsError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            SrsError::Load { error, .. } => error.kind,
            SrsError::TooLarge { .. } => ErrorKind::ResourceExhausted,
            SrsError::Abandoned => ErrorKind::Cancelled,
            SrsError::InUse { .. } => ErrorKind::Busy,
        }
    }
}

impl SrsManager {
    pub fn new(memory: Arc<MemoryBudget>, min_idle: Duration) -> Arc<Self> {
        Arc::new(Self { entries: Mutex::default(), loading: Mutex::default(), reserved: Mutex::default(), memory, min_idle })
    }

    /// A lease on the parameters if they are resident.
    pub fn lease_resident(self: &Arc<Self>, circuit_id: &str) -> Option<SrsLease> {
        let mut entries = self.entries.lock().unwrap();
        let e = entries.get_mut(circuit_id)?;
        e.refs += 1;
        e.last_used = Instant::now();
        Some(SrsLease { manager: self.clone(), circuit_id: circuit_id.into(), handle: e.handle.clone() })
    }

    /// A lease on the parameters, loading them first if needed. The bool
    /// says whether this call loaded them.
    pub fn acquire(
        self: &Arc<Self>,
        circuit_id: &str,
        loader: SrsLoader<'_>,
        abandon: &dyn Fn() -> bool,
    ) -> Result<(SrsLease, bool), SrsError> {
        if let Some(l) = self.lease_resident(circuit_id) {
            return Ok((l, false));
        }
        let id_lock = self.loading.lock().unwrap().entry(circuit_id.to_string()).or_default().clone();
        let result = {
            // A load that panicked leaves nothing half-done behind this
            // lock (the entry is inserted last), so poisoning is ignored.
            let _loading = id_lock.lock().unwrap_or_else(|p| p.into_inner());
            match self.lease_resident(circuit_id) {
                Some(l) => Ok((l, false)),
                None => self.load(circuit_id, loader, abandon).map(|l| (l, true)),
            }
        };
        // The last caller of this id takes its lock out of the map.
        let mut loading = self.loading.lock().unwrap();
        if Arc::strong_count(&id_lock) == 2 {
            loading.remove(circuit_id);
        }
        result
    }

    /// Loads an SRS (under its id's lock) and leases it.
    fn load(self: &Arc<Self>, circuit_id: &str, loader: SrsLoader<'_>, abandon: &dyn Fn() -> bool) -> Result<SrsLease, SrsError> {
        let reserve = |bytes: u64| {
            self.memory
                .reserve(
                    bytes,
                    0,
                    Purpose::Srs,
                    false,
                    |need| {
                        self.make_room(need);
                    },
                    abandon,
                )
                .map_err(|e| match e {
                    ReserveError::TooLarge { .. } => SrsError::TooLarge { circuit_id: circuit_id.into(), error: e },
                    ReserveError::Abandoned => SrsError::Abandoned,
                })
        };
        if let (Some(to), Some(reread)) = (loader.to_devices, &loader.reread) {
            if let Some(lease) = self.load_to_devices(circuit_id, to, reread, &reserve)? {
                return Ok(lease);
            }
        }
        let t = Instant::now();
        let early = loader.size_hint.map(reserve).transpose()?;
        let _reserved = early.as_ref().map(|r| ReservedForLoad::new(self, circuit_id, r.bytes()));
        let params = (loader.load)().map_err(|error| SrsError::Load { circuit_id: circuit_id.into(), error })?;
        let bytes = params.size_bytes() as u64;
        let mut memory = match early {
            Some(r) if r.bytes() >= bytes => r,
            _ => reserve(bytes)?,
        };
        // The points' own size from now on (the hint is an upper bound): a
        // re-read of released points reserves that much again.
        memory.resize(bytes);
        log::info!("srs loaded circuit_id={circuit_id} size_bytes={bytes} load_ms={}", t.elapsed().as_millis());
        Ok(self.insert(circuit_id, SrsHandle::new(circuit_id, params, Some(memory), loader.reread)))
    }

    /// Loads an SRS straight to the devices ([`srs_stream::load`]), its
    /// host points released from the start; None where it is to load into
    /// host memory instead.
    fn load_to_devices(
        self: &Arc<Self>,
        circuit_id: &str,
        to: ToDevices<'_>,
        reread: &Reread,
        reserve: &dyn Fn(u64) -> Result<Reservation, SrsError>,
    ) -> Result<Option<SrsLease>, SrsError> {
        let t = Instant::now();
        // Listed as the load's while it holds them, as a whole load's
        // reservation is.
        let listed = std::cell::OnceCell::new();
        let reserve_listed = |bytes| {
            let r = reserve(bytes)?;
            let _ = listed.set(ReservedForLoad::new(self, circuit_id, r.bytes()));
            Ok(r)
        };
        let Some(loaded) = srs_stream::load(circuit_id, to, &reserve_listed)? else { return Ok(None) };
        let handle = SrsHandle::released(circuit_id, &loaded.head, self.memory.clone(), reread.clone());
        loaded.copies.finish(&handle);
        log::info!(
            "srs loaded to the devices circuit_id={circuit_id} size_bytes={} host_bytes=0 load_ms={}",
            handle.bytes(),
            t.elapsed().as_millis()
        );
        Ok(Some(self.insert(circuit_id, handle)))
    }

    /// Lists a loaded SRS and leases it.
    fn insert(self: &Arc<Self>, circuit_id: &str, handle: Arc<SrsHandle>) -> SrsLease {
        let entry = Entry { handle: handle.clone(), refs: 1, last_used: Instant::now() };
        self.entries.lock().unwrap().insert(circuit_id.to_string(), entry);
        SrsLease { manager: self.clone(), circuit_id: circuit_id.into(), handle }
    }

    /// `handle`'s host points, read again where they were released,
    /// waiting for room in the budget as a load does (evicting idle entries
    /// under pressure); `abandon()` true gives up.
    pub fn read_host_points(&self, handle: &SrsHandle, abandon: &dyn Fn() -> bool) -> Result<Arc<HostPoints>, SrsError> {
        let circuit_id = handle.circuit_id();
        let reserve = |budget: &Arc<MemoryBudget>, bytes| {
            let make_room = |need| {
                self.make_room(need);
            };
            budget
                .reserve(bytes, 0, Purpose::Srs, false, make_room, abandon)
                .map_err(|error| HostPointsError::Reserve { circuit_id: circuit_id.into(), error })
        };
        handle.host_points_reserving(&reserve).map_err(|e| match e {
            HostPointsError::Reserve { error: ReserveError::Abandoned, .. } => SrsError::Abandoned,
            HostPointsError::Reserve { error, .. } => SrsError::TooLarge { circuit_id: circuit_id.into(), error },
            HostPointsError::Reread { error, .. } => SrsError::Load { circuit_id: circuit_id.into(), error },
            e @ HostPointsError::NoRoom { .. } => {
                SrsError::Load { circuit_id: circuit_id.into(), error: CircuitError::internal(e.to_string()) }
            }
        })
    }

    /// Frees memory under pressure: unused entries idle at least
    /// `eviction_min_idle` first; if that is not enough and no synthesized
    /// partition holds memory (so nothing else will ever free any), unused
    /// entries regardless of idle time, since waiting could not end.
    pub fn make_room(&self, need: u64) -> u64 {
        let freed = self.evict_idle(need, true);
        if freed < need && self.memory.usage().partition_bytes == 0 {
            return freed + self.evict_idle(need - freed, false);
        }
        freed
    }

    /// Evicts unused entries that hold host memory (idle at least
    /// `eviction_min_idle` if `respect_min_idle`), least recently used
    /// first, until `need` bytes are freed. Returns the bytes freed.
    fn evict_idle(&self, need: u64, respect_min_idle: bool) -> u64 {
        let mut entries = self.entries.lock().unwrap();
        let mut idle: Vec<(Instant, String)> = entries
            .iter()
            .filter(|(_, e)| e.refs == 0 && (!respect_min_idle || e.last_used.elapsed() >= self.min_idle))
            .filter(|(_, e)| e.handle.host_bytes() > 0)
            .map(|(k, e)| (e.last_used, k.clone()))
            .collect();
        idle.sort();
        let mut freed = 0;
        for (_, id) in idle {
            if freed >= need {
                break;
            }
            let e = entries.remove(&id).unwrap();
            let reason = if respect_min_idle { "memory_pressure" } else { "memory_pressure_nothing_else_to_free" };
            let bytes = e.handle.host_bytes();
            log::info!("srs evicted circuit_id={id} size_bytes={bytes} reason={reason}");
            freed += bytes;
        }
        freed
    }

    /// Evicts one entry now. Ok(None) if it was not loaded; an error if a
    /// batch is using it.
    pub fn evict(&self, circuit_id: &str) -> Result<Option<u64>, SrsError> {
        let mut entries = self.entries.lock().unwrap();
        match entries.get(circuit_id) {
            None => Ok(None),
            Some(e) if e.refs > 0 => Err(SrsError::InUse { circuit_id: circuit_id.into(), batches: e.refs }),
            Some(_) => {
                let e = entries.remove(circuit_id).unwrap();
                let bytes = e.handle.host_bytes();
                log::info!("srs evicted circuit_id={circuit_id} size_bytes={bytes} reason=request");
                Ok(Some(bytes))
            }
        }
    }

    /// Host bytes and handle of a resident entry.
    pub fn resident(&self, circuit_id: &str) -> Option<(u64, Arc<SrsHandle>)> {
        self.entries.lock().unwrap().get(circuit_id).map(|e| (e.handle.host_bytes(), e.handle.clone()))
    }

    /// Host bytes the SRS of `circuit_id` holds when resident, or has
    /// reserved while it loads; None when neither (not loaded, or loading
    /// with its size not reserved yet).
    pub fn bytes_held_or_reserved(&self, circuit_id: &str) -> Option<u64> {
        let held = self.entries.lock().unwrap().get(circuit_id).map(|e| e.handle.host_bytes());
        held.or_else(|| self.reserved.lock().unwrap().get(circuit_id).copied())
    }

    pub fn entries(&self) -> Vec<SrsEntryStatus> {
        let mut v: Vec<_> = self
            .entries
            .lock()
            .unwrap()
            .iter()
            .map(|(k, e)| SrsEntryStatus {
                circuit_id: k.clone(),
                size_bytes: e.handle.bytes(),
                host_bytes: e.handle.host_bytes(),
                ref_count: e.refs,
                tier: if e.refs > 0 { "hot" } else { "warm" },
                idle_ms: if e.refs > 0 { 0 } else { e.last_used.elapsed().as_millis() as u64 },
            })
            .collect();
        v.sort_by(|a, b| a.circuit_id.cmp(&b.circuit_id));
        v
    }
}

/// Lists a load's early reservation in [`SrsManager::reserved`] while it
/// lives (the load's success, error or panic alike end it).
struct ReservedForLoad<'a> {
    manager: &'a SrsManager,
    circuit_id: &'a str,
}

impl<'a> ReservedForLoad<'a> {
    fn new(manager: &'a SrsManager, circuit_id: &'a str, bytes: u64) -> Self {
        manager.reserved.lock().unwrap().insert(circuit_id.to_string(), bytes);
        Self { manager, circuit_id }
    }
}

impl Drop for ReservedForLoad<'_> {
    fn drop(&mut self) {
        self.manager.reserved.lock().unwrap().remove(self.circuit_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::srs::VerifyingKey;
    use group::prime::PrimeCurveAffine;
    use std::sync::mpsc;

    fn tiny() -> Parameters {
        let (g1, g2) = (blstrs::G1Affine::generator(), blstrs::G2Affine::generator());
        let vk = VerifyingKey { alpha_g1: g1, beta_g1: g1, beta_g2: g2, gamma_g2: g2, delta_g1: g1, delta_g2: g2, ic: vec![g1] };
        Parameters { host_pin: Default::default(), vk, h: vec![g1], l: vec![], a: vec![], b_g1: vec![], b_g2: vec![] }
    }

    fn loader<'a>(load: impl FnOnce() -> Result<Parameters, CircuitError> + 'a) -> SrsLoader<'a> {
        SrsLoader { size_hint: None, load: Box::new(load), reread: None, to_devices: None }
    }

    #[test]
    fn a_slow_load_holds_up_only_its_own_circuit() {
        let m = SrsManager::new(MemoryBudget::new(1 << 20), Duration::ZERO);
        let (started_tx, started) = mpsc::channel();
        let (release, release_rx) = mpsc::channel::<()>();
        let slow = {
            let m = m.clone();
            std::thread::spawn(move || {
                let load = move || {
                    started_tx.send(()).unwrap();
                    release_rx.recv().unwrap();
                    Ok(tiny())
                };
                m.acquire("slow", loader(load), &|| false).map(|(_, loaded)| loaded)
            })
        };
        started.recv().unwrap();
        // Another circuit loads while the slow one is still loading.
        let (_fast, loaded) = m.acquire("fast", loader(|| Ok(tiny())), &|| false).unwrap();
        assert!(loaded);
        // A second caller of the slow id waits for that load, not a load of its own.
        let again = {
            let m = m.clone();
            std::thread::spawn(move || {
                m.acquire("slow", loader(|| Err(CircuitError::internal("loaded twice"))), &|| false).map(|(_, loaded)| loaded)
            })
        };
        // Its caller holds the id's lock (the slow load's, held by it) once
        // it counts among the lock's owners: the map, `slow`, `again`.
        let t = std::time::Instant::now();
        while Arc::strong_count(&m.loading.lock().unwrap()["slow"]) < 3 {
            assert!(t.elapsed() < Duration::from_secs(60), "the second caller never reached the id's lock");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(m.loading.lock().unwrap()["slow"].try_lock().is_err(), "the slow load holds its id's lock");
        assert!(!again.is_finished());
        release.send(()).unwrap();
        assert_eq!(slow.join().unwrap(), Ok(true));
        assert_eq!(again.join().unwrap(), Ok(false));
        assert!(m.loading.lock().unwrap().is_empty());
    }

    #[test]
    fn a_failed_or_panicked_load_lets_the_next_caller_try() {
        let m = SrsManager::new(MemoryBudget::new(1 << 20), Duration::ZERO);
        let e = m.acquire("c", loader(|| Err(CircuitError::missing_params("no file"))), &|| false).err().unwrap();
        assert_eq!((e.kind(), e.to_string().as_str()), (ErrorKind::MissingParams, "cannot load SRS c: no file"));
        let m2 = m.clone();
        let panicked = std::thread::spawn(move || m2.acquire("c", loader(|| panic!("loader bug")), &|| false).map(|_| ()));
        assert!(panicked.join().is_err());
        assert!(m.acquire("c", loader(|| Ok(tiny())), &|| false).unwrap().1);
    }

    /// Each error says its kind; the messages are the ones operators knew.
    #[test]
    fn errors_say_their_kind() {
        let m = SrsManager::new(MemoryBudget::new(1 << 20), Duration::ZERO);
        let big = SrsLoader { size_hint: Some(2 << 20), load: Box::new(|| Ok(tiny())), reread: None, to_devices: None };
        let e = m.acquire("big", big, &|| false).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::ResourceExhausted);
        assert_eq!(e.to_string(), "cannot load SRS big: it needs 2MiB but the whole memory budget is 1MiB (raise memory.total_budget)");
        let corrupt = m.acquire("c", loader(|| Err(CircuitError::bad_params("c.params: truncated"))), &|| false).err().unwrap();
        assert_eq!((corrupt.kind(), corrupt.to_string().as_str()), (ErrorKind::BadParams, "cannot load SRS c: c.params: truncated"));
        let (lease, _) = m.acquire("held", loader(|| Ok(tiny())), &|| false).unwrap();
        let e = m.evict("held").err().unwrap();
        assert_eq!((e.kind(), e.to_string().as_str()), (ErrorKind::Busy, "SRS held is in use by 1 batch(es); evict it when idle"));
        drop(lease);
        assert!(m.evict("held").unwrap().is_some());
        let waited = SrsLoader { size_hint: Some(1 << 20), load: Box::new(|| Ok(tiny())), reread: None, to_devices: None };
        let (_other, _) = m.acquire("other", loader(|| Ok(tiny())), &|| false).unwrap();
        let e = m.acquire("abandoned", waited, &|| true).err().unwrap();
        assert_eq!((e.kind(), e.to_string().as_str()), (ErrorKind::Cancelled, "no job needs it any more"));
    }
}
