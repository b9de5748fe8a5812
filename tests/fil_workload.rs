//! The workload generator (`cuzk filecoin-workload`): its PoRep C1 outputs
//! pass filecoin-proofs' vanilla verifier (called here on the output as
//! Curio sends it, through the envelope) and the daemon's submit check, at
//! 2 KiB, 8 MiB, 512 MiB, 32 GiB and 64 GiB, are deterministic in the seed,
//! and at 2 KiB prove on the CPU to a proof filecoin-proofs' `verify_seal`
//! accepts. Its WindowPoSt and WinningPoSt sector proofs pass the submit
//! check (filecoin-proofs' vanilla PoSt verification), at 2 KiB and 32 GiB,
//! and at 2 KiB prove to proofs `verify_window_post` and
//! `verify_winning_post` accept. Its SnapDeals partition proofs likewise,
//! with `verify_empty_sector_update_proof`, up to 64 GiB. Production sizes
//! take about 10 s each: the generator builds no full trees.

use cuzk_core::filecoin::filecoin_proofs::parameters::public_params;
use cuzk_core::filecoin::filecoin_proofs::{constants::*, DefaultPieceDomain, DefaultPieceHasher};
use cuzk_core::filecoin::filecoin_proofs_api::post::{verify_window_post, verify_winning_post};
use cuzk_core::filecoin::filecoin_proofs_api::seal::{verify_seal, SealCommitPhase1Output, VanillaSealProof};
use cuzk_core::filecoin::filecoin_proofs_api::update::verify_empty_sector_update_proof;
use cuzk_core::filecoin::filecoin_proofs_api::{PublicReplicaInfo, SectorId};
use cuzk_core::filecoin::storage_proofs_core::merkle::MerkleTreeTrait;
use cuzk_core::filecoin::storage_proofs_core::proof::ProofScheme;
use cuzk_core::filecoin::workload::{porep, post, snap, PorepSpec, PorepWorkload, PostSpec, PostWorkload, SnapSpec, SnapWorkload};
use cuzk_core::filecoin::{decode_envelope, encode_envelope, prepare, prove_partitions, FilecoinError, ProofKind, ProofRequest, ProofType};
use cuzk_core::srs::{Parameters, ReadOptions};
use cuzk_tests::fil::{ensure_params, param_cache};
use std::collections::BTreeMap;
use std::time::Instant;
use storage_proofs_porep::stacked::{generate_replica_id, PublicInputs, StackedDrg, Tau};

fn spec(sector_size: u64, seed: u64) -> PorepSpec {
    PorepSpec { sector_size, seed, miner_id: 1000, sector_num: 7 }
}

fn generate(sector_size: u64, seed: u64) -> PorepWorkload {
    let t = Instant::now();
    let w = porep(spec(sector_size, seed)).expect("generator");
    eprintln!("{sector_size}-byte PoRep workload generated in {:.2} s", t.elapsed().as_secs_f64());
    w
}

/// The request Curio sends for `w`: the C1 output in its envelope.
fn request(w: &PorepWorkload) -> ProofRequest {
    let json = serde_json::to_vec(&w.c1).unwrap();
    let mut req = ProofRequest::new(ProofKind::PorepSealCommit, 1000);
    assert_eq!(req.prover_id, w.prover_id, "the prover id is Curio's for the miner id");
    req.sector_number = w.sector_num;
    req.sector_size = u64::from(w.registered_proof.sector_size());
    req.vanilla_proof = encode_envelope(w.sector_num, req.sector_size, &json);
    req
}

