//! The CUDA backend (feature `cuda`): [`GpuProver`] behind the engine's
//! interlock phases.
//!
//! - `keep_resident` (under `mem_mtx`, before the worker sizes its working
//!   set): make the SRS resident in VRAM where the planner keeps it so
//!   (`plan::srs_resident`; uploaded once, kept while the engine holds the
//!   SRS). Once every device keeps a copy (`holds_points`), the engine
//!   releases the SRS's host points (where they can be read again from
//!   their file): a 32 GiB PoRep's 44 GiB go back to the host budget. A
//!   path that needs them in host memory again (a device without a copy,
//!   points streamed) reads them again first, within the budget
//!   (`SrsHandle::host_points`). Where every device will keep it by that
//!   rule (judged from the file's head before loading, with the matrices
//!   of the circuit's PCE counted as its first partition counts them:
//!   their size from the `.pce` file's header, the load whole where no
//!   file tells it yet), the engine loads it straight into the devices'
//!   copies instead (`resident_load`: `resident::StreamedSrs`), never
//!   whole in host memory.
//! - `prestage` (under `mem_mtx`): stage circuit 0's a, b, c into the H
//!   buffers the worker reserved:
//!   uploaded, or, for partitions synthesized witness-only, computed by
//!   the SpMV from the circuit's matrices resident on the device (its
//!   witness into a z the reservation counts).
//!
//! Each device keeps the matrices of the circuits whose partitions the
//! engine synthesizes witness-only ([`ProverBackend::abc_on_device`]):
//! resident where the VRAM budget holds them beside a working set, else
//! ready to stream from host memory where it holds the streamed SpMV's
//! peak (two H buffers, z, a staging area: a 16 GiB card); its device
//! copies (SRSs, matrices) are `resident`'s. A partition whose matrices
//! are gone by the time it is proved gets a, b, c computed on the host
//! (slower, same bytes).
//! - `compute` (under `compute_mtx`): a [`Plan`] for the worker's
//!   reservation and the VRAM free beside it, run by [`GpuProver::run`]
//!   (the H terms and every MSM; see `gpu_prover::plan` for the regimes).
//! - `compute_beside` (an urgent call, beside the holder of
//!   `compute_mtx`): `compute` within the worker's reservation alone.
//! - `compute_fallback` (under `compute_mtx`, reservation did not fit, or
//!   `compute` ran out of device memory): the same, planned within the
//!   granted bytes alone and what the card has free (SRS points from host
//!   memory unless already resident).
//! - `epilogue` (no lock): the CPU prover's `assemble`.
//!
//! An SRS whose points stream from host memory is page-locked there once
//! (`pin_host_points`), so its chunks upload by DMA.
//!
//! Every path gives the same bytes for the same r and s (tested).

use super::backend::{DeviceInfo, MatricesLease, PceAtLoad, ProveInput, ProverBackend, ProverError, ResidentLoad, StageAhead};
use super::interlock::DeviceLocks;
use super::memory::{Purpose, Reservation};
use super::plan_report::DevicePlan;
use super::srs_handle::SrsHandle;
use crate::cs::ProvingAssignment;
use crate::groth16::gpu_prover::plan::{self, HInputs, HTerm, Request, Sizes};
use crate::groth16::gpu_prover::{h_log_n, msm_sizes, GpuProveError, GpuProver, Matrices, Plan, StagedH, StagedWitness};
use crate::groth16::gpu_srs::{pin_host_points, DeviceQuery, DeviceSrs, SrsPoints};
use crate::groth16::{assemble, MsmResults, Proof};
use crate::pce::gpu::{GpuPce, StreamedPce};
use crate::pce::Pce;
use crate::srs::KeyShape;
use blstrs::Scalar as Fr;
use cuzk_sys::msm::{self, MsmOptions, G1, G2};
use ff::Field;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

#[cfg(test)]
mod card_model;
mod device_plan;
mod resident;
mod resident_query;
use resident::Resident;

/// VRAM left out of the budget for the CUDA context, CUB and the driver.
const VRAM_HEADROOM: u64 = 1 << 30;

/// How far the card's free memory may fall short of a fallback's grant
/// before that is logged as another user of the card.
const CARD_FREE_SLACK: u64 = 256 << 20;

