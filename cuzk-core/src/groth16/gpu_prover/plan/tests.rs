use super::*;

const GIB: u64 = 1 << 30;

/// A modelled card and a 2^27 partition's sizes on it (the H200's
/// figures, rounded): H buffers 12 GiB, the largest MSM whole ~10 GiB,
/// the query workspace ~9 GiB, an MSM of 2^20-point chunks ~0.2 GiB,
/// z 4 GiB. `pce`: the circuit's matrices resident, and the partitions
/// carry their witness only.
struct Card {
    vram: u64,
    pce: bool,
}

const PARTITION_2_27: Sizes =
    Sizes { h_bytes: 12 * GIB, msm_bytes: 10 * GIB, query_bytes: 9 * GIB, min_msm_bytes: GIB / 5, z_bytes: 4 * GIB, streamed_bytes: 0 };
/// The matrices of a 2^27 partition in VRAM (~45 B per constraint).
const PCE_2_27: u64 = 6 * GIB;
const SRS_2_27: u64 = 48 * GIB;
/// An MSM workspace of [`RESIDENT_MIN_CHUNK_POINTS`]-point chunks,
/// points resident.
const RESIDENT_MSM_2_27: u64 = GIB / 2;

impl Card {
    /// A request the way the engine makes one: the matrices resident
    /// (with `pce`), the SRS resident where [`srs_resident`] says so,
    /// the working set (with z for witness-only partitions) reserved
    /// and circuit 0 pre-staged when it fits (else all that is left
    /// granted), the rest spare.
    fn request(&self, circuits: usize, sizes: Sizes, srs_bytes: u64) -> Request {
        let kept = if self.pce { PCE_2_27 } else { 0 };
        let vram = self.vram - kept;
        let z = if self.pce { sizes.z_bytes } else { 0 };
        let working = sizes.h_bytes + sizes.msm_bytes + z;
        let srs_resident = srs_resident(self.vram, kept, srs_bytes, sizes.h_bytes + z + RESIDENT_MSM_2_27);
        let left = vram - if srs_resident { srs_bytes } else { 0 };
        let granted = left.min(working);
        let staged_by = if self.pce { HInputs::SpmvOnDevice } else { HInputs::Uploaded };
        let first_staged = (granted >= working).then_some(staged_by);
        Request {
            circuits,
            srs_resident,
            first_staged,
            pce_resident: self.pce,
            pce_streamed: false,
            witness_only: self.pce,
            granted,
            spare: left - granted,
            sizes,
        }
    }
}

fn request(vram: u64, circuits: usize) -> Request {
    Card { vram, pce: false }.request(circuits, PARTITION_2_27, SRS_2_27)
}

fn plan(vram: u64, circuits: usize) -> Plan {
    Plan::choose(&request(vram, circuits))
}

fn pce_request(vram: u64, circuits: usize) -> Request {
    Card { vram, pce: true }.request(circuits, PARTITION_2_27, SRS_2_27)
}

/// One witness-only 2^27 partition, its matrices and the SRS resident,
/// nothing pre-staged: `granted` held, `spare` free beside it (another
/// worker holds the rest of the card).
fn granted(granted: u64, spare: u64) -> Request {
    Request {
        circuits: 1,
        srs_resident: true,
        first_staged: None,
        pce_resident: true,
        pce_streamed: false,
        witness_only: true,
        granted,
        spare,
        sizes: PARTITION_2_27,
    }
}

// The log line names every choice, so the tests compare it.

#[test]
fn resident_srs_runs_the_queries_beside_h() {
    let p = plan(139 * GIB, 1);
    assert_eq!(p.to_string(), "circuits=1 points=device h=device inputs=uploaded queries=beside_h next=when_due chunks=whole");
    assert_eq!(p.borrowed(&request(139 * GIB, 1)), 9 * GIB);
}

