//! A Merkle inclusion proof whose index bits the circuit already holds (a
//! challenge's bits): storage-proofs-core's `por_no_challenge_input`, with
//! each node's hash through `crate::witness_gadgets` (computed on values
//! into a witness generator, the hasher's gadget otherwise).
//!
//! Per level, from the leaf up: the `insert` gadget puts the current node
//! among its siblings at the index the level's bits give (it builds its
//! linear combinations only inside constraint closures, so it is used as
//! is), and the children are hashed; the base levels, then the sub-tree's
//! and the top's where the tree has them. Last, computed root = root.

use crate::witness_gadgets::{poseidon_hash, sha256_multi_leaf};
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use filecoin_hashers::PoseidonArity;
use storage_proofs_core::gadgets::constraint;
use storage_proofs_core::gadgets::insertion::insert;

/// How a tree hashes a node's children.
pub(super) trait NodeHash {
    fn hash<A: 'static + PoseidonArity, CS: ConstraintSystem<Fr>>(
        cs: CS,
        children: &[AllocatedNum<Fr>],
    ) -> Result<AllocatedNum<Fr>, SynthesisError>;
}

/// Poseidon of the level's arity (trees R).
pub(super) struct Poseidon;

impl NodeHash for Poseidon {
    fn hash<A: 'static + PoseidonArity, CS: ConstraintSystem<Fr>>(
        cs: CS,
        children: &[AllocatedNum<Fr>],
    ) -> Result<AllocatedNum<Fr>, SynthesisError> {
        poseidon_hash::<CS, A>(cs, children.to_vec(), A::PARAMETERS())
    }
}

/// SHA-256 of the children packed into a field element (tree D).
pub(super) struct Sha256;

impl NodeHash for Sha256 {
    fn hash<A: 'static + PoseidonArity, CS: ConstraintSystem<Fr>>(
        cs: CS,
        children: &[AllocatedNum<Fr>],
    ) -> Result<AllocatedNum<Fr>, SynthesisError> {
        sha256_multi_leaf(cs, children)
    }
}

/// Proves `leaf` under `root` in a tree of base arity `U`, sub-tree arity
/// `V` and top arity `W` (0: none) hashed by `H`: `path` holds each
/// level's siblings (allocated by the caller), `bits` the leaf's index,
/// least significant first, exactly as many as the levels consume.
pub(super) fn inclusion<H, U, V, W, CS>(
    mut cs: CS,
    bits: &[AllocatedBit],
    leaf: AllocatedNum<Fr>,
    path: Vec<Vec<AllocatedNum<Fr>>>,
    root: &AllocatedNum<Fr>,
) -> Result<(), SynthesisError>
where
    H: NodeHash,
    U: 'static + PoseidonArity,
    V: 'static + PoseidonArity,
    W: 'static + PoseidonArity,
    CS: ConstraintSystem<Fr>,
{
    let tail = usize::from(V::to_usize() > 0) + usize::from(W::to_usize() > 0);
    let base = path.len().checked_sub(tail).ok_or(SynthesisError::Unsatisfiable)?;
    let mut bits = bits.iter().cloned().map(Boolean::from);
    let mut levels = path.into_iter();
    let mut cur = leaf;
    for height in 0..base {
        cur = level::<H, U, _>(&mut cs, height, &cur, levels.next(), &mut bits)?;
    }
    if V::to_usize() > 0 {
        cur = level::<H, V, _>(&mut cs, base, &cur, levels.next(), &mut bits)?;
    }
    if W::to_usize() > 0 {
        cur = level::<H, W, _>(&mut cs, base + 1, &cur, levels.next(), &mut bits)?;
    }
    if bits.next().is_some() {
        return Err(SynthesisError::Unsatisfiable);
    }
    constraint::equal(&mut cs, || "calculated root == provided root", &cur, root);
    Ok(())
}

/// One level of arity `A`: `cur` inserted among `siblings` at the index the
/// next bits give, hashed; returns the parent.
fn level<H, A, CS>(
    cs: &mut CS,
    height: usize,
    cur: &AllocatedNum<Fr>,
    siblings: Option<Vec<AllocatedNum<Fr>>>,
    bits: &mut impl Iterator<Item = Boolean>,
) -> Result<AllocatedNum<Fr>, SynthesisError>
where
    H: NodeHash,
    A: 'static + PoseidonArity,
    CS: ConstraintSystem<Fr>,
{
    let arity = A::to_usize();
    let siblings = siblings.ok_or(SynthesisError::Unsatisfiable)?;
    if !arity.is_power_of_two() || siblings.len() + 1 != arity {
        return Err(SynthesisError::Unsatisfiable);
    }
    let index = (0..arity.trailing_zeros()).map(|_| bits.next()).collect::<Option<Vec<_>>>().ok_or(SynthesisError::Unsatisfiable)?;
    let children = insert(&mut cs.namespace(|| format!("merkle proof insert (height={height})")), cur, &index, &siblings)?;
    H::hash::<A, _>(cs.namespace(|| format!("merkle proof hash (height={height})")), &children)
}
