//! Filecoin proofs through the real `cuzk-daemon` and its gRPC API, with
//! the requests Curio sends: 2 KiB PoRep C1 outputs in Curio's envelope
//! (one sealed, one from `cuzk filecoin-workload`),
//! WinningPoSt, WindowPoSt and SnapDeals vanilla proofs from
//! filecoin-proofs-api. filecoin-proofs' own verifiers must accept every
//! proof. Bad requests get errors that name what is wrong, a proof that
//! fails the self-check is a failed job, and the daemon keeps serving.
//!
//! Parameters: our setup with random toxic waste under the production
//! file names, made once into the shared test param cache
//! (`cuzk_tests::fil::param_cache`) and reused by every test binary.

mod common;

use common::*;
use cuzk_bin::proto as pb;
use cuzk_core::filecoin::filecoin_proofs_api::post::{
    get_num_partition_for_fallback_post, merge_window_post_partition_proofs, verify_window_post, verify_winning_post,
};
use cuzk_core::filecoin::filecoin_proofs_api::seal::verify_seal;
use cuzk_core::filecoin::filecoin_proofs_api::update::verify_empty_sector_update_proof;
use cuzk_core::filecoin::filecoin_proofs_api::{PartitionSnarkProof, RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};
use cuzk_core::filecoin::{encode_envelope, prover_id_from_miner, setup, ParamCache, ProofType};
use cuzk_tests::fil::{
    data_dir, ensure_params, param_cache, post_randomness, post_replicas, post_vanilla, seal_2kib, sector_data, snap_2kib, Sealed, TICKET,
};
use grpcio::RpcStatusCode;
use std::path::Path;
use std::time::Instant;

const MINER: u64 = 1000;
const SECTOR_2KIB: u64 = 2048;
const WINNING: RegisteredPoStProof = RegisteredPoStProof::StackedDrgWinning2KiBV1;
/// Go's abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1 (10) is
/// filecoin-proofs-api's V1_2.
const WINDOW: RegisteredPoStProof = RegisteredPoStProof::StackedDrgWindow2KiBV1_2;
const SEAL: RegisteredSealProof = RegisteredSealProof::StackedDrg2KiBV1_1;
const UPDATE: RegisteredUpdateProof = RegisteredUpdateProof::StackedDrg2KiBV1;

/// A daemon proving from `param_cache`; `srs_extra` adds `[srs]` keys.
/// On the GPU (`CUZK_REQUIRE_GPU=1`) its engine must run the CUDA backend.
fn start_daemon(param_cache: &Path, srs_extra: &str) -> DaemonProc {
    let dir = tempfile::tempdir().unwrap();
    let cache = param_cache.display().to_string();
    let d = DaemonProc::start_with(dir, Listen::Unix, |listen| {
        format!(
            "[daemon]\nlisten = \"{listen}\"\nstatus_listen = \"127.0.0.1:0\"\n\
             [srs]\nparam_cache = \"{cache}\"\n{srs_extra}\n\
             [memory]\ntotal_budget = \"8GiB\"\n[synthesis]\nthreads = 2\n[logging]\nlevel = \"info\"\n"
        )
    });
    cuzk_tests::require_gpu_backend_in_log("the daemon", &d.log());
    d
}

fn porep_request(sector: u64, vanilla_proof: Vec<u8>) -> pb::SubmitProofRequest {
    pb::SubmitProofRequest {
        request_id: format!("porep-{MINER}-{sector}"),
        proof_kind: pb::ProofKind::PorepSealCommit as i32,
        sector_size: SECTOR_2KIB,
        registered_proof: 5, // abi.RegisteredSealProof_StackedDrg2KiBV1_1
        priority: pb::Priority::Normal as i32,
        vanilla_proof,
        sector_number: sector,
        miner_id: MINER,
        ..Default::default()
    }
}

fn post_request(kind: pb::ProofKind, registered_proof: u64, rand: [u8; 32], vanilla_proofs: Vec<Vec<u8>>) -> pb::SubmitProofRequest {
    pb::SubmitProofRequest {
        proof_kind: kind as i32,
        sector_size: SECTOR_2KIB,
        registered_proof,
        vanilla_proofs,
        miner_id: MINER,
        randomness: rand.to_vec(),
        ..Default::default()
    }
}

/// Prove over gRPC; returns the response (any status) and prints the time.
fn prove(c: &pb::ProvingEngineClient, what: &str, req: pb::SubmitProofRequest) -> pb::AwaitProofResponse {
    let t = Instant::now();
    let r = c.prove(&pb::ProveRequest { submit: Some(req) }).unwrap().result.unwrap();
    eprintln!(
        "{what}: status {} in {:.1} s (srs_load {} ms, synthesis {} ms, prove {} ms)",
        r.status,
        t.elapsed().as_secs_f64(),
        r.srs_load_ms,
        r.synthesis_ms,
        r.gpu_compute_ms
    );
    r
}

