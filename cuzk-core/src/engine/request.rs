//! What callers submit: a proof kind with its inputs and a priority.
//!
//! A job is N independent partitions of one circuit; its proof is the
//! partition proofs (192 bytes each) concatenated in partition order.

use super::builtin::{BuiltinJob, PartitionedCircuit};
use crate::circuit_source::CircuitRequest;
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

pub use crate::priority::Priority;
pub use crate::proof_kind::ProofKind;

/// What to prove.
#[derive(Clone)]
pub enum ProofWork {
    /// A request whose circuits are built at submission (decoded and
    /// checked there): e.g. a `filecoin::ProofRequest`.
    Request(Arc<dyn CircuitRequest>),
    /// A built-in circuit (see [`crate::circuits`]).
    Builtin(BuiltinJob),
    /// Any circuit a Rust caller brings.
    Custom(Arc<dyn PartitionedCircuit>),
}

impl fmt::Debug for ProofWork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProofWork::Request(r) => write!(f, "Request({})", r.kind()),
            ProofWork::Builtin(b) => write!(f, "Builtin({b:?})"),
            ProofWork::Custom(c) => write!(f, "Custom({})", c.circuit_id()),
        }
    }
}

/// A request's [`ProofRequest::payload_digest`].
pub type PayloadDigest = [u8; 32];

/// One proof request.
#[derive(Clone, Debug)]
pub struct ProofRequest {
    /// Idempotency key: submitting the same id while its job is queued or
    /// running returns that job instead of starting another, if the
    /// request is the same ([`Self::payload_digest`]).
    pub request_id: Option<String>,
    /// A digest of what the request asks for (its caller's choice of
    /// hash, over everything that makes it this proof). A request_id
    /// reused for a live job with another digest is refused
    /// ([`super::EngineError::RequestIdConflict`]) rather than answered
    /// with the old job's proof. None: not compared.
    pub payload_digest: Option<PayloadDigest>,
    /// `None` = the request's default ([`CircuitRequest::default_priority`];
    /// Normal for built-in and custom circuits).
    pub priority: Option<Priority>,
    pub work: ProofWork,
}

impl ProofRequest {
    pub fn builtin(job: BuiltinJob) -> Self {
        Self { request_id: None, payload_digest: None, priority: None, work: ProofWork::Builtin(job) }
    }

    /// A request whose circuits are built at submission, e.g.
    /// `ProofRequest::new(filecoin::ProofRequest { .. })`.
    pub fn new(request: impl CircuitRequest + 'static) -> Self {
        Self { request_id: None, payload_digest: None, priority: None, work: ProofWork::Request(Arc::new(request)) }
    }

    pub fn custom(circuit: Arc<dyn PartitionedCircuit>) -> Self {
        Self { request_id: None, payload_digest: None, priority: None, work: ProofWork::Custom(circuit) }
    }

    pub fn with_priority(mut self, p: Priority) -> Self {
        self.priority = Some(p);
        self
    }

    pub fn with_request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    pub fn with_payload_digest(mut self, digest: PayloadDigest) -> Self {
        self.payload_digest = Some(digest);
        self
    }

    pub fn kind(&self) -> ProofKind {
        match &self.work {
            ProofWork::Request(r) => r.kind(),
            ProofWork::Builtin(_) => ProofKind::Builtin,
            ProofWork::Custom(_) => ProofKind::Custom,
        }
    }

    pub fn priority(&self) -> Priority {
        self.priority.unwrap_or_else(|| match &self.work {
            ProofWork::Request(r) => r.default_priority(),
            ProofWork::Builtin(_) | ProofWork::Custom(_) => Priority::Normal,
        })
    }
}

/// A job's handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct JobId(pub u64);

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "job-{}", self.0)
    }
}

impl std::str::FromStr for JobId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        s.strip_prefix("job-")
            .and_then(|n| n.parse().ok())
            .map(JobId)
            .ok_or_else(|| format!("{:?} is not a job id (expected job-<number>)", crate::client_text::clipped(s)))
    }
}
