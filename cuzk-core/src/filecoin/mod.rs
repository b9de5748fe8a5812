//! Filecoin proofs (feature `filecoin`): PoRep C2, SnapDeals, WindowPoSt
//! and WinningPoSt requests as Curio sends them, turned into the partition
//! circuits filecoin-proofs 19 builds, proven with our prover, assembled
//! into the bytes filecoin-proofs returns and checked with the `.vk`.
//!
//! The circuits are filecoin-proofs' own (storage-proofs 19, bellperson
//! 0.27 → bellpepper-core 0.2 and blstrs 0.7: the crates we use), so they
//! synthesize into our `ProvingAssignment` unchanged.
//!
//! Flow: [`ProofRequest`] → [`prepare`] (decode, check, build circuits;
//! [`ProofMeta::circuit_id`] names the SRS) → [`synthesize_partition`] per
//! partition → prove → [`ProofMeta::finish`] (assemble + self-check).
//! [`prove_request`] does all of it on the CPU.

mod assemble;
mod built;
pub mod circuit;
mod envelope;
mod error;
mod job;
mod kind;
mod params;
mod porep;
mod porep_check;
mod post;
mod prepare;
mod prove;
mod request;
pub mod setup;
mod snap;
pub mod workload;

pub use assemble::{assemble, check_public_inputs, self_check};
pub use circuit::FilecoinCircuit;
pub use envelope::{decode_c1, decode_envelope, decode_porep_body, encode_envelope, C1Input};
pub use error::{FilecoinError, Result};
pub use job::{request_from_engine, FilecoinJob, JobSettings};
pub use kind::{
    parse_sector_size, post_proof_from_u64, seal_proof_from_u64, update_proof_from_u64, ProofKind, ProofType, SECTOR_SIZES, SHORT_IDS,
};
pub use params::{circuit_id, ParamCache, ParamFiles, SelfCheckKey};
pub use prepare::{prepare, synthesize_partition, PreparedProof, ProofMeta, SynthesizedProof};
pub use prove::{load_self_check, prove_partitions, prove_request, ProveOptions};
pub use request::{prover_id_from_miner, ProofRequest};

/// The Filecoin crates, for callers that need their types (tests, tools).
pub use {filecoin_hashers, filecoin_proofs, filecoin_proofs_api, storage_proofs_core};
