//! Our PoSt partition circuit (`cuzk_core::filecoin::post_circuit`) against
//! storage-proofs-post's `FallbackPoStCircuit`, the circuit the published
//! parameters are made from: the same R1CS (recorded, real and blank), the
//! same witness byte for byte (witness-only on one thread and on several,
//! and classic synthesis into our `ProvingAssignment`, which both circuits
//! synthesize in groups of sectors), for WinningPoSt and WindowPoSt at
//! 2 KiB and 8 MiB, a WindowPoSt partition with fewer sectors than it
//! holds (padded) included; 512 MiB ignored (run by hand: it prints both
//! circuits' witness-only times).

use cuzk_core::cs::{generate_witness, synthesize};
use cuzk_core::filecoin::circuit::ShapeBase;
use cuzk_core::filecoin::filecoin_hashers::{Domain, Hasher};
use cuzk_core::filecoin::filecoin_proofs::constants::{SECTOR_SIZE_2_KIB, SECTOR_SIZE_512_MIB, SECTOR_SIZE_8_MIB};
use cuzk_core::filecoin::filecoin_proofs::parameters::{window_post_setup_params, winning_post_setup_params};
use cuzk_core::filecoin::filecoin_proofs::types::{FallbackPoStSectorProof, PoStType};
use cuzk_core::filecoin::filecoin_proofs::{partition_vanilla_proofs, single_partition_vanilla_proofs};
use cuzk_core::filecoin::post_circuit::PostPartition;
use cuzk_core::filecoin::setup::blank_circuit;
use cuzk_core::filecoin::storage_proofs_core::compound_proof::{CompoundProof, SetupParams};
use cuzk_core::filecoin::storage_proofs_core::merkle::MerkleTreeTrait;
use cuzk_core::filecoin::workload::{post, PostSpec};
use cuzk_core::filecoin::{prepare, FilecoinCircuit, ProofKind, ProofRequest, ProofType};
use cuzk_core::pce;
use std::time::Instant;
use storage_proofs_post::fallback::{FallbackPoStCircuit, FallbackPoStCompound, PublicInputs, PublicSector};

type Domain2 = <<ShapeBase as MerkleTreeTrait>::Hasher as Hasher>::Domain;

/// A generated PoSt request: `sectors` sectors (WindowPoSt; 0: a full partition).
fn request(kind: ProofKind, sector_size: u64, sectors: usize, seed: u64) -> ProofRequest {
    let w = post(PostSpec { kind, sector_size, seed, miner_id: 1000, first_sector: 20, sectors }).unwrap();
    let mut req = ProofRequest::new(kind, 1000);
    req.registered_proof = ProofType::current_number(kind, sector_size).unwrap();
    req.sector_size = sector_size;
    req.randomness = w.randomness.to_vec();
    req.vanilla_proofs = w.vanilla_proofs;
    req
}

/// storage-proofs-post's circuit for `req`, as filecoin-proofs'
/// `generate_winning_post_with_vanilla` / `generate_single_window_post_with_vanilla`
/// build it; with `blank`, its blank form for setup.
fn fallback_circuit(req: &ProofRequest, blank: bool) -> FallbackPoStCircuit<ShapeBase> {
    let ProofType::Post(rp) = ProofType::for_kind(req.kind, req.registered_proof).unwrap() else { panic!("a PoSt request") };
    let config = rp.as_v1_config();
    let winning = config.typ == PoStType::Winning;
    let vanilla_params = if winning { winning_post_setup_params(&config).unwrap() } else { window_post_setup_params(&config) };
    let setup = SetupParams { vanilla_params, partitions: None, priority: config.priority };
    let pp = FallbackPoStCompound::<ShapeBase>::setup(&setup).unwrap();
    if blank {
        return <FallbackPoStCompound<ShapeBase> as CompoundProof<_, _>>::blank_circuit(&pp.vanilla_params);
    }
    let proofs: Vec<FallbackPoStSectorProof<ShapeBase>> = req.vanilla_proofs.iter().map(|b| bincode_proof(b)).collect();
    let sectors: Vec<PublicSector<Domain2>> = proofs.iter().map(|p| PublicSector { id: p.sector_id, comm_r: p.comm_r }).collect();
    let randomness = Domain2::try_from_bytes(&req.randomness).unwrap();
    let prover_id = Domain2::try_from_bytes(&req.prover_id).unwrap();
    let k = if winning { None } else { Some(0) };
    let inputs = PublicInputs { randomness, prover_id, sectors, k };
    let partition = if winning {
        partition_vanilla_proofs(&config, &pp.vanilla_params, &inputs, 1, &proofs).unwrap()
    } else {
        vec![single_partition_vanilla_proofs(&config, &pp.vanilla_params, &inputs, &proofs).unwrap()]
    };
    <FallbackPoStCompound<ShapeBase> as CompoundProof<_, _>>::circuit(
        &inputs,
        Default::default(),
        &partition[0],
        &pp.vanilla_params,
        Some(0),
    )
    .unwrap()
}

