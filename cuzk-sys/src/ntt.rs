//! The NTT over Fr and the Groth16 H term on the device (native/ntt/).

use std::ffi::c_void;
use std::ptr;

use crate::device::{DeviceBuffer, Stream};
use crate::error::{call, Error, Result};
use crate::{ffi, FrRepr};

/// Largest supported domain: 2^28.
pub const MAX_LOG_N: u32 = ffi::CUZK_NTT_MAX_LOG;

/// Natural order in and out; see native/cuzk.h for the exact definitions
/// (those of bellperson's EvaluationDomain fft / ifft / coset_fft /
/// icoset_fft).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NttKind {
    Forward,
    Inverse,
    CosetForward,
    CosetInverse,
}

impl NttKind {
    fn raw(self) -> ffi::cuzk_ntt_kind {
        match self {
            NttKind::Forward => ffi::cuzk_ntt_kind::CUZK_NTT_FORWARD,
            NttKind::Inverse => ffi::cuzk_ntt_kind::CUZK_NTT_INVERSE,
            NttKind::CosetForward => ffi::cuzk_ntt_kind::CUZK_NTT_COSET_FORWARD,
            NttKind::CosetInverse => ffi::cuzk_ntt_kind::CUZK_NTT_COSET_INVERSE,
        }
    }
}

/// Twiddle and coset tables on one device. Read-only once built, so one
/// context serves any number of threads and streams.
pub struct NttContext {
    raw: *mut ffi::cuzk_ntt_context,
    device: i32,
}

unsafe impl Send for NttContext {}
unsafe impl Sync for NttContext {}

impl NttContext {
    /// Builds the tables (synchronizes the device once).
    pub fn new(device: i32) -> Result<Self> {
        let mut raw = ptr::null_mut();
        call(|e| unsafe { ffi::cuzk_ntt_context_create(device, &mut raw, e) })?;
        Ok(NttContext { raw, device })
    }

    pub fn device(&self) -> i32 {
        self.device
    }

    /// Enqueues an in-place transform of the first 2^log_n elements of `data`.
    pub fn ntt(&self, stream: &Stream, data: &mut DeviceBuffer<FrRepr>, log_n: u32, kind: NttKind) -> Result<()> {
        if data.len() < (1usize << log_n.min(63)) {
            return Err(Error::invalid(format!("buffer of {} for a 2^{log_n} NTT", data.len())));
        }
        if data.device() != self.device {
            return Err(Error::invalid("buffer and context on different devices"));
        }
        call(|e| unsafe { ffi::cuzk_ntt(self.raw, stream.raw(), data.as_mut_ptr(), log_n, kind.raw(), e) })
    }

    /// The H term of Groth16 from host a, b, c (pinned or pageable, up to
    /// 2^log_n elements each, zero-padded): leaves the coefficients of h in
    /// `bufs.a` (the first 2^log_n - 1 of them count). Returns when done.
    pub fn h_term(&self, a: &[FrRepr], b: &[FrRepr], c: &[FrRepr], log_n: u32, bufs: &mut HTermBuffers) -> Result<()> {
        self.check_h(a, b, c, log_n, bufs)?;
        let n = a.len();
        call(|e| unsafe {
            ffi::cuzk_h_term(
                self.raw,
                a.as_ptr() as *const c_void,
                b.as_ptr() as *const c_void,
                c.as_ptr() as *const c_void,
                n as u64,
                log_n,
                bufs.a.as_mut_ptr(),
                bufs.b.as_mut_ptr(),
                bufs.c.as_mut_ptr(),
                e,
            )
        })
    }
}

impl NttContext {
    fn check_h(&self, a: &[FrRepr], b: &[FrRepr], c: &[FrRepr], log_n: u32, bufs: &HTermBuffers) -> Result<()> {
        if b.len() != a.len() || c.len() != a.len() {
            return Err(Error::invalid(format!("a, b, c lengths differ: {}, {}, {}", a.len(), b.len(), c.len())));
        }
        if bufs.log_n < log_n || bufs.a.device() != self.device {
            return Err(Error::invalid("H buffers too small or on another device"));
        }
        Ok(())
    }

    /// Pre-staging, step 1 of [`NttContext::h_term`] split in two: uploads
    /// a, b, c (zero-padded to 2^log_n) into `bufs` on `stream` and waits
    /// for the copies (the host slices are borrowed only for this call).
    pub fn h_stage(&self, stream: &Stream, a: &[FrRepr], b: &[FrRepr], c: &[FrRepr], log_n: u32, bufs: &mut HTermBuffers) -> Result<()> {
        self.check_h(a, b, c, log_n, bufs)?;
        call(|e| unsafe {
            ffi::cuzk_h_stage(
                self.raw,
                stream.raw(),
                a.as_ptr() as *const c_void,
                b.as_ptr() as *const c_void,
                c.as_ptr() as *const c_void,
                a.len() as u64,
                log_n,
                bufs.a.as_mut_ptr(),
                bufs.b.as_mut_ptr(),
                bufs.c.as_mut_ptr(),
                e,
            )
        })?;
        stream.synchronize()
    }

