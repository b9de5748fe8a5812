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
//!
//! The device returns each window's sum and the host combines them
//! (Σ 2^(cw)·W_w, ~256 doublings with blst): on the device that chain runs
//! on one thread, milliseconds per MSM call; here, tens of microseconds.

use std::ffi::c_void;
use std::marker::PhantomData;

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
        scalars: *const *const c_void,
        sets: u32,
        n: u64,
        flags: u32,
        opts: *const ffi::cuzk_msm_options,
        out: *mut c_void,
        stats: *mut ffi::cuzk_msm_stats,
        err: *mut ffi::cuzk_error,
    ) -> i32;
    /// Σ_w 2^(c·w)·windows[w] (Horner from the top window), with blst.
    #[doc(hidden)]
    fn combine(windows: &[Self::Proj], c: u32) -> Self::Proj;
    #[doc(hidden)]
    unsafe fn raw_workspace(
        ordinal: i32,
        n: u64,
        sets: u32,
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
    ($g:ty, $aff:ty, $proj:ty, $name:literal, $limbs:literal, $entry:ident, $workspace:ident, $blst:ty, $double:ident, $add:ident) => {
        impl Group for $g {
            type Affine = $aff;
            type Proj = $proj;
            const NAME: &'static str = $name;
            const ZERO: $proj = [0; $limbs];
            unsafe fn raw(
                o: i32,
                p: *const c_void,
                s: *const *const c_void,
                sets: u32,
                n: u64,
                f: u32,
                opts: *const ffi::cuzk_msm_options,
                out: *mut c_void,
                st: *mut ffi::cuzk_msm_stats,
                e: *mut ffi::cuzk_error,
            ) -> i32 {
                ffi::$entry(o, p, s, sets, n, f, opts, out, st, e)
            }
            fn combine(windows: &[$proj], c: u32) -> $proj {
                let Some((top, rest)) = windows.split_last() else { return Self::ZERO };
                // The repr is the blst struct's words (same size, u64 alignment).
                let as_blst = |p: &$proj| unsafe { std::mem::transmute::<$proj, $blst>(*p) };
                let mut acc = as_blst(top);
                for w in rest.iter().rev() {
                    for _ in 0..c {
                        let t = acc;
                        unsafe { blst::$double(&mut acc, &t) };
                    }
                    let t = acc;
                    unsafe { blst::$add(&mut acc, &t, &as_blst(w)) };
                }
                unsafe { std::mem::transmute::<$blst, $proj>(acc) }
            }
            unsafe fn raw_workspace(
                o: i32,
                n: u64,
                sets: u32,
                f: u32,
                opts: *const ffi::cuzk_msm_options,
                bytes: *mut u64,
                e: *mut ffi::cuzk_error,
            ) -> i32 {
                ffi::$workspace(o, n, sets, f, opts, bytes, e)
            }
        }
    };
}

impl_group!(
    G1,
    G1AffineRepr,
    G1ProjRepr,
    "G1",
    18,
    cuzk_msm_g1_batch,
    cuzk_msm_g1_batch_workspace,
    blst::blst_p1,
    blst_p1_double,
    blst_p1_add_or_double
);
impl_group!(
    G2,
    G2AffineRepr,
    G2ProjRepr,
    "G2",
    36,
    cuzk_msm_g2_batch,
    cuzk_msm_g2_batch_workspace,
    blst::blst_p2,
    blst_p2_double,
    blst_p2_add_or_double
);

/// Tuning that never changes the result (tests use it to cover window
/// sizes and chunking).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MsmOptions {
    /// 0: chosen from n; else 2..=24.
    pub window_bits: u32,
    /// 0: automatic; else at most this many points per chunk (bounds VRAM).
    pub max_chunk_points: u64,
    /// 0: 2^29; else at most this many digits sorted at once (windows are
    /// taken in groups; bounds VRAM).
    pub max_sort_entries: u64,
    /// 0: the planner's own bound (22 for one G1 scalar set in one chunk,
    /// else 20); else 4..=24, the largest window it may choose (bounds the
    /// buckets' VRAM). Ignored where `window_bits` is set.
    pub max_window_bits: u32,
}

