//! A parent's column: its label in every layer, and the path that opens
//! the column's hash in tree C (comm_c).

use crate::filecoin::merkle_path::TreePath;
use crate::witness_gadgets::poseidon_hash;
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use filecoin_hashers::{Hasher, POSEIDON_CONSTANTS_11, POSEIDON_CONSTANTS_2};
use serde::Deserialize;
use storage_proofs_core::merkle::{MerkleProof, MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_porep::stacked::ColumnProof;
use typenum::{U11, U2};

/// The Merkle proof type of a column in tree C of shape `Tree`.
pub(super) type TreeProof<Tree> = MerkleProof<
    <Tree as MerkleTreeTrait>::Hasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;

pub(super) struct Column<Tree: MerkleTreeTrait> {
    /// One label per layer (`None` in the blank circuit).
    rows: Vec<Option<Fr>>,
    path: TreePath<Tree>,
}

/// A column proof's parts that storage-proofs keeps crate-private (the
/// rows and the inclusion proof), read through its serde form by name.
#[derive(Deserialize)]
struct ColumnProofParts<D, P> {
    column: ColumnParts<D>,
    inclusion_proof: P,
}

#[derive(Deserialize)]
struct ColumnParts<D> {
    rows: Vec<D>,
}

impl<Tree: 'static + MerkleTreeTrait> Column<Tree> {
    pub(super) fn blank(layers: usize, leaves: usize) -> Self {
        Column { rows: vec![None; layers], path: TreePath::<Tree>::blank(leaves) }
    }

    pub(super) fn from_vanilla(proof: &ColumnProof<TreeProof<Tree>>) -> anyhow::Result<Self> {
        let parts: ColumnProofParts<<Tree::Hasher as Hasher>::Domain, TreeProof<Tree>> =
            serde_json::from_value(serde_json::to_value(proof)?)?;
        Ok(Column {
            rows: parts.column.rows.into_iter().map(|r| Some(r.into())).collect(),
            path: TreePath::<Tree>::from_options(parts.inclusion_proof.as_options()),
        })
    }

    /// The path alone (the challenged node's own column is allocated as
    /// the labels the circuit recomputes, not from its rows).
    pub(super) fn into_path(self) -> TreePath<Tree> {
        self.path
    }

    pub(super) fn layers(&self) -> usize {
        self.rows.len()
    }

    /// Allocates the rows (in the namespaces StackedCircuit uses).
    pub(super) fn alloc<CS: ConstraintSystem<Fr>>(
        self,
        mut cs: CS,
    ) -> Result<(Vec<AllocatedNum<Fr>>, TreePath<Tree>), SynthesisError> {
        let mut cs = cs.namespace(|| "column");
        let rows = self
            .rows
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                AllocatedNum::alloc(cs.namespace(|| format!("column_num_row_{i}")), || {
                    v.ok_or(SynthesisError::AssignmentMissing)
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((rows, self.path))
    }
}

/// The Poseidon hash of a column (2 layers in test sectors, 11 in
/// production ones), as storage-proofs' `hash_single_column` computes it
/// (on values alone into a witness generator).
pub(super) fn column_hash<CS: ConstraintSystem<Fr>>(
    cs: CS,
    rows: &[AllocatedNum<Fr>],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    match rows.len() {
        2 => poseidon_hash::<CS, U2>(cs, rows.to_vec(), &*POSEIDON_CONSTANTS_2),
        11 => poseidon_hash::<CS, U11>(cs, rows.to_vec(), &*POSEIDON_CONSTANTS_11),
        // PoRep columns have 2 (test sectors) or 11 layers.
        _ => Err(SynthesisError::Unsatisfiable),
    }
}
