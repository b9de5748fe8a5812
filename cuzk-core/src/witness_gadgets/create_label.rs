//! A stacked-DRG label's witness: storage-proofs-porep 19's
//! `create_label_circuit` (SHA-256 of the replica id, layer and node, and
//! the node's parents, packed into a field element) with the hash computed
//! by [`super::sha256_packed`]'s witness generator.

use bellpepper_core::boolean::Boolean;
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use bellperson::gadgets::uint32::UInt32;
use blstrs::Scalar as Fr;
use storage_proofs_core::gadgets::uint64::UInt64;
use storage_proofs_porep::stacked::{create_label_circuit, TOTAL_PARENTS};

use super::sha256_packed::packed_witness;

/// The label of `node` in layer `layer_index`: the same variables, in the
/// same order, and the same value as `create_label_circuit`. Into a witness
/// generator with every bit's value known, the SHA-256 is computed without
/// its constraints and its digest bits are plain values (the gadget's only
/// use of them is the packing); otherwise it runs `create_label_circuit`.
pub fn create_label<CS: ConstraintSystem<Fr>>(
    cs: CS,
    replica_id: &[Boolean],
    parents: Vec<Vec<Boolean>>,
    layer_index: UInt32,
    node: UInt64,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    if !cs.is_witness_generator() {
        return create_label_circuit(cs, replica_id, parents, layer_index, node);
    }
    assert!(replica_id.len() >= 32, "replica id is too small");
    assert!(replica_id.len() <= 256, "replica id is too large");
    assert_eq!(parents.len(), TOTAL_PARENTS, "invalid sized parents");

    // replica id | layer, node | each parent, every part zero-padded to 32 bytes
    // (the layer and node together).
    let mut message = replica_id.to_vec();
    message.resize(256, Boolean::Constant(false));
    message.extend(layer_index.clone().into_bits_be());
    message.extend(node.to_bits_be());
    message.resize(512, Boolean::Constant(false));
    for parent in &parents {
        message.extend_from_slice(parent);
        message.resize(message.len().next_multiple_of(256), Boolean::Constant(false));
    }
    assert_eq!(message.len(), (2 + TOTAL_PARENTS) * 256);
    if message.iter().any(|b| b.get_value().is_none()) {
        return create_label_circuit(cs, replica_id, parents, layer_index, node);
    }

    // The gadget hashes and packs as the SHA-256 hasher's `hash_circuit` does.
    packed_witness(cs, &message)
}
