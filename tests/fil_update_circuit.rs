//! Our SnapDeals partition circuit (`cuzk_core::filecoin::update_circuit`)
//! against storage-proofs-update's `EmptySectorUpdateCircuit`, the circuit
//! the published parameters are made from: the same R1CS (recorded, real
//! and blank) and the same witness, byte for byte, at 2 KiB (a sector
//! sealed and updated by filecoin-proofs, and generated workloads) and
//! 8 MiB (a generated workload); the witness at 32 GiB with `--ignored`.

use cuzk_core::cs::generate_witness;
use cuzk_core::filecoin::circuit::{ShapeBase, ShapeSub8};
use cuzk_core::filecoin::filecoin_hashers::Domain;
use cuzk_core::filecoin::filecoin_proofs::constants::{SECTOR_SIZE_2_KIB, SECTOR_SIZE_32_GIB, SECTOR_SIZE_8_MIB};
use cuzk_core::filecoin::filecoin_proofs::types::SectorUpdateConfig;
use cuzk_core::filecoin::setup::blank_circuit;
use cuzk_core::filecoin::storage_proofs_core::compound_proof::CompoundProof;
use cuzk_core::filecoin::storage_proofs_core::merkle::MerkleTreeTrait;
use cuzk_core::filecoin::update_circuit::UpdatePartition;
use cuzk_core::filecoin::workload::{snap, SnapSpec};
use cuzk_core::filecoin::{prepare, prover_id_from_miner, FilecoinCircuit, ProofKind, ProofRequest, ProofType};
use cuzk_core::pce;
use cuzk_tests::fil::snap_2kib;
use std::time::Instant;
use storage_proofs_update::constants::{TreeDDomain, TreeRDomain, TreeRHasher};
use storage_proofs_update::{EmptySectorUpdateCircuit, EmptySectorUpdateCompound, PartitionProof, PublicInputs, PublicParams};

type Compound = EmptySectorUpdateCompound<ShapeBase>;

fn public_params(req: &ProofRequest) -> PublicParams {
    PublicParams::from_sector_size(req.sector_size)
}

/// storage-proofs-update's circuits for `req`'s partitions, as
/// filecoin-proofs' `generate_empty_sector_update_proof_with_vanilla`
/// builds them.
fn their_circuits<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(req: &ProofRequest) -> Vec<EmptySectorUpdateCircuit<Tree>> {
    let ProofType::Update(rp) = ProofType::for_kind(req.kind, req.registered_proof).unwrap() else { panic!("an update request") };
    let pp = public_params(req);
    let inputs = PublicInputs {
        k: 0,
        comm_r_old: TreeRDomain::try_from_bytes(&req.comm_r_old).unwrap(),
        comm_d_new: TreeDDomain::try_from_bytes(&req.comm_d_new).unwrap(),
        comm_r_new: TreeRDomain::try_from_bytes(&req.comm_r_new).unwrap(),
        h: SectorUpdateConfig::from_porep_config(&rp.as_v1_config()).h,
    };
    req.vanilla_proofs
        .iter()
        .enumerate()
        .map(|(k, b)| {
            let proof: PartitionProof<Tree> = bincode::deserialize(b).unwrap();
            <EmptySectorUpdateCompound<Tree> as CompoundProof<_, _>>::circuit(&inputs, (), &proof, &pp, Some(k)).unwrap()
        })
        .collect()
}

fn ours(c: FilecoinCircuit) -> UpdatePartition<ShapeBase> {
    match c {
        FilecoinCircuit::UpdateBase(p) => p,
        _ => panic!("a 2 KiB or 8 MiB SnapDeals request gives UpdateBase circuits"),
    }
}

