//! SnapDeals (empty sector update) inputs: the partition proofs Curio
//! sends (bincode `PartitionProof`, one per partition) and the three
//! commitments, valid for filecoin-proofs' update verifier, made without a
//! sealed sector.
//!
//! The challenges derive from comm_r_new, so every tree's root exists
//! before them and every leaf can be opened ([`PeriodicTree`]): the old
//! replica and the new data repeat one pseudo-random block; the new
//! replica is the old one with the data encoded into it
//! (r_new = r_old + d_new · rho, rho from phi = H(comm_d_new, comm_r_old)
//! and the leaf's high `h` bits, filecoin-proofs' `phi` and `rho`), so it
//! repeats within each of the 2^h regions rho is constant on. comm_c is
//! pseudo-random: an update does not open tree_c. The proofs are checked
//! with filecoin-proofs' verifier before they are returned.

use super::sparse_tree::{prf, PeriodicTree, SparseTree};
use crate::filecoin::error::{FilecoinError, Result};
use crate::filecoin::kind::ProofType;
use crate::proof_kind::ProofKind;
use blstrs::Scalar as Fr;
use filecoin_hashers::{HashFunction, Hasher};
use filecoin_proofs::constants::*;
use filecoin_proofs::types::SectorUpdateConfig;
use filecoin_proofs_api::RegisteredUpdateProof;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_update::constants::{TreeDDomain, TreeDHasher, TreeRDomain, TreeRHasher};
use storage_proofs_update::{phi, rho, ChallengeProof, Challenges, EmptySectorUpdate, PartitionProof, PublicInputs, PublicParams};
use typenum::{U0, U2};

/// Leaves of the repeated block of the old replica and the new data.
const BLOCK_NODES: usize = 512;

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct SnapSpec {
    /// 2 KiB, 8 MiB, 512 MiB, 32 GiB or 64 GiB, in bytes.
    pub sector_size: u64,
    /// Everything random derives from it.
    pub seed: u64,
}

/// Generated SnapDeals partition proofs and the commitments a verifier needs.
pub struct SnapWorkload {
    pub registered_proof: RegisteredUpdateProof,
    pub comm_r_old: [u8; 32],
    pub comm_r_new: [u8; 32],
    pub comm_d_new: [u8; 32],
    /// bincode `PartitionProof`, one per partition, as Curio sends them.
    pub vanilla_proofs: Vec<Vec<u8>>,
}

/// Generates the partition proofs of `spec` (deterministic in it).
pub fn snap(spec: SnapSpec) -> Result<SnapWorkload> {
    let ProofType::Update(rp) = ProofType::current(ProofKind::SnapDealsUpdate, spec.sector_size)? else {
        unreachable!("the current SnapDeals proof type is an update proof")
    };
    match spec.sector_size {
        SECTOR_SIZE_2_KIB | SECTOR_SIZE_8_MIB | SECTOR_SIZE_512_MIB => partitions::<SectorShape2KiB>(rp, spec.seed),
        SECTOR_SIZE_32_GIB => partitions::<SectorShape32GiB>(rp, spec.seed),
        SECTOR_SIZE_64_GIB => partitions::<SectorShape64GiB>(rp, spec.seed),
        other => unreachable!("ProofType::current accepted sector size {other}"),
    }
}

fn bytes(d: &dyn AsRef<[u8]>) -> [u8; 32] {
    d.as_ref().try_into().expect("32-byte domain")
}

fn partitions<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(rp: RegisteredUpdateProof, seed: u64) -> Result<SnapWorkload> {
    let config = SectorUpdateConfig::from_porep_config(&rp.as_v1_config());
    let pp = PublicParams::from_sector_size(u64::from(config.sector_size));
    let (nodes, h) = (pp.sector_nodes, config.h);
    let region = nodes >> h;
    let period = region.min(BLOCK_NODES);
    let r_old_block: Vec<TreeRDomain> = (0..period).map(|i| prf(seed, "snap r_old", i as u64, 0)).collect();
    let d_block: Vec<TreeDDomain> = (0..period).map(|i| prf(seed, "snap d_new", i as u64, 0)).collect();

    let r_old = PeriodicTree::<TreeRHasher>::new::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity>(nodes, period, nodes, |i| {
        r_old_block[i % period]
    });
    let d_new = PeriodicTree::<TreeDHasher>::new::<U2, U0, U0>(nodes, period, nodes, |i| d_block[i % period]);
    let comm_c: TreeRDomain = prf(seed, "snap comm_c", 0, 0);
    let comm_r_old = <TreeRHasher as Hasher>::Function::hash2(&comm_c, &r_old.root());
    let comm_d_new = d_new.root();
    let phi = phi(&comm_d_new, &comm_r_old);
    let rhos: Vec<Fr> = (0..1u32 << h).map(|high| rho(&phi, high)).collect();
    let r_new = PeriodicTree::<TreeRHasher>::new::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity>(nodes, period, region, |i| {
        let (old, data): (Fr, Fr) = (r_old_block[i % period].into(), d_block[i % period].into());
        (old + data * rhos[i / region]).into()
    });
    let comm_r_new = <TreeRHasher as Hasher>::Function::hash2(&comm_c, &r_new.root());

    let challenges: Vec<Vec<usize>> =
        (0..pp.partition_count).map(|k| Challenges::new(nodes, comm_r_new, k).map(|c| c as usize).collect()).collect();
    let opened = || challenges.iter().flatten().copied();
    let sparse_r = |t: &PeriodicTree<TreeRHasher>| {
        SparseTree::<TreeRHasher>::new::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity>(
            nodes,
            opened().map(|c| (c, t.node(0, c))),
            |l, i| t.node(l, i),
        )
    };
    let (tree_r_old, tree_r_new) = (sparse_r(&r_old), sparse_r(&r_new));
    let tree_d_new =
        SparseTree::<TreeDHasher>::new::<U2, U0, U0>(nodes, opened().map(|c| (c, d_new.node(0, c))), |l, i| d_new.node(l, i));
    let apex_level = pp.challenge_bit_len - pp.partition_bit_len - pp.apex_leaf_bit_len;
    let proofs: Vec<PartitionProof<Tree>> = challenges
        .iter()
        .enumerate()
        .map(|(k, cs)| PartitionProof {
            comm_c,
            apex_leafs: (0..pp.apex_leaf_count).map(|j| d_new.node(apex_level, k * pp.apex_leaf_count + j)).collect(),
            challenge_proofs: cs
                .iter()
                .map(|&c| ChallengeProof {
                    proof_r_old: tree_r_old.proof(c),
                    proof_d_new: tree_d_new.proof(c),
                    proof_r_new: tree_r_new.proof(c),
                })
                .collect(),
        })
        .collect();

    let inputs = PublicInputs { k: 0, comm_r_old, comm_d_new, comm_r_new, h };
    let valid = EmptySectorUpdate::<Tree>::verify_all_partitions(&pp, &inputs, &proofs)
        .map_err(|e| FilecoinError::Workload(format!("filecoin-proofs' update verifier: {e:#}")))?;
    if !valid {
        return Err(FilecoinError::Workload("filecoin-proofs' update verifier rejects the generated proofs".into()));
    }
    let vanilla_proofs = proofs
        .iter()
        .map(|p| bincode::serialize(p).map_err(|e| FilecoinError::Workload(format!("bincode: {e}"))))
        .collect::<Result<_>>()?;
    Ok(SnapWorkload {
        registered_proof: rp,
        comm_r_old: bytes(&comm_r_old),
        comm_r_new: bytes(&comm_r_new),
        comm_d_new: bytes(&comm_d_new),
        vanilla_proofs,
    })
}