struct GpuDevice {
    info: DeviceInfo,
    prover: GpuProver,
    resident: Mutex<Vec<Resident<SrsHandle, DeviceSrs>>>,
    /// Query points resident where their SRS is not (`resident_query`).
    queries: Mutex<Vec<Resident<SrsHandle, DeviceQuery>>>,
    pces: Mutex<Vec<Resident<Pce, GpuPce>>>,
    streamed: Mutex<Vec<Resident<Pce, StreamedPce>>>,
    /// The circuits (and why) whose a, b, c this device has had computed
    /// on the host: a warning the first time, then a debug line (a
    /// WinningPoSt beside a PoRep stream does so every proof).
    host_abc_said: Mutex<HashSet<(String, String)>>,
}

/// r and s of each proof.
#[derive(Clone, Copy, Debug)]
enum Randomness {
    Fresh,
    /// Tests: the same r, s for every proof, to compare bytes across paths.
    Fixed(Fr, Fr),
}

pub struct GpuBackend {
    devices: Vec<GpuDevice>,
    randomness: Randomness,
    keep_srs_resident: bool,
}

/// A batch after `prestage`: circuit 0's a, b, c in VRAM, and the
/// resident SRS and matrices if there are.
pub struct GpuStaged {
    first: Option<StagedH>,
    /// Circuit 0's witness alone, staged ahead of its H buffers
    /// ([`ProverBackend::stage_ahead`]).
    witness: Option<StagedWitness>,
    srs: Option<Arc<DeviceSrs>>,
    pce: Option<Arc<GpuPce>>,
}

/// A batch after `compute`: its MSM results, for the epilogue on the CPU.
pub struct GpuComputed {
    srs: Arc<SrsHandle>,
    results: Vec<MsmResults>,
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl From<cuzk_sys::Error> for ProverError {
    fn from(e: cuzk_sys::Error) -> Self {
        use cuzk_sys::ErrorCode as C;
        let message = e.to_string();
        match e.code {
            C::OutOfMemory => ProverError::OutOfMemory(message),
            C::DeviceLost | C::NoCuda => ProverError::DeviceLost(message),
            C::Cuda => ProverError::Device(message),
            // Our own calls' arguments are checked before they reach the
            // native code: one it refuses is our bug, not the request's.
            C::InvalidArgument | C::Internal | C::Unknown(_) => ProverError::Internal(message),
        }
    }
}

impl From<GpuProveError> for ProverError {
    fn from(e: GpuProveError) -> Self {
        match e {
            GpuProveError::Prove(e) => e.into(),
            GpuProveError::Gpu(e) => e.into(),
            GpuProveError::NoDevice(m) => ProverError::DeviceLost(m),
            GpuProveError::CpuH(e) => ProverError::BadInput(e.to_string()),
            e @ GpuProveError::Plan(_) => ProverError::Internal(e.to_string()),
        }
    }
}

impl GpuBackend {
    /// Every CUDA device; an error that says why where there is none.
    pub fn new() -> Result<Self, String> {
        let n = cuzk_sys::device_count().map_err(err)?;
        if n == 0 {
            // default_device says why (no driver, a CPU-only build, ...).
            return Err(crate::groth16::gpu_prover::default_device().err().map_or_else(|| "no CUDA device".into(), err));
        }
        let mut devices = Vec::new();
        for ordinal in 0..n {
            // The prover first: it takes the MSMs' local memory, which the
            // budget measured next must not count as free.
            let prover = GpuProver::new(ordinal).map_err(err)?;
            let q = cuzk_sys::DeviceInfo::query(ordinal).map_err(err)?;
            // Measured once: what is free now, less headroom (other users of
            // the card are not ours to spend).
            let vram_bytes = q.free_mem_bytes.saturating_sub(VRAM_HEADROOM);
            log::info!(
                "GPU found gpu={ordinal} name={:?} sms={} cc={}.{} vram_total={} vram_budget={}",
                q.name,
                q.sm_count,
                q.compute_capability.0,
                q.compute_capability.1,
                crate::config::format_size(q.total_mem_bytes),
                crate::config::format_size(vram_bytes)
            );
            let info = DeviceInfo { ordinal: ordinal as u32, name: q.name, vram_bytes };
            devices.push(GpuDevice {
                info,
                prover,
                resident: Mutex::default(),
                queries: Mutex::default(),
                pces: Mutex::default(),
                streamed: Mutex::default(),
                host_abc_said: Mutex::default(),
            });
        }
        Ok(GpuBackend { devices, randomness: Randomness::Fresh, keep_srs_resident: true })
    }

