//! Our PoRep partition circuit (`cuzk_core::filecoin::porep_circuit`)
//! against storage-proofs' `StackedCircuit`, the circuit the published
//! parameters are made from: the same R1CS (recorded, real and blank) and
//! the same witness, byte for byte, on one thread and on several, at 2 KiB
//! (the shared C1 output and generated ones) and 8 MiB.

use cuzk_core::cs::{generate_witness, generate_witness_into, WitnessOnly};
use cuzk_core::filecoin::circuit::ShapeBase;
use cuzk_core::filecoin::filecoin_hashers::{Domain, Hasher};
use cuzk_core::filecoin::filecoin_proofs::constants::{DefaultPieceHasher, SECTOR_SIZE_2_KIB, SECTOR_SIZE_8_MIB};
use cuzk_core::filecoin::filecoin_proofs::parameters::public_params;
use cuzk_core::filecoin::filecoin_proofs::DefaultPieceDomain;
use cuzk_core::filecoin::filecoin_proofs_api::seal::VanillaSealProof;
use cuzk_core::filecoin::porep_circuit::PorepPartition;
use cuzk_core::filecoin::setup::blank_circuit;
use cuzk_core::filecoin::storage_proofs_core::compound_proof::CompoundProof;
use cuzk_core::filecoin::storage_proofs_core::merkle::MerkleTreeTrait;
use cuzk_core::filecoin::workload::{porep, PorepSpec};
use cuzk_core::filecoin::{decode_envelope, encode_envelope, prepare, FilecoinCircuit, ProofKind, ProofRequest};
use cuzk_core::pce;
use cuzk_tests::fil::shared_c1_request;
use std::time::Instant;
use storage_proofs_porep::stacked::{generate_replica_id, Proof, PublicInputs, StackedCircuit, StackedCompound, Tau};

type Stacked = StackedCircuit<ShapeBase, DefaultPieceHasher>;
type TreeHasher = <ShapeBase as MerkleTreeTrait>::Hasher;

/// `req`'s public inputs and each partition's vanilla proofs, one per
/// challenge.
fn vanilla(
    req: &ProofRequest,
) -> (PublicInputs<<TreeHasher as Hasher>::Domain, DefaultPieceDomain>, Vec<Vec<Proof<ShapeBase, DefaultPieceHasher>>>) {
    let c1 = decode_envelope(&req.vanilla_proof).unwrap().phase1;
    let proofs = match c1.vanilla_proofs.clone() {
        VanillaSealProof::StackedDrg2KiBV1(v) | VanillaSealProof::StackedDrg8MiBV1(v) => v,
        _ => panic!("these tests use 2 KiB and 8 MiB sectors"),
    };
    let config = c1.registered_proof.as_v1_config();
    let comm_d = DefaultPieceDomain::try_from_bytes(&c1.comm_d).unwrap();
    let comm_r = <TreeHasher as Hasher>::Domain::try_from_bytes(&c1.comm_r).unwrap();
    let replica_id = generate_replica_id::<TreeHasher, _>(&req.prover_id, req.sector_number, &c1.ticket, comm_d, &config.porep_id);
    (PublicInputs { replica_id, seed: Some(c1.seed), tau: Some(Tau { comm_d, comm_r }), k: None }, proofs)
}

/// storage-proofs' circuits for `req`'s partitions, as filecoin-proofs'
/// `seal_commit_phase2` builds them.
fn stacked_circuits(req: &ProofRequest) -> Vec<Stacked> {
    let (inputs, proofs) = vanilla(req);
    let c1 = decode_envelope(&req.vanilla_proof).unwrap().phase1;
    let pp = public_params::<ShapeBase>(&c1.registered_proof.as_v1_config()).unwrap();
    proofs
        .iter()
        .enumerate()
        .map(|(k, p)| {
            <StackedCompound<ShapeBase, DefaultPieceHasher> as CompoundProof<_, _>>::circuit(&inputs, (), p, &pp, Some(k)).unwrap()
        })
        .collect()
}

