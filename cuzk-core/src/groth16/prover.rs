//! The CPU Groth16 prover.
//!
//! For each synthesized circuit: h from a, b, c ([`super::h_term`]), then
//! five MSMs against the parameters (H, L, A, B_G1 in G1; B_G2 in G2), each
//! restricted by the density bitmaps and split into ones and a Pippenger
//! tail ([`crate::arith::msm`]), then the epilogue with r and s:
//!
//!   A = α + Σa + r·δ,  B = β + Σb + s·δ,
//!   C = Σh + Σl + s·Σa + r·Σb1 + s·α + r·β + r·s·δ.

use super::h_term::h_coefficients;
use super::{Proof, StopCheck};
use crate::arith::msm::{msm, msm_with_density};
use crate::cs::{synthesize, ProvingAssignment};
use crate::ntt::NttError;
use crate::srs::{KeyShape, Parameters};
use bellpepper_core::{Circuit, SynthesisError};
use blstrs::{G1Projective, G2Projective, Scalar as Fr};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve};
use log::debug;
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum ProveError {
    #[error("circuit synthesis failed: {0}")]
    Synthesis(#[from] SynthesisError),
    #[error("{0}")]
    Domain(#[from] NttError),
    #[error(
        "the parameters' {query} query has {params} points but the circuit needs {circuit}: the parameters belong to a different circuit"
    )]
    ParamsMismatch { query: &'static str, params: usize, circuit: usize },
    #[error("circuits in one batch must have the same shape; circuit {index} differs in {what}")]
    BatchShape { index: usize, what: &'static str },
    #[error("{randomness} randomness pairs given for {circuits} circuits")]
    RandomnessCount { randomness: usize, circuits: usize },
    #[error("the parameters' delta is the identity: they are not valid Groth16 parameters")]
    IdentityDelta,
    #[error("circuit {index} carries its witness only (a, b, c not computed): it needs its PCE to be proved")]
    AbcDeferred { index: usize },
    /// Its [`StopCheck`] asked it to stop (every job it served has ended).
    #[error("the prove was stopped: the jobs it served have ended")]
    Stopped,
}

/// Proves one circuit with fresh r, s from the OS CSPRNG.
pub fn prove<C: Circuit<Fr> + Send>(params: &Parameters, circuit: C) -> Result<Proof, ProveError> {
    Ok(prove_batch(params, vec![circuit])?.remove(0))
}

/// Proves one circuit with the given r and s. The result is a pure
/// function of (params, witness, r, s): for testing and reproducibility
/// only; reusing r, s across proofs leaks the witness.
pub fn prove_deterministic<C: Circuit<Fr> + Send>(params: &Parameters, circuit: C, r: Fr, s: Fr) -> Result<Proof, ProveError> {
    Ok(prove_batch_deterministic(params, vec![circuit], &[(r, s)])?.remove(0))
}

/// Proves several circuits that share `params`, with fresh randomness.
pub fn prove_batch<C: Circuit<Fr> + Send>(params: &Parameters, circuits: Vec<C>) -> Result<Vec<Proof>, ProveError> {
    let assignments = synthesize_all(circuits)?;
    prove_synthesized(params, &assignments)
}

/// [`prove_batch`] with explicit (r, s) per circuit.
pub fn prove_batch_deterministic<C: Circuit<Fr> + Send>(
    params: &Parameters,
    circuits: Vec<C>,
    randomness: &[(Fr, Fr)],
) -> Result<Vec<Proof>, ProveError> {
    let assignments = synthesize_all(circuits)?;
    prove_synthesized_deterministic(params, &assignments, randomness)
}

/// Proves already-synthesized circuits with fresh randomness.
pub fn prove_synthesized(params: &Parameters, assignments: &[ProvingAssignment]) -> Result<Vec<Proof>, ProveError> {
    prove_synthesized_until(params, assignments, StopCheck::NEVER)
}

/// [`prove_synthesized`] that gives up with [`ProveError::Stopped`] at the
/// next circuit, H term or MSM boundary once `stop` asks it to.
pub fn prove_synthesized_until(
    params: &Parameters,
    assignments: &[ProvingAssignment],
    stop: StopCheck<'_>,
) -> Result<Vec<Proof>, ProveError> {
    let mut rng = rand_core::OsRng;
    let randomness: Vec<(Fr, Fr)> = assignments.iter().map(|_| (Fr::random(&mut rng), Fr::random(&mut rng))).collect();
    prove_checked(params, assignments, &randomness, stop)
}

/// Proves already-synthesized circuits with explicit (r, s) per circuit.
pub fn prove_synthesized_deterministic(
    params: &Parameters,
    assignments: &[ProvingAssignment],
    randomness: &[(Fr, Fr)],
) -> Result<Vec<Proof>, ProveError> {
    prove_checked(params, assignments, randomness, StopCheck::NEVER)
}

/// The provers above, stopping as `stop` says.
fn prove_checked(
    params: &Parameters,
    assignments: &[ProvingAssignment],
    randomness: &[(Fr, Fr)],
    stop: StopCheck<'_>,
) -> Result<Vec<Proof>, ProveError> {
    if randomness.len() != assignments.len() {
        return Err(ProveError::RandomnessCount { randomness: randomness.len(), circuits: assignments.len() });
    }
    if let Some(first) = assignments.first() {
        for (index, other) in assignments.iter().enumerate().skip(1) {
            check_same_shape(first, other, index)?;
        }
        check_params(params, first)?;
    }
    if let Some(index) = assignments.iter().position(ProvingAssignment::abc_deferred) {
        return Err(ProveError::AbcDeferred { index });
    }
    assignments.iter().zip(randomness).map(|(pa, &(r, s))| prove_one(params, pa, r, s, stop)).collect()
}

/// Synthesizes the circuits of a batch, one thread per circuit up to the
/// thread count.
fn synthesize_all<C: Circuit<Fr> + Send>(circuits: Vec<C>) -> Result<Vec<ProvingAssignment>, ProveError> {
    let start = Instant::now();
    let per = circuits.len().div_ceil(crate::par::threads()).max(1);
    let mut groups: Vec<Vec<C>> = Vec::new();
    let mut it = circuits.into_iter().peekable();
    while it.peek().is_some() {
        groups.push(it.by_ref().take(per).collect());
    }
    let out: Vec<Result<Vec<ProvingAssignment>, SynthesisError>> = std::thread::scope(|s| {
        let handles: Vec<_> =
            groups.into_iter().map(|g| s.spawn(move || g.into_iter().map(synthesize).collect::<Result<Vec<_>, _>>())).collect();
        handles.into_iter().map(|h| h.join().expect("synthesis thread panicked")).collect()
    });
    let mut all = Vec::new();
    for r in out {
        all.extend(r?);
    }
    debug!("synthesized {} circuits in {:?}", all.len(), start.elapsed());
    Ok(all)
}

pub(crate) fn check_same_shape(a: &ProvingAssignment, b: &ProvingAssignment, index: usize) -> Result<(), ProveError> {
    let what = if a.num_constraints() != b.num_constraints() {
        "constraint count"
    } else if a.input_assignment.len() != b.input_assignment.len() {
        "public input count"
    } else if a.aux_assignment.len() != b.aux_assignment.len() {
        "auxiliary variable count"
    } else if a.a_aux_density != b.a_aux_density || a.b_input_density != b.b_input_density || a.b_aux_density != b.b_aux_density {
        "density (which variables appear in A or B)"
    } else {
        return Ok(());
    };
    Err(ProveError::BatchShape { index, what })
}

pub(crate) fn check_params(params: &dyn KeyShape, pa: &ProvingAssignment) -> Result<(), ProveError> {
    let n = 1usize << crate::ntt::Domain::log_size_for(pa.num_constraints())?;
    let (vk, counts) = (params.vk(), params.counts());
    let checks = [
        ("IC", vk.ic.len(), pa.input_assignment.len()),
        ("H", counts.h, n - 1),
        ("L", counts.l, pa.aux_assignment.len()),
        ("A", counts.a, pa.input_assignment.len() + pa.a_aux_density.count()),
        ("B_G1", counts.b_g1, pa.b_input_density.count() + pa.b_aux_density.count()),
        ("B_G2", counts.b_g2, pa.b_input_density.count() + pa.b_aux_density.count()),
    ];
    for (query, params, circuit) in checks {
        if params != circuit {
            return Err(ProveError::ParamsMismatch { query, params, circuit });
        }
    }
    if bool::from(vk.delta_g1.is_identity() | vk.delta_g2.is_identity()) {
        return Err(ProveError::IdentityDelta);
    }
    Ok(())
}

fn prove_one(params: &Parameters, pa: &ProvingAssignment, r: Fr, s: Fr, stop: StopCheck<'_>) -> Result<Proof, ProveError> {
    let go_on = || if stop.requested() { Err(ProveError::Stopped) } else { Ok(()) };
    go_on()?;
    let t = Instant::now();
    let h = h_coefficients(&pa.a, &pa.b, &pa.c)?;
    let t_h = t.elapsed();
    go_on()?;

    let t = Instant::now();
    let inputs = &pa.input_assignment;
    let aux = &pa.aux_assignment;
    let n_in = inputs.len();
    let b_in = pa.b_input_density.count();

    let h_acc = msm(&params.h, &h);
    drop(h);
    go_on()?;
    let l_acc = msm(&params.l, aux);
    go_on()?;
    let a_acc = msm(&params.a[..n_in], inputs) + msm_with_density(&params.a[n_in..], Some(&pa.a_aux_density), aux);
    go_on()?;
    let b1_acc = msm_with_density(&params.b_g1[..b_in], Some(&pa.b_input_density), inputs)
        + msm_with_density(&params.b_g1[b_in..], Some(&pa.b_aux_density), aux);
    go_on()?;
    let b2_acc = msm_with_density(&params.b_g2[..b_in], Some(&pa.b_input_density), inputs)
        + msm_with_density(&params.b_g2[b_in..], Some(&pa.b_aux_density), aux);
    let t_msm = t.elapsed();
    debug!("proof: h term {t_h:?}, msms {t_msm:?}");
    Ok(assemble(&params.vk, MsmResults { h: h_acc, l: l_acc, a: a_acc, b_g1: b1_acc, b_g2: b2_acc }, r, s))
}

/// The five MSM results of one circuit (any backend).
#[derive(Clone, Copy, Debug)]
pub struct MsmResults {
    pub h: G1Projective,
    pub l: G1Projective,
    pub a: G1Projective,
    pub b_g1: G1Projective,
    pub b_g2: G2Projective,
}

/// The epilogue shared by every backend: the proof from the MSM results
/// and r, s. Equal MSM results give byte-identical proofs.
pub fn assemble(vk: &crate::srs::VerifyingKey, m: MsmResults, r: Fr, s: Fr) -> Proof {
    let g_a: G1Projective = vk.alpha_g1.to_curve() + m.a + vk.delta_g1 * r;
    let g_b: G2Projective = vk.beta_g2.to_curve() + m.b_g2 + vk.delta_g2 * s;
    let g_c: G1Projective = m.h + m.l + m.a * s + m.b_g1 * r + vk.alpha_g1 * s + vk.beta_g1 * r + vk.delta_g1 * (r * s);
    Proof { a: g_a.to_affine(), b: g_b.to_affine(), c: g_c.to_affine() }
}
