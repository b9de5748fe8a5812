//! Our circuits' R1CS against storage-proofs' at the production tree
//! shapes (32 GiB: `ShapeSub8`, 64 GiB: `ShapeTop2`), which the other
//! `fil_*_circuit` tests, recording both circuits whole at 2 KiB and 8 MiB
//! (`ShapeBase`), never reach: a 32 GiB PoRep partition is ~130M
//! constraints, a recording ~7 GB.
//!
//! For each proof kind and size: our PCE as setup and `cuzk pce build`
//! record it (`setup::record_blank`, the circuit on threads) and our
//! witness of partition 0 of a generated workload as every proof computes
//! it (witness-only, on threads); then storage-proofs' circuit, blank (as
//! filecoin-proofs builds its parameters) and partition 0 of the same
//! workload, both at once, each checked constraint by constraint and value
//! by value against ours as it synthesizes (`cuzk_tests::r1cs_check`,
//! nothing of theirs recorded). A PoSt partition's sectors are checked on
//! threads, each at its place (`FallbackPoStCircuit` synthesizes its sectors
//! one after another and nothing else). Each case prints one `RESULT` line;
//! a difference fails it naming the first differing constraint or value.
//!
//! The production sizes are `#[ignore]`d (minutes and 7-16 GB each). No
//! file is read: no parameters, no network. Run them on a host with the
//! memory for as many at once as `--test-threads` runs:
//!
//! ```text
//! cargo test --release -p cuzk-tests --test fil_r1cs_production -- --ignored --nocapture --test-threads=1
//! ./fil_r1cs_production --ignored --nocapture --test-threads=1 porep_32gib   # the built binary, one case
//! ```
//!
//! The 2 KiB cases run in CI: the checker agrees with the whole recordings
//! there, and finds a changed coefficient, term, value or row.

use bellpepper_core::{Circuit, SynthesisError};
use blstrs::Scalar as Fr;
use cuzk_core::cs::{generate_witness, WitnessOnly};
use cuzk_core::filecoin::circuit::{ShapeBase, ShapeSub8, ShapeTop2};
use cuzk_core::filecoin::filecoin_hashers::{Domain, Hasher};
use cuzk_core::filecoin::filecoin_proofs::constants::{SECTOR_SIZE_2_KIB, SECTOR_SIZE_32_GIB, SECTOR_SIZE_64_GIB};
use cuzk_core::filecoin::filecoin_proofs::parameters::{public_params, window_post_setup_params, winning_post_setup_params};
use cuzk_core::filecoin::filecoin_proofs::types::{FallbackPoStSectorProof, PoStType, SectorUpdateConfig};
use cuzk_core::filecoin::filecoin_proofs::{partition_vanilla_proofs, single_partition_vanilla_proofs};
use cuzk_core::filecoin::filecoin_proofs::{DefaultPieceDomain, DefaultPieceHasher};
use cuzk_core::filecoin::filecoin_proofs_api::seal::VanillaSealProof;
use cuzk_core::filecoin::setup::record_blank;
use cuzk_core::filecoin::storage_proofs_core::compound_proof::{CompoundProof, SetupParams};
use cuzk_core::filecoin::storage_proofs_core::merkle::MerkleTreeTrait;
use cuzk_core::filecoin::workload::{porep, post, snap, PorepSpec, PostSpec, SnapSpec};
use cuzk_core::filecoin::{decode_envelope, encode_envelope, prepare, ProofKind, ProofRequest, ProofType};
use cuzk_core::pce::{self, Pce, COEFF_MINUS_ONE, COEFF_ONE};
use cuzk_tests::r1cs_check::{check, check_parts, Report};
use ff::Field;
use std::time::Instant;
use storage_proofs_post::fallback::{FallbackPoStCircuit, FallbackPoStCompound, PublicInputs as PostInputs, PublicSector};
use storage_proofs_update::constants::{TreeDDomain, TreeRDomain, TreeRHasher};
use storage_proofs_update::{EmptySectorUpdateCompound, PartitionProof, PublicInputs as UpdateInputs, PublicParams as UpdateParams};