/// Same recorded R1CS for the blank circuit and the `partitions` named,
/// recorded in one sequence and with the challenges apart on 1, 2 and 5
/// threads; same witness from one sequential synthesis (the recorder), from
/// the recording on threads and from witness-only synthesis.
fn check(req: &ProofRequest, partitions: &[usize]) {
    let pt = prepare(req).unwrap().meta.proof_type;
    let blank_theirs = pce::record("x", <Compound as CompoundProof<_, _>>::blank_circuit(&public_params(req))).unwrap();
    let blank_ours = pce::record("x", blank_circuit(pt).unwrap()).unwrap();
    assert_eq!(blank_ours.shape, blank_theirs.shape, "blank circuits: shapes differ");
    assert!(blank_ours == blank_theirs, "blank circuits: recorded R1CS differ");
    for threads in [1, 2, 5] {
        let on_threads = blank_circuit(pt).unwrap().record("x", threads).unwrap();
        assert!(on_threads == blank_theirs, "blank circuit recorded on {threads} threads: R1CS differs");
    }
    let ours_k = |k: usize| ours(prepare(req).unwrap().circuits.into_iter().nth(k).unwrap());
    let theirs_k = |k: usize| their_circuits::<ShapeBase>(req).into_iter().nth(k).unwrap();
    for &k in partitions {
        let (pce_theirs, w_theirs) = pce::record_with_witness("x", theirs_k(k)).unwrap();
        let (pce_ours, w_ours) = pce::record_with_witness("x", ours_k(k)).unwrap();
        assert_eq!(pce_ours.shape, pce_theirs.shape, "partition {k}: shapes differ");
        assert!(pce_ours == pce_theirs, "partition {k}: recorded R1CS differ");
        assert!(pce_ours == blank_ours, "partition {k}: the blank circuit's R1CS differs from the real one");
        assert!(w_ours == w_theirs, "partition {k}: recorded witnesses differ");
        for threads in [1, 2, 5] {
            let t = Instant::now();
            let (pce, w) = FilecoinCircuit::UpdateBase(ours_k(k)).record_with_witness("x", threads).unwrap();
            let secs = t.elapsed().as_secs_f64();
            assert!(pce == pce_theirs, "partition {k}, recorded on {threads} threads: R1CS differs");
            assert!(w == w_theirs, "partition {k}, recorded on {threads} threads: witness differs");
            eprintln!("partition {k}: recorded with witness on {threads} threads in {secs:.3} s");
        }

        let t = Instant::now();
        let theirs = generate_witness(theirs_k(k)).unwrap();
        let t_theirs = t.elapsed().as_secs_f64();
        assert!(theirs.aux_assignment == w_theirs.aux_assignment, "partition {k}: their witness-only and recorded witnesses differ");
        let t = Instant::now();
        let w = generate_witness(ours_k(k)).unwrap();
        let t_ours = t.elapsed().as_secs_f64();
        assert_eq!(w.input_assignment, theirs.input_assignment, "partition {k}: inputs");
        assert_eq!(w.input_positions, theirs.input_positions, "partition {k}: input positions");
        assert!(w.aux_assignment == theirs.aux_assignment, "partition {k}: aux differ");
        eprintln!(
            "partition {k}: {} constraints, {} inputs, {} aux; witness-only {t_ours:.3} s (EmptySectorUpdateCircuit {t_theirs:.3} s)",
            pce_theirs.num_constraints(),
            w.input_assignment.len(),
            w.aux_assignment.len()
        );
    }
}

fn workload_request(sector_size: u64, seed: u64) -> ProofRequest {
    let w = snap(SnapSpec { sector_size, seed }).unwrap();
    let mut req = ProofRequest::new(ProofKind::SnapDealsUpdate, 1000);
    req.registered_proof = ProofType::current_number(ProofKind::SnapDealsUpdate, sector_size).unwrap();
    req.sector_size = sector_size;
    req.vanilla_proofs = w.vanilla_proofs;
    req.comm_r_old = w.comm_r_old.to_vec();
    req.comm_r_new = w.comm_r_new.to_vec();
    req.comm_d_new = w.comm_d_new.to_vec();
    req
}

