//! SnapDeals (empty sector update): one circuit per partition proof, built
//! as filecoin-proofs' `generate_empty_sector_update_proof_with_vanilla`
//! builds them, from the bincode `PartitionProof`s Curio sends.

use super::built::Built;
use super::circuit::{by_shape, FilecoinCircuit, IntoFilecoinCircuit};
use super::error::{no_panic, FilecoinError, Result, VanillaFailure};
use super::kind::ProofType;
use super::error::{bytes32, check_vanilla_list};
use super::request::ProofRequest;
use blstrs::Scalar as Fr;
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::types::SectorUpdateConfig;
use filecoin_proofs::DefaultPieceDomain;
use filecoin_proofs_api::RegisteredUpdateProof;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_update::constants::TreeRHasher;
use super::update_circuit::UpdatePartition;
use storage_proofs_update::{EmptySectorUpdate, EmptySectorUpdateCompound, PartitionProof, PublicInputs, PublicParams};

struct Comms {
    r_old: [u8; 32],
    r_new: [u8; 32],
    d_new: [u8; 32],
}

pub(crate) fn build(req: &ProofRequest, pt: ProofType) -> Result<Built> {
    let ProofType::Update(rp) = pt else { unreachable!("caller passes an update type") };
    pt.check_sector_size(req.sector_size)?;
    check_vanilla_list(&req.vanilla_proofs)?;
    let comms = Comms {
        r_old: bytes32("comm_r_old", &req.comm_r_old)?,
        r_new: bytes32("comm_r_new", &req.comm_r_new)?,
        d_new: bytes32("comm_d_new", &req.comm_d_new)?,
    };
    let (circuits, public_inputs) = by_shape!(pt.sector_size(), build_shape, rp, &req.vanilla_proofs, &comms)?;
    Ok(Built { proof_type: pt, circuits, public_inputs })
}

fn field<D: Domain>(field: &'static str, b: &[u8; 32]) -> Result<D> {
    D::try_from_bytes(b).map_err(|e| FilecoinError::BadFieldElement { field, why: e.to_string() })
}

fn build_shape<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    rp: RegisteredUpdateProof,
    vanilla: &[Vec<u8>],
    comms: &Comms,
) -> Result<(Vec<FilecoinCircuit>, Vec<Vec<Fr>>)>
where
    UpdatePartition<Tree>: IntoFilecoinCircuit,
{
    let config = SectorUpdateConfig::from_porep_config(&rp.as_v1_config());
    let partitions = usize::from(config.update_partitions);
    if vanilla.len() != partitions {
        return Err(FilecoinError::Count { what: "SnapDeals partition proofs", expected: partitions, got: vanilla.len() });
    }
    let proofs = vanilla
        .iter()
        .enumerate()
        .map(|(index, b)| {
            bincode::deserialize::<PartitionProof<Tree>>(b)
                .map_err(|source| FilecoinError::Bincode { what: "SnapDeals partition proof", index, source })
        })
        .collect::<Result<Vec<_>>>()?;
    let pub_inputs = PublicInputs {
        k: 0,
        comm_r_old: field::<<TreeRHasher as Hasher>::Domain>("comm_r_old", &comms.r_old)?,
        comm_d_new: field::<DefaultPieceDomain>("comm_d_new", &comms.d_new)?,
        comm_r_new: field::<<TreeRHasher as Hasher>::Domain>("comm_r_new", &comms.r_new)?,
        h: config.h,
    };
    let pp = PublicParams::from_sector_size(u64::from(config.sector_size));
    no_panic("SnapDeals circuits", || {
        if !EmptySectorUpdate::<Tree>::verify_all_partitions(&pp, &pub_inputs, &proofs)? {
            return Err(VanillaFailure("the partition proofs do not verify".into()).into());
        }
        let mut circuits = Vec::with_capacity(partitions);
        let mut inputs = Vec::with_capacity(partitions);
        for (k, proof) in proofs.iter().enumerate() {
            circuits.push(UpdatePartition::<Tree>::new(&pp, &pub_inputs, proof, k)?.into_filecoin());
            inputs.push(<EmptySectorUpdateCompound<Tree> as CompoundProof<_, _>>::generate_public_inputs(
                &pub_inputs,
                &pp,
                Some(k),
            )?);
        }
        Ok((circuits, inputs))
    })
}