/// A generated request of `kind` at `size` (a full PoSt partition).
fn request(kind: ProofKind, size: u64, seed: u64) -> ProofRequest {
    let mut req = ProofRequest::new(kind, 1000);
    req.sector_size = size;
    match kind {
        ProofKind::PorepSealCommit => {
            let w = porep(PorepSpec { sector_size: size, seed, miner_id: 1000, sector_num: 7 }).unwrap();
            req.sector_number = w.sector_num;
            req.vanilla_proof = encode_envelope(w.sector_num, size, &serde_json::to_vec(&w.c1).unwrap());
        }
        ProofKind::SnapDealsUpdate => {
            let w = snap(SnapSpec { sector_size: size, seed }).unwrap();
            req.registered_proof = ProofType::current_number(kind, size).unwrap();
            req.vanilla_proofs = w.vanilla_proofs;
            req.comm_r_old = w.comm_r_old.to_vec();
            req.comm_r_new = w.comm_r_new.to_vec();
            req.comm_d_new = w.comm_d_new.to_vec();
        }
        ProofKind::WindowPostPartition | ProofKind::WinningPost => {
            let w = post(PostSpec { kind, sector_size: size, seed, miner_id: 1000, first_sector: 20, sectors: 0 }).unwrap();
            req.registered_proof = ProofType::current_number(kind, size).unwrap();
            req.randomness = w.randomness.to_vec();
            req.vanilla_proofs = w.vanilla_proofs;
        }
        other => panic!("{other:?} is not a Filecoin proof kind"),
    }
    req
}

/// Ours: the PCE setup records (blank, on threads) and partition 0's
/// witness as every proof computes it (witness-only, on threads), each
/// reported as it is made (`what` names the case).
struct Ours {
    pt: ProofType,
    pce: Pce,
    witness: WitnessOnly,
}

fn ours(req: &ProofRequest, what: &str) -> Ours {
    let prepared = prepare(req).unwrap();
    let pt = prepared.meta.proof_type;
    let t = Instant::now();
    let pce = record_blank(pt).unwrap();
    eprintln!(
        "{what}: our PCE {} constraints, {} inputs, {} aux ({:.2} GB) recorded in {:.1} s",
        pce.num_constraints(),
        pce.shape.num_inputs,
        pce.shape.num_aux,
        pce.bytes() as f64 / 1e9,
        t.elapsed().as_secs_f64()
    );
    let partition0 = prepared.circuits.into_iter().next().unwrap().with_witness_threads(cuzk_core::par::threads());
    let t = Instant::now();
    let witness = generate_witness(partition0).unwrap();
    eprintln!("{what}: our witness of partition 0 in {:.1} s", t.elapsed().as_secs_f64());
    Ours { pt, pce, witness }
}

/// Their blank circuit's and partition 0's checks, both at once.
struct Theirs {
    circuit: &'static str,
    blank: Report,
    real: Report,
    blank_s: f64,
    real_s: f64,
}

fn timed<T>(f: impl FnOnce() -> Result<T, SynthesisError>) -> (T, f64) {
    let t = Instant::now();
    let out = f().unwrap_or_else(|e| panic!("synthesis failed: {e}"));
    (out, t.elapsed().as_secs_f64())
}

/// Checks the blank circuit and the real one on two threads.
fn both(
    circuit: &'static str,
    blank: impl FnOnce() -> Result<Report, SynthesisError> + Send,
    real: impl FnOnce() -> Result<Report, SynthesisError>,
) -> Theirs {
    let ((blank, blank_s), (real, real_s)) = std::thread::scope(|s| {
        let blank = s.spawn(|| timed(blank));
        let real = timed(real);
        (blank.join().expect("the blank circuit's check panicked"), real)
    });
    Theirs { circuit, blank, real, blank_s, real_s }
}

type Stacked<Tree> = storage_proofs_porep::stacked::StackedCircuit<Tree, DefaultPieceHasher>;
type StackedCompound<Tree> = storage_proofs_porep::stacked::StackedCompound<Tree, DefaultPieceHasher>;
type SealPartitions<Tree> = Vec<Vec<storage_proofs_porep::stacked::Proof<Tree, DefaultPieceHasher>>>;

