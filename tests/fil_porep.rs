//! PoRep C2 at 2 KiB from a real C1 output, through the Curio envelope:
//! filecoin-proofs' `verify_seal` accepts our proof, and with fixed r, s
//! each partition proof equals bellperson 0.27's on the same circuit and
//! parameters. Parameters: our setup, cached outside the repo.

use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar as Fr};
use cuzk_core::filecoin::filecoin_proofs_api::seal::verify_seal;
use cuzk_core::filecoin::filecoin_proofs_api::SectorId;
use cuzk_core::filecoin::{prepare, prove_partitions, FilecoinError, ProofRequest};
use cuzk_core::srs::{Parameters, ReadOptions};
use cuzk_tests::fil::{bytes32 as arr, ensure_params, param_cache, shared_c1_request};
use std::time::Instant;

/// filecoin-proofs' `verify_seal` of `proof` for the shared C1's sector.
fn verify_shared(meta: &cuzk_core::filecoin::ProofMeta, values: &serde_json::Value, req: &ProofRequest, proof: &[u8]) -> bool {
    verify_seal(
        prepared_type(meta),
        arr(&values["comm_r"]),
        arr(&values["comm_d"]),
        req.prover_id,
        SectorId::from(req.sector_number),
        arr(&values["ticket"]),
        arr(&values["seed"]),
        proof,
    )
    .unwrap_or(false)
}

#[test]
fn porep_2kib_verifies_and_matches_bellperson() {
    let cache = param_cache();
    let (req, meta) = shared_c1_request();

    let t = Instant::now();
    let prepared = prepare(&req).unwrap();
    eprintln!("prepare: {:.2} s", t.elapsed().as_secs_f64());
    let files = ensure_params(prepared.meta.proof_type);
    assert_eq!(files.circuit_id, prepared.meta.circuit_id);

    let t = Instant::now();
    let params = Parameters::read_file(&files.params, ReadOptions::trusted()).unwrap();
    let key = cache.load_vk(&files.circuit_id).unwrap();
    eprintln!("load params: {:.1} s", t.elapsed().as_secs_f64());

    let t = Instant::now();
    let synthesized = prepared.synthesize().unwrap();
    eprintln!("synthesis: {:.1} s, {} constraints", t.elapsed().as_secs_f64(), synthesized.assignments[0].num_constraints());
    let rs: Vec<(Fr, Fr)> = (0..synthesized.assignments.len() as u64).map(|k| (Fr::from(7 + k), Fr::from(11 + k))).collect();
    let t = Instant::now();
    let proofs = prove_partitions(&synthesized, &params, Some(&rs)).unwrap();
    eprintln!("prove: {:.1} s", t.elapsed().as_secs_f64());
    let bytes = synthesized.meta.finish(&proofs, Some(&key)).unwrap();
    assert_eq!(bytes.len(), 192 * proofs.len());

    assert!(verify_shared(&synthesized.meta, &meta, &req, &bytes), "verify_seal rejects our proof");
    let mut bad = bytes.clone();
    bad[100] ^= 1;
    assert!(!verify_shared(&synthesized.meta, &meta, &req, &bad), "verify_seal accepts a tampered proof");
    // The flipped bit only shows that a point no longer decodes; the
    // well-formed proof against other public inputs (another seed: other
    // challenges; another sector number: another replica id) must be a
    // verdict, false, not an error.
    let (st, comm_r, comm_d, ticket, seed) =
        (prepared_type(&synthesized.meta), arr(&meta["comm_r"]), arr(&meta["comm_d"]), arr(&meta["ticket"]), arr(&meta["seed"]));
    let mut other_seed = seed;
    other_seed[0] ^= 1;
    let sector = SectorId::from(req.sector_number);
    let v = verify_seal(st, comm_r, comm_d, req.prover_id, sector, ticket, other_seed, &bytes);
    assert!(matches!(v, Ok(false)), "another seed: {v:?}");
    let v = verify_seal(st, comm_r, comm_d, req.prover_id, SectorId::from(req.sector_number + 1), ticket, seed, &bytes);
    assert!(matches!(v, Ok(false)), "another sector number: {v:?}");

    // The self-check rejects a proof of other public inputs.
    let mut wrong = synthesized.meta.clone();
    wrong.public_inputs[0][0] += Fr::from(1);
    assert!(matches!(wrong.finish(&proofs, Some(&key)), Err(FilecoinError::SelfCheckFailed { partition: 0, .. })));

    // The oracle: bellperson 0.27 on the same circuit, params, r and s.
    drop(params);
    let t = Instant::now();
    let file = std::io::BufReader::new(std::fs::File::open(&files.params).unwrap());
    let bp_params = bp::Parameters::<Bls12>::read(file, false).unwrap();
    let circuits = prepare(&req).unwrap().circuits;
    for (k, circuit) in circuits.into_iter().enumerate() {
        let theirs = bp::create_proof(circuit, &bp_params, rs[k].0, rs[k].1).unwrap();
        let mut tb = Vec::new();
        theirs.write(&mut tb).unwrap();
        assert_eq!(tb, proofs[k].to_bytes().to_vec(), "partition {k} differs from bellperson");
    }
    eprintln!("bellperson (load + prove): {:.1} s", t.elapsed().as_secs_f64());
}

fn prepared_type(meta: &cuzk_core::filecoin::ProofMeta) -> cuzk_core::filecoin::filecoin_proofs_api::RegisteredSealProof {
    match meta.proof_type {
        cuzk_core::filecoin::ProofType::Seal(p) => p,
        other => panic!("not a seal type: {other:?}"),
    }
}

/// The same real C1 output through the engine (the default backend: the
/// GPU where there is one, else the CPU): a
/// `FilecoinJob` with the self-check on, partitions scheduled, synthesized
/// and proven by the engine's workers, assembled by the job; then
/// `verify_seal`. (The daemon test sends a C1 output of a Curio-style
/// prover id; this one's prover id is not derived from a miner id.)
#[test]
fn porep_2kib_through_the_engine() {
    use cuzk_core::engine::{self, Engine, JobOutcome};
    use cuzk_core::filecoin::{FilecoinJob, JobSettings};
    let cache = param_cache();
    let (req, meta) = shared_c1_request();
    let prepared = prepare(&req).unwrap();
    ensure_params(prepared.meta.proof_type);
    let proof_meta = prepared.meta.clone();
    let settings = JobSettings { read: ReadOptions::trusted(), self_check: Some(cache.clone()) };
    let job = std::sync::Arc::new(FilecoinJob::new(prepared).with_settings(settings));
    let mut cfg = cuzk_core::config::Config::default();
    cfg.srs.param_cache = cache.dir.clone();
    let engine = Engine::start(cfg).unwrap();
    cuzk_tests::require_gpu_backend("the engine's PoRep", &engine.status().backend);
    let t = Instant::now();
    let (_, outcome) = engine.prove(engine::ProofRequest::custom(job), Some(std::time::Duration::from_secs(1800))).unwrap();
    let JobOutcome::Completed(out) = outcome else { panic!("engine: {outcome:?}") };
    eprintln!("engine: PoRep 2 KiB proved and self-checked in {:.1} s ({:?})", t.elapsed().as_secs_f64(), out.timings);
    assert!(verify_shared(&proof_meta, &meta, &req, &out.proof), "verify_seal rejects the engine's proof");
}
