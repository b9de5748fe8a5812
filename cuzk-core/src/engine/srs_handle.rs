//! One SRS as the engine holds it: its verifying key and point counts,
//! always at hand, and its host points, which may be released (a 32 GiB
//! PoRep's are 44 GiB) once every device that proves with them keeps a
//! copy of its own, and are then read again, under the memory budget, by
//! the first path that needs them in host memory (a device without a
//! copy, a fallback that streams points, the CPU).
//!
//! Only points that can be read again are released: those of a file
//! (`reread`). Points generated in memory (a built-in circuit with no
//! `.params` file, from random toxic waste) stay: generating them again
//! would give another key, which the devices' copies and the proofs
//! already made do not match.
//!
//! The host points and their memory reservation are one object
//! ([`HostPoints`]): a caller that still uses them after the release keeps
//! both, so the budget never counts freed what is still in use.

use super::backend::Backend;
use super::interlock::DeviceLocks;
use super::memory::{MemoryBudget, Purpose, Reservation, ReserveError};
use crate::config::format_size;
use crate::failure::{CircuitError, ErrorKind};
use crate::srs::{KeyShape, Parameters, PointCounts, VerifyingKey};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

/// Reads the points again: the loader that loaded them, called again.
pub type Reread = Arc<dyn Fn() -> Result<Parameters, CircuitError> + Send + Sync>;

/// An SRS's host points with the budget they hold (dropped after them:
/// fields drop in order).
pub struct HostPoints {
    params: Parameters,
    _memory: Option<Reservation>,
}

impl std::ops::Deref for HostPoints {
    type Target = Parameters;

    fn deref(&self) -> &Parameters {
        &self.params
    }
}

/// Why the host points could not be had.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostPointsError {
    /// The budget has no room for them now (the caller may retry once it
    /// frees some).
    #[error("reading the SRS {circuit_id} into host memory again needs {} beyond the memory budget", format_size(*bytes))]
    NoRoom { circuit_id: String, bytes: u64 },
    /// Reading them again failed, or gave another key than the one loaded.
    #[error("cannot read the SRS {circuit_id} again: {error}")]
    Reread { circuit_id: String, error: CircuitError },
    /// Waiting for room in the budget ended without it.
    #[error("reading the SRS {circuit_id} into host memory again: it {error}")]
    Reserve { circuit_id: String, error: ReserveError },
}

impl HostPointsError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            HostPointsError::NoRoom { .. } => ErrorKind::ResourceExhausted,
            HostPointsError::Reread { error, .. } => error.kind,
            HostPointsError::Reserve { error: ReserveError::TooLarge { .. }, .. } => ErrorKind::ResourceExhausted,
            HostPointsError::Reserve { error: ReserveError::Abandoned, .. } => ErrorKind::Cancelled,
        }
    }
}

struct HostState {
    /// The copy the handle keeps; None once released.
    kept: Option<Arc<HostPoints>>,
    /// The last copy, while any caller still uses it.
    last: Weak<HostPoints>,
    releases: u64,
    rereads: u64,
}

/// See the module doc.
pub struct SrsHandle {
    circuit_id: String,
    vk: VerifyingKey,
    counts: PointCounts,
    /// Host bytes of the points (what a re-read reserves).
    bytes: u64,
    memory: Option<Arc<MemoryBudget>>,
    reread: Option<Reread>,
    host: Mutex<HostState>,
    /// Held through a re-read: concurrent callers wait for that one.
    reading: Mutex<()>,
}

impl KeyShape for SrsHandle {
    fn vk(&self) -> &VerifyingKey {
        &self.vk
    }

    fn counts(&self) -> PointCounts {
        self.counts
    }
}

/// How a handle's host points stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostPointsState {
    /// Whether they are in host memory (kept, or in use by a caller).
    pub in_memory: bool,
    /// Whether the handle keeps them.
    pub kept: bool,
    pub releases: u64,
    pub rereads: u64,
}

