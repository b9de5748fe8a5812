//! A batch's MSMs query by query, for SRS points in host memory.
//!
//! Circuit by circuit, every MSM uploads its SRS points again: under a
//! VRAM limit, or on a card that cannot hold the SRS, PCIe carries the
//! whole SRS once per circuit (~48 GB for a 2^27 partition). Here each
//! circuit first runs its H term and H MSM (h lives on the device and is
//! consumed there), then the H buffers are freed and L, A, B_G1 and B_G2
//! run as batch MSMs (cuzk-sys `msm_batch`): each chunk of a query's
//! points goes up once and is run against every circuit's scalars, each
//! circuit with its own buckets. Scalars come from the host; A's and B's
//! are compacted there by density, on a host thread while the device runs
//! the H terms, the H MSMs and L.
//!
//! Zero scalars make no bucket entries and ones a single addition, so the
//! 0/1-heavy witnesses of Filecoin circuits cost their non-zero entries
//! only; what a batch shares is the SRS read.

use super::{compact, g1, g2, join, Abc, GpuProveError, GpuProver, GpuTimings, HTerm, MsmChunks, StagedH};
use crate::arith::blst_layout::repr;
use crate::cs::ProvingAssignment;
use crate::groth16::gpu_srs::{Points, SrsPoints};
use crate::groth16::prover::{MsmResults, ProveError};
use crate::groth16::StopCheck;
use crate::srs::KeyShape;
use blstrs::{G1Projective, Scalar as Fr};
use cuzk_sys::msm::{self, Group, Input, MsmOptions, MsmWorkspace, G1, G2};
use cuzk_sys::FrRepr;
use std::time::{Duration, Instant};

/// Batch MSMs that fit a VRAM budget: how many circuits' scalar sets one
/// call takes (each set has its own buckets, so more sets leave less room
/// for a chunk of points), and its chunking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchedMsms {
    pub g1_sets: u32,
    pub g1: MsmOptions,
    pub g2_sets: u32,
    pub g2: MsmOptions,
}

/// The fewest circuits for which the engine takes the batch path. A batch
/// saves each circuit's point uploads, but each still uploads its own
/// scalars (32 bytes from the host against a shared 96-byte point), and the
/// batch path gives up pre-staging the next circuit's a, b, c: with many
/// circuits the shared points win, with two they do not (docs/BENCHMARKS.md
/// has the figures).
pub const BATCH_MSMS_FROM_CIRCUITS: usize = 3;

/// A batch call's chunks are large enough at this many points (or the
/// whole MSM, if smaller), or at half of what one set would get: smaller
/// chunks cost more in per-chunk overhead (every chunk after the first adds
/// into every bucket) than sharing the upload saves.
const MIN_CHUNK: u64 = 1 << 20;

impl BatchedMsms {
    /// Batch MSMs of up to `circuits` sets whose workspace fits `budget`
    /// bytes, for G1 queries of at most `n1` points and B_G2 of `n2`,
    /// points and scalars from host memory: the most sets (halving from
    /// `circuits`) that fit with large chunks; one set always.
    pub fn within(device: i32, n1: u64, n2: u64, circuits: usize, budget: u64) -> cuzk_sys::Result<Self> {
        let (g1_sets, g1) = fit::<G1>(device, n1, circuits, budget)?;
        let (g2_sets, g2) = fit::<G2>(device, n2, circuits, budget)?;
        Ok(BatchedMsms { g1_sets, g1, g2_sets, g2 })
    }
}

fn fit<G: Group>(device: i32, n: u64, circuits: usize, budget: u64) -> cuzk_sys::Result<(u32, MsmOptions)> {
    let options = |sets: u32| msm::options_for_budget_batch::<G>(device, n, sets, false, false, budget);
    let one = options(1)?;
    let enough = one.chunk_points(n).div_ceil(2).min(n.min(MIN_CHUNK));
    let mut sets = u32::try_from(circuits.max(1)).unwrap_or(u32::MAX).min(1024);
    while sets > 1 {
        let o = options(sets)?;
        if msm::workspace_bytes_batch::<G>(device, n, sets, false, false, o)? <= budget && o.chunk_points(n) >= enough {
            return Ok((sets, o));
        }
        sets = sets.div_ceil(2);
    }
    Ok((1, one))
}

/// One query's MSM for every circuit: `sets[j]` against the same points,
/// `per_call` sets at a time.
fn batch_msm<G: Group>(
    device: i32,
    points: Input<'_, G::Affine>,
    sets: &[&[Fr]],
    per_call: u32,
    opts: MsmOptions,
) -> Result<Vec<G::Proj>, GpuProveError> {
    let mut out = Vec::with_capacity(sets.len());
    for group in sets.chunks(per_call.max(1) as usize) {
        let inputs: Vec<Input<'_, FrRepr>> = group.iter().map(|s| Input::Host(repr(s))).collect();
        out.extend(msm::msm_batch::<G>(device, points, &inputs, Some(opts))?.0);
    }
    Ok(out)
}

