//! Multi-scalar multiplication on the device (native/msm/): Σ sᵢ·Pᵢ in G1
//! or G2 with Pippenger over signed windows.
//!
//! Points and results are raw blst structs so this crate needs no blstrs:
//! blstrs' `G1Affine`/`G2Affine`/`G1Projective`/`G2Projective` are
//! `#[repr(transparent)]` over `blst_p1_affine`/`blst_p2_affine`/`blst_p1`/
//! `blst_p2`, so callers cast slices of them to [`G1AffineRepr`] etc. (same
//! size and alignment, checked by the tests) and transmute the result back.
//! Scalars are [`FrRepr`] (blstrs::Scalar's Montgomery limbs); the device
//! converts them to canonical integers.

use std::ffi::c_void;

use crate::device::DeviceBuffer;
use crate::error::{call, Error, Result};
use crate::{ffi, FrRepr};

/// blst_p1_affine: x then y, 6 Montgomery limbs each; infinity = all zero.
pub type G1AffineRepr = [u64; 12];
/// blst_p2_affine: x (c0, c1) then y (c0, c1).
pub type G2AffineRepr = [u64; 24];
/// blst_p1 (Jacobian X, Y, Z); the identity has Z = 0.
pub type G1ProjRepr = [u64; 18];
/// blst_p2 (Jacobian over Fp2).
pub type G2ProjRepr = [u64; 36];

/// Which group an MSM runs in.
pub trait Group {
    type Affine: Copy;
    type Proj: Copy;
    const NAME: &'static str;
    #[doc(hidden)]
    const ZERO: Self::Proj;
    #[doc(hidden)]
    unsafe fn raw(
        ordinal: i32,
        points: *const c_void,
        scalars: *const c_void,
        n: u64,
        flags: u32,
        opts: *const ffi::cuzk_msm_options,
        out: *mut c_void,
        stats: *mut ffi::cuzk_msm_stats,
        err: *mut ffi::cuzk_error,
    ) -> i32;
    #[doc(hidden)]
    unsafe fn raw_workspace(
        ordinal: i32,
        n: u64,
        flags: u32,
        opts: *const ffi::cuzk_msm_options,
        bytes: *mut u64,
        err: *mut ffi::cuzk_error,
    ) -> i32;
}

pub enum G1 {}
pub enum G2 {}

/// The two groups differ only in their types, name and C entry point.
macro_rules! impl_group {
    ($g:ty, $aff:ty, $proj:ty, $name:literal, $limbs:literal, $entry:ident, $workspace:ident) => {
        impl Group for $g {
            type Affine = $aff;
            type Proj = $proj;
            const NAME: &'static str = $name;
            const ZERO: $proj = [0; $limbs];
            unsafe fn raw(
                o: i32,
                p: *const c_void,
                s: *const c_void,
                n: u64,
                f: u32,
                opts: *const ffi::cuzk_msm_options,
                out: *mut c_void,
                st: *mut ffi::cuzk_msm_stats,
                e: *mut ffi::cuzk_error,
            ) -> i32 {
                ffi::$entry(o, p, s, n, f, opts, out, st, e)
            }
            unsafe fn raw_workspace(
                o: i32,
                n: u64,
                f: u32,
                opts: *const ffi::cuzk_msm_options,
                bytes: *mut u64,
                e: *mut ffi::cuzk_error,
            ) -> i32 {
                ffi::$workspace(o, n, f, opts, bytes, e)
            }
        }
    };
}

impl_group!(G1, G1AffineRepr, G1ProjRepr, "G1", 18, cuzk_msm_g1, cuzk_msm_g1_workspace);
impl_group!(G2, G2AffineRepr, G2ProjRepr, "G2", 36, cuzk_msm_g2, cuzk_msm_g2_workspace);