impl MsmOptions {
    /// Points per chunk for an MSM of `n` points (0 = unchunked: all n).
    pub fn chunk_points(&self, n: u64) -> u64 {
        match self.max_chunk_points {
            0 => n,
            c => c.min(n),
        }
    }
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
    Device {
        buf: &'a DeviceBuffer<T>,
        offset: usize,
        len: usize,
    },
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
            if offset.checked_add(*len).is_none_or(|end| end > buf.len()) {
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
            Input::Device { buf, offset, .. } => (unsafe { (buf.as_ptr() as *const T).add(*offset) } as *const c_void, true),
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
        workspace: std::ptr::null_mut(),
        workspace_bytes: 0,
        max_window_bits: o.max_window_bits,
    }
}

/// Device memory that MSM calls use instead of allocating their own
/// ([`msm_batch_in`]): a large MSM's cudaMalloc and cudaFree (~10 GB at
/// 2^27 points) cost ~6 ms per call on the H200, most of it in cudaFree.
/// An owned one grows to the largest call made with it and is freed when
/// dropped; a borrowed one ([`MsmWorkspace::in_buffer`]) is another
/// buffer's memory for as long as the borrow lasts, and never grows. One
/// call at a time (`&mut`).
pub struct MsmWorkspace<'a> {
    device: i32,
    mem: Memory<'a>,
}

enum Memory<'a> {
    Owned(Option<DeviceBuffer<u8>>),
    /// Another buffer's bytes, exclusively ours while `'a` lasts.
    Borrowed {
        ptr: *mut c_void,
        bytes: u64,
        _buf: PhantomData<&'a mut ()>,
    },
}

// The borrowed form is a `&mut DeviceBuffer<T>` in all but type, and
// DeviceBuffer is Send.
unsafe impl Send for MsmWorkspace<'_> {}

impl MsmWorkspace<'static> {
    /// Empty: the first call allocates it.
    pub fn new(device: i32) -> Self {
        MsmWorkspace { device, mem: Memory::Owned(None) }
    }

    /// Holding `bytes` from the start. A workspace that never has to grow
    /// never frees during a call, and cudaFree waits for the whole device:
    /// MSMs running on other threads at the same time need that.
    pub fn with_bytes(device: i32, bytes: u64) -> Result<Self> {
        let mut ws = Self::new(device);
        ws.reserve(bytes)?;
        Ok(ws)
    }
}

impl<'a> MsmWorkspace<'a> {
    /// `buf`'s memory as a workspace while it is borrowed (a buffer that
    /// is idle for a while lends its VRAM to an MSM; nothing is allocated
    /// or freed). Calls that need more than it holds fail and say so; plan
    /// them with [`options_for_budget`] and [`MsmWorkspace::bytes`].
    pub fn in_buffer<T: Copy>(buf: &'a mut DeviceBuffer<T>) -> Self {
        let bytes = (buf.len() * std::mem::size_of::<T>()) as u64;
        MsmWorkspace { device: buf.device(), mem: Memory::Borrowed { ptr: buf.as_mut_ptr(), bytes, _buf: PhantomData } }
    }

    /// [`MsmWorkspace::in_buffer`] over `buf`'s elements from `keep` on
    /// (its start rounded up to 2 MiB), and `buf` itself to read elements
    /// `..keep` while the workspace lives: an MSM's scalars kept at the
    /// start of the buffer whose rest is its workspace. Elements from
    /// `keep` on are the MSM's scratch meanwhile.
    pub fn in_buffer_after<T: Copy>(buf: &'a mut DeviceBuffer<T>, keep: usize) -> (Self, &'a DeviceBuffer<T>) {
        let total = buf.len() * std::mem::size_of::<T>();
        let from = total - Self::bytes_after::<T>(buf.len(), keep) as usize;
        let ptr = unsafe { (buf.as_mut_ptr() as *mut u8).add(from) } as *mut c_void;
        let ws = MsmWorkspace { device: buf.device(), mem: Memory::Borrowed { ptr, bytes: (total - from) as u64, _buf: PhantomData } };
        (ws, buf)
    }