fn proof_of(r: pb::AwaitProofResponse) -> Vec<u8> {
    assert_eq!(r.status, completed(), "job failed: {}", r.error_message);
    r.proof
}

fn verify_porep(sealed: &Sealed, seed: [u8; 32], proof: &[u8]) -> bool {
    verify_seal(SEAL, sealed.comm_r, sealed.comm_d, sealed.prover_id, sealed.sector_id, TICKET, seed, proof).unwrap_or(false)
}

/// `verify_seal` of a well-formed proof against other public inputs must
/// be a verdict, false, not an error: a flipped bit only shows that a point
/// no longer decodes, this shows that the proof is bound to its inputs.
fn assert_rejected(what: &str, verdict: anyhow::Result<bool>) {
    match verdict {
        Ok(false) => {}
        Ok(true) => panic!("verify_seal accepts the proof {what}"),
        Err(e) => panic!("verify_seal errs on the proof {what} instead of rejecting it: {e:#}"),
    }
}

/// Checks the daemon's log for panics, prints which backend proved and how
/// (the GPU machine's record), and stops the daemon.
fn stop_and_report(d: DaemonProc, t: Instant) {
    let log = d.log();
    assert!(!log.contains("panicked"), "{log}");
    for line in log.lines().filter(|l| l.contains("engine started") || l.contains("partition proved")) {
        eprintln!("daemon: {line}");
    }
    d.stop();
    eprintln!("whole test: {:.1} s", t.elapsed().as_secs_f64());
}

