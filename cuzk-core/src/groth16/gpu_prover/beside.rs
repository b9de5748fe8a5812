//! Query MSMs beside the H MSM in the H term's idle third buffer
//! ([`Queries::InHScratch`](super::Queries::InHScratch)): SRS points in
//! host memory, or resident where the VRAM left beside them holds no
//! workspace of the queries' own (an 80 GB card at 2^27).
//!
//! Under a VRAM limit the H MSM is bound by its arithmetic, and the query
//! MSMs by their point uploads; with resident points both by arithmetic,
//! each filling the other's sorts and bucket reductions. While the H MSM runs, the H term's third
//! buffer (`bufs.c`, 4 GiB at 2^27) waits for A's compacted scalars. Lent
//! to the thread that uploaded the witness, it is L's whole workspace
//! first, then holds B's compacted scalars at its start with the rest as
//! B_G1's and B_G2's workspace (B is ~25 % dense in Filecoin circuits). A
//! stays after the H MSM: its scalars fill the buffer. Which of them fit
//! is decided once per call, before anything runs ([`GpuProver::fit`]),
//! from the circuits' shape.

use super::queries::{fits_scratch, set_below};
use super::{g1, h_log_n, GpuProveError, GpuProver, GpuTimings, MsmChunks, Scratch, Witness};
use crate::cs::ProvingAssignment;
use crate::groth16::gpu_srs::{Points, SrsPoints};
use crate::srs::KeyShape;
use blstrs::{G1Projective, G2Projective};
use cuzk_sys::msm::{self, Group, Input, MsmOptions, MsmWorkspace, G1, G2};
use cuzk_sys::{FrRepr, HTermBuffers};
use std::time::Instant;

/// Chunks of this many points or more are good enough beside the H MSM
/// even where the MSM after it would run whole: each chunk's point upload
/// (~400 MB) then outweighs its fixed costs (bucket reduction, a host
/// round trip), and running beside the H MSM hides the whole upload-bound
/// MSM. Below it, a chunk must be at least half the after-H plan's.
const GOOD_CHUNK_POINTS: u64 = 1 << 22;

/// The query MSMs that ran beside the H MSM.
#[derive(Default)]
pub(super) struct Beside {
    pub(super) l: Option<G1Projective>,
    pub(super) b: Option<(G1Projective, G2Projective)>,
}

/// The plans of the query MSMs that run in the H term's third buffer (None:
/// that MSM runs after the H MSM).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct InScratch {
    pub(super) l: Option<MsmOptions>,
    /// B_G1's and B_G2's; only with L's (B's scalars are compacted into the
    /// buffer once L is done with it).
    pub(super) b: Option<(MsmOptions, MsmOptions)>,
}

impl InScratch {
    /// The queries that run there (None: none, L does not).
    pub(super) fn kept(&self) -> Option<Scratch> {
        match (self.l, self.b) {
            (None, _) => None,
            (Some(_), None) => Some(Scratch::L),
            (Some(_), Some(_)) => Some(Scratch::LAndB),
        }
    }
}

impl GpuProver {
    /// What of `want` runs in the third buffer for circuits of `shape`'s
    /// shape (points from host memory): L where the witness fits the H
    /// term's second buffer and L's plan in all of the third is good
    /// enough (`plan_beside`); then B where its compaction fits the buffer
    /// and B_G1's and B_G2's plans in the rest are.
    pub(super) fn in_scratch(
        &self,
        params: &dyn KeyShape,
        shape: &ProvingAssignment,
        want: Scratch,
        chunks: MsmChunks,
        points_on_device: bool,
    ) -> Result<InScratch, GpuProveError> {
        let log_n = h_log_n(shape.num_constraints())?;
        let n_aux = shape.aux_assignment.len();
        if n_aux > 1usize << log_n {
            return Ok(InScratch::default()); // the witness stays on the host
        }
        let scratch_len = HTermBuffers::c_len(log_n);
        let bytes = HTermBuffers::c_bytes(log_n);
        let Some(l) = self.plan_beside::<G1>(params.counts().l as u64, bytes, chunks.g1, points_on_device)? else {
            return Ok(InScratch::default());
        };
        let b = if want == Scratch::LAndB && fits_scratch(n_aux, &shape.b_aux_density, scratch_len) {
            let n_b = set_below(&shape.b_aux_density, n_aux);
            let bytes = MsmWorkspace::bytes_after::<FrRepr>(scratch_len, n_b);
            let n = n_b as u64;
            self.plan_beside::<G1>(n, bytes, chunks.g1, points_on_device)?.zip(self.plan_beside::<G2>(
                n,
                bytes,
                chunks.g2,
                points_on_device,
            )?)
        } else {
            None
        };
        Ok(InScratch { l: Some(l), b })
    }

    /// A plan for `n` points (from host memory, or resident where
    /// `points_on_device`), scalars on the device, in a lent workspace of
    /// `bytes`; None where none fits, or where its chunks would be under
    /// both [`GOOD_CHUNK_POINTS`] and half those of `after` (the plan the
    /// MSM gets after the H MSM).
    fn plan_beside<G: Group>(
        &self,
        n: u64,
        bytes: u64,
        after: Option<MsmOptions>,
        points_on_device: bool,
    ) -> Result<Option<MsmOptions>, GpuProveError> {
        let Ok(o) = msm::options_for_budget::<G>(self.device, n, points_on_device, true, bytes) else { return Ok(None) };
        let fits = msm::workspace_bytes::<G>(self.device, n, points_on_device, true, o)? <= bytes;
        let chunk = o.chunk_points(n);
        let good = chunk >= GOOD_CHUNK_POINTS.min(n) || 2 * chunk >= after.unwrap_or_default().chunk_points(n);
        Ok((fits && good).then_some(o))
    }

    /// The query MSMs that `plans` puts in the scratch, on the thread that
    /// uploaded the witness, while the H MSM runs: L with all of the
    /// scratch as its workspace, then B's aux scalars compacted into its
    /// start and B_G1 and B_G2 with the rest. Their times go into `times`.
    pub(super) fn queries_in_scratch(
        &self,
        params: &dyn KeyShape,
        points: SrsPoints<'_>,
        pa: &ProvingAssignment,
        witness: &mut Witness<'_>,
        plans: InScratch,
        times: &mut GpuTimings,
    ) -> Result<Beside, GpuProveError> {
        let (Some(l_plan), Witness::Device { aux, scratch }) = (plans.l, witness) else { return Ok(Beside::default()) };
        let t = Instant::now();
        let l = {
            let mut ws = MsmWorkspace::in_buffer(&mut **scratch);
            let scalars = Input::Device { buf: *aux, offset: 0, len: pa.aux_assignment.len() };
            g1(msm::msm_in::<G1>(&mut ws, points.g1(Points::L, 0..params.counts().l), scalars, Some(l_plan))?.0)
        };
        times.l_msm = t.elapsed();
        let Some((g1_plan, g2_plan)) = plans.b else { return Ok(Beside { l: Some(l), b: None }) };
        let t = Instant::now();
        let n_b = self.compact_on_device(aux, pa.aux_assignment.len(), &pa.b_aux_density, scratch)?;
        times.compact = t.elapsed();
        let (mut ws, scratch) = MsmWorkspace::in_buffer_after(&mut **scratch, n_b);
        let b_aux = Input::Device { buf: scratch, offset: 0, len: n_b };
        let b = self.b_msms(&mut ws, params, points, pa, b_aux, (Some(g1_plan), Some(g2_plan)), times)?;
        Ok(Beside { l: Some(l), b: Some(b) })
    }
}
