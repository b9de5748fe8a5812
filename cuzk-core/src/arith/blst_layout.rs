//! blstrs' scalar and point types are `#[repr(transparent)]` over blst's,
//! which is what cuzk-sys speaks (blst's structs as arrays of u64 words).
//! The casts between the two, in one place, each pair's sizes checked at
//! compile time.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar as Fr};
use cuzk_sys::msm::{G1AffineRepr, G1ProjRepr, G2AffineRepr, G2ProjRepr};
use cuzk_sys::FrRepr;

/// A blstrs type and the raw words cuzk-sys passes for it.
///
/// # Safety
/// `Self` is `#[repr(transparent)]` over the blst type whose words `Repr`
/// holds (same size, alignment no stricter than u64's), so a slice of one
/// is a slice of the other; what the device writes is a valid `Self`.
pub unsafe trait BlstLayout: Copy {
    type Repr: Copy;
}

macro_rules! blst_layout {
    ($($t:ty => $r:ty),*) => {$(
        const _: () = assert!(std::mem::size_of::<$t>() == std::mem::size_of::<$r>());
        const _: () = assert!(std::mem::align_of::<$t>() == std::mem::align_of::<$r>());
        // SAFETY: as the trait says; sizes and alignments checked above.
        unsafe impl BlstLayout for $t {
            type Repr = $r;
        }
    )*};
}
blst_layout!(Fr => FrRepr, G1Affine => G1AffineRepr, G2Affine => G2AffineRepr, G1Projective => G1ProjRepr, G2Projective => G2ProjRepr);

pub fn repr<T: BlstLayout>(v: &[T]) -> &[T::Repr] {
    // SAFETY: T: BlstLayout (same layout).
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), v.len()) }
}

pub fn repr_mut<T: BlstLayout>(v: &mut [T]) -> &mut [T::Repr] {
    // SAFETY: T: BlstLayout (same layout; the device writes valid values).
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), v.len()) }
}

pub fn from_repr<T: BlstLayout>(raw: T::Repr) -> T {
    // SAFETY: T: BlstLayout (same size; the device wrote a valid value).
    unsafe { std::mem::transmute_copy(&raw) }
}
