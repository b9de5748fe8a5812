//! Our circuit for one SnapDeals (empty sector update) partition: the same
//! R1CS as storage-proofs-update's `EmptySectorUpdateCircuit` (same
//! constraints in the same order, same variable numbering, same public
//! inputs) and the same witness, built from the partition's vanilla proof
//! or blank (setup, PCE recording).
//!
//! It exists for what `EmptySectorUpdateCircuit` cannot do: compute its
//! gadgets' witnesses on values, without their linear combinations
//! (`crate::witness_gadgets`: the SHA-256 nodes of tree D and the apex
//! tree, the Poseidon nodes of trees R, phi, rho and the challenge digests)
//! and build the linear combinations of its own bit decompositions only
//! where a constraint system records them.
//!
//! What a partition allocates, in order: the public `k_and_h_select` (the
//! partition index k in the low bits, then one set bit choosing h) and its
//! bits; k packed; the public comm_r_old, comm_d_new, comm_r_new; phi =
//! Poseidon(comm_d_new, comm_r_old); the private comm_c, tree roots, apex
//! leaves and partition path; comm_r_old / comm_r_new = Poseidon(comm_c,
//! root) checked; the apex tree ([`apex`]); the challenges' bits
//! ([`challenge_bits`]); then each challenge ([`challenge`]). The
//! challenges are independent given what precedes them, so the R1CS is
//! recorded with each on a thread of its own when asked
//! ([`UpdatePartition::record_on_threads`]: setup, a circuit's first proof);
//! any other constraint system synthesizes them in order.
//!
//! `bits`: decompositions and packing; `inclusion`: a Merkle path whose
//! index bits are the challenge's.

mod apex;
mod bits;
mod challenge;
mod challenge_bits;
mod inclusion;

use apex::apex_por;
use bellpepper_core::boolean::AllocatedBit;
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use bits::{decompose, pack};
use blstrs::Scalar as Fr;
use challenge::{Challenge, Shared, Siblings};
use challenge_bits::challenge_bits;
use super::threaded_witness::in_order_on_threads;
use crate::pce::{Part, Recorder};
use crate::witness_gadgets::poseidon_hash;
use filecoin_hashers::PoseidonArity;
use std::marker::PhantomData;
use storage_proofs_core::gadgets::constraint;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_update::constants::{hs, TreeRHasher, POSEIDON_CONSTANTS_GEN_RANDOMNESS};
use storage_proofs_update::{PartitionProof, PublicInputs, PublicParams};
use typenum::{Unsigned, U2};

