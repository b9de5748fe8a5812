//! The quotient polynomial h = (A·B − C)/Z of the QAP, from the per-
//! constraint evaluations a, b, c: seven NTTs of the domain size.

use crate::ntt::{Domain, NttError};
use blstrs::Scalar as Fr;

/// The N−1 coefficients of h, where N is the domain size for `a.len()`
/// constraints. Each input is copied once into a zero-padded buffer of N.
pub fn h_coefficients(a: &[Fr], b: &[Fr], c: &[Fr]) -> Result<Vec<Fr>, NttError> {
    assert!(a.len() == b.len() && b.len() == c.len(), "a, b, c must have one entry per constraint");
    let domain = Domain::for_len(a.len())?;
    let n = domain.size();
    let padded = |x: &[Fr]| {
        let mut v = Vec::with_capacity(n);
        v.extend_from_slice(x);
        v.resize(n, Fr::default());
        v
    };
    let (mut a, mut b, mut c) = (padded(a), padded(b), padded(c));
    for v in [&mut a, &mut b, &mut c] {
        // Evaluations on ⟨ω⟩ → coefficients → evaluations on the coset,
        // where Z is a non-zero constant.
        domain.ifft(v);
        domain.coset_fft(v);
    }
    let z_inv = domain.z_inv_on_coset();
    crate::par::for_each_chunk_mut(&mut a, 1 << 14, |off, chunk| {
        for (k, x) in chunk.iter_mut().enumerate() {
            *x = (*x * b[off + k] - c[off + k]) * z_inv;
        }
    });
    drop((b, c));
    domain.icoset_fft(&mut a);
    // deg h ≤ N−2: the top coefficient is zero for a satisfied circuit.
    a.truncate(n - 1);
    Ok(a)
}
