//! What the engine proves: a [`PartitionedCircuit`], N independent
//! partitions sharing one SRS, each an [`AnyCircuit`] the engine
//! synthesizes classically or through the circuit's PCE, as it chooses.
//! Implemented by the built-in circuits (`engine::BuiltinJob`), the
//! Filecoin jobs (`filecoin::FilecoinJob`) and any caller's circuit; it
//! sits outside both so that neither imports the other.

use crate::cs::{generate_witness_into, synthesize, ProvingAssignment, WitnessOnly};
use crate::failure::CircuitError;
use crate::pce::{record_with_witness, Pce, PceError};
use crate::srs::{Parameters, ParamsFile};
use bellpepper_core::{Circuit, SynthesisError};
use blstrs::Scalar as Fr;
use std::path::Path;

/// One partition's circuit, boxed so the engine can synthesize it any way:
/// implemented for every bellpepper circuit that is `Send`.
pub trait AnyCircuit: Send {
    /// Classic synthesis ([`crate::cs::synthesize`]).
    fn classic(self: Box<Self>) -> Result<ProvingAssignment, SynthesisError>;
    /// Witness-only synthesis ([`crate::cs::generate_witness_into`]) into
    /// `cs`, empty (with room for the circuit's variables where its PCE
    /// knows them: [`Pce::empty_witness`]).
    fn witness(self: Box<Self>, cs: WitnessOnly) -> Result<WitnessOnly, SynthesisError>;
    /// The circuit's PCE and this instance's witness, in one pass.
    fn record(self: Box<Self>, circuit_id: &str) -> Result<(Pce, WitnessOnly), PceError>;
}

impl<C: Circuit<Fr> + Send> AnyCircuit for C {
    fn classic(self: Box<Self>) -> Result<ProvingAssignment, SynthesisError> {
        synthesize(*self)
    }
    fn witness(self: Box<Self>, cs: WitnessOnly) -> Result<WitnessOnly, SynthesisError> {
        generate_witness_into(*self, cs)
    }
    fn record(self: Box<Self>, circuit_id: &str) -> Result<(Pce, WitnessOnly), PceError> {
        record_with_witness(circuit_id, *self)
    }
}

/// A circuit the engine can prove: N independent partitions sharing one
/// SRS named by `circuit_id`. Its errors say their kind (a bad request,
/// missing or unusable parameters, a bug): the engine fails the job with
/// it.
pub trait PartitionedCircuit: Send + Sync {
    /// Names the SRS; jobs with the same id share it and may be batched
    /// (their partitions must then have the same shape).
    fn circuit_id(&self) -> String;
    fn partitions(&self) -> usize;
    /// The circuit of one partition (`partition < partitions()`); the
    /// engine synthesizes it (through the circuit id's PCE when
    /// `[synthesis] pce` is on, else classically).
    fn circuit(&self, partition: usize) -> Result<Box<dyn AnyCircuit>, CircuitError>;
    /// How many threads a partition's witness generation can use: more
    /// than one where its circuit has independent parts (a PoSt
    /// partition's sectors). One by default.
    fn witness_parallelism(&self) -> usize {
        1
    }
    /// The circuit of one partition for a witness-only synthesis on
    /// `threads` threads (at most [`PartitionedCircuit::witness_parallelism`];
    /// cores the engine's other syntheses leave free). By default
    /// [`PartitionedCircuit::circuit`].
    fn circuit_on_threads(&self, partition: usize, threads: usize) -> Result<Box<dyn AnyCircuit>, CircuitError> {
        let _ = threads;
        self.circuit(partition)
    }
    /// Whether recording its PCE ([`AnyCircuit::record`]) takes a fraction
    /// of a classic synthesis (it records on every core): then, on a
    /// circuit's first use, its other partitions wait for the recording
    /// and go witness-only through it, rather than synthesize classically
    /// meanwhile. False by default: a recording about as long as a classic
    /// synthesis is not worth waiting for.
    fn records_on_threads(&self) -> bool {
        false
    }
    /// Checks a synthesized partition before it is proved (Filecoin: its
    /// public inputs are the verifier's); an error fails the job.
    fn check_assignment(&self, _partition: usize, _assignment: &ProvingAssignment) -> Result<(), CircuitError> {
        Ok(())
    }
    /// Classic synthesis of one partition, checked.
    fn synthesize(&self, partition: usize) -> Result<ProvingAssignment, CircuitError> {
        let pa = self.circuit(partition)?.classic()?;
        self.check_assignment(partition, &pa)?;
        Ok(pa)
    }
    /// Produces the SRS when the SRS manager does not hold it.
    fn load_params(&self, param_cache: &Path) -> Result<Parameters, CircuitError>;
    /// An upper bound of the SRS's size, known before loading it: the SRS
    /// manager reserves it first (making room by eviction) so a large SRS
    /// never loads past the memory budget. None = reserve after loading.
    fn srs_size_hint(&self, _param_cache: &Path) -> Option<u64> {
        None
    }
    /// Whether [`Self::load_params`] reads the SRS from a file, so that
    /// calling it again gives the same key: the engine then releases its
    /// host points where every device keeps a copy, and reads them again
    /// when a path needs them. False (the default): they stay in memory.
    fn params_from_file(&self, _param_cache: &Path) -> bool {
        false
    }
    /// The `.params` file [`Self::load_params`] reads, where it reads one
    /// (with [`Self::params_from_file`] true), for a load straight to the
    /// devices that keep the SRS resident (the engine's `srs_stream`):
    /// checked as `load_params` checks it. None (the default): the SRS
    /// always loads through `load_params`.
    fn params_file(&self, _param_cache: &Path) -> Option<ParamsFile> {
        None
    }
    /// Turns the partition proofs (in partition order) into the job's
    /// proof; an error fails the job with that reason. By default the
    /// proofs concatenated; Filecoin jobs self-check here.
    fn finish(&self, partition_proofs: Vec<Vec<u8>>) -> Result<Vec<u8>, CircuitError> {
        Ok(partition_proofs.concat())
    }
}