    /// Every proof uses this r and s (tests compare bytes with the CPU).
    pub fn with_fixed_randomness(mut self, r: Fr, s: Fr) -> Self {
        self.randomness = Randomness::Fixed(r, s);
        self
    }

    /// Whether `device` keeps `pce` ready to stream its matrices from host
    /// memory (they do not fit it resident).
    pub fn streams_matrices(&self, device: u32, pce: &Arc<Pce>) -> bool {
        self.device(device).is_ok_and(|dev| Self::find_streamed(dev, pce).is_some())
    }

    /// Whether `device` keeps query points of `srs` resident without the
    /// SRS (`resident_query`).
    pub fn keeps_query_points(&self, device: u32, srs: &Arc<SrsHandle>) -> bool {
        self.device(device).is_ok_and(|dev| Self::find_query(dev, srs).is_some())
    }

    /// Never keep an SRS in VRAM (points stream from host memory).
    pub fn without_resident_srs(mut self) -> Self {
        self.keep_srs_resident = false;
        self
    }

    fn device(&self, ordinal: u32) -> Result<&GpuDevice, ProverError> {
        let no_device = || ProverError::Internal(format!("no CUDA device {ordinal} in this backend"));
        self.devices.iter().find(|d| d.info.ordinal == ordinal).ok_or_else(no_device)
    }

    /// Device bytes of one call's working set on `dev`: the H buffers, the
    /// largest MSM whole and `z` bytes of witness. The MSM's workspace
    /// stages its points too where they come from the host: at 2^27 that
    /// is ~32 GiB against ~17 GiB with them resident, the difference
    /// between one working set and two beside a resident SRS and matrices.
    fn working_set(dev: &GpuDevice, params: &dyn KeyShape, constraints: usize, z: u64, points_on_device: bool) -> u64 {
        let h = h_log_n(constraints).map_or(0, cuzk_sys::HTermBuffers::bytes);
        let (n1, n2) = msm_sizes(params);
        let o = dev.info.ordinal as i32;
        // An error here (none expected: it only sizes buffers) shows up
        // again, with its message, when the MSM runs.
        let g1 = msm::workspace_bytes::<G1>(o, n1, points_on_device, false, MsmOptions::default()).unwrap_or(0);
        let g2 = msm::workspace_bytes::<G2>(o, n2, points_on_device, false, MsmOptions::default()).unwrap_or(0);
        h + g1.max(g2) + z
    }

    /// Device bytes of the working set that a circuit's resident matrices
    /// are kept beside where the SRS's points stay in host memory: the H
    /// buffers, `z` bytes of witness for the SpMV, and MSMs chunked within
    /// one H buffer, as they run there (L and B beside the H MSM in its
    /// third buffer, every MSM in chunks of that size: `plan::within_one_buffer`).
    /// The SpMV on the device saves the streamed matrices' upload (~0.25 s
    /// at 2^27) whatever the chunks: a whole MSM's workspace from host
    /// memory (~32 GiB at 2^27) would keep the matrices off every card
    /// under ~58 GB.
    fn chunked_working_set_from_host(constraints: usize, z: u64) -> u64 {
        h_log_n(constraints).map_or(0, |log_n| cuzk_sys::HTermBuffers::bytes(log_n) + cuzk_sys::HTermBuffers::c_bytes(log_n)) + z
    }

    /// The working set of `input` on `dev` ([`Self::working_set_of`]),
    /// with its points where they are now: on the device where its SRS is
    /// resident, else from the host.
    fn vram_needed_on(dev: &GpuDevice, input: &ProveInput<'_>) -> u64 {
        Self::working_set_of(dev, input, Self::is_resident(dev, input.srs))
    }

    /// The H buffers plus the largest MSM workspace (its points from the
    /// device or the host), and z where the circuits carry their witness
    /// only (for the SpMV).
    fn working_set_of(dev: &GpuDevice, input: &ProveInput<'_>, points_on_device: bool) -> u64 {
        let Some(first) = input.assignments.first() else { return 0 };
        let z = match input.pce {
            Some(pce) if input.witness_only() => pce.z_bytes(),
            _ => 0,
        };
        Self::working_set(dev, &**input.srs, first.num_constraints(), z, points_on_device)
    }

