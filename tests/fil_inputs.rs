//! Filecoin request decoding and checks: every malformed input is a named
//! error (never a panic), circuit ids match filecoin-proofs' manifest, and
//! a missing parameter file is named. Fast: no parameters, no proving.

use cuzk_core::filecoin::filecoin_proofs_api::{get_parameter_data, RegisteredSealProof};
use cuzk_core::filecoin::{
    circuit_id, encode_envelope, prepare, prover_id_from_miner, setup, FilecoinError, ParamCache, ProofKind, ProofRequest, ProofType,
    PublishedDigests, SECTOR_SIZES,
};
use cuzk_tests::fil::data_dir;

fn c1_json() -> Vec<u8> {
    std::fs::read(data_dir().join("c1-output.json")).unwrap()
}

fn meta() -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(data_dir().join("meta.json")).unwrap()).unwrap()
}

fn bytes(v: &serde_json::Value) -> Vec<u8> {
    v.as_array().unwrap().iter().map(|b| b.as_u64().unwrap() as u8).collect()
}

fn porep_request(envelope: Vec<u8>) -> ProofRequest {
    let mut req = ProofRequest::new(ProofKind::PorepSealCommit, 0);
    req.prover_id = bytes(&meta()["prover_id"]).try_into().unwrap();
    req.vanilla_proof = envelope;
    req.sector_number = 42;
    req
}

fn err(req: &ProofRequest) -> FilecoinError {
    match prepare(req) {
        Ok(_) => panic!("request was accepted"),
        Err(e) => {
            eprintln!("{e}");
            e
        }
    }
}

#[test]
fn prover_id_is_the_miner_varint() {
    assert_eq!(prover_id_from_miner(1000)[..3], [0xe8, 0x07, 0]);
    assert_eq!(prover_id_from_miner(0), [0; 32]);
    assert_eq!(prover_id_from_miner(127)[..2], [0x7f, 0]);
    assert_eq!(prover_id_from_miner(128)[..2], [0x80, 0x01]);
    assert_eq!(prover_id_from_miner(u64::MAX)[9..11], [0x01, 0]);
}

#[test]
fn circuit_ids_are_production_names() {
    let kinds = [ProofKind::PorepSealCommit, ProofKind::SnapDealsUpdate, ProofKind::WindowPostPartition, ProofKind::WinningPost];
    for kind in kinds {
        for size in SECTOR_SIZES {
            let pt = ProofType::current(kind, size).unwrap();
            let id = circuit_id(pt).unwrap();
            assert!(get_parameter_data(&id).is_some(), "{pt:?}: {id} is not in filecoin-proofs' parameters.json");
            // The names the param cache gives its files are the published ones.
            let files = ParamCache::new("/p").files(&id);
            for f in [files.params, files.vk] {
                let name = f.file_name().unwrap().to_str().unwrap();
                assert!(PublishedDigests::filecoin().get(name).is_some(), "{name} has no published digest");
            }
        }
    }
    // The SnapDeals id is not the PoRep one (filecoin-proofs-api 19.1 bug).
    let snap = circuit_id(ProofType::current(ProofKind::SnapDealsUpdate, 2048).unwrap()).unwrap();
    assert!(snap.starts_with("empty-sector-update-"), "{snap}");
    let porep = ProofType::Seal(RegisteredSealProof::StackedDrg2KiBV1_1);
    assert_eq!(
        circuit_id(porep).unwrap(),
        "stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f"
    );
}

#[test]
fn partition_counts_come_from_the_registered_proof() {
    let parts = |k, s| ProofType::current(k, s).unwrap().partitions();
    assert_eq!(parts(ProofKind::PorepSealCommit, 2048), 1);
    assert_eq!(parts(ProofKind::PorepSealCommit, 32 << 30), 10);
    assert_eq!(parts(ProofKind::PorepSealCommit, 64 << 30), 10);
    assert_eq!(parts(ProofKind::SnapDealsUpdate, 32 << 30), 16);
    assert_eq!(parts(ProofKind::WindowPostPartition, 32 << 30), 1);
}

