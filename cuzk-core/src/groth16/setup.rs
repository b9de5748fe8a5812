//! Parameter generation from toxic waste (α, β, γ, δ, τ).
//!
//! The circuit is evaluated as a QAP at τ ([`super::qap`]), then every query
//! point is a fixed-base multiplication of the generator
//! ([`crate::arith::fixed_base`]), parallel over points. The output matches
//! bellperson's `generate_parameters` query for query (A and B exclude the
//! points at infinity; an aux variable that no constraint uses is an error
//! because its L point would be the identity).

use super::qap::QapAssembly;
use crate::arith::fixed_base::FixedBase;
use crate::ntt::NttError;
use crate::srs::{Parameters, VerifyingKey};
use bellpepper_core::{Circuit, SynthesisError};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar as Fr};
use ff::Field;
use group::{Curve, Group};
use log::debug;
use rand_core::RngCore;
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("circuit synthesis failed: {0}")]
    Synthesis(#[from] SynthesisError),
    #[error("{0}")]
    Domain(#[from] NttError),
    #[error("auxiliary variable {index} appears in no constraint (its L point would be the identity)")]
    UnconstrainedVariable { index: usize },
    #[error("toxic waste {0} is zero")]
    ZeroTrapdoor(&'static str),
    #[error("tau is a root of unity of the domain, which makes Z(tau) zero")]
    TauInDomain,
}

/// The secret trapdoors of a Groth16 setup.
#[derive(Clone, Copy, Debug)]
pub struct ToxicWaste {
    pub alpha: Fr,
    pub beta: Fr,
    pub gamma: Fr,
    pub delta: Fr,
    pub tau: Fr,
}

impl ToxicWaste {
    pub fn random(rng: &mut impl RngCore) -> Self {
        Self {
            alpha: Fr::random(&mut *rng),
            beta: Fr::random(&mut *rng),
            gamma: Fr::random(&mut *rng),
            delta: Fr::random(&mut *rng),
            tau: Fr::random(&mut *rng),
        }
    }
}

/// Progress of a long setup: (points done, points in all).
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// Generates parameters from random toxic waste.
pub fn generate_random_parameters<C: Circuit<Fr>>(
    circuit: C,
    rng: &mut impl RngCore,
) -> Result<Parameters, SetupError> {
    generate_parameters(circuit, &ToxicWaste::random(rng), None)
}

/// Generates parameters from the given toxic waste.
pub fn generate_parameters<C: Circuit<Fr>>(
    circuit: C,
    tw: &ToxicWaste,
    progress: Option<Progress>,
) -> Result<Parameters, SetupError> {
    for (name, v) in [("gamma", tw.gamma), ("delta", tw.delta)] {
        if bool::from(v.is_zero()) {
            return Err(SetupError::ZeroTrapdoor(name));
        }
    }
    let t = Instant::now();
    let assembly = QapAssembly::synthesize(circuit)?;
    let qap = assembly.evaluate_at(tw.tau)?;
    debug!("setup: QAP of {} constraints at tau in {:?}", assembly.num_constraints, t.elapsed());

    let n = qap.domain.size();
    let z_tau = tw.tau.pow_vartime([n as u64]) - Fr::ONE;
    if bool::from(z_tau.is_zero()) {
        return Err(SetupError::TauInDomain);
    }
    let gamma_inv = tw.gamma.invert().unwrap();
    let delta_inv = tw.delta.invert().unwrap();

    // Scalars of every query, then one fixed-base pass per group.
    let t = Instant::now();
    let h_scalars: Vec<Fr> = {
        let c = z_tau * delta_inv;
        let mut v = vec![Fr::ZERO; n - 1];
        crate::par::for_each_chunk_mut(&mut v, 1 << 14, |off, chunk| {
            let mut p = tw.tau.pow_vartime([off as u64]) * c;
            for x in chunk {
                *x = p;
                p *= tw.tau;
            }
        });
        v
    };
    let ext = |at: &[Fr], bt: &[Fr], ct: &[Fr], inv: Fr| -> Vec<Fr> {
        (0..at.len()).map(|i| (tw.beta * at[i] + tw.alpha * bt[i] + ct[i]) * inv).collect()
    };
    let ic_scalars = ext(&qap.at_inputs, &qap.bt_inputs, &qap.ct_inputs, gamma_inv);
    let l_scalars = ext(&qap.at_aux, &qap.bt_aux, &qap.ct_aux, delta_inv);
    if let Some(index) = l_scalars.iter().position(|x| bool::from(x.is_zero())) {
        return Err(SetupError::UnconstrainedVariable { index });
    }
    let nonzero = |v: &[Fr]| -> Vec<Fr> { v.iter().copied().filter(|x| !bool::from(x.is_zero())).collect() };
    let a_scalars: Vec<Fr> = [nonzero(&qap.at_inputs), nonzero(&qap.at_aux)].concat();
    let b_scalars: Vec<Fr> = [nonzero(&qap.bt_inputs), nonzero(&qap.bt_aux)].concat();

    let g1_total = h_scalars.len() + ic_scalars.len() + l_scalars.len() + a_scalars.len() + b_scalars.len();
    let total = g1_total + b_scalars.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let tick = |k: usize| {
        let d = done.fetch_add(k, std::sync::atomic::Ordering::Relaxed) + k;
        if let Some(p) = progress {
            p(d, total);
        }
    };
    let g1 = FixedBase::<G1Affine>::new(G1Projective::generator(), g1_total);
    let g2 = FixedBase::<G2Affine>::new(G2Projective::generator(), b_scalars.len());
    let run_g1 = |v: &[Fr]| -> Vec<G1Affine> { mul_in_slabs(&g1, v, &tick) };
    let h = run_g1(&h_scalars);
    let ic = run_g1(&ic_scalars);
    let l = run_g1(&l_scalars);
    let a = run_g1(&a_scalars);
    let b_g1 = run_g1(&b_scalars);
    let b_g2 = mul_in_slabs(&g2, &b_scalars, &tick);
    debug!("setup: {} G1 and {} G2 points in {:?}", g1_total, b_scalars.len(), t.elapsed());

    let g1_gen = G1Projective::generator();
    let g2_gen = G2Projective::generator();
    let vk = VerifyingKey {
        alpha_g1: (g1_gen * tw.alpha).to_affine(),
        beta_g1: (g1_gen * tw.beta).to_affine(),
        beta_g2: (g2_gen * tw.beta).to_affine(),
        gamma_g2: (g2_gen * tw.gamma).to_affine(),
        delta_g1: (g1_gen * tw.delta).to_affine(),
        delta_g2: (g2_gen * tw.delta).to_affine(),
        ic,
    };
    Ok(Parameters { host_pin: Default::default(), vk, h, l, a, b_g1, b_g2 })
}

/// Fixed-base multiplications in slabs, reporting progress after each.
fn mul_in_slabs<A: crate::arith::MsmAffine>(table: &FixedBase<A>, scalars: &[Fr], tick: &impl Fn(usize)) -> Vec<A> {
    let mut out = Vec::with_capacity(scalars.len());
    for slab in scalars.chunks(1 << 16) {
        out.extend(table.mul_many(slab));
        tick(slab.len());
    }
    out
}
