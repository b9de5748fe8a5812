//! Helpers for the Filecoin tests: the test param cache, the 2 KiB test
//! data, sealing a 2 KiB sector on the CPU, and the inputs Curio sends
//! for it (C1 output, PoSt and SnapDeals vanilla proofs), all made with
//! filecoin-proofs-api.

use cuzk_core::filecoin::filecoin_proofs_api::post::{generate_fallback_sector_challenges, generate_single_vanilla_proof};
use cuzk_core::filecoin::filecoin_proofs_api::seal::{
    add_piece, seal_commit_phase1, seal_pre_commit_phase1, seal_pre_commit_phase2, SealPreCommitPhase2Output,
};
use cuzk_core::filecoin::filecoin_proofs_api::update::{empty_sector_update_encode_into, generate_partition_proofs};
use cuzk_core::filecoin::filecoin_proofs_api::{
    Commitment, PieceInfo, PrivateReplicaInfo, PublicReplicaInfo, RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof,
    SectorId, UnpaddedBytesAmount,
};
use cuzk_core::filecoin::{setup, ParamCache, ParamFiles, ProofType};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Once;
use std::time::Instant;

/// The test param cache: `$CUZK_TEST_PARAM_CACHE`, else
/// `~/.cache/cuzk/test-params`. filecoin-proofs' verifiers read the same
/// folder (FIL_PROOFS_PARAMETER_CACHE), so call this before any of them.
pub fn param_cache() -> ParamCache {
    let dir = std::env::var_os("CUZK_TEST_PARAM_CACHE").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        home.join(".cache/cuzk/test-params")
    });
    static ENV: Once = Once::new();
    // filecoin-proofs reads its settings once, on first use.
    ENV.call_once(|| std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &dir));
    ParamCache::new(dir)
}

/// Test parameters for `pt`, made with our setup when not cached.
pub fn ensure_params(pt: ProofType) -> ParamFiles {
    let cache = param_cache();
    let t = Instant::now();
    let files = setup::ensure_params(pt, &cache).expect("test parameters");
    eprintln!("params for {pt:?} ready in {:.1} s: {}", t.elapsed().as_secs_f64(), files.params.display());
    files
}

/// Proving options for the test cache: its files were written by our own
/// setup, so the (slow) subgroup checks are skipped; the self-check stays on.
pub fn test_options() -> cuzk_core::filecoin::ProveOptions {
    cuzk_core::filecoin::ProveOptions { self_check: true, read: cuzk_core::srs::ReadOptions::trusted() }
}

/// `tests/data/fil-2kib`: the real 2 KiB C1 output and its public values.
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/fil-2kib")
}

/// A JSON array of 32 byte values (`meta.json`'s fields).
pub fn bytes32(v: &serde_json::Value) -> [u8; 32] {
    let b: Vec<u8> = v.as_array().unwrap().iter().map(|b| b.as_u64().unwrap() as u8).collect();
    b.try_into().unwrap()
}

/// The shared 2 KiB C1 output in Curio's envelope, and its public values.
pub fn shared_c1_request() -> (cuzk_core::filecoin::ProofRequest, serde_json::Value) {
    use cuzk_core::filecoin::{encode_envelope, ProofKind, ProofRequest};
    let meta: serde_json::Value = serde_json::from_slice(&std::fs::read(data_dir().join("meta.json")).unwrap()).unwrap();
    let c1 = std::fs::read(data_dir().join("c1-output.json")).unwrap();
    let mut req = ProofRequest::new(ProofKind::PorepSealCommit, 0);
    req.prover_id = bytes32(&meta["prover_id"]);
    req.sector_number = meta["sector_id"].as_u64().unwrap();
    req.sector_size = 2048;
    req.vanilla_proof = encode_envelope(req.sector_number, 2048, &c1);
    (req, meta)
}

/// A sealed 2 KiB sector in a temporary folder.
pub struct Sealed {
    pub dir: tempfile::TempDir,
    pub proof: RegisteredSealProof,
    pub sector_id: SectorId,
    pub prover_id: [u8; 32],
    pub comm_r: Commitment,
    pub comm_d: Commitment,
    pub pieces: Vec<PieceInfo>,
}

impl Sealed {
    pub fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }
    pub fn sealed(&self) -> PathBuf {
        self.dir.path().join("sealed")
    }
}

