//! Filecoin in the engine's terms ([`crate::circuit_source`]): a
//! [`ProofRequest`] builds a [`FilecoinJob`](super::FilecoinJob)
//! configured by `[srs]`, and [`FilecoinSource`] names parameters
//! `v28-<id>.params` in `srs.param_cache` by circuit id.
//!
//! Without the `filecoin` feature the same exist and say that the feature
//! is missing, so the engine has no feature switches.

use super::ProofRequest;
use crate::circuit_source::{BuildContext, BuildError, CircuitRequest, CircuitSource};
use crate::config::SrsConfig;
use crate::failure::CircuitError;
use crate::partitioned::PartitionedCircuit;
use crate::priority::Priority;
use crate::proof_kind::ProofKind;
use crate::srs::{Parameters, ParamsFile};
use std::sync::Arc;

/// The prefix filecoin-proofs puts before a circuit id in file names
/// (its parameter version; `params.rs` checks it against theirs).
pub(super) const FILE_PREFIX: &str = "v28-";

/// The id families filecoin-proofs 19 names its circuits with.
const FAMILIES: [&str; 3] = ["stacked-proof-of-replication-", "proof-of-spacetime-fallback-", "empty-sector-update-"];

/// Whether an id (without `v28-`) names a Filecoin circuit.
fn is_filecoin_id(circuit_id: &str) -> bool {
    FAMILIES.iter().any(|f| circuit_id.starts_with(f))
}

/// The existing daemon's short id (`porep-32g`, `wpost-32g`, ...) of a
/// circuit id that has one: its status names circuits so.
pub fn short_id_of(circuit_id: &str) -> Option<&'static str> {
    imp::short_ids().iter().find(|(_, id)| id == circuit_id).map(|(short, _)| *short)
}

/// Filecoin's circuit ids: filecoin-proofs' three families, with or
/// without the file prefix (`v28-...`, as the file is named), or the
/// existing daemon's short ids (`porep-32g`, `wpost-32g`, ...).
pub struct FilecoinSource;

impl CircuitSource for FilecoinSource {
    fn resolve(&self, circuit_id: &str) -> Option<String> {
        if let Some((_, id)) = imp::short_ids().iter().find(|(short, _)| *short == circuit_id) {
            return Some(id.clone());
        }
        let id = circuit_id.strip_prefix(FILE_PREFIX).unwrap_or(circuit_id);
        is_filecoin_id(id).then(|| id.to_string())
    }

    fn id_forms(&self) -> &str {
        "a Filecoin one (v28-stacked-proof-of-replication-..., v28-proof-of-spacetime-fallback-..., v28-empty-sector-update-...)"
    }

    fn srs_size_hint(&self, circuit_id: &str, srs: &SrsConfig) -> Option<u64> {
        imp::params_file_size(circuit_id, srs)
    }

    fn params_from_file(&self, _circuit_id: &str, _srs: &SrsConfig) -> bool {
        true
    }

    fn params_file(&self, circuit_id: &str, srs: &SrsConfig) -> Option<ParamsFile> {
        imp::params_file(circuit_id, srs)
    }

    fn load_params(&self, circuit_id: &str, srs: &SrsConfig) -> Result<Parameters, CircuitError> {
        imp::load_params(circuit_id, srs)
    }
}

impl CircuitRequest for ProofRequest {
    fn kind(&self) -> ProofKind {
        self.kind
    }

    /// PoSt proofs have a deadline: WinningPoSt (a block reward, seconds)
    /// before WindowPoSt (within its deadline window) before the rest.
    fn default_priority(&self) -> Priority {
        match self.kind {
            ProofKind::WinningPost => Priority::Critical,
            ProofKind::WindowPostPartition => Priority::High,
            _ => Priority::Normal,
        }
    }

    /// Decodes and checks the request and builds its circuits (JSON and
    /// bincode decoding, the vanilla proofs' check). Bad input is an
    /// error of kind `BadInput` naming what is wrong; a missing parameter file fails
    /// the request now, not after queueing (and, for the `.vk`, not after
    /// minutes of proving).
    fn build(&self, ctx: &BuildContext) -> Result<Arc<dyn PartitionedCircuit>, BuildError> {
        if !self.kind.is_filecoin() {
            return Err(BuildError::bad_request(format!("proof kind {} is not a Filecoin kind", self.kind)));
        }
        imp::job(self, ctx)
    }
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

