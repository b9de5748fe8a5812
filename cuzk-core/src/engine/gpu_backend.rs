//! The CUDA backend (feature `cuda`): [`GpuProver`] behind the engine's
//! interlock phases.
//!
//! - `prestage` (under `mem_mtx`): make the SRS resident in VRAM if it is
//!   not and there is room (uploaded once, kept while the host SRS lives),
//!   then upload circuit 0's a, b, c into the H buffers the worker reserved.
//! - `compute` (under `compute_mtx`): a [`Plan`] for the worker's
//!   reservation and the VRAM free beside it, run by [`GpuProver::run`]
//!   (the H terms and every MSM; see `gpu_prover::plan` for the regimes).
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

use super::backend::{DeviceInfo, ProveInput, ProverBackend, ProverError};
use super::interlock::VramReservation;
use crate::groth16::gpu_prover::plan::{Request, Sizes};
use crate::groth16::gpu_prover::{msm_sizes, GpuProveError, GpuProver, Plan, StagedH};
use crate::groth16::gpu_srs::{pin_host_points, DeviceSrs, SrsPoints};
use crate::groth16::{assemble, MsmResults, Proof};
use crate::srs::Parameters;
use blstrs::Scalar as Fr;
use cuzk_sys::msm::{self, MsmOptions, G1, G2};
use ff::Field;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

/// VRAM left out of the budget for the CUDA context, CUB and the driver.
const VRAM_HEADROOM: u64 = 1 << 30;

/// A proving key kept in VRAM, with the budget it holds.
struct ResidentSrs {
    params: Weak<Parameters>,
    srs: Arc<DeviceSrs>,
    last_used: Instant,
    _vram: VramReservation,
}

