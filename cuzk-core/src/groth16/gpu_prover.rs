//! The GPU Groth16 prover (feature `cuda`): the same proofs as the CPU
//! prover, byte for byte, with the heavy algebra on one device.
//!
//! Per circuit: the H term on the device (cuzk-sys h_stage / h_compute: six
//! NTTs and the pointwise step), h stays there and feeds the H MSM
//! directly. While the H MSM runs, another thread uploads the aux witness
//! into the H term's second buffer (free once h is computed); the L MSM
//! reads it there, and the A and B queries' scalars (the variables present
//! in A or B, to line up with the params' dense point lists) are compacted
//! from it on the device into the third buffer. So the witness crosses
//! PCIe once, and no scalars are compacted or copied on the host. The
//! points come from host memory or from a resident [`DeviceSrs`]. Scalars
//! 0 and 1 need no separate path for correctness: in the GPU Pippenger a 0
//! produces no bucket entry and a 1 one entry, i.e. one mixed addition.
//! The epilogue is the CPU prover's own ([`super::prover::assemble`]), so
//! equal MSM results mean equal bytes.
//!
//! The work is split for the engine's interlock: [`GpuProver::stage_h`]
//! uploads a circuit's a, b, c (pre-staging), [`GpuProver::msms`] runs the
//! kernels, and `assemble` runs on the CPU after the GPU is released. In a
//! batch, [`GpuOptions::prestage_next`] uploads circuit i + 1's a, b, c
//! into a second set of H buffers while circuit i runs its MSMs.
//!
//! With the SRS resident, [`GpuOptions::overlap_queries`] runs the L, A
//! and B MSMs ([`queries`]) on a second thread, in their own workspace,
//! while the H MSM runs: each fills the other's phases that leave the
//! multiply pipe idle (sorts, bucket reductions, host round trips). Not
//! during the H term: the NTTs are bound by memory bandwidth, which the
//! MSMs' sorts take from them, so the NTTs lose more than the MSMs gain.
//!
//! With the SRS in host memory, [`GpuOptions::l_beside_h`] runs the L MSM
//! beside the H MSM in the H term's idle third buffer: the H MSM is bound
//! by its arithmetic, L by its point uploads.
//!
//! B_G2 runs on the GPU: blst on the CPU is over an order of magnitude
//! slower, could not hide behind the GPU's work, and the CPU's cores are
//! the next proof's synthesis.
//!
//! With the SRS in host memory and several circuits, [`GpuOptions::batched`]
//! turns the order around after the H MSMs: each of L, A, B_G1 and B_G2
//! runs once for the whole batch ([`batch`]), so each SRS chunk crosses
//! PCIe once per batch instead of once per circuit.

mod batch;
mod beside;
mod queries;
pub use batch::{BatchedMsms, BATCH_MSMS_FROM_CIRCUITS};
use beside::Beside;
use queries::{compact, Witness};

use super::gpu_srs::{Points, SrsPoints};
use super::prover::{assemble, check_params, check_same_shape, MsmResults, ProveError};
use super::Proof;
use crate::cs::ProvingAssignment;
use crate::srs::Parameters;
use blstrs::{G1Projective, G2Projective, Scalar as Fr};
use cuzk_sys::msm::{self, Input, MsmOptions, MsmWorkspace, G1, G2};
use cuzk_sys::{DeviceBuffer, FrRepr, HTermBuffers, NttContext, Stream};
use log::debug;
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum GpuProveError {
    #[error(transparent)]
    Prove(#[from] ProveError),
    #[error("no CUDA device: {0}")]
    NoDevice(String),
    #[error("GPU failure: {0}")]
    Gpu(#[from] cuzk_sys::Error),
    #[error("H term on the CPU: {0}")]
    CpuH(#[from] crate::ntt::NttError),
}

// blstrs' types are #[repr(transparent)] over blst's; cuzk-sys speaks blst.
fn scalars_repr(s: &[Fr]) -> &[FrRepr] {
    const _: () = assert!(std::mem::size_of::<Fr>() == std::mem::size_of::<FrRepr>());
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const FrRepr, s.len()) }
}
fn host(s: &[Fr]) -> Input<'_, FrRepr> {
    Input::Host(scalars_repr(s))
}
fn g1(raw: msm::G1ProjRepr) -> G1Projective {
    const _: () = assert!(std::mem::size_of::<G1Projective>() == std::mem::size_of::<msm::G1ProjRepr>());
    unsafe { std::mem::transmute::<msm::G1ProjRepr, G1Projective>(raw) }
}
fn g2(raw: msm::G2ProjRepr) -> G2Projective {
    const _: () = assert!(std::mem::size_of::<G2Projective>() == std::mem::size_of::<msm::G2ProjRepr>());
    unsafe { std::mem::transmute::<msm::G2ProjRepr, G2Projective>(raw) }
}

