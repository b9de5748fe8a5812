//! Query MSMs beside the H MSM in the H term's idle third buffer
//! ([`GpuOptions::l_beside_h`]), for SRS points in host memory.
//!
//! Under a VRAM limit the H MSM is bound by its arithmetic, and the query
//! MSMs by their point uploads. While the H MSM runs, the H term's third
//! buffer (`bufs.c`, 4 GiB at 2^27) waits for A's compacted scalars. Lent
//! to the thread that uploaded the witness, it is L's whole workspace
//! first, then holds B's compacted scalars at its start with the rest as
//! B_G1's and B_G2's workspace (B is ~25 % dense in Filecoin circuits). A
//! stays after the H MSM: its scalars fill the buffer.

use super::queries::fits_scratch;
use super::{g1, GpuOptions, GpuProveError, GpuProver, GpuTimings, Witness};
use crate::cs::ProvingAssignment;
use crate::groth16::gpu_srs::{Points, SrsPoints};
use crate::srs::Parameters;
use blstrs::{G1Projective, G2Projective};
use cuzk_sys::msm::{self, Group, Input, MsmOptions, MsmWorkspace, G1, G2};
use std::time::Instant;

/// The query MSMs that ran beside the H MSM.
#[derive(Default)]
pub(super) struct Beside {
    pub(super) l: Option<G1Projective>,
    pub(super) b: Option<(G1Projective, G2Projective)>,
}

impl GpuProver {
    /// L, then B_G1 and B_G2, in the scratch's memory, each where its plan
    /// there is good enough (`plan_beside`); B only after L. Their times
    /// go into `times`.
    pub(super) fn queries_in_scratch(
        &self,
        params: &Parameters,
        points: SrsPoints<'_>,
        pa: &ProvingAssignment,
        witness: &mut Witness<'_>,
        opts: GpuOptions,
        times: &mut GpuTimings,
    ) -> Result<Beside, GpuProveError> {
        let t = Instant::now();
        let Some(l) = self.l_msm_in_scratch(params, points, pa, witness, opts)? else { return Ok(Beside::default()) };
        (times.l_msm, times.l_beside_h) = (t.elapsed(), true);
        let b = self.b_msms_in_scratch(params, points, pa, witness, opts, times)?;
        times.b_beside_h = b.is_some();
        Ok(Beside { l: Some(l), b })
    }

    /// A plan for `n` points, scalars on the device, in a lent workspace of
    /// `bytes`; None where none fits, or where its chunks would be under
    /// half those of `after` (the plan the MSM gets after the H MSM):
    /// small chunks made it slower than running after (2^22 under a 0.7
    /// GiB limit: 128 MiB of scratch, 229 ms against 178), equal ones
    /// faster (2^27 under 16 GiB: 4 GiB, -5-6 %).
    fn plan_beside<G: Group>(
        &self,
        n: u64,
        points_on_device: bool,
        bytes: u64,
        after: Option<MsmOptions>,
    ) -> Result<Option<MsmOptions>, GpuProveError> {
        let Ok(o) = msm::options_for_budget::<G>(self.device, n, points_on_device, true, bytes) else { return Ok(None) };
        let fits = msm::workspace_bytes::<G>(self.device, n, points_on_device, true, o)? <= bytes;
        Ok((fits && 2 * o.chunk_points(n) >= after.unwrap_or_default().chunk_points(n)).then_some(o))
    }

    /// The L MSM with all of the scratch as its workspace. None (L runs
    /// after the H MSM) where the witness is on the host or no plan is
    /// good enough.
    fn l_msm_in_scratch(
        &self,
        params: &Parameters,
        points: SrsPoints<'_>,
        pa: &ProvingAssignment,
        witness: &mut Witness<'_>,
        opts: GpuOptions,
    ) -> Result<Option<G1Projective>, GpuProveError> {
        let Witness::Device { aux, scratch } = witness else { return Ok(None) };
        let mut ws = MsmWorkspace::in_buffer(&mut **scratch);
        let n = params.l.len() as u64;
        let Some(o) = self.plan_beside::<G1>(n, points.on_device(), ws.bytes(), opts.msm)? else { return Ok(None) };
        let scalars = Input::Device { buf: *aux, offset: 0, len: pa.aux_assignment.len() };
        Ok(Some(g1(msm::msm_in::<G1>(&mut ws, points.g1(Points::L, 0..params.l.len()), scalars, Some(o))?.0)))
    }

    /// B's aux scalars compacted into the start of the scratch, and the
    /// B_G1 and B_G2 MSMs with the rest of it as their workspace. None (B
    /// runs after the H MSM and compacts again) where a plan is not good
    /// enough, or where the compaction does not fit (B then takes the
    /// host's).
    fn b_msms_in_scratch(
        &self,
        params: &Parameters,
        points: SrsPoints<'_>,
        pa: &ProvingAssignment,
        witness: &mut Witness<'_>,
        opts: GpuOptions,
        times: &mut GpuTimings,
    ) -> Result<Option<(G1Projective, G2Projective)>, GpuProveError> {
        let Witness::Device { aux, scratch } = witness else { return Ok(None) };
        if !fits_scratch(pa.aux_assignment.len(), &pa.b_aux_density, scratch) {
            return Ok(None);
        }
        let t = Instant::now();
        let n_b = self.compact_on_device(aux, pa.aux_assignment.len(), &pa.b_aux_density, scratch)?;
        times.compact = t.elapsed();
        let (mut ws, scratch) = MsmWorkspace::in_buffer_after(&mut **scratch, n_b);
        let (n, on_dev) = (n_b as u64, points.on_device());
        let plans = (
            self.plan_beside::<G1>(n, on_dev, ws.bytes(), opts.msm)?,
            self.plan_beside::<G2>(n, on_dev, ws.bytes(), opts.msm_g2.or(opts.msm))?,
        );
        let (Some(o1), Some(o2)) = plans else { return Ok(None) };
        let b_aux = Input::Device { buf: scratch, offset: 0, len: n_b };
        Ok(Some(self.b_msms(&mut ws, params, points, pa, b_aux, (Some(o1), Some(o2)), times)?))
    }
}