fn bincode_proof(b: &[u8]) -> FallbackPoStSectorProof<ShapeBase> {
    bincode::deserialize(b).unwrap()
}

fn ours(req: &ProofRequest) -> PostPartition<ShapeBase> {
    match prepare(req).unwrap().circuits.remove(0) {
        FilecoinCircuit::PostBase(p) => p,
        _ => panic!("a 2 KiB or 8 MiB PoSt request gives a PostBase circuit"),
    }
}

/// Same recorded R1CS for the real and the blank circuit; same witness from
/// one sequential synthesis (the recorder), from witness-only synthesis on
/// 1, 2 and 3 threads, and from classic synthesis.
fn check(req: &ProofRequest) {
    let pt = ProofType::for_kind(req.kind, req.registered_proof).unwrap();
    let blank_ours = pce::record("x", blank_circuit(pt).unwrap()).unwrap();
    let blank_theirs = pce::record("x", fallback_circuit(req, true)).unwrap();
    assert!(blank_ours == blank_theirs, "{pt:?}: blank circuits' recorded R1CS differ");

    let (pce_theirs, w_theirs) = pce::record_with_witness("x", fallback_circuit(req, false)).unwrap();
    let (pce_ours, w_ours) = pce::record_with_witness("x", ours(req)).unwrap();
    assert_eq!(pce_ours.shape, pce_theirs.shape, "{pt:?}: shapes differ");
    assert!(pce_ours == pce_theirs, "{pt:?}: recorded R1CS differ");
    assert!(pce_ours == blank_ours, "{pt:?}: the blank circuit's R1CS differs from the real one");
    assert!(w_ours == w_theirs, "{pt:?}: recorded witnesses differ");

    let t = Instant::now();
    let witness_theirs = generate_witness(fallback_circuit(req, false)).unwrap();
    let t_theirs = t.elapsed().as_secs_f64();
    assert_eq!(witness_theirs.aux_assignment, w_theirs.aux_assignment);
    for threads in [1, 2, 3] {
        let t = Instant::now();
        let w = generate_witness(ours(req).with_threads(threads)).unwrap();
        let secs = t.elapsed().as_secs_f64();
        assert_eq!(w.input_assignment, witness_theirs.input_assignment, "{pt:?}, {threads} threads: inputs");
        assert_eq!(w.input_positions, witness_theirs.input_positions, "{pt:?}, {threads} threads: input positions");
        assert!(w.aux_assignment == witness_theirs.aux_assignment, "{pt:?}, {threads} threads: aux differ");
        eprintln!("{pt:?}: witness-only {secs:.3} s on {threads} threads (FallbackPoStCircuit {t_theirs:.3} s)");
    }
    let classic_theirs = synthesize(fallback_circuit(req, false)).unwrap();
    assert!(synthesize(ours(req)).unwrap() == classic_theirs, "{pt:?}: classic synthesis differs");
    eprintln!(
        "{pt:?}: {} constraints, {} inputs, {} aux",
        pce_theirs.num_constraints(),
        w_theirs.input_assignment.len(),
        w_theirs.aux_assignment.len()
    );
}

#[test]
fn winning_2kib_same_r1cs_and_witness_as_fallback_post() {
    for seed in [1, 2] {
        check(&request(ProofKind::WinningPost, SECTOR_SIZE_2_KIB, 0, seed));
    }
}

#[test]
fn window_2kib_same_r1cs_and_witness_as_fallback_post() {
    check(&request(ProofKind::WindowPostPartition, SECTOR_SIZE_2_KIB, 0, 3));
}

#[test]
fn window_2kib_padded_partition_same_r1cs_and_witness_as_fallback_post() {
    let req = request(ProofKind::WindowPostPartition, SECTOR_SIZE_2_KIB, 1, 4);
    assert_eq!(req.vanilla_proofs.len(), 1, "one sector in a partition of two");
    check(&req);
}

#[test]
fn post_8mib_same_r1cs_and_witness_as_fallback_post() {
    check(&request(ProofKind::WinningPost, SECTOR_SIZE_8_MIB, 0, 5));
    check(&request(ProofKind::WindowPostPartition, SECTOR_SIZE_8_MIB, 1, 6));
}

#[test]
#[ignore = "a few seconds more; run by hand for the witness-only times"]
fn post_512mib_same_r1cs_and_witness_as_fallback_post() {
    check(&request(ProofKind::WinningPost, SECTOR_SIZE_512_MIB, 0, 7));
    check(&request(ProofKind::WindowPostPartition, SECTOR_SIZE_512_MIB, 0, 8));
}