#[test]
fn sealed_2kib_update_same_r1cs_and_witness_as_empty_sector_update_circuit() {
    let s = snap_2kib(prover_id_from_miner(1000), 5, 9);
    let mut req = ProofRequest::new(ProofKind::SnapDealsUpdate, 1000);
    req.registered_proof = 0; // Go's abi.RegisteredUpdateProof_StackedDrg2KiBV1
    req.sector_size = SECTOR_SIZE_2_KIB;
    req.vanilla_proofs = s.vanilla;
    req.comm_r_old = s.old.comm_r.to_vec();
    req.comm_r_new = s.comm_r_new.to_vec();
    req.comm_d_new = s.comm_d_new.to_vec();
    check(&req, &[0]);
}

#[test]
fn generated_2kib_same_r1cs_and_witness_as_empty_sector_update_circuit() {
    for seed in [3, 4] {
        check(&workload_request(SECTOR_SIZE_2_KIB, seed), &[0]);
    }
}

/// 4 partitions: the first and the last (k's bits, the partition path).
#[test]
fn generated_8mib_same_r1cs_and_witness_as_empty_sector_update_circuit() {
    check(&workload_request(SECTOR_SIZE_8_MIB, 5), &[0, 3]);
}

/// One 32 GiB partition, witness-only on one core: the same witness as
/// `EmptySectorUpdateCircuit`'s, and both times. Two witnesses of ~2.6 GB
/// each at once: run with `--ignored` on a host with room for them.
#[test]
#[ignore]
fn production_32gib_partition_same_witness_as_empty_sector_update_circuit() {
    let t = Instant::now();
    let req = workload_request(SECTOR_SIZE_32_GIB, 5);
    eprintln!("32 GiB workload generated in {:.1} s", t.elapsed().as_secs_f64());
    let Some(FilecoinCircuit::UpdateSub8(c)) = prepare(&req).unwrap().circuits.into_iter().next() else {
        panic!("a 32 GiB SnapDeals request gives UpdateSub8 circuits")
    };
    let t = Instant::now();
    let w = generate_witness(c).unwrap();
    let t_ours = t.elapsed().as_secs_f64();
    let theirs = their_circuits::<ShapeSub8>(&req).into_iter().next().unwrap();
    let t = Instant::now();
    let theirs = generate_witness(theirs).unwrap();
    let t_theirs = t.elapsed().as_secs_f64();
    assert_eq!(w.input_assignment, theirs.input_assignment, "inputs");
    assert_eq!(w.input_positions, theirs.input_positions, "input positions");
    assert!(w.aux_assignment == theirs.aux_assignment, "aux differ");
    eprintln!(
        "32 GiB partition 0: {} inputs, {} aux; witness-only {t_ours:.2} s (EmptySectorUpdateCircuit {t_theirs:.2} s)",
        w.input_assignment.len(),
        w.aux_assignment.len()
    );
}

/// A partition index or h the sector size does not have is refused with
/// its name, not a panic.
#[test]
fn a_bad_partition_index_or_h_is_refused() {
    let req = workload_request(SECTOR_SIZE_2_KIB, 3);
    let pp = public_params(&req);
    let proof: PartitionProof<ShapeBase> = bincode::deserialize(&req.vanilla_proofs[0]).unwrap();
    let mut inputs = PublicInputs {
        k: 0,
        comm_r_old: TreeRDomain::try_from_bytes(&req.comm_r_old).unwrap(),
        comm_d_new: TreeDDomain::try_from_bytes(&req.comm_d_new).unwrap(),
        comm_r_new: TreeRDomain::try_from_bytes(&req.comm_r_new).unwrap(),
        h: 1,
    };
    assert!(UpdatePartition::<ShapeBase>::new(&pp, &inputs, &proof, 0).is_ok());
    let e = UpdatePartition::<ShapeBase>::new(&pp, &inputs, &proof, 1).err().expect("partition 1 of 1");
    assert!(e.to_string().contains("partition 1"), "{e}");
    inputs.h = 5;
    let e = UpdatePartition::<ShapeBase>::new(&pp, &inputs, &proof, 0).err().expect("h = 5 at 2 KiB");
    assert!(e.to_string().contains("h = 5"), "{e}");
}
