//! The device copies a GPU backend keeps: each device's resident SRSs
//! (made so where the planner keeps them: `plan::srs_resident`; the
//! engine releases the SRS's host points once every device has one, or,
//! where every device will keep one from the circuit's first partition,
//! its matrices counted, fills them straight from the file:
//! [`StreamedSrs`]), the
//! matrices of the circuits whose partitions the engine
//! synthesizes witness-only (uploaded once where the VRAM budget holds
//! them beside a working set; else, where it holds the streamed SpMV's
//! peak, the circuit kept ready to stream them from host memory), each
//! kept while its host object lives, counted in the budget, and evicted
//! least recently used, idle, when an SRS needs the room (as are the query
//! points of `resident_query`).

use super::{GpuBackend, GpuDevice};
use crate::engine::backend::{PceAtLoad, ProveInput, ProverError, ResidentLoad};
use crate::engine::interlock::{DeviceLocks, VramBudget, VramReservation};
use crate::engine::srs_handle::{every_device_would_hold, SrsHandle};
use crate::groth16::gpu_prover::{plan, GpuProver};
use crate::groth16::gpu_srs::DeviceSrs;
use crate::pce::gpu::{GpuPce, StreamedPce};
use crate::pce::Pce;
use crate::srs::{KeyShape, PointSlice};
use cuzk_sys::Stream;
use std::sync::{Arc, Weak};
use std::time::Instant;

/// A device copy of a host object (an SRS, a PCE's matrices), kept while
/// that object lives, with the budget it holds.
pub(super) struct Resident<H, D> {
    host: Weak<H>,
    device: Arc<D>,
    last_used: Instant,
    vram: VramReservation,
}

impl<H, D> Resident<H, D> {
    pub(super) fn new(host: &Arc<H>, device: Arc<D>, vram: VramReservation) -> Self {
        Resident { host: Arc::downgrade(host), device, last_used: Instant::now(), vram }
    }

    /// Whether this is the copy of `host`.
    fn copies(&self, host: *const H) -> bool {
        std::ptr::eq(self.host.as_ptr(), host)
    }

    /// Whether this is the copy of `host`, which lives.
    pub(super) fn is_copy_of(&self, host: &H) -> bool {
        self.host.strong_count() > 0 && self.copies(host)
    }
}

/// The device copy of `host` in `list`, if there is one (copies whose
/// host object is gone are freed first).
pub(super) fn find_copy<H, D>(list: &mut Vec<Resident<H, D>>, host: &Arc<H>) -> Option<Arc<D>> {
    list.retain(|r| r.host.strong_count() > 0);
    let r = list.iter_mut().find(|r| r.copies(Arc::as_ptr(host)))?;
    r.last_used = Instant::now();
    Some(r.device.clone())
}

/// A host object whose device copy may be needed while no call holds it.
pub(super) trait CopyNeeded {
    fn copy_needed(host: &Arc<Self>) -> bool;
}

/// The matrices' host copy stays: a partition whose matrices are gone
/// computes a, b, c from it (the leases of `abc_on_device` keep the copies
/// that partitions were synthesized for).
impl CopyNeeded for Pce {
    fn copy_needed(_: &Arc<Self>) -> bool {
        false
    }
}

/// An SRS whose host points are released, while batches lease it (more
/// holders than the SRS manager's entry and this check): its partitions
/// prove from the device copy, and evicting it would have them read the
/// points again (a 32 GiB PoRep's 44 GiB) into a budget their own
/// partitions fill. The other SRS then streams its points from host
/// memory, as where there is no room.
impl CopyNeeded for SrsHandle {
    fn copy_needed(host: &Arc<Self>) -> bool {
        host.host_bytes() == 0 && Arc::strong_count(host) > 2
    }
}

/// Whether `r` is a copy no call holds, other than `keep`'s, and not
/// needed while idle.
fn idle<H: CopyNeeded, D>(r: &Resident<H, D>, keep: *const H) -> bool {
    Arc::strong_count(&r.device) == 1 && !r.copies(keep) && !r.host.upgrade().is_some_and(|h| H::copy_needed(&h))
}

