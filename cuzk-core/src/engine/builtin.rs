//! The built-in circuits as [`PartitionedCircuit`]s, and their ids as a
//! [`CircuitSource`] (the one family the engine defines itself).
//!
//! Built-in SRS: `<param_cache>/<circuit-id>.params` when that file exists,
//! else a random setup generated in memory (fine for tests and demos; the
//! SRS manager then keeps it like any other entry).

use crate::circuit_source::CircuitSource;
use crate::circuits::CircuitSpec;
use crate::config::SrsConfig;
use crate::failure::CircuitError;
pub use crate::partitioned::{AnyCircuit, PartitionedCircuit};
use crate::srs::{Parameters, ParamsFile, ReadOptions};
use blstrs::Scalar as Fr;
use std::path::Path;

/// A job of a built-in circuit: partition `p` is the instance with witness
/// seed `seed + p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuiltinJob {
    pub spec: CircuitSpec,
    pub partitions: usize,
    pub seed: u64,
}

const BUILTIN_PREFIX: &str = "builtin-";

impl BuiltinJob {
    pub fn new(spec: CircuitSpec, partitions: usize, seed: u64) -> Self {
        Self { spec, partitions, seed }
    }

    /// The public inputs of partition `p`, for verifying its proof.
    pub fn public_inputs(&self, p: usize) -> Vec<Fr> {
        self.spec.instance(self.partition_seed(p)).public_inputs().expect("built-in circuits synthesize")
    }

    fn partition_seed(&self, p: usize) -> u64 {
        self.seed.wrapping_add(p as u64)
    }

    /// `builtin-synthetic-4096-8` for `synthetic:4096:8`.
    pub fn circuit_id_of(spec: &CircuitSpec) -> String {
        format!("{BUILTIN_PREFIX}{}", spec.to_string().replace(':', "-"))
    }

    /// The spec named by a built-in circuit id, if it is one.
    pub fn spec_of_circuit_id(id: &str) -> Option<CircuitSpec> {
        id.strip_prefix(BUILTIN_PREFIX)?.replace('-', ":").parse().ok()
    }

    /// Whether the SRS of a built-in circuit is read from a file (else it
    /// is generated).
    pub fn builtin_params_from_file(spec: &CircuitSpec, param_cache: &Path) -> bool {
        Self::builtin_params_path(spec, param_cache).is_file()
    }

    /// The file [`Self::load_builtin_params`] reads, where it exists,
    /// checked as it checks it (every point).
    pub fn builtin_params_file(spec: &CircuitSpec, param_cache: &Path) -> Option<ParamsFile> {
        let path = Self::builtin_params_path(spec, param_cache);
        path.is_file().then(|| ParamsFile { path, opts: ReadOptions::default(), trusted_by: None })
    }

    fn builtin_params_path(spec: &CircuitSpec, param_cache: &Path) -> std::path::PathBuf {
        param_cache.join(format!("{}.params", Self::circuit_id_of(spec)))
    }

    /// Loads or generates the SRS of a built-in circuit: a file that
    /// exists and does not read is unusable parameters; a setup that fails,
    /// a bug.
    pub fn load_builtin_params(spec: &CircuitSpec, param_cache: &Path) -> Result<Parameters, CircuitError> {
        let path = Self::builtin_params_path(spec, param_cache);
        if path.exists() {
            return Parameters::read_file(&path, ReadOptions::default())
                .map_err(|e| CircuitError::bad_params(format!("{}: {e}", path.display())));
        }
        log::info!("srs generate circuit_id={} reason=\"no {} file\"", Self::circuit_id_of(spec), path.display());
        crate::groth16::generate_random_parameters(spec.blank(), &mut rand_core::OsRng).map_err(|e| CircuitError::internal(e.to_string()))
    }
}

impl PartitionedCircuit for BuiltinJob {
    fn circuit_id(&self) -> String {
        Self::circuit_id_of(&self.spec)
    }

    fn partitions(&self) -> usize {
        self.partitions
    }

    fn circuit(&self, partition: usize) -> Result<Box<dyn AnyCircuit>, CircuitError> {
        Ok(Box::new(self.spec.instance(self.partition_seed(partition))))
    }

    fn load_params(&self, param_cache: &Path) -> Result<Parameters, CircuitError> {
        Self::load_builtin_params(&self.spec, param_cache)
    }

    fn params_from_file(&self, param_cache: &Path) -> bool {
        Self::builtin_params_from_file(&self.spec, param_cache)
    }

    fn params_file(&self, param_cache: &Path) -> Option<ParamsFile> {
        Self::builtin_params_file(&self.spec, param_cache)
    }
}

/// The ids `builtin-<circuit>` (see [`BuiltinJob::circuit_id_of`]).
pub struct BuiltinSource;

impl CircuitSource for BuiltinSource {
    fn resolve(&self, circuit_id: &str) -> Option<String> {
        BuiltinJob::spec_of_circuit_id(circuit_id).map(|_| circuit_id.to_string())
    }

    fn id_forms(&self) -> &str {
        "a built-in id (builtin-<circuit>, e.g. builtin-synthetic-4096-8)"
    }

    fn load_params(&self, circuit_id: &str, srs: &SrsConfig) -> Result<Parameters, CircuitError> {
        // The engine asks only for ids this source resolved.
        let spec = BuiltinJob::spec_of_circuit_id(circuit_id)
            .ok_or_else(|| CircuitError::internal(format!("{} is not a built-in circuit id", crate::client_text::clipped(circuit_id))))?;
        BuiltinJob::load_builtin_params(&spec, &srs.param_cache)
    }

    fn params_from_file(&self, circuit_id: &str, srs: &SrsConfig) -> bool {
        BuiltinJob::spec_of_circuit_id(circuit_id).is_some_and(|spec| BuiltinJob::builtin_params_from_file(&spec, &srs.param_cache))
    }

    fn params_file(&self, circuit_id: &str, srs: &SrsConfig) -> Option<ParamsFile> {
        BuiltinJob::builtin_params_file(&BuiltinJob::spec_of_circuit_id(circuit_id)?, &srs.param_cache)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_circuit_ids_round_trip() {
        for s in ["synthetic:4096:8", "sha256:1", "mimc:2"] {
            let spec: CircuitSpec = s.parse().unwrap();
            let id = BuiltinJob::circuit_id_of(&spec);
            assert!(!id.contains(':'));
            assert_eq!(BuiltinJob::spec_of_circuit_id(&id), Some(spec));
        }
        assert_eq!(BuiltinJob::spec_of_circuit_id("v28-stacked-proof"), None);
    }
}
