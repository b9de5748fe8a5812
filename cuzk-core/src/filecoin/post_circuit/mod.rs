//! Our circuit for one PoSt partition (WindowPoSt partition, WinningPoSt):
//! the same R1CS as storage-proofs-post's `FallbackPoStCircuit` (same
//! constraints in the same order, same variable numbering, same public
//! inputs) and the same witness, built from the partition's vanilla proofs
//! or blank (setup, PCE recording).
//!
//! It exists for what `FallbackPoStCircuit` cannot do: compute its
//! Poseidon hashes (each sector's comm_r and its challenges' tree_r_last
//! paths) on values when only the witness is wanted
//! (`crate::witness_gadgets`). Its sectors are independent: a witness-only
//! synthesis may generate them on several threads
//! ([`PostPartition::with_threads`]; one by default, as the engine already
//! keeps every core busy), and a constraint system that can be extended
//! (classic proving into our `ProvingAssignment`) synthesizes groups of
//! sectors on [`crate::par::threads`] threads and appends them, as
//! `FallbackPoStCircuit` does; so does the PCE recorder (a 32 GiB
//! WindowPoSt partition's 125M constraints on one core took minutes).
//!
//! `sector`: one sector's comm_r check and inclusion proofs.

mod sector;

use super::threaded_witness::{extend_on_threads, witness_on_threads};
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use filecoin_hashers::poseidon::PoseidonHasher;
use filecoin_hashers::Hasher;
use sector::Sector;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_post::fallback::{Proof, PublicInputs, PublicParams};

/// One PoSt partition circuit for sectors of tree shape `Tree`.
pub struct PostPartition<Tree: MerkleTreeTrait> {
    sectors: Vec<Sector<Tree>>,
    /// Threads for a witness-only synthesis (`None`: one).
    threads: Option<usize>,
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = PoseidonHasher>> PostPartition<Tree> {
    /// The circuit of partition `k` (`None`: 0) of `inputs`' sectors, as
    /// `FallbackPoStCompound::circuit` builds it: `proof` holds one vanilla
    /// proof per sector the partition holds (filecoin-proofs pads a short
    /// partition by repeating its last sector's proof); a vanilla proof
    /// beyond `inputs`' sectors takes the last sector's public values.
    pub fn new(
        inputs: &PublicInputs<<PoseidonHasher as Hasher>::Domain>,
        proof: &Proof<Tree::Proof>,
        pp: &PublicParams,
        k: Option<usize>,
    ) -> anyhow::Result<Self> {
        anyhow::ensure!(
            proof.sectors.len() == pp.sector_count,
            "a PoSt partition of {} sectors with {} vanilla sector proofs",
            pp.sector_count,
            proof.sectors.len()
        );
        let k = k.unwrap_or(0);
        let public = inputs
            .sectors
            .chunks(pp.sector_count)
            .nth(k)
            .ok_or_else(|| anyhow::anyhow!("PoSt partition {k} of {} sectors has none", inputs.sectors.len()))?;
        let last = public.len() - 1;
        for (i, p) in proof.sectors.iter().enumerate() {
            anyhow::ensure!(p.inclusion_proofs.len() == pp.challenge_count, "PoSt sector proof {i}: {} challenges, expected {}", p.inclusion_proofs.len(), pp.challenge_count);
        }
        let sectors = proof.sectors.iter().enumerate().map(|(i, p)| Sector::from_vanilla(&public[i.min(last)], p)).collect();
        Ok(PostPartition { sectors, threads: None })
    }

    /// The circuit without a witness, as `FallbackPoStCompound::blank_circuit`.
    pub fn blank(pp: &PublicParams) -> Self {
        PostPartition { sectors: (0..pp.sector_count).map(|_| Sector::blank(pp)).collect(), threads: None }
    }

    /// Generates a witness on `n` threads (at least one).
    pub fn with_threads(mut self, n: usize) -> Self {
        self.threads = Some(n.max(1));
        self
    }
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = PoseidonHasher>> Circuit<Fr> for PostPartition<Tree> {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let PostPartition { sectors, threads } = self;
        let threads = threads.unwrap_or(1).min(sectors.len());
        if cs.is_witness_generator() && threads > 1 {
            return witness_on_threads(cs, sectors, threads, |i, s, w| s.synthesize(&mut w.namespace(|| format!("sector_{i}"))));
        }
        if CS::is_extensible() && !cs.is_witness_generator() && sectors.len() > 1 {
            return extend_by_groups(cs, sectors);
        }
        let cs = &mut cs.namespace(|| "outer namespace");
        for (i, s) in sectors.into_iter().enumerate() {
            s.synthesize(&mut cs.namespace(|| format!("sector_{i}")))?;
        }
        Ok(())
    }
}

/// Synthesizes contiguous groups of sectors into constraint systems of
/// their own on [`crate::par::threads`] threads and appends them in order:
/// several groups per thread, so that the parts waiting to be appended
/// hold a fraction of the partition beside the growing whole.
fn extend_by_groups<Tree, CS>(cs: &mut CS, mut sectors: Vec<Sector<Tree>>) -> Result<(), SynthesisError>
where
    Tree: 'static + MerkleTreeTrait<Hasher = PoseidonHasher>,
    CS: ConstraintSystem<Fr>,
{
    const GROUPS_PER_THREAD: usize = 8;
    let threads = crate::par::threads().max(1);
    let per_group = sectors.len().div_ceil(threads * GROUPS_PER_THREAD);
    let mut groups = Vec::new();
    while !sectors.is_empty() {
        let rest = sectors.split_off(per_group.min(sectors.len()));
        groups.push(std::mem::replace(&mut sectors, rest));
    }
    extend_on_threads(cs, groups, threads, |_, group, own| {
        for (i, sector) in group.into_iter().enumerate() {
            sector.synthesize(&mut own.namespace(|| format!("sector_{i}")))?;
        }
        Ok(())
    })
}
