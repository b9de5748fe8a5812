//! Fixed-base scalar multiplication: many scalars times one base point, as
//! parameter generation needs (every query point is g·x for some x).
//!
//! Precomputes table[w][d] = d·2^(WINDOW·w)·g for every window w and digit
//! d, so k·g is one mixed addition per window (32 for 255-bit scalars)
//! and no doublings, against ~255 doublings for a wNAF per point.

use super::MsmAffine;
use blstrs::Scalar as Fr;
use group::{Curve, Group};

const WINDOW: usize = 8;
const WINDOWS: usize = 256usize.div_ceil(WINDOW);
const DIGITS: usize = 1 << WINDOW;

/// A precomputed window table for one base point.
pub struct FixedBase<A: MsmAffine> {
    /// table[w * DIGITS + d] = d·2^(WINDOW·w)·base (entry d = 0 unused).
    table: Vec<A>,
}

impl<A: MsmAffine> FixedBase<A> {
    pub fn new(base: A::Proj) -> Self {
        let mut proj = vec![A::Proj::identity(); WINDOWS * DIGITS];
        let mut window_base = base;
        for w in 0..WINDOWS {
            let row = &mut proj[w * DIGITS..(w + 1) * DIGITS];
            for d in 1..DIGITS {
                row[d] = row[d - 1] + window_base;
            }
            window_base = row[DIGITS - 1] + window_base;
        }
        let mut table = vec![A::identity(); WINDOWS * DIGITS];
        A::Proj::batch_normalize(&proj, &mut table);
        Self { table }
    }

    /// k·base.
    pub fn mul(&self, k: &Fr) -> A::Proj {
        let bytes = k.to_bytes_le();
        let mut acc = A::Proj::identity();
        for (w, &d) in bytes.iter().enumerate() {
            if d != 0 {
                acc += self.table[w * DIGITS + d as usize];
            }
        }
        acc
    }

    /// k·base for every k, in parallel, normalized to affine.
    pub fn mul_many(&self, scalars: &[Fr]) -> Vec<A> {
        let mut out = vec![A::identity(); scalars.len()];
        crate::par::for_each_chunk_mut(&mut out, 256, |off, chunk| {
            let proj: Vec<A::Proj> =
                scalars[off..off + chunk.len()].iter().map(|k| self.mul(k)).collect();
            A::Proj::batch_normalize(&proj, chunk);
        });
        out
    }
}