/// The bytes of the copies in `list` that [`evict_idle`] may free.
fn idle_bytes<H: CopyNeeded, D>(list: &[Resident<H, D>], keep: *const H) -> u64 {
    list.iter().filter(|r| idle(r, keep)).map(|r| r.vram.bytes()).sum()
}

/// Frees the least recently used copy in `list` that no call holds, other
/// than `keep`'s; its bytes, or None where there is none.
fn evict_idle<H: CopyNeeded, D>(list: &mut Vec<Resident<H, D>>, keep: *const H) -> Option<u64> {
    let i = list.iter().enumerate().filter(|(_, r)| idle(r, keep)).min_by_key(|(_, r)| r.last_used).map(|(i, _)| i)?;
    Some(list.remove(i).vram.bytes())
}

impl GpuBackend {
    /// Whether `srs` has a copy on `dev` (taking `dev.resident`'s lock:
    /// not to be called with it, nor with `dev.pces`', held).
    pub(super) fn is_resident(dev: &GpuDevice, srs: &SrsHandle) -> bool {
        dev.resident.lock().unwrap().iter().any(|r| r.host.strong_count() > 0 && r.copies(srs))
    }

    /// The resident copy of `srs` on `dev`, if there is one.
    pub(super) fn find_resident(dev: &GpuDevice, srs: &Arc<SrsHandle>) -> Option<Arc<DeviceSrs>> {
        // An SRS the engine evicted frees its device copy.
        find_copy(&mut dev.resident.lock().unwrap(), srs)
    }

    /// Makes `input.srs` resident where the planner keeps it so
    /// ([`plan::srs_resident`]: the budget holds it beside the circuit's
    /// resident matrices and one working set with chunked MSMs) and the
    /// budget has its bytes free now, evicting idle copies of other SRSs
    /// least recently used first, then idle matrices: those no call uses
    /// and no queued witness-only partition leases
    /// ([`ProverBackend::abc_on_device`]), which would find them gone.
    /// Called before the worker reserves its working set, so the
    /// reservation is sized with the points where they will be.
    pub(super) fn make_resident(&self, dev: &GpuDevice, input: &ProveInput<'_>) -> Result<Option<Arc<DeviceSrs>>, ProverError> {
        if let Some(srs) = Self::find_resident(dev, input.srs) {
            return Ok(Some(srs));
        }
        if !self.keep_srs_resident {
            return Ok(None);
        }
        let Some(first) = input.assignments.first() else { return Ok(None) };
        let bytes = DeviceSrs::bytes(&**input.srs);
        // The circuit's resident matrices stay beside it, with z for the SpMV.
        let (matrices, z) = match input.pce.and_then(|p| Some((p, Self::find_pce(dev, p)?))) {
            Some((p, m)) => (m.bytes(), if input.witness_only() { p.z_bytes() } else { 0 }),
            None => (0, 0),
        };
        if !Self::keeps_srs_resident(dev, &**input.srs, first.num_constraints(), input.vram.normal_total(), matrices, z)? {
            return Ok(None);
        }
        // The points to upload, read again first where they were released
        // (another device's copy made them so); before the lock, as a read
        // takes a while.
        let host = input.srs.host_points()?;
        let mut resident = dev.resident.lock().unwrap();
        let keep_pce = input.pce.map_or(std::ptr::null(), Arc::as_ptr);
        // A later partition tries again where there is no room now.
        let Some(vram) = Self::room_for_srs(dev, &mut resident, input.vram, bytes, keep_pce) else { return Ok(None) };
        let t = Instant::now();
        let srs = Arc::new(DeviceSrs::upload(dev.info.ordinal as i32, &host)?);
        log::info!("device SRS uploaded gpu={} bytes={} upload_ms={}", dev.info.ordinal, bytes, t.elapsed().as_millis());
        resident.push(Resident::new(input.srs, srs.clone(), vram));
        Ok(Some(srs))
    }

