//! GPU MSMs (cuzk-sys, native/msm/) against the CPU prover's MSM
//! (cuzk_core::arith::msm, blst underneath): fresh random inputs at many
//! sizes, edge scalars (0, 1, 2, r - 1), repeated points, P and -P, the
//! point at infinity, forced window sizes and chunking (the result must not
//! depend on them), device-resident inputs and the plans made from their
//! scalars (0/1 counts). G1 and G2. Skipped, visibly,
//! without a GPU.

use cuzk_core::arith::{msm::msm, MsmAffine};
use cuzk_core::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use cuzk_sys::msm::{self as gpu, Group, Input, MsmOptions, G1, G2};
use cuzk_sys::{DeviceBuffer, FrRepr, Stream};
use ff::Field;
use group::{Curve, Group as _};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// blstrs' point and scalar types are #[repr(transparent)] over blst's.
fn cast<A, B>(s: &[A]) -> &[B] {
    assert_eq!(std::mem::size_of::<A>(), std::mem::size_of::<B>());
    assert!(std::mem::align_of::<A>() >= std::mem::align_of::<B>());
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const B, s.len()) }
}

fn cast_mut<A, B>(s: &mut [A]) -> &mut [B] {
    assert_eq!(std::mem::size_of::<A>(), std::mem::size_of::<B>());
    assert!(std::mem::align_of::<A>() >= std::mem::align_of::<B>());
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut B, s.len()) }
}

fn from_raw<P: Copy, R: Copy>(r: R) -> P {
    assert_eq!(std::mem::size_of::<P>(), std::mem::size_of::<R>());
    unsafe { std::mem::transmute_copy(&r) }
}

fn rng() -> ChaCha20Rng {
    let seed = cuzk_sys::test_seed("gpu_msm");
    ChaCha20Rng::seed_from_u64(seed)
}

/// Group-specific glue for one generic test body.
trait Case: MsmAffine {
    type G: Group;
    fn gpu(dev: i32, p: &[Self], s: &[Fr], o: Option<MsmOptions>) -> Self::Proj;
}

impl Case for G1Affine {
    type G = G1;
    fn gpu(dev: i32, p: &[Self], s: &[Fr], o: Option<MsmOptions>) -> G1Projective {
        let (r, _) = gpu::msm::<G1>(dev, Input::Host(cast(p)), Input::Host(cast::<Fr, FrRepr>(s)), o).unwrap();
        from_raw(r)
    }
}

impl Case for G2Affine {
    type G = G2;
    fn gpu(dev: i32, p: &[Self], s: &[Fr], o: Option<MsmOptions>) -> G2Projective {
        let (r, _) = gpu::msm::<G2>(dev, Input::Host(cast(p)), Input::Host(cast::<Fr, FrRepr>(s)), o).unwrap();
        from_raw(r)
    }
}

/// n distinct random points: consecutive multiples of a random point
/// (additions only), shuffled in blocks by a second random stride.
fn points<A: Case>(rng: &mut impl RngCore, n: usize) -> Vec<A> {
    let base = A::Proj::generator() * Fr::random(&mut *rng);
    let step = A::Proj::generator() * Fr::random(&mut *rng);
    let mut proj = Vec::with_capacity(n);
    let mut acc = base;
    for _ in 0..n {
        proj.push(acc);
        acc += step;
    }
    let mut out = vec![A::identity(); n];
    A::batch_normalize(&proj, &mut out);
    out
}

fn scalars(rng: &mut impl RngCore, n: usize) -> Vec<Fr> {
    (0..n).map(|_| Fr::random(&mut *rng)).collect()
}

fn check<A: Case>(dev: i32, what: &str, p: &[A], s: &[Fr], o: Option<MsmOptions>) {
    let cpu = msm(p, s);
    let gpu = A::gpu(dev, p, s, o);
    assert!(gpu == cpu, "{what}: GPU {} MSM of {} differs from the CPU ({o:?})", std::any::type_name::<A>(), p.len());
    assert!(gpu.to_affine() == cpu.to_affine());
}

fn random_sizes<A: Case>(dev: i32, sizes: &[usize]) {
    let mut rng = rng();
    for &n in sizes {
        let p = points::<A>(&mut rng, n);
        let s = scalars(&mut rng, n);
        check(dev, "random", &p, &s, None);
        println!("MSM {} n = {n}: GPU equals CPU", std::any::type_name::<A>());
    }
}