#[test]
fn resident_srs_batch_stages_the_next_circuit_and_overlaps() {
    let p = plan(139 * GIB, 2);
    assert_eq!(p.to_string(), "circuits=2 points=device h=device inputs=uploaded queries=beside_h next=second_h_buffers chunks=whole");
    assert_eq!(p.borrowed(&request(139 * GIB, 2)), 21 * GIB);
}

#[test]
fn resident_srs_without_spare_runs_the_queries_after_h() {
    // Room for the SRS and two working sets exactly: nothing to borrow.
    let card = Card { vram: SRS_2_27 + 44 * GIB, pce: false };
    let p = Plan::choose(&card.request(1, PARTITION_2_27, SRS_2_27));
    assert_eq!(p.points, PointsAt::Device);
    let req = Request { spare: 0, ..card.request(1, PARTITION_2_27, SRS_2_27) };
    assert_eq!(Plan::choose(&req).queries, Queries::AfterH);
    // Where reserving what it borrows fails.
    assert_eq!(p.without_borrowing(&req).queries, Queries::AfterH);
}

#[test]
fn streamed_srs_runs_l_and_b_in_the_h_scratch() {
    let p = plan(40 * GIB, 1);
    assert_eq!(p.to_string(), "circuits=1 points=host h=device inputs=uploaded queries=in_h_scratch(l,b) next=when_due chunks=whole");
    assert_eq!(p.borrowed(&request(40 * GIB, 1)), 0);
}

#[test]
fn streamed_srs_two_circuits_stage_the_next() {
    let p = plan(40 * GIB, 2);
    assert_eq!(
        p.to_string(),
        "circuits=2 points=host h=device inputs=uploaded queries=in_h_scratch(l,b) next=second_h_buffers chunks=whole"
    );
}

#[test]
fn streamed_srs_batch_runs_batch_msms() {
    let p = plan(40 * GIB, BATCH_MSMS_FROM_CIRCUITS);
    assert_eq!((p.points, p.h, p.next), (PointsAt::Host, HTerm::Device, NextInputs::WhenDue));
    assert_eq!(p.queries, Queries::Batched(BatchSize::Within(22 * GIB)));
}

#[test]
fn sixteen_gib_keeps_h_on_the_device_and_chunks_the_msms() {
    let p = plan(16 * GIB, 1);
    assert_eq!(
        p.to_string(),
        "circuits=1 points=host h=device inputs=uploaded queries=in_h_scratch(l,b) next=when_due chunks=within(4GiB)"
    );
    // Two circuits under the limit: no second set of H buffers.
    assert_eq!(plan(16 * GIB, 2).next, NextInputs::WhenDue);
    // A batch under it: batch MSMs within the whole grant.
    assert_eq!(
        plan(16 * GIB, 4).to_string(),
        "circuits=4 points=host h=device inputs=uploaded queries=batched(within 16GiB) next=when_due chunks=within(4GiB)"
    );
}

#[test]
fn too_little_for_the_h_buffers_puts_h_on_the_cpu() {
    let p = plan(8 * GIB, 1);
    assert_eq!(p.to_string(), "circuits=1 points=host h=cpu inputs=uploaded queries=after_h next=when_due chunks=within(8GiB)");
}

#[test]
fn a_resident_srs_under_a_limit_chunks_with_l_and_b_in_the_third_buffer() {
    let req = Request { circuits: 2, pce_resident: false, witness_only: false, ..granted(16 * GIB, 100 * GIB) };
    let p = Plan::choose(&req);
    assert_eq!(
        p.to_string(),
        "circuits=2 points=device h=device inputs=uploaded queries=in_h_scratch(l,b) next=when_due chunks=within(4GiB)"
    );
}

#[test]
fn resident_matrices_compute_abc_on_the_device() {
    let req = pce_request(139 * GIB, 1);
    let p = Plan::choose(&req);
    assert_eq!(p.to_string(), "circuits=1 points=device h=device inputs=spmv_on_device queries=beside_h next=when_due chunks=whole");
    // z came with the grant (circuit 0 was staged by the SpMV).
    assert_eq!(p.borrowed(&req), 9 * GIB);
    // Two circuits: the second set of H buffers has its own z.
    let req = pce_request(139 * GIB, 2);
    let p = Plan::choose(&req);
    assert_eq!(
        p.to_string(),
        "circuits=2 points=device h=device inputs=spmv_on_device queries=beside_h next=second_h_buffers chunks=whole"
    );
    assert_eq!(p.borrowed(&req), 12 * GIB + 4 * GIB + 9 * GIB);
}

