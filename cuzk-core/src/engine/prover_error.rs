//! Why a prover backend call failed, typed so the worker can decide what
//! to do: an out-of-memory is worth one retry within what is free, a bad
//! input is not worth any.

use crate::failure::ErrorKind;

/// A failed backend call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProverError {
    /// The device had no memory for what the call allocates (another user
    /// of the card, or a plan that misjudged its sizes).
    #[error("out of device memory: {0}")]
    OutOfMemory(String),
    /// The device is unusable for later calls too (a CUDA error that
    /// poisons its context, such as an illegal address or an uncorrectable
    /// ECC error; no device or driver): it leaves service.
    #[error("device lost: {0}")]
    DeviceLost(String),
    /// A device call failed and the device is still usable (a bad launch
    /// configuration or argument): the call's job fails, nothing else.
    #[error("device call failed: {0}")]
    Device(String),
    /// The request is wrong (shapes, parameters): no retry can help.
    #[error("bad input: {0}")]
    BadInput(String),
    /// The host memory that the call would allocate beyond what the engine
    /// reserved is not in the engine's budget now: rather than the host
    /// running out of memory, the call is made again once the budget frees
    /// some (the prover worker's patience), then its job fails.
    #[error("out of host memory: {0}")]
    OutOfHostMemory(String),
    /// Every job the call served has ended (cancelled, failed): it stopped
    /// at its next boundary ([`crate::groth16::StopCheck`]).
    #[error("stopped: the jobs it served have ended")]
    Stopped,
    /// A bug or a state the backend did not expect.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ProverError {
    /// The failed job's kind: out of memory is exhausted resources, a
    /// device that left service makes the engine unavailable to the job
    /// (another may prove it), a device call that failed otherwise is a
    /// fault of ours, as is a state the backend did not expect.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ProverError::OutOfMemory(_) | ProverError::OutOfHostMemory(_) => ErrorKind::ResourceExhausted,
            ProverError::DeviceLost(_) => ErrorKind::Unavailable,
            ProverError::BadInput(_) => ErrorKind::BadInput,
            ProverError::Stopped => ErrorKind::Cancelled,
            ProverError::Device(_) | ProverError::Internal(_) => ErrorKind::Internal,
        }
    }
}

impl From<crate::groth16::ProveError> for ProverError {
    fn from(e: crate::groth16::ProveError) -> Self {
        match e {
            crate::groth16::ProveError::Stopped => ProverError::Stopped,
            e => ProverError::BadInput(e.to_string()),
        }
    }
}

/// Host points of a released SRS that a call needs again: no room for
/// them in the budget now is worth waiting for (the worker's patience); a
/// file that no longer reads, or reads another key, fails the call.
impl From<super::srs_handle::HostPointsError> for ProverError {
    fn from(e: super::srs_handle::HostPointsError) -> Self {
        match e {
            e @ super::srs_handle::HostPointsError::NoRoom { .. } => ProverError::OutOfHostMemory(e.to_string()),
            e => ProverError::Internal(e.to_string()),
        }
    }
}
