//! A model of the cards a 32 GiB PoRep partition (a 2^27 circuit) is
//! proved on, for the planner's tests (issue 53): what a card of a given
//! VRAM budget decides for a stream of partitions, and a rating of the
//! plan each partition gets in seconds of compute lock.
//!
//! The decisions are the production rules themselves, in the order the
//! engine takes them: the matrices resident or streamed when the first
//! partition is synthesized ([`plan::matrices_resident`],
//! [`plan::matrices_streamed`]: the SRS is not resident yet), the SRS
//! resident before its working set is reserved ([`plan::srs_resident`]),
//! then per partition the interlock's path (its whole working set
//! reserved and pre-staged while the call before it computes, its
//! witness staged ahead ([`super::stages_ahead`]), or the fallback) and
//! grant ([`fallback_grant`], [`plan::borrowable`]) on a real
//! [`VramBudget`], then [`Plan::choose`]. Only the device's answers are
//! modelled: the sizes below (measured on an H100 where a figure exists,
//! estimated where it says so), and a card whose free memory is its
//! budget.
//!
//! The rating ([`seconds`]) is a model, not a measurement: a sum of phase
//! figures measured at 2^27 (H100 unless noted), fitted to reproduce the
//! partitions measured (1.87 s under a 16 GiB limit, 1.47 s on an 80 GB
//! card), monotone where it should be (points from host memory never
//! faster than resident ones, larger chunks never slower, the queries
//! beside the H MSM never slower than after it, except L beside a whole
//! H MSM with the points from host memory, which was measured slower). It
//! orders plans; its absolute figures for plans never measured (a 141 GB
//! card at H100 speed) are estimates. It lives here, not in the plan
//! report, because its figures hold for a 2^27 partition only.

use super::{stages_ahead, VRAM_HEADROOM};
use crate::engine::backend::StageAhead;
use crate::engine::interlock::{VramBudget, VramReservation};
use crate::engine::prover_worker::fallback_grant;
use crate::groth16::gpu_prover::plan::{self, Chunks, HInputs, HTerm, Plan, PointsAt, Queries, Request, Scratch, Sizes};
use std::sync::Arc;

const GIB: u64 = 1 << 30;

/// Hundredths of a GiB.
const fn gib_100(hundredths: u64) -> u64 {
    hundredths * GIB / 100
}

// The device sizes of a 2^27 partition (what `GpuBackend::sizes` and
// friends answer on the device).

/// The SRS on the device (`DeviceSrs::bytes`).
const SRS: u64 = gib_100(4412);
/// A's points alone (`DeviceQuery::bytes`): 130.3 M of 96 bytes.
const A_POINTS: u64 = gib_100(1165);
/// The circuit's matrices on the device (`GpuPce::device_bytes`).
const MATRICES: u64 = gib_100(680);
/// z, one Fr per variable (`Pce::z_bytes`): what the H100's 26.3 GiB
/// beside its SRS and matrices, less two of it and the H buffers, leaves
/// for the MSMs (the 6.49 GiB it logs).
const Z: u64 = gib_100(390);
/// The H term's three buffers of 2^27 Fr (`GpuProver::h_bytes`).
const H_BUFFERS: u64 = 12 * GIB;
/// One of them: the third, where L and B run beside the H MSM.
const THIRD_BUFFER: u64 = 4 * GIB;
/// The largest MSM's workspace, whole, points resident: the 28.6 GiB
/// peak above the SRS of the whole MSMs one after another, less the H
/// buffers.
const MSM_RESIDENT: u64 = gib_100(1660);
/// The same with the points from host memory (staged in the workspace).
const MSM_FROM_HOST: u64 = 32 * GIB;
/// The working set resident matrices are kept beside with the points
/// from host memory (`chunked_working_set_from_host`): the H buffers, z,
/// MSMs within one H buffer.
const MATRICES_BESIDE: u64 = H_BUFFERS + Z + THIRD_BUFFER;
/// The query MSMs' own workspace ([`Queries::BesideH`]): the H200's 45.2
/// GiB above the SRS with it, less one working set.
const QUERY_WORKSPACE: u64 = gib_100(1660);
/// An MSM in chunks of 2^20 points (`min_msm_bytes`); an estimate.
const MIN_MSM: u64 = GIB / 2;
/// An MSM in chunks of [`plan::RESIDENT_MIN_CHUNK_POINTS`] points (2^23), the
/// points resident; an estimate.
const RESIDENT_MIN_MSM: u64 = 2 * GIB;
/// The streamed SpMV's peak: two H buffers, z and the staging area.
const STREAMED_PEAK: u64 = 8 * GIB + Z + GIB / 2;
/// What a card takes beyond the budget's headroom: the driver, the CUDA
/// context and the prover's own memory (an 80 GB H100 reports 79.6 GiB
/// and budgets 77.2 GiB).
const CARD_OWN: u64 = gib_100(180);