/// `StackedCircuit`: blank, and partition 0 as filecoin-proofs'
/// `seal_commit_phase2` builds it.
fn porep_theirs<Tree: 'static + MerkleTreeTrait>(req: &ProofRequest, proofs: SealPartitions<Tree>, ours: &Ours) -> Theirs {
    let c1 = decode_envelope(&req.vanilla_proof).unwrap().phase1;
    let config = c1.registered_proof.as_v1_config();
    let blank = || -> Stacked<Tree> {
        let pp = public_params::<Tree>(&config).unwrap();
        <StackedCompound<Tree> as CompoundProof<_, _>>::blank_circuit(&pp)
    };
    let real = || -> Stacked<Tree> {
        use storage_proofs_porep::stacked::{generate_replica_id, PublicInputs, Tau};
        let pp = public_params::<Tree>(&config).unwrap();
        let comm_d = DefaultPieceDomain::try_from_bytes(&c1.comm_d).unwrap();
        let comm_r = <Tree::Hasher as Hasher>::Domain::try_from_bytes(&c1.comm_r).unwrap();
        let replica_id = generate_replica_id::<Tree::Hasher, _>(&req.prover_id, req.sector_number, &c1.ticket, comm_d, &config.porep_id);
        let inputs = PublicInputs { replica_id, seed: Some(c1.seed), tau: Some(Tau { comm_d, comm_r }), k: None };
        <StackedCompound<Tree> as CompoundProof<_, _>>::circuit(&inputs, (), &proofs[0], &pp, Some(0)).unwrap()
    };
    let (pce, w) = (&ours.pce, &ours.witness);
    both("StackedCircuit", || check(pce, None, blank()), || check(pce, Some(w), real()))
}

/// `EmptySectorUpdateCircuit`: blank, and partition 0 as filecoin-proofs'
/// `generate_empty_sector_update_proof_with_vanilla` builds it.
fn snap_theirs<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(req: &ProofRequest, ours: &Ours) -> Theirs {
    let ProofType::Update(rp) = ours.pt else { panic!("an update request") };
    let pp = || UpdateParams::from_sector_size(req.sector_size);
    let blank = || <EmptySectorUpdateCompound<Tree> as CompoundProof<_, _>>::blank_circuit(&pp());
    let real = || {
        let inputs = UpdateInputs {
            k: 0,
            comm_r_old: TreeRDomain::try_from_bytes(&req.comm_r_old).unwrap(),
            comm_d_new: TreeDDomain::try_from_bytes(&req.comm_d_new).unwrap(),
            comm_r_new: TreeRDomain::try_from_bytes(&req.comm_r_new).unwrap(),
            h: SectorUpdateConfig::from_porep_config(&rp.as_v1_config()).h,
        };
        let proof: PartitionProof<Tree> = bincode::deserialize(&req.vanilla_proofs[0]).unwrap();
        <EmptySectorUpdateCompound<Tree> as CompoundProof<_, _>>::circuit(&inputs, (), &proof, &pp(), Some(0)).unwrap()
    };
    let (pce, w) = (&ours.pce, &ours.witness);
    both("EmptySectorUpdateCircuit", || check(pce, None, blank()), || check(pce, Some(w), real()))
}

