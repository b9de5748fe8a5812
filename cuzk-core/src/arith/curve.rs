//! The two groups the prover multiplies in, behind one trait so MSM, batch
//! addition and fixed-base code is written once for G1 and G2.

use blst::{
    blst_p1, blst_p1_affine, blst_p1s_add, blst_p1s_mult_pippenger, blst_p1s_mult_pippenger_scratch_sizeof, blst_p1s_to_affine, blst_p2,
    blst_p2_affine, blst_p2s_add, blst_p2s_mult_pippenger, blst_p2s_mult_pippenger_scratch_sizeof, blst_p2s_to_affine, limb_t,
};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use group::prime::{PrimeCurve, PrimeCurveAffine};
use group::Group;

/// An affine point type whose bulk operations blst implements.
///
/// # Safety of the raw calls
/// blstrs' `G1Affine`/`G2Affine`/`G1Projective`/`G2Projective` are
/// `#[repr(transparent)]` wrappers of blst's `blst_p{1,2}{_affine,}`, so
/// pointers to them are valid pointers to blst's types.
pub trait MsmAffine: PrimeCurveAffine<Curve = Self::Proj> + Copy + Send + Sync + 'static {
    type Proj: PrimeCurve<Affine = Self, Scalar = blstrs::Scalar> + Copy + Send + Sync;

    /// Size of one uncompressed point in a params file.
    const UNCOMPRESSED_BYTES: usize;

    /// Σ scalars[i]·points[i] with blst's Pippenger (one thread).
    /// `scalars` holds canonical little-endian 32-byte scalars.
    fn pippenger(points: &[*const Self], scalars: &[[u8; 32]]) -> Self::Proj;

    /// Σ points[i] with blst's batch-inversion affine additions.
    fn sum(points: &[*const Self]) -> Self::Proj;

    /// Projective → affine with one shared inversion (blstrs' own
    /// `batch_normalize` inverts once per point).
    fn batch_normalize(points: &[Self::Proj], out: &mut [Self]);
}

/// Pippenger in blst reads one entry past a one-element array; below this
/// many points, multiply point by point instead.
const PIPPENGER_MIN: usize = 4;

fn small_msm<A: MsmAffine>(points: &[*const A], scalars: &[[u8; 32]]) -> A::Proj {
    let mut acc = A::Proj::identity();
    for (&p, s) in points.iter().zip(scalars) {
        let s = blstrs::Scalar::from_bytes_le(s).unwrap();
        // SAFETY: callers pass pointers into live point slices.
        acc += unsafe { *p }.to_curve() * s;
    }
    acc
}

macro_rules! impl_msm_affine {
    ($affine:ty, $proj:ty, $raw:ty, $raw_aff:ty, $bytes:expr,
     $pippenger:ident, $scratch:ident, $sum:ident, $to_affine:ident) => {
        impl MsmAffine for $affine {
            type Proj = $proj;
            const UNCOMPRESSED_BYTES: usize = $bytes;

            fn pippenger(points: &[*const Self], scalars: &[[u8; 32]]) -> $proj {
                assert_eq!(points.len(), scalars.len());
                if points.len() < PIPPENGER_MIN {
                    return small_msm(points, scalars);
                }
                let n = points.len();
                // SAFETY: see the trait docs; scratch is sized by blst.
                unsafe {
                    let words = $scratch(n).div_ceil(std::mem::size_of::<limb_t>());
                    let mut scratch = vec![0 as limb_t; words];
                    // blst takes a pointer array for scalars too; [first, NULL]
                    // means "contiguous from first".
                    let scalar_ptrs = [scalars.as_ptr() as *const u8, std::ptr::null()];
                    let mut out = <$raw>::default();
                    $pippenger(&mut out, points.as_ptr() as *const *const $raw_aff, n, scalar_ptrs.as_ptr(), 255, scratch.as_mut_ptr());
                    std::mem::transmute::<$raw, $proj>(out)
                }
            }

            fn sum(points: &[*const Self]) -> $proj {
                if points.is_empty() {
                    return <$proj as group::Group>::identity();
                }
                if points.len() == 1 {
                    // SAFETY: callers pass pointers into live point slices.
                    return unsafe { *points[0] }.to_curve();
                }
                let mut out = <$raw>::default();
                // SAFETY: see the trait docs.
                unsafe {
                    $sum(&mut out, points.as_ptr() as *const *const $raw_aff, points.len());
                    std::mem::transmute::<$raw, $proj>(out)
                }
            }

            fn batch_normalize(points: &[$proj], out: &mut [Self]) {
                assert_eq!(points.len(), out.len());
                if points.is_empty() {
                    return;
                }
                // [first, NULL] means "contiguous from first" to blst.
                let ptrs = [points.as_ptr() as *const $raw, std::ptr::null()];
                // SAFETY: see the trait docs; `out` holds points.len() slots.
                unsafe { $to_affine(out.as_mut_ptr() as *mut $raw_aff, ptrs.as_ptr(), points.len()) }
            }
        }
    };
}

impl_msm_affine!(
    G1Affine,
    G1Projective,
    blst_p1,
    blst_p1_affine,
    96,
    blst_p1s_mult_pippenger,
    blst_p1s_mult_pippenger_scratch_sizeof,
    blst_p1s_add,
    blst_p1s_to_affine
);
impl_msm_affine!(
    G2Affine,
    G2Projective,
    blst_p2,
    blst_p2_affine,
    192,
    blst_p2s_mult_pippenger,
    blst_p2s_mult_pippenger_scratch_sizeof,
    blst_p2s_add,
    blst_p2s_to_affine
);