#[test]
fn resident_matrices_with_the_srs_streamed() {
    let req = pce_request(46 * GIB, 2);
    let p = Plan::choose(&req);
    assert_eq!(p.to_string(), "circuits=2 points=host h=device inputs=spmv_on_device queries=in_h_scratch(l,b) next=when_due chunks=whole");
    assert_eq!(p.borrowed(&req), 0);
}

#[test]
fn assignments_with_abc_use_resident_matrices_when_z_fits_beside() {
    // Circuit 0 uploaded; the others by the SpMV, z borrowed.
    let req = Request { pce_resident: true, ..request(139 * GIB, 3) };
    let p = Plan::choose(&req);
    assert_eq!(p.inputs, HInputs::SpmvOnDevice);
    assert_eq!(p.borrowed(&req), 4 * GIB + 16 * GIB + 9 * GIB);
    // Where borrowing fails: uploaded.
    assert_eq!(p.without_borrowing(&req).inputs, HInputs::Uploaded);
    // No spare VRAM for z: uploaded.
    let req = Request { spare: 3 * GIB, ..req };
    assert_eq!(Plan::choose(&req).inputs, HInputs::Uploaded);
}

#[test]
fn sixteen_gib_uploads_abc_even_with_resident_matrices() {
    let req = Request { srs_resident: false, ..granted(16 * GIB, 0) };
    let p = Plan::choose(&req);
    assert_eq!(
        p.to_string(),
        "circuits=1 points=host h=device inputs=uploaded queries=in_h_scratch(l,b) next=when_due chunks=within(4GiB)"
    );
    assert_eq!(p.borrowed(&req), 0);
}

#[test]
fn witness_only_circuits_take_z_out_of_a_small_grant() {
    // Less than a whole working set granted (another worker holds the
    // rest of the card): z and the H buffers in the grant, the MSMs
    // chunked within the rest, rather than a, b, c on the host.
    let req = granted(20 * GIB, 0);
    let p = Plan::choose(&req);
    assert_eq!(
        p.to_string(),
        "circuits=1 points=device h=device inputs=spmv_on_device queries=in_h_scratch(l,b) next=when_due chunks=within(4GiB)"
    );
    assert!(p.z_in_grant);
    assert_eq!(p.borrowed(&req), 0);
    assert_eq!(p.without_borrowing(&req), p);
    // Circuits that carry a, b, c upload them instead (no smaller chunks).
    let carried = Request { witness_only: false, ..req };
    assert_eq!(
        Plan::choose(&carried).to_string(),
        "circuits=1 points=device h=device inputs=uploaded queries=in_h_scratch(l,b) next=when_due chunks=within(8GiB)"
    );
    // Too small a grant for z beside the H buffers: uploaded (host SpMV).
    let tiny = Request { granted: 16 * GIB, ..req };
    assert_eq!(Plan::choose(&tiny).inputs, HInputs::Uploaded);
}