fn edge_cases<A: Case>(dev: i32) {
    let mut rng = rng();
    let n = 3000;
    let p = points::<A>(&mut rng, n);
    let minus_one = -Fr::ONE;
    let specials = [Fr::ZERO, Fr::ONE, Fr::from(2u64), minus_one, minus_one - Fr::ONE];
    // Each scalar drawn from the specials or random.
    let mixed: Vec<Fr> =
        (0..n).map(|_| if rng.gen_bool(0.7) { specials[rng.gen_range(0..specials.len())] } else { Fr::random(&mut rng) }).collect();
    check(dev, "edge scalars", &p, &mixed, None);
    for (name, v) in [("all 0", Fr::ZERO), ("all 1", Fr::ONE), ("all r-1", minus_one), ("all 2", Fr::from(2u64))] {
        check(dev, name, &p, &vec![v; n], None);
    }
    // One point repeated (one bucket gets every entry: equal points meet).
    let same = vec![p[0]; n];
    check(dev, "repeated point, scalar 1", &same, &vec![Fr::ONE; n], None);
    check(dev, "repeated point, random", &same, &scalars(&mut rng, n), None);
    // P and -P with equal scalars cancel to the identity.
    let pm: Vec<A> = (0..n).map(|i| if i % 2 == 0 { p[i / 2] } else { (-p[i / 2].to_curve()).to_affine() }).collect();
    let s2: Vec<Fr> = (0..n).map(|i| Fr::from((i / 2 + 1) as u64)).collect();
    check(dev, "P and -P", &pm, &s2, None);
    // The same across chunks: chunk 1 holds P_i, chunk 2 holds -P_i with
    // the same scalars, so every bucket chunk 1 filled must become the
    // identity again (a later chunk's complete runs start from their
    // bucket's sum and store it), then a few more points in chunk 3.
    let half = 1200;
    let mut across: Vec<A> = p[..half].to_vec();
    across.extend(p[..half].iter().map(|q| (-q.to_curve()).to_affine()));
    let mut s3 = scalars(&mut rng, half);
    s3.extend_from_within(..);
    for (name, extra) in [("P, then -P, in two chunks", 0), ("P, then -P, then more, in three chunks", 7)] {
        let (mut pts, mut sc) = (across.clone(), s3.clone());
        pts.extend_from_slice(&p[half..half + extra]);
        sc.extend(scalars(&mut rng, extra));
        for c in [4, 8, 12, 0] {
            let o = MsmOptions { window_bits: c, max_chunk_points: half as u64, ..Default::default() };
            check(dev, name, &pts, &sc, Some(o));
        }
    }
    // The point at infinity among the points.
    let mut inf = p.clone();
    for i in (0..n).step_by(7) {
        inf[i] = A::identity();
    }
    check(dev, "infinity among points", &inf, &mixed, None);
    check(dev, "all infinity", &[A::identity(); 50], &scalars(&mut rng, 50), None);
    // Tiny sizes with edge scalars.
    for n in 1..=4 {
        for &v in &specials {
            check(dev, "tiny", &p[..n], &vec![v; n], None);
        }
    }
    check(dev, "empty", &p[..0], &[], None);
    println!("MSM {} edge cases: GPU equals CPU", std::any::type_name::<A>());
}

fn options_do_not_matter<A: Case>(dev: i32, n: usize) {
    let mut rng = rng();
    let p = points::<A>(&mut rng, n);
    let s: Vec<Fr> = (0..n).map(|i| if i % 3 == 0 { Fr::from((i % 5) as u64) } else { Fr::random(&mut rng) }).collect();
    for c in [2, 3, 5, 8, 11, 13, 16, 19, 21, 22] {
        check(dev, "window", &p, &s, Some(MsmOptions { window_bits: c, ..Default::default() }));
    }
    for chunk in [1, 2, 999, 1 << 12] {
        check(dev, "chunk", &p, &s, Some(MsmOptions { max_chunk_points: chunk, ..Default::default() }));
    }
    // Windows sorted in groups (one window at a time, three, or an uneven
    // last group), alone and with chunks: the first chunk stores bucket
    // sums, later ones add to them.
    let sort = |e: u64| e * n as u64;
    for (c, max_sort_entries, chunk) in [(0, sort(1), 0), (11, sort(3), 0), (13, sort(7) - 1, 0), (0, 5_000, 999), (16, 3 * 1777, 1777)] {
        let o = MsmOptions { window_bits: c, max_chunk_points: chunk, max_sort_entries, ..Default::default() };
        check(dev, "window groups", &p, &s, Some(o));
    }
    println!("MSM {} n = {n}: every window size, grouping and chunking equals the CPU", std::any::type_name::<A>());
}

/// Each scalar set in its own device buffer.
fn upload_sets<'a>(dev: i32, sets: impl Iterator<Item = &'a [Fr]>) -> Vec<DeviceBuffer<FrRepr>> {
    let stream = Stream::new(dev).unwrap();
    sets.map(|s| {
        let mut b = DeviceBuffer::<FrRepr>::new(dev, s.len()).unwrap();
        b.copy_from_host(&stream, 0, cast(s)).unwrap();
        b
    })
    .collect()
}