/// filecoin-proofs' vanilla verifier on the C1 output decoded from the
/// request, with the replica id recomputed from the public values.
fn vanilla_verifies(req: &ProofRequest) -> bool {
    let c1 = decode_envelope(&req.vanilla_proof).unwrap().phase1;
    match c1.vanilla_proofs.clone() {
        VanillaSealProof::StackedDrg2KiBV1(v) => verify_all::<SectorShape2KiB>(&c1, req, &v),
        VanillaSealProof::StackedDrg8MiBV1(v) => verify_all::<SectorShape8MiB>(&c1, req, &v),
        VanillaSealProof::StackedDrg512MiBV1(v) => verify_all::<SectorShape512MiB>(&c1, req, &v),
        VanillaSealProof::StackedDrg32GiBV1(v) => verify_all::<SectorShape32GiB>(&c1, req, &v),
        VanillaSealProof::StackedDrg64GiBV1(v) => verify_all::<SectorShape64GiB>(&c1, req, &v),
    }
}

fn verify_all<Tree: 'static + MerkleTreeTrait>(
    c1: &SealCommitPhase1Output,
    req: &ProofRequest,
    proofs: &[Vec<storage_proofs_porep::stacked::Proof<Tree, DefaultPieceHasher>>],
) -> bool {
    use cuzk_core::filecoin::filecoin_hashers::{Domain, Hasher};
    let config = c1.registered_proof.as_v1_config();
    let pp = public_params::<Tree>(&config).unwrap();
    let comm_d = DefaultPieceDomain::try_from_bytes(&c1.comm_d).unwrap();
    let comm_r = <Tree::Hasher as Hasher>::Domain::try_from_bytes(&c1.comm_r).unwrap();
    let replica_id = generate_replica_id::<Tree::Hasher, _>(&req.prover_id, req.sector_number, &c1.ticket, comm_d, &config.porep_id);
    let inputs = PublicInputs { replica_id, seed: Some(c1.seed), tau: Some(Tau { comm_d, comm_r }), k: None };
    assert_eq!(proofs.len(), usize::from(config.partitions));
    StackedDrg::<Tree, DefaultPieceHasher>::verify_all_partitions(&pp, &inputs, proofs).unwrap()
}

/// The vanilla verifier and the daemon's submit check accept it.
fn check_valid(w: &PorepWorkload) -> ProofRequest {
    let req = request(w);
    assert!(vanilla_verifies(&req), "filecoin-proofs' vanilla verifier rejects the workload");
    let t = Instant::now();
    prepare(&req).expect("the submit check refuses the workload");
    eprintln!("submit check and circuits: {:.2} s", t.elapsed().as_secs_f64());
    req
}

/// Proves `req` on the CPU with the test parameters, self-checked.
fn prove_on_cpu(req: &ProofRequest) -> Vec<u8> {
    let cache = param_cache();
    let prepared = prepare(req).unwrap();
    let files = ensure_params(prepared.meta.proof_type);
    let params = Parameters::read_file(&files.params, ReadOptions::trusted()).unwrap();
    let key = cache.load_vk(&files.circuit_id).unwrap();
    let t = Instant::now();
    let synthesized = prepared.synthesize().unwrap();
    let proofs = prove_partitions(&synthesized, &params, None).unwrap();
    let bytes = synthesized.meta.finish(&proofs, Some(&key)).expect("self-check");
    eprintln!("synthesis and CPU prove: {:.1} s", t.elapsed().as_secs_f64());
    bytes
}