    /// The VRAM sizes of `input` on `dev` that a plan is made from.
    /// `pce_resident`: `input.pce`'s matrices are on `dev` (then the SpMV
    /// may run there, into a z of the circuit's variables).
    fn sizes(
        dev: &GpuDevice,
        input: &ProveInput<'_>,
        resident: bool,
        pce_resident: bool,
        streamed: Option<&StreamedPce>,
    ) -> Result<Sizes, ProverError> {
        let Some(first) = input.assignments.first() else { return Ok(Sizes::default()) };
        let o = dev.info.ordinal as i32;
        let (n1, n2) = msm_sizes(&**input.srs);
        Ok(Sizes {
            h_bytes: GpuProver::h_bytes(first.num_constraints())?,
            msm_bytes: Self::msm_workspace_bytes(o, (n1, n2), resident, MsmOptions::default())?,
            query_bytes: if resident { GpuProver::query_workspace_bytes(o, &**input.srs)? } else { 0 },
            min_msm_bytes: Self::min_msm_bytes(dev, &**input.srs, resident)?,
            z_bytes: input.pce.filter(|_| pce_resident).map_or(0, |p| p.z_bytes()),
            streamed_bytes: match streamed {
                Some(s) => GpuProver::streamed_bytes(first.num_constraints(), s)?,
                None => 0,
            },
        })
    }

    /// Whether a VRAM budget of `total` bytes on `dev` holds the H buffers
    /// of `srs`'s domain beside the smallest MSM workspace (points on the
    /// device where `points_on_device`): a plan with the whole budget then
    /// computes the H term there.
    fn h_term_fits(dev: &GpuDevice, srs: &dyn KeyShape, total: u64, points_on_device: bool) -> bool {
        match (GpuProver::h_bytes(srs.counts().h + 1), Self::min_msm_bytes(dev, srs, points_on_device)) {
            (Ok(h_bytes), Ok(min_msm_bytes)) => plan::h_term_fits(&Sizes { h_bytes, min_msm_bytes, ..Sizes::default() }, total),
            _ => false,
        }
    }

    /// The smallest MSM workspace worth running beside the H buffers:
    /// chunks of 2^20 points (a 2^27 circuit in 16 GiB: 12 GiB of H
    /// buffers, 4 GiB of MSM workspace). Below it, a plan puts the H term
    /// on the CPU.
    fn min_msm_bytes(dev: &GpuDevice, params: &dyn KeyShape, points_on_device: bool) -> Result<u64, ProverError> {
        Self::chunked_msm_bytes(dev, params, points_on_device, 1 << 20)
    }

    /// The MSM workspace of `params`'s MSMs in chunks of `chunk` points.
    fn chunked_msm_bytes(dev: &GpuDevice, params: &dyn KeyShape, points_on_device: bool, chunk: u64) -> Result<u64, ProverError> {
        let (n1, n2) = msm_sizes(params);
        let opts = MsmOptions { max_chunk_points: chunk, max_sort_entries: chunk, ..Default::default() };
        Self::msm_workspace_bytes(dev.info.ordinal as i32, (n1.min(chunk), n2.min(chunk)), points_on_device, opts)
    }

    /// The larger of the G1 MSM's workspace over `n1` points and the G2
    /// MSM's over `n2`, with `opts`, scalars from the host.
    fn msm_workspace_bytes(ordinal: i32, (n1, n2): (u64, u64), points_on_device: bool, opts: MsmOptions) -> Result<u64, ProverError> {
        let g1 = msm::workspace_bytes::<G1>(ordinal, n1, points_on_device, false, opts)?;
        Ok(g1.max(msm::workspace_bytes::<G2>(ordinal, n2, points_on_device, false, opts)?))
    }

