//! What callers submit: a proof kind with its inputs and a priority.
//!
//! A job is N independent partitions of one circuit; its proof is the
//! partition proofs (192 bytes each) concatenated in partition order.

use super::circuit_source::{BuiltinJob, PartitionedCircuit};
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// Proof kinds, numbered as in the gRPC `cuzk.v1.ProofKind` enum; `Builtin`
/// (our test/demo circuits) and `Custom` (a caller's circuit) are engine
/// extensions outside the wire enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ProofKind {
    PorepSealCommit = 1,
    SnapDealsUpdate = 2,
    WindowPostPartition = 3,
    WinningPost = 4,
    Builtin = 100,
    Custom = 101,
}

impl ProofKind {
    pub const ALL: [ProofKind; 6] = [
        ProofKind::PorepSealCommit,
        ProofKind::SnapDealsUpdate,
        ProofKind::WindowPostPartition,
        ProofKind::WinningPost,
        ProofKind::Builtin,
        ProofKind::Custom,
    ];

    /// The label used in logs and metrics.
    pub fn name(self) -> &'static str {
        match self {
            ProofKind::PorepSealCommit => "porep_seal_commit",
            ProofKind::SnapDealsUpdate => "snap_deals_update",
            ProofKind::WindowPostPartition => "window_post_partition",
            ProofKind::WinningPost => "winning_post",
            ProofKind::Builtin => "builtin",
            ProofKind::Custom => "custom",
        }
    }

    /// The name the existing cuzk daemon gives the kind in GetStatus and
    /// `GET /status` (its dashboards and scripts match on these).
    pub fn compat_name(self) -> &'static str {
        match self {
            ProofKind::PorepSealCommit => "porep-c2",
            ProofKind::SnapDealsUpdate => "snap-update",
            ProofKind::WindowPostPartition => "window-post",
            ProofKind::WinningPost => "winning-post",
            ProofKind::Builtin => "builtin",
            ProofKind::Custom => "custom",
        }
    }

    /// The existing daemon's `proof_kind` label value in its metrics.
    pub fn compat_label(self) -> &'static str {
        match self {
            ProofKind::PorepSealCommit => "porep_c2",
            ProofKind::SnapDealsUpdate => "snap_update",
            ProofKind::WindowPostPartition => "window_post",
            ProofKind::WinningPost => "winning_post",
            ProofKind::Builtin => "builtin",
            ProofKind::Custom => "custom",
        }
    }

    /// Position in [`Self::ALL`].
    pub fn index(self) -> usize {
        ProofKind::ALL.iter().position(|&k| k == self).expect("ALL lists every kind")
    }

    /// The priority of a request that leaves it unspecified.
    pub fn default_priority(self) -> Priority {
        match self {
            ProofKind::WinningPost => Priority::Critical,
            ProofKind::WindowPostPartition => Priority::High,
            _ => Priority::Normal,
        }
    }
}

impl fmt::Display for ProofKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Numbered as in the gRPC `cuzk.v1.Priority` enum; higher runs first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Priority {
    Low = 1,
    Normal = 2,
    High = 3,
    Critical = 4,
}

/// The inputs of a Filecoin proof, as the gRPC SubmitProofRequest carries
/// them. They are decoded into the Filecoin circuits
/// at submission (feature `filecoin`; without it the request is refused).
#[derive(Clone, Debug, Default)]
pub struct FilecoinInputs {
    pub sector_size: u64,
    pub registered_proof: u64,
    pub vanilla_proof: Vec<u8>,
    pub vanilla_proofs: Vec<Vec<u8>>,
    pub sector_number: u64,
    pub miner_id: u64,
    pub randomness: Vec<u8>,
    pub partition_index: u32,
    pub comm_r_old: Vec<u8>,
    pub comm_r_new: Vec<u8>,
    pub comm_d_new: Vec<u8>,
}

/// What to prove.
#[derive(Clone)]
pub enum ProofWork {
    /// A Filecoin proof; `kind` must be one of the four Filecoin kinds.
    Filecoin { kind: ProofKind, inputs: FilecoinInputs },
    /// A built-in circuit (see [`crate::circuits`]).
    Builtin(BuiltinJob),
    /// Any circuit a Rust caller brings.
    Custom(Arc<dyn PartitionedCircuit>),
}

impl fmt::Debug for ProofWork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProofWork::Filecoin { kind, .. } => write!(f, "Filecoin({kind})"),
            ProofWork::Builtin(b) => write!(f, "Builtin({b:?})"),
            ProofWork::Custom(c) => write!(f, "Custom({})", c.circuit_id()),
        }
    }
}

/// One proof request.
#[derive(Clone, Debug)]
pub struct ProofRequest {
    /// Idempotency key: submitting the same id while its job is queued or
    /// running returns that job instead of starting another.
    pub request_id: Option<String>,
    /// `None` = the kind's default ([`ProofKind::default_priority`]).
    pub priority: Option<Priority>,
    pub work: ProofWork,
}

impl ProofRequest {
    pub fn builtin(job: BuiltinJob) -> Self {
        Self { request_id: None, priority: None, work: ProofWork::Builtin(job) }
    }

    pub fn custom(circuit: Arc<dyn PartitionedCircuit>) -> Self {
        Self { request_id: None, priority: None, work: ProofWork::Custom(circuit) }
    }

    pub fn with_priority(mut self, p: Priority) -> Self {
        self.priority = Some(p);
        self
    }

    pub fn with_request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    pub fn kind(&self) -> ProofKind {
        match &self.work {
            ProofWork::Filecoin { kind, .. } => *kind,
            ProofWork::Builtin(_) => ProofKind::Builtin,
            ProofWork::Custom(_) => ProofKind::Custom,
        }
    }

    pub fn priority(&self) -> Priority {
        self.priority.unwrap_or_else(|| self.kind().default_priority())
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
            .ok_or_else(|| format!("{s:?} is not a job id (expected job-<number>)"))
    }
}
