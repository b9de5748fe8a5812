//! Test-only access to the device field arithmetic (native/ff/field_test.cu):
//! element-wise operations on host arrays in blst's Montgomery form.

use std::ffi::c_void;

use crate::error::{call, Error, Result};
use crate::ffi;

pub use ffi::cuzk_test_field as Field;
pub use ffi::cuzk_test_op as Op;

/// Bytes per element of `field`.
pub fn element_bytes(field: Field) -> usize {
    match field {
        Field::CUZK_TEST_FR => 32,
        Field::CUZK_TEST_FP => 48,
        Field::CUZK_TEST_FP2 => 96,
    }
}

/// out[i] = op(a[i], b[i]) computed on `device`; arrays of u64 limbs.
pub fn field_op(device: i32, field: Field, op: Op, a: &[u64], b: &[u64], out: &mut [u64]) -> Result<()> {
    let limbs = element_bytes(field) / 8;
    let n = a.len() / limbs;
    if a.len() != b.len() || a.len() != out.len() || n * limbs != a.len() {
        return Err(Error::invalid("field_op: mismatched buffers"));
    }
    let n = n as u64;
    call(|e| unsafe {
        ffi::cuzk_test_field_op(
            device,
            field,
            op,
            a.as_ptr() as *const c_void,
            b.as_ptr() as *const c_void,
            out.as_mut_ptr() as *mut c_void,
            n,
            e,
        )
    })
}

/// out[i] = a[i]^2 in Fp by the device squaring's instruction sequence,
/// emulated on the host (native/ff/mont_sqr.cuh): no device needed, but
/// the CUDA build (the no-CUDA build answers an error).
pub fn fp_sqr_emulated(a: &[u64], out: &mut [u64]) -> Result<()> {
    if a.len() != out.len() || a.len() % 6 != 0 {
        return Err(Error::invalid("fp_sqr_emulated: mismatched buffers"));
    }
    let n = (a.len() / 6) as u64;
    call(|e| unsafe { ffi::cuzk_test_fp_sqr_emulated(a.as_ptr() as *const c_void, out.as_mut_ptr() as *mut c_void, n, e) })
}

/// out[i] = the canonical integer of a[i] in Fr (a in blst's Montgomery
/// form, 4 limbs each) by the device's Montgomery reduction
/// (native/ff/mont_redc.cuh), emulated on the host like `fp_sqr_emulated`.
pub fn fr_from_mont_emulated(a: &[u64], out: &mut [u64]) -> Result<()> {
    if a.len() != out.len() || a.len() % 4 != 0 {
        return Err(Error::invalid("fr_from_mont_emulated: mismatched buffers"));
    }
    let n = (a.len() / 4) as u64;
    call(|e| unsafe {
        ffi::cuzk_test_fr_from_mont_emulated(a.as_ptr() as *const c_void, out.as_mut_ptr() as *mut c_void, n, e)
    })
}

/// out[i] = a[i] b[i] - c[i] d[i] in Fp on `device`, by the point
/// formulas' one-reduction sequence (native/ff/mont.cuh, mul_sub).
pub fn fp_mul_sub(device: i32, a: &[u64], b: &[u64], c: &[u64], d: &[u64], out: &mut [u64]) -> Result<()> {
    let len = out.len();
    if [a.len(), b.len(), c.len(), d.len()].iter().any(|&l| l != len) || len % 6 != 0 {
        return Err(Error::invalid("fp_mul_sub: mismatched buffers"));
    }
    let n = (len / 6) as u64;
    let p = |x: &[u64]| x.as_ptr() as *const c_void;
    call(|e| unsafe {
        ffi::cuzk_test_fp_mul_sub(device, p(a), p(b), p(c), p(d), out.as_mut_ptr() as *mut c_void, n, e)
    })
}

/// out[i] = a[i] b[i] in Fp by the FP64-pipe multiplication's sequence
/// (native/ff/mont_f64.cuh, an experiment) emulated on the host: no device
/// needed, but the CUDA build.
pub fn fp_mul_f64_emulated(a: &[u64], b: &[u64], out: &mut [u64]) -> Result<()> {
    if a.len() != out.len() || b.len() != out.len() || a.len() % 6 != 0 {
        return Err(Error::invalid("fp_mul_f64_emulated: mismatched buffers"));
    }
    let n = (a.len() / 6) as u64;
    call(|e| unsafe {
        ffi::cuzk_test_fp_mul_f64_emulated(
            a.as_ptr() as *const c_void,
            b.as_ptr() as *const c_void,
            out.as_mut_ptr() as *mut c_void,
            n,
            e,
        )
    })
}

/// One launch of the Fp multiplication chains (see [`fp_mul_chains`]).
#[derive(Clone, Copy, Debug)]
pub struct Chains {
    /// Chains per thread on the integer multiplication (0-2).
    pub int_chains: u32,
    /// Chains per thread on the FP64 one (0-2).
    pub f64_chains: u32,
    /// Dependent multiplications per chain.
    pub iters: u32,
    pub threads_per_block: u32,
    /// The kernel bounded to 128 registers per thread (4 blocks of at
    /// most 128 threads per SM).
    pub bounded: bool,
}

/// Chains of Fp multiplications on `device` (native/ff/fp_mul_chains.cu):
/// each of the n = a.len() / 6 threads runs `run.int_chains` chains on the
/// integer multiplication and `run.f64_chains` on the FP64 one, chain c
/// from a[(i + c) mod n], each `run.iters` times x <- x b[i]. Returns chain
/// c's ends at out[c n .. c n + n) (integer chains first) and the kernel's
/// device time in ms.
pub fn fp_mul_chains(device: i32, run: Chains, a: &[u64], b: &[u64]) -> Result<(Vec<[u64; 6]>, f32)> {
    if a.len() != b.len() || a.is_empty() || a.len() % 6 != 0 {
        return Err(Error::invalid("fp_mul_chains: a and b must hold the same number of Fp elements"));
    }
    let n = a.len() / 6;
    let mut out = vec![[0u64; 6]; (run.int_chains + run.f64_chains) as usize * n];
    let mut ms = 0f32;
    call(|e| unsafe {
        ffi::cuzk_test_fp_mul_chains(
            device,
            run.int_chains,
            run.f64_chains,
            a.as_ptr() as *const c_void,
            b.as_ptr() as *const c_void,
            out.as_mut_ptr() as *mut c_void,
            n as u64,
            run.iters,
            run.threads_per_block,
            run.bounded as u32,
            &mut ms,
            e,
        )
    })?;
    Ok((out, ms))
}
