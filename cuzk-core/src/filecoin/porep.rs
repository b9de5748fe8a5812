//! PoRep C2: the partition circuits of a C1 output, from the values
//! filecoin-proofs' `seal_commit_phase2` builds them from (our
//! [`PorepPartition`], the R1CS of its `StackedCircuit`), with the public
//! inputs `verify_seal` derives (so the replica id is recomputed from the
//! prover id and sector number, not trusted from the C1 output).

use super::built::Built;
use super::circuit::IntoFilecoinCircuit;
use super::envelope::decode_porep_body;
use super::error::{no_panic, FilecoinError, Result, VanillaFailure};
use super::kind::{seal_proof_from_u64, ProofType};
use super::porep_check::check_partitions;
use super::request::ProofRequest;
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::{DefaultPieceDomain, DefaultPieceHasher};
use filecoin_proofs_api::seal::{SealCommitPhase1Output, VanillaSealProof};
use filecoin_proofs_api::{ApiFeature, RegisteredSealProof};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use super::porep_circuit::PorepPartition;
use storage_proofs_porep::stacked::{self, generate_replica_id, StackedCompound, StackedDrg, Tau};

type Partitions<Tree> = Vec<Vec<stacked::Proof<Tree, DefaultPieceHasher>>>;

pub(crate) fn build(req: &ProofRequest) -> Result<Built> {
    let c1 = decode_porep_body(&req.vanilla_proof, req.sector_number)?;
    let rp = c1.phase1.registered_proof;
    if rp.feature_enabled(ApiFeature::NonInteractivePoRep) {
        return Err(FilecoinError::Unsupported {
            what: format!("{rp:?}"),
            why: "non-interactive PoRep needs SnarkPack aggregation",
        });
    }
    let pt = ProofType::Seal(rp);
    // The C1 output names its registered proof; a request's own number (0
    // is the protobuf default: not given) must exist and name the same
    // sector size.
    if req.registered_proof != 0 {
        let given = seal_proof_from_u64(req.registered_proof)?;
        if u64::from(given.sector_size()) != pt.sector_size() {
            return Err(FilecoinError::Inconsistent(format!(
                "registered_proof {} ({given:?}) but the C1 output is a {rp:?} proof",
                req.registered_proof
            )));
        }
    }
    pt.check_sector_size(req.sector_size)?;
    pt.check_sector_size(c1.sector_size)?;
    if req.sector_number != 0 && req.sector_number != c1.sector_num {
        return Err(FilecoinError::Inconsistent(format!(
            "request sector_number {} but the envelope's SectorNum is {}",
            req.sector_number, c1.sector_num
        )));
    }
    let sector = c1.sector_num;
    let p1 = c1.phase1;
    let prover = req.prover_id;
    // The vanilla proofs' variant must agree with the registered proof.
    let sizes_match = |variant: u64| -> Result<()> {
        if variant != pt.sector_size() {
            return Err(FilecoinError::Inconsistent(format!(
                "vanilla proofs are for {variant}-byte sectors but the C1 output says {rp:?}"
            )));
        }
        Ok(())
    };
    use filecoin_proofs::constants::*;
    let circuits = match p1.vanilla_proofs.clone() {
        VanillaSealProof::StackedDrg2KiBV1(v) => sizes_match(SECTOR_SIZE_2_KIB).map(|_| Shaped::Base(v)),
        VanillaSealProof::StackedDrg8MiBV1(v) => sizes_match(SECTOR_SIZE_8_MIB).map(|_| Shaped::Base(v)),
        VanillaSealProof::StackedDrg512MiBV1(v) => sizes_match(SECTOR_SIZE_512_MIB).map(|_| Shaped::Base(v)),
        VanillaSealProof::StackedDrg32GiBV1(v) => sizes_match(SECTOR_SIZE_32_GIB).map(|_| Shaped::Sub8(v)),
        VanillaSealProof::StackedDrg64GiBV1(v) => sizes_match(SECTOR_SIZE_64_GIB).map(|_| Shaped::Top2(v)),
    }?;
    let (circuits, public_inputs) = match circuits {
        Shaped::Base(v) => build_shape(rp, &p1, v, &prover, sector)?,
        Shaped::Sub8(v) => build_shape(rp, &p1, v, &prover, sector)?,
        Shaped::Top2(v) => build_shape(rp, &p1, v, &prover, sector)?,
    };
    Ok(Built { proof_type: pt, circuits, public_inputs })
}

