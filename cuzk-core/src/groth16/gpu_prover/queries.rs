//! The query MSMs (L, A, B_G1, B_G2): where their scalars come from (the
//! witness uploaded once and compacted on the device, or compacted on the
//! host), and how they run beside the H MSM ([`Queries::BesideH`](super::Queries::BesideH),
//! [`Queries::InHScratch`](super::Queries::InHScratch)) or after it.

use super::beside::{Beside, InScratch};
use super::{g1, g2, host, join, spawn_alike, Abc, GpuProveError, GpuProver, GpuTimings, MsmChunks, StagedH};
use crate::arith::blst_layout::repr;
use crate::arith::Density;
use crate::cs::ProvingAssignment;
use crate::groth16::gpu_srs::{Points, SrsPoints};
use crate::groth16::prover::MsmResults;
use crate::srs::KeyShape;
use blstrs::{G1Projective, G2Projective, Scalar as Fr};
use cuzk_sys::msm::{self, Input, MsmOptions, MsmWorkspace, G1, G2};
use cuzk_sys::{DeviceBuffer, FrRepr, Stream};
use std::time::Instant;

/// The scalars of the variables set in `density`, in order. Parallel: at
/// 2^27 variables one thread takes ~1 s per query, all of it on the GPU's
/// critical path. Each thread takes a range of variables and writes its
/// set ones where `rank` says they start.
pub(super) fn compact(scalars: &[Fr], density: &Density) -> Vec<Fr> {
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

/// Set bits of `density` among its first `n`.
pub(super) fn set_below(density: &Density, n: usize) -> usize {
    if density.len() <= n {
        density.count()
    } else {
        density.rank(n)
    }
}

/// Whether a scratch of `scratch_len` elements can take the compaction of
/// the first `n` aux scalars by `density`: their scalars and the
/// compaction's scratch after them.
pub(super) fn fits_scratch(n: usize, density: &Density, scratch_len: usize) -> bool {
    cuzk_sys::density::compact_fr_room(n, set_below(density, n)) <= scratch_len
}

impl GpuProver {
    /// Device bytes of the query MSMs' workspace ([`Queries::BesideH`](super::Queries::BesideH)):
    /// the largest of L, A, B_G1 and B_G2 with points and scalars on the device.
    pub fn query_workspace_bytes(device: i32, params: &dyn KeyShape) -> cuzk_sys::Result<u64> {
        let c = params.counts();
        let (n1, n2) = (c.l.max(c.a).max(c.b_g1) as u64, c.b_g2 as u64);
        let opts = MsmOptions::default();
        let g1 = msm::workspace_bytes::<G1>(device, n1, true, true, opts)?;
        Ok(g1.max(msm::workspace_bytes::<G2>(device, n2, true, true, opts)?))
    }

    /// The H term and the H MSM on this thread; on another, the witness
    /// upload into the H term's second buffer, then the query MSMs in
    /// `ws_queries` (and, once the witness is in, `next`'s a, b, c staged
    /// on a third, as `abc` says). Phase times as measured on their
    /// threads: they overlap.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn msms_overlapped(
        &self,
        params: &dyn KeyShape,
        points: SrsPoints<'_>,
        pa: &ProvingAssignment,
        st: &mut StagedH,
        t: Instant,
        chunks: MsmChunks,
        ws: &mut MsmWorkspace,
        ws_queries: &mut MsmWorkspace,
        next: Option<(&ProvingAssignment, &mut StagedH)>,
        abc: Abc<'_>,
        times: &mut GpuTimings,
    ) -> (Result<MsmResults, GpuProveError>, Option<Result<(), GpuProveError>>) {
        let overlapped = self.h_then_msm_beside(params, points, st, t, chunks, ws, times, |aux_buf, scratch, z| {
            let mut q_times = GpuTimings::default();
            let witness = match self.upload_witness(pa, aux_buf, scratch, z.as_ref()) {
                Ok(w) => w,
                Err(e) => return (Err(e), q_times, None),
            };
            std::thread::scope(|s| {
                let staging = next.map(|(npa, sp)| spawn_alike(s, move || self.restage(npa, sp, abc)));
                let q = self.query_msms(params, points, pa, witness, Beside::default(), chunks, ws_queries, &mut q_times);
                (q, q_times, staging.map(join))
            })
        });
        let (h, h_time, (queries, q_times, staged_next)) = match overlapped {
            Ok(done) => done,
            Err(e) => return (Err(e), None),
        };
        times.h_msm = h_time;
        let GpuTimings { l_msm, a_msm, b_g1_msm, b_g2_msm, compact, .. } = q_times;
        *times = GpuTimings { l_msm, a_msm, b_g1_msm, b_g2_msm, compact, ..*times };
        (queries.map(|q| q.with_h(h)), staged_next)
    }

    /// The H term and the H MSM while another thread uploads the witness
    /// into the H term's second buffer; the third becomes the compaction
    /// scratch. That thread then runs the query MSMs that `scratch` plans
    /// in the scratch's memory ([`GpuProver::queries_in_scratch`]); their
    /// results come back with the witness.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn h_msm_and_witness<'b>(
        &self,
        params: &dyn KeyShape,
        points: SrsPoints<'_>,
        pa: &ProvingAssignment,
        st: &'b mut StagedH,
        t: Instant,
        chunks: MsmChunks,
        scratch: InScratch,
        ws: &mut MsmWorkspace,
        times: &mut GpuTimings,
    ) -> Result<(G1Projective, Beside, Witness<'b>), GpuProveError> {
        let (h, _, side) = self.h_then_msm_beside(params, points, st, t, chunks, ws, times, |aux_buf, c, z| {
            let mut witness = self.upload_witness(pa, aux_buf, c, z.as_ref())?;
            let mut side_times = GpuTimings::default();
            let beside = self.queries_in_scratch(params, points, pa, &mut witness, scratch, &mut side_times)?;
            Ok::<_, GpuProveError>((witness, beside, side_times))
        })?;
        // As the circuit's other phases: the H MSM's wall time, with what
        // ran beside it.
        times.h_msm = t.elapsed() - times.h_term;
        let (witness, beside, side) = side?;
        let GpuTimings { l_msm, b_g1_msm, b_g2_msm, compact, .. } = side;
        *times = GpuTimings { l_msm, b_g1_msm, b_g2_msm, compact, ..*times };
        Ok((h, beside, witness))
    }

    /// `pa`'s aux witness put into `aux_buf` (copied on the device from
    /// `z`, its witness there for the SpMV, else uploaded), queries
    /// compacted into `scratch`; on the host when it does not fit (longer
    /// than the H domain: never for R1CS from synthesis, but possible).
    fn upload_witness<'b>(
        &self,
        pa: &ProvingAssignment,
        aux_buf: &'b mut DeviceBuffer<FrRepr>,
        scratch: &'b mut DeviceBuffer<FrRepr>,
        z: Option<&DeviceBuffer<FrRepr>>,
    ) -> Result<Witness<'b>, GpuProveError> {
        let aux = repr(&pa.aux_assignment);
        if aux.len() > aux_buf.len() {
            return Ok(Witness::Host);
        }
        let stream = Stream::new(self.device)?;
        match z {
            Some(z) => {
                let n_in = pa.input_assignment.len();
                aux_buf.copy_range_from_device_async(&stream, 0, z, n_in, aux.len())?;
                stream.synchronize()?;
            }
            None => aux_buf.copy_from_host(&stream, 0, aux)?,
        }
        Ok(Witness::Device { aux: aux_buf, scratch })
    }

    /// The scalars of the aux variables in `density`, for a query's MSM:
    /// compacted on the device into the scratch buffer, or on the host
    /// where the witness is there or the scratch has no room for them
    /// (`fits_scratch`).
    fn query_scalars<'w>(
        &self,
        aux: &'w [Fr],
        density: &Density,
        witness: &'w mut Witness<'_>,
        compacted: &'w mut Vec<Fr>,
    ) -> Result<Input<'w, FrRepr>, GpuProveError> {
        match witness {
            Witness::Device { aux: buf, scratch } if fits_scratch(aux.len(), density, scratch.len()) => {
                let len = self.compact_on_device(buf, aux.len(), density, scratch)?;
                Ok(Input::Device { buf: &**scratch, offset: 0, len })
            }
            _ => {
                *compacted = compact(aux, density);
                Ok(host(compacted))
            }
        }
    }

    /// The first `n` scalars of `src` whose variables are set in `density`,
    /// compacted on the device into the start of `dst` (which must have
    /// room: `fits_scratch`); returns how many.
    pub(super) fn compact_on_device(
        &self,
        src: &DeviceBuffer<FrRepr>,
        n: usize,
        density: &Density,
        dst: &mut DeviceBuffer<FrRepr>,
    ) -> Result<usize, GpuProveError> {
        let stream = Stream::new(self.device)?;
        let len = cuzk_sys::density::compact_fr(&stream, src, n, density.words(), set_below(density, n), dst)?;
        stream.synchronize()?;
        Ok(len)
    }

    /// B_G1 and B_G2 from B's compacted aux scalars `b_aux`, the inputs'
    /// few compacted on the host, with the plans `g1` and `g2`; their times
    /// go into `times`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn b_msms(
        &self,
        ws: &mut MsmWorkspace<'_>,
        params: &dyn KeyShape,
        points: SrsPoints<'_>,
        pa: &ProvingAssignment,
        b_aux: Input<'_, FrRepr>,
        (g1_plan, g2_plan): (Option<MsmOptions>, Option<MsmOptions>),
        times: &mut GpuTimings,
    ) -> Result<(G1Projective, G2Projective), GpuProveError> {
        let b_in = pa.b_input_density.count();
        let b_inputs = compact(&pa.input_assignment, &pa.b_input_density);
        let t = Instant::now();
        let b_g1 = g1(msm::msm_in::<G1>(ws, points.g1(Points::BG1, 0..b_in), host(&b_inputs), g1_plan)?.0)
            + g1(msm::msm_in::<G1>(ws, points.g1(Points::BG1, b_in..params.counts().b_g1), b_aux, g1_plan)?.0);
        times.b_g1_msm = t.elapsed();
        let t = Instant::now();
        let b_g2 = g2(msm::msm_in::<G2>(ws, points.g2(0..b_in), host(&b_inputs), g2_plan)?.0)
            + g2(msm::msm_in::<G2>(ws, points.g2(b_in..params.counts().b_g2), b_aux, g2_plan)?.0);
        times.b_g2_msm = t.elapsed();
        Ok((b_g1, b_g2))
    }

    /// The MSMs of the L, A and B queries (those that ran beside the H MSM
    /// given).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn query_msms(
        &self,
        params: &dyn KeyShape,
        points: SrsPoints<'_>,
        pa: &ProvingAssignment,
        mut witness: Witness<'_>,
        beside: Beside,
        chunks: MsmChunks,
        ws: &mut MsmWorkspace,
        times: &mut GpuTimings,
    ) -> Result<QueryMsms, GpuProveError> {
        let inputs = &pa.input_assignment;
        let aux = &pa.aux_assignment;
        let n_in = inputs.len();
        let mut t = Instant::now();
        let mut lap = || std::mem::replace(&mut t, Instant::now()).elapsed();
        let l = match beside.l {
            Some(l) => l,
            None => {
                let l_scalars = match &witness {
                    Witness::Host => host(aux),
                    Witness::Device { aux: buf, .. } => Input::Device { buf, offset: 0, len: aux.len() },
                };
                let l = self.g1_msm(ws, points.g1(Points::L, 0..params.counts().l), l_scalars, chunks)?;
                times.l_msm = lap();
                l
            }
        };
        let mut compacted = Vec::new();
        let a_aux = self.query_scalars(aux, &pa.a_aux_density, &mut witness, &mut compacted)?;
        times.compact += lap();
        let a = self.g1_msm(ws, points.g1(Points::A, 0..n_in), host(inputs), chunks)?
            + self.g1_msm(ws, points.g1(Points::A, n_in..params.counts().a), a_aux, chunks)?;
        times.a_msm = lap();
        let (b_g1, b_g2) = match beside.b {
            Some(b) => b,
            None => {
                let b_aux = self.query_scalars(aux, &pa.b_aux_density, &mut witness, &mut compacted)?;
                times.compact += lap();
                let plans = chunks.for_scalars(&b_aux);
                self.b_msms(ws, params, points, pa, b_aux, plans, times)?
            }
        };
        Ok(QueryMsms { l, a, b_g1, b_g2 })
    }
}

/// The MSM results other than H's.
pub(super) struct QueryMsms {
    l: G1Projective,
    a: G1Projective,
    b_g1: G1Projective,
    b_g2: G2Projective,
}

impl QueryMsms {
    pub(super) fn with_h(self, h: G1Projective) -> MsmResults {
        let QueryMsms { l, a, b_g1, b_g2 } = self;
        MsmResults { h, l, a, b_g1, b_g2 }
    }
}

/// Where the MSMs after H read the aux witness from.
pub(super) enum Witness<'a> {
    /// Host memory: each query's scalars are compacted on the host and
    /// uploaded by its MSM.
    Host,
    /// Uploaded once into `aux`; each query is compacted on the device into
    /// `scratch` (the H term's b and c buffers, free once h is computed).
    Device { aux: &'a DeviceBuffer<FrRepr>, scratch: &'a mut DeviceBuffer<FrRepr> },
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
