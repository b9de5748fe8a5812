//! A Merkle inclusion proof with a private root, as storage-proofs'
//! `PoRCircuit` (through `crate::witness_gadgets::por`, which computes the
//! node hashes on values into a witness generator): the path in the form
//! of a vanilla Merkle proof's `as_options()`, or blank. PoRep and PoSt
//! partitions open their trees through it.

use crate::witness_gadgets::{por, PathLevel};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use filecoin_hashers::{Hasher, PoseidonArity};
use std::marker::PhantomData;
use storage_proofs_core::gadgets::variables::Root;
use storage_proofs_core::merkle::{base_path_length, MerkleTreeTrait};

/// A path in a tree of hasher `H`, base arity `U`, sub-tree arity `V` and
/// top arity `W` (0: none): the base levels, then the sub-tree's and the
/// top's (one each where the tree has them).
pub(crate) struct MerklePath<H, U, V, W> {
    levels: Vec<PathLevel>,
    _tree: PhantomData<fn() -> (H, U, V, W)>,
}

/// A path in a tree of shape `Tree` (tree C or R).
pub(crate) type TreePath<Tree> = MerklePath<
    <Tree as MerkleTreeTrait>::Hasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;

impl<H: 'static + Hasher, U: 'static + PoseidonArity, V: 'static + PoseidonArity, W: 'static + PoseidonArity>
    MerklePath<H, U, V, W>
{
    /// The path of an unknown leaf of a tree of `leaves` leaves.
    pub(crate) fn blank(leaves: usize) -> Self {
        let level = |arity: usize| (vec![None; arity - 1], None);
        let mut levels = vec![level(U::to_usize()); base_path_length::<U, V, W>(leaves)];
        levels.extend([V::to_usize(), W::to_usize()].into_iter().filter(|&a| a > 0).map(level));
        MerklePath { levels, _tree: PhantomData }
    }

    pub(crate) fn from_options(levels: Vec<PathLevel>) -> Self {
        MerklePath { levels, _tree: PhantomData }
    }

    /// Proves the allocated `leaf` under `root`.
    pub(crate) fn synthesize<CS: ConstraintSystem<Fr>>(
        self,
        cs: CS,
        leaf: &AllocatedNum<Fr>,
        root: &AllocatedNum<Fr>,
    ) -> Result<(), SynthesisError> {
        self.synthesize_leaf(cs, Root::from_allocated::<CS>(leaf.clone()), root)
    }

    /// Proves `leaf` under `root`; a leaf given as a value is allocated
    /// first, inside the proof.
    pub(crate) fn synthesize_leaf<CS: ConstraintSystem<Fr>>(
        self,
        cs: CS,
        leaf: Root<Fr>,
        root: &AllocatedNum<Fr>,
    ) -> Result<(), SynthesisError> {
        por::<H, U, V, W, CS>(cs, leaf, self.levels, Root::from_allocated::<CS>(root.clone()), true)
    }
}