/// The first CUDA device, or a clear error where there is none (including
/// a build of cuzk-sys without nvcc).
pub fn default_device() -> Result<i32, GpuProveError> {
    match cuzk_sys::device_count() {
        Ok(n) if n > 0 => Ok(0),
        Ok(_) => Err(GpuProveError::NoDevice(
            if cuzk_sys::AVAILABLE { "no CUDA device found" } else { "cuzk-sys was built without CUDA (no nvcc)" }
                .into(),
        )),
        Err(e) => Err(GpuProveError::NoDevice(e.to_string())),
    }
}

/// log2 of the H term's domain for circuits of `num_constraints`.
pub fn h_log_n(num_constraints: usize) -> Result<u32, GpuProveError> {
    let log_n = crate::ntt::Domain::log_size_for(num_constraints).map_err(ProveError::from)?;
    Ok(log_n.max(1))
}

/// One circuit's a, b, c uploaded for the H term (the pre-staged part).
pub struct StagedH {
    bufs: HTermBuffers,
    log_n: u32,
}

/// How [`GpuProver::msms`] may use device memory.
#[derive(Clone, Copy, Debug, Default)]
pub struct GpuOptions {
    /// Chunking of the G1 MSMs (bounds their workspace).
    pub msm: Option<MsmOptions>,
    /// The same for the G2 MSM (B_G2); None: as `msm`.
    pub msm_g2: Option<MsmOptions>,
    /// Compute the H term on the CPU (no H buffers in VRAM).
    pub h_on_cpu: bool,
    /// In a batch, upload circuit i + 1's a, b, c into a second set of H
    /// buffers (another [`GpuProver::h_bytes`] of VRAM) while circuit i's
    /// MSMs run, taking the upload off the GPU's critical path.
    pub prestage_next: bool,
    /// Points from host memory and several circuits: after every circuit's
    /// H MSM (the H buffers are then freed), run L, A, B_G1 and B_G2 as
    /// batch MSMs, one SRS upload for every circuit (ignored for SRS
    /// points in VRAM, and for one circuit). Replaces `prestage_next`.
    pub batched: Option<BatchedMsms>,
    /// With the SRS points in VRAM: L, A, B_G1 and B_G2 run on a second
    /// thread in their own MSM workspace ([`GpuProver::query_workspace_bytes`]
    /// more VRAM) while the H MSM runs, so that each fills the other's
    /// phases that leave the multiply pipe idle (sorts, bucket reductions,
    /// host round trips). Ignored for points from host memory (both would
    /// stream points over one PCIe link), with `h_on_cpu`, and when that
    /// workspace cannot be allocated (then the MSMs run one after another).
    pub overlap_queries: bool,
    /// With the SRS points in host memory: the L MSM runs beside the H MSM
    /// on a second thread, in the memory of the H term's third buffer (idle
    /// until A's scalars are compacted into it), chunked to fit there; then
    /// B_G1 and B_G2, B's compacted scalars at the start of that buffer and
    /// the rest their workspace ([`beside`]). No extra VRAM; L's point
    /// uploads fill the H MSM's compute, which is bound by arithmetic, not
    /// by PCIe. Ignored for points in VRAM (L then has no uploads to hide,
    /// and in chunks that fit that buffer it is slower than whole after the
    /// H MSM), with `h_on_cpu`, for batch MSMs, where the witness is not on
    /// the device, and where L's chunks in that buffer would be under half
    /// those it gets after the H MSM, or no plan fits at all (an MSM needs
    /// ~90 MB at least): every chunk adds a pass over the buckets, so
    /// smaller chunks cost more than the overlap saves.
    pub l_beside_h: bool,
}

