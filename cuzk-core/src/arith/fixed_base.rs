//! Fixed-base scalar multiplication: many scalars times one base point, as
//! parameter generation needs (every query point is g·x for some x).
//!
//! Precomputes table[w][d] = d·2^(c·w)·g for every window w of c bits and
//! every digit d, so k·g is one mixed addition per window and no doublings
//! (⌈255/c⌉ additions, against ~255 doublings for a wNAF per point). The
//! window c is chosen from the number of scalars to balance table size
//! against per-scalar work.
//!
//! The same table drives the GPU kernel (native/fixed_base/, feature
//! `cuda`): [`FixedBase::mul_many_on`] with [`Device::Gpu`]. Group elements
//! are unique, so both give the same points, byte for byte.

use super::MsmAffine;
use blstrs::{G1Affine, G2Affine, Scalar as Fr};
use group::Group;

/// Where fixed-base multiplications run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    Cpu,
    /// The CUDA device of this ordinal.
    #[cfg(feature = "cuda")]
    Gpu(i32),
}

impl Device {
    /// The first GPU when this build has CUDA and the host has a device,
    /// else the CPU.
    pub fn detect() -> Self {
        #[cfg(feature = "cuda")]
        if cuzk_sys::device_count().unwrap_or(0) > 0 {
            return Device::Gpu(0);
        }
        Device::Cpu
    }
}

/// A group whose fixed-base multiplications the GPU runs.
pub trait FixedBaseAffine: MsmAffine {
    /// out[i] = scalars[i]·base on `device`, for base's window table.
    #[cfg(feature = "cuda")]
    fn gpu_mul(device: i32, table: &FixedBase<Self>, scalars: &[Fr], out: &mut [Self::Proj]) -> cuzk_sys::Result<()>;
}

macro_rules! impl_fixed_base_affine {
    ($affine:ty, $entry:ident) => {
        impl FixedBaseAffine for $affine {
            #[cfg(feature = "cuda")]
            fn gpu_mul(device: i32, t: &FixedBase<Self>, scalars: &[Fr], out: &mut [Self::Proj]) -> cuzk_sys::Result<()> {
                use crate::arith::blst_layout::{repr, repr_mut};
                cuzk_sys::fixed_base::$entry(device, repr(&t.table), t.c as u32, t.windows as u32, repr(scalars), repr_mut(out))
            }
        }
    };
}
impl_fixed_base_affine!(G1Affine, fixed_base_g1);
impl_fixed_base_affine!(G2Affine, fixed_base_g2);

/// A precomputed window table for one base point.
pub struct FixedBase<A: MsmAffine> {
    /// Window width in bits.
    c: usize,
    windows: usize,
    /// table[w << c | d] = d·2^(c·w)·base (entry d = 0 unused).
    table: Vec<A>,
}

/// The window minimising table building (windows·2^c additions) plus use
/// (n·windows additions).
pub fn best_window(n: usize) -> usize {
    (4..=16usize)
        .min_by_key(|&c| {
            let windows = 255usize.div_ceil(c);
            windows * (1usize << c) + n * windows
        })
        .unwrap()
}

impl<A: MsmAffine> FixedBase<A> {
    /// A table for about `n` multiplications of `base`.
    pub fn new(base: A::Proj, n: usize) -> Self {
        let c = best_window(n);
        let windows = 255usize.div_ceil(c);
        let digits = 1usize << c;
        let mut proj = vec![A::Proj::identity(); windows * digits];
        // Each window row is independent once its base 2^(c·w)·g is known.
        let mut window_bases = Vec::with_capacity(windows);
        let mut wb = base;
        for _ in 0..windows {
            window_bases.push(wb);
            for _ in 0..c {
                wb = wb.double();
            }
        }
        crate::par::for_each_chunk_mut(&mut proj, digits, |off, rows| {
            for (r, row) in rows.chunks_mut(digits).enumerate() {
                let b = window_bases[off / digits + r];
                for d in 1..digits {
                    row[d] = row[d - 1] + b;
                }
            }
        });
        let mut table = vec![A::identity(); windows * digits];
        crate::par::for_each_chunk_mut(&mut table, digits, |off, chunk| {
            A::batch_normalize(&proj[off..off + chunk.len()], chunk);
        });
        Self { c, windows, table }
    }