    /// `bytes` of `vram` reserved for a copy of an SRS on `dev`, evicting
    /// idle copies of other SRSs (in `resident`, `dev.resident` locked)
    /// least recently used first, then idle query points, then idle
    /// matrices other than `keep_pce`'s; None where that would not make
    /// the room (other calls hold the rest for now): then none is evicted.
    fn room_for_srs(
        dev: &GpuDevice,
        resident: &mut Vec<Resident<SrsHandle, DeviceSrs>>,
        vram: &Arc<VramBudget>,
        bytes: u64,
        keep_pce: *const Pce,
    ) -> Option<VramReservation> {
        if !Self::could_make_room(dev, resident, vram, bytes, keep_pce) {
            return None;
        }
        while vram.free() < bytes {
            if let Some(freed) = evict_idle(resident, std::ptr::null()) {
                log::info!("device SRS evicted gpu={} bytes={freed}", dev.info.ordinal);
            } else if let Some(freed) = evict_idle(&mut dev.queries.lock().unwrap(), std::ptr::null()) {
                log::info!("device query points evicted gpu={} bytes={freed}", dev.info.ordinal);
            } else if let Some(freed) = evict_idle(&mut dev.pces.lock().unwrap(), keep_pce) {
                log::info!("device pce evicted gpu={} bytes={freed}", dev.info.ordinal);
            } else {
                return None;
            }
        }
        vram.try_reserve(bytes)
    }

    /// Whether [`Self::room_for_srs`] would find the room (evicting
    /// nothing).
    fn could_make_room(
        dev: &GpuDevice,
        resident: &[Resident<SrsHandle, DeviceSrs>],
        vram: &VramBudget,
        bytes: u64,
        keep_pce: *const Pce,
    ) -> bool {
        let evictable = idle_bytes(resident, std::ptr::null())
            + idle_bytes(&dev.queries.lock().unwrap(), std::ptr::null())
            + idle_bytes(&dev.pces.lock().unwrap(), keep_pce);
        vram.free().saturating_add(evictable) >= bytes
    }

