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
//! a, b, c come from the host ([`HInputs::Uploaded`]) or are computed on
//! the device from the witness and the circuit's resident PCE
//! ([`HInputs::SpmvOnDevice`]): then the witness z is uploaded once, and
//! the L, A and B MSMs read it from there (copied on the device into the
//! H term's second buffer) instead of uploading it again. Assignments
//! that carry their witness only ([`ProvingAssignment::abc_deferred`])
//! need their PCE ([`Matrices`]): on the device, or on the host where the
//! plan uploads a, b, c (computed there just before).
//!
//! The work is split for the engine's interlock: [`GpuProver::stage_h`]
//! stages circuit 0's a, b, c (pre-staging), [`GpuProver::run`] runs the
//! kernels by a [`Plan`] ([`plan`]: where the H term runs and where its
//! inputs come from, which MSMs run beside the H MSM and in which memory,
//! what is staged next, how MSMs are chunked), and `assemble` runs on the
//! CPU after the GPU is released.
//!
//! B_G2 runs on the GPU: blst on the CPU is over an order of magnitude
//! slower, could not hide behind the GPU's work, and the CPU's cores are
//! the next proof's synthesis.

mod batch;
mod beside;
mod inputs;
pub mod plan;
mod queries;
pub use batch::{BatchedMsms, BATCH_MSMS_FROM_CIRCUITS};
use beside::{Beside, InScratch};
use inputs::Abc;
pub use inputs::{Matrices, StagedH, StagedWitness};
pub use plan::{BatchSize, Chunks, HInputs, HTerm, NextInputs, Plan, PointsAt, Queries, Scratch};
use queries::{compact, Witness};

use super::gpu_srs::{Points, SrsPoints};
use super::prover::{assemble, check_params, check_same_shape, MsmResults, ProveError};
use super::{Proof, StopCheck};
use crate::arith::blst_layout::{from_repr, repr};
use crate::cs::ProvingAssignment;
use crate::pce::gpu::GpuPce;
use crate::srs::{KeyShape, Parameters};
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
    #[error("GPU plan: {0}")]
    Plan(String),
}

fn host(s: &[Fr]) -> Input<'_, FrRepr> {
    Input::Host(repr(s))
}
fn g1(raw: msm::G1ProjRepr) -> G1Projective {
    from_repr(raw)
}
fn g2(raw: msm::G2ProjRepr) -> G2Projective {
    from_repr(raw)
}

/// The first CUDA device, or a clear error where there is none (including
/// a build of cuzk-sys without nvcc).
pub fn default_device() -> Result<i32, GpuProveError> {
    match cuzk_sys::device_count() {
        Ok(n) if n > 0 => Ok(0),
        Ok(_) => Err(GpuProveError::NoDevice(
            if cuzk_sys::AVAILABLE { "no CUDA device found" } else { "cuzk-sys was built without CUDA (no nvcc)" }.into(),
        )),
        Err(e) => Err(GpuProveError::NoDevice(e.to_string())),
    }
}

/// log2 of the H term's domain for circuits of `num_constraints`.
pub fn h_log_n(num_constraints: usize) -> Result<u32, GpuProveError> {
    let log_n = crate::ntt::Domain::log_size_for(num_constraints).map_err(ProveError::from)?;
    Ok(log_n.max(1))
}

/// The chunking of a call's MSMs (None: each MSM's default plan), G1 and
/// G2, for scalars in host memory and (`on_device`) for scalars already on
/// the device. These need no staging buffers, so the same budget may hold
/// every point in one chunk where host scalars need several (and only in
/// one chunk does an MSM plan from what its scalars are).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct MsmChunks {
    g1: Option<MsmOptions>,
    g2: Option<MsmOptions>,
    on_device: (Option<MsmOptions>, Option<MsmOptions>),
}

impl MsmChunks {
    /// The G1 and G2 plans for MSMs of `scalars`.
    fn for_scalars(&self, scalars: &Input<'_, FrRepr>) -> (Option<MsmOptions>, Option<MsmOptions>) {
        match scalars {
            Input::Device { .. } => self.on_device,
            _ => (self.g1, self.g2),
        }
    }
}

