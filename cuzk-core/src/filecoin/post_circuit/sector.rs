//! One sector of a PoSt partition: comm_r = H(comm_c, comm_r_last) (a
//! public input) and each challenged leaf of tree_r_last opened under
//! comm_r_last. Constraint for constraint storage-proofs-post's
//! `fallback::Sector` synthesis.

use crate::filecoin::merkle_path::TreePath;
use crate::witness_gadgets::poseidon_hash;
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use filecoin_hashers::poseidon::PoseidonHasher;
use filecoin_hashers::{Hasher, PoseidonArity};
use storage_proofs_core::gadgets::constraint;
use storage_proofs_core::gadgets::variables::Root;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::util::NODE_SIZE;
use storage_proofs_post::fallback::{PublicParams, PublicSector, SectorProof};
use typenum::U2;

pub(super) struct Sector<Tree: MerkleTreeTrait> {
    comm_r: Option<Fr>,
    comm_c: Option<Fr>,
    comm_r_last: Option<Fr>,
    /// The challenged leaves and their paths, one per challenge.
    leaves: Vec<Option<Fr>>,
    paths: Vec<TreePath<Tree>>,
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = PoseidonHasher>> Sector<Tree> {
    /// A sector without a witness, with `pp`'s challenges.
    pub(super) fn blank(pp: &PublicParams) -> Self {
        let leaves = pp.sector_size as usize / NODE_SIZE;
        Sector {
            comm_r: None,
            comm_c: None,
            comm_r_last: None,
            leaves: vec![None; pp.challenge_count],
            paths: (0..pp.challenge_count).map(|_| TreePath::<Tree>::blank(leaves)).collect(),
        }
    }

    /// The sector `public` proven by `proof` (its challenges' openings).
    pub(super) fn from_vanilla(public: &PublicSector<<PoseidonHasher as Hasher>::Domain>, proof: &SectorProof<Tree::Proof>) -> Self {
        Sector {
            comm_r: Some(public.comm_r.into()),
            comm_c: Some(proof.comm_c.into()),
            comm_r_last: Some(proof.comm_r_last.into()),
            leaves: proof.leafs().into_iter().map(|l| Some(l.into())).collect(),
            paths: proof.as_options().into_iter().map(TreePath::<Tree>::from_options).collect(),
        }
    }

    pub(super) fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let Sector { comm_r, comm_c, comm_r_last, leaves, paths } = self;
        if leaves.len() != paths.len() {
            return Err(SynthesisError::Unsatisfiable);
        }
        let alloc = |cs: &mut CS, name: &'static str, v: Option<Fr>| {
            AllocatedNum::alloc(cs.namespace(|| name), || v.ok_or(SynthesisError::AssignmentMissing))
        };
        let comm_r_last = alloc(cs, "comm_r_last", comm_r_last)?;
        let comm_c = alloc(cs, "comm_c", comm_c)?;
        let comm_r = alloc(cs, "comm_r", comm_r)?;
        comm_r.inputize(cs.namespace(|| "comm_r_input"))?;
        // filecoin-hashers' Poseidon hash2_circuit.
        let preimage = vec![comm_c, comm_r_last.clone()];
        let hash = poseidon_hash(cs.namespace(|| "H_comm_c_comm_r_last"), preimage, U2::PARAMETERS())?;
        constraint::equal(cs, || "enforce_comm_c_comm_r_last_hash_comm_r", &comm_r, &hash);
        for (i, (leaf, path)) in leaves.into_iter().zip(paths).enumerate() {
            path.synthesize_leaf(cs.namespace(|| format!("challenge_inclusion_{i}")), Root::Val(leaf), &comm_r_last)?;
        }
        Ok(())
    }
}
