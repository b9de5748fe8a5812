//! Errors of the Filecoin layer: each names what is wrong with the request,
//! the parameters or the proof, so the daemon can return it as the reason.

use crate::failure::{CircuitError, ErrorKind};
use crate::groth16::ProveError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum FilecoinError {
    #[error("unknown registered proof {value} for {kind}")]
    UnknownRegisteredProof { kind: &'static str, value: u64 },
    #[error("{what} is not supported: {why}")]
    Unsupported { what: String, why: &'static str },
    #[error("sector_size {request} in the request does not match {registered} ({expected} bytes)")]
    SectorSizeMismatch { request: u64, registered: String, expected: u64 },
    #[error("{field} must be exactly 32 bytes, got {len}")]
    BadLength { field: &'static str, len: usize },
    #[error("{field} is not a valid field element (its top bits are set): {why}")]
    BadFieldElement { field: &'static str, why: String },
    #[error("the request has no vanilla proof ({field} is empty)")]
    EmptyVanillaProof { field: &'static str },
    #[error("vanilla_proofs[{index}] is empty (one vanilla proof per sector or partition)")]
    EmptyVanillaProofAt { index: usize },
    #[error("{what}: malformed JSON: {source}")]
    Json { what: &'static str, #[source] source: serde_json::Error },
    #[error("{what}: malformed base64: {source}")]
    Base64 { what: &'static str, #[source] source: base64::DecodeError },
    #[error("{what} {index}: malformed bincode: {source}")]
    Bincode { what: &'static str, index: usize, #[source] source: bincode::Error },
    #[error("{what}: expected {expected}, got {got}")]
    Count { what: &'static str, expected: usize, got: usize },
    #[error("the vanilla proofs are inconsistent with the request: {0}")]
    Inconsistent(String),
    #[error("the vanilla proofs do not verify against the public inputs (registered proof or sector size, commitments, seed, randomness, prover id?): {0}")]
    VanillaInvalid(String),
    #[error("building the circuit failed: {0}")]
    Circuit(String),
    #[error("synthesis of partition {partition} failed: {source}")]
    Synthesis { partition: usize, #[source] source: bellpepper_core::SynthesisError },
    #[error("partition {partition}: the circuit's public inputs differ from the verifier's at input {index} (wrong commitments, randomness, prover or sector id?)")]
    PublicInputsMismatch { partition: usize, index: usize },
    /// `why`: what to do, or what is wrong with the param cache itself.
    #[error("missing parameter file {path} (circuit {circuit_id}): {why}")]
    MissingParams { path: PathBuf, circuit_id: String, why: String },
    #[error("reading {path}: {source}")]
    Params { path: PathBuf, #[source] source: crate::srs::ParamsError },
    #[error("writing {path}: {source}")]
    Io { path: PathBuf, #[source] source: std::io::Error },
    #[error("proving failed: {0}")]
    Prove(#[from] crate::groth16::ProveError),
    #[error("parameter setup failed: {0}")]
    Setup(#[from] crate::groth16::SetupError),
    #[error("self-check failed: the proof of partition {partition} does not verify with {vk}")]
    SelfCheckFailed { partition: usize, vk: PathBuf },
    #[error("self-check could not run: {0}")]
    SelfCheck(String),
    #[error("workload generation failed: {0}")]
    Workload(String),
}

pub type Result<T> = std::result::Result<T, FilecoinError>;

impl FilecoinError {
    /// What kind of failure it is: the request's (decoding, checks, the
    /// vanilla proofs), the parameters' (missing, unreadable), or ours.
    pub fn kind(&self) -> ErrorKind {
        use FilecoinError as F;
        match self {
            F::UnknownRegisteredProof { .. }
            | F::Unsupported { .. }
            | F::SectorSizeMismatch { .. }
            | F::BadLength { .. }
            | F::BadFieldElement { .. }
            | F::EmptyVanillaProof { .. }
            | F::EmptyVanillaProofAt { .. }
            | F::Json { .. }
            | F::Base64 { .. }
            | F::Bincode { .. }
            | F::Count { .. }
            | F::Inconsistent(_)
            | F::VanillaInvalid(_)
            | F::PublicInputsMismatch { .. } => ErrorKind::BadInput,
            // Building a circuit from the request: filecoin-proofs' code
            // fails (or panics, `no_panic`) on malformed input.
            F::Circuit(_) => ErrorKind::BadInput,
            F::Synthesis { source, .. } => ErrorKind::of_synthesis(source),
            F::MissingParams { .. } => ErrorKind::MissingParams,
            F::Params { .. } => ErrorKind::BadParams,
            F::Prove(e) => match e {
                ProveError::Stopped => ErrorKind::Cancelled,
                ProveError::Synthesis(s) => ErrorKind::of_synthesis(s),
                ProveError::ParamsMismatch { .. } | ProveError::IdentityDelta => ErrorKind::BadParams,
                _ => ErrorKind::Internal,
            },
            // A proof of ours that does not verify with the `.vk` (named):
            // the request's public inputs were checked against the
            // circuit's, so the `.vk` and the `.params` disagree (another
            // setup's), or else the prover failed.
            F::SelfCheckFailed { .. } => ErrorKind::BadParams,
            // A self-check that could not run, files we write, tools.
            F::Io { .. } | F::Setup(_) | F::SelfCheck(_) | F::Workload(_) => ErrorKind::Internal,
        }
    }
}

/// The error with its kind ([`FilecoinError::kind`]) and its message.
impl From<FilecoinError> for CircuitError {
    fn from(e: FilecoinError) -> Self {
        CircuitError::new(e.kind(), e.to_string())
    }
}

/// Checks a PoSt or SnapDeals request's list of vanilla proofs: present,
/// and no element empty.
pub(crate) fn check_vanilla_list(proofs: &[Vec<u8>]) -> Result<()> {
    if proofs.is_empty() {
        return Err(FilecoinError::EmptyVanillaProof { field: "vanilla_proofs" });
    }
    match proofs.iter().position(|p| p.is_empty()) {
        Some(index) => Err(FilecoinError::EmptyVanillaProofAt { index }),
        None => Ok(()),
    }
}

/// A 32-byte field of the request.
pub(crate) fn bytes32(field: &'static str, b: &[u8]) -> Result<[u8; 32]> {
    b.try_into().map_err(|_| FilecoinError::BadLength { field, len: b.len() })
}

/// Runs Filecoin code that may panic on malformed input (it indexes and
/// `expect`s freely) and turns a panic into a named error.
pub(crate) fn no_panic<T>(what: &str, f: impl FnOnce() -> anyhow::Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => match e.downcast_ref::<VanillaFailure>() {
            Some(v) => Err(FilecoinError::VanillaInvalid(format!("{what}: {}", v.0))),
            None => Err(FilecoinError::Circuit(format!("{what}: {e:#}"))),
        },
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            Err(FilecoinError::Circuit(format!("{what}: malformed input ({msg})")))
        }
    }
}

/// Raised inside [`no_panic`] when the vanilla proofs fail their check.
#[derive(Debug)]
pub(crate) struct VanillaFailure(pub String);

impl std::fmt::Display for VanillaFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for VanillaFailure {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The conversion keeps the message and gives the request's errors,
    /// the parameters' and ours their kinds.
    #[test]
    fn kinds_of_filecoin_errors() {
        let missing = FilecoinError::MissingParams { path: "/p/v28-x.params".into(), circuit_id: "x".into(), why: "put it there".into() };
        let json = serde_json::from_slice::<serde_json::Value>(b"{").unwrap_err();
        for (e, kind) in [
            (missing, ErrorKind::MissingParams),
            (FilecoinError::Json { what: "vanilla_proof", source: json }, ErrorKind::BadInput),
            (FilecoinError::UnknownRegisteredProof { kind: "PoSt", value: 99 }, ErrorKind::BadInput),
            (FilecoinError::Synthesis { partition: 1, source: bellpepper_core::SynthesisError::Unsatisfiable }, ErrorKind::BadInput),
            (FilecoinError::SelfCheckFailed { partition: 0, vk: "/p/v28-x.vk".into() }, ErrorKind::BadParams),
            (FilecoinError::SelfCheck("partition 0: no pairing".into()), ErrorKind::Internal),
            (FilecoinError::Prove(ProveError::IdentityDelta), ErrorKind::BadParams),
        ] {
            let message = e.to_string();
            assert_eq!(CircuitError::from(e), CircuitError { kind, message });
        }
    }
}