/// The VRAM budget of a card of `gib` GiB.
fn budget(gib: u64) -> u64 {
    gib * GIB - CARD_OWN - VRAM_HEADROOM
}

// The rating's phase figures, seconds at 2^27.

/// The H buffers' allocation inside the compute lock (30-51 ms).
const H_BUFFERS_ALLOC: f64 = 0.04;
/// The SpMV on the device, matrices resident (16-17 ms).
const SPMV: f64 = 0.017;
/// The witness upload (~4 GiB) inside the compute lock (0.11-0.12 s).
const WITNESS_UPLOAD: f64 = 0.12;
/// a, b, c uploaded: 12.9 GB at ~25 GB/s.
const ABC_UPLOAD: f64 = 0.52;
/// The witness and the 7.3 GB of matrices streamed to the SpMV: the 16
/// GiB card's H term phase (0.58-0.61 s) less its NTTs and allocation.
const STREAMED_SPMV: f64 = 0.27;
/// a, b, c computed on the host from the witness (a partition's synthesis
/// took 6.5 s with it, 4.1 s once the SpMV left the host).
const HOST_SPMV: f64 = 2.4;
/// The H term's NTTs and pointwise step.
const H_TERM: f64 = 0.283;
/// Every MSM whole, one after another, the points resident: 1.347 s per
/// partition less the H term (the H MSM 0.78 s of it).
const MSMS_RESIDENT: f64 = 1.064;
/// The same with the points from host memory: what, chunked to one H
/// buffer with L and B beside the H MSM, gives the 16 GiB card's 1.87 s.
const MSMS_FROM_HOST: f64 = 1.37;
/// The MSMs chunked at all (fewer windows sorted at once): 1.474 s within
/// 10 GiB against 1.347 s whole, queries after H, less two chunk passes.
const CHUNKED: f64 = 0.12;
/// Each chunk of the largest MSM (a pass over its buckets): within 6 GiB
/// 1.440-1.448 s against 1.438-1.441 s within 10 GiB.
const CHUNK_PASS: f64 = 0.005;
/// L and B beside the H MSM, points resident, in their own workspace or
/// the third buffer: 1.438 against 1.474 s (within 10 GiB), and on the
/// H200 1.283 against 1.318 s (whole). Two MSMs bound by the same
/// multiply pipe overlap only each other's sorts and reductions.
const BESIDE_RESIDENT: f64 = 0.035;
/// L and B beside the H MSM chunked to one buffer, the points from host
/// memory (L bound by its uploads): 1.617 against 1.870 s (H200, 16 GiB).
const BESIDE_FROM_HOST: f64 = 0.25;
/// L beside a whole H MSM, the points from host memory: L took twice as
/// long, 2.28 s per partition against 1.96 s with chunks of one buffer. A
/// cost, not a saving.
const BESIDE_WHOLE_FROM_HOST: f64 = -0.23;
/// The points of every MSM across PCIe: ~47 GB at ~55 GB/s.
const POINTS_OVER_PCIE: f64 = 0.85;
/// A's share of them: 12.5 GB.
const A_OVER_PCIE: f64 = 0.226;
/// A's points resident, the rest from host memory: A's MSM after the H
/// MSM reads VRAM instead of waiting for its points' upload (0.245-0.253 s
/// uploaded, ~0.05 s resident).
const A_RESIDENT_SAVES: f64 = 0.195;

/// What a partition carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Circuit {
    /// No PCE: a, b, c from synthesis.
    Classic,
    /// A PCE: its witness only where the card keeps the matrices (resident
    /// or ready to stream), else a, b, c from synthesis.
    Pce,
}

/// Where a card keeps the circuit's matrices.
enum MatricesAt {
    /// Resident, their bytes held in the budget.
    Vram {
        _held: VramReservation,
    },
    Streamed,
    Host,
}

/// The interlock's path (the trace's `path`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    /// The whole working set reserved and circuit 0 staged under the
    /// memory lock, beside the other call's compute.
    Prestaged,
    /// The witness staged ahead under the memory lock, the rest granted
    /// under the compute lock.
    StagedAhead,
    /// Everything within what is free under the compute lock.
    Fallback,
}