    /// a, b, c of `circuits` witness-only circuits computed on the host
    /// (`why`: not on the device): reserved in the engine's host budget
    /// first, as the engine reserved their witness only. One circuit's at
    /// a time, two where the next is staged beside.
    fn reserve_host_abc(dev: &GpuDevice, input: &ProveInput<'_>, circuits: usize, why: &str) -> Result<Option<Reservation>, ProverError> {
        let constraints = input.assignments.first().map_or(0, ProvingAssignment::num_constraints) as u64;
        let bytes = 3 * constraints * std::mem::size_of::<Fr>() as u64 * circuits.min(2) as u64;
        let bytes_text = crate::config::format_size(bytes);
        let first = dev.host_abc_said.lock().unwrap().insert((input.srs.circuit_id().to_string(), why.to_string()));
        let (level, again) = if first { (log::Level::Warn, " (said once per circuit and reason)") } else { (log::Level::Debug, "") };
        log::log!(
            level,
            "gpu={} computes a, b, c of witness-only circuits on the host ({bytes_text}): {why}{again} circuit_id={}",
            dev.info.ordinal,
            input.srs.circuit_id()
        );
        let Some(budget) = input.host_memory else { return Ok(None) };
        budget.try_reserve(bytes, Purpose::Partition).map(Some).ok_or_else(|| {
            ProverError::OutOfHostMemory(format!(
                "a, b, c of witness-only circuits computed on the host need {bytes_text} beyond the engine's budget ({why})"
            ))
        })
    }

    /// `granted` within what the card has free too (less the headroom the
    /// budget keeps), beyond `allocated` bytes of the grant the call holds
    /// on the card already: after an out-of-memory in `compute` the
    /// budget's figure is what misjudged (another user of the card took
    /// memory).
    fn within_card(dev: &GpuDevice, granted: u64, allocated: u64) -> Result<u64, ProverError> {
        let card_free = cuzk_sys::free_memory(dev.info.ordinal as i32)?.saturating_sub(VRAM_HEADROOM).saturating_add(allocated);
        // Megabytes short are the driver's own (the budget was measured
        // once at start): planned within, but not worth a warning.
        if card_free.saturating_add(CARD_FREE_SLACK) < granted {
            log::warn!(
                "gpu={} has {} free beside the budget's grant of {}: planning within it",
                dev.info.ordinal,
                crate::config::format_size(card_free),
                crate::config::format_size(granted)
            );
        }
        Ok(granted.min(card_free))
    }

    /// The SRS's host points page-locked (once per copy of the points; read
    /// again first where they were released) where `srs` is not resident:
    /// the MSMs stream them.
    fn pin_unless_resident(input: &ProveInput<'_>, srs: &Option<Arc<DeviceSrs>>) -> Result<(), ProverError> {
        if srs.is_none() {
            let host = input.srs.host_points()?;
            pin_host_points(&host);
        }
        Ok(())
    }

    /// Plans `input` within `granted` bytes (borrowing from the budget's
    /// free VRAM what the plan takes beyond them, when `may_borrow`: see
    /// [`plan::borrowable`]) and runs it (the executor logs the plan).
    #[allow(clippy::too_many_arguments)]
    fn plan_and_run(
        &self,
        dev: &GpuDevice,
        input: &ProveInput<'_>,
        srs: Option<Arc<DeviceSrs>>,
        pce: Option<Arc<GpuPce>>,
        streamed: Option<Arc<StreamedPce>>,
        first: Option<StagedH>,
        granted: u64,
        may_borrow: bool,
    ) -> Result<GpuComputed, ProverError> {
        let sizes = Self::sizes(dev, input, srs.is_some(), pce.is_some(), streamed.as_deref())?;
        let req = Request {
            circuits: input.assignments.len(),
            srs_resident: srs.is_some(),
            first_staged: first.as_ref().map(StagedH::inputs),
            pce_resident: pce.is_some(),
            pce_streamed: streamed.is_some(),
            witness_only: input.witness_only(),
            granted,
            spare: if may_borrow { plan::borrowable(input.vram.free(), granted) } else { 0 },
            sizes,
        };
        // What the plan borrows, reserved for the call; where another
        // worker took it meanwhile, the plan without it.
        let (plan, borrowed) = Plan::choose_and_borrow(&req, |bytes| input.vram.try_reserve(bytes));
        // Circuit 0's a, b, c are on the device already where it was staged.
        let unstaged = input.assignments.len() - usize::from(first.is_some());
        let _host_abc = if input.witness_only() && plan.inputs == HInputs::Uploaded && unstaged > 0 {
            let why = if pce.is_none() {
                "the circuit's matrices are not resident on the device".to_string()
            } else if plan.h == HTerm::Cpu {
                format!("no room for the H buffers in {} of VRAM", crate::config::format_size(granted))
            } else {
                format!("no room for z beside the H buffers in {} of VRAM", crate::config::format_size(granted))
            };
            Self::reserve_host_abc(dev, input, unstaged, &why)?
        } else {
            None
        };
        // One circuit's H term at a time.
        let _h_copies = if plan.h == HTerm::Cpu {
            log::warn!(
                "gpu={} computes the H term on the host: no room for its buffers beside an MSM in {} of VRAM",
                dev.info.ordinal,
                crate::config::format_size(granted)
            );
            input.reserve_host_h_term(1)?
        } else {
            None
        };
        // The points from the device where they are resident, else from
        // host memory (read again first where they were released) but for
        // a query resident on its own.
        let host;
        let query = if srs.is_none() { Self::find_query(dev, input.srs) } else { None };
        let points = match (&srs, &query) {
            (Some(d), _) => SrsPoints::Device(d),
            (None, q) => {
                host = input.srs.host_points()?;
                match q {
                    Some(q) => SrsPoints::HostBut(&host, q),
                    None => SrsPoints::Host(&host),
                }
            }
        };
        let matrices = input.pce.map(|p| Matrices { host: p, device: pce.as_deref(), streamed: streamed.as_deref() });
        let results = dev.prover.run_until(&**input.srs, points, input.assignments, matrices, first, &plan, input.stop)?;
        drop(borrowed);
        Ok(GpuComputed { srs: input.srs.clone(), results: results.into_iter().map(|(m, _)| m).collect() })
    }
}

/// What a call stages ahead ([`ProverBackend::stage_ahead`]): its witness
/// (`z` bytes), where it carries its witness only and its SRS and matrices
/// are `resident` on the device (its points and matrices then come from
/// VRAM, leaving PCIe to the upload), the next call left room for it where
/// the grant keeps `min_resident_working` bytes (a working set with MSMs
/// in chunks of [`plan::RESIDENT_MIN_CHUNK_POINTS`]).
fn stages_ahead(witness_only: bool, resident: bool, z: u64, min_resident_working: u64) -> Option<StageAhead> {
    (witness_only && resident).then_some(StageAhead { bytes: z, min_grant: min_resident_working })
}

impl ProverBackend for GpuBackend {
    type Staged = GpuStaged;
    type Computed = GpuComputed;

