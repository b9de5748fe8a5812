//! Number-theoretic transforms over Fr on the CPU: radix-2, in place,
//! multithreaded, with precomputed twiddles, plus the coset variants.
//!
//! Conventions (bellperson's, which the GPU backend follows bit for bit):
//! the domain size N is the smallest power of two ≥ the input length,
//! ω = Fr::ROOT_OF_UNITY squared down to order N, and the coset is g·⟨ω⟩
//! with g = Fr::MULTIPLICATIVE_GENERATOR.

use blstrs::Scalar as Fr;
use ff::{Field, PrimeField};

/// Below this size one thread does the whole transform.
const PARALLEL_MIN: usize = 1 << 12;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NttError {
    #[error("NTT domain of {len} elements exceeds the field's 2-adicity (at most 2^{max_log} elements)")]
    TooLarge { len: usize, max_log: u32 },
}

/// An evaluation domain of size N = 2^log_n with its twiddle tables.
pub struct Domain {
    log_n: u32,
    omega: Fr,
    n_inv: Fr,
    /// ω^j for j < N/2.
    twiddles: Vec<Fr>,
    /// ω^-j for j < N/2.
    twiddles_inv: Vec<Fr>,
}

impl Domain {
    /// The smallest domain holding `len` elements.
    pub fn for_len(len: usize) -> Result<Self, NttError> {
        Ok(Self::new(Self::log_size_for(len)?))
    }

    /// log2 of [`Domain::for_len`]'s size, without building its twiddle
    /// tables (2^(log_n) field multiplications: ~2.5 s at 2^27).
    pub fn log_size_for(len: usize) -> Result<u32, NttError> {
        let log_n = len.max(1).next_power_of_two().trailing_zeros();
        if log_n > Fr::S {
            return Err(NttError::TooLarge { len, max_log: Fr::S });
        }
        Ok(log_n)
    }

    /// The domain of size 2^log_n (log_n ≤ 32).
    pub fn new(log_n: u32) -> Self {
        assert!(log_n <= Fr::S, "NTT domain 2^{log_n} exceeds 2^{}", Fr::S);
        let mut omega = Fr::ROOT_OF_UNITY;
        for _ in log_n..Fr::S {
            omega = omega.square();
        }
        let omega_inv = omega.invert().unwrap();
        let n_inv = Fr::from(1u64 << log_n).invert().unwrap();
        let half = (1usize << log_n) / 2;
        Self { log_n, omega, n_inv, twiddles: powers(omega, half), twiddles_inv: powers(omega_inv, half) }
    }

    pub fn size(&self) -> usize {
        1 << self.log_n
    }

    pub fn log_size(&self) -> u32 {
        self.log_n
    }

    /// The generator ω of the domain.
    pub fn omega(&self) -> Fr {
        self.omega
    }

    /// The coset shift g.
    pub fn coset_shift() -> Fr {
        Fr::MULTIPLICATIVE_GENERATOR
    }

    /// Coefficients → evaluations at ω^i.
    pub fn fft(&self, a: &mut [Fr]) {
        self.check(a);
        transform(a, &self.twiddles);
    }

    /// Evaluations at ω^i → coefficients.
    pub fn ifft(&self, a: &mut [Fr]) {
        self.check(a);
        transform(a, &self.twiddles_inv);
        scale(a, self.n_inv);
    }

    /// Coefficients → evaluations at g·ω^i.
    pub fn coset_fft(&self, a: &mut [Fr]) {
        self.check(a);
        distribute_powers(a, Self::coset_shift());
        transform(a, &self.twiddles);
    }

    /// Evaluations at g·ω^i → coefficients.
    pub fn icoset_fft(&self, a: &mut [Fr]) {
        self.check(a);
        transform(a, &self.twiddles_inv);
        // One pass for both the 1/N scaling and the g^-i shift.
        distribute_powers_scaled(a, Self::coset_shift().invert().unwrap(), self.n_inv);
    }

    /// 1 / Z(g·ω^i), where Z(x) = x^N − 1 is constant (g^N − 1) on the coset.
    pub fn z_inv_on_coset(&self) -> Fr {
        let z = Self::coset_shift().pow_vartime([self.size() as u64]) - Fr::ONE;
        z.invert().unwrap()
    }

    fn check(&self, a: &[Fr]) {
        assert_eq!(a.len(), self.size(), "NTT input length must equal the domain size");
    }
}

fn powers(base: Fr, count: usize) -> Vec<Fr> {
    let mut out = vec![Fr::ONE; count];
    crate::par::for_each_chunk_mut(&mut out, 1 << 14, |off, chunk| {
        let mut cur = base.pow_vartime([off as u64]);
        for x in chunk {
            *x = cur;
            cur *= base;
        }
    });
    out
}

fn scale(a: &mut [Fr], by: Fr) {
    crate::par::for_each_chunk_mut(a, 1 << 14, |_, chunk| {
        for x in chunk {
            *x *= by;
        }
    });
}

/// a[i] *= g^i.
pub fn distribute_powers(a: &mut [Fr], g: Fr) {
    distribute_powers_scaled(a, g, Fr::ONE);
}

