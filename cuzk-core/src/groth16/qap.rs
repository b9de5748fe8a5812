//! R1CS → QAP at a point: each variable's A, B, C polynomials evaluated at
//! τ from a circuit's recorded R1CS ([`crate::pce::Pce`]), through the
//! Lagrange basis of the NTT domain (one inverse NTT of the powers of τ).
//!
//! Variable i's value is u_i(τ) = Σ_rows L_row(τ)·M[row][i]: the transposed
//! sparse product Mᵀ·L. It runs in parallel over column ranges, each thread
//! scanning the CSR entries and keeping those of its range, so no dense
//! matrix, no transposed copy and no per-thread accumulator is ever held:
//! memory is the Lagrange vector plus the outputs.

use crate::ntt::{Domain, NttError};
use crate::pce::{Pce, SparseMatrix, COEFF_MINUS_ONE, COEFF_ONE};
use blstrs::Scalar as Fr;
use ff::Field;

/// Each variable's A, B, C polynomials evaluated at τ.
pub struct QapAtTau {
    pub at_inputs: Vec<Fr>,
    pub bt_inputs: Vec<Fr>,
    pub ct_inputs: Vec<Fr>,
    pub at_aux: Vec<Fr>,
    pub bt_aux: Vec<Fr>,
    pub ct_aux: Vec<Fr>,
    /// The domain the QAP lives on.
    pub domain: Domain,
}

/// Columns per thread at least: below this, threads cost more than they save.
const MIN_COLUMNS_PER_THREAD: usize = 1 << 12;

/// Evaluates the QAP of `pce` at τ. The PCE already holds the rows the
/// prover adds (constant-one input first, one `input_i × 0 = 0` row per
/// input last), so this is exactly the QAP the prover's H term assumes.
pub fn evaluate_at(pce: &Pce, tau: Fr) -> Result<QapAtTau, NttError> {
    let domain = Domain::for_len(pce.num_constraints())?;
    // L_j(τ) for every row j: the inverse NTT of (1, τ, τ², …).
    let mut lagrange = vec![Fr::ZERO; domain.size()];
    crate::par::for_each_chunk_mut(&mut lagrange, 1 << 14, |off, chunk| {
        let mut p = tau.pow_vartime([off as u64]);
        for x in chunk {
            *x = p;
            p *= tau;
        }
    });
    domain.ifft(&mut lagrange);
    let ni = pce.shape.num_inputs;
    let vars = ni + pce.shape.num_aux;
    // Inputs are few: copy them out and shift the aux part in place, so no
    // second aux-sized vector is ever allocated.
    let split = |mut all: Vec<Fr>| {
        let inputs = all.drain(..ni).collect::<Vec<_>>();
        (inputs, all)
    };
    let (at_inputs, at_aux) = split(column_sums(&pce.a, &pce.coeffs, &lagrange, vars));
    let (bt_inputs, bt_aux) = split(column_sums(&pce.b, &pce.coeffs, &lagrange, vars));
    let (ct_inputs, ct_aux) = split(column_sums(&pce.c, &pce.coeffs, &lagrange, vars));
    Ok(QapAtTau { at_inputs, bt_inputs, ct_inputs, at_aux, bt_aux, ct_aux, domain })
}

/// Mᵀ·L: for every column, Σ over its entries of L[row]·coefficient.
fn column_sums(m: &SparseMatrix, coeffs: &[Fr], lagrange: &[Fr], num_vars: usize) -> Vec<Fr> {
    let mut out = vec![Fr::ZERO; num_vars];
    crate::par::for_each_chunk_mut(&mut out, MIN_COLUMNS_PER_THREAD, |first, cols| {
        let range = first as u64..(first + cols.len()) as u64;
        for (row, &l) in lagrange[..m.num_rows()].iter().enumerate() {
            let (start, end) = (m.row_ptr[row] as usize, m.row_ptr[row + 1] as usize);
            for (&col, &ci) in m.cols[start..end].iter().zip(&m.coeff_idx[start..end]) {
                if !range.contains(&(col as u64)) {
                    continue;
                }
                let o = &mut cols[col as usize - first];
                match ci {
                    COEFF_ONE => *o += l,
                    COEFF_MINUS_ONE => *o -= l,
                    _ => *o += l * coeffs[ci as usize],
                }
            }
        }
    });
    out
}