/// One SnapDeals partition circuit for sectors of tree shape `Tree`.
pub struct UpdatePartition<Tree> {
    pp: PublicParams,
    k_and_h_select: Option<Fr>,
    comm_r_old: Option<Fr>,
    comm_d_new: Option<Fr>,
    comm_r_new: Option<Fr>,
    comm_c: Option<Fr>,
    root_r_old: Option<Fr>,
    root_r_new: Option<Fr>,
    apex_leaves: Vec<Option<Fr>>,
    /// Tree D's siblings from the apex root up to comm_d_new: the top of
    /// every challenge's tree D path.
    partition_path: Vec<Option<Fr>>,
    challenges: Vec<Challenge>,
    _tree: PhantomData<fn() -> Tree>,
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> UpdatePartition<Tree> {
    /// The circuit of partition `k`: its vanilla proof and the sector's
    /// public values, as `EmptySectorUpdateCompound::circuit` takes them.
    pub fn new(pp: &PublicParams, inputs: &PublicInputs, proof: &PartitionProof<Tree>, k: usize) -> anyhow::Result<Self> {
        anyhow::ensure!(k < pp.partition_count, "partition {k} of a sector with {} partitions", pp.partition_count);
        let h_index = hs(pp.sector_nodes)
            .iter()
            .position(|&h| h == inputs.h)
            .ok_or_else(|| anyhow::anyhow!("h = {} is not one of {:?}", inputs.h, hs(pp.sector_nodes)))?;
        let k_and_h_select = k as u64 | (1 << h_index) << pp.partition_bit_len;
        anyhow::ensure!(
            proof.apex_leafs.len() == pp.apex_leaf_count,
            "{} apex leaves, the sector size has {}",
            proof.apex_leafs.len(),
            pp.apex_leaf_count
        );
        anyhow::ensure!(
            proof.challenge_proofs.len() == pp.challenge_count,
            "{} challenge proofs, the sector size has {}",
            proof.challenge_proofs.len(),
            pp.challenge_count
        );
        let blank = Self::blank(pp);
        let below_apex = blank.challenges.first().map_or(0, |c| c.path_d_len());
        let (mut challenges, mut top, mut roots) = (Vec::with_capacity(pp.challenge_count), None, None);
        for (i, p) in proof.challenge_proofs.iter().enumerate() {
            let (c, above, r) = Challenge::from_vanilla(p, below_apex)?;
            anyhow::ensure!(c.same_shape(&blank.challenges[i]), "challenge {i}: its Merkle paths have the wrong shape");
            anyhow::ensure!(above.len() == pp.apex_leaf_bit_len + pp.partition_bit_len, "challenge {i}: a tree D path of the wrong length");
            let path = above[pp.apex_leaf_bit_len..].to_vec();
            // Every challenge's tree D path must end in the partition's path.
            anyhow::ensure!(top.get_or_insert_with(|| path.clone()) == &path, "challenge {i}: its tree D path leaves the partition's");
            roots.get_or_insert(r);
            challenges.push(c);
        }
        let [root_r_old, root_r_new] = roots.ok_or_else(|| anyhow::anyhow!("a partition without challenges"))?.map(Some);
        Ok(UpdatePartition {
            pp: pp.clone(),
            k_and_h_select: Some(Fr::from(k_and_h_select)),
            comm_r_old: Some(inputs.comm_r_old.into()),
            comm_d_new: Some(inputs.comm_d_new.into()),
            comm_r_new: Some(inputs.comm_r_new.into()),
            comm_c: Some(proof.comm_c.into()),
            root_r_old,
            root_r_new,
            apex_leaves: proof.apex_leafs.iter().map(|&l| Some(l.into())).collect(),
            partition_path: top.unwrap_or_default(),
            challenges,
            _tree: PhantomData,
        })
    }

    /// The circuit without a witness, as `EmptySectorUpdateCompound::blank_circuit`.
    pub fn blank(pp: &PublicParams) -> Self {
        let below_apex = pp.challenge_bit_len.saturating_sub(pp.partition_bit_len + pp.apex_leaf_bit_len);
        let path_r = blank_tree_r_path::<Tree>(pp.challenge_bit_len);
        UpdatePartition {
            pp: pp.clone(),
            k_and_h_select: None,
            comm_r_old: None,
            comm_d_new: None,
            comm_r_new: None,
            comm_c: None,
            root_r_old: None,
            root_r_new: None,
            apex_leaves: vec![None; pp.apex_leaf_count],
            partition_path: vec![None; pp.partition_bit_len],
            challenges: (0..pp.challenge_count).map(|_| Challenge::blank(&path_r, below_apex)).collect(),
            _tree: PhantomData,
        }
    }
}

/// A tree R path's levels for `bits` index bits: base levels, then the
/// sub-tree's and the top's where the shape has them.
fn blank_tree_r_path<Tree: MerkleTreeTrait>(bits: usize) -> Siblings {
    let level = |arity: usize| vec![None; arity - 1];
    let tail: Vec<usize> = [Tree::SubTreeArity::to_usize(), Tree::TopTreeArity::to_usize()].into_iter().filter(|&a| a > 0).collect();
    let base_bits = bits.saturating_sub(tail.iter().map(|a| a.trailing_zeros() as usize).sum());
    let base = Tree::Arity::to_usize();
    let mut path = vec![level(base); base_bits / base.trailing_zeros() as usize];
    path.extend(tail.into_iter().map(level));
    path
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> UpdatePartition<Tree> {
    /// Records the partition's R1CS (and its witness, when `W`) into `cs`,
    /// its challenges on `threads` threads: each into a [`Part`] of its own
    /// that stands in for the shared values and its own random bits,
    /// appended in challenge order, which is the sequential recording
    /// exactly. A 32 GiB partition's recording (setup, a circuit's first
    /// proof) then spreads over its challenges; the appends stay sequential.
    pub(crate) fn record_on_threads<const W: bool>(mut self, cs: &mut Recorder<W>, threads: usize) -> Result<(), SynthesisError> {
        let (shared, bits) = self.shared(cs)?;
        let challenges: Vec<_> = std::mem::take(&mut self.challenges).into_iter().zip(bits).collect();
        let record = |i, (c, bits): (Challenge, Vec<AllocatedBit>)| {
            let (mut part, (read_shared, read_bits)) = Part::new(shared.variables(&bits), |own| shared.stand_ins(own, &bits))?;
            c.synthesize::<Tree, _>(part.cs().namespace(|| format!("challenge {i}")), read_bits, &read_shared)?;
            Ok(part)
        };
        in_order_on_threads(challenges, threads, record, |part| cs.append_part(part))
    }

    /// Allocates everything before the challenges, in
    /// `EmptySectorUpdateCircuit`'s order: returns what every challenge
    /// shares and each challenge's random bits.
    fn shared<CS: ConstraintSystem<Fr>>(&self, cs: &mut CS) -> Result<(Shared, Vec<Vec<AllocatedBit>>), SynthesisError> {
        let pp = &self.pp;
        let hs = hs(pp.sector_nodes).to_vec();
        let alloc = |cs: &mut CS, name: &str, v: Option<Fr>| {
            AllocatedNum::alloc(cs.namespace(|| name), || v.ok_or(SynthesisError::AssignmentMissing))
        };
        let public = |cs: &mut CS, name: &str, v: Option<Fr>| {
            let num = alloc(cs, name, v)?;
            num.inputize(cs.namespace(|| format!("{name} (public input)")))?;
            Ok::<_, SynthesisError>(num)
        };

        let k_and_h_select = public(cs, "k_and_h_select", self.k_and_h_select)?;
        let mut partition_bits = decompose(cs.namespace(|| "k_and_h_select bits"), &k_and_h_select, pp.partition_bit_len + hs.len())?;
        let h_select_bits = partition_bits.split_off(pp.partition_bit_len);
        let partition = pack(cs.namespace(|| "pack partition bits"), &partition_bits)?;
        let comm_r_old = public(cs, "comm_r_old", self.comm_r_old)?;
        let comm_d_new = public(cs, "comm_d_new", self.comm_d_new)?;
        let comm_r_new = public(cs, "comm_r_new", self.comm_r_new)?;
        let phi = poseidon_hash(cs.namespace(|| "phi"), vec![comm_d_new.clone(), comm_r_old.clone()], &*POSEIDON_CONSTANTS_GEN_RANDOMNESS)?;

        let comm_c = alloc(cs, "comm_c", self.comm_c)?;
        let root_r_old = alloc(cs, "root_r_old", self.root_r_old)?;
        let root_r_new = alloc(cs, "root_r_new", self.root_r_new)?;
        let apex_leaves = self
            .apex_leaves
            .iter()
            .enumerate()
            .map(|(i, &v)| alloc(cs, &format!("apex_leaf_{i}"), v))
            .collect::<Result<Vec<_>, _>>()?;
        let partition_path = self
            .partition_path
            .iter()
            .enumerate()
            .map(|(i, &v)| alloc(cs, &format!("partition_path_sibling_{i}"), v).map(|s| vec![s]))
            .collect::<Result<Vec<_>, _>>()?;

        // comm_r = H(comm_c, root_r) for the old and the new replica.
        for (name, root, comm_r) in [("comm_r_old_calc", &root_r_old, &comm_r_old), ("comm_r_new_calc", &root_r_new, &comm_r_new)] {
            let calc = poseidon_hash::<_, U2>(cs.namespace(|| name), vec![comm_c.clone(), root.clone()], U2::PARAMETERS())?;
            constraint::equal(cs, || format!("enforce {name} == comm_r"), &calc, comm_r);
        }
        apex_por(cs.namespace(|| "apex_gadget"), apex_leaves.clone(), &partition_bits, partition_path, &comm_d_new)?;

        let bits_per_challenge = pp.challenge_bit_len.checked_sub(pp.partition_bit_len).ok_or(SynthesisError::Unsatisfiable)?;
        let bits = challenge_bits(cs.namespace(|| "gen_challenge_bits"), &comm_r_new, &partition, self.challenges.len(), bits_per_challenge)?;
        Ok((Shared { phi, partition_bits, h_select_bits, hs, root_r_old, root_r_new, apex_leaves }, bits))
    }
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> Circuit<Fr> for UpdatePartition<Tree> {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let (shared, bits) = self.shared(cs)?;
        for (i, (c, bits)) in self.challenges.into_iter().zip(bits).enumerate() {
            c.synthesize::<Tree, _>(cs.namespace(|| format!("challenge {i}")), bits, &shared)?;
        }
        Ok(())
    }
}