    fn name(&self) -> &str {
        "cuda"
    }

    fn devices(&self) -> Vec<DeviceInfo> {
        self.devices.iter().map(|d| d.info.clone()).collect()
    }

    /// See [`GpuBackend::vram_needed_on`]; 0 for a device this backend
    /// does not have (prestaging or computing there fails, saying so).
    fn vram_needed(&self, device: u32, input: &ProveInput<'_>) -> u64 {
        self.device(device).map_or(0, |dev| Self::vram_needed_on(dev, input))
    }

    /// The SRS resident where the planner keeps it so
    /// ([`GpuBackend::make_resident`]), else A's points where it keeps
    /// those ([`GpuBackend::make_query_resident`]); a device that runs out
    /// of memory uploading them proves with the points from host memory.
    fn keep_resident(&self, device: u32, input: &ProveInput<'_>) -> Result<(), ProverError> {
        let dev = self.device(device)?;
        let made = match self.make_resident(dev, input) {
            Err(ProverError::OutOfMemory(why)) => {
                log::warn!("gpu={device} device SRS not uploaded ({why}): its points stream from host memory");
                None
            }
            made => made?,
        };
        if made.is_some() {
            return Ok(());
        }
        match self.make_query_resident(dev, input) {
            Err(ProverError::OutOfMemory(why)) => {
                log::warn!("gpu={device} device query points not uploaded ({why}): they stream from host memory");
                Ok(())
            }
            made => made,
        }
    }

    /// See [`GpuBackend::streamed_srs`].
    fn resident_load(&self, shape: &dyn KeyShape, pce: &PceAtLoad, devices: &[Arc<DeviceLocks>]) -> Option<Box<dyn ResidentLoad + '_>> {
        Some(Box::new(self.streamed_srs(shape, pce, devices)?))
    }

    /// Its resident copy: the engine releases the host points where every
    /// device has one.
    fn holds_points(&self, device: u32, srs: &SrsHandle) -> bool {
        self.device(device).is_ok_and(|dev| Self::is_resident(dev, srs))
    }