    /// The bytes of [`MsmWorkspace::in_buffer_after`] over a buffer of
    /// `len` elements, keeping `keep` (to plan before the buffer exists).
    pub fn bytes_after<T: Copy>(len: usize, keep: usize) -> u64 {
        const ALIGN: usize = 2 << 20;
        let total = len * std::mem::size_of::<T>();
        let from = (keep * std::mem::size_of::<T>()).div_ceil(ALIGN).saturating_mul(ALIGN).min(total);
        (total - from) as u64
    }

    /// Device bytes held now.
    pub fn bytes(&self) -> u64 {
        match &self.mem {
            Memory::Owned(buf) => buf.as_ref().map_or(0, |b| b.len() as u64),
            Memory::Borrowed { bytes, .. } => *bytes,
        }
    }

    /// Holds at least `bytes`; a smaller owned buffer is freed before the
    /// larger one is allocated, so the peak is one buffer, not two.
    fn reserve(&mut self, bytes: u64) -> Result<()> {
        let held = self.bytes();
        match &mut self.mem {
            Memory::Owned(buf) if held < bytes => {
                *buf = None;
                let len = usize::try_from(bytes).map_err(|_| Error::invalid("MSM workspace size"))?;
                *buf = Some(DeviceBuffer::new(self.device, len)?);
            }
            Memory::Borrowed { .. } if held < bytes => {
                return Err(Error::invalid(format!("MSM workspace borrowed from a buffer of {held} bytes; this MSM needs {bytes}")));
            }
            _ => {}
        }
        Ok(())
    }

    /// The memory and its size, once `reserve` has run (None: empty).
    fn raw(&mut self) -> Option<(*mut c_void, u64)> {
        match &mut self.mem {
            Memory::Owned(buf) => buf.as_mut().map(|b| (b.as_mut_ptr(), b.len() as u64)),
            Memory::Borrowed { ptr, bytes, .. } => Some((*ptr, *bytes)),
        }
    }
}

/// Σ scalars[i]·points[i] in group `G` on `device`. Returns when done.
pub fn msm<G: Group>(
    device: i32,
    points: Input<'_, G::Affine>,
    scalars: Input<'_, FrRepr>,
    opts: Option<MsmOptions>,
) -> Result<(G::Proj, MsmStats)> {
    let (out, stats) = msm_batch::<G>(device, points, &[scalars], opts)?;
    Ok((out[0], stats))
}