/// The challenges of each of `req`'s partitions.
fn challenges_per_partition(req: &ProofRequest) -> usize {
    let c1 = decode_envelope(&req.vanilla_proof).unwrap().phase1;
    public_params::<ShapeBase>(&c1.registered_proof.as_v1_config()).unwrap().challenges.num_challenges_per_partition()
}

fn stacked_blank(req: &ProofRequest) -> Stacked {
    let c1 = decode_envelope(&req.vanilla_proof).unwrap().phase1;
    let pp = public_params::<ShapeBase>(&c1.registered_proof.as_v1_config()).unwrap();
    <StackedCompound<ShapeBase, DefaultPieceHasher> as CompoundProof<_, _>>::blank_circuit(&pp)
}

fn ours(c: FilecoinCircuit) -> PorepPartition<ShapeBase> {
    match c {
        FilecoinCircuit::PorepBase(p) => p,
        _ => panic!("a 2 KiB or 8 MiB PoRep request gives PorepBase circuits"),
    }
}

/// Our partition circuits for `req`, as the engine gets them.
fn our_circuits(req: &ProofRequest) -> Vec<PorepPartition<ShapeBase>> {
    prepare(req).unwrap().circuits.into_iter().map(ours).collect()
}

/// Same recorded R1CS for every partition and the blank circuit, recorded
/// in one sequence and with the challenges apart on 1, 2 and 5 threads;
/// same witness from one sequential synthesis (the recorder), from the
/// recording on threads and from witness-only synthesis on 1, 2 and 5
/// threads, also into room reserved for the PCE's shape (the challenges
/// in place) or for another shape. Returns the partition count.
fn check(req: &ProofRequest) -> usize {
    let theirs = stacked_circuits(req);
    let n = theirs.len();
    let pt = prepare(req).unwrap().meta.proof_type;
    let (blank_ours, blank_theirs) = (pce::record("x", blank_circuit(pt).unwrap()).unwrap(), pce::record("x", stacked_blank(req)).unwrap());
    assert!(blank_ours == blank_theirs, "blank circuits: recorded R1CS differ");
    for threads in [1, 2, 5] {
        let on_threads = blank_circuit(pt).unwrap().record("x", threads).unwrap();
        assert!(on_threads == blank_theirs, "blank circuit recorded on {threads} threads: R1CS differs");
    }
    for (k, theirs) in theirs.into_iter().enumerate() {
        let t = Instant::now();
        let (pce_theirs, w_theirs) = pce::record_with_witness("x", theirs).unwrap();
        let t_theirs = t.elapsed().as_secs_f64();
        let ours_k = || our_circuits(req).into_iter().nth(k).unwrap();
        let (pce_ours, w_ours) = pce::record_with_witness("x", ours_k()).unwrap();
        assert_eq!(pce_ours.shape, pce_theirs.shape, "partition {k}: shapes differ");
        assert!(pce_ours == pce_theirs, "partition {k}: recorded R1CS differ");
        assert!(pce_ours == blank_ours, "partition {k}: the blank circuit's R1CS differs from the real one");
        assert!(w_ours == w_theirs, "partition {k}: recorded witnesses differ");
        for threads in [1, 2, 5] {
            let t = Instant::now();
            let (pce, w) = FilecoinCircuit::PorepBase(ours_k()).record_with_witness("x", threads).unwrap();
            let secs = t.elapsed().as_secs_f64();
            assert!(pce == pce_theirs, "partition {k}, recorded on {threads} threads: R1CS differs");
            assert!(w == w_theirs, "partition {k}, recorded on {threads} threads: witness differs");
            eprintln!("partition {k}: recorded with witness on {threads} threads in {secs:.3} s");
        }
        let circuit = stacked_circuits(req).into_iter().nth(k).unwrap();
        let t = Instant::now();
        let witness_theirs = generate_witness(circuit).unwrap();
        let t_stacked = t.elapsed().as_secs_f64();
        assert_eq!(witness_theirs.aux_assignment, w_theirs.aux_assignment);
        for threads in [1, 2, 5] {
            let circuit = ours_k().with_threads(threads);
            let t = Instant::now();
            let w = generate_witness(circuit).unwrap();
            let secs = t.elapsed().as_secs_f64();
            assert_eq!(w.input_assignment, witness_theirs.input_assignment, "partition {k}, {threads} threads: inputs");
            assert_eq!(w.input_positions, witness_theirs.input_positions, "partition {k}, {threads} threads: input positions");
            assert!(w.aux_assignment == witness_theirs.aux_assignment, "partition {k}, {threads} threads: aux differ");
            eprintln!("partition {k}: witness-only {secs:.3} s on {threads} threads (StackedCircuit {t_stacked:.3} s)");
        }
        // As the engine does: into room reserved for the PCE's shape, which
        // the challenges are written into in place; and into room for a PCE
        // of another revision (an aux value more per challenge), where they
        // are appended.
        let challenges = challenges_per_partition(req);
        let (num_inputs, num_aux) = (pce_ours.shape.num_inputs, pce_ours.shape.num_aux);
        for (room, num_aux) in [("the PCE's", num_aux), ("another PCE's", num_aux + challenges)] {
            for threads in [1, 2, 3, 5] {
                let w = generate_witness_into(ours_k().with_threads(threads), WitnessOnly::with_capacity(num_inputs, num_aux)).unwrap();
                assert!(w == witness_theirs, "partition {k}, {threads} threads, room for {room} shape: witness differs");
            }
        }
        eprintln!(
            "partition {k}: {challenges} challenges, {} constraints, {} inputs, {} aux; recorded with witness in {t_theirs:.2} s",
            pce_theirs.num_constraints(),
            w_theirs.input_assignment.len(),
            w_theirs.aux_assignment.len()
        );
    }
    n
}

