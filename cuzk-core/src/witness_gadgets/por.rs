//! Merkle inclusion (proof of retrievability): storage-proofs-core's
//! `PoRCircuit::synthesize` with the per-level hash computed by our witness
//! generators ([`sha256_multi_leaf`], [`poseidon_hash`]) instead of the
//! gadgets.
//!
//! What the circuit allocates: the leaf value; per level of the base, sub
//! and top paths the index bits (least significant first), the sibling
//! elements, the `insert` gadget's outputs and the hash of the level's
//! arity; then the packed path bits as inputs, the root, and the root as an
//! input unless the inclusion is private. `insert` builds its linear
//! combinations only inside enforce closures, so it is reused as is.

use std::any::TypeId;

use bellpepper::gadgets::multipack;
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use filecoin_hashers::poseidon::PoseidonHasher;
use filecoin_hashers::sha256::Sha256Hasher;
use filecoin_hashers::{Hasher, PoseidonArity};
use storage_proofs_core::gadgets::constraint;
use storage_proofs_core::gadgets::insertion::insert;
use storage_proofs_core::gadgets::por::{AuthPath, PoRCircuit};
use storage_proofs_core::gadgets::variables::Root;
use storage_proofs_core::merkle::{DiskStore, MerkleTreeWrapper};

use super::{poseidon_hash, sha256_multi_leaf};

/// One level of an authentication path as a vanilla Merkle proof's
/// `as_options()` gives it: the siblings and the index within the level.
pub type PathLevel = (Vec<Option<Fr>>, Option<usize>);

/// `PoRCircuit::<MerkleTreeWrapper<H, DiskStore<_>, U, V, W>>::synthesize(cs,
/// value, path.into(), root, private)`: the same variables in the same
/// order. Into a witness generator, for SHA-256 or Poseidon trees, with the
/// value, the root and every sibling and index known, the hashes are our
/// witness generators; otherwise `PoRCircuit` itself runs.
pub fn por<H, U, V, W, CS>(mut cs: CS, value: Root<Fr>, path: Vec<PathLevel>, root: Root<Fr>, private: bool) -> Result<(), SynthesisError>
where
    H: 'static + Hasher,
    U: 'static + PoseidonArity,
    V: 'static + PoseidonArity,
    W: 'static + PoseidonArity,
    CS: ConstraintSystem<Fr>,
{
    let known = |r: &Root<Fr>| match r {
        Root::Var(n) => n.get_value().is_some(),
        Root::Val(v) => v.is_some(),
    };
    let hasher_known = TypeId::of::<H>() == TypeId::of::<Sha256Hasher>() || TypeId::of::<H>() == TypeId::of::<PoseidonHasher>();
    let path_known = path.iter().all(|(hashes, index)| index.is_some() && hashes.iter().all(Option::is_some));
    if !(cs.is_witness_generator() && hasher_known && path_known && known(&value) && known(&root)) {
        let auth_path: AuthPath<H, U, V, W> = path.into();
        return PoRCircuit::<MerkleTreeWrapper<H, DiskStore<H::Domain>, U, V, W>>::synthesize(cs, value, auth_path, root, private);
    }

    // The split `AuthPath::from` makes: the last level is the top tree's
    // when there is one, the one before it (or the last) the sub tree's.
    let tail = match (V::to_usize() > 0, W::to_usize() > 0) {
        (_, true) => 2,
        (true, false) => 1,
        (false, false) => 0,
    };
    assert!(path.len() >= tail, "an authentication path shorter than its sub and top levels");
    let mut base = path;
    let mut rest = base.split_off(base.len() - tail);
    let top = if W::to_usize() > 0 { rest.pop() } else { None };
    let sub = if V::to_usize() > 0 { rest.pop() } else { None };

    let cur = value.allocated(cs.namespace(|| "value"))?;
    let mut bits = Vec::new();
    let cur = sub_path::<H, U, _>(cs.namespace(|| "base"), cur, base, &mut bits)?;
    let cur = sub_path::<H, V, _>(cs.namespace(|| "sub"), cur, sub.into_iter().collect(), &mut bits)?;
    let computed_root = sub_path::<H, W, _>(cs.namespace(|| "top"), cur, top.into_iter().collect(), &mut bits)?;

    multipack::pack_into_inputs(cs.namespace(|| "path"), &bits)?;
    let rt = root.allocated(cs.namespace(|| "root_value"))?;
    constraint::equal(&mut cs, || "enforce root is correct", &computed_root, &rt);
    if !private {
        rt.inputize(cs.namespace(|| "root"))?;
    }
    Ok(())
}

/// One of the base, sub and top paths of arity `A`, from `cur` up; appends
/// its index bits to `bits` and returns the subtree's root.
fn sub_path<H, A, CS>(
    mut cs: CS,
    mut cur: AllocatedNum<Fr>,
    levels: Vec<PathLevel>,
    bits: &mut Vec<Boolean>,
) -> Result<AllocatedNum<Fr>, SynthesisError>
where
    H: 'static + Hasher,
    A: 'static + PoseidonArity,
    CS: ConstraintSystem<Fr>,
{
    let arity = A::to_usize();
    if arity == 0 {
        assert!(levels.is_empty(), "path levels for an absent sub or top tree");
        return Ok(cur);
    }
    assert_eq!(1, arity.count_ones(), "arity must be a power of two");
    let index_bit_count = arity.trailing_zeros() as usize;
    for (level, (hashes, index)) in levels.into_iter().enumerate() {
        let cs = &mut cs.namespace(|| format!("merkle tree hash {level}"));
        let mut index_bits = Vec::with_capacity(index_bit_count);
        for i in 0..index_bit_count {
            let bit = AllocatedBit::alloc(cs.namespace(|| format!("index bit {i}")), index.map(|x| (x >> i) & 1 == 1))?;
            index_bits.push(Boolean::from(bit));
        }
        bits.extend_from_slice(&index_bits);
        let siblings = hashes
            .iter()
            .enumerate()
            .map(|(i, h)| AllocatedNum::alloc(cs.namespace(|| format!("path element {i}")), || h.ok_or(SynthesisError::AssignmentMissing)))
            .collect::<Result<Vec<_>, _>>()?;
        let inserted = insert(cs, &cur, &index_bits, &siblings)?;
        let hash_cs = cs.namespace(|| "computation of commitment hash");
        cur = if TypeId::of::<H>() == TypeId::of::<Sha256Hasher>() {
            sha256_multi_leaf(hash_cs, &inserted)?
        } else {
            poseidon_hash(hash_cs, inserted, A::PARAMETERS())?
        };
    }
    Ok(cur)
}