#[test]
fn a_witness_staged_ahead_is_held_in_the_grant() {
    // The fallback beside another call's compute: circuit 0's witness
    // staged ahead and its H buffers filled by the SpMV, z in the
    // grant, the MSMs chunked within the rest (4 GiB left free for the
    // next call's witness), as the same call would plan with z.
    let req = Request { first_staged: Some(HInputs::SpmvOnDevice), ..granted(20 * GIB, 4 * GIB) };
    let p = Plan::choose(&req);
    assert_eq!(p, Plan { z_in_grant: false, ..Plan::choose(&granted(20 * GIB, 0)) });
    assert_eq!(
        p.to_string(),
        "circuits=1 points=device h=device inputs=spmv_on_device queries=in_h_scratch(l,b) next=when_due chunks=within(4GiB)"
    );
    assert_eq!(p.borrowed(&req), 0);
    // A whole working set with z granted: the MSMs whole (pre-staged).
    let whole = Request { first_staged: Some(HInputs::SpmvOnDevice), ..granted(26 * GIB, 0) };
    assert_eq!(Plan::choose(&whole).chunks, Chunks::Whole);
    let short = Request { first_staged: Some(HInputs::SpmvOnDevice), ..granted(25 * GIB, 0) };
    assert_eq!(Plan::choose(&short).chunks, Chunks::Within(9 * GIB));
}

#[test]
fn witness_only_circuits_keep_the_spmv_where_borrowing_z_fails() {
    // A whole working set granted, z to be borrowed beside it.
    let req = granted(23 * GIB, 10 * GIB);
    let p = Plan::choose(&req);
    assert_eq!((p.inputs, p.chunks, p.z_in_grant), (HInputs::SpmvOnDevice, Chunks::Whole, false));
    assert_eq!(p.borrowed(&req), 3 * GIB);
    // Another worker took the spare VRAM: z out of the grant instead.
    let q = p.without_borrowing(&req);
    assert_eq!(
        q.to_string(),
        "circuits=1 points=device h=device inputs=spmv_on_device queries=in_h_scratch(l,b) next=when_due chunks=within(7GiB)"
    );
    assert!(q.z_in_grant);
    assert_eq!(q.borrowed(&req), 0);
    // No spare at all: the same plan directly.
    assert_eq!(Plan::choose(&Request { spare: 0, ..req }), q);
}

#[test]
fn staged_by_the_spmv_stays_so_without_borrowing() {
    let req = pce_request(139 * GIB, 2);
    let p = Plan::choose(&req).without_borrowing(&req);
    assert_eq!(p.to_string(), "circuits=2 points=device h=device inputs=spmv_on_device queries=after_h next=when_due chunks=whole");
}

/// The SRS of a 2^27 circuit on cards (VRAM budgets) of 16 to 141 GB,
/// with the H100's sizes: resident from 80 GB up, beside the matrices
/// and a working set whose MSMs are chunked, not only where two whole
/// working sets fit beside it (141 GB).
#[test]
fn the_srs_is_resident_from_80_gb_up() {
    let (srs, pce) = (44 * GIB, 7 * GIB);
    let min_working = 12 * GIB + 4 * GIB + RESIDENT_MSM_2_27;
    for (budget, resident) in [(15, false), (23, false), (31, false), (47, false), (77, true), (139, true)] {
        // The matrices are resident where they fit beside a whole
        // working set (decided first: the SRS is not resident yet).
        let kept = if matrices_resident(budget * GIB, pce, None, 48 * GIB) { pce } else { 0 };
        assert_eq!(srs_resident(budget * GIB, kept, srs, min_working), resident, "{budget} GiB");
    }
    // Too little room beside the SRS and matrices for the H buffers and z.
    assert!(!srs_resident(60 * GIB, pce, srs, min_working));
}

/// A's points (11.65 GiB at 2^27) resident on the cards that keep a
/// 32 GiB PoRep's matrices but not its SRS, from ~40 GiB of budget: a
/// 48 GB card, not a 40 GB one nor one under 32 GiB; never without
/// the matrices, nor where the SRS is resident (the rule is not asked).
#[test]
fn a_resident_beside_the_matrices_from_40_gib() {
    let (srs, pce, a) = (44 * GIB, 7 * GIB, 11_650 * GIB / 1000);
    let working_from_host = 20 * GIB;
    let min_working = 12 * GIB + 4 * GIB + RESIDENT_MSM_2_27;
    for (budget, kept) in [(15, false), (23, false), (31, false), (37, false), (39, true), (46, true), (63, true)] {
        let budget = budget * GIB;
        let matrices = if matrices_resident(budget, pce, None, working_from_host) { pce } else { 0 };
        assert!(!srs_resident(budget, matrices, srs, min_working), "{budget}");
        assert_eq!(query_resident(budget, matrices, a, working_from_host), kept, "{budget}");
    }
    assert!(!query_resident(100 * GIB, 0, a, working_from_host), "the matrices streamed");
}