#[test]
fn the_real_c1_output_prepares() {
    let p = prepare(&porep_request(encode_envelope(42, 2048, &c1_json()))).unwrap();
    assert_eq!(p.circuits.len(), 1);
    assert_eq!(p.meta.public_inputs.len(), 1);
    assert_eq!(p.meta.proof_type, ProofType::Seal(RegisteredSealProof::StackedDrg2KiBV1_1));
}

#[test]
fn malformed_porep_envelopes_are_named_errors() {
    assert!(matches!(err(&porep_request(vec![])), FilecoinError::EmptyVanillaProof { .. }));
    assert!(matches!(err(&porep_request(b"{not json".to_vec())), FilecoinError::Json { .. }));
    let bad_b64 = br#"{"SectorNum": 42, "Phase1Out": "***", "SectorSize": 2048}"#.to_vec();
    assert!(matches!(err(&porep_request(bad_b64)), FilecoinError::Base64 { .. }));
    let not_c1 = encode_envelope(42, 2048, br#"{"hello": 1}"#);
    assert!(matches!(err(&porep_request(not_c1)), FilecoinError::Json { what: "SealCommitPhase1Output", .. }));
    let empty_c1 = encode_envelope(42, 2048, b"");
    assert!(matches!(err(&porep_request(empty_c1)), FilecoinError::EmptyVanillaProof { .. }));
    let wrong_size = encode_envelope(42, 32 << 30, &c1_json());
    assert!(matches!(err(&porep_request(wrong_size)), FilecoinError::SectorSizeMismatch { .. }));
    let mut req = porep_request(encode_envelope(42, 2048, &c1_json()));
    req.sector_size = 8 << 20;
    assert!(matches!(err(&req), FilecoinError::SectorSizeMismatch { .. }));
}

#[test]
fn a_porep_registered_proof_must_agree_with_its_c1_output() {
    let mut req = porep_request(encode_envelope(42, 2048, &c1_json()));
    for same_size in [0, 5, 10] {
        req.registered_proof = same_size;
        prepare(&req).unwrap();
    }
    req.registered_proof = 8;
    let e = err(&req).to_string();
    assert!(e.contains("registered_proof 8 (StackedDrg32GiBV1_1) but the C1 output is a StackedDrg2KiBV1_1 proof"), "{e}");
    req.registered_proof = 99;
    assert!(matches!(err(&req), FilecoinError::UnknownRegisteredProof { kind: "PoRep", value: 99 }));
}

#[test]
fn wrong_public_values_are_caught_before_proving() {
    // Another miner: the replica id no longer matches.
    let mut req = porep_request(encode_envelope(42, 2048, &c1_json()));
    req.prover_id = prover_id_from_miner(1234);
    assert!(matches!(err(&req), FilecoinError::Inconsistent(_)));
    // Another sector number than the envelope's.
    let mut req = porep_request(encode_envelope(42, 2048, &c1_json()));
    req.sector_number = 43;
    assert!(matches!(err(&req), FilecoinError::Inconsistent(_)));
    // A tampered seed: the vanilla proofs no longer verify.
    let mut c1: serde_json::Value = serde_json::from_slice(&c1_json()).unwrap();
    c1["seed"][0] = serde_json::json!(c1["seed"][0].as_u64().unwrap() ^ 1);
    let req = porep_request(encode_envelope(42, 2048, c1.to_string().as_bytes()));
    assert!(matches!(err(&req), FilecoinError::VanillaInvalid(_)));
    // No vanilla proofs at all.
    let mut c1: serde_json::Value = serde_json::from_slice(&c1_json()).unwrap();
    c1["vanilla_proofs"] = serde_json::json!({"StackedDrg2KiBV1": []});
    let req = porep_request(encode_envelope(42, 2048, c1.to_string().as_bytes()));
    assert!(matches!(err(&req), FilecoinError::Count { .. }));
}

fn post_request(kind: ProofKind, registered: u64) -> ProofRequest {
    let mut req = ProofRequest::new(kind, 1000);
    req.registered_proof = registered;
    req.randomness = vec![1; 32];
    req.vanilla_proofs = vec![vec![1, 2, 3]];
    req
}

#[test]
fn malformed_post_and_snap_requests_are_named_errors() {
    let mut req = post_request(ProofKind::WinningPost, 0);
    assert!(matches!(err(&req), FilecoinError::Bincode { index: 0, .. }));
    req.vanilla_proofs = vec![];
    assert!(matches!(err(&req), FilecoinError::EmptyVanillaProof { .. }));
    req.vanilla_proofs = vec![vec![]];
    assert!(matches!(err(&req), FilecoinError::EmptyVanillaProofAt { index: 0 }));
    let mut req = post_request(ProofKind::WindowPostPartition, 10);
    req.randomness = vec![1; 31];
    assert!(matches!(err(&req), FilecoinError::BadLength { field: "randomness", len: 31 }));
    req.randomness = vec![0xff; 32];
    assert!(matches!(err(&req), FilecoinError::Bincode { .. } | FilecoinError::BadFieldElement { .. }));
    // A window proof type for a winning request, and unknown numbers.
    assert!(matches!(err(&post_request(ProofKind::WinningPost, 10)), FilecoinError::Inconsistent(_)));
    assert!(matches!(err(&post_request(ProofKind::WinningPost, 99)), FilecoinError::UnknownRegisteredProof { .. }));
    let mut req = post_request(ProofKind::WindowPostPartition, 10);
    req.sector_size = 32 << 30;
    assert!(matches!(err(&req), FilecoinError::SectorSizeMismatch { .. }));

    let mut snap = ProofRequest::new(ProofKind::SnapDealsUpdate, 1000);
    snap.vanilla_proofs = vec![vec![9; 10]];
    snap.comm_r_old = vec![1; 32];
    snap.comm_r_new = vec![1; 32];
    snap.comm_d_new = vec![1; 31];
    assert!(matches!(err(&snap), FilecoinError::BadLength { field: "comm_d_new", .. }));
    snap.comm_d_new = vec![1; 32];
    assert!(matches!(err(&snap), FilecoinError::Bincode { .. }));
    snap.vanilla_proofs = vec![vec![9; 10], vec![9; 10]];
    assert!(matches!(err(&snap), FilecoinError::Count { .. }));
    snap.registered_proof = 7;
    assert!(matches!(err(&snap), FilecoinError::UnknownRegisteredProof { .. }));
}

#[test]
fn missing_params_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ParamCache::new(dir.path());
    let id = circuit_id(ProofType::current(ProofKind::WinningPost, 2048).unwrap()).unwrap();
    let e = cache.load_vk(&id).err().expect("no .vk there");
    let msg = e.to_string();
    assert!(matches!(e, FilecoinError::MissingParams { .. }));
    assert!(msg.contains(&format!("v28-{id}.vk")), "{msg}");
    assert!(cache.load_params(&id, Default::default()).is_err());
}

