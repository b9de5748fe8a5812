//! The GPU Groth16 prover (feature `cuda`): the same proofs as the CPU
//! prover, byte for byte, with the heavy algebra on one device.
//!
//! Per circuit: the H term on the device (cuzk-sys h_term: 6 NTTs and the
//! pointwise step), h stays there and feeds the H MSM directly; the L, A,
//! B_G1 (G1) and B_G2 (G2) MSMs on the device (cuzk-sys msm), with the
//! density bitmaps applied on the host (the scalars of variables present in
//! A or B are compacted so they line up with the params' dense point
//! lists). Scalars 0 and 1 need no separate path for correctness: in the
//! GPU Pippenger a 0 produces no bucket entry and a 1 one entry, i.e. one
//! mixed addition. The epilogue is the CPU prover's own
//! ([`super::prover::assemble`]), so equal MSM results mean equal bytes.
//!
//! Not yet: SRS chunks uploaded once per batch or kept resident (each MSM
//! uploads its points), a separate batch-addition pass for the ones, B_G2
//! overlapped on CPU threads, a VRAM budget.

use super::prover::{assemble, check_params, check_same_shape, MsmResults, ProveError};
use super::Proof;
use crate::arith::Density;
use crate::cs::ProvingAssignment;
use crate::srs::Parameters;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar as Fr};
use cuzk_sys::msm::{self, Input, G1, G2};
use cuzk_sys::{FrRepr, HTermBuffers, NttContext};
use log::debug;
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum GpuProveError {
    #[error(transparent)]
    Prove(#[from] ProveError),
    #[error("no CUDA device: {0}")]
    NoDevice(String),
    #[error("GPU failure: {0}")]
    Gpu(#[from] cuzk_sys::Error),
}

// blstrs' types are #[repr(transparent)] over blst's; cuzk-sys speaks blst.
fn scalars_repr(s: &[Fr]) -> &[FrRepr] {
    const _: () = assert!(std::mem::size_of::<Fr>() == std::mem::size_of::<FrRepr>());
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const FrRepr, s.len()) }
}
fn g1_repr(p: &[G1Affine]) -> &[msm::G1AffineRepr] {
    const _: () = assert!(std::mem::size_of::<G1Affine>() == std::mem::size_of::<msm::G1AffineRepr>());
    unsafe { std::slice::from_raw_parts(p.as_ptr() as *const msm::G1AffineRepr, p.len()) }
}
fn g2_repr(p: &[G2Affine]) -> &[msm::G2AffineRepr] {
    const _: () = assert!(std::mem::size_of::<G2Affine>() == std::mem::size_of::<msm::G2AffineRepr>());
    unsafe { std::slice::from_raw_parts(p.as_ptr() as *const msm::G2AffineRepr, p.len()) }
}
fn g1(raw: msm::G1ProjRepr) -> G1Projective {
    const _: () = assert!(std::mem::size_of::<G1Projective>() == std::mem::size_of::<msm::G1ProjRepr>());
    unsafe { std::mem::transmute::<msm::G1ProjRepr, G1Projective>(raw) }
}
fn g2(raw: msm::G2ProjRepr) -> G2Projective {
    const _: () = assert!(std::mem::size_of::<G2Projective>() == std::mem::size_of::<msm::G2ProjRepr>());
    unsafe { std::mem::transmute::<msm::G2ProjRepr, G2Projective>(raw) }
}

/// The scalars of the variables set in `density`, in order.
fn compact(scalars: &[Fr], density: &Density) -> Vec<Fr> {
    (0..scalars.len()).filter(|&i| density.get(i)).map(|i| scalars[i]).collect()
}

/// The first CUDA device, or a clear error where there is none (including
/// a build of cuzk-sys without nvcc).
pub fn default_device() -> Result<i32, GpuProveError> {
    match cuzk_sys::device_count() {
        Ok(n) if n > 0 => Ok(0),
        Ok(_) => Err(GpuProveError::NoDevice(
            if cuzk_sys::AVAILABLE { "no CUDA device found" } else { "cuzk-sys was built without CUDA (no nvcc)" }
                .into(),
        )),
        Err(e) => Err(GpuProveError::NoDevice(e.to_string())),
    }
}

/// [`super::prove_synthesized_deterministic`] on the GPU `device`.
pub fn prove_synthesized_deterministic_gpu(
    device: i32,
    params: &Parameters,
    assignments: &[ProvingAssignment],
    randomness: &[(Fr, Fr)],
) -> Result<Vec<Proof>, GpuProveError> {
    if randomness.len() != assignments.len() {
        return Err(ProveError::RandomnessCount { randomness: randomness.len(), circuits: assignments.len() }.into());
    }
    let Some(first) = assignments.first() else { return Ok(Vec::new()) };
    for (index, other) in assignments.iter().enumerate().skip(1) {
        check_same_shape(first, other, index)?;
    }
    check_params(params, first)?;
    if device < 0 || device >= cuzk_sys::device_count().unwrap_or(0) {
        default_device()?;
        return Err(GpuProveError::NoDevice(format!("no CUDA device {device}")));
    }
    let n = crate::ntt::Domain::for_len(first.num_constraints()).map_err(ProveError::from)?.size();
    let log_n = n.trailing_zeros().max(1);
    let ctx = NttContext::new(device)?;
    let mut bufs = HTermBuffers::new(device, log_n)?;
    let mut proofs = Vec::with_capacity(assignments.len());
    for (pa, &(r, s)) in assignments.iter().zip(randomness) {
        let t = Instant::now();
        ctx.h_term(scalars_repr(&pa.a), scalars_repr(&pa.b), scalars_repr(&pa.c), log_n, &mut bufs)?;
        let h_len = params.h.len();
        let h = g1(msm::msm::<G1>(
            device,
            Input::Host(g1_repr(&params.h)),
            Input::Device { buf: &bufs.a, offset: 0, len: h_len },
            None,
        )?
        .0);
        let t_h = t.elapsed();

        let inputs = &pa.input_assignment;
        let aux = &pa.aux_assignment;
        let n_in = inputs.len();
        let b_in = pa.b_input_density.count();
        let g1_msm = |points: &[G1Affine], scalars: &[Fr]| -> Result<G1Projective, GpuProveError> {
            Ok(g1(msm::msm_g1(device, g1_repr(points), scalars_repr(scalars))?))
        };
        let l = g1_msm(&params.l, aux)?;
        let a_aux = compact(aux, &pa.a_aux_density);
        let a = g1_msm(&params.a[..n_in], inputs)? + g1_msm(&params.a[n_in..], &a_aux)?;
        let b_inputs = compact(inputs, &pa.b_input_density);
        let b_aux = compact(aux, &pa.b_aux_density);
        let b_g1 = g1_msm(&params.b_g1[..b_in], &b_inputs)? + g1_msm(&params.b_g1[b_in..], &b_aux)?;
        let b_g2 = g2(msm::msm::<G2>(
            device,
            Input::Host(g2_repr(&params.b_g2[..b_in])),
            Input::Host(scalars_repr(&b_inputs)),
            None,
        )?
        .0) + g2(msm::msm::<G2>(
            device,
            Input::Host(g2_repr(&params.b_g2[b_in..])),
            Input::Host(scalars_repr(&b_aux)),
            None,
        )?
        .0);
        debug!("gpu proof: h term + H msm {t_h:?}, all {:?}", t.elapsed());
        proofs.push(assemble(&params.vk, MsmResults { h, l, a, b_g1, b_g2 }, r, s));
    }
    Ok(proofs)
}