/// Writes `data` (2032 bytes: a full 2 KiB sector) as one piece and stages it in `path`.
pub fn stage(proof: RegisteredSealProof, data: &[u8], path: &std::path::Path) -> Vec<PieceInfo> {
    let size = UnpaddedBytesAmount(data.len() as u64);
    let mut file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path).unwrap();
    let (piece, _) = add_piece(proof, data, &mut file, size, &[]).expect("add_piece");
    vec![piece]
}

/// Seals a 2 KiB sector of `data` (CPU only; no Groth16 parameters needed).
pub fn seal_2kib(prover_id: [u8; 32], sector: u64, data: &[u8]) -> Sealed {
    let proof = RegisteredSealProof::StackedDrg2KiBV1_1;
    let dir = tempfile::tempdir().unwrap();
    let (staged, cache, sealed) = (dir.path().join("staged"), dir.path().join("cache"), dir.path().join("sealed"));
    std::fs::create_dir_all(&cache).unwrap();
    let pieces = stage(proof, data, &staged);
    std::fs::File::create(&sealed).unwrap();
    let sector_id = SectorId::from(sector);
    let p1 = seal_pre_commit_phase1(proof, &cache, &staged, &sealed, prover_id, sector_id, TICKET, &pieces).expect("PC1");
    let SealPreCommitPhase2Output { comm_r, comm_d, .. } = seal_pre_commit_phase2(p1, &cache, &sealed).expect("PC2");
    Sealed { dir, proof, sector_id, prover_id, comm_r, comm_d, pieces }
}

impl Sealed {
    /// The C1 output (SealCommitPhase1Output JSON, what Curio base64-wraps
    /// into its envelope) for challenge seed `seed`.
    pub fn commit_phase1(&self, seed: [u8; 32]) -> Vec<u8> {
        let pre = SealPreCommitPhase2Output { registered_proof: self.proof, comm_r: self.comm_r, comm_d: self.comm_d };
        let c1 = seal_commit_phase1(self.cache(), self.sealed(), self.prover_id, self.sector_id, TICKET, seed, pre, &self.pieces)
            .expect("seal_commit_phase1");
        serde_json::to_vec(&c1).unwrap()
    }
}

/// The ticket [`seal_2kib`] seals with.
pub const TICKET: [u8; 32] = [3u8; 32];

/// PoSt vanilla proofs (bincode, one per sector) for `rand`, as Curio
/// sends them.
pub fn post_vanilla(post: RegisteredPoStProof, prover_id: [u8; 32], rand: &[u8; 32], sectors: &[&Sealed]) -> Vec<Vec<u8>> {
    let ids: Vec<SectorId> = sectors.iter().map(|s| s.sector_id).collect();
    let challenges = generate_fallback_sector_challenges(post, rand, &ids, prover_id).unwrap();
    sectors
        .iter()
        .map(|s| {
            let replica = PrivateReplicaInfo::new(post, s.comm_r, s.cache(), s.sealed());
            generate_single_vanilla_proof(post, s.sector_id, &replica, &challenges[&s.sector_id]).unwrap()
        })
        .collect()
}

/// What filecoin-proofs' PoSt verifiers take for `sectors`.
pub fn post_replicas(post: RegisteredPoStProof, sectors: &[&Sealed]) -> BTreeMap<SectorId, PublicReplicaInfo> {
    sectors.iter().map(|s| (s.sector_id, PublicReplicaInfo::new(post, s.comm_r))).collect()
}

/// PoSt randomness derived from `seed` (top byte clear: a field element).
pub fn post_randomness(seed: u8) -> [u8; 32] {
    let mut r = [seed; 32];
    r[31] = 0;
    r
}

/// A 2 KiB SnapDeals update: a CC sector, new data encoded into it, and
/// the partition vanilla proofs Curio sends.
pub struct SnapCase {
    pub old: Sealed,
    pub comm_r_new: Commitment,
    pub comm_d_new: Commitment,
    /// bincode `PartitionProof`s, one per partition.
    pub vanilla: Vec<Vec<u8>>,
}

pub fn snap_2kib(prover_id: [u8; 32], sector: u64, data_seed: u8) -> SnapCase {
    let update = RegisteredUpdateProof::StackedDrg2KiBV1;
    let old = seal_2kib(prover_id, sector, &[0u8; 2032]);
    let dir = old.dir.path();
    let pieces = stage(old.proof, &sector_data(data_seed), &dir.join("staged-new"));
    let (replica, replica_cache) = (dir.join("update"), dir.join("update-cache"));
    std::fs::create_dir_all(&replica_cache).unwrap();
    std::fs::File::create(&replica).unwrap().set_len(2048).unwrap();
    let enc = empty_sector_update_encode_into(update, &replica, &replica_cache, old.sealed(), old.cache(), dir.join("staged-new"), &pieces)
        .unwrap();
    let vanilla =
        generate_partition_proofs(update, old.comm_r, enc.comm_r_new, enc.comm_d_new, old.sealed(), old.cache(), &replica, &replica_cache)
            .unwrap();
    SnapCase { comm_r_new: enc.comm_r_new, comm_d_new: enc.comm_d_new, vanilla: vanilla.into_iter().map(|p| p.0).collect(), old }
}

