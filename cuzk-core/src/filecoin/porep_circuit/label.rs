//! One node's label in one layer: SHA-256 of the replica id, the layer and
//! node numbers and the node's 37 parent labels, packed into a field
//! element. The one place our PoRep circuit computes a label: with a
//! witness generator, its SHA-256 is computed on values without the
//! gadget's linear combinations (`crate::witness_gadgets`); otherwise it is
//! storage-proofs' `create_label_circuit`.

use bellpepper_core::boolean::Boolean;
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use bellperson::gadgets::uint32::UInt32;
use storage_proofs_core::gadgets::uint64::UInt64;

/// The label of `node` in `layer`; `parents` are the 37 parent labels as
/// big-endian bits, in the order the labeling hashes them.
pub(super) fn label<CS: ConstraintSystem<Fr>>(
    cs: CS,
    replica_id: &[Boolean],
    parents: Vec<Vec<Boolean>>,
    layer: UInt32,
    node: UInt64,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    crate::witness_gadgets::create_label(cs, replica_id, parents, layer, node)
}