/// `FallbackPoStCircuit`, as filecoin-proofs'
/// `generate_winning_post_with_vanilla` / `generate_single_window_post_with_vanilla`
/// build it; with `blank`, its blank form for setup.
fn fallback_circuit<Tree: 'static + MerkleTreeTrait>(req: &ProofRequest, pt: ProofType, blank: bool) -> FallbackPoStCircuit<Tree> {
    type Domain2<T> = <<T as MerkleTreeTrait>::Hasher as Hasher>::Domain;
    let ProofType::Post(rp) = pt else { panic!("a PoSt request") };
    let config = rp.as_v1_config();
    let winning = config.typ == PoStType::Winning;
    let vanilla_params = if winning { winning_post_setup_params(&config).unwrap() } else { window_post_setup_params(&config) };
    let setup = SetupParams { vanilla_params, partitions: None, priority: config.priority };
    let pp = FallbackPoStCompound::<Tree>::setup(&setup).unwrap();
    if blank {
        return <FallbackPoStCompound<Tree> as CompoundProof<_, _>>::blank_circuit(&pp.vanilla_params);
    }
    let proofs: Vec<FallbackPoStSectorProof<Tree>> = req.vanilla_proofs.iter().map(|b| bincode::deserialize(b).unwrap()).collect();
    let sectors: Vec<PublicSector<Domain2<Tree>>> = proofs.iter().map(|p| PublicSector { id: p.sector_id, comm_r: p.comm_r }).collect();
    let randomness = Domain2::<Tree>::try_from_bytes(&req.randomness).unwrap();
    let prover_id = Domain2::<Tree>::try_from_bytes(&req.prover_id).unwrap();
    let inputs = PostInputs { randomness, prover_id, sectors, k: if winning { None } else { Some(0) } };
    let partition = if winning {
        partition_vanilla_proofs(&config, &pp.vanilla_params, &inputs, 1, &proofs).unwrap().remove(0)
    } else {
        single_partition_vanilla_proofs(&config, &pp.vanilla_params, &inputs, &proofs).unwrap()
    };
    <FallbackPoStCompound<Tree> as CompoundProof<_, _>>::circuit(&inputs, Default::default(), &partition, &pp.vanilla_params, Some(0))
        .unwrap()
}

/// `FallbackPoStCircuit`'s sectors checked on threads, each where its
/// sequential synthesis (`synthesize_default`: the sectors one after
/// another, in namespaces) puts it.
fn post_sectors<Tree: 'static + MerkleTreeTrait>(
    pce: &Pce,
    witness: Option<&WitnessOnly>,
    circuit: FallbackPoStCircuit<Tree>,
    threads: usize,
) -> Result<Report, SynthesisError> {
    check_parts(pce, witness, &circuit.sectors, threads, |sector, cs| Circuit::<Fr>::synthesize(sector, cs))
}

fn post_theirs<Tree: 'static + MerkleTreeTrait>(req: &ProofRequest, ours: &Ours) -> Theirs {
    let (pce, w, pt) = (&ours.pce, &ours.witness, ours.pt);
    both(
        "FallbackPoStCircuit",
        || post_sectors(pce, None, fallback_circuit::<Tree>(req, pt, true), cuzk_core::par::threads()),
        || post_sectors(pce, Some(w), fallback_circuit::<Tree>(req, pt, false), cuzk_core::par::threads()),
    )
}

fn size_name(size: u64) -> String {
    match size {
        s if s >= 1 << 30 => format!("{} GiB", s >> 30),
        s if s >= 1 << 20 => format!("{} MiB", s >> 20),
        s => format!("{} KiB", s >> 10),
    }
}

/// Storage-proofs' circuit of `kind` at `size` against ours; panics naming
/// the first difference, else prints the `RESULT` line.
fn compare(kind: ProofKind, size: u64) {
    let what = format!("{} {}", kind.title(), size_name(size));
    let t = Instant::now();
    let req = request(kind, size, 5);
    eprintln!("{what}: workload generated in {:.1} s", t.elapsed().as_secs_f64());
    let ours = ours(&req, &what);
    let shape = ours.pce.shape;
    let theirs = match (kind, size) {
        (ProofKind::PorepSealCommit, _) => match decode_envelope(&req.vanilla_proof).unwrap().phase1.vanilla_proofs {
            VanillaSealProof::StackedDrg2KiBV1(v) => porep_theirs::<ShapeBase>(&req, v, &ours),
            VanillaSealProof::StackedDrg32GiBV1(v) => porep_theirs::<ShapeSub8>(&req, v, &ours),
            VanillaSealProof::StackedDrg64GiBV1(v) => porep_theirs::<ShapeTop2>(&req, v, &ours),
            _ => panic!("these cases use 2 KiB, 32 GiB and 64 GiB sectors"),
        },
        (ProofKind::SnapDealsUpdate, SECTOR_SIZE_32_GIB) => snap_theirs::<ShapeSub8>(&req, &ours),
        (ProofKind::SnapDealsUpdate, SECTOR_SIZE_64_GIB) => snap_theirs::<ShapeTop2>(&req, &ours),
        (ProofKind::SnapDealsUpdate, _) => snap_theirs::<ShapeBase>(&req, &ours),
        (_, SECTOR_SIZE_32_GIB) => post_theirs::<ShapeSub8>(&req, &ours),
        (_, SECTOR_SIZE_64_GIB) => post_theirs::<ShapeTop2>(&req, &ours),
        _ => post_theirs::<ShapeBase>(&req, &ours),
    };
    let blank = theirs.blank.mismatch(&ours.pce, None);
    let real = theirs.real.mismatch(&ours.pce, Some(&ours.witness));
    let circuit = theirs.circuit;
    assert!(blank.is_none() && real.is_none(), "MISMATCH {what}: blank {circuit}: {blank:?}; partition 0: {real:?}");
    eprintln!(
        "RESULT {what}: same R1CS as {circuit} (blank and partition 0: {} constraints, {} inputs, {} aux) and the same witness of \
         partition 0; theirs checked in {:.1} s (blank) and {:.1} s (partition 0), at once",
        ours.pce.num_constraints(),
        shape.num_inputs,
        shape.num_aux,
        theirs.blank_s,
        theirs.real_s,
    );
}

