//! A query's points resident where the SRS is not ([`plan::query_resident`]):
//! a card that keeps a circuit's matrices beside the working set its
//! partitions run in with the points from host memory, and has room left
//! for A's points but not for the whole SRS (a 32 GiB PoRep on a 48 GB
//! card), keeps A's. Its MSM is the one that runs alone after the H MSM,
//! waiting for its points' upload; L and B run beside the H MSM and keep
//! streaming. Kept while the SRS's host object lives, counted in the
//! budget, evicted idle (least recently used) where an SRS needs the room.

use super::resident::{find_copy, Resident};
use super::{GpuBackend, GpuDevice};
use crate::engine::backend::{ProveInput, ProverError};
use crate::engine::srs_handle::SrsHandle;
use crate::groth16::gpu_prover::plan;
use crate::groth16::gpu_srs::{DeviceQuery, Points};
use crate::pce::Pce;
use crate::srs::KeyShape;
use std::sync::Arc;
use std::time::Instant;

/// The query kept: A, whose MSM runs after the H MSM on this path.
const QUERY: Points = Points::A;

impl GpuBackend {
    /// The resident query points of `srs` on `dev`, if there are.
    pub(super) fn find_query(dev: &GpuDevice, srs: &Arc<SrsHandle>) -> Option<Arc<DeviceQuery>> {
        find_copy(&mut dev.queries.lock().unwrap(), srs)
    }

    /// Whether `dev`, its VRAM budget `total`, keeps the query points of
    /// `srs` resident for partitions of `pce`'s circuit synthesized
    /// witness-only, where their matrices are resident on it and the rule
    /// does not keep the whole SRS there ([`plan::query_resident`]; where
    /// it does but has no room yet, the SRS's upload waits for the room,
    /// not A's).
    pub(super) fn keeps_query_resident(dev: &GpuDevice, srs: &dyn KeyShape, pce: &Pce, total: u64) -> bool {
        let Some(matrices) = Self::resident_pce_bytes(dev, pce) else { return false };
        let (n, z) = (pce.num_constraints(), pce.z_bytes());
        if Self::keeps_srs_resident(dev, srs, n, total, matrices, z).unwrap_or(true) {
            return false;
        }
        plan::query_resident(total, matrices, DeviceQuery::bytes(srs, QUERY), Self::chunked_working_set_from_host(n, z))
    }

    /// Bytes of the query points [`Self::make_query_resident`] keeps for
    /// `srs` on `dev`, now or once a partition asks (for the plan report;
    /// not counted as a use).
    pub(super) fn query_resident_bytes(&self, dev: &GpuDevice, srs: &SrsHandle, pce: Option<&Arc<Pce>>, total: u64) -> Option<u64> {
        let kept = dev.queries.lock().unwrap().iter().any(|r| r.is_copy_of(srs));
        let will = self.keep_srs_resident && pce.is_some_and(|p| Self::keeps_query_resident(dev, srs, p, total));
        (kept || will).then(|| DeviceQuery::bytes(srs, QUERY))
    }

    /// Uploads the query points of `input.srs` to `dev` where its SRS is
    /// not resident there ([`Self::make_resident`] kept none) and the rule
    /// keeps them ([`Self::keeps_query_resident`]), if the budget has
    /// their bytes free now (else a later partition tries again). Called
    /// before the worker reserves its working set, as `make_resident` is.
    pub(super) fn make_query_resident(&self, dev: &GpuDevice, input: &ProveInput<'_>) -> Result<(), ProverError> {
        let Some(pce) = input.pce.filter(|_| self.keep_srs_resident && input.witness_only()) else { return Ok(()) };
        // Held through the upload: two workers asking at once upload one copy.
        let mut queries = dev.queries.lock().unwrap();
        if find_copy(&mut queries, input.srs).is_some() {
            return Ok(());
        }
        if !Self::keeps_query_resident(dev, &**input.srs, pce, input.vram.normal_total()) {
            return Ok(());
        }
        let bytes = DeviceQuery::bytes(&**input.srs, QUERY);
        let Some(vram) = input.vram.try_reserve(bytes) else { return Ok(()) };
        let host = input.srs.host_points()?;
        let t = Instant::now();
        let query = Arc::new(DeviceQuery::upload(dev.info.ordinal as i32, &host, QUERY)?);
        log::info!(
            "device query points uploaded gpu={} query=a circuit_id={} bytes={bytes} upload_ms={}",
            dev.info.ordinal,
            pce.circuit_id,
            t.elapsed().as_millis()
        );
        queries.push(Resident::new(input.srs, query, vram));
        Ok(())
    }
}
