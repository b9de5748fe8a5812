//! The host half of every GPU MSM: the device returns each window's sum
//! W_w and `Group::combine` forms Σ_w 2^(c·w)·W_w with blst. Checked on the
//! CPU (no device needed) against the same sum written as one scalar
//! multiplication, for several window sizes, identity windows included.

mod common;

use blstrs::{G1Projective, G2Projective, Scalar};
use common::to_raw;
use cuzk_sys::msm::{Group, G1, G2};
use ff::Field;
use group::Group as _;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// Windows k_w·G (k_0 = 0 and the top one 0 too, for the identity), and
/// the expected (Σ 2^(c w) k_w)·G.
fn check<G: Group, P: group::Group<Scalar = Scalar> + Copy>(rng: &mut ChaCha20Rng, c: u32, nwin: usize) {
    let ks: Vec<Scalar> = (0..nwin).map(|w| if w == 0 || w + 1 == nwin { Scalar::ZERO } else { Scalar::random(&mut *rng) }).collect();
    let windows: Vec<G::Proj> = ks.iter().map(|k| to_raw(P::generator() * k)).collect();
    let two_c = Scalar::from(2u64).pow_vartime([c as u64]);
    let mut weight = Scalar::ONE;
    let mut total = Scalar::ZERO;
    for k in &ks {
        total += weight * k;
        weight *= two_c;
    }
    let got: P = to_raw(G::combine(&windows, c));
    assert!(got == P::generator() * total, "{} combine differs (c = {c}, {nwin} windows)", G::NAME);
}

#[test]
fn window_combination_matches_one_scalar_multiplication() {
    let mut rng = ChaCha20Rng::seed_from_u64(cuzk_sys::test_seed("window_combination_matches_one_scalar_multiplication"));
    for (c, nwin) in [(2, 128), (5, 52), (16, 16), (20, 13), (13, 20), (7, 1), (20, 2)] {
        check::<G1, G1Projective>(&mut rng, c, nwin);
        check::<G2, G2Projective>(&mut rng, c, nwin);
    }
    assert!(G1::combine(&[], 20) == G1::ZERO, "no windows: the identity");
    // What it costs: c = 20, 13 windows (a 2^26 MSM's plan).
    let w1: Vec<_> = (0..13).map(|_| to_raw(G1Projective::random(&mut rng))).collect();
    let w2: Vec<_> = (0..13).map(|_| to_raw(G2Projective::random(&mut rng))).collect();
    let t = std::time::Instant::now();
    std::hint::black_box(G1::combine(&w1, 20));
    let g1 = t.elapsed();
    let t = std::time::Instant::now();
    std::hint::black_box(G2::combine(&w2, 20));
    println!("window combination on the host, c = 20, 13 windows: G1 {g1:?}, G2 {:?}", t.elapsed());
}
