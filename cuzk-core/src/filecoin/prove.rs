//! The whole path on the CPU prover: request → proof bytes. The engine
//! replaces the middle (scheduling, GPU); tools and tests use this.

use super::error::Result;
use super::params::{ParamCache, SelfCheckKey};
use super::prepare::{prepare, SynthesizedProof};
use super::request::ProofRequest;
use crate::groth16::{prove_synthesized, prove_synthesized_deterministic, Proof};
use crate::srs::{Parameters, ReadOptions};
use blstrs::Scalar as Fr;

/// How [`prove_request`] runs.
#[derive(Clone, Copy, Debug)]
pub struct ProveOptions {
    /// Verify every partition proof with the `.vk` before returning.
    pub self_check: bool,
    /// How the `.params` file is read.
    pub read: ReadOptions,
}

impl Default for ProveOptions {
    fn default() -> Self {
        Self { self_check: true, read: ReadOptions::default() }
    }
}

/// Proves a request with the parameters in `cache`.
pub fn prove_request(req: &ProofRequest, cache: &ParamCache, opts: ProveOptions) -> Result<Vec<u8>> {
    let prepared = prepare(req)?;
    let id = prepared.meta.circuit_id.clone();
    // Load the (small) .vk first: a missing one fails before minutes of work.
    let key = if opts.self_check { Some(cache.load_vk(&id)?) } else { None };
    let params = cache.load_params(&id, opts.read)?;
    let synthesized = prepared.synthesize()?;
    let proofs = prove_partitions(&synthesized, &params, None)?;
    synthesized.meta.finish(&proofs, key.as_ref())
}

/// Proves synthesized partitions; fixed (r, s) per partition for tests.
pub fn prove_partitions(s: &SynthesizedProof, params: &Parameters, randomness: Option<&[(Fr, Fr)]>) -> Result<Vec<Proof>> {
    Ok(match randomness {
        Some(rs) => prove_synthesized_deterministic(params, &s.assignments, rs)?,
        None => prove_synthesized(params, &s.assignments)?,
    })
}

/// Loads the self-check key of a circuit (re-exported for the engine).
pub fn load_self_check(cache: &ParamCache, circuit_id: &str) -> Result<SelfCheckKey> {
    cache.load_vk(circuit_id)
}
