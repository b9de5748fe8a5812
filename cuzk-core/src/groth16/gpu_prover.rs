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
//! and B MSMs on a second thread, in their own workspace, while the H MSM
//! runs: each fills the other's phases that leave the multiply pipe idle
//! (-5.6 % of GPU time per 2^27 partition on the H200). Starting them
//! during the H term as well measured slower: the NTTs lose more than the
//! MSMs gain (docs/BENCHMARKS.md).
//!
//! B_G2 runs on the GPU: on the CPU it is ~40x slower (docs/BENCHMARKS.md)
//! and could not hide behind the GPU's work.
//!
//! With the SRS in host memory and several circuits, [`GpuOptions::batched`]
//! turns the order around after the H MSMs: each of L, A, B_G1 and B_G2
//! runs once for the whole batch ([`batch`]), so each SRS chunk crosses
//! PCIe once per batch instead of once per circuit.

mod batch;
pub use batch::{BatchedMsms, BATCH_MSMS_FROM_CIRCUITS};

use super::gpu_srs::{Points, SrsPoints};
use super::prover::{assemble, check_params, check_same_shape, MsmResults, ProveError};
use super::Proof;
use crate::arith::Density;
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

/// The scalars of the variables set in `density`, in order. Parallel: at
/// 2^27 variables one thread takes ~1 s per query, all of it on the GPU's
/// critical path. Each thread takes a range of variables and writes its
/// set ones where `rank` says they start.
fn compact(scalars: &[Fr], density: &Density) -> Vec<Fr> {
    let n = scalars.len();
    let total = density.rank(n);
    let per = n.div_ceil(crate::par::threads().max(1)).max(1 << 16);
    let mut out: Vec<Fr> = Vec::with_capacity(total);
    std::thread::scope(|s| {
        let mut rest = &mut out.spare_capacity_mut()[..total];
        for start in (0..n).step_by(per) {
            let end = (start + per).min(n);
            let (mine, tail) = rest.split_at_mut(density.rank(end) - density.rank(start));
            rest = tail;
            s.spawn(move || {
                let mut slots = mine.iter_mut();
                for i in (start..end).filter(|&i| density.get(i)) {
                    slots.next().expect("rank counts every set bit").write(scalars[i]);
                }
            });
        }
    });
    // Every slot of 0..total was written: the ranges cover 0..n and each
    // wrote exactly rank(end) - rank(start) values.
    unsafe { out.set_len(total) };
    out
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
                self.query_msms(params, points, pa, Witness::Host, opts, &mut ws, &mut times)?.with_h(h)
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
                        let (h, witness) = self.h_msm_and_witness(params, points, pa, &mut st.bufs, opts, &mut ws)?;
                        times.h_msm = t.elapsed() - times.h_term;
                        std::thread::scope(|s| {
                            let staging = next.map(|(npa, sp)| s.spawn(move || self.restage_h(npa, sp.log_n, &mut sp.bufs)));
                            let results = self.query_msms(params, points, pa, witness, opts, &mut ws, &mut times);
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

    /// Device bytes of the query MSMs' workspace ([`GpuOptions::overlap_queries`]):
    /// the largest of L, A, B_G1 and B_G2 with points and scalars on the device.
    pub fn query_workspace_bytes(device: i32, params: &Parameters) -> cuzk_sys::Result<u64> {
        let n1 = params.l.len().max(params.a.len()).max(params.b_g1.len()) as u64;
        let n2 = params.b_g2.len() as u64;
        let opts = MsmOptions::default();
        let g1 = msm::workspace_bytes::<G1>(device, n1, true, true, opts)?;
        Ok(g1.max(msm::workspace_bytes::<G2>(device, n2, true, true, opts)?))
    }

    /// The H MSM from h in `bufs.a` on this thread; on another, the
    /// witness upload into `bufs.b`, then the query MSMs in `ws_queries`
    /// (and, once the witness is in, `next`'s a, b, c staged on a third).
    /// Phase times as measured on their threads: they overlap.
    #[allow(clippy::too_many_arguments)]
    fn msms_overlapped(
        &self,
        params: &Parameters,
        points: SrsPoints<'_>,
        pa: &ProvingAssignment,
        bufs: &mut HTermBuffers,
        opts: GpuOptions,
        ws: &mut MsmWorkspace,
        ws_queries: &mut MsmWorkspace,
        next: Option<(&ProvingAssignment, &mut StagedH)>,
        times: &mut GpuTimings,
    ) -> (Result<MsmResults, GpuProveError>, Option<Result<(), GpuProveError>>) {
        let HTermBuffers { a: h_buf, b: aux_buf, c: scratch, .. } = bufs;
        let t = Instant::now();
        let (h, queries, staged_next) = std::thread::scope(|s| {
            let queries = s.spawn(move || {
                let mut q_times = GpuTimings::default();
                let witness = match self.upload_witness(pa, aux_buf, scratch) {
                    Ok(w) => w,
                    Err(e) => return (Err(e), q_times, None),
                };
                let staging = next.map(|(npa, sp)| s.spawn(move || self.restage_h(npa, sp.log_n, &mut sp.bufs)));
                let q = self.query_msms(params, points, pa, witness, opts, ws_queries, &mut q_times);
                (q, q_times, staging.map(join))
            });
            let h = self.h_msm(params, points, h_buf, opts, ws);
            times.h_msm = t.elapsed();
            let (q, q_times, staged) = join(queries);
            let GpuTimings { l_msm, a_msm, b_g1_msm, b_g2_msm, compact, .. } = q_times;
            *times = GpuTimings { l_msm, a_msm, b_g1_msm, b_g2_msm, compact, ..*times };
            (h, q, staged)
        });
        (h.and_then(|h| Ok(queries?.with_h(h))), staged_next)
    }

    /// The H MSM from h in `bufs.a` while another thread uploads the
    /// witness into `bufs.b` (free once h is computed); `bufs.c` becomes
    /// the compaction scratch.
    fn h_msm_and_witness<'b>(
        &self,
        params: &Parameters,
        points: SrsPoints<'_>,
        pa: &ProvingAssignment,
        bufs: &'b mut HTermBuffers,
        opts: GpuOptions,
        ws: &mut MsmWorkspace,
    ) -> Result<(G1Projective, Witness<'b>), GpuProveError> {
        let HTermBuffers { a: h_buf, b: aux_buf, c: scratch, .. } = bufs;
        let (h, witness) = std::thread::scope(|s| {
            let upload = s.spawn(|| self.upload_witness(pa, aux_buf, scratch));
            (self.h_msm(params, points, h_buf, opts, ws), join(upload))
        });
        Ok((h?, witness?))
    }

    /// The H MSM, its scalars (h) in `h_buf`.
    fn h_msm(
        &self,
        params: &Parameters,
        points: SrsPoints<'_>,
        h_buf: &DeviceBuffer<FrRepr>,
        opts: GpuOptions,
        ws: &mut MsmWorkspace,
    ) -> Result<G1Projective, GpuProveError> {
        let h_scalars = Input::Device { buf: h_buf, offset: 0, len: params.h.len() };
        self.g1_msm(ws, points.g1(Points::H, 0..params.h.len()), h_scalars, opts)
    }

    /// `pa`'s aux witness uploaded into `aux_buf`, queries compacted into
    /// `scratch`; on the host when it does not fit them (longer than the
    /// H domain: never for R1CS from synthesis, but possible).
    fn upload_witness<'b>(
        &self,
        pa: &ProvingAssignment,
        aux_buf: &'b mut DeviceBuffer<FrRepr>,
        scratch: &'b mut DeviceBuffer<FrRepr>,
    ) -> Result<Witness<'b>, GpuProveError> {
        let aux = scalars_repr(&pa.aux_assignment);
        if aux.len() > aux_buf.len() || aux.len() > scratch.len() {
            return Ok(Witness::Host);
        }
        aux_buf.copy_from_host(&Stream::new(self.device)?, 0, aux)?;
        Ok(Witness::Device { aux: aux_buf, scratch })
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

    /// The scalars of the aux variables in `density`, for a query's MSM:
    /// compacted on the host, or on the device into the scratch buffer.
    fn query_scalars<'w>(
        &self,
        aux: &'w [Fr],
        density: &Density,
        witness: &'w mut Witness<'_>,
        compacted: &'w mut Vec<Fr>,
    ) -> Result<Input<'w, FrRepr>, GpuProveError> {
        match witness {
            Witness::Host => {
                *compacted = compact(aux, density);
                Ok(host(compacted))
            }
            Witness::Device { aux: buf, scratch } => {
                let stream = Stream::new(self.device)?;
                let len = cuzk_sys::density::compact_fr(&stream, buf, aux.len(), density.words(), scratch)?;
                stream.synchronize()?;
                Ok(Input::Device { buf: &**scratch, offset: 0, len })
            }
        }
    }

    /// The MSMs of the L, A and B queries.
    #[allow(clippy::too_many_arguments)]
    fn query_msms(
        &self,
        params: &Parameters,
        points: SrsPoints<'_>,
        pa: &ProvingAssignment,
        mut witness: Witness<'_>,
        opts: GpuOptions,
        ws: &mut MsmWorkspace,
        times: &mut GpuTimings,
    ) -> Result<QueryMsms, GpuProveError> {
        let inputs = &pa.input_assignment;
        let aux = &pa.aux_assignment;
        let n_in = inputs.len();
        let b_in = pa.b_input_density.count();
        let mut t = Instant::now();
        let mut lap = || std::mem::replace(&mut t, Instant::now()).elapsed();
        let l_scalars = match &witness {
            Witness::Host => host(aux),
            Witness::Device { aux: buf, .. } => Input::Device { buf, offset: 0, len: aux.len() },
        };
        let l = self.g1_msm(ws, points.g1(Points::L, 0..params.l.len()), l_scalars, opts)?;
        times.l_msm = lap();
        // The inputs are a handful of scalars: compacted on the host.
        let b_inputs = compact(inputs, &pa.b_input_density);
        let mut compacted = Vec::new();
        let a_aux = self.query_scalars(aux, &pa.a_aux_density, &mut witness, &mut compacted)?;
        times.compact = lap();
        let a = self.g1_msm(ws, points.g1(Points::A, 0..n_in), host(inputs), opts)?
            + self.g1_msm(ws, points.g1(Points::A, n_in..params.a.len()), a_aux, opts)?;
        times.a_msm = lap();
        let b_aux = self.query_scalars(aux, &pa.b_aux_density, &mut witness, &mut compacted)?;
        times.compact += lap();
        let b_g1 = self.g1_msm(ws, points.g1(Points::BG1, 0..b_in), host(&b_inputs), opts)?
            + self.g1_msm(ws, points.g1(Points::BG1, b_in..params.b_g1.len()), b_aux, opts)?;
        times.b_g1_msm = lap();
        let mut g2_msm = |p, s: Input<'_, FrRepr>| -> Result<G2Projective, GpuProveError> {
            Ok(g2(msm::msm_in::<G2>(ws, p, s, opts.msm_g2.or(opts.msm))?.0))
        };
        let b_g2 = g2_msm(points.g2(0..b_in), host(&b_inputs))? + g2_msm(points.g2(b_in..params.b_g2.len()), b_aux)?;
        times.b_g2_msm = lap();
        Ok(QueryMsms { l, a, b_g1, b_g2 })
    }
}