/// Cards between a 16 GiB one and one that keeps the SRS resident: the
/// plan of the 16 GiB card (the MSMs in chunks of one H buffer, L and
/// B beside the H MSM in the third), never the whole H MSM beside them.
#[test]
fn more_vram_with_the_points_in_host_memory_keeps_one_buffer_chunks() {
    for vram in [16, 24, 32, 48, 60] {
        let p = plan(vram * GIB, 1);
        assert_eq!((p.points, p.queries), (PointsAt::Host, Queries::InHScratch(Scratch::LAndB)), "{vram} GiB");
        // As the executor runs it where L fits the third buffer.
        assert_eq!(within_one_buffer(p.chunks, 4 * GIB), Chunks::Within(4 * GIB), "{vram} GiB");
    }
    let exactly = Chunks::Exactly(MsmOptions { max_chunk_points: 1 << 10, ..Default::default() });
    assert_eq!(within_one_buffer(exactly, 4 * GIB), exactly);
    // Batch MSMs keep their own sizing.
    assert_eq!(plan(40 * GIB, BATCH_MSMS_FROM_CIRCUITS).chunks, Chunks::Whole);
}

/// An 80 GB card (77 GiB budget): the SRS and matrices resident leave
/// room for one working set, whole less ~7 GiB, which the partition's
/// call is granted under the compute lock: the SpMV into z in the
/// grant, the MSMs chunked within the ~10 GiB left, L and B beside the
/// H MSM in the H term's third buffer (no room for a workspace of
/// their own).
#[test]
fn an_80_gb_card_chunks_beside_the_resident_srs() {
    let sizes = Sizes { msm_bytes: 17 * GIB, ..PARTITION_2_27 };
    let room = 77 * GIB - 44 * GIB - 7 * GIB;
    assert!(room < sizes.h_bytes + sizes.msm_bytes + sizes.z_bytes, "one whole working set does not fit");
    let req = Request { sizes, ..granted(room, 0) };
    let p = Plan::choose(&req);
    assert_eq!(
        p.to_string(),
        "circuits=1 points=device h=device inputs=spmv_on_device queries=in_h_scratch(l,b) next=when_due chunks=within(10GiB)"
    );
    assert!(p.z_in_grant);
    assert_eq!(p.borrowed(&req), 0);
}

/// A 16 GiB card (the VRAM limit): the matrices not resident, z not in
/// the grant beside three H buffers; with the matrices streamable, one
/// witness-only partition streams them (two H buffers, z and 0.5 GiB
/// of staging); two circuits, or a grant below that peak, upload a, b,
/// c as before.
#[test]
fn a_16_gib_card_streams_the_matrices_for_one_witness_only_circuit() {
    let sizes = Sizes { streamed_bytes: 8 * GIB + 4 * GIB + GIB / 2, ..PARTITION_2_27 };
    let req = Request {
        circuits: 1,
        srs_resident: false,
        first_staged: None,
        pce_resident: false,
        pce_streamed: true,
        witness_only: true,
        granted: 16 * GIB,
        spare: 0,
        sizes,
    };
    let p = Plan::choose(&req);
    assert_eq!(
        p.to_string(),
        "circuits=1 points=host h=device inputs=spmv_streamed queries=in_h_scratch(l,b) next=when_due chunks=within(4GiB)"
    );
    assert_eq!(p.borrowed(&req), 0);
    assert_eq!(p.without_borrowing(&req), p);
    let uploaded = |req: &Request| Plan::choose(req).inputs;
    assert_eq!(uploaded(&Request { circuits: 2, ..req }), HInputs::Uploaded);
    assert_eq!(uploaded(&Request { granted: 12 * GIB, ..req }), HInputs::Uploaded);
    assert_eq!(uploaded(&Request { pce_streamed: false, ..req }), HInputs::Uploaded);
    assert_eq!(uploaded(&Request { witness_only: false, ..req }), HInputs::Uploaded);
    // Resident matrices win where z fits beside the H buffers.
    assert_eq!(uploaded(&Request { pce_resident: true, granted: 17 * GIB, ..req }), HInputs::SpmvOnDevice);
}

