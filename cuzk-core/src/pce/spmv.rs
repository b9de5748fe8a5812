//! a = A·z, b = B·z, c = C·z over z = inputs ‖ aux, on all cores: each
//! thread evaluates a contiguous range of rows (reading its part of the
//! CSR arrays sequentially) straight into the output.
//!
//! Nearly every product is an addition. Coefficients ±1 take none; the
//! others (powers of two packing bits, hash constants) mostly meet a
//! witness value of 0 or 1 (bits, booleans): in Filecoin's circuits only a
//! few percent of the nonzeros need a field multiplication.

use super::{Pce, SparseMatrix, COEFF_MINUS_ONE, COEFF_ONE};
use crate::par;
use blstrs::Scalar as Fr;
use ff::Field;
use std::mem::MaybeUninit;

/// Rows per thread at least: below this, threads cost more than they save.
const MIN_ROWS_PER_THREAD: usize = 4096;

/// The three products, one Fr per constraint each. `pce` must have been
/// validated (every PCE from [`super::record`] or [`super::file`] is) and
/// the witness must have its shape.
///
/// A thread evaluates its rows of A, B and C together: a constraint's three
/// rows read nearby witness values, so each value is read from memory once
/// for the three products rather than once per product pass.
pub fn evaluate(pce: &Pce, inputs: &[Fr], aux: &[Fr]) -> (Vec<Fr>, Vec<Fr>, Vec<Fr>) {
    assert_eq!((inputs.len(), aux.len()), (pce.shape.num_inputs, pce.shape.num_aux), "witness shape checked by the caller");
    let z = Witness { inputs, aux };
    let n = pce.num_constraints();
    let (mut a, mut b, mut c) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let chunk = par::chunk_len(n, MIN_ROWS_PER_THREAD);
    let rows = |first: usize, [a, b, c]: [&mut [MaybeUninit<Fr>]; 3]| {
        for (r, ((a, b), c)) in a.iter_mut().zip(b.iter_mut()).zip(c.iter_mut()).enumerate() {
            a.write(row(&pce.a, first + r, &pce.coeffs, &z));
            b.write(row(&pce.b, first + r, &pce.coeffs, &z));
            c.write(row(&pce.c, first + r, &pce.coeffs, &z));
        }
    };
    std::thread::scope(|s| {
        let chunks = a.spare_capacity_mut()[..n]
            .chunks_mut(chunk)
            .zip(b.spare_capacity_mut()[..n].chunks_mut(chunk))
            .zip(c.spare_capacity_mut()[..n].chunks_mut(chunk));
        for (i, ((ca, cb), cc)) in chunks.enumerate() {
            let rows = &rows;
            s.spawn(move || rows(i * chunk, [ca, cb, cc]));
        }
    });
    // SAFETY: the chunks cover rows 0..n of each output, and every row of
    // every chunk was written above.
    unsafe {
        a.set_len(n);
        b.set_len(n);
        c.set_len(n);
    }
    (a, b, c)
}

/// The first constraint r whose (A·z)_r · (B·z)_r is not (C·z)_r, if
/// any: a, b, c evaluated row by row on all cores and never held (a
/// witness-only assignment is confirmed against a PCE read from a file
/// this way, in the memory of its witness alone). Same preconditions as
/// [`evaluate`].
pub fn first_unsatisfied(pce: &Pce, inputs: &[Fr], aux: &[Fr]) -> Option<usize> {
    assert_eq!((inputs.len(), aux.len()), (pce.shape.num_inputs, pce.shape.num_aux), "witness shape checked by the caller");
    let z = Witness { inputs, aux };
    par::first_index(pce.num_constraints(), MIN_ROWS_PER_THREAD, |r| {
        row(&pce.a, r, &pce.coeffs, &z) * row(&pce.b, r, &pce.coeffs, &z) != row(&pce.c, r, &pce.coeffs, &z)
    })
}

struct Witness<'a> {
    inputs: &'a [Fr],
    aux: &'a [Fr],
}

impl Witness<'_> {
    #[inline(always)]
    fn get(&self, col: u32) -> &Fr {
        let col = col as usize;
        if col < self.inputs.len() {
            &self.inputs[col]
        } else {
            &self.aux[col - self.inputs.len()]
        }
    }
}

/// Row `row` of M·z.
#[inline(always)]
fn row(m: &SparseMatrix, row: usize, coeffs: &[Fr], z: &Witness) -> Fr {
    let (start, end) = (m.row_ptr[row] as usize, m.row_ptr[row + 1] as usize);
    let mut acc = Fr::ZERO;
    for (&col, &ci) in m.cols[start..end].iter().zip(&m.coeff_idx[start..end]) {
        let v = z.get(col);
        match ci {
            COEFF_ONE => acc += v,
            COEFF_MINUS_ONE => acc -= v,
            _ => match *limbs(v) {
                ZERO => {}
                MONTGOMERY_ONE => acc += &coeffs[ci as usize],
                _ => acc += *v * coeffs[ci as usize],
            },
        }
    }
    acc
}

/// 0 in Montgomery form.
const ZERO: [u64; 4] = [0; 4];
/// 1 in Montgomery form: 2^256 mod r.
const MONTGOMERY_ONE: [u64; 4] = [0x0000_0001_ffff_fffe, 0x5884_b7fa_0003_4802, 0x998c_4fef_ecbc_4ff5, 0x1824_b159_acc5_056f];

/// The Montgomery limbs of `v`, little-endian, to compare it with 0 and 1
/// without converting it out of Montgomery form.
#[inline(always)]
fn limbs(v: &Fr) -> &[u64; 4] {
    // SAFETY: blstrs' Scalar is repr(transparent) over blst_fr, which is
    // repr(C) of four u64 limbs.
    unsafe { &*(v as *const Fr).cast::<[u64; 4]>() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limbs_of_zero_and_one() {
        assert_eq!(*limbs(&Fr::ZERO), ZERO);
        assert_eq!(*limbs(&Fr::ONE), MONTGOMERY_ONE);
        assert_eq!(blst::blst_fr::from(Fr::ONE).l, MONTGOMERY_ONE);
    }
}