/// Tuning that never changes the result (tests use it to cover window
/// sizes and chunking).
#[derive(Debug, Clone, Copy, Default)]
pub struct MsmOptions {
    /// 0: chosen from n; else 2..=24.
    pub window_bits: u32,
    /// 0: automatic; else at most this many points per chunk (bounds VRAM).
    pub max_chunk_points: u64,
    /// 0: 2^29; else at most this many digits sorted at once (windows are
    /// taken in groups; bounds VRAM).
    pub max_sort_entries: u64,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct MsmStats {
    /// Device time (events) from the first upload to the result.
    pub device_ms: f32,
    pub window_bits: u32,
    pub chunks: u32,
    /// Device time per phase, summed over chunks: scalars to digits, the
    /// radix sort, bucket accumulation, and buckets to the result.
    pub digits_ms: f32,
    pub sort_ms: f32,
    pub accumulate_ms: f32,
    pub reduce_ms: f32,
    /// The accumulation kernel's register bound (blocks per SM it was built for).
    pub accumulate_min_blocks: u32,
}

/// Where an MSM input lives.
#[derive(Clone, Copy)]
pub enum Input<'a, T: Copy> {
    Host(&'a [T]),
    /// The first `len` elements of a device buffer, from `offset`.
    Device { buf: &'a DeviceBuffer<T>, offset: usize, len: usize },
}

impl<T: Copy> Input<'_, T> {
    fn len(&self) -> usize {
        match self {
            Input::Host(s) => s.len(),
            Input::Device { len, .. } => *len,
        }
    }
    fn check(&self, device: i32) -> Result<()> {
        if let Input::Device { buf, offset, len } = self {
            if offset.checked_add(*len).map_or(true, |end| end > buf.len()) {
                return Err(Error::invalid("device input range outside its buffer"));
            }
            if buf.device() != device {
                return Err(Error::invalid("device input on another device"));
            }
        }
        Ok(())
    }
    fn ptr(&self) -> (*const c_void, bool) {
        match self {
            Input::Host(s) => (s.as_ptr() as *const c_void, false),
            Input::Device { buf, offset, .. } => {
                (unsafe { (buf.as_ptr() as *const T).add(*offset) } as *const c_void, true)
            }
        }
    }
}

fn raw_flags(points_on_device: bool, scalars_on_device: bool) -> u32 {
    (if points_on_device { ffi::cuzk_msm_flags::CUZK_MSM_POINTS_ON_DEVICE as u32 } else { 0 })
        | (if scalars_on_device { ffi::cuzk_msm_flags::CUZK_MSM_SCALARS_ON_DEVICE as u32 } else { 0 })
}

fn raw_options(o: MsmOptions) -> ffi::cuzk_msm_options {
    ffi::cuzk_msm_options {
        window_bits: o.window_bits,
        max_chunk_points: o.max_chunk_points,
        max_sort_entries: o.max_sort_entries,
    }
}

/// Σ scalars[i]·points[i] in group `G` on `device`. Returns when done.
pub fn msm<G: Group>(
    device: i32,
    points: Input<'_, G::Affine>,
    scalars: Input<'_, FrRepr>,
    opts: Option<MsmOptions>,
) -> Result<(G::Proj, MsmStats)> {
    if points.len() != scalars.len() {
        return Err(Error::invalid(format!(
            "{} MSM: {} points but {} scalars",
            G::NAME,
            points.len(),
            scalars.len()
        )));
    }
    points.check(device)?;
    scalars.check(device)?;
    let (p, p_dev) = points.ptr();
    let (s, s_dev) = scalars.ptr();
    let flags = raw_flags(p_dev, s_dev);
    let raw_opts = opts.map(raw_options);
    let opts_ptr = raw_opts.as_ref().map_or(std::ptr::null(), |o| o as *const _);
    let mut out = G::ZERO;
    let mut stats = ffi::cuzk_msm_stats::default();
    call(|e| unsafe {
        G::raw(device, p, s, points.len() as u64, flags, opts_ptr, &mut out as *mut _ as *mut c_void, &mut stats, e)
    })?;
    Ok((
        out,
        MsmStats {
            device_ms: stats.device_ms,
            window_bits: stats.window_bits,
            chunks: stats.chunks,
            digits_ms: stats.digits_ms,
            sort_ms: stats.sort_ms,
            accumulate_ms: stats.accumulate_ms,
            reduce_ms: stats.reduce_ms,
            accumulate_min_blocks: stats.accumulate_min_blocks,
        },
    ))
}

/// G1 MSM of host slices.
pub fn msm_g1(device: i32, points: &[G1AffineRepr], scalars: &[FrRepr]) -> Result<G1ProjRepr> {
    Ok(msm::<G1>(device, Input::Host(points), Input::Host(scalars), None)?.0)
}

/// G2 MSM of host slices.
pub fn msm_g2(device: i32, points: &[G2AffineRepr], scalars: &[FrRepr]) -> Result<G2ProjRepr> {
    Ok(msm::<G2>(device, Input::Host(points), Input::Host(scalars), None)?.0)
}

/// Tests and benches: fills `points` with valid points (multiples of
/// `generator` by `distinct` pseudo-random integers, repeated) and `scalars`
/// with pseudo-random scalars, on the device.
pub fn test_inputs<G: Group>(
    generator: &G::Affine,
    seed: u64,
    distinct: usize,
    points: &mut DeviceBuffer<G::Affine>,
    scalars: &mut DeviceBuffer<FrRepr>,
) -> Result<()> {
    let n = points.len();
    if scalars.len() != n || points.device() != scalars.device() {
        return Err(Error::invalid("points and scalars differ in length or device"));
    }
    let g2 = (std::mem::size_of::<G::Affine>() == std::mem::size_of::<G2AffineRepr>()) as i32;
    call(|e| unsafe {
        ffi::cuzk_test_msm_inputs(
            points.device(),
            g2,
            generator as *const _ as *const c_void,
            seed,
            n as u64,
            distinct.min(n) as u64,
            points.as_mut_ptr(),
            scalars.as_mut_ptr(),
            e,
        )
    })
}

/// Device bytes one [`msm`] call on `device` allocates for `n` points with
/// these options: computed by the same plan the MSM itself makes
/// (native/msm/pippenger.cuh). Callers reserve this from a VRAM budget
/// before calling.
pub fn workspace_bytes<G: Group>(
    device: i32,
    n: u64,
    points_on_device: bool,
    scalars_on_device: bool,
    opts: MsmOptions,
) -> Result<u64> {
    let opts = raw_options(opts);
    let mut bytes = 0u64;
    call(|e| unsafe {
        G::raw_workspace(device, n, raw_flags(points_on_device, scalars_on_device), &opts, &mut bytes, e)
    })?;
    Ok(bytes)
}

/// Options for an MSM of `n` points whose workspace fits in `budget`: the
/// defaults if they fit; else chunks, as large as fit. The sort space grows
/// with the entries sorted at once (chunk × windows per group), so sorting
/// fewer windows at a time allows larger chunks, which matters: each chunk
/// after the first adds into every bucket from global memory and uploads
/// its points again. But every group costs a few host round trips, which
/// dominate small MSMs. So: the most windows per group (16, 8, 4, 2, 1)
/// whose largest chunk is at least half the one-window chunk. Chunks have
/// at least 1024 points (below that an MSM is not worth a GPU).
pub fn options_for_budget<G: Group>(
    device: i32,
    n: u64,
    points_on_device: bool,
    scalars_on_device: bool,
    budget: u64,
) -> Result<MsmOptions> {
    let all = MsmOptions::default();
    if workspace_bytes::<G>(device, n, points_on_device, scalars_on_device, all)? <= budget {
        return Ok(all);
    }
    let with = |chunk: u64, wins: u64| MsmOptions {
        max_chunk_points: chunk,
        max_sort_entries: chunk.saturating_mul(wins),
        ..Default::default()
    };
    // The largest chunk that fits with `wins` windows sorted at once.
    let largest = |wins: u64| -> Result<u64> {
        let fits = |chunk: u64| -> Result<bool> {
            Ok(workspace_bytes::<G>(device, n, points_on_device, scalars_on_device, with(chunk, wins))? <= budget)
        };
        let (mut lo, mut hi) = (1024u64.min(n.max(1)), n.max(1));
        while lo < hi {
            let mid = lo + (hi - lo + 1) / 2;
            if fits(mid)? {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Ok(lo)
    };
    let one = largest(1)?;
    for wins in [16, 8, 4, 2] {
        let chunk = largest(wins)?;
        if chunk.saturating_mul(2) >= one {
            return Ok(with(chunk, wins));
        }
    }
    Ok(with(one, 1))
}
