//! How the engine is given circuits it does not define, so that it names
//! no circuit family (Filecoin's live in [`crate::filecoin`], which
//! implements both traits):
//!
//! - a [`CircuitRequest`] is what a caller submits for such a circuit
//!   (`engine::ProofRequest::new`): the engine asks it for its kind
//!   (queues, status), its default priority and, once at submission, to build its
//!   [`PartitionedCircuit`] — decoding and checks happen there, so bad
//!   input fails the submission naming what is wrong;
//! - a [`CircuitSource`] names parameters by circuit id, for the calls
//!   that carry an id and no circuit (preload, evict,
//!   `Engine::parameters`): it resolves the spellings of its ids and loads
//!   their SRS.
//!
//! The engine is given its sources at construction
//! (`Engine::start_with`); `Engine::start` passes
//! [`crate::standard_sources`].

use crate::config::SrsConfig;
use crate::failure::CircuitError;
use crate::partitioned::PartitionedCircuit;
use crate::priority::Priority;
use crate::proof_kind::ProofKind;
use crate::srs::{Parameters, ParamsFile};
use std::sync::Arc;

/// What a request may consult while its circuits are built.
pub struct BuildContext<'a> {
    /// The engine's `[srs]` keys (param cache, read checks, self-check).
    pub srs: &'a SrsConfig,
    /// Whether the engine holds the SRS of a circuit id (its `.params`
    /// file then need not exist any more).
    pub resident: &'a dyn Fn(&str) -> bool,
}

/// Why a request's circuits could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// The circuits could not be built: the request is wrong (kind
    /// `BadInput`, the message naming what), or a fault of ours.
    Request(CircuitError),
    /// The request is fine but its parameters are not usable (e.g. a
    /// missing file): the error says which and why.
    Srs { circuit_id: String, error: CircuitError },
}

impl BuildError {
    /// A request that is wrong; the message names what.
    pub fn bad_request(message: impl Into<String>) -> Self {
        BuildError::Request(CircuitError::bad_input(message))
    }
}

/// A proof request whose circuits are built at submission.
pub trait CircuitRequest: Send + Sync {
    fn kind(&self) -> ProofKind;
    /// The priority of a request that gives none.
    fn default_priority(&self) -> Priority {
        Priority::Normal
    }
    /// Decodes and checks the request and builds its circuits (cheap next
    /// to proving).
    fn build(&self, ctx: &BuildContext) -> Result<Arc<dyn PartitionedCircuit>, BuildError>;
}

/// A family of circuit ids whose parameters the engine can load by id.
pub trait CircuitSource: Send + Sync {
    /// The id the engine keys an SRS of this family by, for any spelling
    /// of it this family accepts (file prefixes, short names); None = not
    /// an id of this family.
    fn resolve(&self, circuit_id: &str) -> Option<String>;
    /// How this family's ids are spelled, for the error naming an unknown
    /// id: "a ... id (...)".
    fn id_forms(&self) -> &str;
    /// An upper bound of the SRS's size, known before loading it (see
    /// [`PartitionedCircuit::srs_size_hint`]); `circuit_id` is resolved.
    fn srs_size_hint(&self, _circuit_id: &str, _srs: &SrsConfig) -> Option<u64> {
        None
    }
    /// Whether [`Self::load_params`] reads the SRS of `circuit_id` from a
    /// file (see [`crate::partitioned::PartitionedCircuit::params_from_file`]).
    fn params_from_file(&self, _circuit_id: &str, _srs: &SrsConfig) -> bool {
        false
    }
    /// The `.params` file of `circuit_id` (see
    /// [`crate::partitioned::PartitionedCircuit::params_file`]).
    fn params_file(&self, _circuit_id: &str, _srs: &SrsConfig) -> Option<ParamsFile> {
        None
    }
    /// Loads the SRS of a resolved id; the error's kind says whether the
    /// parameters are missing, unusable, or something else failed.
    fn load_params(&self, circuit_id: &str, srs: &SrsConfig) -> Result<Parameters, CircuitError>;
}
