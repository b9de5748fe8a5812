//! Loading an SRS straight to the devices that keep it resident. Where the
//! backend finds, from the file's head alone, that every device in
//! service will hold a copy (`ProverBackend::resident_load`: the rule
//! that releases the host points once they all do, applied before
//! loading, with the circuit's PCE counted where the backend keeps
//! matrices on its devices: a load whose PCE is not known yet, to be
//! recorded by its first partition, loads whole, so that loading straight
//! to the devices never changes what ends up resident), the `.params`
//! file is read in slices
//! ([`ParamsFile::stream`]), each checked as a whole read checks it and
//! copied to every device at its place. The host holds only those slices,
//! reserved in the memory budget ([`stream_host_bytes`]), never the points
//! whole; the SRS's host points then start released and are read again
//! from the file where a path needs them, as after a release. A bad file
//! fails the load with the error a whole read gives, the copies made so
//! far freed; a device that fails mid-load (out of memory, say) leaves the
//! SRS to load whole into host memory, as where a device has no room.

use super::backend::{PceAtLoad, ProverError, ResidentLoad};
use super::memory::Reservation;
use super::shared::Shared;
use super::srs_manager::SrsError;
use crate::failure::CircuitError;
use crate::srs::{stream_host_bytes, KeyShape, ParamsError, ParamsFile, ParamsHead, StreamError};

/// How to load an SRS straight to the devices, where they all keep it.
pub struct ToDevices<'a> {
    pub file: ParamsFile,
    /// Bytes of the file read, checked and copied at a time.
    pub slice_bytes: usize,
    /// The backend's load into the devices' copies of a key of the file's
    /// shape, where every device keeps it (else None).
    pub begin: Box<dyn FnOnce(&dyn KeyShape) -> Option<Box<dyn ResidentLoad + 'a>> + 'a>,
}

impl<'a> ToDevices<'a> {
    /// A load of `file`, `circuit_id`'s SRS, straight to the engine's
    /// devices, in slices of `srs.stream_slice`, where its backend keeps
    /// it on every one beside the circuit's PCE as the engine knows it
    /// when the load begins ([`super::pce_store::PceStore::at_load`];
    /// none where the engine keeps no PCEs).
    pub(super) fn of_engine(sh: &'a Shared, circuit_id: &str, file: ParamsFile) -> Self {
        let circuit_id = circuit_id.to_string();
        ToDevices {
            file,
            slice_bytes: usize::try_from(sh.config.srs.stream_slice.0).unwrap_or(usize::MAX),
            begin: Box::new(move |shape| {
                let pce = sh.pce.as_ref().map_or(PceAtLoad::None, |store| store.at_load(&circuit_id));
                sh.backend.resident_load(shape, &pce, &sh.devices)
            }),
        }
    }
}

/// An SRS loaded straight to the devices: its head and the copies to hand
/// to its handle ([`ResidentLoad::finish`]).
pub struct Loaded<'a> {
    pub head: ParamsHead,
    pub copies: Box<dyn ResidentLoad + 'a>,
}

/// The error of a load whose file is bad, as the whole read names it.
fn bad_file(circuit_id: &str, file: &ParamsFile, e: ParamsError) -> SrsError {
    let error = CircuitError::bad_params(format!("reading {}: {e}", file.path.display()));
    SrsError::Load { circuit_id: circuit_id.into(), error }
}

/// Loads `circuit_id`'s SRS as `to` says, the slices' host memory held by
/// `reserve` (which may wait for room, as a whole load's reservation
/// does) until the load ends. None where a device will not keep it, or
/// one failed while it loaded: the caller loads it into host memory.
pub fn load<'a>(
    circuit_id: &str,
    to: ToDevices<'a>,
    reserve: &dyn Fn(u64) -> Result<Reservation, SrsError>,
) -> Result<Option<Loaded<'a>>, SrsError> {
    let head = to.file.head().map_err(|e| bad_file(circuit_id, &to.file, e))?;
    let Some(mut copies) = (to.begin)(&head) else { return Ok(None) };
    // A slice is never more than the points (a small SRS reserves its own size).
    let slice_bytes = to.slice_bytes.min(head.counts().host_bytes(0));
    let _slices = reserve(stream_host_bytes(slice_bytes))?;
    let mut fill = |slice: crate::srs::PointSlice<'_>| copies.fill(&slice);
    let streamed = match to.file.stream(slice_bytes, &mut fill) {
        Ok(streamed) => streamed,
        Err(StreamError::Params(e)) => return Err(bad_file(circuit_id, &to.file, e)),
        Err(StreamError::Sink(e)) => {
            log_device_failure(circuit_id, &e);
            return Ok(None);
        }
    };
    if !streamed.same_key(&head) {
        let e = ParamsError::Inconsistent { section: "file", offset: 0, message: "the file changed while it was read".into() };
        return Err(bad_file(circuit_id, &to.file, e));
    }
    Ok(Some(Loaded { head, copies }))
}

fn log_device_failure(circuit_id: &str, e: &ProverError) {
    log::warn!("srs not loaded straight to the devices circuit_id={circuit_id} reason=\"{e}\": loading it into host memory");
}