    fn prestage(&self, device: u32, input: &ProveInput<'_>) -> Result<GpuStaged, ProverError> {
        let dev = self.device(device)?;
        let srs = Self::find_resident(dev, input.srs);
        Self::pin_unless_resident(input, &srs)?;
        // Witness-only partitions: their matrices (again, if evicted since
        // synthesis) for the SpMV, whose z the reservation counts.
        let pce = match input.pce {
            Some(p) if input.witness_only() => self.ensure_pce(dev, p, input.srs, input.vram),
            Some(p) => Self::find_pce(dev, p),
            None => None,
        };
        let first = match input.assignments.first() {
            Some(pa) => {
                let on_device = pce.as_deref().filter(|_| input.witness_only());
                let _host_abc = match on_device {
                    None if input.witness_only() => Self::reserve_host_abc(dev, input, 1, "their matrices are not on the device")?,
                    _ => None,
                };
                Some(dev.prover.stage_h(pa, input.pce.map(|p| Matrices { host: p, device: on_device, streamed: None }))?)
            }
            None => None,
        };
        Ok(GpuStaged { first, witness: None, srs, pce })
    }

    fn compute(&self, device: u32, staged: GpuStaged, input: &ProveInput<'_>) -> Result<GpuComputed, ProverError> {
        let dev = self.device(device)?;
        let GpuStaged { first, witness: _, srs, pce } = staged;
        self.plan_and_run(dev, input, srs, pce, None, first, Self::vram_needed_on(dev, input), true)
    }

    /// The call's streams, its own and those its native calls and the
    /// prover's threads create, at the device's greatest priority.
    fn as_urgent<R>(&self, work: impl FnOnce() -> R) -> R {
        let _urgent = cuzk_sys::UrgentStreams::set(true);
        work()
    }

    /// As `compute`, without borrowing: beside another call computing on
    /// the device, the plan keeps to the urgent reservation. The prover
    /// keeps no state of its own across a compute (streams, events and MSM
    /// workspaces are the call's; the NTT tables are read-only; the device
    /// copies are shared under their locks), so two computes on one device
    /// run side by side as a pre-stage beside a compute did.
    fn compute_beside(&self, device: u32, staged: GpuStaged, input: &ProveInput<'_>) -> Result<GpuComputed, ProverError> {
        let dev = self.device(device)?;
        let GpuStaged { first, witness: _, srs, pce } = staged;
        self.plan_and_run(dev, input, srs, pce, None, first, Self::vram_needed_on(dev, input), false)
    }

    /// A witness-only call whose SRS and matrices are resident on the
    /// device stages its witness ahead: the call computing there reads its
    /// points and matrices from VRAM, so the upload has the PCIe link to
    /// itself, and only the SpMV (and the H buffers' allocation) stays in
    /// the compute lock. The next call is left room for its witness where
    /// a grant keeps a working set with the MSMs in chunks of
    /// [`plan::RESIDENT_MIN_CHUNK_POINTS`] points or more: each chunk
    /// beyond the first costs milliseconds, though a partition's MSMs
    /// chunked at all cost ~0.1 s more at 2^27 than whole ones (the scalar
    /// profile and the largest windows need a single chunk), about what
    /// the witness upload staged ahead takes out of the lock.
    fn stage_ahead(&self, device: u32, input: &ProveInput<'_>) -> Option<StageAhead> {
        let dev = self.device(device).ok()?;
        let (pce, first) = (input.pce?, input.assignments.first()?);
        // Not looked up for a partition with a, b, c (a lookup marks the matrices used).
        let resident = input.witness_only() && Self::is_resident(dev, input.srs) && Self::find_pce(dev, pce).is_some();
        let z = pce.z_bytes();
        let min_grant = if resident { Self::min_resident_working_set(dev, &**input.srs, first.num_constraints(), z).ok()? } else { 0 };
        stages_ahead(input.witness_only(), resident, z, min_grant)
    }

    /// Circuit 0's witness into a z of its own (nothing, where the matrices
    /// left the device since [`ProverBackend::stage_ahead`]: the call then
    /// runs as the fallback, its z in the grant).
    fn prestage_ahead(&self, device: u32, input: &ProveInput<'_>) -> Result<GpuStaged, ProverError> {
        let dev = self.device(device)?;
        let srs = Self::find_resident(dev, input.srs);
        let pce = input.pce.and_then(|p| Self::find_pce(dev, p));
        let witness = match (&pce, input.assignments.first()) {
            (Some(pce), Some(pa)) => Some(dev.prover.stage_witness(pce, pa)?),
            _ => None,
        };
        Ok(GpuStaged { first: None, witness, srs, pce })
    }