#[test]
fn blank_circuits_exist_for_every_type() {
    for kind in [ProofKind::PorepSealCommit, ProofKind::SnapDealsUpdate, ProofKind::WindowPostPartition, ProofKind::WinningPost] {
        for size in SECTOR_SIZES {
            setup::blank_circuit(ProofType::current(kind, size).unwrap()).unwrap();
        }
    }
}

/// The real C1 output with one byte changed where `at` points (a JSON
/// pointer into the only partition's proofs), in the envelope.
fn corrupted(at: &str, edit: impl FnOnce(&mut serde_json::Value)) -> ProofRequest {
    let mut c1: serde_json::Value = serde_json::from_slice(&c1_json()).unwrap();
    let proofs = &mut c1["vanilla_proofs"]["StackedDrg2KiBV1"][0];
    edit(proofs.pointer_mut(at).unwrap_or_else(|| panic!("no {at} in the C1 output")));
    porep_request(encode_envelope(42, 2048, c1.to_string().as_bytes()))
}

fn flip(v: &mut serde_json::Value) {
    *v = serde_json::json!(v.as_u64().unwrap() ^ 1);
}

/// Each corruption is refused by the check at preparation, in
/// milliseconds, naming the partition, the challenge and the part.
#[test]
fn corrupted_porep_vanilla_proofs_are_refused_and_named() {
    let path = "/data/Single/path/path";
    let cases: Vec<(String, Box<dyn FnOnce(&mut serde_json::Value)>, &[&str])> = vec![
        // filecoin-proofs' verify_all_partitions accepts these two.
        (
            format!("/1/comm_r_last_proof{path}/0/hashes/3/5"),
            Box::new(flip),
            &["challenge 1", "comm_r_last (tree_r_last) path does not hash"],
        ),
        (format!("/0/comm_d_proofs{path}/2/hashes/0/7"), Box::new(flip), &["challenge 0", "comm_d (tree_d) path does not hash"]),
        (
            "/0/replica_column_proofs/drg_parents/2/column/rows/1/4".to_string(),
            Box::new(flip),
            &["challenge 0", "filecoin-proofs' check fails"],
        ),
        ("/1/labeling_proofs/0/parents/0/3".to_string(), Box::new(flip), &["challenge 1", "filecoin-proofs' check fails"]),
        (
            "/0/replica_column_proofs/exp_parents".to_string(),
            Box::new(|v| {
                v.as_array_mut().unwrap().pop();
            }),
            &["expansion parent columns"],
        ),
        (
            format!("/0/comm_r_last_proof{path}"),
            Box::new(|v| {
                v.as_array_mut().unwrap().pop();
            }),
            &["comm_r_last (tree_r_last) path has 1 levels"],
        ),
        (
            "/1/replica_column_proofs/c_x/column/rows".to_string(),
            Box::new(|v| {
                v.as_array_mut().unwrap().pop();
            }),
            &["challenged node's column has 1 rows"],
        ),
    ];
    for (at, edit, needles) in cases {
        let req = corrupted(&at, edit);
        let t = std::time::Instant::now();
        let e = err(&req);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        eprintln!("{at}: refused in {ms:.1} ms");
        assert!(matches!(e, FilecoinError::VanillaInvalid(_)), "{at}: {e}");
        let msg = e.to_string();
        assert!(msg.contains("partition 0"), "{at}: {msg}");
        for n in needles {
            assert!(msg.contains(n), "{at}: {msg:?} does not say {n:?}");
        }
    }
}

