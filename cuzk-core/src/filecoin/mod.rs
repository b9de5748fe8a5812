//! Filecoin proofs: PoRep C2, SnapDeals, WindowPoSt
//! and WinningPoSt requests as Curio sends them, turned into the partition
//! circuits filecoin-proofs 19 builds, proven with our prover, assembled
//! into the bytes filecoin-proofs returns and checked with the `.vk`.
//!
//! The circuits are filecoin-proofs' own (storage-proofs 19, bellperson
//! 0.27 → bellpepper-core 0.2 and blstrs 0.7: the crates we use), so they
//! synthesize into our `ProvingAssignment` unchanged. PoRep, PoSt and
//! SnapDeals partitions are ours ([`porep_circuit`], [`post_circuit`],
//! [`update_circuit`]): the same R1CS and witness as storage-proofs'
//! `StackedCircuit`, `FallbackPoStCircuit` and `EmptySectorUpdateCircuit`,
//! with their gadgets' witnesses computed on values.
//!
//! Flow: [`ProofRequest`] → [`prepare`] (decode, check, build circuits;
//! [`ProofMeta::circuit_id`] names the SRS) → [`synthesize_partition`] per
//! partition → prove → [`ProofMeta::finish`] (assemble + self-check).
//! [`prove_request`] does all of it on the CPU.
//!
//! This module owns a Filecoin request from the wire on: its kinds (the
//! crate's one [`ProofKind`]), the registered-proof numbers and sector
//! sizes, its decoding, and its circuit ids and parameter file names. The
//! engine sees it through [`crate::circuit_source`] only: a
//! [`ProofRequest`] is a `CircuitRequest` and [`FilecoinSource`] the
//! family of its circuit ids; neither module imports the other. Only
//! those exist without the `filecoin` feature (they then refuse, naming
//! the feature).

mod request;
mod source;
pub use crate::proof_kind::ProofKind;
pub use request::{prover_id_from_miner, ProofRequest};
pub use source::{short_id_of, FilecoinSource};

/// Marks each item it holds `#[cfg(feature = "filecoin")]`: everything
/// below but `request` and `source` (see above) needs the Filecoin crates.
macro_rules! with_filecoin_feature {
    ($($item:item)*) => { $(#[cfg(feature = "filecoin")] $item)* };
}

with_filecoin_feature! {
    mod assemble;
    mod built;
    pub mod circuit;
    mod envelope;
    mod error;
    mod job;
    mod kind;
    mod merkle_path;
    mod params;
    mod porep;
    mod porep_check;
    pub mod porep_circuit;
    mod post;
    pub mod post_circuit;
    mod prepare;
    mod prove;
    pub mod setup;
    mod threaded_witness;
    mod published;
    mod snap;
    pub mod update_circuit;
    pub mod workload;

    pub use self::{
        assemble::{assemble, check_public_inputs, self_check},
        circuit::FilecoinCircuit,
        envelope::{decode_c1, decode_envelope, decode_porep_body, encode_envelope, C1Input},
        error::{FilecoinError, Result},
        job::{FilecoinJob, JobSettings},
        kind::{parse_sector_size, post_proof_from_u64, seal_proof_from_u64, update_proof_from_u64, ProofType, SECTOR_SIZES, SHORT_IDS },
        params::{circuit_id, ParamCache, ParamFiles, SelfCheckKey},
        prepare::{prepare, synthesize_partition, PreparedProof, ProofMeta, SynthesizedProof},
        prove::{load_self_check, prove_partitions, prove_request, ProveOptions},
        published::{file_digest, PublishedDigests},
    };

    /// The Filecoin crates, for callers that need their types (tests, tools).
    pub use {filecoin_hashers, filecoin_proofs, filecoin_proofs_api, storage_proofs_core};
}
