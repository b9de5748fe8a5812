//! a = A·z, b = B·z, c = C·z over z = inputs ‖ aux, on all cores: each
//! thread evaluates a contiguous range of rows (reading its part of the
//! CSR arrays sequentially) straight into the output.

use super::{Pce, SparseMatrix, COEFF_MINUS_ONE, COEFF_ONE};
use crate::par;
use blstrs::Scalar as Fr;
use ff::Field;

/// Rows per thread at least: below this, threads cost more than they save.
const MIN_ROWS_PER_THREAD: usize = 4096;

/// The three products, one Fr per constraint each. `pce` must have been
/// validated (every PCE from [`super::record`] or [`super::file`] is) and
/// the witness must have its shape.
pub fn evaluate(pce: &Pce, inputs: &[Fr], aux: &[Fr]) -> (Vec<Fr>, Vec<Fr>, Vec<Fr>) {
    assert_eq!((inputs.len(), aux.len()), (pce.shape.num_inputs, pce.shape.num_aux), "witness shape checked by the caller");
    let z = Witness { inputs, aux };
    (
        product(&pce.a, &pce.coeffs, &z),
        product(&pce.b, &pce.coeffs, &z),
        product(&pce.c, &pce.coeffs, &z),
    )
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

/// M·z.
fn product(m: &SparseMatrix, coeffs: &[Fr], z: &Witness) -> Vec<Fr> {
    // Each row is written once, by its thread: no serial zeroing pass over
    // the output first (4 GiB per product at 2^27).
    let mut out: Vec<Fr> = Vec::with_capacity(m.num_rows());
    par::for_each_chunk_mut(&mut out.spare_capacity_mut()[..m.num_rows()], MIN_ROWS_PER_THREAD, |first, rows| {
        for (r, o) in rows.iter_mut().enumerate() {
            let row = first + r;
            let (start, end) = (m.row_ptr[row] as usize, m.row_ptr[row + 1] as usize);
            let mut acc = Fr::ZERO;
            for (&col, &ci) in m.cols[start..end].iter().zip(&m.coeff_idx[start..end]) {
                let v = z.get(col);
                match ci {
                    COEFF_ONE => acc += v,
                    COEFF_MINUS_ONE => acc -= v,
                    _ => acc += *v * coeffs[ci as usize],
                }
            }
            o.write(acc);
        }
    });
    // SAFETY: for_each_chunk_mut hands out every row of the spare capacity
    // once, and each was written above.
    unsafe { out.set_len(m.num_rows()) };
    out
}