/// The MSM results other than H's.
struct QueryMsms {
    l: G1Projective,
    a: G1Projective,
    b_g1: G1Projective,
    b_g2: G2Projective,
}

impl QueryMsms {
    fn with_h(self, h: G1Projective) -> MsmResults {
        let QueryMsms { l, a, b_g1, b_g2 } = self;
        MsmResults { h, l, a, b_g1, b_g2 }
    }
}

/// A scoped thread's result; its panic goes on in the joining thread.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// Where the MSMs after H read the aux witness from.
enum Witness<'a> {
    /// Host memory: each query's scalars are compacted on the host and
    /// uploaded by its MSM.
    Host,
    /// Uploaded once into `aux`; each query is compacted on the device into
    /// `scratch` (the H term's b and c buffers, free once h is computed).
    Device { aux: &'a DeviceBuffer<FrRepr>, scratch: &'a mut DeviceBuffer<FrRepr> },
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

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use rand::{Rng, SeedableRng};

    /// The parallel compaction equals the obvious filter, for densities
    /// from empty to full and sizes around the per-thread split.
    #[test]
    fn compact_equals_filter() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
        for n in [0usize, 1, 63, 64, 65, 1000, (1 << 16) - 1, (1 << 16) + 1, 3 * (1 << 16) + 17, 1 << 19] {
            let scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
            for p in [0.0, 0.03, 0.5, 1.0] {
                let mut d = Density::new();
                for i in 0..n {
                    d.push();
                    if rng.gen_bool(p) {
                        d.set(i);
                    }
                }
                let want: Vec<Fr> = (0..n).filter(|&i| d.get(i)).map(|i| scalars[i]).collect();
                assert_eq!(compact(&scalars, &d), want, "n {n}, density {p}");
            }
        }
    }
}