#[test]
fn every_filecoin_kind_through_the_daemon() {
    let t = Instant::now();
    let cache = param_cache();
    for pt in [ProofType::Seal(SEAL), ProofType::Post(WINNING), ProofType::Post(WINDOW), ProofType::Update(UPDATE)] {
        ensure_params(pt);
    }
    eprintln!("parameters ready in {:.1} s", t.elapsed().as_secs_f64());
    // Our setup wrote these files and the verifiers check every proof:
    // the slow subgroup checks are skipped here (the other test keeps them).
    let d = start_daemon(&cache.dir, "trusted_params = true");
    let c = d.client();
    let prover = prover_id_from_miner(MINER);

    // PoRep C2: a real C1 output for miner 1000's sector 7, in the envelope.
    let porep_id = cache.files_for(ProofType::Seal(SEAL)).unwrap().circuit_id;
    let pre = c.preload_srs(&pb::PreloadSrsRequest { circuit_id: format!("v28-{porep_id}") }).unwrap();
    assert!(!pre.already_loaded);
    let s = c.get_status(&pb::GetStatusRequest {}).unwrap();
    assert!(s.loaded_srs.iter().any(|e| e.circuit_id == porep_id), "{:?}", s.loaded_srs);
    let sealed = seal_2kib(prover, 7, &sector_data(1));
    let seed = [9u8; 32];
    let c1 = sealed.commit_phase1(seed);
    let proof = proof_of(prove(&c, "PoRep C2", porep_request(7, encode_envelope(7, SECTOR_2KIB, &c1))));
    assert_eq!(proof.len(), 192 * usize::from(SEAL.partitions()));
    assert!(verify_porep(&sealed, seed, &proof), "verify_seal rejects the daemon's proof");
    let mut bad = proof.clone();
    bad[10] ^= 1;
    assert!(!verify_porep(&sealed, seed, &bad), "verify_seal accepts a tampered proof");
    let (s, p) = (&sealed, &proof);
    let other_seed = verify_seal(SEAL, s.comm_r, s.comm_d, s.prover_id, s.sector_id, TICKET, [10u8; 32], p);
    assert_rejected("with another seed", other_seed);
    let other_sector = verify_seal(SEAL, s.comm_r, s.comm_d, s.prover_id, 8.into(), TICKET, seed, p);
    assert_rejected("of another sector number (replica id)", other_sector);
    let sealed_proof = proof;

    // PoRep C2 of a generated workload (`cuzk filecoin-workload`), as
    // Curio would send it.
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().display().to_string();
    let args = ["filecoin-workload", "--kind", "porep", "--sector-size", "2KiB", "--seed", "11", "--out", &dir, "--sector-num", "12"];
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_cuzk")).args(args).output().unwrap();
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let c1 = std::fs::read(out.path().join("c1.json")).unwrap();
    let meta: serde_json::Value = serde_json::from_slice(&std::fs::read(out.path().join("meta.json")).unwrap()).unwrap();
    let proof = proof_of(prove(&c, "PoRep C2 (generated)", porep_request(12, c1)));
    let h = |k: &str| -> [u8; 32] {
        let s = meta[k].as_str().unwrap();
        (0..32).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect::<Vec<_>>().try_into().unwrap()
    };
    let ok = verify_seal(SEAL, h("comm_r"), h("comm_d"), prover, 12.into(), h("ticket"), h("seed_randomness"), &proof).unwrap();
    assert!(ok, "verify_seal rejects the daemon's proof of the generated workload");
    // Each valid proof against the other's public inputs.
    let crossed = verify_seal(SEAL, h("comm_r"), h("comm_d"), prover, 12.into(), h("ticket"), h("seed_randomness"), &sealed_proof);
    assert_rejected("of sector 7 for the generated workload's inputs", crossed);
    let crossed = verify_seal(SEAL, sealed.comm_r, sealed.comm_d, prover, sealed.sector_id, TICKET, seed, &proof);
    assert_rejected("of the generated workload for sector 7's inputs", crossed);

    // WinningPoSt over the same sector.
    let rand = post_randomness(5);
    let vanilla = post_vanilla(WINNING, prover, &rand, &[&sealed]);
    let proof = proof_of(prove(&c, "WinningPoSt", post_request(pb::ProofKind::WinningPost, 0, rand, vanilla)));
    let reps = post_replicas(WINNING, &[&sealed]);
    assert!(verify_winning_post(&rand, &proof, &reps, prover).unwrap(), "verify_winning_post rejects the daemon's proof");

    // One WindowPoSt partition of two sectors.
    let other = seal_2kib(prover, 8, &sector_data(2));
    let rand = post_randomness(7);
    let vanilla = post_vanilla(WINDOW, prover, &rand, &[&sealed, &other]);
    let proof = proof_of(prove(&c, "WindowPoSt", post_request(pb::ProofKind::WindowPostPartition, 10, rand, vanilla)));
    let reps = post_replicas(WINDOW, &[&sealed, &other]);
    assert!(verify_window_post(&rand, &[(WINDOW, &proof)], &reps, prover).unwrap(), "verify_window_post rejects the daemon's proof");
    // Again, through the PCE the first one recorded: now the two sectors'
    // witnesses are generated on the cores no other synthesis holds.
    let rand = post_randomness(8);
    let vanilla = post_vanilla(WINDOW, prover, &rand, &[&sealed, &other]);
    let proof = proof_of(prove(&c, "WindowPoSt (witness-only)", post_request(pb::ProofKind::WindowPostPartition, 10, rand, vanilla)));
    assert!(verify_window_post(&rand, &[(WINDOW, &proof)], &reps, prover).unwrap(), "verify_window_post rejects the daemon's second proof");

    // A WindowPoSt of two partitions: three sectors at two per partition,
    // the last partition one sector (padded by the prover and the verifier
    // alike). The daemon proves one partition per request, as Curio sends
    // them (partition_index, each with its own sectors' vanilla proofs, in
    // sector order); filecoin-proofs merges the partition proofs as Curio
    // does (`merge_window_post_partition_proofs`) and verifies the whole
    // against all three sectors.
    let third = seal_2kib(prover, 10, &sector_data(3));
    let all = [&sealed, &other, &third];
    assert_eq!(WINDOW.sector_count(), 2);
    assert_eq!(get_num_partition_for_fallback_post(WINDOW, all.len()).unwrap(), 2);
    let rand = post_randomness(9);
    let partitions: Vec<Vec<u8>> = all
        .chunks(WINDOW.sector_count())
        .enumerate()
        .map(|(k, sectors)| {
            let mut req = post_request(pb::ProofKind::WindowPostPartition, 10, rand, post_vanilla(WINDOW, prover, &rand, sectors));
            req.partition_index = k as u32;
            proof_of(prove(&c, &format!("WindowPoSt partition {k} of 2"), req))
        })
        .collect();
    let merge = |parts: &[&Vec<u8>]| {
        merge_window_post_partition_proofs(WINDOW, parts.iter().map(|p| PartitionSnarkProof(p.to_vec())).collect()).unwrap()
    };
    let merged = merge(&[&partitions[0], &partitions[1]]);
    assert_eq!(merged.len(), 2 * 192);
    let reps = post_replicas(WINDOW, &all);
    assert!(verify_window_post(&rand, &[(WINDOW, &merged)], &reps, prover).unwrap(), "verify_window_post rejects the two partitions");
    // Each partition proves its own sectors only: in the other order, or
    // with one partition left out, the whole is rejected.
    let swapped = merge(&[&partitions[1], &partitions[0]]);
    assert!(
        !verify_window_post(&rand, &[(WINDOW, &swapped)], &reps, prover).unwrap_or(false),
        "verify_window_post accepts swapped partitions"
    );
    assert!(
        !verify_window_post(&rand, &[(WINDOW, &partitions[0])], &reps, prover).unwrap_or(false),
        "verify_window_post accepts one partition of two"
    );

    // SnapDeals: new data into a CC sector.
    let snap = snap_2kib(prover, 9, 3);
    let req = pb::SubmitProofRequest {
        proof_kind: pb::ProofKind::SnapDealsUpdate as i32,
        sector_size: SECTOR_2KIB,
        registered_proof: 0, // abi.RegisteredUpdateProof_StackedDrg2KiBV1
        vanilla_proofs: snap.vanilla.clone(),
        sector_number: 9,
        miner_id: MINER,
        comm_r_old: snap.old.comm_r.to_vec(),
        comm_r_new: snap.comm_r_new.to_vec(),
        comm_d_new: snap.comm_d_new.to_vec(),
        ..Default::default()
    };
    let proof = proof_of(prove(&c, "SnapDeals", req));
    let ok = verify_empty_sector_update_proof(UPDATE, &proof, snap.old.comm_r, snap.comm_r_new, snap.comm_d_new).unwrap();
    assert!(ok, "verify_empty_sector_update_proof rejects the daemon's proof");

    let s = c.get_status(&pb::GetStatusRequest {}).unwrap();
    assert_eq!((s.total_proofs_completed, s.total_proofs_failed), (8, 0));
    stop_and_report(d, t);
}