/// One partition's call: its path, request and plan.
struct Call {
    path: Path,
    req: Request,
    plan: Plan,
    /// A's points resident where the SRS is not (`make_query_resident`).
    a_resident: bool,
}

/// A card of one VRAM budget, with the copies it keeps for the circuit.
struct Card {
    vram: Arc<VramBudget>,
    srs: Option<VramReservation>,
    /// A's points, where the SRS is not resident.
    a: Option<VramReservation>,
    matrices: MatricesAt,
    witness_only: bool,
}

impl Card {
    /// A card of `budget` bytes after the stream's first partition has
    /// been synthesized (its matrices kept: `abc_on_device`, the SRS not
    /// resident yet) and has reached the memory lock (the SRS kept:
    /// `keep_resident`).
    fn new(budget: u64, circuit: Circuit) -> Card {
        Self::with_urgent_reserve(budget, 0, circuit)
    }

    /// [`Card::new`] with the last `urgent_reserve` bytes of the budget
    /// kept for urgent work (`gpus.urgent_vram_reserve`): the rules then
    /// decide by the budget less it, as the backend's do.
    fn with_urgent_reserve(budget: u64, urgent_reserve: u64, circuit: Circuit) -> Card {
        let vram = VramBudget::with_urgent_reserve(budget, urgent_reserve);
        let budget = vram.normal_total();
        let from_host = Sizes { streamed_bytes: STREAMED_PEAK, ..sizes(false, false) };
        let matrices = match circuit {
            Circuit::Classic => MatricesAt::Host,
            Circuit::Pce if plan::matrices_resident(budget, MATRICES, None, MATRICES_BESIDE) => {
                MatricesAt::Vram { _held: vram.try_reserve(MATRICES).expect("the matrices fit an empty budget") }
            }
            Circuit::Pce if plan::matrices_streamed(budget, &from_host) => MatricesAt::Streamed,
            Circuit::Pce => MatricesAt::Host,
        };
        let witness_only = !matches!(matrices, MatricesAt::Host);
        // `make_resident`: beside the resident matrices and z.
        let (kept, z) = match matrices {
            MatricesAt::Vram { .. } => (MATRICES, Z),
            _ => (0, 0),
        };
        let srs = plan::srs_resident(budget, kept, SRS, H_BUFFERS + 2 * z + RESIDENT_MIN_MSM)
            .then(|| vram.try_reserve(SRS).expect("the SRS fits beside the matrices"));
        // `make_query_resident`: A's points beside the matrices, the SRS not.
        let a = (srs.is_none() && witness_only && plan::query_resident(budget, kept, A_POINTS, MATRICES_BESIDE))
            .then(|| vram.try_reserve(A_POINTS).expect("A's points fit beside the matrices"));
        Card { vram, srs, a, matrices, witness_only }
    }

    fn pce_resident(&self) -> bool {
        matches!(self.matrices, MatricesAt::Vram { .. })
    }