fn refs(v: &[Vec<Fr>]) -> Vec<&[Fr]> {
    v.iter().map(|s| &s[..]).collect()
}

/// `d` shared equally by `k` circuits (a batch MSM's time per circuit).
fn share(d: Duration, k: usize) -> Duration {
    d / k.max(1) as u32
}

impl GpuProver {
    /// [`GpuProver::run`] for points in host memory and a batch of two or
    /// more circuits of one shape (checked by the caller), the query MSMs
    /// as `plan` says. The per-query timings are the batch MSM's time
    /// divided by the circuits.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn msms_batched(
        &self,
        params: &dyn KeyShape,
        points: SrsPoints<'_>,
        assignments: &[ProvingAssignment],
        first: Option<StagedH>,
        h: HTerm,
        abc: Abc<'_>,
        chunks: MsmChunks,
        plan: BatchedMsms,
        stop: StopCheck<'_>,
    ) -> Result<Vec<(MsmResults, GpuTimings)>, GpuProveError> {
        let go_on = || if stop.requested() { Err(GpuProveError::Prove(ProveError::Stopped)) } else { Ok(()) };
        let k = assignments.len();
        let mut times = vec![GpuTimings::default(); k];
        let (h_and_l, compact_wait, scalars) = std::thread::scope(|s| {
            // A's and B's scalars, compacted on the host while the device
            // runs the H terms, the H MSMs and L (seconds of GPU work that
            // hide it; it is ~0.4 s per 2^27 circuit).
            let compaction = s.spawn(|| CompactedScalars::of(assignments));
            let h_and_l = self.h_msms(params, points, assignments, first, h, abc, chunks, &mut times, stop).and_then(|hs| {
                go_on()?;
                Ok((hs, self.l_msms(params, points, assignments, plan)?))
            });
            let t = Instant::now();
            let scalars = join(compaction);
            (h_and_l, t.elapsed(), scalars)
        });
        let (hs, (l, l_time)) = h_and_l?;
        let dev = self.device;
        let g1_batch = |pts, sets: &[&[Fr]]| batch_msm::<G1>(dev, pts, sets, plan.g1_sets, plan.g1);
        let g2_batch = |pts, sets: &[&[Fr]]| batch_msm::<G2>(dev, pts, sets, plan.g2_sets, plan.g2);
        let shape = &assignments[0];
        let (n_in, b_in) = (shape.input_assignment.len(), shape.b_input_density.count());
        let mut t = Instant::now();
        let mut lap = || std::mem::replace(&mut t, Instant::now()).elapsed();

        go_on()?;
        let inputs: Vec<&[Fr]> = assignments.iter().map(|pa| &pa.input_assignment[..]).collect();
        let a_in = g1_batch(points.g1(Points::A, 0..n_in), &inputs)?;
        let a_aux = g1_batch(points.g1(Points::A, n_in..params.counts().a), &refs(&scalars.a_aux))?;
        let a_time = lap();
        go_on()?;
        let b_g1_in = g1_batch(points.g1(Points::BG1, 0..b_in), &refs(&scalars.b_inputs))?;
        let b_g1_aux = g1_batch(points.g1(Points::BG1, b_in..params.counts().b_g1), &refs(&scalars.b_aux))?;
        let b_g1_time = lap();
        go_on()?;
        let b_g2_in = g2_batch(points.g2(0..b_in), &refs(&scalars.b_inputs))?;
        let b_g2_aux = g2_batch(points.g2(b_in..params.counts().b_g2), &refs(&scalars.b_aux))?;
        let b_g2_time = lap();
        // Freeing gigabytes of compacted scalars takes a while (page by
        // page); not on the GPU's time.
        std::thread::spawn(move || drop(scalars));

        let mut out = Vec::with_capacity(k);
        for (i, mut times) in times.into_iter().enumerate() {
            times.l_msm = share(l_time, k);
            times.a_msm = share(a_time, k);
            times.b_g1_msm = share(b_g1_time, k);
            times.b_g2_msm = share(b_g2_time, k);
            times.compact = share(compact_wait, k);
            times.wall = times.total();
            let results = MsmResults {
                h: hs[i],
                l: g1(l[i]),
                a: g1(a_in[i]) + g1(a_aux[i]),
                b_g1: g1(b_g1_in[i]) + g1(b_g1_aux[i]),
                b_g2: g2(b_g2_in[i]) + g2(b_g2_aux[i]),
            };
            out.push((results, times));
        }
        Ok(out)
    }

    /// Per circuit: the H term and the H MSM, through one set of H buffers
    /// (circuit 0's may be staged already), freed at the end so that the
    /// batch MSMs' budget has their VRAM. The H MSM reads only h (in
    /// `bufs.a`), so while it runs another thread stages what it can of the
    /// next circuit's inputs: its b and c uploaded into `bufs.b` and
    /// `bufs.c` (only its a is left to upload after), or, where the SpMV
    /// computes a, b, c, its witness uploaded into z (only the SpMV is left
    /// after; the L MSMs here read the witness from the host). No room for
    /// a second set of H buffers is needed to take most of the upload off
    /// the GPU's time.
    #[allow(clippy::too_many_arguments)]
    fn h_msms(
        &self,
        params: &dyn KeyShape,
        points: SrsPoints<'_>,
        assignments: &[ProvingAssignment],
        first: Option<StagedH>,
        h_term: HTerm,
        abc: Abc<'_>,
        chunks: MsmChunks,
        times: &mut [GpuTimings],
        stop: StopCheck<'_>,
    ) -> Result<Vec<G1Projective>, GpuProveError> {
        // Circuit 0 is staged already only where it came staged: buffers
        // allocated here hold whatever the device memory held before.
        let first_staged = first.is_some();
        let mut staged = first;
        let mut hs = Vec::with_capacity(assignments.len());
        // The H MSMs' workspace, freed (with the H buffers) on return.
        let mut ws = MsmWorkspace::new(self.device);
        // What of circuit i's inputs is in place already (staged during
        // circuit i - 1's H MSM).
        let mut ahead = None;
        for (i, pa) in assignments.iter().enumerate() {
            if stop.requested() {
                return Err(ProveError::Stopped.into());
            }
            let h = if h_term == HTerm::Cpu {
                self.h_msm_via_cpu(params, points, pa, abc, chunks, &mut ws, &mut times[i])?
            } else {
                let t = Instant::now();
                // Only circuit 0 may come staged (whole).
                let st = match (staged.as_mut(), ahead, abc.spmv) {
                    (Some(st), Some(Ahead::BAndC), _) => {
                        self.stage_input(&pa.a, st.log_n, &mut st.bufs.a)?;
                        st
                    }
                    (Some(st), Some(Ahead::Witness), Some(pce)) => {
                        self.spmv_from_z(pce, st)?;
                        st
                    }
                    _ => self.staged_h(&mut staged, pa, i == 0 && first_staged, abc)?,
                };
                let log_n = st.log_n;
                // A circuit carrying its witness only, with a, b, c
                // uploaded: computed on the host when its turn comes.
                let next = assignments.get(i + 1).filter(|npa| abc.spmv.is_some() || !npa.abc_deferred());
                let (h, _, staging) = self.h_then_msm_beside(params, points, st, t, chunks, &mut ws, &mut times[i], |b, c, z| {
                    next.map(|npa| -> Result<Option<Ahead>, GpuProveError> {
                        match (abc.spmv, z.as_mut()) {
                            (Some(pce), Some(z)) => {
                                let stream = cuzk_sys::Stream::new(self.device)?;
                                pce.upload_witness(&stream, &npa.input_assignment, &npa.aux_assignment, z)?;
                                Ok(Some(Ahead::Witness))
                            }
                            // Circuit i was uploaded (staged so): no z yet.
                            (Some(_), None) => Ok(None),
                            (None, _) => {
                                self.stage_input(&npa.b, log_n, b)?;
                                self.stage_input(&npa.c, log_n, c)?;
                                Ok(Some(Ahead::BAndC))
                            }
                        }
                    })
                })?;
                ahead = staging.transpose()?.flatten();
                times[i].h_msm = t.elapsed() - times[i].h_term;
                h
            };
            hs.push(h);
        }
        Ok(hs)
    }

    /// The batch's L MSMs (scalars: the aux witnesses as they are) and
    /// their time.
    fn l_msms(
        &self,
        params: &dyn KeyShape,
        points: SrsPoints<'_>,
        assignments: &[ProvingAssignment],
        plan: BatchedMsms,
    ) -> Result<(Vec<msm::G1ProjRepr>, Duration), GpuProveError> {
        let t = Instant::now();
        let aux: Vec<&[Fr]> = assignments.iter().map(|pa| &pa.aux_assignment[..]).collect();
        let l = batch_msm::<G1>(self.device, points.g1(Points::L, 0..params.counts().l), &aux, plan.g1_sets, plan.g1)?;
        Ok((l, t.elapsed()))
    }
}

/// What of the next circuit's inputs was staged beside an H MSM.
#[derive(Clone, Copy)]
enum Ahead {
    /// Its b and c, in the H term's second and third buffers.
    BAndC,
    /// Its witness, in z, for the SpMV.
    Witness,
}

/// Every circuit's scalars of the A and B queries: the aux variables in
/// each density, and the inputs in B's.
struct CompactedScalars {
    a_aux: Vec<Vec<Fr>>,
    b_inputs: Vec<Vec<Fr>>,
    b_aux: Vec<Vec<Fr>>,
}

impl CompactedScalars {
    fn of(assignments: &[ProvingAssignment]) -> Self {
        let each = |f: &dyn Fn(&ProvingAssignment) -> Vec<Fr>| assignments.iter().map(f).collect::<Vec<_>>();
        CompactedScalars {
            a_aux: each(&|pa| compact(&pa.aux_assignment, &pa.a_aux_density)),
            b_inputs: each(&|pa| compact(&pa.input_assignment, &pa.b_input_density)),
            b_aux: each(&|pa| compact(&pa.aux_assignment, &pa.b_aux_density)),
        }
    }
}