impl SrsHandle {
    /// A handle on `params`, loaded under `memory` (their reservation,
    /// None: not counted), read again by `reread` once released (None:
    /// never released).
    pub fn new(circuit_id: &str, params: Parameters, memory: Option<Reservation>, reread: Option<Reread>) -> Arc<Self> {
        let budget = memory.as_ref().map(Reservation::budget);
        let (vk, counts, bytes) = (params.vk.clone(), params.counts(), params.size_bytes() as u64);
        let kept = Arc::new(HostPoints { params, _memory: memory });
        let host = HostState { last: Arc::downgrade(&kept), kept: Some(kept), releases: 0, rereads: 0 };
        Arc::new(SrsHandle {
            circuit_id: circuit_id.into(),
            vk,
            counts,
            bytes,
            memory: budget,
            reread,
            host: Mutex::new(host),
            reading: Mutex::default(),
        })
    }

    /// A handle on an SRS of `shape` whose points were never read into
    /// host memory (loaded straight to the devices that keep it: see
    /// `srs_stream`): they start released, read again by `reread` under
    /// `memory` where a path needs them.
    pub fn released(circuit_id: &str, shape: &dyn KeyShape, memory: Arc<MemoryBudget>, reread: Reread) -> Arc<Self> {
        let (vk, counts) = (shape.vk().clone(), shape.counts());
        let host = HostState { kept: None, last: Weak::new(), releases: 0, rereads: 0 };
        Arc::new(SrsHandle {
            circuit_id: circuit_id.into(),
            bytes: counts.host_bytes(vk.ic.len()) as u64,
            vk,
            counts,
            memory: Some(memory),
            reread: Some(reread),
            host: Mutex::new(host),
            reading: Mutex::default(),
        })
    }

    /// A handle on `params` kept in memory for good, counted in no budget
    /// (tests, tools).
    pub fn in_memory(circuit_id: &str, params: Parameters) -> Arc<Self> {
        Self::new(circuit_id, params, None, None)
    }

    pub fn circuit_id(&self) -> &str {
        &self.circuit_id
    }

    /// Host bytes of the points.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether the points can be released (they can be read again).
    pub fn releasable(&self) -> bool {
        self.reread.is_some()
    }

    pub fn state(&self) -> HostPointsState {
        let h = self.host.lock().unwrap();
        HostPointsState { in_memory: h.last.strong_count() > 0, kept: h.kept.is_some(), releases: h.releases, rereads: h.rereads }
    }

    /// Host bytes the points hold now (0 once released and no caller
    /// uses them).
    pub fn host_bytes(&self) -> u64 {
        if self.host.lock().unwrap().last.strong_count() > 0 {
            self.bytes
        } else {
            0
        }
    }

    /// The points if they are in host memory now.
    pub fn host_points_now(&self) -> Option<Arc<HostPoints>> {
        let mut h = self.host.lock().unwrap();
        h.kept.clone().or_else(|| Self::take_back(&mut h))
    }

    /// The points, read again first (reserving their bytes in the budget
    /// now, else [`HostPointsError::NoRoom`]) if they were released; kept
    /// again from then on.
    pub fn host_points(&self) -> Result<Arc<HostPoints>, HostPointsError> {
        self.host_points_reserving(&|budget, bytes| {
            budget.try_reserve(bytes, Purpose::Srs).ok_or(HostPointsError::NoRoom { circuit_id: self.circuit_id.clone(), bytes })
        })
    }

