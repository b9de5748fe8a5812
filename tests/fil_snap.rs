//! SnapDeals at 2 KiB: a CC sector sealed on the CPU, new data encoded into
//! it, partition vanilla proofs from filecoin-proofs-api (what Curio
//! sends), proven by us, accepted by `verify_empty_sector_update_proof`.

use cuzk_core::filecoin::filecoin_proofs_api::update::{
    empty_sector_update_encode_into, generate_partition_proofs, verify_empty_sector_update_proof,
};
use cuzk_core::filecoin::filecoin_proofs_api::RegisteredUpdateProof;
use cuzk_core::filecoin::{prove_request, prover_id_from_miner, ProofKind, ProofRequest, ProofType};
use cuzk_tests::fil::{test_options, ensure_params, param_cache, seal_2kib, sector_data, stage};
use std::time::Instant;

#[test]
fn snap_deals_2kib() {
    let cache = param_cache();
    let update = RegisteredUpdateProof::StackedDrg2KiBV1;
    ensure_params(ProofType::Update(update));
    let old = seal_2kib(prover_id_from_miner(1000), 5, &[0u8; 2032]);
    let dir = old.dir.path();
    let pieces = stage(old.proof, &sector_data(7), &dir.join("staged-new"));
    let (replica, replica_cache) = (dir.join("update"), dir.join("update-cache"));
    std::fs::create_dir_all(&replica_cache).unwrap();
    std::fs::File::create(&replica).unwrap().set_len(2048).unwrap();
    let enc = empty_sector_update_encode_into(
        update,
        &replica,
        &replica_cache,
        old.sealed(),
        old.cache(),
        dir.join("staged-new"),
        &pieces,
    )
    .unwrap();
    let vanilla = generate_partition_proofs(
        update,
        old.comm_r,
        enc.comm_r_new,
        enc.comm_d_new,
        old.sealed(),
        old.cache(),
        &replica,
        &replica_cache,
    )
    .unwrap();

    let mut req = ProofRequest::new(ProofKind::SnapDealsUpdate, 1000);
    req.registered_proof = 0; // Go's abi.RegisteredUpdateProof_StackedDrg2KiBV1
    req.sector_size = 2048;
    req.vanilla_proofs = vanilla.into_iter().map(|p| p.0).collect();
    req.comm_r_old = old.comm_r.to_vec();
    req.comm_r_new = enc.comm_r_new.to_vec();
    req.comm_d_new = enc.comm_d_new.to_vec();
    let t = Instant::now();
    let proof = prove_request(&req, &cache, test_options()).unwrap();
    eprintln!("SnapDeals: proved + self-checked in {:.1} s", t.elapsed().as_secs_f64());
    assert!(verify_empty_sector_update_proof(update, &proof, old.comm_r, enc.comm_r_new, enc.comm_d_new).unwrap());
    assert!(!verify_empty_sector_update_proof(update, &proof, old.comm_r, enc.comm_r_new, old.comm_d).unwrap_or(false));
}