    /// One partition through the interlock: its memory phase while the
    /// call before it computes holding `computing`, then its compute phase
    /// once that call is done, before the next call's memory phase (that
    /// one's worker is in its epilogue). The call, and what it holds while
    /// it computes.
    fn prove(&self, computing: Vec<VramReservation>) -> (Call, Vec<VramReservation>) {
        let sizes = sizes(self.srs.is_some(), self.pce_resident());
        // `vram_needed`: the working set, z where the partition carries its
        // witness only.
        let need = sizes.h_bytes + sizes.msm_bytes + if self.witness_only { Z } else { 0 };
        let resident = self.srs.is_some() && self.pce_resident();
        let ahead = stages_ahead(self.witness_only, resident, Z, H_BUFFERS + Z + RESIDENT_MIN_MSM);
        enum Staged {
            Whole(VramReservation),
            Ahead(VramReservation, StageAhead),
            Nothing(Option<StageAhead>),
        }
        let staged = match self.vram.try_reserve(need) {
            Some(r) => Staged::Whole(r),
            None => match ahead.and_then(|a| Some((self.vram.try_reserve(a.bytes)?, a))) {
                Some((held, a)) => Staged::Ahead(held, a),
                None => Staged::Nothing(ahead),
            },
        };
        drop(computing);
        let base = Request {
            circuits: 1,
            srs_resident: self.srs.is_some(),
            first_staged: None,
            pce_resident: self.pce_resident(),
            pce_streamed: false,
            witness_only: self.witness_only,
            granted: 0,
            spare: 0,
            sizes,
        };
        match staged {
            Staged::Whole(r) => {
                // `prestage`: the SpMV where the matrices are resident.
                let first = if self.witness_only && self.pce_resident() { HInputs::SpmvOnDevice } else { HInputs::Uploaded };
                let req = Request { first_staged: Some(first), granted: need, spare: plan::borrowable(self.vram.free(), need), ..base };
                let (plan, borrowed) = Plan::choose_and_borrow(&req, |bytes| self.vram.try_reserve(bytes));
                (
                    Call { path: Path::Prestaged, req, plan, a_resident: self.a.is_some() },
                    [Some(r), borrowed].into_iter().flatten().collect(),
                )
            }
            Staged::Ahead(held, a) => {
                let grant = fallback_grant(&self.vram, need, held.bytes(), Some(a));
                let req = Request { first_staged: Some(HInputs::SpmvOnDevice), granted: grant.bytes() + held.bytes(), ..base };
                (Call { path: Path::StagedAhead, req, plan: Plan::choose(&req), a_resident: self.a.is_some() }, vec![held, grant])
            }
            Staged::Nothing(ahead) => {
                let grant = fallback_grant(&self.vram, need, 0, ahead);
                // `compute_fallback`: the matrices streamed where they are not resident.
                let streamed = self.witness_only && matches!(self.matrices, MatricesAt::Streamed);
                let sizes = Sizes { streamed_bytes: if streamed { STREAMED_PEAK } else { 0 }, ..sizes };
                let req = Request { pce_streamed: streamed, granted: grant.bytes(), sizes, ..base };
                (Call { path: Path::Fallback, req, plan: Plan::choose(&req), a_resident: self.a.is_some() }, vec![grant])
            }
        }
    }

    /// A stream of `n` partitions, each one's memory phase beside the
    /// previous one's compute (two workers on the device).
    fn stream(&self, n: usize) -> Vec<Call> {
        let mut computing = Vec::new();
        let mut calls = Vec::new();
        for _ in 0..n {
            let (call, holds) = self.prove(computing);
            calls.push(call);
            computing = holds;
        }
        calls
    }
}

/// The sizes a call plans with (`GpuBackend::sizes`; the streamed peak
/// only on the fallback path).
fn sizes(srs_resident: bool, pce_resident: bool) -> Sizes {
    Sizes {
        h_bytes: H_BUFFERS,
        msm_bytes: if srs_resident { MSM_RESIDENT } else { MSM_FROM_HOST },
        query_bytes: if srs_resident { QUERY_WORKSPACE } else { 0 },
        min_msm_bytes: MIN_MSM,
        z_bytes: if pce_resident { Z } else { 0 },
        streamed_bytes: 0,
    }
}

/// `plan` as the executor runs it at 2^27 ([`Plan::as_fitted`]): the
/// device answers as the planner assumes, and the third buffer holds
/// chunks of L and B worth running (the H100 runs them there, within 4
/// and 6.49 GiB), so the MSMs run in chunks of one H buffer where L runs
/// there with the points from host memory.
fn as_run(plan: &Plan) -> Plan {
    let scratch = match plan.queries {
        Queries::InHScratch(s) => Some(s),
        _ => None,
    };
    let one_buffer = plan::chunks_within_third_buffer(plan).then(|| plan::within_one_buffer(plan.chunks, THIRD_BUFFER));
    plan.as_fitted(plan.inputs, scratch, one_buffer)
}

/// The model's seconds of compute lock for a 2^27 partition's `call`, as
/// the executor runs its plan (see the module's documentation); None for
/// a plan it does not rate (the H term on the CPU, several circuits,
/// chunks given exactly).
fn seconds(call: &Call) -> Option<f64> {
    rate(call.path, &call.req, &as_run(&call.plan), call.a_resident)
}