    /// The copies of an SRS of `shape` to load straight to every device
    /// in service ([`ProverBackend::resident_load`]), allocated: where each
    /// keeps it resident from the circuit's first partition by the rules
    /// that partition follows, the circuit's matrices counted as `pce`
    /// sizes them ([`Self::keeps_srs_from_first`]), and has the room now
    /// (idle copies evicted as `make_resident` evicts them). None where
    /// any device will not hold it, the circuit's PCE is not known yet
    /// (it may take the room the SRS would: its first partition decides
    /// once it is recorded, the SRS loaded whole), or an allocation fails.
    ///
    /// [`ProverBackend::resident_load`]: crate::engine::backend::ProverBackend::resident_load
    pub(super) fn streamed_srs(&self, shape: &dyn KeyShape, pce: &PceAtLoad, devices: &[Arc<DeviceLocks>]) -> Option<StreamedSrs<'_>> {
        if !self.keep_srs_resident || matches!(pce, PceAtLoad::Unknown) {
            return None;
        }
        let keeps = |ordinal: u32| {
            let (Some(locks), Ok(dev)) = (devices.iter().find(|d| d.ordinal == ordinal), self.device(ordinal)) else { return false };
            Self::keeps_srs_from_first(dev, shape, pce, locks.vram.normal_total()).unwrap_or(false)
        };
        if !every_device_would_hold(devices, keeps) {
            return None;
        }
        let bytes = DeviceSrs::bytes(shape);
        let serving: Vec<_> = devices.iter().filter(|d| d.serving()).collect();
        // Every device first, so that none evicts a copy for a load that
        // another device's lack of room then calls off.
        let room = |locks: &&Arc<DeviceLocks>| {
            self.device(locks.ordinal)
                .is_ok_and(|dev| Self::could_make_room(dev, &dev.resident.lock().unwrap(), &locks.vram, bytes, std::ptr::null()))
        };
        if !serving.iter().all(room) {
            return None;
        }
        let mut copies = Vec::new();
        for locks in serving {
            let dev = self.device(locks.ordinal).ok()?;
            let ordinal = dev.info.ordinal as i32;
            let vram = Self::room_for_srs(dev, &mut dev.resident.lock().unwrap(), &locks.vram, bytes, std::ptr::null())?;
            match Stream::new(ordinal).and_then(|stream| Ok((stream, DeviceSrs::allocate(ordinal, shape.counts())?))) {
                Ok((stream, srs)) => copies.push(StreamedCopy { dev, srs, stream, vram }),
                Err(e) => {
                    log::warn!("gpu={ordinal} device SRS not allocated for a load straight to the devices ({e})");
                    return None;
                }
            }
        }
        Some(StreamedSrs { copies, started: Instant::now() })
    }

    /// Whether `dev`, its VRAM budget `total` bytes, keeps an SRS of
    /// `shape` resident from its circuit's first partition on, decided
    /// before the SRS is read, as that partition decides it after a whole
    /// load ([`plan::srs_resident_from_first`]): `ensure_pce` places the
    /// circuit's matrices (of `pce`'s sizes) first, the SRS not resident
    /// yet, then `make_resident` keeps the SRS beside them where they are
    /// resident (matrices resident on `dev` already count as placed).
    /// Beside resident matrices, z is counted as for partitions that carry
    /// their witness only: the stricter of the two (a partition carrying
    /// a, b, c needs no z), so a load decided by this is never straight to
    /// a device that would not have kept the SRS.
    fn keeps_srs_from_first(dev: &GpuDevice, shape: &dyn KeyShape, pce: &PceAtLoad, total: u64) -> Result<bool, ProverError> {
        let srs_bytes = DeviceSrs::bytes(shape);
        let Some(sizes) = pce.sizes() else {
            let working = Self::min_resident_working_set(dev, shape, shape.counts().h + 1, 0)?;
            return Ok(plan::srs_resident_from_first(total, srs_bytes, working, None));
        };
        let (n, z) = (sizes.num_constraints, sizes.z_bytes());
        let on_device = match pce {
            PceAtLoad::Held(p) => Self::resident_pce_bytes(dev, p),
            _ => None,
        };
        let matrices = plan::FirstMatrices {
            bytes: on_device.map_or_else(|| GpuPce::device_bytes_of(&sizes), Ok)?,
            // Resident already: placed whatever the working set.
            working_from_host: if on_device.is_some() { 0 } else { Self::chunked_working_set_from_host(n, z) },
            min_working: Self::srs_working_set(dev, shape, n, z)?,
        };
        let working = Self::min_resident_working_set(dev, shape, n, 0)?;
        Ok(plan::srs_resident_from_first(total, srs_bytes, working, Some(&matrices)))
    }

    /// Whether a VRAM budget of `total` bytes on `dev` keeps `srs`'s points
    /// resident ([`plan::srs_resident`]) beside `matrices` bytes of
    /// resident matrices and the smallest working set worth it, with `z`
    /// bytes of witness: the rule `make_resident` uploads by and the plan
    /// report states.
    pub(super) fn keeps_srs_resident(
        dev: &GpuDevice,
        srs: &dyn KeyShape,
        constraints: usize,
        total: u64,
        matrices: u64,
        z: u64,
    ) -> Result<bool, ProverError> {
        let working = Self::srs_working_set(dev, srs, constraints, z)?;
        Ok(plan::srs_resident(total, matrices, DeviceSrs::bytes(srs), working))
    }

    /// What a resident SRS is kept beside ([`plan::srs_resident`]'s
    /// `min_working`): the smallest working set worth it
    /// ([`Self::min_resident_working_set`]) and, where the partitions carry
    /// their witness only (`z` bytes of it), the next one's witness staged
    /// ahead beside it. Without that room every partition would stage its
    /// witness inside the compute lock and chunk its MSMs small, slower
    /// than keeping A's points alone resident beside the matrices
    /// ([`plan::query_resident`]), which such a card has room for.
    pub(super) fn srs_working_set(dev: &GpuDevice, shape: &dyn KeyShape, constraints: usize, z: u64) -> Result<u64, ProverError> {
        Ok(Self::min_resident_working_set(dev, shape, constraints, z)?.saturating_add(z))
    }

    /// The smallest working set worth keeping an SRS resident for
    /// (see [`plan::srs_resident`]): the H buffers, z where the circuits
    /// carry their witness only and their matrices are resident, and MSMs
    /// in chunks of [`plan::RESIDENT_MIN_CHUNK_POINTS`] with the points on
    /// the device.
    pub(super) fn min_resident_working_set(dev: &GpuDevice, params: &dyn KeyShape, constraints: usize, z: u64) -> Result<u64, ProverError> {
        let msm = Self::chunked_msm_bytes(dev, params, true, plan::RESIDENT_MIN_CHUNK_POINTS)?;
        Ok(GpuProver::h_bytes(constraints)? + z + msm)
    }

    /// The resident matrices of `pce` on `dev`, if there are.
    pub(super) fn find_pce(dev: &GpuDevice, pce: &Arc<Pce>) -> Option<Arc<GpuPce>> {
        // The engine dropped that PCE (with its SRS): its matrices go.
        find_copy(&mut dev.pces.lock().unwrap(), pce)
    }

    /// `pce`'s matrices on `dev`, uploaded if they are not there and the
    /// budget `vram` (of that device) has room for them now and, in total,
    /// for them beside one working set of `srs`'s circuits with z and
    /// `srs`'s resident copy, if it is (else its MSMs chunked within one H
    /// buffer, the points from host memory: `chunked_working_set_from_host`):
    /// else a, b, c are better uploaded or streamed (the 16 GiB regime).
    pub(super) fn ensure_pce(&self, dev: &GpuDevice, pce: &Arc<Pce>, srs: &SrsHandle, vram: &Arc<VramBudget>) -> Option<Arc<GpuPce>> {
        let points_on_device = Self::is_resident(dev, srs);
        // Held through the upload: two synthesis workers asking at once
        // upload one copy.
        let mut pces = dev.pces.lock().unwrap();
        if let Some(gpu) = find_copy(&mut pces, pce) {
            return Some(gpu);
        }
        let bytes = GpuPce::device_bytes(pce).ok()?;
        let total = vram.normal_total();
        let (n, z) = (pce.num_constraints(), pce.z_bytes());
        // Each branch of the rule needs one of the two working sets.
        let (resident_srs, from_host) = if points_on_device {
            (Some((DeviceSrs::bytes(srs), Self::srs_working_set(dev, srs, n, z).ok()?)), 0)
        } else {
            (None, Self::chunked_working_set_from_host(n, z))
        };
        if !plan::matrices_resident(total, bytes, resident_srs, from_host) {
            return None;
        }
        let reservation = vram.try_reserve(bytes)?;
        let t = Instant::now();
        let gpu = match GpuPce::upload(pce, dev.info.ordinal as i32) {
            Ok(g) => Arc::new(g),
            Err(e) => {
                log::warn!("device pce not uploaded gpu={} circuit_id={} reason=\"{e}\"", dev.info.ordinal, pce.circuit_id);
                return None;
            }
        };
        log::info!(
            "device pce uploaded gpu={} circuit_id={} bytes={bytes} upload_ms={}",
            dev.info.ordinal,
            pce.circuit_id,
            t.elapsed().as_millis()
        );
        pces.push(Resident::new(pce, gpu.clone(), reservation));
        Some(gpu)
    }

    /// `pce` ready to stream to `dev` (checked and its coefficient table
    /// uploaded the first time), where the H term has room on it and the
    /// budget `vram` holds the streamed SpMV's peak for one partition but
    /// not the matrices beside a working set (else they are better made
    /// resident: [`Self::ensure_pce`]).
    pub(super) fn ensure_streamed(
        &self,
        dev: &GpuDevice,
        pce: &Arc<Pce>,
        srs: &SrsHandle,
        vram: &Arc<VramBudget>,
    ) -> Option<Arc<StreamedPce>> {
        let mut streamed = dev.streamed.lock().unwrap();
        if let Some(s) = find_copy(&mut streamed, pce) {
            return Some(s);
        }
        let n = pce.num_constraints();
        let total = vram.normal_total();
        let h_bytes = GpuProver::h_bytes(n).ok()?;
        let min_msm_bytes = Self::min_msm_bytes(dev, srs, Self::is_resident(dev, srs)).ok()?;
        // The H term's room first: the peak is known once the table is built.
        let mut sizes = plan::Sizes { h_bytes, min_msm_bytes, ..plan::Sizes::default() };
        if !plan::matrices_streamed(total, &sizes) {
            return None;
        }
        // The coefficient table is all it keeps on the device (kilobytes,
        // within the headroom the budget leaves): nothing is reserved, so
        // a partition computing on the whole budget does not stop this.
        let reservation = vram.reserve_up_to(0);
        let t = Instant::now();
        let s = match StreamedPce::new(pce, dev.info.ordinal as i32) {
            Ok(s) => Arc::new(s),
            Err(e) => {
                log::warn!("pce not streamed gpu={} circuit_id={} reason=\"{e}\"", dev.info.ordinal, pce.circuit_id);
                return None;
            }
        };
        sizes.streamed_bytes = GpuProver::streamed_bytes(n, &s).ok()?;
        if !plan::matrices_streamed(total, &sizes) {
            return None;
        }
        let peak = sizes.streamed_bytes;
        // Safety: the engine's PCEs are shared immutably.
        if let Err(e) = unsafe { crate::pce::gpu::pin_matrices(pce) } {
            log::warn!("pce matrices not page-locked circuit_id={} reason=\"{e}\": streamed through pinned buffers", pce.circuit_id);
        }
        log::info!(
            "device pce streamed from host memory gpu={} circuit_id={} peak_bytes={peak} ready_ms={}",
            dev.info.ordinal,
            pce.circuit_id,
            t.elapsed().as_millis()
        );
        streamed.push(Resident::new(pce, s.clone(), reservation));
        Some(s)
    }

    /// VRAM bytes of `pce`'s resident matrices on `dev`, if there are
    /// (not counted as a use: for the plan report).
    pub(super) fn resident_pce_bytes(dev: &GpuDevice, pce: &Pce) -> Option<u64> {
        let pces = dev.pces.lock().unwrap();
        pces.iter().find(|r| r.host.strong_count() > 0 && r.copies(pce)).map(|r| r.vram.bytes())
    }

    /// Whether `dev` keeps `pce` ready to stream (not counted as a use).
    pub(super) fn is_streamed(dev: &GpuDevice, pce: &Pce) -> bool {
        dev.streamed.lock().unwrap().iter().any(|r| r.host.strong_count() > 0 && r.copies(pce))
    }

    /// `pce` ready to stream to `dev`, if it is.
    pub(super) fn find_streamed(dev: &GpuDevice, pce: &Arc<Pce>) -> Option<Arc<StreamedPce>> {
        find_copy(&mut dev.streamed.lock().unwrap(), pce)
    }
}

