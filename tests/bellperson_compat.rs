//! Byte-for-byte agreement with bellperson 0.27: same params, witness, r
//! and s give the same proof bytes; params files cross both ways; each
//! side's verifier accepts the other's proofs; a PCE (witness-only
//! synthesis + the recorded R1CS) gives the same proofs.

use bellperson::groth16 as bp;
use blstrs::Scalar as Fr;
use cuzk_core::circuits::{BuiltinCircuit, CircuitSpec};
use cuzk_core::groth16::{self, prepare_verifying_key, verify_proof, verify_proofs_batch, Proof};
use cuzk_tests::*;
use ff::Field;
use rand::RngCore;

/// Our setup → bellperson reads it → identical proofs both ways, mutual
/// verification.
fn check_against_bellperson(spec: CircuitSpec, seeds: &[u64], tag: &str) {
    let mut rng = rng(tag);
    let params = groth16::generate_random_parameters(spec.blank(), &mut rng).unwrap();
    let bp_params = to_bellperson(&params);
    let pvk = prepare_verifying_key(&params.vk);
    let bp_pvk = bp::prepare_verifying_key(&bp_params.vk);
    let pce = cuzk_core::pce::record(tag, spec.blank()).unwrap();
    for &seed in seeds {
        let circuit = spec.instance(seed);
        let inputs = circuit.public_inputs().unwrap();
        let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
        let ours = groth16::prove_deterministic(&params, circuit.clone(), r, s).unwrap();
        let theirs = bp::create_proof(circuit.clone(), &bp_params, r, s).unwrap();
        assert_eq!(ours.to_bytes().to_vec(), bp_proof_bytes(&theirs), "{tag} seed {seed}: proof bytes differ");
        // Witness-only synthesis + the recorded R1CS: the same proof.
        let pa = pce.synthesize(circuit.clone()).unwrap();
        let from_pce = groth16::prove_synthesized_deterministic(&params, &[pa], &[(r, s)]).unwrap();
        assert_eq!(from_pce[0].to_bytes(), ours.to_bytes(), "{tag} seed {seed}: PCE proof differs");
        assert!(verify_proof(&pvk, &ours, &inputs).unwrap(), "{tag}: our verifier rejects our proof");
        assert!(bp::verify_proof(&bp_pvk, &bp_proof_from(&ours), &inputs).unwrap(), "{tag}: bellperson rejects our proof");
        let mut wrong = inputs.clone();
        if let Some(x) = wrong.first_mut() {
            *x += Fr::ONE;
            assert!(!verify_proof(&pvk, &ours, &wrong).unwrap(), "{tag}: wrong input accepted");
        }
    }
}

#[test]
fn synthetic_non_power_of_two() {
    check_against_bellperson(CircuitSpec::Synthetic { constraints: 1000, inputs: 8 }, &[1, 2], "synthetic:1000:8");
}

#[test]
fn synthetic_exact_power_of_two_and_odd_sizes() {
    for constraints in [64, 4096, 4097, 6143] {
        let spec = CircuitSpec::Synthetic { constraints, inputs: 3 };
        check_against_bellperson(spec, &[7], &spec.to_string());
    }
}

#[test]
fn many_public_inputs() {
    check_against_bellperson(CircuitSpec::Synthetic { constraints: 3001, inputs: 200 }, &[3], "synthetic:3001:200");
}

#[test]
fn sha256_preimage() {
    check_against_bellperson(CircuitSpec::Sha256 { blocks: 1 }, &[4], "sha256:1");
}

#[test]
fn mimc_chain() {
    check_against_bellperson(CircuitSpec::Mimc { hashes: 2 }, &[5, 6], "mimc:2");
}

#[test]
fn zero_aux_variables() {
    let mut rng = rng("zero-aux");
    let params = groth16::generate_random_parameters(SquareNoAux { x: None }, &mut rng).unwrap();
    assert!(params.l.is_empty());
    let bp_params = to_bellperson(&params);
    let x = Fr::random(&mut rng);
    let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let ours = groth16::prove_deterministic(&params, SquareNoAux { x: Some(x) }, r, s).unwrap();
    let theirs = bp::create_proof(SquareNoAux { x: Some(x) }, &bp_params, r, s).unwrap();
    assert_eq!(ours.to_bytes().to_vec(), bp_proof_bytes(&theirs));
    let pvk = prepare_verifying_key(&params.vk);
    assert!(verify_proof(&pvk, &ours, &[x, x * x]).unwrap());
    assert!(!verify_proof(&pvk, &ours, &[x, x]).unwrap());
}