impl GpuOptions {
    /// Chunked MSMs whose workspace fits in `budget` bytes: the G1 MSMs of
    /// at most `n1` points and the G2 MSM of `n2`, scalars from the host,
    /// points from the device when `points_on_device`. The rest default.
    pub fn msms_within(device: i32, n1: u64, n2: u64, points_on_device: bool, budget: u64) -> cuzk_sys::Result<Self> {
        Ok(Self {
            msm: Some(msm::options_for_budget::<G1>(device, n1, points_on_device, false, budget)?),
            msm_g2: Some(msm::options_for_budget::<G2>(device, n2, points_on_device, false, budget)?),
            ..Default::default()
        })
    }
}

/// Where one circuit's GPU time went (host wall clock around calls that
/// return when the device is done).
#[derive(Clone, Copy, Debug, Default)]
pub struct GpuTimings {
    /// Uploading a, b, c (unless pre-staged) and the H term's NTTs.
    pub h_term: Duration,
    pub h_msm: Duration,
    pub l_msm: Duration,
    pub a_msm: Duration,
    pub b_g1_msm: Duration,
    pub b_g2_msm: Duration,
    /// Compacting the scalars of A and B by their densities (on the device
    /// when the witness is there, else on the host).
    pub compact: Duration,
    /// The circuit's whole GPU phase, wall clock: about the sum of the
    /// phases when they run one after another, less when the query MSMs
    /// overlap the H MSM ([`GpuOptions::overlap_queries`]). For batch MSMs,
    /// the sum of the phases.
    pub wall: Duration,
    /// The L MSM ran beside the H MSM ([`GpuOptions::l_beside_h`]; `l_msm`
    /// is then its time on its own thread).
    pub l_beside_h: bool,
    /// B_G1 and B_G2 ran beside it too, after L.
    pub b_beside_h: bool,
}

impl GpuTimings {
    /// The sum of the phases.
    pub fn total(&self) -> Duration {
        self.h_term + self.h_msm + self.l_msm + self.a_msm + self.b_g1_msm + self.b_g2_msm + self.compact
    }
}

/// The device-side state of the prover on one GPU: the NTT tables (built
/// once, shared by every thread proving on this device).
pub struct GpuProver {
    device: i32,
    ntt: NttContext,
}

impl GpuProver {
    pub fn new(device: i32) -> Result<Self, GpuProveError> {
        if device < 0 || device >= cuzk_sys::device_count().unwrap_or(0) {
            default_device()?;
            return Err(GpuProveError::NoDevice(format!("no CUDA device {device}")));
        }
        // The MSMs' local memory, taken now so free memory measured after
        // this already lacks it (cuzk_sys::msm::reserve_local_memory).
        cuzk_sys::msm::reserve_local_memory(device)?;
        Ok(GpuProver { device, ntt: NttContext::new(device)? })
    }

    pub fn device(&self) -> i32 {
        self.device
    }

    /// Device bytes of the H term's buffers for circuits of `num_constraints`.
    pub fn h_bytes(num_constraints: usize) -> Result<u64, GpuProveError> {
        Ok(HTermBuffers::bytes(h_log_n(num_constraints)?))
    }

    /// Allocates H buffers and uploads `pa`'s a, b, c into them.
    pub fn stage_h(&self, pa: &ProvingAssignment) -> Result<StagedH, GpuProveError> {
        let log_n = h_log_n(pa.num_constraints())?;
        let mut bufs = HTermBuffers::new(self.device, log_n)?;
        self.restage_h(pa, log_n, &mut bufs)?;
        Ok(StagedH { bufs, log_n })
    }

