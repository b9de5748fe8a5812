//! A partition's apex tree (storage-proofs-update's `apex_por`): the
//! partition's slice of tree D's apex-leaf row is hashed up to the apex
//! root, row by row, left to right (SHA-256 node hashes), and the apex root
//! is proven under comm_d by the partition path, whose index bits are the
//! partition index's. Every challenge's tree D path ends in an apex leaf, so
//! the levels above it are proven once per partition here.

use super::inclusion::{inclusion, Sha256};
use crate::witness_gadgets::sha256_multi_leaf;
use bellpepper_core::boolean::AllocatedBit;
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use typenum::{U0, U2};

pub(super) fn apex_por<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    apex_leaves: Vec<AllocatedNum<Fr>>,
    partition_bits: &[AllocatedBit],
    partition_path: Vec<Vec<AllocatedNum<Fr>>>,
    comm_d: &AllocatedNum<Fr>,
) -> Result<(), SynthesisError> {
    if !apex_leaves.len().is_power_of_two() {
        return Err(SynthesisError::Unsatisfiable);
    }
    let mut row = apex_leaves;
    let mut row_index = 0;
    while row.len() > 1 {
        row = row
            .chunks(2)
            .enumerate()
            .map(|(i, pair)| {
                sha256_multi_leaf(
                    cs.namespace(|| format!("apex_tree generation hash (tree_row={row_index}, siblings={i})")),
                    pair,
                )
            })
            .collect::<Result<_, _>>()?;
        row_index += 1;
    }
    let apex_root = row.pop().ok_or(SynthesisError::Unsatisfiable)?;
    inclusion::<Sha256, U2, U0, U0, _>(cs.namespace(|| "partition-tree por"), partition_bits, apex_root, partition_path, comm_d)
}