#[test]
fn porep_2kib_same_r1cs_and_witness_as_stacked_circuit() {
    compare(ProofKind::PorepSealCommit, SECTOR_SIZE_2_KIB);
}

#[test]
fn snap_2kib_same_r1cs_and_witness_as_empty_sector_update_circuit() {
    compare(ProofKind::SnapDealsUpdate, SECTOR_SIZE_2_KIB);
}

#[test]
fn post_2kib_same_r1cs_and_witness_as_fallback_post() {
    compare(ProofKind::WinningPost, SECTOR_SIZE_2_KIB);
    compare(ProofKind::WindowPostPartition, SECTOR_SIZE_2_KIB);
}

/// The sector-by-sector check on threads finds what the sequential one
/// does (the same report), and both agree with the whole recordings.
#[test]
fn post_sectors_on_threads_as_sequential_synthesis() {
    for kind in [ProofKind::WinningPost, ProofKind::WindowPostPartition] {
        let req = request(kind, SECTOR_SIZE_2_KIB, 3);
        let ours = ours(&req, "2 KiB");
        let theirs = pce::record("x", fallback_circuit::<ShapeBase>(&req, ours.pt, true)).unwrap();
        let same = theirs.coeffs == ours.pce.coeffs && theirs.a == ours.pce.a && theirs.b == ours.pce.b && theirs.c == ours.pce.c;
        assert!(same && theirs.shape == ours.pce.shape, "{kind:?}: recorded R1CS differ");
        let whole = check(&ours.pce, Some(&ours.witness), fallback_circuit::<ShapeBase>(&req, ours.pt, false)).unwrap();
        assert_eq!(whole.mismatch(&ours.pce, Some(&ours.witness)), None, "{kind:?}");
        for threads in [1, 2, 3] {
            let parts = post_sectors(&ours.pce, Some(&ours.witness), fallback_circuit::<ShapeBase>(&req, ours.pt, false), threads).unwrap();
            assert_eq!(parts.mismatch(&ours.pce, Some(&ours.witness)), None, "{kind:?}, {threads} threads");
            assert_eq!(parts.counts, whole.counts, "{kind:?}, {threads} threads");
            assert_eq!(parts.input_positions, whole.input_positions, "{kind:?}, {threads} threads");
        }
    }
}

