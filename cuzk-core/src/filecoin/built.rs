//! What the per-kind builders return: the partition circuits, in order,
//! with the public inputs the verifier will use for each.

use super::circuit::FilecoinCircuit;
use super::kind::ProofType;
use blstrs::Scalar as Fr;

pub(crate) struct Built {
    pub proof_type: ProofType,
    pub circuits: Vec<FilecoinCircuit>,
    /// Per partition, without the leading constant one.
    pub public_inputs: Vec<Vec<Fr>>,
}