/// The matrices beside the resident SRS by the rule that keeps the
/// SRS there; else beside a whole working set with the points from
/// host memory.
#[test]
fn matrices_are_resident_beside_the_srs_or_a_whole_working_set() {
    let (srs, min_working, from_host) = (44 * GIB, 17 * GIB, 48 * GIB);
    assert!(matrices_resident(77 * GIB, 7 * GIB, Some((srs, min_working)), from_host));
    assert!(!matrices_resident(67 * GIB, 7 * GIB, Some((srs, min_working)), from_host));
    assert!(matrices_resident(55 * GIB, 7 * GIB, None, from_host));
    assert!(!matrices_resident(54 * GIB, 7 * GIB, None, from_host));
}

/// The SRS from the first partition on: beside the matrices where
/// they are resident (placed first), else beside a working set alone;
/// a card with room for the SRS and a working set but not for the
/// matrices beside them keeps the matrices, not the SRS.
#[test]
fn the_srs_is_kept_from_the_first_partition_beside_the_matrices_placed_first() {
    let (srs, min_working) = (44 * GIB, 13 * GIB);
    let m = FirstMatrices { bytes: 7 * GIB, working_from_host: 52 * GIB, min_working: 17 * GIB };
    // 67 GiB: the matrices resident (7 + 52), the SRS not beside them
    // (44 + 7 + 17), though it fits beside a working set alone (44 + 13).
    assert!(srs_resident_from_first(67 * GIB, srs, min_working, None));
    assert!(!srs_resident_from_first(67 * GIB, srs, min_working, Some(&m)));
    // 68 GiB: both.
    assert!(srs_resident_from_first(68 * GIB, srs, min_working, Some(&m)));
    // 58 GiB: no room for the matrices beside a working set from host
    // memory: the SRS beside a working set alone, as with none.
    assert!(!matrices_resident(58 * GIB, m.bytes, None, m.working_from_host));
    assert!(srs_resident_from_first(58 * GIB, srs, min_working, Some(&m)));
    assert!(srs_resident_from_first(57 * GIB, srs, min_working, Some(&m)));
    assert!(!srs_resident_from_first(56 * GIB, srs, min_working, Some(&m)));
    assert!(!srs_resident_from_first(56 * GIB, srs, min_working, None));
}

/// Streamed where the H term has room and the budget holds the
/// streamed SpMV's peak (not known before the table is built: 0).
#[test]
fn matrices_stream_where_the_h_term_and_the_peak_fit() {
    let sizes = Sizes { streamed_bytes: 0, ..PARTITION_2_27 };
    assert!(matrices_streamed(13 * GIB, &sizes));
    assert!(!matrices_streamed(12 * GIB, &sizes), "no room for an MSM beside the H buffers");
    let sizes = Sizes { streamed_bytes: 12 * GIB + GIB / 2, ..sizes };
    assert!(matrices_streamed(13 * GIB, &sizes));
    assert!(!matrices_streamed(12 * GIB + GIB / 4, &sizes));
}

/// A call borrows all but one more working set of what is free.
#[test]
fn borrowing_leaves_the_next_call_a_working_set() {
    assert_eq!(borrowable(60 * GIB, 28 * GIB), 32 * GIB);
    assert_eq!(borrowable(20 * GIB, 28 * GIB), 0);
}

