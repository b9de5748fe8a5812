//! GPU MSM benchmark (plain binary): G1 at 2^20, 2^24, 2^26 and G2 at 2^20,
//! 2^24 with pseudo-random scalars (and Filecoin-like: 90 % of them 0 or 1)
//! and valid points made on the device
//! (2^20 distinct multiples of the generator, repeated), inputs resident in
//! device memory. Times are device events around one whole MSM (sort,
//! accumulation, reduction; no uploads), median of several runs after one
//! warm-up. Also checks at 2^24 that other window sizes and chunkings give
//! the same point. Prints a table last, with each MSM's phases. Args:
//! `--quick` for fewer runs, `--windows` to time the 0/1-heavy
//! MSMs at window sizes 14-20 and random G1 from 2^26 at 18-23 as well (the
//! window planner's calibration), `--h27` to time only G1 2^27 with random
//! scalars (the 2^27 partition's H MSM),
//! `--chunks` to time G1 2^26 and G2 2^24 (random scalars) in chunks of
//! points at window sizes 16, 18 and 20 (the planner's cost of a chunk),
//! `--large` to time only G1 2^26 and G2 2^24 with random scalars,
//! `--workspace` to run every MSM in one workspace (as the prover does)
//! instead of allocating per call.

use cuzk_sys::msm::{self, Group, Input, MsmOptions, G1, G2};
use cuzk_sys::{DeviceBuffer, DeviceInfo, FrRepr};
use group::prime::PrimeCurveAffine;

struct Row {
    what: String,
    median_ms: f64,
    min_ms: f64,
    /// Host wall clock of the median run's call (inputs on the device;
    /// includes the host's combination of the windows).
    wall_ms: f64,
    window: u32,
    /// Phases of the median run: digits, sort, accumulate, reduce (ms).
    phases: [f32; 4],
}

fn phases(st: &msm::MsmStats) -> [f32; 4] {
    [st.digits_ms, st.sort_ms, st.accumulate_ms, st.reduce_ms]
}

/// The same group element (blst Jacobian coordinates are not unique: compare
/// through blstrs, whose projective types are #[repr(transparent)] over them).
fn same_point<G: Group>(a: &G::Proj, b: &G::Proj) -> bool {
    unsafe {
        if std::mem::size_of::<G::Proj>() == std::mem::size_of::<blstrs::G1Projective>() {
            std::mem::transmute_copy::<G::Proj, blstrs::G1Projective>(a) == std::mem::transmute_copy::<G::Proj, blstrs::G1Projective>(b)
        } else {
            std::mem::transmute_copy::<G::Proj, blstrs::G2Projective>(a) == std::mem::transmute_copy::<G::Proj, blstrs::G2Projective>(b)
        }
    }
}

/// 1 in Fr's Montgomery form (R mod r), as blstrs::Scalar holds it.
const FR_ONE: FrRepr = [0x0000_0001_ffff_fffe, 0x5884_b7fa_0003_4802, 0x998c_4fef_ecbc_4ff5, 0x1824_b159_acc5_056f];

/// Filecoin-like witness: 90 % of the scalars 0 or 1 (half each), the rest
/// left random.
fn make_mostly_01(dev: i32, scalars: &mut DeviceBuffer<FrRepr>) {
    let stream = cuzk_sys::Stream::new(dev).unwrap();
    let mut host = vec![[0u64; 4]; scalars.len()];
    scalars.copy_to_host(&stream, 0, &mut host).unwrap();
    for (i, s) in host.iter_mut().enumerate() {
        let h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        match h % 20 {
            0 | 1 => {}
            k if k % 2 == 0 => *s = [0; 4],
            _ => *s = FR_ONE,
        }
    }
    scalars.copy_from_host(&stream, 0, &host).unwrap();
}

