//! Groth16 parameters (the SRS) and their files, in the bellperson/Filecoin
//! format:
//!
//! - `.vk`: α1, β1 (G1), β2, γ2 (G2), δ1 (G1), δ2 (G2), then a u32
//!   big-endian count and the IC points (G1); all uncompressed.
//! - `.params`: the `.vk` bytes, then for H, L, A, B_G1 (G1) and B_G2 (G2)
//!   a u32 big-endian count followed by the uncompressed points. No padding.

mod decode;
mod encode;
mod error;

pub use decode::ReadOptions;
pub use error::{ParamsError, PointFault};

use blstrs::{G1Affine, G2Affine};

/// The verifying key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    pub alpha_g1: G1Affine,
    pub beta_g1: G1Affine,
    pub beta_g2: G2Affine,
    pub gamma_g2: G2Affine,
    pub delta_g1: G1Affine,
    pub delta_g2: G2Affine,
    /// (β·u_i(τ) + α·v_i(τ) + w_i(τ))/γ · G1 for each public input.
    pub ic: Vec<G1Affine>,
}

/// The proving parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parameters {
    pub vk: VerifyingKey,
    /// τ^i·Z(τ)/δ · G1 for i < N−1.
    pub h: Vec<G1Affine>,
    /// (β·u_j(τ) + α·v_j(τ) + w_j(τ))/δ · G1 for each aux variable.
    pub l: Vec<G1Affine>,
    /// u_j(τ)·G1 for inputs, then aux variables that appear in A.
    pub a: Vec<G1Affine>,
    /// v_j(τ)·G1 for inputs/aux that appear in B.
    pub b_g1: Vec<G1Affine>,
    /// v_j(τ)·G2 for inputs/aux that appear in B.
    pub b_g2: Vec<G2Affine>,
}

impl Parameters {
    /// Number of public inputs, the constant one included.
    pub fn num_inputs(&self) -> usize {
        self.vk.ic.len()
    }

    /// Size of the point data in bytes (what loading this SRS costs).
    pub fn size_bytes(&self) -> usize {
        (self.h.len() + self.l.len() + self.a.len() + self.b_g1.len() + self.vk.ic.len()) * 96
            + self.b_g2.len() * 192
    }
}