/// A batch MSM (one set of points, several scalar sets) equals one CPU MSM
/// per set: random, 0/1-heavy (Filecoin's witnesses), all-zero and edge
/// sets together; unchunked, chunked (each chunk's points uploaded once for
/// every set, buckets per set) and in window groups; host and device
/// scalars.
fn batch_equals_each<A: Case>(dev: i32, n: usize) {
    let mut rng = rng();
    let p = points::<A>(&mut rng, n);
    let zero_one = |rng: &mut ChaCha20Rng| -> Vec<Fr> {
        (0..n)
            .map(|_| match rng.gen_range(0..10) {
                0..=4 => Fr::ZERO,
                5..=8 => Fr::ONE,
                _ => Fr::random(&mut *rng),
            })
            .collect()
    };
    let sets: Vec<Vec<Fr>> = vec![
        scalars(&mut rng, n),
        zero_one(&mut rng),
        vec![Fr::ZERO; n],
        scalars(&mut rng, n),
        (0..n).map(|i| if i % 2 == 0 { -Fr::ONE } else { Fr::ONE }).collect(),
    ];
    let want: Vec<A::Proj> = sets.iter().map(|s| msm(&p, s)).collect();
    let host: Vec<Input<'_, FrRepr>> = sets.iter().map(|s| Input::Host(cast::<Fr, FrRepr>(s))).collect();
    let sort = |e: u64| e * n as u64;
    let chunked = MsmOptions { max_chunk_points: 999, max_sort_entries: 5_000, ..Default::default() };
    let grouped = MsmOptions { window_bits: 13, max_sort_entries: sort(7) - 1, ..Default::default() };
    for (k, o) in [(5, None), (1, None), (2, Some(chunked)), (5, Some(chunked)), (5, Some(grouped))] {
        let (got, _) = gpu::msm_batch::<A::G>(dev, Input::Host(cast(&p)), &host[..k], o).unwrap();
        assert_eq!(got.len(), k);
        for (j, r) in got.into_iter().enumerate() {
            assert!(from_raw::<A::Proj, _>(r) == want[j], "batch of {k}, set {j}, {o:?}: differs from the CPU");
        }
    }
    // Device scalars, points chunked from the host.
    let bufs = upload_sets(dev, sets.iter().map(|s| &s[..]));
    let on_dev: Vec<Input<'_, FrRepr>> = bufs.iter().map(|b| Input::Device { buf: b, offset: 0, len: n }).collect();
    let (got, _) = gpu::msm_batch::<A::G>(dev, Input::Host(cast(&p)), &on_dev, Some(chunked)).unwrap();
    for (j, r) in got.into_iter().enumerate() {
        assert!(from_raw::<A::Proj, _>(r) == want[j], "device scalars, set {j}: differs from the CPU");
    }
    // Sets must all be on the host or all on the device, and match the points.
    let mixed = [host[0], on_dev[1]];
    let e = gpu::msm_batch::<A::G>(dev, Input::Host(cast(&p)), &mixed, None).err().expect("mixed sets accepted");
    assert!(e.to_string().contains("set 1"), "{e}");
    let short = [host[0], Input::Host(cast::<Fr, FrRepr>(&sets[1][..n - 1]))];
    let e = gpu::msm_batch::<A::G>(dev, Input::Host(cast(&p)), &short, None).err().expect("short set accepted");
    assert!(e.to_string().contains("set 1"), "{e}");
    println!("MSM {} batch of up to 5 sets, n = {n}: every set equals the CPU", std::any::type_name::<A>());
}

#[test]
fn gpu_msm_batches() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_batches") else { return };
    batch_equals_each::<G1Affine>(dev, 10_007);
    batch_equals_each::<G2Affine>(dev, 3_001);
}

#[test]
fn gpu_msm_g1_random_sizes() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_g1_random_sizes") else { return };
    random_sizes::<G1Affine>(dev, &[1, 2, 3, 4, 5, 7, 8, 31, 100, 255, 1000, 4097, 65_537, 1 << 18, 300_001]);
}

#[test]
fn gpu_msm_g2_random_sizes() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_g2_random_sizes") else { return };
    random_sizes::<G2Affine>(dev, &[1, 2, 3, 5, 33, 1000, 4097, 65_537]);
}

#[test]
fn gpu_msm_g1_edge_cases() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_g1_edge_cases") else { return };
    edge_cases::<G1Affine>(dev);
}

#[test]
fn gpu_msm_g2_edge_cases() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_g2_edge_cases") else { return };
    edge_cases::<G2Affine>(dev);
}

#[test]
fn gpu_msm_windows_and_chunks() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_windows_and_chunks") else { return };
    options_do_not_matter::<G1Affine>(dev, 5000);
    options_do_not_matter::<G2Affine>(dev, 1500);
}