    /// Step 2: enqueues the H computation on the staged `bufs` on `stream`;
    /// h is in `bufs.a` once the stream gets there.
    pub fn h_compute(&self, stream: &Stream, log_n: u32, bufs: &mut HTermBuffers) -> Result<()> {
        if bufs.log_n < log_n || bufs.a.device() != self.device {
            return Err(Error::invalid("H buffers too small or on another device"));
        }
        call(|e| unsafe {
            ffi::cuzk_h_compute(self.raw, stream.raw(), log_n, bufs.a.as_mut_ptr(), bufs.b.as_mut_ptr(), bufs.c.as_mut_ptr(), e)
        })
    }
}

impl NttContext {
    fn check_h_halves(&self, stream: &Stream, log_n: u32, x: &DeviceBuffer<FrRepr>, y: &DeviceBuffer<FrRepr>) -> Result<()> {
        let n = 1usize << log_n;
        if x.len() < n || y.len() < n {
            return Err(Error::invalid(format!("buffers of {} and {} for a 2^{log_n} H term", x.len(), y.len())));
        }
        if [x.device(), y.device(), stream.device()].iter().any(|&d| d != self.device) {
            return Err(Error::invalid("buffers, stream and context on different devices"));
        }
        Ok(())
    }

    /// [`NttContext::h_compute`]'s first half, for a working set of two
    /// buffers: enqueues the transforms of a (in `a`) and b (in `b`) and of
    /// their product, leaving the a·b part in `a`; `b` is free after (c
    /// may then be computed into it).
    pub fn h_compute_ab(&self, stream: &Stream, log_n: u32, a: &mut DeviceBuffer<FrRepr>, b: &mut DeviceBuffer<FrRepr>) -> Result<()> {
        self.check_h_halves(stream, log_n, a, b)?;
        call(|e| unsafe { ffi::cuzk_h_compute_ab(self.raw, stream.raw(), log_n, a.as_mut_ptr(), b.as_mut_ptr(), e) })
    }

    /// The second half: enqueues the transform of c (in `c`) and leaves h
    /// in `h`, the buffer [`NttContext::h_compute_ab`] left the a·b part in.
    pub fn h_compute_c(&self, stream: &Stream, log_n: u32, h: &mut DeviceBuffer<FrRepr>, c: &mut DeviceBuffer<FrRepr>) -> Result<()> {
        self.check_h_halves(stream, log_n, h, c)?;
        call(|e| unsafe { ffi::cuzk_h_compute_c(self.raw, stream.raw(), log_n, h.as_mut_ptr(), c.as_mut_ptr(), e) })
    }
}

impl Drop for NttContext {
    fn drop(&mut self) {
        let _ = call(|e| unsafe { ffi::cuzk_ntt_context_destroy(self.raw, e) });
    }
}

/// Device memory for the H term of a 2^log_n domain: three buffers of 2^log_n
/// elements; after [`NttContext::h_term`], `a` holds h. `c` is longer
/// ([`HTermBuffers::c_len`]): the prover compacts the witness into it once
/// h is computed, and the compaction's scratch goes after the scalars.
pub struct HTermBuffers {
    pub log_n: u32,
    pub a: DeviceBuffer<FrRepr>,
    pub b: DeviceBuffer<FrRepr>,
    pub c: DeviceBuffer<FrRepr>,
}

impl HTermBuffers {
    pub fn new(device: i32, log_n: u32) -> Result<Self> {
        let n = 1usize << log_n;
        Ok(HTermBuffers {
            log_n,
            a: DeviceBuffer::new(device, n)?,
            b: DeviceBuffer::new(device, n)?,
            c: DeviceBuffer::new(device, Self::c_len(log_n))?,
        })
    }

    /// Elements of `c`, rounded up to 2 MiB (the allocation granularity):
    /// room to compact any query of a domain up to 2^22 (n and the
    /// compaction's scratch). Larger domains get 2 MiB past n: room for
    /// the scratch after any query that leaves out 1 % of the domain (a
    /// denser one is compacted on the host). Room after n itself would
    /// take 38 MiB at 2^27 from the MSMs under a 16 GiB limit.
    pub fn c_len(log_n: u32) -> usize {
        const GRAIN: usize = (2 << 20) / std::mem::size_of::<FrRepr>();
        let n = 1usize << log_n;
        crate::density::compact_fr_room(n, n).min(n + GRAIN).next_multiple_of(GRAIN)
    }

    /// Bytes of the third buffer, c's ([`Self::c_len`] elements): the
    /// scratch the prover runs query MSMs in beside the H MSM.
    pub fn c_bytes(log_n: u32) -> u64 {
        (Self::c_len(log_n) * std::mem::size_of::<FrRepr>()) as u64
    }

    /// Bytes of device memory needed for a 2^log_n domain.
    pub fn bytes(log_n: u32) -> u64 {
        2 * (1u64 << log_n) * std::mem::size_of::<FrRepr>() as u64 + Self::c_bytes(log_n)
    }

    /// Copies the 2^log_n - 1 coefficients of h to the host.
    pub fn h_to_host(&self, stream: &Stream) -> Result<Vec<FrRepr>> {
        let mut h = vec![[0u64; 4]; (1usize << self.log_n) - 1];
        self.a.copy_to_host(stream, 0, &mut h)?;
        Ok(h)
    }
}
