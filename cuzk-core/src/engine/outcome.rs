//! What a job ends with, and the engine's errors.

use super::request::JobId;
use super::srs_manager::SrsError;
use crate::circuit_source::BuildError;
use crate::failure::{CircuitError, ErrorKind};
use serde::Serialize;

/// Where a job's time went, in milliseconds. Synthesis and prover times
/// are summed over its partitions (with several workers they overlap, so
/// they can exceed `total_ms`). A failed or cancelled job reports the time
/// it spent up to the failure or the cancel, stages still running then
/// (an SRS load, a partition in synthesis or on the prover) counted up to
/// that moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct JobTimings {
    /// Submission until its first partition was dispatched.
    pub queue_wait_ms: u64,
    /// Waiting for (and loading) its SRS.
    pub srs_load_ms: u64,
    pub synthesis_ms: u64,
    pub gpu_compute_ms: u64,
    /// Submission until the last partition was proved (or the job failed
    /// or was cancelled).
    pub total_ms: u64,
}

/// A finished job's proof: the partition proofs concatenated in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProofOutput {
    pub proof: Vec<u8>,
    pub partitions: usize,
    pub timings: JobTimings,
}

/// The result of waiting for a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobOutcome {
    Completed(ProofOutput),
    /// Why it failed (its kind: the request's, the parameters', ours...),
    /// and where its time went until then.
    Failed {
        kind: ErrorKind,
        message: String,
        timings: JobTimings,
    },
    /// Where its time went until the cancel.
    Cancelled {
        timings: JobTimings,
    },
    /// The wait ran out; the job goes on.
    Timeout,
}

impl JobOutcome {
    pub fn is_final(&self) -> bool {
        !matches!(self, JobOutcome::Timeout)
    }

    /// The proof bytes of a completed job, else a description of why not.
    pub fn into_proof(self) -> Result<ProofOutput, String> {
        match self {
            JobOutcome::Completed(p) => Ok(p),
            JobOutcome::Failed { message, .. } => Err(format!("job failed: {message}")),
            JobOutcome::Cancelled { .. } => Err("job was cancelled".into()),
            JobOutcome::Timeout => Err("timed out waiting for the job".into()),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EngineError {
    #[error("unknown job {0} (never submitted, or finished long enough ago to be forgotten)")]
    UnknownJob(JobId),
    #[error("the engine is shutting down and takes no new jobs")]
    ShuttingDown,
    #[error("bad request: {0}")]
    BadRequest(String),
    /// A request's circuits could not be built for a reason that is not
    /// the request's (its kind says which).
    #[error("{0}")]
    Circuit(CircuitError),
    /// A circuit's parameters could not be loaded or evicted: `kind` says
    /// why (missing, unusable, too large for the budget, in use, ...).
    #[error("SRS {}: {message}", crate::client_text::clipped(.circuit_id))]
    Srs { circuit_id: String, kind: ErrorKind, message: String },
    #[error(
        "request_id {:?} names {job}, a live job of another request (ids name one request: give this one a new request_id, or resubmit the same request to get {job})",
        crate::client_text::clipped(.request_id)
    )]
    RequestIdConflict { request_id: String, job: JobId },
    #[error("cannot start the engine: {0}")]
    Start(String),
}

impl EngineError {
    /// The error of an SRS manager call for `circuit_id`.
    pub fn srs(circuit_id: &str, e: SrsError) -> Self {
        EngineError::Srs { circuit_id: circuit_id.into(), kind: e.kind(), message: e.to_string() }
    }
}

impl From<BuildError> for EngineError {
    fn from(e: BuildError) -> Self {
        match e {
            BuildError::Request(e) if e.kind == ErrorKind::BadInput => EngineError::BadRequest(e.message),
            BuildError::Request(e) => EngineError::Circuit(e),
            BuildError::Srs { circuit_id, error } => EngineError::Srs { circuit_id, kind: error.kind, message: error.message },
        }
    }
}
