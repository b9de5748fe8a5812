//! Pre-compiled constraint systems on the four Filecoin kinds at 2 KiB:
//! witness-only synthesis + the recorded R1CS give exactly the assignment
//! (a, b, c, densities, witness) that classic synthesis gives, for every
//! partition, so the proofs are byte-identical. The PCE is recorded from
//! the blank circuit (what the parameters are made from), as
//! `cuzk pce build` does ahead of any request.

use cuzk_core::cs::{generate_witness, synthesize};
use cuzk_core::filecoin::filecoin_proofs_api::RegisteredPoStProof;
use cuzk_core::filecoin::setup::blank_circuit;
use cuzk_core::filecoin::{prepare, prover_id_from_miner, ProofKind, ProofRequest};
use cuzk_core::pce;
use cuzk_tests::fil::{post_randomness, post_vanilla, seal_2kib, sector_data, shared_c1_request, snap_2kib};
use std::time::Instant;

const MINER: u64 = 1000;

/// Records each partition's PCE and compares its assignment with classic
/// synthesis; returns the number of partitions checked.
fn check(req: &ProofRequest) -> usize {
    let (classic, witness) = (prepare(req).unwrap(), prepare(req).unwrap());
    let id = classic.meta.circuit_id.clone();
    let recorded = pce::record(&id, blank_circuit(classic.meta.proof_type).unwrap()).unwrap();
    let n = classic.circuits.len();
    for (k, (c, w)) in classic.circuits.into_iter().zip(witness.circuits).enumerate() {
        let t = Instant::now();
        let classic = synthesize(c).unwrap();
        let t_classic = t.elapsed();
        let t = Instant::now();
        let w = generate_witness(w).unwrap();
        let t_witness = t.elapsed();
        let t = Instant::now();
        let ours = recorded.assignment(w).unwrap();
        let t_spmv = t.elapsed();
        assert_eq!(ours.num_constraints(), classic.num_constraints(), "{id} partition {k}");
        assert!(ours == classic, "{id} partition {k}: PCE assignment differs from classic synthesis");
        eprintln!(
            "{id} partition {k}: {} constraints, PCE {} KiB; classic {:.1} ms, witness-only {:.1} ms, spmv {:.1} ms",
            classic.num_constraints(),
            pce::file::to_bytes(&recorded).len() / 1024,
            t_classic.as_secs_f64() * 1e3,
            t_witness.as_secs_f64() * 1e3,
            t_spmv.as_secs_f64() * 1e3
        );
    }
    n
}

#[test]
fn porep_2kib_pce_equals_classic() {
    let (req, _) = shared_c1_request();
    assert!(check(&req) >= 1);
}

#[test]
fn post_2kib_pce_equals_classic() {
    let prover = prover_id_from_miner(MINER);
    let sectors = [seal_2kib(prover, 7, &sector_data(1)), seal_2kib(prover, 8, &sector_data(2))];
    let rand = post_randomness(5);
    // Go's registered-proof numbers: 0 = Winning 2 KiB, 10 = Window 2 KiB V1_1.
    for (kind, registered, post) in [
        (ProofKind::WinningPost, 0, RegisteredPoStProof::StackedDrgWinning2KiBV1),
        (ProofKind::WindowPostPartition, 10, RegisteredPoStProof::StackedDrgWindow2KiBV1_2),
    ] {
        let mut req = ProofRequest::new(kind, MINER);
        req.registered_proof = registered;
        req.sector_size = 2048;
        req.randomness = rand.to_vec();
        let used: &[_] = if kind == ProofKind::WinningPost { &sectors[..1] } else { &sectors[..] };
        req.vanilla_proofs = post_vanilla(post, prover, &rand, &used.iter().collect::<Vec<_>>());
        assert_eq!(check(&req), 1);
    }
}

#[test]
fn snap_2kib_pce_equals_classic() {
    let snap = snap_2kib(prover_id_from_miner(MINER), 5, 7);
    let mut req = ProofRequest::new(ProofKind::SnapDealsUpdate, MINER);
    req.registered_proof = 0; // Go's abi.RegisteredUpdateProof_StackedDrg2KiBV1
    req.sector_size = 2048;
    req.vanilla_proofs = snap.vanilla.clone();
    req.comm_r_old = snap.old.comm_r.to_vec();
    req.comm_r_new = snap.comm_r_new.to_vec();
    req.comm_d_new = snap.comm_d_new.to_vec();
    assert!(check(&req) >= 1);
}
