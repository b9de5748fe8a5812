//! A Filecoin-partition-shaped proof on the GPU, checked against an
//! independent computation, in both VRAM regimes. At the default size it is
//! a quick GPU test; `CUZK_PARTITION_LOG_N=27` makes it the 2^27 scale run
//! (a ~134M-constraint synthetic partition), which also prints where the
//! GPU time went and the peak VRAM.
//!
//! The SRS: no setup can make 2^27-point parameters in reasonable time, so
//! the points are valid points with known discrete logs, made on the GPU
//! (`msm::test_inputs`: point i of a vector is k_(i mod D)·G for a
//! pseudo-random 64-bit k, D distinct multiples), and the verifying key's
//! points are known multiples of the generators. Then every MSM
//! Σ s_i·P_i is (Σ s_i·k_i)·G, which the CPU computes from the scalars
//! alone (no point arithmetic), with the H scalars from the CPU's own H
//! term (`h_term::h_coefficients`). The GPU proof, with fixed r and s, must
//! be byte-identical to `assemble` of those results. Such parameters prove
//! nothing (they are not from a setup), so the proof is not verified; the
//! byte-identity check is the independent computation.
//!
//! Regimes: the SRS resident in VRAM (no limit; the MSMs one after
//! another, then the query MSMs beside the H MSM), and a VRAM limit
//! (16 GiB at 2^27; proportionally small at the default size) with the SRS
//! read from host memory and every MSM chunked to fit (one after another,
//! then L beside the H MSM, then batch MSMs); the measured peak VRAM must
//! stay within the limit. Then no limit with the SRS read from host memory
//! (a card that holds the working set but not the SRS beside it), the
//! query MSMs after the H MSM or beside it. A resident regime whose working
//! set the card cannot hold beside the SRS (at 2^27, 45 GiB of points: an
//! 80 GB card holds one working set beside them, not a second workspace or
//! a second set of H buffers) is printed as skipped there; it does run
//! the resident regime of such a card, the MSMs chunked within the ~10 GiB
//! it has left beside the SRS, the matrices, the H buffers and z, with the
//! query MSMs after the H MSM and beside it in the H term's third buffer.
//! `CUZK_PARTITION_ONLY=resident` runs the resident regimes alone.

use cuzk_core::arith::Density;
use cuzk_core::circuits::Synthetic;
use cuzk_core::cs::ProvingAssignment;
use cuzk_core::groth16::gpu_prover::{
    BatchSize, BatchedMsms, Chunks, GpuProver, GpuTimings, HInputs, HTerm, NextInputs, Plan, PointsAt, Queries, Scratch,
};
use cuzk_core::groth16::gpu_srs::{pin_host_points, DeviceSrs, HostPinning, SrsPoints};
use cuzk_core::groth16::prover::{assemble, MsmResults};
use cuzk_core::srs::{Parameters, VerifyingKey};
use cuzk_core::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use cuzk_sys::msm::{self, MsmOptions, G1, G2};
use cuzk_sys::{DeviceBuffer, FrRepr, Stream};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand::SeedableRng;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Distinct multiples per point vector (the rest repeat them).
const DISTINCT: usize = 1 << 20;
const INPUTS: usize = 8;

/// A point vector of `n` points k_(i mod D)·gen made on the device.
fn make_points<Gr: msm::Group, A: Copy>(dev: i32, gen: &A, seed: u64, n: usize) -> Vec<A> {
    assert_eq!(std::mem::size_of::<A>(), std::mem::size_of::<Gr::Affine>());
    let mut out: Vec<A> = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    let mut points = DeviceBuffer::<Gr::Affine>::new(dev, n).unwrap();
    let mut scalars = DeviceBuffer::<FrRepr>::new(dev, n).unwrap();
    let gen: Gr::Affine = unsafe { std::mem::transmute_copy(gen) };
    msm::test_inputs::<Gr>(&gen, seed, DISTINCT.min(n), &mut points, &mut scalars).unwrap();
    drop(scalars);
    let stream = Stream::new(dev).unwrap();
    unsafe {
        // blstrs' affine points are #[repr(transparent)] over blst's.
        let dst = std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut Gr::Affine, n);
        points.copy_to_host(&stream, 0, dst).unwrap();
        out.set_len(n);
    }
    out
}

