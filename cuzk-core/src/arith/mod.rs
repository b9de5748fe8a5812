//! Arithmetic on BLS12-381 over blst: the field and group types come from
//! blstrs (same memory layout as blst: Fr is 4×u64 little-endian Montgomery),
//! the bulk operations (MSM, batch additions) call blst directly.

#[cfg(feature = "cuda")]
pub mod blst_layout;
pub mod curve;
pub mod density;
pub mod fixed_base;
pub mod msm;

pub use curve::MsmAffine;
pub use density::Density;

use blstrs::Scalar as Fr;
use ff::Field;

/// Canonical (non-Montgomery) little-endian bytes of a scalar, the form
/// blst's scalar multiplications read.
#[inline]
pub fn scalar_bytes(s: &Fr) -> [u8; 32] {
    s.to_bytes_le()
}

/// Whether a scalar is exactly one (the 0/1 split sends those points to a
/// plain batch addition instead of Pippenger).
#[inline]
pub fn is_one(s: &Fr) -> bool {
    *s == Fr::ONE
}
