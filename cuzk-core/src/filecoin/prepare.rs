//! The entry point from a request to partition circuits: decode, check,
//! build the circuits filecoin-proofs would build, and synthesize them.
//!
//! The engine calls [`prepare`] (cheap: decoding and vanilla checks), looks
//! up the SRS by [`ProofMeta::circuit_id`], synthesizes each circuit
//! ([`synthesize_partition`]) on its workers, proves, then hands the proofs
//! to [`ProofMeta::finish`] (assembly and self-check).

use super::assemble::{assemble, check_public_inputs, self_check};
use super::circuit::FilecoinCircuit;
use super::error::{FilecoinError, Result};
use super::kind::{not_filecoin, ProofType};
use crate::proof_kind::ProofKind;
use super::params::{circuit_id, SelfCheckKey};
use super::request::ProofRequest;
use super::{porep, post, snap};
use crate::cs::{synthesize, ProvingAssignment};
use crate::groth16::Proof;
use blstrs::Scalar as Fr;

/// Everything about a request except its circuits: what the engine keeps
/// while circuits are synthesized and proven.
#[derive(Clone, Debug)]
pub struct ProofMeta {
    pub kind: ProofKind,
    pub proof_type: ProofType,
    /// The SRS to prove with: `v28-<circuit_id>.params` in the param cache.
    pub circuit_id: String,
    /// Per partition, the verifier's public inputs (no leading one).
    pub public_inputs: Vec<Vec<Fr>>,
}

/// A request turned into its partition circuits, in partition order.
pub struct PreparedProof {
    pub meta: ProofMeta,
    pub circuits: Vec<FilecoinCircuit>,
}

/// Synthesized partitions, ready for the prover.
pub struct SynthesizedProof {
    pub meta: ProofMeta,
    pub assignments: Vec<ProvingAssignment>,
}

/// Decodes and checks a request and builds its partition circuits.
pub fn prepare(req: &ProofRequest) -> Result<PreparedProof> {
    let built = match req.kind {
        ProofKind::PorepSealCommit => porep::build(req)?,
        ProofKind::SnapDealsUpdate => snap::build(req, ProofType::for_kind(req.kind, req.registered_proof)?)?,
        ProofKind::WindowPostPartition | ProofKind::WinningPost => {
            post::build(req, ProofType::for_kind(req.kind, req.registered_proof)?)?
        }
        ProofKind::Builtin | ProofKind::Custom => return Err(not_filecoin(req.kind)),
    };
    let meta = ProofMeta {
        kind: req.kind,
        proof_type: built.proof_type,
        circuit_id: circuit_id(built.proof_type)?,
        public_inputs: built.public_inputs,
    };
    Ok(PreparedProof { meta, circuits: built.circuits })
}

/// Synthesizes one partition and checks its public inputs against the
/// verifier's.
pub fn synthesize_partition(partition: usize, circuit: FilecoinCircuit, expected: &[Fr]) -> Result<ProvingAssignment> {
    let pa = synthesize(circuit).map_err(|source| FilecoinError::Synthesis { partition, source })?;
    check_public_inputs(partition, &pa, expected)?;
    Ok(pa)
}

impl PreparedProof {
    /// Synthesizes every partition, up to [`crate::par::threads`] at once.
    pub fn synthesize(self) -> Result<SynthesizedProof> {
        let PreparedProof { meta, circuits } = self;
        let width = crate::par::threads().max(1);
        let mut assignments = Vec::with_capacity(circuits.len());
        let mut todo = circuits.into_iter().enumerate().peekable();
        while todo.peek().is_some() {
            let wave: Vec<_> = todo.by_ref().take(width).collect();
            let done: Vec<Result<ProvingAssignment>> = std::thread::scope(|s| {
                let hs: Vec<_> = wave
                    .into_iter()
                    .map(|(k, c)| {
                        let inputs = &meta.public_inputs[k];
                        s.spawn(move || synthesize_partition(k, c, inputs))
                    })
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err(FilecoinError::Circuit("synthesis panicked".into()))))
                    .collect()
            });
            for r in done {
                assignments.push(r?);
            }
        }
        Ok(SynthesizedProof { meta, assignments })
    }
}

impl ProofMeta {
    pub fn partitions(&self) -> usize {
        self.public_inputs.len()
    }

    /// Assembles the partition proofs into the bytes filecoin-proofs
    /// returns, after the self-check when a key is given.
    pub fn finish(&self, proofs: &[Proof], check: Option<&SelfCheckKey>) -> Result<Vec<u8>> {
        let bytes = assemble(proofs, self.partitions())?;
        if let Some(key) = check {
            self_check(key, proofs, &self.public_inputs)?;
        }
        Ok(bytes)
    }
}