/// A plan as it runs on a device, with the MSM plans it resolves to.
struct Fitted<'a> {
    plan: Plan,
    chunks: MsmChunks,
    scratch: InScratch,
    abc: Abc<'a>,
}

/// The largest MSMs of a proof: (G1 points, G2 points).
pub fn msm_sizes(params: &dyn KeyShape) -> (u64, u64) {
    let c = params.counts();
    (c.h.max(c.l).max(c.a).max(c.b_g1) as u64, c.b_g2 as u64)
}

/// Where one circuit's GPU time went (host wall clock around calls that
/// return when the device is done).
#[derive(Clone, Copy, Debug, Default)]
pub struct GpuTimings {
    /// Uploading a, b, c or computing them by the SpMV (unless pre-staged),
    /// and the H term's NTTs.
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
    /// overlap the H MSM ([`Queries::BesideH`], [`Queries::InHScratch`]:
    /// the times of those MSMs are then on their own thread). For batch
    /// MSMs, the sum of the phases.
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

    /// Runs `plan` over every circuit: their MSM results (each then goes
    /// through [`assemble`]) and where each circuit's time went. `first`,
    /// if given, is circuit 0 already staged by [`GpuProver::stage_h`]; its
    /// buffers are reused for the others. `points` must be where the plan
    /// reads them from; `pce`, the circuits' PCE, where a, b, c may be
    /// computed from the witness (it must be given for assignments that
    /// carry their witness only). The plan runs as [`GpuProver::fit`]
    /// makes it, and is logged so, one line per call.
    pub fn run(
        &self,
        params: &dyn KeyShape,
        points: SrsPoints<'_>,
        assignments: &[ProvingAssignment],
        pce: Option<Matrices<'_>>,
        first: Option<StagedH>,
        plan: &Plan,
    ) -> Result<Vec<(MsmResults, GpuTimings)>, GpuProveError> {
        self.run_until(params, points, assignments, pce, first, plan, StopCheck::NEVER)
    }

