//! From partition proofs to the bytes filecoin-proofs returns, and the
//! self-check before a proof leaves the daemon.
//!
//! Every kind's output is its Groth16 proofs (192 bytes, compressed A‖B‖C)
//! concatenated in partition order: `MultiProof::write` for PoRep and
//! `proofs_to_bytes` for PoSt and SnapDeals both do exactly that.

use super::error::{FilecoinError, Result};
use super::params::SelfCheckKey;
use crate::cs::ProvingAssignment;
use crate::groth16::{verify_proof, Proof};
use blstrs::Scalar as Fr;

/// The final proof bytes; `expected` is the partition count.
pub fn assemble(proofs: &[Proof], expected: usize) -> Result<Vec<u8>> {
    if proofs.len() != expected {
        return Err(FilecoinError::Count { what: "partition proofs", expected, got: proofs.len() });
    }
    Ok(proofs.iter().flat_map(|p| p.to_bytes()).collect())
}

/// Verifies each partition proof with the `.vk` and the verifier's public
/// inputs; the first failure is an error naming the partition.
pub fn self_check(key: &SelfCheckKey, proofs: &[Proof], public_inputs: &[Vec<Fr>]) -> Result<()> {
    if proofs.len() != public_inputs.len() {
        return Err(FilecoinError::Count { what: "proofs to self-check", expected: public_inputs.len(), got: proofs.len() });
    }
    for (partition, (proof, inputs)) in proofs.iter().zip(public_inputs).enumerate() {
        match verify_proof(&key.pvk, proof, inputs) {
            Ok(true) => {}
            Ok(false) => return Err(FilecoinError::SelfCheckFailed { partition, vk: key.path.clone() }),
            Err(e) => return Err(FilecoinError::SelfCheck(format!("partition {partition}: {e}"))),
        }
    }
    Ok(())
}

/// Checks that a synthesized partition has the public inputs the verifier
/// will use (before spending prover time on it).
pub fn check_public_inputs(partition: usize, pa: &ProvingAssignment, expected: &[Fr]) -> Result<()> {
    let got = pa.input_assignment.get(1..).unwrap_or(&[]);
    if got.len() != expected.len() {
        return Err(FilecoinError::Count { what: "public inputs of the circuit", expected: expected.len(), got: got.len() });
    }
    match got.iter().zip(expected).position(|(a, b)| a != b) {
        Some(index) => Err(FilecoinError::PublicInputsMismatch { partition, index }),
        None => Ok(()),
    }
}