fn workload_request(sector_size: u64, seed: u64) -> ProofRequest {
    let w = porep(PorepSpec { sector_size, seed, miner_id: 1000, sector_num: 7 }).unwrap();
    let mut req = ProofRequest::new(ProofKind::PorepSealCommit, 1000);
    req.sector_number = w.sector_num;
    req.sector_size = sector_size;
    req.vanilla_proof = encode_envelope(w.sector_num, sector_size, &serde_json::to_vec(&w.c1).unwrap());
    req
}

#[test]
fn shared_2kib_c1_same_r1cs_and_witness_as_stacked_circuit() {
    let (req, _) = shared_c1_request();
    assert!(check(&req) >= 1);
}

/// Partitions of 1, 3 and 5 challenges (a partition's own, repeated): the
/// same witness on threads as on one, into nothing reserved (the first
/// challenge's size learned) or into room reserved for it, which the
/// challenges are written into in place.
#[test]
fn odd_challenge_counts_same_witness_on_threads() {
    let (req, _) = shared_c1_request();
    let (inputs, partitions) = vanilla(&req);
    for count in [1, 3, 5] {
        let proofs: Vec<_> = partitions[0].iter().cycle().take(count).cloned().collect();
        let circuit = || PorepPartition::<ShapeBase>::new(&inputs, &proofs).unwrap();
        let sequential = generate_witness(circuit()).unwrap();
        let (num_inputs, num_aux) = (sequential.input_assignment.len(), sequential.aux_assignment.len());
        for threads in [2, 3, 4] {
            let w = generate_witness(circuit().with_threads(threads)).unwrap();
            assert!(w == sequential, "{count} challenges, {threads} threads, nothing reserved: witness differs");
            let room = WitnessOnly::with_capacity(num_inputs, num_aux);
            let buffer = room.aux_assignment.as_ptr();
            let w = generate_witness_into(circuit().with_threads(threads), room).unwrap();
            assert!(w == sequential, "{count} challenges, {threads} threads, room reserved: witness differs");
            assert_eq!(w.aux_assignment.as_ptr(), buffer, "{count} challenges, {threads} threads: not in place");
        }
    }
}

#[test]
fn generated_2kib_same_r1cs_and_witness_as_stacked_circuit() {
    for seed in [3, 4] {
        assert!(check(&workload_request(SECTOR_SIZE_2_KIB, seed)) >= 1);
    }
}

#[test]
fn generated_8mib_same_r1cs_and_witness_as_stacked_circuit() {
    assert!(check(&workload_request(SECTOR_SIZE_8_MIB, 5)) >= 1);
}