/// An SRS being loaded straight to every device in service
/// ([`GpuBackend::streamed_srs`]): each device's copy, allocated and
/// reserved, filled slice by slice.
pub(super) struct StreamedSrs<'a> {
    copies: Vec<StreamedCopy<'a>>,
    started: Instant,
}

struct StreamedCopy<'a> {
    dev: &'a GpuDevice,
    srs: DeviceSrs,
    stream: Stream,
    vram: VramReservation,
}

impl ResidentLoad for StreamedSrs<'_> {
    /// Into each device's copy, the devices side by side.
    fn fill(&mut self, slice: &PointSlice<'_>) -> Result<(), ProverError> {
        if let [one] = &mut self.copies[..] {
            return Ok(one.srs.fill(&one.stream, slice)?);
        }
        std::thread::scope(|s| {
            let copies: Vec<_> = self.copies.iter_mut().map(|c| s.spawn(move || c.srs.fill(&c.stream, slice))).collect();
            copies.into_iter().try_for_each(|c| c.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        })?;
        Ok(())
    }

    fn finish(self: Box<Self>, srs: &Arc<SrsHandle>) {
        let ms = self.started.elapsed().as_millis();
        for c in self.copies {
            let bytes = c.vram.bytes();
            log::info!("device SRS uploaded gpu={} bytes={bytes} upload_ms={ms} from=file", c.dev.info.ordinal);
            c.dev.resident.lock().unwrap().push(Resident::new(srs, Arc::new(c.srs), c.vram));
        }
    }
}
