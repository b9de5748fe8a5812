//! Where Filecoin jobs come from in the engine: a request's inputs become a
//! [`FilecoinJob`](crate::filecoin::FilecoinJob) (the engine's
//! [`PartitionedCircuit`]) configured by `[srs]`, and a Filecoin circuit id
//! names parameters `v28-<id>.params` in `srs.param_cache`.
//!
//! Without the `filecoin` feature the same functions exist and say that
//! the feature is missing, so the engine's code has no feature switches.

use super::circuit_source::PartitionedCircuit;
use super::outcome::EngineError;
use crate::filecoin::ProofRequest;
use super::srs_manager::SrsLoader;
use crate::config::SrsConfig;
use std::sync::Arc;

/// The prefix filecoin-proofs puts before a circuit id in file names.
const FILE_PREFIX: &str = "v28-";

/// The id families filecoin-proofs 19 names its circuits with.
const FAMILIES: [&str; 3] = ["stacked-proof-of-replication-", "proof-of-spacetime-fallback-", "empty-sector-update-"];

/// A circuit id as the SRS manager keys it: a Filecoin id may be given
/// with its file prefix (`v28-...`, as the file is named) or as the
/// existing daemon's short id (`porep-32g`, `wpost-32g`, ...); other ids
/// are returned unchanged.
pub fn canonical_id(circuit_id: &str) -> std::borrow::Cow<'_, str> {
    if let Some(id) = imp::short_id(circuit_id) {
        return id.into();
    }
    match circuit_id.strip_prefix(FILE_PREFIX) {
        Some(rest) if is_filecoin_id(rest) => rest.into(),
        _ => circuit_id.into(),
    }
}

/// Whether an id (without `v28-`) names a Filecoin circuit.
pub fn is_filecoin_id(circuit_id: &str) -> bool {
    FAMILIES.iter().any(|f| circuit_id.starts_with(f))
}

#[cfg(feature = "filecoin")]
mod imp {
    use super::*;
    use crate::filecoin::{prepare, FilecoinJob, JobSettings, ParamCache};
    use crate::srs::ReadOptions;

    fn read_options(srs: &SrsConfig) -> ReadOptions {
        if srs.trusted_params {
            ReadOptions::trusted()
        } else {
            ReadOptions::default()
        }
    }

    /// Decodes and checks a request and builds its circuits (cheap next to
    /// proving: JSON/bincode decoding and the vanilla proofs' check). Bad
    /// input is a `BadRequest` naming what is wrong. `resident` says
    /// whether the SRS of a circuit id is already loaded: then its
    /// `.params` file need not exist any more.
    pub fn circuit(
        request: &ProofRequest,
        srs: &SrsConfig,
        resident: &dyn Fn(&str) -> bool,
    ) -> Result<Arc<dyn PartitionedCircuit>, EngineError> {
        let prepared = prepare(request).map_err(|e| EngineError::BadRequest(e.to_string()))?;
        let job = FilecoinJob::new(prepared);
        let id = job.meta().circuit_id.clone();
        let cache = ParamCache::new(&srs.param_cache);
        // A missing file fails the request now, not after queueing (and,
        // for the .vk, not after minutes of proving).
        cache
            .check_files(&id, !resident(&id), srs.self_check)
            .map_err(|e| EngineError::Srs { circuit_id: id.clone(), message: e.to_string() })?;
        let settings = JobSettings { read: read_options(srs), self_check: srs.self_check.then_some(cache) };
        Ok(Arc::new(job.with_settings(settings)))
    }

    /// The circuit id a short id (`porep-32g`, ...) names.
    pub fn short_id(short: &str) -> Option<String> {
        let (_, pt) = crate::filecoin::SHORT_IDS.iter().find(|(s, _)| *s == short)?;
        crate::filecoin::circuit_id(*pt).ok()
    }

    /// The loader of a Filecoin circuit's parameters by id (PreloadSRS);
    /// None if the id is not a Filecoin one.
    pub fn srs_loader(srs: &SrsConfig, circuit_id: &str) -> Option<SrsLoader<'static>> {
        if !is_filecoin_id(circuit_id) {
            return None;
        }
        let cache = ParamCache::new(&srs.param_cache);
        let (id, read) = (circuit_id.to_string(), read_options(srs));
        Some(SrsLoader {
            size_hint: cache.params_file_size(circuit_id),
            load: Box::new(move || cache.load_params(&id, read).map_err(|e| e.to_string())),
        })
    }
}

#[cfg(not(feature = "filecoin"))]
mod imp {
    use super::*;

    const MISSING: &str = "cuzk was built without its `filecoin` feature";

    pub fn circuit(
        request: &ProofRequest,
        _srs: &SrsConfig,
        _resident: &dyn Fn(&str) -> bool,
    ) -> Result<Arc<dyn PartitionedCircuit>, EngineError> {
        Err(EngineError::BadRequest(format!("proof kind {} is not supported: {MISSING}", request.kind)))
    }

    pub fn short_id(_short: &str) -> Option<String> {
        None
    }

    pub fn srs_loader(_srs: &SrsConfig, circuit_id: &str) -> Option<SrsLoader<'static>> {
        let id = circuit_id.to_string();
        is_filecoin_id(circuit_id).then(|| SrsLoader {
            size_hint: None,
            load: Box::new(move || Err(format!("{id} is a Filecoin SRS, and {MISSING}"))),
        })
    }
}

pub use imp::{circuit, srs_loader};
