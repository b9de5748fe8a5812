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
mod stream;

pub use decode::ReadOptions;
pub use encode::{ParamsLayout, ParamsStream};
pub use error::{ParamsError, PointFault};
pub use stream::{
    stream_host_bytes, stream_points, FileDigest, ParamsFile, ParamsHead, PointSlice, Section, SlicePoints, StreamError, TrustedDigest,
};

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
    /// What must go before the point vectors' memory: the GPU backend's
    /// page-lock of them (`gpu_srs::pin_host_points`). First, because fields
    /// drop in order.
    pub host_pin: HostPin,
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

/// A slot, set at most once, for a guard that owns a hold on a
/// [`Parameters`]' point memory (the GPU backend's page-lock). A clone's
/// slot is empty (its vectors are other memory); it takes no part in
/// equality.
#[derive(Default)]
pub struct HostPin(std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>);

impl HostPin {
    /// The guard, made by `init` on the first call (later callers wait for
    /// it and get the same one).
    pub fn get_or_init(&self, init: impl FnOnce() -> Box<dyn std::any::Any + Send + Sync>) -> &(dyn std::any::Any + Send + Sync) {
        &**self.0.get_or_init(init)
    }
}

impl Clone for HostPin {
    fn clone(&self) -> Self {
        HostPin::default()
    }
}

impl PartialEq for HostPin {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for HostPin {}

impl std::fmt::Debug for HostPin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() { "HostPin(set)" } else { "HostPin(empty)" })
    }
}

/// The length of each point vector of a proving key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PointCounts {
    pub h: usize,
    pub l: usize,
    pub a: usize,
    pub b_g1: usize,
    pub b_g2: usize,
}

/// What sizes a proving key's MSMs, checks a circuit against it and
/// assembles its proofs: known whether or not its points are in host
/// memory (a GPU that holds them resident needs no more).
pub trait KeyShape: Send + Sync {
    fn vk(&self) -> &VerifyingKey;
    fn counts(&self) -> PointCounts;
}

impl KeyShape for Parameters {
    fn vk(&self) -> &VerifyingKey {
        &self.vk
    }

    fn counts(&self) -> PointCounts {
        PointCounts { h: self.h.len(), l: self.l.len(), a: self.a.len(), b_g1: self.b_g1.len(), b_g2: self.b_g2.len() }
    }
}

impl PointCounts {
    /// Host bytes of the points and the IC (with `ic` IC points).
    pub fn host_bytes(&self, ic: usize) -> usize {
        (self.h + self.l + self.a + self.b_g1 + ic) * 96 + self.b_g2 * 192
    }
}

impl Parameters {
    /// Number of public inputs, the constant one included.
    pub fn num_inputs(&self) -> usize {
        self.vk.ic.len()
    }

    /// Size of the point data in bytes (what loading this SRS costs).
    pub fn size_bytes(&self) -> usize {
        self.counts().host_bytes(self.vk.ic.len())
    }
}