    /// k·base.
    pub fn mul(&self, k: &Fr) -> A::Proj {
        let limbs = scalar_limbs(k);
        let mut acc = A::Proj::identity();
        for w in 0..self.windows {
            let d = window_digit(&limbs, w * self.c, self.c);
            if d != 0 {
                acc += self.table[w << self.c | d];
            }
        }
        acc
    }

    /// k·base for every k, in parallel, normalized to affine.
    pub fn mul_many(&self, scalars: &[Fr]) -> Vec<A> {
        let mut out = vec![A::identity(); scalars.len()];
        crate::par::for_each_chunk_mut(&mut out, 256, |off, chunk| {
            for (o, s) in chunk.chunks_mut(1024).zip(scalars[off..].chunks(1024)) {
                let proj: Vec<A::Proj> = s[..o.len()].iter().map(|k| self.mul(k)).collect();
                A::batch_normalize(&proj, o);
            }
        });
        out
    }
}

impl<A: FixedBaseAffine> FixedBase<A> {
    /// k·base for every k on `device`, normalized to affine.
    pub fn mul_many_on(&self, device: Device, scalars: &[Fr]) -> Result<Vec<A>, FixedBaseError> {
        match device {
            Device::Cpu => Ok(self.mul_many(scalars)),
            #[cfg(feature = "cuda")]
            Device::Gpu(d) => self.mul_many_gpu(d, scalars).map_err(|source| FixedBaseError { device: d, source }),
        }
    }

    /// k·base for every k on GPU `device` (Jacobian results normalized
    /// here, one inversion per batch).
    #[cfg(feature = "cuda")]
    pub fn mul_many_gpu(&self, device: i32, scalars: &[Fr]) -> cuzk_sys::Result<Vec<A>> {
        let mut proj = vec![A::Proj::identity(); scalars.len()];
        A::gpu_mul(device, self, scalars, &mut proj)?;
        let mut out = vec![A::identity(); scalars.len()];
        crate::par::for_each_chunk_mut(&mut out, 1 << 12, |off, chunk| {
            A::batch_normalize(&proj[off..off + chunk.len()], chunk);
        });
        Ok(out)
    }
}

/// A GPU's fixed-base multiplication failed.
#[derive(Debug, thiserror::Error)]
#[cfg_attr(feature = "cuda", error("fixed-base multiplication on GPU {device}: {source}"))]
#[cfg_attr(not(feature = "cuda"), error("fixed-base multiplication on GPU {device}"))]
pub struct FixedBaseError {
    pub device: i32,
    #[cfg(feature = "cuda")]
    pub source: cuzk_sys::Error,
}

/// The canonical scalar as little-endian 64-bit limbs, plus a zero limb so
/// a window may run past bit 255.
fn scalar_limbs(k: &Fr) -> [u64; 5] {
    let b = k.to_bytes_le();
    let mut l = [0u64; 5];
    for (i, chunk) in b.chunks(8).enumerate() {
        l[i] = u64::from_le_bytes(chunk.try_into().unwrap());
    }
    l
}

/// Bits [bit, bit + c) of the scalar.
#[inline]
fn window_digit(l: &[u64; 5], bit: usize, c: usize) -> usize {
    let (i, s) = (bit / 64, bit % 64);
    let mut v = l[i] >> s;
    if s + c > 64 {
        v |= l[i + 1] << (64 - s);
    }
    (v & ((1u64 << c) - 1)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
    use ff::Field;
    use group::Curve;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    #[test]
    fn matches_plain_multiplication_for_every_window() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let mut ks: Vec<Fr> = (0..20).map(|_| Fr::random(&mut rng)).collect();
        ks.extend([Fr::ZERO, Fr::ONE, -Fr::ONE]);
        for n in [1, 100, 10_000, 1 << 20] {
            let g = G1Projective::random(&mut rng);
            let t = FixedBase::<G1Affine>::new(g, n);
            let got = t.mul_many(&ks);
            for (k, p) in ks.iter().zip(&got) {
                assert_eq!(*p, (g * k).to_affine(), "window {}", t.c);
            }
        }
        let g2 = G2Projective::random(&mut rng);
        let t = FixedBase::<G2Affine>::new(g2, 5000);
        for k in &ks {
            assert_eq!(t.mul(k), g2 * k);
        }
    }
}