/// Through the engine: a C1 output with one byte of a comm_r_last path
/// changed is a bad request at submission (no parameters needed, nothing
/// queued); the same C1 output unchanged gets past the check (to the
/// missing parameters).
#[test]
fn the_engine_refuses_a_corrupted_c1_at_submit() {
    use cuzk_core::engine::{Engine, EngineError, ProofKind as Kind, ProofRequest as Request};
    use cuzk_core::filecoin::ProofRequest as FilecoinRequest;
    use cuzk_tests::fil::{seal_2kib, sector_data};
    let sealed = seal_2kib(prover_id_from_miner(1000), 7, &sector_data(1));
    let good = sealed.commit_phase1([9u8; 32]);
    let mut c1: serde_json::Value = serde_json::from_slice(&good).unwrap();
    let byte = c1.pointer_mut("/vanilla_proofs/StackedDrg2KiBV1/0/1/comm_r_last_proof/data/Single/path/path/1/hashes/0/9").unwrap();
    flip(byte);
    let request = |c1: &[u8]| {
        Request::new(FilecoinRequest {
            sector_size: 2048,
            registered_proof: 5,
            vanilla_proof: encode_envelope(7, 2048, c1),
            sector_number: 7,
            ..FilecoinRequest::new(Kind::PorepSealCommit, 1000)
        })
    };
    let mut cfg = cuzk_core::config::Config::default();
    let dir = tempfile::tempdir().unwrap();
    cfg.srs.param_cache = dir.path().into();
    let engine = Engine::start(cfg).unwrap();
    let t = std::time::Instant::now();
    let e = engine.submit(request(c1.to_string().as_bytes())).unwrap_err();
    eprintln!("refused at submit in {:.1} ms: {e}", t.elapsed().as_secs_f64() * 1e3);
    let EngineError::BadRequest(msg) = e else { panic!("not a bad request: {e}") };
    assert!(msg.contains("partition 0, challenge 1") && msg.contains("comm_r_last (tree_r_last) path does not hash"), "{msg}");
    let e = engine.submit(request(&good)).unwrap_err();
    let missing = cuzk_core::failure::ErrorKind::MissingParams;
    assert!(matches!(&e, EngineError::Srs { kind, message, .. } if *kind == missing && message.contains("missing parameter file")), "{e}");
    let s = engine.status();
    assert_eq!((s.jobs_completed, s.jobs_failed, s.jobs_cancelled), (0, 0, 0));
}
