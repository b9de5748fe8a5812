//! One challenged node of a SnapDeals partition: its rho from phi and the
//! challenge's high bits, the new replica leaf computed from the old one and
//! the new data (r_new = r_old + d_new · rho), the old and new replica leaves
//! opened in trees R (Poseidon) and the data leaf opened in tree D
//! (SHA-256) up to the apex leaf its bits select. Constraint for
//! constraint the challenge loop of storage-proofs-update's
//! `EmptySectorUpdateCircuit::synthesize`.

use super::inclusion::{inclusion, Poseidon, Sha256};
use super::bits::pack;
use crate::witness_gadgets::poseidon_hash;
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use ff::Field;
use filecoin_hashers::Hasher;
use storage_proofs_core::gadgets::insertion::select;
use storage_proofs_core::merkle::{MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_update::constants::{TreeRHasher, POSEIDON_CONSTANTS_GEN_RANDOMNESS};
use storage_proofs_update::ChallengeProof;
use typenum::{U0, U2};

/// A path's siblings per level (`None` in the blank circuit).
pub(super) type Siblings = Vec<Vec<Option<Fr>>>;

pub(super) struct Challenge {
    leaf_r_old: Option<Fr>,
    leaf_d_new: Option<Fr>,
    /// The vanilla proof's new replica leaf, checked against the one the
    /// circuit computes.
    leaf_r_new: Option<Fr>,
    path_r_old: Siblings,
    path_r_new: Siblings,
    /// Tree D's siblings from the leaf up to the apex-leaf row.
    path_d: Vec<Option<Fr>>,
}

/// What the partition allocates once and every challenge uses.
pub(super) struct Shared {
    pub phi: AllocatedNum<Fr>,
    pub partition_bits: Vec<AllocatedBit>,
    pub h_select_bits: Vec<AllocatedBit>,
    /// The high-bit counts `h_select` chooses from.
    pub hs: Vec<usize>,
    pub root_r_old: AllocatedNum<Fr>,
    pub root_r_new: AllocatedNum<Fr>,
    pub apex_leaves: Vec<AllocatedNum<Fr>>,
}

impl Shared {
    /// The variables a challenge reads: the shared values, then its own
    /// random `bits`, in the order they were allocated, which
    /// [`Shared::stand_ins`] keeps (bellpepper sorts a linear combination's
    /// terms by variable, so a challenge recorded apart lists them as the
    /// sequential recording does).
    pub fn variables(&self, bits: &[AllocatedBit]) -> Vec<Variable> {
        let bit_variables = |b: &[AllocatedBit]| b.iter().map(AllocatedBit::get_variable).collect::<Vec<_>>();
        let nums = [&self.phi, &self.root_r_old, &self.root_r_new].into_iter().chain(&self.apex_leaves);
        let mut out = bit_variables(&self.partition_bits);
        out.extend(bit_variables(&self.h_select_bits));
        out.extend(nums.map(AllocatedNum::get_variable));
        out.extend(bit_variables(bits));
        out
    }

    /// The shared values and `bits` allocated again in `cs`, one variable
    /// per [`Shared::variables`] entry in its order: what a challenge
    /// recorded apart reads.
    pub fn stand_ins<CS: ConstraintSystem<Fr>>(&self, cs: &mut CS, bits: &[AllocatedBit]) -> Result<(Shared, Vec<AllocatedBit>), SynthesisError> {
        fn bits_again<CS: ConstraintSystem<Fr>>(cs: &mut CS, bits: &[AllocatedBit]) -> Result<Vec<AllocatedBit>, SynthesisError> {
            bits.iter().map(|b| AllocatedBit::alloc(&mut *cs, b.get_value())).collect()
        }
        fn num_again<CS: ConstraintSystem<Fr>>(cs: &mut CS, n: &AllocatedNum<Fr>) -> Result<AllocatedNum<Fr>, SynthesisError> {
            let value = n.get_value();
            AllocatedNum::alloc(&mut *cs, || value.ok_or(SynthesisError::AssignmentMissing))
        }
        let partition_bits = bits_again(cs, &self.partition_bits)?;
        let h_select_bits = bits_again(cs, &self.h_select_bits)?;
        let phi = num_again(cs, &self.phi)?;
        let root_r_old = num_again(cs, &self.root_r_old)?;
        let root_r_new = num_again(cs, &self.root_r_new)?;
        let apex_leaves = self.apex_leaves.iter().map(|n| num_again(cs, n)).collect::<Result<_, _>>()?;
        let own = bits_again(cs, bits)?;
        Ok((Shared { phi, partition_bits, h_select_bits, hs: self.hs.clone(), root_r_old, root_r_new, apex_leaves }, own))
    }
}

fn siblings<D: Into<Fr> + Copy>(path: Vec<(Vec<D>, usize)>) -> Siblings {
    path.into_iter().map(|(s, _)| s.into_iter().map(|d| Some(d.into())).collect()).collect()
}

impl Challenge {
    /// An unknown challenge: tree R paths of the shape `path_r`, a tree D
    /// path of `path_d` levels below the apex leaves.
    pub(super) fn blank(path_r: &Siblings, path_d: usize) -> Self {
        Challenge {
            leaf_r_old: None,
            leaf_d_new: None,
            leaf_r_new: None,
            path_r_old: path_r.clone(),
            path_r_new: path_r.clone(),
            path_d: vec![None; path_d],
        }
    }

    /// The challenge of a vanilla proof; also returns the tree D path's
    /// siblings above the apex-leaf row (`below_apex` levels are below it),
    /// and the roots of the old and new replica trees.
    pub(super) fn from_vanilla<Tree: MerkleTreeTrait<Hasher = TreeRHasher>>(
        p: &ChallengeProof<Tree>,
        below_apex: usize,
    ) -> anyhow::Result<(Self, Vec<Option<Fr>>, [Fr; 2])> {
        let path_d = siblings(p.proof_d_new.path());
        anyhow::ensure!(path_d.iter().all(|s| s.len() == 1), "a tree D path level without exactly one sibling");
        anyhow::ensure!(path_d.len() >= below_apex, "a tree D path of {} levels, below its apex leaf {below_apex}", path_d.len());
        let mut path_d: Vec<Option<Fr>> = path_d.into_iter().flatten().collect();
        let above = path_d.split_off(below_apex);
        let leaf = |d: <TreeRHasher as Hasher>::Domain| Some(d.into());
        let challenge = Challenge {
            leaf_r_old: leaf(p.proof_r_old.leaf()),
            leaf_d_new: Some(p.proof_d_new.leaf().into()),
            leaf_r_new: leaf(p.proof_r_new.leaf()),
            path_r_old: siblings(p.proof_r_old.path()),
            path_r_new: siblings(p.proof_r_new.path()),
            path_d,
        };
        Ok((challenge, above, [p.proof_r_old.root().into(), p.proof_r_new.root().into()]))
    }

    /// Tree D's levels below the apex-leaf row.
    pub(super) fn path_d_len(&self) -> usize {
        self.path_d.len()
    }

    /// Whether the paths have the shape of `blank`'s.
    pub(super) fn same_shape(&self, blank: &Challenge) -> bool {
        let shape = |p: &Siblings| p.iter().map(Vec::len).collect::<Vec<_>>();
        shape(&self.path_r_old) == shape(&blank.path_r_old)
            && shape(&self.path_r_new) == shape(&blank.path_r_new)
            && self.path_d.len() == blank.path_d.len()
    }

    /// `bits`: the challenge's random bits (below the partition index's).
    pub(super) fn synthesize<Tree, CS>(
        self,
        mut cs: CS,
        bits: Vec<AllocatedBit>,
        shared: &Shared,
    ) -> Result<(), SynthesisError>
    where
        Tree: MerkleTreeTrait<Hasher = TreeRHasher>,
        CS: ConstraintSystem<Fr>,
    {
        let c_bits: Vec<AllocatedBit> = bits.into_iter().chain(shared.partition_bits.iter().cloned()).collect();
        let c_high = high_bits(cs.namespace(|| "get_challenge_high_bits"), &c_bits, &shared.h_select_bits, &shared.hs)?;
        let rho = poseidon_hash(cs.namespace(|| "rho"), vec![shared.phi.clone(), c_high], &*POSEIDON_CONSTANTS_GEN_RANDOMNESS)?;

        let alloc = |cs: &mut CS, name: &'static str, v: Option<Fr>| {
            AllocatedNum::alloc(cs.namespace(|| name), || v.ok_or(SynthesisError::AssignmentMissing))
        };
        let leaf_r_old = alloc(&mut cs, "leaf_r_old", self.leaf_r_old)?;
        let leaf_d_new = alloc(&mut cs, "leaf_d_new", self.leaf_d_new)?;
        let leaf_r_new = encode(cs.namespace(|| "leaf_r_new"), &leaf_r_old, &leaf_d_new, &rho)?;
        if let Some(computed) = leaf_r_new.get_value() {
            if self.leaf_r_new != Some(computed) {
                return Err(SynthesisError::Unsatisfiable);
            }
        }

        // The old replica leaf, then the new one, each under its tree R root.
        let replicas = [("r_old", leaf_r_old, self.path_r_old, &shared.root_r_old), ("r_new", leaf_r_new, self.path_r_new, &shared.root_r_new)];
        for (tree, leaf, path, root) in replicas {
            let path = alloc_path(cs.namespace(|| format!("path_{tree}")), path)?;
            inclusion::<Poseidon, Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity, _>(
                cs.namespace(|| format!("por tree_{tree}")),
                &c_bits,
                leaf,
                path,
                root,
            )?;
        }

        // The apex leaf the bits above the path's select, then the path to it.
        let below_apex = self.path_d.len();
        let apex_bits = shared.apex_leaves.len().trailing_zeros() as usize;
        if below_apex + apex_bits + shared.partition_bits.len() != c_bits.len() || !shared.apex_leaves.len().is_power_of_two() {
            return Err(SynthesisError::Unsatisfiable);
        }
        let select_bits: Vec<Boolean> = c_bits[below_apex..below_apex + apex_bits].iter().cloned().map(Boolean::from).collect();
        let apex_leaf = select(cs.namespace(|| "select_apex_leaf"), &shared.apex_leaves, &select_bits)?;
        let path_d = alloc_path(cs.namespace(|| "path_to_apex_leaf"), self.path_d.into_iter().map(|s| vec![s]).collect())?;
        inclusion::<Sha256, U2, U0, U0, _>(cs.namespace(|| "por to_apex_leaf"), &c_bits[..below_apex], leaf_d_new, path_d, &apex_leaf)
    }
}