/// [`seconds`] of `plan` as given, A's points resident (`a_resident`,
/// the points from host memory) or not.
fn rate(path: Path, req: &Request, plan: &Plan, a_resident: bool) -> Option<f64> {
    if plan.h == HTerm::Cpu || plan.circuits != 1 {
        return None;
    }
    let inputs = match path {
        Path::Prestaged => 0.0,
        Path::StagedAhead => H_BUFFERS_ALLOC + SPMV,
        Path::Fallback => {
            H_BUFFERS_ALLOC
                + match plan.inputs {
                    HInputs::SpmvOnDevice => WITNESS_UPLOAD + SPMV,
                    HInputs::SpmvStreamed => STREAMED_SPMV,
                    HInputs::Uploaded if req.witness_only => HOST_SPMV + ABC_UPLOAD,
                    HInputs::Uploaded => ABC_UPLOAD,
                }
        }
    };
    let chunks = match plan.chunks {
        Chunks::Within(b) if b < req.sizes.msm_bytes => CHUNKED + CHUNK_PASS * req.sizes.msm_bytes.div_ceil(b.max(1)) as f64,
        Chunks::Whole | Chunks::Within(_) => 0.0,
        Chunks::Exactly(_) => return None,
    };
    let one_buffer = matches!(plan.chunks, Chunks::Within(b) if b <= THIRD_BUFFER);
    let beside = match (plan.queries, plan.points) {
        (Queries::AfterH, _) => 0.0,
        (Queries::BesideH | Queries::InHScratch(Scratch::LAndB), PointsAt::Device) => BESIDE_RESIDENT,
        (Queries::InHScratch(Scratch::L), PointsAt::Device) => BESIDE_RESIDENT / 2.0,
        (Queries::InHScratch(_), PointsAt::Host) if !one_buffer => BESIDE_WHOLE_FROM_HOST,
        (Queries::InHScratch(Scratch::LAndB), PointsAt::Host) => BESIDE_FROM_HOST,
        (Queries::InHScratch(Scratch::L), PointsAt::Host) => BESIDE_FROM_HOST / 2.0,
        // The executor runs these after H (points from host memory).
        (Queries::BesideH, PointsAt::Host) => 0.0,
        (Queries::Batched(_), _) => return None,
    };
    let msms = match plan.points {
        PointsAt::Device => MSMS_RESIDENT + chunks - beside,
        PointsAt::Host if a_resident => (MSMS_FROM_HOST - A_RESIDENT_SAVES + chunks - beside).max(POINTS_OVER_PCIE - A_OVER_PCIE),
        PointsAt::Host => (MSMS_FROM_HOST + chunks - beside).max(POINTS_OVER_PCIE),
    };
    Some(inputs + H_TERM + msms)
}

mod tests {
    use super::*;

    /// Partitions streamed before the card is in its steady state.
    const WARM_UP: usize = 4;

    /// The steady state of a stream on a card of `budget` bytes: each
    /// distinct path and plan of its last calls, and the mean rating.
    fn steady(budget: u64, circuit: Circuit) -> (Vec<String>, f64) {
        steady_of(Card::new(budget, circuit))
    }

    /// [`steady`] of `card`.
    fn steady_of(card: Card) -> (Vec<String>, f64) {
        let calls = card.stream(WARM_UP + 2);
        let last = &calls[WARM_UP..];
        let mut seen: Vec<String> = Vec::new();
        for c in last {
            let line = format!("{:?}: {}{}", c.path, as_run(&c.plan), if c.a_resident { " a=device" } else { "" });
            if !seen.contains(&line) {
                seen.push(line);
            }
        }
        let rated: Vec<f64> = last.iter().map(|c| seconds(c).unwrap_or_else(|| panic!("unrated: {}", c.plan))).collect();
        (seen, rated.iter().sum::<f64>() / rated.len() as f64)
    }

    #[test]
    fn sizes_and_figures_reproduce_what_was_measured() {
        // The H100 80 GB: the plan it logs, 1.47 s of compute lock.
        let (plans, s) = steady(budget(80), Circuit::Pce);
        assert_eq!(
            plans,
            ["StagedAhead: circuits=1 points=device h=device inputs=spmv_on_device queries=in_h_scratch(l,b) next=when_due chunks=within(6.48GiB)"]
        );
        assert!((s - 1.47).abs() < 0.05, "{s}");
        // `vram_limit = "16GiB"`: 1.87 s.
        let (plans, s) = steady(16 * GIB, Circuit::Pce);
        assert_eq!(
            plans,
            ["Fallback: circuits=1 points=host h=device inputs=spmv_streamed queries=in_h_scratch(l,b) next=when_due chunks=within(4GiB)"]
        );
        assert!((s - 1.87).abs() < 0.02, "{s}");
    }

