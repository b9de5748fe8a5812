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
    if a.len() != out.len() || !a.len().is_multiple_of(6) {
        return Err(Error::invalid("fp_sqr_emulated: mismatched buffers"));
    }
    let n = (a.len() / 6) as u64;
    call(|e| unsafe { ffi::cuzk_test_fp_sqr_emulated(a.as_ptr() as *const c_void, out.as_mut_ptr() as *mut c_void, n, e) })
}

/// out[i] = the canonical integer of a[i] in Fr (a in blst's Montgomery
/// form, 4 limbs each) by the device's Montgomery reduction
/// (native/ff/mont_redc.cuh), emulated on the host like `fp_sqr_emulated`.
pub fn fr_from_mont_emulated(a: &[u64], out: &mut [u64]) -> Result<()> {
    if a.len() != out.len() || !a.len().is_multiple_of(4) {
        return Err(Error::invalid("fr_from_mont_emulated: mismatched buffers"));
    }
    let n = (a.len() / 4) as u64;
    call(|e| unsafe { ffi::cuzk_test_fr_from_mont_emulated(a.as_ptr() as *const c_void, out.as_mut_ptr() as *mut c_void, n, e) })
}

/// out[i] = a[i] b[i] - c[i] d[i] in Fp on `device`, by the point
/// formulas' one-reduction sequence (native/ff/mont.cuh, mul_sub).
pub fn fp_mul_sub(device: i32, a: &[u64], b: &[u64], c: &[u64], d: &[u64], out: &mut [u64]) -> Result<()> {
    let len = out.len();
    if [a.len(), b.len(), c.len(), d.len()].iter().any(|&l| l != len) || !len.is_multiple_of(6) {
        return Err(Error::invalid("fp_mul_sub: mismatched buffers"));
    }
    let n = (len / 6) as u64;
    let p = |x: &[u64]| x.as_ptr() as *const c_void;
    call(|e| unsafe { ffi::cuzk_test_fp_mul_sub(device, p(a), p(b), p(c), p(d), out.as_mut_ptr() as *mut c_void, n, e) })
}