/// Allocates a path's siblings, level by level.
fn alloc_path<CS: ConstraintSystem<Fr>>(mut cs: CS, path: Siblings) -> Result<Vec<Vec<AllocatedNum<Fr>>>, SynthesisError> {
    path.into_iter()
        .enumerate()
        .map(|(row, level)| {
            level
                .into_iter()
                .enumerate()
                .map(|(i, s)| {
                    AllocatedNum::alloc(cs.namespace(|| format!("sibling (tree_row={row}, sibling_index={i})")), || {
                        s.ok_or(SynthesisError::AssignmentMissing)
                    })
                })
                .collect()
        })
        .collect()
}

/// The challenge's `h` high bits as a number, `h` chosen by the one set bit
/// of `h_select` among `hs` (storage-proofs-update's
/// `get_challenge_high_bits`): each candidate packed and multiplied by its
/// select bit, then summed.
fn high_bits<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    c_bits: &[AllocatedBit],
    h_select_bits: &[AllocatedBit],
    hs: &[usize],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    if h_select_bits.len() != hs.len() || hs.iter().any(|&h| h > c_bits.len()) {
        return Err(SynthesisError::Unsatisfiable);
    }
    let mut candidates = Vec::with_capacity(hs.len());
    for (k, (&h, select_bit)) in hs.iter().zip(h_select_bits).enumerate() {
        let c_high = pack(cs.namespace(|| format!("c_high (h={h}, k={k})")), &c_bits[c_bits.len() - h..])?;
        let or_zero = AllocatedNum::alloc(cs.namespace(|| format!("c_high_or_zero (h={h}, k={k})")), || {
            if select_bit.get_value().ok_or(SynthesisError::AssignmentMissing)? {
                c_high.get_value().ok_or(SynthesisError::AssignmentMissing)
            } else {
                Ok(Fr::ZERO)
            }
        })?;
        cs.enforce(
            || format!("c_high_or_zero == c_high * h_select_bit (h={h}, k={k})"),
            |lc| lc + c_high.get_variable(),
            |lc| lc + select_bit.get_variable(),
            |lc| lc + or_zero.get_variable(),
        );
        candidates.push(or_zero);
    }
    let selected = AllocatedNum::alloc(cs.namespace(|| "c_high_selected"), || {
        candidates.iter().try_fold(Fr::ZERO, |sum, c| c.get_value().map(|v| sum + v)).ok_or(SynthesisError::AssignmentMissing)
    })?;
    cs.enforce(
        || "c_high_selected == dot(c_highs, h_select_bits)",
        |lc| candidates.iter().fold(lc, |lc, c| lc + c.get_variable()),
        |lc| lc + CS::one(),
        |lc| lc + selected.get_variable(),
    );
    Ok(selected)
}

