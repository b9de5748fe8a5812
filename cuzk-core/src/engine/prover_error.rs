//! Why a prover backend call failed, typed so the worker can decide what
//! to do: an out-of-memory is worth one retry within what is free, a bad
//! input is not worth any.

/// A failed backend call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProverError {
    /// The device had no memory for what the call allocates (another user
    /// of the card, or a plan that misjudged its sizes).
    #[error("out of device memory: {0}")]
    OutOfMemory(String),
    /// The device failed (a CUDA error other than memory, no device): it
    /// may be unusable for later calls too.
    #[error("device failure: {0}")]
    Device(String),
    /// The request is wrong (shapes, parameters): no retry can help.
    #[error("bad input: {0}")]
    BadInput(String),
    /// A bug or a state the backend did not expect.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<crate::groth16::ProveError> for ProverError {
    fn from(e: crate::groth16::ProveError) -> Self {
        ProverError::BadInput(e.to_string())
    }
}