#[test]
fn gpu_msm_device_inputs() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_device_inputs") else { return };
    let mut rng = rng();
    let n = 20_000;
    let p = points::<G1Affine>(&mut rng, n);
    let s = scalars(&mut rng, n);
    let stream = Stream::new(dev).unwrap();
    let mut dp = DeviceBuffer::<[u64; 12]>::new(dev, n).unwrap();
    let mut ds = DeviceBuffer::<FrRepr>::new(dev, n).unwrap();
    dp.copy_from_host(&stream, 0, cast(&p)).unwrap();
    ds.copy_from_host(&stream, 0, cast(&s)).unwrap();
    stream.synchronize().unwrap();
    // A sub-range on the device, host points with device scalars, and both.
    let (r, _) =
        gpu::msm::<G1>(dev, Input::Device { buf: &dp, offset: 100, len: 5000 }, Input::Device { buf: &ds, offset: 100, len: 5000 }, None)
            .unwrap();
    assert!(from_raw::<G1Projective, _>(r) == msm(&p[100..5100], &s[100..5100]));
    let (r, _) = gpu::msm::<G1>(dev, Input::Host(cast(&p)), Input::Device { buf: &ds, offset: 0, len: n }, None).unwrap();
    assert!(from_raw::<G1Projective, _>(r) == msm(&p, &s));
    // Chunked, one side from the host (staged, the next chunk uploading
    // while the current one runs) and the other read in place.
    let o = Some(MsmOptions { max_chunk_points: 3001, max_sort_entries: 3001, ..Default::default() });
    let (r, _) = gpu::msm::<G1>(dev, Input::Host(cast(&p)), Input::Device { buf: &ds, offset: 0, len: n }, o).unwrap();
    assert!(from_raw::<G1Projective, _>(r) == msm(&p, &s), "chunked, host points, device scalars");
    let (r, _) = gpu::msm::<G1>(dev, Input::Device { buf: &dp, offset: 0, len: n }, Input::Host(cast(&s)), o).unwrap();
    assert!(from_raw::<G1Projective, _>(r) == msm(&p, &s), "chunked, device points, host scalars");
    println!("MSM G1 device-resident inputs (also chunked, mixed with host inputs): GPU equals CPU");
}

#[test]
fn gpu_msm_rejects_bad_input() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_rejects_bad_input") else { return };
    let p = vec![[0u64; 12]; 3];
    let s = vec![[0u64; 4]; 2];
    assert!(gpu::msm::<G1>(dev, Input::Host(&p), Input::Host(&s), None).is_err());
    let s = vec![[0u64; 4]; 3];
    let bad = MsmOptions { window_bits: 40, ..Default::default() };
    assert!(gpu::msm::<G1>(dev, Input::Host(&p), Input::Host(&s), Some(bad)).is_err());
}

/// The C API without CUZK_MSM_WINDOW_SUMS combines the windows on the
/// device itself (the Rust wrapper always asks for the window sums and
/// combines them on the host, so this path needs its own check).
#[test]
fn gpu_msm_c_api_combines_windows_on_the_device() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_c_api_combines_windows_on_the_device") else { return };
    use cuzk_sys::ffi;
    use std::ffi::c_void;
    let mut rng = rng();
    let n = 3001;
    let s = scalars(&mut rng, n);
    let sp = s.as_ptr() as *const c_void;
    let check_rc = |rc: i32, err: &ffi::cuzk_error, g: &str| assert_eq!(rc, 0, "{g}: cuzk_msm failed ({err:?})");
    let p1 = points::<G1Affine>(&mut rng, n);
    let mut r1 = G1Projective::identity();
    let mut err = unsafe { std::mem::zeroed::<ffi::cuzk_error>() };
    let rc = unsafe {
        let out = &mut r1 as *mut G1Projective as *mut c_void;
        ffi::cuzk_msm_g1(dev, p1.as_ptr() as *const c_void, sp, n as u64, 0, std::ptr::null(), out, std::ptr::null_mut(), &mut err)
    };
    check_rc(rc, &err, "G1");
    assert!(r1 == msm(&p1, &s), "G1: the device's own window combination differs from the CPU");
    let p2 = points::<G2Affine>(&mut rng, n);
    let mut r2 = G2Projective::identity();
    let rc = unsafe {
        let out = &mut r2 as *mut G2Projective as *mut c_void;
        ffi::cuzk_msm_g2(dev, p2.as_ptr() as *const c_void, sp, n as u64, 0, std::ptr::null(), out, std::ptr::null_mut(), &mut err)
    };
    check_rc(rc, &err, "G2");
    assert!(r2 == msm(&p2, &s), "G2: the device's own window combination differs from the CPU");
    println!("MSM through the C API, windows combined on the device: GPU equals CPU (G1, G2)");
}