/// The new replica leaf, r_old + d_new · rho (storage-proofs-update's
/// `label_r_new`): the product, then the sum.
fn encode<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    r_old: &AllocatedNum<Fr>,
    d_new: &AllocatedNum<Fr>,
    rho: &AllocatedNum<Fr>,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let product = AllocatedNum::alloc(cs.namespace(|| "label_d_new * rho"), || {
        Ok(d_new.get_value().ok_or(SynthesisError::AssignmentMissing)? * rho.get_value().ok_or(SynthesisError::AssignmentMissing)?)
    })?;
    cs.enforce(
        || "multiplication constraint",
        |lc| lc + d_new.get_variable(),
        |lc| lc + rho.get_variable(),
        |lc| lc + product.get_variable(),
    );
    let r_new = AllocatedNum::alloc(cs.namespace(|| "label_r_new"), || {
        Ok(r_old.get_value().ok_or(SynthesisError::AssignmentMissing)? + product.get_value().ok_or(SynthesisError::AssignmentMissing)?)
    })?;
    cs.enforce(
        || "label_r_new == label_r_old + label_d_new * rho",
        |lc| lc + r_old.get_variable() + product.get_variable(),
        |lc| lc + CS::one(),
        |lc| lc + r_new.get_variable(),
    );
    Ok(r_new)
}
