//! WindowPoSt (one partition) and WinningPoSt inputs: the per-sector
//! vanilla proofs Curio sends (bincode `FallbackPoStSectorProof`), valid
//! for filecoin-proofs' PoSt verifiers, made without sealed sectors.
//!
//! A PoSt opens only tree_r_last: each sector gets a pseudo-random comm_c,
//! a tree_r_last materialized along its challenged leaves ([`SparseTree`];
//! the replica leaves pseudo-random), and comm_r = H(comm_c, comm_r_last).
//! The challenges are filecoin-proofs' own
//! (`generate_fallback_sector_challenges`) from the randomness, the
//! sector ids and the prover id.

use super::sparse_tree::{prf, prf_bytes, SparseTree};
use crate::filecoin::error::{FilecoinError, Result};
use crate::filecoin::kind::ProofType;
use crate::proof_kind::ProofKind;
use crate::filecoin::request::prover_id_from_miner;
use filecoin_hashers::{Domain, HashFunction, Hasher};
use filecoin_proofs::constants::*;
use filecoin_proofs::generate_fallback_sector_challenges;
use filecoin_proofs::types::{FallbackPoStSectorProof, PoStType};
use filecoin_proofs_api::{RegisteredPoStProof, SectorId};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::util::NODE_SIZE;
use storage_proofs_post::fallback::{Proof, SectorProof};

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct PostSpec {
    /// WindowPostPartition or WinningPost.
    pub kind: ProofKind,
    /// 2 KiB, 8 MiB, 512 MiB, 32 GiB or 64 GiB, in bytes.
    pub sector_size: u64,
    /// Everything random derives from it.
    pub seed: u64,
    /// The prover id is Curio's for this miner id.
    pub miner_id: u64,
    /// The first sector's number; the others count up.
    pub first_sector: u64,
    /// Sectors (WindowPoSt; 0: a full partition). WinningPoSt proves one.
    pub sectors: usize,
}

/// Generated PoSt vanilla proofs and the public values a verifier needs.
pub struct PostWorkload {
    pub registered_proof: RegisteredPoStProof,
    pub prover_id: [u8; 32],
    /// The challenge randomness (a field element).
    pub randomness: [u8; 32],
    /// (sector number, comm_r) of each proven sector.
    pub sectors: Vec<(u64, [u8; 32])>,
    /// bincode `FallbackPoStSectorProof`, one per sector, as Curio sends them.
    pub vanilla_proofs: Vec<Vec<u8>>,
}

/// Generates the vanilla proofs of `spec` (deterministic in it).
pub fn post(spec: PostSpec) -> Result<PostWorkload> {
    let ProofType::Post(rp) = ProofType::current(spec.kind, spec.sector_size)? else {
        return Err(FilecoinError::Unsupported { what: spec.kind.title().into(), why: "not a PoSt kind" });
    };
    let prover_id = prover_id_from_miner(spec.miner_id);
    let config = rp.as_v1_config();
    let count = match config.typ {
        PoStType::Winning => config.sector_count,
        PoStType::Window if spec.sectors == 0 => config.sector_count,
        PoStType::Window if spec.sectors <= config.sector_count => spec.sectors,
        PoStType::Window => {
            return Err(FilecoinError::Count {
                what: "sectors in one WindowPoSt partition (at most)",
                expected: config.sector_count,
                got: spec.sectors,
            })
        }
    };
    let mut randomness = prf_bytes(spec.seed, "post randomness", 0, 0);
    randomness[31] &= 0b0011_1111;
    let ids: Vec<SectorId> = (0..count as u64).map(|i| SectorId::from(spec.first_sector + i)).collect();
    let proofs = match spec.sector_size {
        SECTOR_SIZE_2_KIB | SECTOR_SIZE_8_MIB | SECTOR_SIZE_512_MIB => sectors::<SectorShape2KiB>(rp, &spec, &randomness, &ids, prover_id),
        SECTOR_SIZE_32_GIB => sectors::<SectorShape32GiB>(rp, &spec, &randomness, &ids, prover_id),
        SECTOR_SIZE_64_GIB => sectors::<SectorShape64GiB>(rp, &spec, &randomness, &ids, prover_id),
        other => unreachable!("ProofType::current accepted sector size {other}"),
    }?;
    let (sectors, vanilla_proofs) = proofs.into_iter().unzip();
    Ok(PostWorkload { registered_proof: rp, prover_id, randomness, sectors, vanilla_proofs })
}

type Sectors = Vec<((u64, [u8; 32]), Vec<u8>)>;

fn sectors<Tree: 'static + MerkleTreeTrait>(
    rp: RegisteredPoStProof,
    spec: &PostSpec,
    randomness: &[u8; 32],
    ids: &[SectorId],
    prover_id: [u8; 32],
) -> Result<Sectors> {
    let config = rp.as_v1_config();
    let challenges = generate_fallback_sector_challenges::<Tree>(&config, randomness, ids, prover_id)
        .map_err(|e| FilecoinError::Workload(format!("PoSt challenges: {e:#}")))?;
    let nodes = (spec.sector_size / NODE_SIZE as u64) as usize;
    let seed = spec.seed;
    let one = |id: &SectorId| -> Result<((u64, [u8; 32]), Vec<u8>)> {
        let n = u64::from(*id);
        let leaves = &challenges[id];
        let tree = SparseTree::<Tree::Hasher>::new::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity>(
            nodes,
            leaves.iter().map(|&c| (c as usize, prf(seed, "replica leaf", n, c))),
            |level, i| prf(seed, "post tree_r_last", n, ((level as u64) << 56) | i as u64),
        );
        let comm_c: <Tree::Hasher as Hasher>::Domain = prf(seed, "comm_c", n, 0);
        let comm_r_last = tree.root();
        let comm_r = <Tree::Hasher as Hasher>::Function::hash2(&comm_c, &comm_r_last);
        let sector = SectorProof {
            inclusion_proofs: leaves.iter().map(|&c| tree.proof(c as usize)).collect(),
            comm_c,
            comm_r_last,
        };
        let proof = FallbackPoStSectorProof::<Tree> { sector_id: *id, comm_r, vanilla_proof: Proof { sectors: vec![sector] } };
        let bytes = bincode::serialize(&proof).map_err(|e| FilecoinError::Workload(format!("bincode: {e}")))?;
        Ok(((n, comm_r.into_bytes().try_into().expect("32-byte domain")), bytes))
    };
    let chunks = crate::par::map_chunks(ids, 1, |_, chunk| chunk.iter().map(one).collect::<Result<Vec<_>>>());
    Ok(chunks.into_iter().collect::<Result<Vec<_>>>()?.into_iter().flatten().collect())
}