    /// The H buffers in `slot` holding `pa`'s a, b, c: as they are when
    /// `ready` (already staged), else uploaded into them, allocated the
    /// first time.
    fn staged_h<'s>(
        &self,
        slot: &'s mut Option<StagedH>,
        pa: &ProvingAssignment,
        ready: bool,
    ) -> Result<&'s mut StagedH, GpuProveError> {
        match *slot {
            Some(ref mut st) => {
                if !ready {
                    self.restage_h(pa, st.log_n, &mut st.bufs)?;
                }
                Ok(st)
            }
            None => Ok(slot.insert(self.stage_h(pa)?)),
        }
    }

    fn restage_h(&self, pa: &ProvingAssignment, log_n: u32, bufs: &mut HTermBuffers) -> Result<(), GpuProveError> {
        let stream = Stream::new(self.device)?;
        self.ntt.h_stage(&stream, scalars_repr(&pa.a), scalars_repr(&pa.b), scalars_repr(&pa.c), log_n, bufs)?;
        Ok(())
    }

    /// One of a circuit's a, b, c uploaded into `buf` and zero-padded to
    /// the 2^log_n domain (what `restage_h` does for all three); returns
    /// when it is in. (log_n comes from the constraint count, so a, b
    /// and c fit the domain; the buffer checks both ranges.)
    fn stage_input(&self, host: &[Fr], log_n: u32, buf: &mut DeviceBuffer<FrRepr>) -> Result<(), GpuProveError> {
        let stream = Stream::new(self.device)?;
        buf.copy_from_host(&stream, 0, scalars_repr(host))?;
        buf.zero_async(&stream, host.len(), (1usize << log_n).saturating_sub(host.len()))?;
        stream.synchronize()?;
        Ok(())
    }

    /// The MSM results of every circuit (each then goes through
    /// [`assemble`]). `first`, if given, is circuit 0 already staged by
    /// [`GpuProver::stage_h`]; its buffers are reused for the others.
    pub fn msms(
        &self,
        params: &Parameters,
        points: SrsPoints<'_>,
        assignments: &[ProvingAssignment],
        first: Option<StagedH>,
        opts: GpuOptions,
    ) -> Result<Vec<MsmResults>, GpuProveError> {
        Ok(self.msms_timed(params, points, assignments, first, opts)?.into_iter().map(|(m, _)| m).collect())
    }

    /// [`GpuProver::msms`] with where each circuit's time went.
    pub fn msms_timed(
        &self,
        params: &Parameters,
        points: SrsPoints<'_>,
        assignments: &[ProvingAssignment],
        first: Option<StagedH>,
        opts: GpuOptions,
    ) -> Result<Vec<(MsmResults, GpuTimings)>, GpuProveError> {
        let Some(shape) = assignments.first() else { return Ok(Vec::new()) };
        for (index, other) in assignments.iter().enumerate().skip(1) {
            check_same_shape(shape, other, index)?;
        }
        check_params(params, shape)?;
        if let (Some(plan), SrsPoints::Host(_), 2..) = (opts.batched, points, assignments.len()) {
            return self.msms_batched(params, points, assignments, first, opts, plan);
        }
        // `current` holds circuit i's a, b, c when `ready`; `spare` is the
        // second set that circuit i + 1 is staged into (prestage_next),
        // swapped in once that upload is done.
        let mut ready = first.is_some();
        let mut current = first;
        let mut spare: Option<StagedH> = None;
        // One workspace for every MSM of the call (each would otherwise
        // allocate and free its own: ~6 ms per large MSM). The engine's
        // reservation covers one MSM workspace for the whole compute phase.
        let mut ws = MsmWorkspace::new(self.device);
        // The query MSMs' own workspace, allocated at its full size now: one
        // that grew would free its old buffer, and cudaFree waits for the
        // whole device, H MSM included.
        let mut ws_queries = (opts.overlap_queries && points.on_device() && !opts.h_on_cpu)
            .then(|| MsmWorkspace::with_bytes(self.device, Self::query_workspace_bytes(self.device, params)?))
            .transpose()
            .unwrap_or_else(|e| {
                log::warn!("no VRAM for a second MSM workspace ({e}); the query MSMs run after the H MSM");
                None
            });
        let mut out = Vec::with_capacity(assignments.len());
        for (i, pa) in assignments.iter().enumerate() {
            let t = Instant::now();
            let mut times = GpuTimings::default();
            let results = if opts.h_on_cpu {
                let h = self.h_msm_via_cpu(params, points, pa, opts, &mut ws, &mut times)?;
                self.query_msms(params, points, pa, Witness::Host, Beside::default(), opts, &mut ws, &mut times)?.with_h(h)
            } else {
                let st = self.staged_h(&mut current, pa, ready)?;
                self.h_compute(st)?;
                times.h_term = t.elapsed();
                let log_n = st.log_n;
                let next = assignments.get(i + 1).filter(|_| opts.prestage_next);
                if next.is_some() && spare.is_none() {
                    spare = Some(StagedH { bufs: HTermBuffers::new(self.device, log_n)?, log_n });
                }
                let next = next.zip(spare.as_mut());
                let (results, staged_next) = match ws_queries.as_mut() {
                    Some(wq) => self.msms_overlapped(params, points, pa, &mut st.bufs, opts, &mut ws, wq, next, &mut times),
                    None => {
                        let (h, beside, witness) =
                            self.h_msm_and_witness(params, points, pa, &mut st.bufs, opts, &mut ws, &mut times)?;
                        times.h_msm = t.elapsed() - times.h_term;
                        std::thread::scope(|s| {
                            let staging = next.map(|(npa, sp)| s.spawn(move || self.restage_h(npa, sp.log_n, &mut sp.bufs)));
                            let results = self.query_msms(params, points, pa, witness, beside, opts, &mut ws, &mut times);
                            (results.map(|q| q.with_h(h)), staging.map(join))
                        })
                    }
                };
                ready = match staged_next {
                    Some(staged) => {
                        staged?;
                        std::mem::swap(&mut current, &mut spare);
                        true
                    }
                    None => false,
                };
                results?
            };
            times.wall = t.elapsed();
            debug!("gpu msms: {times:?}");
            out.push((results, times));
        }
        Ok(out)
    }

    /// The H term on the CPU and its MSM (the VRAM has no room for the H
    /// buffers).
    fn h_msm_via_cpu(
        &self,
        params: &Parameters,
        points: SrsPoints<'_>,
        pa: &ProvingAssignment,
        opts: GpuOptions,
        ws: &mut MsmWorkspace,
        times: &mut GpuTimings,
    ) -> Result<G1Projective, GpuProveError> {
        let t = Instant::now();
        let h = crate::groth16::h_term::h_coefficients(&pa.a, &pa.b, &pa.c)?;
        times.h_term = t.elapsed();
        let h = self.g1_msm(ws, points.g1(Points::H, 0..params.h.len()), host(&h[..params.h.len()]), opts)?;
        times.h_msm = t.elapsed() - times.h_term;
        Ok(h)
    }

    /// The H term of the staged a, b, c, left in `st.bufs.a`.
    fn h_compute(&self, st: &mut StagedH) -> Result<(), GpuProveError> {
        let stream = Stream::new(self.device)?;
        self.ntt.h_compute(&stream, st.log_n, &mut st.bufs)?;
        stream.synchronize()?;
        Ok(())
    }

    fn g1_msm(
        &self,
        ws: &mut MsmWorkspace,
        points: Input<'_, msm::G1AffineRepr>,
        scalars: Input<'_, FrRepr>,
        opts: GpuOptions,
    ) -> Result<G1Projective, GpuProveError> {
        Ok(g1(msm::msm_in::<G1>(ws, points, scalars, opts.msm)?.0))
    }
}

/// A scoped thread's result; its panic goes on in the joining thread.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// [`super::prove_synthesized_deterministic`] on the GPU `device`, points
/// streamed from host memory.
pub fn prove_synthesized_deterministic_gpu(
    device: i32,
    params: &Parameters,
    assignments: &[ProvingAssignment],
    randomness: &[(Fr, Fr)],
) -> Result<Vec<Proof>, GpuProveError> {
    if randomness.len() != assignments.len() {
        return Err(ProveError::RandomnessCount { randomness: randomness.len(), circuits: assignments.len() }.into());
    }
    if assignments.is_empty() {
        return Ok(Vec::new());
    }
    let prover = GpuProver::new(device)?;
    let results = prover.msms(params, SrsPoints::Host(params), assignments, None, GpuOptions::default())?;
    Ok(results.into_iter().zip(randomness).map(|(m, &(r, s))| assemble(&params.vk, m, r, s)).collect())
}
