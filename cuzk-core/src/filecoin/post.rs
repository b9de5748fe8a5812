//! WinningPoSt and one WindowPoSt partition: circuits built as
//! filecoin-proofs' `generate_winning_post_with_vanilla` and
//! `generate_single_window_post_with_vanilla` build them, from the
//! vanilla proofs Curio sends (bincode `FallbackPoStSectorProof`, one per
//! sector), with the public inputs the PoSt verifiers derive. The circuit
//! is our [`PostPartition`] (`FallbackPoStCircuit`'s R1CS and witness).

use super::built::Built;
use super::circuit::{by_shape, FilecoinCircuit, IntoFilecoinCircuit};
use super::error::{no_panic, FilecoinError, Result, VanillaFailure};
use super::kind::ProofType;
use super::error::{bytes32, check_vanilla_list};
use super::request::ProofRequest;
use blstrs::Scalar as Fr;
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::types::{FallbackPoStSectorProof, PoStType};
use filecoin_proofs::parameters::{window_post_setup_params, winning_post_setup_params};
use filecoin_proofs::{partition_vanilla_proofs, single_partition_vanilla_proofs};
use filecoin_proofs_api::{ApiVersion, RegisteredPoStProof};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use super::post_circuit::PostPartition;
use filecoin_hashers::poseidon::PoseidonHasher;
use storage_proofs_post::fallback::{self, FallbackPoStCompound, PublicSector};

/// Legacy (V1_0) WindowPoSt challenges depend on the partition index, so
/// its verifier inputs are built with `index` partitions of padding; this
/// bounds that memory.
const MAX_LEGACY_PARTITION_INDEX: u32 = 1024;

pub(crate) fn build(req: &ProofRequest, pt: ProofType) -> Result<Built> {
    let ProofType::Post(rp) = pt else { unreachable!("caller passes a PoSt type") };
    pt.check_sector_size(req.sector_size)?;
    check_vanilla_list(&req.vanilla_proofs)?;
    let randomness = bytes32("randomness", &req.randomness)?;
    let (circuits, public_inputs) =
        by_shape!(pt.sector_size(), build_shape, rp, &req.vanilla_proofs, randomness, req.prover_id, req.partition_index)?;
    Ok(Built { proof_type: pt, circuits, public_inputs })
}

fn field<D: Domain>(field: &'static str, b: &[u8; 32]) -> Result<D> {
    D::try_from_bytes(b).map_err(|e| FilecoinError::BadFieldElement { field, why: e.to_string() })
}

fn build_shape<Tree: 'static + MerkleTreeTrait<Hasher = PoseidonHasher>>(
    rp: RegisteredPoStProof,
    vanilla: &[Vec<u8>],
    randomness: [u8; 32],
    prover_id: [u8; 32],
    partition_index: u32,
) -> Result<(Vec<FilecoinCircuit>, Vec<Vec<Fr>>)>
where
    PostPartition<Tree>: IntoFilecoinCircuit,
{
    let proofs = vanilla
        .iter()
        .enumerate()
        .map(|(index, b)| {
            bincode::deserialize::<FallbackPoStSectorProof<Tree>>(b)
                .map_err(|source| FilecoinError::Bincode { what: "PoSt vanilla proof", index, source })
        })
        .collect::<Result<Vec<_>>>()?;
    let config = rp.as_v1_config();
    let per_partition = config.sector_count;
    let randomness = field::<<Tree::Hasher as Hasher>::Domain>("randomness", &randomness)?;
    let prover = field::<<Tree::Hasher as Hasher>::Domain>("prover_id", &prover_id)?;
    let sectors: Vec<PublicSector<_>> = proofs.iter().map(|p| PublicSector { id: p.sector_id, comm_r: p.comm_r }).collect();
    let winning = config.typ == PoStType::Winning;
    if winning && proofs.len() != per_partition {
        return Err(FilecoinError::Count { what: "WinningPoSt vanilla proofs", expected: per_partition, got: proofs.len() });
    }
    if !winning && proofs.len() > per_partition {
        return Err(FilecoinError::Count {
            what: "sectors in one WindowPoSt partition (at most)",
            expected: per_partition,
            got: proofs.len(),
        });
    }
    let legacy = config.api_version < ApiVersion::V1_2_0;
    if !winning && legacy && partition_index > MAX_LEGACY_PARTITION_INDEX {
        return Err(FilecoinError::Inconsistent(format!(
            "partition_index {partition_index} is beyond {MAX_LEGACY_PARTITION_INDEX}"
        )));
    }
    no_panic("PoSt circuits", || {
        let vanilla_params =
            if winning { winning_post_setup_params(&config)? } else { window_post_setup_params(&config) };
        let setup = compound_proof::SetupParams { vanilla_params, partitions: None, priority: config.priority };
        let pp = FallbackPoStCompound::<Tree>::setup(&setup)?;
        let k = if winning { None } else { Some(partition_index as usize) };
        let pub_inputs = fallback::PublicInputs { randomness, prover_id: prover, sectors: sectors.clone(), k };
        // These check the vanilla proofs against the public inputs.
        let partition = if winning {
            partition_vanilla_proofs(&config, &pp.vanilla_params, &pub_inputs, 1, &proofs)
        } else {
            single_partition_vanilla_proofs(&config, &pp.vanilla_params, &pub_inputs, &proofs).map(|p| vec![p])
        }
        .map_err(|e| VanillaFailure(format!("{e:#}")))?;
        let circuit = PostPartition::<Tree>::new(&pub_inputs, &partition[0], &pp.vanilla_params, Some(0))?;
        // What the verifier derives for this partition: it chunks all the
        // deadline's sectors; only legacy challenges depend on the index.
        // WinningPoSt's verifier repeats the sector once per challenge.
        let (verifier_sectors, vk_index) = if winning {
            let n = pp.vanilla_params.sector_count;
            (sectors.iter().cycle().take(n * sectors.len()).cloned().collect(), 0)
        } else if legacy {
            let mut all = vec![sectors[0].clone(); partition_index as usize * per_partition];
            all.extend(sectors.iter().cloned());
            (all, partition_index as usize)
        } else {
            (sectors.clone(), 0)
        };
        let verifier_in = fallback::PublicInputs { randomness, prover_id: prover, sectors: verifier_sectors, k: None };
        let inputs = <FallbackPoStCompound<Tree> as CompoundProof<_, _>>::generate_public_inputs(
            &verifier_in,
            &pp.vanilla_params,
            Some(vk_index),
        )?;
        Ok((vec![circuit.into_filecoin()], vec![inputs]))
    })
}