/// Bellperson's setup → we read it (and write identical bytes back) →
/// identical proofs; bellperson's own random proofs pass our verifier.
#[test]
fn bellperson_params_and_proofs() {
    let mut rng = rng("bp-params");
    let spec = CircuitSpec::Synthetic { constraints: 777, inputs: 5 };
    let bp_params = bp::generate_random_parameters::<blstrs::Bls12, _, _>(spec.blank(), &mut rng).unwrap();
    let (params, bytes) = from_bellperson(&bp_params);
    let mut rewritten = Vec::new();
    params.write(&mut rewritten).unwrap();
    assert!(rewritten == bytes, "params round trip changed bytes");
    let pvk = prepare_verifying_key(&params.vk);
    for seed in [11, 12] {
        let c: BuiltinCircuit = spec.instance(seed);
        let inputs = c.public_inputs().unwrap();
        let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
        let ours = groth16::prove_deterministic(&params, c.clone(), r, s).unwrap();
        let theirs = bp::create_proof(c.clone(), &bp_params, r, s).unwrap();
        assert_eq!(ours.to_bytes().to_vec(), bp_proof_bytes(&theirs));
        let random = bp::create_random_proof(c, &bp_params, &mut rng).unwrap();
        let parsed = Proof::from_bytes(&bp_proof_bytes(&random)).unwrap();
        assert!(verify_proof(&pvk, &parsed, &inputs).unwrap());
    }
}

/// A batch sharing one SRS equals bellperson's batch, and batch
/// verification accepts it and rejects it with one bad proof inside.
#[test]
fn batch_proving_and_batch_verification() {
    let mut rng = rng("batch");
    let spec = CircuitSpec::Synthetic { constraints: 2500, inputs: 4 };
    let params = groth16::generate_random_parameters(spec.blank(), &mut rng).unwrap();
    let bp_params = to_bellperson(&params);
    let circuits: Vec<BuiltinCircuit> = (0..4).map(|i| spec.instance(100 + i)).collect();
    let inputs: Vec<Vec<Fr>> = circuits.iter().map(|c| c.public_inputs().unwrap()).collect();
    let rs: Vec<(Fr, Fr)> = (0..4).map(|_| (Fr::random(&mut rng), Fr::random(&mut rng))).collect();
    let ours = groth16::prove_batch_deterministic(&params, circuits.clone(), &rs).unwrap();
    let theirs = bp::create_proof_batch(circuits, &bp_params, rs.iter().map(|x| x.0).collect(), rs.iter().map(|x| x.1).collect()).unwrap();
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o.to_bytes().to_vec(), bp_proof_bytes(t));
    }
    let pvk = prepare_verifying_key(&params.vk);
    assert!(verify_proofs_batch(&pvk, &ours, &inputs, &mut rng).unwrap());
    let mut bad = ours.clone();
    bad.swap(0, 1);
    assert!(!verify_proofs_batch(&pvk, &bad, &inputs, &mut rng).unwrap());
    // Random r, s: proofs differ from run to run but verify.
    let fresh = groth16::prove_batch(&params, (0..2).map(|i| spec.instance(100 + i)).collect()).unwrap();
    assert_ne!(fresh[0].to_bytes(), ours[0].to_bytes());
    assert!(verify_proofs_batch(&pvk, &fresh, &inputs[..2], &mut rng).unwrap());
    let _ = rng.next_u32();
}

/// The Filecoin setup path (recorded R1CS of the blank circuit, queries
/// streamed into the param cache under the production names) writes
/// exactly bellperson's `generate_parameters` bytes for the same toxic
/// waste.
fn filecoin_setup_matches_bellperson(kind: cuzk_core::filecoin::ProofKind, seed: u64) {
    use cuzk_core::filecoin::setup::{blank_circuit, generate_params};
    use cuzk_core::filecoin::{ParamCache, ProofType};
    use cuzk_core::groth16::ToxicWaste;
    use group::Group;
    let dir = tempfile::tempdir().unwrap();
    let cache = ParamCache::new(dir.path());
    let pt = ProofType::current(kind, 2048).unwrap();
    let tw = ToxicWaste::from_seed(seed);
    let files = generate_params(pt, &cache, &tw, None).unwrap();
    let (g1, g2) = (blstrs::G1Projective::generator(), blstrs::G2Projective::generator());
    let theirs =
        bp::generate_parameters::<blstrs::Bls12, _>(blank_circuit(pt).unwrap(), g1, g2, tw.alpha, tw.beta, tw.gamma, tw.delta, tw.tau)
            .unwrap();
    let mut bytes = Vec::new();
    theirs.write(&mut bytes).unwrap();
    assert!(std::fs::read(&files.params).unwrap() == bytes, "{pt:?}: .params differs from bellperson's");
    let mut vk = Vec::new();
    theirs.vk.write(&mut vk).unwrap();
    assert!(std::fs::read(&files.vk).unwrap() == vk, "{pt:?}: .vk differs from bellperson's");
}

#[test]
fn filecoin_2kib_window_post_setup_matches_bellperson_byte_for_byte() {
    filecoin_setup_matches_bellperson(cuzk_core::filecoin::ProofKind::WindowPostPartition, 20);
}

#[test]
#[ignore = "bellperson's CPU setup: WinningPoSt ~4 min, PoRep (2.7 M constraints) tens of minutes on 2 cores; run by hand"]
fn filecoin_2kib_winning_post_and_porep_setup_match_bellperson_byte_for_byte() {
    filecoin_setup_matches_bellperson(cuzk_core::filecoin::ProofKind::WinningPost, 21);
    filecoin_setup_matches_bellperson(cuzk_core::filecoin::ProofKind::PorepSealCommit, 22);
}