#[test]
fn porep_2kib_workload_proves_to_a_proof_verify_seal_accepts() {
    let w = generate(SECTOR_SIZE_2_KIB, 1);
    let req = check_valid(&w);

    // Deterministic in the seed; another seed, another sector.
    let again = serde_json::to_vec(&generate(SECTOR_SIZE_2_KIB, 1).c1).unwrap();
    assert_eq!(serde_json::to_vec(&w.c1).unwrap(), again, "same seed, different output");
    let other = generate(SECTOR_SIZE_2_KIB, 2).c1;
    assert_ne!((other.comm_r, other.comm_d, other.seed), (w.c1.comm_r, w.c1.comm_d, w.c1.seed));

    // A corrupted one is refused at submit, naming the part.
    let mut json: serde_json::Value = serde_json::to_value(&w.c1).unwrap();
    let hash = &mut json["vanilla_proofs"]["StackedDrg2KiBV1"][0][0]["comm_r_last_proof"]["data"]["Single"]["path"]["path"][1]["hashes"][0];
    let byte = &mut hash[0];
    *byte = serde_json::json!((byte.as_u64().unwrap() + 1) % 256);
    let mut bad = req.clone();
    bad.vanilla_proof = encode_envelope(w.sector_num, 2048, &serde_json::to_vec(&json).unwrap());
    match prepare(&bad) {
        Err(FilecoinError::VanillaInvalid(why)) => assert!(why.contains("comm_r_last"), "{why}"),
        Err(e) => panic!("wrong error for a corrupted path: {e}"),
        Ok(_) => panic!("a corrupted comm_r_last path was accepted"),
    }

    // Proved on the CPU, self-checked, and accepted by verify_seal.
    let bytes = prove_on_cpu(&req);
    let c1 = &w.c1;
    let verify = |proof: &[u8]| {
        verify_seal(c1.registered_proof, c1.comm_r, c1.comm_d, w.prover_id, SectorId::from(w.sector_num), c1.ticket, c1.seed, proof)
            .unwrap_or(false)
    };
    assert!(verify(&bytes), "verify_seal rejects the proof of the generated workload");
    let mut tampered = bytes.clone();
    tampered[10] ^= 1;
    assert!(!verify(&tampered), "verify_seal accepts a tampered proof");
    // The valid proof of seed 1 against seed 2's public inputs (comm_r,
    // comm_d, ticket, seed): a verdict, false, not a decode error.
    let v = verify_seal(
        other.registered_proof,
        other.comm_r,
        other.comm_d,
        w.prover_id,
        SectorId::from(w.sector_num),
        other.ticket,
        other.seed,
        &bytes,
    );
    assert!(matches!(v, Ok(false)), "verify_seal of seed 1's proof with seed 2's inputs: {v:?}");
}

#[test]
fn porep_8mib_and_512mib_workloads_pass_the_vanilla_checks() {
    for size in [SECTOR_SIZE_8_MIB, SECTOR_SIZE_512_MIB] {
        check_valid(&generate(size, 3));
    }
}

/// Production sizes: generation stays cheap (no full trees), and so does
/// filecoin-proofs' vanilla verification of the challenged paths.
#[test]
fn porep_32gib_and_64gib_workloads_pass_the_vanilla_checks() {
    for size in [SECTOR_SIZE_32_GIB, SECTOR_SIZE_64_GIB] {
        check_valid(&generate(size, 4));
    }
}

fn post_workload(kind: ProofKind, sector_size: u64, sectors: usize) -> (PostWorkload, ProofRequest) {
    let t = Instant::now();
    let spec = PostSpec { kind, sector_size, seed: 5, miner_id: 1000, first_sector: 20, sectors };
    let w = post(spec).expect("generator");
    eprintln!("{kind:?} {sector_size}-byte workload ({} sectors) generated in {:.2} s", w.sectors.len(), t.elapsed().as_secs_f64());
    let mut req = ProofRequest::new(kind, 1000);
    assert_eq!(req.prover_id, w.prover_id);
    req.registered_proof = ProofType::current_number(kind, sector_size).unwrap();
    req.sector_size = sector_size;
    req.randomness = w.randomness.to_vec();
    req.vanilla_proofs = w.vanilla_proofs.clone();
    // The submit check runs filecoin-proofs' vanilla PoSt verification.
    let t = Instant::now();
    prepare(&req).expect("the submit check refuses the workload");
    eprintln!("submit check and circuit: {:.2} s", t.elapsed().as_secs_f64());
    (w, req)
}

fn replicas(w: &PostWorkload) -> BTreeMap<SectorId, PublicReplicaInfo> {
    w.sectors.iter().map(|&(n, comm_r)| (SectorId::from(n), PublicReplicaInfo::new(w.registered_proof, comm_r))).collect()
}