/// Deterministic sector data (fr32-valid: unpadded bytes are free-form).
pub fn sector_data(seed: u8) -> Vec<u8> {
    (0..2032u32).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

/// Which variables a circuit's A and B rows touch (non-zero coefficient),
/// found without a witness: compares a blank circuit with a real one.
#[derive(Default, Debug, PartialEq)]
pub struct Shape {
    pub inputs: usize,
    pub aux: usize,
    pub constraints: usize,
    pub a_aux: Vec<bool>,
    pub b_input: Vec<bool>,
    pub b_aux: Vec<bool>,
}

impl bellpepper_core::ConstraintSystem<blstrs::Scalar> for Shape {
    type Root = Self;
    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<bellpepper_core::Variable, bellpepper_core::SynthesisError>
    where
        F: FnOnce() -> Result<blstrs::Scalar, bellpepper_core::SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        self.a_aux.push(false);
        self.b_aux.push(false);
        Ok(bellpepper_core::Variable::new_unchecked(bellpepper_core::Index::Aux(self.aux - 1)))
    }
    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<bellpepper_core::Variable, bellpepper_core::SynthesisError>
    where
        F: FnOnce() -> Result<blstrs::Scalar, bellpepper_core::SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        self.b_input.push(false);
        Ok(bellpepper_core::Variable::new_unchecked(bellpepper_core::Index::Input(self.inputs - 1)))
    }
    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, _c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(bellpepper_core::LinearCombination<blstrs::Scalar>) -> bellpepper_core::LinearCombination<blstrs::Scalar>,
        LB: FnOnce(bellpepper_core::LinearCombination<blstrs::Scalar>) -> bellpepper_core::LinearCombination<blstrs::Scalar>,
        LC: FnOnce(bellpepper_core::LinearCombination<blstrs::Scalar>) -> bellpepper_core::LinearCombination<blstrs::Scalar>,
    {
        use ff::Field;
        self.constraints += 1;
        let a = a(bellpepper_core::LinearCombination::zero());
        for (i, c) in a.iter_aux() {
            if !bool::from(c.is_zero()) {
                self.a_aux[*i] = true;
            }
        }
        let b = b(bellpepper_core::LinearCombination::zero());
        for (i, c) in b.iter_inputs() {
            if !bool::from(c.is_zero()) {
                self.b_input[*i] = true;
            }
        }
        for (i, c) in b.iter_aux() {
            if !bool::from(c.is_zero()) {
                self.b_aux[*i] = true;
            }
        }
    }
    fn push_namespace<NR: Into<String>, N: FnOnce() -> NR>(&mut self, _: N) {}
    fn pop_namespace(&mut self) {}
    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

/// The shape of a circuit (synthesized without values).
pub fn shape_of(c: impl bellpepper_core::Circuit<blstrs::Scalar>) -> Shape {
    let mut s = Shape::default();
    use bellpepper_core::ConstraintSystem;
    s.alloc_input(|| "one", || unreachable!()).unwrap();
    c.synthesize(&mut s).expect("synthesis");
    s
}

/// Where two shapes first differ, for a readable failure.
pub fn shape_diff(blank: &Shape, real: &Shape) -> Option<String> {
    let first = |a: &[bool], b: &[bool]| a.iter().zip(b).position(|(x, y)| x != y).or((a.len() != b.len()).then_some(a.len().min(b.len())));
    for (name, a, b) in
        [("a_aux", &blank.a_aux, &real.a_aux), ("b_input", &blank.b_input, &real.b_input), ("b_aux", &blank.b_aux, &real.b_aux)]
    {
        if let Some(i) = first(a, b) {
            return Some(format!("{name} differs at {i} (blank {:?}, real {:?}; lens {} vs {})", a.get(i), b.get(i), a.len(), b.len()));
        }
    }
    (blank.constraints != real.constraints).then(|| format!("constraints {} vs {}", blank.constraints, real.constraints))
}