    /// [`Self::host_points`] with their bytes reserved in the budget by
    /// `reserve` (which may wait for room: the SRS manager's
    /// `read_host_points`).
    pub fn host_points_reserving(
        &self,
        reserve: &dyn Fn(&Arc<MemoryBudget>, u64) -> Result<Reservation, HostPointsError>,
    ) -> Result<Arc<HostPoints>, HostPointsError> {
        if let Some(p) = self.host_points_now() {
            return Ok(p);
        }
        let _reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        // Another caller may have read them while this one waited.
        if let Some(p) = self.host_points_now() {
            return Ok(p);
        }
        let circuit_id = self.circuit_id.clone();
        let reread = self.reread.as_ref().ok_or_else(|| HostPointsError::Reread {
            circuit_id: circuit_id.clone(),
            error: CircuitError::internal("its points were released but cannot be read again"),
        })?;
        let memory = self.memory.as_ref().map(|budget| reserve(budget, self.bytes)).transpose()?;
        let t = Instant::now();
        let params = reread().map_err(|error| HostPointsError::Reread { circuit_id: circuit_id.clone(), error })?;
        if params.vk != self.vk || params.counts() != self.counts {
            let error = CircuitError::bad_params("its file now holds another key than the one loaded");
            return Err(HostPointsError::Reread { circuit_id, error });
        }
        let points = Arc::new(HostPoints { params, _memory: memory });
        let mut h = self.host.lock().unwrap();
        h.kept = Some(points.clone());
        h.last = Arc::downgrade(&points);
        h.rereads += 1;
        log::info!("srs host points read again circuit_id={circuit_id} size_bytes={} load_ms={}", self.bytes, t.elapsed().as_millis());
        Ok(points)
    }

    /// Releases the kept points (where they can be read again): their
    /// memory and reservation go once no caller uses them. Whether they
    /// were kept and are released now.
    pub fn release_host_points(&self) -> bool {
        if self.reread.is_none() {
            return false;
        }
        let mut h = self.host.lock().unwrap();
        if h.kept.take().is_none() {
            return false;
        }
        h.releases += 1;
        log::info!("srs host points released circuit_id={} size_bytes={}: every device keeps a copy", self.circuit_id, self.bytes);
        true
    }

    /// The last copy, kept again, where a caller still uses it.
    fn take_back(h: &mut HostState) -> Option<Arc<HostPoints>> {
        let p = h.last.upgrade()?;
        h.kept = Some(p.clone());
        Some(p)
    }
}

/// Releases `srs`'s host points where every device that takes work holds
/// a copy of its own ([`ProverBackend::holds_points`]) and they can be read
/// again. Not while any device proves on the CPU (it lost its GPU) or none
/// is in service: those need the host points.
///
/// [`ProverBackend::holds_points`]: super::backend::ProverBackend::holds_points
pub fn release_where_every_device_holds(srs: &SrsHandle, backend: &dyn Backend, devices: &[Arc<DeviceLocks>]) -> bool {
    srs.releasable() && srs.state().kept && every_device_holds(srs, backend, devices) && srs.release_host_points()
}

/// Whether `srs`'s points are released and a device that takes work
/// holds no copy of its own: a batch of its circuit then has them read
/// again before it starts (waiting for room in the budget as a load does),
/// rather than its partitions filling the budget first and the device
/// finding no room to read them into.
pub fn host_points_needed(srs: &SrsHandle, backend: &dyn Backend, devices: &[Arc<DeviceLocks>]) -> bool {
    srs.host_bytes() == 0 && !every_device_holds(srs, backend, devices)
}

/// Every device that takes work is in service (none proves on the CPU)
/// and holds a copy of `srs`'s points; and there is one.
fn every_device_holds(srs: &SrsHandle, backend: &dyn Backend, devices: &[Arc<DeviceLocks>]) -> bool {
    every_device_would_hold(devices, |ordinal| backend.holds_points(ordinal, srs))
}

/// The rule of [`release_where_every_device_holds`] with each device's
/// copy as `holds` says (the plan report's forecast, from where each
/// device plans to keep the points): every device that takes work is in
/// service and holds one; and there is one.
pub fn every_device_would_hold(devices: &[Arc<DeviceLocks>], holds: impl Fn(u32) -> bool) -> bool {
    let serving: Vec<_> = devices.iter().filter(|d| d.serving()).collect();
    !serving.is_empty() && serving.iter().all(|d| d.in_service() && holds(d.ordinal))
}

#[cfg(test)]
mod tests;