    /// Each card's plan in its steady state (as the executor logs it),
    /// and the model's rating, with the partitions' matrices kept on the
    /// card where it has room for them (a PCE: resident from a 32 GB card
    /// up, else streamed) and without (classic partitions, a, b, c from
    /// synthesis).
    #[test]
    fn each_card_gets_its_plan() {
        use Circuit::{Classic, Pce};
        let streamed = |chunks: &str| {
            format!(
                "Fallback: circuits=1 points=host h=device inputs=spmv_streamed queries=in_h_scratch(l,b) next=when_due chunks={chunks}"
            )
        };
        let classic_streamed = |chunks: &str| {
            format!("Fallback: circuits=1 points=host h=device inputs=uploaded queries=in_h_scratch(l,b) next=when_due chunks={chunks}")
        };
        let matrices_resident =
            "Fallback: circuits=1 points=host h=device inputs=spmv_on_device queries=in_h_scratch(l,b) next=when_due chunks=within(4GiB)"
                .to_string();
        let table: [(u64, Circuit, String, f64); 20] = [
            (16, Classic, classic_streamed("within(1.20GiB)"), 2.218),
            (24, Classic, classic_streamed("within(4GiB)"), 2.123),
            (32, Classic, classic_streamed("within(4GiB)"), 2.123),
            (40, Classic, classic_streamed("within(4GiB)"), 2.123),
            (48, Classic, classic_streamed("within(4GiB)"), 2.123),
            // The SRS resident beside one working set with chunked MSMs.
            (
                64,
                Classic,
                "Fallback: circuits=1 points=device h=device inputs=uploaded queries=in_h_scratch(l,b) next=when_due chunks=within(5.08GiB)".into(),
                2.012,
            ),
            // One whole working set beside the SRS, not two: every
            // partition on the fallback, a, b, c uploaded in the lock.
            (80, Classic, "Fallback: circuits=1 points=device h=device inputs=uploaded queries=after_h next=when_due chunks=whole".into(), 1.907),
            (96, Classic, "Fallback: circuits=1 points=device h=device inputs=uploaded queries=after_h next=when_due chunks=whole".into(), 1.907),
            (120, Classic, "Prestaged: circuits=1 points=device h=device inputs=uploaded queries=after_h next=when_due chunks=whole".into(), 1.347),
            (141, Classic, "Prestaged: circuits=1 points=device h=device inputs=uploaded queries=beside_h next=when_due chunks=whole".into(), 1.312),
            (16, Pce, streamed("within(1.20GiB)"), 1.968),
            (24, Pce, streamed("within(4GiB)"), 1.873),
            // The matrices resident, the SRS not beside them.
            (32, Pce, matrices_resident.clone(), 1.740),
            (40, Pce, matrices_resident.clone(), 1.740),
            // A's points resident beside them too: A's MSM reads VRAM.
            (48, Pce, format!("{matrices_resident} a=device"), 1.545),
            (64, Pce, format!("{matrices_resident} a=device"), 1.545),
            (
                80,
                Pce,
                "StagedAhead: circuits=1 points=device h=device inputs=spmv_on_device queries=in_h_scratch(l,b) next=when_due chunks=within(6.48GiB)".into(),
                1.504,
            ),
            (
                96,
                Pce,
                "StagedAhead: circuits=1 points=device h=device inputs=spmv_on_device queries=after_h next=when_due chunks=whole".into(),
                1.404,
            ),
            (120, Pce, "Prestaged: circuits=1 points=device h=device inputs=spmv_on_device queries=after_h next=when_due chunks=whole".into(), 1.347),
            (141, Pce, "Prestaged: circuits=1 points=device h=device inputs=spmv_on_device queries=beside_h next=when_due chunks=whole".into(), 1.312),
        ];
        for (gib, circuit, want, rating) in table {
            let (plans, s) = steady(budget(gib), circuit);
            assert_eq!(plans, [want], "{gib} GB, {circuit:?}");
            assert!((s - rating).abs() < 0.0005, "{gib} GB, {circuit:?}: rated {s:.3} s");
        }
    }

    /// The default urgent VRAM reserve (1 GiB) leaves each card's
    /// partitions their path, where their points, H term and inputs are
    /// and where their queries run; at most their MSMs' chunks shrink by
    /// it (a 16 GiB limit's and a 64 or 80 GB card's), for at most 15 ms
    /// of compute lock per partition.
    #[test]
    fn the_urgent_vram_reserve_costs_each_card_at_most_smaller_chunks() {
        let but_chunks = |plans: &[String]| plans.iter().map(|p| p[..p.find(" chunks=").unwrap()].to_string()).collect::<Vec<_>>();
        for circuit in [Circuit::Classic, Circuit::Pce] {
            for gib in [16, 24, 32, 40, 48, 64, 80, 96, 120, 141] {
                // 16: `vram_limit = "16GiB"`, the card.
                let bytes = if gib == 16 { 16 * GIB } else { budget(gib) };
                let (plans, s) = steady(bytes, circuit);
                let (reserved, s_reserved) = steady_of(Card::with_urgent_reserve(bytes, GIB, circuit));
                assert_eq!(but_chunks(&reserved), but_chunks(&plans), "{gib} GB, {circuit:?}");
                assert!(
                    (s..=s + 0.0155).contains(&s_reserved),
                    "{gib} GB, {circuit:?}: rated {s_reserved:.3} s with the reserve, {s:.3} s without"
                );
            }
        }
    }