fn bench<G: Group>(
    dev: i32,
    gen: G::Affine,
    log_n: u32,
    ones: bool,
    runs: usize,
    windows: bool,
    chunks: bool,
    rows: &mut Vec<Row>,
) -> G::Proj {
    let n = 1usize << log_n;
    let mut points = DeviceBuffer::<G::Affine>::new(dev, n).unwrap();
    let mut scalars = DeviceBuffer::<FrRepr>::new(dev, n).unwrap();
    let t = std::time::Instant::now();
    msm::test_inputs::<G>(&gen, 0x5eed + log_n as u64, 1 << 20, &mut points, &mut scalars).unwrap();
    if ones {
        make_mostly_01(dev, &mut scalars);
    }
    let label = format!("{} MSM 2^{log_n}{}", G::NAME, if ones { " (90% 0/1)" } else { "" });
    eprintln!("{label}: inputs made in {:?}", t.elapsed());
    // --workspace: every call in one workspace, allocated by the first (as
    // the prover runs its MSMs); else each call allocates and frees its own.
    let in_workspace = std::env::args().any(|a| a == "--workspace");
    let ws = in_workspace.then(|| std::cell::RefCell::new(msm::MsmWorkspace::new(dev)));
    let run = |o: Option<MsmOptions>| {
        let p = Input::Device { buf: &points, offset: 0, len: n };
        let s = Input::Device { buf: &scalars, offset: 0, len: n };
        match &ws {
            Some(ws) => msm::msm_in::<G>(&mut ws.borrow_mut(), p, s, o),
            None => msm::msm::<G>(dev, p, s, o),
        }
        .unwrap()
    };
    let timed = |o: Option<MsmOptions>, label: String, first: &G::Proj, rows: &mut Vec<Row>| {
        let mut stats = Vec::new();
        for _ in 0..runs {
            let t = std::time::Instant::now();
            let (r, st) = run(o);
            let wall = t.elapsed().as_secs_f64() * 1e3;
            assert!(same_point::<G>(&r, first), "{label}: result changed between runs");
            stats.push((st, wall));
        }
        stats.sort_by(|a, b| a.0.device_ms.partial_cmp(&b.0.device_ms).unwrap());
        let (st, wall_ms) = stats[stats.len() / 2];
        let p = phases(&st);
        eprintln!(
            "{label}: median {:.2} ms (c = {}, {} chunk(s), acc blocks {}; digits {:.1} sort {:.1} accumulate {:.1} reduce {:.1})",
            st.device_ms, st.window_bits, st.chunks, st.accumulate_min_blocks, p[0], p[1], p[2], p[3]
        );
        rows.push(Row {
            what: label,
            median_ms: st.device_ms as f64,
            min_ms: stats[0].0.device_ms as f64,
            wall_ms,
            window: st.window_bits,
            phases: p,
        });
    };
    let (first, _) = run(None); // warm-up
    timed(None, label.clone(), &first, rows);
    // Window sizes (--windows): 14-20 for the 0/1-heavy MSMs; around and
    // past the planner's largest (20) for random G1 scalars from 2^26 on
    // (the H MSM's case).
    let range = if ones { 14..=20 } else { 18..=23 };
    if windows && (ones || (G::NAME == "G1" && log_n >= 26)) {
        for c in range {
            let o = MsmOptions { window_bits: c, ..Default::default() };
            timed(Some(o), format!("{label} c={c}"), &first, rows);
        }
    }
    // Chunks of points (--chunks): what a VRAM limit does to an MSM. G1
    // chunks of 9175040 points are the 2^27 partition's under 16 GiB.
    let largest = (G::NAME == "G1" && log_n == 26) || (G::NAME == "G2" && log_n == 24);
    if chunks && !ones && largest {
        let sizes: &[u64] = if G::NAME == "G1" { &[1 << 23, 9_175_040] } else { &[1 << 21] };
        for &chunk in sizes {
            for c in [0, 16, 18, 20] {
                let o = MsmOptions { window_bits: c, max_chunk_points: chunk, ..Default::default() };
                let what = if c == 0 { "planned".to_string() } else { format!("c={c}") };
                timed(Some(o), format!("{label} chunks of {chunk} {what}"), &first, rows);
            }
        }
    }
    if log_n == 24 {
        for o in [MsmOptions { window_bits: 13, ..Default::default() }, MsmOptions { max_chunk_points: 3_000_001, ..Default::default() }] {
            let (r, _) = run(Some(o));
            let same = same_point::<G>(&r, &first);
            println!("self-check {} 2^24 with {o:?}: {}", G::NAME, if same { "same point" } else { "DIFFERS" });
            assert!(same);
        }
    }
    first
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let windows = std::env::args().any(|a| a == "--windows");
    let chunks = std::env::args().any(|a| a == "--chunks");
    let Some(dev) = cuzk_sys::test_device("gpu_msm bench") else { return };
    let info = DeviceInfo::query(dev).unwrap();
    println!("device: {} ({} SMs, {} GiB)", info.name, info.sm_count, info.total_mem_bytes >> 30);
    let runs = if quick { 3 } else { 7 };
    // blstrs' affine points are #[repr(transparent)] over blst's.
    let g1: [u64; 12] = unsafe { std::mem::transmute(blstrs::G1Affine::generator()) };
    let g2: [u64; 24] = unsafe { std::mem::transmute(blstrs::G2Affine::generator()) };
    // --large: only G1 2^26 and G2 2^24 with random scalars (A/B runs).
    let large = std::env::args().any(|a| a == "--large");
    // Sizes (log2 n) with random scalars, then with 90 % 0/1 scalars.
    // --h27: only G1 2^27 with random scalars (the 2^27 partition's H MSM).
    let h27 = std::env::args().any(|a| a == "--h27");
    let (g1_random, g1_ones): (&[u32], &[u32]) = match (h27, large) {
        (true, _) => (&[27], &[]),
        (_, true) => (&[26], &[]),
        _ => (&[20, 24, 26], &[24, 26]),
    };
    let (g2_random, g2_ones): (&[u32], &[u32]) = match (h27, large) {
        (true, _) => (&[], &[]),
        (_, true) => (&[24], &[]),
        _ => (&[20, 24], &[24]),
    };
    let mut rows = Vec::new();
    for (sizes, ones) in [(g1_random, false), (g1_ones, true)] {
        for &log_n in sizes {
            bench::<G1>(dev, g1, log_n, ones, runs, windows, chunks, &mut rows);
        }
    }
    for (sizes, ones) in [(g2_random, false), (g2_ones, true)] {
        for &log_n in sizes {
            bench::<G2>(dev, g2, log_n, ones, runs, windows, chunks, &mut rows);
        }
    }
    println!();
    println!("| what | median ms | min ms | wall ms | window bits | digits / sort / accumulate / reduce ms | runs |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for r in rows {
        let p = r.phases;
        println!(
            "| {} | {:.2} | {:.2} | {:.2} | {} | {:.1} / {:.1} / {:.1} / {:.1} | {runs} |",
            r.what, r.median_ms, r.min_ms, r.wall_ms, r.window, p[0], p[1], p[2], p[3]
        );
    }
}
