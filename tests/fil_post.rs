//! WinningPoSt and WindowPoSt at 2 KiB: sectors sealed on the CPU here,
//! vanilla proofs from filecoin-proofs-api (what Curio sends), proven by
//! us, accepted by filecoin-proofs' verifiers. WindowPoSt covers two
//! partitions (3 sectors, 2 per partition) assembled as Curio merges them.

use cuzk_core::filecoin::filecoin_proofs_api::post::{verify_window_post, verify_winning_post};
use cuzk_core::filecoin::filecoin_proofs_api::RegisteredPoStProof;
use cuzk_core::filecoin::{prove_request, prover_id_from_miner, ProofKind, ProofRequest, ProofType};
use cuzk_tests::fil::{
    ensure_params, param_cache, post_randomness as randomness, post_replicas as replicas, post_vanilla, seal_2kib, sector_data,
    test_options, Sealed,
};
use std::time::Instant;

const MINER: u64 = 1000;

fn vanilla(post: RegisteredPoStProof, rand: &[u8; 32], sectors: &[&Sealed]) -> Vec<Vec<u8>> {
    post_vanilla(post, prover_id_from_miner(MINER), rand, sectors)
}

fn prove(kind: ProofKind, registered: u64, rand: [u8; 32], vanilla: Vec<Vec<u8>>, partition: u32) -> Vec<u8> {
    let mut req = ProofRequest::new(kind, MINER);
    req.registered_proof = registered;
    req.sector_size = 2048;
    req.randomness = rand.to_vec();
    req.vanilla_proofs = vanilla;
    req.partition_index = partition;
    let t = Instant::now();
    let out = prove_request(&req, &param_cache(), test_options()).unwrap();
    eprintln!("{kind:?} partition {partition}: proved + self-checked in {:.1} s", t.elapsed().as_secs_f64());
    out
}

#[test]
fn winning_post_2kib() {
    param_cache();
    let post = RegisteredPoStProof::StackedDrgWinning2KiBV1;
    ensure_params(ProofType::Post(post));
    let t = Instant::now();
    let sector = seal_2kib(prover_id_from_miner(MINER), 7, &sector_data(1));
    eprintln!("seal: {:.1} s", t.elapsed().as_secs_f64());
    let rand = randomness(5);
    let proof = prove(ProofKind::WinningPost, 0, rand, vanilla(post, &rand, &[&sector]), 0);
    assert_eq!(proof.len(), 192);
    let reps = replicas(post, &[&sector]);
    assert!(verify_winning_post(&rand, &proof, &reps, prover_id_from_miner(MINER)).unwrap());
    assert!(!verify_winning_post(&randomness(6), &proof, &reps, prover_id_from_miner(MINER)).unwrap_or(false));
}

#[test]
fn window_post_2kib_two_partitions() {
    param_cache();
    let post = RegisteredPoStProof::StackedDrgWindow2KiBV1_2; // Go's V1_1 = 10
    ensure_params(ProofType::Post(post));
    let sectors: Vec<Sealed> = (0..3).map(|i| seal_2kib(prover_id_from_miner(MINER), 20 + i, &sector_data(i as u8))).collect();
    let all: Vec<&Sealed> = sectors.iter().collect();
    let rand = randomness(9);
    let mut vanilla = vanilla(post, &rand, &all);
    {
        let mut req = ProofRequest::new(ProofKind::WindowPostPartition, MINER);
        req.registered_proof = 10;
        req.randomness = rand.to_vec();
        req.vanilla_proofs = vanilla[..2].to_vec();
        let real = cuzk_tests::fil::shape_of(cuzk_core::filecoin::prepare(&req).unwrap().circuits.remove(0));
        let blank = cuzk_tests::fil::shape_of(cuzk_core::filecoin::setup::blank_circuit(ProofType::Post(post)).unwrap());
        // The parameters come from the blank circuit: the real one must match.
        assert_eq!(cuzk_tests::fil::shape_diff(&blank, &real), None);
    }
    let second = vanilla.split_off(2);
    let mut proof = prove(ProofKind::WindowPostPartition, 10, rand, vanilla, 0);
    proof.extend(prove(ProofKind::WindowPostPartition, 10, rand, second, 1));
    let reps = replicas(post, &all);
    assert!(verify_window_post(&rand, &[(post, &proof)], &reps, prover_id_from_miner(MINER)).unwrap());
    // One bit of the first partition's A changed (swapping two bytes left
    // the proof as it was whenever they were equal: flaky).
    proof[10] ^= 1;
    assert!(!verify_window_post(&rand, &[(post, &proof)], &reps, prover_id_from_miner(MINER)).unwrap_or(false));
}

/// Through the engine (CPU backend): the request as the daemon receives
/// it, a `FilecoinJob` as the engine's circuit, then assembly and the
/// self-check, then filecoin-proofs' verifier.
#[test]
fn window_post_2kib_through_the_engine() {
    use cuzk_core::engine::{self, Engine, JobOutcome};
    use cuzk_core::filecoin::{prepare, FilecoinJob};
    use cuzk_core::groth16::Proof;
    let cache = param_cache();
    let post = RegisteredPoStProof::StackedDrgWindow2KiBV1_2;
    ensure_params(ProofType::Post(post));
    let sector = seal_2kib(prover_id_from_miner(MINER), 30, &sector_data(9));
    let rand = randomness(3);
    let request = ProofRequest {
        sector_size: 2048,
        registered_proof: 10,
        vanilla_proofs: vanilla(post, &rand, &[&sector]),
        randomness: rand.to_vec(),
        ..ProofRequest::new(ProofKind::WindowPostPartition, MINER)
    };
    let job = std::sync::Arc::new(FilecoinJob::new(prepare(&request).unwrap()));
    let meta = job.meta().clone();
    let mut cfg = cuzk_core::config::Config::default();
    cfg.srs.param_cache = cache.dir.clone();
    let engine = Engine::start(cfg).unwrap();
    cuzk_tests::require_gpu_backend("the engine's WindowPoSt", &engine.status().backend);
    let t = Instant::now();
    let (_, outcome) = engine.prove(engine::ProofRequest::custom(job), Some(std::time::Duration::from_secs(1200))).unwrap();
    let JobOutcome::Completed(out) = outcome else { panic!("engine: {outcome:?}") };
    eprintln!("engine: WindowPoSt proved in {:.1} s", t.elapsed().as_secs_f64());
    let proofs = Proof::many_from_bytes(&out.proof).unwrap();
    let bytes = meta.finish(&proofs, Some(&cache.load_vk(&meta.circuit_id).unwrap())).unwrap();
    let reps = replicas(post, &[&sector]);
    assert!(verify_window_post(&rand, &[(post, &bytes)], &reps, prover_id_from_miner(MINER)).unwrap());
}
