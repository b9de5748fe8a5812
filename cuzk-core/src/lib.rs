//! cuzk-core: a Groth16 proving engine for BLS12-381, byte-compatible with
//! bellperson 0.27 and the Filecoin parameter files.
//!
//! Data flows top to bottom through the modules:
//! - [`cs`]: synthesize a bellpepper circuit into a [`cs::ProvingAssignment`]
//!   (a, b, c evaluations, assignments, density bitmaps);
//! - [`pce`]: a circuit's R1CS recorded once (witness-only synthesis and a
//!   sparse product then give the same assignment);
//! - [`srs`]: the parameters (`.params` / `.vk` files) a proof is made with;
//! - [`groth16`]: setup, the prover (H term via [`ntt`], MSMs via
//!   [`arith::msm`]), proofs and the verifier;
//! - [`circuits`]: built-in circuits for tests, demos and benchmarks;
//! - [`engine`]: the proving engine (scheduler, synthesis and prover
//!   workers, GPU interlock, memory budget, SRS manager), set up by [`config`];
//!   it proves any [`partitioned::PartitionedCircuit`] and is given the
//!   families it does not define through [`circuit_source`];
//! - [`filecoin`]: Filecoin's proofs as such a family;
//! - [`failure`]: why a proof could not be made, by kind (the circuit
//!   boundary's error, kept on a failed job);
//! - [`witness_gadgets`]: gadgets' witnesses computed without their
//!   constraints, for witness-only synthesis;
//! - [`client_text`]: a client's strings as errors and logs show them;
//! - [`disk_room`]: room on disk checked before the large files are written;
//! - [`host_alloc`]: the global allocator the cuzk binaries use (large
//!   blocks freed without stalling other threads' mappings).

pub mod arith;
pub mod circuit_source;
pub mod circuits;
pub mod client_text;
pub mod config;
pub mod cs;
pub mod disk_room;
pub mod engine;
pub mod failure;
pub mod filecoin;
pub mod groth16;
pub mod host_alloc;
pub mod ntt;
pub mod par;
pub mod partitioned;
pub mod pce;
pub mod priority;
pub mod proof_kind;
pub mod srs;
pub mod witness_gadgets;

pub use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective, Scalar as Fr};

/// The circuit families an engine started with [`engine::Engine::start`]
/// knows by id beside its built-in circuits: Filecoin's
/// ([`filecoin::FilecoinSource`]; without the `filecoin` feature its ids
/// are recognised and their loading names the missing feature).
pub fn standard_sources() -> Vec<std::sync::Arc<dyn circuit_source::CircuitSource>> {
    vec![std::sync::Arc::new(filecoin::FilecoinSource)]
}
