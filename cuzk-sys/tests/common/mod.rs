//! Shared by the GPU tests: conversions between blstrs and the device
//! representation, random inputs, and the CPU oracle (bellperson 0.27's
//! EvaluationDomain, exactly what its prover's execute_fft runs).
#![allow(dead_code)]

use bellperson::domain::EvaluationDomain;
use blstrs::Scalar;
use cuzk_sys::{FrRepr, NttKind};
use ec_gpu_gen::threadpool::Worker;
use ff::Field;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// A seeded rng, its seed printed (`CUZK_TEST_SEED` replays a failure).
pub fn rng() -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(cuzk_sys::test_seed("rng"))
}

/// A blstrs value as the raw blst struct it wraps (#[repr(transparent)]:
/// same size, checked), e.g. G1Affine -> G1AffineRepr.
pub fn to_raw<R: Copy, P: Copy>(p: P) -> R {
    assert_eq!(std::mem::size_of::<P>(), std::mem::size_of::<R>());
    unsafe { std::mem::transmute_copy(&p) }
}

/// blstrs::Scalar is #[repr(transparent)] over blst_fr (4 x u64, Montgomery).
pub fn as_repr(s: &[Scalar]) -> &[FrRepr] {
    assert_eq!(std::mem::size_of::<Scalar>(), std::mem::size_of::<FrRepr>());
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const FrRepr, s.len()) }
}

pub fn from_repr(v: &[FrRepr]) -> Vec<Scalar> {
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const Scalar, v.len()) }.to_vec()
}

pub fn random_scalars(rng: &mut impl RngCore, n: usize) -> Vec<Scalar> {
    (0..n).map(|_| Scalar::random(&mut *rng)).collect()
}

pub fn cpu_ntt(data: &[Scalar], kind: NttKind) -> Vec<Scalar> {
    let worker = Worker::new();
    let mut d = EvaluationDomain::from_coeffs(data.to_vec()).unwrap();
    match kind {
        NttKind::Forward => d.fft(&worker, &mut None).unwrap(),
        NttKind::Inverse => d.ifft(&worker, &mut None).unwrap(),
        NttKind::CosetForward => d.coset_fft(&worker, &mut None).unwrap(),
        NttKind::CosetInverse => d.icoset_fft(&worker, &mut None).unwrap(),
    }
    d.into_coeffs()
}

/// bellperson 0.27's execute_fft (prover/native.rs), in Montgomery form.
pub fn cpu_h(a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Vec<Scalar> {
    let worker = Worker::new();
    let mut a = EvaluationDomain::from_coeffs(a.to_vec()).unwrap();
    let mut b = EvaluationDomain::from_coeffs(b.to_vec()).unwrap();
    let mut c = EvaluationDomain::from_coeffs(c.to_vec()).unwrap();
    EvaluationDomain::ifft_many(&mut [&mut a, &mut b, &mut c], &worker, &mut None).unwrap();
    EvaluationDomain::coset_fft_many(&mut [&mut a, &mut b, &mut c], &worker, &mut None).unwrap();
    a.mul_assign(&worker, &b);
    a.sub_assign(&worker, &c);
    a.divide_by_z_on_coset(&worker);
    a.icoset_fft(&worker, &mut None).unwrap();
    let mut h = a.into_coeffs();
    h.truncate(h.len() - 1);
    h
}

/// First index where the vectors differ, for short failure messages.
pub fn first_mismatch(got: &[Scalar], want: &[Scalar]) -> Option<usize> {
    assert_eq!(got.len(), want.len(), "lengths differ");
    got.iter().zip(want).position(|(g, w)| g != w)
}