    /// More VRAM never gets a plan the model rates slower, with the
    /// matrices kept and without: every budget from 14 to 141 GiB, in
    /// quarters of a GiB (a cliff shows between two of them).
    #[test]
    fn more_vram_never_rates_slower() {
        for circuit in [Circuit::Classic, Circuit::Pce] {
            let mut before: Option<(u64, f64, Vec<String>)> = None;
            for quarters in 14 * 4..=141 * 4 {
                let bytes = quarters * GIB / 4;
                let (plans, s) = steady(bytes, circuit);
                if let Some((less, slower, plans_less)) = &before {
                    assert!(
                        s <= slower + 1e-9,
                        "{circuit:?}: {:.2} GiB rated {s:.3} s ({plans:?}), {:.2} GiB {slower:.3} s ({plans_less:?})",
                        bytes as f64 / GIB as f64,
                        *less as f64 / GIB as f64,
                    );
                }
                before = Some((bytes, s, plans));
            }
        }
    }

    /// Where a card keeps the SRS, decided before the SRS is read (as a
    /// load straight to the devices decides it:
    /// [`plan::srs_resident_from_first`], the matrices' sizes from the
    /// `.pce` file), is where the card keeps it once its first partition
    /// has placed the matrices ([`Card::new`]), on every card from 14 to
    /// 141 GiB: a 64 GB card with a PCE keeps the matrices and not the
    /// SRS, so its SRS loads whole, as before.
    #[test]
    fn the_srs_decided_before_it_is_read_is_where_the_card_keeps_it() {
        let matrices =
            plan::FirstMatrices { bytes: MATRICES, working_from_host: MATRICES_BESIDE, min_working: H_BUFFERS + 2 * Z + RESIDENT_MIN_MSM };
        let first = |budget: u64, circuit: Circuit| {
            plan::srs_resident_from_first(budget, SRS, H_BUFFERS + RESIDENT_MIN_MSM, (circuit == Circuit::Pce).then_some(&matrices))
        };
        for quarters in 14 * 4..=141 * 4 {
            let bytes = quarters * GIB / 4;
            for circuit in [Circuit::Classic, Circuit::Pce] {
                let card = Card::new(bytes, circuit).srs.is_some();
                assert_eq!(first(bytes, circuit), card, "{:.2} GiB, {circuit:?}", bytes as f64 / GIB as f64);
            }
        }
        assert!(first(budget(64), Circuit::Classic) && !first(budget(64), Circuit::Pce));
        assert!(first(budget(80), Circuit::Pce));
    }

    /// The executor's cap of the MSMs' chunks to one H buffer, where L
    /// runs beside the H MSM with the points from host memory, is what
    /// keeps cards of 24 to 56 GiB from rating slower than 16 GiB: the
    /// plans as chosen, with a whole or larger H MSM beside L, rate as
    /// measured before the cap (2.28 against 1.96 s).
    #[test]
    fn the_one_buffer_cap_keeps_more_vram_from_rating_slower() {
        let limit = Card::new(16 * GIB, Circuit::Classic).stream(WARM_UP + 1).pop().unwrap();
        let limit_s = seconds(&limit).unwrap();
        for gib in [24, 32, 48] {
            let call = Card::new(budget(gib), Circuit::Classic).stream(WARM_UP + 1).pop().unwrap();
            assert_eq!(call.plan.points, PointsAt::Host, "{gib} GB");
            assert!(plan::chunks_within_third_buffer(&call.plan));
            let as_chosen = rate(call.path, &call.req, &call.plan, false).unwrap();
            assert!(as_chosen > limit_s + 0.2, "{gib} GB: {as_chosen:.3} s against {limit_s:.3} s");
            assert_eq!(seconds(&call), Some(limit_s), "{gib} GB");
        }
    }

