//! Circuit ids and parameter files: `v28-<circuit-id>.params|.vk` in the
//! param cache, as filecoin-proofs names them.
//!
//! The id is `<prefix>-<sha256 of the public params' identifier>`, computed
//! by filecoin-proofs itself. For SnapDeals we compute it from the update
//! circuit's public params: filecoin-proofs-api 19.1's
//! `RegisteredUpdateProof::cache_params_path()` returns the PoRep file.

use super::circuit::by_shape;
use super::error::{FilecoinError, Result};
use super::kind::ProofType;
use super::source::FILE_PREFIX;
use crate::groth16::{prepare_verifying_key, PreparedVerifyingKey};
use crate::srs::{Parameters, ReadOptions, VerifyingKey};
use std::path::{Path, PathBuf};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_update::constants::TreeRHasher;
use storage_proofs_update::{EmptySectorUpdateCircuit, EmptySectorUpdateCompound, PublicParams};

/// The circuit id of a proof type (what the SRS is keyed by).
pub fn circuit_id(pt: ProofType) -> Result<String> {
    let id = match pt {
        ProofType::Seal(p) => p.circuit_identifier(),
        ProofType::Post(p) => p.circuit_identifier(),
        ProofType::Update(p) => return by_shape!(u64::from(p.sector_size()), update_circuit_id, u64::from(p.sector_size())),
    };
    id.map_err(|e| FilecoinError::Circuit(format!("circuit id of {pt:?}: {e:#}")))
}

fn update_circuit_id<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(sector_size: u64) -> Result<String> {
    Ok(<EmptySectorUpdateCompound<Tree> as CacheableParameters<EmptySectorUpdateCircuit<Tree>, PublicParams>>::cache_identifier(
        &PublicParams::from_sector_size(sector_size),
    ))
}

/// The parameter files of one circuit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamFiles {
    pub circuit_id: String,
    pub params: PathBuf,
    pub vk: PathBuf,
}

/// A param cache folder (`[srs] param_cache`).
#[derive(Clone, Debug)]
pub struct ParamCache {
    pub dir: PathBuf,
}

impl ParamCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn files(&self, circuit_id: &str) -> ParamFiles {
        let name = |ext: &str| self.dir.join(format!("{FILE_PREFIX}{circuit_id}.{ext}"));
        ParamFiles { circuit_id: circuit_id.to_string(), params: name("params"), vk: name("vk") }
    }

    pub fn files_for(&self, pt: ProofType) -> Result<ParamFiles> {
        Ok(self.files(&circuit_id(pt)?))
    }

    /// Loads the proving parameters; a missing file is an error naming it.
    pub fn load_params(&self, circuit_id: &str, opts: ReadOptions) -> Result<Parameters> {
        let path = self.files(circuit_id).params;
        exists(&path, circuit_id)?;
        Parameters::read_file(&path, opts).map_err(|source| FilecoinError::Params { path, source })
    }

    /// The size of the `.params` file (an upper bound of the loaded SRS,
    /// which the engine reserves before loading); None if it is missing.
    pub fn params_file_size(&self, circuit_id: &str) -> Option<u64> {
        std::fs::metadata(self.files(circuit_id).params).ok().filter(|m| m.is_file()).map(|m| m.len())
    }

    /// Both files of a circuit exist (the `.vk` only when `vk` is set);
    /// else the error names the first missing one.
    pub fn check_files(&self, circuit_id: &str, params: bool, vk: bool) -> Result<()> {
        let files = self.files(circuit_id);
        if params {
            exists(&files.params, circuit_id)?;
        }
        if vk {
            exists(&files.vk, circuit_id)?;
        }
        Ok(())
    }

    /// Loads the `.vk` for the self-check.
    pub fn load_vk(&self, circuit_id: &str) -> Result<SelfCheckKey> {
        let path = self.files(circuit_id).vk;
        exists(&path, circuit_id)?;
        let vk = VerifyingKey::read_file(&path, ReadOptions::default())
            .map_err(|source| FilecoinError::Params { path: path.clone(), source })?;
        Ok(SelfCheckKey { pvk: prepare_verifying_key(&vk), path })
    }
}

fn exists(path: &Path, circuit_id: &str) -> Result<()> {
    if path.is_file() {
        return Ok(());
    }
    let why = path
        .parent()
        .and_then(crate::config::param_cache_problem)
        .unwrap_or_else(|| "put the Filecoin parameters in the param cache".into());
    Err(FilecoinError::MissingParams { path: path.to_path_buf(), circuit_id: circuit_id.to_string(), why })
}

/// A prepared `.vk`, with where it came from (for error messages).
pub struct SelfCheckKey {
    pub pvk: PreparedVerifyingKey,
    pub path: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage_proofs_core::parameter_cache::VERSION;

    #[test]
    fn file_prefix_is_filecoin_proofs_parameter_version() {
        assert_eq!(FILE_PREFIX, format!("v{VERSION}-"));
    }
}