/// Σ scalars[i]·k_(offset + i) for one point vector (its discrete logs).
fn dot(scalars: &[Fr], seed: u64, offset: usize) -> Fr {
    cuzk_tests::dlogs::dot(scalars, seed, DISTINCT, offset)
}

fn compact(scalars: &[Fr], density: &Density) -> Vec<Fr> {
    (0..scalars.len()).filter(|&i| density.get(i)).map(|i| scalars[i]).collect()
}

/// Device memory the driver takes beside a plan's buffers where a query
/// MSM runs beside the H MSM, on its own thread and streams: at 2^22
/// within 0.1 GiB the peak was 8.2 MB above the H buffers and the MSMs'
/// budget, where larger budgets leave enough unused to hide it. Which
/// allocation it is (streams, the kernels' local memory) is not pinned
/// down; the engine keeps 1 GiB of every card out of its budget for such
/// (`VRAM_HEADROOM`).
const UNPLANNED_SLACK: u64 = 16 << 20;

/// Seeds of the five point vectors.
const SEEDS: [u64; 5] = [0x4811, 0x1111, 0xa0a0, 0xb1b1, 0xb2b2];

fn make_srs(dev: i32, pa: &ProvingAssignment, rng: &mut impl rand::RngCore) -> Parameters {
    let g1 = G1Affine::generator();
    let g2 = G2Affine::generator();
    let n_in = pa.input_assignment.len();
    let domain = pa.num_constraints().next_power_of_two();
    let a_len = n_in + pa.a_aux_density.count();
    let b_len = pa.b_input_density.count() + pa.b_aux_density.count();
    let [alpha, beta, gamma, delta]: [Fr; 4] = std::array::from_fn(|_| Fr::random(&mut *rng));
    let vk = VerifyingKey {
        alpha_g1: (g1 * alpha).to_affine(),
        beta_g1: (g1 * beta).to_affine(),
        beta_g2: (g2 * beta).to_affine(),
        gamma_g2: (g2 * gamma).to_affine(),
        delta_g1: (g1 * delta).to_affine(),
        delta_g2: (g2 * delta).to_affine(),
        ic: (0..n_in).map(|_| (g1 * Fr::random(&mut *rng)).to_affine()).collect(),
    };
    Parameters {
        host_pin: Default::default(),
        vk,
        h: make_points::<G1, _>(dev, &g1, SEEDS[0], domain - 1),
        l: make_points::<G1, _>(dev, &g1, SEEDS[1], pa.aux_assignment.len()),
        a: make_points::<G1, _>(dev, &g1, SEEDS[2], a_len),
        b_g1: make_points::<G1, _>(dev, &g1, SEEDS[3], b_len),
        b_g2: make_points::<G2, _>(dev, &g2, SEEDS[4], b_len),
    }
}

/// The MSM results from discrete logs and the CPU's H term.
fn expected_results(params: &Parameters, pa: &ProvingAssignment) -> MsmResults {
    let g1 = G1Projective::generator();
    let g2 = G2Projective::generator();
    let inputs = &pa.input_assignment;
    let aux = &pa.aux_assignment;
    let h = cuzk_core::groth16::h_term::h_coefficients(&pa.a, &pa.b, &pa.c).unwrap();
    let a_aux = compact(aux, &pa.a_aux_density);
    let b_in = compact(inputs, &pa.b_input_density);
    let b_aux = compact(aux, &pa.b_aux_density);
    let a = dot(inputs, SEEDS[2], 0) + dot(&a_aux, SEEDS[2], inputs.len());
    let b = dot(&b_in, SEEDS[3], 0) + dot(&b_aux, SEEDS[3], b_in.len());
    let b2 = dot(&b_in, SEEDS[4], 0) + dot(&b_aux, SEEDS[4], b_in.len());
    MsmResults { h: g1 * dot(&h[..params.h.len()], SEEDS[0], 0), l: g1 * dot(aux, SEEDS[1], 0), a: g1 * a, b_g1: g1 * b, b_g2: g2 * b2 }
}