/// Device scalars in one chunk are profiled first (how many are 0, 1 or
/// anything else) and the plan follows them: mostly-0/1 scalars get smaller
/// windows and fuller sort groups. Every profile, alone and in a batch,
/// with the sort space tight and with a forced window size, gives the CPU's
/// result.
fn plans_follow_the_scalars<A: Case>(dev: i32, n: usize) {
    let mut rng = rng();
    let p = points::<A>(&mut rng, n);
    let minus_one = -Fr::ONE;
    let specials = [Fr::ZERO, Fr::ONE, Fr::from(2u64), minus_one];
    let sets: Vec<(&str, Vec<Fr>)> = vec![
        ("random", scalars(&mut rng, n)),
        (
            "90 % 0/1",
            (0..n)
                .map(|_| match rng.gen_range(0..20) {
                    0 | 1 => Fr::random(&mut rng),
                    k if k % 2 == 0 => Fr::ZERO,
                    _ => Fr::ONE,
                })
                .collect(),
        ),
        ("all 0", vec![Fr::ZERO; n]),
        ("all 1", vec![Fr::ONE; n]),
        ("0, 1, 2, r - 1", (0..n).map(|_| specials[rng.gen_range(0..specials.len())]).collect()),
    ];
    let mut dp = DeviceBuffer::<<A::G as Group>::Affine>::new(dev, n).unwrap();
    dp.copy_from_host(&Stream::new(dev).unwrap(), 0, cast(&p)).unwrap();
    let bufs = upload_sets(dev, sets.iter().map(|(_, s)| &s[..]));
    let points = Input::Device { buf: &dp, offset: 0, len: n };
    let want: Vec<A::Proj> = sets.iter().map(|(_, s)| msm(&p, s)).collect();
    // Sort space for two windows of arbitrary scalars: a profiled plan fits
    // more windows of mostly-0/1 ones into each sort.
    let tight = MsmOptions { max_sort_entries: 2 * n as u64, ..Default::default() };
    let forced = MsmOptions { window_bits: 9, ..Default::default() };
    let mut bits = Vec::new();
    for (j, (name, _)) in sets.iter().enumerate() {
        let scalars = Input::Device { buf: &bufs[j], offset: 0, len: n };
        for o in [None, Some(tight), Some(forced)] {
            let (r, st) = gpu::msm::<A::G>(dev, points, scalars, o).unwrap();
            assert!(from_raw::<A::Proj, _>(r) == want[j], "{name} scalars, {o:?}: differs from the CPU");
            if o.is_none() {
                bits.push(st.window_bits);
            }
        }
    }
    let by_profile: Vec<_> = sets.iter().map(|s| s.0).zip(&bits).collect();
    println!("MSM {} n = {n}: window bits by profile {by_profile:?}", std::any::type_name::<A>());
    assert!(bits[1] < bits[0], "mostly-0/1 scalars should plan smaller windows than random ones: {bits:?}");
    // A batch plans for the largest count of each kind over its sets.
    let all: Vec<Input<'_, FrRepr>> = bufs.iter().map(|b| Input::Device { buf: b, offset: 0, len: n }).collect();
    for o in [None, Some(tight)] {
        let (got, _) = gpu::msm_batch::<A::G>(dev, points, &all[1..], o).unwrap();
        for (j, r) in got.into_iter().enumerate() {
            assert!(from_raw::<A::Proj, _>(r) == want[j + 1], "batch, set {}, {o:?}: differs from the CPU", j + 1);
        }
    }
    println!("MSM {} n = {n}: plans from device scalar profiles equal the CPU", std::any::type_name::<A>());
}

#[test]
fn gpu_msm_plans_follow_the_scalars() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_plans_follow_the_scalars") else { return };
    plans_follow_the_scalars::<G1Affine>(dev, 40_009);
    plans_follow_the_scalars::<G2Affine>(dev, 20_011);
}

