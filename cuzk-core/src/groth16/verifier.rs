//! Groth16 verification: single proofs against a prepared verifying key,
//! and batches with a random linear combination (one final exponentiation
//! for the whole batch).

use super::Proof;
use crate::srs::VerifyingKey;
use blstrs::{Bls12, G1Affine, G1Projective, G2Prepared, Gt, Scalar as Fr};
use ff::{Field, PrimeField};
use group::{prime::PrimeCurveAffine, Curve, Group};
use pairing::{Engine, MillerLoopResult, MultiMillerLoop};
use rand_core::RngCore;

/// A verifying key with the pairing-side work done once.
pub struct PreparedVerifyingKey {
    alpha_g1_beta_g2: Gt,
    neg_gamma_g2: G2Prepared,
    neg_delta_g2: G2Prepared,
    ic: Vec<G1Affine>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VerifyError {
    #[error("the verifying key expects {expected} public inputs, got {got}")]
    InputCount { expected: usize, got: usize },
    #[error("{proofs} proofs but {inputs} public-input lists")]
    BatchLength { proofs: usize, inputs: usize },
}

pub fn prepare_verifying_key(vk: &VerifyingKey) -> PreparedVerifyingKey {
    PreparedVerifyingKey {
        alpha_g1_beta_g2: Bls12::pairing(&vk.alpha_g1, &vk.beta_g2),
        neg_gamma_g2: G2Prepared::from(-vk.gamma_g2),
        neg_delta_g2: G2Prepared::from(-vk.delta_g2),
        ic: vk.ic.clone(),
    }
}

impl PreparedVerifyingKey {
    /// Number of public inputs a proof is checked against (the constant one
    /// not counted).
    pub fn num_public_inputs(&self) -> usize {
        self.ic.len() - 1
    }

    /// IC₀ + Σ inputs[i]·IC_{i+1}.
    fn input_commitment(&self, inputs: &[Fr]) -> Result<G1Projective, VerifyError> {
        if inputs.len() + 1 != self.ic.len() {
            return Err(VerifyError::InputCount { expected: self.ic.len() - 1, got: inputs.len() });
        }
        Ok(self.ic[1..].iter().zip(inputs).fold(self.ic[0].to_curve(), |acc, (p, x)| acc + *p * x))
    }
}

/// Checks e(A, B) = e(α, β)·e(IC(x), γ)·e(C, δ).
pub fn verify_proof(pvk: &PreparedVerifyingKey, proof: &Proof, public_inputs: &[Fr]) -> Result<bool, VerifyError> {
    let acc = pvk.input_commitment(public_inputs)?.to_affine();
    let b = G2Prepared::from(proof.b);
    let ml = Bls12::multi_miller_loop(&[(&proof.a, &b), (&acc, &pvk.neg_gamma_g2), (&proof.c, &pvk.neg_delta_g2)]);
    Ok(ml.final_exponentiation() == pvk.alpha_g1_beta_g2)
}

/// Verifies many proofs at once. With random 128-bit weights z_j it checks
/// Π e(z_j·A_j, B_j) · e(Σ z_j·IC_j, −γ) · e(Σ z_j·C_j, −δ) = e(α, β)^Σz_j;
/// a batch with any invalid proof passes with probability ≤ 2^-128.
pub fn verify_proofs_batch(
    pvk: &PreparedVerifyingKey,
    proofs: &[Proof],
    public_inputs: &[Vec<Fr>],
    rng: &mut impl RngCore,
) -> Result<bool, VerifyError> {
    if proofs.len() != public_inputs.len() {
        return Err(VerifyError::BatchLength { proofs: proofs.len(), inputs: public_inputs.len() });
    }
    if proofs.is_empty() {
        return Ok(true);
    }
    let mut ic_sum = G1Projective::identity();
    let mut c_sum = G1Projective::identity();
    let mut z_sum = Fr::ZERO;
    let mut scaled_a = Vec::with_capacity(proofs.len());
    for (proof, inputs) in proofs.iter().zip(public_inputs) {
        let z = Fr::from_u128(((rng.next_u64() as u128) << 64) | rng.next_u64() as u128);
        ic_sum += pvk.input_commitment(inputs)? * z;
        c_sum += proof.c * z;
        z_sum += z;
        scaled_a.push(G1Affine::from(proof.a * z));
    }
    let prepared_b: Vec<G2Prepared> = proofs.iter().map(|p| G2Prepared::from(p.b)).collect();
    let (ic_sum, c_sum) = (ic_sum.to_affine(), c_sum.to_affine());
    let mut terms: Vec<(&G1Affine, &G2Prepared)> = scaled_a.iter().zip(&prepared_b).collect();
    terms.push((&ic_sum, &pvk.neg_gamma_g2));
    terms.push((&c_sum, &pvk.neg_delta_g2));
    let lhs = Bls12::multi_miller_loop(&terms).final_exponentiation();
    Ok(lhs == pvk.alpha_g1_beta_g2 * z_sum)
}