/// Runs `f` and returns the least free device memory seen meanwhile
/// (polled every 2 ms, so only around the compute phase: the polling
/// thread's calls into the driver would slow the staging threads).
/// With CUZK_VRAM_TRACE set, prints every change of free memory seen (ms
/// from the start: MiB in use above the start), and the same after `f`.
fn min_free_during<R>(dev: i32, f: impl FnOnce() -> R) -> (R, u64) {
    let free = || cuzk_sys::free_memory(dev).unwrap();
    let start = free();
    let min_free = AtomicU64::new(start);
    let done = AtomicBool::new(false);
    let trace = std::env::var_os("CUZK_VRAM_TRACE").is_some();
    let t0 = Instant::now();
    // Stops the polling thread however `f` ends: a panic in `f` (a failed
    // unwrap) must reach the test harness, not leave the scope waiting.
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let r = std::thread::scope(|s| {
        let poll = s.spawn(|| {
            let (mut seen, mut changes) = (start, Vec::new());
            while !done.load(Ordering::Relaxed) {
                let now = free();
                min_free.fetch_min(now, Ordering::Relaxed);
                if trace && now != seen {
                    changes.push((t0.elapsed(), now));
                    seen = now;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            changes
        });
        let r = {
            let _stop = StopOnDrop(&done);
            f()
        };
        if trace {
            let mib = |b: u64| (start as i64 - b as i64) as f64 / (1u64 << 20) as f64;
            let steps: Vec<String> = poll.join().unwrap().iter().map(|(t, b)| format!("{:.1}ms:{:+.0}", ms(*t), mib(*b))).collect();
            println!("VRAM trace (MiB in use above the start): {} | after: {:+.0}", steps.join(" "), mib(free()));
        }
        r
    });
    (r, min_free.load(Ordering::Relaxed))
}

/// One proof's GPU phases: stage a, b, c (the engine's pre-staging), then
/// the H term and the MSMs. Returns the MSM results, the staging time, the
/// phase timings, and the peak device memory above what was in use before.
fn prove_once(
    dev: i32,
    prover: &GpuProver,
    params: &Parameters,
    pa: &ProvingAssignment,
    srs: SrsPoints<'_>,
    plan: Plan,
) -> (MsmResults, Duration, GpuTimings, u64) {
    let base = cuzk_sys::free_memory(dev).unwrap();
    let t = Instant::now();
    let staged = prover.stage_h(pa, None).unwrap();
    let stage = t.elapsed();
    let ((m, times), min_free) = min_free_during(dev, || {
        let mut v = prover.run(params, srs, std::slice::from_ref(pa), None, Some(staged), &plan).unwrap();
        v.pop().unwrap()
    });
    (m, stage, times, base.saturating_sub(min_free))
}

/// A plan with the H term on the device.
fn plan(circuits: usize, points: PointsAt, queries: Queries, next: NextInputs, chunks: Chunks) -> Plan {
    Plan { circuits, points, h: HTerm::Device, inputs: HInputs::Uploaded, queries, next, chunks, z_in_grant: false }
}

/// Whether `need` more device bytes fit beside what the device holds now.
/// If not, prints the regime as skipped on this card, with both figures: an
/// 80 GB card holds the 2^27 SRS and one working set, not a second
/// workspace or second H buffers beside them.
fn room_for(dev: i32, need: u64, what: &str) -> bool {
    let free = cuzk_sys::free_memory(dev).unwrap();
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    if need > free {
        println!("| {what} | skipped on this card: needs {:.1} GiB beside the resident SRS, {:.1} GiB free |", gib(need), gib(free));
    }
    need <= free
}

fn same(what: &str, gpu: &MsmResults, cpu: &MsmResults) {
    assert_eq!(gpu.h, cpu.h, "{what}: H MSM differs from the discrete-log computation");
    assert_eq!(gpu.l, cpu.l, "{what}: L MSM differs");
    assert_eq!(gpu.a, cpu.a, "{what}: A MSM differs");
    assert_eq!(gpu.b_g1, cpu.b_g1, "{what}: B_G1 MSM differs");
    assert_eq!(gpu.b_g2, cpu.b_g2, "{what}: B_G2 MSM differs");
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn report(what: &str, stage: Duration, t: &GpuTimings, epilogue: Duration, peak: u64) {
    println!(
        "| {what} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2} |",
        ms(stage),
        ms(t.h_term),
        ms(t.h_msm),
        ms(t.l_msm),
        ms(t.a_msm),
        ms(t.b_g1_msm),
        ms(t.b_g2_msm),
        ms(t.compact),
        ms(epilogue),
        ms(t.total()),
        ms(t.wall),
        ms(stage + t.wall + epilogue),
        peak as f64 / (1u64 << 30) as f64
    );
}

#[test]
fn gpu_partition_matches_discrete_logs() {
    let Some(dev) = cuzk_sys::test_device("gpu_partition_matches_discrete_logs") else { return };
    let log_n: u32 = std::env::var("CUZK_PARTITION_LOG_N").ok().and_then(|v| v.parse().ok()).unwrap_or(16);
    // The resident-SRS regimes only (a quicker run at 2^27).
    let only_resident = std::env::var("CUZK_PARTITION_ONLY").is_ok_and(|v| v == "resident");
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    assert!((10..=27).contains(&log_n), "CUZK_PARTITION_LOG_N must be 10..=27");
    let seed = cuzk_sys::test_seed("gpu_partition");
    println!("seed {seed}, 2^{log_n} domain");
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    // An odd constraint count just under the power of two.
    let constraints = (1usize << log_n) - 3;

    let t = Instant::now();
    let pa = cuzk_core::cs::synthesize(Synthetic::new(constraints, INPUTS, Some(seed))).unwrap();
    let ones = pa.aux_assignment.iter().filter(|v| **v == Fr::ZERO || **v == Fr::ONE).count();
    println!(
        "synthesized {} constraints, {} aux ({:.1} % 0/1), A {} aux, B {} aux, in {:?}",
        pa.num_constraints(),
        pa.aux_assignment.len(),
        100.0 * ones as f64 / pa.aux_assignment.len() as f64,
        pa.a_aux_density.count(),
        pa.b_aux_density.count(),
        t.elapsed()
    );
    let t = Instant::now();
    let params = &make_srs(dev, &pa, &mut rng);
    println!("SRS made on the GPU ({:.1} GiB of points) in {:?}", DeviceSrs::bytes(params) as f64 / (1u64 << 30) as f64, t.elapsed());
    let t = Instant::now();
    let expected = expected_results(params, &pa);
    println!("independent computation (CPU H term, discrete-log dot products) in {:?}", t.elapsed());
    let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let want = assemble(&params.vk, expected, r, s).to_bytes();

    let prover = GpuProver::new(dev).unwrap();
    println!();
    println!("| regime | upload a,b,c ms | H term (NTTs) | H MSM | L MSM | A MSM | B_G1 MSM | B_G2 MSM | density compaction | epilogue | GPU phase sum | GPU wall | all | peak VRAM GiB |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");

    // Resident: the SRS uploaded once, then two proofs (the second is the
    // steady state), the MSMs one after another; then two with the query
    // MSMs overlapping the H MSM, in a workspace of their own. Each where
    // the card has room for its working set beside the SRS.
    let h_bytes = GpuProver::h_bytes(pa.num_constraints()).unwrap();
    let (n1, n2) = (params.h.len().max(params.l.len()).max(params.a.len()) as u64, params.b_g2.len() as u64);
    let whole = MsmOptions::default();
    let msm_ws = msm::workspace_bytes::<G1>(dev, n1, true, false, whole)
        .unwrap()
        .max(msm::workspace_bytes::<G2>(dev, n2, true, false, whole).unwrap());
    let query_ws = GpuProver::query_workspace_bytes(dev, params).unwrap();
    let mut skipped = 0;
    let t = Instant::now();
    let resident = DeviceSrs::upload(dev, params).unwrap();
    let upload = t.elapsed();
    for round in 0..4 {
        let overlap = round >= 2;
        let need = h_bytes + msm_ws + if overlap { query_ws } else { 0 };
        let regime = format!("resident SRS, proof {}{}", round % 2 + 1, if overlap { ", L/A/B overlapping H" } else { "" });
        if !room_for(dev, need, &regime) {
            skipped += 1;
            continue;
        }
        let queries = if overlap { Queries::BesideH } else { Queries::AfterH };
        let p = plan(1, PointsAt::Device, queries, NextInputs::WhenDue, Chunks::Whole);
        let (m, stage, times, peak) = prove_once(dev, &prover, params, &pa, SrsPoints::Device(&resident), p);
        same("resident", &m, &expected);
        let t = Instant::now();
        let proof = assemble(&params.vk, m, r, s);
        let epilogue = t.elapsed();
        assert_eq!(proof.to_bytes(), want, "resident SRS: the proof differs from the independent computation");
        report(&regime, stage, &times, epilogue, peak);
    }
    // Resident, the MSMs chunked within what an 80 GB card has left beside
    // the SRS, the matrices, the H buffers and z (~10 GiB at 2^27): the
    // query MSMs after the H MSM, then L and B beside it in the H term's
    // third buffer (the planner's choice there). Two proofs each.
    // Then within 6 GiB: what is left where the next partition's witness
    // (4 GiB) waits on the device beside it. Then within 3 and 1.2 GiB:
    // what cards of ~68 GB have left beside a resident SRS, the rows the
    // card model's closest calls (resident and chunked small, or the
    // points from host memory) rest on.
    let within = if log_n >= 27 { 10u64 << 30 } else { msm_ws / 2 };
    let in_scratch = Queries::InHScratch(Scratch::LAndB);
    for (queries, within, what) in [
        (Queries::AfterH, within, "after H"),
        (in_scratch, within, "L and B beside H in the third buffer"),
        (in_scratch, within * 3 / 5, "L and B beside H in the third buffer"),
        (in_scratch, within * 3 / 10, "L and B beside H in the third buffer"),
        (in_scratch, within * 12 / 100, "L and B beside H in the third buffer"),
    ] {
        let regime = format!("resident SRS, MSMs within {:.1} GiB (an 80 GB card), queries {what}", gib(within));
        if !room_for(dev, h_bytes + within, &regime) {
            skipped += 1;
            continue;
        }
        let p = plan(1, PointsAt::Device, queries, NextInputs::WhenDue, Chunks::Within(within));
        let ran = prover.fit(params, SrsPoints::Device(&resident), &pa, None, &p).unwrap().queries;
        if log_n >= 27 {
            assert_eq!(ran, queries, "{regime}: the executor kept another plan");
        }
        for round in 1..=2 {
            let (m, stage, times, peak) = prove_once(dev, &prover, params, &pa, SrsPoints::Device(&resident), p);
            same(&regime, &m, &expected);
            assert_eq!(assemble(&params.vk, m, r, s).to_bytes(), want, "{regime}: the proof differs from the independent computation");
            report(&format!("{regime} (ran: {ran:?}), proof {round}"), stage, &times, Duration::ZERO, peak);
            assert!(
                peak <= h_bytes + within + UNPLANNED_SLACK,
                "{regime}: peak use {peak} bytes above the H buffers and {within} bytes of MSMs"
            );
        }
    }
    println!("(SRS upload {:?}, {:.1} GiB resident)", upload, DeviceSrs::bytes(params) as f64 / (1u64 << 30) as f64);
    drop(resident);
    if only_resident {
        println!("partition 2^{log_n}: resident-SRS proofs byte-identical to the discrete-log computation (CUZK_PARTITION_ONLY=resident: the other regimes not run)");
        return;
    }

    // A VRAM limit: SRS from host memory, H on the device, MSMs chunked;
    // one circuit, then a batch (CUZK_PARTITION_BATCH copies of the
    // circuit, default 2): each H MSM as for one, then L, A, B_G1 and B_G2
    // as batch MSMs (the H buffers freed, so within the whole limit), each
    // SRS chunk uploaded once for every circuit. First from pageable
    // memory, then with the SRS page-locked (what the engine does when it
    // streams an SRS).
    let fifth = MsmOptions { max_chunk_points: n1 / 5 + 1, max_sort_entries: n1 / 5 + 1, ..Default::default() };
    let limit = if log_n >= 27 { 16u64 << 30 } else { h_bytes + msm::workspace_bytes::<G1>(dev, n1, false, false, fifth).unwrap() };
    let budget = limit.checked_sub(h_bytes).expect("the limit leaves no room beside the H buffers");
    let chunk = msm::options_for_budget::<G1>(dev, n1, false, false, budget).unwrap().max_chunk_points;
    let k: usize = std::env::var("CUZK_PARTITION_BATCH").ok().and_then(|v| v.parse().ok()).unwrap_or(2).max(2);
    let batch = vec![pa; k];
    let batched = BatchedMsms::within(dev, n1, n2, batch.len(), limit).unwrap();
    let gib = limit as f64 / (1u64 << 30) as f64;
    let limit_runs = |memory: &str| {
        // One circuit, the MSMs one after another, then with L beside H
        // (in the H term's third buffer: at 2^27 under 16 GiB its plan
        // fits there in chunks as large as the H MSM's; smaller sizes under
        // their tight limits run L after H).
        for l_beside_h in [false, true] {
            let queries = if l_beside_h { Queries::InHScratch(Scratch::LAndB) } else { Queries::AfterH };
            let p = plan(1, PointsAt::Host, queries, NextInputs::WhenDue, Chunks::Within(budget));
            let ran = prover.fit(params, SrsPoints::Host(params), &batch[0], None, &p).unwrap().queries;
            if log_n >= 27 {
                assert_eq!(ran, queries, "L and B beside H asked for: {l_beside_h}");
            }
            let (m, stage, times, peak) = prove_once(dev, &prover, params, &batch[0], SrsPoints::Host(params), p);
            same("VRAM limit", &m, &expected);
            let t = Instant::now();
            let proof = assemble(&params.vk, m, r, s);
            let epilogue = t.elapsed();
            assert_eq!(proof.to_bytes(), want, "VRAM limit (L beside H: {l_beside_h}): the proof differs from the independent computation");
            let how = match ran {
                Queries::InHScratch(Scratch::LAndB) => ", L and B beside H",
                Queries::InHScratch(Scratch::L) => ", L beside H (B after: chunks too small)",
                _ if l_beside_h => ", L beside H asked for, ran after (chunks too small)",
                _ => "",
            };
            report(
                &format!("{gib:.1} GiB limit, SRS from {memory} host memory, G1 chunks of {chunk} points{how}"),
                stage,
                &times,
                epilogue,
                peak,
            );
            assert!(peak <= limit, "VRAM limit {limit} (L beside H: {l_beside_h}): peak use {peak} bytes");
        }

        let p = plan(k, PointsAt::Host, Queries::Batched(BatchSize::Exactly(batched)), NextInputs::WhenDue, Chunks::Within(budget));
        let base = cuzk_sys::free_memory(dev).unwrap();
        let t = Instant::now();
        let staged = prover.stage_h(&batch[0], None).unwrap();
        let stage = t.elapsed();
        let (results, min_free) =
            min_free_during(dev, || prover.run(params, SrsPoints::Host(params), &batch, None, Some(staged), &p).unwrap());
        let peak = base.saturating_sub(min_free);
        for (i, (m, times)) in results.into_iter().enumerate() {
            same("batch MSMs under the limit", &m, &expected);
            let proof = assemble(&params.vk, m, r, s);
            assert_eq!(proof.to_bytes(), want, "batch MSMs under the limit: proof {i} differs from the independent computation");
            let what = format!(
                "{gib:.1} GiB limit, SRS from {memory} host memory, batch of {k} with batch MSMs ({} G1 sets per call, chunks of {}), circuit {} (L, A, B: the batch's time / {k})",
                batched.g1_sets,
                batched.g1.max_chunk_points,
                i + 1
            );
            report(&what, if i == 0 { stage } else { Duration::ZERO }, &times, Duration::ZERO, peak);
        }
        assert!(peak <= limit, "VRAM limit {limit}, batch MSMs: peak use {peak} bytes");
    };
    limit_runs("pageable");
    match pin_host_points(params) {
        HostPinning::Pinned { bytes, millis } => {
            println!("(SRS page-locked in host memory: {:.1} GiB in {millis} ms)", *bytes as f64 / (1u64 << 30) as f64)
        }
        HostPinning::Failed(e) => panic!("could not page-lock the SRS: {e}"),
    }
    limit_runs("page-locked");

    // No VRAM limit but the SRS in host memory: a card that holds the
    // working set but not the SRS beside it (2^27 on 80 GB). The query
    // MSMs after the H MSM, whole; in the H term's third buffer where its
    // chunks are good enough (`plan_beside`), the rest whole; and every
    // MSM chunked as under the limit with L and B in the third buffer.
    // Which of these is fastest is what the planner's choice there rests on.
    for (queries, chunks, what) in [
        (Queries::AfterH, Chunks::Whole, "after H, whole"),
        (Queries::InHScratch(Scratch::LAndB), Chunks::Whole, "in the third buffer where good enough, planned whole"),
        (Queries::InHScratch(Scratch::LAndB), Chunks::Within(budget), "in the third buffer, chunked as under the limit"),
        (Queries::InHScratch(Scratch::LAndB), Chunks::Within(2 * budget), "in the third buffer, chunked within twice that"),
    ] {
        let p = plan(1, PointsAt::Host, queries, NextInputs::WhenDue, chunks);
        let fitted = prover.fit(params, SrsPoints::Host(params), &batch[0], None, &p).unwrap();
        let ran = fitted.queries;
        if ran == Queries::AfterH {
            // No L in the third buffer: the MSMs as planned, not in its
            // chunks (a WinningPoSt ran in 17 MiB chunks so).
            assert_eq!(fitted.chunks, p.chunks, "{what}: L after H, chunks changed");
        }
        for round in 1..=2 {
            let (m, stage, times, peak) = prove_once(dev, &prover, params, &batch[0], SrsPoints::Host(params), p);
            same("no limit, SRS from host memory", &m, &expected);
            let proof = assemble(&params.vk, m, r, s);
            assert_eq!(
                proof.to_bytes(),
                want,
                "no limit, SRS from host memory ({what}): the proof differs from the independent computation"
            );
            let report_what = format!("no limit, SRS from page-locked host memory, queries {what} (ran: {ran:?}), proof {round}");
            report(&report_what, stage, &times, Duration::ZERO, peak);
        }
    }

    // The batch, SRS resident, with each next circuit's a, b, c
    // uploaded while the one before runs its MSMs (the engine does this when its
    // VRAM budget has room for a second set of H buffers).
    let resident = DeviceSrs::upload(dev, params).unwrap();
    let batch_regime = format!("resident, batch of {k}, L/A/B overlapping H, next a,b,c in second H buffers");
    if !room_for(dev, 2 * h_bytes + msm_ws + query_ws, &batch_regime) {
        skipped += 1;
    } else {
        let base = cuzk_sys::free_memory(dev).unwrap();
        let t = Instant::now();
        let staged = prover.stage_h(&batch[0], None).unwrap();
        let stage = t.elapsed();
        let p = plan(k, PointsAt::Device, Queries::BesideH, NextInputs::SecondHBuffers, Chunks::Whole);
        let (results, min_free) =
            min_free_during(dev, || prover.run(params, SrsPoints::Device(&resident), &batch, None, Some(staged), &p).unwrap());
        let peak = base.saturating_sub(min_free);
        for (i, (m, times)) in results.into_iter().enumerate() {
            same("batch", &m, &expected);
            let t = Instant::now();
            let proof = assemble(&params.vk, m, r, s);
            let epilogue = t.elapsed();
            assert_eq!(proof.to_bytes(), want, "batch: proof {i} differs from the independent computation");
            let what = if i == 0 {
                format!("resident, batch of {k}, L/A/B overlapping H, circuit 1")
            } else {
                format!("resident, batch of {k}, L/A/B overlapping H, circuit {} (a,b,c uploaded during circuit {i})", i + 1)
            };
            report(&what, if i == 0 { stage } else { Duration::ZERO }, &times, epilogue, peak);
        }
    }
    drop((resident, batch));
    matrices_resident_srs_from_host(dev, &prover, params, constraints, seed, budget, &expected, &want, (r, s));
    println!(
        "partition 2^{log_n}: GPU proofs in every regime (resident, under a limit, from host memory, matrices resident) and in a pre-staged batch byte-identical to the discrete-log computation"
    );
    if skipped > 0 {
        println!("({skipped} resident-SRS regimes skipped: this card has no room for their working sets beside the SRS)");
    }
}

/// The SRS from page-locked host memory with the circuit's matrices
/// resident, a, b, c computed by the SpMV on the device from the witness
/// alone (a witness-only assignment: no a, b, c on the host), L and B
/// beside the H MSM in the H term's third buffer, the witness copied there
/// from the SpMV's z: the plan of a card that holds the matrices and a
/// working set but not the SRS (32-64 GB at 2^27). Chunked within the
/// VRAM limit's `budget` and within twice it (all MSMs then in chunks of
/// one H buffer). From 2^22 the third buffer holds L's chunks, at 2^27 B's
/// too, and the executor must keep that plan. Its rows report no peak
/// VRAM (0): the limit regimes above check the peaks of these buffers.
#[allow(clippy::too_many_arguments)]
fn matrices_resident_srs_from_host(
    dev: i32,
    prover: &GpuProver,
    params: &Parameters,
    constraints: usize,
    seed: u64,
    budget: u64,
    expected: &MsmResults,
    want: &[u8; cuzk_core::groth16::proof::PROOF_BYTES],
    (r, s): (Fr, Fr),
) {
    use cuzk_core::groth16::gpu_prover::Matrices;
    use cuzk_core::pce::{self, gpu::GpuPce};
    let circuit = || Synthetic::new(constraints, INPUTS, Some(seed));
    let t = Instant::now();
    let pce = pce::record("gpu_partition", circuit()).unwrap();
    let pa = pce.witness_assignment(cuzk_core::cs::generate_witness(circuit()).unwrap()).unwrap();
    assert!(pa.abc_deferred() && pa.a.is_empty(), "a witness-only assignment carries no a, b, c");
    let gpu_pce = GpuPce::upload(&pce, dev).unwrap();
    println!("(PCE recorded, witness-only assignment and matrices uploaded in {:?})", t.elapsed());
    let matrices = Some(Matrices { host: &pce, device: Some(&gpu_pce), streamed: None });
    let log_n = constraints.next_power_of_two().trailing_zeros();
    for within in [budget, 2 * budget] {
        let p = Plan {
            inputs: HInputs::SpmvOnDevice,
            ..plan(1, PointsAt::Host, Queries::InHScratch(Scratch::LAndB), NextInputs::WhenDue, Chunks::Within(within))
        };
        let ran = prover.fit(params, SrsPoints::Host(params), &pa, matrices, &p).unwrap();
        assert_eq!(ran.inputs, HInputs::SpmvOnDevice, "{p} runs as {ran}");
        if log_n >= 27 {
            assert_eq!(ran.queries, p.queries, "{p} runs as {ran}: L and B not beside H");
        } else if log_n >= 22 {
            // B's chunks in what L leaves of the buffer are too small here.
            assert!(matches!(ran.queries, Queries::InHScratch(_)), "{p} runs as {ran}: L not beside H");
        }
        for round in 1..=2 {
            let t = Instant::now();
            let staged = prover.stage_h_spmv(&gpu_pce, &pa.input_assignment, &pa.aux_assignment).unwrap();
            let stage = t.elapsed();
            let (m, times) =
                prover.run(params, SrsPoints::Host(params), std::slice::from_ref(&pa), matrices, Some(staged), &p).unwrap().pop().unwrap();
            let regime = format!(
                "SRS from page-locked host memory, matrices resident (SpMV on the device), MSMs within {within} bytes (ran: {ran})"
            );
            same(&regime, &m, expected);
            assert_eq!(&assemble(&params.vk, m, r, s).to_bytes(), want, "{regime}: the proof differs from the independent computation");
            report(&format!("{regime}, proof {round}"), stage, &times, Duration::ZERO, 0);
        }
    }
}