/// A changed coefficient, term, witness value or row count is found, and
/// named at its index, by the sequential check and by the sector-by-sector
/// one alike.
#[test]
fn a_difference_is_found_and_named() {
    let req = request(ProofKind::WindowPostPartition, SECTOR_SIZE_2_KIB, 4);
    let ours = ours(&req, "2 KiB");
    let theirs = |pce: &Pce, w: &WitnessOnly| {
        let whole = check(pce, Some(w), fallback_circuit::<ShapeBase>(&req, ours.pt, false)).unwrap();
        let parts = post_sectors(pce, Some(w), fallback_circuit::<ShapeBase>(&req, ours.pt, false), 2).unwrap();
        let (m1, m2) = (whole.mismatch(pce, Some(w)), parts.mismatch(pce, Some(w)));
        assert_eq!(m1, m2, "sequential and sector by sector");
        (whole, m1.unwrap_or_default())
    };
    let n = ours.pce.num_constraints();
    // In the second sector's rows: a coefficient of A, a variable of C.
    let first_term = |m: &cuzk_core::pce::SparseMatrix, from: usize| {
        (from..m.num_rows()).find(|&r| m.row_ptr[r] < m.row_ptr[r + 1]).map(|r| (r, m.row_ptr[r] as usize)).unwrap()
    };
    let mut pce = ours.pce.clone();
    let (row, at) = first_term(&pce.a, n * 3 / 4);
    pce.a.coeff_idx[at] = if pce.a.coeff_idx[at] == COEFF_ONE { COEFF_MINUS_ONE } else { COEFF_ONE };
    let (report, why) = theirs(&pce, &ours.witness);
    assert_eq!(report.r1cs.count, 1, "{why}");
    assert_eq!(report.r1cs.first.as_ref().map(|f| f.0), Some(row), "{why}");
    assert!(why.contains(&format!("constraint {row}, A:")), "{why}");

    let mut pce = ours.pce.clone();
    let (row, at) = first_term(&pce.c, n * 3 / 4);
    pce.c.cols[at] ^= 1;
    let (report, why) = theirs(&pce, &ours.witness);
    assert_eq!(report.r1cs.count, 1, "{why}");
    assert!(why.contains(&format!("constraint {row}, C:")), "{why}");

    let mut w = ours.witness.clone();
    let j = w.aux_assignment.len() / 2;
    w.aux_assignment[j] += Fr::ONE;
    let (report, why) = theirs(&ours.pce, &w);
    assert_eq!((report.r1cs.count, report.values.count), (0, 1), "{why}");
    assert!(why.contains(&format!("aux {j}:")), "{why}");

    let mut pce = ours.pce.clone();
    for m in [&mut pce.a, &mut pce.b, &mut pce.c] {
        m.row_ptr.pop();
    }
    let (report, why) = theirs(&pce, &ours.witness);
    assert_eq!(report.r1cs.first.as_ref().map(|f| f.0), Some(n - 1), "{why}");
    assert!(why.contains("no such row") && why.contains("counts"), "{why}");
}

#[test]
#[ignore = "production size: minutes and ~12 GB; see the module's doc"]
fn porep_32gib() {
    compare(ProofKind::PorepSealCommit, SECTOR_SIZE_32_GIB);
}

#[test]
#[ignore = "production size: minutes and ~12 GB; see the module's doc"]
fn porep_64gib() {
    compare(ProofKind::PorepSealCommit, SECTOR_SIZE_64_GIB);
}

#[test]
#[ignore = "production size: minutes and ~7 GB; see the module's doc"]
fn snap_32gib() {
    compare(ProofKind::SnapDealsUpdate, SECTOR_SIZE_32_GIB);
}

#[test]
#[ignore = "production size: minutes and ~7 GB; see the module's doc"]
fn snap_64gib() {
    compare(ProofKind::SnapDealsUpdate, SECTOR_SIZE_64_GIB);
}

#[test]
#[ignore = "production size: minutes and ~16 GB; see the module's doc"]
fn window_post_32gib() {
    compare(ProofKind::WindowPostPartition, SECTOR_SIZE_32_GIB);
}

#[test]
#[ignore = "production size: minutes and ~16 GB; see the module's doc"]
fn window_post_64gib() {
    compare(ProofKind::WindowPostPartition, SECTOR_SIZE_64_GIB);
}

#[test]
#[ignore = "production size; seconds, but run with the others"]
fn winning_post_32gib() {
    compare(ProofKind::WinningPost, SECTOR_SIZE_32_GIB);
}

#[test]
#[ignore = "production size; seconds, but run with the others"]
fn winning_post_64gib() {
    compare(ProofKind::WinningPost, SECTOR_SIZE_64_GIB);
}