#[test]
fn post_2kib_workloads_prove_to_proofs_the_post_verifiers_accept() {
    let (w, req) = post_workload(ProofKind::WindowPostPartition, SECTOR_SIZE_2_KIB, 0);
    assert_eq!(w.sectors.len(), w.registered_proof.sector_count());
    let proof = prove_on_cpu(&req);
    let ok = verify_window_post(&w.randomness, &[(w.registered_proof, &proof)], &replicas(&w), w.prover_id).unwrap();
    assert!(ok, "verify_window_post rejects the proof of the generated workload");
    let mut other = w.randomness;
    other[0] ^= 1;
    assert!(!verify_window_post(&other, &[(w.registered_proof, &proof)], &replicas(&w), w.prover_id).unwrap_or(false));

    let (w, req) = post_workload(ProofKind::WinningPost, SECTOR_SIZE_2_KIB, 0);
    let proof = prove_on_cpu(&req);
    assert!(verify_winning_post(&w.randomness, &proof, &replicas(&w), w.prover_id).unwrap(), "verify_winning_post rejects it");

    // Deterministic in the seed.
    let (again, _) = post_workload(ProofKind::WinningPost, SECTOR_SIZE_2_KIB, 0);
    assert_eq!(again.vanilla_proofs, w.vanilla_proofs);
}

/// A full 32 GiB WindowPoSt partition (2349 sectors) and a 32 GiB
/// WinningPoSt.
#[test]
fn post_32gib_workloads_pass_the_vanilla_checks() {
    let (w, _) = post_workload(ProofKind::WindowPostPartition, SECTOR_SIZE_32_GIB, 0);
    assert_eq!(w.sectors.len(), 2349);
    post_workload(ProofKind::WinningPost, SECTOR_SIZE_32_GIB, 0);
}

fn snap_workload(sector_size: u64) -> (SnapWorkload, ProofRequest) {
    let t = Instant::now();
    let w = snap(SnapSpec { sector_size, seed: 6 }).expect("generator");
    eprintln!("SnapDeals {sector_size}-byte workload generated in {:.2} s", t.elapsed().as_secs_f64());
    let mut req = ProofRequest::new(ProofKind::SnapDealsUpdate, 1000);
    req.registered_proof = ProofType::current_number(ProofKind::SnapDealsUpdate, sector_size).unwrap();
    req.sector_size = sector_size;
    req.vanilla_proofs = w.vanilla_proofs.clone();
    req.comm_r_old = w.comm_r_old.to_vec();
    req.comm_r_new = w.comm_r_new.to_vec();
    req.comm_d_new = w.comm_d_new.to_vec();
    // The submit check runs filecoin-proofs' update verifier.
    let t = Instant::now();
    prepare(&req).expect("the submit check refuses the workload");
    eprintln!("submit check and circuits: {:.2} s", t.elapsed().as_secs_f64());
    (w, req)
}

#[test]
fn snap_2kib_workload_proves_to_a_proof_the_update_verifier_accepts() {
    let (w, req) = snap_workload(SECTOR_SIZE_2_KIB);
    let proof = prove_on_cpu(&req);
    let verify = |comm_d_new| verify_empty_sector_update_proof(w.registered_proof, &proof, w.comm_r_old, w.comm_r_new, comm_d_new);
    assert!(verify(w.comm_d_new).unwrap(), "verify_empty_sector_update_proof rejects the proof of the generated workload");
    let mut other = w.comm_d_new;
    other[0] ^= 1;
    assert!(!verify(other).unwrap_or(false));
    assert_eq!(snap_workload(SECTOR_SIZE_2_KIB).0.vanilla_proofs, w.vanilla_proofs, "same seed, different output");
}

#[test]
fn snap_8mib_and_512mib_workloads_pass_the_vanilla_checks() {
    snap_workload(SECTOR_SIZE_8_MIB);
    snap_workload(SECTOR_SIZE_512_MIB);
}

/// 32 GiB and 64 GiB (16 partitions).
#[test]
fn snap_32gib_and_64gib_workloads_pass_the_vanilla_checks() {
    snap_workload(SECTOR_SIZE_32_GIB);
    snap_workload(SECTOR_SIZE_64_GIB);
}