/// Chunks of one buffer only with the points from host memory, the H
/// term on the device and L beside the H MSM in its third buffer.
#[test]
fn one_buffer_chunks_only_beside_l_with_the_points_from_host() {
    let streamed = plan(40 * GIB, 1);
    assert!(chunks_within_third_buffer(&streamed));
    assert!(!chunks_within_third_buffer(&Plan { queries: Queries::AfterH, ..streamed }));
    assert!(!chunks_within_third_buffer(&Plan { points: PointsAt::Device, ..streamed }));
    assert!(!chunks_within_third_buffer(&Plan { h: HTerm::Cpu, ..streamed }));
}

/// As the executor runs a plan: unchanged where the device answers as
/// the planner assumed; L alone, or L and B after H, where the third
/// buffer holds less; the chunks of one buffer only with L there.
#[test]
fn a_plan_as_fitted_keeps_what_the_device_answers_for() {
    let streamed = plan(40 * GIB, 1);
    let capped = Some(within_one_buffer(streamed.chunks, 4 * GIB));
    let fitted = streamed.as_fitted(HInputs::Uploaded, Some(Scratch::LAndB), capped);
    assert_eq!(fitted, Plan { chunks: Chunks::Within(4 * GIB), ..streamed });
    let l_only = streamed.as_fitted(HInputs::Uploaded, Some(Scratch::L), capped);
    assert_eq!((l_only.queries, l_only.chunks), (Queries::InHScratch(Scratch::L), Chunks::Within(4 * GIB)));
    // A small circuit's buffer holds no chunk of L worth running: the
    // MSMs keep their chunks, L after H.
    let after = streamed.as_fitted(HInputs::Uploaded, None, capped);
    assert_eq!(after, Plan { queries: Queries::AfterH, ..streamed });
    // Resident matrices the device does not have: a, b, c uploaded, z
    // not in the grant.
    let req = granted(20 * GIB, 0);
    let spmv = Plan::choose(&req);
    assert!(spmv.z_in_grant);
    let uploaded = spmv.as_fitted(HInputs::Uploaded, Some(Scratch::LAndB), None);
    assert_eq!(uploaded, Plan { inputs: HInputs::Uploaded, z_in_grant: false, ..spmv });
    // Every plan the planner makes for these cards runs as made where
    // the device answers as assumed.
    for p in [plan(139 * GIB, 1), plan(139 * GIB, 2), plan(16 * GIB, 4), plan(8 * GIB, 1), Plan::choose(&pce_request(139 * GIB, 2))] {
        let scratch = match p.queries {
            Queries::InHScratch(s) => Some(s),
            _ => None,
        };
        assert_eq!(p.as_fitted(p.inputs, scratch, None), p, "{p}");
    }
}

/// A plan made by hand that asks for what does not apply runs without
/// it: no second workspace with the points from host memory, no batch
/// or second set of H buffers for one circuit, no batch with resident
/// points.
#[test]
fn a_plan_as_fitted_drops_what_does_not_apply() {
    let one = plan(40 * GIB, 1);
    let beside = Plan { queries: Queries::BesideH, ..one };
    assert_eq!(beside.as_fitted(HInputs::Uploaded, None, None).queries, Queries::AfterH);
    let batched = Plan { queries: Queries::Batched(BatchSize::Within(GIB)), next: NextInputs::SecondHBuffers, ..one };
    let fitted = batched.as_fitted(HInputs::Uploaded, None, None);
    assert_eq!((fitted.queries, fitted.next), (Queries::AfterH, NextInputs::WhenDue));
    let resident_batch = Plan { points: PointsAt::Device, circuits: 4, ..batched };
    assert_eq!(resident_batch.as_fitted(HInputs::Uploaded, None, None).queries, Queries::AfterH);
    let cpu = Plan { h: HTerm::Cpu, circuits: 2, next: NextInputs::SecondHBuffers, ..one };
    let fitted = cpu.as_fitted(HInputs::Uploaded, Some(Scratch::LAndB), Some(Chunks::Within(GIB)));
    assert_eq!((fitted.queries, fitted.next, fitted.chunks), (Queries::AfterH, NextInputs::WhenDue, one.chunks));
}
