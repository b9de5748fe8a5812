//! Why a proof could not be made, by kind.
//!
//! [`ErrorKind`] is what callers decide on (the daemon's gRPC code, a
//! client's retry): the request is wrong, the parameters are missing or
//! unusable, memory ran short, or something of ours broke. A
//! [`CircuitError`] is the error of the circuit boundary
//! ([`crate::partitioned::PartitionedCircuit`],
//! [`crate::circuit_source`]): a kind and the message operators and
//! clients read. The engine keeps the kind on a failed job
//! (`engine::JobOutcome::Failed`), so nothing downstream has to guess it
//! from the text.

use std::fmt;

/// What kind of failure an error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The request is wrong (malformed, inconsistent, or a witness that
    /// does not satisfy its circuit): sending it again cannot help.
    BadInput,
    /// The parameters are not there: a missing file, or an id no source
    /// can load and no job has loaded.
    MissingParams,
    /// The parameters are there but unusable: unreadable, corrupt, of
    /// another circuit, or a `.vk` that the proofs do not verify with.
    BadParams,
    /// It needs more memory than the budget (or the device) has.
    ResourceExhausted,
    /// The SRS is in use by a batch (evict it when idle).
    Busy,
    /// The engine stopped, or the device it ran on left service: the
    /// request itself may succeed later or elsewhere.
    Unavailable,
    /// No job needed the work any more.
    Cancelled,
    /// A bug or a state the code did not expect (a panic, prover output
    /// that does not parse).
    Internal,
}

impl ErrorKind {
    /// The kind's name in logs (`error_kind=`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::BadInput => "bad_input",
            ErrorKind::MissingParams => "missing_params",
            ErrorKind::BadParams => "bad_params",
            ErrorKind::ResourceExhausted => "resource_exhausted",
            ErrorKind::Busy => "busy",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Internal => "internal",
        }
    }

    /// The kind of a synthesis error: the witness comes from the request,
    /// so a value that cannot be computed or does not satisfy a constraint
    /// is the request's; the others (CRS, verifying key, aggregation) are
    /// not a witness's and mean a bug.
    pub fn of_synthesis(e: &bellpepper_core::SynthesisError) -> ErrorKind {
        use bellpepper_core::SynthesisError as S;
        match e {
            S::AssignmentMissing | S::DivisionByZero | S::Unsatisfiable => ErrorKind::BadInput,
            _ => ErrorKind::Internal,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error of the circuit boundary: its kind and its message (shown
/// as it is: Display is the message alone, as the `String` errors these
/// replace were).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircuitError {
    pub kind: ErrorKind,
    pub message: String,
}

impl CircuitError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }

    pub fn bad_input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::BadInput, message)
    }

    pub fn missing_params(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::MissingParams, message)
    }

    pub fn bad_params(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::BadParams, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }
}

impl fmt::Display for CircuitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CircuitError {}

/// A synthesis error, of its kind ([`ErrorKind::of_synthesis`]).
impl From<bellpepper_core::SynthesisError> for CircuitError {
    fn from(e: bellpepper_core::SynthesisError) -> Self {
        Self::new(ErrorKind::of_synthesis(&e), e.to_string())
    }
}

/// A PCE's error where a partition is synthesized through it: a file
/// beside the params that cannot be read is unusable parameters; a
/// witness that does not fit the PCE's shape a PCE of another circuit (the
/// engine's state: internal); a witness that does not satisfy it the
/// request's (or a stale PCE of the same shape, which the engine then
/// records anew).
impl From<crate::pce::PceError> for CircuitError {
    fn from(e: crate::pce::PceError) -> Self {
        use crate::pce::PceError as P;
        let kind = match &e {
            P::Synthesis(s) => ErrorKind::of_synthesis(s),
            P::Io { .. } | P::NotPce | P::Version { .. } | P::Size { .. } | P::Checksum | P::Malformed(_) | P::CircuitId { .. } => {
                ErrorKind::BadParams
            }
            P::ShapeMismatch { .. } => ErrorKind::Internal,
            P::Unsatisfied { .. } => ErrorKind::BadInput,
            P::TooLarge(_) => ErrorKind::ResourceExhausted,
        };
        Self::new(kind, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bellpepper_core::SynthesisError;

    #[test]
    fn synthesis_errors_are_the_requests_where_a_witness_is() {
        for (e, kind) in [
            (SynthesisError::Unsatisfiable, ErrorKind::BadInput),
            (SynthesisError::AssignmentMissing, ErrorKind::BadInput),
            (SynthesisError::DivisionByZero, ErrorKind::BadInput),
            (SynthesisError::MalformedVerifyingKey, ErrorKind::Internal),
        ] {
            let message = e.to_string();
            assert_eq!(CircuitError::from(e), CircuitError { kind, message });
        }
    }

    #[test]
    fn pce_file_errors_are_unusable_parameters() {
        use crate::pce::PceError;
        assert_eq!(CircuitError::from(PceError::Checksum).kind, ErrorKind::BadParams);
        assert_eq!(CircuitError::from(PceError::TooLarge("2^40 rows".into())).kind, ErrorKind::ResourceExhausted);
        assert_eq!(CircuitError::from(PceError::Synthesis(SynthesisError::Unsatisfiable)).kind, ErrorKind::BadInput);
    }
}
