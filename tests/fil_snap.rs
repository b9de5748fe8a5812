//! SnapDeals at 2 KiB: a CC sector sealed on the CPU, new data encoded into
//! it, partition vanilla proofs from filecoin-proofs-api (what Curio
//! sends), proven by us, accepted by `verify_empty_sector_update_proof`.

use cuzk_core::filecoin::filecoin_proofs_api::update::verify_empty_sector_update_proof;
use cuzk_core::filecoin::filecoin_proofs_api::RegisteredUpdateProof;
use cuzk_core::filecoin::{prove_request, prover_id_from_miner, ProofKind, ProofRequest, ProofType};
use cuzk_tests::fil::{ensure_params, param_cache, snap_2kib, test_options};
use std::time::Instant;

#[test]
fn snap_deals_2kib() {
    let cache = param_cache();
    let update = RegisteredUpdateProof::StackedDrg2KiBV1;
    ensure_params(ProofType::Update(update));
    let snap = snap_2kib(prover_id_from_miner(1000), 5, 7);

    let mut req = ProofRequest::new(ProofKind::SnapDealsUpdate, 1000);
    req.registered_proof = 0; // Go's abi.RegisteredUpdateProof_StackedDrg2KiBV1
    req.sector_size = 2048;
    req.vanilla_proofs = snap.vanilla.clone();
    req.comm_r_old = snap.old.comm_r.to_vec();
    req.comm_r_new = snap.comm_r_new.to_vec();
    req.comm_d_new = snap.comm_d_new.to_vec();
    let t = Instant::now();
    let proof = prove_request(&req, &cache, test_options()).unwrap();
    eprintln!("SnapDeals: proved + self-checked in {:.1} s", t.elapsed().as_secs_f64());
    let verify = |comm_d_new| verify_empty_sector_update_proof(update, &proof, snap.old.comm_r, snap.comm_r_new, comm_d_new);
    assert!(verify(snap.comm_d_new).unwrap());
    assert!(!verify(snap.old.comm_d).unwrap_or(false));
}