/// A workspace (msm_in) serves a series of MSMs of different sizes, groups,
/// scalar kinds and places, growing to the largest and never shrinking;
/// the results equal the CPU's. Through the C API, a workspace smaller than
/// the call needs is an error that says so.
#[test]
fn gpu_msm_workspace_is_reused() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_workspace_is_reused") else { return };
    let mut rng = rng();
    let mut ws = gpu::MsmWorkspace::new(dev);
    assert_eq!(ws.bytes(), 0);
    let n = 20_011;
    let p = points::<G1Affine>(&mut rng, n);
    let s: Vec<Fr> = (0..n).map(|i| if i % 3 == 0 { Fr::from((i % 2) as u64) } else { Fr::random(&mut rng) }).collect();
    let ds = upload_sets(dev, std::iter::once(&s[..])).remove(0);
    let mut grown = Vec::new();
    for (len, on_dev, o) in [
        (3001, false, None),
        (n, true, None),
        (n, false, Some(MsmOptions { max_chunk_points: 4099, ..Default::default() })),
        (777, true, Some(MsmOptions { window_bits: 7, ..Default::default() })),
        (0, false, None),
    ] {
        let scalars = if on_dev { Input::Device { buf: &ds, offset: 0, len } } else { Input::Host(cast::<Fr, FrRepr>(&s[..len])) };
        let (r, _) = gpu::msm_in::<G1>(&mut ws, Input::Host(cast(&p[..len])), scalars, o).unwrap();
        let want = msm(&p[..len], &s[..len]);
        assert!(from_raw::<G1Projective, _>(r) == want, "n = {len}, device scalars {on_dev}, {o:?}");
        grown.push(ws.bytes());
    }
    assert!(grown.windows(2).all(|w| w[0] <= w[1]), "the workspace shrank: {grown:?}");
    assert!(grown[0] > 0);
    let p2 = points::<G2Affine>(&mut rng, 3001);
    let s2 = Input::Host(cast::<Fr, FrRepr>(&s[..3001]));
    let (r, _) = gpu::msm_in::<G2>(&mut ws, Input::Host(cast(&p2)), s2, None).unwrap();
    assert!(from_raw::<G2Projective, _>(r) == msm(&p2, &s[..3001]), "G2 in the same workspace");
    println!("MSM workspace: G1 and G2 calls of several sizes in one workspace equal the CPU; bytes held {grown:?}");

    use cuzk_sys::ffi;
    use std::ffi::c_void;
    let mut small = DeviceBuffer::<u8>::new(dev, 4096).unwrap();
    let opts = ffi::cuzk_msm_options {
        window_bits: 0,
        max_chunk_points: 0,
        max_sort_entries: 0,
        workspace: small.as_mut_ptr(),
        workspace_bytes: 4096,
        max_window_bits: 0,
    };
    let mut out = G1Projective::identity();
    let mut err = unsafe { std::mem::zeroed::<ffi::cuzk_error>() };
    let rc = unsafe {
        ffi::cuzk_msm_g1(
            dev,
            p.as_ptr() as *const c_void,
            s.as_ptr() as *const c_void,
            n as u64,
            0,
            &opts,
            &mut out as *mut G1Projective as *mut c_void,
            std::ptr::null_mut(),
            &mut err,
        )
    };
    let msg = unsafe { std::ffi::CStr::from_ptr(err.message.as_ptr()) }.to_string_lossy().into_owned();
    assert!(rc != 0 && msg.contains("workspace"), "a 4 KiB workspace was accepted (rc {rc}, {msg})");
    println!("MSM workspace too small: {msg}");
}

/// A buffer lends its memory as a workspace (MsmWorkspace::in_buffer):
/// chunked G1 and G2 MSMs planned to its size equal the CPU's, the buffer
/// is usable again afterwards, and a call that needs more than it holds is
/// an error that says so (nothing is allocated in its place).
#[test]
fn gpu_msm_workspace_in_a_buffer() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_workspace_in_a_buffer") else { return };
    let mut rng = rng();
    let n = 60_011;
    let p = points::<G1Affine>(&mut rng, n);
    let p2 = points::<G2Affine>(&mut rng, 5_003);
    let s: Vec<Fr> = (0..n).map(|i| if i % 4 == 0 { Fr::from((i % 3) as u64) } else { Fr::random(&mut rng) }).collect();
    let ds = upload_sets(dev, std::iter::once(&s[..])).remove(0);
    // A buffer of scalars' type, as the GPU prover lends its H term's,
    // halfway between the smallest chunked plan's bytes and the smallest
    // plan of one chunk (a window sorted at a time), so that the plan
    // chunks (the smallest is mostly the accumulation's per-thread slots).
    let bytes_for = |o| gpu::workspace_bytes::<G1>(dev, n as u64, false, false, o).unwrap();
    let one_chunk =
        bytes_for(MsmOptions { max_chunk_points: n as u64, max_sort_entries: n as u64, max_window_bits: 20, ..Default::default() });
    let least = bytes_for(MsmOptions { max_chunk_points: 1024, max_sort_entries: 1024, ..Default::default() });
    assert!(least + (8 << 20) < one_chunk, "no room for a chunked plan between {least} and {one_chunk} bytes at n = {n}");
    let len = ((least + one_chunk) / 2) as usize / std::mem::size_of::<FrRepr>();
    let mut lender = DeviceBuffer::<FrRepr>::new(dev, len).unwrap();
    let bytes = (lender.len() * std::mem::size_of::<FrRepr>()) as u64;
    for on_dev in [false, true] {
        let o = gpu::options_for_budget::<G1>(dev, n as u64, false, on_dev, bytes).unwrap();
        let need = gpu::workspace_bytes::<G1>(dev, n as u64, false, on_dev, o).unwrap();
        assert!(need <= bytes && o.max_chunk_points < n as u64, "{o:?} needs {need} of {bytes} bytes");
        let mut ws = gpu::MsmWorkspace::in_buffer(&mut lender);
        assert_eq!(ws.bytes(), bytes);
        let scalars = if on_dev { Input::Device { buf: &ds, offset: 0, len: n } } else { Input::Host(cast::<Fr, FrRepr>(&s)) };
        let (r, stats) = gpu::msm_in::<G1>(&mut ws, Input::Host(cast(&p)), scalars, Some(o)).unwrap();
        assert!(from_raw::<G1Projective, _>(r) == msm(&p, &s), "G1 in a lent buffer, device scalars {on_dev}, {o:?}");
        assert!(stats.chunks > 1, "{o:?} ran in {} chunk(s)", stats.chunks);
    }
    let o2 = gpu::options_for_budget::<G2>(dev, p2.len() as u64, false, false, bytes).unwrap();
    assert!(gpu::workspace_bytes::<G2>(dev, p2.len() as u64, false, false, o2).unwrap() <= bytes, "G2 plan {o2:?}");
    let mut ws = gpu::MsmWorkspace::in_buffer(&mut lender);
    let s2 = Input::Host(cast::<Fr, FrRepr>(&s[..p2.len()]));
    let (r, _) = gpu::msm_in::<G2>(&mut ws, Input::Host(cast(&p2)), s2, Some(o2)).unwrap();
    assert!(from_raw::<G2Projective, _>(r) == msm(&p2, &s[..p2.len()]), "G2 in a lent buffer, {o2:?}");
    let e = gpu::msm_in::<G1>(&mut ws, Input::Host(cast(&p)), Input::Host(cast::<Fr, FrRepr>(&s)), None).unwrap_err().to_string();
    assert!(e.contains("borrowed") && e.contains(&bytes.to_string()), "unplanned call in a lent buffer: {e}");
    drop(ws);
    // The lender is whole again: a plain upload and read-back round-trips.
    let stream = Stream::new(dev).unwrap();
    let back: Vec<FrRepr> = cast::<Fr, FrRepr>(&s[..1000]).to_vec();
    lender.copy_from_host(&stream, 0, &back).unwrap();
    let mut read = vec![back[0]; back.len()];
    lender.copy_to_host(&stream, 0, &mut read).unwrap();
    assert!(read == back, "the lender's contents after the MSMs");
    println!("MSM workspace in a lent buffer of {bytes} bytes: G1 (host and device scalars) and G2 equal the CPU; an unplanned call is refused: {e}");
}

