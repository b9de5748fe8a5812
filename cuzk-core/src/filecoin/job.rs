//! The engine's view of a Filecoin request: a
//! [`PartitionedCircuit`] whose
//! partitions are the prepared circuits. Each circuit is synthesized once
//! (filecoin-proofs' circuits are consumed by synthesis). The job reads
//! its parameters and checks its finished proof as its [`JobSettings`] say.

use super::circuit::{EnginePartition, FilecoinCircuit};
use crate::proof_kind::ProofKind;
use super::assemble::check_public_inputs;
use super::error::FilecoinError;
use super::params::ParamCache;
use super::prepare::{PreparedProof, ProofMeta};
use crate::cs::ProvingAssignment;
use crate::failure::CircuitError;
use crate::partitioned::{AnyCircuit, PartitionedCircuit};
use crate::groth16::Proof;
use crate::srs::{Parameters, ParamsFile, ReadOptions};
use std::path::Path;
use std::sync::Mutex;

/// How a job reads its parameters and checks its proof (`[srs]` keys).
#[derive(Clone, Debug, Default)]
pub struct JobSettings {
    pub read: ReadOptions,
    /// The param cache whose `.vk` verifies every partition proof before
    /// the job completes; `None` = no self-check.
    pub self_check: Option<ParamCache>,
}

pub struct FilecoinJob {
    meta: ProofMeta,
    circuits: Mutex<Vec<Option<FilecoinCircuit>>>,
    settings: JobSettings,
}

impl FilecoinJob {
    /// A job with default settings: validated reads, no self-check.
    pub fn new(prepared: PreparedProof) -> Self {
        let PreparedProof { meta, circuits } = prepared;
        Self { meta, circuits: Mutex::new(circuits.into_iter().map(Some).collect()), settings: JobSettings::default() }
    }

    pub fn with_settings(mut self, settings: JobSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Public inputs and the assembly / self-check step
    /// ([`ProofMeta::finish`]).
    pub fn meta(&self) -> &ProofMeta {
        &self.meta
    }

    /// Partition `partition`'s circuit, handed out once (the engine asks
    /// once per partition: asked again, it has a bug).
    fn take_circuit(&self, partition: usize) -> std::result::Result<FilecoinCircuit, CircuitError> {
        let circuit = self.circuits.lock().unwrap_or_else(|e| e.into_inner()).get_mut(partition).and_then(Option::take);
        circuit.ok_or_else(|| CircuitError::internal(format!("partition {partition} is out of range or already synthesized")))
    }
}

impl PartitionedCircuit for FilecoinJob {
    fn circuit_id(&self) -> String {
        self.meta.circuit_id.clone()
    }

    fn partitions(&self) -> usize {
        self.meta.partitions()
    }

    fn circuit(&self, partition: usize) -> std::result::Result<Box<dyn AnyCircuit>, CircuitError> {
        Ok(Box::new(EnginePartition(self.take_circuit(partition)?)))
    }

    /// A PoSt partition's sectors, a PoRep partition's challenges, on as
    /// many threads as there are (each writes its part of the witness in
    /// place: `threaded_witness`). The engine gives a partition more than
    /// one only where cores are idle beside the partitions the host
    /// budget holds (`engine::synthesis_cores`). A SnapDeals partition
    /// has no independent parts.
    fn witness_parallelism(&self) -> usize {
        match self.meta.kind {
            ProofKind::WindowPostPartition | ProofKind::WinningPost | ProofKind::PorepSealCommit => usize::MAX,
            _ => 1,
        }
    }

    /// A PoRep or SnapDeals partition records its challenges on every core
    /// (a tenth of its classic synthesis at 32 GiB); a PoSt partition its
    /// sectors. Every kind, then.
    fn records_on_threads(&self) -> bool {
        true
    }

    fn circuit_on_threads(&self, partition: usize, threads: usize) -> std::result::Result<Box<dyn AnyCircuit>, CircuitError> {
        Ok(Box::new(EnginePartition(self.take_circuit(partition)?.with_witness_threads(threads))))
    }

    fn check_assignment(&self, partition: usize, pa: &ProvingAssignment) -> std::result::Result<(), CircuitError> {
        let expected = self
            .meta
            .public_inputs
            .get(partition)
            .ok_or_else(|| CircuitError::internal(format!("partition {partition} is out of range")))?;
        Ok(check_public_inputs(partition, pa, expected)?)
    }

    fn load_params(&self, param_cache: &Path) -> std::result::Result<Parameters, CircuitError> {
        Ok(ParamCache::new(param_cache).load_params(&self.meta.circuit_id, self.settings.read)?)
    }

    fn srs_size_hint(&self, param_cache: &Path) -> Option<u64> {
        ParamCache::new(param_cache).params_file_size(&self.meta.circuit_id)
    }

    fn params_from_file(&self, _param_cache: &Path) -> bool {
        true
    }

    fn params_file(&self, param_cache: &Path) -> Option<ParamsFile> {
        ParamCache::new(param_cache).params_file(&self.meta.circuit_id, self.settings.read)
    }

    /// Assembly as filecoin-proofs does it, after the self-check. The
    /// request was checked before it was proved: proofs that do not parse
    /// or count are ours; the `.vk` and a proof that does not verify with
    /// it say their kind ([`FilecoinError::kind`]).
    fn finish(&self, partition_proofs: Vec<Vec<u8>>) -> std::result::Result<Vec<u8>, CircuitError> {
        let proofs = partition_proofs
            .iter()
            .enumerate()
            .map(|(k, b)| {
                Proof::from_bytes(b).map_err(|e| CircuitError::internal(format!("partition {k}: the prover's proof does not parse: {e}")))
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let key = match &self.settings.self_check {
            Some(cache) => Some(cache.load_vk(&self.meta.circuit_id)?),
            None => None,
        };
        self.meta.finish(&proofs, key.as_ref()).map_err(|e| match e {
            FilecoinError::Count { .. } => CircuitError::internal(e.to_string()),
            e => e.into(),
        })
    }
}
