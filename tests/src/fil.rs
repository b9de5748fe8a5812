//! Helpers for the Filecoin tests: the test param cache, the 2 KiB test
//! data, and sealing a 2 KiB sector on the CPU for PoSt and SnapDeals.

use cuzk_core::filecoin::filecoin_proofs_api::seal::{
    add_piece, seal_pre_commit_phase1, seal_pre_commit_phase2, SealPreCommitPhase2Output,
};
use cuzk_core::filecoin::filecoin_proofs_api::{
    Commitment, PieceInfo, RegisteredSealProof, SectorId, UnpaddedBytesAmount,
};
use cuzk_core::filecoin::{setup, ParamCache, ParamFiles, ProofType};
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
    let ticket = [3u8; 32];
    let p1 = seal_pre_commit_phase1(proof, &cache, &staged, &sealed, prover_id, sector_id, ticket, &pieces).expect("PC1");
    let SealPreCommitPhase2Output { comm_r, comm_d, .. } = seal_pre_commit_phase2(p1, &cache, &sealed).expect("PC2");
    Sealed { dir, proof, sector_id, prover_id, comm_r, comm_d, pieces }
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
    for (name, a, b) in [("a_aux", &blank.a_aux, &real.a_aux), ("b_input", &blank.b_input, &real.b_input), ("b_aux", &blank.b_aux, &real.b_aux)] {
        if let Some(i) = first(a, b) {
            return Some(format!("{name} differs at {i} (blank {:?}, real {:?}; lens {} vs {})", a.get(i), b.get(i), a.len(), b.len()));
        }
    }
    (blank.constraints != real.constraints).then(|| format!("constraints {} vs {}", blank.constraints, real.constraints))
}
