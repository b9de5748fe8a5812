//! Groth16 over BLS12-381, laid out as in ark-groth16:
//! [`qap`] (R1CS → QAP evaluated at τ), [`setup`] (parameters from toxic
//! waste), [`h_term`] (the quotient polynomial), [`prover`], [`proof`],
//! [`verifier`].

#[cfg(feature = "cuda")]
pub mod gpu_prover;
#[cfg(feature = "cuda")]
pub mod gpu_srs;
pub mod h_term;
pub mod proof;
pub mod prover;
pub mod qap;
pub mod setup;
pub mod stop;
pub mod verifier;

pub use proof::{Proof, ProofError};
pub use prover::{
    assemble, prove, prove_batch, prove_batch_deterministic, prove_deterministic, prove_synthesized, prove_synthesized_deterministic,
    prove_synthesized_until, MsmResults, ProveError,
};
pub use setup::{
    generate_parameters, generate_parameters_from_pce, generate_random_parameters, params_layout, write_parameters, SetupError, ToxicWaste,
};
pub use stop::StopCheck;
pub use verifier::{prepare_verifying_key, verify_proof, verify_proofs_batch, PreparedVerifyingKey, VerifyError};