/// a[i] *= c·g^i.
fn distribute_powers_scaled(a: &mut [Fr], g: Fr, c: Fr) {
    crate::par::for_each_chunk_mut(a, 1 << 14, |off, chunk| {
        let mut cur = c * g.pow_vartime([off as u64]);
        for x in chunk {
            *x *= cur;
            cur *= g;
        }
    });
}

/// In-place radix-2 decimation-in-time transform: bit-reversal permutation,
/// then log N butterfly stages. `twiddles[j]` = w^j for j < N/2.
fn transform(a: &mut [Fr], twiddles: &[Fr]) {
    let n = a.len();
    if n <= 1 {
        return;
    }
    bit_reverse(a);
    let parallel = n >= PARALLEL_MIN && crate::par::threads() > 1;
    let mut half = 1;
    while half < n {
        let stride = n / (2 * half); // twiddle step for this stage
        if !parallel {
            for block in a.chunks_mut(2 * half) {
                butterflies(block, half, twiddles, stride, 0);
            }
        } else if n / (2 * half) >= crate::par::threads() {
            // Many small blocks: hand whole blocks to threads.
            crate::par::for_each_chunk_mut(a, 2 * half, |_, chunk| {
                for block in chunk.chunks_mut(2 * half) {
                    butterflies(block, half, twiddles, stride, 0);
                }
            });
        } else {
            // Few large blocks: split each block's butterflies over threads.
            for block in a.chunks_mut(2 * half) {
                let (lo, hi) = block.split_at_mut(half);
                let per = half.div_ceil(crate::par::threads()).max(1);
                std::thread::scope(|s| {
                    for (i, (l, h)) in lo.chunks_mut(per).zip(hi.chunks_mut(per)).enumerate() {
                        s.spawn(move || butterfly_range(l, h, twiddles, stride, i * per));
                    }
                });
            }
        }
        half *= 2;
    }
}

/// Butterflies of one block of size 2·half.
#[inline]
fn butterflies(block: &mut [Fr], half: usize, twiddles: &[Fr], stride: usize, j0: usize) {
    let (lo, hi) = block.split_at_mut(half);
    butterfly_range(lo, hi, twiddles, stride, j0);
}

#[inline]
fn butterfly_range(lo: &mut [Fr], hi: &mut [Fr], twiddles: &[Fr], stride: usize, j0: usize) {
    for (j, (u, v)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
        let t = if j0 + j == 0 { *v } else { *v * twiddles[(j0 + j) * stride] };
        *v = *u - t;
        *u += t;
    }
}

fn bit_reverse(a: &mut [Fr]) {
    let n = a.len();
    let bits = n.trailing_zeros();
    for i in 0..n {
        let r = i.reverse_bits() >> (usize::BITS - bits);
        if i < r {
            a.swap(i, r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    fn naive_dft(a: &[Fr], w: Fr) -> Vec<Fr> {
        let n = a.len();
        (0..n)
            .map(|i| {
                let wi = w.pow_vartime([i as u64]);
                let mut acc = Fr::ZERO;
                let mut p = Fr::ONE;
                for x in a {
                    acc += *x * p;
                    p *= wi;
                }
                acc
            })
            .collect()
    }

    #[test]
    fn log_size_for_is_for_len_size() {
        for len in [0, 1, 2, 3, 4, 5, 1000, 1024, 1025, 65_533, (1 << 20) + 1] {
            let log_n = Domain::log_size_for(len).unwrap();
            assert_eq!(1usize << log_n, Domain::for_len(len).unwrap().size(), "len {len}");
        }
        assert!(Domain::log_size_for((1usize << Fr::S) + 1).is_err());
    }

    #[test]
    fn fft_matches_naive_dft_and_round_trips() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        for log_n in 0..=7 {
            let d = Domain::new(log_n);
            let a: Vec<Fr> = (0..d.size()).map(|_| Fr::random(&mut rng)).collect();
            let mut b = a.clone();
            d.fft(&mut b);
            assert_eq!(b, naive_dft(&a, d.omega()), "log_n={log_n}");
            d.ifft(&mut b);
            assert_eq!(a, b);
            let mut c = a.clone();
            d.coset_fft(&mut c);
            let shifted: Vec<Fr> = a.iter().enumerate().map(|(i, x)| *x * Domain::coset_shift().pow_vartime([i as u64])).collect();
            assert_eq!(c, naive_dft(&shifted, d.omega()));
            d.icoset_fft(&mut c);
            assert_eq!(a, c);
        }
    }

    #[test]
    fn parallel_paths_round_trip() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        for log_n in [12, 13, 15] {
            let d = Domain::new(log_n);
            let a: Vec<Fr> = (0..d.size()).map(|_| Fr::random(&mut rng)).collect();
            let mut b = a.clone();
            d.coset_fft(&mut b);
            // Evaluation at one point checks the parallel stages against Horner.
            let x = Domain::coset_shift() * d.omega().pow_vartime([5]);
            let horner = a.iter().rev().fold(Fr::ZERO, |acc, c| acc * x + c);
            assert_eq!(b[5], horner);
            d.icoset_fft(&mut b);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn too_large_domain_is_an_error() {
        assert!(matches!(Domain::for_len((1usize << 32) + 1), Err(NttError::TooLarge { .. })));
    }
}