    /// The H buffers allocated and circuit 0's a, b, c computed into them
    /// by the SpMV over its witness staged ahead, then the plan within the
    /// grant (which holds that witness).
    fn compute_fallback_staged(
        &self,
        device: u32,
        vram_granted: u64,
        staged: GpuStaged,
        input: &ProveInput<'_>,
    ) -> Result<GpuComputed, ProverError> {
        let dev = self.device(device)?;
        let GpuStaged { first, witness, srs, pce } = staged;
        Self::pin_unless_resident(input, &srs)?;
        let on_card = witness.as_ref().map_or(0, StagedWitness::bytes);
        let granted = Self::within_card(dev, vram_granted, on_card)?;
        let first = match (witness, &pce) {
            (Some(w), Some(p)) => Some(dev.prover.stage_h_from_witness(p, w)?),
            _ => first,
        };
        self.plan_and_run(dev, input, srs, pce, None, first, granted, false)
    }

    fn compute_fallback(&self, device: u32, vram_granted: u64, input: &ProveInput<'_>) -> Result<GpuComputed, ProverError> {
        let dev = self.device(device)?;
        let srs = Self::find_resident(dev, input.srs);
        Self::pin_unless_resident(input, &srs)?;
        let granted = Self::within_card(dev, vram_granted, 0)?;
        let pce = input.pce.and_then(|p| Self::find_pce(dev, p));
        // Witness-only partitions whose matrices are not resident: streamed
        // where the device keeps them ready to.
        let streamed = match (input.pce, &pce) {
            (Some(p), None) if input.witness_only() => Self::find_streamed(dev, p),
            _ => None,
        };
        self.plan_and_run(dev, input, srs, pce, streamed, None, granted, false)
    }

    fn epilogue(&self, _device: u32, computed: GpuComputed) -> Result<Vec<Proof>, ProverError> {
        let GpuComputed { srs, results } = computed;
        let mut rng = rand_core::OsRng;
        Ok(results
            .into_iter()
            .map(|m| {
                let (r, s) = match self.randomness {
                    Randomness::Fresh => (Fr::random(&mut rng), Fr::random(&mut rng)),
                    Randomness::Fixed(r, s) => (r, s),
                };
                assemble(srs.vk(), m, r, s)
            })
            .collect())
    }

    /// On every device in service, the matrices resident (uploaded now if
    /// there is room: [`GpuBackend::ensure_pce`]) or else ready to stream
    /// from host memory ([`GpuBackend::ensure_streamed`]), each copy held
    /// by the lease: an SRS upload evicts only copies no one holds.
    fn abc_on_device(&self, pce: &Arc<Pce>, srs: &SrsHandle, devices: &[Arc<DeviceLocks>]) -> Option<MatricesLease> {
        let mut copies: Vec<Arc<dyn std::any::Any + Send + Sync>> = Vec::new();
        for d in devices.iter().filter(|d| d.in_service()) {
            let dev = self.device(d.ordinal).ok()?;
            match self.ensure_pce(dev, pce, srs, &d.vram) {
                Some(resident) => copies.push(resident),
                None => copies.push(self.ensure_streamed(dev, pce, srs, &d.vram)?),
            }
        }
        (!copies.is_empty()).then(|| MatricesLease::holding(copies))
    }

    /// Where every device in service has a VRAM budget with room for the
    /// H buffers of `srs`'s domain beside the smallest MSM workspace (a
    /// plan with its whole budget computes the H term there), points
    /// where they are now.
    fn h_term_on_device(&self, srs: &SrsHandle, devices: &[Arc<DeviceLocks>]) -> bool {
        let mut any = false;
        for d in devices.iter().filter(|d| d.in_service()) {
            let Ok(dev) = self.device(d.ordinal) else { return false };
            if !Self::h_term_fits(dev, srs, d.vram.normal_total(), Self::is_resident(dev, srs)) {
                return false;
            }
            any = true;
        }
        any
    }

    /// See [`GpuBackend::device_plan`]; a device this backend does not
    /// have is left out.
    fn device_plans(&self, srs: &SrsHandle, pce: Option<&Arc<Pce>>, witness_only: bool, devices: &[Arc<DeviceLocks>]) -> Vec<DevicePlan> {
        devices
            .iter()
            .filter(|d| d.in_service())
            .filter_map(|d| Some(self.device_plan(self.device(d.ordinal).ok()?, d, srs, pce, witness_only)))
            .collect()
    }
}