/// Links `circuit`'s files from the shared cache into `dir`, optionally
/// with a `.vk` of other toxic waste (proofs then fail the self-check).
fn link_params(shared: &ParamCache, dir: &ParamCache, pt: ProofType, foreign_vk: bool) {
    let (from, to) = (shared.files_for(pt).unwrap(), dir.files_for(pt).unwrap());
    std::os::unix::fs::symlink(&from.params, &to.params).unwrap();
    if foreign_vk {
        let other = ParamCache::new(dir.dir.join("other"));
        let made = setup::ensure_params(pt, &other).unwrap();
        std::fs::rename(made.vk, &to.vk).unwrap();
    } else {
        std::os::unix::fs::symlink(&from.vk, &to.vk).unwrap();
    }
}

#[test]
fn bad_filecoin_requests_are_named_and_the_daemon_keeps_serving() {
    let t = Instant::now();
    let shared = param_cache();
    ensure_params(ProofType::Post(WINNING));
    ensure_params(ProofType::Post(WINDOW));
    // A cache with the WindowPoSt files, WinningPoSt's .params with a .vk
    // from other toxic waste, and nothing for PoRep or SnapDeals.
    let dir = tempfile::tempdir().unwrap();
    let cache = ParamCache::new(dir.path());
    link_params(&shared, &cache, ProofType::Post(WINDOW), false);
    link_params(&shared, &cache, ProofType::Post(WINNING), true);
    // Default reading: every point of the (small) PoSt params is validated.
    let d = start_daemon(&cache.dir, "");
    let c = d.client();
    let prover = prover_id_from_miner(MINER);
    let expect = |req: pb::SubmitProofRequest, code: RpcStatusCode, needles: &[&str]| {
        let (got, msg) = rpc_error(c.prove(&pb::ProveRequest { submit: Some(req) }));
        assert_eq!(got, code, "{msg}");
        for n in needles {
            assert!(msg.contains(n), "error {msg:?} does not mention {n:?}");
        }
        eprintln!("rejected as expected: {msg}");
    };

    // Garbage C1 JSON, and JSON that is not a C1 output.
    expect(porep_request(7, b"{\"SectorNum\": 7, garbage".to_vec()), RpcStatusCode::INVALID_ARGUMENT, &["vanilla_proof", "JSON"]);
    let not_c1 = encode_envelope(7, SECTOR_2KIB, br#"{"registered_proof":"StackedDrg2KiBV1_1"}"#);
    expect(porep_request(7, not_c1), RpcStatusCode::INVALID_ARGUMENT, &["SealCommitPhase1Output"]);
    // The real C1 test output, but with the wrong sector size, then the
    // wrong registered proof, then from another miner.
    let c1 = std::fs::read(data_dir().join("c1-output.json")).unwrap();
    let envelope = encode_envelope(42, SECTOR_2KIB, &c1);
    let mut req = porep_request(42, envelope.clone());
    req.sector_size = 32 << 30;
    expect(req, RpcStatusCode::INVALID_ARGUMENT, &["sector_size 34359738368", "StackedDrg2KiBV1_1"]);
    let mut req = porep_request(42, envelope.clone());
    (req.registered_proof, req.sector_size) = (8, 0);
    expect(req, RpcStatusCode::INVALID_ARGUMENT, &["registered_proof 8", "StackedDrg32GiBV1_1"]);
    expect(porep_request(42, envelope), RpcStatusCode::INVALID_ARGUMENT, &["replica_id", "prover id"]);
    // A good C1 output whose parameters are not in the cache.
    let sealed = seal_2kib(prover, 7, &sector_data(4));
    let c1 = sealed.commit_phase1([9u8; 32]);
    let good = encode_envelope(7, SECTOR_2KIB, &c1);
    let porep_params = cache.files_for(ProofType::Seal(SEAL)).unwrap().params;
    expect(porep_request(7, good), RpcStatusCode::FAILED_PRECONDITION, &["missing parameter file", &porep_params.display().to_string()]);
    // The same C1 output with one byte of a comm_r_last path changed (valid
    // JSON, a C1 output in shape): refused by the vanilla check at submit,
    // before the parameters are looked for, naming where.
    let mut c1: serde_json::Value = serde_json::from_slice(&c1).unwrap();
    let byte = c1.pointer_mut("/vanilla_proofs/StackedDrg2KiBV1/0/1/comm_r_last_proof/data/Single/path/path/1/hashes/0/9").unwrap();
    *byte = serde_json::json!(byte.as_u64().unwrap() ^ 1);
    let corrupted = encode_envelope(7, SECTOR_2KIB, c1.to_string().as_bytes());
    expect(
        porep_request(7, corrupted),
        RpcStatusCode::INVALID_ARGUMENT,
        &["partition 0, challenge 1", "comm_r_last (tree_r_last) path does not hash"],
    );

    // PoSt: a window registered proof for a winning request, a 32 GiB one
    // for 2 KiB vanilla proofs, and vanilla proofs for other randomness.
    let rand = post_randomness(5);
    let vanilla = post_vanilla(WINNING, prover, &rand, &[&sealed]);
    let req = post_request(pb::ProofKind::WinningPost, 10, rand, vanilla.clone());
    expect(req, RpcStatusCode::INVALID_ARGUMENT, &["registered proof 10", "WinningPoSt"]);
    // (The 32 GiB tree shape decodes from 2 KiB proofs: only the check of
    // the vanilla proofs finds the mismatch.)
    let mut req = post_request(pb::ProofKind::WinningPost, 3, rand, vanilla.clone());
    req.sector_size = 0;
    expect(req, RpcStatusCode::INVALID_ARGUMENT, &["vanilla proofs do not verify", "registered proof or sector size"]);
    let req = post_request(pb::ProofKind::WinningPost, 0, post_randomness(6), vanilla.clone());
    expect(req, RpcStatusCode::INVALID_ARGUMENT, &["vanilla proofs do not verify"]);

    // A proof that fails the self-check (the .vk is of other parameters)
    // is a failed job with the reason, never a proof: unusable parameters.
    let r = prove(&c, "WinningPoSt, foreign .vk", post_request(pb::ProofKind::WinningPost, 0, rand, vanilla));
    assert_eq!(r.status, pb::await_proof_response::Status::Failed as i32, "{r:?}");
    assert_eq!(r.error_code, i32::from(RpcStatusCode::FAILED_PRECONDITION), "{}", r.error_message);
    assert!(r.proof.is_empty());
    let vk = cache.files_for(ProofType::Post(WINNING)).unwrap().vk.display().to_string();
    assert!(r.error_message.contains("self-check failed") && r.error_message.contains(&vk), "{}", r.error_message);

    // The daemon still proves, and the proof verifies.
    let rand = post_randomness(8);
    let vanilla = post_vanilla(WINDOW, prover, &rand, &[&sealed]);
    let proof = proof_of(prove(&c, "WindowPoSt", post_request(pb::ProofKind::WindowPostPartition, 10, rand, vanilla)));
    assert!(verify_window_post(&rand, &[(WINDOW, &proof)], &post_replicas(WINDOW, &[&sealed]), prover).unwrap());
    let s = c.get_status(&pb::GetStatusRequest {}).unwrap();
    assert_eq!((s.total_proofs_completed, s.total_proofs_failed), (1, 1));
    stop_and_report(d, t);
}