    pub fn job(request: &ProofRequest, ctx: &BuildContext) -> Result<Arc<dyn PartitionedCircuit>, BuildError> {
        let prepared = prepare(request).map_err(|e| BuildError::Request(e.into()))?;
        let job = FilecoinJob::new(prepared);
        let id = job.meta().circuit_id.clone();
        let cache = ParamCache::new(&ctx.srs.param_cache);
        cache
            .check_files(&id, !(ctx.resident)(&id), ctx.srs.self_check)
            .map_err(|e| BuildError::Srs { circuit_id: id.clone(), error: e.into() })?;
        let settings = JobSettings { read: read_options(ctx.srs), self_check: ctx.srs.self_check.then_some(cache) };
        Ok(Arc::new(job.with_settings(settings)))
    }

    /// The short ids (`porep-32g`, ...) and the circuit ids they name
    /// (computed once: status asks at every poll).
    pub fn short_ids() -> &'static [(&'static str, String)] {
        static IDS: std::sync::OnceLock<Vec<(&'static str, String)>> = std::sync::OnceLock::new();
        IDS.get_or_init(|| {
            crate::filecoin::SHORT_IDS.iter().filter_map(|(short, pt)| Some((*short, crate::filecoin::circuit_id(*pt).ok()?))).collect()
        })
    }

    pub fn params_file_size(circuit_id: &str, srs: &SrsConfig) -> Option<u64> {
        ParamCache::new(&srs.param_cache).params_file_size(circuit_id)
    }

    pub fn load_params(circuit_id: &str, srs: &SrsConfig) -> Result<Parameters, CircuitError> {
        Ok(ParamCache::new(&srs.param_cache).load_params(circuit_id, read_options(srs))?)
    }

    pub fn params_file(circuit_id: &str, srs: &SrsConfig) -> Option<ParamsFile> {
        ParamCache::new(&srs.param_cache).params_file(circuit_id, read_options(srs))
    }
}

#[cfg(not(feature = "filecoin"))]
mod imp {
    use super::*;

    const MISSING: &str = "cuzk was built without its `filecoin` feature";

    pub fn job(request: &ProofRequest, _ctx: &BuildContext) -> Result<Arc<dyn PartitionedCircuit>, BuildError> {
        Err(BuildError::bad_request(format!("proof kind {} is not supported: {MISSING}", request.kind)))
    }

    pub fn short_ids() -> &'static [(&'static str, String)] {
        &[]
    }

    pub fn params_file_size(_circuit_id: &str, _srs: &SrsConfig) -> Option<u64> {
        None
    }

    pub fn params_file(_circuit_id: &str, _srs: &SrsConfig) -> Option<ParamsFile> {
        None
    }

    /// The parameters exist only for a build that can use them: without
    /// the feature, they are as good as missing.
    pub fn load_params(circuit_id: &str, _srs: &SrsConfig) -> Result<Parameters, CircuitError> {
        Err(CircuitError::missing_params(format!("{} is a Filecoin SRS, and {MISSING}", crate::client_text::clipped(circuit_id))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_resolve_with_or_without_the_file_prefix() {
        let id = "stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-0123";
        for spelling in [id.to_string(), format!("{FILE_PREFIX}{id}")] {
            assert_eq!(FilecoinSource.resolve(&spelling).as_deref(), Some(id));
        }
        for other in ["builtin-synthetic-64-2", "v28-builtin-mimc-1", "nonsense"] {
            assert_eq!(FilecoinSource.resolve(other), None, "{other}");
        }
    }

    #[cfg(feature = "filecoin")]
    #[test]
    fn short_ids_name_their_circuits_both_ways() {
        for (short, pt) in crate::filecoin::SHORT_IDS {
            let id = crate::filecoin::circuit_id(pt).unwrap();
            assert_eq!(FilecoinSource.resolve(short).as_deref(), Some(id.as_str()));
            assert_eq!(short_id_of(&id), Some(short));
        }
        assert_eq!(short_id_of("builtin-mimc-1"), None);
    }
}