    /// Every plan the rating takes, on every path.
    fn every_plan() -> Vec<(Path, Request, Plan)> {
        let mut all = Vec::new();
        let queries = [Queries::AfterH, Queries::BesideH, Queries::InHScratch(Scratch::L), Queries::InHScratch(Scratch::LAndB)];
        let chunks = [1, 2, 4, 6, 10, 20].map(|g| Chunks::Within(g * GIB));
        for path in [Path::Prestaged, Path::StagedAhead, Path::Fallback] {
            for inputs in [HInputs::Uploaded, HInputs::SpmvOnDevice, HInputs::SpmvStreamed] {
                for witness_only in [false, true] {
                    for points in [PointsAt::Device, PointsAt::Host] {
                        let req = Request {
                            circuits: 1,
                            srs_resident: points == PointsAt::Device,
                            first_staged: None,
                            pce_resident: true,
                            pce_streamed: false,
                            witness_only,
                            granted: 0,
                            spare: 0,
                            sizes: sizes(points == PointsAt::Device, true),
                        };
                        for q in queries {
                            for c in chunks.iter().copied().chain([Chunks::Whole]) {
                                let plan = Plan {
                                    circuits: 1,
                                    points,
                                    h: HTerm::Device,
                                    inputs,
                                    queries: q,
                                    next: plan::NextInputs::WhenDue,
                                    chunks: c,
                                    z_in_grant: false,
                                };
                                all.push((path, req, plan));
                            }
                        }
                    }
                }
            }
        }
        all
    }

    /// A chunk budget's bytes (whole: unbounded).
    fn chunk_bytes(c: Chunks) -> u64 {
        match c {
            Chunks::Within(b) => b,
            _ => u64::MAX,
        }
    }

    /// The rating's own order: the points from host memory never faster
    /// than resident ones, larger chunks never slower, the queries beside
    /// the H MSM never slower than after it (with the points from host
    /// memory and L beside the H MSM, both up to chunks of one H buffer:
    /// the measured exception), a pre-staged call never slower than one
    /// staged ahead, nor that than the fallback.
    #[test]
    fn the_rating_orders_plans_as_measured() {
        let rated = |path: Path, req: &Request, plan: Plan| rate(path, req, &plan, false).unwrap();
        // L beside an H MSM larger than one buffer, points from host memory.
        let exception = |p: &Plan| p.points == PointsAt::Host && p.queries != Queries::AfterH && chunk_bytes(p.chunks) > THIRD_BUFFER;
        let larger = [1, 2, 4, 6, 10, 20].map(|g| Chunks::Within(g * GIB)).into_iter().chain([Chunks::Whole]);
        for (path, req, plan) in every_plan() {
            let s = rated(path, &req, plan);
            if plan.points == PointsAt::Device {
                let host_req = Request { srs_resident: false, sizes: sizes(false, true), ..req };
                let from_host = rated(path, &host_req, Plan { points: PointsAt::Host, ..plan });
                assert!(from_host >= s, "{plan}: {from_host} s from host memory against {s} s");
            }
            for chunks in larger.clone().filter(|c| chunk_bytes(*c) > chunk_bytes(plan.chunks)) {
                let other = Plan { chunks, ..plan };
                if !exception(&other) {
                    assert!(rated(path, &req, other) <= s, "{other} against {plan}");
                }
            }
            if plan.queries == Queries::AfterH {
                for queries in [Queries::BesideH, Queries::InHScratch(Scratch::L), Queries::InHScratch(Scratch::LAndB)] {
                    let other = Plan { queries, ..plan };
                    if !exception(&other) {
                        assert!(rated(path, &req, other) <= s, "{other} against {plan}");
                    }
                }
            }
            let faster = match path {
                Path::Fallback => Some(Path::StagedAhead),
                Path::StagedAhead => Some(Path::Prestaged),
                Path::Prestaged => None,
            };
            if let Some(faster) = faster {
                assert!(rated(faster, &req, plan) <= s, "{plan}: {faster:?} against {path:?}");
            }
            // The points' own upload is the floor of every MSM from host
            // memory; A's points resident never make it slower.
            if plan.points == PointsAt::Host {
                assert!(s >= H_TERM + POINTS_OVER_PCIE, "{plan}: {s} s");
                let a_resident = rate(path, &req, &plan, true).unwrap();
                assert!(a_resident <= s && a_resident >= H_TERM + POINTS_OVER_PCIE - A_OVER_PCIE, "{plan}: {a_resident} s with A resident");
            }
        }
    }
}