/// The largest sizes the issue names, G1 at 2^28 points and G2 at 2^26,
/// and odd sub-ranges of them, against an independent computation: the
/// points are k_(i mod D)·G with known 64-bit k (made on the device,
/// `msm::test_inputs`), so the MSM is (Σ s_i·k_i)·G, which the host
/// computes from the scalars alone (`cuzk_tests::dlogs`). Fresh random
/// scalars with edge values sprinkled in, then Filecoin-like ones (90 %
/// 0/1); the default plan and one chunked to a 4 GiB workspace. Skipped,
/// visibly, on a device without room for it (~60 GiB).
#[test]
fn gpu_msm_largest_sizes() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_largest_sizes") else { return };
    largest::<G1Affine>(dev, 28);
    largest::<G2Affine>(dev, 26);
}

fn largest<A: Case>(dev: i32, log_n: u32) {
    let name = std::any::type_name::<A>();
    let n = 1usize << log_n;
    let ws = gpu::workspace_bytes::<A::G>(dev, n as u64, true, true, MsmOptions::default()).unwrap();
    let need = (n * (std::mem::size_of::<A>() + 32)) as u64 + ws + (1 << 30);
    let free = cuzk_sys::free_memory(dev).unwrap();
    if free < need {
        cuzk_sys::test_skip_on_this_device(&format!(
            "MSM {name} 2^{log_n} needs {} GiB of device memory, {} GiB free",
            need >> 30,
            free >> 30
        ));
        return;
    }
    let mut rng = rng();
    let (seed, distinct) = (rng.next_u64(), 1_000_003);
    let mut points = DeviceBuffer::<<A::G as Group>::Affine>::new(dev, n).unwrap();
    let mut scalars = DeviceBuffer::<FrRepr>::new(dev, n).unwrap();
    let gen: <A::G as Group>::Affine = from_raw(A::generator());
    gpu::test_inputs::<A::G>(&gen, seed, distinct, &mut points, &mut scalars).unwrap();
    let stream = Stream::new(dev).unwrap();
    let mut host = vec![Fr::ZERO; n];
    scalars.copy_to_host(&stream, 0, cast_mut(&mut host)).unwrap();
    // Edge scalars at a few thousand random places.
    let minus_one = -Fr::ONE;
    for _ in 0..4096 {
        let i = rng.gen_range(0..n);
        host[i] = [Fr::ZERO, Fr::ONE, minus_one, minus_one - Fr::ONE][rng.gen_range(0..4)];
        scalars.copy_from_host(&stream, i, cast(&host[i..i + 1])).unwrap();
    }
    let odd = (5usize, n - 5 - 12_345); // offset, len
    let chunked = gpu::options_for_budget::<A::G>(dev, n as u64, true, true, 4 << 30).unwrap();
    for kind in ["random", "90 % 0/1"] {
        if kind != "random" {
            for s in host.iter_mut() {
                match rng.gen_range(0..20) {
                    0 | 1 => {}
                    k if k % 2 == 0 => *s = Fr::ZERO,
                    _ => *s = Fr::ONE,
                }
            }
            scalars.copy_from_host(&stream, 0, cast(&host)).unwrap();
        }
        stream.synchronize().unwrap();
        for (offset, len) in [(0, n), odd] {
            let want = A::Proj::generator() * cuzk_tests::dlogs::dot(&host[offset..offset + len], seed, distinct, offset);
            for o in [None, Some(chunked)] {
                let t = std::time::Instant::now();
                let (r, st) =
                    gpu::msm::<A::G>(dev, Input::Device { buf: &points, offset, len }, Input::Device { buf: &scalars, offset, len }, o)
                        .unwrap();
                let got: A::Proj = from_raw(r);
                assert!(got == want, "MSM {name} of {len} points from {offset}, {kind} scalars ({o:?}): wrong result");
                println!(
                    "MSM {name} {len} points from {offset}, {kind} scalars, {} ({} chunk(s), c = {}): equals the discrete-log computation ({:.0} ms)",
                    if o.is_some() { "in a 4 GiB workspace" } else { "default plan" },
                    st.chunks,
                    st.window_bits,
                    t.elapsed().as_secs_f64() * 1e3
                );
            }
        }
    }
}

