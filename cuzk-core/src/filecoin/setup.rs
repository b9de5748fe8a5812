//! Parameters for testing: our fast setup on the blank circuit
//! filecoin-proofs builds for the public params, written under the
//! production file names. Random toxic waste: never for production.
//!
//! Files are written to temporary names and renamed into place (`.params`
//! before `.vk`; a `.vk` means the pair is complete), so a reader never sees
//! a partial file. [`ensure_params`] holds a lock file per circuit while it
//! checks and generates, so parallel test processes sharing a cache make
//! each circuit's parameters once.

use super::circuit::{by_shape, FilecoinCircuit, IntoFilecoinCircuit};
use super::error::{no_panic, FilecoinError, Result};
use super::kind::ProofType;
use super::params::{circuit_id, ParamCache, ParamFiles};
use super::porep_circuit::PorepPartition;
use super::update_circuit::UpdatePartition;
use super::post_circuit::PostPartition;
use crate::groth16::setup::{write_parameters, Progress, SetupError, ToxicWaste};
use crate::arith::fixed_base::Device;
use crate::pce::{Pce, PceError};
use filecoin_proofs::parameters::{public_params, window_post_public_params, winning_post_public_params};
use filecoin_proofs::types::PoStType;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_update::constants::TreeRHasher;
use storage_proofs_update::PublicParams;

/// The circuit without a witness, as filecoin-proofs makes it for setup.
pub fn blank_circuit(pt: ProofType) -> Result<FilecoinCircuit> {
    by_shape!(pt.sector_size(), blank_shape, pt)
}

fn blank_shape<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(pt: ProofType) -> Result<FilecoinCircuit>
where
    PorepPartition<Tree>: IntoFilecoinCircuit,
    PostPartition<Tree>: IntoFilecoinCircuit,
    UpdatePartition<Tree>: IntoFilecoinCircuit,
{
    no_panic("blank circuit", || {
        Ok(match pt {
            ProofType::Seal(p) => {
                let pp = public_params::<Tree>(&p.as_v1_config())?;
                PorepPartition::<Tree>::blank(&pp).into_filecoin()
            }
            ProofType::Post(p) => {
                let config = p.as_v1_config();
                let pp = match config.typ {
                    PoStType::Winning => winning_post_public_params::<Tree>(&config)?,
                    PoStType::Window => window_post_public_params::<Tree>(&config)?,
                };
                PostPartition::<Tree>::blank(&pp).into_filecoin()
            }
            ProofType::Update(p) => {
                let pp = PublicParams::from_sector_size(u64::from(p.sector_size()));
                UpdatePartition::<Tree>::blank(&pp).into_filecoin()
            }
        })
    })
}

/// Generates parameters for `pt` with `tw` and writes them into `cache`
/// (the circuit recorded from its blank form, then [`generate_params_from_pce`]),
/// on the GPU when there is one.
pub fn generate_params(pt: ProofType, cache: &ParamCache, tw: &ToxicWaste, progress: Option<Progress>) -> Result<ParamFiles> {
    generate_params_from_pce(pt, cache, record_blank(pt)?, tw, progress, Device::detect())
}

/// The R1CS of `pt`'s circuit, recorded from its blank form under its
/// circuit id (what setup needs, and what the engine proves through).
pub fn record_blank(pt: ProofType) -> Result<Pce> {
    Ok(blank_circuit(pt)?.record(&circuit_id(pt)?, crate::par::threads()).map_err(SetupError::from)?)
}

/// Generates parameters for `pt` from its recorded R1CS (`cuzk pce build`
/// or the engine's `<circuit-id>.pce`) with `tw`, streamed into `cache`:
/// no query is ever held whole, so production sizes fit in host memory;
/// the fixed-base multiplications on `device`.
pub fn generate_params_from_pce(
    pt: ProofType,
    cache: &ParamCache,
    pce: Pce,
    tw: &ToxicWaste,
    progress: Option<Progress>,
    device: Device,
) -> Result<ParamFiles> {
    let files = cache.files(&circuit_id(pt)?);
    if pce.circuit_id != files.circuit_id {
        return Err(FilecoinError::Setup(SetupError::Pce(PceError::CircuitId {
            expected: files.circuit_id.clone(),
            found: pce.circuit_id.clone(),
        })));
    }
    std::fs::create_dir_all(&cache.dir).map_err(|source| FilecoinError::Io { path: cache.dir.clone(), source })?;
    // Temporary names unique to this call, renamed `.params` before `.vk`.
    let tmp_params = temp_name(&files.params);
    let tmp_vk = temp_name(&files.vk);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| FilecoinError::Io { path, source }
    };
    let written = write_parameters(pce, tw, progress, device, &tmp_params, &tmp_vk);
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp_params);
    }
    written?;
    std::fs::rename(&tmp_params, &files.params).map_err(io(&files.params))?;
    std::fs::rename(&tmp_vk, &files.vk).map_err(io(&files.vk))?;
    Ok(files)
}

/// Test parameters for `pt` in `cache`: reused when present, else made
/// with random toxic waste, once per circuit across threads and processes
/// (an exclusive lock on `v28-<id>.lock` in the cache while checking and
/// generating; the lock ends with its holder, even one that crashed).
pub fn ensure_params(pt: ProofType, cache: &ParamCache) -> Result<ParamFiles> {
    let files = cache.files(&circuit_id(pt)?);
    let lock = {
        static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>> = OnceLock::new();
        let mut map = LOCKS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        map.entry(files.vk.clone()).or_default().clone()
    };
    // File locks are per open file description: the in-process mutex keeps
    // this process's threads from racing, the file lock other processes.
    let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
    if files.params.is_file() && files.vk.is_file() {
        return Ok(files);
    }
    std::fs::create_dir_all(&cache.dir).map_err(|source| FilecoinError::Io { path: cache.dir.clone(), source })?;
    let lock_path = files.vk.with_extension("lock");
    let lock_file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|source| FilecoinError::Io { path: lock_path.clone(), source })?;
    lock_file.lock().map_err(|source| FilecoinError::Io { path: lock_path.clone(), source })?;
    if files.params.is_file() && files.vk.is_file() {
        return Ok(files); // another process made them while we waited
    }
    generate_params(pt, cache, &ToxicWaste::random(&mut rand_core::OsRng), None)
}

fn temp_name(path: &Path) -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp-{}-{nanos}", std::process::id()));
    path.with_file_name(name)
}