    /// [`GpuProver::run`] that gives up with [`ProveError::Stopped`] at the
    /// next circuit (or, for batch MSMs, query) once `stop` asks it to.
    #[allow(clippy::too_many_arguments)]
    pub fn run_until(
        &self,
        params: &dyn KeyShape,
        points: SrsPoints<'_>,
        assignments: &[ProvingAssignment],
        pce: Option<Matrices<'_>>,
        first: Option<StagedH>,
        plan: &Plan,
        stop: StopCheck<'_>,
    ) -> Result<Vec<(MsmResults, GpuTimings)>, GpuProveError> {
        let Some(shape) = assignments.first() else { return Ok(Vec::new()) };
        for (index, other) in assignments.iter().enumerate().skip(1) {
            check_same_shape(shape, other, index)?;
        }
        check_params(params, shape)?;
        if plan.circuits != assignments.len() {
            return Err(GpuProveError::Plan(format!("planned for {} circuits, given {}", plan.circuits, assignments.len())));
        }
        let t = Instant::now();
        let Fitted { plan, chunks, scratch, abc } = self.fitted(params, points, shape, pce, plan)?;
        log::info!("gpu plan gpu={} {plan} fit_ms={}", self.device, t.elapsed().as_millis());
        if let Queries::Batched(size) = plan.queries {
            let batch = match size {
                BatchSize::Within(budget) => {
                    let (n1, n2) = msm_sizes(params);
                    BatchedMsms::within(self.device, n1, n2, assignments.len(), budget)?
                }
                BatchSize::Exactly(batch) => batch,
            };
            debug!(
                "batch MSMs gpu={} circuits={} g1_sets={} g1_chunk_points={} g2_sets={} g2_chunk_points={}",
                self.device,
                assignments.len(),
                batch.g1_sets,
                batch.g1.max_chunk_points,
                batch.g2_sets,
                batch.g2.max_chunk_points
            );
            return self.msms_batched(params, points, assignments, first, plan.h, abc, chunks, batch, stop);
        }
        // `current` holds circuit i's a, b, c when `ready`; `spare` is the
        // second set that circuit i + 1 is staged into (NextInputs::SecondHBuffers),
        // swapped in once that upload is done.
        let mut ready = first.is_some();
        let mut current = first;
        let mut spare: Option<StagedH> = None;
        // One workspace for every MSM of the call (each would otherwise
        // allocate and free its own: a cudaMalloc and cudaFree of gigabytes
        // per MSM). The engine's reservation covers one MSM workspace for
        // the whole compute phase.
        let mut ws = MsmWorkspace::new(self.device);
        // The query MSMs' own workspace, allocated at its full size now: one
        // that grew would free its old buffer, and cudaFree waits for the
        // whole device, H MSM included.
        let mut ws_queries = (plan.queries == Queries::BesideH)
            .then(|| MsmWorkspace::with_bytes(self.device, Self::query_workspace_bytes(self.device, params)?))
            .transpose()
            .unwrap_or_else(|e| {
                log::warn!("no VRAM for a second MSM workspace ({e}); the query MSMs run after the H MSM");
                None
            });
        let mut out = Vec::with_capacity(assignments.len());
        for (i, pa) in assignments.iter().enumerate() {
            if stop.requested() {
                return Err(ProveError::Stopped.into());
            }
            let t = Instant::now();
            let mut times = GpuTimings::default();
            let results = match plan.h {
                HTerm::Cpu => {
                    let h = self.h_msm_via_cpu(params, points, pa, abc, chunks, &mut ws, &mut times)?;
                    self.query_msms(params, points, pa, Witness::Host, Beside::default(), chunks, &mut ws, &mut times)?.with_h(h)
                }
                HTerm::Device => {
                    let st = self.staged_h(&mut current, pa, ready, abc)?;
                    let next = assignments.get(i + 1).filter(|_| plan.next == NextInputs::SecondHBuffers);
                    if next.is_some() && spare.is_none() {
                        spare = Some(StagedH::new(self.device, st.log_n, abc.spmv.map(GpuPce::num_vars))?);
                    }
                    let next = next.zip(spare.as_mut());
                    let (results, staged_next) = match ws_queries.as_mut() {
                        Some(wq) => self.msms_overlapped(params, points, pa, st, t, chunks, &mut ws, wq, next, abc, &mut times),
                        None => {
                            let (h, beside, witness) =
                                self.h_msm_and_witness(params, points, pa, st, t, chunks, scratch, &mut ws, &mut times)?;
                            std::thread::scope(|s| {
                                let staging = next.map(|(npa, sp)| spawn_alike(s, move || self.restage(npa, sp, abc)));
                                let results = self.query_msms(params, points, pa, witness, beside, chunks, &mut ws, &mut times);
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
                }
            };
            times.wall = t.elapsed();
            debug!("gpu msms: {times:?}");
            out.push((results, times));
        }
        Ok(out)
    }

    /// `plan` as it runs on this device for circuits of `shape`'s shape:
    /// the choices that do not apply dropped ([`Plan::as_fitted`], from
    /// what the device answers here). The H term's third buffer
    /// ([`Queries::InHScratch`]) needs the witness on the device and room
    /// there for chunks good enough (`plan_beside`); the SpMV the H term
    /// on the device and `pce`'s matrices resident there.
    pub fn fit(
        &self,
        params: &dyn KeyShape,
        points: SrsPoints<'_>,
        shape: &ProvingAssignment,
        pce: Option<Matrices<'_>>,
        plan: &Plan,
    ) -> Result<Plan, GpuProveError> {
        Ok(self.fitted(params, points, shape, pce, plan)?.plan)
    }

    fn fitted<'a>(
        &self,
        params: &dyn KeyShape,
        points: SrsPoints<'_>,
        shape: &ProvingAssignment,
        pce: Option<Matrices<'a>>,
        plan: &Plan,
    ) -> Result<Fitted<'a>, GpuProveError> {
        if points.on_device() != (plan.points == PointsAt::Device) {
            return Err(GpuProveError::Plan(format!("the plan reads the SRS points from {:?}; the call has them elsewhere", plan.points)));
        }
        let chunks = self.msm_chunks(params, points, plan.chunks)?;
        let (host_points, h_on_device) = (plan.points == PointsAt::Host, plan.h == HTerm::Device);
        let streams = h_on_device && plan.inputs == HInputs::SpmvStreamed && plan.circuits == 1;
        let abc = self.abc(pce, shape, h_on_device && plan.inputs == HInputs::SpmvOnDevice, streams)?;
        let inputs = match (abc.spmv, abc.streamed) {
            (Some(_), _) => HInputs::SpmvOnDevice,
            (None, Some(_)) => HInputs::SpmvStreamed,
            (None, None) => HInputs::Uploaded,
        };
        // With the points from host memory and L beside the H MSM in the
        // third buffer, every MSM in chunks no larger than that buffer (see
        // `plan`'s module documentation): what L and B there are weighed
        // against. Where L does not run there (a small circuit's buffer
        // holds no chunk worth it), the chunks stay as planned.
        let one_buffer = if plan::chunks_within_third_buffer(plan) {
            let third = HTermBuffers::c_bytes(h_log_n(shape.num_constraints())?);
            let capped = plan::within_one_buffer(plan.chunks, third);
            Some((capped, if capped == plan.chunks { chunks } else { self.msm_chunks(params, points, capped)? }))
        } else {
            None
        };
        // What of L and B the third buffer holds chunks worth running.
        let scratch = match plan.queries {
            Queries::InHScratch(want) if h_on_device => {
                self.in_scratch(params, shape, want, one_buffer.map_or(chunks, |(_, c)| c), !host_points)?
            }
            _ => InScratch::default(),
        };
        let fitted = plan.as_fitted(inputs, scratch.kept(), one_buffer.map(|(capped, _)| capped));
        let chunks = match (fitted.queries, one_buffer) {
            (Queries::InHScratch(_), Some((_, capped))) => capped,
            _ => chunks,
        };
        Ok(Fitted { plan: fitted, chunks, scratch, abc })
    }

    /// The MSMs' chunking for `chunks` (budgets become chunk sizes here,
    /// where the device answers how much memory a plan takes).
    fn msm_chunks(&self, params: &dyn KeyShape, points: SrsPoints<'_>, chunks: Chunks) -> Result<MsmChunks, GpuProveError> {
        Ok(match chunks {
            Chunks::Whole => MsmChunks::default(),
            Chunks::Within(budget) => {
                let (n1, n2) = msm_sizes(params);
                let on_dev = points.on_device();
                let g1 = |scalars_on_device| msm::options_for_budget::<G1>(self.device, n1, on_dev, scalars_on_device, budget);
                let g2 = |scalars_on_device| msm::options_for_budget::<G2>(self.device, n2, on_dev, scalars_on_device, budget);
                MsmChunks { g1: Some(g1(false)?), g2: Some(g2(false)?), on_device: (Some(g1(true)?), Some(g2(true)?)) }
            }
            Chunks::Exactly(o) => MsmChunks { g1: Some(o), g2: Some(o), on_device: (Some(o), Some(o)) },
        })
    }

    /// The H term of `st`'s a, b, c (`times.h_term`: from `t`, when the
    /// circuit started, so an upload not pre-staged counts), then the H MSM
    /// over h on this thread while `beside` runs on another with the H
    /// term's two other buffers, free once h is computed (for the next
    /// inputs' uploads, the witness, query MSMs): the H MSM is bound by
    /// arithmetic and leaves PCIe and, in its sorts and reductions, the
    /// multiply pipe free for the other. `beside` also gets `st`'s z (the
    /// circuit's witness where the SpMV computed its a, b, c). Returns the
    /// H MSM, its own time, and what `beside` returned.
    #[allow(clippy::too_many_arguments)]
    fn h_then_msm_beside<'b, R: Send>(
        &self,
        params: &dyn KeyShape,
        points: SrsPoints<'_>,
        st: &'b mut StagedH,
        t: Instant,
        chunks: MsmChunks,
        ws: &mut MsmWorkspace,
        times: &mut GpuTimings,
        beside: impl FnOnce(&'b mut DeviceBuffer<FrRepr>, &'b mut DeviceBuffer<FrRepr>, &'b mut Option<DeviceBuffer<FrRepr>>) -> R + Send,
    ) -> Result<(G1Projective, Duration, R), GpuProveError> {
        self.h_compute(st)?;
        times.h_term = t.elapsed();
        let StagedH { bufs: HTermBuffers { a: h_buf, b, c, .. }, z, .. } = st;
        let h_buf = &*h_buf;
        let (h, h_time, r) = std::thread::scope(|s| {
            let side = spawn_alike(s, move || beside(b, c, z));
            let t = Instant::now();
            let h_scalars = Input::Device { buf: h_buf, offset: 0, len: params.counts().h };
            let h = self.g1_msm(ws, points.g1(Points::H, 0..params.counts().h), h_scalars, chunks);
            let h_time = t.elapsed();
            (h, h_time, join(side))
        });
        Ok((h?, h_time, r))
    }

    /// The H term on the CPU and its MSM (the VRAM has no room for the H
    /// buffers).
    #[allow(clippy::too_many_arguments)]
    fn h_msm_via_cpu(
        &self,
        params: &dyn KeyShape,
        points: SrsPoints<'_>,
        pa: &ProvingAssignment,
        abc: Abc<'_>,
        chunks: MsmChunks,
        ws: &mut MsmWorkspace,
        times: &mut GpuTimings,
    ) -> Result<G1Projective, GpuProveError> {
        let t = Instant::now();
        let [a, b, c] = abc.on_host(pa)?;
        let h = crate::groth16::h_term::h_coefficients(&a, &b, &c)?;
        times.h_term = t.elapsed();
        let h = self.g1_msm(ws, points.g1(Points::H, 0..params.counts().h), host(&h[..params.counts().h]), chunks)?;
        times.h_msm = t.elapsed() - times.h_term;
        Ok(h)
    }

    /// The H term of the staged a, b, c, left in `st.bufs.a` (there
    /// already where the streamed SpMV staged them).
    fn h_compute(&self, st: &mut StagedH) -> Result<(), GpuProveError> {
        if st.h_ready {
            return Ok(());
        }
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
        chunks: MsmChunks,
    ) -> Result<G1Projective, GpuProveError> {
        let (plan, _) = chunks.for_scalars(&scalars);
        Ok(g1(msm::msm_in::<G1>(ws, points, scalars, plan)?.0))
    }
}

/// `work` on a scoped thread that creates its streams as this thread does
/// (an urgent call's threads urgent too: [`cuzk_sys::UrgentStreams`]).
fn spawn_alike<'s, T: Send + 's>(
    s: &'s std::thread::Scope<'s, '_>,
    work: impl FnOnce() -> T + Send + 's,
) -> std::thread::ScopedJoinHandle<'s, T> {
    let urgent = cuzk_sys::UrgentStreams::current();
    s.spawn(move || {
        let _streams = cuzk_sys::UrgentStreams::set(urgent);
        work()
    })
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
    let plan = Plan {
        circuits: assignments.len(),
        points: PointsAt::Host,
        h: HTerm::Device,
        inputs: HInputs::Uploaded,
        queries: Queries::AfterH,
        next: NextInputs::WhenDue,
        chunks: Chunks::Whole,
        z_in_grant: false,
    };
    let results = prover.run(params, SrsPoints::Host(params), assignments, None, None, &plan)?;
    Ok(results.into_iter().zip(randomness).map(|((m, _), &(r, s))| assemble(&params.vk, m, r, s)).collect())
}