/// A budget that holds every point in one chunk with fewer windows sorted
/// at once gets one chunk, not two of more windows: there the MSM reads
/// what its scalars are (a mostly-0/1 set plans smaller windows than the
/// same set in two chunks). The results equal the CPU's, and a bound on
/// the window size is kept.
#[test]
fn gpu_msm_budget_takes_one_chunk_where_it_fits() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_budget_takes_one_chunk_where_it_fits") else { return };
    let mut rng = rng();
    let n = (1usize << 17) + 3;
    let p = points::<G1Affine>(&mut rng, n);
    let mostly_01: Vec<Fr> =
        (0..n).map(|_| if rng.gen_range(0..10) == 0 { Fr::random(&mut rng) } else { Fr::from(rng.gen_range(0..2u64)) }).collect();
    let random = scalars(&mut rng, n);
    let mut dp = DeviceBuffer::<<G1 as Group>::Affine>::new(dev, n).unwrap();
    dp.copy_from_host(&Stream::new(dev).unwrap(), 0, cast(&p)).unwrap();
    let bufs = upload_sets(dev, [&mostly_01[..], &random[..]].into_iter());
    let points = Input::Device { buf: &dp, offset: 0, len: n };
    let bytes_for = |o| gpu::workspace_bytes::<G1>(dev, n as u64, true, true, o).unwrap();
    let full = bytes_for(MsmOptions::default());
    let one_window = MsmOptions { max_chunk_points: n as u64, max_sort_entries: n as u64, ..Default::default() };
    let budget = bytes_for(one_window);
    assert!(budget < full, "one window at a time ({budget} bytes) saves nothing against {full} at n = {n}");
    let o = gpu::options_for_budget::<G1>(dev, n as u64, true, true, budget).unwrap();
    assert_eq!(o.chunk_points(n as u64), n as u64, "{o:?}: chunked within {budget} bytes, where one chunk fits");
    assert!(bytes_for(o) <= budget, "{o:?} needs {} of {budget} bytes", bytes_for(o));
    let halves = MsmOptions { max_chunk_points: n.div_ceil(2) as u64, ..Default::default() };
    let capped = MsmOptions { max_window_bits: 9, ..Default::default() };
    let mut bits = Vec::new();
    for (name, s, buf) in [("mostly 0/1", &mostly_01, &bufs[0]), ("random", &random, &bufs[1])] {
        let want = msm(&p, s);
        let scalars = Input::Device { buf, offset: 0, len: n };
        for (what, o) in [("within the budget", o), ("in two chunks", halves), ("windows of at most 9 bits", capped)] {
            let (r, st) = gpu::msm::<G1>(dev, points, scalars, Some(o)).unwrap();
            assert!(from_raw::<G1Projective, _>(r) == want, "{name} scalars {what} ({o:?}): differs from the CPU");
            bits.push((name, what, st.window_bits, st.chunks));
        }
    }
    println!("MSM G1 n = {n} within {budget} of {full} bytes: {o:?}; (scalars, plan, window bits, chunks) {bits:?}");
    assert!(bits.iter().all(|b| (b.1 == "in two chunks") == (b.3 == 2)), "chunks: {bits:?}");
    assert!(bits[0].2 < bits[1].2, "one chunk of mostly-0/1 scalars should plan smaller windows than two: {bits:?}");
    assert!(bits.iter().filter(|b| b.1.starts_with("windows")).all(|b| b.2 <= 9), "the window bound was not kept: {bits:?}");
}