enum Shaped {
    Base(Partitions<super::circuit::ShapeBase>),
    Sub8(Partitions<super::circuit::ShapeSub8>),
    Top2(Partitions<super::circuit::ShapeTop2>),
}

type Out = (Vec<super::circuit::FilecoinCircuit>, Vec<Vec<blstrs::Scalar>>);

fn build_shape<Tree: 'static + MerkleTreeTrait>(
    rp: RegisteredSealProof,
    p1: &SealCommitPhase1Output,
    proofs: Partitions<Tree>,
    prover_id: &[u8; 32],
    sector: u64,
) -> Result<Out>
where
    PorepPartition<Tree>: IntoFilecoinCircuit,
{
    let config = rp.as_v1_config();
    for (what, v) in [("comm_d", &p1.comm_d), ("comm_r", &p1.comm_r), ("seed", &p1.seed)] {
        if *v == [0; 32] {
            return Err(FilecoinError::Inconsistent(format!("{what} in the C1 output is all zero")));
        }
    }
    let comm_r = <Tree::Hasher as Hasher>::Domain::try_from_bytes(&p1.comm_r)
        .map_err(|e| FilecoinError::BadFieldElement { field: "comm_r", why: e.to_string() })?;
    let comm_d = DefaultPieceDomain::try_from_bytes(&p1.comm_d)
        .map_err(|e| FilecoinError::BadFieldElement { field: "comm_d", why: e.to_string() })?;
    let replica_id =
        generate_replica_id::<Tree::Hasher, _>(prover_id, sector, &p1.ticket, comm_d, &config.porep_id);
    if AsRef::<[u8]>::as_ref(&replica_id) != AsRef::<[u8]>::as_ref(&p1.replica_id) {
        return Err(FilecoinError::Inconsistent(
            "the C1 output's replica_id does not match the prover id (miner id), sector number, ticket and comm_d".into(),
        ));
    }
    let partitions = usize::from(config.partitions);
    if proofs.len() != partitions || proofs.iter().any(|p| p.is_empty()) {
        return Err(FilecoinError::Count {
            what: "non-empty vanilla proof partitions in the C1 output",
            expected: partitions,
            got: proofs.iter().filter(|p| !p.is_empty()).count(),
        });
    }
    let pub_inputs = stacked::PublicInputs { replica_id, tau: Some(Tau { comm_d, comm_r }), k: None, seed: Some(p1.seed) };
    no_panic("PoRep circuits", || {
        let setup = compound_proof::SetupParams {
            vanilla_params: setup_params(&config)?,
            partitions: Some(partitions),
            priority: false,
        };
        let pp = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
            StackedDrg<'_, Tree, DefaultPieceHasher>,
            _,
        >>::setup(&setup)?;
        // Cheap next to proving, and names the fault instead of a failed
        // self-check after minutes of synthesis and GPU time.
        check_partitions(&pp.vanilla_params, &pub_inputs, &proofs).map_err(VanillaFailure)?;
        let mut circuits = Vec::with_capacity(partitions);
        let mut inputs = Vec::with_capacity(partitions);
        for (k, proof) in proofs.iter().enumerate() {
            circuits.push(PorepPartition::<Tree>::new(&pub_inputs, proof)?.into_filecoin());
            inputs.push(<StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<_, _>>::generate_public_inputs(
                &pub_inputs,
                &pp.vanilla_params,
                Some(k),
            )?);
        }
        Ok((circuits, inputs))
    })
}