struct GpuDevice {
    info: DeviceInfo,
    prover: GpuProver,
    resident: Mutex<Vec<ResidentSrs>>,
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
/// resident SRS if there is one.
pub struct GpuStaged {
    first: Option<StagedH>,
    srs: Option<Arc<DeviceSrs>>,
}

/// A batch after `compute`: its MSM results, for the epilogue on the CPU.
pub struct GpuComputed {
    params: Arc<Parameters>,
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
                q.name, q.sm_count, q.compute_capability.0, q.compute_capability.1,
                crate::config::format_size(q.total_mem_bytes), crate::config::format_size(vram_bytes)
            );
            let info = DeviceInfo { ordinal: ordinal as u32, name: q.name, vram_bytes };
            devices.push(GpuDevice { info, prover, resident: Mutex::default() });
        }
        Ok(GpuBackend { devices, randomness: Randomness::Fresh, keep_srs_resident: true })
    }

    /// Every proof uses this r and s (tests compare bytes with the CPU).
    pub fn with_fixed_randomness(mut self, r: Fr, s: Fr) -> Self {
        self.randomness = Randomness::Fixed(r, s);
        self
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

    /// The resident copy of `input.params` on `dev`, if there is one.
    fn find_resident(dev: &GpuDevice, params: &Arc<Parameters>) -> Option<Arc<DeviceSrs>> {
        let mut resident = dev.resident.lock().unwrap();
        // A host SRS that was evicted frees its device copy.
        resident.retain(|r| r.params.strong_count() > 0);
        let r = resident.iter_mut().find(|r| std::ptr::eq(r.params.as_ptr(), Arc::as_ptr(params)))?;
        r.last_used = Instant::now();
        Some(r.srs.clone())
    }

    /// Makes `input.params` resident when it fits with room left for one
    /// more working set (another worker's), evicting idle copies of other
    /// SRSs least recently used first.
    fn make_resident(&self, dev: &GpuDevice, input: &ProveInput<'_>) -> Result<Option<Arc<DeviceSrs>>, ProverError> {
        if let Some(srs) = Self::find_resident(dev, input.params) {
            return Ok(Some(srs));
        }
        if !self.keep_srs_resident {
            return Ok(None);
        }
        let bytes = DeviceSrs::bytes(input.params);
        let want = bytes + self.vram_needed(input);
        let mut resident = dev.resident.lock().unwrap();
        while input.vram.free() < want {
            let idle = resident.iter().enumerate().filter(|(_, r)| Arc::strong_count(&r.srs) == 1).min_by_key(|(_, r)| r.last_used);
            match idle.map(|(i, _)| i) {
                Some(i) => {
                    let gone = resident.remove(i);
                    log::info!("device SRS evicted gpu={} bytes={}", dev.info.ordinal, gone._vram.bytes());
                }
                None => return Ok(None),
            }
        }
        let Some(vram) = input.vram.try_reserve(bytes) else { return Ok(None) };
        let t = Instant::now();
        let srs = Arc::new(DeviceSrs::upload(dev.info.ordinal as i32, input.params)?);
        log::info!(
            "device SRS uploaded gpu={} bytes={} upload_ms={}",
            dev.info.ordinal, bytes, t.elapsed().as_millis()
        );
        resident.push(ResidentSrs { params: Arc::downgrade(input.params), srs: srs.clone(), last_used: Instant::now(), _vram: vram });
        Ok(Some(srs))
    }

    fn points<'a>(params: &'a Parameters, srs: &'a Option<Arc<DeviceSrs>>) -> SrsPoints<'a> {
        match srs {
            Some(d) => SrsPoints::Device(d),
            None => SrsPoints::Host(params),
        }
    }

    /// The VRAM sizes of `input` on `dev` that a plan is made from.
    fn sizes(dev: &GpuDevice, input: &ProveInput<'_>, resident: bool) -> Result<Sizes, ProverError> {
        let Some(first) = input.assignments.first() else { return Ok(Sizes::default()) };
        let o = dev.info.ordinal as i32;
        let (n1, n2) = msm_sizes(input.params);
        let whole = |on_dev: bool, opts: MsmOptions, n1: u64, n2: u64| -> Result<u64, ProverError> {
            let g1 = msm::workspace_bytes::<G1>(o, n1, on_dev, false, opts)?;
            Ok(g1.max(msm::workspace_bytes::<G2>(o, n2, on_dev, false, opts)?))
        };
        // The smallest MSM worth running beside the H buffers: chunks of
        // 2^20 points (a 2^27 circuit in 16 GiB: 12 GiB of H buffers, 4
        // GiB of MSM workspace).
        let min_chunk = 1u64 << 20;
        let small = MsmOptions { max_chunk_points: min_chunk, max_sort_entries: min_chunk, ..Default::default() };
        Ok(Sizes {
            h_bytes: GpuProver::h_bytes(first.num_constraints())?,
            msm_bytes: whole(false, MsmOptions::default(), n1, n2)?,
            query_bytes: if resident { GpuProver::query_workspace_bytes(o, input.params)? } else { 0 },
            min_msm_bytes: whole(resident, small, n1.min(min_chunk), n2.min(min_chunk))?,
        })
    }

    /// Plans `input` within `granted` bytes (borrowing from the budget's
    /// free VRAM what the plan takes beyond them, when `may_borrow`) and
    /// runs it (the executor logs the plan).
    fn plan_and_run(
        &self,
        dev: &GpuDevice,
        input: &ProveInput<'_>,
        srs: Option<Arc<DeviceSrs>>,
        first: Option<StagedH>,
        granted: u64,
        may_borrow: bool,
    ) -> Result<GpuComputed, ProverError> {
        let sizes = Self::sizes(dev, input, srs.is_some())?;
        let req = Request {
            circuits: input.assignments.len(),
            srs_resident: srs.is_some(),
            first_staged: first.is_some(),
            granted,
            spare: if may_borrow { input.vram.free() } else { 0 },
            sizes,
        };
        let mut plan = Plan::choose(&req);
        // What the plan borrows, reserved for the call; where another
        // worker took it meanwhile, the plan without it.
        let borrowed = match plan.borrowed(&sizes) {
            0 => None,
            bytes => {
                let r = input.vram.try_reserve(bytes);
                if r.is_none() {
                    plan = plan.without_borrowing();
                }
                r
            }
        };
        let points = Self::points(input.params, &srs);
        let results = dev.prover.run(input.params, points, input.assignments, first, &plan)?;
        drop(borrowed);
        Ok(GpuComputed { params: input.params.clone(), results: results.into_iter().map(|(m, _)| m).collect() })
    }
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

    /// The H buffers plus the largest MSM workspace (points from the host:
    /// the upper bound).
    fn vram_needed(&self, input: &ProveInput<'_>) -> u64 {
        let Some(first) = input.assignments.first() else { return 0 };
        let h = GpuProver::h_bytes(first.num_constraints()).unwrap_or(0);
        let (n1, n2) = msm_sizes(input.params);
        let Some(dev) = self.devices.first() else { return 0 };
        let o = dev.info.ordinal as i32;
        // An error here (none expected: it only sizes buffers) shows up
        // again, with its message, when the MSM runs.
        let g1 = msm::workspace_bytes::<G1>(o, n1, false, false, MsmOptions::default()).unwrap_or(0);
        let g2 = msm::workspace_bytes::<G2>(o, n2, false, false, MsmOptions::default()).unwrap_or(0);
        h + g1.max(g2)
    }

    fn prestage(&self, device: u32, input: &ProveInput<'_>) -> Result<GpuStaged, ProverError> {
        let dev = self.device(device)?;
        let srs = self.make_resident(dev, input)?;
        if srs.is_none() {
            pin_host_points(input.params); // once per SRS; MSMs stream its points
        }
        let first = match input.assignments.first() {
            Some(pa) => Some(dev.prover.stage_h(pa)?),
            None => None,
        };
        Ok(GpuStaged { first, srs })
    }

    fn compute(&self, device: u32, staged: GpuStaged, input: &ProveInput<'_>) -> Result<GpuComputed, ProverError> {
        let dev = self.device(device)?;
        let GpuStaged { first, srs } = staged;
        self.plan_and_run(dev, input, srs, first, self.vram_needed(input), true)
    }

    fn compute_fallback(&self, device: u32, vram_granted: u64, input: &ProveInput<'_>) -> Result<GpuComputed, ProverError> {
        let dev = self.device(device)?;
        let srs = Self::find_resident(dev, input.params);
        if srs.is_none() {
            pin_host_points(input.params);
        }
        // Within what the card has free too (less the headroom the budget
        // keeps): after an out-of-memory in `compute` the budget's figure
        // is what misjudged (another user of the card took memory).
        let card_free = cuzk_sys::free_memory(dev.info.ordinal as i32)?.saturating_sub(VRAM_HEADROOM);
        if card_free < vram_granted {
            log::warn!(
                "gpu={device} has {} free beside the budget's grant of {}: planning within it",
                crate::config::format_size(card_free),
                crate::config::format_size(vram_granted)
            );
        }
        self.plan_and_run(dev, input, srs, None, vram_granted.min(card_free), false)
    }

    fn epilogue(&self, _device: u32, computed: GpuComputed) -> Result<Vec<Proof>, ProverError> {
        let GpuComputed { params, results } = computed;
        let mut rng = rand_core::OsRng;
        Ok(results
            .into_iter()
            .map(|m| {
                let (r, s) = match self.randomness {
                    Randomness::Fresh => (Fr::random(&mut rng), Fr::random(&mut rng)),
                    Randomness::Fixed(r, s) => (r, s),
                };
                assemble(&params.vk, m, r, s)
            })
            .collect())
    }
}
