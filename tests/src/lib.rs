//! Helpers shared by the integration tests: bridges to bellperson 0.27 (the
//! oracle) and small circuits with unusual shapes.

pub mod dlogs;
pub mod fil;
pub mod r1cs_check;
pub mod vram;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::{Bls12, Scalar as Fr};
use cuzk_core::groth16::Proof;
use cuzk_core::srs::Parameters;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

pub type BpParams = bellperson::groth16::Parameters<Bls12>;
pub type BpProof = bellperson::groth16::Proof<Bls12>;

/// A reproducible RNG; the seed is printed so a failure can be replayed.
pub fn rng(tag: &str) -> ChaCha20Rng {
    let seed = std::env::var("CUZK_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random::<u64>);
    eprintln!("{tag}: CUZK_TEST_SEED={seed}");
    ChaCha20Rng::seed_from_u64(seed)
}

/// The engine's backend (`engine.status().backend`, or the daemon's
/// `engine started backend=...` log line) where a GPU is required
/// (`CUZK_REQUIRE_GPU=1`): the engine falls back to the CPU, with only a
/// log line, when the GPU backend cannot start, and the proofs of the CPU
/// verify as well, so only this tells a GPU run from a CPU one.
pub fn require_gpu_backend(what: &str, backend: &str) {
    if cuzk_sys::gpu_required() {
        assert_eq!(backend, "cuda", "CUZK_REQUIRE_GPU=1, but {what} runs on the {backend:?} backend");
    }
}

/// [`require_gpu_backend`] of a daemon, from its log's `engine started
/// backend=...` line (logged before it serves).
pub fn require_gpu_backend_in_log(what: &str, log: &str) {
    if cuzk_sys::gpu_required() {
        let line = log.lines().find_map(|l| l.split("engine started backend=").nth(1));
        let line = line.unwrap_or_else(|| panic!("{what}: no engine start in the log:\n{log}"));
        require_gpu_backend(what, line.split_whitespace().next().unwrap_or(""));
    }
}

/// Our parameters as bellperson reads them (through the file format).
pub fn to_bellperson(params: &Parameters) -> BpParams {
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    BpParams::read(&bytes[..], true).expect("bellperson reads our params")
}

/// Bellperson's parameters through the file format into ours.
pub fn from_bellperson(params: &BpParams) -> (Parameters, Vec<u8>) {
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    let ours = Parameters::from_bytes(&bytes, Default::default()).expect("we read bellperson's params");
    (ours, bytes)
}

pub fn bp_proof_bytes(p: &BpProof) -> Vec<u8> {
    let mut out = Vec::new();
    p.write(&mut out).unwrap();
    out
}

pub fn bp_proof_from(p: &Proof) -> BpProof {
    BpProof::read(&p.to_bytes()[..]).unwrap()
}

/// x·x = y with x, y public: a circuit with no aux variable at all.
#[derive(Clone)]
pub struct SquareNoAux {
    pub x: Option<Fr>,
}

impl Circuit<Fr> for SquareNoAux {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc_input(|| "x", || self.x.ok_or(SynthesisError::AssignmentMissing))?;
        let y = cs.alloc_input(|| "y", || self.x.map(|x| x * x).ok_or(SynthesisError::AssignmentMissing))?;
        cs.enforce(|| "x*x=y", |lc| lc + x, |lc| lc + x, |lc| lc + y);
        Ok(())
    }
}
