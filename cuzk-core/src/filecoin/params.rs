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
use super::published::{file_digest, file_digest_state, PublishedDigests};
use super::source::FILE_PREFIX;
use crate::groth16::{prepare_verifying_key, PreparedVerifyingKey};
use crate::srs::{Parameters, ParamsFile, ReadOptions, TrustedDigest, VerifyingKey};
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
    /// Files whose digest matches are trusted without subgroup checks.
    published: PublishedDigests,
}

impl ParamCache {
    /// The folder, with the official Filecoin files' digests.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into(), published: PublishedDigests::filecoin() }
    }

    /// The same folder with another list of published digests.
    pub fn with_published(self, published: PublishedDigests) -> Self {
        Self { published, ..self }
    }

    pub fn files(&self, circuit_id: &str) -> ParamFiles {
        let name = |ext: &str| self.dir.join(format!("{FILE_PREFIX}{circuit_id}.{ext}"));
        ParamFiles { circuit_id: circuit_id.to_string(), params: name("params"), vk: name("vk") }
    }

    pub fn files_for(&self, pt: ProofType) -> Result<ParamFiles> {
        Ok(self.files(&circuit_id(pt)?))
    }

    /// Loads the proving parameters; a missing file is an error naming it.
    ///
    /// When `opts` asks for the subgroup checks and the file's name is in
    /// the published list, the file's digest is computed while its points
    /// are decoded without those checks (the costly part of validation);
    /// a matching digest makes them unnecessary. A different digest (such
    /// as parameters made locally by `cuzk filecoin-setup` under the
    /// official name) is logged with both digests, and every point is then
    /// checked as for any other file.
    pub fn load_params(&self, circuit_id: &str, opts: ReadOptions) -> Result<Parameters> {
        let path = self.files(circuit_id).params;
        exists(&path, circuit_id)?;
        let invalid = |source| FilecoinError::Params { path: path.clone(), source };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let expected = match self.published.get(&name) {
            Some(digest) if opts.subgroup_check => digest,
            _ => return Parameters::read_file(&path, opts).map_err(invalid),
        };
        let t = std::time::Instant::now();
        let (params, found) = Parameters::read_file_with(&path, ReadOptions::trusted(), file_digest).map_err(invalid)?;
        if found == expected {
            log::info!("params trusted by published digest file={} digest={found} ms={}", path.display(), t.elapsed().as_millis());
            return Ok(params);
        }
        log::warn!(
            "params digest differs from the published one file={} expected={expected} found={found}: not the official file, checking every point",
            path.display()
        );
        params.check_subgroups().map_err(invalid)?;
        Ok(params)
    }

    /// The `.params` file of a circuit as a streamed load reads it
    /// ([`ParamsFile::stream`]), checked as [`Self::load_params`] checks
    /// it: trusted by its published digest where `opts` asks for the
    /// subgroup checks and its name is listed. None where it is missing
    /// (a load then says so).
    pub fn params_file(&self, circuit_id: &str, opts: ReadOptions) -> Option<ParamsFile> {
        let path = self.files(circuit_id).params;
        if !path.is_file() {
            return None;
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let trusted_by = self.published.get(&name).map(|expected| TrustedDigest { expected: expected.to_string(), digest: file_digest_state });
        Some(ParamsFile { path, opts, trusted_by })
    }

    /// The size of the `.params` file (an upper bound of the loaded SRS,
    /// which the engine reserves before loading); None if it is missing.
    pub fn params_file_size(&self, circuit_id: &str) -> Option<u64> {
        std::fs::metadata(self.files(circuit_id).params).ok().filter(|m| m.is_file()).map(|m| m.len())
    }

    /// The files a circuit needs exist: the `.params` when `params` is
    /// set, and when `vk` is set the `.vk` or else the `.params` (whose
    /// head holds the same key); else the error names the missing one.
    pub fn check_files(&self, circuit_id: &str, params: bool, vk: bool) -> Result<()> {
        let files = self.files(circuit_id);
        if params {
            exists(&files.params, circuit_id)?;
        }
        if vk && !files.params.is_file() {
            exists(&files.vk, circuit_id)?;
        }
        Ok(())
    }

    /// Loads the verifying key for the self-check: the `.vk`, or without
    /// one the head of the `.params` file.
    pub fn load_vk(&self, circuit_id: &str) -> Result<SelfCheckKey> {
        let files = self.files(circuit_id);
        let (path, read): (_, fn(&Path, ReadOptions) -> _) = if !files.vk.is_file() && files.params.is_file() {
            (files.params, VerifyingKey::read_params_head)
        } else {
            exists(&files.vk, circuit_id)?;
            (files.vk, VerifyingKey::read_file)
        };
        let vk = read(&path, ReadOptions::default()).map_err(|source| FilecoinError::Params { path: path.clone(), source })?;
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
