//! The discrete logs of `cuzk_sys::msm::test_inputs`' points: point i of a
//! vector made with `seed` and `distinct` is k_(i mod distinct)·G for the
//! 64-bit k below (native/msm/test_inputs.cu's make_points). An MSM over
//! such points is (Σ s_i·k_i)·G, which the host computes from the scalars
//! alone: an independent check at sizes no CPU MSM reaches in a test.

use blstrs::Scalar as Fr;
use ff::Field;

/// k_i of native/msm/test_inputs.cu's make_points (odd, so never 0).
pub fn dlog(seed: u64, i: usize) -> u64 {
    let mut x = seed ^ (i as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (x ^ (x >> 31)) | 1
}

/// Σ scalars[i]·k_((offset + i) mod distinct): the discrete log of the MSM
/// of `scalars` with the points from `offset` on of a vector made with
/// `seed` and `distinct`.
pub fn dot(scalars: &[Fr], seed: u64, distinct: usize, offset: usize) -> Fr {
    let ks: Vec<Fr> = (0..distinct).map(|i| Fr::from(dlog(seed, i))).collect();
    cuzk_core::par::map_ranges(scalars.len(), 1 << 16, |r| r.fold(Fr::ZERO, |acc, i| acc + scalars[i] * ks[(offset + i) % distinct]))
        .into_iter()
        .fold(Fr::ZERO, |a, b| a + b)
}