/// One MSM per scalar set over the same points: out[j] = Σ scalars[j][i]·
/// points[i]. Each chunk of host points is uploaded once for all the sets
/// (one SRS query against every circuit of a batch), and each set has its
/// own buckets ([`workspace_bytes_batch`]). The sets must all be on the
/// host or all on the device. Stats sum over the sets.
pub fn msm_batch<G: Group>(
    device: i32,
    points: Input<'_, G::Affine>,
    scalars: &[Input<'_, FrRepr>],
    opts: Option<MsmOptions>,
) -> Result<(Vec<G::Proj>, MsmStats)> {
    msm_batch_with::<G>(device, points, scalars, opts, None)
}

/// [`msm_batch`] in `workspace` (grown first to what this call needs, on
/// the workspace's device), so that a series of MSMs allocates once.
pub fn msm_batch_in<G: Group>(
    workspace: &mut MsmWorkspace<'_>,
    points: Input<'_, G::Affine>,
    scalars: &[Input<'_, FrRepr>],
    opts: Option<MsmOptions>,
) -> Result<(Vec<G::Proj>, MsmStats)> {
    msm_batch_with::<G>(workspace.device, points, scalars, opts, Some(workspace))
}

/// [`msm`] in `workspace`: see [`msm_batch_in`].
pub fn msm_in<G: Group>(
    workspace: &mut MsmWorkspace<'_>,
    points: Input<'_, G::Affine>,
    scalars: Input<'_, FrRepr>,
    opts: Option<MsmOptions>,
) -> Result<(G::Proj, MsmStats)> {
    let (out, stats) = msm_batch_in::<G>(workspace, points, &[scalars], opts)?;
    Ok((out[0], stats))
}

fn msm_batch_with<G: Group>(
    device: i32,
    points: Input<'_, G::Affine>,
    scalars: &[Input<'_, FrRepr>],
    opts: Option<MsmOptions>,
    workspace: Option<&mut MsmWorkspace<'_>>,
) -> Result<(Vec<G::Proj>, MsmStats)> {
    if scalars.is_empty() {
        return Ok((Vec::new(), MsmStats::default()));
    }
    points.check(device)?;
    let mut ptrs = Vec::with_capacity(scalars.len());
    let mut s_dev = None;
    for (j, set) in scalars.iter().enumerate() {
        if set.len() != points.len() {
            return Err(Error::invalid(format!("{} MSM: {} points but {} scalars (set {j})", G::NAME, points.len(), set.len())));
        }
        set.check(device)?;
        let (p, on_dev) = set.ptr();
        if *s_dev.get_or_insert(on_dev) != on_dev {
            return Err(Error::invalid(format!(
                "{} MSM batch: scalar set {j} is not where set 0 is (all on the host or all on the device)",
                G::NAME
            )));
        }
        ptrs.push(p);
    }
    let sets = u32::try_from(scalars.len()).map_err(|_| Error::invalid(format!("{} MSM batch: {} scalar sets", G::NAME, scalars.len())))?;
    let (p, p_dev) = points.ptr();
    let flags = raw_flags(p_dev, s_dev.unwrap_or(false)) | ffi::cuzk_msm_flags::CUZK_MSM_WINDOW_SUMS as u32;
    let mut raw_opts = opts.map(raw_options);
    if let Some(ws) = workspace {
        let s_on_dev = s_dev.unwrap_or(false);
        let n = points.len() as u64;
        let need = workspace_bytes_batch::<G>(device, n, sets, p_dev, s_on_dev, opts.unwrap_or_default())?;
        ws.reserve(need)?;
        if let Some((ptr, bytes)) = ws.raw() {
            let o = raw_opts.get_or_insert_with(|| raw_options(MsmOptions::default()));
            o.workspace = ptr;
            o.workspace_bytes = bytes;
        }
    }
    let opts_ptr = raw_opts.as_ref().map_or(std::ptr::null(), |o| o as *const _);
    let max_windows = ffi::CUZK_MSM_MAX_WINDOWS as usize;
    let mut out = vec![G::ZERO; scalars.len() * max_windows];
    let mut stats = ffi::cuzk_msm_stats::default();
    call(|e| unsafe {
        G::raw(device, p, ptrs.as_ptr(), sets, points.len() as u64, flags, opts_ptr, out.as_mut_ptr() as *mut c_void, &mut stats, e)
    })?;
    let nwin = stats.windows as usize;
    if nwin == 0 || nwin > max_windows {
        return Err(Error::invalid(format!("{} MSM: the device reported {nwin} windows", G::NAME)));
    }
    let out = out.chunks(nwin).take(scalars.len()).map(|w| G::combine(w, stats.window_bits)).collect();
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

/// Tests and benches (feature `testing`): fills `points` with valid points (multiples of
/// `generator` by `distinct` pseudo-random integers, repeated) and `scalars`
/// with pseudo-random scalars, on the device.
#[cfg(feature = "testing")]
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
    let g2 = (G::NAME == "G2") as i32;
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

/// Raises `device`'s per-thread stack limit to what the MSM kernels need
/// and returns the limit. The driver sizes one local-memory pool per device
/// by that limit (times every thread the device can hold: 264 MiB per KiB
/// on an H200) and never shrinks it; without this, the first G2 MSM grows
/// it by ~430 MiB that no memory plan counted. Call before measuring free
/// memory for a budget.
pub fn reserve_local_memory(device: i32) -> Result<u64> {
    let mut bytes = 0u64;
    call(|e| unsafe { ffi::cuzk_msm_reserve_local_memory(device, &mut bytes, e) })?;
    Ok(bytes)
}

/// Device bytes one [`msm`] call on `device` allocates for `n` points with
/// these options: computed by the same plan the MSM itself makes
/// (native/msm/pippenger.cuh). Callers reserve this from a VRAM budget
/// before calling.
pub fn workspace_bytes<G: Group>(device: i32, n: u64, points_on_device: bool, scalars_on_device: bool, opts: MsmOptions) -> Result<u64> {
    workspace_bytes_batch::<G>(device, n, 1, points_on_device, scalars_on_device, opts)
}

/// [`workspace_bytes`] of an [`msm_batch`] of `sets` scalar sets.
pub fn workspace_bytes_batch<G: Group>(
    device: i32,
    n: u64,
    sets: u32,
    points_on_device: bool,
    scalars_on_device: bool,
    opts: MsmOptions,
) -> Result<u64> {
    let opts = raw_options(opts);
    let mut bytes = 0u64;
    call(|e| unsafe { G::raw_workspace(device, n, sets, raw_flags(points_on_device, scalars_on_device), &opts, &mut bytes, e) })?;
    Ok(bytes)
}

/// Options for an MSM of `n` points whose workspace fits in `budget`: the
/// defaults if they fit; else all the points in one chunk if that fits with
/// fewer windows sorted at once or, for G1, 20-bit windows instead of 22
/// (the buckets of 22-bit windows take 4.5 GiB); else chunks, as large as
/// fit.
///
/// One chunk first: only there does the MSM read what its scalars are (a
/// mostly-0/1 witness plans smaller windows and less sort space) and may
/// a G1 MSM take 22-bit windows, and every later chunk reads each bucket
/// back and, from host memory, uploads its points again. Sorting fewer
/// windows at a time sorts the same entries, but each group's digit pass
/// reads (and converts) every scalar again: not yet measured against
/// chunks at 2^27.
///
/// Chunks: the sort space grows with the entries sorted at once (chunk ×
/// windows per group), so sorting fewer windows at a time allows larger
/// chunks. But every group costs a few host round trips, which dominate
/// small MSMs. So: the most windows per group (16, 8, 4, 2, 1) whose
/// largest chunk is at least half the one-window chunk. Chunks have at
/// least 1024 points (below that an MSM is not worth a GPU).
pub fn options_for_budget<G: Group>(
    device: i32,
    n: u64,
    points_on_device: bool,
    scalars_on_device: bool,
    budget: u64,
) -> Result<MsmOptions> {
    options_for_budget_batch::<G>(device, n, 1, points_on_device, scalars_on_device, budget)
}

/// Windows sorted at once, most first, that [`options_for_budget`] tries.
const WINDOWS_PER_SORT: [u64; 5] = [16, 8, 4, 2, 1];

/// [`options_for_budget`] for an [`msm_batch`] of `sets` scalar sets.
pub fn options_for_budget_batch<G: Group>(
    device: i32,
    n: u64,
    sets: u32,
    points_on_device: bool,
    scalars_on_device: bool,
    budget: u64,
) -> Result<MsmOptions> {
    let bytes = |o: MsmOptions| workspace_bytes_batch::<G>(device, n, sets, points_on_device, scalars_on_device, o);
    let all = MsmOptions::default();
    if bytes(all)? <= budget {
        return Ok(all);
    }
    let with =
        |chunk: u64, wins: u64| MsmOptions { max_chunk_points: chunk, max_sort_entries: chunk.saturating_mul(wins), ..Default::default() };
    for max_window_bits in [0, 20] {
        for wins in WINDOWS_PER_SORT {
            let o = MsmOptions { max_window_bits, ..with(n.max(1), wins) };
            if bytes(o)? <= budget {
                return Ok(o);
            }
        }
    }
    // The largest chunk that fits with `wins` windows sorted at once.
    let largest = |wins: u64| -> Result<u64> {
        let fits = |chunk: u64| -> Result<bool> { Ok(bytes(with(chunk, wins))? <= budget) };
        let (mut lo, mut hi) = (1024u64.min(n.max(1)), n.max(1));
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(mid)? {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Ok(lo)
    };
    let one = largest(1)?;
    for wins in &WINDOWS_PER_SORT[..4] {
        let chunk = largest(*wins)?;
        if chunk.saturating_mul(2) >= one {
            return Ok(with(chunk, *wins));
        }
    }
    Ok(with(one, 1))
}
